// SPDX-License-Identifier: GPL-2.0
/*
 * vb2-misuse: a table of misuses of the V4L2 buffer uAPI (videobuf2), each with the
 * errno Documentation/userspace-api/media/ of Linux 6.12 gives for it (misuse.plan).
 *
 *   vb2-misuse [--dev NAME[:out|:cap][@FOURCC|@keep]]... [--only ID[,ID..]]
 *              [--skip ID[,ID..]] [--cleanup-streamoff] [--list]
 *
 * --dev: a video node by its V4L2 name; both queues of a mem2mem node, or the one named.
 * A multi-planar node that is not mem2mem gets a format of several memory planes if it
 * has one; @keep keeps its format, @FOURCC sets that one. --list prints the table.
 * --cleanup-streamoff stops the queues before a case's files are closed (visl cannot
 * release a file with buffers in queued requests).
 *
 * A case opens the node afresh, does its setup (S_*), makes one call (OP_* or a function)
 * and compares its errno (0: success) with the row's; some check more after the call.
 * Then all it opened is closed and a sanity cycle on a new file must stream a buffer
 * (both queues on mem2mem). The expected errno is the documented one unless 6.12
 * answers otherwise (the drop-in rule; the note says so, alt is a second accepted
 * errno); a note naming a row of Documentation/driver-contract.rst is a deliberate
 * difference that fails on 6.12. Output: KTAP, QUEUE/initial-sanity then QUEUE/CASE;
 * a failure prints "# expect=EINVAL got=0 ...". poll() cases show revents (no-event:
 * none set). Exit code 0 when nothing failed, 1 otherwise, 2 for a usage error.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
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
#include <linux/videodev2.h>

#include <kselftest.h>

#include "uapi-6.12.h"
#include "vb2-guest.h"

typedef uint32_t u32;

#define PROG		"vb2-misuse"
#define PAGE		4096UL
#define PAGE_ALIGN(x)	(((x) + PAGE - 1) & ~(PAGE - 1))
#define MAX_DEVS	32
#define MAX_BUFS	32
#define MAXP		VIDEO_MAX_PLANES
#define CASE_TIMEOUT	60	/* seconds for one case and its sanity cycle */
#define WAIT_MS		5000	/* for a buffer to complete */
#define M2M_CAP_OFF	(1U << 30)	/* DST_QUEUE_OFF_BASE of v4l2-mem2mem */
#define RW		(PROT_READ | PROT_WRITE)
#define M_MMAP		V4L2_MEMORY_MMAP
#define M_USERPTR	V4L2_MEMORY_USERPTR
#define M_DMABUF	V4L2_MEMORY_DMABUF

/* A case returns the errno of its call, positive (0: success), or one of these: */
#define R_SETUP		-1	/* its setup failed (ctx.why) */
#define R_SKIP		-2	/* does not apply after all (ctx.why) */

/* The queue under test, found at start. */
struct dev {
	char label[72];		/* V4L2 name, or name:out / name:cap on mem2mem nodes */
	char path[300];		/* /dev/videoN */
	char media[300];	/* /dev/mediaN or "" */
	u32 type;		/* buffer type under test */
	u32 other;		/* mem2mem: the other queue's type, else 0 */
	bool m2m, mplane, output, rw;
	u32 caps;		/* V4L2_BUF_CAP_* of the queue */
	u32 other_caps;
	unsigned int nplanes;	/* memory planes of the current format */
	u32 sizes[MAXP];	/* sizeimage of each */
	struct v4l2_format fmt;	/* G_FMT of the queue */
};

/* Needs of a case: it runs only on queues that have all of them. */
enum {
	N_MP = 1 << 0,		/* multi-planar API */
	N_MPN = 1 << 1,		/* multi-planar with more than one memory plane */
	N_OUT = 1 << 2,		/* output queue */
	N_CAP = 1 << 3,		/* capture queue */
	N_UP = 1 << 4,		/* USERPTR supported */
	N_NOUP = 1 << 5,	/* USERPTR not supported */
	N_REQ = 1 << 6,		/* requests supported on the queue */
	N_NOREQ = 1 << 7,	/* no request support on the queue */
	N_RW = 1 << 8,		/* read() (capture) or write() (output), not mem2mem, and
				 * a format of one memory plane (vb2's file I/O has no more) */
	N_RM = 1 << 9,		/* VIDIOC_REMOVE_BUFS */
	N_SOLO = 1 << 10,	/* one queue per node, shared by its files (not mem2mem) */
	N_MEDIA_NOREQ = 1 << 11,/* a media device without request support */
	N_ORPHAN = 1 << 12,	/* V4L2_BUF_CAP_SUPPORTS_ORPHANED_BUFS */
	N_SP = 1 << 13,		/* single-planar API */
	N_M2M = 1 << 14,	/* a queue of a mem2mem node */
};

/* The setup of a case, done in this order; the first five open fd[0]. */
enum {
	S_OPEN = 1 << 0,	/* fd[0] opened, O_NONBLOCK */
	S_BLOCK = 1 << 1,	/* fd[0] opened, blocking */
	S_MMAP2 = 1 << 2,	/* REQBUFS(2) of MMAP buffers on fd[0] */
	S_MMAP3 = 1 << 3,	/* REQBUFS(3) of MMAP buffers */
	S_UP = 1 << 4,		/* REQBUFS(2) of USERPTR buffers */
	S_DMA = 1 << 5,		/* REQBUFS(2) of DMABUF buffers */
	S_FILEIO = 1 << 6,	/* read() (capture) or write() (output) emulation started */
	S_RM1 = 1 << 7,		/* REMOVE_BUFS of buffer 1 */
	S_FREE = 1 << 8,	/* REQBUFS(0) */
	S_MAP0 = 1 << 9,	/* buffer 0 mapped (ctx.map0) */
	S_PREP0 = 1 << 10,	/* PREPARE_BUF of buffer 0 */
	S_QBUF0 = 1 << 11,	/* QBUF of buffer 0 */
	S_REQ = 1 << 12,	/* a request in req[0] */
	S_RQBUF0 = 1 << 13,	/* buffer 0 queued into a request in req[0] */
	S_RQUEUE = 1 << 14,	/* that request queued */
	S_STREAM = 1 << 15,	/* STREAMON */
	S_OFF = 1 << 16,	/* STREAMOFF */
	S_DONE = 1 << 17,	/* every buffer queued, streaming, one buffer done */
	S_FD1 = 1 << 18,	/* a second file in fd[1] */
};

/*
 * The call under test, on fd[slot], for the queue's type (T_BAD: the same direction in
 * the other API, T_ZERO: 0). Buffer indexes, counts, lengths may be a V_* value; mem
 * and how of OP_MMAP default to PROT_READ | PROT_WRITE and MAP_SHARED.
 */
enum {
	OP_FN,		/* fn(c); the call is c->k */
	OP_REQBUFS,	/* REQBUFS(n) of memory mem */
	OP_CREATE,	/* CREATE_BUFS(n) of memory mem, the format changed as how (F_*) says */
	OP_QUERYBUF,	/* QUERYBUF of buffer a (planes array of VIDEO_MAX_PLANES) */
	OP_QBUF,	/* QBUF of buffer a, the argument changed as how (H_, U_, D_*) says */
	OP_PREPARE,	/* PREPARE_BUF, the same */
	OP_QUERYBUF_H,	/* QUERYBUF, the same */
	OP_DQBUF,
	OP_EXPBUF,	/* EXPBUF of buffer a, plane b, flags mem */
	OP_STREAMON,
	OP_STREAMOFF,
	OP_REMOVE,	/* REMOVE_BUFS of n buffers from a */
	OP_RQUEUE,	/* MEDIA_REQUEST_IOC_QUEUE of req[0] */
	OP_RREINIT,	/* MEDIA_REQUEST_IOC_REINIT of req[0] */
	OP_MMAP,	/* n bytes (0: the plane's) at buffer a's offset + b, prot mem, flags how */
	OP_IO,		/* read() or write() of 64 bytes, as how (IO_*) says */
	OP_POLL,	/* poll() for a (no timeout): the flags b must be set */
};

enum { T_OK, T_BAD, T_ZERO };
enum { IO_DIR, IO_READ, IO_WRITE };	/* IO_DIR: read() on capture, write() on output */
#define V_COUNT		-1	/* the number of buffers allocated */
#define V_NPLANES	-2	/* their number of planes */
#define V_SIZE0		-3	/* sizeimage of plane 0 */
#define V_BASE		-4	/* mmap: no buffer, the queue's first offset */
#define V_LONG		-5	/* mmap: one page longer than the plane */

/* How the v4l2_buffer or format of the call differs from a valid one. */
enum {
	H_NONE,
	H_LEN0,		/* planes: length 0 */
	H_LEN0_BADPTR,	/* length 0, m.planes a pointer that must not be followed */
	H_SHORT,	/* one plane fewer than the buffers have */
	H_TOO_MANY,	/* VIDEO_MAX_PLANES + 1 planes */
	H_NULL,		/* m.planes NULL */
	H_BADPTR,	/* m.planes unreadable */
	H_WRONGMEM,	/* memory DMABUF, m.fd -1 (on MMAP buffers) */
	H_BYTESUSED,	/* bytesused of plane 0 one more than its length */
	H_DATAOFF,	/* data_offset of plane 0 = its bytesused */
	H_REQ,		/* V4L2_BUF_FLAG_REQUEST_FD, request_fd req[0] */
	H_REQ_SELF,	/* request_fd: the video node's fd */
	H_REQ_NEG,	/* request_fd: -1 */
	H_REQ_CLOSED,	/* request_fd: req[0], closed */
	/* USERPTR plane 0 (the other planes: anonymous memory of their size) */
	U_NULL,		/* NULL */
	U_SHORT,	/* half the plane size */
	U_UNALIGNED,	/* 8 bytes into a page */
	U_READONLY,	/* PROT_READ memory */
	U_UNMAPPED,	/* PROT_NONE memory */
	U_KERNEL,	/* a kernel address */
	/* DMABUF plane 0 (the other planes: dma-bufs of their size) */
	D_NEG,		/* m.fd -1 */
	D_NOT_DMABUF,	/* fd[1], a video node */
	D_SMALL,	/* a page; length 0 on capture (the dma-buf's size counts) */
	D_SHORT,	/* of the plane's size, length half of it */
	D_VALID,	/* of the plane's size */
	D_BIG,		/* a page larger than the plane, length and payload its size */
	/* CREATE_BUFS format */
	F_HALF,		/* sizeimage of plane 0 halved */
	F_ZERO,		/* sizeimage of plane 0 zero */
	F_NP0,		/* num_planes 0 */
	F_NPMAX,	/* num_planes VIDEO_MAX_PLANES + 1 */
};

struct ctx;

struct bufinfo {
	u32 len[MAXP];
	u32 off[MAXP];
};

struct call {
	unsigned char op, slot, type, how;
	u32 mem;
	long long a, b, n;
	int (*fn)(struct ctx *c);
};

struct ctx {
	struct dev *d;
	const struct call *k;	/* the case's call */
	int fd[3];
	int mfd;
	int req[4];
	int dfd[8];
	struct { void *p; size_t len; } map[24];
	unsigned int nmap;
	void *map0;		/* S_MAP0 */
	u32 count;		/* buffers allocated through fd[0] */
	struct bufinfo bi[MAX_BUFS];
	unsigned int nplanes;	/* of the allocated buffers */
	char why[256];
	bool post_fail;		/* a check after the call failed (why) */
	char got_str[64];	/* shown instead of the errno when set */
};

struct mcase {
	const char *id;
	int expect;		/* errno, 0 for success */
	int alt;		/* a second accepted errno (see note), 0 for none */
	unsigned int needs, setup;
	struct call call;
	const char *doc;	/* where Documentation/userspace-api/media says so */
	const char *note;	/* why alt, or what the doc leaves open */
};

static struct dev devs[MAX_DEVS];
static unsigned int ndevs;
static bool cleanup_streamoff;
static const char *cur_dev = "-", *cur_case = "-";
static sigjmp_buf fault_jmp;
static volatile sig_atomic_t fault_armed;

/* Small helpers */

/*
 * Record the first reason (why) a setup or (post_fail) a check after the call failed.
 * Returns -1 (R_SETUP), for "return why(...)" in a setup step.
 */
static int __printf(3, 4) set_why(struct ctx *c, bool post, const char *fmt, ...)
{
	va_list ap;

	c->post_fail |= post;
	if (c->why[0])
		return -1;
	va_start(ap, fmt);
	vsnprintf(c->why, sizeof(c->why), fmt, ap);
	va_end(ap);
	return -1;
}

#define why(c, ...)		set_why(c, false, __VA_ARGS__)
#define post_fail(c, ...)	set_why(c, true, __VA_ARGS__)

/* The name of a case's result: an errno, or the two poll() outcomes. */
static const char *errname(int e)
{
	switch (e) {
	case ENOMSG: return "no-event";
	case EPROTO: return "other-events";
	}
	return vb2_errname(e);
}

static bool is_mplane(u32 type)
{
	return type == V4L2_BUF_TYPE_VIDEO_CAPTURE_MPLANE ||
	       type == V4L2_BUF_TYPE_VIDEO_OUTPUT_MPLANE;
}

static bool is_output(u32 type)
{
	return type == V4L2_BUF_TYPE_VIDEO_OUTPUT || type == V4L2_BUF_TYPE_VIDEO_OUTPUT_MPLANE;
}

/*
 * The same direction in the other API: a type the node does not handle. The _MPLANE
 * types are their single-planar ones plus 8 (CAPTURE 1 and 9, OUTPUT 2 and 10).
 */
static u32 bad_type(const struct dev *d)
{
	return d->type ^ 8;
}

/* VIDIOC_STREAMON or VIDIOC_STREAMOFF (@req) of @type: 0 or the errno. */
static int stream(int fd, unsigned long req, u32 type)
{
	return -vb2_ioctl(fd, req, &type);
}

static void on_fault(int sig)
{
	if (fault_armed)
		siglongjmp(fault_jmp, sig);
	signal(sig, SIG_DFL);
	raise(sig);
}

/* Read a byte through a mapping; false if that faults. */
static bool touch_ok(const volatile unsigned char *p)
{
	volatile unsigned char x;

	if (sigsetjmp(fault_jmp, 1)) {
		fault_armed = 0;
		return false;
	}
	fault_armed = 1;
	x = *p;
	(void)x;
	fault_armed = 0;
	return true;
}

