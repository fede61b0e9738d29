// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests of what this videobuf2 has beyond 6.12: the queues in debugfs
 * (CONFIG_VIDEOBUF2_DEBUGFS) and implicit fences on the dma-bufs of capture
 * buffers (CONFIG_VIDEOBUF2_IMPLICIT_SYNC). Without the option a suite's
 * cases skip.
 */

#include <kunit/test.h>
#include <linux/dcache.h>
#include <linux/dma-buf.h>
#include <linux/dma-fence.h>
#include <linux/dma-resv.h>
#include <linux/fdtable.h>
#include <linux/file.h>
#include <linux/string.h>

#include <media/videobuf2-core.h>
#include <media/videobuf2-v4l2.h>
#include <media/videobuf2-vmalloc.h>

#include "../videobuf2-internal.h"
#include "vb2-test-helpers.h"

#define CAP	V4L2_BUF_TYPE_VIDEO_CAPTURE
#define OUT	V4L2_BUF_TYPE_VIDEO_OUTPUT
#define TEXT	8192

/* Unused when the kernel has neither feature: their suites only skip then. */
static void __maybe_unused reqbufs_n(struct kunit *test, struct vb2t_ctx *ctx,
				     u32 memory, unsigned int n)
{
	unsigned int count = n;

	KUNIT_ASSERT_EQ(test, vb2t_reqbufs(ctx, memory, &count), 0);
	KUNIT_ASSERT_EQ(test, count, n);
}

/* ---------------------------------------------------------------------- */
/* debugfs                                                                */
/* ---------------------------------------------------------------------- */

#if IS_ENABLED(CONFIG_VIDEOBUF2_DEBUGFS)

static const char *format(struct kunit *test, struct vb2t_ctx *ctx, bool stats)
{
	char *buf = kunit_kzalloc(test, TEXT, GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, buf);
	KUNIT_ASSERT_GT(test, vb2_debugfs_format(&ctx->q, stats, buf, TEXT), 0);
	return buf;
}

static void expect_line(struct kunit *test, const char *text,
			const char *line)
{
	KUNIT_EXPECT_NOT_NULL_MSG(test, strstr(text, line),
				  "no \"%s\" in:\n%s", line, text);
}

/*
 * The directory comes with the first buffers, stays while the queue is in
 * use (REQBUFS(0) included) and goes with the release. A queue without a
 * device node is named after the queue and a number.
 */
static void vb2_debugfs_lifetime(struct kunit *test)
{
	struct vb2t_ctx *ctx = vb2t_ctx_simple(test, CAP);
	const char *name;

	KUNIT_EXPECT_NULL(test, ctx->q.debugfs);
	reqbufs_n(test, ctx, V4L2_MEMORY_MMAP, 2);
	KUNIT_ASSERT_NOT_NULL(test, ctx->q.debugfs);
	KUNIT_ASSERT_FALSE(test, IS_ERR_OR_NULL(ctx->q.debugfs->dir));
	name = ctx->q.debugfs->dir->d_name.name;
	KUNIT_EXPECT_EQ(test, strncmp(name, ctx->q.name, strlen(ctx->q.name)), 0);
	reqbufs_n(test, ctx, V4L2_MEMORY_MMAP, 0);
	KUNIT_EXPECT_NOT_NULL(test, ctx->q.debugfs);
	vb2t_release(ctx);
	KUNIT_EXPECT_NULL(test, ctx->q.debugfs);
}

/* The state file: the queue and one line per buffer, in its state. */
static void vb2_debugfs_state(struct kunit *test)
{
	struct vb2t_ctx *ctx = vb2t_ctx_simple(test, CAP);
	const char *text;

	reqbufs_n(test, ctx, V4L2_MEMORY_MMAP, 3);
	KUNIT_ASSERT_EQ(test, vb2t_qbuf_mmap(ctx, 0), 0);
	KUNIT_ASSERT_EQ(test, vb2t_qbuf_mmap(ctx, 1), 0);
	KUNIT_ASSERT_EQ(test, vb2t_streamon(ctx), 0);
	KUNIT_ASSERT_TRUE(test, vb2t_complete_index(ctx, 0, VB2_BUF_STATE_DONE));
	text = format(test, ctx, false);
	expect_line(test, text, "memory: mmap\n");
	expect_line(test, text, "streaming: 1\n");
	expect_line(test, text, "num_buffers: 3\n");
	expect_line(test, text, "owned_by_drv_count: 1\n");
	expect_line(test, text, "queued: 2\n");
	expect_line(test, text, "done: 1\n");
	expect_line(test, text, "buffer 0: done");
	expect_line(test, text, "buffer 1: active");
	expect_line(test, text, "buffer 2: dequeued");
	expect_line(test, text, "vb2t_buf_queue");
}

