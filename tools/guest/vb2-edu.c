// SPDX-License-Identifier: GPL-2.0
/*
 * vb2-edu: stream through vb2-edu (testdrv/vb2-edu.c), whose device moves every byte with
 * its DMA engine, and check every byte in user space. tools/plans/edu.plan runs it.
 *
 *   vb2-edu --dev NAME --mem MODEL [--frames N] [--bufs N] [--size WxH]
 *           [--contig-rule] [--hint [--expect-stale]] [--no-sync] [--exporter-writes]
 *           [--sync-queued] [-v]
 *
 * NAME: a node's V4L2 name (vb2-edu-0-cap, ...). MODEL: mmap, mmap-nc (non-coherent),
 * userptr (anonymous memory), userptr-scatter (no page followed by its physical
 * successor), heap, udmabuf (DMABUF from the system heap or udmabuf), expbuf:NODE
 * (DMABUF exported by NODE's MMAP buffers). Frames are 48x64 by default; N frames
 * (12) go through N buffers (4). A capture frame must hold vb2-edu-pattern.h's pattern of
 * its sequence number; an output frame is filled with that of the frame number in its
 * timestamp, and the driver completes one its device read wrong with ERROR: frame 2 is
 * spoilt on purpose and must. The stream ends with STREAMOFF, buffers still queued.
 *
 * --hint (mmap-nc): every QBUF asks to skip the CPU's cache maintenance (capture
 * NO_CACHE_INVALIDATE, output NO_CACHE_CLEAN); frames must still be right where nothing
 * bounces. --expect-stale: every frame must show the skip (as under swiotlb=force).
 * --no-sync: no DMA_BUF_IOCTL_SYNC around CPU access (edu.plan says why).
 * --contig-rule (userptr, dma-contig without IOMMU): the first buffer alone must queue
 * exactly if its pages are physically contiguous (/proc/self/pagemap); nothing streams.
 * --exporter-writes (capture, expbuf:NODE capturing): NAME captures a frame into each
 * buffer and keeps them all; then NODE streams 2 x N frames into the exported buffers,
 * each read through the dma-buf (a sync bringing back NAME's older bounce buffer shows).
 * --sync-queued (capture, expbuf:NODE, implicit sync on, else the cases are skipped):
 * each frame's SYNC START is issued before DQBUF, while the device may still write it:
 * it must wait for the fence (not bring back the importer's bounce buffer before).
 *
 * KTAP cases, named NAME/MODEL (no ":NODE"; -hint, -stale, -sync-queued appended): -frames
 * (every frame right; "# " lines for the first wrong byte of each frame, all with -v, and
 * a summary "# dev=NAME mem=MODEL frames=N bytes=N mismatches=N"), -streamoff (STREAMOFF
 * and REQBUFS(0) succeed); --contig-rule: -contig-rule only; --exporter-writes: -capture,
 * -exporter-writes, -streamoff. A setup error ends the output with "Bail out!". Exit code
 * 0 when every case passed, 1 otherwise, 2 for a usage error.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <linux/dma-buf.h>
#include <linux/videodev2.h>

#include <kselftest.h>

#include "vb2-ktap.h"
#include "uapi-6.12.h"
#include "../../testdrv/vb2-edu-pattern.h"

#define PAGE		4096UL
#define PAGE_ALIGN(x)	(((x) + PAGE - 1) & ~(PAGE - 1))
#define MAXB		16
#define MAXP		3
#define SPOILT		2	/* the output frame spoilt on purpose */
#define TIMEOUT_MS	10000

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

static bool verbose, no_sync, hint, expect_stale, exporter_writes, contig_rule, sync_queued;
/* The cases' names start with it: "NODE/MODEL", with -hint or -hint-stale. */
static char label[128];

