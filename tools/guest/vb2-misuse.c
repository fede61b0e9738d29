// SPDX-License-Identifier: GPL-2.0
/*
 * vb2-misuse: a table of misuses of the V4L2 buffer uAPI (videobuf2), each with the
 * errno that Documentation/userspace-api/media/ of Linux 6.12 documents for it.
 * A guest program of the test harness (tools/plans/misuse.plan).
 *
 *   vb2-misuse [--dev NAME[:out|:cap][@FOURCC|@keep]]... [--only ID[,ID..]]
 *              [--skip ID[,ID..]] [--cleanup-streamoff] [--list]
 *
 * --dev picks a video node by its V4L2 name (/sys/class/video4linux/videoN/name). The
 * table runs on the node's queue; on a mem2mem node on both queues (NAME:out, NAME:cap),
 * or on the one given after the colon. A multi-planar node that is not mem2mem is set to
 * a format with several memory planes if it has one (YUV420M, NV12M, NV16M); @keep keeps
 * its format, @FOURCC sets that one. --list prints the table (id, expected errno,
 * documentation) and exits. --skip leaves cases out. --cleanup-streamoff stops both
 * queues before a case's files are closed, for drivers that cannot release a file with
 * buffers in queued requests (visl frees its control handler before its queues).
 *
 * Every case starts from a fresh open() of the node, does its setup, makes the one bad
 * call and records its errno (0: the call succeeded). Some cases check more after the
 * call (a follow-up that must work, state that must not have changed). Then every file,
 * mapping, dma-buf and request of the case is closed, and a sanity cycle on a new file
 * must succeed: REQBUFS, QBUF of every buffer, STREAMON, poll, DQBUF, STREAMOFF,
 * REQBUFS(0) (on a mem2mem node both queues, through one job). A case fails when the
 * errno differs from the expected one, when its follow-up check fails, or when the
 * sanity cycle fails after it.
 *
 * The expected errno is the documented one, except where Linux 6.12 (its videobuf2 or
 * the V4L2 core around it) answers otherwise: applications were written against 6.12,
 * so the row expects 6.12's answer and its note says that 6.12 does it (the drop-in
 * rule of the README). Where the documentation is silent or contradicts itself, or 6.12
 * answers differently by allocator, the row says so (note) and may accept a second
 * errno (alt); its "ok" line then says so. Where this
 * videobuf2 deliberately differs from 6.12, the note names the row of
 * Documentation/driver-contract.rst, and the case fails on 6.12.
 * Cases that do not apply to a queue (multi-planar only, USERPTR only, ...) are left out.
 *
 * Output: KTAP, through the kernel tree's kselftest.h (vb2check.py reads it case by
 * case): per queue a result QUEUE/initial-sanity (the sanity cycle before the first
 * case), then one per case, QUEUE/CASE ("vim2m:out/qbuf-bad-index"). A failed case
 * prints "# expect=EINVAL got=0 ..." with the documentation before its "not ok"; one
 * that got the alternative errno says so after its "ok". poll() cases show revents;
 * expect=0 there means "the documented flags are set", expect=no-event that no flag
 * is set. The exit code is 0 when nothing failed, 1 otherwise, 2 for a usage error.
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

#define PROG		"vb2-misuse"
#define PAGE		4096UL
#define PAGE_ALIGN(x)	(((x) + PAGE - 1) & ~(PAGE - 1))
#define MAX_DEVS	32
#define MAX_BUFS	32
#define MAXP		VIDEO_MAX_PLANES
#define CASE_TIMEOUT	60	/* seconds for one case and its sanity cycle */
#define WAIT_MS		5000	/* for a buffer to complete */
#define M2M_CAP_OFF	(1U << 30)	/* DST_QUEUE_OFF_BASE of v4l2-mem2mem */

/*
 * A case returns the errno of its call as the table has it, positive (0: success):
 * -vb2_ioctl(). Besides an errno it may return:
 */
#define R_SETUP		-1	/* its setup failed (ctx.why) */
#define R_SKIP		-2	/* does not apply after all (ctx.why) */
#define NO_ALT		-1

/* The queue under test, found at start. */
struct dev {
	char name[64];		/* V4L2 name */
	char label[72];		/* name, or name:out / name:cap on mem2mem nodes */
	char path[300];		/* /dev/videoN */
	char media[300];	/* /dev/mediaN or "" */
	u32 type;		/* buffer type under test */
	u32 other;		/* mem2mem: the other queue's type, else 0 */
	bool m2m, mplane, output, rw;
	u32 caps;		/* V4L2_BUF_CAP_* of the queue */
	u32 other_caps;
	unsigned int nplanes;	/* memory planes of the current format */
	u32 sizes[MAXP];	/* sizeimage of each */
	u32 pixfmt;
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

struct bufinfo {
	u32 len[MAXP];
	u32 off[MAXP];
};

struct ctx {
	struct dev *d;
	int fd[3];
	int mfd;
	int req[4];
	int dfd[8];
	struct { void *p; size_t len; } map[24];
	unsigned int nmap;
	u32 count;		/* buffers allocated through fd[0] */
	u32 first;		/* index of the first of them */
	struct bufinfo bi[MAX_BUFS];
	unsigned int nplanes;	/* of the allocated buffers */
	char why[256];
	bool post_fail;		/* a check after the call failed (why) */
	char got_str[64];	/* shown instead of the errno when set */
};

struct mcase {
	const char *id;
	int expect;		/* errno, 0 for success */
	int alt;		/* a second accepted errno (see note), NO_ALT for none */
	unsigned int needs;
	int (*fn)(struct ctx *c);
	const char *doc;	/* where Documentation/userspace-api/media says so */
	const char *note;	/* why alt, or what the doc leaves open */
};

static struct dev devs[MAX_DEVS];
static unsigned int ndevs;
static bool cleanup_streamoff;
static const char *cur_dev = "-", *cur_case = "-";
static sigjmp_buf fault_jmp;
static volatile sig_atomic_t fault_armed;

/* ---------------------------------------------------------------------------------- */
/* Small helpers */

static void __attribute__((format(printf, 2, 3))) why(struct ctx *c, const char *fmt, ...)
{
	va_list ap;

	if (c->why[0])
		return;		/* keep the first reason */
	va_start(ap, fmt);
	vsnprintf(c->why, sizeof(c->why), fmt, ap);
	va_end(ap);
}

static void __attribute__((format(printf, 2, 3))) post_fail(struct ctx *c, const char *fmt, ...)
{
	va_list ap;

	c->post_fail = true;
	if (c->why[0])
		return;
	va_start(ap, fmt);
	vsnprintf(c->why, sizeof(c->why), fmt, ap);
	va_end(ap);
}

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

/* The same direction in the other API: a type the node does not handle. */
static u32 bad_type(const struct dev *d)
{
	switch (d->type) {
	case V4L2_BUF_TYPE_VIDEO_CAPTURE: return V4L2_BUF_TYPE_VIDEO_CAPTURE_MPLANE;
	case V4L2_BUF_TYPE_VIDEO_OUTPUT: return V4L2_BUF_TYPE_VIDEO_OUTPUT_MPLANE;
	case V4L2_BUF_TYPE_VIDEO_CAPTURE_MPLANE: return V4L2_BUF_TYPE_VIDEO_CAPTURE;
	default: return V4L2_BUF_TYPE_VIDEO_OUTPUT;
	}
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
	if (write(1, msg, n) < 0)
		_exit(1);
	_exit(1);
}

/* ---------------------------------------------------------------------------------- */
/* Context: everything a case opens, closed again after it */

static void ctx_init(struct ctx *c, struct dev *d)
{
	unsigned int i;

	memset(c, 0, sizeof(*c));
	c->d = d;
	for (i = 0; i < ARRAY_SIZE(c->fd); i++)
		c->fd[i] = -1;
	c->mfd = -1;
	for (i = 0; i < ARRAY_SIZE(c->req); i++)
		c->req[i] = -1;
	for (i = 0; i < ARRAY_SIZE(c->dfd); i++)
		c->dfd[i] = -1;
}

static void ctx_free(struct ctx *c)
{
	unsigned int i;

	if (cleanup_streamoff)
		for (i = 0; i < ARRAY_SIZE(c->fd); i++)
			if (c->fd[i] >= 0) {
				u32 t = c->d->type;

				ioctl(c->fd[i], VIDIOC_STREAMOFF, &t);
				t = c->d->other;
				if (t)
					ioctl(c->fd[i], VIDIOC_STREAMOFF, &t);
			}
	for (i = 0; i < c->nmap; i++)
		if (c->map[i].p && c->map[i].p != MAP_FAILED)
			munmap(c->map[i].p, c->map[i].len);
	c->nmap = 0;
	for (i = 0; i < ARRAY_SIZE(c->dfd); i++)
		if (c->dfd[i] >= 0)
			close(c->dfd[i]);
	for (i = 0; i < ARRAY_SIZE(c->req); i++)
		if (c->req[i] >= 0)
			close(c->req[i]);
	for (i = 0; i < ARRAY_SIZE(c->fd); i++)
		if (c->fd[i] >= 0)
			close(c->fd[i]);
	if (c->mfd >= 0)
		close(c->mfd);
	/* Only the resources: what the case found stays for the report. */
	for (i = 0; i < ARRAY_SIZE(c->fd); i++)
		c->fd[i] = -1;
	c->mfd = -1;
	for (i = 0; i < ARRAY_SIZE(c->req); i++)
		c->req[i] = -1;
	for (i = 0; i < ARRAY_SIZE(c->dfd); i++)
		c->dfd[i] = -1;
}

static int c_open(struct ctx *c, int slot, bool nonblock)
{
	c->fd[slot] = open(c->d->path, O_RDWR | (nonblock ? O_NONBLOCK : 0) | O_CLOEXEC);
	if (c->fd[slot] < 0) {
		why(c, "open %s: %s", c->d->path, strerror(errno));
		return -1;
	}
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

static int c_dfd_slot(struct ctx *c)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(c->dfd); i++)
		if (c->dfd[i] < 0)
			return i;
	return -1;
}

/* A dma-buf of @len bytes from the system heap, or udmabuf. */
static int c_dmabuf(struct ctx *c, size_t len)
{
	int slot = c_dfd_slot(c), fd;

	if (slot < 0) {
		why(c, "too many dma-bufs");
		return -1;
	}
	fd = vb2_dmabuf_alloc(len, NULL);
	if (fd >= 0)
		return c->dfd[slot] = fd;
	why(c, "no dma-buf exporter (dma-heap system, udmabuf): %s", errname(fd));
	return -1;
}

static int c_media(struct ctx *c)
{
	if (!c->d->media[0]) {
		why(c, "no media device");
		return -1;
	}
	c->mfd = open(c->d->media, O_RDWR | O_CLOEXEC);
	if (c->mfd < 0) {
		why(c, "open %s: %s", c->d->media, strerror(errno));
		return -1;
	}
	return 0;
}

/* A new request in c->req[slot]; 0 or the errno of MEDIA_IOC_REQUEST_ALLOC. */
static int c_request(struct ctx *c, int slot)
{
	int fd;

	if (c->mfd < 0 && c_media(c))
		return R_SETUP;
	fd = vb2_request_alloc(c->mfd);
	if (fd < 0) {
		why(c, "MEDIA_IOC_REQUEST_ALLOC on %s: %s", c->d->media, errname(fd));
		return -fd;
	}
	c->req[slot] = fd;
	return 0;
}

/* ---------------------------------------------------------------------------------- */
/* Buffers */

static int do_reqbufs(int fd, u32 type, u32 memory, u32 count, u32 *got)
{
	struct v4l2_requestbuffers rb = { .count = count, .type = type, .memory = memory };
	int r = -vb2_ioctl(fd, VIDIOC_REQBUFS, &rb);

	if (!r && got)
		*got = rb.count;
	return r;
}

static int do_querybuf(int fd, u32 type, u32 memory, u32 idx, struct bufinfo *bi,
		       unsigned int *nplanes)
{
	struct v4l2_plane pl[MAXP];
	struct v4l2_buffer b = { .index = idx, .type = type, .memory = memory };
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
		for (p = 0; p < b.length && p < MAXP; p++) {
			bi->len[p] = pl[p].length;
			bi->off[p] = pl[p].m.mem_offset;
		}
		if (nplanes)
			*nplanes = b.length;
	} else {
		bi->len[0] = b.length;
		bi->off[0] = b.m.offset;
		if (nplanes)
			*nplanes = 1;
	}
	return 0;
}

/* REQBUFS(@count) of @memory on fd[slot], remembering the buffers. Returns 0 or -1. */
static int c_alloc(struct ctx *c, int slot, u32 memory, u32 count)
{
	u32 i;
	int r;

	if (c->fd[slot] < 0 && c_open(c, slot, true))
		return -1;
	r = do_reqbufs(c->fd[slot], c->d->type, memory, count, &c->count);
	if (r) {
		why(c, "setup REQBUFS(%u): %s", count, errname(r));
		return -1;
	}
	if (c->count < count || c->count > MAX_BUFS) {
		why(c, "setup REQBUFS(%u) gave %u buffers", count, c->count);
		return -1;
	}
	c->first = 0;
	c->nplanes = c->d->nplanes;
	for (i = 0; i < c->count; i++) {
		r = do_querybuf(c->fd[slot], c->d->type, memory, i, &c->bi[i], &c->nplanes);
		if (r) {
			why(c, "setup QUERYBUF(%u): %s", i, errname(r));
			return -1;
		}
		if (memory != V4L2_MEMORY_MMAP) {
			unsigned int p;

			for (p = 0; p < c->nplanes; p++)
				c->bi[i].len[p] = c->d->sizes[p];
		}
	}
	return 0;
}

static int c_mmap_alloc(struct ctx *c, u32 count)
{
	return c_alloc(c, 0, V4L2_MEMORY_MMAP, count);
}

/*
 * A v4l2_buffer for buffer @idx of fd[0]'s queue: type, memory, index, the planes array
 * and, on output queues, a full payload (bytesused = length) and FIELD_NONE.
 */
static void prep_buf(struct ctx *c, struct v4l2_buffer *b, struct v4l2_plane *pl, u32 idx,
		     u32 memory)
{
	const struct dev *d = c->d;
	unsigned int p, np = c->nplanes ? c->nplanes : d->nplanes;
	const struct bufinfo *bi = idx < MAX_BUFS ? &c->bi[idx] : &c->bi[0];

	memset(b, 0, sizeof(*b));
	memset(pl, 0, sizeof(*pl) * MAXP);
	b->type = d->type;
	b->memory = memory;
	b->index = idx;
	b->field = V4L2_FIELD_NONE;
	if (d->mplane) {
		b->m.planes = pl;
		b->length = np;
		for (p = 0; p < np; p++) {
			pl[p].length = bi->len[p] ? bi->len[p] : d->sizes[p];
			if (d->output)
				pl[p].bytesused = pl[p].length;
		}
	} else {
		b->length = bi->len[0] ? bi->len[0] : d->sizes[0];
		if (d->output)
			b->bytesused = b->length;
	}
	if (d->output) {
		b->timestamp.tv_sec = 1;
		b->timestamp.tv_usec = idx;
	}
}

/* QBUF of MMAP buffer @idx on fd[slot]; returns the errno. */
static int c_qbuf(struct ctx *c, int slot, u32 idx)
{
	struct v4l2_plane pl[MAXP];
	struct v4l2_buffer b;

	prep_buf(c, &b, pl, idx, V4L2_MEMORY_MMAP);
	return -vb2_ioctl(c->fd[slot], VIDIOC_QBUF, &b);
}

/* QBUF of MMAP buffer @idx into request @reqfd; returns the errno. */
static int c_qbuf_req(struct ctx *c, u32 idx, int reqfd)
{
	struct v4l2_plane pl[MAXP];
	struct v4l2_buffer b;

	prep_buf(c, &b, pl, idx, V4L2_MEMORY_MMAP);
	b.flags |= V4L2_BUF_FLAG_REQUEST_FD;
	b.request_fd = reqfd;
	return -vb2_ioctl(c->fd[0], VIDIOC_QBUF, &b);
}