static void on_alarm(int sig)
{
	char msg[300];
	int n;

	(void)sig;
	n = snprintf(msg, sizeof(msg), "# %s/%s HANG: no progress for %d s, giving up\n"
		     "Bail out!\n", cur_dev, cur_case, CASE_TIMEOUT);
	(void)!write(1, msg, n);
	_exit(1);
}

/* Context: everything a case opens, closed again after it */

static void ctx_unset(struct ctx *c)
{
	memset(c->fd, -1, sizeof(c->fd));
	memset(c->req, -1, sizeof(c->req));
	memset(c->dfd, -1, sizeof(c->dfd));
	c->mfd = -1;
	c->nmap = 0;
}

static void close_all(int *fds, size_t n)
{
	while (n--)
		if (fds[n] >= 0)
			close(fds[n]);
}

/* Only the resources: what the case found stays for the report. */
static void ctx_free(struct ctx *c)
{
	unsigned int i;

	for (i = 0; cleanup_streamoff && i < ARRAY_SIZE(c->fd); i++) {
		if (c->fd[i] >= 0)
			stream(c->fd[i], VIDIOC_STREAMOFF, c->d->type);
		if (c->fd[i] >= 0 && c->d->other)
			stream(c->fd[i], VIDIOC_STREAMOFF, c->d->other);
	}
	for (i = 0; i < c->nmap; i++)
		if (c->map[i].p && c->map[i].p != MAP_FAILED)
			munmap(c->map[i].p, c->map[i].len);
	close_all(c->dfd, ARRAY_SIZE(c->dfd));
	close_all(c->req, ARRAY_SIZE(c->req));
	close_all(c->fd, ARRAY_SIZE(c->fd));
	close_all(&c->mfd, 1);
	ctx_unset(c);
}

static int c_open(struct ctx *c, int slot, bool nonblock)
{
	c->fd[slot] = open(c->d->path, O_RDWR | (nonblock ? O_NONBLOCK : 0) | O_CLOEXEC);
	if (c->fd[slot] < 0)
		return why(c, "open %s: %s", c->d->path, strerror(errno));
	return 0;
}

static void *c_track(struct ctx *c, void *p, size_t len)
{
	if (p != MAP_FAILED && c->nmap < ARRAY_SIZE(c->map)) {
		c->map[c->nmap].p = p;
		c->map[c->nmap].len = len;
		c->nmap++;
	}
	return p;
}

/* Anonymous memory (USERPTR buffers, bad pointers), unmapped after the case. */
static void *c_anon(struct ctx *c, size_t len, int prot)
{
	void *p = mmap(NULL, PAGE_ALIGN(len), prot, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE,
		       -1, 0);

	if (p == MAP_FAILED) {
		why(c, "mmap anonymous %zu: %s", len, strerror(errno));
		return NULL;
	}
	c_track(c, p, PAGE_ALIGN(len));
	if (prot & PROT_WRITE)
		memset(p, 0x5a, len);
	return p;
}

/* Keep @fd (a dma-buf) for closing after the case. */
static int c_keep_dfd(struct ctx *c, int fd)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(c->dfd); i++)
		if (c->dfd[i] < 0)
			return c->dfd[i] = fd;
	close(fd);
	return why(c, "too many dma-bufs");
}

/* A dma-buf of @len bytes from the system heap, or udmabuf; -1 if none. */
static int c_dmabuf(struct ctx *c, size_t len)
{
	int fd = vb2_dmabuf_alloc(len, NULL);

	if (fd >= 0)
		return c_keep_dfd(c, fd);
	return why(c, "no dma-buf exporter (dma-heap system, udmabuf): %s", errname(fd));
}

/* A new request in c->req[slot]; 0, the errno of MEDIA_IOC_REQUEST_ALLOC or R_SETUP. */
static int c_request(struct ctx *c, int slot)
{
	int fd;

	if (c->mfd < 0 && !c->d->media[0])
		return why(c, "no media device");
	if (c->mfd < 0)
		c->mfd = open(c->d->media, O_RDWR | O_CLOEXEC);
	if (c->mfd < 0)
		return why(c, "open %s: %s", c->d->media, strerror(errno));
	fd = vb2_request_alloc(c->mfd);
	if (fd < 0) {
		why(c, "MEDIA_IOC_REQUEST_ALLOC on %s: %s", c->d->media, errname(fd));
		return -fd;
	}
	c->req[slot] = fd;
	return 0;
}

/* Buffers */

static int do_reqbufs(int fd, u32 type, u32 memory, u32 count, u32 *got)
{
	struct v4l2_requestbuffers rb = { .count = count, .type = type, .memory = memory };
	int r = -vb2_ioctl(fd, VIDIOC_REQBUFS, &rb);

	if (!r && got)
		*got = rb.count;
	return r;
}

/*
 * A v4l2_buffer for buffer @idx of @type and @memory, FIELD_NONE, of @np planes of the
 * lengths @len and on output queues a full payload (bytesused = length). @len NULL: only
 * type, memory and a planes array of VIDEO_MAX_PLANES, for QUERYBUF and DQBUF.
 */
static void init_buf(struct v4l2_buffer *b, struct v4l2_plane *pl, u32 type, u32 memory,
		     u32 idx, unsigned int np, const u32 *len)
{
	unsigned int p;

	vb2_buf_init(b, pl, type, memory, idx, MAXP);
	if (len && is_mplane(type))
		b->length = np;
	if (!len)
		return;
	b->field = V4L2_FIELD_NONE;
	for (p = 0; p < np; p++) {
		pl[p].length = len[p];
		pl[p].bytesused = is_output(type) ? len[p] : 0;
	}
	if (!is_mplane(type)) {
		b->length = pl[0].length;
		b->bytesused = pl[0].bytesused;
	}
}

static int do_querybuf(int fd, u32 type, u32 memory, u32 idx, struct bufinfo *bi,
		       unsigned int *nplanes)
{
	struct v4l2_plane pl[MAXP];
	struct v4l2_buffer b;
	unsigned int p;
	int r;

	init_buf(&b, pl, type, memory, idx, 0, NULL);
	r = -vb2_ioctl(fd, VIDIOC_QUERYBUF, &b);
	if (r)
		return r;
	if (!is_mplane(type)) {
		pl[0].length = b.length;
		pl[0].m.mem_offset = b.m.offset;
		b.length = 1;
	}
	for (p = 0; p < b.length && p < MAXP; p++) {
		bi->len[p] = pl[p].length;
		bi->off[p] = pl[p].m.mem_offset;
	}
	if (nplanes)
		*nplanes = b.length;
	return 0;
}

static int dqbuf(int fd, u32 type)
{
	struct v4l2_plane pl[MAXP];
	struct v4l2_buffer b;

	init_buf(&b, pl, type, M_MMAP, 0, 0, NULL);
	return -vb2_ioctl(fd, VIDIOC_DQBUF, &b);
}

/* REQBUFS(@count) of @memory on fd[slot], remembering the buffers. Returns 0 or -1. */
static int c_alloc(struct ctx *c, int slot, u32 memory, u32 count)
{
	unsigned int i, p;
	int r;

	if (c->fd[slot] < 0 && c_open(c, slot, true))
		return -1;
	r = do_reqbufs(c->fd[slot], c->d->type, memory, count, &c->count);
	if (r)
		return why(c, "setup REQBUFS(%u): %s", count, errname(r));
	if (c->count < count || c->count > MAX_BUFS)
		return why(c, "setup REQBUFS(%u) gave %u buffers", count, c->count);
	c->nplanes = c->d->nplanes;
	for (i = 0; i < c->count; i++) {
		r = do_querybuf(c->fd[slot], c->d->type, memory, i, &c->bi[i], &c->nplanes);
		if (r)
			return why(c, "setup QUERYBUF(%u): %s", i, errname(r));
		for (p = 0; memory != M_MMAP && p < c->nplanes; p++)
			c->bi[i].len[p] = c->d->sizes[p];
	}
	return 0;
}

/* init_buf() for buffer @idx of fd[0]'s queue, of its lengths; output: a timestamp. */
static void prep_buf(struct ctx *c, struct v4l2_buffer *b, struct v4l2_plane *pl, u32 idx,
		     u32 memory)
{
	const struct dev *d = c->d;
	unsigned int p, np = c->nplanes ? c->nplanes : d->nplanes;
	const struct bufinfo *bi = idx < MAX_BUFS ? &c->bi[idx] : &c->bi[0];
	u32 len[MAXP];

	for (p = 0; p < np; p++)
		len[p] = bi->len[p] ? bi->len[p] : d->sizes[p];
	init_buf(b, pl, d->type, memory, idx, np, len);
	if (d->output) {
		b->timestamp.tv_sec = 1;
		b->timestamp.tv_usec = idx;
	}
}

/* VIDIOC_QBUF (or @req) of MMAP buffer @idx on fd[slot]; into request @reqfd if >= 0. */
static int c_bufio(struct ctx *c, unsigned long req, int slot, u32 idx, int reqfd)
{
	struct v4l2_plane pl[MAXP];
	struct v4l2_buffer b;

	prep_buf(c, &b, pl, idx, M_MMAP);
	if (reqfd >= 0) {
		b.flags |= V4L2_BUF_FLAG_REQUEST_FD;
		b.request_fd = reqfd;
	}
	return -vb2_ioctl(c->fd[slot], req, &b);
}

#define c_qbuf(c, slot, idx)		c_bufio(c, VIDIOC_QBUF, slot, idx, -1)
#define c_qbuf_req(c, idx, reqfd)	c_bufio(c, VIDIOC_QBUF, 0, idx, reqfd)

/* Wait for @ev on @fd; revents, 0 on timeout. */
static short wait_ev(int fd, short ev, int ms)
{
	int r = vb2_poll(fd, ev, ms);

	return r > 0 ? r : 0;
}

/* A failure of the sanity cycle: its reason in @err; -1. */
static int __printf(3, 4) errf(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return -1;
}

/* @r, an errno: 0, or -1 with "@what: errno" in @err. */
static int failed(char *err, size_t errlen, const char *what, int r)
{
	return r ? errf(err, errlen, "%s: %s", what, errname(r)) : 0;
}

/* REQBUFS(2) of MMAP on @fd and QBUF of them all (output: full). 0, or -1 and @err. */
static int queue_all(int fd, u32 type, char *err, size_t errlen)
{
	struct v4l2_plane pl[MAXP];
	struct v4l2_buffer b;
	struct bufinfo bi;
	unsigned int np = 1;
	u32 got, i;
	int r = do_reqbufs(fd, type, M_MMAP, 2, &got);

	if (r || got < 1 || got > MAX_BUFS)
		return errf(err, errlen, "REQBUFS(2) type %u: %s, count %u", type, errname(r),
			    r ? 0 : got);
	for (i = 0; i < got; i++) {
		r = do_querybuf(fd, type, M_MMAP, i, &bi, &np);
		if (r)
			return errf(err, errlen, "QUERYBUF(%u): %s", i, errname(r));
		init_buf(&b, pl, type, M_MMAP, i, np, bi.len);
		r = -vb2_ioctl(fd, VIDIOC_QBUF, &b);
		if (r)
			return errf(err, errlen, "QBUF(%u) type %u: %s", i, type, errname(r));
	}
	return 0;
}

/* mem2mem: buffers on the other queue of fd[0], all queued, streaming. 0 or -1. */
static int c_m2m_feed(struct ctx *c)
{
	char err[128];

	if (queue_all(c->fd[0], c->d->other, err, sizeof(err)) ||
	    failed(err, sizeof(err), "STREAMON", stream(c->fd[0], VIDIOC_STREAMON, c->d->other)))
		return why(c, "setup of the other mem2mem queue: %s", err);
	return 0;
}

/* Stream fd[0] (buffers allocated) and wait until one buffer is done. 0 or -1. */
static int c_stream_one_done(struct ctx *c, u32 nqueue)
{
	short ev = c->d->output ? POLLOUT : POLLIN;
	struct v4l2_plane pl[MAXP];
	struct v4l2_buffer b;
	u32 i;
	int r;

	for (i = 0; i < nqueue; i++) {
		r = c_qbuf(c, 0, i);
		if (r)
			return why(c, "setup QBUF(%u): %s", i, errname(r));
	}
	r = stream(c->fd[0], VIDIOC_STREAMON, c->d->type);
	if (r)
		return why(c, "setup STREAMON: %s", errname(r));
	if (c->d->m2m && c_m2m_feed(c))
		return -1;
	/* poll() of a mem2mem file answers for both queues: look for the done flag. */
	for (i = 0; i < WAIT_MS / 10; i++) {
		if (!(wait_ev(c->fd[0], ev, WAIT_MS) & ev))
			break;
		if (!c->d->m2m)
			return 0;
		prep_buf(c, &b, pl, 0, M_MMAP);
		for (b.index = 0; b.index < c->count; b.index++)
			if (!vb2_ioctl(c->fd[0], VIDIOC_QUERYBUF, &b) &&
			    (b.flags & V4L2_BUF_FLAG_DONE))
				return 0;
		usleep(10000);
	}
	return why(c, "setup: no buffer done within %d ms", WAIT_MS);
}

static int remove_bufs(int fd, u32 type, u32 index, u32 count)
{
	struct v4l2_remove_buffers rb = { .index = index, .count = count, .type = type };

	return -vb2_ioctl(fd, VIDIOC_REMOVE_BUFS, &rb);
}

/* CREATE_BUFS of @count buffers in format @fmt (NULL: the current one) on fd[slot]. */
static int create_bufs(struct ctx *c, int slot, u32 memory, u32 count, u32 *index,
		       struct v4l2_format *fmt)
{
	struct v4l2_create_buffers cb = { .count = count, .memory = memory };
	int r;

	cb.format = fmt ? *fmt : c->d->fmt;
	r = -vb2_ioctl(c->fd[slot], VIDIOC_CREATE_BUFS, &cb);
	if (!r && index)
		*index = cb.index;
	return r;
}

/* Start read() (capture) or write() (output) emulation on fd[slot] (non-blocking). */
static int c_start_fileio(struct ctx *c, int slot)
{
	static char buf[4096];
	ssize_t n;

	if (c->fd[slot] < 0 && c_open(c, slot, true))
		return -1;
	if (c->d->output)
		n = write(c->fd[slot], buf, sizeof(buf));
	else
		n = read(c->fd[slot], buf, sizeof(buf));
	if (n < 0 && errno != EAGAIN)
		return why(c, "setup %s(): %s", c->d->output ? "write" : "read", errname(errno));
	return 0;
}