static void timing_off(void *unused)
{
	vb2_stats_set_timing(false);
}

/*
 * The stats file counts from STREAMON: queued, done, error, requeued,
 * dequeued, and the time the driver took; a driver that keeps buffers after
 * stop_streaming shows as reclaimed.
 */
static void vb2_debugfs_counters(struct kunit *test)
{
	struct vb2t_ctx *ctx = vb2t_ctx_simple(test, CAP);
	struct vb2_stats *st;
	unsigned int i;
	const char *text;

	vb2_stats_set_timing(true);
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, timing_off, NULL), 0);
	reqbufs_n(test, ctx, V4L2_MEMORY_MMAP, 4);
	KUNIT_ASSERT_EQ(test, vb2t_qbuf_mmap(ctx, 0), 0);
	KUNIT_ASSERT_EQ(test, vb2t_streamon(ctx), 0);
	for (i = 1; i < 4; i++)
		KUNIT_ASSERT_EQ(test, vb2t_qbuf_mmap(ctx, i), 0);
	KUNIT_ASSERT_TRUE(test, vb2t_complete_index(ctx, 0, VB2_BUF_STATE_DONE));
	KUNIT_ASSERT_TRUE(test, vb2t_complete_index(ctx, 1, VB2_BUF_STATE_ERROR));
	KUNIT_ASSERT_TRUE(test, vb2t_complete_index(ctx, 2, VB2_BUF_STATE_QUEUED));
	KUNIT_ASSERT_EQ(test, vb2t_dqbuf_index(ctx, NULL, NULL), 0);
	st = &ctx->q.debugfs->stats;
	/* Queued before STREAMON does not count. */
	KUNIT_EXPECT_EQ(test, st->queued, 3);
	KUNIT_EXPECT_EQ(test, st->done, 1);
	KUNIT_EXPECT_EQ(test, st->error, 1);
	KUNIT_EXPECT_EQ(test, st->requeued, 1);
	KUNIT_EXPECT_EQ(test, st->dequeued, 1);
	KUNIT_EXPECT_EQ(test, st->latency_count, 2);
	KUNIT_EXPECT_LE(test, st->latency_min_ns, st->latency_max_ns);
	text = format(test, ctx, true);
	expect_line(test, text, "queued: 3\n");
	expect_line(test, text, "error: 1\n");
	expect_line(test, text, "latency_us: min ");
	expect_line(test, text, "latency_histogram_ms: <1:");

	/* A driver that keeps its buffers at stop_streaming: 3 is with it. */
	ctx->keep_on_stop = true;
	vb2t_expect_warning_begin(test);
	KUNIT_EXPECT_EQ(test, vb2t_streamoff(ctx), 0);
	vb2t_expect_warning_end(test);
	ctx->keep_on_stop = false;
	KUNIT_EXPECT_EQ(test, st->reclaimed, 1);

	/* STREAMON starts the counts again. */
	KUNIT_ASSERT_EQ(test, vb2t_qbuf_mmap(ctx, 0), 0);
	KUNIT_ASSERT_EQ(test, vb2t_streamon(ctx), 0);
	KUNIT_EXPECT_EQ(test, st->queued, 0);
	KUNIT_EXPECT_EQ(test, st->reclaimed, 0);
}

/*
 * The timing is off by default: the counters still count, no buffer is
 * timed, and one handed to the driver before the timing was switched on is
 * not timed at its completion either.
 */
