// SPDX-License-Identifier: GPL-2.0
/*
 * vb2-bench: what the V4L2 buffer uAPI (videobuf2) costs, per call (tools/plans/bench.plan,
 * make bench).
 *
 *   vb2-bench [--short] [--iters-scale F] [--only GROUP[,GROUP...]]
 *
 * Meant for QEMU TCG with -icount shift=0,sleep=off and one vCPU: a nanosecond of
 * CLOCK_MONOTONIC is one instruction. Each measurement runs untimed warm-up rounds, then
 * timed sections of a few calls, minus the cost of the clock reads (group=floor
 * op=clock_gettime). A row has the mean per call (ns), work left to interrupts and kernel
 * threads included; the line after it, "vb2-bench: median <same keys> ns=N", the median
 * section per call, deaf to a stray kernel thread or RCU burst (repeats within ~1%).
 *
 * Devices, by V4L2 name, as bench.plan loads them: vb2-testdrv-N-cap, N = allocator (0
 * vmalloc, 1 dma-contig, 2 dma-sg) with YUYV and up to 32768 buffers, 3 + allocator with
 * YUV420M (three planes), 6 + allocator with YUYV and the default limit (32); buffers
 * complete in buf_queue (completion=0). vivid-00N-vid-cap (allocators=0,1). vb2-edu-N-cap
 * with nodma=1 in bench-iommu.plan. Upstream's poll(), read() and allocation costs grow
 * with the queue's limit, so those rows run at both and their op says which: op=poll@32768.
 *
 * Groups (--only); every line starts with "vb2-bench: ":
 *   floor   clock_gettime, ENOTTY (an unknown ioctl), QUERYCAP
 *   hot     allocator x MMAP/USERPTR/DMABUF x 1 or 3 planes, 8 streaming buffers: QBUF,
 *           DQBUF (ready buffer), QBUF+DQBUF, QUERYBUF, PREPARE_BUF, poll@LIMIT,
 *           EXPBUF+close (MMAP); DMABUF from the system dma-heap (else udmabuf)
 *   dmabuf  QBUF+DQBUF of 4 dma-bufs, vmalloc and dma-sg: pattern=same (dma-buf k at
 *           index k) and pattern=rotate (at (k + round) % 4, as libcamera does)
 *   iommu   the same on vb2-edu (640x480 GREY, key domain= the IOMMU group's type);
 *           skipped without the nodes, without nodma, or dma-contig outside a DMA domain
 *   vivid   QBUF, DQBUF (after poll()), QUERYBUF, 4 MMAP buffers at vivid's format
 *   alloc   REQBUFS+mmap+REQBUFS0@LIMIT (ns_per_buf), CREATE_BUFS@LIMIT and
 *           REMOVE_BUFS@LIMIT (one buffer a call), vmalloc, n = 2..32768 and 2, 32
 *   scale   QBUF, DQBUF, QUERYBUF with n = 2 and 32768 buffers (buffers 0 and n-1 used)
 *   read    read@LIMIT: bytes_per_s of read() of 640x480 YUYV frames, with
 *           memcpy_bytes_per_s of the same sizes (the floor)
 *   memory  per_buffer: growth of Slab and VmallocUsed per buffer after REQBUFS(n), n =
 *           1024 and 32768, on dma-contig, slab caches shrunk before each reading
 *
 * A row's fields: group, op, the variant keys (alloc mem planes pattern n frame domain
 * read_size), then the values and iters; runs are compared on the keys. Rows that
 * cannot run print "skip ... reason=R"; the last line is "done rows=N seconds=S".
 * --short: few iterations, n up to 32; --iters-scale F scales iterations (not n).
 * Exit 1 when an ioctl that should work failed ("error ... call=X errno=E (text)", the
 * measurement abandoned), 2 on a usage error, else 0.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <poll.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>
#include <linux/dma-buf.h>
#include <linux/videodev2.h>

#include "uapi-6.12.h"

#include "vb2-guest.h"

#define PROG		"vb2-bench"
#define PAGE		4096UL
#define PAGE_ALIGN(x)	(((x) + PAGE - 1) & ~(PAGE - 1))
#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
#define MAXB		8	/* buffers of the hot path */
#define MAXP		3	/* memory planes */
#define WARM		3	/* untimed rounds before each measurement */
#define SMALL		16	/* width and height of the small format */
#define __printf(a, b)	__attribute__((format(printf, a, b)))

static const char *const alloc_names[] = { "vmalloc", "dma-contig", "dma-sg" };

static int short_mode;
static double iters_scale = 1.0;
static unsigned int rows;
static int failed;
static int64_t clk;		/* cost of one timed section's clock reads */
static char ctx[160];		/* what is being measured, for error messages */
static const char *exporter;	/* of DMABUF buffers: "system-heap", "udmabuf" or NULL */

/* Output */

/* A line that is not a measurement: info, skip, error, done. */
static __printf(1, 2) void say(const char *fmt, ...)
{
	va_list ap;

	fputs(PROG ": ", stdout);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
}

/* The median of the measurement a row is about to print (see acc_vals()). */
static const char *med_name;
static long long med_val;

/*
 * A measurement; then, if it has one, its median on a line of its own with the same
 * keys: "vb2-bench: median group=... NAME=MEDIAN".
 */
static __printf(1, 2) void row(const char *fmt, ...)
{
	char line[512], key[32], *v;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	say("%s", line);
	rows++;
	if (!med_name)
		return;
	snprintf(key, sizeof(key), " %s=", med_name);
	v = strstr(line, key);
	if (v)
		say("median %.*s %s=%lld", (int)(v - line), line, med_name, med_val);
	med_name = NULL;
}

static __printf(1, 2) void setctx(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(ctx, sizeof(ctx), fmt, ap);
	va_end(ap);
}