/* Open @name, learn its queue and set the frame size. */
static void node_init(struct node *n, const char *name, unsigned int w, unsigned int h)
{
	struct v4l2_capability cap = { 0 };
	struct v4l2_format f = { 0 };
	unsigned int caps, p;
	char path[64];

	snprintf(n->name, sizeof(n->name), "%s", name);
	if (vb2_find_node(name, path, sizeof(path), NULL, 0))
		vb2_bail("no video node named %s", name);
	n->fd = open(path, O_RDWR | O_CLOEXEC);
	if (n->fd < 0)
		vb2_bail("open %s: %s", path, vb2_errname(errno));
	vb2_must_ioctl(n->fd, VIDIOC_QUERYCAP, &cap, n->name);
	caps = cap.device_caps;
	n->mp = caps & (V4L2_CAP_VIDEO_CAPTURE_MPLANE | V4L2_CAP_VIDEO_OUTPUT_MPLANE);
	n->out = caps & (V4L2_CAP_VIDEO_OUTPUT | V4L2_CAP_VIDEO_OUTPUT_MPLANE);
	n->type = n->out ? (n->mp ? V4L2_BUF_TYPE_VIDEO_OUTPUT_MPLANE : V4L2_BUF_TYPE_VIDEO_OUTPUT) :
		  (n->mp ? V4L2_BUF_TYPE_VIDEO_CAPTURE_MPLANE : V4L2_BUF_TYPE_VIDEO_CAPTURE);
	f.type = n->type;
	vb2_must_ioctl(n->fd, VIDIOC_G_FMT, &f, n->name);
	/* width and height: the first two fields of pix and pix_mp alike */
	f.fmt.pix_mp.width = w;
	f.fmt.pix_mp.height = h;
	vb2_must_ioctl(n->fd, VIDIOC_S_FMT, &f, n->name);
	n->nplanes = n->mp ? f.fmt.pix_mp.num_planes : 1;
	for (p = 0; p < n->nplanes; p++)
		n->size[p] = n->mp ? f.fmt.pix_mp.plane_fmt[p].sizeimage : f.fmt.pix.sizeimage;
}

static int reqbufs(struct node *n, unsigned int memory, unsigned int count, unsigned int flags)
{
	struct v4l2_requestbuffers rb = {
		.count = count, .type = n->type, .memory = memory, .flags = flags,
	};
	int r = vb2_ioctl(n->fd, VIDIOC_REQBUFS, &rb);

	if (!r && rb.count < count)
		vb2_bail("%s: REQBUFS gave %u buffers of %u", n->name, rb.count, count);
	return r;
}

/*
 * @len bytes of @fd at @off, shared; or of anonymous memory for @fd -1, private and
 * zeroed: its pages present, so that pfn_of() finds them.
 */
static void *map_or_die(int fd, size_t len, off_t off, const char *what)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       fd < 0 ? MAP_PRIVATE | MAP_ANONYMOUS : MAP_SHARED, fd, off);

	if (p == MAP_FAILED)
		vb2_bail("mmap %s: %s", what, vb2_errname(errno));
	if (fd < 0)
		memset(p, 0, len);
	return p;
}

#define anon_or_die(len) map_or_die(-1, len, 0, "anonymous")

/* The page frame number of the page at @p, which must be present. */
static uint64_t pfn_of(const void *p)
{
	int fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
	uint64_t e = 0;

	if (fd < 0 || pread(fd, &e, sizeof(e), (uintptr_t)p / PAGE * sizeof(e)) != sizeof(e) ||
	    !(e & (1ULL << 63)) || !(e & ((1ULL << 55) - 1)))
		vb2_bail("pagemap: no frame number for %p", p);
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
		vb2_bail("mmap anonymous: %s", vb2_errname(errno));
	for (off = 0; off < len; off += PAGE) {
		char *two = anon_or_die(2 * PAGE);
		char *pick = off && pfn_of(two) == prev + 1 ? two + PAGE : two;

		prev = pfn_of(pick);
		if (mremap(pick, PAGE, PAGE, MREMAP_MAYMOVE | MREMAP_FIXED, area + off) ==
		    MAP_FAILED)
			vb2_bail("mremap: %s", vb2_errname(errno));
		munmap(two == pick ? two + PAGE : two, PAGE);
	}
	if (len > PAGE && contiguous(area, len))
		vb2_bail("could not scatter %zu bytes", len);
	return area;
}