static void vb2_debugfs_timing_off(struct kunit *test)
{
	struct vb2t_ctx *ctx = vb2t_ctx_simple(test, CAP);
	struct vb2_stats *st;
	const char *text;

	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, timing_off, NULL), 0);
	vb2_stats_set_timing(false);
	reqbufs_n(test, ctx, V4L2_MEMORY_MMAP, 3);
	KUNIT_ASSERT_EQ(test, vb2t_streamon(ctx), 0);
	KUNIT_ASSERT_EQ(test, vb2t_qbuf_mmap(ctx, 0), 0);
	KUNIT_ASSERT_EQ(test, vb2t_qbuf_mmap(ctx, 1), 0);
	KUNIT_ASSERT_TRUE(test, vb2t_complete_index(ctx, 0, VB2_BUF_STATE_DONE));
	st = &ctx->q.debugfs->stats;
	KUNIT_EXPECT_EQ(test, st->done, 1);
	KUNIT_EXPECT_EQ(test, st->latency_count, 0);
	text = format(test, ctx, true);
	expect_line(test, text, "latency: off");
	expect_line(test, text, "latency_count: 0\n");

	/* Buffer 1 went to the driver untimed; buffer 2 goes timed. */
	vb2_stats_set_timing(true);
	KUNIT_ASSERT_EQ(test, vb2t_qbuf_mmap(ctx, 2), 0);
	KUNIT_ASSERT_TRUE(test, vb2t_complete_index(ctx, 1, VB2_BUF_STATE_DONE));
	KUNIT_EXPECT_EQ(test, st->latency_count, 0);
	KUNIT_ASSERT_TRUE(test, vb2t_complete_index(ctx, 2, VB2_BUF_STATE_DONE));
	KUNIT_EXPECT_EQ(test, st->latency_count, 1);
	KUNIT_EXPECT_EQ(test, st->done, 3);
	text = format(test, ctx, true);
	KUNIT_EXPECT_NULL(test, strstr(text, "latency: off"));
}

/* A queue used through a video device node is named after the node. */
static void vb2_debugfs_node_name(struct kunit *test)
{
	struct vb2t_ctx *ctx = vb2t_ctx_simple(test, CAP);
	struct vb2t_vdev *v = vb2t_vdev_register(ctx);
	struct v4l2_requestbuffers rb = {
		.count = 2, .type = CAP, .memory = V4L2_MEMORY_MMAP,
	};
	struct file *f;
	char want[48];

	KUNIT_ASSERT_NOT_NULL(test, v);
	f = vb2t_vdev_open(v);
	KUNIT_ASSERT_EQ(test, vb2t_vdev_ioctl(v, f, VIDIOC_REQBUFS, &rb,
					      sizeof(rb)), 0);
	KUNIT_ASSERT_NOT_NULL(test, ctx->q.debugfs);
	snprintf(want, sizeof(want), "video%d-cap", v->vdev.num);
	KUNIT_EXPECT_STREQ(test, ctx->q.debugfs->dir->d_name.name, want);
}

static struct kunit_case vb2_debugfs_cases[] = {
	KUNIT_CASE(vb2_debugfs_lifetime),
	KUNIT_CASE(vb2_debugfs_state),
	KUNIT_CASE(vb2_debugfs_counters),
	KUNIT_CASE(vb2_debugfs_timing_off),
	KUNIT_CASE(vb2_debugfs_node_name),
	{}
};

#else

static void vb2_debugfs_off(struct kunit *test)
{
	kunit_skip(test, "CONFIG_VIDEOBUF2_DEBUGFS is off");
}

static struct kunit_case vb2_debugfs_cases[] = {
	KUNIT_CASE(vb2_debugfs_off),
	{}
};

#endif

static struct kunit_suite vb2_debugfs_suite = {
	.name = "videobuf2-debugfs",
	.test_cases = vb2_debugfs_cases,
};

/* ---------------------------------------------------------------------- */
/* Implicit synchronisation                                               */
/* ---------------------------------------------------------------------- */

#if IS_ENABLED(CONFIG_VIDEOBUF2_IMPLICIT_SYNC)

#define PLANE	(4 * PAGE_SIZE)

static struct vb2t_ctx *vmalloc_ctx(struct kunit *test, u32 type,
				    unsigned int io_modes)
{
	struct vb2t_config cfg = {
		.type = type, .io_modes = io_modes,
		.backend = &vb2_vmalloc_memops, .size = PLANE,
	};

	return vb2t_ctx_create(test, &cfg);
}

