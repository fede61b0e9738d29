// SPDX-License-Identifier: GPL-2.0
/*
 * vb2-vicodec-sl: the stateless decoder path of videobuf2, driven as a stateless-decoder
 * user drives it (Request API, references found by timestamp). tools/plans/vicodec-sl.plan.
 *
 *   vb2-vicodec-sl [--memory mmap|dmabuf] [--ref dequeued|requeued]
 *                  [--exporter auto|heap|udmabuf] [--qp 1..31]
 *
 * Two 640x480 YUV420 frames (the second the first with a small square inverted) are
 * encoded by vicodec's stateful encoder (GOP 10, QP --qp, default 2: lossy) into an I- and
 * a P-frame, decoded by the stateful decoder (the expected pictures) and by the stateless
 * one: a request per frame with the FWHT params control and the OUTPUT buffer; the P-frame
 * names its reference by the CAPTURE buffer's copied timestamp (vb2_find_buffer()). CAPTURE
 * memory is MMAP or DMABUF (--exporter: the system heap, udmabuf, or auto: the heap if
 * there is one). The reference is held by the program while the P-frame decodes
 * (dequeued) or queued again before its request is (requeued). Both stateless pictures
 * must equal the stateful ones and be close to the input (PSNR); the P-frame decoded
 * against a zeroed reference must differ, proof that the comparison would see a wrong one.
 *
 * KTAP cases: nodes, encode, stateful-decode, stateless-decode, zeroed-reference-decode,
 * frame0, frame1, zeroed-reference-differs. A step that cannot go on ends the output with
 * "Bail out!" (the later cases never report). Exit code 0 when every case passed.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <linux/dma-buf.h>
#include <linux/media.h>
#include <linux/videodev2.h>

#include <kselftest.h>

#include "vb2-ktap.h"

/* vicodec's smallest frame is 640x360 (MIN_WIDTH/MIN_HEIGHT in vicodec-core.c). */
#define WIDTH		640
#define HEIGHT		480
#define LUMA_SIZE	(WIDTH * HEIGHT)
#define FRAME_SIZE	(LUMA_SIZE * 3 / 2)		/* YUV420 */
#define NFRAMES		2

#define SF_CAP_BUFS	2
#define SL_OUT_BUFS	2
/* Three, so that a P-frame never has to go into the buffer holding its reference. */
#define SL_CAP_BUFS	3
#define MAX_BUFS	4

#define TIMEOUT_MS	10000
#define PATH_LEN	300
#define MIN_PSNR	30.0

/*
 * The header before every frame vicodec's stateful codec makes (struct fwht_cframe_hdr,
 * vicodec/codec-fwht.h, not uAPI): magics, then big-endian fields. The stateless decoder
 * gets the data after it, and the fields in struct v4l2_ctrl_fwht_params.
 */
struct fwht_cframe_hdr {
	uint32_t magic1, magic2, version, width, height, flags, colorspace, xfer_func;
	uint32_t ycbcr_enc, quantization, size;	/* size: bytes after the header */
};

#define FWHT_MAGIC1	0x4f4f4f4f
#define FWHT_MAGIC2	0xffffffff

enum ref_mode { REF_DEQUEUED, REF_REQUEUED };
enum exporter { EXP_AUTO, EXP_HEAP, EXP_UDMABUF };

struct coded_frame {
	unsigned char *data;	/* header and compressed data, as the encoder made it */
	size_t len;
	struct fwht_cframe_hdr hdr;	/* in host byte order */
};

struct buf {
	void *addr;
	size_t len;
	int dmabuf_fd;		/* -1 for MMAP */
};

/* One open mem2mem node: its OUTPUT and CAPTURE buffers. */
struct m2m {
	const char *what;	/* for messages */
	int fd;
	unsigned int cap_memory;
	enum exporter ex;	/* of DMABUF CAPTURE buffers */
	struct buf out[MAX_BUFS];
	struct buf cap[MAX_BUFS];
	unsigned int n_out, n_cap;
	size_t cap_size;
	int media_fd;		/* the stateless decoder's, */
	unsigned int next_out;	/* and its OUTPUT buffer for the next request */
};

static const char *variant = "";

/* Give up, naming the variant that was running. */
#define die(fmt, ...) vb2_bail("%s: " fmt, variant, ##__VA_ARGS__)

/* Wait for @events on @fd; false on timeout. */
static int wait_fd(int fd, short events, int timeout_ms)
{
	int r = vb2_poll(fd, events, timeout_ms);

	if (r < 0)
		die("poll: %s", strerror(-r));
	return r & events;
}

/* ---- nodes, pictures --------------------------------------------------------------- */

/* Non-blocking: every wait goes through poll() with a timeout. */
static int open_node(const char *path)
{
	int fd = open(path, O_RDWR | O_NONBLOCK | O_CLOEXEC);

	if (fd < 0)
		die("open %s: %s (errno %d)", path, strerror(errno), errno);
	return fd;
}

/* A triangle wave of period @p: 0 .. p/2 and back. */
static int tri(int v, int p)
{
	v %= p;
	return v < p / 2 ? v : p - v;
}