/* The dma-buf of plane @p of buffer @i, @len bytes: from the heap, udmabuf or @exp. */
static int dmabuf_of(struct node *n, const char *model, struct node *exp, unsigned int i,
		     unsigned int p, size_t len)
{
	struct v4l2_exportbuffer e = { .index = i * n->nplanes + p, .flags = O_RDWR | O_CLOEXEC };
	int fd;

	if (exp) {
		if (exp->size[0] < n->size[p])
			vb2_bail("%s's planes are too small", exp->name);
		e.type = exp->type;
		vb2_must_ioctl(exp->fd, VIDIOC_EXPBUF, &e, exp->name);
		return e.fd;
	}
	fd = strcmp(model, "heap") ? vb2_udmabuf_alloc(len) : vb2_heap_alloc(len);
	if (fd < 0)
		vb2_bail("%s: no dma-buf: %s", model, vb2_errname(fd));
	return fd;
}

/*
 * Buffers of @n for @model, mapped: MMAP (non-coherent for mmap-nc), USERPTR (anonymous
 * memory, scattered for userptr-scatter) or DMABUF; for expbuf:NODE, @exp is that node,
 * whose MMAP buffers (plane 0 of one buffer per plane) are exported. The memory model.
 */
static unsigned int setup(struct node *n, const char *model, struct node *exp,
			  struct buf *bufs, unsigned int nbufs)
{
	static const char *const names[] = {
		[V4L2_MEMORY_MMAP] = "MMAP", [V4L2_MEMORY_USERPTR] = "USERPTR",
		[V4L2_MEMORY_DMABUF] = "DMABUF",
	};
	unsigned int memory = !strncmp(model, "mmap", 4) ? V4L2_MEMORY_MMAP :
			      !strncmp(model, "userptr", 7) ? V4L2_MEMORY_USERPTR :
			      V4L2_MEMORY_DMABUF;
	unsigned int i, p;

	memset(bufs, 0, sizeof(*bufs) * nbufs);
	if (reqbufs(n, memory, nbufs, strcmp(model, "mmap-nc") ? 0 : V4L2_MEMORY_FLAG_NON_COHERENT))
		vb2_bail("%s: REQBUFS %s failed", n->name, names[memory]);
	if (exp && reqbufs(exp, V4L2_MEMORY_MMAP, nbufs * n->nplanes, 0))
		vb2_bail("%s: REQBUFS MMAP for the export failed", exp->name);
	for (i = 0; i < nbufs; i++) {
		struct v4l2_plane planes[MAXP];
		struct v4l2_buffer b;
		struct buf *bb = &bufs[i];

		vb2_buf_init(&b, planes, n->type, memory, i, n->nplanes);
		if (memory == V4L2_MEMORY_MMAP)
			vb2_must_ioctl(n->fd, VIDIOC_QUERYBUF, &b, n->name);
		for (p = 0; p < n->nplanes; p++) {
			size_t *len = &bb->len[p];

			if (memory == V4L2_MEMORY_MMAP) {
				*len = n->mp ? planes[p].length : b.length;
				bb->cpu[p] = map_or_die(n->fd, *len, n->mp ?
							planes[p].m.mem_offset : b.m.offset,
							"buffer");
			} else if (memory == V4L2_MEMORY_USERPTR) {
				*len = PAGE_ALIGN(n->size[p]);
				bb->cpu[p] = strcmp(model, "userptr") ? scattered(*len) :
									anon_or_die(*len);
			} else {
				*len = PAGE_ALIGN(exp ? exp->size[0] : n->size[p]);
				bb->dfd[p] = dmabuf_of(n, model, exp, i, p, *len);
				bb->cpu[p] = map_or_die(bb->dfd[p], *len, 0, "dma-buf");
			}
		}
	}
	return memory;
}

/* @r, what @what on @n returned: false, and why, if it failed. */
static bool ok_or_say(struct node *n, int r, const char *what)
{
	if (r)
		ksft_print_msg("%s: %s: %s\n", n->name, what, vb2_errname(r));
	return !r;
}

