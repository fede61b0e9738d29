// SPDX-License-Identifier: GPL-2.0
/*
 * vb2-edu: stream through vb2-edu (testdrv/vb2-edu.c), whose device moves every
 * byte with its DMA engine, and check every byte in user space. A guest program
 * of the test harness (tools/plans/edu.plan).
 *
 *   vb2-edu --dev NAME --mem MODEL [--frames N] [--bufs N] [--size WxH]
 *           [--contig-rule] [--hint [--expect-stale]] [--no-sync] [--exporter-writes] [-v]
 *
 * NAME is a node's V4L2 name (vb2-edu-0-cap, vb2-edu-1-out, ...). MODEL is one of
 *   mmap        MMAP buffers
 *   mmap-nc     MMAP buffers with V4L2_MEMORY_FLAG_NON_COHERENT
 *   userptr     page-aligned anonymous memory
 *   userptr-scatter  the same, built so that no page is followed by its physical
 *               successor (the buffer is refused where it must be contiguous)
 *   heap        DMABUF from the system dma-heap
 *   udmabuf     DMABUF from udmabuf (memfd pages)
 *   expbuf:NODE DMABUF exported (VIDIOC_EXPBUF) by another node's MMAP buffers
 * The frame is 48x64 by default (GREY: 3 KiB; YUV420M: 3 KiB and twice 768 bytes): one
 * transfer each way per plane. The node streams N frames (default 12) through N buffers
 * (default 4), so that every buffer is used more than once. A capture frame must hold
 * vb2-edu-pattern.h's pattern of its sequence number in every byte of every plane. An
 * output frame is filled with the pattern of the frame number it carries in its time
 * stamp; the driver compares what its device read and completes a differing frame with
 * ERROR. Frame 2 of an output stream is spoilt on purpose (one byte) and must come back
 * with ERROR: the check can fail. The stream ends with STREAMOFF while buffers are still
 * queued.
 *
 * --hint (mmap-nc): every QBUF asks videobuf2 to skip the cache maintenance that the
 * CPU's view would need: V4L2_BUF_FLAG_NO_CACHE_INVALIDATE on capture,
 * V4L2_BUF_FLAG_NO_CACHE_CLEAN on output. Where nothing bounces (x86 is coherent) the
 * frames must still be right. --expect-stale: the opposite, every frame must show the
 * skip (a capture frame with wrong bytes, an output frame that comes back ERROR), as
 * under swiotlb=force, where the skipped synchronisation is a copy to or from the
 * bounce buffer.
 *
 * --no-sync: no DMA_BUF_IOCTL_SYNC around CPU access to a dma-buf (tools/plans/edu.plan
 * says why the system heap needs it).
 *
 * --contig-rule (userptr): the node is dma-contig without an IOMMU, which can take user
 * memory only if it is physically contiguous: the first buffer is queued alone, and QBUF
 * must succeed if its pages are contiguous (/proc/self/pagemap) and fail otherwise;
 * what it returned is printed. Nothing streams.
 *
 * --exporter-writes (capture, expbuf:NODE, NODE a capture node): both devices write
 * the same memory in turn. NAME captures one frame into each of its buffers, all
 * dequeued and kept (its device's mappings of the dma-bufs stay); then NODE streams
 * 2 x N frames into its MMAP buffers, the exported ones, and each frame is read through
 * the dma-buf, between DMA_BUF_IOCTL_SYNC calls. Under swiotlb=force, a sync that
 * brought back NAME's older bounce buffer would show NAME's frame instead of NODE's.
 *
 * Output: "vb2-edu: dev=NAME mem=MODEL frames=N bytes=N mismatches=N ok|FAIL".
 * Exit code 0 when everything matched, 1 otherwise, 2 for a usage error.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
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

#include "vb2-guest.h"
#include "uapi-6.12.h"
#include "../../testdrv/vb2-edu-pattern.h"

#define PROG		"vb2-edu"
#define PAGE		4096UL
#define PAGE_ALIGN(x)	(((x) + PAGE - 1) & ~(PAGE - 1))
#define MAXB		16
#define MAXP		3
#define SPOILT		2	/* the output frame spoilt on purpose */

struct node {
	int fd;
	char name[64];
	unsigned int type;
	bool mp, out;
	unsigned int nplanes;
	unsigned int size[MAXP];
};

