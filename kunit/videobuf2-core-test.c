// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests of the videobuf2 core: buffer states, the order of the
 * driver's callbacks, failing callbacks, streaming rules, completion in
 * any order and context, mmap() lifetime and queues with many buffers.
 */

#include <kunit/test.h>
#include <linux/completion.h>
#include <linux/delay.h>
#include <linux/file.h>
#include <linux/hrtimer.h>
#include <linux/kthread.h>
#include <linux/mm.h>
#include <linux/mman.h>
#include <linux/uaccess.h>

#include <media/videobuf2-core.h>
#include <media/videobuf2-v4l2.h>

#include "../videobuf2-internal.h"
#include "vb2-test-helpers.h"

#define CAP	V4L2_BUF_TYPE_VIDEO_CAPTURE
#define OUT	V4L2_BUF_TYPE_VIDEO_OUTPUT
#define CAP_MP	V4L2_BUF_TYPE_VIDEO_CAPTURE_MPLANE

/* Allocate @n MMAP buffers and check that exactly @n were made. */
static void reqbufs_n(struct kunit *test, struct vb2t_ctx *ctx, unsigned int n)
{
	unsigned int count = n;

	KUNIT_ASSERT_EQ(test, vb2t_reqbufs(ctx, V4L2_MEMORY_MMAP, &count), 0);
	KUNIT_ASSERT_EQ(test, count, n);
}

static void qbuf_range(struct kunit *test, struct vb2t_ctx *ctx,
		       unsigned int first, unsigned int n)
{
	unsigned int i;

	for (i = first; i < first + n; i++)
		KUNIT_ASSERT_EQ(test, vb2t_qbuf_mmap(ctx, i), 0);
}

static u32 query_flags(struct kunit *test, struct vb2t_ctx *ctx,
		       unsigned int index)
{
	struct v4l2_plane planes[VB2_MAX_PLANES];
	struct v4l2_buffer b;

	vb2t_init_buffer(ctx, &b, planes, index);
	KUNIT_EXPECT_EQ(test, vb2t_querybuf(ctx, &b), 0);
	return b.flags;
}

/* ---------------------------------------------------------------------- */
/* Buffer states                                                          */
/* ---------------------------------------------------------------------- */

/* DEQUEUED -> PREPARING -> DEQUEUED (prepared), then QUEUED. */
static void vb2_state_prepare_then_queue(struct kunit *test)
{
	struct vb2t_ctx *ctx = vb2t_ctx_simple(test, CAP);
	struct v4l2_buffer b;

	reqbufs_n(test, ctx, 1);
	KUNIT_EXPECT_EQ(test, vb2t_state(ctx, 0), VB2_BUF_STATE_DEQUEUED);
	KUNIT_EXPECT_EQ(test, query_flags(test, ctx, 0) &
			(V4L2_BUF_FLAG_PREPARED | V4L2_BUF_FLAG_QUEUED), 0);

	/* The fake driver checks the PREPARING state inside buf_prepare. */
	vb2t_init_buffer(ctx, &b, NULL, 0);
	KUNIT_EXPECT_EQ(test, vb2t_prepare_buf(ctx, &b), 0);
	KUNIT_EXPECT_EQ(test, vb2t_state(ctx, 0), VB2_BUF_STATE_DEQUEUED);
	KUNIT_EXPECT_TRUE(test, b.flags & V4L2_BUF_FLAG_PREPARED);
	KUNIT_EXPECT_TRUE(test, query_flags(test, ctx, 0) &
			  V4L2_BUF_FLAG_PREPARED);

	/* QBUF of a prepared buffer does not prepare it again. */
	KUNIT_EXPECT_EQ(test, vb2t_qbuf_mmap(ctx, 0), 0);
	KUNIT_EXPECT_EQ(test, vb2t_state(ctx, 0), VB2_BUF_STATE_QUEUED);
	KUNIT_EXPECT_EQ(test, vb2t_count(ctx, VB2T_BUF_PREPARE), 1);
	KUNIT_EXPECT_TRUE(test, query_flags(test, ctx, 0) & V4L2_BUF_FLAG_QUEUED);
}

/* QUEUED -> ACTIVE -> DONE -> DEQUEUED, and ACTIVE -> ERROR -> DEQUEUED. */
static void vb2_state_active_done_error(struct kunit *test)
{
	struct vb2t_ctx *ctx = vb2t_ctx_simple(test, CAP);
	unsigned int index;
	u32 flags;

	reqbufs_n(test, ctx, 2);
	qbuf_range(test, ctx, 0, 2);
	KUNIT_ASSERT_EQ(test, vb2t_streamon(ctx), 0);
	KUNIT_EXPECT_EQ(test, vb2t_state(ctx, 0), VB2_BUF_STATE_ACTIVE);
	KUNIT_EXPECT_EQ(test, vb2t_state(ctx, 1), VB2_BUF_STATE_ACTIVE);
	KUNIT_EXPECT_EQ(test, atomic_read(&ctx->q.owned_by_drv_count), 2);

	KUNIT_ASSERT_TRUE(test, vb2t_complete_index(ctx, 0, VB2_BUF_STATE_DONE));
	KUNIT_ASSERT_TRUE(test, vb2t_complete_index(ctx, 1, VB2_BUF_STATE_ERROR));
	KUNIT_EXPECT_EQ(test, vb2t_state(ctx, 0), VB2_BUF_STATE_DONE);
	KUNIT_EXPECT_EQ(test, vb2t_state(ctx, 1), VB2_BUF_STATE_ERROR);
	KUNIT_EXPECT_EQ(test, atomic_read(&ctx->q.owned_by_drv_count), 0);
	flags = query_flags(test, ctx, 0);
	KUNIT_EXPECT_TRUE(test, flags & V4L2_BUF_FLAG_DONE);
	KUNIT_EXPECT_FALSE(test, flags & V4L2_BUF_FLAG_ERROR);
	flags = query_flags(test, ctx, 1);
	KUNIT_EXPECT_TRUE(test, flags & V4L2_BUF_FLAG_ERROR);

	KUNIT_EXPECT_EQ(test, vb2t_dqbuf_index(ctx, &index, &flags), 0);
	KUNIT_EXPECT_EQ(test, index, 0);
	KUNIT_EXPECT_EQ(test, vb2t_state(ctx, 0), VB2_BUF_STATE_DEQUEUED);
	KUNIT_EXPECT_EQ(test, vb2t_dqbuf_index(ctx, &index, &flags), 0);
	KUNIT_EXPECT_EQ(test, index, 1);
	KUNIT_EXPECT_TRUE(test, flags & V4L2_BUF_FLAG_ERROR);
	KUNIT_EXPECT_FALSE(test, flags & V4L2_BUF_FLAG_DONE);
	KUNIT_EXPECT_EQ(test, vb2t_state(ctx, 1), VB2_BUF_STATE_DEQUEUED);
}

/* DONE -> ERROR: vb2_discard_done() marks what was not dequeued yet. */
static void vb2_state_discard_done(struct kunit *test)
{
	struct vb2t_ctx *ctx = vb2t_ctx_simple(test, CAP);
	unsigned int index;
	u32 flags;

	reqbufs_n(test, ctx, 3);
	qbuf_range(test, ctx, 0, 3);
	KUNIT_ASSERT_EQ(test, vb2t_streamon(ctx), 0);
	KUNIT_ASSERT_TRUE(test, vb2t_complete_next(ctx, VB2_BUF_STATE_DONE));
	KUNIT_ASSERT_TRUE(test, vb2t_complete_next(ctx, VB2_BUF_STATE_ERROR));
	vb2_discard_done(&ctx->q);
	KUNIT_EXPECT_EQ(test, vb2t_state(ctx, 0), VB2_BUF_STATE_ERROR);
	/* Already failed: stays so. */
	KUNIT_EXPECT_EQ(test, vb2t_state(ctx, 1), VB2_BUF_STATE_ERROR);
	KUNIT_EXPECT_EQ(test, vb2t_state(ctx, 2), VB2_BUF_STATE_ACTIVE);
	KUNIT_EXPECT_EQ(test, vb2t_dqbuf_index(ctx, &index, &flags), 0);
	KUNIT_EXPECT_EQ(test, index, 0);
	KUNIT_EXPECT_TRUE(test, flags & V4L2_BUF_FLAG_ERROR);
	KUNIT_EXPECT_EQ(test, vb2t_dqbuf_index(ctx, &index, &flags), 0);
	KUNIT_EXPECT_EQ(test, index, 1);
	KUNIT_EXPECT_TRUE(test, flags & V4L2_BUF_FLAG_ERROR);
}

/* QUEUED -> DEQUEUED by STREAMOFF, also when the driver never started. */
static void vb2_state_cancel_queued(struct kunit *test)
{
	struct vb2t_ctx *ctx = vb2t_ctx_simple(test, CAP);

	reqbufs_n(test, ctx, 2);
	qbuf_range(test, ctx, 0, 2);
	KUNIT_EXPECT_EQ(test, vb2t_streamoff(ctx), 0);
	KUNIT_EXPECT_EQ(test, vb2t_state(ctx, 0), VB2_BUF_STATE_DEQUEUED);
	KUNIT_EXPECT_EQ(test, vb2t_state(ctx, 1), VB2_BUF_STATE_DEQUEUED);
	/* Each prepared buffer is finished, nothing reached the driver. */
	KUNIT_EXPECT_EQ(test, vb2t_count(ctx, VB2T_BUF_FINISH), 2);
	KUNIT_EXPECT_EQ(test, vb2t_count(ctx, VB2T_BUF_QUEUE), 0);
	KUNIT_EXPECT_EQ(test, vb2t_count(ctx, VB2T_STOP_STREAMING), 0);
	qbuf_range(test, ctx, 0, 2);
}

/*
 * The whole table of state changes, written down again from the uAPI's
 * buffer life cycle: a buffer user space owns is prepared, queued (maybe in
 * a request), handed to the driver, completed and dequeued; completion may
 * be undone (requeued) or turned into an error; cancel takes any state the
 * core owns back to DEQUEUED. Everything else must be refused.
 */
static void vb2_state_table(struct kunit *test)
{
	static const struct {
		enum vb2_buffer_state from, to;
	} legal[] = {
		{ VB2_BUF_STATE_DEQUEUED, VB2_BUF_STATE_IN_REQUEST },
		{ VB2_BUF_STATE_DEQUEUED, VB2_BUF_STATE_PREPARING },
		{ VB2_BUF_STATE_DEQUEUED, VB2_BUF_STATE_QUEUED },
		{ VB2_BUF_STATE_IN_REQUEST, VB2_BUF_STATE_DEQUEUED },
		{ VB2_BUF_STATE_IN_REQUEST, VB2_BUF_STATE_PREPARING },
		{ VB2_BUF_STATE_IN_REQUEST, VB2_BUF_STATE_QUEUED },
		{ VB2_BUF_STATE_PREPARING, VB2_BUF_STATE_DEQUEUED },
		{ VB2_BUF_STATE_PREPARING, VB2_BUF_STATE_IN_REQUEST },
		{ VB2_BUF_STATE_QUEUED, VB2_BUF_STATE_DEQUEUED },
		{ VB2_BUF_STATE_QUEUED, VB2_BUF_STATE_ACTIVE },
		{ VB2_BUF_STATE_ACTIVE, VB2_BUF_STATE_QUEUED },
		{ VB2_BUF_STATE_ACTIVE, VB2_BUF_STATE_DONE },
		{ VB2_BUF_STATE_ACTIVE, VB2_BUF_STATE_ERROR },
		{ VB2_BUF_STATE_DONE, VB2_BUF_STATE_DEQUEUED },
		{ VB2_BUF_STATE_DONE, VB2_BUF_STATE_ERROR },
		{ VB2_BUF_STATE_ERROR, VB2_BUF_STATE_DEQUEUED },
	};
	unsigned int from, to, i, allowed = 0;

	for (from = VB2_BUF_STATE_DEQUEUED; from <= VB2_BUF_STATE_ERROR; from++) {
		for (to = VB2_BUF_STATE_DEQUEUED; to <= VB2_BUF_STATE_ERROR; to++) {
			bool want = false;

			if (from == to)
				continue;
			for (i = 0; i < ARRAY_SIZE(legal); i++)
				want |= legal[i].from == from && legal[i].to == to;
			KUNIT_EXPECT_EQ_MSG(test, vb2_state_change_allowed(from, to), want,
					    "state %u -> %u", from, to);
			allowed += vb2_state_change_allowed(from, to);
		}
	}
	KUNIT_EXPECT_EQ(test, allowed, ARRAY_SIZE(legal));
	/* Values outside the enum are never allowed. */
	KUNIT_EXPECT_FALSE(test, vb2_state_change_allowed(VB2_BUF_STATE_ERROR + 1,
							  VB2_BUF_STATE_DEQUEUED));
	KUNIT_EXPECT_FALSE(test, vb2_state_change_allowed(VB2_BUF_STATE_DEQUEUED,
							  VB2_BUF_STATE_ERROR + 1));
}

/* Changes that are not allowed are refused with an error, not a WARN. */
static void vb2_state_illegal_refused(struct kunit *test)
{
	struct vb2t_ctx *ctx = vb2t_ctx_simple(test, CAP);
	struct v4l2_buffer b;
	unsigned int index;

	reqbufs_n(test, ctx, 3);
	/* PREPARED -> PREPARING again. */
	vb2t_init_buffer(ctx, &b, NULL, 2);
	KUNIT_EXPECT_EQ(test, vb2t_prepare_buf(ctx, &b), 0);
	vb2t_init_buffer(ctx, &b, NULL, 2);
	KUNIT_EXPECT_EQ(test, vb2t_prepare_buf(ctx, &b), -EINVAL);

	/* QUEUED -> QUEUED and QUEUED -> PREPARING. */
	KUNIT_EXPECT_EQ(test, vb2t_qbuf_mmap(ctx, 0), 0);
	KUNIT_EXPECT_EQ(test, vb2t_qbuf_mmap(ctx, 0), -EINVAL);
	vb2t_init_buffer(ctx, &b, NULL, 0);
	KUNIT_EXPECT_EQ(test, vb2t_prepare_buf(ctx, &b), -EINVAL);
	KUNIT_EXPECT_EQ(test, vb2t_state(ctx, 0), VB2_BUF_STATE_QUEUED);

	/* ACTIVE -> QUEUED through QBUF, ACTIVE -> DEQUEUED through DQBUF. */
	KUNIT_ASSERT_EQ(test, vb2t_streamon(ctx), 0);
	KUNIT_EXPECT_EQ(test, vb2t_qbuf_mmap(ctx, 0), -EINVAL);
	KUNIT_EXPECT_EQ(test, vb2t_dqbuf_index(ctx, &index, NULL), -EAGAIN);
	KUNIT_EXPECT_EQ(test, vb2t_state(ctx, 0), VB2_BUF_STATE_ACTIVE);

	/* DONE -> QUEUED through QBUF. */
	KUNIT_ASSERT_TRUE(test, vb2t_complete_next(ctx, VB2_BUF_STATE_DONE));
	KUNIT_EXPECT_EQ(test, vb2t_qbuf_mmap(ctx, 0), -EINVAL);
	KUNIT_EXPECT_EQ(test, vb2t_state(ctx, 0), VB2_BUF_STATE_DONE);

	/* Freeing a buffer that is not DEQUEUED. */
	KUNIT_EXPECT_EQ(test, vb2t_remove_bufs(ctx, 0, 1), -EBUSY);
	KUNIT_EXPECT_EQ(test, vb2t_state(ctx, 0), VB2_BUF_STATE_DONE);

	/* Everything still works. */
	KUNIT_EXPECT_EQ(test, vb2t_dqbuf_index(ctx, &index, NULL), 0);
	KUNIT_EXPECT_EQ(test, index, 0);
	KUNIT_EXPECT_EQ(test, vb2t_qbuf_mmap(ctx, 0), 0);
	KUNIT_EXPECT_EQ(test, vb2t_qbuf_mmap(ctx, 2), 0);
	KUNIT_EXPECT_EQ(test, vb2t_owned(ctx), 2);
}

static struct kunit_case vb2_state_cases[] = {
	KUNIT_CASE(vb2_state_prepare_then_queue),
	KUNIT_CASE(vb2_state_active_done_error),
	KUNIT_CASE(vb2_state_discard_done),
	KUNIT_CASE(vb2_state_cancel_queued),
	KUNIT_CASE(vb2_state_illegal_refused),
	KUNIT_CASE(vb2_state_table),
	{}
};