/* mmap on fd[0]; 0 or the errno. */
static int c_mmap(struct ctx *c, size_t len, int prot, int flags, off_t off)
{
	void *p = mmap(NULL, len, prot, flags, c->fd[0], off);

	if (p == MAP_FAILED)
		return errno;
	c_track(c, p, len);
	return 0;
}

/* The sanity cycle: a fresh file must stream one buffer through the queue(s). */

static int sanity_dq(int fd, u32 type, char *err, size_t errlen)
{
	short ev = is_output(type) ? POLLOUT : POLLIN;
	int r, tries;

	/* poll() of a mem2mem node answers for both queues: retry until this one has one. */
	for (tries = 0; tries < WAIT_MS / 10; tries++) {
		if (!(wait_ev(fd, ev, WAIT_MS) & (ev | POLLERR)))
			return errf(err, errlen, "no buffer of type %u done within %d ms", type,
				    WAIT_MS);
		r = dqbuf(fd, type);
		if (!r)
			return 0;
		if (r != EAGAIN)
			return errf(err, errlen, "DQBUF type %u: %s", type, errname(r));
		usleep(10000);
	}
	return errf(err, errlen, "DQBUF type %u: EAGAIN for %d ms", type, WAIT_MS);
}

static int sanity(struct dev *d, char *err, size_t errlen)
{
	/* On mem2mem nodes both queues, the output queue first. */
	u32 t[2] = { d->type, d->other };
	unsigned int n = d->m2m ? 2 : 1, i;
	int fd = open(d->path, O_RDWR | O_NONBLOCK | O_CLOEXEC), r = 0;

	err[0] = 0;
	if (fd < 0)
		return errf(err, errlen, "open: %s", strerror(errno));
	if (d->m2m && !d->output) {
		t[0] = d->other;
		t[1] = d->type;
	}
	for (i = 0; i < n && !r; i++)
		r = queue_all(fd, t[i], err, errlen);
	for (i = 0; i < n && !r; i++)
		r = failed(err, errlen, "STREAMON", stream(fd, VIDIOC_STREAMON, t[i]));
	for (i = n; i-- > 0 && !r;)
		r = sanity_dq(fd, t[i], err, errlen);
	for (i = 0; i < n && !r; i++)
		r = failed(err, errlen, "STREAMOFF", stream(fd, VIDIOC_STREAMOFF, t[i]));
	for (i = 0; i < n && !r; i++)
		r = failed(err, errlen, "REQBUFS(0)", do_reqbufs(fd, t[i], M_MMAP, 0, NULL));
	close(fd);
	return r;
}

/* Setup and call of a case */

#define SETUP(x)	do { if (x) return R_SETUP; } while (0)
#define SKIP(c, ...)	do { why(c, __VA_ARGS__); return R_SKIP; } while (0)

/* A setup step's result @err: 0, or -1 with the reason. */
static int step(struct ctx *c, const char *what, int err)
{
	return err ? why(c, "setup %s: %s", what, errname(err)) : 0;
}

static int c_setup(struct ctx *c, unsigned int s)
{
	u32 t = c->d->type;
	int fd, r = 0;

	if (s & (S_MMAP2 | S_MMAP3))
		r = c_alloc(c, 0, M_MMAP, s & S_MMAP3 ? 3 : 2);
	else if (s & (S_UP | S_DMA))
		r = c_alloc(c, 0, s & S_UP ? M_USERPTR : M_DMABUF, 2);
	else if (s & S_FILEIO)
		r = c_start_fileio(c, 0);
	else if (s & (S_OPEN | S_BLOCK))
		r = c_open(c, 0, !(s & S_BLOCK));
	if (r)
		return -1;
	fd = c->fd[0];
	if (((s & S_RM1) && step(c, "REMOVE_BUFS(1, 1)", remove_bufs(fd, t, 1, 1))) ||
	    ((s & S_FREE) && step(c, "REQBUFS(0)", do_reqbufs(fd, t, M_MMAP, 0, NULL))) ||
	    ((s & S_MAP0) && step(c, "mmap", c_mmap(c, c->bi[0].len[0], RW, MAP_SHARED,
						    c->bi[0].off[0]))))
		return -1;
	if (s & S_MAP0)
		c->map0 = c->map[c->nmap - 1].p;
	if (((s & S_PREP0) && step(c, "PREPARE_BUF", c_bufio(c, VIDIOC_PREPARE_BUF, 0, 0, -1))) ||
	    ((s & S_QBUF0) && step(c, "QBUF", c_qbuf(c, 0, 0))) ||
	    ((s & (S_REQ | S_RQBUF0)) && c_request(c, 0)) ||
	    ((s & S_RQBUF0) && step(c, "QBUF into a request", c_qbuf_req(c, 0, c->req[0]))) ||
	    ((s & S_RQUEUE) && step(c, "queueing the request", -vb2_request_queue(c->req[0]))) ||
	    ((s & S_STREAM) && step(c, "STREAMON", stream(fd, VIDIOC_STREAMON, t))) ||
	    ((s & S_OFF) && step(c, "STREAMOFF", stream(fd, VIDIOC_STREAMOFF, t))) ||
	    ((s & S_DONE) && c_stream_one_done(c, c->count)) ||
	    ((s & S_FD1) && c_open(c, 1, true)))
		return -1;
	return 0;
}

static long long val(const struct ctx *c, long long v)
{
	switch (v) {
	case V_COUNT: return c->count;
	case V_NPLANES: return c->nplanes;
	case V_SIZE0: return c->d->sizes[0];
	}
	return v;
}

/* USERPTR or DMABUF planes: plane 0 as @h says, the others valid. 0 or R_SETUP/R_SKIP. */
static int fill_planes(struct ctx *c, struct v4l2_buffer *b, struct v4l2_plane *pl, int h)
{
	const struct dev *d = c->d;
	bool dma = h >= D_NEG;
	u32 size = d->sizes[0], len = size, l;
	unsigned long v0 = 0, v;
	unsigned char *m = NULL;
	unsigned int p;

	switch (h) {
	case U_SHORT:
	case U_UNALIGNED:
	case U_READONLY:
	case U_UNMAPPED:
		m = c_anon(c, size + (h == U_UNALIGNED ? PAGE : 0),
			   h == U_READONLY ? PROT_READ : h == U_UNMAPPED ? PROT_NONE : RW);
		SETUP(!m);
		v0 = (unsigned long)(m + (h == U_UNALIGNED ? 8 : 0));
		len = h == U_SHORT ? size / 2 : size;
		break;
	case U_KERNEL:
		v0 = 0xffff888000000000UL;
		break;
	case D_NEG:
	case D_NOT_DMABUF:
		v0 = h == D_NEG ? -1 : c->fd[1];
		break;
	case D_SMALL:
		if (size <= PAGE)
			SKIP(c, "plane 0 is not larger than a page");
		len = d->output ? PAGE : 0;
		v0 = c_dmabuf(c, PAGE);
		break;
	case D_SHORT:
	case D_VALID:
	case D_BIG:
		len = h == D_SHORT ? size / 2 : h == D_BIG ? PAGE_ALIGN(size) + PAGE : size;
		v0 = c_dmabuf(c, h == D_BIG ? len : size);
		break;
	}
	SETUP(dma && (int)v0 < 0 && h != D_NEG);
	for (p = 0; p < c->nplanes; p++) {
		v = v0;
		l = len;
		if (p > 0) {
			l = d->sizes[p];
			v = dma ? (unsigned long)c_dmabuf(c, l) : (unsigned long)c_anon(c, l, RW);
			SETUP(dma ? (int)v < 0 : !v);
		}
		if (dma)
			pl[p].m.fd = v;
		else
			pl[p].m.userptr = v;
		pl[p].length = l;
		pl[p].bytesused = d->output ? l : 0;
	}
	if (!d->mplane) {	/* the v4l2_buffer holds the one plane */
		if (dma)
			b->m.fd = pl[0].m.fd;
		else
			b->m.userptr = pl[0].m.userptr;
		b->length = pl[0].length;
		b->bytesused = pl[0].bytesused;
	}
	return 0;
}

/* QBUF, PREPARE_BUF or QUERYBUF of a v4l2_buffer changed as @k->how says. */
static int buf_op(struct ctx *c, const struct call *k, u32 type)
{
	static const unsigned long req[] = { [OP_QBUF] = VIDIOC_QBUF,
		[OP_PREPARE] = VIDIOC_PREPARE_BUF, [OP_QUERYBUF_H] = VIDIOC_QUERYBUF };
	const struct dev *d = c->d;
	struct v4l2_plane pl[MAXP + 1] = {};
	struct v4l2_buffer b;
	u32 idx = val(c, k->a), mem = M_MMAP;
	int h = k->how, r;

	if (h >= U_NULL && h < D_NEG)
		mem = M_USERPTR;
	else if (h >= D_NEG || h == H_WRONGMEM)
		mem = M_DMABUF;
	prep_buf(c, &b, pl, idx < c->count ? idx : 0, mem);
	b.index = idx;
	b.type = type;
	if ((k->type || k->op == OP_PREPARE) && !is_mplane(type))
		b.length = c->bi[0].len[0];
	if (h == H_LEN0 || h == H_LEN0_BADPTR)
		b.length = 0;
	if (h == H_LEN0_BADPTR)
		b.m.planes = (struct v4l2_plane *)(uintptr_t)0x10;
	if (h == H_SHORT)
		b.length = c->nplanes - 1;
	if (h == H_TOO_MANY)
		b.length = MAXP + 1;
	if (h == H_NULL)
		b.m.planes = NULL;
	if (h == H_BADPTR)
		b.m.planes = c_anon(c, PAGE, PROT_NONE);
	SETUP(h == H_BADPTR && !b.m.planes);
	if (h == H_WRONGMEM)
		*(d->mplane ? &pl[0].m.fd : &b.m.fd) = -1;
	if (h == H_BYTESUSED && d->mplane)
		pl[0].bytesused = pl[0].length + 1;
	else if (h == H_BYTESUSED)
		b.bytesused = b.length + 1;
	if (h == H_DATAOFF)
		pl[0].data_offset = pl[0].bytesused;
	if (h >= H_REQ && h <= H_REQ_CLOSED) {
		b.flags |= V4L2_BUF_FLAG_REQUEST_FD;
		b.request_fd = h == H_REQ_SELF ? c->fd[0] : h == H_REQ_NEG ? -1 : c->req[0];
	}
	if (h == H_REQ_CLOSED) {
		close(c->req[0]);
		c->req[0] = -1;
	}
	if (h >= U_NULL) {
		r = fill_planes(c, &b, pl, h);
		if (r)
			return r;
	}
	return -vb2_ioctl(c->fd[k->slot], req[k->op], &b);
}

static int expbuf_call(struct ctx *c, u32 type, u32 idx, u32 plane, u32 flags)
{
	struct v4l2_exportbuffer eb = { .type = type, .index = idx, .plane = plane,
					.flags = flags };
	int r = -vb2_ioctl(c->fd[0], VIDIOC_EXPBUF, &eb);

	if (!r)
		c_keep_dfd(c, eb.fd);
	return r;
}

static int mmap_op(struct ctx *c)
{
	const struct call *k = c->k;
	const struct bufinfo *bi = &c->bi[k->a == V_BASE ? 0 : k->a];
	size_t len = k->n == V_LONG ? PAGE_ALIGN(bi->len[0]) + PAGE : (size_t)val(c, k->n);
	u32 base = c->d->m2m && !c->d->output ? M2M_CAP_OFF : 0;

	return c_mmap(c, len ? len : bi->len[0], k->mem ? (int)k->mem : RW,
		      k->how ? k->how : MAP_SHARED, (k->a == V_BASE ? base : bi->off[0]) + k->b);
}

static int poll_result(struct ctx *c, short ev, short want)
{
	struct pollfd p = { .fd = c->fd[0], .events = ev };
	int r = poll(&p, 1, 0);

	if (r < 0)
		return errno;
	snprintf(c->got_str, sizeof(c->got_str), "revents=%#x", p.revents);
	if ((p.revents & want) == want)
		return 0;
	return p.revents ? EPROTO : ENOMSG;	/* other flags; no flag at all */
}

/* The setup and the call of case @m: the errno of the call, R_SETUP or R_SKIP. */
static int run_call(struct ctx *c, const struct mcase *m)
{
	const struct call *k = &m->call;
	const struct dev *d = c->d;
	u32 t = k->type == T_BAD ? bad_type(d) : k->type == T_ZERO ? 0 : d->type;
	struct v4l2_format f = d->fmt;
	struct bufinfo bi;
	char buf[64] = { 0 };
	unsigned int p;
	int fd;
	bool wr;

	if (c_setup(c, m->setup))
		return R_SETUP;
	fd = c->fd[k->slot];
	switch (k->op) {
	case OP_FN:
		return k->fn(c);
	case OP_REQBUFS:
		return do_reqbufs(fd, t, k->mem, k->n, NULL);
	case OP_CREATE:
		f.type = t;
		if (k->how == F_HALF && d->mplane)
			f.fmt.pix_mp.plane_fmt[0].sizeimage /= 2;
		else if (k->how == F_HALF)
			f.fmt.pix.sizeimage /= 2;
		if (k->how == F_ZERO && d->mplane)
			f.fmt.pix_mp.plane_fmt[0].sizeimage = 0;
		else if (k->how == F_ZERO)
			f.fmt.pix.sizeimage = 0;
		for (p = d->nplanes; k->how == F_NPMAX && p < MAXP; p++)
			f.fmt.pix_mp.plane_fmt[p].sizeimage = PAGE;
		if (k->how == F_NP0 || k->how == F_NPMAX)	/* num_planes is a u8 */
			f.fmt.pix_mp.num_planes = k->how == F_NP0 ? 0 : MAXP + 1;
		return create_bufs(c, k->slot, k->mem, k->n, NULL, &f);
	case OP_QUERYBUF:
		return do_querybuf(fd, t, M_MMAP, val(c, k->a), &bi, NULL);
	case OP_QBUF:
	case OP_PREPARE:
	case OP_QUERYBUF_H:
		return buf_op(c, k, t);
	case OP_DQBUF:
		return dqbuf(fd, t);
	case OP_EXPBUF:
		return expbuf_call(c, t, val(c, k->a), val(c, k->b), k->mem);
	case OP_STREAMON:
		return stream(fd, VIDIOC_STREAMON, t);
	case OP_STREAMOFF:
		return stream(fd, VIDIOC_STREAMOFF, t);
	case OP_REMOVE:
		return remove_bufs(fd, t, val(c, k->a), k->n);
	case OP_RQUEUE:
		return -vb2_request_queue(c->req[0]);
	case OP_RREINIT:	/* the queue does not stream: the request cannot complete */
		return -vb2_request_reinit(c->req[0]);
	case OP_MMAP:
		return mmap_op(c);
	case OP_IO:
		wr = k->how == IO_WRITE || (k->how == IO_DIR && d->output);
		return (wr ? write(fd, buf, sizeof(buf)) : read(fd, buf, sizeof(buf))) < 0 ?
		       errno : 0;
	case OP_POLL:
		return poll_result(c, k->a, k->b);
	}
	return R_SETUP;
}