/* A fixed pseudo-random 0..7, so that the coding is lossy. */
static int grain(unsigned int x, unsigned int y)
{
	return ((x * 2654435761u) ^ (y * 40503u)) >> 29;
}

/*
 * Smooth ramps with a little fixed grain: no 8x8 block is flat (a flat block is always
 * intra coded, see decide_blocktype() in codec-fwht.c). Frame 1 is frame 0 with a 64x48
 * square inverted; every other block is as in frame 0, and the encoder codes it as a
 * P-block: the reference plus a small correction of the reference's coding loss.
 */
static void make_frame(unsigned char *f, int n)
{
	unsigned char *y = f, *u = f + LUMA_SIZE, *v = u + LUMA_SIZE / 4;
	int i, j;

	for (j = 0; j < HEIGHT; j++)
		for (i = 0; i < WIDTH; i++)
			y[j * WIDTH + i] = 40 + 2 * tri(i + j / 2, 128) + tri(j, 64) +
					   grain(i, j);
	for (j = 0; j < HEIGHT / 2; j++)
		for (i = 0; i < WIDTH / 2; i++) {
			u[j * WIDTH / 2 + i] = 108 + tri(i, 80);
			v[j * WIDTH / 2 + i] = 113 + tri(j + i / 4, 60);
		}
	if (n == 0)
		return;
	for (j = 200; j < 248; j++)
		for (i = 256; i < 320; i++)
			y[j * WIDTH + i] = 255 - y[j * WIDTH + i];
}

/* log10 without libm (the program is built without -lm; libc has frexp()). */
static double log10_noml(double x)
{
	const double ln2 = 0.69314718055994530942, ln10 = 2.30258509299404568402;
	double t, t2, s = 0;
	int e, k;

	/* ln(x) = 2 atanh((x - 1) / (x + 1)) for x in [0.5, 1) */
	x = frexp(x, &e);
	t = (x - 1) / (x + 1);
	t2 = t * t;
	for (k = 1; k < 60; k += 2) {
		s += t / k;
		t *= t2;
	}
	return (2 * s + e * ln2) / ln10;
}

/*
 * PSNR of @a against @b over the whole YUV420 frame, 99 for identical pictures; the
 * number of bytes that differ in *@ndiff, if not NULL.
 */
static double psnr(const unsigned char *a, const unsigned char *b, size_t *ndiff)
{
	double mse = 0;
	size_t i, n = 0;

	for (i = 0; i < FRAME_SIZE; i++) {
		int d = a[i] - b[i];

		mse += d * d;
		n += d != 0;
	}
	if (ndiff)
		*ndiff = n;
	if (mse == 0)
		return 99.0;
	mse /= FRAME_SIZE;
	return 10 * log10_noml(255.0 * 255.0 / mse);
}

static void *xmalloc(size_t len)
{
	void *p = calloc(1, len);

	if (!p)
		die("out of memory");
	return p;
}

/* ---- V4L2 helpers ----------------------------------------------------------------- */

#define QNAME(type) (V4L2_TYPE_IS_OUTPUT(type) ? "OUTPUT" : "CAPTURE")

/* S_FMT WIDTH x HEIGHT @fourcc on @type: its sizeimage. */
static size_t set_fmt(struct m2m *m, unsigned int type, unsigned int fourcc)
{
	struct v4l2_format f = { .type = type, .fmt.pix = {
		.width = WIDTH, .height = HEIGHT, .pixelformat = fourcc, .field = V4L2_FIELD_NONE,
	} };
	char what[96];

	snprintf(what, sizeof(what), "%s: set the %s format", m->what, QNAME(type));
	vb2_must_ioctl(m->fd, VIDIOC_S_FMT, &f, what);
	if (f.fmt.pix.pixelformat != fourcc || f.fmt.pix.width != WIDTH ||
	    f.fmt.pix.height != HEIGHT)
		die("%s: got %.4s %ux%u", what, (char *)&f.fmt.pix.pixelformat,
		    f.fmt.pix.width, f.fmt.pix.height);
	return f.fmt.pix.sizeimage;
}

/*
 * REQBUFS: @count buffers of @type at least, mapped: MMAP, or DMABUF from @m->ex (dma-bufs
 * allocated here, mapped for reading the pictures). How many.
 */