static int c_dqbuf(struct ctx *c, int slot, u32 type, u32 *idx)
{
	struct v4l2_plane pl[MAXP];
	struct v4l2_buffer b = { .type = type, .memory = V4L2_MEMORY_MMAP };
	int r;

	memset(pl, 0, sizeof(pl));
	if (is_mplane(type)) {
		b.m.planes = pl;
		b.length = MAXP;
	}
	r = -vb2_ioctl(c->fd[slot], VIDIOC_DQBUF, &b);
	if (!r && idx)
		*idx = b.index;
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

/* Wait for @ev on @fd; revents, 0 on timeout. */
static short wait_ev(int fd, short ev, int ms)
{
	int r = vb2_poll(fd, ev, ms);

	return r > 0 ? r : 0;
}

static short done_ev(const struct dev *d)
{
	return d->output ? POLLOUT : POLLIN;
}

/* mem2mem: buffers on the other queue of fd[0], all queued, streaming. 0 or -1. */
static int c_m2m_feed(struct ctx *c)
{
	u32 t = c->d->other, n, i;
	int r = do_reqbufs(c->fd[0], t, V4L2_MEMORY_MMAP, 2, &n);

	for (i = 0; !r && i < n && i < MAX_BUFS; i++) {
		struct v4l2_plane pl[MAXP];
		struct v4l2_buffer b = { .index = i, .type = t, .memory = V4L2_MEMORY_MMAP };
		struct bufinfo bi;
		unsigned int np = 1, p;

		r = do_querybuf(c->fd[0], t, V4L2_MEMORY_MMAP, i, &bi, &np);
		if (r)
			break;
		memset(pl, 0, sizeof(pl));
		b.field = V4L2_FIELD_NONE;
		if (is_mplane(t)) {
			b.m.planes = pl;
			b.length = np;
			for (p = 0; p < np; p++) {
				pl[p].length = bi.len[p];
				pl[p].bytesused = is_output(t) ? bi.len[p] : 0;
			}
		} else if (is_output(t)) {
			b.bytesused = bi.len[0];
		}
		r = -vb2_ioctl(c->fd[0], VIDIOC_QBUF, &b);
	}
	if (!r)
		r = streamon(c->fd[0], t);
	if (r)
		why(c, "setup of the other mem2mem queue: %s", errname(r));
	return r ? -1 : 0;
}

/* Stream fd[0] (buffers allocated) and wait until one buffer is done. 0 or -1. */
static int c_stream_one_done(struct ctx *c, u32 nqueue)
{
	u32 i;
	int r;

	for (i = 0; i < nqueue; i++) {
		r = c_qbuf(c, 0, i);
		if (r) {
			why(c, "setup QBUF(%u): %s", i, errname(r));
			return -1;
		}
	}
	r = streamon(c->fd[0], c->d->type);
	if (r) {
		why(c, "setup STREAMON: %s", errname(r));
		return -1;
	}
	if (c->d->m2m && c_m2m_feed(c))
		return -1;
	/* poll() of a mem2mem file answers for both queues: look for the done flag. */
	for (i = 0; i < WAIT_MS / 10; i++) {
		struct v4l2_plane pl[MAXP];
		struct v4l2_buffer b;

		prep_buf(c, &b, pl, 0, V4L2_MEMORY_MMAP);
		if (!(wait_ev(c->fd[0], done_ev(c->d), WAIT_MS) & done_ev(c->d)))
			break;
		if (!c->d->m2m)
			return 0;
		for (b.index = 0; b.index < c->count; b.index++)
			if (!vb2_ioctl(c->fd[0], VIDIOC_QUERYBUF, &b) && (b.flags & V4L2_BUF_FLAG_DONE))
				return 0;
		usleep(10000);
	}
	why(c, "setup: no buffer done within %d ms", WAIT_MS);
	return -1;
}

static int remove_bufs(int fd, u32 type, u32 index, u32 count)
{
	struct v4l2_remove_buffers rb = { .index = index, .count = count, .type = type };

	return -vb2_ioctl(fd, VIDIOC_REMOVE_BUFS, &rb);
}

/* CREATE_BUFS of @count buffers with the current format on fd[slot]. */
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
	if (n < 0 && errno != EAGAIN) {
		why(c, "setup %s(): %s", c->d->output ? "write" : "read", errname(errno));
		return -1;
	}
	return 0;
}

/* ---------------------------------------------------------------------------------- */
/* The sanity cycle: a fresh file must stream one buffer through the queue(s). */

static int sanity_queue_setup(int fd, u32 type, unsigned int *count, struct bufinfo *bi,
			      unsigned int *np, char *err, size_t errlen)
{
	u32 got, i;
	int r = do_reqbufs(fd, type, V4L2_MEMORY_MMAP, 2, &got);

	if (r || got < 1 || got > MAX_BUFS) {
		snprintf(err, errlen, "REQBUFS(2) type %u: %s, count %u", type, errname(r),
			 r ? 0 : got);
		return -1;
	}
	for (i = 0; i < got; i++) {
		struct v4l2_plane pl[MAXP];
		struct v4l2_buffer b = { .index = i, .type = type, .memory = V4L2_MEMORY_MMAP };
		unsigned int p;

		r = do_querybuf(fd, type, V4L2_MEMORY_MMAP, i, &bi[i], np);
		if (r) {
			snprintf(err, errlen, "QUERYBUF(%u): %s", i, errname(r));
			return -1;
		}
		memset(pl, 0, sizeof(pl));
		b.field = V4L2_FIELD_NONE;
		if (is_mplane(type)) {
			b.m.planes = pl;
			b.length = *np;
			for (p = 0; p < *np; p++) {
				pl[p].length = bi[i].len[p];
				if (is_output(type))
					pl[p].bytesused = bi[i].len[p];
			}
		} else if (is_output(type)) {
			b.bytesused = bi[i].len[0];
		}
		r = -vb2_ioctl(fd, VIDIOC_QBUF, &b);
		if (r) {
			snprintf(err, errlen, "QBUF(%u) type %u: %s", i, type, errname(r));
			return -1;
		}
	}
	*count = got;
	return 0;
}

static int sanity_dq(int fd, u32 type, char *err, size_t errlen)
{
	struct v4l2_plane pl[MAXP];
	struct v4l2_buffer b = { .type = type, .memory = V4L2_MEMORY_MMAP };
	short ev = is_output(type) ? POLLOUT : POLLIN;
	int r, tries;

	memset(pl, 0, sizeof(pl));
	if (is_mplane(type)) {
		b.m.planes = pl;
		b.length = MAXP;
	}
	/* poll() of a mem2mem node answers for both queues: retry until this one has one. */
	for (tries = 0; tries < WAIT_MS / 10; tries++) {
		if (!(wait_ev(fd, ev, WAIT_MS) & (ev | POLLERR))) {
			snprintf(err, errlen, "no buffer of type %u done within %d ms", type,
				 WAIT_MS);
			return -1;
		}
		r = -vb2_ioctl(fd, VIDIOC_DQBUF, &b);
		if (!r)
			return 0;
		if (r != EAGAIN) {
			snprintf(err, errlen, "DQBUF type %u: %s", type, errname(r));
			return -1;
		}
		usleep(10000);
	}
	snprintf(err, errlen, "DQBUF type %u: EAGAIN for %d ms", type, WAIT_MS);
	return -1;
}

static int sanity(struct dev *d, char *err, size_t errlen)
{
	struct bufinfo bi[MAX_BUFS];
	unsigned int n1 = 0, n2 = 0, np1 = 0, np2 = 0;
	u32 t1 = d->m2m ? (d->output ? d->type : d->other) : d->type;
	u32 t2 = d->m2m ? (d->output ? d->other : d->type) : 0;
	int fd = open(d->path, O_RDWR | O_NONBLOCK | O_CLOEXEC), ret = -1, r;

	err[0] = 0;
	if (fd < 0) {
		snprintf(err, errlen, "open: %s", strerror(errno));
		return -1;
	}
	if (sanity_queue_setup(fd, t1, &n1, bi, &np1, err, errlen))
		goto out;
	if (t2 && sanity_queue_setup(fd, t2, &n2, bi, &np2, err, errlen))
		goto out;
	r = streamon(fd, t1);
	if (!r && t2)
		r = streamon(fd, t2);
	if (r) {
		snprintf(err, errlen, "STREAMON: %s", errname(r));
		goto out;
	}
	if (t2 && sanity_dq(fd, t2, err, errlen))
		goto out;
	if (sanity_dq(fd, t1, err, errlen))
		goto out;
	r = streamoff(fd, t1);
	if (!r && t2)
		r = streamoff(fd, t2);
	if (r) {
		snprintf(err, errlen, "STREAMOFF: %s", errname(r));
		goto out;
	}
	r = do_reqbufs(fd, t1, V4L2_MEMORY_MMAP, 0, NULL);
	if (!r && t2)
		r = do_reqbufs(fd, t2, V4L2_MEMORY_MMAP, 0, NULL);
	if (r) {
		snprintf(err, errlen, "REQBUFS(0): %s", errname(r));
		goto out;
	}
	ret = 0;
out:
	close(fd);
	return ret;
}

/* ---------------------------------------------------------------------------------- */
/* The cases. Each returns the errno of the call under test (0: it succeeded). */

#define SETUP(x)	do { if (x) return R_SETUP; } while (0)
#define SKIP(c, ...)	do { why(c, __VA_ARGS__); return R_SKIP; } while (0)

/* REQBUFS */

static int reqbufs_bad_type(struct ctx *c)
{
	SETUP(c_open(c, 0, true));
	return do_reqbufs(c->fd[0], bad_type(c->d), V4L2_MEMORY_MMAP, 2, NULL);
}

static int reqbufs_type_zero(struct ctx *c)
{
	SETUP(c_open(c, 0, true));
	return do_reqbufs(c->fd[0], 0, V4L2_MEMORY_MMAP, 2, NULL);
}

static int reqbufs_memory_zero(struct ctx *c)
{
	SETUP(c_open(c, 0, true));
	return do_reqbufs(c->fd[0], c->d->type, 0, 2, NULL);
}

static int reqbufs_memory_overlay(struct ctx *c)
{
	SETUP(c_open(c, 0, true));
	return do_reqbufs(c->fd[0], c->d->type, V4L2_MEMORY_OVERLAY, 2, NULL);
}

static int reqbufs_memory_huge(struct ctx *c)
{
	SETUP(c_open(c, 0, true));
	return do_reqbufs(c->fd[0], c->d->type, 0x80000001, 2, NULL);
}

static int reqbufs_userptr_unsupported(struct ctx *c)
{
	SETUP(c_open(c, 0, true));
	return do_reqbufs(c->fd[0], c->d->type, V4L2_MEMORY_USERPTR, 2, NULL);
}

static int reqbufs_streaming(struct ctx *c)
{
	SETUP(c_mmap_alloc(c, 2));
	SETUP(streamon(c->fd[0], c->d->type) ? (why(c, "STREAMON failed"), -1) : 0);
	return do_reqbufs(c->fd[0], c->d->type, V4L2_MEMORY_MMAP, 3, NULL);
}

static int reqbufs_zero_streaming(struct ctx *c)
{
	int r;

	SETUP(c_mmap_alloc(c, 2));
	SETUP(streamon(c->fd[0], c->d->type) ? (why(c, "STREAMON failed"), -1) : 0);
	r = do_reqbufs(c->fd[0], c->d->type, V4L2_MEMORY_MMAP, 0, NULL);
	if (!r) {
		/* The doc's implicit STREAMOFF: no buffers left to query. */
		struct bufinfo bi;

		if (!do_querybuf(c->fd[0], c->d->type, V4L2_MEMORY_MMAP, 0, &bi, NULL))
			post_fail(c, "buffer 0 still exists after REQBUFS(0)");
	}
	return r;
}

static int reqbufs_other_fd(struct ctx *c)
{
	SETUP(c_mmap_alloc(c, 2));
	SETUP(c_open(c, 1, true));
	return do_reqbufs(c->fd[1], c->d->type, V4L2_MEMORY_MMAP, 2, NULL);
}

static int reqbufs_fileio_other_fd(struct ctx *c)
{
	SETUP(c_start_fileio(c, 0));
	SETUP(c_open(c, 1, true));
	return do_reqbufs(c->fd[1], c->d->type, V4L2_MEMORY_MMAP, 2, NULL);
}

static int reqbufs_fileio_same_fd(struct ctx *c)
{
	SETUP(c_start_fileio(c, 0));
	return do_reqbufs(c->fd[0], c->d->type, V4L2_MEMORY_MMAP, 2, NULL);
}

static int reqbufs_zero_while_mapped(struct ctx *c)
{
	void *p;
	int r;

	SETUP(c_mmap_alloc(c, 2));
	p = c_track(c, mmap(NULL, c->bi[0].len[0], PROT_READ | PROT_WRITE, MAP_SHARED,
			    c->fd[0], c->bi[0].off[0]), c->bi[0].len[0]);
	if (p == MAP_FAILED) {
		why(c, "mmap: %s", strerror(errno));
		return R_SETUP;
	}
	r = do_reqbufs(c->fd[0], c->d->type, V4L2_MEMORY_MMAP, 0, NULL);
	/* An orphaned buffer stays valid until it is unmapped. */
	if (!r && !touch_ok((unsigned char *)p + c->bi[0].len[0] - 1))
		post_fail(c, "the orphaned mapping faults");
	return r;
}

static int reqbufs_zero_while_exported(struct ctx *c)
{
	struct v4l2_exportbuffer eb = { .type = c->d->type, .index = 0, .flags = O_RDWR };
	void *p;
	int r, slot;

	SETUP(c_mmap_alloc(c, 2));
	r = -vb2_ioctl(c->fd[0], VIDIOC_EXPBUF, &eb);
	if (r) {
		why(c, "EXPBUF: %s", errname(r));
		return R_SETUP;
	}
	slot = c_dfd_slot(c);
	c->dfd[slot] = eb.fd;
	r = do_reqbufs(c->fd[0], c->d->type, V4L2_MEMORY_MMAP, 0, NULL);
	if (!r) {
		p = c_track(c, mmap(NULL, c->bi[0].len[0], PROT_READ, MAP_SHARED, eb.fd, 0),
			    c->bi[0].len[0]);
		if (p == MAP_FAILED)
			post_fail(c, "mmap of the exported dma-buf after REQBUFS(0): %s",
				  strerror(errno));
		else if (!touch_ok(p))
			post_fail(c, "the orphaned dma-buf mapping faults");
	}
	return r;
}

/* CREATE_BUFS */

static int create_bad_type(struct ctx *c)
{
	struct v4l2_format f = c->d->fmt;

	SETUP(c_open(c, 0, true));
	f.type = bad_type(c->d);
	return create_bufs(c, 0, V4L2_MEMORY_MMAP, 1, NULL, &f);
}

static int create_bad_memory(struct ctx *c)
{
	SETUP(c_open(c, 0, true));
	return create_bufs(c, 0, 0, 1, NULL, NULL);
}

static int create_other_memory(struct ctx *c)
{
	SETUP(c_mmap_alloc(c, 2));
	return create_bufs(c, 0, V4L2_MEMORY_DMABUF, 1, NULL, NULL);
}

static int create_count0_other_memory(struct ctx *c)
{
	SETUP(c_mmap_alloc(c, 2));
	return create_bufs(c, 0, V4L2_MEMORY_DMABUF, 0, NULL, NULL);
}

static int create_too_small(struct ctx *c)
{
	struct v4l2_format f = c->d->fmt;

	SETUP(c_open(c, 0, true));
	if (c->d->mplane)
		f.fmt.pix_mp.plane_fmt[0].sizeimage /= 2;
	else
		f.fmt.pix.sizeimage /= 2;
	return create_bufs(c, 0, V4L2_MEMORY_MMAP, 1, NULL, &f);
}

static int create_sizeimage_zero(struct ctx *c)
{
	struct v4l2_format f = c->d->fmt;

	SETUP(c_open(c, 0, true));
	if (c->d->mplane)
		f.fmt.pix_mp.plane_fmt[0].sizeimage = 0;
	else
		f.fmt.pix.sizeimage = 0;
	return create_bufs(c, 0, V4L2_MEMORY_MMAP, 1, NULL, &f);
}

static int create_zero_planes(struct ctx *c)
{
	struct v4l2_format f = c->d->fmt;

	SETUP(c_open(c, 0, true));
	f.fmt.pix_mp.num_planes = 0;
	return create_bufs(c, 0, V4L2_MEMORY_MMAP, 1, NULL, &f);
}

static int create_too_many_planes(struct ctx *c)
{
	struct v4l2_format f = c->d->fmt;
	unsigned int p;

	SETUP(c_open(c, 0, true));
	for (p = c->d->nplanes; p < MAXP; p++)
		f.fmt.pix_mp.plane_fmt[p].sizeimage = PAGE;
	/* v4l2_pix_format_mplane.num_planes is a u8: one past VIDEO_MAX_PLANES. */
	f.fmt.pix_mp.num_planes = MAXP + 1;
	return create_bufs(c, 0, V4L2_MEMORY_MMAP, 1, NULL, &f);
}

static int create_count0_other_fd(struct ctx *c)
{
	SETUP(c_mmap_alloc(c, 2));
	SETUP(c_open(c, 1, true));
	return create_bufs(c, 1, V4L2_MEMORY_MMAP, 0, NULL, NULL);
}