/* The cases that are more than one call. Each returns the errno of the call under test. */

static int reqbufs_zero_streaming(struct ctx *c)
{
	struct bufinfo bi;
	int r = do_reqbufs(c->fd[0], c->d->type, M_MMAP, 0, NULL);

	/* The doc's implicit STREAMOFF: no buffers left to query. */
	if (!r && !do_querybuf(c->fd[0], c->d->type, M_MMAP, 0, &bi, NULL))
		post_fail(c, "buffer 0 still exists after REQBUFS(0)");
	return r;
}

static int reqbufs_zero_while_mapped(struct ctx *c)
{
	int r = do_reqbufs(c->fd[0], c->d->type, M_MMAP, 0, NULL);

	/* An orphaned buffer stays valid until it is unmapped. */
	if (!r && !touch_ok((unsigned char *)c->map0 + c->bi[0].len[0] - 1))
		post_fail(c, "the orphaned mapping faults");
	return r;
}

static int reqbufs_zero_while_exported(struct ctx *c)
{
	struct v4l2_exportbuffer eb = { .type = c->d->type, .index = 0, .flags = O_RDWR };
	void *p;
	int r = -vb2_ioctl(c->fd[0], VIDIOC_EXPBUF, &eb);

	SETUP(step(c, "EXPBUF", r) || c_keep_dfd(c, eb.fd) < 0);
	r = do_reqbufs(c->fd[0], c->d->type, M_MMAP, 0, NULL);
	if (r)
		return r;
	p = c_track(c, mmap(NULL, c->bi[0].len[0], PROT_READ, MAP_SHARED, eb.fd, 0),
		    c->bi[0].len[0]);
	if (p == MAP_FAILED)
		post_fail(c, "mmap of the exported dma-buf after REQBUFS(0): %s",
			  strerror(errno));
	else if (!touch_ok(p))
		post_fail(c, "the orphaned dma-buf mapping faults");
	return r;
}

static int create_streaming(struct ctx *c)
{
	u32 idx = 0;
	int r = create_bufs(c, 0, M_MMAP, 1, &idx, NULL);

	if (!r && idx != c->count)
		post_fail(c, "CREATE_BUFS gave index %u, expected %u", idx, c->count);
	return r;
}

/*
 * Single-planar output, DMABUF with length 0 ("the whole dma-buf", as coda's and
 * rkisp1-params' users queue it) and a payload of sizeimage (+ k->n), from dma-bufs of
 * sizeimage: QBUF's errno for buffer 0. Accepted, buffer 1 is queued the same way (vivid
 * holds on to the last buffer), the queue streams (on mem2mem the capture queue too) and
 * DQBUF gives buffer 0 back with the payload and the dma-buf's size as the length.
 */
static int qbuf_dmabuf_out_length0(struct ctx *c)
{
	u32 size = c->d->sizes[0], bytesused = size + c->k->n, i;
	struct v4l2_plane pl[MAXP];
	struct v4l2_buffer b;
	int fd[2], r = 0;

	if (bytesused > size && size % PAGE)
		SKIP(c, "sizeimage %u is not a multiple of the page size: the dma-buf would "
		     "be larger", size);
	for (i = 0; i < 2; i++) {
		fd[i] = c_dmabuf(c, size);
		SETUP(fd[i] < 0);
	}
	SETUP(c_alloc(c, 0, M_DMABUF, 2));
	for (i = 0; i < 2 && !r; i++) {
		prep_buf(c, &b, pl, i, M_DMABUF);
		b.m.fd = fd[i];
		b.length = 0;
		b.bytesused = bytesused;
		r = -vb2_ioctl(c->fd[0], VIDIOC_QBUF, &b);
		if (r && i)
			post_fail(c, "QBUF of buffer 1 the same way: %s", errname(r));
	}
	if (r || c->post_fail)
		return c->post_fail ? 0 : r;
	if (stream(c->fd[0], VIDIOC_STREAMON, c->d->type))
		post_fail(c, "STREAMON: %s", errname(errno));
	else if (c->d->m2m && c_m2m_feed(c))	/* a mem2mem job needs a capture buffer */
		post_fail(c, "the capture queue did not start");
	else if (!(wait_ev(c->fd[0], POLLOUT, WAIT_MS) & POLLOUT))
		post_fail(c, "no buffer came back within %d ms", WAIT_MS);
	if (c->post_fail)
		return 0;
	init_buf(&b, pl, c->d->type, M_DMABUF, 0, 0, NULL);
	r = -vb2_ioctl(c->fd[0], VIDIOC_DQBUF, &b);
	if (r)
		post_fail(c, "DQBUF: %s", errname(r));
	else if (b.index || (b.flags & V4L2_BUF_FLAG_ERROR))
		post_fail(c, "DQBUF: buffer %u, flags %#x", b.index, b.flags);
	else if (b.bytesused != bytesused || b.length != PAGE_ALIGN(size))
		post_fail(c, "DQBUF: bytesused %u length %u, expected %u and %lu", b.bytesused,
			  b.length, bytesused, PAGE_ALIGN(size));
	return 0;
}

/* A capture buffer of a mem2mem device into a real request of its media device. */
static int qbuf_request_m2m_capture(struct ctx *c)
{
	if (!(c->d->other_caps & V4L2_BUF_CAP_SUPPORTS_REQUESTS))
		SKIP(c, "the output queue does not support requests either");
	SETUP(c_request(c, 0));
	return c_qbuf_req(c, 0, c->req[0]);
}

static int req_reinit_unbinds(struct ctx *c)
{
	int r = -vb2_request_reinit(c->req[0]), q;

	SETUP(step(c, "MEDIA_REQUEST_IOC_REINIT", r));
	q = -vb2_request_queue(c->req[0]);
	/* The buffer went back to the application: it can be bound again. */
	if (c_request(c, 1) || (r = c_qbuf_req(c, 0, c->req[1])))
		post_fail(c, "buffer 0 cannot be bound to a new request after REINIT: %s",
			  errname(r));
	return q;
}

static int req_close_unqueued(struct ctx *c)
{
	int r, q;

	close(c->req[0]);
	c->req[0] = -1;
	SETUP(c_request(c, 1));
	r = c_qbuf_req(c, 0, c->req[1]);
	if (r) {
		/* Still bound to the closed request: STREAMOFF must give it back. */
		stream(c->fd[0], VIDIOC_STREAMOFF, c->d->type);
		q = c_qbuf_req(c, 0, c->req[1]);
		if (q)
			post_fail(c, "buffer 0 stays unusable after STREAMOFF: QBUF %s",
				  errname(q));
	}
	return r;
}

/*
 * Two buffers of the queue bound to one request (queued if k->n), then REQBUFS(0): the
 * buffers are freed, the request completes. Returns the errno of REQBUFS(0).
 */
static int req_two_bufs_free(struct ctx *c)
{
	int r = c_qbuf_req(c, 0, c->req[0]);

	if (!r)
		r = c_qbuf_req(c, 1, c->req[0]);
	SETUP(step(c, "binding two buffers to one request", r));
	if (c->k->n) {
		r = -vb2_request_queue(c->req[0]);
		if (r)
			SKIP(c, "the driver refuses a request with two buffers: %s", errname(r));
	}
	r = do_reqbufs(c->fd[0], c->d->type, M_MMAP, 0, NULL);
	if (!r && c->k->n && !(wait_ev(c->req[0], POLLPRI, 0) & POLLPRI))
		post_fail(c, "the request did not complete when its buffers were freed");
	return r;
}

static int req_alloc_unsupported(struct ctx *c)
{
	return c_request(c, 0);
}

static int dqbuf_planes_short(struct ctx *c)
{
	struct v4l2_plane pl[MAXP];
	struct v4l2_buffer b;
	int r, r2;

	prep_buf(c, &b, pl, 0, M_MMAP);
	b.length = 0;
	r = -vb2_ioctl(c->fd[0], VIDIOC_DQBUF, &b);
	/* The done buffer must still be there for a correct DQBUF. */
	r2 = dqbuf(c->fd[0], c->d->type);
	if (!r && r2 == EAGAIN)
		r2 = 0;
	if (r2)
		post_fail(c, "DQBUF after the refused one: %s (buffer lost?)", errname(r2));
	return r;
}

static int streamoff_not_streaming(struct ctx *c)
{
	int r = stream(c->fd[0], VIDIOC_STREAMOFF, c->d->type);

	/* The queued buffer returned to its state after REQBUFS: it can be queued again. */
	if (!r && c_qbuf(c, 0, 0))
		post_fail(c, "buffer 0 could not be queued again after STREAMOFF");
	return r;
}

/* REMOVE_BUFS of @count from @index that must fail without removing buffer @check. */
static int remove_none(struct ctx *c, u32 index, u32 count, u32 check)
{
	struct bufinfo bi;
	int r = remove_bufs(c->fd[0], c->d->type, index, count);

	if (r && do_querybuf(c->fd[0], c->d->type, M_MMAP, check, &bi, NULL))
		post_fail(c, "buffer %u was removed although the call failed", check);
	return r;
}

static int remove_queued(struct ctx *c)
{
	SETUP(step(c, "QBUF", c_qbuf(c, 0, 1)));
	return remove_none(c, 0, 3, 0);
}

static int remove_partly_out_of_range(struct ctx *c)
{
	return remove_none(c, c->count - 1, 2, c->count - 1);
}

static int remove_then_create(struct ctx *c)
{
	u32 idx = 99;
	int r = create_bufs(c, 0, M_MMAP, 1, &idx, NULL);

	if (!r && idx != 1)
		post_fail(c, "CREATE_BUFS after removing buffer 1 gave index %u", idx);
	return r;
}

/* Is @off the m.offset of a plane of the buffers of fd[0]? */
static bool is_plane_offset(const struct ctx *c, u32 off)
{
	unsigned int i, p;

	for (i = 0; i < c->count; i++)
		for (p = 0; p < c->nplanes; p++)
			if (c->bi[i].off[p] == off)
				return true;
	return false;
}

static int mmap_offset_inside(struct ctx *c)
{
	u32 off, end = c->bi[0].off[0] + c->bi[0].len[0];

	/* A page inside plane 0 of buffer 0 that is no plane's offset. */
	for (off = c->bi[0].off[0] + PAGE; off < end; off += PAGE)
		if (!is_plane_offset(c, off))
			return c_mmap(c, PAGE, RW, MAP_SHARED, off);
	SKIP(c, "every page offset inside plane 0 is another plane's");
}

static int munmap_unaligned(struct ctx *c)
{
	return munmap((unsigned char *)c->map0 + 1, PAGE) ? errno : 0;
}

static int munmap_partial(struct ctx *c)
{
	size_t len = PAGE_ALIGN(c->bi[0].len[0]);
	unsigned char *p;
	int r;

	if (len < 2 * PAGE)
		SKIP(c, "plane 0 is not larger than a page");
	p = mmap(NULL, len, RW, MAP_SHARED, c->fd[0], c->bi[0].off[0]);
	SETUP(step(c, "mmap", p == MAP_FAILED ? errno : 0));
	/* Unmap the first page, keep the rest (tracked for the cleanup) and use it. */
	r = munmap(p, PAGE) ? errno : 0;
	c_track(c, p + PAGE, len - PAGE);
	if (r)
		return r;
	if (!touch_ok(p + len - 1))
		post_fail(c, "the rest of the mapping faults");
	else if (do_reqbufs(c->fd[0], c->d->type, M_MMAP, 0, NULL))
		post_fail(c, "REQBUFS(0) with a partial mapping failed");
	else if (!touch_ok(p + len - 1))
		post_fail(c, "the rest of the mapping faults after REQBUFS(0)");
	return r;
}

/* read() or write() of an inaccessible buffer; the next one, of a good buffer, works. */
static int io_bad_buffer(struct ctx *c)
{
	size_t len = c->d->sizes[0];
	void *none = c_anon(c, len, PROT_NONE);
	unsigned char *good = c_anon(c, len, RW);
	bool wr = c->d->output;
	ssize_t n;
	int r;

	SETUP(!none || !good);
	n = wr ? write(c->fd[0], none, len) : read(c->fd[0], none, len);
	r = n < 0 ? errno : 0;
	/* "the next read will start at the beginning of a new frame" (func-read.rst) */
	n = wr ? write(c->fd[0], good, len) : read(c->fd[0], good, len);
	if (n <= 0)
		post_fail(c, "the next %s failed: %s", wr ? "write()" : "read()",
			  n < 0 ? errname(errno) : wr ? "0 bytes" : "EOF");
	return r;
}

/*
 * read()/write() of 0 bytes: documented to return 0 and start nothing, so that REQBUFS
 * still works. 6.12 starts the emulation (a non-blocking read() then says EAGAIN), and
 * REQBUFS gets EBUSY. Returns the errno of that REQBUFS, or of the call when it failed
 * otherwise.
 */
static int io_count0(struct ctx *c)
{
	char buf[16] = { 0 };
	ssize_t n;
	int e = 0, r;

	n = c->d->output ? write(c->fd[0], buf, 0) : read(c->fd[0], buf, 0);
	if (n < 0 && errno != EAGAIN)
		return errno;
	if (n < 0)
		e = errno;
	else if (n)
		return EOVERFLOW;
	r = do_reqbufs(c->fd[0], c->d->type, M_MMAP, 2, NULL);
	snprintf(c->got_str, sizeof(c->got_str), "%s,then-REQBUFS-%s", errname(e),
		 errname(r));
	return r;
}