static void dma_buf_put_action(void *dbuf)
{
	dma_buf_put(dbuf);
}

/* Export plane 0 of buffer @index; the dma-buf is put when the test ends. */
static struct dma_buf *export(struct kunit *test, struct vb2t_ctx *ctx,
			      unsigned int index, int *pfd)
{
	struct dma_buf *dbuf;
	int fd = -1, ret;

	mutex_lock(&ctx->mutex);
	ret = vb2_core_expbuf(&ctx->q, &fd, ctx->q.type,
			      vb2_get_buffer(&ctx->q, index), 0,
			      O_CLOEXEC | O_RDWR);
	mutex_unlock(&ctx->mutex);
	KUNIT_ASSERT_EQ(test, ret, 0);
	dbuf = dma_buf_get(fd);
	KUNIT_ASSERT_FALSE(test, IS_ERR(dbuf));
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, dma_buf_put_action,
							dbuf), 0);
	if (pfd)
		*pfd = fd;
	else
		vb2t_close_fd_at_exit(test, fd);
	return dbuf;
}

static bool ready(struct dma_buf *dbuf)
{
	return dma_resv_test_signaled(dbuf->resv, DMA_RESV_USAGE_WRITE);
}

/* The error of the (one) write fence videobuf2 put on @dbuf, 0 if none. */
static int fence_error(struct kunit *test, struct dma_buf *dbuf)
{
	struct dma_resv_iter cursor;
	struct dma_fence *fence;
	int err = 0, n = 0;

	dma_resv_lock(dbuf->resv, NULL);
	dma_resv_for_each_fence(&cursor, dbuf->resv, DMA_RESV_USAGE_WRITE,
				fence) {
		err = fence->error;
		n++;
	}
	dma_resv_unlock(dbuf->resv);
	KUNIT_EXPECT_LE(test, n, 1);
	return err;
}

/*
 * An exported capture buffer: not ready while the driver has it, ready
 * once it is done, with the status of the completion.
 */
static void vb2_sync_exported_buffer(struct kunit *test)
{
	struct vb2t_ctx *ctx = vmalloc_ctx(test, CAP, VB2_MMAP);
	struct dma_buf *d0, *d1;

	reqbufs_n(test, ctx, V4L2_MEMORY_MMAP, 2);
	d0 = export(test, ctx, 0, NULL);
	d1 = export(test, ctx, 1, NULL);
	KUNIT_EXPECT_TRUE(test, ready(d0));
	KUNIT_ASSERT_EQ(test, vb2t_qbuf_mmap(ctx, 0), 0);
	KUNIT_ASSERT_EQ(test, vb2t_qbuf_mmap(ctx, 1), 0);
	/* Queued, but not with the driver yet: nothing to wait for. */
	KUNIT_EXPECT_TRUE(test, ready(d0));
	KUNIT_ASSERT_EQ(test, vb2t_streamon(ctx), 0);
	KUNIT_EXPECT_FALSE(test, ready(d0));
	KUNIT_EXPECT_FALSE(test, ready(d1));
	KUNIT_ASSERT_TRUE(test, vb2t_complete_index(ctx, 0, VB2_BUF_STATE_DONE));
	KUNIT_EXPECT_TRUE(test, ready(d0));
	KUNIT_EXPECT_EQ(test, fence_error(test, d0), 0);
	KUNIT_EXPECT_FALSE(test, ready(d1));
	KUNIT_ASSERT_TRUE(test, vb2t_complete_index(ctx, 1, VB2_BUF_STATE_ERROR));
	KUNIT_EXPECT_TRUE(test, ready(d1));
	KUNIT_EXPECT_EQ(test, fence_error(test, d1), -EIO);
}

/*
 * Cancelled: STREAMOFF signals what the driver had with an error; a buffer
 * a failing start gives back QUEUED is signalled -ECANCELED and fenced anew
 * when it goes to the driver again.
 */