static struct kunit_suite vb2_state_suite = {
	.name = "videobuf2-states",
	.test_cases = vb2_state_cases,
};

/* ---------------------------------------------------------------------- */
/* Callback order of a full cycle                                         */
/* ---------------------------------------------------------------------- */

/* What each buffer and the queue went through in the cycles below. */
static void expect_cycle_logs(struct kunit *test, struct vb2t_ctx *ctx)
{
	KUNIT_EXPECT_STREQ(test, vb2t_log_of(ctx, -1),
			   "queue_setup prepare_streaming start_streaming stop_streaming unprepare_streaming");
	/* Buffer 0 was dequeued before STREAMOFF, buffer 1 was cancelled. */
	KUNIT_EXPECT_STREQ(test, vb2t_log_of(ctx, 0),
			   "alloc buf_init buf_prepare buf_queue buf_finish buf_cleanup put free");
	KUNIT_EXPECT_STREQ(test, vb2t_log_of(ctx, 1),
			   "alloc buf_init buf_prepare buf_queue buf_finish buf_cleanup put free");
}

static void vb2_cycle_v4l2(struct kunit *test)
{
	struct vb2t_ctx *ctx = vb2t_ctx_simple(test, CAP);
	unsigned int count = 2, index;

	KUNIT_ASSERT_EQ(test, vb2t_reqbufs(ctx, V4L2_MEMORY_MMAP, &count), 0);
	KUNIT_EXPECT_STREQ(test, vb2t_log_str(ctx),
			   "queue_setup alloc(0) buf_init(0) alloc(1) buf_init(1)");

	vb2t_log_reset(ctx);
	qbuf_range(test, ctx, 0, 2);
	KUNIT_EXPECT_STREQ(test, vb2t_log_str(ctx), "buf_prepare(0) buf_prepare(1)");

	vb2t_log_reset(ctx);
	KUNIT_ASSERT_EQ(test, vb2t_streamon(ctx), 0);
	KUNIT_EXPECT_STREQ(test, vb2t_log_str(ctx),
			   "prepare_streaming buf_queue(0) buf_queue(1) start_streaming");
	KUNIT_EXPECT_EQ(test, ctx->start_count, 2);

	vb2t_log_reset(ctx);
	KUNIT_ASSERT_TRUE(test, vb2t_complete_next(ctx, VB2_BUF_STATE_DONE));
	KUNIT_EXPECT_STREQ(test, vb2t_log_str(ctx), "");
	KUNIT_EXPECT_EQ(test, vb2t_dqbuf_index(ctx, &index, NULL), 0);
	KUNIT_EXPECT_EQ(test, index, 0);
	KUNIT_EXPECT_STREQ(test, vb2t_log_str(ctx), "buf_finish(0)");

	vb2t_log_reset(ctx);
	KUNIT_EXPECT_EQ(test, vb2t_streamoff(ctx), 0);
	KUNIT_EXPECT_STREQ(test, vb2t_log_str(ctx),
			   "stop_streaming unprepare_streaming buf_finish(1)");

	count = 0;
	KUNIT_EXPECT_EQ(test, vb2t_reqbufs(ctx, V4L2_MEMORY_MMAP, &count), 0);
	KUNIT_EXPECT_EQ(test, vb2t_count(ctx, VB2T_BUF_CLEANUP), 2);
	KUNIT_EXPECT_EQ(test, vb2t_count(ctx, VB2T_PUT), 2);
	KUNIT_EXPECT_EQ(test, vb2t_count(ctx, VB2T_FREE), 2);
	KUNIT_EXPECT_EQ(test, ctx->live_mem, 0);
	KUNIT_EXPECT_FALSE(test, vb2_is_busy(&ctx->q));

	/* Memory syncs pair up: one prepare and one finish per plane use. */
	KUNIT_EXPECT_EQ(test, vb2t_count(ctx, VB2T_PREPARE), 2);
	KUNIT_EXPECT_EQ(test, vb2t_count(ctx, VB2T_FINISH), 2);
}

static void vb2_cycle_v4l2_per_buffer(struct kunit *test)
{
	struct vb2t_ctx *ctx = vb2t_ctx_simple(test, CAP);
	unsigned int count = 2;

	KUNIT_ASSERT_EQ(test, vb2t_reqbufs(ctx, V4L2_MEMORY_MMAP, &count), 0);
	qbuf_range(test, ctx, 0, 2);
	KUNIT_ASSERT_EQ(test, vb2t_streamon(ctx), 0);
	KUNIT_ASSERT_TRUE(test, vb2t_complete_next(ctx, VB2_BUF_STATE_DONE));
	KUNIT_EXPECT_EQ(test, vb2t_dqbuf_index(ctx, NULL, NULL), 0);
	KUNIT_EXPECT_EQ(test, vb2t_streamoff(ctx), 0);
	count = 0;
	KUNIT_EXPECT_EQ(test, vb2t_reqbufs(ctx, V4L2_MEMORY_MMAP, &count), 0);
	expect_cycle_logs(test, ctx);
}

static void vb2_cycle_core(struct kunit *test)
{
	struct vb2t_config cfg = { .type = CAP, .core_only = true };
	struct vb2t_ctx *ctx = vb2t_ctx_create(test, &cfg);
	unsigned int count = 2, index;

	KUNIT_ASSERT_EQ(test, vb2t_core_reqbufs(ctx, VB2_MEMORY_MMAP, &count), 0);
	KUNIT_ASSERT_EQ(test, count, 2);
	KUNIT_EXPECT_EQ(test, vb2t_core_qbuf(ctx, 0, NULL), 0);
	KUNIT_EXPECT_EQ(test, vb2t_core_qbuf(ctx, 1, NULL), 0);
	KUNIT_EXPECT_STREQ(test, vb2t_log_str(ctx),
			   "queue_setup alloc(0) buf_init(0) alloc(1) buf_init(1) buf_prepare(0) buf_prepare(1)");
	KUNIT_ASSERT_EQ(test, vb2t_core_streamon(ctx), 0);
	KUNIT_ASSERT_TRUE(test, vb2t_complete_next(ctx, VB2_BUF_STATE_DONE));
	KUNIT_EXPECT_EQ(test, vb2t_core_dqbuf(ctx, &index), 0);
	KUNIT_EXPECT_EQ(test, index, 0);
	KUNIT_EXPECT_EQ(test, vb2t_core_streamoff(ctx), 0);
	count = 0;
	KUNIT_EXPECT_EQ(test, vb2t_core_reqbufs(ctx, VB2_MEMORY_MMAP, &count), 0);
	expect_cycle_logs(test, ctx);
	KUNIT_EXPECT_EQ(test, vb2_get_num_buffers(&ctx->q), 0);
}

/* Every plane is allocated and freed; buf_init sees all of them. */
static void vb2_cycle_multiplanar(struct kunit *test)
{
	struct vb2t_config cfg = { .type = CAP_MP, .num_planes = 3 };
	struct vb2t_ctx *ctx = vb2t_ctx_create(test, &cfg);
	unsigned int count = 1;

	KUNIT_ASSERT_EQ(test, vb2t_reqbufs(ctx, V4L2_MEMORY_MMAP, &count), 0);
	KUNIT_EXPECT_STREQ(test, vb2t_log_str(ctx),
			   "queue_setup alloc(0) alloc(0) alloc(0) buf_init(0)");
	KUNIT_EXPECT_EQ(test, vb2t_qbuf_mmap(ctx, 0), 0);
	KUNIT_EXPECT_EQ(test, vb2t_count(ctx, VB2T_PREPARE), 3);
	KUNIT_ASSERT_EQ(test, vb2t_streamon(ctx), 0);
	KUNIT_ASSERT_TRUE(test, vb2t_complete_next(ctx, VB2_BUF_STATE_DONE));
	KUNIT_EXPECT_EQ(test, vb2t_count(ctx, VB2T_FINISH), 3);
	vb2t_release(ctx);
	KUNIT_EXPECT_EQ(test, vb2t_count(ctx, VB2T_PUT), 3);
}

static struct kunit_case vb2_cycle_cases[] = {
	KUNIT_CASE(vb2_cycle_v4l2),
	KUNIT_CASE(vb2_cycle_v4l2_per_buffer),
	KUNIT_CASE(vb2_cycle_core),
	KUNIT_CASE(vb2_cycle_multiplanar),
	{}
};

static struct kunit_suite vb2_cycle_suite = {
	.name = "videobuf2-cycle",
	.test_cases = vb2_cycle_cases,
};

/* ---------------------------------------------------------------------- */
/* Failing callbacks                                                      */
/* ---------------------------------------------------------------------- */

static void vb2_fail_queue_setup(struct kunit *test)
{
	struct vb2t_ctx *ctx = vb2t_ctx_simple(test, CAP);
	unsigned int count = 4;

	vb2t_fail(ctx, VB2T_QUEUE_SETUP, 1, -EPERM);
	KUNIT_EXPECT_EQ(test, vb2t_reqbufs(ctx, V4L2_MEMORY_MMAP, &count), -EPERM);
	KUNIT_EXPECT_EQ(test, vb2_get_num_buffers(&ctx->q), 0);
	KUNIT_EXPECT_EQ(test, vb2t_count(ctx, VB2T_ALLOC), 0);
	KUNIT_EXPECT_FALSE(test, vb2_is_busy(&ctx->q));

	vb2t_fail(ctx, VB2T_QUEUE_SETUP, 1, -EPERM);
	KUNIT_EXPECT_EQ(test, vb2t_create_bufs(ctx, V4L2_MEMORY_MMAP, 2,
					       PAGE_SIZE, NULL, NULL), -EPERM);
	KUNIT_EXPECT_EQ(test, vb2_get_num_buffers(&ctx->q), 0);

	reqbufs_n(test, ctx, 4);
}

/* buf_init fails on the third buffer: two remain, the driver agrees. */
static void vb2_fail_buf_init_kth(struct kunit *test)
{
	struct vb2t_ctx *ctx = vb2t_ctx_simple(test, CAP);
	unsigned int count = 4;

	vb2t_fail(ctx, VB2T_BUF_INIT, 3, -EIO);
	KUNIT_ASSERT_EQ(test, vb2t_reqbufs(ctx, V4L2_MEMORY_MMAP, &count), 0);
	KUNIT_EXPECT_EQ(test, count, 2);
	KUNIT_EXPECT_EQ(test, vb2_get_num_buffers(&ctx->q), 2);
	KUNIT_EXPECT_NOT_NULL(test, vb2_get_buffer(&ctx->q, 1));
	KUNIT_EXPECT_NULL(test, vb2_get_buffer(&ctx->q, 2));
	/* The driver was asked again, with the smaller count. */
	KUNIT_EXPECT_EQ(test, vb2t_count(ctx, VB2T_QUEUE_SETUP), 2);
	/* The memory of the failed buffer went, without buf_cleanup. */
	KUNIT_EXPECT_STREQ(test, vb2t_log_of(ctx, 2), "alloc buf_init put free");
	KUNIT_EXPECT_EQ(test, vb2t_count(ctx, VB2T_BUF_CLEANUP), 0);
	KUNIT_EXPECT_EQ(test, ctx->live_mem, 2);

	/* The two buffers work. */
	qbuf_range(test, ctx, 0, 2);
	KUNIT_EXPECT_EQ(test, vb2t_streamon(ctx), 0);
	KUNIT_EXPECT_EQ(test, ctx->start_count, 2);
}

/* Failing on the first buffer leaves nothing behind. */
static void vb2_fail_buf_init_first(struct kunit *test)
{
	struct vb2t_ctx *ctx = vb2t_ctx_simple(test, CAP);
	unsigned int count = 4;

	vb2t_fail(ctx, VB2T_BUF_INIT, 1, -EIO);
	KUNIT_EXPECT_EQ(test, vb2t_reqbufs(ctx, V4L2_MEMORY_MMAP, &count), -ENOMEM);
	KUNIT_EXPECT_EQ(test, vb2_get_num_buffers(&ctx->q), 0);
	KUNIT_EXPECT_EQ(test, ctx->live_mem, 0);
	KUNIT_EXPECT_EQ(test, vb2t_count(ctx, VB2T_BUF_CLEANUP), 0);
	KUNIT_EXPECT_FALSE(test, vb2_is_busy(&ctx->q));
	reqbufs_n(test, ctx, 4);
}

/* CREATE_BUFS: buf_init fails on the 2nd of 3 new buffers. */
static void vb2_fail_buf_init_create(struct kunit *test)
{
	struct vb2t_ctx *ctx = vb2t_ctx_simple(test, CAP);
	unsigned int first = 99, created = 0;

	reqbufs_n(test, ctx, 2);
	vb2t_fail(ctx, VB2T_BUF_INIT, 2, -EIO);
	KUNIT_EXPECT_EQ(test, vb2t_create_bufs(ctx, V4L2_MEMORY_MMAP, 3, PAGE_SIZE,
					       &first, &created), 0);
	KUNIT_EXPECT_EQ(test, first, 2);
	KUNIT_EXPECT_EQ(test, created, 1);
	KUNIT_EXPECT_EQ(test, vb2_get_num_buffers(&ctx->q), 3);
	KUNIT_EXPECT_NULL(test, vb2_get_buffer(&ctx->q, 3));
	KUNIT_EXPECT_EQ(test, ctx->live_mem, 3);
	qbuf_range(test, ctx, 0, 3);
}

/* The allocator fails on the 2nd plane of the 1st buffer. */
static void vb2_fail_alloc(struct kunit *test)
{
	struct vb2t_config cfg = { .type = CAP_MP, .num_planes = 2 };
	struct vb2t_ctx *ctx = vb2t_ctx_create(test, &cfg);
	unsigned int count = 2;

	vb2t_fail(ctx, VB2T_ALLOC, 2, -ENOMEM);
	KUNIT_EXPECT_EQ(test, vb2t_reqbufs(ctx, V4L2_MEMORY_MMAP, &count), -ENOMEM);
	KUNIT_EXPECT_EQ(test, vb2_get_num_buffers(&ctx->q), 0);
	KUNIT_EXPECT_EQ(test, ctx->live_mem, 0);
	KUNIT_EXPECT_EQ(test, vb2t_count(ctx, VB2T_BUF_INIT), 0);

	/* Only the 2nd buffer fails: one buffer is enough for REQBUFS. */
	vb2t_fail(ctx, VB2T_ALLOC, 3, -ENOMEM);
	count = 2;
	KUNIT_EXPECT_EQ(test, vb2t_reqbufs(ctx, V4L2_MEMORY_MMAP, &count), 0);
	KUNIT_EXPECT_EQ(test, count, 1);
	KUNIT_EXPECT_EQ(test, ctx->live_mem, 2);
}

static void vb2_fail_buf_prepare(struct kunit *test)
{
	struct vb2t_ctx *ctx = vb2t_ctx_simple(test, CAP);
	struct v4l2_buffer b;

	reqbufs_n(test, ctx, 2);
	vb2t_fail(ctx, VB2T_BUF_PREPARE, 1, -EINVAL);
	KUNIT_EXPECT_EQ(test, vb2t_qbuf_mmap(ctx, 0), -EINVAL);
	KUNIT_EXPECT_EQ(test, vb2t_state(ctx, 0), VB2_BUF_STATE_DEQUEUED);
	KUNIT_EXPECT_EQ(test, query_flags(test, ctx, 0) &
			(V4L2_BUF_FLAG_PREPARED | V4L2_BUF_FLAG_QUEUED), 0);
	/* A failed prepare is not finished, and the memory is not synced. */
	KUNIT_EXPECT_EQ(test, vb2t_count(ctx, VB2T_BUF_FINISH), 0);
	KUNIT_EXPECT_EQ(test, vb2t_count(ctx, VB2T_PREPARE), 0);

	vb2t_fail(ctx, VB2T_BUF_PREPARE, 1, -EIO);
	vb2t_init_buffer(ctx, &b, NULL, 1);
	KUNIT_EXPECT_EQ(test, vb2t_prepare_buf(ctx, &b), -EIO);
	KUNIT_EXPECT_EQ(test, vb2t_state(ctx, 1), VB2_BUF_STATE_DEQUEUED);

	qbuf_range(test, ctx, 0, 2);
	KUNIT_EXPECT_EQ(test, vb2t_streamon(ctx), 0);
	KUNIT_EXPECT_EQ(test, vb2t_owned(ctx), 2);
}