/* Whole frames through read() or write() (blocking): the control case. */
static int io_frames(struct ctx *c)
{
	size_t len = c->d->sizes[0];
	unsigned char *buf = c_anon(c, len, RW);
	int i;

	SETUP(!buf);
	for (i = 0; i < 3; i++) {
		ssize_t n = c->d->output ? write(c->fd[0], buf, len) : read(c->fd[0], buf, len);

		if (n < 0)
			return errno;
		if ((size_t)n != len) {
			snprintf(c->got_str, sizeof(c->got_str), "short-%zd", n);
			return EOVERFLOW;
		}
	}
	return 0;
}

/* The table */

#define GEN	"gen-errors.rst"
#define QBUF	"vidioc-qbuf.rst"
#define USERPTR_612	"6.12: EFAULT where the pages cannot be pinned (vmalloc, " \
			"dma-contig); dma-sg reports every failure to pin or map user memory " \
			"as ENOMEM"
#define WRITE_612	"6.12's write() emulation queues vivid's output buffers without " \
			"their payload and vivid refuses them (EINVAL); a deliberate " \
			"difference, Documentation/driver-contract.rst W6"

static const struct mcase cases[] = {
	/* REQBUFS */
	{ "reqbufs-bad-type", EINVAL, 0, 0, S_OPEN,
	  { OP_REQBUFS, .type = T_BAD, .mem = M_MMAP, .n = 2 },
	  "vidioc-reqbufs.rst: EINVAL, the buffer type is not supported", NULL },
	{ "reqbufs-type-zero", EINVAL, 0, 0, S_OPEN,
	  { OP_REQBUFS, .type = T_ZERO, .mem = M_MMAP, .n = 2 },
	  "vidioc-reqbufs.rst: EINVAL, the buffer type is not supported", NULL },
	{ "reqbufs-memory-zero", EINVAL, 0, 0, S_OPEN, { OP_REQBUFS, .mem = 0, .n = 2 },
	  "vidioc-reqbufs.rst: EINVAL, the I/O method is not supported", NULL },
	{ "reqbufs-memory-overlay", EINVAL, 0, 0, S_OPEN,
	  { OP_REQBUFS, .mem = V4L2_MEMORY_OVERLAY, .n = 2 },
	  "vidioc-reqbufs.rst: EINVAL, the I/O method is not supported", NULL },
	{ "reqbufs-memory-huge", EINVAL, 0, 0, S_OPEN, { OP_REQBUFS, .mem = 0x80000001, .n = 2 },
	  "vidioc-reqbufs.rst: EINVAL, the I/O method is not supported", NULL },
	{ "reqbufs-userptr-unsupported", EINVAL, 0, N_NOUP, S_OPEN,
	  { OP_REQBUFS, .mem = M_USERPTR, .n = 2 },
	  "vidioc-reqbufs.rst: EINVAL, the I/O method is not supported", NULL },
	{ "reqbufs-streaming", EBUSY, 0, 0, S_MMAP2 | S_STREAM,
	  { OP_REQBUFS, .mem = M_MMAP, .n = 3 },
	  GEN ": EBUSY, while streaming an ioctl tried to change something that affects the "
	  "stream; buffer.rst: stop the stream before freeing/reallocating", NULL },
	{ "reqbufs-zero-streaming", EBUSY, 0, 0, S_MMAP2 | S_STREAM,
	  { .fn = reqbufs_zero_streaming },
	  "vidioc-reqbufs.rst: count 0 frees all buffers after an implicit VIDIOC_STREAMOFF; "
	  "buffer.rst/gen-errors.rst suggest EBUSY while streaming",
	  "6.12 refuses REQBUFS while streaming, count 0 included: EBUSY" },
	{ "reqbufs-other-fd", EBUSY, 0, N_SOLO, S_MMAP2 | S_FD1,
	  { OP_REQBUFS, .slot = 1, .mem = M_MMAP, .n = 2 },
	  "open.rst (Multiple Opens): other file handles may not allocate buffers, EBUSY", NULL },
	{ "reqbufs-fileio-other-fd", EBUSY, 0, N_SOLO | N_RW, S_FILEIO | S_FD1,
	  { OP_REQBUFS, .slot = 1, .mem = M_MMAP, .n = 2 },
	  "open.rst: read()/write() makes the file handle the owner; others get EBUSY", NULL },
	{ "reqbufs-fileio-same-fd", EBUSY, 0, N_SOLO | N_RW, S_FILEIO,
	  { OP_REQBUFS, .mem = M_MMAP, .n = 2 },
	  "vidioc-prepare-buf.rst/vidioc-remove-bufs.rst: EBUSY, file I/O is in progress",
	  "vidioc-reqbufs.rst itself is silent; gen-errors.rst EBUSY" },
	{ "reqbufs-zero-while-mapped", 0, 0, N_ORPHAN, S_MMAP2 | S_MAP0,
	  { .fn = reqbufs_zero_while_mapped },
	  "vidioc-reqbufs.rst: with SUPPORTS_ORPHANED_BUFS mapped buffers are orphaned, freed "
	  "at munmap", NULL },
	{ "reqbufs-zero-while-exported", 0, 0, N_ORPHAN, S_MMAP2,
	  { .fn = reqbufs_zero_while_exported },
	  "vidioc-reqbufs.rst: with SUPPORTS_ORPHANED_BUFS exported buffers are orphaned, "
	  "freed when the dma-buf fd is closed", NULL },

	/* CREATE_BUFS */
	{ "create-bad-type", EINVAL, 0, 0, S_OPEN,
	  { OP_CREATE, .type = T_BAD, .mem = M_MMAP, .n = 1 },
	  "vidioc-create-bufs.rst: EINVAL, format.type is not valid", NULL },
	{ "create-bad-memory", EINVAL, 0, 0, S_OPEN, { OP_CREATE, .mem = 0, .n = 1 },
	  "vidioc-create-bufs.rst: EINVAL, the I/O method is not valid", NULL },
	{ "create-other-memory", EINVAL, 0, 0, S_MMAP2, { OP_CREATE, .mem = M_DMABUF, .n = 1 },
	  "vidioc-create-bufs.rst: EINVAL, the I/O method is not valid (DMABUF on a queue "
	  "with MMAP buffers)", "the .rst does not spell out the mixed-memory case" },
	{ "create-count0-other-memory", 0, EINVAL, 0, S_MMAP2,
	  { OP_CREATE, .mem = M_DMABUF, .n = 0 },
	  "vidioc-create-bufs.rst: count 0 only checks that memory and format.type are valid",
	  "unclear whether a memory other than the existing buffers' is 'invalid'" },
	{ "create-too-small", EINVAL, 0, 0, S_OPEN,
	  { OP_CREATE, .mem = M_MMAP, .n = 1, .how = F_HALF },
	  "vidioc-create-bufs.rst: EINVAL, sizeimage below what the format needs is usually "
	  "an error", "driver's choice ('usually'); every driver here refuses it" },
	{ "create-sizeimage-zero", EINVAL, 0, 0, S_OPEN,
	  { OP_CREATE, .mem = M_MMAP, .n = 1, .how = F_ZERO },
	  "vidioc-create-bufs.rst: EINVAL, the format is not valid", NULL },
	{ "create-zero-planes", EINVAL, 0, N_MP, S_OPEN,
	  { OP_CREATE, .mem = M_MMAP, .n = 1, .how = F_NP0 },
	  "vidioc-create-bufs.rst: EINVAL, the format is not valid (num_planes 0)", NULL },
	{ "create-too-many-planes", EINVAL, 0, N_MP, S_OPEN,
	  { OP_CREATE, .mem = M_MMAP, .n = 1, .how = F_NPMAX },
	  "vidioc-create-bufs.rst: EINVAL, the format is not valid (num_planes > "
	  "VIDEO_MAX_PLANES)", NULL },
	{ "create-count0-other-fd", 0, 0, N_SOLO, S_MMAP2 | S_FD1,
	  { OP_CREATE, .slot = 1, .mem = M_MMAP, .n = 0 },
	  "vidioc-create-bufs.rst: with count 0 it never returns EBUSY", NULL },
	{ "create-other-fd", EBUSY, 0, N_SOLO, S_MMAP2 | S_FD1,
	  { OP_CREATE, .slot = 1, .mem = M_MMAP, .n = 1 },
	  "open.rst (Multiple Opens): other file handles may not allocate buffers, EBUSY", NULL },
	{ "create-streaming", 0, 0, 0, S_MMAP2 | S_STREAM, { .fn = create_streaming },
	  "vidioc-create-bufs.rst: usable 'in addition to' REQBUFS; no EBUSY documented",
	  "the .rst does not mention streaming" },
	{ "create-fileio-other-fd", EBUSY, 0, N_SOLO | N_RW, S_FILEIO | S_FD1,
	  { OP_CREATE, .slot = 1, .mem = M_MMAP, .n = 1 },
	  "open.rst: read()/write() makes the file handle the owner; others get EBUSY", NULL },

	/* QUERYBUF */
	{ "querybuf-bad-type", EINVAL, 0, 0, S_MMAP2, { OP_QUERYBUF, .type = T_BAD },
	  "vidioc-querybuf.rst: EINVAL, the buffer type is not supported", NULL },
	{ "querybuf-index-oob", EINVAL, 0, 0, S_MMAP2, { OP_QUERYBUF, .a = V_COUNT },
	  "vidioc-querybuf.rst: EINVAL, the index is out of bounds", NULL },
	{ "querybuf-index-huge", EINVAL, 0, 0, S_MMAP2, { OP_QUERYBUF, .a = 0xffffffff },
	  "vidioc-querybuf.rst: EINVAL, the index is out of bounds", NULL },
	{ "querybuf-no-buffers", EINVAL, 0, 0, S_OPEN, { .op = OP_QUERYBUF },
	  "vidioc-querybuf.rst: EINVAL, the index is out of bounds (no buffers)", NULL },
	{ "querybuf-removed", EINVAL, 0, N_RM, S_MMAP3 | S_RM1, { OP_QUERYBUF, .a = 1 },
	  "vidioc-querybuf.rst: EINVAL, the index is out of bounds (a removed buffer)",
	  "the .rst predates REMOVE_BUFS; 'valid index' read as 'a buffer exists'" },
	{ "querybuf-planes-zero", EINVAL, 0, N_MP, S_MMAP2, { OP_QUERYBUF_H, .how = H_LEN0 },
	  "vidioc-querybuf.rst: length must be the number of elements of m.planes; "
	  GEN " EINVAL", NULL },
	{ "querybuf-other-fd", 0, 0, N_SOLO, S_MMAP2 | S_FD1, { OP_QUERYBUF, .slot = 1 },
	  "vidioc-querybuf.rst: usable at any time after buffers are allocated; open.rst "
	  "restricts only allocating and streaming", NULL },

	/* QBUF */
	{ "qbuf-bad-type", EINVAL, 0, 0, S_MMAP2, { OP_QBUF, .type = T_BAD },
	  QBUF ": EINVAL, the buffer type is not supported", NULL },
	{ "qbuf-index-oob", EINVAL, 0, 0, S_MMAP2, { OP_QBUF, .a = V_COUNT },
	  QBUF ": EINVAL, the index is out of bounds", NULL },
	{ "qbuf-index-huge", EINVAL, 0, 0, S_MMAP2, { OP_QBUF, .a = 0x7fffffff },
	  QBUF ": EINVAL, the index is out of bounds", NULL },
	{ "qbuf-no-buffers", EINVAL, 0, 0, S_OPEN, { .op = OP_QBUF },
	  QBUF ": EINVAL, no buffers have been allocated yet", NULL },
	{ "qbuf-removed", EINVAL, 0, N_RM, S_MMAP3 | S_RM1, { OP_QBUF, .a = 1 },
	  QBUF ": EINVAL, the index is out of bounds (a removed buffer)", NULL },
	{ "qbuf-wrong-memory", EINVAL, 0, 0, S_MMAP2, { OP_QBUF, .how = H_WRONGMEM },
	  QBUF ": EINVAL (memory differs from the buffers'; m.fd invalid)", NULL },
	{ "qbuf-already-queued", EINVAL, 0, 0, S_MMAP2 | S_QBUF0, { .op = OP_QBUF },
	  QBUF ": the driver sets QUEUED 'or it returns an EINVAL error code'", NULL },
	{ "qbuf-queued-after-prepare", EINVAL, 0, 0, S_MMAP2 | S_PREP0 | S_QBUF0, { .op = OP_QBUF },
	  QBUF ": EINVAL (a prepared buffer queued, then queued again)", NULL },
	{ "qbuf-planes-zero", EINVAL, 0, N_MP, S_MMAP2, { OP_QBUF, .how = H_LEN0 },
	  QBUF ": length must be the number of elements in m.planes; EINVAL", NULL },
	{ "qbuf-planes-zero-badptr", EINVAL, 0, N_MP, S_MMAP2, { OP_QBUF, .how = H_LEN0_BADPTR },
	  QBUF ": length 0 is an invalid plane count, EINVAL (m.planes must not be read)",
	  NULL },
	{ "qbuf-planes-short", EINVAL, 0, N_MPN, S_MMAP2, { OP_QBUF, .how = H_SHORT },
	  QBUF ": EINVAL, fewer planes than the format has", NULL },
	{ "qbuf-planes-too-many", EINVAL, 0, N_MP, S_MMAP2, { OP_QBUF, .how = H_TOO_MANY },
	  QBUF ": EINVAL, length > VIDEO_MAX_PLANES", NULL },
	{ "qbuf-planes-null", EFAULT, 0, N_MP, S_MMAP2, { OP_QBUF, .how = H_NULL },
	  GEN ": EFAULT, failure copying from user space (m.planes NULL)", NULL },
	{ "qbuf-planes-badptr", EFAULT, 0, N_MP, S_MMAP2, { OP_QBUF, .how = H_BADPTR },
	  GEN ": EFAULT, failure copying from user space (m.planes unreadable)", NULL },
	{ "qbuf-userptr-null", EFAULT, ENOMEM, N_UP, S_UP, { OP_QBUF, .how = U_NULL },
	  QBUF ": EINVAL, the userptr is invalid; gen-errors.rst EFAULT 'invalid pointer "
	  "reference' fits too", USERPTR_612 },
	{ "qbuf-userptr-short", EINVAL, 0, N_UP, S_UP, { OP_QBUF, .how = U_SHORT },
	  QBUF ": EINVAL, the length is invalid (too short for the format)", NULL },
	{ "qbuf-userptr-unaligned", 0, 0, N_UP, S_UP, { OP_QBUF, .how = U_UNALIGNED },
	  "userp.rst: no alignment required of a user pointer",
	  "doc silent; a driver may add limits" },
	{ "qbuf-userptr-readonly", EFAULT, ENOMEM, N_UP | N_CAP, S_UP,
	  { OP_QBUF, .how = U_READONLY },
	  QBUF ": EINVAL, the userptr is invalid (read-only memory for a capture queue); "
	  "gen-errors.rst EFAULT fits too", USERPTR_612 },
	{ "qbuf-userptr-unmapped", EFAULT, ENOMEM, N_UP, S_UP, { OP_QBUF, .how = U_UNMAPPED },
	  QBUF ": EINVAL, the userptr is invalid (PROT_NONE memory); gen-errors.rst EFAULT "
	  "fits too", USERPTR_612 },
	{ "qbuf-userptr-kernel", EFAULT, ENOMEM, N_UP, S_UP, { OP_QBUF, .how = U_KERNEL },
	  QBUF ": EINVAL, the userptr is invalid (a kernel address); gen-errors.rst EFAULT "
	  "fits too", USERPTR_612 },
	{ "qbuf-dmabuf-fd-neg", EINVAL, 0, 0, S_DMA, { OP_QBUF, .how = D_NEG },
	  QBUF ": EINVAL, m.fd was an invalid DMABUF file descriptor", NULL },
	{ "qbuf-dmabuf-not-dmabuf", EINVAL, 0, 0, S_DMA | S_FD1, { OP_QBUF, .how = D_NOT_DMABUF },
	  QBUF ": EINVAL, m.fd was an invalid DMABUF file descriptor (a video node)", NULL },
	{ "qbuf-dmabuf-too-small", EINVAL, 0, 0, S_DMA, { OP_QBUF, .how = D_SMALL },
	  QBUF ": EINVAL, the length is invalid (dma-buf smaller than the plane)", NULL },
	{ "qbuf-dmabuf-length-short", EINVAL, 0, 0, S_DMA, { OP_QBUF, .how = D_SHORT },
	  QBUF ": EINVAL, the length is invalid (length below the plane size)", NULL },
	{ "qbuf-dmabuf-valid", 0, 0, N_UP, S_DMA, { OP_QBUF, .how = D_VALID },
	  "dmabuf.rst: a dma-buf as large as the plane is accepted (control case)",
	  "run where USERPTR works, i.e. not on dma-contig, which needs contiguous memory" },
	{ "qbuf-dmabuf-payload-gt-format", 0, 0, N_UP | N_OUT, S_DMA, { OP_QBUF, .how = D_BIG },
	  "buffer.rst: bytesused <= length, and length of a DMABUF plane is the application's "
	  "(a dma-buf larger than the format, filled)",
	  "6.12 refuses it on single-planar queues (EINVAL): it checks bytesused against the "
	  "plane's length before the import; a deliberate difference, "
	  "Documentation/driver-contract.rst O2" },
	{ "qbuf-dmabuf-out-length0", 0, 0, N_UP | N_SP | N_OUT, 0,
	  { .fn = qbuf_dmabuf_out_length0 },
	  QBUF ", dmabuf.rst: applications set m.fd, length is left 0 (dmabuf.rst's "
	  "example); a payload of sizeimage in a dma-buf of sizeimage is accepted and "
	  "streams, DQBUF gives the dma-buf's size as length", NULL },
	{ "qbuf-dmabuf-out-length0-over", EINVAL, 0, N_UP | N_SP | N_OUT, 0,
	  { .fn = qbuf_dmabuf_out_length0, .n = 1 },
	  "buffer.rst: bytesused <= length; " QBUF " EINVAL (length 0, bytesused beyond a "
	  "dma-buf of sizeimage)", NULL },
	{ "qbuf-bytesused-gt-length", EINVAL, 0, N_OUT, S_MMAP2, { OP_QBUF, .how = H_BYTESUSED },
	  "buffer.rst: bytesused <= length; " QBUF " EINVAL", NULL },
	{ "qbuf-data-offset-ge-bytesused", EINVAL, 0, N_MP | N_OUT, S_MMAP2,
	  { OP_QBUF, .how = H_DATAOFF },
	  "buffer.rst: data_offset is included in bytesused; " QBUF " EINVAL", NULL },
	{ "qbuf-other-fd", EBUSY, 0, N_SOLO, S_MMAP2 | S_FD1, { OP_QBUF, .slot = 1 },
	  "open.rst (Multiple Opens): only the owner may stream; EBUSY",
	  "open.rst names allocating and starting/stopping, not QBUF itself" },
	{ "qbuf-request-not-request", EINVAL, 0, N_REQ, S_MMAP2, { OP_QBUF, .how = H_REQ_SELF },
	  QBUF ": EINVAL, request_fd is not a valid request", NULL },
	{ "qbuf-request-fd-neg", EINVAL, 0, N_REQ, S_MMAP2, { OP_QBUF, .how = H_REQ_NEG },
	  QBUF ": EINVAL, request_fd is not a valid request", NULL },
	{ "qbuf-request-closed", EINVAL, 0, N_REQ, S_MMAP2 | S_REQ,
	  { OP_QBUF, .how = H_REQ_CLOSED },
	  QBUF ": EINVAL, request_fd is not a valid request (closed)", NULL },
	{ "qbuf-request-unsupported", EBADR, 0, N_NOREQ | N_SOLO, S_MMAP2,
	  { OP_QBUF, .how = H_REQ_NEG },
	  QBUF ": EBADR, REQUEST_FD set but the device does not support requests", NULL },
	{ "qbuf-request-m2m-capture", EPERM, 0, N_NOREQ | N_CAP | N_M2M, S_MMAP2,
	  { .fn = qbuf_request_m2m_capture },
	  QBUF "/request-api.rst: EBADR, a request for a capture buffer of a mem2mem device",
	  "6.12's v4l2-mem2mem refuses it with EPERM before videobuf2 sees it" },
	{ "qbuf-mix-direct-then-request", EBUSY, 0, N_REQ, S_MMAP2 | S_QBUF0 | S_REQ,
	  { OP_QBUF, .a = 1, .how = H_REQ },
	  QBUF ": EBUSY, the first buffer was queued directly, now via a request", NULL },
	{ "qbuf-mix-request-then-direct", EBUSY, 0, N_REQ, S_MMAP2 | S_RQBUF0, { OP_QBUF, .a = 1 },
	  QBUF ": EBUSY, the first buffer was queued via a request, now directly", NULL },
	{ "qbuf-direct-after-request-streamoff", 0, 0, N_REQ, S_MMAP2 | S_RQBUF0 | S_OFF,
	  { OP_QBUF, .a = 1 },
	  QBUF ": after STREAMOFF the mixing check is reset", NULL },
	{ "qbuf-into-queued-request", EBUSY, 0, N_REQ, S_MMAP2 | S_RQBUF0 | S_RQUEUE,
	  { OP_QBUF, .a = 1, .how = H_REQ },
	  "request-api.rst: a queued request cannot be modified", "errno not documented" },

	/* Requests */
	{ "req-queue-empty", ENOENT, 0, N_REQ, S_MMAP2 | S_REQ, { .op = OP_RQUEUE },
	  "media-request-ioc-queue.rst: ENOENT, the request contains no buffers", NULL },
	{ "req-queue-twice", EBUSY, 0, N_REQ, S_MMAP2 | S_RQBUF0 | S_RQUEUE, { .op = OP_RQUEUE },
	  "media-request-ioc-queue.rst: EBUSY, the request was already queued", NULL },
	{ "req-reinit-queued", EBUSY, 0, N_REQ, S_MMAP2 | S_RQBUF0 | S_RQUEUE, { .op = OP_RREINIT },
	  "media-request-ioc-reinit.rst: EBUSY, queued but not completed", NULL },
	{ "req-reinit-unbinds", ENOENT, 0, N_REQ, S_MMAP2 | S_RQBUF0, { .fn = req_reinit_unbinds },
	  "media-request-ioc-reinit.rst: re-initializing clears the request; "
	  "media-request-ioc-queue.rst ENOENT for an empty one", NULL },
	{ "req-close-unqueued", EINVAL, 0, N_REQ, S_MMAP2 | S_RQBUF0, { .fn = req_close_unqueued },
	  "request-func-close.rst: closing frees the request (and gives its buffer back)",
	  "unclear: the request is freed once closed 'and the driver has completed' it; what "
	  "becomes of a buffer bound to a never-queued request is not said. 6.12 keeps it "
	  "bound until STREAMOFF (QBUF into another request: EINVAL), then it is usable" },
	{ "req-two-bufs-unqueued-free", 0, 0, N_REQ, S_MMAP2 | S_REQ, { .fn = req_two_bufs_free },
	  "vidioc-reqbufs.rst: count 0 frees all buffers (two of them bound to one request "
	  "that was not queued)", "the doc says nothing of several buffers of a queue in a "
	  "request" },
	{ "req-two-bufs-queued-free", 0, 0, N_REQ, S_MMAP2 | S_REQ,
	  { .fn = req_two_bufs_free, .n = 1 },
	  "vidioc-reqbufs.rst: count 0 frees all buffers (two of them in one queued "
	  "request, which must complete)", "the doc says nothing of several buffers of a "
	  "queue in a request" },
	{ "req-alloc-unsupported", ENOTTY, 0, N_MEDIA_NOREQ, 0, { .fn = req_alloc_unsupported },
	  "media-ioc-request-alloc.rst: ENOTTY, the driver has no support for requests", NULL },

	/* DQBUF */
	{ "dqbuf-not-streaming", EINVAL, 0, 0, S_MMAP2 | S_QBUF0, { .op = OP_DQBUF },
	  QBUF ": EINVAL (DQBUF of a queue that does not stream)",
	  "the .rst lists no cause for this; EINVAL is what the brief and vb2 use" },
	{ "dqbuf-nonblock-empty", EAGAIN, 0, 0, S_MMAP2 | S_STREAM, { .op = OP_DQBUF },
	  QBUF ": EAGAIN, O_NONBLOCK and no buffer in the outgoing queue", NULL },
	{ "dqbuf-bad-type", EINVAL, 0, 0, S_MMAP2 | S_DONE, { OP_DQBUF, .type = T_BAD },
	  QBUF ": EINVAL, the buffer type is not supported", NULL },
	{ "dqbuf-no-buffers", EINVAL, 0, 0, S_OPEN, { .op = OP_DQBUF },
	  QBUF ": EINVAL, no buffers have been allocated yet", NULL },
	{ "dqbuf-planes-zero", EINVAL, 0, N_MP, S_MMAP2 | S_DONE, { .fn = dqbuf_planes_short },
	  QBUF ": the planes array must be passed in (DQBUF); EINVAL, and the done buffer "
	  "stays", NULL },
	{ "dqbuf-other-fd", EBUSY, 0, N_SOLO, S_MMAP2 | S_DONE | S_FD1, { OP_DQBUF, .slot = 1 },
	  "open.rst (Multiple Opens): only the owner may stream; EBUSY",
	  "open.rst names allocating and starting/stopping, not DQBUF itself" },
	{ "dqbuf-fileio", EBUSY, 0, N_SOLO | N_RW, S_FILEIO, { .op = OP_DQBUF },
	  "vidioc-prepare-buf.rst/vidioc-remove-bufs.rst: EBUSY, file I/O is in progress",
	  "vidioc-qbuf.rst itself is silent" },

	/* PREPARE_BUF */
	{ "prepare-twice", EINVAL, 0, 0, S_MMAP2 | S_PREP0, { .op = OP_PREPARE },
	  "vidioc-prepare-buf.rst: EINVAL (the buffer is already owned by the driver)", NULL },
	{ "prepare-queued", EINVAL, 0, 0, S_MMAP2 | S_QBUF0, { .op = OP_PREPARE },
	  "vidioc-prepare-buf.rst: EINVAL (the buffer is queued)", NULL },
	{ "prepare-bad-type", EINVAL, 0, 0, S_MMAP2, { OP_PREPARE, .type = T_BAD },
	  "vidioc-prepare-buf.rst: EINVAL, the buffer type is not supported", NULL },
	{ "prepare-index-oob", EINVAL, 0, 0, S_MMAP2, { OP_PREPARE, .a = V_COUNT },
	  "vidioc-prepare-buf.rst: EINVAL, the index is out of bounds", NULL },
	{ "prepare-removed", EINVAL, 0, N_RM, S_MMAP3 | S_RM1, { OP_PREPARE, .a = 1 },
	  "vidioc-prepare-buf.rst: EINVAL, the index is out of bounds (a removed buffer)", NULL },
	{ "prepare-userptr-short", EINVAL, 0, N_UP, S_UP, { OP_PREPARE, .how = U_SHORT },
	  "vidioc-prepare-buf.rst: EINVAL, the length is invalid", NULL },
	{ "prepare-request-flag", EINVAL, 0, N_REQ, S_MMAP2 | S_REQ, { OP_PREPARE, .how = H_REQ },
	  "buffer.rst: REQUEST_FD is used by QBUF only and ignored by other ioctls",
	  "buffer.rst also says applications should not set it there; 6.12 refuses "
	  "PREPARE_BUF with V4L2_BUF_FLAG_REQUEST_FD (EINVAL)" },
	{ "prepare-fileio", EBUSY, 0, N_SOLO | N_RW, S_FILEIO, { .op = OP_PREPARE },
	  "vidioc-prepare-buf.rst: EBUSY, file I/O is in progress", NULL },

	/* EXPBUF */
	{ "expbuf-userptr-queue", EINVAL, 0, N_UP, S_UP, { OP_EXPBUF, .mem = O_RDWR },
	  "vidioc-expbuf.rst: EINVAL, the queue is not in MMAP mode", NULL },
	{ "expbuf-dmabuf-queue", EINVAL, 0, 0, S_DMA, { OP_EXPBUF, .mem = O_RDWR },
	  "vidioc-expbuf.rst: EINVAL, the queue is not in MMAP mode", NULL },
	{ "expbuf-bad-plane", EINVAL, 0, 0, S_MMAP2, { OP_EXPBUF, .b = V_NPLANES, .mem = O_RDWR },
	  "vidioc-expbuf.rst: EINVAL, the plane field is invalid", NULL },
	{ "expbuf-bad-flags", EINVAL, 0, 0, S_MMAP2, { OP_EXPBUF, .mem = O_RDWR | O_NONBLOCK },
	  "vidioc-expbuf.rst: EINVAL, flags other than O_CLOEXEC and the access mode", NULL },
	{ "expbuf-bad-type", EINVAL, 0, 0, S_MMAP2, { OP_EXPBUF, .type = T_BAD, .mem = O_RDWR },
	  "vidioc-expbuf.rst: EINVAL, the type field is invalid", NULL },
	{ "expbuf-index-oob", EINVAL, 0, 0, S_MMAP2, { OP_EXPBUF, .a = V_COUNT, .mem = O_RDWR },
	  "vidioc-expbuf.rst: EINVAL, the index field is invalid", NULL },
	{ "expbuf-removed", EINVAL, 0, N_RM, S_MMAP3 | S_RM1, { OP_EXPBUF, .a = 1, .mem = O_RDWR },
	  "vidioc-expbuf.rst: EINVAL, the index field is invalid (a removed buffer)", NULL },
	{ "expbuf-no-buffers", EINVAL, 0, 0, S_OPEN, { OP_EXPBUF, .mem = O_RDWR },
	  "vidioc-expbuf.rst: EINVAL, the queue is not in MMAP mode (no buffers)", NULL },
	{ "expbuf-fileio", EBUSY, EINVAL, N_SOLO | N_RW, S_FILEIO, { OP_EXPBUF, .mem = O_RDWR },
	  GEN ": EBUSY (file I/O owns the buffers)",
	  "vidioc-expbuf.rst lists only EINVAL" },

	/* STREAMON / STREAMOFF */
	{ "streamon-bad-type", EINVAL, 0, 0, S_MMAP2, { OP_STREAMON, .type = T_BAD },
	  "vidioc-streamon.rst: EINVAL, the buffer type is not supported", NULL },
	{ "streamoff-bad-type", EINVAL, 0, 0, S_MMAP2, { OP_STREAMOFF, .type = T_BAD },
	  "vidioc-streamon.rst: EINVAL, the buffer type is not supported", NULL },
	{ "streamon-no-buffers", EINVAL, 0, 0, S_OPEN, { .op = OP_STREAMON },
	  "vidioc-streamon.rst: EINVAL, no buffers have been allocated", NULL },
	{ "streamon-other-fd", EBUSY, 0, N_SOLO, S_MMAP2 | S_FD1, { OP_STREAMON, .slot = 1 },
	  "open.rst (Multiple Opens): others may not start streaming, EBUSY", NULL },
	{ "streamoff-other-fd", EBUSY, 0, N_SOLO, S_MMAP2 | S_STREAM | S_FD1,
	  { OP_STREAMOFF, .slot = 1 },
	  "open.rst (Multiple Opens): others may not stop streaming, EBUSY", NULL },
	{ "streamon-twice", 0, 0, 0, S_MMAP2 | S_STREAM, { .op = OP_STREAMON },
	  "vidioc-streamon.rst: STREAMON while streaming returns 0", NULL },
	{ "streamoff-not-streaming", 0, 0, 0, S_MMAP2 | S_QBUF0, { .fn = streamoff_not_streaming },
	  "vidioc-streamon.rst: STREAMOFF while stopped returns 0 and returns queued buffers",
	  NULL },
	{ "streamon-output-none-queued", 0, 0, N_OUT, S_MMAP2, { .op = OP_STREAMON },
	  "vidioc-streamon.rst: EINVAL, no buffers have been enqueued (output) yet",
	  "6.12 accepts STREAMON and starts the driver once min_queued_buffers are queued" },
	{ "streamon-fileio-other-fd", EBUSY, 0, N_SOLO | N_RW, S_FILEIO | S_FD1,
	  { OP_STREAMON, .slot = 1 },
	  "open.rst: read()/write() makes the file handle the owner; others get EBUSY", NULL },

	/* REMOVE_BUFS */
	{ "remove-queued", EBUSY, 0, N_RM, S_MMAP3, { .fn = remove_queued },
	  "vidioc-remove-bufs.rst: EBUSY, a buffer in the range is not DEQUEUED; nothing "
	  "freed", NULL },
	{ "remove-count-overflow", EINVAL, 0, N_RM, S_MMAP2, { OP_REMOVE, .a = 1, .n = 0xffffffff },
	  "vidioc-remove-bufs.rst: EINVAL, buffers of the range do not exist (index + count "
	  "wraps)", NULL },
	{ "remove-out-of-range", EINVAL, 0, N_RM, S_MMAP2, { OP_REMOVE, .a = V_COUNT, .n = 1 },
	  "vidioc-remove-bufs.rst: EINVAL, buffers of the range do not exist", NULL },
	{ "remove-partly-out-of-range", EINVAL, 0, N_RM, S_MMAP2,
	  { .fn = remove_partly_out_of_range },
	  "vidioc-remove-bufs.rst: EINVAL, one of the range does not exist; nothing freed",
	  NULL },
	{ "remove-bad-type", EINVAL, 0, N_RM, S_MMAP2, { OP_REMOVE, .type = T_BAD, .n = 1 },
	  "vidioc-remove-bufs.rst: EINVAL, the buffer type is not valid", NULL },
	{ "remove-count0", 0, 0, N_RM, S_MMAP2, { OP_REMOVE, .a = 0x7fffffff, .n = 0 },
	  "vidioc-remove-bufs.rst: count 0 does nothing and returns 0", NULL },
	{ "remove-count0-bad-type", EINVAL, 0, N_RM, S_MMAP2, { OP_REMOVE, .type = T_BAD, .n = 0 },
	  "vidioc-remove-bufs.rst: the type is always checked, even with count 0", NULL },
	{ "remove-hole", EINVAL, 0, N_RM, S_MMAP3 | S_RM1, { OP_REMOVE, .n = 3 },
	  "vidioc-remove-bufs.rst: EINVAL, one of the range was removed before", NULL },
	{ "remove-no-buffers", EINVAL, 0, N_RM, S_OPEN, { OP_REMOVE, .n = 1 },
	  "vidioc-remove-bufs.rst: EINVAL, the buffers do not exist", NULL },
	{ "remove-fileio", EBUSY, 0, N_RM | N_SOLO | N_RW, S_FILEIO, { OP_REMOVE, .n = 1 },
	  "vidioc-remove-bufs.rst: EBUSY, file I/O is in progress", NULL },
	{ "remove-other-fd", EBUSY, 0, N_RM | N_SOLO, S_MMAP2 | S_FD1,
	  { OP_REMOVE, .slot = 1, .n = 1 },
	  "open.rst (Multiple Opens): only the owner changes the buffers; EBUSY",
	  "vidioc-remove-bufs.rst does not mention ownership" },
	{ "remove-then-create", 0, 0, N_RM, S_MMAP3 | S_RM1, { .fn = remove_then_create },
	  "vidioc-create-bufs.rst/vidioc-remove-bufs.rst: buffers are created again after "
	  "removal (first free index)", "which index is reused is not documented" },

	/* mmap / munmap */
	{ "mmap-bad-offset", EINVAL, 0, 0, S_MMAP2,
	  { OP_MMAP, .a = V_BASE, .b = 0x3fff0000, .n = PAGE },
	  "func-mmap.rst: EINVAL, the offset is not suitable", NULL },
	{ "mmap-offset-inside-plane", EINVAL, 0, 0, S_MMAP2, { .fn = mmap_offset_inside },
	  "func-mmap.rst: EINVAL, the offset is not suitable (not a plane's m.offset)", NULL },
	{ "mmap-offset-unaligned", EINVAL, 0, 0, S_MMAP2, { OP_MMAP, .b = 1, .n = PAGE },
	  "func-mmap.rst: EINVAL, the offset is not aligned on a page boundary", NULL },
	{ "mmap-too-long", EINVAL, 0, 0, S_MMAP2, { OP_MMAP, .n = V_LONG },
	  "func-mmap.rst: EINVAL, the length is not suitable (larger than the plane)", NULL },
	{ "mmap-private", EINVAL, 0, 0, S_MMAP2, { OP_MMAP, .how = MAP_PRIVATE },
	  "func-mmap.rst: EINVAL, the flags value is not supported (MAP_PRIVATE)", NULL },
	{ "mmap-no-prot-read", EINVAL, 0, N_CAP, S_MMAP2, { OP_MMAP, .mem = PROT_WRITE },
	  "func-mmap.rst: EINVAL, the prot value is not supported (capture without "
	  "PROT_READ)", NULL },
	{ "mmap-no-prot-write", EINVAL, 0, N_OUT, S_MMAP2, { OP_MMAP, .mem = PROT_READ },
	  "func-mmap.rst: EINVAL, the prot value is not supported (output without "
	  "PROT_WRITE)", NULL },
	{ "mmap-no-buffers", EINVAL, 0, 0, S_OPEN, { OP_MMAP, .a = V_BASE, .n = PAGE },
	  "func-mmap.rst: EINVAL, no buffers have been allocated", NULL },
	{ "mmap-removed", EINVAL, 0, N_RM, S_MMAP3 | S_RM1, { OP_MMAP, .a = 1 },
	  "func-mmap.rst: EINVAL, the offset is not suitable (its buffer was removed)", NULL },
	{ "mmap-after-free", EINVAL, 0, 0, S_MMAP2 | S_FREE, { .op = OP_MMAP },
	  "func-mmap.rst: EINVAL, no buffers have been allocated (after REQBUFS(0))", NULL },
	{ "mmap-userptr-queue", EINVAL, 0, N_UP, S_UP, { OP_MMAP, .a = V_BASE, .n = V_SIZE0 },
	  "func-mmap.rst: EINVAL, no buffers allocated for memory mapping (USERPTR queue)",
	  NULL },
	{ "mmap-twice", 0, 0, 0, S_MMAP2 | S_MAP0, { .op = OP_MMAP },
	  "mmap.rst: a buffer may be mapped again (control case)", NULL },
	{ "munmap-unaligned", EINVAL, 0, 0, S_MMAP2 | S_MAP0, { .fn = munmap_unaligned },
	  "func-munmap.rst: EINVAL, the start is incorrect", NULL },
	{ "munmap-partial", 0, 0, 0, S_MMAP2, { .fn = munmap_partial },
	  "func-munmap.rst: unmapping a part of a mapping is not an error (control case)",
	  "doc silent; the rest must stay usable" },

	/* read() / write() */
	{ "read-while-streaming", EBUSY, 0, N_RW | N_CAP, S_MMAP2 | S_STREAM,
	  { OP_IO, .how = IO_READ },
	  "func-read.rst: EBUSY, the device is already in use (MMAP streaming)", NULL },
	{ "write-while-streaming", EBUSY, 0, N_RW | N_OUT, S_MMAP2 | S_STREAM,
	  { OP_IO, .how = IO_WRITE },
	  "func-write.rst: EBUSY, the device is already in use (MMAP streaming)", NULL },
	{ "read-buffers-allocated", EBUSY, 0, N_RW | N_CAP, S_MMAP2, { OP_IO, .how = IO_READ },
	  "func-read.rst: EBUSY, the device is already in use (buffers allocated)", NULL },
	{ "io-other-fd-owner", EBUSY, 0, N_RW, S_MMAP2 | S_FD1, { OP_IO, .slot = 1 },
	  "func-read.rst/func-write.rst: EBUSY, the device is already in use (another file "
	  "owns buffers)", NULL },
	{ "io-fileio-other-fd", EBUSY, 0, N_RW, S_FILEIO | S_FD1, { OP_IO, .slot = 1 },
	  "func-read.rst/func-write.rst: EBUSY, no multiple read/write streams", NULL },
	{ "read-on-output", EINVAL, 0, N_RW | N_OUT, S_OPEN, { OP_IO, .how = IO_READ },
	  "func-read.rst: EINVAL, read() is not supported on this device", NULL },
	{ "write-on-capture", EINVAL, 0, N_RW | N_CAP, S_OPEN, { OP_IO, .how = IO_WRITE },
	  "func-write.rst: EINVAL, write() is not supported on this device", NULL },
	{ "read-bad-buffer", EFAULT, 0, N_RW | N_CAP, S_BLOCK, { .fn = io_bad_buffer },
	  "func-read.rst: EFAULT, buf references an inaccessible memory area; the next read "
	  "works", NULL },
	{ "write-bad-buffer", EFAULT, 0, N_RW | N_OUT, S_BLOCK, { .fn = io_bad_buffer },
	  "func-write.rst: EFAULT, buf references an inaccessible memory area; the next "
	  "write works", WRITE_612 },
	{ "io-count0", EBUSY, 0, N_RW, S_OPEN, { .fn = io_count0 },
	  "func-read.rst/func-write.rst: count 0 returns 0 and has no other effect (REQBUFS "
	  "still possible)",
	  "6.12 starts the emulation on a zero-length read() or write() (a non-blocking "
	  "read() then says EAGAIN), so the REQBUFS after it gets EBUSY" },
	{ "io-frames", 0, 0, N_RW, S_BLOCK, { .fn = io_frames },
	  "func-read.rst/func-write.rst: whole frames read or written (control case)",
	  WRITE_612 },

	/* poll() */
	{ "poll-not-streaming", 0, 0, 0, S_MMAP2,
	  { OP_POLL, .a = POLLIN | POLLOUT | POLLRDNORM | POLLWRNORM, .b = POLLERR },
	  "func-poll.rst: without STREAMON poll() succeeds and sets POLLERR", NULL },
	{ "poll-capture-streamon-noqbuf", 0, 0, N_CAP, S_MMAP2 | S_STREAM,
	  { OP_POLL, .a = POLLIN | POLLRDNORM, .b = POLLERR },
	  "func-poll.rst: capture after STREAMON without QBUF sets POLLERR", NULL },
	{ "poll-output-streamon-noqbuf", ENOMSG, 0, N_OUT | N_SOLO, S_MMAP2 | S_STREAM,
	  { OP_POLL, .a = POLLOUT | POLLWRNORM, .b = POLLOUT | POLLWRNORM },
	  "func-poll.rst: output after STREAMON without QBUF sets POLLOUT|POLLWRNORM",
	  "6.12 reports no event until a buffer is done (no-event: revents 0)" },
};

