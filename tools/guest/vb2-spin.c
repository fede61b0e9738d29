// SPDX-License-Identifier: GPL-2.0
/*
 * vb2-spin: repeat one buffer ioctl on a capture node for a while, and nothing else,
 * so that a sampling profiler outside the guest (tools/host/profile.sh) sees where that
 * ioctl spends its instructions.
 *
 *   vb2-spin DEVICE OP SECONDS
 *
 * DEVICE is a single-planar capture node whose driver completes buffers at once (as
 * vb2-testdrv completion=0 does); OP is one of qbuf-dqbuf, querybuf, prepare-buf
 * (four 16x16 YUYV MMAP buffers), dqbuf-qbuf (all four queued before STREAMON, then
 * each dequeued buffer is queued again: for drivers that complete buffers in their
 * own time and need more than one queued, as vivid), or alloc-N: one cycle of REQBUFS(N), QUERYBUF, mmap()
 * and a write of one byte per buffer, munmap() of all and REQBUFS(0), as make bench's
 * allocation row (an op is a buffer; SECONDS is not used; the node must allow N
 * buffers). Prints "vb2-spin: OP N ops" at the end; exits 1 on an unexpected error.
 */
#include <sys/mman.h>
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include <linux/videodev2.h>

#include "vb2-guest.h"

#define NBUFS 4

/*
 * The marker of tools/host/icount/icount.c (xchg %bx,%bx, which does nothing):
 * make profile counts the instructions between the first two.
 */
static inline void mark(void)
{
	__asm__ volatile("xchg %%bx, %%bx" ::: "memory");
}