/* Something that should have worked did not: "error CTX WHAT", the measurement abandoned. */
static __printf(1, 2) int bad(const char *fmt, ...)
{
	char what[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	say("error %s %s", ctx, what);
	failed = 1;
	return -1;
}

static int fail(const char *call, int err)
{
	return bad("call=%s errno=%d (%s)", call, err, strerror(err));
}

static int xioctl(int fd, unsigned long req, void *arg, const char *name)
{
	int r = vb2_ioctl(fd, req, arg);

	return r < 0 ? fail(name, -r) : 0;
}

#define IOC(fd, req, arg)	xioctl(fd, req, arg, #req)

/* Iterations: FULL, or SHORT with --short, scaled by --iters-scale; at least 1. */
static unsigned int iters(unsigned int full, unsigned int shrt)
{
	double n = (short_mode ? shrt : full) * iters_scale;

	return n < 1 ? 1 : (unsigned int)(n + 0.5);
}

/* Time */

static inline int64_t now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Per operation: TOTAL over SECTIONS timed sections holding OPS operations. */
static long long per_op(int64_t total, uint64_t sections, uint64_t ops)
{
	int64_t t = total - (int64_t)sections * clk;

	if (t < 0)
		t = 0;
	return ops ? (long long)((t + (int64_t)ops / 2) / (int64_t)ops) : 0;
}

/*
 * The timed sections of a measurement, each holding the same number of operations: the
 * row gets their mean per operation, the median line their median (see the top).
 */
#define MAXS	32768

struct acc {
	int64_t total;
	unsigned int n;
	int64_t s[MAXS];
};

static struct acc acc1, acc2;

/*
 * Sleep a little: the kernel finishes what earlier calls left to kernel threads, RCU
 * and timers (lazily freed vmalloc areas, for one) before the next measurement starts,
 * not during it. Under -icount with sleep=off the idle time costs no host time.
 */
static void settle(void)
{
	usleep(100000);
}

/* A measurement starts. */
static void acc_start(struct acc *a)
{
	settle();
	a->total = 0;
	a->n = 0;
}

static void acc_add(struct acc *a, int64_t d)
{
	a->total += d;
	if (a->n < MAXS)
		a->s[a->n] = d;
	a->n++;
}

static int cmp64(const void *x, const void *y)
{
	int64_t a = *(const int64_t *)x, b = *(const int64_t *)y;

	return a < b ? -1 : a > b;
}

/* "NAME=MEAN" for sections of PER operations each; the median goes to row(). */
static const char *acc_vals(struct acc *a, unsigned int per, const char *name)
{
	static char buf[128];
	unsigned int n = a->n < MAXS ? a->n : MAXS;
	int64_t med = 0;

	if (n) {
		qsort(a->s, n, sizeof(a->s[0]), cmp64);
		med = a->s[(n - 1) / 2];
	}
	med_name = name;
	med_val = per_op(med, 1, per);
	snprintf(buf, sizeof(buf), "%s=%lld", name, per_op(a->total, a->n, (uint64_t)a->n * per));
	return buf;
}

/* The same followed by "iters=OPS". */
static const char *acc_str(struct acc *a, unsigned int per, const char *name)
{
	static char buf[160];

	snprintf(buf, sizeof(buf), "%s iters=%llu", acc_vals(a, per, name),
		 (unsigned long long)a->n * per);
	return buf;
}

/* Devices */

/* A capture queue and the memory behind its buffers. */
struct vq {
	int fd;
	unsigned int type;
	int mplane;
	unsigned int memory;
	unsigned int count;
	unsigned int nplanes;
	unsigned int sizes[MAXP];	/* sizeimage of each plane */
	size_t lens[MAXP];		/* the same, page-aligned */
	unsigned int caps;		/* buffer capabilities (REQBUFS) */
	unsigned int max;		/* its buffer limit, after testdrv_open() */
	struct v4l2_format fmt;
	char sysname[32];		/* "videoN" */
	void *uptr[MAXB][MAXP];		/* USERPTR memory */
	int dfd[MAXB][MAXP];		/* DMABUF fds */
};

/* Open the capture node NAME; nonzero if it cannot be used ("skip WHAT" if there is none). */
static int vq_open(struct vq *q, const char *name, int flags, const char *what)
{
	struct v4l2_capability cap;
	char path[64];

	memset(q, 0, sizeof(*q));
	memset(q->dfd, 0xff, sizeof(q->dfd));	/* all -1 */
	q->fd = -1;
	if (vb2_find_node(name, path, sizeof(path), q->sysname, sizeof(q->sysname))) {
		say("skip %s reason=no-%s", what, name);
		return -1;
	}
	q->fd = open(path, O_RDWR | flags);
	if (q->fd < 0)
		return fail("open", errno);
	memset(&cap, 0, sizeof(cap));
	if (IOC(q->fd, VIDIOC_QUERYCAP, &cap))
		return -1;
	if (!(cap.capabilities & V4L2_CAP_DEVICE_CAPS))
		cap.device_caps = cap.capabilities;
	q->mplane = !!(cap.device_caps & V4L2_CAP_VIDEO_CAPTURE_MPLANE);
	q->type = q->mplane ? V4L2_BUF_TYPE_VIDEO_CAPTURE_MPLANE : V4L2_BUF_TYPE_VIDEO_CAPTURE;
	q->fmt.type = q->type;
	return IOC(q->fd, VIDIOC_G_FMT, &q->fmt);
}

static void vq_sizes(struct vq *q)
{
	unsigned int p;

	if (q->mplane) {
		q->nplanes = q->fmt.fmt.pix_mp.num_planes;
		if (q->nplanes > MAXP)
			q->nplanes = MAXP;
		for (p = 0; p < q->nplanes; p++)
			q->sizes[p] = q->fmt.fmt.pix_mp.plane_fmt[p].sizeimage;
	} else {
		q->nplanes = 1;
		q->sizes[0] = q->fmt.fmt.pix.sizeimage;
	}
	for (p = 0; p < q->nplanes; p++)
		q->lens[p] = PAGE_ALIGN(q->sizes[p]);
}

/* S_FMT with WIDTH x HEIGHT, in FOURCC unless it is 0. */
static int vq_set_fmt(struct vq *q, unsigned int width, unsigned int height, unsigned int fourcc)
{
	if (q->mplane) {
		q->fmt.fmt.pix_mp.width = width;
		q->fmt.fmt.pix_mp.height = height;
		if (fourcc)
			q->fmt.fmt.pix_mp.pixelformat = fourcc;
	} else {
		q->fmt.fmt.pix.width = width;
		q->fmt.fmt.pix.height = height;
		if (fourcc)
			q->fmt.fmt.pix.pixelformat = fourcc;
	}
	if (IOC(q->fd, VIDIOC_S_FMT, &q->fmt))
		return -1;
	vq_sizes(q);
	return 0;
}

static int vq_reqbufs(struct vq *q, unsigned int count, unsigned int memory)
{
	struct v4l2_requestbuffers rb;

	memset(&rb, 0, sizeof(rb));
	rb.count = count;
	rb.type = q->type;
	rb.memory = memory;
	if (IOC(q->fd, VIDIOC_REQBUFS, &rb))
		return -1;
	q->memory = memory;
	q->count = rb.count;
	q->caps = rb.capabilities;
	if (rb.count != count)
		return bad("call=VIDIOC_REQBUFS asked=%u got=%u", count, rb.count);
	return 0;
}

/* How many buffers the queue can have (CREATE_BUFS with count 0); 0 on error. */
static unsigned int vq_max_buffers(struct vq *q)
{
	struct v4l2_create_buffers cb = { .memory = V4L2_MEMORY_MMAP, .format = q->fmt };

	if (IOC(q->fd, VIDIOC_CREATE_BUFS, &cb))
		return 0;
	/* Before 6.8 (no such flag) a queue had at most 32 buffers (VB2_MAX_FRAME). */
	return cb.capabilities & V4L2_BUF_CAP_SUPPORTS_MAX_NUM_BUFFERS ?
	       CREATE_MAX_NUM_BUFFERS(&cb) : 32;
}

/* Can the queue have N buffers? Else print the skip line WHAT... and return 0. */
static int n_ok(struct vq *q, unsigned int n, const char *what)
{
	unsigned int max = vq_max_buffers(q);

	if (!max)
		return -1;
	if (n <= max)
		return 1;
	say("skip %s reason=max_num_buffers=%u", what, max);
	return 0;
}

static int dmabuf_alloc(size_t len)
{
	int fd = vb2_dmabuf_alloc(len, NULL);

	return fd < 0 ? fail("dma-buf allocation", -fd) : fd;
}

/* USERPTR memory or dma-bufs for the first COUNT buffers (at most MAXB). */
static int vq_setup_mem(struct vq *q)
{
	unsigned int i, p;

	for (i = 0; i < q->count && i < MAXB; i++)
		for (p = 0; p < q->nplanes; p++) {
			if (q->memory == V4L2_MEMORY_USERPTR) {
				void *m = mmap(NULL, q->lens[p], PROT_READ | PROT_WRITE,
					       MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);

				if (m == MAP_FAILED)
					return fail("mmap", errno);
				memset(m, 0, q->lens[p]);
				q->uptr[i][p] = m;
			} else if (q->memory == V4L2_MEMORY_DMABUF) {
				q->dfd[i][p] = dmabuf_alloc(q->lens[p]);
				if (q->dfd[i][p] < 0)
					return -1;
			}
		}
	return 0;
}

static void vq_close(struct vq *q)
{
	unsigned int i, p;

	if (q->fd >= 0)
		close(q->fd);	/* stops streaming, frees the buffers */
	q->fd = -1;
	for (i = 0; i < MAXB; i++)
		for (p = 0; p < MAXP; p++) {
			if (q->uptr[i][p])
				munmap(q->uptr[i][p], q->lens[p]);
			q->uptr[i][p] = NULL;
			if (q->dfd[i][p] >= 0)
				close(q->dfd[i][p]);
			q->dfd[i][p] = -1;
		}
}

/*
 * A v4l2_buffer for buffer IDX; FDS, if not NULL, are the dma-bufs to queue instead of
 * the buffer's own.
 */
static void vq_buf(const struct vq *q, struct v4l2_buffer *b, struct v4l2_plane *pl,
		   unsigned int idx, const int *fds)
{
	unsigned int p;

	vb2_buf_init(b, pl, q->type, q->memory, idx, q->nplanes);
	if (q->memory == V4L2_MEMORY_MMAP)
		return;
	if (!q->mplane) {
		b->length = q->lens[0];
		if (q->memory == V4L2_MEMORY_USERPTR)
			b->m.userptr = (unsigned long)q->uptr[idx][0];
		else
			b->m.fd = fds ? fds[0] : q->dfd[idx][0];
		return;
	}
	for (p = 0; p < q->nplanes; p++) {
		pl[p].length = q->lens[p];
		if (q->memory == V4L2_MEMORY_USERPTR)
			pl[p].m.userptr = (unsigned long)q->uptr[idx][p];
		else
			pl[p].m.fd = fds ? fds[p] : q->dfd[idx][p];
	}
}

static int vq_qbuf(const struct vq *q, unsigned int idx)
{
	struct v4l2_plane pl[MAXP];
	struct v4l2_buffer b;

	vq_buf(q, &b, pl, idx, NULL);
	return IOC(q->fd, VIDIOC_QBUF, &b);
}

static int vq_dqbuf(const struct vq *q, unsigned int n)
{
	struct v4l2_plane pl[MAXP];
	struct v4l2_buffer b;

	while (n--) {
		vq_buf(q, &b, pl, 0, NULL);
		if (IOC(q->fd, VIDIOC_DQBUF, &b))
			return -1;
	}
	return 0;
}

static int vq_stream(const struct vq *q, int on)
{
	int type = q->type;

	return on ? IOC(q->fd, VIDIOC_STREAMON, &type) : IOC(q->fd, VIDIOC_STREAMOFF, &type);
}

/*
 * The per-call measurements of a streaming queue whose buffers IDX[0..M-1] are all
 * dequeued (and whose buffers complete when queued). They return with the same state.
 * KEYS names the variant in the row.
 */

struct bench {
	const char *group;
	const char *keys;
	struct vq *q;
	const unsigned int *idx;
	unsigned int m;
	unsigned int rounds;
};

static void bench_row(const struct bench *bn, const char *op, unsigned int per)
{
	row("group=%s op=%s %s %s", bn->group, op, bn->keys, acc_str(&acc1, per, "ns"));
}

/* The timed buffer ioctls of m_buf(): the op, its ioctl and the call's name. */
enum { M_QBUF, M_DQBUF, M_CYCLE, M_QUERYBUF, M_PREPARE };
static const struct {
	const char *op, *call;
	unsigned long req;
} m_ops[] = {
	{ "QBUF", "VIDIOC_QBUF", VIDIOC_QBUF },
	{ "DQBUF", "VIDIOC_DQBUF", VIDIOC_DQBUF },
	{ "QBUF+DQBUF", "VIDIOC_QBUF", VIDIOC_QBUF },
	{ "QUERYBUF", "VIDIOC_QUERYBUF", VIDIOC_QUERYBUF },
	{ "PREPARE_BUF", "VIDIOC_PREPARE_BUF", VIDIOC_PREPARE_BUF },
};

/*
 * One row: KIND's ioctl on each buffer, timed per round. DQBUF first queues them all;
 * QBUF+DQBUF dequeues right after each QBUF; QBUF and PREPARE_BUF (then QBUF) dequeue
 * all after the timed calls.
 */
static int m_buf(const struct bench *bn, int kind)
{
	struct v4l2_buffer b[MAXB], d[MAXB];
	struct v4l2_plane pl[MAXB][MAXP], dpl[MAXB][MAXP];
	unsigned int i;
	int64_t t0;
	int r;

	acc_start(&acc1);
	for (r = -WARM; r < (int)bn->rounds; r++) {
		for (i = 0; i < bn->m; i++)
			if (kind == M_DQBUF && vq_qbuf(bn->q, bn->idx[i]))
				return -1;
		for (i = 0; i < bn->m; i++) {
			vq_buf(bn->q, &b[i], pl[i], kind == M_DQBUF ? 0 : bn->idx[i], NULL);
			vq_buf(bn->q, &d[i], dpl[i], 0, NULL);
		}
		t0 = now();
		for (i = 0; i < bn->m; i++)
			if (xioctl(bn->q->fd, m_ops[kind].req, &b[i], m_ops[kind].call) ||
			    (kind == M_CYCLE && IOC(bn->q->fd, VIDIOC_DQBUF, &d[i])))
				return -1;
		if (r >= 0)
			acc_add(&acc1, now() - t0);
		for (i = 0; i < bn->m; i++)
			if (kind == M_PREPARE && vq_qbuf(bn->q, bn->idx[i]))
				return -1;
		if ((kind == M_QBUF || kind == M_PREPARE) && vq_dqbuf(bn->q, bn->m))
			return -1;
	}
	bench_row(bn, m_ops[kind].op, bn->m);
	return 0;
}

static int m_poll(const struct bench *bn)
{
	struct pollfd pfd = { .fd = bn->q->fd, .events = POLLIN };
	unsigned int i;
	char op[32];
	int64_t t0;
	int r, n;

	acc_start(&acc1);
	for (r = -WARM; r < (int)bn->rounds; r++)
		for (i = 0; i < bn->m; i++) {
			if (vq_qbuf(bn->q, bn->idx[i]))
				return -1;
			pfd.revents = 0;
			t0 = now();
			n = poll(&pfd, 1, 5000);
			if (r >= 0)
				acc_add(&acc1, now() - t0);
			if (n < 0)
				return fail("poll", errno);
			if (n != 1 || !(pfd.revents & POLLIN))
				return bad("call=poll returned=%d revents=%#x", n, pfd.revents);
			if (vq_dqbuf(bn->q, 1))
				return -1;
		}
	snprintf(op, sizeof(op), "poll@%u", bn->q->max);
	bench_row(bn, op, 1);
	return 0;
}

static int m_expbuf(const struct bench *bn)
{
	struct v4l2_exportbuffer e[MAXB][MAXP];
	unsigned int i, p;
	int64_t t0;
	int r;

	acc_start(&acc1);
	for (r = -WARM; r < (int)bn->rounds; r++) {
		for (i = 0; i < bn->m; i++)
			for (p = 0; p < bn->q->nplanes; p++) {
				memset(&e[i][p], 0, sizeof(e[i][p]));
				e[i][p].type = bn->q->type;
				e[i][p].index = bn->idx[i];
				e[i][p].plane = p;
				e[i][p].flags = O_CLOEXEC;
			}
		t0 = now();
		for (i = 0; i < bn->m; i++)
			for (p = 0; p < bn->q->nplanes; p++) {
				if (IOC(bn->q->fd, VIDIOC_EXPBUF, &e[i][p]))
					return -1;
				close(e[i][p].fd);
			}
		if (r >= 0)
			acc_add(&acc1, now() - t0);
	}
	bench_row(bn, "EXPBUF+close", bn->m);
	return 0;
}

static const char *mem_name(unsigned int memory)
{
	return memory == V4L2_MEMORY_MMAP ? "MMAP" :
	       memory == V4L2_MEMORY_USERPTR ? "USERPTR" : "DMABUF";
}

/* Open instance INST's capture node with a 16x16 image and learn its buffer limit. */
static int testdrv_open(struct vq *q, unsigned int inst, unsigned int planes, const char *what)
{
	char name[32];

	snprintf(name, sizeof(name), "vb2-testdrv-%u-cap", inst);
	if (vq_open(q, name, O_NONBLOCK, what))
		return -1;
	if (vq_set_fmt(q, SMALL, SMALL, planes == 3 ? V4L2_PIX_FMT_YUV420M : V4L2_PIX_FMT_YUYV))
		return -1;
	if (q->nplanes != planes)
		return bad("call=VIDIOC_S_FMT planes=%u expected=%u", q->nplanes, planes);
	q->max = vq_max_buffers(q);
	return q->max ? 0 : -1;
}

/* Can Q use MEMORY? Else print the skip line and return 0. */
static int memory_ok(struct vq *q, unsigned int memory, const char *what)
{
	unsigned int bit = memory == V4L2_MEMORY_MMAP ? V4L2_BUF_CAP_SUPPORTS_MMAP :
			   memory == V4L2_MEMORY_USERPTR ? V4L2_BUF_CAP_SUPPORTS_USERPTR :
			   V4L2_BUF_CAP_SUPPORTS_DMABUF;

	/* REQBUFS(0) of a memory type the queue does not have fails: ask with MMAP. */
	if (vq_reqbufs(q, 0, V4L2_MEMORY_MMAP))
		return -1;
	if (!(q->caps & bit)) {
		say("skip %s reason=queue-has-no-%s", what, mem_name(memory));
		return 0;
	}
	if (memory == V4L2_MEMORY_DMABUF && !exporter) {
		say("skip %s reason=no-dma-heap-nor-udmabuf", what);
		return 0;
	}
	return 1;
}

/* Groups */

static void group_floor(void)
{
	struct v4l2_capability cap;
	struct vq q;
	unsigned int i, j, n = iters(200, 2);	/* sections of 100 calls */
	int64_t t0;

	row("group=floor op=clock_gettime ns=%lld iters=%u", (long long)clk, 2000u);
	setctx("group=floor");
	if (vq_open(&q, "vb2-testdrv-0-cap", O_NONBLOCK, "group=floor op=*"))
		goto out;
	for (i = 0; i < WARM; i++)
		ioctl(q.fd, _IO('V', 250));
	acc_start(&acc1);
	for (i = 0; i < n; i++) {
		t0 = now();
		for (j = 0; j < 100; j++)
			if (ioctl(q.fd, _IO('V', 250)) != -1 || errno != ENOTTY) {
				fail("ioctl(_IO('V', 250)) expected ENOTTY", errno);
				goto out;
			}
		acc_add(&acc1, now() - t0);
	}
	row("group=floor op=ENOTTY %s", acc_str(&acc1, 100, "ns"));
	for (i = 0; i < WARM; i++)
		if (IOC(q.fd, VIDIOC_QUERYCAP, &cap))
			goto out;
	acc_start(&acc1);
	for (i = 0; i < n; i++) {
		t0 = now();
		for (j = 0; j < 100; j++)
			if (IOC(q.fd, VIDIOC_QUERYCAP, &cap))
				goto out;
		acc_add(&acc1, now() - t0);
	}
	row("group=floor op=QUERYCAP %s", acc_str(&acc1, 100, "ns"));
out:
	vq_close(&q);
}

/*
 * The hot path on instance INST (ALLOC, MEMORY, PLANES); ONLY_POLL: poll() alone (the
 * single-planar instances with the default buffer limit).
 */
static void hot_one(unsigned int inst, unsigned int alloc, unsigned int memory,
		    unsigned int planes, int only_poll)
{
	static const unsigned int idx[MAXB] = { 0, 1, 2, 3, 4, 5, 6, 7 };
	char keys[96], what[128];
	struct bench bn;
	struct vq q;
	unsigned int i;

	snprintf(keys, sizeof(keys), "alloc=%s mem=%s planes=%u", alloc_names[alloc],
		 mem_name(memory), planes);
	snprintf(what, sizeof(what), "group=hot op=%s %s", only_poll ? "poll" : "*", keys);
	setctx("group=hot inst=%u %s", inst, keys);
	if (testdrv_open(&q, inst, planes, what) || memory_ok(&q, memory, what) <= 0)
		goto out;
	if (vq_reqbufs(&q, MAXB, memory) || vq_setup_mem(&q))
		goto out;
	for (i = 0; i < MAXB; i++)
		if (vq_qbuf(&q, i))
			goto out;
	if (vq_stream(&q, 1) || vq_dqbuf(&q, MAXB))
		goto out;
	bn = (struct bench){ "hot", keys, &q, idx, MAXB, iters(500, 3) };
	if (only_poll) {
		if (m_poll(&bn))
			goto out;
	} else if (m_buf(&bn, M_QBUF) || m_buf(&bn, M_DQBUF) || m_buf(&bn, M_CYCLE) ||
		   m_buf(&bn, M_QUERYBUF) || m_buf(&bn, M_PREPARE) || m_poll(&bn) ||
		   (memory == V4L2_MEMORY_MMAP && m_expbuf(&bn))) {
		goto out;
	}
	vq_stream(&q, 0);
out:
	vq_close(&q);
}

static void group_hot(void)
{
	static const unsigned int mems[] = {
		V4L2_MEMORY_MMAP, V4L2_MEMORY_USERPTR, V4L2_MEMORY_DMABUF
	};
	unsigned int a, m, p;

	for (p = 1; p <= 3; p += 2)
		for (a = 0; a < 3; a++)
			for (m = 0; m < ARRAY_SIZE(mems); m++) {
				hot_one(a + (p == 3 ? 3 : 0), a, mems[m], p, 0);
				/* poll() at the default buffer limit as well */
				if (p == 1)
					hot_one(6 + a, a, mems[m], 1, 1);
			}
}

/* The DMABUF patterns: N dma-bufs at fixed indices, or rotated across them. */
#define NPAT 4

/*
 * Where the DMABUF patterns run: the test driver (group dmabuf), or vb2-edu with nodma=1
 * (group iommu, tools/plans/bench-iommu.plan): no transfer, so what is left is
 * videobuf2's work and the mapping of each dma-buf for the PCI device, through the IOMMU
 * in make bench's guest. A VGA frame, 75 pages.
 */
static const struct dmabuf_dev {
	const char *group;
	const char *node;		/* the capture node's V4L2 name */
	unsigned int alloc;		/* its allocator, in alloc_names[] */
	unsigned int width, height;	/* vb2-edu: the GREY frame; 0: testdrv_open() */
} dmabuf_devs[] = {
	{ "dmabuf", "vb2-testdrv-0-cap", 0, 0, 0 },
	{ "dmabuf", "vb2-testdrv-2-cap", 2, 0, 0 },
	{ "iommu", "vb2-edu-0-cap", 1, 640, 480 },
	{ "iommu", "vb2-edu-1-cap", 2, 640, 480 },
};

/*
 * Open DV's capture node with its format; nonzero if it cannot be used. vb2-edu: KEYS
 * gains the frame and the IOMMU domain (its IOMMU group's "type": "DMA" strict, "DMA-FQ"
 * lazy, "identity"..., or "none"); skipped (line WHAT) where dma-contig cannot import the
 * system heap's scattered pages, without an IOMMU to map them as one range.
 */
static int dmabuf_open(struct vq *q, const struct dmabuf_dev *dv, char *keys, size_t klen,
		       const char *what)
{
	char dom[32], yn[8] = "", path[128];

	if (!dv->width)
		return testdrv_open(q, dv->alloc, 1, what);
	if (vq_open(q, dv->node, O_NONBLOCK, what))
		return -1;
	/* Without nodma a buffer takes the engine 100 ms a page: not ready at DQBUF. */
	vb2_read_line("/sys/module/vb2_edu/parameters/nodma", yn, sizeof(yn));
	if (strcmp(yn, "Y")) {
		say("skip %s reason=vb2-edu-without-nodma", what);
		return 1;
	}
	if (vq_set_fmt(q, dv->width, dv->height, 0))
		return -1;
	if (q->nplanes != 1)
		return bad("call=VIDIOC_S_FMT planes=%u expected=1", q->nplanes);
	snprintf(path, sizeof(path), "/sys/class/video4linux/%s/device/iommu_group/type",
		 q->sysname);
	if (vb2_read_line(path, dom, sizeof(dom)) || !*dom)
		snprintf(dom, sizeof(dom), "none");
	snprintf(keys + strlen(keys), klen - strlen(keys), " frame=%ux%u domain=%s",
		 dv->width, dv->height, dom);
	if (!strcmp(alloc_names[dv->alloc], "dma-contig") && strncmp(dom, "DMA", 3)) {
		say("skip %s domain=%s reason=dma-contig-needs-an-iommu-for-scattered-pages",
		    what, dom);
		return 1;
	}
	return 0;
}

static void dmabuf_one(const struct dmabuf_dev *dv, int rotate)
{
	struct v4l2_buffer b[NPAT], d[NPAT];
	struct v4l2_plane pl[NPAT][MAXP], dpl[NPAT][MAXP];
	int fds[NPAT] = { -1, -1, -1, -1 };
	unsigned int i, rounds = iters(1000, 5);
	char keys[128], what[160];
	int64_t t0;
	struct vq q;
	int r;

	snprintf(keys, sizeof(keys), "alloc=%s mem=DMABUF planes=1 pattern=%s n=%u",
		 alloc_names[dv->alloc], rotate ? "rotate" : "same", NPAT);
	snprintf(what, sizeof(what), "group=%s op=QBUF+DQBUF %s", dv->group, keys);
	setctx("group=%s dev=%s %s", dv->group, dv->node, keys);
	if (dmabuf_open(&q, dv, keys, sizeof(keys), what) ||
	    memory_ok(&q, V4L2_MEMORY_DMABUF, what) <= 0 ||
	    vq_reqbufs(&q, NPAT, V4L2_MEMORY_DMABUF))
		goto out;
	for (i = 0; i < NPAT; i++) {
		fds[i] = dmabuf_alloc(q.lens[0]);
		if (fds[i] < 0)
			goto out;
	}
	if (vq_stream(&q, 1))
		goto out;
	acc_start(&acc1);
	for (r = -WARM; r < (int)rounds; r++) {
		/* dma-buf k at index (k + round) % N: at index i, dma-buf (i - round) % N. */
		unsigned int shift = rotate ? (unsigned int)(r + WARM) % NPAT : 0;

		for (i = 0; i < NPAT; i++) {
			vq_buf(&q, &b[i], pl[i], i, &fds[(i + NPAT - shift) % NPAT]);
			vq_buf(&q, &d[i], dpl[i], 0, NULL);
		}
		t0 = now();
		for (i = 0; i < NPAT; i++)
			if (IOC(q.fd, VIDIOC_QBUF, &b[i]) || IOC(q.fd, VIDIOC_DQBUF, &d[i]))
				goto out;
		if (r >= 0)
			acc_add(&acc1, now() - t0);
	}
	row("group=%s op=QBUF+DQBUF %s %s", dv->group, keys, acc_str(&acc1, NPAT, "ns"));
	vq_stream(&q, 0);
out:
	vq_close(&q);
	for (i = 0; i < NPAT; i++)
		if (fds[i] >= 0)
			close(fds[i]);
}

/* Both patterns, same and rotate, on each device of GROUP. */
static void dmabuf_group(const char *group)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(dmabuf_devs); i++) {
		if (strcmp(dmabuf_devs[i].group, group))
			continue;
		dmabuf_one(&dmabuf_devs[i], 0);
		dmabuf_one(&dmabuf_devs[i], 1);
	}
}