/* Devices */

static u32 queue_caps(int fd, u32 type)
{
	struct v4l2_requestbuffers rb = { .type = type, .memory = M_MMAP };

	return -vb2_ioctl(fd, VIDIOC_REQBUFS, &rb) ? 0 : rb.capabilities;
}

/* S_FMT of pixel format @fcc: does the queue take it (with more than @min_planes)? */
static bool try_format(struct dev *d, int fd, u32 fcc, unsigned int min_planes)
{
	struct v4l2_format f = d->fmt;

	if (d->mplane)
		f.fmt.pix_mp.pixelformat = fcc;
	else
		f.fmt.pix.pixelformat = fcc;
	if (vb2_ioctl(fd, VIDIOC_S_FMT, &f) ||
	    (d->mplane ? f.fmt.pix_mp.pixelformat : f.fmt.pix.pixelformat) != fcc ||
	    (min_planes && f.fmt.pix_mp.num_planes <= min_planes))
		return false;
	d->fmt = f;
	return true;
}

/*
 * Multi-planar queues of nodes whose format is device state (not mem2mem) get a format
 * with more than one memory plane if the driver has one, so that plane counts matter
 * (@spec NULL); "keep" keeps the driver's format, four characters set that pixel format.
 */
static int pick_format(struct dev *d, int fd, const char *spec)
{
	static const u32 fourccs[] = { V4L2_PIX_FMT_YUV420M, V4L2_PIX_FMT_NV12M,
				       V4L2_PIX_FMT_NV16M };
	unsigned int i;

	if (spec && !strcmp(spec, "keep"))
		return 0;
	if (spec && (strlen(spec) != 4 ||
		     !try_format(d, fd, v4l2_fourcc(spec[0], spec[1], spec[2], spec[3]), 0))) {
		fprintf(stderr, "%s: %s: cannot set format '%s'\n", PROG, d->label, spec);
		return -1;
	}
	if (spec || !d->mplane || d->m2m || d->fmt.fmt.pix_mp.num_planes > 1)
		return 0;
	for (i = 0; i < ARRAY_SIZE(fourccs) && !try_format(d, fd, fourccs[i], 1); i++)
		;
	return 0;
}