#define free_bufs(n) ok_or_say(n, reqbufs(n, V4L2_MEMORY_MMAP, 0, 0), "REQBUFS(0)")
#define streamoff(n) ok_or_say(n, vb2_ioctl((n)->fd, VIDIOC_STREAMOFF, &(n)->type), "STREAMOFF")

/* Unmap and free the buffers of @n (and @exp's): false, and why, if REQBUFS(0) fails. */
static bool teardown(struct node *n, struct node *exp, struct buf *bufs, unsigned int nbufs)
{
	unsigned int i, p;
	bool ok;

	for (i = 0; i < nbufs; i++)
		for (p = 0; p < n->nplanes; p++) {
			if (bufs[i].cpu[p])
				munmap(bufs[i].cpu[p], bufs[i].len[p]);
			if (bufs[i].dfd[p] > 0)
				close(bufs[i].dfd[p]);
		}
	ok = free_bufs(n);
	return (!exp || free_bufs(exp)) && ok;
}

/* DMA_BUF_IOCTL_SYNC (@flags) on the dma-bufs @dfd[0..@nplanes), unless --no-sync. */
static void cpu_access(const int *dfd, unsigned int nplanes, unsigned long long flags)
{
	struct dma_buf_sync s = { .flags = flags };
	unsigned int p;

	for (p = 0; p < nplanes && !no_sync; p++)
		if (dfd[p] > 0)
			vb2_must_ioctl(dfd[p], DMA_BUF_IOCTL_SYNC, &s, "CPU access");
}

/* Output: frame @seq into @b; frame SPOILT gets one wrong byte. */
static void fill(struct node *n, struct buf *b, unsigned int seq)
{
	unsigned int p, off;

	cpu_access(b->dfd, n->nplanes, DMA_BUF_SYNC_START | DMA_BUF_SYNC_WRITE);
	for (p = 0; p < n->nplanes; p++) {
		unsigned char *d = b->cpu[p];

		for (off = 0; off < n->size[p]; off++)
			d[off] = vb2_edu_byte(seq, p, off);
	}
	if (seq == SPOILT)
		((unsigned char *)b->cpu[n->nplanes - 1])[n->size[n->nplanes - 1] / 2] ^= 0x5a;
	cpu_access(b->dfd, n->nplanes, DMA_BUF_SYNC_END | DMA_BUF_SYNC_WRITE);
}

/*
 * The bytes of @d (@len of them) that differ from plane @p of frame @seq's pattern;
 * the first is printed (every one with -v), @what saying where it was read.
 */
static unsigned long compare(const char *what, const unsigned char *d, size_t len,
			     unsigned int seq, unsigned int p)
{
	unsigned long bad = 0;
	size_t off;

	for (off = 0; off < len; off++) {
		unsigned char want = vb2_edu_byte(seq, p, off);

		if (d[off] != want && (!bad++ || verbose))
			ksft_print_msg("%s frame %u plane %u byte %zu: 0x%02x, not 0x%02x\n",
				       what, seq, p, off, d[off], want);
	}
	return bad;
}

/* Capture: the bytes of frame @seq in @b that differ from the pattern. */
static unsigned long check(struct node *n, struct buf *b, unsigned int seq)
{
	unsigned long bad = 0;
	unsigned int p;

	/* --sync-queued: the bracket was opened before DQBUF (stream()). */
	if (!sync_queued)
		cpu_access(b->dfd, n->nplanes, DMA_BUF_SYNC_START | DMA_BUF_SYNC_READ);
	for (p = 0; p < n->nplanes; p++)
		bad += compare(n->name, b->cpu[p], n->size[p], seq, p);
	cpu_access(b->dfd, n->nplanes, DMA_BUF_SYNC_END | DMA_BUF_SYNC_READ);
	return bad;
}

