// SPDX-License-Identifier: GPL-2.0
/*
 * vb2-race: targeted two-thread races on the V4L2 buffer uAPI (videobuf2), one per
 * subcommand. A guest program of the test harness (tools/plans/races.plan).
 *
 *   vb2-race SUBCOMMAND --dev NAME[:out|:cap] [--seconds N] [--debugfs DIR]
 *
 * --dev picks the video node by its V4L2 name; on a mem2mem node :out (the default) or
 * :cap picks the queue. What thread A / thread B do:
 *
 *   reinit-vs-reqbufs      QBUF into requests, REQUEST_REINIT, REQUEST_QUEUE, close of
 *                          request fds / REQBUFS(0)+REQBUFS(n), or (where the queue can)
 *                          REMOVE_BUFS of one buffer + CREATE_BUFS. Needs requests.
 *   close-vs-request-queue REQUEST_ALLOC, QBUF, REQUEST_QUEUE, DQBUF / closes the file
 *                          that owns the queue (dup2 of /dev/null onto it), opens anew.
 *   fileio-vs-bufs         read() or write(), reopening now and then / CREATE_BUFS,
 *                          REMOVE_BUFS, REQBUFS on another file: EBUSY while A's I/O runs.
 *   sg-mmap-mremap         mmap, mremap larger (must fail: VM_DONTEXPAND), smaller, to
 *                          another address, read, munmap / REQBUFS(0)+REQBUFS(n).
 *   dmabuf-cpu-access      fills exported output buffers between DMA_BUF_IOCTL_SYNC
 *                          START/END / queues them and checks each one's checksum
 *                          (vb2-testdrv's debugfs out_checksum).
 *   hold                   streams with mapped and exported buffers, threads polling,
 *                          dequeuing and queueing, until ENODEV (the driver unbound);
 *                          then the mappings must still read. Prints "hold dev=NAME:
 *                          streaming" when ready.
 *
 * A race loops for --seconds (default 60; hold: the longest wait for the unbind). KTAP
 * at the end: a case NODE/SUBCOMMAND/THREAD/CALL per call with the count of each
 * result, failing on a result the call does not allow (a skip if never called), and
 * NODE/SUBCOMMAND/checks for the other checks. A thread without progress for 30 s is a
 * "HANG" (exit code 3); else 0 when every case passed, 1 if not, 2 for a usage error.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <linux/dma-buf.h>
#include <linux/videodev2.h>

#include <kselftest.h>

#include "uapi-6.12.h"
#include "vb2-guest.h"

typedef uint32_t u32;
typedef uint64_t u64;

#define PROG		"vb2-race"
#define PAGE		4096UL
#define PAGE_ALIGN(x)	(((x) + PAGE - 1) & ~(PAGE - 1))
#define MAXP		VIDEO_MAX_PLANES
#define MAX_THREADS	8
#define NBUFS		4	/* the buffers a race asks for */
#define STALL		30	/* seconds without progress: a hang */
#define MAX_REPORTED	20	/* unexpected results printed in full */
#define E_FAULTED	250	/* pseudo errnos: touching a mapping faulted, */
#define E_SHORT		251	/* a wrong value or a short read/write, */
#define E_NONE		252	/* something that must fail succeeded */
#define NERR		256
#define BIT(e)		(1ULL << (e))
/* A call of thread @t of the race, a KTAP case; @a: the results (0, errnos) it may give. */
#define OP(t, n, a)	{ .thread = (t), .name = (n), .allowed = (a) }

static struct node {
	char label[80], name[64], path[300], media[300];
	u32 type, other;	/* other: on a mem2mem node, the other queue's type */
	bool m2m, output;
	u32 caps, nplanes, sizes[MAXP];
} N;
static const char *sub = "-";
static int seconds = 60;
static char debugfs_dir[300];

struct op {
	const char *thread, *name;
	u64 allowed;
	unsigned long counts[NERR + 1];	/* [0] successes, [e] errno e, [NERR] others */
	unsigned long bad;		/* results outside @allowed */
	char first[200];		/* the first of them */
};

static struct thread {
	const char *name;
	pthread_t tid;
	volatile unsigned long iterations;
	volatile const char *doing;
	void (*fn)(void);	/* one round of the thread's part of the race */
	sigjmp_buf jmp;
	volatile sig_atomic_t armed;
} threads[MAX_THREADS];
static unsigned int nthreads;
static volatile bool stop;
static unsigned long unexpected;
static pthread_mutex_t report_lock = PTHREAD_MUTEX_INITIALIZER;
static __thread struct thread *self;
static double t_start;

static double now(void)
{
	return vb2_now_ns() / 1e9;
}

/* The name of a result: "ok", an errno or one of the pseudo errnos. */
static const char *errname(int e)
{
	switch (e) {
	case 0: return "ok";
	case E_FAULTED: return "FAULTED";
	case E_SHORT: return "MISMATCH";
	case E_NONE: return "SUCCEEDED";
	}
	return vb2_errname(e);
}

/* Count result @e (0 or an errno) of @op; complain when it is not allowed. */
static int account(struct op *op, int e, const char *fmt, ...)
{
	char what[160] = "", msg[180];
	va_list ap;

	__atomic_fetch_add(&op->counts[e < 0 || e >= NERR ? NERR : e], 1, __ATOMIC_RELAXED);
	if (e >= 0 && e < 64 && (op->allowed & BIT(e)))
		return e;
	pthread_mutex_lock(&report_lock);
	op->bad++;
	if (++unexpected <= MAX_REPORTED) {
		if (fmt) {
			va_start(ap, fmt);
			vsnprintf(what, sizeof(what), fmt, ap);
			va_end(ap);
		}
		snprintf(msg, sizeof(msg), "%s at %.1fs%s%s", errname(e), now() - t_start,
			 fmt ? ": " : "", what);
		printf("%s: %s dev=%s thread=%s op=%s UNEXPECTED %s\n", PROG, sub, N.label,
		       self ? self->name : "main", op->name, msg);
		if (!op->first[0])
			snprintf(op->first, sizeof(op->first), "first unexpected: %s", msg);
	}
	pthread_mutex_unlock(&report_lock);
	return e;
}

/* The KTAP case NODE/SUBCOMMAND/THREAD/CALL of @op (spaces in the name made dashes). */
static void report_op(const struct op *op)
{
	unsigned long calls = 0;
	char name[160], line[600];
	size_t len;
	int e;

	for (e = 0; e <= NERR; e++)
		calls += op->counts[e];
	snprintf(name, sizeof(name), "%s/%s/%s/%s", N.label, sub, op->thread, op->name);
	for (len = strlen(name); len; len--)
		if (name[len - 1] == ' ')
			name[len - 1] = '-';
	if (!calls) {
		ksft_test_result_code(KSFT_SKIP, name, "never called");
		return;
	}
	len = snprintf(line, sizeof(line), "calls=%lu", calls);
	for (e = 0; e <= NERR && len < sizeof(line); e++)
		if (op->counts[e])
			len += snprintf(line + len, sizeof(line) - len, " %s=%lu",
					e == NERR ? "other" : errname(e), op->counts[e]);
	ksft_print_msg("%s\n", line);
	if (op->bad)
		ksft_print_msg("%lu unexpected; %s\n", op->bad, op->first);
	ksft_test_result_code(op->bad ? KSFT_FAIL : KSFT_PASS, name, NULL);
}

