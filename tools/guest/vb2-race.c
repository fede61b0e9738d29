// SPDX-License-Identifier: GPL-2.0
/*
 * vb2-race: targeted two-thread races on the V4L2 buffer uAPI (videobuf2), one per
 * subcommand. A guest program of the test harness (tools/plans/races.plan).
 *
 *   vb2-race SUBCOMMAND --dev NAME[:out|:cap] [--seconds N] [--debugfs DIR] [-v]
 *
 * Subcommands (--dev picks the video node by its V4L2 name; on a mem2mem node :out or
 * :cap picks the queue, the output queue by default):
 *
 *   reinit-vs-reqbufs      thread A binds buffers into requests (QBUF with REQUEST_FD),
 *                          re-initializes (MEDIA_REQUEST_IOC_REINIT), sometimes queues
 *                          and closes request fds; thread B does REQBUFS(0)/REQBUFS(n)
 *                          on the same file, and where the queue has it REMOVE_BUFS of
 *                          one buffer then CREATE_BUFS (REINIT releases a buffer that
 *                          REMOVE_BUFS may free). Needs a queue with request support.
 *   close-vs-request-queue thread A allocates requests, binds buffers and queues them
 *                          (MEDIA_REQUEST_IOC_QUEUE), dequeues what completed; thread B
 *                          closes the video file that owns the queue (dup2 of /dev/null
 *                          onto its number) and opens it again with new buffers.
 *   fileio-vs-bufs         thread A read()s (capture) or write()s (output) on one file,
 *                          reopening it now and then; thread B does CREATE_BUFS,
 *                          REMOVE_BUFS and REQBUFS on another file of the node: while A's
 *                          file I/O is active these must fail with EBUSY.
 *   sg-mmap-mremap         thread A maps a buffer, mremap()s it larger (must fail:
 *                          VM_DONTEXPAND), smaller and to another address, reads what is
 *                          left, unmaps; thread B does REQBUFS(0)/REQBUFS(n).
 *   dmabuf-cpu-access      exports every buffer of an output queue (EXPBUF), maps the
 *                          dma-bufs; thread A fills buffers through them between
 *                          DMA_BUF_IOCTL_SYNC START/END (and reads buffers in flight);
 *                          thread B queues and dequeues them and checks the driver's
 *                          checksum of each (vb2-testdrv: debugfs out_checksum).
 *   hold                   streams with mapped and exported buffers, several threads
 *                          polling, dequeuing and queueing, until the node goes away
 *                          (ENODEV: the driver was unbound); then checks that the mappings
 *                          still read, closes everything and exits 0. Prints
 *                          "vb2-race: hold: streaming" when it is ready.
 *
 * Each race loops for --seconds (default 60; hold: at most that long waiting for the
 * unbind). A result outside the set each call allows is unexpected (the first ones are
 * printed as they happen). At the end the program reports KTAP through the kernel
 * tree's kselftest.h: a case NODE/SUBCOMMAND/THREAD/CALL per call of the race
 * ("visl:out/reinit-vs-reqbufs/A/REQUEST_QUEUE"), with the count of calls and of each
 * errno, that fails on an unexpected result (a call never made is a skip), and
 * NODE/SUBCOMMAND/checks for the race's other checks. A watchdog ends the program with
 * "HANG" when a thread makes no progress for 30 s. The exit code is 0 when every case
 * passed, 1 otherwise, 2 for a usage error, 3 on a hang.
 * The kernel log (KASAN, lockdep, WARN) is for the harness to judge.
 */
#define _GNU_SOURCE
#include <dirent.h>
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
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
#include <linux/dma-buf.h>
#include <linux/media.h>
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
#define MAX_BUFS	16
#define MAX_THREADS	8
#define STALL		30	/* seconds without progress: a hang */
#define MAX_REPORTED	20	/* unexpected results printed in full */
#define E_FAULTED	250	/* pseudo errno: touching a mapping faulted */
#define E_SHORT		251	/* pseudo errno: a short read/write or a wrong value */
#define E_NONE		252	/* pseudo errno: something that must fail succeeded */
#define NERR		256

#define BIT(e)		(1ULL << (e))
#define OP(n, a)	{ .name = (n), .allowed = (a) }

/* ---------------------------------------------------------------------------------- */
/* The node */

struct node {
	char label[80];
	char name[64];
	char path[300];
	char media[300];
	u32 type;
	u32 other;		/* mem2mem: the other queue's type */
	bool m2m, mplane, output;
	u32 caps;
	unsigned int nplanes;
	u32 sizes[MAXP];
};

static struct node N;
static const char *sub = "-";
static int seconds = 60;
static bool verbose;
static char debugfs_dir[300];

/* ---------------------------------------------------------------------------------- */
/* Statistics, progress and the watchdog */

struct op {
	const char *name;
	u64 allowed;		/* errnos (and 0) this call may give */
	unsigned long counts[NERR + 1];	/* [0] successes, [e] errno e */
	unsigned long bad;	/* results outside @allowed */
	char first[200];	/* the first of them */
};

struct thread {
	const char *name;
	pthread_t tid;
	volatile unsigned long iterations;
	volatile const char *doing;
	void *(*fn)(void *);
	sigjmp_buf jmp;
	volatile sig_atomic_t armed;
};

static struct thread threads[MAX_THREADS];
static unsigned int nthreads;
static volatile bool stop;
static unsigned long unexpected;
static pthread_mutex_t report_lock = PTHREAD_MUTEX_INITIALIZER;
static __thread struct thread *self;
static double t_start;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
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
	int slot = e < 0 || e >= NERR ? NERR : e;

	__atomic_fetch_add(&op->counts[slot], 1, __ATOMIC_RELAXED);
	if (e >= 0 && e < 64 && (op->allowed & BIT(e)))
		return e;
	pthread_mutex_lock(&report_lock);
	op->bad++;
	if (++unexpected <= MAX_REPORTED) {
		char what[160] = "";
		va_list ap;

		if (fmt) {
			va_start(ap, fmt);
			vsnprintf(what, sizeof(what), fmt, ap);
			va_end(ap);
		}
		printf("%s: %s dev=%s thread=%s op=%s UNEXPECTED %s at %.1fs%s%s\n", PROG, sub,
		       N.label, self ? self->name : "main", op->name, errname(e),
		       now() - t_start, fmt ? ": " : "", what);
		if (!op->first[0])
			snprintf(op->first, sizeof(op->first), "first unexpected: %s at %.1fs%s%s",
				 errname(e), now() - t_start, fmt ? ": " : "", what);
	}
	pthread_mutex_unlock(&report_lock);
	return e;
}

/* The calls of the race, each a KTAP case SUBCOMMAND/THREAD/CALL at the end. */
static struct {
	const char *thread;
	const struct op *op;
} results[24];
static unsigned int nresults;

static void print_op(const char *thread, const struct op *op)
{
	if (nresults < ARRAY_SIZE(results)) {
		results[nresults].thread = thread;
		results[nresults++].op = op;
	}
}