/* Queue buffer @i, as output frame @seq; 0 or -errno. */
static int queue(struct node *n, unsigned int memory, struct buf *bufs, unsigned int i,
		 unsigned int seq)
{
	struct v4l2_plane planes[MAXP];
	struct v4l2_buffer b;
	unsigned int p;

	vb2_buf_init(&b, planes, n->type, memory, i, n->nplanes);
	if (hint)
		b.flags |= n->out ? V4L2_BUF_FLAG_NO_CACHE_CLEAN :
				    V4L2_BUF_FLAG_NO_CACHE_INVALIDATE;
	if (n->out) {
		fill(n, &bufs[i], seq);
		b.timestamp.tv_usec = seq;
		b.field = V4L2_FIELD_NONE;
	}
	for (p = 0; p < n->nplanes; p++) {
		planes[p].length = bufs[i].len[p];
		planes[p].bytesused = n->out ? n->size[p] : 0;
		if (memory == V4L2_MEMORY_USERPTR)
			planes[p].m.userptr = (unsigned long)bufs[i].cpu[p];
		if (memory == V4L2_MEMORY_DMABUF)
			planes[p].m.fd = bufs[i].dfd[p];
	}
	if (!n->mp) {	/* single-planar: plane 0 in the buffer (the unions alike) */
		b.length = planes[0].length;
		b.bytesused = planes[0].bytesused;
		memcpy(&b.m, &planes[0].m, sizeof(planes[0].m));
	}
	return vb2_ioctl(n->fd, VIDIOC_QBUF, &b);
}

/* Dequeue the next buffer, waiting up to TIMEOUT_MS; 0 or -errno. */
static int dequeue(struct node *n, unsigned int memory, struct v4l2_buffer *b,
		   struct v4l2_plane *planes)
{
	int r = vb2_poll(n->fd, n->out ? POLLOUT : POLLIN, TIMEOUT_MS);

	if (r <= 0)
		return r ? r : -ETIMEDOUT;
	vb2_buf_init(b, planes, n->type, memory, 0, n->nplanes);
	return vb2_ioctl(n->fd, VIDIOC_DQBUF, b);
}

/* Dequeue buffer number @i of a stream where none may fail: ends the program if one does. */
static void dequeue_or_die(struct node *n, unsigned int memory, unsigned int i,
			   struct v4l2_buffer *b, struct v4l2_plane *planes)
{
	int r = dequeue(n, memory, b, planes);

	if (r || (b->flags & V4L2_BUF_FLAG_ERROR))
		vb2_bail("%s: DQBUF %u: %s", n->name, i, r ? vb2_errname(r) : "ERROR");
}

/* Queue the first @count buffers of @n (frames 0, 1...) and STREAMON. */
static void start(struct node *n, unsigned int memory, struct buf *bufs, unsigned int count)
{
	unsigned int i, type = n->type;
	int r;

	for (i = 0; i < count; i++) {
		r = queue(n, memory, bufs, i, i);
		if (r)
			vb2_bail("%s: QBUF %u: %s", n->name, i, vb2_errname(r));
	}
	vb2_must_ioctl(n->fd, VIDIOC_STREAMON, &type, n->name);
}

/* What a stream showed. */
struct tally {
	unsigned int done;	/* frames dequeued */
	unsigned int stale;	/* frames that show a skipped synchronisation */
	unsigned long bytes;
	unsigned long bad;	/* capture bytes that differ from the pattern */
	bool ok;		/* no frame came back wrong otherwise */
};

/* Check the frame dequeued in @b and count it in @t. */
static void take(struct node *n, struct buf *bufs, const struct v4l2_buffer *b, struct tally *t)
{
	bool err = b->flags & V4L2_BUF_FLAG_ERROR;
	unsigned int p;

	if (n->out) {
		unsigned int seq = b->timestamp.tv_usec;
		bool spoilt = seq == SPOILT;

		t->stale += err;
		if (!expect_stale && err != spoilt) {
			ksft_print_msg("%s output frame %u came back %s\n", n->name, seq,
				       err ? "with ERROR" : "without ERROR (it was spoilt)");
			t->ok = false;
		}
	} else if (err) {
		ksft_print_msg("%s capture frame %u: ERROR\n", n->name, b->sequence);
		t->ok = false;
	} else {
		unsigned long wrong = check(n, &bufs[b->index], b->sequence);

		if (b->sequence != t->done) {
			ksft_print_msg("%s sequence %u, not %u\n", n->name, b->sequence, t->done);
			t->ok = false;
		}
		t->stale += !!wrong;
		t->bad += wrong;
	}
	for (p = 0; p < n->nplanes; p++)
		t->bytes += n->size[p];
	t->done++;
}