static void vb2_sync_cancel(struct kunit *test)
{
	struct vb2t_ctx *ctx = vmalloc_ctx(test, CAP, VB2_MMAP);
	struct dma_buf *d0;

	reqbufs_n(test, ctx, V4L2_MEMORY_MMAP, 1);
	d0 = export(test, ctx, 0, NULL);
	KUNIT_ASSERT_EQ(test, vb2t_qbuf_mmap(ctx, 0), 0);
	vb2t_fail(ctx, VB2T_START_STREAMING, 1, -ENOLINK);
	KUNIT_EXPECT_EQ(test, vb2t_streamon(ctx), -ENOLINK);
	KUNIT_EXPECT_TRUE(test, ready(d0));
	KUNIT_EXPECT_EQ(test, fence_error(test, d0), -ECANCELED);
	KUNIT_ASSERT_EQ(test, vb2t_streamon(ctx), 0);
	KUNIT_EXPECT_FALSE(test, ready(d0));
	KUNIT_ASSERT_EQ(test, vb2t_streamoff(ctx), 0);
	KUNIT_EXPECT_TRUE(test, ready(d0));
	KUNIT_EXPECT_EQ(test, fence_error(test, d0), -EIO);
	KUNIT_EXPECT_NULL(test, vb2_get_buffer(&ctx->q, 0)->fence);
}

/* Nothing exported, or an output queue: no fence at all. */
static void vb2_sync_not_wanted(struct kunit *test)
{
	struct vb2t_ctx *cap = vmalloc_ctx(test, CAP, VB2_MMAP);
	struct vb2t_ctx *out = vmalloc_ctx(test, OUT, VB2_MMAP);
	struct dma_buf *dout;

	reqbufs_n(test, cap, V4L2_MEMORY_MMAP, 1);
	KUNIT_ASSERT_EQ(test, vb2t_qbuf_mmap(cap, 0), 0);
	KUNIT_ASSERT_EQ(test, vb2t_streamon(cap), 0);
	KUNIT_EXPECT_NULL(test, vb2_get_buffer(&cap->q, 0)->fence);

	reqbufs_n(test, out, V4L2_MEMORY_MMAP, 1);
	dout = export(test, out, 0, NULL);
	KUNIT_ASSERT_EQ(test, vb2t_qbuf_mmap(out, 0), 0);
	KUNIT_ASSERT_EQ(test, vb2t_streamon(out), 0);
	KUNIT_EXPECT_NULL(test, vb2_get_buffer(&out->q, 0)->fence);
	KUNIT_EXPECT_TRUE(test, ready(dout));
}

/* An imported dma-buf of a capture buffer gets the fence too. */
static void vb2_sync_imported(struct kunit *test)
{
	struct vb2t_ctx *exp = vmalloc_ctx(test, OUT, VB2_MMAP);
	struct vb2t_ctx *imp = vmalloc_ctx(test, CAP, VB2_DMABUF);
	struct dma_buf *dbuf;
	struct v4l2_buffer b;
	int fd;

	reqbufs_n(test, exp, V4L2_MEMORY_MMAP, 1);
	dbuf = export(test, exp, 0, &fd);
	vb2t_close_fd_at_exit(test, fd);
	reqbufs_n(test, imp, V4L2_MEMORY_DMABUF, 1);
	vb2t_init_buffer(imp, &b, NULL, 0);
	b.memory = V4L2_MEMORY_DMABUF;
	b.m.fd = fd;
	b.length = PLANE;
	KUNIT_ASSERT_EQ(test, vb2t_qbuf(imp, &b), 0);
	KUNIT_ASSERT_EQ(test, vb2t_streamon(imp), 0);
	KUNIT_EXPECT_FALSE(test, ready(dbuf));
	KUNIT_ASSERT_TRUE(test, vb2t_complete_next(imp, VB2_BUF_STATE_DONE));
	KUNIT_EXPECT_TRUE(test, ready(dbuf));
}

/*
 * EXPBUF and close again and again: the buffer holds no reference on its
 * exports, each is forgotten as it is freed.
 */