/* The queue of @type of the node @n (its path, media device and rw), as @label. */
static int add_queue(const struct dev *n, u32 type, u32 other, const char *label,
		     const char *fmtspec)
{
	struct dev *d = &devs[ndevs];
	const struct v4l2_pix_format_mplane *mp = &d->fmt.fmt.pix_mp;
	unsigned int p;
	int fd, r = -1;

	if (ndevs == MAX_DEVS) {
		fprintf(stderr, "%s: too many devices\n", PROG);
		return -1;
	}
	*d = *n;
	snprintf(d->label, sizeof(d->label), "%s", label);
	d->type = type;
	d->other = other;
	d->m2m = other;
	d->mplane = is_mplane(type);
	d->output = is_output(type);
	d->rw = n->rw && !other;
	fd = open(d->path, O_RDWR | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0) {
		fprintf(stderr, "%s: %s: %s\n", PROG, d->path, strerror(errno));
		return -1;
	}
	d->caps = queue_caps(fd, type);
	if (other)
		d->other_caps = queue_caps(fd, other);
	d->fmt.type = type;
	if (vb2_ioctl(fd, VIDIOC_G_FMT, &d->fmt))
		fprintf(stderr, "%s: %s: G_FMT failed\n", PROG, label);
	else if (!pick_format(d, fd, fmtspec))
		r = 0;
	close(fd);
	if (r)
		return r;
	d->nplanes = d->mplane ? mp->num_planes : 1;
	d->sizes[0] = d->fmt.fmt.pix.sizeimage;
	for (p = 0; d->mplane && p < d->nplanes && p < MAXP; p++)
		d->sizes[p] = mp->plane_fmt[p].sizeimage;
	if (!(d->caps & V4L2_BUF_CAP_SUPPORTS_MMAP) || !d->nplanes || d->nplanes > MAXP) {
		fprintf(stderr, "%s: %s: no MMAP streaming queue\n", PROG, label);
		return -1;
	}
	printf("%s: device %s %s media=%s type=%u caps=%#x fmt=%.4s planes=%u size0=%u rw=%d\n",
	       PROG, d->label, d->path, d->media[0] ? d->media : "-", d->type, d->caps,
	       (const char *)(d->mplane ? &mp->pixelformat : &d->fmt.fmt.pix.pixelformat),
	       d->nplanes, d->sizes[0], d->rw);
	ndevs++;
	return 0;
}