/*
 * Stream @frames frames through @nbufs buffers: the cases LABEL-frames (every frame came
 * back right, see the top) and LABEL-streamoff.
 */
static void stream(struct node *n, const char *model, struct node *exp, unsigned int nbufs,
		   unsigned int frames)
{
	struct buf bufs[MAXB];
	unsigned int memory = setup(n, model, exp, bufs, nbufs);
	unsigned int used = nbufs < frames ? nbufs : frames, queued = used;
	struct tally t = { .ok = true };
	char hinted[48] = "";
	bool ok;
	int r;

	start(n, memory, bufs, queued);
	while (t.done < frames) {
		struct v4l2_plane planes[MAXP];
		struct v4l2_buffer b;
		/* Buffers come back in the order they were queued. */
		unsigned int next = t.done % used;

		if (sync_queued)
			cpu_access(bufs[next].dfd, n->nplanes, DMA_BUF_SYNC_START | DMA_BUF_SYNC_READ);
		r = dequeue(n, memory, &b, planes);
		if (r) {
			ksft_print_msg("%s: DQBUF after %u frames: %s\n", n->name, t.done,
				       vb2_errname(r));
			break;
		}
		if (sync_queued && b.index != next) {
			ksft_print_msg("%s: DQBUF gave buffer %u, not %u\n", n->name, b.index,
				       next);
			t.ok = false;
			break;
		}
		take(n, bufs, &b, &t);
		if (queued == frames)
			continue;
		r = queue(n, memory, bufs, b.index, queued++);
		if (r) {
			ksft_print_msg("%s: QBUF %u: %s\n", n->name, b.index, vb2_errname(r));
			break;
		}
	}
	/* --expect-stale: every frame shows that the skipped synchronisation was skipped. */
	if (expect_stale) {
		t.ok = t.ok && t.stale == t.done;
		t.bad = 0;
	}
	if (hint)
		snprintf(hinted, sizeof(hinted), " hinted, frames that show it: %u", t.stale);
	ksft_print_msg("dev=%s mem=%s frames=%u bytes=%lu mismatches=%lu%s\n", n->name, model,
		       t.done, t.bytes, t.bad, hinted);
	ksft_test_result(t.ok && !t.bad && t.done == frames, "%s-frames\n", label);
	/* Some buffers may still be with the device. */
	ok = streamoff(n);
	ok = teardown(n, exp, bufs, nbufs) && ok;
	ksft_test_result(ok, "%s-streamoff\n", label);
}

/* --contig-rule: the case LABEL-contig-rule (see the top). */
static void contig_rule_check(struct node *n, const char *model, unsigned int nbufs)
{
	struct buf bufs[MAXB];
	unsigned int memory = setup(n, model, NULL, bufs, nbufs);
	int r = queue(n, memory, bufs, 0, 0);
	bool contig = contiguous(bufs[0].cpu[0], bufs[0].len[0]);
	/* QBUF must succeed exactly where the pages are contiguous. */
	bool right = !r == contig;

	ksft_print_msg("dev=%s mem=%s %zu bytes, pages %scontiguous: QBUF %s\n", n->name, model,
		       bufs[0].len[0], contig ? "" : "not ", r ? vb2_errname(r) : "succeeded");
	ksft_test_result(teardown(n, NULL, bufs, nbufs) && right, "%s-contig-rule\n", label);
}

/*
 * --exporter-writes, the exporter's part: @exp streams twice as many frames as it
 * exported buffers (@bufs, @n's), each read through its dma-buf. The bytes that differ.
 */