static void vb2_fail_prepare_streaming(struct kunit *test)
{
	struct vb2t_ctx *ctx = vb2t_ctx_simple(test, CAP);

	reqbufs_n(test, ctx, 2);
	qbuf_range(test, ctx, 0, 2);
	vb2t_fail(ctx, VB2T_PREPARE_STREAMING, 1, -ENOSPC);
	KUNIT_EXPECT_EQ(test, vb2t_streamon(ctx), -ENOSPC);
	KUNIT_EXPECT_FALSE(test, vb2_is_streaming(&ctx->q));
	KUNIT_EXPECT_EQ(test, vb2t_count(ctx, VB2T_BUF_QUEUE), 0);
	KUNIT_EXPECT_EQ(test, vb2t_count(ctx, VB2T_UNPREPARE_STREAMING), 0);
	KUNIT_EXPECT_EQ(test, vb2t_streamon(ctx), 0);
	KUNIT_EXPECT_EQ(test, vb2t_owned(ctx), 2);
}

/* The buffers come back QUEUED and a later STREAMON works. */
static void vb2_fail_start_streaming(struct kunit *test)
{
	struct vb2t_ctx *ctx = vb2t_ctx_simple(test, CAP);
	unsigned int i;

	reqbufs_n(test, ctx, 3);
	qbuf_range(test, ctx, 0, 3);
	vb2t_fail(ctx, VB2T_START_STREAMING, 1, -EPIPE);
	KUNIT_EXPECT_EQ(test, vb2t_streamon(ctx), -EPIPE);
	KUNIT_EXPECT_FALSE(test, vb2_is_streaming(&ctx->q));
	KUNIT_EXPECT_FALSE(test, vb2_start_streaming_called(&ctx->q));
	KUNIT_EXPECT_EQ(test, atomic_read(&ctx->q.owned_by_drv_count), 0);
	for (i = 0; i < 3; i++) {
		KUNIT_EXPECT_EQ(test, vb2t_state(ctx, i), VB2_BUF_STATE_QUEUED);
		KUNIT_EXPECT_TRUE(test, query_flags(test, ctx, i) &
				  V4L2_BUF_FLAG_QUEUED);
	}
	/* STREAMON balanced prepare_streaming with unprepare_streaming. */
	KUNIT_EXPECT_EQ(test, vb2t_count(ctx, VB2T_UNPREPARE_STREAMING), 1);
	KUNIT_EXPECT_EQ(test, vb2t_count(ctx, VB2T_BUF_FINISH), 0);

	vb2t_log_reset(ctx);
	KUNIT_EXPECT_EQ(test, vb2t_streamon(ctx), 0);
	KUNIT_EXPECT_STREQ(test, vb2t_log_str(ctx),
			   "prepare_streaming buf_queue(0) buf_queue(1) buf_queue(2) start_streaming");
	KUNIT_EXPECT_EQ(test, ctx->start_count, 3);
	KUNIT_ASSERT_TRUE(test, vb2t_complete_next(ctx, VB2_BUF_STATE_DONE));
	KUNIT_EXPECT_EQ(test, vb2t_dqbuf_index(ctx, &i, NULL), 0);
	KUNIT_EXPECT_EQ(test, i, 0);
}

/*
 * The deferred start_streaming of a QBUF fails: nothing is lost, and that
 * QBUF leaves its buffer as it found it.
 */
static void vb2_fail_start_streaming_deferred(struct kunit *test)
{
	struct vb2t_config cfg = { .type = CAP, .min_queued_buffers = 2 };
	struct vb2t_ctx *ctx = vb2t_ctx_create(test, &cfg);
	unsigned int count = 3;

	KUNIT_ASSERT_EQ(test, vb2t_reqbufs(ctx, V4L2_MEMORY_MMAP, &count), 0);
	KUNIT_ASSERT_EQ(test, vb2t_streamon(ctx), 0);
	KUNIT_ASSERT_EQ(test, vb2t_qbuf_mmap(ctx, 0), 0);
	vb2t_fail(ctx, VB2T_START_STREAMING, 1, -EPIPE);
	KUNIT_EXPECT_EQ(test, vb2t_qbuf_mmap(ctx, 1), -EPIPE);
	KUNIT_EXPECT_EQ(test, vb2t_state(ctx, 0), VB2_BUF_STATE_QUEUED);
	KUNIT_EXPECT_EQ(test, vb2t_state(ctx, 1), VB2_BUF_STATE_DEQUEUED);
	KUNIT_EXPECT_EQ(test, vb2t_owned(ctx), 0);
	KUNIT_EXPECT_FALSE(test, vb2_start_streaming_called(&ctx->q));

	/* STREAMOFF gives both back; streaming again works. */
	KUNIT_EXPECT_EQ(test, vb2t_streamoff(ctx), 0);
	KUNIT_EXPECT_EQ(test, vb2t_state(ctx, 1), VB2_BUF_STATE_DEQUEUED);
	KUNIT_ASSERT_EQ(test, vb2t_streamon(ctx), 0);
	qbuf_range(test, ctx, 0, 2);
	KUNIT_EXPECT_TRUE(test, vb2_start_streaming_called(&ctx->q));
	KUNIT_EXPECT_EQ(test, ctx->start_count, 2);
}

/*
 * queue_setup answers REQBUFS with a plane of 0 bytes. dvb-core passes the
 * size of DMX_REQBUFS through, so this comes from user space: -EINVAL, and
 * no warning (the log check fails the run on one).
 */
static void vb2_fail_queue_setup_empty_plane(struct kunit *test)
{
	struct vb2t_ctx *ctx = vb2t_ctx_simple(test, CAP);
	const unsigned int zero[1] = { 0 };
	unsigned int count = 2, first;

	ctx->sizes[0] = 0;
	KUNIT_EXPECT_EQ(test, vb2t_reqbufs(ctx, V4L2_MEMORY_MMAP, &count), -EINVAL);
	KUNIT_EXPECT_EQ(test, vb2_get_num_buffers(&ctx->q), 0);
	KUNIT_EXPECT_EQ(test, ctx->q.memory, VB2_MEMORY_UNKNOWN);
	KUNIT_EXPECT_EQ(test, vb2t_count(ctx, VB2T_ALLOC), 0);

	/* CREATE_BUFS of 0 bytes, which this driver accepts: the core not. */
	count = 2;
	mutex_lock(&ctx->mutex);
	KUNIT_EXPECT_EQ(test, vb2_core_create_bufs(&ctx->q, VB2_MEMORY_MMAP, 0,
						   &count, 1, zero, &first),
			-EINVAL);
	mutex_unlock(&ctx->mutex);
	KUNIT_EXPECT_EQ(test, vb2t_count(ctx, VB2T_QUEUE_SETUP), 2);
	ctx->sizes[0] = PAGE_SIZE;

	/* Nor a driver that asks for no plane at all. */
	ctx->num_planes = 0;
	count = 2;
	KUNIT_EXPECT_EQ(test, vb2t_reqbufs(ctx, V4L2_MEMORY_MMAP, &count), -EINVAL);
	ctx->num_planes = 1;
	KUNIT_EXPECT_EQ(test, vb2_get_num_buffers(&ctx->q), 0);
	KUNIT_EXPECT_EQ(test, vb2t_count(ctx, VB2T_ALLOC), 0);
	reqbufs_n(test, ctx, 2);
}

/*
 * A driver whose start_streaming fails without returning its buffers: the
 * core warns and takes them back as QUEUED, so that STREAMON can be
 * retried.
 */
static void vb2_fail_start_streaming_keeps_buffers(struct kunit *test)
{
	struct vb2t_ctx *ctx = vb2t_ctx_simple(test, CAP);
	unsigned int i;
	int ret;

	reqbufs_n(test, ctx, 2);
	qbuf_range(test, ctx, 0, 2);
	ctx->start_returns_queued = false;
	vb2t_fail(ctx, VB2T_START_STREAMING, 1, -EIO);
	vb2t_expect_warning_begin(test);
	ret = vb2t_streamon(ctx);
	vb2t_expect_warning_end(test);
	ctx->start_returns_queued = true;
	KUNIT_EXPECT_EQ(test, ret, -EIO);
	KUNIT_EXPECT_EQ(test, atomic_read(&ctx->q.owned_by_drv_count), 0);
	KUNIT_EXPECT_FALSE(test, vb2_is_streaming(&ctx->q));
	for (i = 0; i < 2; i++)
		KUNIT_EXPECT_EQ(test, vb2t_state(ctx, i), VB2_BUF_STATE_QUEUED);
	KUNIT_EXPECT_EQ(test, vb2t_streamon(ctx), 0);
	KUNIT_EXPECT_EQ(test, vb2t_owned(ctx), 2);
}

static struct kunit_case vb2_fail_cases[] = {
	KUNIT_CASE(vb2_fail_queue_setup),
	KUNIT_CASE(vb2_fail_queue_setup_empty_plane),
	KUNIT_CASE(vb2_fail_buf_init_kth),
	KUNIT_CASE(vb2_fail_buf_init_first),
	KUNIT_CASE(vb2_fail_buf_init_create),
	KUNIT_CASE(vb2_fail_alloc),
	KUNIT_CASE(vb2_fail_buf_prepare),
	KUNIT_CASE(vb2_fail_prepare_streaming),
	KUNIT_CASE(vb2_fail_start_streaming),
	KUNIT_CASE(vb2_fail_start_streaming_deferred),
	KUNIT_CASE(vb2_fail_start_streaming_keeps_buffers),
	{}
};

static struct kunit_suite vb2_fail_suite = {
	.name = "videobuf2-failures",
	.test_cases = vb2_fail_cases,
};

/* ---------------------------------------------------------------------- */
/* Streaming                                                              */
/* ---------------------------------------------------------------------- */

static void vb2_stream_min_queued(struct kunit *test)
{
	struct vb2t_config cfg = { .type = CAP, .min_queued_buffers = 3 };
	struct vb2t_ctx *ctx = vb2t_ctx_create(test, &cfg);
	unsigned int count = 1;

	/* REQBUFS allocates at least min_queued_buffers + 1. */
	KUNIT_ASSERT_EQ(test, vb2t_reqbufs(ctx, V4L2_MEMORY_MMAP, &count), 0);
	KUNIT_EXPECT_GE(test, count, 4);

	KUNIT_ASSERT_EQ(test, vb2t_streamon(ctx), 0);
	KUNIT_EXPECT_TRUE(test, vb2_is_streaming(&ctx->q));
	qbuf_range(test, ctx, 0, 2);
	KUNIT_EXPECT_EQ(test, vb2t_count(ctx, VB2T_START_STREAMING), 0);
	KUNIT_EXPECT_EQ(test, vb2t_count(ctx, VB2T_BUF_QUEUE), 0);
	KUNIT_EXPECT_FALSE(test, vb2_start_streaming_called(&ctx->q));

	vb2t_log_reset(ctx);
	qbuf_range(test, ctx, 2, 1);
	KUNIT_EXPECT_STREQ(test, vb2t_log_str(ctx),
			   "buf_prepare(2) buf_queue(0) buf_queue(1) buf_queue(2) start_streaming");
	KUNIT_EXPECT_EQ(test, ctx->start_count, 3);

	/* Now every QBUF goes to the driver at once. */
	vb2t_log_reset(ctx);
	qbuf_range(test, ctx, 3, 1);
	KUNIT_EXPECT_STREQ(test, vb2t_log_str(ctx), "buf_prepare(3) buf_queue(3)");
}

/* STREAMON needs at least min_queued_buffers buffers. */
static void vb2_stream_min_queued_allocated(struct kunit *test)
{
	struct vb2t_config cfg = { .type = CAP, .min_queued_buffers = 3 };
	struct vb2t_ctx *ctx = vb2t_ctx_create(test, &cfg);

	KUNIT_EXPECT_EQ(test, vb2t_streamon(ctx), -EINVAL);
	KUNIT_ASSERT_EQ(test, vb2t_create_bufs(ctx, V4L2_MEMORY_MMAP, 2,
					       PAGE_SIZE, NULL, NULL), 0);
	KUNIT_EXPECT_EQ(test, vb2t_streamon(ctx), -EINVAL);
	KUNIT_EXPECT_FALSE(test, vb2_is_streaming(&ctx->q));
	KUNIT_ASSERT_EQ(test, vb2t_create_bufs(ctx, V4L2_MEMORY_MMAP, 1,
					       PAGE_SIZE, NULL, NULL), 0);
	KUNIT_EXPECT_EQ(test, vb2t_streamon(ctx), 0);
}

static void vb2_stream_out_of_order(struct kunit *test)
{
	static const unsigned int order[] = { 2, 0, 3, 1 };
	struct vb2t_ctx *ctx = vb2t_ctx_simple(test, CAP);
	unsigned int i, index;

	reqbufs_n(test, ctx, 4);
	qbuf_range(test, ctx, 0, 4);
	KUNIT_ASSERT_EQ(test, vb2t_streamon(ctx), 0);
	for (i = 0; i < ARRAY_SIZE(order); i++)
		KUNIT_ASSERT_TRUE(test, vb2t_complete_index(ctx, order[i],
							    VB2_BUF_STATE_DONE));
	for (i = 0; i < ARRAY_SIZE(order); i++) {
		KUNIT_EXPECT_EQ(test, vb2t_dqbuf_index(ctx, &index, NULL), 0);
		KUNIT_EXPECT_EQ(test, index, order[i]);
	}
	KUNIT_EXPECT_EQ(test, vb2t_dqbuf_index(ctx, &index, NULL), -EAGAIN);
}

static void vb2_stream_error_flag(struct kunit *test)
{
	struct vb2t_ctx *ctx = vb2t_ctx_simple(test, CAP);
	unsigned int index;
	u32 flags;

	reqbufs_n(test, ctx, 2);
	qbuf_range(test, ctx, 0, 2);
	KUNIT_ASSERT_EQ(test, vb2t_streamon(ctx), 0);
	KUNIT_ASSERT_TRUE(test, vb2t_complete_index(ctx, 1, VB2_BUF_STATE_ERROR));
	KUNIT_ASSERT_TRUE(test, vb2t_complete_index(ctx, 0, VB2_BUF_STATE_DONE));
	KUNIT_EXPECT_EQ(test, vb2t_dqbuf_index(ctx, &index, &flags), 0);
	KUNIT_EXPECT_EQ(test, index, 1);
	KUNIT_EXPECT_TRUE(test, flags & V4L2_BUF_FLAG_ERROR);
	KUNIT_EXPECT_EQ(test, vb2t_dqbuf_index(ctx, &index, &flags), 0);
	KUNIT_EXPECT_EQ(test, index, 0);
	KUNIT_EXPECT_FALSE(test, flags & V4L2_BUF_FLAG_ERROR);
	/* The failed buffer can be queued again. */
	KUNIT_EXPECT_EQ(test, vb2t_qbuf_mmap(ctx, 1), 0);
	KUNIT_EXPECT_EQ(test, vb2t_owned(ctx), 1);
}

/**
 * struct vb2t_irq - complete buffers from a hard interrupt timer
 * @timer:	the timer.
 * @ctx:	the context.
 * @state:	the completion state.
 * @n:		buffers to complete.
 * @atomic:	every callback ran with interrupts off.
 * @done:	signalled when the timer ran.
 */
struct vb2t_irq {
	struct hrtimer		timer;
	struct vb2t_ctx		*ctx;
	enum vb2_buffer_state	state;
	unsigned int		n;
	bool			atomic;
	struct completion	done;
};

static enum hrtimer_restart vb2t_irq_fn(struct hrtimer *t)
{
	struct vb2t_irq *irq = container_of(t, struct vb2t_irq, timer);
	unsigned int i;

	irq->atomic = irqs_disabled();
	for (i = 0; i < irq->n; i++)
		vb2t_complete_next(irq->ctx, irq->state);
	complete(&irq->done);
	return HRTIMER_NORESTART;
}

static struct vb2t_irq *vb2t_irq_alloc(struct kunit *test)
{
	struct vb2t_irq *irq = kunit_kzalloc(test, sizeof(*irq), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, irq);
	return irq;
}

static void vb2t_irq_start(struct vb2t_irq *irq, struct vb2t_ctx *ctx,
			   unsigned int n, unsigned int ms,
			   enum hrtimer_restart (*fn)(struct hrtimer *t))
{
	irq->ctx = ctx;
	irq->n = n;
	irq->state = VB2_BUF_STATE_DONE;
	init_completion(&irq->done);
	hrtimer_init(&irq->timer, CLOCK_MONOTONIC, HRTIMER_MODE_REL_HARD);
	irq->timer.function = fn ? fn : vb2t_irq_fn;
	hrtimer_start(&irq->timer, ms_to_ktime(ms), HRTIMER_MODE_REL_HARD);
}