static int xioctl(int fd, unsigned long req, void *arg, const char *what)
{
	int r = vb2_ioctl(fd, req, arg);

	if (r < 0) {
		fprintf(stderr, "vb2-spin: %s: %s\n", what, strerror(-r));
		exit(1);
	}
	return r;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void buf_init(struct v4l2_buffer *b, unsigned int index)
{
	memset(b, 0, sizeof(*b));
	b->type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
	b->memory = V4L2_MEMORY_MMAP;
	b->index = index;
}

/* REQBUFS(n), map and touch each buffer, unmap all, REQBUFS(0); returns n. */
static unsigned int alloc_cycle(int fd, unsigned int n)
{
	struct v4l2_requestbuffers rb = {
		.count = n, .type = V4L2_BUF_TYPE_VIDEO_CAPTURE, .memory = V4L2_MEMORY_MMAP,
	};
	void **maps = calloc(n, sizeof(*maps));
	size_t *lens = calloc(n, sizeof(*lens));
	struct v4l2_buffer b;
	unsigned int i;

	if (!maps || !lens) {
		fprintf(stderr, "vb2-spin: out of memory\n");
		exit(1);
	}
	xioctl(fd, VIDIOC_REQBUFS, &rb, "REQBUFS(n)");
	if (rb.count != n) {
		fprintf(stderr, "vb2-spin: REQBUFS gave %u buffers, not %u\n", rb.count, n);
		exit(1);
	}
	for (i = 0; i < n; i++) {
		buf_init(&b, i);
		xioctl(fd, VIDIOC_QUERYBUF, &b, "QUERYBUF");
		lens[i] = b.length;
		maps[i] = mmap(NULL, b.length, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
			       b.m.offset);
		if (maps[i] == MAP_FAILED) {
			perror("vb2-spin: mmap");
			exit(1);
		}
		*(volatile char *)maps[i] = 1;
	}
	for (i = 0; i < n; i++)
		munmap(maps[i], lens[i]);
	rb.count = 0;
	xioctl(fd, VIDIOC_REQBUFS, &rb, "REQBUFS(0)");
	free(maps);
	free(lens);
	return n;
}

int main(int argc, char **argv)
{
	struct v4l2_requestbuffers rb = { 0 };
	struct v4l2_format fmt = { 0 };
	struct v4l2_buffer b;
	unsigned long long ops = 0;
	const char *op;
	double end;
	int fd, type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
	unsigned int i;

	if (argc != 4) {
		fprintf(stderr,
			"usage: vb2-spin DEVICE OP SECONDS (OP: qbuf-dqbuf, querybuf, prepare-buf, dqbuf-qbuf, alloc-N)\n");
		return 2;
	}
	op = argv[2];
	fd = open(argv[1], O_RDWR);
	if (fd < 0) {
		perror(argv[1]);
		return 1;
	}
	fmt.type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
	fmt.fmt.pix.width = 16;
	fmt.fmt.pix.height = 16;
	fmt.fmt.pix.pixelformat = V4L2_PIX_FMT_YUYV;
	xioctl(fd, VIDIOC_S_FMT, &fmt, "S_FMT");
	rb.count = NBUFS;
	rb.type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
	rb.memory = V4L2_MEMORY_MMAP;
	xioctl(fd, VIDIOC_REQBUFS, &rb, "REQBUFS");
	if (!strncmp(op, "alloc-", 6)) {
		rb.count = 0;
		xioctl(fd, VIDIOC_REQBUFS, &rb, "REQBUFS(0)");
	}

	if (!strcmp(op, "dqbuf-qbuf")) {
		/* Outside the counted stretch: only the cycles count. */
		for (i = 0; i < NBUFS; i++) {
			buf_init(&b, i);
			xioctl(fd, VIDIOC_QBUF, &b, "QBUF");
		}
		xioctl(fd, VIDIOC_STREAMON, &type, "STREAMON");
	}

	end = now() + atof(argv[3]);
	mark();
	if (!strcmp(op, "qbuf-dqbuf")) {
		xioctl(fd, VIDIOC_STREAMON, &type, "STREAMON");
		while (now() < end) {
			for (i = 0; i < 1000; i++, ops++) {
				buf_init(&b, ops % NBUFS);
				xioctl(fd, VIDIOC_QBUF, &b, "QBUF");
				buf_init(&b, 0);
				xioctl(fd, VIDIOC_DQBUF, &b, "DQBUF");
			}
		}
	} else if (!strcmp(op, "querybuf")) {
		while (now() < end) {
			for (i = 0; i < 1000; i++, ops++) {
				buf_init(&b, ops % NBUFS);
				xioctl(fd, VIDIOC_QUERYBUF, &b, "QUERYBUF");
			}
		}
	} else if (!strcmp(op, "prepare-buf")) {
		/* Prepared buffers cannot be prepared again: requeue them through REQBUFS. */
		while (now() < end) {
			for (i = 0; i < NBUFS; i++, ops++) {
				buf_init(&b, i);
				xioctl(fd, VIDIOC_PREPARE_BUF, &b, "PREPARE_BUF");
			}
			xioctl(fd, VIDIOC_STREAMON, &type, "STREAMON");
			for (i = 0; i < NBUFS; i++) {
				buf_init(&b, i);
				xioctl(fd, VIDIOC_QBUF, &b, "QBUF");
				buf_init(&b, 0);
				xioctl(fd, VIDIOC_DQBUF, &b, "DQBUF");
			}
			xioctl(fd, VIDIOC_STREAMOFF, &type, "STREAMOFF");
		}
	} else if (!strcmp(op, "dqbuf-qbuf")) {
		for (; now() < end; ops++) {
			buf_init(&b, 0);
			xioctl(fd, VIDIOC_DQBUF, &b, "DQBUF");
			buf_init(&b, b.index);
			xioctl(fd, VIDIOC_QBUF, &b, "QBUF");
		}
	} else if (!strncmp(op, "alloc-", 6)) {
		ops = alloc_cycle(fd, strtoul(op + 6, NULL, 10));
	} else {
		fprintf(stderr, "vb2-spin: unknown op %s\n", op);
		return 2;
	}
	mark();
	printf("vb2-spin: %s %llu ops\n", op, ops);
	return 0;
}