struct buf {
	void *cpu[MAXP];	/* where user space reads and writes the plane */
	size_t len[MAXP];
	int dfd[MAXP];		/* DMABUF: the dma-buf of the plane */
};

static bool verbose, no_sync, hint, expect_stale, exporter_writes;

static void __noreturn __printf(1, 2) die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fprintf(stderr, PROG ": ");
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

static void must(int fd, unsigned long req, void *arg, const char *what)
{
	int r = vb2_ioctl(fd, req, arg);

	if (r < 0)
		die("%s: %s", what, vb2_errname(r));
}

/* Open @name, learn its queue and set the frame size. */
static void node_init(struct node *n, const char *name, unsigned int w, unsigned int h)
{
	struct v4l2_capability cap = { 0 };
	struct v4l2_format f = { 0 };
	unsigned int caps, p;
	char path[64];

	snprintf(n->name, sizeof(n->name), "%s", name);
	if (vb2_find_node(name, path, sizeof(path), NULL, 0))
		die("no video node named %s", name);
	n->fd = open(path, O_RDWR | O_CLOEXEC);
	if (n->fd < 0)
		die("open %s: %s", path, vb2_errname(errno));
	must(n->fd, VIDIOC_QUERYCAP, &cap, "QUERYCAP");
	caps = cap.device_caps;
	n->mp = caps & (V4L2_CAP_VIDEO_CAPTURE_MPLANE | V4L2_CAP_VIDEO_OUTPUT_MPLANE);
	n->out = caps & (V4L2_CAP_VIDEO_OUTPUT | V4L2_CAP_VIDEO_OUTPUT_MPLANE);
	if (n->out)
		n->type = n->mp ? V4L2_BUF_TYPE_VIDEO_OUTPUT_MPLANE : V4L2_BUF_TYPE_VIDEO_OUTPUT;
	else
		n->type = n->mp ? V4L2_BUF_TYPE_VIDEO_CAPTURE_MPLANE : V4L2_BUF_TYPE_VIDEO_CAPTURE;
	f.type = n->type;
	must(n->fd, VIDIOC_G_FMT, &f, "G_FMT");
	if (n->mp) {
		f.fmt.pix_mp.width = w;
		f.fmt.pix_mp.height = h;
	} else {
		f.fmt.pix.width = w;
		f.fmt.pix.height = h;
	}
	must(n->fd, VIDIOC_S_FMT, &f, "S_FMT");
	if (n->mp) {
		n->nplanes = f.fmt.pix_mp.num_planes;
		for (p = 0; p < n->nplanes; p++)
			n->size[p] = f.fmt.pix_mp.plane_fmt[p].sizeimage;
	} else {
		n->nplanes = 1;
		n->size[0] = f.fmt.pix.sizeimage;
	}
}

static int reqbufs(struct node *n, unsigned int memory, unsigned int count, unsigned int flags)
{
	struct v4l2_requestbuffers rb = {
		.count = count, .type = n->type, .memory = memory, .flags = flags,
	};
	int r = vb2_ioctl(n->fd, VIDIOC_REQBUFS, &rb);

	if (!r && rb.count < count)
		die("%s: REQBUFS gave %u buffers of %u", n->name, rb.count, count);
	return r;
}

/* Fill in @b and @planes for buffer @i of @n's queue. */
static void v4l2_buf(struct node *n, unsigned int memory, unsigned int i,
		     struct v4l2_buffer *b, struct v4l2_plane *planes)
{
	memset(b, 0, sizeof(*b));
	memset(planes, 0, sizeof(*planes) * MAXP);
	b->type = n->type;
	b->memory = memory;
	b->index = i;
	if (n->mp) {
		b->m.planes = planes;
		b->length = n->nplanes;
	}
}

static void *map_or_die(int fd, size_t len, off_t off, const char *what)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, off);

	if (p == MAP_FAILED)
		die("mmap %s: %s", what, vb2_errname(errno));
	return p;
}

/* The page frame number of the page at @p, which must be present. */
static uint64_t pfn_of(const void *p)
{
	int fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
	uint64_t e = 0;

	if (fd < 0 || pread(fd, &e, sizeof(e), (uintptr_t)p / PAGE * sizeof(e)) != sizeof(e) ||
	    !(e & (1ULL << 63)) || !(e & ((1ULL << 55) - 1)))
		die("pagemap: no frame number for %p", p);
	close(fd);
	return e & ((1ULL << 55) - 1);
}