/* The results in KTAP: a case per call in @ops (NULL-terminated), then NODE/SUB/checks. */
static int finish(struct op *const *ops)
{
	unsigned long bad = 0;
	unsigned int i, n = 0;
	char name[160];

	while (ops[n])
		n++;
	ksft_print_header();
	ksft_set_plan(n + 1);
	ksft_print_msg("%s dev=%s\n", sub, N.label);
	for (i = 0; i < nthreads; i++)
		ksft_print_msg("thread %s: %lu iterations\n", threads[i].name,
			       threads[i].iterations);
	for (i = 0; i < n; i++) {
		report_op(ops[i]);
		bad += ops[i]->bad;
	}
	if (unexpected > bad)
		ksft_print_msg("%lu checks failed (see above)\n", unexpected - bad);
	snprintf(name, sizeof(name), "%s/%s/checks", N.label, sub);
	ksft_test_result_code(unexpected > bad ? KSFT_FAIL : KSFT_PASS, name, NULL);
	ksft_finished();
}

/* In a race's thread: about to call @doing. */
static void progress(const char *doing)
{
	self->doing = doing;
	self->iterations++;
}

/* account(@which, ...) of a call that progress() first names by @which, for the watchdog. */
#define CALL(which, ...) \
	({ struct op *op_ = (which); progress(op_->name); account(op_, __VA_ARGS__); })

static void *watchdog(void *arg)
{
	unsigned long last[MAX_THREADS] = { 0 };
	int idle[MAX_THREADS] = { 0 };
	unsigned int i;

	for (;;) {
		sleep(1);
		for (i = 0; i < nthreads; i++) {
			if (threads[i].iterations != last[i]) {
				last[i] = threads[i].iterations;
				idle[i] = 0;
			} else if (++idle[i] >= STALL) {
				printf("%s: %s dev=%s thread=%s HANG: no progress for %d s, last in %s\n",
				       PROG, sub, N.label, threads[i].name, STALL,
				       threads[i].doing ? threads[i].doing : "?");
				fflush(stdout);
				_exit(3);
			}
		}
	}
	return arg;
}

static void on_fault(int sig)
{
	if (self && self->armed)
		siglongjmp(self->jmp, sig);
	signal(sig, SIG_DFL);
	raise(sig);
}

/* Read every page of [p, p + len) in a race's thread (or with self set); false if that faults. */
static bool touch(const volatile unsigned char *p, size_t len)
{
	volatile unsigned char x = 0;
	size_t off;

	if (sigsetjmp(self->jmp, 1)) {
		self->armed = 0;
		return false;
	}
	self->armed = 1;
	for (off = 0; off < len; off += PAGE)
		x += p[off];
	if (len)
		x += p[len - 1];
	self->armed = 0;
	(void)x;
	return true;
}

static void add_thread(const char *name, void (*fn)(void))
{
	threads[nthreads].name = name;
	threads[nthreads++].fn = fn;
}

static bool time_up(void)
{
	return stop || now() - t_start >= seconds;
}

static void *thread_main(void *arg)
{
	self = arg;
	while (!time_up())
		self->fn();
	return arg;
}

/* Run the threads (thread A @a and B @b first, if given) until the time is up; join them. */
static void run_threads(void (*a)(void), void (*b)(void))
{
	pthread_t wd;
	unsigned int i;

	if (a) {
		add_thread("A", a);
		add_thread("B", b);
	}
	t_start = now();
	pthread_create(&wd, NULL, watchdog, NULL);
	for (i = 0; i < nthreads; i++)
		pthread_create(&threads[i].tid, NULL, thread_main, &threads[i]);
	for (i = 0; i < nthreads; i++)
		pthread_join(threads[i].tid, NULL);
}

static unsigned int rnd(unsigned int n)
{
	static __thread unsigned int seed;

	if (!seed)
		seed = (unsigned int)(now() * 1e6) ^ (unsigned int)(uintptr_t)&seed;
	return n ? rand_r(&seed) % n : 0;
}