static void report_op(const char *thread, const struct op *op)
{
	unsigned long calls = 0;
	char name[160], line[600];
	size_t len;
	int e;

	for (e = 0; e <= NERR; e++)
		calls += op->counts[e];
	snprintf(name, sizeof(name), "%s/%s/%s/%s", N.label, sub, thread, op->name);
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

static void progress(const char *doing)
{
	if (self) {
		self->doing = doing;
		self->iterations++;
	}
}

static void *watchdog(void *arg)
{
	unsigned long last[MAX_THREADS] = { 0 };
	int idle[MAX_THREADS] = { 0 };
	unsigned int i;

	(void)arg;
	for (;;) {
		sleep(1);
		for (i = 0; i < nthreads; i++) {
			if (threads[i].iterations != last[i]) {
				last[i] = threads[i].iterations;
				idle[i] = 0;
				continue;
			}
			if (++idle[i] >= STALL) {
				printf("%s: %s dev=%s thread=%s HANG: no progress for %d s, last in %s\n",
				       PROG, sub, N.label, threads[i].name, STALL,
				       threads[i].doing ? threads[i].doing : "?");
				fflush(stdout);
				_exit(3);
			}
		}
	}
	return NULL;
}

static void on_fault(int sig)
{
	if (self && self->armed)
		siglongjmp(self->jmp, sig);
	signal(sig, SIG_DFL);
	raise(sig);
}

/* Read every page of [p, p + len); false if that faults. */
static bool touch(const volatile unsigned char *p, size_t len)
{
	volatile unsigned char x = 0;
	size_t off;

	if (!self)
		return true;
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

static void add_thread(const char *name, void *(*fn)(void *))
{
	struct thread *t = &threads[nthreads++];

	t->name = name;
	t->fn = fn;
}

static void *thread_main(void *arg)
{
	struct thread *t = arg;

	self = t;
	return t->fn(t);
}

static bool time_up(void)
{
	return stop || now() - t_start >= seconds;
}

/* Run the threads until the time is up (or they end), then join them. */
static void run_threads(void)
{
	pthread_t wd;
	unsigned int i;

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

/*
 * The results, in KTAP: a case per call of the race, and SUBCOMMAND/checks for what
 * the race checks besides the calls (printed above as it happened).
 */
static int finish(void)
{
	unsigned long bad = 0;
	char name[160];
	unsigned int i;

	ksft_print_header();
	ksft_set_plan(nresults + 1);
	ksft_print_msg("%s dev=%s\n", sub, N.label);
	for (i = 0; i < nthreads; i++)
		ksft_print_msg("thread %s: %lu iterations\n", threads[i].name,
			       threads[i].iterations);
	for (i = 0; i < nresults; i++) {
		report_op(results[i].thread, results[i].op);
		bad += results[i].op->bad;
	}
	if (unexpected > bad)
		ksft_print_msg("%lu checks failed (see above)\n", unexpected - bad);
	snprintf(name, sizeof(name), "%s/%s/checks", N.label, sub);
	ksft_test_result_code(unexpected > bad ? KSFT_FAIL : KSFT_PASS, name, NULL);
	ksft_finished();
}

/* ---------------------------------------------------------------------------------- */
/* V4L2 helpers */

static bool is_mplane(u32 type)
{
	return type == V4L2_BUF_TYPE_VIDEO_CAPTURE_MPLANE ||
	       type == V4L2_BUF_TYPE_VIDEO_OUTPUT_MPLANE;
}

static bool is_output(u32 type)
{
	return type == V4L2_BUF_TYPE_VIDEO_OUTPUT || type == V4L2_BUF_TYPE_VIDEO_OUTPUT_MPLANE;
}

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
	u32 len[MAXP];
	u32 off[MAXP];
};

static int querybuf(int fd, u32 type, u32 idx, struct binfo *bi)
{
	struct v4l2_plane pl[MAXP];
	struct v4l2_buffer b = { .index = idx, .type = type, .memory = V4L2_MEMORY_MMAP };
	unsigned int p;
	int r;

	memset(pl, 0, sizeof(pl));
	if (is_mplane(type)) {
		b.m.planes = pl;
		b.length = MAXP;
	}
	r = -vb2_ioctl(fd, VIDIOC_QUERYBUF, &b);
	if (r)
		return r;
	if (is_mplane(type)) {
		bi->np = b.length;
		for (p = 0; p < b.length && p < MAXP; p++) {
			bi->len[p] = pl[p].length;
			bi->off[p] = pl[p].m.mem_offset;
		}
	} else {
		bi->np = 1;
		bi->len[0] = b.length;
		bi->off[0] = b.m.offset;
	}
	return 0;
}

/*
 * A v4l2_buffer for MMAP buffer @idx of @type; output planes get bytesused @payload
 * (per plane; 0: the plane's length from @bi, or the format's size).
 */
static void prep(struct v4l2_buffer *b, struct v4l2_plane *pl, u32 type, u32 idx,
		 const struct binfo *bi)
{
	unsigned int p, np = bi && bi->np ? bi->np : N.nplanes;

	memset(b, 0, sizeof(*b));
	memset(pl, 0, sizeof(*pl) * MAXP);
	b->type = type;
	b->memory = V4L2_MEMORY_MMAP;
	b->index = idx;
	b->field = V4L2_FIELD_NONE;
	if (is_mplane(type)) {
		b->m.planes = pl;
		b->length = np;
		for (p = 0; p < np; p++) {
			pl[p].length = bi ? bi->len[p] : N.sizes[p];
			if (is_output(type))
				pl[p].bytesused = bi ? bi->len[p] : N.sizes[p];
		}
	} else {
		b->length = bi ? bi->len[0] : N.sizes[0];
		if (is_output(type))
			b->bytesused = b->length;
	}
}

static int qbuf(int fd, u32 type, u32 idx, const struct binfo *bi, int reqfd)
{
	struct v4l2_plane pl[MAXP];
	struct v4l2_buffer b;

	prep(&b, pl, type, idx, bi);
	if (reqfd >= 0) {
		b.flags |= V4L2_BUF_FLAG_REQUEST_FD;
		b.request_fd = reqfd;
	}
	return -vb2_ioctl(fd, VIDIOC_QBUF, &b);
}

static int dqbuf(int fd, u32 type, u32 *idx, u32 *flags)
{
	struct v4l2_plane pl[MAXP];
	struct v4l2_buffer b = { .type = type, .memory = V4L2_MEMORY_MMAP };
	int r;

	memset(pl, 0, sizeof(pl));
	if (is_mplane(type)) {
		b.m.planes = pl;
		b.length = MAXP;
	}
	r = -vb2_ioctl(fd, VIDIOC_DQBUF, &b);
	if (!r && idx)
		*idx = b.index;
	if (!r && flags)
		*flags = b.flags;
	return r;
}

static int streamon(int fd, u32 type)
{
	return -vb2_ioctl(fd, VIDIOC_STREAMON, &type);
}

static int streamoff(int fd, u32 type)
{
	return -vb2_ioctl(fd, VIDIOC_STREAMOFF, &type);
}

static short wait_ev(int fd, short ev, int ms)
{
	int r = vb2_poll(fd, ev, ms);

	return r > 0 ? r : 0;
}

/* mem2mem: buffers queued on the other queue, streaming, so that jobs can run. */
static int m2m_feed(int fd)
{
	u32 n, i;
	int r = reqbufs(fd, N.other, 4, &n);

	for (i = 0; !r && i < n; i++) {
		struct binfo bi;

		r = querybuf(fd, N.other, i, &bi);
		if (!r)
			r = qbuf(fd, N.other, i, &bi, -1);
	}
	return r ? r : streamon(fd, N.other);
}

/* ---------------------------------------------------------------------------------- */
/* Finding the node */

static int setup_node(const char *spec)
{
	struct v4l2_capability cap;
	struct v4l2_format f;
	struct v4l2_requestbuffers rb;
	const char *colon = strrchr(spec, ':');
	bool want_cap = false;
	u32 caps;
	int fd;

	snprintf(N.name, sizeof(N.name), "%s", spec);
	if (colon && (!strcmp(colon, ":out") || !strcmp(colon, ":cap"))) {
		N.name[colon - spec] = 0;
		want_cap = !strcmp(colon, ":cap");
	}
	snprintf(N.label, sizeof(N.label), "%s", spec);
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
		u32 out = mp ? V4L2_BUF_TYPE_VIDEO_OUTPUT_MPLANE : V4L2_BUF_TYPE_VIDEO_OUTPUT;
		u32 capt = mp ? V4L2_BUF_TYPE_VIDEO_CAPTURE_MPLANE : V4L2_BUF_TYPE_VIDEO_CAPTURE;

		N.m2m = true;
		N.type = want_cap ? capt : out;
		N.other = want_cap ? out : capt;
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
	N.mplane = is_mplane(N.type);
	N.output = is_output(N.type);
	memset(&f, 0, sizeof(f));
	f.type = N.type;
	if (vb2_ioctl(fd, VIDIOC_G_FMT, &f)) {
		fprintf(stderr, "%s: %s: G_FMT failed\n", PROG, N.label);
		return -1;
	}
	if (N.mplane) {
		unsigned int p;

		N.nplanes = f.fmt.pix_mp.num_planes;
		for (p = 0; p < N.nplanes && p < MAXP; p++)
			N.sizes[p] = f.fmt.pix_mp.plane_fmt[p].sizeimage;
	} else {
		N.nplanes = 1;
		N.sizes[0] = f.fmt.pix.sizeimage;
	}
	memset(&rb, 0, sizeof(rb));
	rb.type = N.type;
	rb.memory = V4L2_MEMORY_MMAP;
	if (!vb2_ioctl(fd, VIDIOC_REQBUFS, &rb))
		N.caps = rb.capabilities;
	close(fd);
	vb2_find_media(NULL, (const char *)cap.bus_info, N.media, sizeof(N.media));
	printf("%s: %s dev=%s %s media=%s type=%u planes=%u size0=%u caps=%#x\n", PROG, sub,
	       N.label, N.path, N.media[0] ? N.media : "-", N.type, N.nplanes, N.sizes[0],
	       N.caps);
	return 0;
}

/* ---------------------------------------------------------------------------------- */
/* reinit-vs-reqbufs */

#define NREQ	4
#define RB_MAX	6

static int rr_fd, rr_mfd;

static struct op rr_qbuf = OP("QBUF(request)", BIT(0) | BIT(EINVAL) | BIT(EBUSY));
static struct op rr_alloc = OP("REQUEST_ALLOC", BIT(0));
static struct op rr_reinit = OP("REQUEST_REINIT", BIT(0) | BIT(EBUSY));
static struct op rr_queue = OP("REQUEST_QUEUE", BIT(0) | BIT(ENOENT) | BIT(EINVAL) |
				BIT(EBUSY));
static struct op rr_close = OP("close(request)", BIT(0));
static struct op rr_reqbufs0 = OP("REQBUFS(0)", BIT(0));
static struct op rr_reqbufsn = OP("REQBUFS(n)", BIT(0));
/* EBUSY: the buffer is in a request; EINVAL: no buffer at that index. */
static struct op rr_remove = OP("REMOVE_BUFS", BIT(0) | BIT(EBUSY) | BIT(EINVAL));
static struct op rr_create = OP("CREATE_BUFS", BIT(0));
static struct v4l2_format rr_fmt;

/*
 * One buffer per request: with two buffers of a queue in one queued request, cancelling
 * them makes v4l2_ctrl_request_complete() WARN (upstream too; vb2-misuse case
 * req-two-bufs-queued-free reproduces it), which is not what this race is about.
 */
static void *rr_binder(void *arg)
{
	int req[NREQ];
	bool bound[NREQ] = { false };
	unsigned int i;

	(void)arg;
	for (i = 0; i < NREQ; i++)
		req[i] = -1;
	while (!time_up()) {
		unsigned int s = rnd(NREQ), what = rnd(10);
		int r;

		progress("REQUEST_ALLOC");
		if (req[s] < 0) {
			r = vb2_request_alloc(rr_mfd);
			if (account(&rr_alloc, r < 0 ? -r : 0, NULL))
				continue;
			req[s] = r;
		}
		if (!bound[s]) {
			progress("QBUF(request)");
			r = qbuf(rr_fd, N.type, rnd(RB_MAX), NULL, req[s]);
			bound[s] = !account(&rr_qbuf, r, NULL);
		}
		if (what < 4) {
			progress("REQUEST_REINIT");
			if (!account(&rr_reinit, -vb2_request_reinit(req[s]), NULL))
				bound[s] = false;
		} else if (what < 8) {
			progress("close(request)");
			account(&rr_close, close(req[s]) ? errno : 0, NULL);
			req[s] = -1;
			bound[s] = false;
		} else if (what < 9) {
			progress("REQUEST_QUEUE");
			account(&rr_queue, -vb2_request_queue(req[s]), NULL);
		}
	}
	for (i = 0; i < NREQ; i++)
		if (req[i] >= 0)
			close(req[i]);
	return NULL;
}

/* One buffer away and, if it went, one back: the others stay in their requests. */
static void rr_remove_create(void)
{
	struct v4l2_remove_buffers rm = { .index = rnd(RB_MAX), .count = 1, .type = N.type };
	struct v4l2_create_buffers cb = { .count = 1, .memory = V4L2_MEMORY_MMAP,
					  .format = rr_fmt };

	progress("REMOVE_BUFS");
	if (account(&rr_remove, -vb2_ioctl(rr_fd, VIDIOC_REMOVE_BUFS, &rm), NULL))
		return;
	progress("CREATE_BUFS");
	account(&rr_create, -vb2_ioctl(rr_fd, VIDIOC_CREATE_BUFS, &cb), NULL);
}

static void *rr_reallocator(void *arg)
{
	bool can_remove = N.caps & V4L2_BUF_CAP_SUPPORTS_REMOVE_BUFS;

	(void)arg;
	while (!time_up()) {
		if (can_remove && rnd(2)) {
			rr_remove_create();
			usleep(rnd(1000));
			continue;
		}
		progress("REQBUFS(0)");
		account(&rr_reqbufs0, reqbufs(rr_fd, N.type, 0, NULL), NULL);
		if (rnd(4))
			usleep(rnd(2000));
		progress("REQBUFS(n)");
		account(&rr_reqbufsn, reqbufs(rr_fd, N.type, 1 + rnd(RB_MAX), NULL), NULL);
		usleep(rnd(3000));
	}
	return NULL;
}

static int run_reinit_vs_reqbufs(void)
{
	if (!(N.caps & V4L2_BUF_CAP_SUPPORTS_REQUESTS) || !N.media[0]) {
		fprintf(stderr, "%s: %s: %s does not support requests\n", PROG, sub, N.label);
		return 2;
	}
	rr_fd = open_node();
	rr_mfd = open(N.media, O_RDWR | O_CLOEXEC);
	rr_fmt.type = N.type;
	if (rr_fd < 0 || rr_mfd < 0 || reqbufs(rr_fd, N.type, 4, NULL) ||
	    -vb2_ioctl(rr_fd, VIDIOC_G_FMT, &rr_fmt)) {
		fprintf(stderr, "%s: %s: setup failed: %s\n", PROG, sub, strerror(errno));
		return 1;
	}
	add_thread("A", rr_binder);
	add_thread("B", rr_reallocator);
	run_threads();
	/*
	 * Free the buffers before the close: a buffer may still be in a queued request,
	 * and visl's release frees its control handler before its queues, so cancelling
	 * that request from the close locks a destroyed mutex (6.12, with either
	 * videobuf2; misuse.plan stops visl's queues first for the same reason).
	 * Nothing this race is about.
	 */
	reqbufs(rr_fd, N.type, 0, NULL);
	close(rr_fd);
	close(rr_mfd);
	print_op("A", &rr_alloc);
	print_op("A", &rr_qbuf);
	print_op("A", &rr_reinit);
	print_op("A", &rr_queue);
	print_op("A", &rr_close);
	print_op("B", &rr_reqbufs0);
	print_op("B", &rr_reqbufsn);
	if (N.caps & V4L2_BUF_CAP_SUPPORTS_REMOVE_BUFS) {
		print_op("B", &rr_remove);
		print_op("B", &rr_create);
	}
	return finish();
}

/* ---------------------------------------------------------------------------------- */
/* close-vs-request-queue */

#define CQ_BUFS	4

static int cq_fd;		/* a stable descriptor number; B swaps the file behind it */
static int cq_mfd;

/* From A's view the file behind cq_fd may be /dev/null (ENOTTY) or one without buffers. */
static struct op cq_alloc = OP("REQUEST_ALLOC", BIT(0));
static struct op cq_qbuf = OP("QBUF(request)", BIT(0) | BIT(EINVAL) | BIT(ENOTTY) |
				BIT(EBUSY));
static struct op cq_queue = OP("REQUEST_QUEUE", BIT(0) | BIT(ENOENT) | BIT(EBUSY) |
				BIT(EINVAL));
static struct op cq_dqbuf = OP("DQBUF", BIT(0) | BIT(EAGAIN) | BIT(EINVAL) | BIT(ENOTTY) |
				BIT(EPIPE));
static struct op cq_reqpoll = OP("poll(request)", BIT(0));
static struct op cq_close = OP("close(video)", BIT(0));
static struct op cq_open = OP("open+REQBUFS+STREAMON", BIT(0));

static void *cq_queuer(void *arg)
{
	(void)arg;
	while (!time_up()) {
		int req, r;
		u32 idx;

		progress("REQUEST_ALLOC");
		req = vb2_request_alloc(cq_mfd);
		if (account(&cq_alloc, req < 0 ? -req : 0, NULL))
			continue;
		progress("QBUF(request)");
		r = account(&cq_qbuf, qbuf(cq_fd, N.type, rnd(CQ_BUFS), NULL, req), NULL);
		if (!r) {
			progress("REQUEST_QUEUE");
			r = account(&cq_queue, -vb2_request_queue(req), NULL);
			if (!r && rnd(2)) {
				struct pollfd p = { .fd = req, .events = POLLPRI };

				progress("poll(request)");
				account(&cq_reqpoll, poll(&p, 1, 20) < 0 ? errno : 0, NULL);
			}
		}
		progress("DQBUF");
		while (!account(&cq_dqbuf, dqbuf(cq_fd, N.type, &idx, NULL), NULL))
			;
		close(req);
	}
	return NULL;
}

static void *cq_closer(void *arg)
{
	int null = open("/dev/null", O_RDWR | O_CLOEXEC);

	(void)arg;
	while (!time_up()) {
		int nf, r;

		usleep(rnd(20000));
		/* Close the owner: /dev/null takes its number, so it cannot be reused. */
		progress("close(video)");
		account(&cq_close, dup2(null, cq_fd) < 0 ? errno : 0, NULL);
		progress("open+REQBUFS+STREAMON");
		nf = open_node();
		r = nf < 0 ? errno : reqbufs(nf, N.type, CQ_BUFS, NULL);
		/*
		 * The queuer's ioctl in progress on the old file keeps that file,
		 * and with it the queue's ownership, until it returns: the old
		 * file is released a moment later. Ownership that never goes is
		 * the bug: give up after a second.
		 */
		for (int i = 0; r == EBUSY && i < 100; i++) {
			usleep(10000);
			r = reqbufs(nf, N.type, CQ_BUFS, NULL);
		}
		if (!r)
			r = streamon(nf, N.type);
		if (!r && N.m2m)
			r = m2m_feed(nf);
		account(&cq_open, r, NULL);
		if (nf >= 0) {
			dup2(nf, cq_fd);
			close(nf);
		}
	}
	close(null);
	return NULL;
}

static int run_close_vs_request_queue(void)
{
	int fd;

	if (!(N.caps & V4L2_BUF_CAP_SUPPORTS_REQUESTS) || !N.media[0]) {
		fprintf(stderr, "%s: %s: %s does not support requests\n", PROG, sub, N.label);
		return 2;
	}
	cq_mfd = open(N.media, O_RDWR | O_CLOEXEC);
	fd = open_node();
	if (fd < 0 || cq_mfd < 0 || reqbufs(fd, N.type, CQ_BUFS, NULL) || streamon(fd, N.type)) {
		fprintf(stderr, "%s: %s: setup failed: %s\n", PROG, sub, strerror(errno));
		return 1;
	}
	if (N.m2m && m2m_feed(fd)) {
		fprintf(stderr, "%s: %s: setup of the other queue failed\n", PROG, sub);
		return 1;
	}
	cq_fd = fd;
	add_thread("A", cq_queuer);
	add_thread("B", cq_closer);
	run_threads();
	close(cq_fd);
	close(cq_mfd);
	print_op("A", &cq_alloc);
	print_op("A", &cq_qbuf);
	print_op("A", &cq_queue);
	print_op("A", &cq_reqpoll);
	print_op("A", &cq_dqbuf);
	print_op("B", &cq_close);
	print_op("B", &cq_open);
	return finish();
}

/* ---------------------------------------------------------------------------------- */
/* fileio-vs-bufs */

static volatile int fb_fd1 = -1;
static volatile unsigned long fb_gen;	/* A's file generation */
static volatile int fb_active;		/* file I/O known active on A's current file */

static struct op fb_io = OP("read/write", BIT(0) | BIT(EAGAIN) | BIT(EBUSY));
static struct op fb_reopen = OP("reopen", BIT(0));
static struct op fb_create = OP("CREATE_BUFS", BIT(0) | BIT(EBUSY));
static struct op fb_remove = OP("REMOVE_BUFS", BIT(0) | BIT(EBUSY) | BIT(EINVAL));
static struct op fb_reqbufs = OP("REQBUFS(n)", BIT(0) | BIT(EBUSY));
static struct op fb_reqbufs0 = OP("REQBUFS(0)", BIT(0) | BIT(EBUSY));

static void *fb_io_thread(void *arg)
{
	size_t len = N.sizes[0];
	unsigned char *buf = malloc(len);
	unsigned int left = 1 + rnd(20);

	(void)arg;
	memset(buf, 0x40, len);
	while (!time_up()) {
		ssize_t n;
		int e;

		if (!left--) {
			/* Close the file: its file I/O ends (and B may get the queue). */
			progress("reopen");
			fb_active = 0;
			__atomic_fetch_add(&fb_gen, 1, __ATOMIC_SEQ_CST);
			close(fb_fd1);
			fb_fd1 = open_node();
			account(&fb_reopen, fb_fd1 < 0 ? errno : 0, NULL);
			left = 1 + rnd(20);
			if (fb_fd1 < 0)
				break;
		}
		progress(N.output ? "write" : "read");
		wait_ev(fb_fd1, N.output ? POLLOUT : POLLIN, 50);
		n = N.output ? write(fb_fd1, buf, len) : read(fb_fd1, buf, len);
		e = n < 0 ? errno : 0;
		account(&fb_io, e, NULL);
		/* Data moved, or a non-blocking "not yet": the emulation runs on this file. */
		if (!e || e == EAGAIN)
			fb_active = 1;
	}
	free(buf);
	return NULL;
}

/* B's call @r on @op; success while A's file I/O was active throughout is unexpected. */
static void fb_check(struct op *op, int r, unsigned long g0, int a0)
{
	if (!r && a0 && g0 == fb_gen) {
		account(op, E_NONE, "succeeded while file I/O was active on another file");
		return;
	}
	account(op, r, NULL);
}

static void *fb_bufs_thread(void *arg)
{
	int fd2 = open_node();
	struct v4l2_format f = { .type = N.type };

	(void)arg;
	vb2_ioctl(fd2, VIDIOC_G_FMT, &f);
	while (!time_up()) {
		unsigned long g0 = fb_gen;
		int a0 = fb_active, r;

		switch (rnd(4)) {
		case 0: {
			struct v4l2_create_buffers cb = { .count = 1, .memory = V4L2_MEMORY_MMAP,
							  .format = f };

			progress("CREATE_BUFS");
			r = -vb2_ioctl(fd2, VIDIOC_CREATE_BUFS, &cb);
			fb_check(&fb_create, r, g0, a0);
			break;
		}
		case 1: {
			struct v4l2_remove_buffers rm = { .index = 0, .count = 1, .type = N.type };

			progress("REMOVE_BUFS");
			r = -vb2_ioctl(fd2, VIDIOC_REMOVE_BUFS, &rm);
			fb_check(&fb_remove, r, g0, a0);
			break;
		}
		case 2:
			progress("REQBUFS(n)");
			r = reqbufs(fd2, N.type, 2, NULL);
			fb_check(&fb_reqbufs, r, g0, a0);
			break;
		default:
			progress("REQBUFS(0)");
			r = reqbufs(fd2, N.type, 0, NULL);
			fb_check(&fb_reqbufs0, r, g0, a0);
			break;
		}
		/* Give the queue back now and then, so that A gets to read or write. */
		if (!rnd(3))
			reqbufs(fd2, N.type, 0, NULL);
		usleep(rnd(2000));
	}
	close(fd2);
	return NULL;
}

static int run_fileio_vs_bufs(void)
{
	if (N.m2m || N.nplanes != 1) {
		fprintf(stderr, "%s: %s: %s has no file I/O (mem2mem or several planes)\n", PROG,
			sub, N.label);
		return 2;
	}
	fb_fd1 = open_node();
	if (fb_fd1 < 0) {
		fprintf(stderr, "%s: %s: open: %s\n", PROG, sub, strerror(errno));
		return 1;
	}
	add_thread("A", fb_io_thread);
	add_thread("B", fb_bufs_thread);
	run_threads();
	if (fb_fd1 >= 0)
		close(fb_fd1);
	print_op("A", &fb_io);
	print_op("A", &fb_reopen);
	print_op("B", &fb_create);
	print_op("B", &fb_remove);
	print_op("B", &fb_reqbufs);
	print_op("B", &fb_reqbufs0);
	return finish();
}

/* ---------------------------------------------------------------------------------- */
/* sg-mmap-mremap */

#define SM_BUFS	4

static int sm_fd;
static void *sm_spare;		/* an address range for moving mappings to */
static size_t sm_spare_len;

static struct op sm_query = OP("QUERYBUF", BIT(0) | BIT(EINVAL));
static struct op sm_mmap = OP("mmap", BIT(0) | BIT(EINVAL));
static struct op sm_grow = OP("mremap(larger)", BIT(EFAULT));
static struct op sm_shrink = OP("mremap(smaller)", BIT(0));
static struct op sm_move = OP("mremap(move)", BIT(0));
static struct op sm_touch = OP("read mapping", BIT(0));
static struct op sm_munmap = OP("munmap", BIT(0));
static struct op sm_reqbufs0 = OP("REQBUFS(0)", BIT(0));
static struct op sm_reqbufsn = OP("REQBUFS(n)", BIT(0));

/* mremap() to a larger size: must fail. 0 if it did, else E_NONE (and undoes it). */
static int sm_try_grow(unsigned char *p, size_t len)
{
	void *q = mremap(p, len, len + PAGE, MREMAP_MAYMOVE);

	if (q == MAP_FAILED)
		return errno;
	munmap(q, len + PAGE);
	return E_NONE;
}

static void *sm_mapper(void *arg)
{
	(void)arg;
	while (!time_up()) {
		struct binfo bi;
		unsigned char *p;
		size_t len;
		int r;

		progress("QUERYBUF");
		r = account(&sm_query, querybuf(sm_fd, N.type, rnd(SM_BUFS), &bi), NULL);
		if (r)
			continue;
		len = PAGE_ALIGN(bi.len[0]);
		progress("mmap");
		p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, sm_fd, bi.off[0]);
		if (account(&sm_mmap, p == MAP_FAILED ? errno : 0, NULL))
			continue;
		progress("mremap(larger)");
		r = sm_try_grow(p, len);
		account(&sm_grow, r, "len %zu", len);
		if (r == E_NONE) {
			/* Gone with the larger mapping. */
			continue;
		}
		if (len > PAGE && rnd(2)) {
			void *q;

			progress("mremap(smaller)");
			q = mremap(p, len, len - PAGE, 0);
			if (!account(&sm_shrink, q == MAP_FAILED ? errno : 0, NULL))
				len -= PAGE;
		}
		if (rnd(2) && len <= sm_spare_len) {
			void *q;

			progress("mremap(move)");
			q = mremap(p, len, len, MREMAP_MAYMOVE | MREMAP_FIXED, sm_spare);
			if (!account(&sm_move, q == MAP_FAILED ? errno : 0, NULL)) {
				p = q;
				/* The spare range is taken now; a new one for the next time. */
				sm_spare = mmap(NULL, sm_spare_len, PROT_NONE,
						MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
				if (sm_spare == MAP_FAILED)
					sm_spare_len = 0;
			}
		}
		progress("read mapping");
		account(&sm_touch, touch(p, len) ? 0 : E_FAULTED, "a mapping of %zu bytes", len);
		progress("munmap");
		account(&sm_munmap, munmap(p, len) ? errno : 0, NULL);
	}
	return NULL;
}

static void *sm_reallocator(void *arg)
{
	(void)arg;
	while (!time_up()) {
		progress("REQBUFS(0)");
		account(&sm_reqbufs0, reqbufs(sm_fd, N.type, 0, NULL), NULL);
		usleep(rnd(1000));
		progress("REQBUFS(n)");
		account(&sm_reqbufsn, reqbufs(sm_fd, N.type, 1 + rnd(SM_BUFS), NULL), NULL);
		usleep(rnd(5000));
	}
	return NULL;
}

static int run_sg_mmap_mremap(void)
{
	struct binfo bi;
	unsigned char *p;
	size_t len;
	int r;

	sm_fd = open_node();
	if (sm_fd < 0 || reqbufs(sm_fd, N.type, SM_BUFS, NULL) || querybuf(sm_fd, N.type, 0, &bi)) {
		fprintf(stderr, "%s: %s: setup failed: %s\n", PROG, sub, strerror(errno));
		return 1;
	}
	/* First on its own: growing a buffer mapping must fail. */
	len = PAGE_ALIGN(bi.len[0]);
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, sm_fd, bi.off[0]);
	if (p == MAP_FAILED) {
		fprintf(stderr, "%s: %s: mmap: %s\n", PROG, sub, strerror(errno));
		return 1;
	}
	r = sm_try_grow(p, len);
	printf("%s: %s dev=%s mremap of a %zu-byte buffer mapping to %zu bytes: %s (%s)\n",
	       PROG, sub, N.label, len, len + PAGE, r == E_NONE ? "succeeded" : errname(r),
	       r == EFAULT ? "refused, as VM_DONTEXPAND wants" : "UNEXPECTED");
	if (r != EFAULT)
		unexpected++;
	if (r != E_NONE)
		munmap(p, len);
	sm_spare_len = len;
	sm_spare = mmap(NULL, sm_spare_len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (sm_spare == MAP_FAILED)
		sm_spare_len = 0;
	add_thread("A", sm_mapper);
	add_thread("B", sm_reallocator);
	run_threads();
	close(sm_fd);
	print_op("A", &sm_query);
	print_op("A", &sm_mmap);
	print_op("A", &sm_grow);
	print_op("A", &sm_shrink);
	print_op("A", &sm_move);
	print_op("A", &sm_touch);
	print_op("A", &sm_munmap);
	print_op("B", &sm_reqbufs0);
	print_op("B", &sm_reqbufsn);
	return finish();
}

/* ---------------------------------------------------------------------------------- */
/* dmabuf-cpu-access */

#define DC_BUFS	4

struct dc_buf {
	int dfd[MAXP];
	unsigned char *map[MAXP];
	struct binfo bi;
	u32 value;		/* the byte A wrote into every byte */
};

static int dc_fd;
static u32 dc_count;
static struct dc_buf dc_bufs[DC_BUFS];
static pthread_mutex_t dc_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t dc_cond = PTHREAD_COND_INITIALIZER;
/* Buffer states: 0 free (A fills it), 1 filled (B queues it), 2 with the device. */
static int dc_state[DC_BUFS];
static unsigned long dc_checked;

static struct op dc_sync_w = OP("SYNC(write)", BIT(0));
static struct op dc_sync_r = OP("SYNC(read in flight)", BIT(0));
static struct op dc_verify = OP("read back", BIT(0));
static struct op dc_qbuf = OP("QBUF", BIT(0));
static struct op dc_dqbuf = OP("DQBUF", BIT(0) | BIT(EAGAIN));
static struct op dc_sum = OP("out_checksum", BIT(0));

static int dc_sync(int dfd, u64 flags)
{
	struct dma_buf_sync s = { .flags = flags };

	return -vb2_ioctl(dfd, DMA_BUF_IOCTL_SYNC, &s);
}

/* B queues every plane full (bytesused = length): the driver sums that many bytes. */
static u32 dc_payload(const struct dc_buf *b, unsigned int p)
{
	return b->bi.len[p];
}

static void *dc_filler(void *arg)
{
	u32 value = 1;

	(void)arg;
	while (!time_up()) {
		struct dc_buf *b;
		unsigned int i, p;
		int k = -1, fl = -1;

		pthread_mutex_lock(&dc_lock);
		for (i = 0; i < dc_count; i++) {
			if (dc_state[i] == 0 && k < 0)
				k = i;
			if (dc_state[i] == 2)
				fl = i;
		}
		pthread_mutex_unlock(&dc_lock);
		/* CPU reads of a buffer the device is reading: legal, the data is ours. */
		if (fl >= 0) {
			b = &dc_bufs[fl];
			progress("SYNC(read in flight)");
			for (p = 0; p < b->bi.np; p++) {
				account(&dc_sync_r, dc_sync(b->dfd[p], DMA_BUF_SYNC_START |
							    DMA_BUF_SYNC_READ), NULL);
				touch(b->map[p], b->bi.len[p]);
				account(&dc_sync_r, dc_sync(b->dfd[p], DMA_BUF_SYNC_END |
							    DMA_BUF_SYNC_READ), NULL);
			}
		}
		if (k < 0) {
			progress("waiting");
			usleep(1000);
			continue;
		}
		b = &dc_bufs[k];
		value = value % 251 + 1;
		b->value = value;
		progress("SYNC(write)");
		for (p = 0; p < b->bi.np; p++) {
			u32 pay = dc_payload(b, p), j;
			bool ok = true;

			account(&dc_sync_w, dc_sync(b->dfd[p], DMA_BUF_SYNC_START | DMA_BUF_SYNC_RW),
				NULL);
			memset(b->map[p], value, b->bi.len[p]);
			for (j = 0; j < pay; j += 997)
				ok &= b->map[p][j] == value;
			account(&dc_sync_w, dc_sync(b->dfd[p], DMA_BUF_SYNC_END | DMA_BUF_SYNC_RW),
				NULL);
			account(&dc_verify, ok ? 0 : E_SHORT, "buffer %d plane %u", k, p);
		}
		pthread_mutex_lock(&dc_lock);
		dc_state[k] = 1;
		pthread_cond_signal(&dc_cond);
		pthread_mutex_unlock(&dc_lock);
	}
	pthread_mutex_lock(&dc_lock);
	pthread_cond_broadcast(&dc_cond);
	pthread_mutex_unlock(&dc_lock);
	return NULL;
}

static int read_checksum(u32 *sum)
{
	char path[400], line[64];
	int r;

	snprintf(path, sizeof(path), "%s/out_checksum", debugfs_dir);
	r = vb2_read_line(path, line, sizeof(line));
	if (r)
		return -r;
	*sum = strtoul(line, NULL, 0);
	return 0;
}

static void *dc_streamer(void *arg)
{
	(void)arg;
	while (!time_up()) {
		struct dc_buf *b;
		unsigned int i, p;
		struct timespec ts;
		int k = -1, r;
		u32 idx = 0, sum = 0, want = 0;
		double t0;

		pthread_mutex_lock(&dc_lock);
		while (!time_up()) {
			for (i = 0; i < dc_count; i++)
				if (dc_state[i] == 1)
					k = i;
			if (k >= 0)
				break;
			clock_gettime(CLOCK_REALTIME, &ts);
			ts.tv_nsec += 10000000;
			if (ts.tv_nsec >= 1000000000) {
				ts.tv_sec++;
				ts.tv_nsec -= 1000000000;
			}
			progress("waiting");
			pthread_cond_timedwait(&dc_cond, &dc_lock, &ts);
		}
		if (k >= 0)
			dc_state[k] = 2;
		pthread_mutex_unlock(&dc_lock);
		if (k < 0)
			break;
		b = &dc_bufs[k];
		progress("QBUF");
		if (account(&dc_qbuf, qbuf(dc_fd, N.type, k, &b->bi, -1), "buffer %d", k)) {
			pthread_mutex_lock(&dc_lock);
			dc_state[k] = 0;
			pthread_mutex_unlock(&dc_lock);
			continue;
		}
		/* One buffer with the device at a time: the checksum is then this one's. */
		t0 = now();
		do {
			progress("DQBUF");
			wait_ev(dc_fd, POLLOUT, 100);
			r = account(&dc_dqbuf, dqbuf(dc_fd, N.type, &idx, NULL), NULL);
		} while (r == EAGAIN && now() - t0 < 10);
		if (r) {
			account(&dc_dqbuf, E_SHORT, "buffer %d not done after 10 s", k);
			stop = true;
			break;
		}
		for (p = 0; p < b->bi.np; p++)
			want += (u32)b->value * dc_payload(b, p);
		progress("out_checksum");
		r = read_checksum(&sum);
		if (!r && (idx != (u32)k || sum != want))
			account(&dc_sum, E_SHORT, "buffer %d (dequeued %u): checksum %#x, the dma-buf "
				"was filled with %u: want %#x", k, idx, sum, b->value, want);
		else
			account(&dc_sum, r, NULL);
		dc_checked++;
		pthread_mutex_lock(&dc_lock);
		dc_state[k] = 0;
		pthread_mutex_unlock(&dc_lock);
	}
	return NULL;
}

static int run_dmabuf_cpu_access(void)
{
	unsigned int i, p;
	u32 sum;
	int r;

	if (!N.output || N.m2m) {
		fprintf(stderr, "%s: %s: needs an output node\n", PROG, sub);
		return 2;
	}
	if (!debugfs_dir[0]) {
		int inst;

		if (sscanf(N.name, "vb2-testdrv-%d-out", &inst) != 1) {
			fprintf(stderr, "%s: %s: give --debugfs DIR for %s\n", PROG, sub, N.name);
			return 2;
		}
		snprintf(debugfs_dir, sizeof(debugfs_dir), "/sys/kernel/debug/vb2-testdrv/%d",
			 inst);
	}
	if (read_checksum(&sum)) {
		fprintf(stderr, "%s: %s: no %s/out_checksum\n", PROG, sub, debugfs_dir);
		return 2;
	}
	dc_fd = open_node();
	if (dc_fd < 0 || reqbufs(dc_fd, N.type, DC_BUFS, &dc_count) || !dc_count) {
		fprintf(stderr, "%s: %s: setup failed: %s\n", PROG, sub, strerror(errno));
		return 1;
	}
	if (dc_count > DC_BUFS)
		dc_count = DC_BUFS;
	for (i = 0; i < dc_count; i++) {
		struct dc_buf *b = &dc_bufs[i];

		if (querybuf(dc_fd, N.type, i, &b->bi))
			return 1;
		for (p = 0; p < b->bi.np; p++) {
			struct v4l2_exportbuffer eb = { .type = N.type, .index = i, .plane = p,
							.flags = O_RDWR | O_CLOEXEC };

			r = -vb2_ioctl(dc_fd, VIDIOC_EXPBUF, &eb);
			if (r) {
				fprintf(stderr, "%s: %s: EXPBUF %u/%u: %s\n", PROG, sub, i, p,
					errname(r));
				return 1;
			}
			b->dfd[p] = eb.fd;
			b->map[p] = mmap(NULL, b->bi.len[p], PROT_READ | PROT_WRITE, MAP_SHARED,
					 eb.fd, 0);
			if (b->map[p] == MAP_FAILED) {
				fprintf(stderr, "%s: %s: mmap of dma-buf %u/%u: %s\n", PROG, sub, i,
					p, strerror(errno));
				return 1;
			}
		}
	}
	r = streamon(dc_fd, N.type);
	if (r) {
		fprintf(stderr, "%s: %s: STREAMON: %s\n", PROG, sub, errname(r));
		return 1;
	}
	add_thread("A", dc_filler);
	add_thread("B", dc_streamer);
	run_threads();
	streamoff(dc_fd, N.type);
	for (i = 0; i < dc_count; i++)
		for (p = 0; p < dc_bufs[i].bi.np; p++) {
			munmap(dc_bufs[i].map[p], dc_bufs[i].bi.len[p]);
			close(dc_bufs[i].dfd[p]);
		}
	close(dc_fd);
	printf("%s: %s dev=%s buffers checked through out_checksum: %lu\n", PROG, sub, N.label,
	       dc_checked);
	if (!dc_checked)
		unexpected++;
	print_op("A", &dc_sync_w);
	print_op("A", &dc_verify);
	print_op("A", &dc_sync_r);
	print_op("B", &dc_qbuf);
	print_op("B", &dc_dqbuf);
	print_op("B", &dc_sum);
	return finish();
}

/* ---------------------------------------------------------------------------------- */
/* hold */

#define HOLD_BUFS	4
#define HOLD_THREADS	3

static int h_fd;
static u32 h_count;
static struct binfo h_bi[HOLD_BUFS];
static unsigned char *h_map[HOLD_BUFS][MAXP];
static int h_dfd[HOLD_BUFS][MAXP];
static unsigned char *h_dmap[HOLD_BUFS][MAXP];
static volatile bool h_gone;
static double h_gone_at;

/* While streaming: the usual; once the driver is gone: ENODEV (or EINVAL/EIO/EPIPE). */
static struct op h_poll = OP("poll", BIT(0));
static struct op h_dqbuf = OP("DQBUF", BIT(0) | BIT(EAGAIN) | BIT(EINVAL) | BIT(ENODEV) |
				BIT(EIO) | BIT(EPIPE));
static struct op h_qbuf = OP("QBUF", BIT(0) | BIT(EINVAL) | BIT(ENODEV) | BIT(EIO) |
				BIT(EBUSY));
static struct op h_query = OP("QUERYBUF", BIT(0) | BIT(ENODEV) | BIT(EINVAL));
static struct op h_touch = OP("read mappings", BIT(0));
static struct op h_sync = OP("SYNC", BIT(0));
static struct op h_after = OP("after the unbind", BIT(0));

static void h_mark_gone(int e)
{
	if (e == ENODEV && !h_gone) {
		h_gone = true;
		h_gone_at = now() - t_start;
	}
}

static void *h_streamer(void *arg)
{
	(void)arg;
	while (!h_gone && !time_up()) {
		short ev;
		u32 idx;
		int r;

		progress("poll");
		ev = wait_ev(h_fd, N.output ? POLLOUT : POLLIN, 200);
		account(&h_poll, 0, NULL);
		(void)ev;
		progress("DQBUF");
		r = account(&h_dqbuf, dqbuf(h_fd, N.type, &idx, NULL), NULL);
		h_mark_gone(r);
		if (r || idx >= h_count)
			continue;
		progress("QBUF");
		r = account(&h_qbuf, qbuf(h_fd, N.type, idx, &h_bi[idx], -1), NULL);
		h_mark_gone(r);
	}
	return NULL;
}

static void *h_toucher(void *arg)
{
	(void)arg;
	while (!h_gone && !time_up()) {
		u32 i = rnd(h_count);
		unsigned int p;
		struct binfo bi;
		int r;

		progress("QUERYBUF");
		r = account(&h_query, querybuf(h_fd, N.type, i, &bi), NULL);
		h_mark_gone(r);
		for (p = 0; p < h_bi[i].np; p++) {
			progress("read mappings");
			account(&h_touch, touch(h_map[i][p], h_bi[i].len[p]) ? 0 : E_FAULTED,
				"buffer %u plane %u", i, p);
			if (h_dfd[i][p] < 0)
				continue;
			progress("SYNC");
			account(&h_sync, dc_sync(h_dfd[i][p], DMA_BUF_SYNC_START | DMA_BUF_SYNC_READ),
				NULL);
			account(&h_touch, touch(h_dmap[i][p], h_bi[i].len[p]) ? 0 : E_FAULTED,
				"dma-buf of buffer %u plane %u", i, p);
			account(&h_sync, dc_sync(h_dfd[i][p], DMA_BUF_SYNC_END | DMA_BUF_SYNC_READ),
				NULL);
		}
		usleep(5000);
	}
	return NULL;
}

static int run_hold(void)
{
	unsigned int i, p;
	int r;

	h_fd = open_node();
	if (h_fd < 0 || reqbufs(h_fd, N.type, HOLD_BUFS, &h_count) || !h_count) {
		fprintf(stderr, "%s: %s: setup failed: %s\n", PROG, sub, strerror(errno));
		return 1;
	}
	if (h_count > HOLD_BUFS)
		h_count = HOLD_BUFS;
	for (i = 0; i < h_count; i++) {
		if (querybuf(h_fd, N.type, i, &h_bi[i]))
			return 1;
		for (p = 0; p < h_bi[i].np; p++) {
			struct v4l2_exportbuffer eb = { .type = N.type, .index = i, .plane = p,
							.flags = O_RDWR | O_CLOEXEC };

			h_map[i][p] = mmap(NULL, h_bi[i].len[p], PROT_READ | PROT_WRITE, MAP_SHARED,
					   h_fd, h_bi[i].off[p]);
			if (h_map[i][p] == MAP_FAILED) {
				fprintf(stderr, "%s: %s: mmap: %s\n", PROG, sub, strerror(errno));
				return 1;
			}
			h_dfd[i][p] = -1;
			if (vb2_ioctl(h_fd, VIDIOC_EXPBUF, &eb))
				continue;
			h_dfd[i][p] = eb.fd;
			h_dmap[i][p] = mmap(NULL, h_bi[i].len[p], PROT_READ, MAP_SHARED, eb.fd, 0);
			if (h_dmap[i][p] == MAP_FAILED) {
				close(eb.fd);
				h_dfd[i][p] = -1;
			}
		}
		r = qbuf(h_fd, N.type, i, &h_bi[i], -1);
		if (r) {
			fprintf(stderr, "%s: %s: QBUF: %s\n", PROG, sub, errname(r));
			return 1;
		}
	}
	r = streamon(h_fd, N.type);
	if (!r && N.m2m)
		r = m2m_feed(h_fd);
	if (r) {
		fprintf(stderr, "%s: %s: STREAMON: %s\n", PROG, sub, errname(r));
		return 1;
	}
	printf("%s: hold dev=%s: streaming, %u buffers mapped and exported\n", PROG, N.label,
	       h_count);
	fflush(stdout);
	for (i = 0; i < HOLD_THREADS; i++)
		add_thread(i == 0 ? "A" : i == 1 ? "B" : "C", h_streamer);
	add_thread("T", h_toucher);
	run_threads();
	if (!h_gone) {
		printf("%s: hold dev=%s: no ENODEV within %d s\n", PROG, N.label, seconds);
		unexpected++;
	} else {
		printf("%s: hold dev=%s: ENODEV after %.1f s\n", PROG, N.label, h_gone_at);
	}
	/* The node is gone; the memory stays until it is unmapped and the fds are closed. */
	self = &threads[0];
	for (i = 0; i < h_count; i++)
		for (p = 0; p < h_bi[i].np; p++) {
			account(&h_after, touch(h_map[i][p], h_bi[i].len[p]) ? 0 : E_FAULTED,
				"mapping of buffer %u plane %u after the unbind", i, p);
			if (h_dfd[i][p] >= 0)
				account(&h_after, touch(h_dmap[i][p], h_bi[i].len[p]) ? 0 : E_FAULTED,
					"dma-buf of buffer %u plane %u after the unbind", i, p);
		}
	r = streamoff(h_fd, N.type);
	printf("%s: hold dev=%s: STREAMOFF after the unbind: %s\n", PROG, N.label, errname(r));
	for (i = 0; i < h_count; i++)
		for (p = 0; p < h_bi[i].np; p++) {
			munmap(h_map[i][p], h_bi[i].len[p]);
			if (h_dfd[i][p] >= 0) {
				munmap(h_dmap[i][p], h_bi[i].len[p]);
				close(h_dfd[i][p]);
			}
		}
	account(&h_after, close(h_fd) ? errno : 0, "close of the video file");
	print_op("*", &h_poll);
	print_op("*", &h_dqbuf);
	print_op("*", &h_qbuf);
	print_op("T", &h_query);
	print_op("T", &h_touch);
	print_op("T", &h_sync);
	print_op("main", &h_after);
	return finish();
}

/* ---------------------------------------------------------------------------------- */

static void usage(void)
{
	fprintf(stderr, "usage: %s reinit-vs-reqbufs|close-vs-request-queue|fileio-vs-bufs|"
		"sg-mmap-mremap|dmabuf-cpu-access|hold --dev NAME[:out|:cap] [--seconds N] "
		"[--debugfs DIR] [-v]\n", PROG);
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
	if (argc < 2)
		usage();
	for (i = 0; i < ARRAY_SIZE(subs); i++)
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
		else if (!strcmp(argv[a], "-v"))
			verbose = true;
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