static void vb2_stream_complete_in_irq(struct kunit *test)
{
	struct vb2t_ctx *ctx = vb2t_ctx_simple(test, CAP);
	struct vb2t_irq *irq = vb2t_irq_alloc(test);
	unsigned long left;
	unsigned int index;

	reqbufs_n(test, ctx, 3);
	qbuf_range(test, ctx, 0, 3);
	KUNIT_ASSERT_EQ(test, vb2t_streamon(ctx), 0);
	vb2t_irq_start(irq, ctx, 3, 1, NULL);
	left = wait_for_completion_timeout(&irq->done, 5 * HZ);
	hrtimer_cancel(&irq->timer);
	KUNIT_ASSERT_GT(test, left, 0);
	KUNIT_EXPECT_TRUE(test, irq->atomic);
	KUNIT_EXPECT_EQ(test, vb2t_owned(ctx), 0);
	for (index = 0; index < 3; index++)
		KUNIT_EXPECT_EQ(test, vb2t_state(ctx, index), VB2_BUF_STATE_DONE);
	KUNIT_EXPECT_EQ(test, vb2t_dqbuf_index(ctx, &index, NULL), 0);
	KUNIT_EXPECT_EQ(test, vb2t_dqbuf_index(ctx, &index, NULL), 0);
	KUNIT_EXPECT_EQ(test, vb2t_dqbuf_index(ctx, &index, NULL), 0);
	KUNIT_EXPECT_EQ(test, index, 2);
}

/* A blocking DQBUF releases the queue lock while it waits. */
static void vb2_stream_blocking_dqbuf(struct kunit *test)
{
	struct vb2t_ctx *ctx = vb2t_ctx_simple(test, CAP);
	struct vb2t_waiter *w;

	reqbufs_n(test, ctx, 2);
	qbuf_range(test, ctx, 0, 2);
	KUNIT_ASSERT_EQ(test, vb2t_streamon(ctx), 0);
	KUNIT_ASSERT_TRUE_MSG(test, vb2t_start_waiter(test, ctx, &w),
			      "DQBUF did not sleep");
	/* The lock is free while it sleeps: take it, complete a buffer. */
	KUNIT_EXPECT_EQ(test, vb2t_count(ctx, VB2T_WAIT_PREPARE), 1);
	KUNIT_ASSERT_TRUE(test, vb2t_complete_next(ctx, VB2_BUF_STATE_DONE));
	KUNIT_EXPECT_GT(test, wait_for_completion_timeout(&w->done, 5 * HZ), 0);
	KUNIT_EXPECT_EQ(test, w->ret, 0);
	KUNIT_EXPECT_EQ(test, w->index, 0);
	KUNIT_EXPECT_EQ(test, vb2t_count(ctx, VB2T_WAIT_FINISH), 1);
}

/* STREAMOFF while the driver holds buffers: all come back DEQUEUED. */
static void vb2_stream_streamoff_reclaims(struct kunit *test)
{
	struct vb2t_ctx *ctx = vb2t_ctx_simple(test, CAP);
	unsigned int i;

	reqbufs_n(test, ctx, 4);
	qbuf_range(test, ctx, 0, 3);
	KUNIT_ASSERT_EQ(test, vb2t_streamon(ctx), 0);
	KUNIT_ASSERT_TRUE(test, vb2t_complete_next(ctx, VB2_BUF_STATE_DONE));
	KUNIT_EXPECT_EQ(test, vb2t_owned(ctx), 2);

	KUNIT_EXPECT_EQ(test, vb2t_streamoff(ctx), 0);
	KUNIT_EXPECT_EQ(test, vb2t_owned(ctx), 0);
	KUNIT_EXPECT_EQ(test, atomic_read(&ctx->q.owned_by_drv_count), 0);
	for (i = 0; i < 4; i++) {
		KUNIT_EXPECT_EQ(test, vb2t_state(ctx, i), VB2_BUF_STATE_DEQUEUED);
		KUNIT_EXPECT_EQ(test, query_flags(test, ctx, i) &
				(V4L2_BUF_FLAG_QUEUED | V4L2_BUF_FLAG_DONE), 0);
	}
	KUNIT_EXPECT_EQ(test, vb2t_count(ctx, VB2T_BUF_FINISH), 3);
	KUNIT_EXPECT_EQ(test, vb2t_dqbuf_index(ctx, &i, NULL), -EINVAL);

	/* And the queue streams again. */
	qbuf_range(test, ctx, 0, 4);
	KUNIT_ASSERT_EQ(test, vb2t_streamon(ctx), 0);
	KUNIT_EXPECT_EQ(test, ctx->start_count, 4);
}

static void vb2_stream_queue_error(struct kunit *test)
{
	struct vb2t_ctx *ctx = vb2t_ctx_simple(test, CAP);
	unsigned int index;

	reqbufs_n(test, ctx, 3);
	qbuf_range(test, ctx, 0, 2);
	KUNIT_ASSERT_EQ(test, vb2t_streamon(ctx), 0);
	KUNIT_ASSERT_TRUE(test, vb2t_complete_next(ctx, VB2_BUF_STATE_DONE));
	vb2_queue_error(&ctx->q);
	KUNIT_EXPECT_EQ(test, vb2t_qbuf_mmap(ctx, 2), -EIO);
	KUNIT_EXPECT_EQ(test, vb2t_state(ctx, 2), VB2_BUF_STATE_DEQUEUED);
	KUNIT_EXPECT_EQ(test, vb2t_dqbuf_index(ctx, &index, NULL), -EIO);
	KUNIT_EXPECT_EQ(test, vb2t_state(ctx, 0), VB2_BUF_STATE_DONE);

	/* STREAMOFF clears the error and returns everything. */
	KUNIT_EXPECT_EQ(test, vb2t_streamoff(ctx), 0);
	KUNIT_EXPECT_FALSE(test, ctx->q.error);
	qbuf_range(test, ctx, 0, 3);
	KUNIT_EXPECT_EQ(test, vb2t_streamon(ctx), 0);
	KUNIT_EXPECT_EQ(test, vb2t_owned(ctx), 3);
}

/* After a LAST capture buffer DQBUF says -EPIPE until STREAMOFF. */
static void vb2_stream_last_buffer(struct kunit *test)
{
	struct vb2t_ctx *ctx = vb2t_ctx_simple(test, CAP);
	struct vb2_buffer *vb;
	unsigned int index;
	u32 flags;

	reqbufs_n(test, ctx, 2);
	qbuf_range(test, ctx, 0, 2);
	KUNIT_ASSERT_EQ(test, vb2t_streamon(ctx), 0);
	vb = vb2_get_buffer(&ctx->q, 0);
	to_vb2_v4l2_buffer(vb)->flags |= V4L2_BUF_FLAG_LAST;
	KUNIT_ASSERT_TRUE(test, vb2t_complete_index(ctx, 0, VB2_BUF_STATE_DONE));
	KUNIT_EXPECT_EQ(test, vb2t_dqbuf_index(ctx, &index, &flags), 0);
	KUNIT_EXPECT_TRUE(test, flags & V4L2_BUF_FLAG_LAST);
	KUNIT_ASSERT_TRUE(test, vb2t_complete_index(ctx, 1, VB2_BUF_STATE_DONE));
	KUNIT_EXPECT_EQ(test, vb2t_dqbuf_index(ctx, &index, NULL), -EPIPE);
	KUNIT_EXPECT_EQ(test, vb2t_state(ctx, 1), VB2_BUF_STATE_DONE);
	KUNIT_EXPECT_EQ(test, vb2t_streamoff(ctx), 0);
	KUNIT_EXPECT_FALSE(test, ctx->q.last_buffer_dequeued);
	qbuf_range(test, ctx, 0, 2);
	KUNIT_ASSERT_EQ(test, vb2t_streamon(ctx), 0);
	KUNIT_ASSERT_TRUE(test, vb2t_complete_index(ctx, 1, VB2_BUF_STATE_DONE));
	KUNIT_EXPECT_EQ(test, vb2t_dqbuf_index(ctx, &index, &flags), 0);
	KUNIT_EXPECT_EQ(test, index, 1);
}

/* A buffer completed from buf_queue itself. */
static void vb2_stream_complete_from_buf_queue(struct kunit *test)
{
	struct vb2t_ctx *ctx = vb2t_ctx_simple(test, CAP);
	unsigned int index;

	reqbufs_n(test, ctx, 3);
	ctx->complete_in_queue = VB2_BUF_STATE_DONE;
	qbuf_range(test, ctx, 0, 2);
	KUNIT_ASSERT_EQ(test, vb2t_streamon(ctx), 0);
	qbuf_range(test, ctx, 2, 1);
	KUNIT_EXPECT_EQ(test, vb2t_owned(ctx), 0);
	KUNIT_EXPECT_EQ(test, vb2t_dqbuf_index(ctx, &index, NULL), 0);
	KUNIT_EXPECT_EQ(test, index, 0);
	KUNIT_EXPECT_EQ(test, vb2t_dqbuf_index(ctx, &index, NULL), 0);
	KUNIT_EXPECT_EQ(test, vb2t_dqbuf_index(ctx, &index, NULL), 0);
	KUNIT_EXPECT_EQ(test, index, 2);
}

/*
 * A driver that completes buffers in buf_queue and then fails
 * start_streaming broke its contract (buffers go back QUEUED), but the
 * queue must survive it: the completed buffers wait on the done list until
 * a STREAMON succeeds, and DQBUF refuses to hand them out before.
 */
static void vb2_stream_start_fails_after_done(struct kunit *test)
{
	struct vb2t_ctx *ctx = vb2t_ctx_simple(test, CAP);
	unsigned int index, none = 0;

	reqbufs_n(test, ctx, 3);
	ctx->complete_in_queue = VB2_BUF_STATE_DONE;
	qbuf_range(test, ctx, 0, 2);
	vb2t_fail(ctx, VB2T_START_STREAMING, 1, -EPIPE);
	KUNIT_EXPECT_EQ(test, vb2t_streamon(ctx), -EPIPE);
	KUNIT_EXPECT_FALSE(test, vb2_is_streaming(&ctx->q));
	KUNIT_EXPECT_EQ(test, vb2t_owned(ctx), 0);
	KUNIT_EXPECT_EQ(test, vb2t_state(ctx, 0), VB2_BUF_STATE_DONE);
	KUNIT_EXPECT_EQ(test, vb2t_dqbuf_index(ctx, &index, NULL), -EINVAL);

	KUNIT_EXPECT_EQ(test, vb2t_streamon(ctx), 0);
	KUNIT_EXPECT_EQ(test, vb2t_dqbuf_index(ctx, &index, NULL), 0);
	KUNIT_EXPECT_EQ(test, index, 0);
	KUNIT_EXPECT_EQ(test, vb2t_dqbuf_index(ctx, &index, NULL), 0);
	KUNIT_EXPECT_EQ(test, index, 1);
	KUNIT_EXPECT_EQ(test, vb2t_streamoff(ctx), 0);
	KUNIT_EXPECT_EQ(test, vb2t_reqbufs(ctx, V4L2_MEMORY_MMAP, &none), 0);
	KUNIT_EXPECT_EQ(test, vb2_get_num_buffers(&ctx->q), 0);
}

static struct kunit_case vb2_stream_cases[] = {
	KUNIT_CASE(vb2_stream_min_queued),
	KUNIT_CASE(vb2_stream_min_queued_allocated),
	KUNIT_CASE(vb2_stream_out_of_order),
	KUNIT_CASE(vb2_stream_error_flag),
	KUNIT_CASE(vb2_stream_complete_in_irq),
	KUNIT_CASE(vb2_stream_blocking_dqbuf),
	KUNIT_CASE(vb2_stream_streamoff_reclaims),
	KUNIT_CASE(vb2_stream_queue_error),
	KUNIT_CASE(vb2_stream_last_buffer),
	KUNIT_CASE(vb2_stream_complete_from_buf_queue),
	KUNIT_CASE(vb2_stream_start_fails_after_done),
	{}
};

static struct kunit_suite vb2_stream_suite = {
	.name = "videobuf2-streaming",
	.test_cases = vb2_stream_cases,
};

/* ---------------------------------------------------------------------- */
/* Buffers: mmap() lifetime, many buffers, holes                          */
/* ---------------------------------------------------------------------- */

static unsigned long mmap_buffer(struct kunit *test, struct vb2t_ctx *ctx,
				 struct file *file, unsigned int index)
{
	struct v4l2_buffer b;
	unsigned long addr;

	vb2t_init_buffer(ctx, &b, NULL, index);
	KUNIT_ASSERT_EQ(test, vb2t_querybuf(ctx, &b), 0);
	addr = kunit_vm_mmap(test, file, 0, b.length, PROT_READ | PROT_WRITE,
			     MAP_SHARED, b.m.offset);
	KUNIT_ASSERT_NE(test, addr, 0);
	KUNIT_ASSERT_FALSE(test, IS_ERR_VALUE(addr));
	return addr;
}

/* REQBUFS(0) while a buffer is mapped: the memory lives until munmap(). */
static void vb2_buffers_mmap_orphan(struct kunit *test)
{
	struct vb2t_ctx *ctx = vb2t_ctx_simple(test, CAP);
	struct file *file = vb2t_queue_file(ctx);
	unsigned int count = 0;
	unsigned long addr;
	u32 word = 0;
	u32 *vaddr;

	reqbufs_n(test, ctx, 2);
	addr = mmap_buffer(test, ctx, file, 1);
	KUNIT_EXPECT_EQ(test, vb2t_count(ctx, VB2T_MMAP), 1);
	KUNIT_EXPECT_TRUE(test, query_flags(test, ctx, 1) & V4L2_BUF_FLAG_MAPPED);
	KUNIT_EXPECT_FALSE(test, query_flags(test, ctx, 0) & V4L2_BUF_FLAG_MAPPED);

	/* The mapping shows the plane's memory. */
	vaddr = vb2_plane_vaddr(vb2_get_buffer(&ctx->q, 1), 0);
	KUNIT_ASSERT_NOT_NULL(test, vaddr);
	*vaddr = 0x5eed;
	KUNIT_EXPECT_EQ(test, copy_from_user(&word, (void __user *)addr, 4), 0);
	KUNIT_EXPECT_EQ(test, word, 0x5eed);

	/* Freeing the buffers is allowed; only the unmapped one goes. */
	KUNIT_EXPECT_EQ(test, vb2t_reqbufs(ctx, V4L2_MEMORY_MMAP, &count), 0);
	KUNIT_EXPECT_EQ(test, vb2_get_num_buffers(&ctx->q), 0);
	KUNIT_EXPECT_EQ(test, vb2t_count(ctx, VB2T_PUT), 2);
	KUNIT_EXPECT_STREQ(test, vb2t_log_of(ctx, 0),
			   "alloc buf_init buf_cleanup put free");
	KUNIT_EXPECT_STREQ(test, vb2t_log_of(ctx, 1),
			   "alloc buf_init mmap buf_cleanup put");
	KUNIT_EXPECT_EQ(test, ctx->live_mem, 1);

	/* The orphan is still there and writable. */
	word = 0xcafe;
	KUNIT_EXPECT_EQ(test, copy_to_user((void __user *)addr, &word, 4), 0);
	KUNIT_EXPECT_EQ(test, *vaddr, 0xcafe);

	/* New buffers can be allocated meanwhile. */
	reqbufs_n(test, ctx, 2);

	KUNIT_EXPECT_EQ(test, vm_munmap(addr, PAGE_SIZE), 0);
	KUNIT_EXPECT_STREQ(test, vb2t_log_of(ctx, 1),
			   "alloc buf_init mmap buf_cleanup put alloc buf_init free");
	KUNIT_EXPECT_EQ(test, ctx->live_mem, 2);
}