static unsigned long exporter_streams(struct node *n, struct node *exp, struct buf *bufs,
				      unsigned int nbufs)
{
	unsigned int exported = nbufs * n->nplanes, frames = 2 * exported, i, k;
	struct buf ebufs[MAXB];
	unsigned long bad = 0;
	char what[96];

	snprintf(what, sizeof(what), "%s (through the dma-buf)", exp->name);
	memset(ebufs, 0, sizeof(ebufs));
	for (k = 0; k < exported; k++)
		for (i = 0; i < exp->nplanes; i++)
			ebufs[k].len[i] = PAGE_ALIGN(exp->size[i]);
	start(exp, V4L2_MEMORY_MMAP, ebufs, exported);
	for (i = 0; i < frames; i++) {
		struct v4l2_plane planes[MAXP];
		struct v4l2_buffer b;
		struct buf *eb;
		unsigned int p;

		dequeue_or_die(exp, V4L2_MEMORY_MMAP, i, &b, planes);
		/* Frame b.sequence of @exp's plane 0, read through the dma-buf it exported. */
		eb = &bufs[b.index / n->nplanes];
		p = b.index % n->nplanes;
		cpu_access(&eb->dfd[p], 1, DMA_BUF_SYNC_START | DMA_BUF_SYNC_READ);
		bad += compare(what, eb->cpu[p], exp->size[0], b.sequence, 0);
		cpu_access(&eb->dfd[p], 1, DMA_BUF_SYNC_END | DMA_BUF_SYNC_READ);
		if (i + exported < frames && queue(exp, V4L2_MEMORY_MMAP, ebufs, b.index, 0))
			vb2_bail("%s: QBUF %u failed", exp->name, b.index);
	}
	ksft_print_msg("dev=%s exporter-writes frames=%u mismatches=%lu\n", exp->name, frames, bad);
	return bad;
}

/* --exporter-writes: the cases LABEL-capture, -exporter-writes, -streamoff (see the top). */
static void stream_back(struct node *n, const char *model, struct node *exp, unsigned int nbufs)
{
	struct buf bufs[MAXB];
	unsigned long bad = 0;
	unsigned int i;
	bool ok;

	if (setup(n, model, exp, bufs, nbufs) != V4L2_MEMORY_DMABUF || nbufs * n->nplanes > MAXB)
		vb2_bail("--exporter-writes needs at most %u exported planes", MAXB);
	/* The importer: one frame into each buffer, all dequeued and kept. */
	start(n, V4L2_MEMORY_DMABUF, bufs, nbufs);
	for (i = 0; i < nbufs; i++) {
		struct v4l2_plane planes[MAXP];
		struct v4l2_buffer b;

		dequeue_or_die(n, V4L2_MEMORY_DMABUF, i, &b, planes);
		bad += check(n, &bufs[b.index], b.sequence);
	}
	ksft_print_msg("dev=%s mem=%s frames=%u mismatches=%lu\n", n->name, model, nbufs, bad);
	ksft_test_result(!bad, "%s-capture\n", label);
	ksft_test_result(!exporter_streams(n, exp, bufs, nbufs), "%s-exporter-writes\n", label);
	ok = streamoff(exp);
	ok = streamoff(n) && ok;
	ok = teardown(n, exp, bufs, nbufs) && ok;
	ksft_test_result(ok, "%s-streamoff\n", label);
}

/* The case LABEL-@what skipped, for @why (KTAP: "ok N NAME # SKIP WHY"). */
static void skip_case(const char *what, const char *why)
{
	char name[sizeof(label) + 16];

	snprintf(name, sizeof(name), "%s-%s", label, what);
	ksft_test_result_code(KSFT_SKIP, name, "%s", why);
}

static void bad_usage(void)
{
	fprintf(stderr, "usage: vb2-edu --dev NAME --mem MODEL [--frames N] [--bufs N]\n"
		"       [--size WxH] [--contig-rule] [--hint [--expect-stale]] [--no-sync]\n"
		"       [--exporter-writes] [--sync-queued] [-v]\n"
		"MODEL: mmap|mmap-nc|userptr|userptr-scatter|heap|udmabuf|expbuf:NODE\n");
	exit(2);
}