static unsigned int reqbufs(struct m2m *m, unsigned int type, unsigned int memory,
			    unsigned int count)
{
	struct v4l2_requestbuffers rb = { .count = count, .type = type, .memory = memory };
	struct buf *bufs = V4L2_TYPE_IS_OUTPUT(type) ? m->out : m->cap;
	size_t page = sysconf(_SC_PAGESIZE);
	unsigned int i;
	char what[96];

	snprintf(what, sizeof(what), "%s: allocate %u %s buffers", m->what, count, QNAME(type));
	vb2_must_ioctl(m->fd, VIDIOC_REQBUFS, &rb, what);
	if (rb.count < count || rb.count > MAX_BUFS)
		die("%s: got %u", what, rb.count);
	for (i = 0; i < rb.count; i++) {
		struct v4l2_buffer b = { .index = i, .type = type, .memory = memory };
		struct buf *bf = &bufs[i];

		if (memory == V4L2_MEMORY_MMAP) {
			vb2_must_ioctl(m->fd, VIDIOC_QUERYBUF, &b, m->what);
			bf->len = b.length;
			bf->dmabuf_fd = -1;
		} else {
			bf->len = (m->cap_size + page - 1) / page * page;
			bf->dmabuf_fd = m->ex == EXP_HEAP ? vb2_heap_alloc(bf->len) :
							    vb2_udmabuf_alloc(bf->len);
			if (bf->dmabuf_fd < 0)
				die("allocate capture buffer %u from %s: %s", i, m->ex == EXP_HEAP ?
				    "the system heap" : "udmabuf", vb2_errname(bf->dmabuf_fd));
		}
		bf->addr = mmap(NULL, bf->len, PROT_READ | PROT_WRITE, MAP_SHARED,
				bf->dmabuf_fd < 0 ? m->fd : bf->dmabuf_fd, b.m.offset);
		if (bf->addr == MAP_FAILED)
			die("%s: mmap buffer %u: %s", m->what, i, strerror(errno));
	}
	return rb.count;
}

/* STREAMON (@on) or STREAMOFF @type; OUTPUT, then CAPTURE for @type 0. */
static void stream(struct m2m *m, unsigned int type, int on)
{
	char what[96];

	if (!type) {
		stream(m, V4L2_BUF_TYPE_VIDEO_OUTPUT, on);
		type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
	}
	snprintf(what, sizeof(what), "%s: %s %s", m->what, on ? "start" : "stop", QNAME(type));
	vb2_must_ioctl_named(m->fd, on ? VIDIOC_STREAMON : VIDIOC_STREAMOFF, &type,
			     on ? "VIDIOC_STREAMON" : "VIDIOC_STREAMOFF", what);
}

static void qbuf_cap(struct m2m *m, unsigned int index)
{
	struct v4l2_buffer b = {
		.index = index, .type = V4L2_BUF_TYPE_VIDEO_CAPTURE, .memory = m->cap_memory,
	};

	if (m->cap_memory == V4L2_MEMORY_DMABUF) {
		b.m.fd = m->cap[index].dmabuf_fd;
		b.length = m->cap[index].len;
	}
	vb2_must_ioctl(m->fd, VIDIOC_QBUF, &b, m->what);
}

/* Queue OUTPUT buffer @index holding @len bytes, in request @req_fd if it is >= 0. */
static void qbuf_out(struct m2m *m, unsigned int index, size_t len,
		     const struct timeval *ts, int req_fd)
{
	struct v4l2_buffer b = {
		.index = index, .type = V4L2_BUF_TYPE_VIDEO_OUTPUT, .memory = V4L2_MEMORY_MMAP,
		.bytesused = len, .field = V4L2_FIELD_NONE, .timestamp = *ts,
	};

	if (req_fd >= 0) {
		b.flags = V4L2_BUF_FLAG_REQUEST_FD;
		b.request_fd = req_fd;
	}
	vb2_must_ioctl(m->fd, VIDIOC_QBUF, &b, m->what);
}

/* Dequeue a buffer of @type, waiting up to TIMEOUT_MS; one with ERROR ends all if !@err_ok. */
static void dqbuf(struct m2m *m, unsigned int type, struct v4l2_buffer *b, bool err_ok)
{
	long long deadline = vb2_now_ns() + TIMEOUT_MS * 1000000LL;
	int r;

	for (;;) {
		*b = (struct v4l2_buffer){ .type = type, .memory = V4L2_TYPE_IS_OUTPUT(type) ?
					   V4L2_MEMORY_MMAP : m->cap_memory };
		r = vb2_ioctl(m->fd, VIDIOC_DQBUF, b);
		if (!r)
			break;
		if (r != -EAGAIN)
			die("%s: dequeue %s: VIDIOC_DQBUF: %s (%s)", m->what, QNAME(type),
			    strerror(-r), vb2_errname(r));
		if (vb2_now_ns() > deadline)
			die("%s: no %s buffer to dequeue after %d ms", m->what, QNAME(type),
			    TIMEOUT_MS);
		wait_fd(m->fd, V4L2_TYPE_IS_OUTPUT(type) ? POLLOUT : POLLIN, 100);
	}
	if (!err_ok && (b->flags & V4L2_BUF_FLAG_ERROR))
		die("%s: %s buffer %u dequeued with V4L2_BUF_FLAG_ERROR", m->what, QNAME(type),
		    b->index);
}

/* Read CAPTURE buffer @index into @pic, or zero it (@pic NULL), between the syncs. */
static void cap_access(struct m2m *m, unsigned int index, unsigned char *pic)
{
	const struct buf *b = &m->cap[index];
	struct dma_buf_sync s = { .flags = pic ? DMA_BUF_SYNC_READ : DMA_BUF_SYNC_WRITE };
	const char *what = "CPU access to a capture dma-buf";

	s.flags |= DMA_BUF_SYNC_START;
	if (b->dmabuf_fd >= 0)
		vb2_must_ioctl(b->dmabuf_fd, DMA_BUF_IOCTL_SYNC, &s, what);
	if (pic)
		memcpy(pic, b->addr, FRAME_SIZE);
	else
		memset(b->addr, 0, FRAME_SIZE);
	s.flags ^= DMA_BUF_SYNC_START | DMA_BUF_SYNC_END;
	if (b->dmabuf_fd >= 0)
		vb2_must_ioctl(b->dmabuf_fd, DMA_BUF_IOCTL_SYNC, &s, what);
}