/* mmap() refusals: private, too large, unknown offset, wrong memory. */
static void vb2_buffers_mmap_refused(struct kunit *test)
{
	struct vb2t_ctx *ctx = vb2t_ctx_simple(test, CAP);
	struct file *file = vb2t_queue_file(ctx);
	unsigned long addr;
	unsigned int count;

	reqbufs_n(test, ctx, 1);
	/* Give the test's thread an address space first. */
	vb2t_user_mem(test, PAGE_SIZE);
	addr = vm_mmap(file, 0, PAGE_SIZE, PROT_READ, MAP_PRIVATE, 0);
	KUNIT_EXPECT_TRUE(test, IS_ERR_VALUE(addr));
	addr = vm_mmap(file, 0, 2 * PAGE_SIZE, PROT_READ, MAP_SHARED, 0);
	KUNIT_EXPECT_TRUE(test, IS_ERR_VALUE(addr));
	/* Buffer 1 does not exist, nor does plane 1 of buffer 0. */
	addr = vm_mmap(file, 0, PAGE_SIZE, PROT_READ, MAP_SHARED,
		       8 * PAGE_SIZE);
	KUNIT_EXPECT_TRUE(test, IS_ERR_VALUE(addr));
	addr = vm_mmap(file, 0, PAGE_SIZE, PROT_READ, MAP_SHARED, PAGE_SIZE);
	KUNIT_EXPECT_TRUE(test, IS_ERR_VALUE(addr));
	KUNIT_EXPECT_EQ(test, vb2t_count(ctx, VB2T_MMAP), 0);

	/* A USERPTR queue has nothing to map. */
	count = 1;
	KUNIT_ASSERT_EQ(test, vb2t_reqbufs(ctx, V4L2_MEMORY_USERPTR, &count), 0);
	addr = vm_mmap(file, 0, PAGE_SIZE, PROT_READ, MAP_SHARED, 0);
	KUNIT_EXPECT_TRUE(test, IS_ERR_VALUE(addr));
	KUNIT_EXPECT_EQ(test, vb2t_count(ctx, VB2T_MMAP), 0);
}

static void stream_all(struct kunit *test, struct vb2t_ctx *ctx, unsigned int n)
{
	unsigned int i, index;

	qbuf_range(test, ctx, 0, n);
	KUNIT_ASSERT_EQ(test, vb2t_streamon(ctx), 0);
	KUNIT_EXPECT_EQ(test, ctx->start_count, n);
	vb2t_complete_all(ctx, VB2_BUF_STATE_DONE);
	for (i = 0; i < n; i++) {
		KUNIT_ASSERT_EQ(test, vb2t_dqbuf_index(ctx, &index, NULL), 0);
		KUNIT_EXPECT_EQ(test, index, i);
	}
}

static void vb2_buffers_33(struct kunit *test)
{
	struct vb2t_config cfg = { .type = CAP, .max_num_buffers = 64 };
	struct vb2t_ctx *ctx = vb2t_ctx_create(test, &cfg);

	reqbufs_n(test, ctx, 33);
	KUNIT_EXPECT_EQ(test, vb2_get_num_buffers(&ctx->q), 33);
	KUNIT_EXPECT_NOT_NULL(test, vb2_get_buffer(&ctx->q, 32));
	stream_all(test, ctx, 33);
}

/* The default maximum is 32 buffers. */
static void vb2_buffers_default_max(struct kunit *test)
{
	struct vb2t_ctx *ctx = vb2t_ctx_simple(test, CAP);
	unsigned int count = 40, first, created;

	KUNIT_ASSERT_EQ(test, vb2t_reqbufs(ctx, V4L2_MEMORY_MMAP, &count), 0);
	KUNIT_EXPECT_EQ(test, count, VB2_MAX_FRAME);
	KUNIT_EXPECT_EQ(test, vb2t_create_bufs(ctx, V4L2_MEMORY_MMAP, 1,
					       PAGE_SIZE, &first, &created),
			-ENOBUFS);
	KUNIT_EXPECT_EQ(test, vb2_get_num_buffers(&ctx->q), VB2_MAX_FRAME);
}

static void vb2_buffers_1024(struct kunit *test)
{
	struct vb2t_config cfg = { .type = CAP, .max_num_buffers = 1024 };
	struct vb2t_ctx *ctx = vb2t_ctx_create(test, &cfg);
	unsigned int count = 2000;
	struct v4l2_buffer b;
	unsigned long addr;
	struct file *file;
	u32 word = 0;

	KUNIT_ASSERT_EQ(test, vb2t_reqbufs(ctx, V4L2_MEMORY_MMAP, &count), 0);
	KUNIT_EXPECT_EQ(test, count, 1024);
	KUNIT_EXPECT_EQ(test, vb2_get_num_buffers(&ctx->q), 1024);
	KUNIT_EXPECT_NOT_NULL(test, vb2_get_buffer(&ctx->q, 1023));
	KUNIT_EXPECT_NULL(test, vb2_get_buffer(&ctx->q, 1024));
	KUNIT_EXPECT_EQ(test, vb2t_count(ctx, VB2T_BUF_INIT), 1024);

	/* The mmap offsets of the last buffers are distinct. */
	vb2t_init_buffer(ctx, &b, NULL, 1023);
	KUNIT_EXPECT_EQ(test, vb2t_querybuf(ctx, &b), 0);
	KUNIT_EXPECT_EQ(test, b.index, 1023);
	count = b.m.offset;
	vb2t_init_buffer(ctx, &b, NULL, 1022);
	KUNIT_EXPECT_EQ(test, vb2t_querybuf(ctx, &b), 0);
	KUNIT_EXPECT_NE(test, b.m.offset, count);

	stream_all(test, ctx, 1024);
	KUNIT_EXPECT_EQ(test, vb2t_streamoff(ctx), 0);

	/* mmap() finds buffers far beyond 32; removed ones are gone. */
	file = vb2t_queue_file(ctx);
	*(u32 *)vb2_plane_vaddr(vb2_get_buffer(&ctx->q, 1023), 0) = 1023;
	addr = mmap_buffer(test, ctx, file, 1023);
	KUNIT_EXPECT_EQ(test, copy_from_user(&word, (void __user *)addr, 4), 0);
	KUNIT_EXPECT_EQ(test, word, 1023);
	KUNIT_EXPECT_EQ(test, vm_munmap(addr, PAGE_SIZE), 0);
	vb2t_init_buffer(ctx, &b, NULL, 1000);
	KUNIT_ASSERT_EQ(test, vb2t_querybuf(ctx, &b), 0);
	KUNIT_EXPECT_EQ(test, vb2t_remove_bufs(ctx, 1000, 1), 0);
	addr = vm_mmap(file, 0, PAGE_SIZE, PROT_READ, MAP_SHARED, b.m.offset);
	KUNIT_EXPECT_TRUE(test, IS_ERR_VALUE(addr));

	count = 0;
	KUNIT_EXPECT_EQ(test, vb2t_reqbufs(ctx, V4L2_MEMORY_MMAP, &count), 0);
	KUNIT_EXPECT_EQ(test, vb2t_count(ctx, VB2T_PUT), 1024);
	KUNIT_EXPECT_EQ(test, vb2t_count(ctx, VB2T_FREE), 1024);
	KUNIT_EXPECT_EQ(test, vb2t_count(ctx, VB2T_BUF_CLEANUP), 1024);
	KUNIT_EXPECT_EQ(test, ctx->live_mem, 0);
}

static void vb2_buffers_create_beyond_32(struct kunit *test)
{
	struct vb2t_config cfg = { .type = CAP, .max_num_buffers = 64 };
	struct vb2t_ctx *ctx = vb2t_ctx_create(test, &cfg);
	unsigned int first, created;

	reqbufs_n(test, ctx, 32);
	KUNIT_EXPECT_EQ(test, vb2t_create_bufs(ctx, V4L2_MEMORY_MMAP, 8,
					       PAGE_SIZE, &first, &created), 0);
	KUNIT_EXPECT_EQ(test, first, 32);
	KUNIT_EXPECT_EQ(test, created, 8);
	KUNIT_EXPECT_EQ(test, vb2_get_num_buffers(&ctx->q), 40);
	/* Capped at the maximum. */
	KUNIT_EXPECT_EQ(test, vb2t_create_bufs(ctx, V4L2_MEMORY_MMAP, 30,
					       PAGE_SIZE, &first, &created), 0);
	KUNIT_EXPECT_EQ(test, first, 40);
	KUNIT_EXPECT_EQ(test, created, 24);
	KUNIT_EXPECT_EQ(test, vb2t_create_bufs(ctx, V4L2_MEMORY_MMAP, 1,
					       PAGE_SIZE, &first, &created),
			-ENOBUFS);
	stream_all(test, ctx, 64);
}

static unsigned int count_buffers(struct vb2_queue *q)
{
	struct vb2_buffer *vb;
	unsigned long index;
	unsigned int n = 0;

	vb2_for_each_buffer(q, index, vb)
		n++;
	return n;
}

static void vb2_buffers_holes(struct kunit *test)
{
	struct vb2t_ctx *ctx = vb2t_ctx_simple(test, CAP);
	struct v4l2_buffer b;
	unsigned int first, created;

	KUNIT_ASSERT_EQ(test, vb2t_create_bufs(ctx, V4L2_MEMORY_MMAP, 8,
					       PAGE_SIZE, &first, &created), 0);
	KUNIT_ASSERT_EQ(test, created, 8);
	KUNIT_EXPECT_EQ(test, vb2t_remove_bufs(ctx, 2, 1), 0);
	KUNIT_EXPECT_EQ(test, vb2t_remove_bufs(ctx, 5, 2), 0);
	KUNIT_EXPECT_EQ(test, vb2_get_num_buffers(&ctx->q), 5);
	KUNIT_EXPECT_EQ(test, count_buffers(&ctx->q), 5);
	KUNIT_EXPECT_NULL(test, vb2_get_buffer(&ctx->q, 2));
	KUNIT_EXPECT_NULL(test, vb2_get_buffer(&ctx->q, 5));
	KUNIT_EXPECT_NULL(test, vb2_get_buffer(&ctx->q, 6));
	KUNIT_EXPECT_NOT_NULL(test, vb2_get_buffer(&ctx->q, 7));
	KUNIT_EXPECT_STREQ(test, vb2t_log_of(ctx, 2),
			   "alloc buf_init buf_cleanup put free");

	/* Holes are not buffers. */
	vb2t_init_buffer(ctx, &b, NULL, 5);
	KUNIT_EXPECT_EQ(test, vb2t_querybuf(ctx, &b), -EINVAL);
	KUNIT_EXPECT_EQ(test, vb2t_qbuf_mmap(ctx, 2), -EINVAL);
	KUNIT_EXPECT_EQ(test, vb2t_remove_bufs(ctx, 1, 2), -EINVAL);
	KUNIT_EXPECT_EQ(test, vb2t_remove_bufs(ctx, 4, 3), -EINVAL);
	KUNIT_EXPECT_EQ(test, vb2t_remove_bufs(ctx, 30, 4), -EINVAL);
	KUNIT_EXPECT_EQ(test, vb2t_remove_bufs(ctx, 3, 0), 0);
	KUNIT_EXPECT_EQ(test, vb2_get_num_buffers(&ctx->q), 5);

	/* A queued buffer in the range: nothing is removed. */
	KUNIT_EXPECT_EQ(test, vb2t_qbuf_mmap(ctx, 4), 0);
	KUNIT_EXPECT_EQ(test, vb2t_remove_bufs(ctx, 3, 2), -EBUSY);
	KUNIT_EXPECT_NOT_NULL(test, vb2_get_buffer(&ctx->q, 3));

	/* CREATE_BUFS fills the holes: first the one that fits. */
	KUNIT_EXPECT_EQ(test, vb2t_create_bufs(ctx, V4L2_MEMORY_MMAP, 2,
					       PAGE_SIZE, &first, &created), 0);
	KUNIT_EXPECT_EQ(test, first, 5);
	KUNIT_EXPECT_EQ(test, created, 2);
	KUNIT_EXPECT_EQ(test, vb2t_create_bufs(ctx, V4L2_MEMORY_MMAP, 1,
					       PAGE_SIZE, &first, &created), 0);
	KUNIT_EXPECT_EQ(test, first, 2);
	KUNIT_EXPECT_EQ(test, vb2_get_num_buffers(&ctx->q), 8);
	KUNIT_EXPECT_EQ(test, count_buffers(&ctx->q), 8);
	vb2t_init_buffer(ctx, &b, NULL, 5);
	KUNIT_EXPECT_EQ(test, vb2t_querybuf(ctx, &b), 0);
	KUNIT_EXPECT_EQ(test, b.index, 5);
	KUNIT_EXPECT_EQ(test, vb2t_qbuf_mmap(ctx, 2), 0);
	KUNIT_EXPECT_EQ(test, vb2t_qbuf_mmap(ctx, 5), 0);

	/* A prepared buffer may be removed: no buf_finish, as in 6.12. */
	vb2t_init_buffer(ctx, &b, NULL, 7);
	KUNIT_EXPECT_EQ(test, vb2t_prepare_buf(ctx, &b), 0);
	KUNIT_EXPECT_EQ(test, vb2t_remove_bufs(ctx, 7, 1), 0);
	KUNIT_EXPECT_STREQ(test, vb2t_log_of(ctx, 7),
			   "alloc buf_init buf_prepare buf_cleanup put free");
	/* Removing every buffer leaves a queue that can allocate again. */
	KUNIT_EXPECT_EQ(test, vb2t_streamoff(ctx), 0);
	KUNIT_EXPECT_EQ(test, vb2t_remove_bufs(ctx, 0, 7), 0);
	KUNIT_EXPECT_EQ(test, vb2_get_num_buffers(&ctx->q), 0);
	KUNIT_EXPECT_EQ(test, vb2t_create_bufs(ctx, V4L2_MEMORY_USERPTR, 2,
					       PAGE_SIZE, &first, &created), 0);
	KUNIT_EXPECT_EQ(test, first, 0);
	KUNIT_EXPECT_EQ(test, ctx->q.memory, VB2_MEMORY_USERPTR);
}

/* CREATE_BUFS of @count MMAP buffers; *@setups: the queue_setup calls. */
static int create_counting_setups(struct vb2t_ctx *ctx, unsigned int count,
				  unsigned int *first, unsigned int *created,
				  unsigned int *setups)
{
	unsigned int before = ctx->count[VB2T_QUEUE_SETUP];
	int ret;

	ret = vb2t_create_bufs(ctx, V4L2_MEMORY_MMAP, count, PAGE_SIZE, first,
			       created);
	*setups = ctx->count[VB2T_QUEUE_SETUP] - before;
	return ret;
}

/*
 * CREATE_BUFS into a queue whose free indices are all in short runs: the
 * buffers take the longest run, and the driver, who agreed to more, is
 * asked again and may refuse.
 */
/*
 * vb2_for_each_buffer() around index 32, where an earlier layout changed
 * tables: holes on both sides, and at it, are skipped, and every buffer is
 * visited once, in index order.
 */
static const unsigned int walk_holes[] = { 0, 5, 31, 32, 33, 47 };

static bool walk_is_hole(unsigned int index)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(walk_holes); i++)
		if (walk_holes[i] == index)
			return true;
	return false;
}

static void vb2_buffers_walk_across_32(struct kunit *test)
{
	struct vb2t_config cfg = { .type = CAP, .max_num_buffers = 48 };
	struct vb2t_ctx *ctx = vb2t_ctx_create(test, &cfg);
	unsigned int i, expect = 0, seen = 0;
	struct vb2_buffer *vb;
	unsigned long index;

	reqbufs_n(test, ctx, 48);
	for (i = 0; i < ARRAY_SIZE(walk_holes); i++)
		KUNIT_ASSERT_EQ(test, vb2t_remove_bufs(ctx, walk_holes[i], 1), 0);

	vb2_for_each_buffer(&ctx->q, index, vb) {
		while (walk_is_hole(expect))
			expect++;
		KUNIT_EXPECT_EQ(test, index, expect);
		KUNIT_EXPECT_PTR_EQ(test, vb, vb2_get_buffer(&ctx->q, index));
		KUNIT_EXPECT_EQ(test, vb->index, index);
		expect++;
		seen++;
	}
	KUNIT_EXPECT_EQ(test, seen, 48 - ARRAY_SIZE(walk_holes));
	KUNIT_EXPECT_EQ(test, expect, 47);

	/* Only buffers above the seam; then none at all. */
	KUNIT_ASSERT_EQ(test, vb2t_remove_bufs(ctx, 1, 4), 0);
	KUNIT_ASSERT_EQ(test, vb2t_remove_bufs(ctx, 6, 25), 0);
	KUNIT_EXPECT_EQ(test, count_buffers(&ctx->q), 13);
	KUNIT_ASSERT_EQ(test, vb2t_remove_bufs(ctx, 34, 13), 0);
	KUNIT_EXPECT_EQ(test, count_buffers(&ctx->q), 0);
}