static int add_dev(const char *spec)
{
	static const struct { u32 cap, type; } kinds[] = {
		{ V4L2_CAP_VIDEO_CAPTURE_MPLANE, V4L2_BUF_TYPE_VIDEO_CAPTURE_MPLANE },
		{ V4L2_CAP_VIDEO_CAPTURE, V4L2_BUF_TYPE_VIDEO_CAPTURE },
		{ V4L2_CAP_VIDEO_OUTPUT_MPLANE, V4L2_BUF_TYPE_VIDEO_OUTPUT_MPLANE },
		{ V4L2_CAP_VIDEO_OUTPUT, V4L2_BUF_TYPE_VIDEO_OUTPUT },
	};
	static const char *const dirs[] = { "out", "cap" };
	const char *at = strrchr(spec, '@'), *colon, *which = NULL;
	char name[64], sysname[300], label[72];
	struct v4l2_capability cap;
	struct dev n = {};
	unsigned int i;
	u32 caps, t[2];
	int fd, ret = 0;

	snprintf(name, sizeof(name), "%s", spec);
	if (at)
		name[at - spec] = 0;
	colon = strrchr(name, ':');
	if (colon && (!strcmp(colon, ":out") || !strcmp(colon, ":cap"))) {
		name[colon - name] = 0;
		which = colon + 1;
	}
	if (vb2_find_node(name, n.path, sizeof(n.path), sysname, sizeof(sysname))) {
		fprintf(stderr, "%s: no video node named '%s'\n", PROG, name);
		return -1;
	}
	fd = open(n.path, O_RDWR | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0 || vb2_ioctl(fd, VIDIOC_QUERYCAP, &cap)) {
		fprintf(stderr, "%s: %s: %s\n", PROG, n.path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	close(fd);
	caps = (cap.capabilities & V4L2_CAP_DEVICE_CAPS) ? cap.device_caps : cap.capabilities;
	n.rw = caps & V4L2_CAP_READWRITE;
	vb2_find_media(sysname, (const char *)cap.bus_info, n.media, sizeof(n.media));
	if (caps & (V4L2_CAP_VIDEO_M2M | V4L2_CAP_VIDEO_M2M_MPLANE)) {
		bool mp = caps & V4L2_CAP_VIDEO_M2M_MPLANE;

		t[0] = mp ? V4L2_BUF_TYPE_VIDEO_OUTPUT_MPLANE : V4L2_BUF_TYPE_VIDEO_OUTPUT;
		t[1] = mp ? V4L2_BUF_TYPE_VIDEO_CAPTURE_MPLANE : V4L2_BUF_TYPE_VIDEO_CAPTURE;
		for (i = 0; i < 2; i++) {
			if (which && strcmp(which, dirs[i]))
				continue;
			snprintf(label, sizeof(label), "%s:%s", name, dirs[i]);
			ret |= add_queue(&n, t[i], t[!i], label, at ? at + 1 : NULL);
		}
		return ret;
	}
	for (i = 0; i < ARRAY_SIZE(kinds); i++)
		if (caps & kinds[i].cap)
			return add_queue(&n, kinds[i].type, 0, name, at ? at + 1 : NULL);
	fprintf(stderr, "%s: %s is not a video capture, output or mem2mem node\n", PROG, name);
	return -1;
}

/* Running the table */

static unsigned int dev_has(const struct dev *d)
{
	bool reqs = d->caps & V4L2_BUF_CAP_SUPPORTS_REQUESTS;
	bool any_reqs = reqs || (d->other_caps & V4L2_BUF_CAP_SUPPORTS_REQUESTS);

	/* N_MEDIA_NOREQ: with only vivid's video nodes (node_types=0x101), all queues or none */
	return (d->mplane ? N_MP : N_SP) | (d->output ? N_OUT : N_CAP) |
	       (d->m2m ? N_M2M : N_SOLO) | (reqs ? N_REQ : N_NOREQ) |
	       ((d->caps & V4L2_BUF_CAP_SUPPORTS_USERPTR) ? N_UP : N_NOUP) |
	       (d->mplane && d->nplanes > 1 ? N_MPN : 0) |
	       (d->rw && d->nplanes == 1 ? N_RW : 0) |
	       ((d->caps & V4L2_BUF_CAP_SUPPORTS_REMOVE_BUFS) ? N_RM : 0) |
	       ((d->caps & V4L2_BUF_CAP_SUPPORTS_ORPHANED_BUFS) ? N_ORPHAN : 0) |
	       (d->media[0] && !any_reqs ? N_MEDIA_NOREQ : 0);
}

/* Is @id in the comma-separated @list? */
static bool in_list(const char *list, const char *id)
{
	const char *p = list;
	size_t n = strlen(id);

	while ((p = strstr(p, id))) {
		if ((p == list || p[-1] == ',') && (p[n] == 0 || p[n] == ','))
			return true;
		p += n;
	}
	return false;
}

static const char *only, *skip;

/* Does case @m run on a queue that has @has? */
static bool runs(const struct mcase *m, unsigned int has)
{
	return (!skip || !in_list(skip, m->id)) && (!only || in_list(only, m->id)) &&
	       (m->needs & has) == m->needs;
}

static void usage(void)
{
	fprintf(stderr, "usage: %s [--dev NAME[:out|:cap][@FOURCC|@keep]]... [--only ID,..] "
		"[--skip ID,..] [--cleanup-streamoff] [--list]\n", PROG);
	exit(2);
}

static void list_table(void)
{
	unsigned int ci;

	for (ci = 0; ci < ARRAY_SIZE(cases); ci++) {
		const struct mcase *m = &cases[ci];

		printf("%-36s %-7s", m->id, errname(m->expect));
		if (m->alt)
			printf(" alt=%s", errname(m->alt));
		printf("  %s", m->doc);
		if (m->note)
			printf("  [note: %s]", m->note);
		printf("\n");
	}
	printf("%s: %zu cases in the table\n", PROG, ARRAY_SIZE(cases));
}

/* The KTAP result of case @id on queue @d, named QUEUE/CASE; @note after it if not NULL. */
static void report(int code, const struct dev *d, const char *id, const char *note)
{
	char name[160];

	snprintf(name, sizeof(name), "%s/%s", d->label, id);
	ksft_test_result_code(code, name, note ? "%s" : NULL, note);
}

/* Run one case and report it. */
static void run_case(struct dev *d, const struct mcase *m)
{
	struct ctx c = { .d = d, .k = &m->call };
	char err[256], alt[512];
	const char *got_name;
	int got;
	bool ok;

	cur_case = m->id;
	alarm(CASE_TIMEOUT);
	ctx_unset(&c);
	got = run_call(&c, m);
	ctx_free(&c);
	if (got == R_SKIP) {
		report(KSFT_SKIP, d, m->id, c.why);
		return;
	}
	if (got == R_SETUP) {
		ksft_print_msg("expect=%s: the setup failed: %s\n", errname(m->expect), c.why);
		report(KSFT_FAIL, d, m->id, NULL);
		return;
	}
	got_name = c.got_str[0] ? c.got_str : errname(got);
	ok = got == m->expect || (m->alt && got == m->alt);
	if (sanity(d, err, sizeof(err))) {
		ksft_print_msg("expect=%s got=%s; the queue is unusable after the case: %s\n",
			       errname(m->expect), got_name, err);
		ok = false;
	} else if (ok && c.post_fail) {
		ksft_print_msg("expect=%s got=%s; %s\n", errname(m->expect), got_name, c.why);
		ok = false;
	} else if (!ok) {
		ksft_print_msg("expect=%s got=%s (doc: %s%s%s)\n", errname(m->expect), got_name,
			       m->doc, m->note ? "; note: " : "", m->note ? m->note : "");
		if (c.why[0])
			ksft_print_msg("detail: %s\n", c.why);
	}
	snprintf(alt, sizeof(alt), "got=%s, the alternative (%s)", got_name,
		 m->note ? m->note : "");
	report(ok ? KSFT_PASS : KSFT_FAIL, d, m->id, ok && got != m->expect ? alt : NULL);
}

/* The table on one queue, after a sanity cycle that shows the queue works at all. */
static void run_dev(struct dev *d)
{
	unsigned int has = dev_has(d), ci;
	char err[256];
	bool usable;

	cur_dev = d->label;
	cur_case = "initial-sanity";
	alarm(CASE_TIMEOUT);
	usable = !sanity(d, err, sizeof(err));
	if (!usable)
		ksft_print_msg("%s\n", err);
	report(usable ? KSFT_PASS : KSFT_FAIL, d, "initial-sanity", NULL);
	for (ci = 0; ci < ARRAY_SIZE(cases); ci++) {
		if (!runs(&cases[ci], has))
			continue;
		if (usable)
			run_case(d, &cases[ci]);
		else
			report(KSFT_FAIL, d, cases[ci].id, "not run: the queue does not work");
	}
	alarm(0);
}

int main(int argc, char **argv)
{
	unsigned int di, ci, n = 0;
	bool list = false;
	int i;

	setvbuf(stdout, NULL, _IOLBF, 0);
	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--dev") && i + 1 < argc) {
			if (add_dev(argv[++i]))
				return 1;
		} else if (!strcmp(argv[i], "--only") && i + 1 < argc) {
			only = argv[++i];
		} else if (!strcmp(argv[i], "--skip") && i + 1 < argc) {
			skip = argv[++i];
		} else if (!strcmp(argv[i], "--cleanup-streamoff")) {
			cleanup_streamoff = true;
		} else if (!strcmp(argv[i], "--list")) {
			list = true;
		} else {
			usage();
		}
	}
	if (list) {
		list_table();
		return 0;
	}
	if (!ndevs)
		usage();
	signal(SIGALRM, on_alarm);
	signal(SIGSEGV, on_fault);
	signal(SIGBUS, on_fault);
	signal(SIGPIPE, SIG_IGN);

	ksft_print_header();
	/* The KTAP plan: per queue its initial sanity cycle and every case that applies. */
	for (di = 0; di < ndevs; di++)
		for (ci = 0, n++; ci < ARRAY_SIZE(cases); ci++)
			n += runs(&cases[ci], dev_has(&devs[di]));
	ksft_set_plan(n);
	for (di = 0; di < ndevs; di++)
		run_dev(&devs[di]);
	ksft_finished();
}