static bool known_model(const char *m)
{
	return !strcmp(m, "mmap") || !strcmp(m, "mmap-nc") || !strcmp(m, "userptr") ||
	       !strcmp(m, "userptr-scatter") || !strcmp(m, "heap") || !strcmp(m, "udmabuf") ||
	       !strncmp(m, "expbuf:", 7);
}

static struct {
	const char *dev, *model;
	unsigned int frames, nbufs, w, h;
} args = { .frames = 12, .nbufs = 4, .w = 48, .h = 64 };

static void parse_args(int argc, char **argv)
{
	static const struct {
		const char *name;
		bool *on;		/* a flag; else an option with a value: */
		const char **str;	/* a string, */
		unsigned int *num;	/* a number, or WxH (--size) */
	} opts[] = {
		{ "-v", .on = &verbose }, { "--no-sync", .on = &no_sync },
		{ "--contig-rule", .on = &contig_rule }, { "--hint", .on = &hint },
		{ "--expect-stale", .on = &expect_stale }, { "--sync-queued", .on = &sync_queued },
		{ "--exporter-writes", .on = &exporter_writes },
		{ "--dev", .str = &args.dev }, { "--mem", .str = &args.model },
		{ "--frames", .num = &args.frames }, { "--bufs", .num = &args.nbufs },
		{ .name = "--size" },
	};
	const char *m;
	unsigned int k;
	int i;

	for (i = 1; i < argc; i++) {
		for (k = 0; k < ARRAY_SIZE(opts); k++)
			if (!strcmp(argv[i], opts[k].name))
				break;
		if (k == ARRAY_SIZE(opts) || (!opts[k].on && i + 1 == argc))
			bad_usage();
		if (opts[k].on)
			*opts[k].on = true;
		else if (opts[k].str)
			*opts[k].str = argv[++i];
		else if (opts[k].num)
			*opts[k].num = strtoul(argv[++i], NULL, 0);
		else if (sscanf(argv[++i], "%ux%u", &args.w, &args.h) != 2)
			bad_usage();
	}
	m = args.model;
	if (!args.dev || !m || !known_model(m) || !args.nbufs || args.nbufs > MAXB ||
	    !args.frames || (contig_rule && strncmp(m, "userptr", 7)) ||
	    (hint && strcmp(m, "mmap-nc")) || (expect_stale && !hint) ||
	    ((exporter_writes || sync_queued) && (strncmp(m, "expbuf:", 7) || no_sync)) ||
	    (exporter_writes && sync_queued))
		bad_usage();
}

int main(int argc, char **argv)
{
	struct node n, e, *exp = NULL;
	char on[8];

	parse_args(argc, argv);
	snprintf(label, sizeof(label), "%s/%.*s%s%s%s", args.dev,
		 (int)strcspn(args.model, ":"), args.model, hint ? "-hint" : "",
		 expect_stale ? "-stale" : "", sync_queued ? "-sync-queued" : "");
	ksft_print_header();
	ksft_set_plan(contig_rule ? 1 : exporter_writes ? 3 : 2);
	node_init(&n, args.dev, args.w, args.h);
	if (!strncmp(args.model, "expbuf:", 7)) {
		node_init(&e, args.model + 7, args.w, args.h);
		exp = &e;
	}
	if (exporter_writes && (n.out || exp->out))
		vb2_bail("--exporter-writes: %s and %s must both capture", n.name, exp->name);
	if (sync_queued && n.out)
		vb2_bail("--sync-queued: %s must capture", n.name);
	/* Does the kernel fence dma-bufs (CONFIG_VIDEOBUF2_IMPLICIT_SYNC)? */
	if (sync_queued && (vb2_read_line("/sys/kernel/debug/videobuf2/implicit_sync", on,
					  sizeof(on)) || strcmp(on, "1"))) {
		skip_case("frames", "no implicit sync");
		skip_case("streamoff", "no implicit sync");
	} else if (contig_rule) {
		contig_rule_check(&n, args.model, args.nbufs);
	} else if (exporter_writes) {
		stream_back(&n, args.model, exp, args.nbufs);
	} else {
		stream(&n, args.model, exp, args.nbufs, args.frames);
	}
	ksft_finished();
}