/*
 * The buffer table (bufs, beside bufs_bitmap) comes with the first buffer
 * and goes with the last; lookups and the walk are right around holes at
 * both ends and in the middle of a queue of 1024.
 */
static void vb2_buffers_table(struct kunit *test)
{
	static const unsigned int holes[] = { 0, 100, 511, 512, 513, 1023 };
	struct vb2t_config cfg = { .type = CAP, .max_num_buffers = 1024 };
	struct vb2t_ctx *ctx = vb2t_ctx_create(test, &cfg);
	unsigned int i, first, created, seen = 0;
	struct vb2_queue *q = &ctx->q;
	struct vb2_buffer *vb;
	unsigned long index;

	KUNIT_EXPECT_NULL(test, q->bufs);
	KUNIT_EXPECT_NULL(test, vb2_get_buffer(q, 0));
	KUNIT_EXPECT_EQ(test, count_buffers(q), 0);
	reqbufs_n(test, ctx, 500);
	KUNIT_EXPECT_NOT_NULL(test, q->bufs);
	KUNIT_EXPECT_NULL(test, vb2_get_buffer(q, 500));
	KUNIT_ASSERT_EQ(test, vb2t_create_bufs(ctx, V4L2_MEMORY_MMAP, 524,
					       PAGE_SIZE, &first, &created), 0);
	KUNIT_EXPECT_EQ(test, first, 500);
	KUNIT_EXPECT_EQ(test, created, 524);
	for (i = 0; i < ARRAY_SIZE(holes); i++)
		KUNIT_ASSERT_EQ(test, vb2t_remove_bufs(ctx, holes[i], 1), 0);

	for (i = 0; i < 1024; i++) {
		bool hole = false;
		unsigned int h;

		for (h = 0; h < ARRAY_SIZE(holes); h++)
			hole |= holes[h] == i;
		vb = vb2_get_buffer(q, i);
		if (hole) {
			KUNIT_EXPECT_NULL(test, vb);
			continue;
		}
		KUNIT_ASSERT_NOT_NULL(test, vb);
		KUNIT_EXPECT_EQ(test, vb->index, i);
	}
	index = 0;
	vb2_for_each_buffer(q, index, vb) {
		KUNIT_EXPECT_EQ(test, vb->index, index);
		seen++;
	}
	KUNIT_EXPECT_EQ(test, seen, 1024 - ARRAY_SIZE(holes));
	KUNIT_EXPECT_NULL(test, vb2_get_buffer(q, 1024));

	/* Left: 1-510 but 100 (509) and 1000-1022 (23). */
	KUNIT_ASSERT_EQ(test, vb2t_remove_bufs(ctx, 514, 486), 0);
	KUNIT_EXPECT_NOT_NULL(test, q->bufs);
	KUNIT_EXPECT_EQ(test, count_buffers(q), 509 + 23);
	reqbufs_n(test, ctx, 0);
	KUNIT_EXPECT_NULL(test, q->bufs);
	KUNIT_EXPECT_NULL(test, q->bufs_bitmap);
	KUNIT_EXPECT_EQ(test, count_buffers(q), 0);
}

static void vb2_buffers_holes_too_short(struct kunit *test)
{
	struct vb2t_ctx *ctx = vb2t_ctx_simple(test, CAP);
	unsigned int first, created, setups;

	KUNIT_ASSERT_EQ(test, vb2t_create_bufs(ctx, V4L2_MEMORY_MMAP, 32,
					       PAGE_SIZE, &first, &created), 0);
	KUNIT_ASSERT_EQ(test, created, ctx->q.max_num_buffers);
	KUNIT_ASSERT_EQ(test, vb2t_remove_bufs(ctx, 4, 2), 0);
	KUNIT_ASSERT_EQ(test, vb2t_remove_bufs(ctx, 10, 3), 0);

	/* The driver refuses fewer than it agreed to: nothing is created. */
	vb2t_fail(ctx, VB2T_QUEUE_SETUP, 2, -ENOMEM);
	KUNIT_EXPECT_EQ(test, create_counting_setups(ctx, 5, &first, &created,
						     &setups), -ENOMEM);
	KUNIT_EXPECT_EQ(test, setups, 2);
	KUNIT_EXPECT_EQ(test, vb2_get_num_buffers(&ctx->q), 27);
	KUNIT_EXPECT_EQ(test, count_buffers(&ctx->q), 27);
	KUNIT_EXPECT_NULL(test, vb2_get_buffer(&ctx->q, 10));

	/* It accepts: the longest run is filled. */
	KUNIT_EXPECT_EQ(test, create_counting_setups(ctx, 5, &first, &created,
						     &setups), 0);
	KUNIT_EXPECT_EQ(test, setups, 2);
	KUNIT_EXPECT_EQ(test, first, 10);
	KUNIT_EXPECT_EQ(test, created, 3);
	KUNIT_EXPECT_EQ(test, count_buffers(&ctx->q), 30);

	/* A request that fits a run asks the driver once. */
	KUNIT_EXPECT_EQ(test, create_counting_setups(ctx, 2, &first, &created,
						     &setups), 0);
	KUNIT_EXPECT_EQ(test, setups, 1);
	KUNIT_EXPECT_EQ(test, first, 4);
	KUNIT_EXPECT_EQ(test, created, 2);
}

/*
 * The index bitmap exists only while buffers do: also after an allocation
 * that made no buffer at all. kmemleak, which runs after the suites, caught
 * it left behind by a REQBUFS whose every allocation failed.
 */
static void vb2_buffers_bitmap_lifetime(struct kunit *test)
{
	struct vb2t_ctx *ctx = vb2t_ctx_simple(test, CAP);
	unsigned int count = 2;

	vb2t_fail_from(ctx, VB2T_ALLOC, 1, -ENOMEM);
	KUNIT_EXPECT_EQ(test, vb2t_reqbufs(ctx, V4L2_MEMORY_MMAP, &count), -ENOMEM);
	KUNIT_EXPECT_NULL(test, ctx->q.bufs_bitmap);
	KUNIT_EXPECT_EQ(test, ctx->q.memory, VB2_MEMORY_UNKNOWN);
	KUNIT_EXPECT_EQ(test, vb2t_create_bufs(ctx, V4L2_MEMORY_MMAP, 2, PAGE_SIZE,
					       NULL, NULL), -ENOMEM);
	KUNIT_EXPECT_NULL(test, ctx->q.bufs_bitmap);
	vb2t_fail_clear(ctx);

	reqbufs_n(test, ctx, 2);
	KUNIT_EXPECT_NOT_NULL(test, ctx->q.bufs_bitmap);
	KUNIT_ASSERT_EQ(test, vb2t_remove_bufs(ctx, 0, 2), 0);
	KUNIT_EXPECT_NULL(test, ctx->q.bufs_bitmap);
	reqbufs_n(test, ctx, 2);
	count = 0;
	KUNIT_ASSERT_EQ(test, vb2t_reqbufs(ctx, V4L2_MEMORY_MMAP, &count), 0);
	KUNIT_EXPECT_NULL(test, ctx->q.bufs_bitmap);
}

/*
 * A memory model is available only when io_modes names it and the
 * allocator has every op it needs: vb2_core_reqbufs() and
 * vb2_core_create_bufs(), which non-V4L2 subsystems call without the V4L2
 * checks in front, refuse it with -EINVAL before asking the driver.
 */
static void vb2_buffers_memory_model_needs_ops(struct kunit *test)
{
	static const struct {
		enum vb2_memory	memory;
		unsigned int	io_mode;
		size_t		op;
	} rows[] = {
		{ VB2_MEMORY_MMAP, VB2_MMAP, offsetof(struct vb2_mem_ops, alloc) },
		{ VB2_MEMORY_MMAP, VB2_MMAP, offsetof(struct vb2_mem_ops, put) },
		{ VB2_MEMORY_MMAP, VB2_MMAP, offsetof(struct vb2_mem_ops, mmap) },
		{ VB2_MEMORY_USERPTR, VB2_USERPTR,
		  offsetof(struct vb2_mem_ops, get_userptr) },
		{ VB2_MEMORY_USERPTR, VB2_USERPTR,
		  offsetof(struct vb2_mem_ops, put_userptr) },
		{ VB2_MEMORY_DMABUF, VB2_DMABUF,
		  offsetof(struct vb2_mem_ops, attach_dmabuf) },
		{ VB2_MEMORY_DMABUF, VB2_DMABUF,
		  offsetof(struct vb2_mem_ops, detach_dmabuf) },
		{ VB2_MEMORY_DMABUF, VB2_DMABUF,
		  offsetof(struct vb2_mem_ops, map_dmabuf) },
		{ VB2_MEMORY_DMABUF, VB2_DMABUF,
		  offsetof(struct vb2_mem_ops, unmap_dmabuf) },
	};
	struct vb2t_ctx *ctx = vb2t_ctx_simple(test, CAP);
	const unsigned int sizes[1] = { PAGE_SIZE };
	struct vb2_queue *q = &ctx->q;
	unsigned int i, io_modes = q->io_modes, count, first;
	void **op, *saved;

	for (i = 0; i < ARRAY_SIZE(rows); i++) {
		op = (void **)((char *)&ctx->mem_ops + rows[i].op);
		saved = *op;
		KUNIT_ASSERT_NOT_NULL(test, saved);
		*op = NULL;
		mutex_lock(&ctx->mutex);
		count = 2;
		KUNIT_EXPECT_EQ_MSG(test, vb2_core_reqbufs(q, rows[i].memory, 0,
							   &count), -EINVAL,
				    "row %u", i);
		count = 2;
		KUNIT_EXPECT_EQ_MSG(test, vb2_core_create_bufs(q, rows[i].memory,
							       0, &count, 1,
							       sizes, &first),
				    -EINVAL, "row %u", i);
		mutex_unlock(&ctx->mutex);
		*op = saved;

		/* The allocator could, the driver did not offer the model. */
		q->io_modes = io_modes & ~rows[i].io_mode;
		count = 2;
		KUNIT_EXPECT_EQ_MSG(test, vb2t_core_reqbufs(ctx, rows[i].memory,
							    &count), -EINVAL,
				    "row %u", i);
		q->io_modes = io_modes;
	}
	KUNIT_EXPECT_EQ(test, vb2t_count(ctx, VB2T_QUEUE_SETUP), 0);
	KUNIT_EXPECT_EQ(test, vb2_get_num_buffers(q), 0);

	/* With everything in place each model is taken. */
	for (i = 0; i < ARRAY_SIZE(rows); i++) {
		count = 2;
		KUNIT_EXPECT_EQ(test, vb2t_core_reqbufs(ctx, rows[i].memory,
							&count), 0);
		KUNIT_EXPECT_EQ(test, count, 2);
	}
	count = 0;
	KUNIT_EXPECT_EQ(test, vb2t_core_reqbufs(ctx, VB2_MEMORY_MMAP, &count), 0);
}

/*
 * vb2_core_create_bufs() takes 1 to VB2_MAX_PLANES planes; a count of 0
 * makes nothing and reports where the next buffer would go.
 */
static void vb2_buffers_create_args(struct kunit *test)
{
	struct vb2t_ctx *ctx = vb2t_ctx_simple(test, CAP);
	unsigned int sizes[VB2_MAX_PLANES + 1];
	struct vb2_queue *q = &ctx->q;
	unsigned int i, count, first;

	for (i = 0; i < ARRAY_SIZE(sizes); i++)
		sizes[i] = PAGE_SIZE;
	mutex_lock(&ctx->mutex);
	count = 2;
	KUNIT_EXPECT_EQ(test, vb2_core_create_bufs(q, VB2_MEMORY_MMAP, 0, &count,
						   0, sizes, &first), -EINVAL);
	count = 2;
	KUNIT_EXPECT_EQ(test, vb2_core_create_bufs(q, VB2_MEMORY_MMAP, 0, &count,
						   VB2_MAX_PLANES + 1, sizes,
						   &first), -EINVAL);
	count = 0;
	first = 99;
	KUNIT_EXPECT_EQ(test, vb2_core_create_bufs(q, VB2_MEMORY_MMAP, 0, &count,
						   1, sizes, &first), 0);
	KUNIT_EXPECT_EQ(test, count, 0);
	KUNIT_EXPECT_EQ(test, first, 0);
	mutex_unlock(&ctx->mutex);
	KUNIT_EXPECT_EQ(test, vb2t_count(ctx, VB2T_QUEUE_SETUP), 0);
	KUNIT_EXPECT_EQ(test, vb2_get_num_buffers(q), 0);

	reqbufs_n(test, ctx, 2);
	mutex_lock(&ctx->mutex);
	count = 0;
	KUNIT_EXPECT_EQ(test, vb2_core_create_bufs(q, VB2_MEMORY_MMAP, 0, &count,
						   1, sizes, &first), 0);
	mutex_unlock(&ctx->mutex);
	KUNIT_EXPECT_EQ(test, count, 0);
	KUNIT_EXPECT_EQ(test, first, 2);
	KUNIT_EXPECT_EQ(test, vb2_get_num_buffers(q), 2);
}

static int vb2t_fill_fails(struct vb2_buffer *vb, struct vb2_plane *planes)
{
	return -EFAULT;
}

static const struct vb2_buf_ops vb2t_buf_ops_fill_fails = {
	.fill_vb2_buffer	= vb2t_fill_fails,
};

/*
 * A subsystem that cannot describe the user memory of a buffer fails its
 * QBUF with its error: nothing is acquired, the buffer stays DEQUEUED and
 * can be queued once the description works.
 */
static void vb2_buffers_fill_vb2_buffer_fails(struct kunit *test)
{
	struct vb2t_config cfg = { .type = CAP, .core_only = true };
	struct vb2t_ctx *ctx = vb2t_ctx_create(test, &cfg);
	unsigned int count = 1;
	u32 desc[4] = { };
	int ret;

	KUNIT_ASSERT_EQ(test, vb2t_core_reqbufs(ctx, VB2_MEMORY_USERPTR, &count),
			0);
	/* Without a description (the core's own queueing) there is none. */
	KUNIT_EXPECT_EQ(test, vb2t_core_qbuf(ctx, 0, NULL), -EINVAL);

	ctx->q.buf_ops = &vb2t_buf_ops_fill_fails;
	mutex_lock(&ctx->mutex);
	ret = vb2_core_qbuf(&ctx->q, vb2_get_buffer(&ctx->q, 0), desc, NULL);
	mutex_unlock(&ctx->mutex);
	ctx->q.buf_ops = NULL;
	KUNIT_EXPECT_EQ(test, ret, -EFAULT);
	KUNIT_EXPECT_EQ(test, vb2t_state(ctx, 0), VB2_BUF_STATE_DEQUEUED);
	KUNIT_EXPECT_EQ(test, vb2t_count(ctx, VB2T_GET_USERPTR), 0);
	KUNIT_EXPECT_EQ(test, vb2t_count(ctx, VB2T_BUF_PREPARE), 0);
	KUNIT_EXPECT_EQ(test, vb2t_count(ctx, VB2T_BUF_QUEUE), 0);
}

/*
 * A subsystem without buf_ops, or without verify_planes_array, that passes
 * its own buffer description to vb2_core_dqbuf(): nothing verifies it, and
 * DQBUF hands the buffers out in order.
 */
static void vb2_buffers_core_dqbuf_unverified(struct kunit *test)
{
	struct vb2t_config cfg = { .type = CAP, .core_only = true };
	struct vb2t_ctx *ctx = vb2t_ctx_create(test, &cfg);
	unsigned int count = 2, index = ~0U;
	u32 desc[4] = { };
	int ret;

	KUNIT_ASSERT_EQ(test, vb2t_core_reqbufs(ctx, VB2_MEMORY_MMAP, &count),
			0);
	KUNIT_ASSERT_EQ(test, vb2t_core_qbuf(ctx, 0, NULL), 0);
	KUNIT_ASSERT_EQ(test, vb2t_core_qbuf(ctx, 1, NULL), 0);
	KUNIT_ASSERT_EQ(test, vb2t_core_streamon(ctx), 0);
	vb2t_complete_all(ctx, VB2_BUF_STATE_DONE);

	mutex_lock(&ctx->mutex);
	ret = vb2_core_dqbuf(&ctx->q, &index, desc, true);
	mutex_unlock(&ctx->mutex);
	KUNIT_EXPECT_EQ(test, ret, 0);
	KUNIT_EXPECT_EQ(test, index, 0);

	ctx->q.buf_ops = &vb2t_buf_ops_fill_fails;
	mutex_lock(&ctx->mutex);
	ret = vb2_core_dqbuf(&ctx->q, &index, desc, true);
	mutex_unlock(&ctx->mutex);
	ctx->q.buf_ops = NULL;
	KUNIT_EXPECT_EQ(test, ret, 0);
	KUNIT_EXPECT_EQ(test, index, 1);
	KUNIT_EXPECT_EQ(test, vb2t_state(ctx, 1), VB2_BUF_STATE_DEQUEUED);
}