/* A setup error: "vb2-race: SUB: message" on stderr; its value is @code (the exit code). */
#define fail(code, fmt, ...) \
	(fprintf(stderr, "%s: %s: " fmt "\n", PROG, sub, ##__VA_ARGS__), (code))

/* ---- V4L2 helpers: 0 or the errno ---- */

static int open_node(void)
{
	return open(N.path, O_RDWR | O_NONBLOCK | O_CLOEXEC);
}

static int reqbufs(int fd, u32 type, u32 count, u32 *got)
{
	struct v4l2_requestbuffers rb = { .count = count, .type = type,
					  .memory = V4L2_MEMORY_MMAP };
	int r = -vb2_ioctl(fd, VIDIOC_REQBUFS, &rb);

	if (!r && got)
		*got = rb.count;
	return r;
}

struct binfo {
	unsigned int np;
	u32 len[MAXP], off[MAXP];
};

static int querybuf(int fd, u32 type, u32 idx, struct binfo *bi)
{
	bool mp = V4L2_TYPE_IS_MULTIPLANAR(type);
	struct v4l2_plane pl[MAXP];
	struct v4l2_buffer b;
	unsigned int p;
	int r;

	vb2_buf_init(&b, pl, type, V4L2_MEMORY_MMAP, idx, MAXP);
	r = -vb2_ioctl(fd, VIDIOC_QUERYBUF, &b);
	if (r)
		return r;
	bi->np = mp ? b.length : 1;
	for (p = 0; p < bi->np && p < MAXP; p++) {
		bi->len[p] = mp ? pl[p].length : b.length;
		bi->off[p] = mp ? pl[p].m.mem_offset : b.m.offset;
	}
	return 0;
}

/*
 * QBUF of MMAP buffer @idx (into request @reqfd if >= 0), planes as long as in @bi (NULL:
 * the format's sizes); output planes full.
 */
static int qbuf(int fd, u32 type, u32 idx, const struct binfo *bi, int reqfd)
{
	unsigned int p, np = bi && bi->np ? bi->np : N.nplanes;
	bool out = V4L2_TYPE_IS_OUTPUT(type);
	struct v4l2_plane pl[MAXP];
	struct v4l2_buffer b;

	vb2_buf_init(&b, pl, type, V4L2_MEMORY_MMAP, idx, MAXP);
	b.field = V4L2_FIELD_NONE;
	if (V4L2_TYPE_IS_MULTIPLANAR(type)) {
		b.length = np;
		for (p = 0; p < np; p++) {
			pl[p].length = bi ? bi->len[p] : N.sizes[p];
			pl[p].bytesused = out ? pl[p].length : 0;
		}
	} else {
		b.length = bi ? bi->len[0] : N.sizes[0];
		b.bytesused = out ? b.length : 0;
	}
	if (reqfd >= 0) {
		b.flags |= V4L2_BUF_FLAG_REQUEST_FD;
		b.request_fd = reqfd;
	}
	return -vb2_ioctl(fd, VIDIOC_QBUF, &b);
}

static int dqbuf(int fd, u32 type, u32 *idx)
{
	struct v4l2_plane pl[MAXP];
	struct v4l2_buffer b;
	int r;

	vb2_buf_init(&b, pl, type, V4L2_MEMORY_MMAP, 0, MAXP);
	r = -vb2_ioctl(fd, VIDIOC_DQBUF, &b);
	if (!r)
		*idx = b.index;
	return r;
}

static int stream(int fd, u32 type, bool on)
{
	return -vb2_ioctl(fd, on ? VIDIOC_STREAMON : VIDIOC_STREAMOFF, &type);
}

/* EXPBUF of plane @p of buffer @i, the dma-buf mapped with @prot into *@map. */
static int export_map(int fd, u32 i, u32 p, size_t len, int prot, int *dfd, unsigned char **map)
{
	struct v4l2_exportbuffer eb = { .type = N.type, .index = i, .plane = p,
					.flags = O_RDWR | O_CLOEXEC };
	int r = -vb2_ioctl(fd, VIDIOC_EXPBUF, &eb);

	*dfd = -1;
	if (r)
		return r;
	*map = mmap(NULL, len, prot, MAP_SHARED, eb.fd, 0);
	if (*map == MAP_FAILED) {
		r = errno;
		close(eb.fd);
		return r;
	}
	*dfd = eb.fd;
	return 0;
}

/* A buffer of dmabuf-cpu-access or hold, mapped from the node and/or through dma-bufs. */
struct mbuf {
	struct binfo bi;
	unsigned char *map[MAXP];	/* from the video node, or NULL */
	unsigned char *dmap[MAXP];	/* from the plane's dma-buf, if dfd >= 0 */
	int dfd[MAXP];
	u32 value;			/* dmabuf-cpu-access: the byte A filled it with */
};

/*
 * Up to NBUFS MMAP buffers on a new file *@fd, into @b: each plane mapped from the node
 * if @map_node, and exported and mapped with @dprot (if that fails: an error when
 * @must_export, else no dma-buf). Their count, or 0 after the error message.
 */
static u32 map_bufs(int *fd, struct mbuf *b, bool map_node, int dprot, bool must_export)
{
	u32 i, p, n = 0;
	int r;

	*fd = open_node();
	if (*fd < 0 || reqbufs(*fd, N.type, NBUFS, &n) || !n)
		return fail(0, "setup failed: %s", strerror(errno));
	n = n > NBUFS ? NBUFS : n;
	for (i = 0; i < n; i++) {
		if (querybuf(*fd, N.type, i, &b[i].bi))
			return 0;
		for (p = 0; p < b[i].bi.np; p++) {
			if (map_node) {
				b[i].map[p] = mmap(NULL, b[i].bi.len[p], PROT_READ | PROT_WRITE,
						   MAP_SHARED, *fd, b[i].bi.off[p]);
				if (b[i].map[p] == MAP_FAILED)
					return fail(0, "mmap: %s", strerror(errno));
			}
			r = export_map(*fd, i, p, b[i].bi.len[p], dprot, &b[i].dfd[p],
				       &b[i].dmap[p]);
			if (r && must_export)
				return fail(0, "EXPBUF and mmap %u/%u: %s", i, p, errname(r));
		}
	}
	return n;
}

static void unmap_bufs(struct mbuf *b, u32 n)
{
	u32 i, p;

	for (i = 0; i < n; i++)
		for (p = 0; p < b[i].bi.np; p++) {
			if (b[i].map[p])
				munmap(b[i].map[p], b[i].bi.len[p]);
			if (b[i].dfd[p] >= 0) {
				munmap(b[i].dmap[p], b[i].bi.len[p]);
				close(b[i].dfd[p]);
			}
		}
}

/* DMA_BUF_IOCTL_SYNC of dma-buf @dfd, counted in @op. */
static void dma_sync(struct op *op, int dfd, u64 flags)
{
	struct dma_buf_sync s = { .flags = flags };

	account(op, -vb2_ioctl(dfd, DMA_BUF_IOCTL_SYNC, &s), NULL);
}

/* mem2mem: buffers queued on the other queue, streaming, so that jobs can run. */
static int m2m_feed(int fd)
{
	u32 n, i;
	int r = reqbufs(fd, N.other, NBUFS, &n);

	for (i = 0; !r && i < n; i++) {
		struct binfo bi;

		r = querybuf(fd, N.other, i, &bi);
		if (!r)
			r = qbuf(fd, N.other, i, &bi, -1);
	}
	return r ? r : stream(fd, N.other, true);
}

static int setup_node(const char *spec)
{
	struct v4l2_capability cap;
	struct v4l2_format f = { 0 };
	struct v4l2_requestbuffers rb = { 0 };
	const char *colon = strrchr(spec, ':');
	bool want_cap = false;
	u32 caps, p;
	int fd;

	snprintf(N.name, sizeof(N.name), "%s", spec);
	snprintf(N.label, sizeof(N.label), "%s", spec);
	if (colon && (!strcmp(colon, ":out") || !strcmp(colon, ":cap"))) {
		N.name[colon - spec] = 0;
		want_cap = !strcmp(colon, ":cap");
	}
	if (vb2_find_node(N.name, N.path, sizeof(N.path), NULL, 0)) {
		fprintf(stderr, "%s: no video node named '%s'\n", PROG, N.name);
		return -1;
	}
	fd = open_node();
	if (fd < 0 || vb2_ioctl(fd, VIDIOC_QUERYCAP, &cap)) {
		fprintf(stderr, "%s: %s: %s\n", PROG, N.path, strerror(errno));
		return -1;
	}
	caps = (cap.capabilities & V4L2_CAP_DEVICE_CAPS) ? cap.device_caps : cap.capabilities;
	if (caps & (V4L2_CAP_VIDEO_M2M | V4L2_CAP_VIDEO_M2M_MPLANE)) {
		bool mp = caps & V4L2_CAP_VIDEO_M2M_MPLANE;
		u32 t[2] = { mp ? V4L2_BUF_TYPE_VIDEO_OUTPUT_MPLANE : V4L2_BUF_TYPE_VIDEO_OUTPUT,
			     mp ? V4L2_BUF_TYPE_VIDEO_CAPTURE_MPLANE : V4L2_BUF_TYPE_VIDEO_CAPTURE };

		N.m2m = true;
		N.type = t[want_cap];
		N.other = t[!want_cap];
	} else if (caps & V4L2_CAP_VIDEO_CAPTURE_MPLANE) {
		N.type = V4L2_BUF_TYPE_VIDEO_CAPTURE_MPLANE;
	} else if (caps & V4L2_CAP_VIDEO_CAPTURE) {
		N.type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
	} else if (caps & V4L2_CAP_VIDEO_OUTPUT_MPLANE) {
		N.type = V4L2_BUF_TYPE_VIDEO_OUTPUT_MPLANE;
	} else if (caps & V4L2_CAP_VIDEO_OUTPUT) {
		N.type = V4L2_BUF_TYPE_VIDEO_OUTPUT;
	} else {
		fprintf(stderr, "%s: %s: not a video capture, output or mem2mem node\n", PROG,
			N.name);
		return -1;
	}
	N.output = V4L2_TYPE_IS_OUTPUT(N.type);
	f.type = N.type;
	if (vb2_ioctl(fd, VIDIOC_G_FMT, &f)) {
		fprintf(stderr, "%s: %s: G_FMT failed\n", PROG, N.label);
		return -1;
	}
	N.nplanes = V4L2_TYPE_IS_MULTIPLANAR(N.type) ? f.fmt.pix_mp.num_planes : 1;
	for (p = 0; p < N.nplanes && p < MAXP; p++)
		N.sizes[p] = V4L2_TYPE_IS_MULTIPLANAR(N.type) ?
			     f.fmt.pix_mp.plane_fmt[p].sizeimage : f.fmt.pix.sizeimage;
	rb.type = N.type;
	rb.memory = V4L2_MEMORY_MMAP;
	if (!vb2_ioctl(fd, VIDIOC_REQBUFS, &rb))
		N.caps = rb.capabilities;
	close(fd);
	vb2_find_media(NULL, (const char *)cap.bus_info, N.media, sizeof(N.media));
	printf("%s: %s dev=%s %s media=%s type=%u planes=%u size0=%u caps=%#x\n", PROG, sub,
	       N.label, N.path, N.media[0] ? N.media : "-", N.type, N.nplanes, N.sizes[0], N.caps);
	return 0;
}

/* ---- reinit-vs-reqbufs ---- */

#define NREQ	4
#define RB_MAX	6

static int rr_fd, rr_mfd;
static struct v4l2_format rr_fmt;
static int rr_req[NREQ] = { -1, -1, -1, -1 };	/* A's requests, */
static bool rr_bound[NREQ];			/* and whether a buffer is in each */
static struct op rr_alloc = OP("A", "REQUEST_ALLOC", BIT(0));
static struct op rr_qbuf = OP("A", "QBUF(request)", BIT(0) | BIT(EINVAL) | BIT(EBUSY));
static struct op rr_reinit = OP("A", "REQUEST_REINIT", BIT(0) | BIT(EBUSY));
static struct op rr_queue = OP("A", "REQUEST_QUEUE", BIT(0) | BIT(ENOENT) | BIT(EINVAL) |
			       BIT(EBUSY));
static struct op rr_close = OP("A", "close(request)", BIT(0));
static struct op rr_reqbufs0 = OP("B", "REQBUFS(0)", BIT(0));
static struct op rr_reqbufsn = OP("B", "REQBUFS(n)", BIT(0));
/* EBUSY: the buffer is in a request; EINVAL: no buffer at that index. */
static struct op rr_remove = OP("B", "REMOVE_BUFS", BIT(0) | BIT(EBUSY) | BIT(EINVAL));
static struct op rr_create = OP("B", "CREATE_BUFS", BIT(0));
/* The last two only where the queue has REMOVE_BUFS. */
static struct op *rr_ops[] = { &rr_alloc, &rr_qbuf, &rr_reinit, &rr_queue, &rr_close,
			       &rr_reqbufs0, &rr_reqbufsn, &rr_remove, &rr_create, NULL };

/*
 * One buffer per request: with two buffers of a queue in one queued request, cancelling
 * them makes v4l2_ctrl_request_complete() WARN (upstream too; vb2-misuse case
 * req-two-bufs-queued-free reproduces it), which is not what this race is about.
 */
static void rr_binder(void)
{
	unsigned int s = rnd(NREQ), what = rnd(10);
	int r;

	progress("REQUEST_ALLOC");
	if (rr_req[s] < 0) {
		r = vb2_request_alloc(rr_mfd);
		if (account(&rr_alloc, r < 0 ? -r : 0, NULL))
			return;
		rr_req[s] = r;
	}
	if (!rr_bound[s])
		rr_bound[s] = !CALL(&rr_qbuf, qbuf(rr_fd, N.type, rnd(RB_MAX), NULL, rr_req[s]),
				    NULL);
	if (what < 4) {
		if (!CALL(&rr_reinit, -vb2_request_reinit(rr_req[s]), NULL))
			rr_bound[s] = false;
	} else if (what < 8) {
		CALL(&rr_close, close(rr_req[s]) ? errno : 0, NULL);
		rr_req[s] = -1;
		rr_bound[s] = false;
	} else if (what < 9) {
		CALL(&rr_queue, -vb2_request_queue(rr_req[s]), NULL);
	}
}

/* One buffer away and, if it went, one back: the others stay in their requests. */
static void rr_remove_create(void)
{
	struct v4l2_remove_buffers rm = { .index = rnd(RB_MAX), .count = 1, .type = N.type };
	struct v4l2_create_buffers cb = { .count = 1, .memory = V4L2_MEMORY_MMAP,
					  .format = rr_fmt };

	if (!CALL(&rr_remove, -vb2_ioctl(rr_fd, VIDIOC_REMOVE_BUFS, &rm), NULL))
		CALL(&rr_create, -vb2_ioctl(rr_fd, VIDIOC_CREATE_BUFS, &cb), NULL);
}

static void rr_reallocator(void)
{
	if ((N.caps & V4L2_BUF_CAP_SUPPORTS_REMOVE_BUFS) && rnd(2)) {
		rr_remove_create();
		usleep(rnd(1000));
		return;
	}
	CALL(&rr_reqbufs0, reqbufs(rr_fd, N.type, 0, NULL), NULL);
	if (rnd(4))
		usleep(rnd(2000));
	CALL(&rr_reqbufsn, reqbufs(rr_fd, N.type, 1 + rnd(RB_MAX), NULL), NULL);
	usleep(rnd(3000));
}

static int run_reinit_vs_reqbufs(void)
{
	unsigned int i;

	if (!(N.caps & V4L2_BUF_CAP_SUPPORTS_REQUESTS) || !N.media[0])
		return fail(2, "%s does not support requests", N.label);
	rr_fd = open_node();
	rr_mfd = open(N.media, O_RDWR | O_CLOEXEC);
	rr_fmt.type = N.type;
	if (rr_fd < 0 || rr_mfd < 0 || reqbufs(rr_fd, N.type, NBUFS, NULL) ||
	    vb2_ioctl(rr_fd, VIDIOC_G_FMT, &rr_fmt))
		return fail(1, "setup failed: %s", strerror(errno));
	run_threads(rr_binder, rr_reallocator);
	for (i = 0; i < NREQ; i++)
		if (rr_req[i] >= 0)
			close(rr_req[i]);
	/*
	 * Free the buffers before the close: one may be in a queued request, and visl's
	 * release frees its control handler before its queues, so cancelling that request
	 * locks a destroyed mutex (6.12 with either videobuf2; misuse.plan too).
	 */
	reqbufs(rr_fd, N.type, 0, NULL);
	close(rr_fd);
	close(rr_mfd);
	if (!(N.caps & V4L2_BUF_CAP_SUPPORTS_REMOVE_BUFS))
		rr_ops[7] = NULL;
	return finish(rr_ops);
}

/* ---- close-vs-request-queue ---- */

static int cq_fd;		/* a stable descriptor number; B swaps the file behind it */
static int cq_mfd, cq_null;	/* cq_null: /dev/null, for B to close cq_fd with */

/* From A's view the file behind cq_fd may be /dev/null (ENOTTY) or one without buffers. */
static struct op cq_alloc = OP("A", "REQUEST_ALLOC", BIT(0));
static struct op cq_qbuf = OP("A", "QBUF(request)", BIT(0) | BIT(EINVAL) | BIT(ENOTTY) |
			      BIT(EBUSY));
static struct op cq_queue = OP("A", "REQUEST_QUEUE", BIT(0) | BIT(ENOENT) | BIT(EBUSY) |
			       BIT(EINVAL));
static struct op cq_dqbuf = OP("A", "DQBUF", BIT(0) | BIT(EAGAIN) | BIT(EINVAL) |
			       BIT(ENOTTY) | BIT(EPIPE));
static struct op cq_reqpoll = OP("A", "poll(request)", BIT(0));
static struct op cq_close = OP("B", "close(video)", BIT(0));
static struct op cq_open = OP("B", "open+REQBUFS+STREAMON", BIT(0));
static struct op *const cq_ops[] = { &cq_alloc, &cq_qbuf, &cq_queue, &cq_reqpoll,
				     &cq_dqbuf, &cq_close, &cq_open, NULL };

static void cq_queuer(void)
{
	int req, r;
	u32 idx;

	progress("REQUEST_ALLOC");
	req = vb2_request_alloc(cq_mfd);
	if (account(&cq_alloc, req < 0 ? -req : 0, NULL))
		return;
	r = CALL(&cq_qbuf, qbuf(cq_fd, N.type, rnd(NBUFS), NULL, req), NULL);
	if (!r)
		r = CALL(&cq_queue, -vb2_request_queue(req), NULL);
	if (!r && rnd(2)) {
		struct pollfd p = { .fd = req, .events = POLLPRI };

		CALL(&cq_reqpoll, poll(&p, 1, 20) < 0 ? errno : 0, NULL);
	}
	progress("DQBUF");
	while (!account(&cq_dqbuf, dqbuf(cq_fd, N.type, &idx), NULL))
		;
	close(req);
}

static void cq_closer(void)
{
	int nf, r;

	usleep(rnd(20000));
	/* Close the owner: /dev/null takes its number, so it cannot be reused. */
	CALL(&cq_close, dup2(cq_null, cq_fd) < 0 ? errno : 0, NULL);
	progress("open+REQBUFS+STREAMON");
	nf = open_node();
	r = nf < 0 ? errno : reqbufs(nf, N.type, NBUFS, NULL);
	/*
	 * A's ioctl in progress on the old file keeps it, and the queue's ownership with it,
	 * until it returns. Ownership that never goes is the bug: give up after a second.
	 */
	for (int i = 0; r == EBUSY && i < 100; i++) {
		usleep(10000);
		r = reqbufs(nf, N.type, NBUFS, NULL);
	}
	if (!r)
		r = stream(nf, N.type, true);
	if (!r && N.m2m)
		r = m2m_feed(nf);
	account(&cq_open, r, NULL);
	if (nf >= 0) {
		dup2(nf, cq_fd);
		close(nf);
	}
}

static int run_close_vs_request_queue(void)
{
	if (!(N.caps & V4L2_BUF_CAP_SUPPORTS_REQUESTS) || !N.media[0])
		return fail(2, "%s does not support requests", N.label);
	cq_mfd = open(N.media, O_RDWR | O_CLOEXEC);
	cq_null = open("/dev/null", O_RDWR | O_CLOEXEC);
	cq_fd = open_node();
	if (cq_fd < 0 || cq_mfd < 0 || reqbufs(cq_fd, N.type, NBUFS, NULL) ||
	    stream(cq_fd, N.type, true))
		return fail(1, "setup failed: %s", strerror(errno));
	if (N.m2m && m2m_feed(cq_fd))
		return fail(1, "setup of the other queue failed");
	run_threads(cq_queuer, cq_closer);
	close(cq_fd);
	close(cq_mfd);
	close(cq_null);
	return finish(cq_ops);
}

/* ---- fileio-vs-bufs ---- */

static volatile int fb_fd1 = -1;	/* A's file */
static int fb_fd2;			/* B's */
static struct v4l2_format fb_fmt;
static unsigned char *fb_buf;		/* A's data */
static unsigned int fb_left;		/* A's rounds until it reopens its file */
static volatile unsigned long fb_gen;	/* A's file generation */
static volatile int fb_active;		/* file I/O known active on A's current file */

static struct op fb_io = OP("A", "read/write", BIT(0) | BIT(EAGAIN) | BIT(EBUSY));
static struct op fb_reopen = OP("A", "reopen", BIT(0));
static struct op fb_create = OP("B", "CREATE_BUFS", BIT(0) | BIT(EBUSY));
static struct op fb_remove = OP("B", "REMOVE_BUFS", BIT(0) | BIT(EBUSY) | BIT(EINVAL));
static struct op fb_reqbufs = OP("B", "REQBUFS(n)", BIT(0) | BIT(EBUSY));
static struct op fb_reqbufs0 = OP("B", "REQBUFS(0)", BIT(0) | BIT(EBUSY));
static struct op *const fb_ops[] = { &fb_io, &fb_reopen, &fb_create, &fb_remove,
				     &fb_reqbufs, &fb_reqbufs0, NULL };

static void fb_io_thread(void)
{
	size_t len = N.sizes[0];
	ssize_t n;
	int e;

	if (!fb_left--) {
		/* Close the file: its file I/O ends (and B may get the queue). */
		progress("reopen");
		fb_active = 0;
		__atomic_fetch_add(&fb_gen, 1, __ATOMIC_SEQ_CST);
		close(fb_fd1);
		fb_fd1 = open_node();
		account(&fb_reopen, fb_fd1 < 0 ? errno : 0, NULL);
		fb_left = 1 + rnd(20);
		if (fb_fd1 < 0) {
			stop = true;	/* A cannot go on */
			return;
		}
	}
	progress(N.output ? "write" : "read");
	vb2_poll(fb_fd1, N.output ? POLLOUT : POLLIN, 50);
	n = N.output ? write(fb_fd1, fb_buf, len) : read(fb_fd1, fb_buf, len);
	e = account(&fb_io, n < 0 ? errno : 0, NULL);
	/* Data moved, or a non-blocking "not yet": the emulation runs on this file. */
	if (!e || e == EAGAIN)
		fb_active = 1;
}

static void fb_bufs_thread(void)
{
	struct v4l2_create_buffers cb = { .count = 1, .memory = V4L2_MEMORY_MMAP,
					  .format = fb_fmt };
	struct v4l2_remove_buffers rm = { .index = 0, .count = 1, .type = N.type };
	unsigned long g0 = fb_gen;
	int a0 = fb_active, r;
	struct op *op = fb_ops[2 + rnd(4)];	/* one of B's */

	progress(op->name);
	if (op == &fb_create)
		r = -vb2_ioctl(fb_fd2, VIDIOC_CREATE_BUFS, &cb);
	else if (op == &fb_remove)
		r = -vb2_ioctl(fb_fd2, VIDIOC_REMOVE_BUFS, &rm);
	else
		r = reqbufs(fb_fd2, N.type, op == &fb_reqbufs ? 2 : 0, NULL);
	/* Success while A's file I/O was active throughout is unexpected. */
	if (!r && a0 && g0 == fb_gen)
		account(op, E_NONE, "succeeded while file I/O was active on another file");
	else
		account(op, r, NULL);
	/* Give the queue back now and then, so that A gets to read or write. */
	if (!rnd(3))
		reqbufs(fb_fd2, N.type, 0, NULL);
	usleep(rnd(2000));
}

static int run_fileio_vs_bufs(void)
{
	if (N.m2m || N.nplanes != 1)
		return fail(2, "%s has no file I/O (mem2mem or several planes)", N.label);
	fb_fd1 = open_node();
	if (fb_fd1 < 0)
		return fail(1, "open: %s", strerror(errno));
	fb_fd2 = open_node();
	fb_fmt.type = N.type;
	vb2_ioctl(fb_fd2, VIDIOC_G_FMT, &fb_fmt);
	fb_buf = malloc(N.sizes[0]);
	memset(fb_buf, 0x40, N.sizes[0]);
	fb_left = 1 + rnd(20);
	run_threads(fb_io_thread, fb_bufs_thread);
	if (fb_fd1 >= 0)
		close(fb_fd1);
	close(fb_fd2);
	free(fb_buf);
	return finish(fb_ops);
}

/* ---- sg-mmap-mremap ---- */

static int sm_fd;
static void *sm_spare;		/* an address range for moving mappings to */
static size_t sm_spare_len;

static struct op sm_query = OP("A", "QUERYBUF", BIT(0) | BIT(EINVAL));
static struct op sm_mmap = OP("A", "mmap", BIT(0) | BIT(EINVAL));
static struct op sm_grow = OP("A", "mremap(larger)", BIT(EFAULT));
static struct op sm_shrink = OP("A", "mremap(smaller)", BIT(0));
static struct op sm_move = OP("A", "mremap(move)", BIT(0));
static struct op sm_touch = OP("A", "read mapping", BIT(0));
static struct op sm_munmap = OP("A", "munmap", BIT(0));
static struct op sm_reqbufs0 = OP("B", "REQBUFS(0)", BIT(0));
static struct op sm_reqbufsn = OP("B", "REQBUFS(n)", BIT(0));
static struct op *const sm_ops[] = { &sm_query, &sm_mmap, &sm_grow, &sm_shrink, &sm_move,
				     &sm_touch, &sm_munmap, &sm_reqbufs0, &sm_reqbufsn, NULL };

/* mremap() to a larger size: must fail. The errno if it did, else E_NONE (undone). */
static int sm_try_grow(unsigned char *p, size_t len)
{
	void *q = mremap(p, len, len + PAGE, MREMAP_MAYMOVE);

	if (q == MAP_FAILED)
		return errno;
	munmap(q, len + PAGE);
	return E_NONE;
}

/* A new spare range (the old one is taken by a moved mapping). */
static void sm_new_spare(void)
{
	sm_spare = mmap(NULL, sm_spare_len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (sm_spare == MAP_FAILED)
		sm_spare_len = 0;
}

static void sm_mapper(void)
{
	struct binfo bi;
	unsigned char *p;
	size_t len;
	void *q;

	if (CALL(&sm_query, querybuf(sm_fd, N.type, rnd(NBUFS), &bi), NULL))
		return;
	len = PAGE_ALIGN(bi.len[0]);
	progress("mmap");
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, sm_fd, bi.off[0]);
	if (account(&sm_mmap, p == MAP_FAILED ? errno : 0, NULL))
		return;
	if (CALL(&sm_grow, sm_try_grow(p, len), "len %zu", len) == E_NONE)
		return;	/* gone with the larger mapping */
	if (len > PAGE && rnd(2)) {
		progress("mremap(smaller)");
		q = mremap(p, len, len - PAGE, 0);
		if (!account(&sm_shrink, q == MAP_FAILED ? errno : 0, NULL))
			len -= PAGE;
	}
	if (rnd(2) && len <= sm_spare_len) {
		progress("mremap(move)");
		q = mremap(p, len, len, MREMAP_MAYMOVE | MREMAP_FIXED, sm_spare);
		if (!account(&sm_move, q == MAP_FAILED ? errno : 0, NULL)) {
			p = q;
			sm_new_spare();
		}
	}
	CALL(&sm_touch, touch(p, len) ? 0 : E_FAULTED, "a mapping of %zu bytes", len);
	CALL(&sm_munmap, munmap(p, len) ? errno : 0, NULL);
}

static void sm_reallocator(void)
{
	CALL(&sm_reqbufs0, reqbufs(sm_fd, N.type, 0, NULL), NULL);
	usleep(rnd(1000));
	CALL(&sm_reqbufsn, reqbufs(sm_fd, N.type, 1 + rnd(NBUFS), NULL), NULL);
	usleep(rnd(5000));
}

static int run_sg_mmap_mremap(void)
{
	struct binfo bi;
	unsigned char *p;
	size_t len;
	int r;

	sm_fd = open_node();
	if (sm_fd < 0 || reqbufs(sm_fd, N.type, NBUFS, NULL) || querybuf(sm_fd, N.type, 0, &bi))
		return fail(1, "setup failed: %s", strerror(errno));
	/* First on its own: growing a buffer mapping must fail. */
	len = PAGE_ALIGN(bi.len[0]);
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, sm_fd, bi.off[0]);
	if (p == MAP_FAILED)
		return fail(1, "mmap: %s", strerror(errno));
	r = sm_try_grow(p, len);
	printf("%s: %s dev=%s mremap of a %zu-byte buffer mapping to %zu bytes: %s (%s)\n",
	       PROG, sub, N.label, len, len + PAGE, r == E_NONE ? "succeeded" : errname(r),
	       r == EFAULT ? "refused, as VM_DONTEXPAND wants" : "UNEXPECTED");
	if (r != EFAULT)
		unexpected++;
	if (r != E_NONE)
		munmap(p, len);
	sm_spare_len = len;
	sm_new_spare();
	run_threads(sm_mapper, sm_reallocator);
	close(sm_fd);
	return finish(sm_ops);
}

/* ---- dmabuf-cpu-access ---- */

static struct mbuf dc_bufs[NBUFS];
static int dc_fd;
static u32 dc_count;
static pthread_mutex_t dc_lock = PTHREAD_MUTEX_INITIALIZER;
/* Buffer states: 0 free (A fills it), 1 filled (B queues it), 2 with the device. */
static int dc_state[NBUFS];
static unsigned long dc_checked;

static struct op dc_sync_w = OP("A", "SYNC(write)", BIT(0));
static struct op dc_verify = OP("A", "read back", BIT(0));
static struct op dc_sync_r = OP("A", "SYNC(read in flight)", BIT(0));
static struct op dc_qbuf = OP("B", "QBUF", BIT(0));
static struct op dc_dqbuf = OP("B", "DQBUF", BIT(0) | BIT(EAGAIN));
static struct op dc_sum = OP("B", "out_checksum", BIT(0));
static struct op *const dc_ops[] = { &dc_sync_w, &dc_verify, &dc_sync_r, &dc_qbuf,
				     &dc_dqbuf, &dc_sum, NULL };

/* The first buffer in state @from (the last one if @last), then in state @to; or -1. */
static int dc_take(int from, bool last, int to)
{
	unsigned int i;
	int k = -1;

	pthread_mutex_lock(&dc_lock);
	for (i = 0; i < dc_count && (last || k < 0); i++)
		if (dc_state[i] == from)
			k = i;
	if (k >= 0 && to >= 0)
		dc_state[k] = to;
	pthread_mutex_unlock(&dc_lock);
	return k;
}

static void dc_set(int k, int state)
{
	pthread_mutex_lock(&dc_lock);
	dc_state[k] = state;
	pthread_mutex_unlock(&dc_lock);
}

/* A fills free buffers through their dma-bufs; B queues every plane full. */
static void dc_filler(void)
{
	int fl = dc_take(2, true, -1), k = dc_take(0, false, -1);
	static u32 value = 1;	/* the last fill */
	struct mbuf *b;
	unsigned int p;

	/* CPU reads of a buffer the device is reading: legal, the data is ours. */
	if (fl >= 0) {
		b = &dc_bufs[fl];
		progress("SYNC(read in flight)");
		for (p = 0; p < b->bi.np; p++) {
			dma_sync(&dc_sync_r, b->dfd[p], DMA_BUF_SYNC_START | DMA_BUF_SYNC_READ);
			touch(b->dmap[p], b->bi.len[p]);
			dma_sync(&dc_sync_r, b->dfd[p], DMA_BUF_SYNC_END | DMA_BUF_SYNC_READ);
		}
	}
	if (k < 0) {
		progress("waiting");
		usleep(1000);
		return;
	}
	b = &dc_bufs[k];
	value = value % 251 + 1;
	b->value = value;
	progress("SYNC(write)");
	for (p = 0; p < b->bi.np; p++) {
		bool ok = true;
		u32 j;

		dma_sync(&dc_sync_w, b->dfd[p], DMA_BUF_SYNC_START | DMA_BUF_SYNC_RW);
		memset(b->dmap[p], value, b->bi.len[p]);
		for (j = 0; j < b->bi.len[p]; j += 997)
			ok &= b->dmap[p][j] == value;
		dma_sync(&dc_sync_w, b->dfd[p], DMA_BUF_SYNC_END | DMA_BUF_SYNC_RW);
		account(&dc_verify, ok ? 0 : E_SHORT, "buffer %d plane %u", k, p);
	}
	dc_set(k, 1);
}

static int read_checksum(u32 *sum)
{
	char path[400], line[64];
	int r;

	snprintf(path, sizeof(path), "%s/out_checksum", debugfs_dir);
	r = vb2_read_line(path, line, sizeof(line));
	if (!r)
		*sum = strtoul(line, NULL, 0);
	return -r;
}

static void dc_streamer(void)
{
	int k = dc_take(1, true, 2), r;
	u32 idx = 0, sum = 0, want = 0;
	struct mbuf *b;
	unsigned int p;
	double t0;

	if (k < 0) {
		progress("waiting");
		usleep(1000);
		return;
	}
	b = &dc_bufs[k];
	if (CALL(&dc_qbuf, qbuf(dc_fd, N.type, k, &b->bi, -1), "buffer %d", k)) {
		dc_set(k, 0);
		return;
	}
	/* One buffer with the device at a time: the checksum is then this one's. */
	t0 = now();
	do {
		progress("DQBUF");
		vb2_poll(dc_fd, POLLOUT, 100);
		r = account(&dc_dqbuf, dqbuf(dc_fd, N.type, &idx), NULL);
	} while (r == EAGAIN && now() - t0 < 10);
	if (r) {
		account(&dc_dqbuf, E_SHORT, "buffer %d not done after 10 s", k);
		stop = true;
		return;
	}
	for (p = 0; p < b->bi.np; p++)
		want += (u32)b->value * b->bi.len[p];
	progress("out_checksum");
	r = read_checksum(&sum);
	if (!r && (idx != (u32)k || sum != want))
		account(&dc_sum, E_SHORT, "buffer %d (dequeued %u): checksum %#x, the dma-buf "
			"was filled with %u: want %#x", k, idx, sum, b->value, want);
	else
		account(&dc_sum, r, NULL);
	dc_checked++;
	dc_set(k, 0);
}

static int run_dmabuf_cpu_access(void)
{
	int inst, r;
	u32 sum;

	if (!N.output || N.m2m)
		return fail(2, "needs an output node");
	if (!debugfs_dir[0]) {
		if (sscanf(N.name, "vb2-testdrv-%d-out", &inst) != 1)
			return fail(2, "give --debugfs DIR for %s", N.name);
		snprintf(debugfs_dir, sizeof(debugfs_dir), "/sys/kernel/debug/vb2-testdrv/%d",
			 inst);
	}
	if (read_checksum(&sum))
		return fail(2, "no %s/out_checksum", debugfs_dir);
	dc_count = map_bufs(&dc_fd, dc_bufs, false, PROT_READ | PROT_WRITE, true);
	if (!dc_count)
		return 1;
	r = stream(dc_fd, N.type, true);
	if (r)
		return fail(1, "STREAMON: %s", errname(r));
	run_threads(dc_filler, dc_streamer);
	stream(dc_fd, N.type, false);
	unmap_bufs(dc_bufs, dc_count);
	close(dc_fd);
	printf("%s: %s dev=%s buffers checked through out_checksum: %lu\n", PROG, sub, N.label,
	       dc_checked);
	if (!dc_checked)
		unexpected++;
	return finish(dc_ops);
}

/* ---- hold ---- */

static int h_fd;
static u32 h_count;
static struct mbuf h_bufs[NBUFS];
static volatile bool h_gone;
static double h_gone_at;

/* While streaming: the usual; once the driver is gone: ENODEV (or EINVAL/EIO/EPIPE). */
static struct op h_poll = OP("*", "poll", BIT(0));
static struct op h_dqbuf = OP("*", "DQBUF", BIT(0) | BIT(EAGAIN) | BIT(EINVAL) |
			      BIT(ENODEV) | BIT(EIO) | BIT(EPIPE));
static struct op h_qbuf = OP("*", "QBUF", BIT(0) | BIT(EINVAL) | BIT(ENODEV) | BIT(EIO) |
			     BIT(EBUSY));
static struct op h_query = OP("T", "QUERYBUF", BIT(0) | BIT(ENODEV) | BIT(EINVAL));
static struct op h_touch = OP("T", "read mappings", BIT(0));
static struct op h_sync = OP("T", "SYNC", BIT(0));
static struct op h_after = OP("main", "after the unbind", BIT(0));
static struct op *const h_ops[] = { &h_poll, &h_dqbuf, &h_qbuf, &h_query, &h_touch, &h_sync,
				    &h_after, NULL };

/* The first ENODEV: the driver is gone, the threads stop. */
static int h_mark_gone(int e)
{
	if (e == ENODEV && !h_gone) {
		h_gone = true;
		h_gone_at = now() - t_start;
		stop = true;
	}
	return e;
}

static void h_streamer(void)
{
	u32 idx;

	progress("poll");
	vb2_poll(h_fd, N.output ? POLLOUT : POLLIN, 200);
	account(&h_poll, 0, NULL);
	if (h_mark_gone(CALL(&h_dqbuf, dqbuf(h_fd, N.type, &idx), NULL)) || idx >= h_count)
		return;
	h_mark_gone(CALL(&h_qbuf, qbuf(h_fd, N.type, idx, &h_bufs[idx].bi, -1), NULL));
}

/* Read the mapping of plane @p of buffer @i and its dma-buf's (if exported) into @op. */
static void h_touch_buf(struct op *op, struct op *sync, u32 i, u32 p, const char *when)
{
	struct mbuf *b = &h_bufs[i];

	account(op, touch(b->map[p], b->bi.len[p]) ? 0 : E_FAULTED,
		"mapping of buffer %u plane %u%s", i, p, when);
	if (b->dfd[p] < 0)
		return;
	if (sync)
		dma_sync(sync, b->dfd[p], DMA_BUF_SYNC_START | DMA_BUF_SYNC_READ);
	account(op, touch(b->dmap[p], b->bi.len[p]) ? 0 : E_FAULTED,
		"dma-buf of buffer %u plane %u%s", i, p, when);
	if (sync)
		dma_sync(sync, b->dfd[p], DMA_BUF_SYNC_END | DMA_BUF_SYNC_READ);
}

static void h_toucher(void)
{
	u32 i = rnd(h_count);
	struct binfo bi;
	unsigned int p;

	h_mark_gone(CALL(&h_query, querybuf(h_fd, N.type, i, &bi), NULL));
	for (p = 0; p < h_bufs[i].bi.np; p++) {
		progress("read mappings");
		h_touch_buf(&h_touch, &h_sync, i, p, "");
	}
	usleep(5000);
}

static int run_hold(void)
{
	unsigned int i, p;
	int r;

	/* Not every buffer may export: then no dma-buf. */
	h_count = map_bufs(&h_fd, h_bufs, true, PROT_READ, false);
	if (!h_count)
		return 1;
	for (i = 0; i < h_count; i++) {
		r = qbuf(h_fd, N.type, i, &h_bufs[i].bi, -1);
		if (r)
			return fail(1, "QBUF: %s", errname(r));
	}
	r = stream(h_fd, N.type, true);
	if (!r && N.m2m)
		r = m2m_feed(h_fd);
	if (r)
		return fail(1, "STREAMON: %s", errname(r));
	printf("%s: hold dev=%s: streaming, %u buffers mapped and exported\n", PROG, N.label,
	       h_count);
	fflush(stdout);
	add_thread("A", h_streamer);
	add_thread("B", h_streamer);
	add_thread("C", h_streamer);
	add_thread("T", h_toucher);
	run_threads(NULL, NULL);
	if (!h_gone) {
		printf("%s: hold dev=%s: no ENODEV within %d s\n", PROG, N.label, seconds);
		unexpected++;
	} else {
		printf("%s: hold dev=%s: ENODEV after %.1f s\n", PROG, N.label, h_gone_at);
	}
	/* The node is gone; the memory stays until it is unmapped and the fds are closed. */
	self = &threads[0];
	for (i = 0; i < h_count; i++)
		for (p = 0; p < h_bufs[i].bi.np; p++)
			h_touch_buf(&h_after, NULL, i, p, " after the unbind");
	r = stream(h_fd, N.type, false);
	printf("%s: hold dev=%s: STREAMOFF after the unbind: %s\n", PROG, N.label, errname(r));
	unmap_bufs(h_bufs, h_count);
	account(&h_after, close(h_fd) ? errno : 0, "close of the video file");
	return finish(h_ops);
}

static void usage(void)
{
	fprintf(stderr, "usage: %s reinit-vs-reqbufs|close-vs-request-queue|fileio-vs-bufs|"
		"sg-mmap-mremap|dmabuf-cpu-access|hold --dev NAME[:out|:cap] [--seconds N] "
		"[--debugfs DIR]\n", PROG);
	exit(2);
}

int main(int argc, char **argv)
{
	static const struct {
		const char *name;
		int (*run)(void);
	} subs[] = {
		{ "reinit-vs-reqbufs", run_reinit_vs_reqbufs },
		{ "close-vs-request-queue", run_close_vs_request_queue },
		{ "fileio-vs-bufs", run_fileio_vs_bufs },
		{ "sg-mmap-mremap", run_sg_mmap_mremap },
		{ "dmabuf-cpu-access", run_dmabuf_cpu_access },
		{ "hold", run_hold },
	};
	const char *dev = NULL;
	unsigned int i;
	int a, (*run)(void) = NULL;

	setvbuf(stdout, NULL, _IOLBF, 0);
	for (i = 0; argc > 1 && i < ARRAY_SIZE(subs); i++)
		if (!strcmp(argv[1], subs[i].name)) {
			sub = subs[i].name;
			run = subs[i].run;
		}
	if (!run)
		usage();
	for (a = 2; a < argc; a++) {
		if (!strcmp(argv[a], "--dev") && a + 1 < argc)
			dev = argv[++a];
		else if (!strcmp(argv[a], "--seconds") && a + 1 < argc)
			seconds = atoi(argv[++a]);
		else if (!strcmp(argv[a], "--debugfs") && a + 1 < argc)
			snprintf(debugfs_dir, sizeof(debugfs_dir), "%s", argv[++a]);
		else
			usage();
	}
	if (!dev || seconds <= 0)
		usage();
	signal(SIGSEGV, on_fault);
	signal(SIGBUS, on_fault);
	signal(SIGPIPE, SIG_IGN);
	if (setup_node(dev))
		return 2;
	return run();
}