/* Stop streaming, unmap the buffers and close the node. */
static void close_m2m(struct m2m *m)
{
	unsigned int i;

	stream(m, 0, 0);
	for (i = 0; i < m->n_out; i++)
		munmap(m->out[i].addr, m->out[i].len);
	for (i = 0; i < m->n_cap; i++) {
		munmap(m->cap[i].addr, m->cap[i].len);
		if (m->cap[i].dmabuf_fd >= 0)
			close(m->cap[i].dmabuf_fd);
	}
	close(m->fd);
}

/* ---- the stateful encoder --------------------------------------------------------- */

static void set_ctrl(struct m2m *m, unsigned int id, int value, const char *what)
{
	struct v4l2_control c = { .id = id, .value = value };

	vb2_must_ioctl(m->fd, VIDIOC_S_CTRL, &c, what);
}

/* Check the header the encoder wrote and keep a host-order copy of it. */
static void parse_header(struct coded_frame *cf, int n)
{
	const uint32_t *h = (const void *)cf->data;
	struct fwht_cframe_hdr *p = &cf->hdr;
	unsigned int i;

	if (cf->len < sizeof(*p) || h[0] != FWHT_MAGIC1 || h[1] != FWHT_MAGIC2)
		die("encoder: frame %d (%zu bytes) does not start with an FWHT header", n, cf->len);
	for (i = 2; i < sizeof(*p) / sizeof(*h); i++)	/* version to size */
		((uint32_t *)p)[i] = ntohl(h[i]);
	if (p->version != V4L2_FWHT_VERSION || p->width != WIDTH || p->height != HEIGHT ||
	    p->size != cf->len - sizeof(*p))
		die("encoder: frame %d: header version %u, %ux%u, size %u for %zu bytes",
		    n, p->version, p->width, p->height, p->size, cf->len);
}

static void encode(const char *path, int qp, unsigned char *const raw[],
		   struct coded_frame cf[])
{
	struct m2m m = { .what = "encoder", .cap_memory = V4L2_MEMORY_MMAP };
	size_t fwht_size;
	int i;

	m.fd = open_node(path);
	set_fmt(&m, V4L2_BUF_TYPE_VIDEO_OUTPUT, V4L2_PIX_FMT_YUV420);
	fwht_size = set_fmt(&m, V4L2_BUF_TYPE_VIDEO_CAPTURE, V4L2_PIX_FMT_FWHT);
	/* Frame 1 must be a P-frame: a GOP longer than 2. A low QP keeps it close. */
	set_ctrl(&m, V4L2_CID_MPEG_VIDEO_GOP_SIZE, 10, "encoder: set the GOP size");
	set_ctrl(&m, V4L2_CID_FWHT_I_FRAME_QP, qp, "encoder: set the I-frame QP");
	set_ctrl(&m, V4L2_CID_FWHT_P_FRAME_QP, qp, "encoder: set the P-frame QP");

	m.n_out = reqbufs(&m, V4L2_BUF_TYPE_VIDEO_OUTPUT, V4L2_MEMORY_MMAP, NFRAMES);
	m.n_cap = reqbufs(&m, V4L2_BUF_TYPE_VIDEO_CAPTURE, V4L2_MEMORY_MMAP, NFRAMES);
	for (i = 0; i < NFRAMES; i++) {
		struct timeval ts = { .tv_sec = 1, .tv_usec = i };

		memcpy(m.out[i].addr, raw[i], FRAME_SIZE);
		qbuf_cap(&m, i);
		qbuf_out(&m, i, FRAME_SIZE, &ts, -1);
	}
	stream(&m, 0, 1);
	for (i = 0; i < NFRAMES; i++) {
		struct v4l2_buffer b;

		dqbuf(&m, V4L2_BUF_TYPE_VIDEO_CAPTURE, &b, false);
		if (b.timestamp.tv_usec != i || b.bytesused > fwht_size)
			die("encoder: frame %d came back as timestamp %ld.%06ld, %u bytes", i,
			    (long)b.timestamp.tv_sec, (long)b.timestamp.tv_usec, b.bytesused);
		cf[i].len = b.bytesused;
		cf[i].data = xmalloc(b.bytesused);
		memcpy(cf[i].data, m.cap[b.index].addr, b.bytesused);
		parse_header(&cf[i], i);
		dqbuf(&m, V4L2_BUF_TYPE_VIDEO_OUTPUT, &b, false);
	}
	close_m2m(&m);

	if (!(cf[0].hdr.flags & V4L2_FWHT_FL_I_FRAME))
		die("encoder: frame 0 is not an I-frame (flags 0x%x)", cf[0].hdr.flags);
	if (cf[1].hdr.flags & V4L2_FWHT_FL_I_FRAME)
		die("encoder: frame 1 is not a P-frame (flags 0x%x)", cf[1].hdr.flags);
	/* An uncompressed luma plane would not use the reference. */
	if (cf[1].hdr.flags & V4L2_FWHT_FL_LUMA_IS_UNCOMPRESSED)
		die("encoder: frame 1 has an uncompressed luma plane (flags 0x%x)",
		    cf[1].hdr.flags);
}