static void group_dmabuf(void)
{
	dmabuf_group("dmabuf");
}

static void group_iommu(void)
{
	dmabuf_group("iommu");
}

/* vivid: buffers complete from its thread, at its frame rate. */
static void vivid_one(unsigned int inst)
{
	static const unsigned int idx[4] = { 0, 1, 2, 3 };
	unsigned int i, frames = iters(100, 4), rounds = iters(250, 3), alloc = 99;
	int64_t t0;
	char name[32], keys[96], what[128], line[256] = "";
	struct bench bn;
	struct vq q;
	int r, n;

	/* Which allocator: vivid's module parameter (the plan's allocators=0,1), INST 0 or 1. */
	vb2_read_line("/sys/module/vivid/parameters/allocators", line, sizeof(line));
	sscanf(line, inst ? "%*u,%u" : "%u", &alloc);
	snprintf(name, sizeof(name), "vivid-%03u-vid-cap", inst);
	snprintf(keys, sizeof(keys), "alloc=%s mem=MMAP planes=1",
		 alloc < 2 ? alloc_names[alloc] : "unknown");
	snprintf(what, sizeof(what), "group=vivid op=* %s", keys);
	setctx("group=vivid dev=%s %s", name, keys);
	if (vq_open(&q, name, O_NONBLOCK, what))
		goto out;
	vq_sizes(&q);
	if (vq_reqbufs(&q, 4, V4L2_MEMORY_MMAP))
		goto out;
	for (i = 0; i < 4; i++)
		if (vq_qbuf(&q, i))
			goto out;
	if (vq_stream(&q, 1))
		goto out;
	acc_start(&acc1);
	acc_start(&acc2);
	for (r = -WARM; r < (int)frames; r++) {
		struct v4l2_plane pl[MAXP];
		struct v4l2_buffer b;

		n = vb2_poll(q.fd, POLLIN, 5000);
		if (n < 0) {
			fail("poll", -n);
			goto out;
		}
		if (n == 0) {
			bad("call=poll timeout=5s");
			goto out;
		}
		/* Let vivid's thread finish its frame and sleep again. */
		usleep(1000);
		vq_buf(&q, &b, pl, 0, NULL);
		t0 = now();
		if (IOC(q.fd, VIDIOC_DQBUF, &b))
			goto out;
		if (r >= 0)
			acc_add(&acc2, now() - t0);
		i = b.index;
		vq_buf(&q, &b, pl, i, NULL);
		t0 = now();
		if (IOC(q.fd, VIDIOC_QBUF, &b))
			goto out;
		if (r >= 0)
			acc_add(&acc1, now() - t0);
	}
	row("group=vivid op=QBUF %s %s", keys, acc_str(&acc1, 1, "ns"));
	row("group=vivid op=DQBUF %s %s", keys, acc_str(&acc2, 1, "ns"));
	bn = (struct bench){ "vivid", keys, &q, idx, 4, rounds };
	if (m_buf(&bn, M_QUERYBUF))
		goto out;
	vq_stream(&q, 0);
out:
	vq_close(&q);
}