static int create_other_fd(struct ctx *c)
{
	SETUP(c_mmap_alloc(c, 2));
	SETUP(c_open(c, 1, true));
	return create_bufs(c, 1, V4L2_MEMORY_MMAP, 1, NULL, NULL);
}

static int create_streaming(struct ctx *c)
{
	u32 idx = 0;
	int r;

	SETUP(c_mmap_alloc(c, 2));
	SETUP(streamon(c->fd[0], c->d->type) ? (why(c, "STREAMON failed"), -1) : 0);
	r = create_bufs(c, 0, V4L2_MEMORY_MMAP, 1, &idx, NULL);
	if (!r && idx != c->count)
		post_fail(c, "CREATE_BUFS gave index %u, expected %u", idx, c->count);
	return r;
}

static int create_fileio_other_fd(struct ctx *c)
{
	SETUP(c_start_fileio(c, 0));
	SETUP(c_open(c, 1, true));
	return create_bufs(c, 1, V4L2_MEMORY_MMAP, 1, NULL, NULL);
}

/* QUERYBUF */

static int querybuf_bad_type(struct ctx *c)
{
	struct bufinfo bi;

	SETUP(c_mmap_alloc(c, 2));
	return do_querybuf(c->fd[0], bad_type(c->d), V4L2_MEMORY_MMAP, 0, &bi, NULL);
}

static int querybuf_index_oob(struct ctx *c)
{
	struct bufinfo bi;

	SETUP(c_mmap_alloc(c, 2));
	return do_querybuf(c->fd[0], c->d->type, V4L2_MEMORY_MMAP, c->count, &bi, NULL);
}

static int querybuf_index_huge(struct ctx *c)
{
	struct bufinfo bi;

	SETUP(c_mmap_alloc(c, 2));
	return do_querybuf(c->fd[0], c->d->type, V4L2_MEMORY_MMAP, 0xffffffff, &bi, NULL);
}

static int querybuf_no_buffers(struct ctx *c)
{
	struct bufinfo bi;

	SETUP(c_open(c, 0, true));
	return do_querybuf(c->fd[0], c->d->type, V4L2_MEMORY_MMAP, 0, &bi, NULL);
}

static int querybuf_removed(struct ctx *c)
{
	struct bufinfo bi;
	int r;

	SETUP(c_mmap_alloc(c, 3));
	r = remove_bufs(c->fd[0], c->d->type, 1, 1);
	if (r) {
		why(c, "REMOVE_BUFS(1, 1): %s", errname(r));
		return R_SETUP;
	}
	return do_querybuf(c->fd[0], c->d->type, V4L2_MEMORY_MMAP, 1, &bi, NULL);
}

static int querybuf_planes_short(struct ctx *c)
{
	struct v4l2_plane pl[MAXP];
	struct v4l2_buffer b;

	SETUP(c_mmap_alloc(c, 2));
	prep_buf(c, &b, pl, 0, V4L2_MEMORY_MMAP);
	b.length = 0;
	return -vb2_ioctl(c->fd[0], VIDIOC_QUERYBUF, &b);
}

static int querybuf_other_fd(struct ctx *c)
{
	struct bufinfo bi;

	SETUP(c_mmap_alloc(c, 2));
	SETUP(c_open(c, 1, true));
	return do_querybuf(c->fd[1], c->d->type, V4L2_MEMORY_MMAP, 0, &bi, NULL);
}

/* QBUF */

static int qbuf_bad_type(struct ctx *c)
{
	struct v4l2_plane pl[MAXP];
	struct v4l2_buffer b;

	SETUP(c_mmap_alloc(c, 2));
	prep_buf(c, &b, pl, 0, V4L2_MEMORY_MMAP);
	b.type = bad_type(c->d);
	if (!is_mplane(b.type))
		b.length = c->bi[0].len[0];
	return -vb2_ioctl(c->fd[0], VIDIOC_QBUF, &b);
}

static int qbuf_index_oob(struct ctx *c)
{
	struct v4l2_plane pl[MAXP];
	struct v4l2_buffer b;

	SETUP(c_mmap_alloc(c, 2));
	prep_buf(c, &b, pl, 0, V4L2_MEMORY_MMAP);
	b.index = c->count;
	return -vb2_ioctl(c->fd[0], VIDIOC_QBUF, &b);
}

static int qbuf_index_huge(struct ctx *c)
{
	struct v4l2_plane pl[MAXP];
	struct v4l2_buffer b;

	SETUP(c_mmap_alloc(c, 2));
	prep_buf(c, &b, pl, 0, V4L2_MEMORY_MMAP);
	b.index = 0x7fffffff;
	return -vb2_ioctl(c->fd[0], VIDIOC_QBUF, &b);
}

static int qbuf_no_buffers(struct ctx *c)
{
	struct v4l2_plane pl[MAXP];
	struct v4l2_buffer b;

	SETUP(c_open(c, 0, true));
	prep_buf(c, &b, pl, 0, V4L2_MEMORY_MMAP);
	return -vb2_ioctl(c->fd[0], VIDIOC_QBUF, &b);
}

static int qbuf_removed(struct ctx *c)
{
	int r;

	SETUP(c_mmap_alloc(c, 3));
	r = remove_bufs(c->fd[0], c->d->type, 1, 1);
	if (r) {
		why(c, "REMOVE_BUFS(1, 1): %s", errname(r));
		return R_SETUP;
	}
	return c_qbuf(c, 0, 1);
}

static int qbuf_wrong_memory(struct ctx *c)
{
	struct v4l2_plane pl[MAXP];
	struct v4l2_buffer b;

	SETUP(c_mmap_alloc(c, 2));
	prep_buf(c, &b, pl, 0, V4L2_MEMORY_DMABUF);
	if (c->d->mplane)
		pl[0].m.fd = -1;
	else
		b.m.fd = -1;
	return -vb2_ioctl(c->fd[0], VIDIOC_QBUF, &b);
}

static int qbuf_already_queued(struct ctx *c)
{
	int r;

	SETUP(c_mmap_alloc(c, 2));
	r = c_qbuf(c, 0, 0);
	if (r) {
		why(c, "first QBUF: %s", errname(r));
		return R_SETUP;
	}
	return c_qbuf(c, 0, 0);
}

static int qbuf_prepared_twice(struct ctx *c)
{
	struct v4l2_plane pl[MAXP];
	struct v4l2_buffer b;
	int r;

	SETUP(c_mmap_alloc(c, 2));
	prep_buf(c, &b, pl, 0, V4L2_MEMORY_MMAP);
	r = -vb2_ioctl(c->fd[0], VIDIOC_PREPARE_BUF, &b);
	if (r) {
		why(c, "PREPARE_BUF: %s", errname(r));
		return R_SETUP;
	}
	r = c_qbuf(c, 0, 0);
	if (r) {
		why(c, "QBUF of the prepared buffer: %s", errname(r));
		return R_SETUP;
	}
	return c_qbuf(c, 0, 0);
}

static int qbuf_planes_zero(struct ctx *c)
{
	struct v4l2_plane pl[MAXP];
	struct v4l2_buffer b;

	SETUP(c_mmap_alloc(c, 2));
	prep_buf(c, &b, pl, 0, V4L2_MEMORY_MMAP);
	b.length = 0;
	return -vb2_ioctl(c->fd[0], VIDIOC_QBUF, &b);
}

static int qbuf_planes_zero_badptr(struct ctx *c)
{
	struct v4l2_plane pl[MAXP];
	struct v4l2_buffer b;

	SETUP(c_mmap_alloc(c, 2));
	prep_buf(c, &b, pl, 0, V4L2_MEMORY_MMAP);
	/* No plane is copied in, so this pointer must never be followed. */
	b.length = 0;
	b.m.planes = (struct v4l2_plane *)(uintptr_t)0x10;
	return -vb2_ioctl(c->fd[0], VIDIOC_QBUF, &b);
}

static int qbuf_planes_short(struct ctx *c)
{
	struct v4l2_plane pl[MAXP];
	struct v4l2_buffer b;

	SETUP(c_mmap_alloc(c, 2));
	prep_buf(c, &b, pl, 0, V4L2_MEMORY_MMAP);
	b.length = c->nplanes - 1;
	return -vb2_ioctl(c->fd[0], VIDIOC_QBUF, &b);
}

static int qbuf_planes_too_many(struct ctx *c)
{
	struct v4l2_plane pl[MAXP + 1];
	struct v4l2_buffer b;

	SETUP(c_mmap_alloc(c, 2));
	prep_buf(c, &b, pl, 0, V4L2_MEMORY_MMAP);
	memset(&pl[MAXP], 0, sizeof(pl[MAXP]));
	b.length = MAXP + 1;
	return -vb2_ioctl(c->fd[0], VIDIOC_QBUF, &b);
}

static int qbuf_planes_null(struct ctx *c)
{
	struct v4l2_plane pl[MAXP];
	struct v4l2_buffer b;

	SETUP(c_mmap_alloc(c, 2));
	prep_buf(c, &b, pl, 0, V4L2_MEMORY_MMAP);
	b.m.planes = NULL;
	return -vb2_ioctl(c->fd[0], VIDIOC_QBUF, &b);
}

static int qbuf_planes_badptr(struct ctx *c)
{
	struct v4l2_plane pl[MAXP];
	struct v4l2_buffer b;
	void *none;

	SETUP(c_mmap_alloc(c, 2));
	none = c_anon(c, PAGE, PROT_NONE);
	SETUP(!none);
	prep_buf(c, &b, pl, 0, V4L2_MEMORY_MMAP);
	b.m.planes = none;
	return -vb2_ioctl(c->fd[0], VIDIOC_QBUF, &b);
}

/* USERPTR */

static int qbuf_userptr(struct ctx *c, unsigned long addr_of_plane0, u32 len0_div,
			bool plane0_from_arg)
{
	struct v4l2_plane pl[MAXP];
	struct v4l2_buffer b;
	unsigned int p;

	SETUP(c_alloc(c, 0, V4L2_MEMORY_USERPTR, 2));
	prep_buf(c, &b, pl, 0, V4L2_MEMORY_USERPTR);
	for (p = 0; p < c->nplanes; p++) {
		unsigned long addr;
		u32 len = c->d->sizes[p];

		if (p == 0 && plane0_from_arg) {
			addr = addr_of_plane0;
			len /= len0_div;
		} else {
			void *m = c_anon(c, len, PROT_READ | PROT_WRITE);

			SETUP(!m);
			addr = (unsigned long)m;
		}
		if (c->d->mplane) {
			pl[p].m.userptr = addr;
			pl[p].length = len;
			if (c->d->output)
				pl[p].bytesused = len;
		} else {
			b.m.userptr = addr;
			b.length = len;
			if (c->d->output)
				b.bytesused = len;
		}
	}
	return -vb2_ioctl(c->fd[0], VIDIOC_QBUF, &b);
}

static int qbuf_userptr_null(struct ctx *c)
{
	return qbuf_userptr(c, 0, 1, true);
}

static int qbuf_userptr_short(struct ctx *c)
{
	void *m = c_anon(c, c->d->sizes[0], PROT_READ | PROT_WRITE);

	SETUP(!m);
	return qbuf_userptr(c, (unsigned long)m, 2, true);
}

static int qbuf_userptr_unaligned(struct ctx *c)
{
	unsigned char *m = c_anon(c, c->d->sizes[0] + PAGE, PROT_READ | PROT_WRITE);

	SETUP(!m);
	return qbuf_userptr(c, (unsigned long)(m + 8), 1, true);
}

static int qbuf_userptr_readonly(struct ctx *c)
{
	void *m = c_anon(c, c->d->sizes[0], PROT_READ);

	SETUP(!m);
	return qbuf_userptr(c, (unsigned long)m, 1, true);
}

static int qbuf_userptr_unmapped(struct ctx *c)
{
	void *m = c_anon(c, c->d->sizes[0], PROT_NONE);

	SETUP(!m);
	return qbuf_userptr(c, (unsigned long)m, 1, true);
}

static int qbuf_userptr_kernel(struct ctx *c)
{
	return qbuf_userptr(c, 0xffff888000000000UL, 1, true);
}

static int prepare_userptr_short(struct ctx *c)
{
	struct v4l2_plane pl[MAXP];
	struct v4l2_buffer b;
	void *m;

	m = c_anon(c, c->d->sizes[0], PROT_READ | PROT_WRITE);
	SETUP(!m);
	SETUP(c_alloc(c, 0, V4L2_MEMORY_USERPTR, 2));
	prep_buf(c, &b, pl, 0, V4L2_MEMORY_USERPTR);
	if (c->d->mplane) {
		unsigned int p;

		for (p = 0; p < c->nplanes; p++) {
			void *mp = c_anon(c, c->d->sizes[p], PROT_READ | PROT_WRITE);

			SETUP(!mp);
			pl[p].m.userptr = (unsigned long)mp;
			pl[p].length = c->d->sizes[p];
		}
		pl[0].m.userptr = (unsigned long)m;
		pl[0].length = c->d->sizes[0] / 2;
		if (c->d->output)
			for (p = 0; p < c->nplanes; p++)
				pl[p].bytesused = pl[p].length;
	} else {
		b.m.userptr = (unsigned long)m;
		b.length = c->d->sizes[0] / 2;
		if (c->d->output)
			b.bytesused = b.length;
	}
	return -vb2_ioctl(c->fd[0], VIDIOC_PREPARE_BUF, &b);
}

/* DMABUF */

/*
 * QBUF of DMABUF buffer 0 with @fd0 as plane 0 (length @len0; the other planes get
 * dma-bufs of their size). Output planes carry bytesused = length: with a length of 0
 * ("the size of the dma-buf") any payload would be refused as larger than the length.
 */
static int qbuf_dmabuf_fds(struct ctx *c, int fd0, u32 len0)
{
	struct v4l2_plane pl[MAXP];
	struct v4l2_buffer b;
	unsigned int p;

	SETUP(c_alloc(c, 0, V4L2_MEMORY_DMABUF, 2));
	prep_buf(c, &b, pl, 0, V4L2_MEMORY_DMABUF);
	for (p = 0; p < c->nplanes; p++) {
		int fd = fd0;
		u32 len = len0;

		if (p > 0) {
			fd = c_dmabuf(c, c->d->sizes[p]);
			SETUP(fd < 0);
			len = c->d->sizes[p];
		}
		if (c->d->mplane) {
			pl[p].m.fd = fd;
			pl[p].length = len;
			if (c->d->output)
				pl[p].bytesused = len;
		} else {
			b.m.fd = fd;
			b.length = len;
			if (c->d->output)
				b.bytesused = len;
		}
	}
	return -vb2_ioctl(c->fd[0], VIDIOC_QBUF, &b);
}

static int qbuf_dmabuf_fd_neg(struct ctx *c)
{
	return qbuf_dmabuf_fds(c, -1, c->d->sizes[0]);
}

static int qbuf_dmabuf_not_dmabuf(struct ctx *c)
{
	int fd;

	SETUP(c_open(c, 1, true));
	fd = c->fd[1];	/* a video node: an fd, but not a dma-buf */
	return qbuf_dmabuf_fds(c, fd, c->d->sizes[0]);
}

static int qbuf_dmabuf_too_small(struct ctx *c)
{
	int fd;

	if (c->d->sizes[0] <= PAGE)
		SKIP(c, "plane 0 is not larger than a page");
	fd = c_dmabuf(c, PAGE);
	SETUP(fd < 0);
	/* Capture: length 0, the dma-buf's size counts. Output: its true size. */
	return qbuf_dmabuf_fds(c, fd, c->d->output ? PAGE : 0);
}

static int qbuf_dmabuf_length_short(struct ctx *c)
{
	int fd = c_dmabuf(c, c->d->sizes[0]);

	SETUP(fd < 0);
	return qbuf_dmabuf_fds(c, fd, c->d->sizes[0] / 2);
}

static int qbuf_dmabuf_valid(struct ctx *c)
{
	int fd = c_dmabuf(c, c->d->sizes[0]);

	SETUP(fd < 0);
	return qbuf_dmabuf_fds(c, fd, c->d->sizes[0]);
}

/* Output: a dma-buf larger than the format, length and bytesused its whole size. */
static int qbuf_dmabuf_payload_gt_format(struct ctx *c)
{
	u32 len = PAGE_ALIGN(c->d->sizes[0]) + PAGE;
	int fd = c_dmabuf(c, len);

	SETUP(fd < 0);
	return qbuf_dmabuf_fds(c, fd, len);
}

/*
 * Single-planar output, DMABUF with length 0 ("the whole dma-buf", as coda's and
 * rkisp1-params' users queue it) and the payload @bytesused, from dma-bufs of the
 * format's size: QBUF's errno for buffer 0. Accepted, the buffers must stream: buffer 1
 * the same way (vivid holds on to the last buffer it got), STREAMON (on a mem2mem node
 * the capture queue streams too), and DQBUF gives buffer 0 back with the payload and the
 * dma-buf's size as the length.
 */