/* ---- the stateful decoder: the expected pictures ---------------------------------- */

static void wait_source_change(struct m2m *m)
{
	struct v4l2_event ev;

	if (!wait_fd(m->fd, POLLPRI, TIMEOUT_MS))
		die("%s: no event within %d ms", m->what, TIMEOUT_MS);
	vb2_must_ioctl(m->fd, VIDIOC_DQEVENT, &ev, m->what);
	if (ev.type != V4L2_EVENT_SOURCE_CHANGE)
		die("%s: event %u instead of V4L2_EVENT_SOURCE_CHANGE", m->what, ev.type);
}

/*
 * The initialization sequence of dev-decoder.rst: OUTPUT streaming, wait for the
 * source change, then the CAPTURE format the driver found in the stream.
 */
static void stateful_decode(const char *path, const struct coded_frame cf[],
			    unsigned char *pic[])
{
	struct m2m m = { .what = "stateful decoder", .cap_memory = V4L2_MEMORY_MMAP };
	struct v4l2_event_subscription sub = { .type = V4L2_EVENT_SOURCE_CHANGE };
	struct v4l2_format f = { .type = V4L2_BUF_TYPE_VIDEO_CAPTURE };
	int i;

	m.fd = open_node(path);
	vb2_must_ioctl(m.fd, VIDIOC_SUBSCRIBE_EVENT, &sub, m.what);
	set_fmt(&m, V4L2_BUF_TYPE_VIDEO_OUTPUT, V4L2_PIX_FMT_FWHT);
	m.n_out = reqbufs(&m, V4L2_BUF_TYPE_VIDEO_OUTPUT, V4L2_MEMORY_MMAP, NFRAMES);
	for (i = 0; i < NFRAMES; i++) {
		struct timeval ts = { .tv_sec = 2, .tv_usec = i };

		if (cf[i].len > m.out[i].len)
			die("%s: frame %d (%zu bytes) does not fit", m.what, i, cf[i].len);
		memcpy(m.out[i].addr, cf[i].data, cf[i].len);
		qbuf_out(&m, i, cf[i].len, &ts, -1);
	}
	stream(&m, V4L2_BUF_TYPE_VIDEO_OUTPUT, 1);
	wait_source_change(&m);

	vb2_must_ioctl(m.fd, VIDIOC_G_FMT, &f, "stateful decoder: the CAPTURE format");
	if (f.fmt.pix.pixelformat != V4L2_PIX_FMT_YUV420 || f.fmt.pix.width != WIDTH ||
	    f.fmt.pix.height != HEIGHT || f.fmt.pix.sizeimage < FRAME_SIZE)
		die("%s: CAPTURE format %.4s %ux%u", m.what, (char *)&f.fmt.pix.pixelformat,
		    f.fmt.pix.width, f.fmt.pix.height);
	m.n_cap = reqbufs(&m, V4L2_BUF_TYPE_VIDEO_CAPTURE, V4L2_MEMORY_MMAP, SF_CAP_BUFS);
	for (i = 0; i < (int)m.n_cap; i++)
		qbuf_cap(&m, i);
	stream(&m, V4L2_BUF_TYPE_VIDEO_CAPTURE, 1);

	for (i = 0; i < NFRAMES; i++) {
		struct v4l2_buffer b;

		dqbuf(&m, V4L2_BUF_TYPE_VIDEO_CAPTURE, &b, false);
		if (b.bytesused < FRAME_SIZE || b.timestamp.tv_usec != i)
			die("%s: frame %d came back with %u bytes, timestamp %ld.%06ld", m.what,
			    i, b.bytesused, (long)b.timestamp.tv_sec, (long)b.timestamp.tv_usec);
		cap_access(&m, b.index, pic[i]);
		/* Give it back: the decoder may need it for the next frame. */
		qbuf_cap(&m, b.index);
	}
	close_m2m(&m);
}

/* ---- the stateless decoder -------------------------------------------------------- */

static void sl_open(struct m2m *m, const char *path, const char *media,
		    unsigned int memory, enum exporter ex)
{
	unsigned int i;

	m->what = "stateless decoder";
	m->cap_memory = memory;
	m->ex = ex;
	m->fd = open_node(path);
	m->media_fd = open_node(media);
	/* OUTPUT first: the CAPTURE formats on offer depend on it (dev-stateless-decoder.rst). */
	set_fmt(m, V4L2_BUF_TYPE_VIDEO_OUTPUT, V4L2_PIX_FMT_FWHT_STATELESS);
	m->cap_size = set_fmt(m, V4L2_BUF_TYPE_VIDEO_CAPTURE, V4L2_PIX_FMT_YUV420);
	m->n_out = reqbufs(m, V4L2_BUF_TYPE_VIDEO_OUTPUT, V4L2_MEMORY_MMAP, SL_OUT_BUFS);
	m->n_cap = reqbufs(m, V4L2_BUF_TYPE_VIDEO_CAPTURE, memory, SL_CAP_BUFS);
	for (i = 0; i < m->n_cap; i++)
		qbuf_cap(m, i);
	stream(m, 0, 1);
}