static void group_vivid(void)
{
	vivid_one(0);
	vivid_one(1);
}

/*
 * Allocation: the vmalloc instances with max_buffers=32768 (n up to 32768) and with the
 * default limit (n up to 32), 16x16.
 */
static const unsigned int alloc_ns_full[] = { 2, 32, 1024, 32768 };
static const unsigned int alloc_ns_short[] = { 2, 32 };

static int alloc_cycle(struct vq *q, unsigned int n, void **maps, size_t *lens)
{
	unsigned int i, j;
	int ret = 0;

	if (vq_reqbufs(q, n, V4L2_MEMORY_MMAP))
		return -1;
	for (i = 0; i < n; i++) {
		struct v4l2_buffer b;

		memset(&b, 0, sizeof(b));
		b.type = q->type;
		b.memory = V4L2_MEMORY_MMAP;
		b.index = i;
		if (IOC(q->fd, VIDIOC_QUERYBUF, &b)) {
			ret = -1;
			break;
		}
		lens[i] = b.length;
		maps[i] = mmap(NULL, b.length, PROT_READ | PROT_WRITE, MAP_SHARED, q->fd,
			       b.m.offset);
		if (maps[i] == MAP_FAILED) {
			ret = fail("mmap", errno);
			break;
		}
		*(volatile char *)maps[i] = 1;
	}
	for (j = 0; j < i; j++)
		munmap(maps[j], lens[j]);
	if (vq_reqbufs(q, 0, V4L2_MEMORY_MMAP))
		return -1;
	return ret;
}