static void vb2_sync_exports_forgotten(struct kunit *test)
{
	struct vb2t_ctx *ctx = vmalloc_ctx(test, CAP, VB2_MMAP);
	struct vb2_buffer *vb;
	unsigned int i;
	int fd = -1;

	reqbufs_n(test, ctx, V4L2_MEMORY_MMAP, 1);
	vb = vb2_get_buffer(&ctx->q, 0);
	for (i = 0; i < 20; i++) {
		mutex_lock(&ctx->mutex);
		KUNIT_ASSERT_EQ(test, vb2_core_expbuf(&ctx->q, &fd, CAP, vb, 0,
						      O_CLOEXEC), 0);
		mutex_unlock(&ctx->mutex);
		KUNIT_EXPECT_FALSE(test, list_empty(&vb->exports));
		vb2t_close_fd_now(fd);
		KUNIT_EXPECT_TRUE(test, list_empty(&vb->exports));
	}
	KUNIT_ASSERT_EQ(test, vb2t_qbuf_mmap(ctx, 0), 0);
	KUNIT_ASSERT_EQ(test, vb2t_streamon(ctx), 0);
	KUNIT_EXPECT_NULL(test, vb->fence);
}

/* More exports of one buffer than the hand-over holds at first: all fenced. */
static void vb2_sync_many_exports(struct kunit *test)
{
	struct vb2t_ctx *ctx = vmalloc_ctx(test, CAP, VB2_MMAP);
	struct dma_buf *d[7];
	unsigned int i;

	reqbufs_n(test, ctx, V4L2_MEMORY_MMAP, 1);
	for (i = 0; i < ARRAY_SIZE(d); i++)
		d[i] = export(test, ctx, 0, NULL);
	KUNIT_ASSERT_EQ(test, vb2t_qbuf_mmap(ctx, 0), 0);
	KUNIT_ASSERT_EQ(test, vb2t_streamon(ctx), 0);
	for (i = 0; i < ARRAY_SIZE(d); i++)
		KUNIT_EXPECT_FALSE(test, ready(d[i]));
	KUNIT_ASSERT_TRUE(test, vb2t_complete_next(ctx, VB2_BUF_STATE_DONE));
	for (i = 0; i < ARRAY_SIZE(d); i++)
		KUNIT_EXPECT_TRUE(test, ready(d[i]));
}

/* Buffers freed while their exports live on: the exports outlive them. */
static void vb2_sync_export_outlives_buffer(struct kunit *test)
{
	struct vb2t_ctx *ctx = vmalloc_ctx(test, CAP, VB2_MMAP);
	struct dma_buf *dbuf;

	reqbufs_n(test, ctx, V4L2_MEMORY_MMAP, 1);
	dbuf = export(test, ctx, 0, NULL);
	KUNIT_ASSERT_EQ(test, vb2t_qbuf_mmap(ctx, 0), 0);
	KUNIT_ASSERT_EQ(test, vb2t_streamon(ctx), 0);
	KUNIT_EXPECT_FALSE(test, ready(dbuf));
	KUNIT_ASSERT_EQ(test, vb2t_streamoff(ctx), 0);
	reqbufs_n(test, ctx, V4L2_MEMORY_MMAP, 0);
	KUNIT_EXPECT_TRUE(test, ready(dbuf));
	KUNIT_EXPECT_EQ(test, fence_error(test, dbuf), -EIO);
}

static struct kunit_case vb2_sync_cases[] = {
	KUNIT_CASE(vb2_sync_exported_buffer),
	KUNIT_CASE(vb2_sync_cancel),
	KUNIT_CASE(vb2_sync_not_wanted),
	KUNIT_CASE(vb2_sync_imported),
	KUNIT_CASE(vb2_sync_exports_forgotten),
	KUNIT_CASE(vb2_sync_many_exports),
	KUNIT_CASE(vb2_sync_export_outlives_buffer),
	{}
};

#else

static void vb2_sync_off(struct kunit *test)
{
	kunit_skip(test, "CONFIG_VIDEOBUF2_IMPLICIT_SYNC is off");
}

static struct kunit_case vb2_sync_cases[] = {
	KUNIT_CASE(vb2_sync_off),
	{}
};

#endif

static struct kunit_suite vb2_sync_suite = {
	.name = "videobuf2-implicit-sync",
	.test_cases = vb2_sync_cases,
};

kunit_test_suites(&vb2_debugfs_suite, &vb2_sync_suite);