/* Never 0: a CAPTURE buffer that has not been decoded into yet has timestamp 0. */
static struct timeval frame_ts(int n)
{
	return (struct timeval){ .tv_sec = 100 + n };
}

/*
 * Decode @cf in a request of its own, with timestamp @ts, referring to the frame with
 * timestamp @ref (NULL for an I-frame). Waits for the request to complete, dequeues
 * both buffers and returns the index of the CAPTURE buffer, still dequeued.
 */
static unsigned int sl_decode(struct m2m *m, const struct coded_frame *cf,
			      const struct timeval *ts, const struct timeval *ref)
{
	const size_t hdr = sizeof(struct fwht_cframe_hdr);
	/* The FWHT params control: the frame header's fields, and the reference's timestamp. */
	struct v4l2_ctrl_fwht_params p = {
		.backward_ref_ts = ref ? v4l2_timeval_to_ns(ref) : 0, .version = cf->hdr.version,
		.width = cf->hdr.width, .height = cf->hdr.height, .flags = cf->hdr.flags,
		.colorspace = cf->hdr.colorspace, .xfer_func = cf->hdr.xfer_func,
		.ycbcr_enc = cf->hdr.ycbcr_enc, .quantization = cf->hdr.quantization,
	};
	struct v4l2_ext_control c = {
		.id = V4L2_CID_STATELESS_FWHT_PARAMS, .size = sizeof(p), .ptr = &p,
	};
	struct v4l2_ext_controls cs = {
		.which = V4L2_CTRL_WHICH_REQUEST_VAL, .count = 1, .controls = &c,
	};
	unsigned int out = m->next_out;
	struct v4l2_buffer b, ob;
	int req_fd, r;

	m->next_out = (m->next_out + 1) % m->n_out;
	req_fd = vb2_request_alloc(m->media_fd);
	if (req_fd < 0)
		die("stateless decoder: allocate a request: %s", vb2_errname(req_fd));
	cs.request_fd = req_fd;
	vb2_must_ioctl(m->fd, VIDIOC_S_EXT_CTRLS, &cs,
		       "stateless decoder: set V4L2_CID_STATELESS_FWHT_PARAMS in the request");
	/* The stateless format is the compressed data alone, without the header. */
	memcpy(m->out[out].addr, cf->data + hdr, cf->len - hdr);
	qbuf_out(m, out, cf->len - hdr, ts, req_fd);
	r = vb2_request_queue(req_fd);
	if (r < 0)
		die("stateless decoder: queue the request: %s", vb2_errname(r));
	if (vb2_request_wait(req_fd, TIMEOUT_MS))
		die("stateless decoder: the request for timestamp %ld s did not complete "
		    "within %d ms", (long)ts->tv_sec, TIMEOUT_MS);
	close(req_fd);

	dqbuf(m, V4L2_BUF_TYPE_VIDEO_OUTPUT, &ob, true);
	if (ob.index != out)
		die("stateless decoder: OUTPUT buffer %u dequeued, %u expected", ob.index, out);
	dqbuf(m, V4L2_BUF_TYPE_VIDEO_CAPTURE, &b, true);
	/* vicodec fails a P-frame whose reference vb2_find_buffer() does not find. */
	if ((ob.flags | b.flags) & V4L2_BUF_FLAG_ERROR)
		die("stateless decoder: %s frame with timestamp %ld s failed (OUTPUT flags 0x%x, "
		    "CAPTURE flags 0x%x)%s", ref ? "P" : "I", (long)ts->tv_sec, ob.flags, b.flags,
		    ref ? ": was its reference not found by its timestamp?" : "");
	/* V4L2_BUF_FLAG_TIMESTAMP_COPY: the picture carries its bitstream's timestamp. */
	if (b.timestamp.tv_sec != ts->tv_sec || b.timestamp.tv_usec != ts->tv_usec)
		die("stateless decoder: CAPTURE buffer %u has timestamp %ld.%06ld, %ld.%06ld "
		    "expected", b.index, (long)b.timestamp.tv_sec, (long)b.timestamp.tv_usec,
		    (long)ts->tv_sec, (long)ts->tv_usec);
	if ((b.flags & V4L2_BUF_FLAG_TIMESTAMP_MASK) != V4L2_BUF_FLAG_TIMESTAMP_COPY)
		die("stateless decoder: CAPTURE buffer flags 0x%x lack TIMESTAMP_COPY", b.flags);
	if (!(b.flags & (ref ? V4L2_BUF_FLAG_PFRAME : V4L2_BUF_FLAG_KEYFRAME)))
		die("stateless decoder: CAPTURE buffer flags 0x%x lack %s", b.flags,
		    ref ? "V4L2_BUF_FLAG_PFRAME" : "V4L2_BUF_FLAG_KEYFRAME");
	if (b.bytesused < FRAME_SIZE)
		die("stateless decoder: CAPTURE buffer %u holds %u bytes", b.index, b.bytesused);
	return b.index;
}