/* REQBUFS+mmap+REQBUFS(0) cycles of n buffers, for each n of @ns; -1: abandoned. */
static int alloc_reqbufs_rows(struct vq *q, const unsigned int *ns, unsigned int nn,
			      void **maps, size_t *lens)
{
	unsigned int k, n, it, cycles;
	int64_t t0;
	int ret;

	for (k = 0; k < nn; k++) {
		n = ns[k];
		/* About the same work for every n: 1 or 2 cycles from 1024 buffers up. */
		cycles = n >= 32768 ? 1 : iters(n >= 1024 ? 2 : 2048 / n, n >= 32 ? 1 : 3);
		setctx("group=alloc op=REQBUFS+mmap+REQBUFS0@%u alloc=vmalloc n=%u", q->max, n);
		ret = n_ok(q, n, ctx);
		if (ret < 0)
			return -1;
		if (!ret)
			continue;
		if (alloc_cycle(q, n < 1024 ? n : 1024, maps, lens))
			return -1;
		acc_start(&acc1);
		for (it = 0; it < cycles; it++) {
			t0 = now();
			if (alloc_cycle(q, n, maps, lens))
				return -1;
			acc_add(&acc1, now() - t0);
		}
		row("group=alloc op=REQBUFS+mmap+REQBUFS0@%u alloc=vmalloc n=%u %s iters=%u",
		    q->max, n, acc_vals(&acc1, n, "ns_per_buf"), cycles);
	}
	return 0;
}