static int qbuf_dmabuf_out_length0(struct ctx *c, u32 bytesused)
{
	u32 size = c->d->sizes[0], type = c->d->type, i;
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
	SETUP(c_alloc(c, 0, V4L2_MEMORY_DMABUF, 2));
	for (i = 0; i < 2 && !r; i++) {
		prep_buf(c, &b, pl, i, V4L2_MEMORY_DMABUF);
		b.m.fd = fd[i];
		b.length = 0;
		b.bytesused = bytesused;
		r = -vb2_ioctl(c->fd[0], VIDIOC_QBUF, &b);
		if (r && i)
			post_fail(c, "QBUF of buffer 1 the same way: %s", errname(r));
	}
	if (r || c->post_fail)
		return c->post_fail ? 0 : r;
	if (streamon(c->fd[0], type)) {
		post_fail(c, "STREAMON: %s", errname(errno));
		return 0;
	}
	/* A mem2mem job needs a capture buffer too. */
	if (c->d->m2m && c_m2m_feed(c)) {
		post_fail(c, "the capture queue did not start");
		return 0;
	}
	if (!(wait_ev(c->fd[0], POLLOUT, WAIT_MS) & POLLOUT)) {
		post_fail(c, "no buffer came back within %d ms", WAIT_MS);
		return 0;
	}
	memset(&b, 0, sizeof(b));
	b.type = type;
	b.memory = V4L2_MEMORY_DMABUF;
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

static int qbuf_dmabuf_out_length0_valid(struct ctx *c)
{
	return qbuf_dmabuf_out_length0(c, c->d->sizes[0]);
}

static int qbuf_dmabuf_out_length0_over(struct ctx *c)
{
	return qbuf_dmabuf_out_length0(c, c->d->sizes[0] + 1);
}

/* Output payload */

static int qbuf_bytesused_gt_length(struct ctx *c)
{
	struct v4l2_plane pl[MAXP];
	struct v4l2_buffer b;

	SETUP(c_mmap_alloc(c, 2));
	prep_buf(c, &b, pl, 0, V4L2_MEMORY_MMAP);
	if (c->d->mplane)
		pl[0].bytesused = pl[0].length + 1;
	else
		b.bytesused = b.length + 1;
	return -vb2_ioctl(c->fd[0], VIDIOC_QBUF, &b);
}

static int qbuf_data_offset_ge_bytesused(struct ctx *c)
{
	struct v4l2_plane pl[MAXP];
	struct v4l2_buffer b;

	SETUP(c_mmap_alloc(c, 2));
	prep_buf(c, &b, pl, 0, V4L2_MEMORY_MMAP);
	pl[0].data_offset = pl[0].bytesused;
	return -vb2_ioctl(c->fd[0], VIDIOC_QBUF, &b);
}

/* Ownership */

static int qbuf_other_fd(struct ctx *c)
{
	SETUP(c_mmap_alloc(c, 2));
	SETUP(c_open(c, 1, true));
	return c_qbuf(c, 1, 0);
}

/* Requests */

static int qbuf_request_not_request(struct ctx *c)
{
	SETUP(c_mmap_alloc(c, 2));
	return c_qbuf_req(c, 0, c->fd[0]);
}

static int qbuf_request_fd_neg(struct ctx *c)
{
	SETUP(c_mmap_alloc(c, 2));
	return c_qbuf_req(c, 0, -1);
}

static int qbuf_request_closed(struct ctx *c)
{
	int fd;

	SETUP(c_mmap_alloc(c, 2));
	SETUP(c_request(c, 0));
	fd = c->req[0];
	close(fd);
	c->req[0] = -1;
	return c_qbuf_req(c, 0, fd);
}

static int qbuf_request_unsupported(struct ctx *c)
{
	SETUP(c_mmap_alloc(c, 2));
	return c_qbuf_req(c, 0, -1);
}

/* A capture buffer of a mem2mem device into a real request of its media device. */
static int qbuf_request_m2m_capture(struct ctx *c)
{
	if (!(c->d->other_caps & V4L2_BUF_CAP_SUPPORTS_REQUESTS))
		SKIP(c, "the output queue does not support requests either");
	SETUP(c_mmap_alloc(c, 2));
	SETUP(c_request(c, 0));
	return c_qbuf_req(c, 0, c->req[0]);
}

static int qbuf_mix_direct_then_request(struct ctx *c)
{
	int r;

	SETUP(c_mmap_alloc(c, 2));
	r = c_qbuf(c, 0, 0);
	if (r) {
		why(c, "direct QBUF: %s", errname(r));
		return R_SETUP;
	}
	SETUP(c_request(c, 0));
	return c_qbuf_req(c, 1, c->req[0]);
}

static int qbuf_mix_request_then_direct(struct ctx *c)
{
	int r;

	SETUP(c_mmap_alloc(c, 2));
	SETUP(c_request(c, 0));
	r = c_qbuf_req(c, 0, c->req[0]);
	if (r) {
		why(c, "QBUF into a request: %s", errname(r));
		return R_SETUP;
	}
	return c_qbuf(c, 0, 1);
}

static int qbuf_direct_after_request_streamoff(struct ctx *c)
{
	int r;

	SETUP(c_mmap_alloc(c, 2));
	SETUP(c_request(c, 0));
	r = c_qbuf_req(c, 0, c->req[0]);
	if (r) {
		why(c, "QBUF into a request: %s", errname(r));
		return R_SETUP;
	}
	r = streamoff(c->fd[0], c->d->type);
	if (r) {
		why(c, "STREAMOFF: %s", errname(r));
		return R_SETUP;
	}
	return c_qbuf(c, 0, 1);
}

static int qbuf_into_queued_request(struct ctx *c)
{
	int r;

	SETUP(c_mmap_alloc(c, 2));
	SETUP(c_request(c, 0));
	r = c_qbuf_req(c, 0, c->req[0]);
	if (!r)
		r = -vb2_request_queue(c->req[0]);
	if (r) {
		why(c, "binding and queueing the request: %s", errname(r));
		return R_SETUP;
	}
	return c_qbuf_req(c, 1, c->req[0]);
}

static int req_queue_empty(struct ctx *c)
{
	SETUP(c_mmap_alloc(c, 2));
	SETUP(c_request(c, 0));
	return -vb2_request_queue(c->req[0]);
}

static int req_queue_twice(struct ctx *c)
{
	int r;

	SETUP(c_mmap_alloc(c, 2));
	SETUP(c_request(c, 0));
	r = c_qbuf_req(c, 0, c->req[0]);
	if (!r)
		r = -vb2_request_queue(c->req[0]);
	if (r) {
		why(c, "binding and queueing the request: %s", errname(r));
		return R_SETUP;
	}
	return -vb2_request_queue(c->req[0]);
}

static int req_reinit_queued(struct ctx *c)
{
	int r;

	SETUP(c_mmap_alloc(c, 2));
	SETUP(c_request(c, 0));
	r = c_qbuf_req(c, 0, c->req[0]);
	if (!r)
		r = -vb2_request_queue(c->req[0]);
	if (r) {
		why(c, "binding and queueing the request: %s", errname(r));
		return R_SETUP;
	}
	/* The queue does not stream: the request cannot complete. */
	return -vb2_request_reinit(c->req[0]);
}

static int req_reinit_unbinds(struct ctx *c)
{
	int r, q;

	SETUP(c_mmap_alloc(c, 2));
	SETUP(c_request(c, 0));
	r = c_qbuf_req(c, 0, c->req[0]);
	if (!r)
		r = -vb2_request_reinit(c->req[0]);
	if (r) {
		why(c, "binding and re-initializing the request: %s", errname(r));
		return R_SETUP;
	}
	q = -vb2_request_queue(c->req[0]);
	/* The buffer went back to the application: it can be bound again. */
	if (c_request(c, 1) || (r = c_qbuf_req(c, 0, c->req[1])))
		post_fail(c, "buffer 0 cannot be bound to a new request after REINIT: %s",
			  errname(r));
	return q;
}

static int req_close_unqueued(struct ctx *c)
{
	int r;

	SETUP(c_mmap_alloc(c, 2));
	SETUP(c_request(c, 0));
	r = c_qbuf_req(c, 0, c->req[0]);
	if (r) {
		why(c, "QBUF into a request: %s", errname(r));
		return R_SETUP;
	}
	close(c->req[0]);
	c->req[0] = -1;
	SETUP(c_request(c, 1));
	r = c_qbuf_req(c, 0, c->req[1]);
	if (r) {
		/* Still bound to the closed request: STREAMOFF must give it back. */
		int q;

		streamoff(c->fd[0], c->d->type);
		q = c_qbuf_req(c, 0, c->req[1]);
		if (q)
			post_fail(c, "buffer 0 stays unusable after STREAMOFF: QBUF %s",
				  errname(q));
	}
	return r;
}

/*
 * Two buffers of the queue bound to one request (queued with @queue), then REQBUFS(0):
 * the buffers are freed, the request completes. Returns the errno of REQBUFS(0).
 */
static int req_two_bufs_free(struct ctx *c, bool queue)
{
	int r;

	SETUP(c_mmap_alloc(c, 2));
	SETUP(c_request(c, 0));
	r = c_qbuf_req(c, 0, c->req[0]);
	if (!r)
		r = c_qbuf_req(c, 1, c->req[0]);
	if (r) {
		why(c, "binding two buffers to one request: %s", errname(r));
		return R_SETUP;
	}
	if (queue) {
		r = -vb2_request_queue(c->req[0]);
		if (r)
			SKIP(c, "the driver refuses a request with two buffers: %s", errname(r));
	}
	r = do_reqbufs(c->fd[0], c->d->type, V4L2_MEMORY_MMAP, 0, NULL);
	if (!r && queue && !(wait_ev(c->req[0], POLLPRI, 0) & POLLPRI))
		post_fail(c, "the request did not complete when its buffers were freed");
	return r;
}

static int req_two_bufs_unqueued_free(struct ctx *c)
{
	return req_two_bufs_free(c, false);
}

static int req_two_bufs_queued_free(struct ctx *c)
{
	return req_two_bufs_free(c, true);
}

static int req_alloc_unsupported(struct ctx *c)
{
	int fd;

	SETUP(c_media(c));
	fd = vb2_request_alloc(c->mfd);
	if (fd >= 0)
		close(fd);
	return fd < 0 ? -fd : 0;
}

/* DQBUF */

static int dqbuf_not_streaming(struct ctx *c)
{
	int r;

	SETUP(c_mmap_alloc(c, 2));
	r = c_qbuf(c, 0, 0);
	if (r) {
		why(c, "QBUF: %s", errname(r));
		return R_SETUP;
	}
	return c_dqbuf(c, 0, c->d->type, NULL);
}

static int dqbuf_nonblock_empty(struct ctx *c)
{
	SETUP(c_mmap_alloc(c, 2));
	SETUP(streamon(c->fd[0], c->d->type) ? (why(c, "STREAMON failed"), -1) : 0);
	return c_dqbuf(c, 0, c->d->type, NULL);
}

static int dqbuf_bad_type(struct ctx *c)
{
	SETUP(c_mmap_alloc(c, 2));
	SETUP(c_stream_one_done(c, c->count));
	return c_dqbuf(c, 0, bad_type(c->d), NULL);
}

static int dqbuf_no_buffers(struct ctx *c)
{
	SETUP(c_open(c, 0, true));
	return c_dqbuf(c, 0, c->d->type, NULL);
}

static int dqbuf_planes_short(struct ctx *c)
{
	struct v4l2_plane pl[MAXP];
	struct v4l2_buffer b;
	int r, r2;

	SETUP(c_mmap_alloc(c, 2));
	SETUP(c_stream_one_done(c, c->count));
	prep_buf(c, &b, pl, 0, V4L2_MEMORY_MMAP);
	b.length = 0;
	r = -vb2_ioctl(c->fd[0], VIDIOC_DQBUF, &b);
	/* The done buffer must still be there for a correct DQBUF. */
	r2 = c_dqbuf(c, 0, c->d->type, NULL);
	if (!r && r2 == EAGAIN)
		r2 = 0;
	if (r2)
		post_fail(c, "DQBUF after the refused one: %s (buffer lost?)", errname(r2));
	return r;
}

static int dqbuf_other_fd(struct ctx *c)
{
	SETUP(c_mmap_alloc(c, 2));
	SETUP(c_stream_one_done(c, c->count));
	SETUP(c_open(c, 1, true));
	return c_dqbuf(c, 1, c->d->type, NULL);
}

static int dqbuf_fileio(struct ctx *c)
{
	SETUP(c_start_fileio(c, 0));
	return c_dqbuf(c, 0, c->d->type, NULL);
}

/* PREPARE_BUF */

static int prepare_call(struct ctx *c, u32 idx, u32 type)
{
	struct v4l2_plane pl[MAXP];
	struct v4l2_buffer b;

	prep_buf(c, &b, pl, idx, V4L2_MEMORY_MMAP);
	b.type = type;
	if (!is_mplane(type))
		b.length = c->bi[0].len[0];
	return -vb2_ioctl(c->fd[0], VIDIOC_PREPARE_BUF, &b);
}

static int prepare_twice(struct ctx *c)
{
	int r;

	SETUP(c_mmap_alloc(c, 2));
	r = prepare_call(c, 0, c->d->type);
	if (r) {
		why(c, "first PREPARE_BUF: %s", errname(r));
		return R_SETUP;
	}
	return prepare_call(c, 0, c->d->type);
}

static int prepare_queued(struct ctx *c)
{
	int r;

	SETUP(c_mmap_alloc(c, 2));
	r = c_qbuf(c, 0, 0);
	if (r) {
		why(c, "QBUF: %s", errname(r));
		return R_SETUP;
	}
	return prepare_call(c, 0, c->d->type);
}

static int prepare_bad_type(struct ctx *c)
{
	SETUP(c_mmap_alloc(c, 2));
	return prepare_call(c, 0, bad_type(c->d));
}

static int prepare_index_oob(struct ctx *c)
{
	SETUP(c_mmap_alloc(c, 2));
	return prepare_call(c, c->count, c->d->type);
}

static int prepare_removed(struct ctx *c)
{
	int r;

	SETUP(c_mmap_alloc(c, 3));
	r = remove_bufs(c->fd[0], c->d->type, 1, 1);
	if (r) {
		why(c, "REMOVE_BUFS(1, 1): %s", errname(r));
		return R_SETUP;
	}
	return prepare_call(c, 1, c->d->type);
}

static int prepare_request_flag(struct ctx *c)
{
	struct v4l2_plane pl[MAXP];
	struct v4l2_buffer b;

	SETUP(c_mmap_alloc(c, 2));
	SETUP(c_request(c, 0));
	prep_buf(c, &b, pl, 0, V4L2_MEMORY_MMAP);
	b.flags |= V4L2_BUF_FLAG_REQUEST_FD;
	b.request_fd = c->req[0];
	return -vb2_ioctl(c->fd[0], VIDIOC_PREPARE_BUF, &b);
}

static int prepare_fileio(struct ctx *c)
{
	SETUP(c_start_fileio(c, 0));
	c->nplanes = c->d->nplanes;
	return prepare_call(c, 0, c->d->type);
}

/* EXPBUF */

static int expbuf_call(struct ctx *c, u32 type, u32 idx, u32 plane, u32 flags)
{
	struct v4l2_exportbuffer eb = { .type = type, .index = idx, .plane = plane,
					.flags = flags };
	int r = -vb2_ioctl(c->fd[0], VIDIOC_EXPBUF, &eb);

	if (!r) {
		int slot = c_dfd_slot(c);

		if (slot >= 0)
			c->dfd[slot] = eb.fd;
		else
			close(eb.fd);
	}
	return r;
}

static int expbuf_userptr_queue(struct ctx *c)
{
	SETUP(c_alloc(c, 0, V4L2_MEMORY_USERPTR, 2));
	return expbuf_call(c, c->d->type, 0, 0, O_RDWR);
}

static int expbuf_dmabuf_queue(struct ctx *c)
{
	SETUP(c_alloc(c, 0, V4L2_MEMORY_DMABUF, 2));
	return expbuf_call(c, c->d->type, 0, 0, O_RDWR);
}

static int expbuf_bad_plane(struct ctx *c)
{
	SETUP(c_mmap_alloc(c, 2));
	return expbuf_call(c, c->d->type, 0, c->nplanes, O_RDWR);
}

static int expbuf_bad_flags(struct ctx *c)
{
	SETUP(c_mmap_alloc(c, 2));
	return expbuf_call(c, c->d->type, 0, 0, O_RDWR | O_NONBLOCK);
}

static int expbuf_bad_type(struct ctx *c)
{
	SETUP(c_mmap_alloc(c, 2));
	return expbuf_call(c, bad_type(c->d), 0, 0, O_RDWR);
}

static int expbuf_index_oob(struct ctx *c)
{
	SETUP(c_mmap_alloc(c, 2));
	return expbuf_call(c, c->d->type, c->count, 0, O_RDWR);
}

static int expbuf_removed(struct ctx *c)
{
	int r;

	SETUP(c_mmap_alloc(c, 3));
	r = remove_bufs(c->fd[0], c->d->type, 1, 1);
	if (r) {
		why(c, "REMOVE_BUFS(1, 1): %s", errname(r));
		return R_SETUP;
	}
	return expbuf_call(c, c->d->type, 1, 0, O_RDWR);
}

static int expbuf_no_buffers(struct ctx *c)
{
	SETUP(c_open(c, 0, true));
	return expbuf_call(c, c->d->type, 0, 0, O_RDWR);
}

static int expbuf_fileio(struct ctx *c)
{
	SETUP(c_start_fileio(c, 0));
	return expbuf_call(c, c->d->type, 0, 0, O_RDWR);
}

/* STREAMON / STREAMOFF */

static int streamon_bad_type(struct ctx *c)
{
	SETUP(c_mmap_alloc(c, 2));
	return streamon(c->fd[0], bad_type(c->d));
}

static int streamoff_bad_type(struct ctx *c)
{
	SETUP(c_mmap_alloc(c, 2));
	return streamoff(c->fd[0], bad_type(c->d));
}

static int streamon_no_buffers(struct ctx *c)
{
	SETUP(c_open(c, 0, true));
	return streamon(c->fd[0], c->d->type);
}

static int streamon_other_fd(struct ctx *c)
{
	SETUP(c_mmap_alloc(c, 2));
	SETUP(c_open(c, 1, true));
	return streamon(c->fd[1], c->d->type);
}

static int streamoff_other_fd(struct ctx *c)
{
	SETUP(c_mmap_alloc(c, 2));
	SETUP(streamon(c->fd[0], c->d->type) ? (why(c, "STREAMON failed"), -1) : 0);
	SETUP(c_open(c, 1, true));
	return streamoff(c->fd[1], c->d->type);
}

static int streamon_twice(struct ctx *c)
{
	SETUP(c_mmap_alloc(c, 2));
	SETUP(streamon(c->fd[0], c->d->type) ? (why(c, "STREAMON failed"), -1) : 0);
	return streamon(c->fd[0], c->d->type);
}

static int streamoff_not_streaming(struct ctx *c)
{
	int r;

	SETUP(c_mmap_alloc(c, 2));
	r = c_qbuf(c, 0, 0);
	if (r) {
		why(c, "QBUF: %s", errname(r));
		return R_SETUP;
	}
	r = streamoff(c->fd[0], c->d->type);
	/* The queued buffer returned to its state after REQBUFS: it can be queued again. */
	if (!r && c_qbuf(c, 0, 0))
		post_fail(c, "buffer 0 could not be queued again after STREAMOFF");
	return r;
}

static int streamon_output_none_queued(struct ctx *c)
{
	SETUP(c_mmap_alloc(c, 2));
	return streamon(c->fd[0], c->d->type);
}

static int streamon_fileio_other_fd(struct ctx *c)
{
	SETUP(c_start_fileio(c, 0));
	SETUP(c_open(c, 1, true));
	return streamon(c->fd[1], c->d->type);
}

/* REMOVE_BUFS */

static int remove_queued(struct ctx *c)
{
	int r;

	SETUP(c_mmap_alloc(c, 3));
	r = c_qbuf(c, 0, 1);
	if (r) {
		why(c, "QBUF: %s", errname(r));
		return R_SETUP;
	}
	r = remove_bufs(c->fd[0], c->d->type, 0, 3);
	/* Nothing may have been removed. */
	if (r) {
		struct bufinfo bi;

		if (do_querybuf(c->fd[0], c->d->type, V4L2_MEMORY_MMAP, 0, &bi, NULL))
			post_fail(c, "buffer 0 was removed although the call failed");
	}
	return r;
}

static int remove_count_overflow(struct ctx *c)
{
	SETUP(c_mmap_alloc(c, 2));
	return remove_bufs(c->fd[0], c->d->type, 1, 0xffffffff);
}

static int remove_out_of_range(struct ctx *c)
{
	SETUP(c_mmap_alloc(c, 2));
	return remove_bufs(c->fd[0], c->d->type, c->count, 1);
}

static int remove_partly_out_of_range(struct ctx *c)
{
	int r;

	SETUP(c_mmap_alloc(c, 2));
	r = remove_bufs(c->fd[0], c->d->type, c->count - 1, 2);
	if (r) {
		struct bufinfo bi;

		if (do_querybuf(c->fd[0], c->d->type, V4L2_MEMORY_MMAP, c->count - 1, &bi,
				NULL))
			post_fail(c, "the last buffer was removed although the call failed");
	}
	return r;
}

static int remove_bad_type(struct ctx *c)
{
	SETUP(c_mmap_alloc(c, 2));
	return remove_bufs(c->fd[0], bad_type(c->d), 0, 1);
}

static int remove_count0(struct ctx *c)
{
	SETUP(c_mmap_alloc(c, 2));
	return remove_bufs(c->fd[0], c->d->type, 0x7fffffff, 0);
}

static int remove_count0_bad_type(struct ctx *c)
{
	SETUP(c_mmap_alloc(c, 2));
	return remove_bufs(c->fd[0], bad_type(c->d), 0, 0);
}

static int remove_hole(struct ctx *c)
{
	int r;

	SETUP(c_mmap_alloc(c, 3));
	r = remove_bufs(c->fd[0], c->d->type, 1, 1);
	if (r) {
		why(c, "REMOVE_BUFS(1, 1): %s", errname(r));
		return R_SETUP;
	}
	return remove_bufs(c->fd[0], c->d->type, 0, 3);
}

static int remove_no_buffers(struct ctx *c)
{
	SETUP(c_open(c, 0, true));
	return remove_bufs(c->fd[0], c->d->type, 0, 1);
}

static int remove_fileio(struct ctx *c)
{
	SETUP(c_start_fileio(c, 0));
	return remove_bufs(c->fd[0], c->d->type, 0, 1);
}

static int remove_other_fd(struct ctx *c)
{
	SETUP(c_mmap_alloc(c, 2));
	SETUP(c_open(c, 1, true));
	return remove_bufs(c->fd[1], c->d->type, 0, 1);
}

static int remove_then_create_reuses(struct ctx *c)
{
	u32 idx = 99;
	int r;

	SETUP(c_mmap_alloc(c, 3));
	r = remove_bufs(c->fd[0], c->d->type, 1, 1);
	if (r) {
		why(c, "REMOVE_BUFS(1, 1): %s", errname(r));
		return R_SETUP;
	}
	r = create_bufs(c, 0, V4L2_MEMORY_MMAP, 1, &idx, NULL);
	if (!r && idx != 1)
		post_fail(c, "CREATE_BUFS after removing buffer 1 gave index %u", idx);
	return r;
}

/* mmap / munmap */

static u32 base_off(const struct dev *d)
{
	return d->m2m && !d->output ? M2M_CAP_OFF : 0;
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

static int mmap_bad_offset(struct ctx *c)
{
	SETUP(c_mmap_alloc(c, 2));
	return c_mmap(c, PAGE, PROT_READ | PROT_WRITE, MAP_SHARED,
		      base_off(c->d) + 0x3fff0000UL);
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
	u32 off;

	SETUP(c_mmap_alloc(c, 2));
	/* A page inside plane 0 of buffer 0 that is no plane's offset. */
	for (off = c->bi[0].off[0] + PAGE; off < c->bi[0].off[0] + c->bi[0].len[0]; off += PAGE)
		if (!is_plane_offset(c, off))
			break;
	if (off >= c->bi[0].off[0] + c->bi[0].len[0])
		SKIP(c, "every page offset inside plane 0 is another plane's");
	return c_mmap(c, PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, off);
}

static int mmap_offset_unaligned(struct ctx *c)
{
	SETUP(c_mmap_alloc(c, 2));
	return c_mmap(c, PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, c->bi[0].off[0] + 1);
}

static int mmap_too_long(struct ctx *c)
{
	SETUP(c_mmap_alloc(c, 2));
	return c_mmap(c, PAGE_ALIGN(c->bi[0].len[0]) + PAGE, PROT_READ | PROT_WRITE, MAP_SHARED,
		      c->bi[0].off[0]);
}

static int mmap_private(struct ctx *c)
{
	SETUP(c_mmap_alloc(c, 2));
	return c_mmap(c, c->bi[0].len[0], PROT_READ | PROT_WRITE, MAP_PRIVATE, c->bi[0].off[0]);
}

static int mmap_no_read(struct ctx *c)
{
	SETUP(c_mmap_alloc(c, 2));
	return c_mmap(c, c->bi[0].len[0], PROT_WRITE, MAP_SHARED, c->bi[0].off[0]);
}

static int mmap_no_write(struct ctx *c)
{
	SETUP(c_mmap_alloc(c, 2));
	return c_mmap(c, c->bi[0].len[0], PROT_READ, MAP_SHARED, c->bi[0].off[0]);
}

static int mmap_no_buffers(struct ctx *c)
{
	SETUP(c_open(c, 0, true));
	return c_mmap(c, PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, base_off(c->d));
}

static int mmap_removed(struct ctx *c)
{
	int r;

	SETUP(c_mmap_alloc(c, 3));
	r = remove_bufs(c->fd[0], c->d->type, 1, 1);
	if (r) {
		why(c, "REMOVE_BUFS(1, 1): %s", errname(r));
		return R_SETUP;
	}
	return c_mmap(c, c->bi[1].len[0], PROT_READ | PROT_WRITE, MAP_SHARED, c->bi[1].off[0]);
}

static int mmap_after_free(struct ctx *c)
{
	int r;

	SETUP(c_mmap_alloc(c, 2));
	r = do_reqbufs(c->fd[0], c->d->type, V4L2_MEMORY_MMAP, 0, NULL);
	if (r) {
		why(c, "REQBUFS(0): %s", errname(r));
		return R_SETUP;
	}
	return c_mmap(c, c->bi[0].len[0], PROT_READ | PROT_WRITE, MAP_SHARED, c->bi[0].off[0]);
}

static int mmap_userptr_queue(struct ctx *c)
{
	SETUP(c_alloc(c, 0, V4L2_MEMORY_USERPTR, 2));
	return c_mmap(c, c->d->sizes[0], PROT_READ | PROT_WRITE, MAP_SHARED, base_off(c->d));
}

static int munmap_unaligned(struct ctx *c)
{
	unsigned char *p;

	SETUP(c_mmap_alloc(c, 2));
	p = c_track(c, mmap(NULL, c->bi[0].len[0], PROT_READ | PROT_WRITE, MAP_SHARED,
			    c->fd[0], c->bi[0].off[0]), c->bi[0].len[0]);
	if (p == MAP_FAILED) {
		why(c, "mmap: %s", strerror(errno));
		return R_SETUP;
	}
	return munmap(p + 1, PAGE) ? errno : 0;
}

static int munmap_partial(struct ctx *c)
{
	unsigned char *p;
	size_t len;
	int r;

	SETUP(c_mmap_alloc(c, 2));
	len = PAGE_ALIGN(c->bi[0].len[0]);
	if (len < 2 * PAGE)
		SKIP(c, "plane 0 is not larger than a page");
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, c->fd[0], c->bi[0].off[0]);
	if (p == MAP_FAILED) {
		why(c, "mmap: %s", strerror(errno));
		return R_SETUP;
	}
	/* Unmap the first page, keep the rest (tracked for the cleanup) and use it. */
	r = munmap(p, PAGE) ? errno : 0;
	c_track(c, p + PAGE, len - PAGE);
	if (!r) {
		if (!touch_ok(p + len - 1))
			post_fail(c, "the rest of the mapping faults");
		else if (do_reqbufs(c->fd[0], c->d->type, V4L2_MEMORY_MMAP, 0, NULL))
			post_fail(c, "REQBUFS(0) with a partial mapping failed");
		else if (!touch_ok(p + len - 1))
			post_fail(c, "the rest of the mapping faults after REQBUFS(0)");
	}
	return r;
}

static int mmap_twice(struct ctx *c)
{
	int r;

	SETUP(c_mmap_alloc(c, 2));
	r = c_mmap(c, c->bi[0].len[0], PROT_READ | PROT_WRITE, MAP_SHARED, c->bi[0].off[0]);
	if (r) {
		why(c, "first mmap: %s", errname(r));
		return R_SETUP;
	}
	return c_mmap(c, c->bi[0].len[0], PROT_READ | PROT_WRITE, MAP_SHARED, c->bi[0].off[0]);
}

/* read() / write() */

static int read_while_streaming(struct ctx *c)
{
	char buf[64];

	SETUP(c_mmap_alloc(c, 2));
	SETUP(streamon(c->fd[0], c->d->type) ? (why(c, "STREAMON failed"), -1) : 0);
	return read(c->fd[0], buf, sizeof(buf)) < 0 ? errno : 0;
}

static int write_while_streaming(struct ctx *c)
{
	char buf[64] = { 0 };

	SETUP(c_mmap_alloc(c, 2));
	SETUP(streamon(c->fd[0], c->d->type) ? (why(c, "STREAMON failed"), -1) : 0);
	return write(c->fd[0], buf, sizeof(buf)) < 0 ? errno : 0;
}

static int read_buffers_allocated(struct ctx *c)
{
	char buf[64];

	SETUP(c_mmap_alloc(c, 2));
	return read(c->fd[0], buf, sizeof(buf)) < 0 ? errno : 0;
}

static int io_other_fd_owner(struct ctx *c)
{
	char buf[64] = { 0 };
	ssize_t n;

	SETUP(c_mmap_alloc(c, 2));
	SETUP(c_open(c, 1, true));
	if (c->d->output)
		n = write(c->fd[1], buf, sizeof(buf));
	else
		n = read(c->fd[1], buf, sizeof(buf));
	return n < 0 ? errno : 0;
}

static int io_fileio_other_fd(struct ctx *c)
{
	char buf[64] = { 0 };
	ssize_t n;

	SETUP(c_start_fileio(c, 0));
	SETUP(c_open(c, 1, true));
	if (c->d->output)
		n = write(c->fd[1], buf, sizeof(buf));
	else
		n = read(c->fd[1], buf, sizeof(buf));
	return n < 0 ? errno : 0;
}

static int read_on_output(struct ctx *c)
{
	char buf[64];

	SETUP(c_open(c, 0, true));
	return read(c->fd[0], buf, sizeof(buf)) < 0 ? errno : 0;
}

static int write_on_capture(struct ctx *c)
{
	char buf[64] = { 0 };

	SETUP(c_open(c, 0, true));
	return write(c->fd[0], buf, sizeof(buf)) < 0 ? errno : 0;
}

static int read_bad_buffer(struct ctx *c)
{
	size_t len = c->d->sizes[0];
	void *none = c_anon(c, len, PROT_NONE);
	unsigned char *good = c_anon(c, len, PROT_READ | PROT_WRITE);
	ssize_t n;
	int r;

	SETUP(!none || !good);
	SETUP(c_open(c, 0, false));
	n = read(c->fd[0], none, len);
	r = n < 0 ? errno : 0;
	/* "the next read will start at the beginning of a new frame" (func-read.rst) */
	n = read(c->fd[0], good, len);
	if (n <= 0)
		post_fail(c, "the next read() failed: %s", n < 0 ? errname(errno) : "EOF");
	return r;
}

static int write_bad_buffer(struct ctx *c)
{
	size_t len = c->d->sizes[0];
	void *none = c_anon(c, len, PROT_NONE);
	unsigned char *good = c_anon(c, len, PROT_READ | PROT_WRITE);
	ssize_t n;
	int r;

	SETUP(!none || !good);
	SETUP(c_open(c, 0, false));
	n = write(c->fd[0], none, len);
	r = n < 0 ? errno : 0;
	n = write(c->fd[0], good, len);
	if (n <= 0)
		post_fail(c, "the next write() failed: %s", n < 0 ? errname(errno) : "0 bytes");
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

	SETUP(c_open(c, 0, true));
	if (c->d->output)
		n = write(c->fd[0], buf, 0);
	else
		n = read(c->fd[0], buf, 0);
	if (n < 0 && errno != EAGAIN)
		return errno;
	if (n < 0)
		e = errno;
	else if (n)
		return EOVERFLOW;
	r = do_reqbufs(c->fd[0], c->d->type, V4L2_MEMORY_MMAP, 2, NULL);
	snprintf(c->got_str, sizeof(c->got_str), "%s,then-REQBUFS-%s", errname(e),
		 errname(r));
	return r;
}

/* Whole frames through read() or write() (blocking): the control case. */
static int io_frames(struct ctx *c)
{
	size_t len = c->d->sizes[0];
	unsigned char *buf = c_anon(c, len, PROT_READ | PROT_WRITE);
	int i;

	SETUP(!buf);
	SETUP(c_open(c, 0, false));
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

/* poll() */

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

static int poll_not_streaming(struct ctx *c)
{
	SETUP(c_mmap_alloc(c, 2));
	return poll_result(c, POLLIN | POLLOUT | POLLRDNORM | POLLWRNORM, POLLERR);
}

static int poll_capture_streamon_noqbuf(struct ctx *c)
{
	SETUP(c_mmap_alloc(c, 2));
	SETUP(streamon(c->fd[0], c->d->type) ? (why(c, "STREAMON failed"), -1) : 0);
	return poll_result(c, POLLIN | POLLRDNORM, POLLERR);
}

static int poll_output_streamon_noqbuf(struct ctx *c)
{
	SETUP(c_mmap_alloc(c, 2));
	SETUP(streamon(c->fd[0], c->d->type) ? (why(c, "STREAMON failed"), -1) : 0);
	return poll_result(c, POLLOUT | POLLWRNORM, POLLOUT | POLLWRNORM);
}

/* ---------------------------------------------------------------------------------- */
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
	{ "reqbufs-bad-type", EINVAL, NO_ALT, 0, reqbufs_bad_type,
	  "vidioc-reqbufs.rst: EINVAL, the buffer type is not supported", NULL },
	{ "reqbufs-type-zero", EINVAL, NO_ALT, 0, reqbufs_type_zero,
	  "vidioc-reqbufs.rst: EINVAL, the buffer type is not supported", NULL },
	{ "reqbufs-memory-zero", EINVAL, NO_ALT, 0, reqbufs_memory_zero,
	  "vidioc-reqbufs.rst: EINVAL, the I/O method is not supported", NULL },
	{ "reqbufs-memory-overlay", EINVAL, NO_ALT, 0, reqbufs_memory_overlay,
	  "vidioc-reqbufs.rst: EINVAL, the I/O method is not supported", NULL },
	{ "reqbufs-memory-huge", EINVAL, NO_ALT, 0, reqbufs_memory_huge,
	  "vidioc-reqbufs.rst: EINVAL, the I/O method is not supported", NULL },
	{ "reqbufs-userptr-unsupported", EINVAL, NO_ALT, N_NOUP, reqbufs_userptr_unsupported,
	  "vidioc-reqbufs.rst: EINVAL, the I/O method is not supported", NULL },
	{ "reqbufs-streaming", EBUSY, NO_ALT, 0, reqbufs_streaming,
	  GEN ": EBUSY, while streaming an ioctl tried to change something that affects the "
	  "stream; buffer.rst: stop the stream before freeing/reallocating", NULL },
	{ "reqbufs-zero-streaming", EBUSY, NO_ALT, 0, reqbufs_zero_streaming,
	  "vidioc-reqbufs.rst: count 0 frees all buffers after an implicit VIDIOC_STREAMOFF; "
	  "buffer.rst/gen-errors.rst suggest EBUSY while streaming",
	  "6.12 refuses REQBUFS while streaming, count 0 included: EBUSY" },
	{ "reqbufs-other-fd", EBUSY, NO_ALT, N_SOLO, reqbufs_other_fd,
	  "open.rst (Multiple Opens): other file handles may not allocate buffers, EBUSY", NULL },
	{ "reqbufs-fileio-other-fd", EBUSY, NO_ALT, N_SOLO | N_RW, reqbufs_fileio_other_fd,
	  "open.rst: read()/write() makes the file handle the owner; others get EBUSY", NULL },
	{ "reqbufs-fileio-same-fd", EBUSY, NO_ALT, N_SOLO | N_RW, reqbufs_fileio_same_fd,
	  "vidioc-prepare-buf.rst/vidioc-remove-bufs.rst: EBUSY, file I/O is in progress",
	  "vidioc-reqbufs.rst itself is silent; gen-errors.rst EBUSY" },
	{ "reqbufs-zero-while-mapped", 0, NO_ALT, N_ORPHAN, reqbufs_zero_while_mapped,
	  "vidioc-reqbufs.rst: with SUPPORTS_ORPHANED_BUFS mapped buffers are orphaned, freed "
	  "at munmap", NULL },
	{ "reqbufs-zero-while-exported", 0, NO_ALT, N_ORPHAN, reqbufs_zero_while_exported,
	  "vidioc-reqbufs.rst: with SUPPORTS_ORPHANED_BUFS exported buffers are orphaned, "
	  "freed when the dma-buf fd is closed", NULL },

	/* CREATE_BUFS */
	{ "create-bad-type", EINVAL, NO_ALT, 0, create_bad_type,
	  "vidioc-create-bufs.rst: EINVAL, format.type is not valid", NULL },
	{ "create-bad-memory", EINVAL, NO_ALT, 0, create_bad_memory,
	  "vidioc-create-bufs.rst: EINVAL, the I/O method is not valid", NULL },
	{ "create-other-memory", EINVAL, NO_ALT, 0, create_other_memory,
	  "vidioc-create-bufs.rst: EINVAL, the I/O method is not valid (DMABUF on a queue "
	  "with MMAP buffers)", "the .rst does not spell out the mixed-memory case" },
	{ "create-count0-other-memory", 0, EINVAL, 0, create_count0_other_memory,
	  "vidioc-create-bufs.rst: count 0 only checks that memory and format.type are valid",
	  "unclear whether a memory other than the existing buffers' is 'invalid'" },
	{ "create-too-small", EINVAL, NO_ALT, 0, create_too_small,
	  "vidioc-create-bufs.rst: EINVAL, sizeimage below what the format needs is usually "
	  "an error", "driver's choice ('usually'); every driver here refuses it" },
	{ "create-sizeimage-zero", EINVAL, NO_ALT, 0, create_sizeimage_zero,
	  "vidioc-create-bufs.rst: EINVAL, the format is not valid", NULL },
	{ "create-zero-planes", EINVAL, NO_ALT, N_MP, create_zero_planes,
	  "vidioc-create-bufs.rst: EINVAL, the format is not valid (num_planes 0)", NULL },
	{ "create-too-many-planes", EINVAL, NO_ALT, N_MP, create_too_many_planes,
	  "vidioc-create-bufs.rst: EINVAL, the format is not valid (num_planes > "
	  "VIDEO_MAX_PLANES)", NULL },
	{ "create-count0-other-fd", 0, NO_ALT, N_SOLO, create_count0_other_fd,
	  "vidioc-create-bufs.rst: with count 0 it never returns EBUSY", NULL },
	{ "create-other-fd", EBUSY, NO_ALT, N_SOLO, create_other_fd,
	  "open.rst (Multiple Opens): other file handles may not allocate buffers, EBUSY", NULL },
	{ "create-streaming", 0, NO_ALT, 0, create_streaming,
	  "vidioc-create-bufs.rst: usable 'in addition to' REQBUFS; no EBUSY documented",
	  "the .rst does not mention streaming" },
	{ "create-fileio-other-fd", EBUSY, NO_ALT, N_SOLO | N_RW, create_fileio_other_fd,
	  "open.rst: read()/write() makes the file handle the owner; others get EBUSY", NULL },

	/* QUERYBUF */
	{ "querybuf-bad-type", EINVAL, NO_ALT, 0, querybuf_bad_type,
	  "vidioc-querybuf.rst: EINVAL, the buffer type is not supported", NULL },
	{ "querybuf-index-oob", EINVAL, NO_ALT, 0, querybuf_index_oob,
	  "vidioc-querybuf.rst: EINVAL, the index is out of bounds", NULL },
	{ "querybuf-index-huge", EINVAL, NO_ALT, 0, querybuf_index_huge,
	  "vidioc-querybuf.rst: EINVAL, the index is out of bounds", NULL },
	{ "querybuf-no-buffers", EINVAL, NO_ALT, 0, querybuf_no_buffers,
	  "vidioc-querybuf.rst: EINVAL, the index is out of bounds (no buffers)", NULL },
	{ "querybuf-removed", EINVAL, NO_ALT, N_RM, querybuf_removed,
	  "vidioc-querybuf.rst: EINVAL, the index is out of bounds (a removed buffer)",
	  "the .rst predates REMOVE_BUFS; 'valid index' read as 'a buffer exists'" },
	{ "querybuf-planes-zero", EINVAL, NO_ALT, N_MP, querybuf_planes_short,
	  "vidioc-querybuf.rst: length must be the number of elements of m.planes; "
	  GEN " EINVAL", NULL },
	{ "querybuf-other-fd", 0, NO_ALT, N_SOLO, querybuf_other_fd,
	  "vidioc-querybuf.rst: usable at any time after buffers are allocated; open.rst "
	  "restricts only allocating and streaming", NULL },

	/* QBUF */
	{ "qbuf-bad-type", EINVAL, NO_ALT, 0, qbuf_bad_type,
	  QBUF ": EINVAL, the buffer type is not supported", NULL },
	{ "qbuf-index-oob", EINVAL, NO_ALT, 0, qbuf_index_oob,
	  QBUF ": EINVAL, the index is out of bounds", NULL },
	{ "qbuf-index-huge", EINVAL, NO_ALT, 0, qbuf_index_huge,
	  QBUF ": EINVAL, the index is out of bounds", NULL },
	{ "qbuf-no-buffers", EINVAL, NO_ALT, 0, qbuf_no_buffers,
	  QBUF ": EINVAL, no buffers have been allocated yet", NULL },
	{ "qbuf-removed", EINVAL, NO_ALT, N_RM, qbuf_removed,
	  QBUF ": EINVAL, the index is out of bounds (a removed buffer)", NULL },
	{ "qbuf-wrong-memory", EINVAL, NO_ALT, 0, qbuf_wrong_memory,
	  QBUF ": EINVAL (memory differs from the buffers'; m.fd invalid)", NULL },
	{ "qbuf-already-queued", EINVAL, NO_ALT, 0, qbuf_already_queued,
	  QBUF ": the driver sets QUEUED 'or it returns an EINVAL error code'", NULL },
	{ "qbuf-queued-after-prepare", EINVAL, NO_ALT, 0, qbuf_prepared_twice,
	  QBUF ": EINVAL (a prepared buffer queued, then queued again)", NULL },
	{ "qbuf-planes-zero", EINVAL, NO_ALT, N_MP, qbuf_planes_zero,
	  QBUF ": length must be the number of elements in m.planes; EINVAL", NULL },
	{ "qbuf-planes-zero-badptr", EINVAL, NO_ALT, N_MP, qbuf_planes_zero_badptr,
	  QBUF ": length 0 is an invalid plane count, EINVAL (m.planes must not be read)",
	  NULL },
	{ "qbuf-planes-short", EINVAL, NO_ALT, N_MPN, qbuf_planes_short,
	  QBUF ": EINVAL, fewer planes than the format has", NULL },
	{ "qbuf-planes-too-many", EINVAL, NO_ALT, N_MP, qbuf_planes_too_many,
	  QBUF ": EINVAL, length > VIDEO_MAX_PLANES", NULL },
	{ "qbuf-planes-null", EFAULT, NO_ALT, N_MP, qbuf_planes_null,
	  GEN ": EFAULT, failure copying from user space (m.planes NULL)", NULL },
	{ "qbuf-planes-badptr", EFAULT, NO_ALT, N_MP, qbuf_planes_badptr,
	  GEN ": EFAULT, failure copying from user space (m.planes unreadable)", NULL },
	{ "qbuf-userptr-null", EFAULT, ENOMEM, N_UP, qbuf_userptr_null,
	  QBUF ": EINVAL, the userptr is invalid; gen-errors.rst EFAULT 'invalid pointer "
	  "reference' fits too", USERPTR_612 },
	{ "qbuf-userptr-short", EINVAL, NO_ALT, N_UP, qbuf_userptr_short,
	  QBUF ": EINVAL, the length is invalid (too short for the format)", NULL },
	{ "qbuf-userptr-unaligned", 0, NO_ALT, N_UP, qbuf_userptr_unaligned,
	  "userp.rst: no alignment required of a user pointer",
	  "doc silent; a driver may add limits" },
	{ "qbuf-userptr-readonly", EFAULT, ENOMEM, N_UP | N_CAP, qbuf_userptr_readonly,
	  QBUF ": EINVAL, the userptr is invalid (read-only memory for a capture queue); "
	  "gen-errors.rst EFAULT fits too", USERPTR_612 },
	{ "qbuf-userptr-unmapped", EFAULT, ENOMEM, N_UP, qbuf_userptr_unmapped,
	  QBUF ": EINVAL, the userptr is invalid (PROT_NONE memory); gen-errors.rst EFAULT "
	  "fits too", USERPTR_612 },
	{ "qbuf-userptr-kernel", EFAULT, ENOMEM, N_UP, qbuf_userptr_kernel,
	  QBUF ": EINVAL, the userptr is invalid (a kernel address); gen-errors.rst EFAULT "
	  "fits too", USERPTR_612 },
	{ "qbuf-dmabuf-fd-neg", EINVAL, NO_ALT, 0, qbuf_dmabuf_fd_neg,
	  QBUF ": EINVAL, m.fd was an invalid DMABUF file descriptor", NULL },
	{ "qbuf-dmabuf-not-dmabuf", EINVAL, NO_ALT, 0, qbuf_dmabuf_not_dmabuf,
	  QBUF ": EINVAL, m.fd was an invalid DMABUF file descriptor (a video node)", NULL },
	{ "qbuf-dmabuf-too-small", EINVAL, NO_ALT, 0, qbuf_dmabuf_too_small,
	  QBUF ": EINVAL, the length is invalid (dma-buf smaller than the plane)", NULL },
	{ "qbuf-dmabuf-length-short", EINVAL, NO_ALT, 0, qbuf_dmabuf_length_short,
	  QBUF ": EINVAL, the length is invalid (length below the plane size)", NULL },
	{ "qbuf-dmabuf-valid", 0, NO_ALT, N_UP, qbuf_dmabuf_valid,
	  "dmabuf.rst: a dma-buf as large as the plane is accepted (control case)",
	  "run where USERPTR works, i.e. not on dma-contig, which needs contiguous memory" },
	{ "qbuf-dmabuf-payload-gt-format", 0, NO_ALT, N_UP | N_OUT,
	  qbuf_dmabuf_payload_gt_format,
	  "buffer.rst: bytesused <= length, and length of a DMABUF plane is the application's "
	  "(a dma-buf larger than the format, filled)",
	  "6.12 refuses it on single-planar queues (EINVAL): it checks bytesused against the "
	  "plane's length before the import; a deliberate difference, "
	  "Documentation/driver-contract.rst O2" },
	{ "qbuf-dmabuf-out-length0", 0, NO_ALT, N_UP | N_SP | N_OUT,
	  qbuf_dmabuf_out_length0_valid,
	  QBUF ", dmabuf.rst: applications set m.fd, length is left 0 (dmabuf.rst's "
	  "example); a payload of sizeimage in a dma-buf of sizeimage is accepted and "
	  "streams, DQBUF gives the dma-buf's size as length", NULL },
	{ "qbuf-dmabuf-out-length0-over", EINVAL, NO_ALT, N_UP | N_SP | N_OUT,
	  qbuf_dmabuf_out_length0_over,
	  "buffer.rst: bytesused <= length; " QBUF " EINVAL (length 0, bytesused beyond a "
	  "dma-buf of sizeimage)", NULL },
	{ "qbuf-bytesused-gt-length", EINVAL, NO_ALT, N_OUT, qbuf_bytesused_gt_length,
	  "buffer.rst: bytesused <= length; " QBUF " EINVAL", NULL },
	{ "qbuf-data-offset-ge-bytesused", EINVAL, NO_ALT, N_MP | N_OUT,
	  qbuf_data_offset_ge_bytesused,
	  "buffer.rst: data_offset is included in bytesused; " QBUF " EINVAL", NULL },
	{ "qbuf-other-fd", EBUSY, NO_ALT, N_SOLO, qbuf_other_fd,
	  "open.rst (Multiple Opens): only the owner may stream; EBUSY",
	  "open.rst names allocating and starting/stopping, not QBUF itself" },
	{ "qbuf-request-not-request", EINVAL, NO_ALT, N_REQ, qbuf_request_not_request,
	  QBUF ": EINVAL, request_fd is not a valid request", NULL },
	{ "qbuf-request-fd-neg", EINVAL, NO_ALT, N_REQ, qbuf_request_fd_neg,
	  QBUF ": EINVAL, request_fd is not a valid request", NULL },
	{ "qbuf-request-closed", EINVAL, NO_ALT, N_REQ, qbuf_request_closed,
	  QBUF ": EINVAL, request_fd is not a valid request (closed)", NULL },
	{ "qbuf-request-unsupported", EBADR, NO_ALT, N_NOREQ | N_SOLO, qbuf_request_unsupported,
	  QBUF ": EBADR, REQUEST_FD set but the device does not support requests", NULL },
	{ "qbuf-request-m2m-capture", EPERM, NO_ALT, N_NOREQ | N_CAP | N_M2M,
	  qbuf_request_m2m_capture,
	  QBUF "/request-api.rst: EBADR, a request for a capture buffer of a mem2mem device",
	  "6.12's v4l2-mem2mem refuses it with EPERM before videobuf2 sees it" },
	{ "qbuf-mix-direct-then-request", EBUSY, NO_ALT, N_REQ, qbuf_mix_direct_then_request,
	  QBUF ": EBUSY, the first buffer was queued directly, now via a request", NULL },
	{ "qbuf-mix-request-then-direct", EBUSY, NO_ALT, N_REQ, qbuf_mix_request_then_direct,
	  QBUF ": EBUSY, the first buffer was queued via a request, now directly", NULL },
	{ "qbuf-direct-after-request-streamoff", 0, NO_ALT, N_REQ,
	  qbuf_direct_after_request_streamoff,
	  QBUF ": after STREAMOFF the mixing check is reset", NULL },
	{ "qbuf-into-queued-request", EBUSY, NO_ALT, N_REQ, qbuf_into_queued_request,
	  "request-api.rst: a queued request cannot be modified", "errno not documented" },

	/* Requests */
	{ "req-queue-empty", ENOENT, NO_ALT, N_REQ, req_queue_empty,
	  "media-request-ioc-queue.rst: ENOENT, the request contains no buffers", NULL },
	{ "req-queue-twice", EBUSY, NO_ALT, N_REQ, req_queue_twice,
	  "media-request-ioc-queue.rst: EBUSY, the request was already queued", NULL },
	{ "req-reinit-queued", EBUSY, NO_ALT, N_REQ, req_reinit_queued,
	  "media-request-ioc-reinit.rst: EBUSY, queued but not completed", NULL },
	{ "req-reinit-unbinds", ENOENT, NO_ALT, N_REQ, req_reinit_unbinds,
	  "media-request-ioc-reinit.rst: re-initializing clears the request; "
	  "media-request-ioc-queue.rst ENOENT for an empty one", NULL },
	{ "req-close-unqueued", EINVAL, NO_ALT, N_REQ, req_close_unqueued,
	  "request-func-close.rst: closing frees the request (and gives its buffer back)",
	  "unclear: the request is freed once closed 'and the driver has completed' it; what "
	  "becomes of a buffer bound to a never-queued request is not said. 6.12 keeps it "
	  "bound until STREAMOFF (QBUF into another request: EINVAL), then it is usable" },
	{ "req-two-bufs-unqueued-free", 0, NO_ALT, N_REQ, req_two_bufs_unqueued_free,
	  "vidioc-reqbufs.rst: count 0 frees all buffers (two of them bound to one request "
	  "that was not queued)", "the doc says nothing of several buffers of a queue in a "
	  "request" },
	{ "req-two-bufs-queued-free", 0, NO_ALT, N_REQ, req_two_bufs_queued_free,
	  "vidioc-reqbufs.rst: count 0 frees all buffers (two of them in one queued "
	  "request, which must complete)", "the doc says nothing of several buffers of a "
	  "queue in a request" },
	{ "req-alloc-unsupported", ENOTTY, NO_ALT, N_MEDIA_NOREQ, req_alloc_unsupported,
	  "media-ioc-request-alloc.rst: ENOTTY, the driver has no support for requests", NULL },

	/* DQBUF */
	{ "dqbuf-not-streaming", EINVAL, NO_ALT, 0, dqbuf_not_streaming,
	  QBUF ": EINVAL (DQBUF of a queue that does not stream)",
	  "the .rst lists no cause for this; EINVAL is what the brief and vb2 use" },
	{ "dqbuf-nonblock-empty", EAGAIN, NO_ALT, 0, dqbuf_nonblock_empty,
	  QBUF ": EAGAIN, O_NONBLOCK and no buffer in the outgoing queue", NULL },
	{ "dqbuf-bad-type", EINVAL, NO_ALT, 0, dqbuf_bad_type,
	  QBUF ": EINVAL, the buffer type is not supported", NULL },
	{ "dqbuf-no-buffers", EINVAL, NO_ALT, 0, dqbuf_no_buffers,
	  QBUF ": EINVAL, no buffers have been allocated yet", NULL },
	{ "dqbuf-planes-zero", EINVAL, NO_ALT, N_MP, dqbuf_planes_short,
	  QBUF ": the planes array must be passed in (DQBUF); EINVAL, and the done buffer "
	  "stays", NULL },
	{ "dqbuf-other-fd", EBUSY, NO_ALT, N_SOLO, dqbuf_other_fd,
	  "open.rst (Multiple Opens): only the owner may stream; EBUSY",
	  "open.rst names allocating and starting/stopping, not DQBUF itself" },
	{ "dqbuf-fileio", EBUSY, NO_ALT, N_SOLO | N_RW, dqbuf_fileio,
	  "vidioc-prepare-buf.rst/vidioc-remove-bufs.rst: EBUSY, file I/O is in progress",
	  "vidioc-qbuf.rst itself is silent" },

	/* PREPARE_BUF */
	{ "prepare-twice", EINVAL, NO_ALT, 0, prepare_twice,
	  "vidioc-prepare-buf.rst: EINVAL (the buffer is already owned by the driver)", NULL },
	{ "prepare-queued", EINVAL, NO_ALT, 0, prepare_queued,
	  "vidioc-prepare-buf.rst: EINVAL (the buffer is queued)", NULL },
	{ "prepare-bad-type", EINVAL, NO_ALT, 0, prepare_bad_type,
	  "vidioc-prepare-buf.rst: EINVAL, the buffer type is not supported", NULL },
	{ "prepare-index-oob", EINVAL, NO_ALT, 0, prepare_index_oob,
	  "vidioc-prepare-buf.rst: EINVAL, the index is out of bounds", NULL },
	{ "prepare-removed", EINVAL, NO_ALT, N_RM, prepare_removed,
	  "vidioc-prepare-buf.rst: EINVAL, the index is out of bounds (a removed buffer)", NULL },
	{ "prepare-userptr-short", EINVAL, NO_ALT, N_UP, prepare_userptr_short,
	  "vidioc-prepare-buf.rst: EINVAL, the length is invalid", NULL },
	{ "prepare-request-flag", EINVAL, NO_ALT, N_REQ, prepare_request_flag,
	  "buffer.rst: REQUEST_FD is used by QBUF only and ignored by other ioctls",
	  "buffer.rst also says applications should not set it there; 6.12 refuses "
	  "PREPARE_BUF with V4L2_BUF_FLAG_REQUEST_FD (EINVAL)" },
	{ "prepare-fileio", EBUSY, NO_ALT, N_SOLO | N_RW, prepare_fileio,
	  "vidioc-prepare-buf.rst: EBUSY, file I/O is in progress", NULL },

	/* EXPBUF */
	{ "expbuf-userptr-queue", EINVAL, NO_ALT, N_UP, expbuf_userptr_queue,
	  "vidioc-expbuf.rst: EINVAL, the queue is not in MMAP mode", NULL },
	{ "expbuf-dmabuf-queue", EINVAL, NO_ALT, 0, expbuf_dmabuf_queue,
	  "vidioc-expbuf.rst: EINVAL, the queue is not in MMAP mode", NULL },
	{ "expbuf-bad-plane", EINVAL, NO_ALT, 0, expbuf_bad_plane,
	  "vidioc-expbuf.rst: EINVAL, the plane field is invalid", NULL },
	{ "expbuf-bad-flags", EINVAL, NO_ALT, 0, expbuf_bad_flags,
	  "vidioc-expbuf.rst: EINVAL, flags other than O_CLOEXEC and the access mode", NULL },
	{ "expbuf-bad-type", EINVAL, NO_ALT, 0, expbuf_bad_type,
	  "vidioc-expbuf.rst: EINVAL, the type field is invalid", NULL },
	{ "expbuf-index-oob", EINVAL, NO_ALT, 0, expbuf_index_oob,
	  "vidioc-expbuf.rst: EINVAL, the index field is invalid", NULL },
	{ "expbuf-removed", EINVAL, NO_ALT, N_RM, expbuf_removed,
	  "vidioc-expbuf.rst: EINVAL, the index field is invalid (a removed buffer)", NULL },
	{ "expbuf-no-buffers", EINVAL, NO_ALT, 0, expbuf_no_buffers,
	  "vidioc-expbuf.rst: EINVAL, the queue is not in MMAP mode (no buffers)", NULL },
	{ "expbuf-fileio", EBUSY, EINVAL, N_SOLO | N_RW, expbuf_fileio,
	  GEN ": EBUSY (file I/O owns the buffers)",
	  "vidioc-expbuf.rst lists only EINVAL" },

	/* STREAMON / STREAMOFF */
	{ "streamon-bad-type", EINVAL, NO_ALT, 0, streamon_bad_type,
	  "vidioc-streamon.rst: EINVAL, the buffer type is not supported", NULL },
	{ "streamoff-bad-type", EINVAL, NO_ALT, 0, streamoff_bad_type,
	  "vidioc-streamon.rst: EINVAL, the buffer type is not supported", NULL },
	{ "streamon-no-buffers", EINVAL, NO_ALT, 0, streamon_no_buffers,
	  "vidioc-streamon.rst: EINVAL, no buffers have been allocated", NULL },
	{ "streamon-other-fd", EBUSY, NO_ALT, N_SOLO, streamon_other_fd,
	  "open.rst (Multiple Opens): others may not start streaming, EBUSY", NULL },
	{ "streamoff-other-fd", EBUSY, NO_ALT, N_SOLO, streamoff_other_fd,
	  "open.rst (Multiple Opens): others may not stop streaming, EBUSY", NULL },
	{ "streamon-twice", 0, NO_ALT, 0, streamon_twice,
	  "vidioc-streamon.rst: STREAMON while streaming returns 0", NULL },
	{ "streamoff-not-streaming", 0, NO_ALT, 0, streamoff_not_streaming,
	  "vidioc-streamon.rst: STREAMOFF while stopped returns 0 and returns queued buffers",
	  NULL },
	{ "streamon-output-none-queued", 0, NO_ALT, N_OUT, streamon_output_none_queued,
	  "vidioc-streamon.rst: EINVAL, no buffers have been enqueued (output) yet",
	  "6.12 accepts STREAMON and starts the driver once min_queued_buffers are queued" },
	{ "streamon-fileio-other-fd", EBUSY, NO_ALT, N_SOLO | N_RW, streamon_fileio_other_fd,
	  "open.rst: read()/write() makes the file handle the owner; others get EBUSY", NULL },

	/* REMOVE_BUFS */
	{ "remove-queued", EBUSY, NO_ALT, N_RM, remove_queued,
	  "vidioc-remove-bufs.rst: EBUSY, a buffer in the range is not DEQUEUED; nothing "
	  "freed", NULL },
	{ "remove-count-overflow", EINVAL, NO_ALT, N_RM, remove_count_overflow,
	  "vidioc-remove-bufs.rst: EINVAL, buffers of the range do not exist (index + count "
	  "wraps)", NULL },
	{ "remove-out-of-range", EINVAL, NO_ALT, N_RM, remove_out_of_range,
	  "vidioc-remove-bufs.rst: EINVAL, buffers of the range do not exist", NULL },
	{ "remove-partly-out-of-range", EINVAL, NO_ALT, N_RM, remove_partly_out_of_range,
	  "vidioc-remove-bufs.rst: EINVAL, one of the range does not exist; nothing freed",
	  NULL },
	{ "remove-bad-type", EINVAL, NO_ALT, N_RM, remove_bad_type,
	  "vidioc-remove-bufs.rst: EINVAL, the buffer type is not valid", NULL },
	{ "remove-count0", 0, NO_ALT, N_RM, remove_count0,
	  "vidioc-remove-bufs.rst: count 0 does nothing and returns 0", NULL },
	{ "remove-count0-bad-type", EINVAL, NO_ALT, N_RM, remove_count0_bad_type,
	  "vidioc-remove-bufs.rst: the type is always checked, even with count 0", NULL },
	{ "remove-hole", EINVAL, NO_ALT, N_RM, remove_hole,
	  "vidioc-remove-bufs.rst: EINVAL, one of the range was removed before", NULL },
	{ "remove-no-buffers", EINVAL, NO_ALT, N_RM, remove_no_buffers,
	  "vidioc-remove-bufs.rst: EINVAL, the buffers do not exist", NULL },
	{ "remove-fileio", EBUSY, NO_ALT, N_RM | N_SOLO | N_RW, remove_fileio,
	  "vidioc-remove-bufs.rst: EBUSY, file I/O is in progress", NULL },
	{ "remove-other-fd", EBUSY, NO_ALT, N_RM | N_SOLO, remove_other_fd,
	  "open.rst (Multiple Opens): only the owner changes the buffers; EBUSY",
	  "vidioc-remove-bufs.rst does not mention ownership" },
	{ "remove-then-create", 0, NO_ALT, N_RM, remove_then_create_reuses,
	  "vidioc-create-bufs.rst/vidioc-remove-bufs.rst: buffers are created again after "
	  "removal (first free index)", "which index is reused is not documented" },

	/* mmap / munmap */
	{ "mmap-bad-offset", EINVAL, NO_ALT, 0, mmap_bad_offset,
	  "func-mmap.rst: EINVAL, the offset is not suitable", NULL },
	{ "mmap-offset-inside-plane", EINVAL, NO_ALT, 0, mmap_offset_inside,
	  "func-mmap.rst: EINVAL, the offset is not suitable (not a plane's m.offset)", NULL },
	{ "mmap-offset-unaligned", EINVAL, NO_ALT, 0, mmap_offset_unaligned,
	  "func-mmap.rst: EINVAL, the offset is not aligned on a page boundary", NULL },
	{ "mmap-too-long", EINVAL, NO_ALT, 0, mmap_too_long,
	  "func-mmap.rst: EINVAL, the length is not suitable (larger than the plane)", NULL },
	{ "mmap-private", EINVAL, NO_ALT, 0, mmap_private,
	  "func-mmap.rst: EINVAL, the flags value is not supported (MAP_PRIVATE)", NULL },
	{ "mmap-no-prot-read", EINVAL, NO_ALT, N_CAP, mmap_no_read,
	  "func-mmap.rst: EINVAL, the prot value is not supported (capture without "
	  "PROT_READ)", NULL },
	{ "mmap-no-prot-write", EINVAL, NO_ALT, N_OUT, mmap_no_write,
	  "func-mmap.rst: EINVAL, the prot value is not supported (output without "
	  "PROT_WRITE)", NULL },
	{ "mmap-no-buffers", EINVAL, NO_ALT, 0, mmap_no_buffers,
	  "func-mmap.rst: EINVAL, no buffers have been allocated", NULL },
	{ "mmap-removed", EINVAL, NO_ALT, N_RM, mmap_removed,
	  "func-mmap.rst: EINVAL, the offset is not suitable (its buffer was removed)", NULL },
	{ "mmap-after-free", EINVAL, NO_ALT, 0, mmap_after_free,
	  "func-mmap.rst: EINVAL, no buffers have been allocated (after REQBUFS(0))", NULL },
	{ "mmap-userptr-queue", EINVAL, NO_ALT, N_UP, mmap_userptr_queue,
	  "func-mmap.rst: EINVAL, no buffers allocated for memory mapping (USERPTR queue)",
	  NULL },
	{ "mmap-twice", 0, NO_ALT, 0, mmap_twice,
	  "mmap.rst: a buffer may be mapped again (control case)", NULL },
	{ "munmap-unaligned", EINVAL, NO_ALT, 0, munmap_unaligned,
	  "func-munmap.rst: EINVAL, the start is incorrect", NULL },
	{ "munmap-partial", 0, NO_ALT, 0, munmap_partial,
	  "func-munmap.rst: unmapping a part of a mapping is not an error (control case)",
	  "doc silent; the rest must stay usable" },

	/* read() / write() */
	{ "read-while-streaming", EBUSY, NO_ALT, N_RW | N_CAP, read_while_streaming,
	  "func-read.rst: EBUSY, the device is already in use (MMAP streaming)", NULL },
	{ "write-while-streaming", EBUSY, NO_ALT, N_RW | N_OUT, write_while_streaming,
	  "func-write.rst: EBUSY, the device is already in use (MMAP streaming)", NULL },
	{ "read-buffers-allocated", EBUSY, NO_ALT, N_RW | N_CAP, read_buffers_allocated,
	  "func-read.rst: EBUSY, the device is already in use (buffers allocated)", NULL },
	{ "io-other-fd-owner", EBUSY, NO_ALT, N_RW, io_other_fd_owner,
	  "func-read.rst/func-write.rst: EBUSY, the device is already in use (another file "
	  "owns buffers)", NULL },
	{ "io-fileio-other-fd", EBUSY, NO_ALT, N_RW, io_fileio_other_fd,
	  "func-read.rst/func-write.rst: EBUSY, no multiple read/write streams", NULL },
	{ "read-on-output", EINVAL, NO_ALT, N_RW | N_OUT, read_on_output,
	  "func-read.rst: EINVAL, read() is not supported on this device", NULL },
	{ "write-on-capture", EINVAL, NO_ALT, N_RW | N_CAP, write_on_capture,
	  "func-write.rst: EINVAL, write() is not supported on this device", NULL },
	{ "read-bad-buffer", EFAULT, NO_ALT, N_RW | N_CAP, read_bad_buffer,
	  "func-read.rst: EFAULT, buf references an inaccessible memory area; the next read "
	  "works", NULL },
	{ "write-bad-buffer", EFAULT, NO_ALT, N_RW | N_OUT, write_bad_buffer,
	  "func-write.rst: EFAULT, buf references an inaccessible memory area; the next "
	  "write works", WRITE_612 },
	{ "io-count0", EBUSY, NO_ALT, N_RW, io_count0,
	  "func-read.rst/func-write.rst: count 0 returns 0 and has no other effect (REQBUFS "
	  "still possible)",
	  "6.12 starts the emulation on a zero-length read() or write() (a non-blocking "
	  "read() then says EAGAIN), so the REQBUFS after it gets EBUSY" },
	{ "io-frames", 0, NO_ALT, N_RW, io_frames,
	  "func-read.rst/func-write.rst: whole frames read or written (control case)",
	  WRITE_612 },

	/* poll() */
	{ "poll-not-streaming", 0, NO_ALT, 0, poll_not_streaming,
	  "func-poll.rst: without STREAMON poll() succeeds and sets POLLERR", NULL },
	{ "poll-capture-streamon-noqbuf", 0, NO_ALT, N_CAP, poll_capture_streamon_noqbuf,
	  "func-poll.rst: capture after STREAMON without QBUF sets POLLERR", NULL },
	{ "poll-output-streamon-noqbuf", ENOMSG, NO_ALT, N_OUT | N_SOLO,
	  poll_output_streamon_noqbuf,
	  "func-poll.rst: output after STREAMON without QBUF sets POLLOUT|POLLWRNORM",
	  "6.12 reports no event until a buffer is done (no-event: revents 0)" },
};

/* ---------------------------------------------------------------------------------- */
/* Devices */

static u32 queue_caps(int fd, u32 type)
{
	struct v4l2_requestbuffers rb = { .type = type, .memory = V4L2_MEMORY_MMAP };

	return -vb2_ioctl(fd, VIDIOC_REQBUFS, &rb) ? 0 : rb.capabilities;
}

static void fmt_sizes(struct dev *d)
{
	unsigned int p;

	if (d->mplane) {
		d->nplanes = d->fmt.fmt.pix_mp.num_planes;
		for (p = 0; p < d->nplanes && p < MAXP; p++)
			d->sizes[p] = d->fmt.fmt.pix_mp.plane_fmt[p].sizeimage;
		d->pixfmt = d->fmt.fmt.pix_mp.pixelformat;
	} else {
		d->nplanes = 1;
		d->sizes[0] = d->fmt.fmt.pix.sizeimage;
		d->pixfmt = d->fmt.fmt.pix.pixelformat;
	}
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
	if (spec) {
		struct v4l2_format f = d->fmt;
		u32 fcc;

		if (strlen(spec) != 4) {
			fprintf(stderr, "%s: bad format '%s'\n", PROG, spec);
			return -1;
		}
		fcc = v4l2_fourcc(spec[0], spec[1], spec[2], spec[3]);
		if (d->mplane)
			f.fmt.pix_mp.pixelformat = fcc;
		else
			f.fmt.pix.pixelformat = fcc;
		if (vb2_ioctl(fd, VIDIOC_S_FMT, &f) ||
		    (d->mplane ? f.fmt.pix_mp.pixelformat : f.fmt.pix.pixelformat) != fcc) {
			fprintf(stderr, "%s: %s: cannot set format %s\n", PROG, d->label, spec);
			return -1;
		}
		d->fmt = f;
		return 0;
	}
	if (!d->mplane || d->m2m || d->fmt.fmt.pix_mp.num_planes > 1)
		return 0;
	for (i = 0; i < ARRAY_SIZE(fourccs); i++) {
		struct v4l2_format f = d->fmt;

		f.fmt.pix_mp.pixelformat = fourccs[i];
		if (!vb2_ioctl(fd, VIDIOC_S_FMT, &f) && f.fmt.pix_mp.pixelformat == fourccs[i] &&
		    f.fmt.pix_mp.num_planes > 1) {
			d->fmt = f;
			return 0;
		}
	}
	return 0;
}

static int add_queue(const char *name, const char *path, const char *sysname, u32 type,
		     u32 other, bool m2m, const char *label, const char *fmtspec)
{
	struct v4l2_capability cap;
	struct dev *d;
	int fd;

	if (ndevs == MAX_DEVS) {
		fprintf(stderr, "%s: too many devices\n", PROG);
		return -1;
	}
	d = &devs[ndevs];
	memset(d, 0, sizeof(*d));
	snprintf(d->name, sizeof(d->name), "%s", name);
	snprintf(d->label, sizeof(d->label), "%s", label);
	snprintf(d->path, sizeof(d->path), "%s", path);
	d->type = type;
	d->other = other;
	d->m2m = m2m;
	d->mplane = is_mplane(type);
	d->output = is_output(type);
	fd = open(path, O_RDWR | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0 || vb2_ioctl(fd, VIDIOC_QUERYCAP, &cap)) {
		fprintf(stderr, "%s: %s (%s): %s\n", PROG, name, path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	d->rw = !m2m && (((cap.capabilities & V4L2_CAP_DEVICE_CAPS) ? cap.device_caps :
			  cap.capabilities) & V4L2_CAP_READWRITE);
	d->caps = queue_caps(fd, type);
	if (other)
		d->other_caps = queue_caps(fd, other);
	d->fmt.type = type;
	if (vb2_ioctl(fd, VIDIOC_G_FMT, &d->fmt)) {
		fprintf(stderr, "%s: %s: G_FMT failed\n", PROG, label);
		close(fd);
		return -1;
	}
	if (pick_format(d, fd, fmtspec)) {
		close(fd);
		return -1;
	}
	fmt_sizes(d);
	close(fd);
	vb2_find_media(sysname, (const char *)cap.bus_info, d->media, sizeof(d->media));
	if (!(d->caps & V4L2_BUF_CAP_SUPPORTS_MMAP) || !d->nplanes || d->nplanes > MAXP) {
		fprintf(stderr, "%s: %s: no MMAP streaming queue\n", PROG, label);
		return -1;
	}
	printf("%s: device %s %s media=%s type=%u caps=%#x fmt=%.4s planes=%u size0=%u rw=%d\n",
	       PROG, d->label, d->path, d->media[0] ? d->media : "-", d->type, d->caps,
	       (const char *)&d->pixfmt, d->nplanes, d->sizes[0], d->rw);
	ndevs++;
	return 0;
}

static int add_dev(const char *spec)
{
	char name[64], path[300], sysname[300], label[72], fmtbuf[16];
	const char *at = strrchr(spec, '@'), *colon;
	const char *which = NULL, *fmtspec = NULL;
	struct v4l2_capability cap;
	u32 caps;
	int fd, ret = 0;

	snprintf(name, sizeof(name), "%s", spec);
	if (at) {
		snprintf(fmtbuf, sizeof(fmtbuf), "%s", at + 1);
		fmtspec = fmtbuf;
		name[at - spec] = 0;
	}
	colon = strrchr(name, ':');
	if (colon && (!strcmp(colon, ":out") || !strcmp(colon, ":cap"))) {
		name[colon - name] = 0;
		which = colon + 1;
	}
	if (vb2_find_node(name, path, sizeof(path), sysname, sizeof(sysname))) {
		fprintf(stderr, "%s: no video node named '%s'\n", PROG, name);
		return -1;
	}
	fd = open(path, O_RDWR | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0 || vb2_ioctl(fd, VIDIOC_QUERYCAP, &cap)) {
		fprintf(stderr, "%s: %s: %s\n", PROG, path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	close(fd);
	caps = (cap.capabilities & V4L2_CAP_DEVICE_CAPS) ? cap.device_caps : cap.capabilities;
	if (caps & (V4L2_CAP_VIDEO_M2M | V4L2_CAP_VIDEO_M2M_MPLANE)) {
		bool mp = caps & V4L2_CAP_VIDEO_M2M_MPLANE;
		u32 out = mp ? V4L2_BUF_TYPE_VIDEO_OUTPUT_MPLANE : V4L2_BUF_TYPE_VIDEO_OUTPUT;
		u32 capt = mp ? V4L2_BUF_TYPE_VIDEO_CAPTURE_MPLANE : V4L2_BUF_TYPE_VIDEO_CAPTURE;

		if (!which || !strcmp(which, "out")) {
			snprintf(label, sizeof(label), "%s:out", name);
			ret |= add_queue(name, path, sysname, out, capt, true, label,
					  fmtspec);
		}
		if (!which || !strcmp(which, "cap")) {
			snprintf(label, sizeof(label), "%s:cap", name);
			ret |= add_queue(name, path, sysname, capt, out, true, label,
					  fmtspec);
		}
		return ret;
	}
	if (caps & V4L2_CAP_VIDEO_CAPTURE_MPLANE)
		return add_queue(name, path, sysname, V4L2_BUF_TYPE_VIDEO_CAPTURE_MPLANE, 0, false,
				 name, fmtspec);
	if (caps & V4L2_CAP_VIDEO_CAPTURE)
		return add_queue(name, path, sysname, V4L2_BUF_TYPE_VIDEO_CAPTURE, 0, false, name,
				 fmtspec);
	if (caps & V4L2_CAP_VIDEO_OUTPUT_MPLANE)
		return add_queue(name, path, sysname, V4L2_BUF_TYPE_VIDEO_OUTPUT_MPLANE, 0, false,
				 name, fmtspec);
	if (caps & V4L2_CAP_VIDEO_OUTPUT)
		return add_queue(name, path, sysname, V4L2_BUF_TYPE_VIDEO_OUTPUT, 0, false, name,
				 fmtspec);
	fprintf(stderr, "%s: %s is not a video capture, output or mem2mem node\n", PROG, name);
	return -1;
}

/* ---------------------------------------------------------------------------------- */
/* Running the table */

static unsigned int dev_has(const struct dev *d)
{
	unsigned int has = 0;
	bool reqs = d->caps & V4L2_BUF_CAP_SUPPORTS_REQUESTS;
	bool any_reqs = reqs || (d->other_caps & V4L2_BUF_CAP_SUPPORTS_REQUESTS);

	has |= d->mplane ? N_MP : N_SP;
	if (d->mplane && d->nplanes > 1)
		has |= N_MPN;
	has |= d->output ? N_OUT : N_CAP;
	has |= (d->caps & V4L2_BUF_CAP_SUPPORTS_USERPTR) ? N_UP : N_NOUP;
	has |= reqs ? N_REQ : N_NOREQ;
	if (d->rw && d->nplanes == 1)
		has |= N_RW;
	if (d->caps & V4L2_BUF_CAP_SUPPORTS_REMOVE_BUFS)
		has |= N_RM;
	has |= d->m2m ? N_M2M : N_SOLO;
	/*
	 * With only vivid's video nodes loaded (node_types=0x101), all queues of a media
	 * device support requests or none does.
	 */
	if (d->media[0] && !any_reqs)
		has |= N_MEDIA_NOREQ;
	if (d->caps & V4L2_BUF_CAP_SUPPORTS_ORPHANED_BUFS)
		has |= N_ORPHAN;
	return has;
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

static bool selected(const char *only, const char *skip, const char *id)
{
	const char *p = only;
	size_t n = strlen(id);

	if (skip && in_list(skip, id))
		return false;
	if (!only)
		return true;
	while ((p = strstr(p, id))) {
		if ((p == only || p[-1] == ',') && (p[n] == 0 || p[n] == ','))
			return true;
		p += n;
	}
	return false;
}

static void usage(void)
{
	fprintf(stderr, "usage: %s [--dev NAME[:out|:cap][@FOURCC|@keep]]... [--only ID,..] "
		"[--skip ID,..] [--cleanup-streamoff] [--list]\n", PROG);
	exit(2);
}

static bool applies(const struct mcase *m, unsigned int has)
{
	return (m->needs & has) == m->needs;
}

static void list_table(void)
{
	unsigned int ci;

	for (ci = 0; ci < ARRAY_SIZE(cases); ci++) {
		const struct mcase *m = &cases[ci];

		printf("%-36s %-7s", m->id, errname(m->expect));
		if (m->alt != NO_ALT)
			printf(" alt=%s", errname(m->alt));
		printf("  %s", m->doc);
		if (m->note)
			printf("  [note: %s]", m->note);
		printf("\n");
	}
	printf("%s: %zu cases in the table\n", PROG, ARRAY_SIZE(cases));
}

/* The KTAP plan: per queue its initial sanity cycle and every case that applies. */
static unsigned int count_cases(const char *only, const char *skip)
{
	unsigned int di, ci, n = 0;

	for (di = 0; di < ndevs; di++) {
		unsigned int has = dev_has(&devs[di]);

		n++;
		for (ci = 0; ci < ARRAY_SIZE(cases); ci++)
			if (selected(only, skip, cases[ci].id) && applies(&cases[ci], has))
				n++;
	}
	return n;
}

/* The KTAP result of case @id on queue @d, named QUEUE/CASE; a note after it if @fmt. */
static void __attribute__((format(printf, 4, 5)))
report(int code, const struct dev *d, const char *id, const char *fmt, ...)
{
	char name[160], note[512];
	va_list ap;

	snprintf(name, sizeof(name), "%s/%s", d->label, id);
	if (!fmt) {
		ksft_test_result_code(code, name, NULL);
		return;
	}
	va_start(ap, fmt);
	vsnprintf(note, sizeof(note), fmt, ap);
	va_end(ap);
	ksft_test_result_code(code, name, "%s", note);
}

/* Run one case and report it. */
static void run_case(struct dev *d, const struct mcase *m)
{
	const char *got_name;
	char err[256];
	struct ctx c;
	int got;
	bool ok;

	cur_case = m->id;
	alarm(CASE_TIMEOUT);
	ctx_init(&c, d);
	got = m->fn(&c);
	ctx_free(&c);
	if (got == R_SKIP) {
		report(KSFT_SKIP, d, m->id, "%s", c.why);
		return;
	}
	if (got == R_SETUP) {
		ksft_print_msg("expect=%s: the setup failed: %s\n", errname(m->expect), c.why);
		report(KSFT_FAIL, d, m->id, NULL);
		return;
	}
	got_name = c.got_str[0] ? c.got_str : errname(got);
	ok = got == m->expect || (m->alt != NO_ALT && got == m->alt);
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
	if (ok && got != m->expect)
		report(KSFT_PASS, d, m->id, "got=%s, the alternative (%s)", got_name,
		       m->note ? m->note : "");
	else
		report(ok ? KSFT_PASS : KSFT_FAIL, d, m->id, NULL);
}

/* The table on one queue, after a sanity cycle that shows the queue works at all. */
static void run_dev(struct dev *d, const char *only, const char *skip)
{
	unsigned int has = dev_has(d), ci;
	bool usable;
	char err[256];

	cur_dev = d->label;
	cur_case = "initial-sanity";
	alarm(CASE_TIMEOUT);
	usable = !sanity(d, err, sizeof(err));
	if (!usable)
		ksft_print_msg("%s\n", err);
	report(usable ? KSFT_PASS : KSFT_FAIL, d, "initial-sanity", NULL);
	for (ci = 0; ci < ARRAY_SIZE(cases); ci++) {
		const struct mcase *m = &cases[ci];

		if (!selected(only, skip, m->id) || !applies(m, has))
			continue;
		if (usable)
			run_case(d, m);
		else
			report(KSFT_FAIL, d, m->id, "not run: the queue does not work");
	}
	alarm(0);
}

int main(int argc, char **argv)
{
	const char *only = NULL, *skip = NULL;
	bool list = false;
	unsigned int di;
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
	ksft_set_plan(count_cases(only, skip));
	for (di = 0; di < ndevs; di++)
		run_dev(&devs[di], only, skip);
	ksft_finished();
}