/* Whether CAPTURE buffer @index is queued, as VIDIOC_QUERYBUF says. */
static int cap_queued(struct m2m *m, unsigned int index)
{
	struct v4l2_buffer b = {
		.index = index, .type = V4L2_BUF_TYPE_VIDEO_CAPTURE, .memory = m->cap_memory,
	};

	vb2_must_ioctl(m->fd, VIDIOC_QUERYBUF, &b,
		       "stateless decoder: query the reference buffer");
	return !!(b.flags & V4L2_BUF_FLAG_QUEUED);
}

/*
 * Frames 0 and 1 as a decoder user does it, with the reference held (dequeued) or
 * given back (requeued) while the P-frame decodes. Returns the two pictures.
 */
static void sl_decode_stream(struct m2m *m, enum ref_mode mode,
			     const struct coded_frame cf[], unsigned char *pic[])
{
	struct timeval ts0 = frame_ts(0), ts1 = frame_ts(1);
	unsigned char *check = xmalloc(FRAME_SIZE);
	unsigned int ref, cur;

	ref = sl_decode(m, &cf[0], &ts0, NULL);
	cap_access(m, ref, pic[0]);
	/*
	 * Requeued: give the reference back before the P-frame's request is queued, so
	 * that it is a queued buffer when the decoder looks it up by timestamp. (Once the
	 * request is queued would be too late for that: vicodec decodes it within
	 * MEDIA_REQUEST_IOC_QUEUE.) Safe because the decoder takes CAPTURE buffers in
	 * queue order and two others are ahead of it: the P-frame cannot land in it.
	 */
	if (mode == REF_REQUEUED)
		qbuf_cap(m, ref);
	if (cap_queued(m, ref) != (mode == REF_REQUEUED))
		die("stateless decoder: reference buffer %u is %squeued before the P-frame",
		    ref, mode == REF_REQUEUED ? "not " : "");

	cur = sl_decode(m, &cf[1], &ts1, &ts0);
	if (cur == ref)
		die("stateless decoder: the P-frame was decoded into its own reference (buffer %u)",
		    ref);
	cap_access(m, cur, pic[1]);
	if (mode == REF_DEQUEUED) {
		/* The reference was ours the whole time: nothing may have written to it. */
		cap_access(m, ref, check);
		if (memcmp(check, pic[0], FRAME_SIZE))
			die("stateless decoder: the held reference buffer %u changed while the "
			    "P-frame decoded", ref);
		qbuf_cap(m, ref);
	} else if (!cap_queued(m, ref)) {
		die("stateless decoder: requeued reference buffer %u is no longer queued", ref);
	}
	qbuf_cap(m, cur);
	free(check);
}

/*
 * The control experiment: the same P-frame decoded against a reference that holds
 * zeros instead of frame 0. Shows that the P-frame really uses its reference, so
 * that the comparisons of sl_decode_stream() would catch a wrong one.
 */
static void sl_decode_zero_ref(struct m2m *m, const struct coded_frame cf[],
			       unsigned char *pic)
{
	struct timeval ts2 = frame_ts(2), ts3 = frame_ts(3);
	unsigned int ref, cur;

	ref = sl_decode(m, &cf[0], &ts2, NULL);
	cap_access(m, ref, NULL);	/* dequeued, so ours to write */
	cur = sl_decode(m, &cf[1], &ts3, &ts2);
	cap_access(m, cur, pic);
	qbuf_cap(m, ref);
	qbuf_cap(m, cur);
}

/* ---- main ------------------------------------------------------------------------- */

/* The index of @v in the NULL-terminated @words, or -1. */
static int pick(const char *v, const char *const words[])
{
	int i;

	for (i = 0; words[i]; i++)
		if (!strcmp(v, words[i]))
			return i;
	return -1;
}

static void parse_args(int argc, char **argv, unsigned int *memory, enum ref_mode *mode,
		       enum exporter *ex, int *qp)
{
	static const char *const mems[] = { "mmap", "dmabuf", NULL };
	static const char *const refs[] = { "dequeued", "requeued", NULL };	/* ref_mode */
	static const char *const exps[] = { "auto", "heap", "udmabuf", NULL };	/* exporter */
	static char name[128];
	int i, k;

	for (i = 1; i < argc; i += 2) {
		const char *o = argv[i], *v = i + 1 < argc ? argv[i + 1] : "";

		if (!strcmp(o, "--memory") && (k = pick(v, mems)) >= 0) {
			*memory = k ? V4L2_MEMORY_DMABUF : V4L2_MEMORY_MMAP;
		} else if (!strcmp(o, "--ref") && (k = pick(v, refs)) >= 0) {
			*mode = k;
		} else if (!strcmp(o, "--qp") && atoi(v) >= 1 && atoi(v) <= 31) {
			*qp = atoi(v);
		} else if (!strcmp(o, "--exporter") && (k = pick(v, exps)) >= 0) {
			*ex = k;
		} else {
			fprintf(stderr, "usage: vb2-vicodec-sl [--memory mmap|dmabuf] [--ref "
				"dequeued|requeued] [--exporter auto|heap|udmabuf] [--qp 1..31]\n");
			exit(2);
		}
	}
	if (*memory == V4L2_MEMORY_DMABUF && *ex == EXP_AUTO)
		*ex = access("/dev/dma_heap/system", F_OK) ? EXP_UDMABUF : EXP_HEAP;
	snprintf(name, sizeof(name), "capture=%s ref=%s",
		 *memory == V4L2_MEMORY_MMAP ? "mmap" :
		 *ex == EXP_HEAP ? "dmabuf(heap)" : "dmabuf(udmabuf)", refs[*mode]);
	variant = name;
}