/* One cycle of n CREATE_BUFS(1), then n REMOVE_BUFS(1) if @can_remove; timed if @timed. */
static int alloc_create_cycle(struct vq *q, unsigned int n, int can_remove, int timed)
{
	struct v4l2_create_buffers cb;
	struct v4l2_remove_buffers rb;
	unsigned int i;
	int64_t t0;

	for (i = 0; i < n; i++) {
		cb = (struct v4l2_create_buffers){ .count = 1, .memory = V4L2_MEMORY_MMAP,
						   .format = q->fmt };
		t0 = now();
		if (IOC(q->fd, VIDIOC_CREATE_BUFS, &cb))
			return -1;
		if (timed)
			acc_add(&acc1, now() - t0);
	}
	if (can_remove) {
		setctx("group=alloc op=REMOVE_BUFS@%u alloc=vmalloc n=%u", q->max, n);
		for (i = 0; i < n; i++) {
			rb = (struct v4l2_remove_buffers){ .type = q->type, .index = i,
							   .count = 1 };
			t0 = now();
			if (IOC(q->fd, VIDIOC_REMOVE_BUFS, &rb))
				return -1;
			if (timed)
				acc_add(&acc2, now() - t0);
		}
	}
	return vq_reqbufs(q, 0, V4L2_MEMORY_MMAP);
}