/* Are the pages of [@p, @p + @len) physically contiguous, in order? */
static bool contiguous(const void *p, size_t len)
{
	size_t off;

	for (off = PAGE; off < len; off += PAGE)
		if (pfn_of((const char *)p + off) != pfn_of((const char *)p + off - PAGE) + 1)
			return false;
	return true;
}

/*
 * @len bytes of anonymous memory in which no page is followed by its physical
 * successor: each page is taken from a fresh two-page mapping (whichever of the two does
 * not follow the page before) and moved into place with mremap().
 */
static void *scattered(size_t len)
{
	char *area = mmap(NULL, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uint64_t prev = 0;
	size_t off;

	if (area == MAP_FAILED)
		die("mmap anonymous: %s", vb2_errname(errno));
	for (off = 0; off < len; off += PAGE) {
		char *two = mmap(NULL, 2 * PAGE, PROT_READ | PROT_WRITE,
				 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		char *pick;

		if (two == MAP_FAILED)
			die("mmap anonymous: %s", vb2_errname(errno));
		memset(two, 0, 2 * PAGE);
		pick = off && pfn_of(two) == prev + 1 ? two + PAGE : two;
		prev = pfn_of(pick);
		if (mremap(pick, PAGE, PAGE, MREMAP_MAYMOVE | MREMAP_FIXED,
			   area + off) == MAP_FAILED)
			die("mremap: %s", vb2_errname(errno));
		munmap(two == pick ? two + PAGE : two, PAGE);
	}
	if (len > PAGE && contiguous(area, len))
		die("could not scatter %zu bytes", len);
	return area;
}

/*
 * Buffers of @n for @model; for expbuf:NODE, @exp is that node, whose MMAP buffers
 * (plane 0 of one buffer per plane) are exported.
 */
static unsigned int setup(struct node *n, const char *model, struct node *exp,
			  struct buf *bufs, unsigned int nbufs)
{
	unsigned int memory, i, p;

	memset(bufs, 0, sizeof(*bufs) * nbufs);
	if (!strcmp(model, "mmap") || !strcmp(model, "mmap-nc")) {
		memory = V4L2_MEMORY_MMAP;
		if (reqbufs(n, memory, nbufs, strcmp(model, "mmap") ?
			    V4L2_MEMORY_FLAG_NON_COHERENT : 0))
			die("%s: REQBUFS MMAP failed", n->name);
		for (i = 0; i < nbufs; i++) {
			struct v4l2_plane planes[MAXP];
			struct v4l2_buffer b;

			v4l2_buf(n, memory, i, &b, planes);
			must(n->fd, VIDIOC_QUERYBUF, &b, "QUERYBUF");
			for (p = 0; p < n->nplanes; p++) {
				bufs[i].len[p] = n->mp ? planes[p].length : b.length;
				bufs[i].cpu[p] = map_or_die(n->fd, bufs[i].len[p],
							    n->mp ? planes[p].m.mem_offset :
								    b.m.offset, "buffer");
			}
		}
		return memory;
	}
	if (!strncmp(model, "userptr", 7)) {
		if (reqbufs(n, V4L2_MEMORY_USERPTR, nbufs, 0))
			die("%s: REQBUFS USERPTR failed", n->name);
		for (i = 0; i < nbufs; i++)
			for (p = 0; p < n->nplanes; p++) {
				bufs[i].len[p] = PAGE_ALIGN(n->size[p]);
				if (strcmp(model, "userptr")) {
					bufs[i].cpu[p] = scattered(bufs[i].len[p]);
					continue;
				}
				bufs[i].cpu[p] = mmap(NULL, bufs[i].len[p], PROT_READ | PROT_WRITE,
						      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
				if (bufs[i].cpu[p] == MAP_FAILED)
					die("mmap anonymous: %s", vb2_errname(errno));
				memset(bufs[i].cpu[p], 0, bufs[i].len[p]);
			}
		return V4L2_MEMORY_USERPTR;
	}
	if (reqbufs(n, V4L2_MEMORY_DMABUF, nbufs, 0))
		die("%s: REQBUFS DMABUF failed", n->name);
	if (exp && reqbufs(exp, V4L2_MEMORY_MMAP, nbufs * n->nplanes, 0))
		die("%s: REQBUFS MMAP for the export failed", exp->name);
	for (i = 0; i < nbufs; i++)
		for (p = 0; p < n->nplanes; p++) {
			if (exp) {
				struct v4l2_exportbuffer e = {
					.type = exp->type, .index = i * n->nplanes + p,
					.flags = O_RDWR | O_CLOEXEC,
				};

				if (exp->size[0] < n->size[p])
					die("%s's planes are too small", exp->name);
				must(exp->fd, VIDIOC_EXPBUF, &e, "EXPBUF");
				bufs[i].dfd[p] = e.fd;
				bufs[i].len[p] = PAGE_ALIGN(exp->size[0]);
			} else {
				bufs[i].len[p] = PAGE_ALIGN(n->size[p]);
				bufs[i].dfd[p] = strcmp(model, "heap") ?
						 vb2_udmabuf_alloc(bufs[i].len[p]) :
						 vb2_heap_alloc(bufs[i].len[p]);
				if (bufs[i].dfd[p] < 0)
					die("%s: no dma-buf: %s", model,
					    vb2_errname(bufs[i].dfd[p]));
			}
			bufs[i].cpu[p] = map_or_die(bufs[i].dfd[p], bufs[i].len[p], 0, "dma-buf");
		}
	return V4L2_MEMORY_DMABUF;
}

static void teardown(struct node *n, struct node *exp, struct buf *bufs, unsigned int nbufs)
{
	unsigned int i, p;

	for (i = 0; i < nbufs; i++)
		for (p = 0; p < n->nplanes; p++) {
			if (bufs[i].cpu[p])
				munmap(bufs[i].cpu[p], bufs[i].len[p]);
			if (bufs[i].dfd[p] > 0)
				close(bufs[i].dfd[p]);
		}
	if (reqbufs(n, V4L2_MEMORY_MMAP, 0, 0))
		die("%s: REQBUFS(0) failed", n->name);
	if (exp && reqbufs(exp, V4L2_MEMORY_MMAP, 0, 0))
		die("%s: REQBUFS(0) failed", exp->name);
}

/* CPU access to a dma-buf brackets: DMA_BUF_IOCTL_SYNC. */
static void cpu_access(struct buf *b, unsigned int nplanes, unsigned long flags)
{
	struct dma_buf_sync s = { .flags = flags };
	unsigned int p;

	for (p = 0; p < nplanes && !no_sync; p++)
		if (b->dfd[p] > 0)
			must(b->dfd[p], DMA_BUF_IOCTL_SYNC, &s, "DMA_BUF_IOCTL_SYNC");
}

/* Output: frame @seq into @b; frame SPOILT gets one wrong byte. */
static void fill(struct node *n, struct buf *b, unsigned int seq)
{
	unsigned int p, off;

	cpu_access(b, n->nplanes, DMA_BUF_SYNC_START | DMA_BUF_SYNC_WRITE);
	for (p = 0; p < n->nplanes; p++) {
		unsigned char *d = b->cpu[p];

		for (off = 0; off < n->size[p]; off++)
			d[off] = vb2_edu_byte(seq, p, off);
	}
	if (seq == SPOILT)
		((unsigned char *)b->cpu[n->nplanes - 1])[n->size[n->nplanes - 1] / 2] ^= 0x5a;
	cpu_access(b, n->nplanes, DMA_BUF_SYNC_END | DMA_BUF_SYNC_WRITE);
}

/* Capture: the bytes of frame @seq in @b that differ from the pattern. */
static unsigned long check(struct node *n, struct buf *b, unsigned int seq)
{
	unsigned long bad = 0;
	unsigned int p, off;

	cpu_access(b, n->nplanes, DMA_BUF_SYNC_START | DMA_BUF_SYNC_READ);
	for (p = 0; p < n->nplanes; p++) {
		const unsigned char *d = b->cpu[p];

		for (off = 0; off < n->size[p]; off++) {
			unsigned char want = vb2_edu_byte(seq, p, off);

			if (d[off] == want)
				continue;
			if (!bad++ || verbose)
				printf(PROG ": %s frame %u plane %u byte %u: 0x%02x, not 0x%02x\n",
				       n->name, seq, p, off, d[off], want);
		}
	}
	cpu_access(b, n->nplanes, DMA_BUF_SYNC_END | DMA_BUF_SYNC_READ);
	return bad;
}

/* Queue buffer @i, as output frame @seq; 0 or -errno. */
static int queue(struct node *n, unsigned int memory, struct buf *bufs, unsigned int i,
		 unsigned int seq)
{
	struct v4l2_plane planes[MAXP];
	struct v4l2_buffer b;
	unsigned int p;

	v4l2_buf(n, memory, i, &b, planes);
	if (hint && n->out)
		b.flags |= V4L2_BUF_FLAG_NO_CACHE_CLEAN;
	else if (hint)
		b.flags |= V4L2_BUF_FLAG_NO_CACHE_INVALIDATE;
	if (n->out) {
		fill(n, &bufs[i], seq);
		b.timestamp.tv_usec = seq;
		b.field = V4L2_FIELD_NONE;
	}
	for (p = 0; p < n->nplanes; p++) {
		unsigned int len = bufs[i].len[p];

		if (n->mp) {
			planes[p].length = len;
			planes[p].bytesused = n->out ? n->size[p] : 0;
			if (memory == V4L2_MEMORY_USERPTR)
				planes[p].m.userptr = (unsigned long)bufs[i].cpu[p];
			if (memory == V4L2_MEMORY_DMABUF)
				planes[p].m.fd = bufs[i].dfd[p];
		} else {
			b.length = len;
			b.bytesused = n->out ? n->size[0] : 0;
			if (memory == V4L2_MEMORY_USERPTR)
				b.m.userptr = (unsigned long)bufs[i].cpu[0];
			if (memory == V4L2_MEMORY_DMABUF)
				b.m.fd = bufs[i].dfd[0];
		}
	}
	return vb2_ioctl(n->fd, VIDIOC_QBUF, &b);
}

/* Dequeue the next buffer, waiting up to 10 s; -errno on failure. */
static int dequeue(struct node *n, unsigned int memory, struct v4l2_buffer *b,
		   struct v4l2_plane *planes)
{
	int r = vb2_poll(n->fd, n->out ? POLLOUT : POLLIN, 10000);

	if (r <= 0)
		return r ? r : -ETIMEDOUT;
	v4l2_buf(n, memory, 0, b, planes);
	return vb2_ioctl(n->fd, VIDIOC_DQBUF, b);
}

static int stream(struct node *n, const char *model, struct node *exp, unsigned int nbufs,
		  unsigned int frames, bool contig_rule)
{
	struct buf bufs[MAXB];
	unsigned int memory = setup(n, model, exp, bufs, nbufs);
	unsigned int queued = 0, done = 0, stale = 0, i, type = n->type;
	unsigned long bytes = 0, bad = 0;
	bool ok = true;
	int r;

	for (i = 0; i < nbufs && queued < frames; i++) {
		r = queue(n, memory, bufs, i, queued);
		if (contig_rule) {
			bool contig = contiguous(bufs[0].cpu[0], bufs[0].len[0]);

			printf(PROG ": dev=%s mem=%s %zu bytes, pages %scontiguous: QBUF %s %s\n",
			       n->name, model, bufs[0].len[0], contig ? "" : "not ",
			       r ? vb2_errname(r) : "succeeded", !r == contig ? "ok" : "FAIL");
			teardown(n, exp, bufs, nbufs);
			return !r == contig ? 0 : 1;
		}
		if (r)
			die("%s: QBUF %u: %s", n->name, i, vb2_errname(r));
		queued++;
	}
	must(n->fd, VIDIOC_STREAMON, &type, "STREAMON");
	while (done < frames) {
		struct v4l2_plane planes[MAXP];
		struct v4l2_buffer b;
		bool err;

		r = dequeue(n, memory, &b, planes);
		if (r)
			die("%s: DQBUF after %u frames: %s", n->name, done, vb2_errname(r));
		err = b.flags & V4L2_BUF_FLAG_ERROR;
		if (n->out) {
			unsigned int seq = b.timestamp.tv_usec;
			bool spoilt = seq == SPOILT;

			stale += err;
			if (!expect_stale && err != spoilt) {
				printf(PROG ": %s output frame %u came back %s\n", n->name, seq,
				       err ? "with ERROR" : "without ERROR (it was spoilt)");
				ok = false;
			}
		} else if (err) {
			printf(PROG ": %s capture frame %u: ERROR\n", n->name, b.sequence);
			ok = false;
		} else {
			unsigned long wrong = check(n, &bufs[b.index], b.sequence);

			if (b.sequence != done) {
				printf(PROG ": %s sequence %u, not %u\n", n->name, b.sequence,
				       done);
				ok = false;
			}
			stale += !!wrong;
			bad += wrong;
		}
		for (i = 0; i < n->nplanes; i++)
			bytes += n->size[i];
		done++;
		if (queued < frames) {
			r = queue(n, memory, bufs, b.index, queued);
			if (r)
				die("%s: QBUF %u: %s", n->name, b.index, vb2_errname(r));
			queued++;
		}
	}
	/* Some buffers may still be with the device. */
	must(n->fd, VIDIOC_STREAMOFF, &type, "STREAMOFF");
	teardown(n, exp, bufs, nbufs);
	/* --expect-stale: every frame shows that the skipped synchronisation was skipped. */
	if (expect_stale) {
		ok = ok && stale == done;
		bad = 0;
	}
	printf(PROG ": dev=%s mem=%s frames=%u bytes=%lu mismatches=%lu", n->name, model, done,
	       bytes, bad);
	if (hint)
		printf(" hinted, frames that show it: %u", stale);
	printf(" %s\n", ok && !bad ? "ok" : "FAIL");
	return ok && !bad ? 0 : 1;
}

/*
 * Frame @seq of @exp's plane 0, read through the dma-buf @b->dfd[@p] that @exp
 * exported: the bytes that differ from the pattern.
 */
static unsigned long check_exported(struct node *exp, struct buf *b, unsigned int p,
				    unsigned int seq)
{
	struct dma_buf_sync s = { .flags = DMA_BUF_SYNC_START | DMA_BUF_SYNC_READ };
	const unsigned char *d = b->cpu[p];
	unsigned long bad = 0;
	unsigned int off;

	must(b->dfd[p], DMA_BUF_IOCTL_SYNC, &s, "DMA_BUF_IOCTL_SYNC");
	for (off = 0; off < exp->size[0]; off++) {
		unsigned char want = vb2_edu_byte(seq, 0, off);

		if (d[off] != want && (!bad++ || verbose))
			printf(PROG ": %s frame %u byte %u (dma-buf): 0x%02x, not 0x%02x\n",
			       exp->name, seq, off, d[off], want);
	}
	s.flags = DMA_BUF_SYNC_END | DMA_BUF_SYNC_READ;
	must(b->dfd[p], DMA_BUF_IOCTL_SYNC, &s, "DMA_BUF_IOCTL_SYNC");
	return bad;
}

/* --exporter-writes: see the top of the file. */
static int stream_back(struct node *n, const char *model, struct node *exp, unsigned int nbufs)
{
	unsigned int memory = V4L2_MEMORY_MMAP, type = n->type, i, k, frames;
	struct buf bufs[MAXB], ebufs[MAXB * MAXP];
	unsigned long bad = 0;
	int r;

	if (setup(n, model, exp, bufs, nbufs) != V4L2_MEMORY_DMABUF || nbufs * n->nplanes > MAXB)
		die("--exporter-writes needs at most %u exported planes", MAXB);
	/* The importer: one frame into each buffer, all dequeued and kept. */
	for (i = 0; i < nbufs; i++)
		if (queue(n, V4L2_MEMORY_DMABUF, bufs, i, i))
			die("%s: QBUF %u failed", n->name, i);
	must(n->fd, VIDIOC_STREAMON, &type, "STREAMON");
	for (i = 0; i < nbufs; i++) {
		struct v4l2_plane planes[MAXP];
		struct v4l2_buffer b;

		r = dequeue(n, V4L2_MEMORY_DMABUF, &b, planes);
		if (r || (b.flags & V4L2_BUF_FLAG_ERROR))
			die("%s: DQBUF %u: %s", n->name, i, r ? vb2_errname(r) : "ERROR");
		bad += check(n, &bufs[b.index], b.sequence);
	}
	/* The exporter: 2 x nbufs frames into the exported buffers, read through them. */
	memset(ebufs, 0, sizeof(ebufs));
	frames = 2 * nbufs * n->nplanes;
	for (k = 0; k < nbufs * n->nplanes; k++) {
		for (i = 0; i < exp->nplanes; i++)
			ebufs[k].len[i] = PAGE_ALIGN(exp->size[i]);
		if (queue(exp, memory, ebufs, k, k))
			die("%s: QBUF %u failed", exp->name, k);
	}
	type = exp->type;
	must(exp->fd, VIDIOC_STREAMON, &type, "STREAMON");
	for (i = 0; i < frames; i++) {
		struct v4l2_plane planes[MAXP];
		struct v4l2_buffer b;

		r = dequeue(exp, memory, &b, planes);
		if (r || (b.flags & V4L2_BUF_FLAG_ERROR))
			die("%s: DQBUF %u: %s", exp->name, i, r ? vb2_errname(r) : "ERROR");
		bad += check_exported(exp, &bufs[b.index / n->nplanes], b.index % n->nplanes,
				      b.sequence);
		if (i + nbufs * n->nplanes < frames && queue(exp, memory, ebufs, b.index, 0))
			die("%s: QBUF %u failed", exp->name, b.index);
	}
	must(exp->fd, VIDIOC_STREAMOFF, &type, "STREAMOFF");
	type = n->type;
	must(n->fd, VIDIOC_STREAMOFF, &type, "STREAMOFF");
	teardown(n, exp, bufs, nbufs);
	printf(PROG ": dev=%s mem=%s exporter-writes frames=%u+%u mismatches=%lu %s\n", n->name,
	       model, nbufs, frames, bad, bad ? "FAIL" : "ok");
	return bad ? 1 : 0;
}

static void bad_usage(void)
{
	fprintf(stderr, "usage: " PROG " --dev NAME --mem MODEL [--frames N] [--bufs N]\n"
		"       [--size WxH] [--contig-rule] [--hint [--expect-stale]] [--no-sync]\n"
		"       [--exporter-writes] [-v]\n"
		"MODEL: mmap|mmap-nc|userptr|userptr-scatter|heap|udmabuf|expbuf:NODE\n");
	exit(2);
}

int main(int argc, char **argv)
{
	unsigned int frames = 12, nbufs = 4, w = 48, h = 64;
	const char *dev = NULL, *model = NULL;
	struct node n, e, *exp = NULL;
	bool contig_rule = false;
	int i;

	setvbuf(stdout, NULL, _IOLBF, 0);
	for (i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (!strcmp(a, "-v"))
			verbose = true;
		else if (!strcmp(a, "--no-sync"))
			no_sync = true;
		else if (!strcmp(a, "--contig-rule"))
			contig_rule = true;
		else if (!strcmp(a, "--hint"))
			hint = true;
		else if (!strcmp(a, "--expect-stale"))
			expect_stale = true;
		else if (!strcmp(a, "--exporter-writes"))
			exporter_writes = true;
		else if (!v)
			bad_usage();
		else if (!strcmp(a, "--dev"))
			dev = v, i++;
		else if (!strcmp(a, "--mem"))
			model = v, i++;
		else if (!strcmp(a, "--frames"))
			frames = strtoul(v, NULL, 0), i++;
		else if (!strcmp(a, "--bufs"))
			nbufs = strtoul(v, NULL, 0), i++;
		else if (!strcmp(a, "--size") && sscanf(v, "%ux%u", &w, &h) == 2)
			i++;
		else
			bad_usage();
	}
	if (!dev || !model || !nbufs || nbufs > MAXB || !frames ||
	    (contig_rule && strncmp(model, "userptr", 7)) || (hint && strcmp(model, "mmap-nc")) ||
	    (expect_stale && !hint) || (exporter_writes && strncmp(model, "expbuf:", 7)))
		bad_usage();
	if (strcmp(model, "mmap") && strcmp(model, "mmap-nc") && strcmp(model, "userptr") &&
	    strcmp(model, "userptr-scatter") && strcmp(model, "heap") &&
	    strcmp(model, "udmabuf") && strncmp(model, "expbuf:", 7))
		bad_usage();
	node_init(&n, dev, w, h);
	if (!strncmp(model, "expbuf:", 7)) {
		node_init(&e, model + 7, w, h);
		exp = &e;
	}
	if (exporter_writes) {
		if (n.out || exp->out || no_sync)
			bad_usage();
		return stream_back(&n, model, exp, nbufs);
	}
	return stream(&n, model, exp, nbufs, frames, contig_rule);
}