static struct kunit_case vb2_buffers_cases[] = {
	KUNIT_CASE(vb2_buffers_mmap_orphan),
	KUNIT_CASE(vb2_buffers_mmap_refused),
	KUNIT_CASE(vb2_buffers_33),
	KUNIT_CASE(vb2_buffers_default_max),
	KUNIT_CASE(vb2_buffers_1024),
	KUNIT_CASE(vb2_buffers_create_beyond_32),
	KUNIT_CASE(vb2_buffers_holes),
	KUNIT_CASE(vb2_buffers_walk_across_32),
	KUNIT_CASE(vb2_buffers_table),
	KUNIT_CASE(vb2_buffers_holes_too_short),
	KUNIT_CASE(vb2_buffers_bitmap_lifetime),
	KUNIT_CASE(vb2_buffers_memory_model_needs_ops),
	KUNIT_CASE(vb2_buffers_create_args),
	KUNIT_CASE(vb2_buffers_fill_vb2_buffer_fails),
	KUNIT_CASE(vb2_buffers_core_dqbuf_unverified),
	{}
};

static struct kunit_suite vb2_buffers_suite = {
	.name = "videobuf2-buffers",
	.test_cases = vb2_buffers_cases,
};

/* ---------------------------------------------------------------------- */
/* poll(), the vb2 thread, queue limits                                   */
/* ---------------------------------------------------------------------- */

/* __poll_t as a plain number, for KUNIT_EXPECT_EQ(). */
static u32 pbits(__poll_t mask)
{
	return (__force u32)mask;
}

/* poll() without a poll table: every event is asked for. */
static u32 poll_now(struct vb2t_ctx *ctx)
{
	__poll_t mask;

	mutex_lock(&ctx->mutex);
	mask = vb2_core_poll(&ctx->q, NULL, NULL);
	mutex_unlock(&ctx->mutex);
	return pbits(mask);
}

static void vb2_misc_poll_capture(struct kunit *test)
{
	struct vb2t_ctx *ctx = vb2t_ctx_simple(test, CAP);
	const u32 in = pbits(EPOLLIN | EPOLLRDNORM);
	struct vb2_buffer *vb;

	KUNIT_EXPECT_EQ(test, poll_now(ctx), pbits(EPOLLERR));
	reqbufs_n(test, ctx, 3);
	KUNIT_EXPECT_EQ(test, poll_now(ctx), pbits(EPOLLERR));
	KUNIT_ASSERT_EQ(test, vb2t_streamon(ctx), 0);
	/* A capture queue with nothing queued yet cannot become readable. */
	KUNIT_EXPECT_EQ(test, poll_now(ctx), pbits(EPOLLERR));
	qbuf_range(test, ctx, 0, 3);
	KUNIT_EXPECT_EQ(test, poll_now(ctx), 0);
	KUNIT_ASSERT_TRUE(test, vb2t_complete_next(ctx, VB2_BUF_STATE_DONE));
	KUNIT_EXPECT_EQ(test, poll_now(ctx), in);
	KUNIT_EXPECT_EQ(test, vb2t_dqbuf_index(ctx, NULL, NULL), 0);
	KUNIT_EXPECT_EQ(test, poll_now(ctx), 0);

	/* After a LAST buffer the queue stays readable (DQBUF: -EPIPE). */
	vb = vb2t_peek(ctx);
	KUNIT_ASSERT_NOT_NULL(test, vb);
	to_vb2_v4l2_buffer(vb)->flags |= V4L2_BUF_FLAG_LAST;
	KUNIT_ASSERT_TRUE(test, vb2t_complete_next(ctx, VB2_BUF_STATE_DONE));
	KUNIT_EXPECT_EQ(test, vb2t_dqbuf_index(ctx, NULL, NULL), 0);
	KUNIT_EXPECT_EQ(test, poll_now(ctx), in);

	vb2_queue_error(&ctx->q);
	KUNIT_EXPECT_EQ(test, poll_now(ctx), pbits(EPOLLERR));
	KUNIT_EXPECT_EQ(test, vb2t_streamoff(ctx), 0);
	KUNIT_EXPECT_EQ(test, poll_now(ctx), pbits(EPOLLERR));
}

static void vb2_misc_poll_output(struct kunit *test)
{
	struct vb2t_ctx *ctx = vb2t_ctx_simple(test, OUT);

	reqbufs_n(test, ctx, 2);
	KUNIT_EXPECT_EQ(test, poll_now(ctx), pbits(EPOLLERR));
	KUNIT_ASSERT_EQ(test, vb2t_streamon(ctx), 0);
	KUNIT_EXPECT_EQ(test, poll_now(ctx), 0);
	qbuf_range(test, ctx, 0, 1);
	KUNIT_EXPECT_EQ(test, poll_now(ctx), 0);
	KUNIT_ASSERT_TRUE(test, vb2t_complete_next(ctx, VB2_BUF_STATE_ERROR));
	KUNIT_EXPECT_EQ(test, poll_now(ctx), pbits(EPOLLOUT | EPOLLWRNORM));
}

/* poll() on a read() queue without buffers starts the emulation. */
static void vb2_misc_poll_starts_read(struct kunit *test)
{
	struct vb2t_config cfg = { .type = CAP, .io_modes = VB2_MMAP | VB2_READ };
	struct vb2t_ctx *ctx = vb2t_ctx_create(test, &cfg);

	KUNIT_EXPECT_EQ(test, poll_now(ctx), 0);
	KUNIT_EXPECT_TRUE(test, vb2_fileio_is_active(&ctx->q));
	KUNIT_EXPECT_TRUE(test, vb2_is_streaming(&ctx->q));
	KUNIT_ASSERT_TRUE(test, vb2t_complete_next(ctx, VB2_BUF_STATE_DONE));
	KUNIT_EXPECT_EQ(test, poll_now(ctx), pbits(EPOLLIN | EPOLLRDNORM));
}

/*
 * read() emulation that would take more than VB2_MAX_FRAME buffers (6.12's
 * limit) fails with -EINVAL, the uAPI's error for a read() the device does
 * not support, and frees what it allocated.
 */
static void vb2_misc_fileio_too_many_buffers(struct kunit *test)
{
	struct vb2t_config cfg = {
		.type = CAP, .io_modes = VB2_MMAP | VB2_READ,
		.max_num_buffers = 2 * VB2_MAX_FRAME,
		.min_reqbufs_allocation = VB2_MAX_FRAME + 1,
	};
	struct vb2t_ctx *ctx = vb2t_ctx_create(test, &cfg);
	unsigned long user = vb2t_user_mem(test, PAGE_SIZE);
	loff_t pos = 0;
	ssize_t ret;

	mutex_lock(&ctx->mutex);
	ret = vb2_read(&ctx->q, (char __user *)user, PAGE_SIZE, &pos, 1);
	mutex_unlock(&ctx->mutex);
	KUNIT_EXPECT_EQ(test, ret, -EINVAL);
	KUNIT_EXPECT_EQ(test, vb2t_count(ctx, VB2T_QUEUE_SETUP), 1);
	KUNIT_EXPECT_EQ(test, vb2t_count(ctx, VB2T_START_STREAMING), 0);
	KUNIT_EXPECT_EQ(test, vb2_get_num_buffers(&ctx->q), 0);
	KUNIT_EXPECT_EQ(test, ctx->live_mem, 0);
}

/**
 * struct vb2t_thread - what the vb2 thread's callback saw
 * @calls:	number of calls.
 * @wq:		woken on each call.
 */
struct vb2t_thread {
	atomic_t		calls;
	wait_queue_head_t	wq;
};

static struct vb2t_thread *vb2t_thread_new(struct kunit *test)
{
	struct vb2t_thread *t = kunit_kzalloc(test, sizeof(*t), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, t);
	init_waitqueue_head(&t->wq);
	return t;
}

static int vb2t_thread_fn(struct vb2_buffer *vb, void *priv)
{
	struct vb2t_thread *t = priv;

	atomic_inc(&t->calls);
	wake_up(&t->wq);
	return 0;
}

/* Wait until the thread has given back every buffer to the driver. */
static bool wait_owned(struct vb2t_ctx *ctx, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < 250; i++) {
		if (vb2t_owned(ctx) == n)
			return true;
		msleep(20);
	}
	return false;
}

static void vb2_misc_thread(struct kunit *test)
{
	struct vb2t_config cfg = { .type = CAP, .io_modes = VB2_MMAP | VB2_READ };
	struct vb2t_ctx *ctx = vb2t_ctx_create(test, &cfg);
	struct vb2t_thread *t;
	unsigned int i, n;

	t = vb2t_thread_new(test);

	KUNIT_ASSERT_EQ(test, vb2_thread_start(&ctx->q, vb2t_thread_fn, t,
					       "vb2t"), 0);
	KUNIT_EXPECT_EQ(test, vb2_thread_start(&ctx->q, vb2t_thread_fn, t,
					       "vb2t"), -EBUSY);
	/* As REQBUFS(1): min_reqbufs_allocation, here one buffer. */
	n = vb2_get_num_buffers(&ctx->q);
	KUNIT_EXPECT_EQ(test, n, 1);
	KUNIT_EXPECT_TRUE(test, wait_owned(ctx, n));

	for (i = 1; i <= 4; i++) {
		KUNIT_ASSERT_TRUE(test, vb2t_complete_next(ctx, VB2_BUF_STATE_DONE));
		KUNIT_EXPECT_GT(test, wait_event_timeout(t->wq,
							 atomic_read(&t->calls) >= i,
							 5 * HZ), 0);
		KUNIT_EXPECT_TRUE(test, wait_owned(ctx, n));
	}
	/* A failed buffer goes to the callback too, as in 6.12. */
	KUNIT_ASSERT_TRUE(test, vb2t_complete_next(ctx, VB2_BUF_STATE_ERROR));
	KUNIT_EXPECT_GT(test, wait_event_timeout(t->wq,
						 atomic_read(&t->calls) >= 5,
						 5 * HZ), 0);
	KUNIT_EXPECT_TRUE(test, wait_owned(ctx, n));
	KUNIT_EXPECT_EQ(test, atomic_read(&t->calls), 5);

	KUNIT_EXPECT_EQ(test, vb2_thread_stop(&ctx->q), 0);
	KUNIT_EXPECT_FALSE(test, vb2_is_streaming(&ctx->q));
	KUNIT_EXPECT_FALSE(test, vb2_fileio_is_active(&ctx->q));
	KUNIT_EXPECT_EQ(test, vb2_get_num_buffers(&ctx->q), 0);
	KUNIT_EXPECT_EQ(test, vb2t_owned(ctx), 0);
	KUNIT_EXPECT_EQ(test, ctx->live_mem, 0);
	vb2t_check_contract(ctx);
}

/*
 * On an output queue the thread hands every buffer to the callback once
 * before it waits for one to come back, and on a queue that copies
 * timestamps stamps each buffer it queues.
 */
static void vb2_misc_thread_output(struct kunit *test)
{
	struct vb2t_config cfg = {
		.type = OUT, .io_modes = VB2_MMAP | VB2_WRITE,
		.min_reqbufs_allocation = 2,
		.timestamp_flags = V4L2_BUF_FLAG_TIMESTAMP_COPY,
	};
	struct vb2t_ctx *ctx = vb2t_ctx_create(test, &cfg);
	u64 start = ktime_get_ns();
	struct vb2t_thread *t;
	unsigned int i, n;

	t = vb2t_thread_new(test);

	KUNIT_ASSERT_EQ(test, vb2_thread_start(&ctx->q, vb2t_thread_fn, t,
					       "vb2t"), 0);
	n = vb2_get_num_buffers(&ctx->q);
	KUNIT_EXPECT_EQ(test, n, 2);
	/* No buffer was completed, yet each went to the callback. */
	KUNIT_EXPECT_GT(test, wait_event_timeout(t->wq,
						 atomic_read(&t->calls) >= n,
						 5 * HZ), 0);
	KUNIT_EXPECT_TRUE(test, wait_owned(ctx, n));
	for (i = 0; i < n; i++)
		KUNIT_EXPECT_GE(test, vb2_get_buffer(&ctx->q, i)->timestamp,
				start);

	/* Then the buffers the driver is done with. */
	KUNIT_ASSERT_TRUE(test, vb2t_complete_next(ctx, VB2_BUF_STATE_DONE));
	KUNIT_EXPECT_GT(test, wait_event_timeout(t->wq,
						 atomic_read(&t->calls) > n,
						 5 * HZ), 0);
	KUNIT_EXPECT_TRUE(test, wait_owned(ctx, n));
	KUNIT_EXPECT_EQ(test, atomic_read(&t->calls), n + 1);

	KUNIT_EXPECT_EQ(test, vb2_thread_stop(&ctx->q), 0);
	KUNIT_EXPECT_EQ(test, vb2_get_num_buffers(&ctx->q), 0);
	KUNIT_EXPECT_EQ(test, ctx->live_mem, 0);
	vb2t_check_contract(ctx);
}

static int vb2t_thread_fn_fails(struct vb2_buffer *vb, void *priv)
{
	vb2t_thread_fn(vb, priv);
	return -EIO;
}

/*
 * A callback that fails ends the thread's work: the buffer is not queued
 * again and the callback not called again, and vb2_thread_stop() still
 * stops the idle thread and frees everything.
 */
static void vb2_misc_thread_callback_fails(struct kunit *test)
{
	struct vb2t_config cfg = { .type = CAP, .io_modes = VB2_MMAP | VB2_READ };
	struct vb2t_ctx *ctx = vb2t_ctx_create(test, &cfg);
	struct vb2t_thread *t;

	t = vb2t_thread_new(test);

	KUNIT_ASSERT_EQ(test, vb2_thread_start(&ctx->q, vb2t_thread_fn_fails,
					       t, "vb2t"), 0);
	KUNIT_EXPECT_EQ(test, vb2_get_num_buffers(&ctx->q), 1);
	KUNIT_ASSERT_TRUE(test, wait_owned(ctx, 1));
	KUNIT_ASSERT_TRUE(test, vb2t_complete_next(ctx, VB2_BUF_STATE_DONE));
	KUNIT_EXPECT_GT(test, wait_event_timeout(t->wq,
						 atomic_read(&t->calls) >= 1,
						 5 * HZ), 0);
	/* Time to queue the buffer again, were the thread to do so. */
	msleep(100);
	KUNIT_EXPECT_EQ(test, vb2t_owned(ctx), 0);
	KUNIT_EXPECT_EQ(test, atomic_read(&t->calls), 1);

	KUNIT_EXPECT_EQ(test, vb2_thread_stop(&ctx->q), 0);
	KUNIT_EXPECT_FALSE(test, vb2_fileio_is_active(&ctx->q));
	KUNIT_EXPECT_EQ(test, vb2_get_num_buffers(&ctx->q), 0);
	KUNIT_EXPECT_EQ(test, ctx->live_mem, 0);
	vb2t_check_contract(ctx);
}

/*
 * vb2_thread_start() fails, leaving no buffers and no thread behind, on a
 * queue that does not read() and when the driver cannot start streaming;
 * the queue can start a thread afterwards.
 */