/* CREATE_BUFS and REMOVE_BUFS one buffer at a time, for each n of @ns; -1: abandoned. */
static int alloc_create_rows(struct vq *q, const unsigned int *ns, unsigned int nn)
{
	unsigned int k, n, it, cycles;
	char what[128];
	int ret, can_remove;

	for (k = 0; k < nn; k++) {
		n = ns[k];
		cycles = n >= 32768 ? 1 : iters(n >= 1024 ? 2 : 4096 / n, n >= 32 ? 1 : 3);
		setctx("group=alloc op=CREATE_BUFS@%u alloc=vmalloc n=%u", q->max, n);
		if (vq_reqbufs(q, 0, V4L2_MEMORY_MMAP))
			return -1;
		snprintf(what, sizeof(what),
			 "group=alloc op=CREATE_BUFS+REMOVE_BUFS@%u alloc=vmalloc n=%u", q->max, n);
		ret = n_ok(q, n, what);
		if (ret < 0)
			return -1;
		if (!ret)
			continue;
		can_remove = !!(q->caps & V4L2_BUF_CAP_SUPPORTS_REMOVE_BUFS);
		/* Every call timed; the first cycle is the warm-up. */
		acc_start(&acc1);
		acc_start(&acc2);
		for (it = 0; it < cycles + 1; it++)
			if (alloc_create_cycle(q, n, can_remove, it))
				return -1;
		row("group=alloc op=CREATE_BUFS@%u alloc=vmalloc n=%u %s", q->max, n,
		    acc_str(&acc1, 1, "ns"));
		if (can_remove)
			row("group=alloc op=REMOVE_BUFS@%u alloc=vmalloc n=%u %s", q->max, n,
			    acc_str(&acc2, 1, "ns"));
		else
			say("skip group=alloc op=REMOVE_BUFS@%u alloc=vmalloc n=%u reason=no-V4L2_BUF_CAP_SUPPORTS_REMOVE_BUFS",
			    q->max, n);
	}
	return 0;
}

static void alloc_one(unsigned int inst, const unsigned int *ns, unsigned int nn)
{
	void **maps = NULL;
	size_t *lens = NULL;
	struct vq q;

	setctx("group=alloc inst=%u alloc=vmalloc", inst);
	if (testdrv_open(&q, inst, 1, "group=alloc op=* alloc=vmalloc"))
		goto out;
	maps = calloc(ns[nn - 1], sizeof(*maps));
	lens = calloc(ns[nn - 1], sizeof(*lens));
	if (!maps || !lens) {
		fail("calloc", ENOMEM);
		goto out;
	}
	if (!alloc_reqbufs_rows(&q, ns, nn, maps, lens))
		alloc_create_rows(&q, ns, nn);
out:
	free(maps);
	free(lens);
	vq_close(&q);
}

static void group_alloc(void)
{
	alloc_one(0, short_mode ? alloc_ns_short : alloc_ns_full,
		  short_mode ? ARRAY_SIZE(alloc_ns_short) : ARRAY_SIZE(alloc_ns_full));
	alloc_one(6, alloc_ns_short, ARRAY_SIZE(alloc_ns_short));
}

/* QBUF, DQBUF and QUERYBUF with few or many buffers allocated. */
static void group_scale(void)
{
	unsigned int k, ns[2] = { 2, short_mode ? 32 : 32768 };
	char keys[96], what[128];

	for (k = 0; k < 2; k++) {
		unsigned int n = ns[k], idx[2] = { 0, n - 1 };
		struct vq q;
		struct bench bn = { "scale", keys, &q, idx, 2, iters(2000, 10) };

		snprintf(keys, sizeof(keys), "alloc=vmalloc mem=MMAP planes=1 n=%u", n);
		snprintf(what, sizeof(what), "group=scale op=* %s", keys);
		setctx("group=scale %s", keys);
		if (testdrv_open(&q, 0, 1, what) || n_ok(&q, n, what) <= 0 ||
		    vq_reqbufs(&q, n, V4L2_MEMORY_MMAP) || vq_stream(&q, 1))
			goto next;
		if (!m_buf(&bn, M_QBUF) && !m_buf(&bn, M_DQBUF) && !m_buf(&bn, M_QUERYBUF) &&
		    !vq_stream(&q, 0))
			vq_reqbufs(&q, 0, V4L2_MEMORY_MMAP);
next:
		vq_close(&q);
	}
}

/*
 * read() emulation against memcpy, 640x480 YUYV, one frame per read(), per allocator on
 * the queues of 32768 buffers and on those with the default limit.
 */
static void group_read(void)
{
	unsigned int a, i, inst, f, frames = iters(100, 3);
	char *buf = NULL, *src = NULL, name[32], what[64];
	int64_t tr, tm, t0;
	struct vq q;
	size_t size;
	ssize_t got;

	for (i = 0; i < 6; i++) {
		a = i / 2;
		inst = a + (i % 2 ? 6 : 0);
		setctx("group=read op=read inst=%u alloc=%s", inst, alloc_names[a]);
		snprintf(name, sizeof(name), "vb2-testdrv-%u-cap", inst);
		snprintf(what, sizeof(what), "group=read op=read alloc=%s", alloc_names[a]);
		if (vq_open(&q, name, 0, what) || vq_set_fmt(&q, 640, 480, V4L2_PIX_FMT_YUYV))
			goto next;
		q.max = vq_max_buffers(&q);
		if (!q.max)
			goto next;
		size = q.sizes[0];
		free(buf);
		free(src);
		buf = aligned_alloc(PAGE, PAGE_ALIGN(size));
		src = aligned_alloc(PAGE, PAGE_ALIGN(size));
		if (!buf || !src) {
			fail("aligned_alloc", ENOMEM);
			goto next;
		}
		memset(buf, 0, size);
		memset(src, 0x5a, size);
		tr = 0;
		for (f = 0; f < frames + WARM; f++) {
			if (f == WARM)
				settle();
			t0 = now();
			got = read(q.fd, buf, size);
			if (f >= WARM)
				tr += now() - t0;
			if (got < 0) {
				fail("read", errno);
				goto next;
			}
			if ((size_t)got != size) {
				bad("call=read got=%zd expected=%zu", got, size);
				goto next;
			}
		}
		tm = 0;
		for (f = 0; f < frames + WARM; f++) {
			t0 = now();
			memcpy(buf, src, size);
			__asm__ volatile("" : : "r"(buf) : "memory");
			if (f >= WARM)
				tm += now() - t0;
		}
		tr -= (int64_t)frames * clk;
		tm -= (int64_t)frames * clk;
		row("group=read op=read@%u alloc=%s read_size=%zu bytes_per_s=%lld memcpy_bytes_per_s=%lld iters=%u",
		    q.max, alloc_names[a], size,
		    tr > 0 ? (long long)((double)size * frames * 1e9 / tr) : 0,
		    tm > 0 ? (long long)((double)size * frames * 1e9 / tm) : 0, frames);
next:
		vq_close(&q);
	}
	free(buf);
	free(src);
}

