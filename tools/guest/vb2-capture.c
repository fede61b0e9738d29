// SPDX-License-Identifier: GPL-2.0
/*
 * vb2-capture: stream frames from a V4L2 capture node with MMAP buffers and report
 * what happened. A guest program of the test harness (make run).
 *
 *   vb2-capture DEVICE FRAMES OUT.ppm
 *
 * Sets 640x480 RGB24 at 30 frames per second (or the nearest rate the driver offers),
 * streams FRAMES frames through 4 MMAP buffers, writes the last frame as a binary PPM and
 * prints one line of key=value pairs:
 *   frames=N fps=F dropped=D elapsed=S width=W height=H rate=R
 * dropped counts the gaps in the sequence numbers the driver gave the buffers.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
#include <linux/videodev2.h>

#include "vb2-guest.h"

#define NBUFS 4

struct mapping {
	void *addr;
	size_t len;
};

static int xioctl(int fd, unsigned long req, void *arg, const char *what)
{
	int r = vb2_ioctl(fd, req, arg);

	if (r < 0)
		fprintf(stderr, "vb2-capture: %s: %s\n", what, strerror(-r));
	return r;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int write_ppm(const char *path, const unsigned char *rgb, unsigned int w,
		     unsigned int h, unsigned int stride)
{
	FILE *f = fopen(path, "wb");
	unsigned int y;

	if (!f) {
		fprintf(stderr, "vb2-capture: %s: %s\n", path, strerror(errno));
		return -1;
	}
	fprintf(f, "P6\n%u %u\n255\n", w, h);
	for (y = 0; y < h; y++)
		fwrite(rgb + (size_t)y * stride, 3, w, f);
	return fclose(f);
}

/* RGB24 640x480 at 30 fps if the device takes the rate (@parm says what it took). */
static int set_format(int fd, struct v4l2_format *fmt, struct v4l2_streamparm *parm)
{
	fmt->type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
	fmt->fmt.pix.width = 640;
	fmt->fmt.pix.height = 480;
	fmt->fmt.pix.pixelformat = V4L2_PIX_FMT_RGB24;
	fmt->fmt.pix.field = V4L2_FIELD_NONE;
	if (xioctl(fd, VIDIOC_S_FMT, fmt, "VIDIOC_S_FMT"))
		return -1;
	if (fmt->fmt.pix.pixelformat != V4L2_PIX_FMT_RGB24) {
		fprintf(stderr, "vb2-capture: the device does not do RGB24\n");
		return -1;
	}
	parm->parm.capture.timeperframe.numerator = 1;
	parm->parm.capture.timeperframe.denominator = 30;
	if (vb2_ioctl(fd, VIDIOC_S_PARM, parm) < 0 ||
	    !parm->parm.capture.timeperframe.numerator) {
		parm->parm.capture.timeperframe.numerator = 0;
		parm->parm.capture.timeperframe.denominator = 0;
	}
	return 0;
}

/* NBUFS MMAP buffers (or fewer, as the driver allocates), mapped and queued. */
static int setup_buffers(int fd, struct v4l2_requestbuffers *req, struct mapping *maps)
{
	unsigned int i;

	req->count = NBUFS;
	req->type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
	req->memory = V4L2_MEMORY_MMAP;
	if (xioctl(fd, VIDIOC_REQBUFS, req, "VIDIOC_REQBUFS"))
		return -1;
	if (req->count > NBUFS)
		req->count = NBUFS;
	for (i = 0; i < req->count; i++) {
		struct v4l2_buffer b = { .index = i, .type = req->type, .memory = req->memory };

		if (xioctl(fd, VIDIOC_QUERYBUF, &b, "VIDIOC_QUERYBUF"))
			return -1;
		maps[i].len = b.length;
		maps[i].addr = mmap(NULL, b.length, PROT_READ, MAP_SHARED, fd, b.m.offset);
		if (maps[i].addr == MAP_FAILED) {
			perror("vb2-capture: mmap");
			return -1;
		}
		if (xioctl(fd, VIDIOC_QBUF, &b, "VIDIOC_QBUF"))
			return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct v4l2_streamparm parm = { .type = V4L2_BUF_TYPE_VIDEO_CAPTURE };
	struct v4l2_requestbuffers req = { 0 };
	struct v4l2_format fmt = { 0 };
	struct mapping maps[NBUFS];
	enum v4l2_buf_type type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
	unsigned int frames, got = 0, dropped = 0, last_seq = 0, i;
	int last_index = -1, fd;
	double t0, elapsed;

	if (argc != 4) {
		fprintf(stderr, "usage: vb2-capture DEVICE FRAMES OUT.ppm\n");
		return 2;
	}
	frames = strtoul(argv[2], NULL, 0);
	fd = open(argv[1], O_RDWR);
	if (fd < 0) {
		fprintf(stderr, "vb2-capture: %s: %s\n", argv[1], strerror(errno));
		return 1;
	}
	if (set_format(fd, &fmt, &parm) || setup_buffers(fd, &req, maps))
		return 1;
	if (xioctl(fd, VIDIOC_STREAMON, &type, "VIDIOC_STREAMON"))
		return 1;
	t0 = now();
	while (got < frames) {
		struct v4l2_buffer b = { .type = type, .memory = V4L2_MEMORY_MMAP };

		if (xioctl(fd, VIDIOC_DQBUF, &b, "VIDIOC_DQBUF"))
			return 1;
		if (got && b.sequence > last_seq + 1)
			dropped += b.sequence - last_seq - 1;
		last_seq = b.sequence;
		got++;
		if (got == frames) {
			last_index = b.index;
			break;
		}
		if (xioctl(fd, VIDIOC_QBUF, &b, "VIDIOC_QBUF"))
			return 1;
	}
	elapsed = now() - t0;
	if (last_index >= 0 &&
	    write_ppm(argv[3], maps[last_index].addr, fmt.fmt.pix.width,
		      fmt.fmt.pix.height, fmt.fmt.pix.bytesperline))
		return 1;
	if (xioctl(fd, VIDIOC_STREAMOFF, &type, "VIDIOC_STREAMOFF"))
		return 1;
	for (i = 0; i < req.count; i++)
		munmap(maps[i].addr, maps[i].len);
	req.count = 0;
	if (xioctl(fd, VIDIOC_REQBUFS, &req, "VIDIOC_REQBUFS(0)"))
		return 1;
	close(fd);
	printf("frames=%u fps=%.2f dropped=%u elapsed=%.2f width=%u height=%u rate=%u/%u\n",
	       got, elapsed > 0 ? got / elapsed : 0.0, dropped, elapsed, fmt.fmt.pix.width,
	       fmt.fmt.pix.height, parm.parm.capture.timeperframe.denominator,
	       parm.parm.capture.timeperframe.numerator);
	return 0;
}