static void vb2_misc_thread_start_fails(struct kunit *test)
{
	struct vb2t_config cfg = { .type = CAP, .io_modes = VB2_MMAP };
	struct vb2t_ctx *ctx = vb2t_ctx_create(test, &cfg);
	struct vb2t_thread *t;

	t = vb2t_thread_new(test);

	KUNIT_EXPECT_EQ(test, vb2_thread_start(&ctx->q, vb2t_thread_fn, t,
					       "vb2t"), -EINVAL);
	KUNIT_EXPECT_EQ(test, vb2t_count(ctx, VB2T_QUEUE_SETUP), 0);

	ctx->q.io_modes |= VB2_READ;
	vb2t_fail(ctx, VB2T_START_STREAMING, 1, -EIO);
	KUNIT_EXPECT_EQ(test, vb2_thread_start(&ctx->q, vb2t_thread_fn, t,
					       "vb2t"), -EIO);
	KUNIT_EXPECT_EQ(test, vb2t_count(ctx, VB2T_START_STREAMING), 1);
	KUNIT_EXPECT_FALSE(test, vb2_is_streaming(&ctx->q));
	KUNIT_EXPECT_FALSE(test, vb2_fileio_is_active(&ctx->q));
	KUNIT_EXPECT_EQ(test, vb2_get_num_buffers(&ctx->q), 0);
	KUNIT_EXPECT_EQ(test, vb2t_owned(ctx), 0);
	KUNIT_EXPECT_EQ(test, ctx->live_mem, 0);
	/* Nothing to stop. */
	KUNIT_EXPECT_EQ(test, vb2_thread_stop(&ctx->q), 0);

	KUNIT_ASSERT_EQ(test, vb2_thread_start(&ctx->q, vb2t_thread_fn, t,
					       "vb2t"), 0);
	KUNIT_EXPECT_TRUE(test, vb2_is_streaming(&ctx->q));
	/* Let the thread run, or kthread_stop() says -EINTR. */
	KUNIT_ASSERT_TRUE(test, vb2t_complete_next(ctx, VB2_BUF_STATE_DONE));
	KUNIT_EXPECT_GT(test, wait_event_timeout(t->wq,
						 atomic_read(&t->calls) >= 1,
						 5 * HZ), 0);
	KUNIT_EXPECT_EQ(test, vb2_thread_stop(&ctx->q), 0);
	KUNIT_EXPECT_EQ(test, ctx->live_mem, 0);
	vb2t_check_contract(ctx);
}

static void vb2_misc_wait_for_all_buffers(struct kunit *test)
{
	struct vb2t_ctx *ctx = vb2t_ctx_simple(test, CAP);

	reqbufs_n(test, ctx, 2);
	KUNIT_EXPECT_EQ(test, vb2_wait_for_all_buffers(&ctx->q), -EINVAL);
	qbuf_range(test, ctx, 0, 2);
	KUNIT_ASSERT_EQ(test, vb2t_streamon(ctx), 0);
	vb2t_complete_all(ctx, VB2_BUF_STATE_DONE);
	KUNIT_EXPECT_EQ(test, vb2_wait_for_all_buffers(&ctx->q), 0);
}

/* max_num_buffers: 0 is 32, larger values are clamped to the index space. */
static void vb2_misc_max_num_buffers(struct kunit *test)
{
	struct vb2t_config cfg = { .type = CAP, .max_num_buffers = 1U << 20 };
	struct vb2t_ctx *ctx = vb2t_ctx_create(test, &cfg);
	struct vb2t_ctx *dflt = vb2t_ctx_simple(test, CAP);

	KUNIT_EXPECT_EQ(test, ctx->q.max_num_buffers, 32768);
	KUNIT_EXPECT_EQ(test, dflt->q.max_num_buffers, VB2_MAX_FRAME);
	reqbufs_n(test, ctx, 40);
}

/* A blocking DQBUF is woken by vb2_queue_error() and fails with -EIO. */
static enum hrtimer_restart vb2t_error_fn(struct hrtimer *t)
{
	struct vb2t_irq *irq = container_of(t, struct vb2t_irq, timer);

	vb2_queue_error(&irq->ctx->q);
	complete(&irq->done);
	return HRTIMER_NORESTART;
}

static void vb2_misc_dqbuf_woken_by_error(struct kunit *test)
{
	struct vb2t_ctx *ctx = vb2t_ctx_simple(test, CAP);
	struct vb2t_irq *irq = vb2t_irq_alloc(test);
	struct v4l2_buffer b;
	int ret;

	reqbufs_n(test, ctx, 2);
	qbuf_range(test, ctx, 0, 2);
	KUNIT_ASSERT_EQ(test, vb2t_streamon(ctx), 0);
	vb2t_irq_start(irq, ctx, 0, 30, vb2t_error_fn);
	vb2t_init_buffer(ctx, &b, NULL, 0);
	mutex_lock(&ctx->mutex);
	ret = vb2_dqbuf(&ctx->q, &b, false);
	mutex_unlock(&ctx->mutex);
	wait_for_completion_timeout(&irq->done, 5 * HZ);
	hrtimer_cancel(&irq->timer);
	KUNIT_EXPECT_EQ(test, ret, -EIO);
	KUNIT_EXPECT_EQ(test, vb2t_owned(ctx), 2);
}

/*
 * While a task sleeps in DQBUF, REQBUFS and a second DQBUF are refused
 * with -EBUSY; STREAMOFF wakes the sleeper, which then fails with -EINVAL.
 */
static void vb2_misc_dqbuf_sleeper(struct kunit *test)
{
	struct vb2t_ctx *ctx = vb2t_ctx_simple(test, CAP);
	struct vb2t_waiter *w;
	struct v4l2_buffer b;
	unsigned int count;
	int ret;

	reqbufs_n(test, ctx, 2);
	qbuf_range(test, ctx, 0, 2);
	KUNIT_ASSERT_EQ(test, vb2t_streamon(ctx), 0);
	KUNIT_ASSERT_TRUE_MSG(test, vb2t_start_waiter(test, ctx, &w),
			      "DQBUF did not sleep");

	count = 4;
	KUNIT_EXPECT_EQ(test, vb2t_reqbufs(ctx, V4L2_MEMORY_MMAP, &count), -EBUSY);
	vb2t_init_buffer(ctx, &b, NULL, 0);
	mutex_lock(&ctx->mutex);
	ret = vb2_dqbuf(&ctx->q, &b, false);
	mutex_unlock(&ctx->mutex);
	KUNIT_EXPECT_EQ(test, ret, -EBUSY);
	KUNIT_EXPECT_EQ(test, vb2_get_num_buffers(&ctx->q), 2);

	KUNIT_EXPECT_EQ(test, vb2t_streamoff(ctx), 0);
	KUNIT_EXPECT_GT(test, wait_for_completion_timeout(&w->done, 5 * HZ), 0);
	KUNIT_EXPECT_EQ(test, w->ret, -EINVAL);
	KUNIT_EXPECT_FALSE(test, ctx->q.waiting_in_dqbuf);
	count = 4;
	KUNIT_EXPECT_EQ(test, vb2t_reqbufs(ctx, V4L2_MEMORY_MMAP, &count), 0);
}

/*
 * While read() emulation owns the queue, the core calls that a subsystem
 * other than V4L2 makes directly (dvb-core does) are refused with -EBUSY,
 * as the V4L2 ioctls are, and change nothing.
 */
static void vb2_misc_core_calls_in_fileio(struct kunit *test)
{
	struct vb2t_config cfg = { .type = CAP, .io_modes = VB2_MMAP | VB2_READ };
	struct vb2t_ctx *ctx = vb2t_ctx_create(test, &cfg);
	const unsigned int sizes[1] = { PAGE_SIZE };
	unsigned int n, count, first = 0, index = 0;
	struct vb2_queue *q = &ctx->q;
	struct vb2_buffer *vb;

	KUNIT_EXPECT_EQ(test, poll_now(ctx), 0);
	KUNIT_ASSERT_TRUE(test, vb2_fileio_is_active(q));
	n = vb2_get_num_buffers(q);
	KUNIT_ASSERT_GT(test, n, 0);
	vb = vb2_get_buffer(q, 0);
	KUNIT_ASSERT_NOT_NULL(test, vb);
	vb2t_log_reset(ctx);

	mutex_lock(&ctx->mutex);
	KUNIT_EXPECT_EQ(test, vb2_core_prepare_buf(q, vb, NULL), -EBUSY);
	KUNIT_EXPECT_EQ(test, vb2_core_qbuf(q, vb, NULL, NULL), -EBUSY);
	KUNIT_EXPECT_EQ(test, vb2_core_dqbuf(q, &index, NULL, true), -EBUSY);
	KUNIT_EXPECT_EQ(test, vb2_core_streamon(q, q->type), -EBUSY);
	KUNIT_EXPECT_EQ(test, vb2_core_streamoff(q, q->type), -EBUSY);
	count = 0;
	KUNIT_EXPECT_EQ(test, vb2_core_reqbufs(q, VB2_MEMORY_MMAP, 0, &count),
			-EBUSY);
	count = 1;
	KUNIT_EXPECT_EQ(test, vb2_core_create_bufs(q, VB2_MEMORY_MMAP, 0, &count,
						   1, sizes, &first), -EBUSY);
	KUNIT_EXPECT_EQ(test, vb2_core_remove_bufs(q, 0, 1), -EBUSY);
	mutex_unlock(&ctx->mutex);

	KUNIT_EXPECT_TRUE(test, vb2_fileio_is_active(q));
	KUNIT_EXPECT_TRUE(test, vb2_is_streaming(q));
	KUNIT_EXPECT_EQ(test, vb2_get_num_buffers(q), n);
	KUNIT_EXPECT_STREQ(test, vb2t_log_str(ctx), "");
}

/* Set up a capture queue of two buffers, both with the driver. */
static void stream_two(struct kunit *test, struct vb2t_ctx *ctx)
{
	reqbufs_n(test, ctx, 2);
	qbuf_range(test, ctx, 0, 2);
	KUNIT_ASSERT_EQ(test, vb2t_streamon(ctx), 0);
}

/*
 * A blocking DQBUF on a queue with neither &vb2_queue.lock nor wait ops
 * (the driver serialises its ioctls some other way): the core has no lock
 * to drop and sleeps until the buffer completes.
 */
static void vb2_misc_dqbuf_without_any_lock(struct kunit *test)
{
	struct vb2t_config cfg = { .type = CAP, .no_wait_ops = true };
	struct vb2t_ctx *ctx = vb2t_ctx_create(test, &cfg);
	struct vb2t_irq *irq = vb2t_irq_alloc(test);
	unsigned int index = ~0U;
	bool fired;
	int ret;

	stream_two(test, ctx);
	ctx->q.lock = NULL;
	vb2t_irq_start(irq, ctx, 1, 30, NULL);
	ret = vb2_core_dqbuf(&ctx->q, &index, NULL, false);
	fired = completion_done(&irq->done);
	wait_for_completion_timeout(&irq->done, 5 * HZ);
	hrtimer_cancel(&irq->timer);
	ctx->q.lock = &ctx->mutex;
	KUNIT_EXPECT_EQ(test, ret, 0);
	KUNIT_EXPECT_EQ(test, index, 0);
	KUNIT_EXPECT_TRUE_MSG(test, fired, "DQBUF returned before the buffer was done");
}

static atomic_t vb2t_wait_calls;

static void vb2t_count_wait(struct vb2_queue *q)
{
	atomic_inc(&vb2t_wait_calls);
}

/*
 * A blocking DQBUF, with the queue lock held, of a driver that has only
 * one of wait_prepare and wait_finish (@prepare: which one): the core
 * calls the one there is, once, and drops no lock itself since the
 * driver handles locking.
 */
static void dqbuf_one_wait_op(struct kunit *test, bool prepare)
{
	/* Before the context: freed after the queue release that uses it. */
	struct vb2_ops *const ops = kunit_kzalloc(test, sizeof(*ops), GFP_KERNEL);
	struct vb2t_ctx *ctx;
	struct vb2t_irq *irq;
	unsigned int index = ~0U;
	bool fired, held;
	int ret;

	KUNIT_ASSERT_NOT_NULL(test, ops);
	ctx = vb2t_ctx_simple(test, CAP);
	irq = vb2t_irq_alloc(test);
	*ops = *ctx->q.ops;
	ops->wait_prepare = prepare ? vb2t_count_wait : NULL;
	ops->wait_finish = prepare ? NULL : vb2t_count_wait;
	ctx->q.ops = ops;
	atomic_set(&vb2t_wait_calls, 0);

	stream_two(test, ctx);
	vb2t_irq_start(irq, ctx, 1, 30, NULL);
	mutex_lock(&ctx->mutex);
	ret = vb2_core_dqbuf(&ctx->q, &index, NULL, false);
	fired = completion_done(&irq->done);
	held = mutex_is_locked(&ctx->mutex);
	mutex_unlock(&ctx->mutex);
	wait_for_completion_timeout(&irq->done, 5 * HZ);
	hrtimer_cancel(&irq->timer);
	KUNIT_EXPECT_EQ(test, ret, 0);
	KUNIT_EXPECT_EQ(test, index, 0);
	KUNIT_EXPECT_TRUE(test, fired);
	KUNIT_EXPECT_TRUE(test, held);
	KUNIT_EXPECT_EQ(test, atomic_read(&vb2t_wait_calls), 1);
	KUNIT_EXPECT_EQ(test, vb2t_count(ctx, VB2T_WAIT_PREPARE), 0);
	KUNIT_EXPECT_EQ(test, vb2t_count(ctx, VB2T_WAIT_FINISH), 0);
}

static void vb2_misc_dqbuf_wait_finish_only(struct kunit *test)
{
	dqbuf_one_wait_op(test, false);
}

static void vb2_misc_dqbuf_wait_prepare_only(struct kunit *test)
{
	dqbuf_one_wait_op(test, true);
}

/*
 * STREAMON with fewer than min_queued_buffers queued streams without
 * starting the driver: vb2_wait_for_all_buffers() returns at once.
 */
static void vb2_misc_wait_for_all_deferred(struct kunit *test)
{
	struct vb2t_config cfg = { .type = CAP, .min_queued_buffers = 2 };
	struct vb2t_ctx *ctx = vb2t_ctx_create(test, &cfg);

	reqbufs_n(test, ctx, 3);
	qbuf_range(test, ctx, 0, 1);
	KUNIT_ASSERT_EQ(test, vb2t_streamon(ctx), 0);
	KUNIT_ASSERT_FALSE(test, vb2_start_streaming_called(&ctx->q));
	KUNIT_EXPECT_EQ(test, vb2_wait_for_all_buffers(&ctx->q), 0);
	KUNIT_EXPECT_EQ(test, vb2t_count(ctx, VB2T_START_STREAMING), 0);
}

/* vb2_core_queue_init() gives a queue without buf_struct_size the bare size. */
static void vb2_misc_core_init_struct_size(struct kunit *test)
{
	struct vb2t_ctx *ctx = vb2t_ctx_simple(test, CAP);
	struct vb2_queue *q = kunit_kzalloc(test, sizeof(*q), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, q);
	q->type = CAP;
	q->io_modes = VB2_MMAP;
	q->ops = ctx->q.ops;
	q->mem_ops = ctx->q.mem_ops;
	q->drv_priv = ctx;
	q->lock = &ctx->mutex;
	KUNIT_ASSERT_EQ(test, vb2_core_queue_init(q), 0);
	KUNIT_EXPECT_EQ(test, q->buf_struct_size, sizeof(struct vb2_buffer));
	KUNIT_EXPECT_EQ(test, q->dma_dir, DMA_FROM_DEVICE);
	vb2_core_queue_release(q);
}

static struct kunit_case vb2_misc_cases[] = {
	KUNIT_CASE(vb2_misc_poll_capture),
	KUNIT_CASE(vb2_misc_poll_output),
	KUNIT_CASE(vb2_misc_poll_starts_read),
	KUNIT_CASE(vb2_misc_fileio_too_many_buffers),
	KUNIT_CASE(vb2_misc_thread),
	KUNIT_CASE(vb2_misc_thread_output),
	KUNIT_CASE(vb2_misc_thread_callback_fails),
	KUNIT_CASE(vb2_misc_thread_start_fails),
	KUNIT_CASE(vb2_misc_wait_for_all_buffers),
	KUNIT_CASE(vb2_misc_max_num_buffers),
	KUNIT_CASE(vb2_misc_dqbuf_woken_by_error),
	KUNIT_CASE(vb2_misc_dqbuf_sleeper),
	KUNIT_CASE(vb2_misc_core_calls_in_fileio),
	KUNIT_CASE(vb2_misc_dqbuf_without_any_lock),
	KUNIT_CASE(vb2_misc_dqbuf_wait_finish_only),
	KUNIT_CASE(vb2_misc_dqbuf_wait_prepare_only),
	KUNIT_CASE(vb2_misc_wait_for_all_deferred),
	KUNIT_CASE(vb2_misc_core_init_struct_size),
	{}
};

static struct kunit_suite vb2_misc_suite = {
	.name = "videobuf2-poll-thread",
	.test_cases = vb2_misc_cases,
};

kunit_test_suites(&vb2_state_suite, &vb2_cycle_suite, &vb2_fail_suite,
		  &vb2_stream_suite, &vb2_buffers_suite, &vb2_misc_suite);

MODULE_IMPORT_NS(EXPORTED_FOR_KUNIT_TESTING);