/* Slab (SReclaimable + SUnreclaim) and VmallocUsed of /proc/meminfo, in kB. */
static int read_meminfo(long long *slab, long long *vmalloc)
{
	char line[128];
	FILE *f = fopen("/proc/meminfo", "r");
	long long v;

	*slab = *vmalloc = -1;
	if (!f)
		return fail("fopen(/proc/meminfo)", errno);
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "Slab: %lld", &v) == 1)
			*slab = v;
		else if (sscanf(line, "VmallocUsed: %lld", &v) == 1)
			*vmalloc = v;
	}
	fclose(f);
	if (*slab < 0 || *vmalloc < 0)
		return bad("call=read(/proc/meminfo) no Slab or VmallocUsed");
	return 0;
}

/*
 * Give the empty slabs of every cache back (SLUB's /sys/kernel/slab/NAME/shrink), so that
 * the growth of Slab counts the new objects, not slabs kept from earlier allocations.
 */
static void slab_shrink(void)
{
	glob_t g;
	size_t i;

	settle();	/* objects freed through RCU */
	if (glob("/sys/kernel/slab/*/shrink", 0, NULL, &g))
		return;
	for (i = 0; i < g.gl_pathc; i++) {
		int fd = open(g.gl_pathv[i], O_WRONLY);

		if (fd < 0)
			continue;
		if (write(fd, "1", 1) < 0) {
			/* Nothing to do about it: the numbers are a little less exact. */
		}
		close(fd);
	}
	globfree(&g);
}

static void group_memory(void)
{
	unsigned int k, ns[2] = { 1024, 32768 }, nn = short_mode ? 1 : 2;
	long long s0, v0, s1, v1;
	struct vq q;
	int ret;

	if (short_mode)
		ns[0] = 32;
	setctx("group=memory alloc=dma-contig");
	if (testdrv_open(&q, 1, 1, "group=memory op=per_buffer alloc=dma-contig"))
		goto out;
	for (k = 0; k < nn; k++) {
		unsigned int n = ns[k];

		setctx("group=memory op=per_buffer alloc=dma-contig n=%u", n);
		ret = n_ok(&q, n, ctx);
		if (ret < 0)
			goto out;
		if (!ret)
			continue;
		slab_shrink();
		if (read_meminfo(&s0, &v0) || vq_reqbufs(&q, n, V4L2_MEMORY_MMAP))
			goto out;
		slab_shrink();
		if (read_meminfo(&s1, &v1) || vq_reqbufs(&q, 0, V4L2_MEMORY_MMAP))
			goto out;
		row("group=memory op=per_buffer alloc=dma-contig n=%u slab_bytes=%lld vmalloc_bytes=%lld",
		    n, (s1 - s0) * 1024 / n, (v1 - v0) * 1024 / n);
	}
out:
	vq_close(&q);
}

static const struct {
	const char *name;
	void (*fn)(void);
} groups[] = {
	{ "floor", group_floor },
	{ "hot", group_hot },
	{ "dmabuf", group_dmabuf },
	{ "iommu", group_iommu },
	{ "vivid", group_vivid },
	{ "alloc", group_alloc },
	{ "scale", group_scale },
	{ "read", group_read },
	{ "memory", group_memory },
};

static void usage(void)
{
	fprintf(stderr, "usage: " PROG " [--short] [--iters-scale F] [--only GROUP[,GROUP...]]\n"
		"groups: floor hot dmabuf iommu vivid alloc scale read memory\n");
	exit(2);
}

int main(int argc, char **argv)
{
	char cs[32] = "unknown";
	unsigned int want = ~0u;	/* the groups to run, by index in groups[] */
	const char *only = NULL;
	struct utsname u;
	int64_t start, t0;
	unsigned int i;

	setvbuf(stdout, NULL, _IOLBF, 0);
	for (i = 1; i < (unsigned int)argc; i++) {
		if (!strcmp(argv[i], "--short")) {
			short_mode = 1;
		} else if (!strcmp(argv[i], "--iters-scale") && i + 1 < (unsigned int)argc) {
			char *end;

			iters_scale = strtod(argv[++i], &end);
			if (*end || iters_scale <= 0)
				usage();
		} else if (!strcmp(argv[i], "--only") && i + 1 < (unsigned int)argc) {
			only = argv[++i];
		} else {
			usage();
		}
	}
	if (only) {
		const char *p = only;

		want = 0;
		while (p && *p) {
			size_t n = strcspn(p, ",");
			unsigned int g;

			for (g = 0; g < ARRAY_SIZE(groups); g++)
				if (strlen(groups[g].name) == n && !strncmp(p, groups[g].name, n))
					break;
			if (g == ARRAY_SIZE(groups))
				usage();
			want |= 1u << g;
			p = p[n] ? p + n + 1 : NULL;
		}
	}

	start = now();
	if (!access("/dev/dma_heap/system", F_OK))
		exporter = "system-heap";
	else if (!access("/dev/udmabuf", F_OK))
		exporter = "udmabuf";
	uname(&u);
	vb2_read_line("/sys/devices/system/clocksource/clocksource0/current_clocksource", cs,
		      sizeof(cs));
	say("info kernel=%s clocksource=%s short=%d iters_scale=%g dmabuf=%s", u.release, cs,
	    short_mode, iters_scale, exporter ? exporter : "none");

	/* The cost of the clock reads around a timed section: the median of 2000 empty ones. */
	settle();
	for (i = 0; i < 2000; i++) {
		t0 = now();
		acc1.s[i] = now() - t0;
	}
	qsort(acc1.s, 2000, sizeof(acc1.s[0]), cmp64);
	clk = acc1.s[1000];

	for (i = 0; i < ARRAY_SIZE(groups); i++)
		if (want & 1u << i)
			groups[i].fn();
	say("done rows=%u seconds=%.1f", rows, (now() - start) / 1e9);
	return failed;
}