/* A frame of the stateless decoder: the stateful decoder's picture, close to the input. */
static void check_frame(int i, const unsigned char *stl, const unsigned char *sf,
			const unsigned char *raw)
{
	double q = psnr(stl, raw, NULL);
	char name[32];
	size_t n;

	psnr(stl, sf, &n);
	ksft_print_msg("frame %d: stateless PSNR %.1f dB, stateful PSNR %.1f dB, %zu bytes "
		       "differ between them\n", i, q, psnr(sf, raw, NULL), n);
	if (n)
		ksft_print_msg("frame %d: the stateless picture differs from the stateful one in "
			       "%zu of %d bytes\n", i, n, FRAME_SIZE);
	if (q < MIN_PSNR)
		ksft_print_msg("frame %d: PSNR %.1f dB against the encoder's input, below %.0f "
			       "dB\n", i, q, MIN_PSNR);
	snprintf(name, sizeof(name), "frame%d", i);
	ksft_test_result_code(!n && q >= MIN_PSNR ? KSFT_PASS : KSFT_FAIL, name, NULL);
}

/* The P-frame decoded against a zeroed reference must come out wrong. */
static void check_zero_ref(const unsigned char *zero_ref, const unsigned char *raw,
			   const unsigned char *stl)
{
	double qz = psnr(zero_ref, raw, NULL);
	size_t zdiff;
	bool ok;

	psnr(zero_ref, stl, &zdiff);
	ok = zdiff && qz < MIN_PSNR;
	ksft_print_msg("frame 1 against a zeroed reference: PSNR %.1f dB, %zu bytes differ from "
		       "the right picture\n", qz, zdiff);
	if (!ok)
		ksft_print_msg("the P-frame decoded against a zeroed reference is too good: the "
			       "checks could not tell a wrong reference\n");
	ksft_test_result_code(ok ? KSFT_PASS : KSFT_FAIL, "zeroed-reference-differs", NULL);
}

#define N_CASES		8

int main(int argc, char **argv)
{
	unsigned int memory = V4L2_MEMORY_MMAP;
	enum ref_mode mode = REF_DEQUEUED;
	enum exporter ex = EXP_AUTO;
	int qp = 2;
	static const char *const names[] = {
		"stateful-encoder", "stateful-decoder", "stateless-decoder",
	};
	char node[PATH_LEN], dev[3][PATH_LEN], media[PATH_LEN];
	unsigned char *raw[NFRAMES], *sf[NFRAMES], *stl[NFRAMES], *zero_ref;
	struct coded_frame cf[NFRAMES];
	struct m2m sl = { 0 };
	int i;

	parse_args(argc, argv, &memory, &mode, &ex, &qp);
	ksft_print_header();
	ksft_set_plan(N_CASES);
	ksft_print_msg("%s\n", variant);
	for (i = 0; i < 3; i++)
		if (vb2_find_node(names[i], dev[i], PATH_LEN, node, sizeof(node)))
			die("no video node named %s (is vicodec loaded?)", names[i]);
	if (vb2_find_media(node, NULL, media, sizeof(media)))
		die("no media device beside %s", node);
	ksft_print_msg("encoder %s, stateful decoder %s, stateless decoder %s, media %s\n",
		       dev[0], dev[1], dev[2], media);
	ksft_test_result_code(KSFT_PASS, "nodes", NULL);

	for (i = 0; i < NFRAMES; i++) {
		raw[i] = xmalloc(FRAME_SIZE);
		sf[i] = xmalloc(FRAME_SIZE);
		stl[i] = xmalloc(FRAME_SIZE);
		make_frame(raw[i], i);
	}
	zero_ref = xmalloc(FRAME_SIZE);

	encode(dev[0], qp, raw, cf);
	ksft_print_msg("encoded frame 0: %zu bytes, flags 0x%x (I); frame 1: %zu bytes, "
		       "flags 0x%x (P)\n", cf[0].len, cf[0].hdr.flags, cf[1].len, cf[1].hdr.flags);
	ksft_test_result_code(KSFT_PASS, "encode", NULL);
	stateful_decode(dev[1], cf, sf);
	ksft_test_result_code(KSFT_PASS, "stateful-decode", NULL);

	sl_open(&sl, dev[2], media, memory, ex);
	sl_decode_stream(&sl, mode, cf, stl);
	ksft_test_result_code(KSFT_PASS, "stateless-decode", NULL);
	sl_decode_zero_ref(&sl, cf, zero_ref);
	close_m2m(&sl);
	close(sl.media_fd);
	ksft_test_result_code(KSFT_PASS, "zeroed-reference-decode", NULL);

	for (i = 0; i < NFRAMES; i++)
		check_frame(i, stl[i], sf[i], raw[i]);
	check_zero_ref(zero_ref, raw[1], stl[1]);
	ksft_finished();
}
