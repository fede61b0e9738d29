// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests of the videobuf2 V4L2 layer: every bad argument user space
 * can pass must fail with the errno of the uAPI documentation
 * (Documentation/userspace-api/media/v4l/vidioc-*.rst) and leave the
 * queue as it was, still usable.
 */

#include <kunit/test.h>
#include <linux/fcntl.h>

#include <media/videobuf2-v4l2.h>
#include <media/videobuf2-vmalloc.h>

#include "vb2-test-helpers.h"

#define CAP	V4L2_BUF_TYPE_VIDEO_CAPTURE
#define OUT	V4L2_BUF_TYPE_VIDEO_OUTPUT
#define CAP_MP	V4L2_BUF_TYPE_VIDEO_CAPTURE_MPLANE
#define OUT_MP	V4L2_BUF_TYPE_VIDEO_OUTPUT_MPLANE

static void alloc_mmap(struct kunit *test, struct vb2t_ctx *ctx, unsigned int n)
{
	unsigned int count = n;

	KUNIT_ASSERT_EQ(test, vb2t_reqbufs(ctx, V4L2_MEMORY_MMAP, &count), 0);
	KUNIT_ASSERT_EQ(test, count, n);
}

/* Nothing happened to the queue: no callback since the log was reset. */
static void expect_untouched(struct kunit *test, struct vb2t_ctx *ctx)
{
	KUNIT_EXPECT_STREQ(test, vb2t_log_str(ctx), "");
	vb2t_check_contract(ctx);
}

/* The buffer still works after the refused call. */
static void expect_usable(struct kunit *test, struct vb2t_ctx *ctx,
			  unsigned int index)
{
	KUNIT_EXPECT_EQ(test, vb2t_state(ctx, index), VB2_BUF_STATE_DEQUEUED);
	KUNIT_EXPECT_EQ(test, vb2t_qbuf_mmap(ctx, index), 0);
	KUNIT_EXPECT_EQ(test, vb2t_state(ctx, index), VB2_BUF_STATE_QUEUED);
}

static void vb2_args_querybuf(struct kunit *test)
{
	struct vb2t_config cfg = { .type = CAP_MP, .num_planes = 2 };
	struct vb2t_ctx *ctx = vb2t_ctx_create(test, &cfg);
	struct v4l2_plane planes[VB2_MAX_PLANES];
	struct v4l2_buffer b;

	/* No buffers yet. */
	vb2t_init_buffer(ctx, &b, planes, 0);
	KUNIT_EXPECT_EQ(test, vb2t_querybuf(ctx, &b), -EINVAL);

	alloc_mmap(test, ctx, 2);
	vb2t_log_reset(ctx);
	vb2t_init_buffer(ctx, &b, planes, 0);
	b.type = OUT_MP;
	KUNIT_EXPECT_EQ(test, vb2t_querybuf(ctx, &b), -EINVAL);
	vb2t_init_buffer(ctx, &b, planes, 2);
	KUNIT_EXPECT_EQ(test, vb2t_querybuf(ctx, &b), -EINVAL);
	vb2t_init_buffer(ctx, &b, planes, ~0U);
	KUNIT_EXPECT_EQ(test, vb2t_querybuf(ctx, &b), -EINVAL);
	vb2t_init_buffer(ctx, &b, planes, 0);
	b.m.planes = NULL;
	KUNIT_EXPECT_EQ(test, vb2t_querybuf(ctx, &b), -EINVAL);
	vb2t_init_buffer(ctx, &b, planes, 0);
	b.length = 1;
	KUNIT_EXPECT_EQ(test, vb2t_querybuf(ctx, &b), -EINVAL);
	vb2t_init_buffer(ctx, &b, planes, 0);
	b.length = VB2_MAX_PLANES + 1;
	KUNIT_EXPECT_EQ(test, vb2t_querybuf(ctx, &b), -EINVAL);
	expect_untouched(test, ctx);

	/* A larger array than needed is fine; length says how many planes. */
	vb2t_init_buffer(ctx, &b, planes, 1);
	b.length = VB2_MAX_PLANES;
	KUNIT_EXPECT_EQ(test, vb2t_querybuf(ctx, &b), 0);
	KUNIT_EXPECT_EQ(test, b.length, 2);
	KUNIT_EXPECT_EQ(test, planes[1].length, PAGE_SIZE);
	expect_usable(test, ctx, 1);
}

static void vb2_args_qbuf_bad_buffer(struct kunit *test)
{
	struct vb2t_ctx *ctx = vb2t_ctx_simple(test, CAP);
	struct v4l2_buffer b;

	/* No buffers allocated yet. */
	KUNIT_EXPECT_EQ(test, vb2t_qbuf_mmap(ctx, 0), -EINVAL);

	alloc_mmap(test, ctx, 2);
	vb2t_log_reset(ctx);
	vb2t_init_buffer(ctx, &b, NULL, 0);
	b.type = OUT;
	KUNIT_EXPECT_EQ(test, vb2t_qbuf(ctx, &b), -EINVAL);
	vb2t_init_buffer(ctx, &b, NULL, 0);
	b.memory = V4L2_MEMORY_USERPTR;
	KUNIT_EXPECT_EQ(test, vb2t_qbuf(ctx, &b), -EINVAL);
	vb2t_init_buffer(ctx, &b, NULL, 0);
	b.memory = V4L2_MEMORY_OVERLAY;
	KUNIT_EXPECT_EQ(test, vb2t_qbuf(ctx, &b), -EINVAL);
	vb2t_init_buffer(ctx, &b, NULL, 2);
	KUNIT_EXPECT_EQ(test, vb2t_qbuf(ctx, &b), -EINVAL);
	vb2t_init_buffer(ctx, &b, NULL, VIDEO_MAX_FRAME);
	KUNIT_EXPECT_EQ(test, vb2t_qbuf(ctx, &b), -EINVAL);
	expect_untouched(test, ctx);
	expect_usable(test, ctx, 0);

	/* Queueing a queued buffer again. */
	vb2t_log_reset(ctx);
	KUNIT_EXPECT_EQ(test, vb2t_qbuf_mmap(ctx, 0), -EINVAL);
	expect_untouched(test, ctx);
	KUNIT_EXPECT_EQ(test, vb2t_state(ctx, 0), VB2_BUF_STATE_QUEUED);
}

/* Multi-planar: the plane array must be there and cover every plane. */
static void vb2_args_qbuf_planes(struct kunit *test)
{
	struct vb2t_config cfg = { .type = OUT_MP, .num_planes = 2 };
	struct vb2t_ctx *ctx = vb2t_ctx_create(test, &cfg);
	struct v4l2_plane planes[VB2_MAX_PLANES];
	struct v4l2_buffer b;

	alloc_mmap(test, ctx, 1);
	vb2t_log_reset(ctx);
	vb2t_init_buffer(ctx, &b, planes, 0);
	b.m.planes = NULL;
	KUNIT_EXPECT_EQ(test, vb2t_qbuf(ctx, &b), -EINVAL);
	vb2t_init_buffer(ctx, &b, planes, 0);
	b.length = 1;
	KUNIT_EXPECT_EQ(test, vb2t_qbuf(ctx, &b), -EINVAL);
	vb2t_init_buffer(ctx, &b, planes, 0);
	b.length = 0;
	KUNIT_EXPECT_EQ(test, vb2t_qbuf(ctx, &b), -EINVAL);
	vb2t_init_buffer(ctx, &b, planes, 0);
	b.length = VB2_MAX_PLANES + 1;
	KUNIT_EXPECT_EQ(test, vb2t_qbuf(ctx, &b), -EINVAL);
	vb2t_init_buffer(ctx, &b, planes, 0);
	b.length = 0;
	KUNIT_EXPECT_EQ(test, vb2t_prepare_buf(ctx, &b), -EINVAL);
	expect_untouched(test, ctx);
	expect_usable(test, ctx, 0);
}

/* Output payloads: bytesused within the plane, data_offset inside it. */
static void vb2_args_qbuf_output_lengths(struct kunit *test)
{
	struct vb2t_config cfg = { .type = OUT_MP, .num_planes = 2 };
	struct vb2t_ctx *ctx = vb2t_ctx_create(test, &cfg);
	struct v4l2_plane planes[VB2_MAX_PLANES];
	struct v4l2_buffer b;
	struct vb2_buffer *vb;

	alloc_mmap(test, ctx, 2);
	vb2t_log_reset(ctx);
	vb2t_init_buffer(ctx, &b, planes, 0);
	planes[1].bytesused = PAGE_SIZE + 1;
	KUNIT_EXPECT_EQ(test, vb2t_qbuf(ctx, &b), -EINVAL);
	vb2t_init_buffer(ctx, &b, planes, 0);
	planes[0].bytesused = 100;
	planes[0].data_offset = 100;
	KUNIT_EXPECT_EQ(test, vb2t_qbuf(ctx, &b), -EINVAL);
	vb2t_init_buffer(ctx, &b, planes, 0);
	planes[0].bytesused = 100;
	planes[0].data_offset = 200;
	KUNIT_EXPECT_EQ(test, vb2t_prepare_buf(ctx, &b), -EINVAL);
	vb2t_init_buffer(ctx, &b, planes, 0);
	b.field = V4L2_FIELD_ALTERNATE;
	KUNIT_EXPECT_EQ(test, vb2t_qbuf(ctx, &b), -EINVAL);
	expect_untouched(test, ctx);

	/* Valid values reach the buffer; bytesused 0 means the whole plane. */
	vb2t_init_buffer(ctx, &b, planes, 0);
	planes[0].bytesused = 100;
	planes[0].data_offset = 99;
	planes[1].bytesused = 0;
	KUNIT_EXPECT_EQ(test, vb2t_qbuf(ctx, &b), 0);
	vb = vb2_get_buffer(&ctx->q, 0);
	KUNIT_EXPECT_EQ(test, vb->planes[0].bytesused, 100);
	KUNIT_EXPECT_EQ(test, vb->planes[0].data_offset, 99);
	KUNIT_EXPECT_EQ(test, vb->planes[1].bytesused, PAGE_SIZE);
	expect_usable(test, ctx, 1);
}

/* Single-planar output: bytesused larger than the buffer. */
static void vb2_args_qbuf_output_single(struct kunit *test)
{
	struct vb2t_ctx *ctx = vb2t_ctx_simple(test, OUT);
	struct v4l2_buffer b;

	alloc_mmap(test, ctx, 1);
	vb2t_log_reset(ctx);
	vb2t_init_buffer(ctx, &b, NULL, 0);
	b.bytesused = PAGE_SIZE + 1;
	KUNIT_EXPECT_EQ(test, vb2t_qbuf(ctx, &b), -EINVAL);
	expect_untouched(test, ctx);
	expect_usable(test, ctx, 0);
}

/* Flags that belong to videobuf2 or to the producer are not taken. */
static void vb2_args_flags_stripped(struct kunit *test)
{
	const u32 state = V4L2_BUF_FLAG_MAPPED | V4L2_BUF_FLAG_QUEUED |
			  V4L2_BUF_FLAG_DONE | V4L2_BUF_FLAG_ERROR |
			  V4L2_BUF_FLAG_PREPARED | V4L2_BUF_FLAG_IN_REQUEST;
	struct vb2t_ctx *ctx = vb2t_ctx_simple(test, CAP);
	struct v4l2_buffer b;
	u32 flags;

	alloc_mmap(test, ctx, 2);
	vb2t_init_buffer(ctx, &b, NULL, 0);
	b.flags = state | V4L2_BUF_FLAG_LAST | V4L2_BUF_FLAG_KEYFRAME |
		  V4L2_BUF_FLAG_TIMESTAMP_COPY;
	KUNIT_ASSERT_EQ(test, vb2t_qbuf(ctx, &b), 0);
	/* The answer describes the buffer: queued, nothing else. */
	KUNIT_EXPECT_EQ(test, b.flags & (state | V4L2_BUF_FLAG_LAST |
					 V4L2_BUF_FLAG_KEYFRAME),
			V4L2_BUF_FLAG_QUEUED);
	KUNIT_EXPECT_EQ(test, b.flags & V4L2_BUF_FLAG_TIMESTAMP_MASK,
			V4L2_BUF_FLAG_TIMESTAMP_MONOTONIC);

	KUNIT_ASSERT_EQ(test, vb2t_streamon(ctx), 0);
	KUNIT_ASSERT_TRUE(test, vb2t_complete_next(ctx, VB2_BUF_STATE_DONE));
	KUNIT_ASSERT_EQ(test, vb2t_dqbuf_index(ctx, NULL, &flags), 0);
	/* Not flagged LAST: a following DQBUF does not say -EPIPE. */
	KUNIT_EXPECT_EQ(test, flags & (state | V4L2_BUF_FLAG_LAST |
				       V4L2_BUF_FLAG_KEYFRAME), 0);
	KUNIT_EXPECT_EQ(test, vb2t_dqbuf_index(ctx, NULL, NULL), -EAGAIN);
}

/* On output queues the frame type flags and the timecode are kept. */
static void vb2_args_flags_output_kept(struct kunit *test)
{
	struct vb2t_ctx *ctx = vb2t_ctx_simple(test, OUT);
	struct v4l2_buffer b;
	u32 flags;

	alloc_mmap(test, ctx, 1);
	vb2t_init_buffer(ctx, &b, NULL, 0);
	b.flags = V4L2_BUF_FLAG_KEYFRAME | V4L2_BUF_FLAG_TIMECODE |
		  V4L2_BUF_FLAG_DONE;
	b.timecode.frames = 7;
	b.field = V4L2_FIELD_TOP;
	KUNIT_ASSERT_EQ(test, vb2t_qbuf(ctx, &b), 0);
	KUNIT_ASSERT_EQ(test, vb2t_streamon(ctx), 0);
	KUNIT_ASSERT_TRUE(test, vb2t_complete_next(ctx, VB2_BUF_STATE_DONE));
	vb2t_init_buffer(ctx, &b, NULL, 0);
	KUNIT_ASSERT_EQ(test, vb2t_dqbuf(ctx, &b), 0);
	flags = b.flags;
	KUNIT_EXPECT_TRUE(test, flags & V4L2_BUF_FLAG_KEYFRAME);
	KUNIT_EXPECT_TRUE(test, flags & V4L2_BUF_FLAG_TIMECODE);
	KUNIT_EXPECT_FALSE(test, flags & V4L2_BUF_FLAG_DONE);
	KUNIT_EXPECT_EQ(test, b.timecode.frames, 7);
	KUNIT_EXPECT_EQ(test, b.field, V4L2_FIELD_TOP);
}

/* REQUEST_FD on a queue without request support: -EBADR. */
static void vb2_args_request_fd_unsupported(struct kunit *test)
{
	struct vb2t_ctx *ctx = vb2t_ctx_simple(test, OUT);
	struct v4l2_buffer b;

	alloc_mmap(test, ctx, 1);
	vb2t_log_reset(ctx);
	vb2t_init_buffer(ctx, &b, NULL, 0);
	b.flags = V4L2_BUF_FLAG_REQUEST_FD;
	b.request_fd = 0;
	KUNIT_EXPECT_EQ(test, vb2t_qbuf(ctx, &b), -EBADR);
	/* PREPARE_BUF never takes a request. */
	vb2t_init_buffer(ctx, &b, NULL, 0);
	b.flags = V4L2_BUF_FLAG_REQUEST_FD;
	KUNIT_EXPECT_EQ(test, vb2t_prepare_buf(ctx, &b), -EINVAL);
	expect_untouched(test, ctx);
	expect_usable(test, ctx, 0);
}

/* Request support: a bad request_fd is -EINVAL, no request at all -EBADR. */
static void vb2_args_request_fd(struct kunit *test)
{
	struct vb2t_config cfg = { .type = OUT, .supports_requests = true };
	struct vb2t_ctx *ctx = vb2t_ctx_create(test, &cfg);
	struct media_device *mdev = vb2t_mdev_create(test);
	struct v4l2_buffer b;
	int ret;

	alloc_mmap(test, ctx, 1);
	vb2t_log_reset(ctx);
	vb2t_init_buffer(ctx, &b, NULL, 0);
	b.flags = V4L2_BUF_FLAG_REQUEST_FD;
	b.request_fd = -1;
	mutex_lock(&ctx->mutex);
	ret = vb2_qbuf(&ctx->q, mdev, &b);
	mutex_unlock(&ctx->mutex);
	KUNIT_EXPECT_EQ(test, ret, -EINVAL);

	/* A queue that requires requests refuses plain QBUF. */
	ctx->q.requires_requests = 1;
	KUNIT_EXPECT_EQ(test, vb2t_qbuf_mmap(ctx, 0), -EBADR);
	expect_untouched(test, ctx);
	ctx->q.requires_requests = 0;
	expect_usable(test, ctx, 0);
}

static void vb2_args_dqbuf(struct kunit *test)
{
	struct vb2t_ctx *ctx = vb2t_ctx_simple(test, CAP);
	struct v4l2_buffer b;

	alloc_mmap(test, ctx, 2);
	KUNIT_ASSERT_EQ(test, vb2t_qbuf_mmap(ctx, 0), 0);
	/* Not streaming. */
	KUNIT_EXPECT_EQ(test, vb2t_dqbuf_index(ctx, NULL, NULL), -EINVAL);
	KUNIT_ASSERT_EQ(test, vb2t_streamon(ctx), 0);
	/* Streaming, nothing done, non-blocking. */
	KUNIT_EXPECT_EQ(test, vb2t_dqbuf_index(ctx, NULL, NULL), -EAGAIN);
	KUNIT_ASSERT_TRUE(test, vb2t_complete_next(ctx, VB2_BUF_STATE_DONE));
	vb2t_init_buffer(ctx, &b, NULL, 0);
	b.type = OUT;
	KUNIT_EXPECT_EQ(test, vb2t_dqbuf(ctx, &b), -EINVAL);
	KUNIT_EXPECT_EQ(test, vb2t_state(ctx, 0), VB2_BUF_STATE_DONE);
	KUNIT_EXPECT_EQ(test, vb2t_dqbuf_index(ctx, NULL, NULL), 0);
}

/* A multi-planar DQBUF with a bad plane array does not lose the buffer. */
static void vb2_args_dqbuf_planes(struct kunit *test)
{
	struct vb2t_config cfg = { .type = CAP_MP, .num_planes = 2 };
	struct vb2t_ctx *ctx = vb2t_ctx_create(test, &cfg);
	struct v4l2_plane planes[VB2_MAX_PLANES];
	struct v4l2_buffer b;

	alloc_mmap(test, ctx, 1);
	KUNIT_ASSERT_EQ(test, vb2t_qbuf_mmap(ctx, 0), 0);
	KUNIT_ASSERT_EQ(test, vb2t_streamon(ctx), 0);
	KUNIT_ASSERT_TRUE(test, vb2t_complete_next(ctx, VB2_BUF_STATE_DONE));
	vb2t_init_buffer(ctx, &b, planes, 0);
	b.length = 1;
	KUNIT_EXPECT_EQ(test, vb2t_dqbuf(ctx, &b), -EINVAL);
	vb2t_init_buffer(ctx, &b, planes, 0);
	b.m.planes = NULL;
	KUNIT_EXPECT_EQ(test, vb2t_dqbuf(ctx, &b), -EINVAL);
	KUNIT_EXPECT_EQ(test, vb2t_state(ctx, 0), VB2_BUF_STATE_DONE);
	vb2t_init_buffer(ctx, &b, planes, 0);
	KUNIT_EXPECT_EQ(test, vb2t_dqbuf(ctx, &b), 0);
	KUNIT_EXPECT_EQ(test, b.length, 2);
}

static void vb2_args_streamon_off(struct kunit *test)
{
	struct vb2t_ctx *ctx = vb2t_ctx_simple(test, OUT);

	/* No buffers. */
	KUNIT_EXPECT_EQ(test, vb2t_streamon(ctx), -EINVAL);
	KUNIT_EXPECT_FALSE(test, vb2_is_streaming(&ctx->q));
	alloc_mmap(test, ctx, 2);
	vb2t_log_reset(ctx);
	mutex_lock(&ctx->mutex);
	KUNIT_EXPECT_EQ(test, vb2_streamon(&ctx->q, CAP), -EINVAL);
	KUNIT_EXPECT_EQ(test, vb2_streamoff(&ctx->q, CAP), -EINVAL);
	mutex_unlock(&ctx->mutex);
	expect_untouched(test, ctx);
	/* STREAMOFF when not streaming and STREAMON twice are fine. */
	KUNIT_EXPECT_EQ(test, vb2t_streamoff(ctx), 0);
	KUNIT_EXPECT_EQ(test, vb2t_streamon(ctx), 0);
	KUNIT_EXPECT_EQ(test, vb2t_streamon(ctx), 0);
	KUNIT_EXPECT_EQ(test, vb2t_count(ctx, VB2T_PREPARE_STREAMING), 1);
	KUNIT_EXPECT_EQ(test, vb2t_count(ctx, VB2T_START_STREAMING), 1);
	KUNIT_EXPECT_EQ(test, vb2t_streamoff(ctx), 0);
	KUNIT_EXPECT_EQ(test, vb2t_streamoff(ctx), 0);
	KUNIT_EXPECT_EQ(test, vb2t_count(ctx, VB2T_STOP_STREAMING), 1);
}

static void vb2_args_reqbufs(struct kunit *test)
{
	struct vb2t_config cfg = { .type = CAP, .io_modes = VB2_MMAP };
	struct vb2t_ctx *ctx = vb2t_ctx_create(test, &cfg);
	struct v4l2_requestbuffers req = {
		.count = 2, .type = OUT, .memory = V4L2_MEMORY_MMAP,
	};
	unsigned int count;

	mutex_lock(&ctx->mutex);
	KUNIT_EXPECT_EQ(test, vb2_reqbufs(&ctx->q, &req), -EINVAL);
	mutex_unlock(&ctx->mutex);
	/* The capabilities are reported even when the call fails. */
	KUNIT_EXPECT_TRUE(test, req.capabilities & V4L2_BUF_CAP_SUPPORTS_MMAP);
	KUNIT_EXPECT_FALSE(test, req.capabilities &
			   V4L2_BUF_CAP_SUPPORTS_USERPTR);

	count = 2;
	KUNIT_EXPECT_EQ(test, vb2t_reqbufs(ctx, V4L2_MEMORY_USERPTR, &count),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, vb2t_reqbufs(ctx, V4L2_MEMORY_DMABUF, &count),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, vb2t_reqbufs(ctx, V4L2_MEMORY_OVERLAY, &count),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, vb2t_reqbufs(ctx, 0, &count), -EINVAL);
	KUNIT_EXPECT_EQ(test, vb2t_reqbufs(ctx, 77, &count), -EINVAL);
	KUNIT_EXPECT_EQ(test, vb2t_count(ctx, VB2T_QUEUE_SETUP), 0);
	KUNIT_EXPECT_FALSE(test, vb2_is_busy(&ctx->q));

	/* Flags are cleared when the queue does not honour them. */
	req.type = CAP;
	req.count = 2;
	req.flags = V4L2_MEMORY_FLAG_NON_COHERENT;
	mutex_lock(&ctx->mutex);
	KUNIT_EXPECT_EQ(test, vb2_reqbufs(&ctx->q, &req), 0);
	mutex_unlock(&ctx->mutex);
	KUNIT_EXPECT_EQ(test, req.flags, 0);
	KUNIT_EXPECT_EQ(test, req.count, 2);
	KUNIT_EXPECT_TRUE(test, req.capabilities &
			  V4L2_BUF_CAP_SUPPORTS_ORPHANED_BUFS);
	KUNIT_EXPECT_EQ(test, vb2t_qbuf_mmap(ctx, 1), 0);
}

/* REQBUFS while streaming: -EBUSY, and the stream goes on. */
static void vb2_args_reqbufs_streaming(struct kunit *test)
{
	struct vb2t_ctx *ctx = vb2t_ctx_simple(test, CAP);
	unsigned int count;
	int ret;

	alloc_mmap(test, ctx, 2);
	KUNIT_ASSERT_EQ(test, vb2t_qbuf_mmap(ctx, 0), 0);
	KUNIT_ASSERT_EQ(test, vb2t_streamon(ctx), 0);
	vb2t_log_reset(ctx);
	count = 4;
	KUNIT_EXPECT_EQ(test, vb2t_reqbufs(ctx, V4L2_MEMORY_MMAP, &count), -EBUSY);
	count = 4;
	KUNIT_EXPECT_EQ(test, vb2t_reqbufs(ctx, V4L2_MEMORY_USERPTR, &count),
			-EBUSY);
	expect_untouched(test, ctx);
	KUNIT_EXPECT_EQ(test, vb2_get_num_buffers(&ctx->q), 2);
	KUNIT_EXPECT_EQ(test, vb2t_state(ctx, 0), VB2_BUF_STATE_ACTIVE);
	KUNIT_EXPECT_EQ(test, vb2t_qbuf_mmap(ctx, 1), 0);
	KUNIT_EXPECT_EQ(test, vb2t_owned(ctx), 2);

	/*
	 * REQBUFS(0) is documented as an implicit STREAMOFF: either it
	 * refuses like above, or it stops and frees everything.
	 */
	count = 0;
	ret = vb2t_reqbufs(ctx, V4L2_MEMORY_MMAP, &count);
	if (ret) {
		KUNIT_EXPECT_EQ(test, ret, -EBUSY);
		KUNIT_EXPECT_EQ(test, vb2t_owned(ctx), 2);
		KUNIT_EXPECT_EQ(test, vb2_get_num_buffers(&ctx->q), 2);
	} else {
		KUNIT_EXPECT_FALSE(test, vb2_is_streaming(&ctx->q));
		KUNIT_EXPECT_EQ(test, vb2t_owned(ctx), 0);
		KUNIT_EXPECT_EQ(test, vb2_get_num_buffers(&ctx->q), 0);
	}
}

/*
 * CREATE_BUFS while streaming is allowed (that is what it is for); the
 * new buffers can be queued at once.
 */
static void vb2_args_create_bufs_streaming(struct kunit *test)
{
	struct vb2t_ctx *ctx = vb2t_ctx_simple(test, CAP);
	unsigned int first, created;

	alloc_mmap(test, ctx, 2);
	KUNIT_ASSERT_EQ(test, vb2t_qbuf_mmap(ctx, 0), 0);
	KUNIT_ASSERT_EQ(test, vb2t_streamon(ctx), 0);
	KUNIT_EXPECT_EQ(test, vb2t_create_bufs(ctx, V4L2_MEMORY_MMAP, 2,
					       PAGE_SIZE, &first, &created), 0);
	KUNIT_EXPECT_EQ(test, first, 2);
	KUNIT_EXPECT_EQ(test, created, 2);
	KUNIT_EXPECT_EQ(test, vb2t_qbuf_mmap(ctx, 3), 0);
	KUNIT_EXPECT_EQ(test, vb2t_owned(ctx), 2);
	/* A different memory model is refused while buffers exist. */
	KUNIT_EXPECT_EQ(test, vb2t_create_bufs(ctx, V4L2_MEMORY_USERPTR, 1,
					       PAGE_SIZE, NULL, NULL), -EINVAL);
	KUNIT_EXPECT_EQ(test, vb2_get_num_buffers(&ctx->q), 4);
}

static void vb2_args_create_bufs(struct kunit *test)
{
	struct vb2t_config cfg = { .type = CAP_MP, .num_planes = 1 };
	struct vb2t_ctx *ctx = vb2t_ctx_create(test, &cfg);
	struct v4l2_create_buffers cb = { .count = 1, .memory = V4L2_MEMORY_MMAP };
	unsigned int first = 77, created = 77;

	/* Zero size. */
	KUNIT_EXPECT_EQ(test, vb2t_create_bufs(ctx, V4L2_MEMORY_MMAP, 1, 0,
					       NULL, NULL), -EINVAL);
	/* Smaller than the driver's format needs: queue_setup refuses. */
	KUNIT_EXPECT_EQ(test, vb2t_create_bufs(ctx, V4L2_MEMORY_MMAP, 1,
					       PAGE_SIZE - 1, NULL, NULL),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, vb2t_create_bufs(ctx, V4L2_MEMORY_OVERLAY, 1,
					       PAGE_SIZE, NULL, NULL), -EINVAL);
	/* Bad plane counts and format types. */
	cb.format.type = CAP_MP;
	cb.format.fmt.pix_mp.num_planes = 0;
	mutex_lock(&ctx->mutex);
	KUNIT_EXPECT_EQ(test, vb2_create_bufs(&ctx->q, &cb), -EINVAL);
	cb.format.fmt.pix_mp.num_planes = VB2_MAX_PLANES + 1;
	KUNIT_EXPECT_EQ(test, vb2_create_bufs(&ctx->q, &cb), -EINVAL);
	cb.format.type = CAP;
	cb.format.fmt.pix.sizeimage = PAGE_SIZE;
	KUNIT_EXPECT_EQ(test, vb2_create_bufs(&ctx->q, &cb), -EINVAL);
	mutex_unlock(&ctx->mutex);
	KUNIT_EXPECT_EQ(test, vb2_get_num_buffers(&ctx->q), 0);
	KUNIT_EXPECT_EQ(test, vb2t_count(ctx, VB2T_ALLOC), 0);

	/* count 0 only checks, and reports the next index. */
	KUNIT_EXPECT_EQ(test, vb2t_create_bufs(ctx, V4L2_MEMORY_MMAP, 0,
					       PAGE_SIZE, &first, &created), 0);
	KUNIT_EXPECT_EQ(test, first, 0);
	KUNIT_EXPECT_EQ(test, created, 0);
	/* Only the too small size reached the driver. */
	KUNIT_EXPECT_EQ(test, vb2t_count(ctx, VB2T_QUEUE_SETUP), 1);
	KUNIT_EXPECT_FALSE(test, vb2_is_busy(&ctx->q));

	/* A larger size is fine. */
	KUNIT_EXPECT_EQ(test, vb2t_create_bufs(ctx, V4L2_MEMORY_MMAP, 1,
					       3 * PAGE_SIZE, &first, &created),
			0);
	KUNIT_EXPECT_EQ(test, created, 1);
	KUNIT_EXPECT_EQ(test, vb2_plane_size(vb2_get_buffer(&ctx->q, 0), 0),
			3 * PAGE_SIZE);
	KUNIT_EXPECT_EQ(test, vb2t_qbuf_mmap(ctx, 0), 0);
}

static void vb2_args_expbuf(struct kunit *test)
{
	struct vb2t_config cfg = { .type = CAP_MP, .num_planes = 2,
				   .backend = &vb2_vmalloc_memops };
	struct vb2t_ctx *ctx = vb2t_ctx_create(test, &cfg);
	struct v4l2_exportbuffer eb = { .type = CAP_MP, .index = 0 };
	struct vb2t_ctx *plain = vb2t_ctx_simple(test, CAP);
	unsigned int count = 2;

	/* No buffers. */
	mutex_lock(&ctx->mutex);
	KUNIT_EXPECT_EQ(test, vb2_expbuf(&ctx->q, &eb), -EINVAL);
	mutex_unlock(&ctx->mutex);

	alloc_mmap(test, ctx, 2);
	mutex_lock(&ctx->mutex);
	eb.plane = 2;
	KUNIT_EXPECT_EQ(test, vb2_expbuf(&ctx->q, &eb), -EINVAL);
	eb.plane = 0;
	eb.index = 2;
	KUNIT_EXPECT_EQ(test, vb2_expbuf(&ctx->q, &eb), -EINVAL);
	eb.index = 0;
	eb.type = OUT_MP;
	KUNIT_EXPECT_EQ(test, vb2_expbuf(&ctx->q, &eb), -EINVAL);
	eb.type = CAP_MP;
	eb.flags = O_NONBLOCK;
	KUNIT_EXPECT_EQ(test, vb2_expbuf(&ctx->q, &eb), -EINVAL);
	eb.flags = 0x80000000;
	KUNIT_EXPECT_EQ(test, vb2_expbuf(&ctx->q, &eb), -EINVAL);
	mutex_unlock(&ctx->mutex);
	KUNIT_EXPECT_EQ(test, vb2t_count(ctx, VB2T_GET_DMABUF), 0);

	/* A good one. */
	eb.flags = O_CLOEXEC | O_RDWR;
	eb.plane = 1;
	mutex_lock(&ctx->mutex);
	KUNIT_EXPECT_EQ(test, vb2_expbuf(&ctx->q, &eb), 0);
	mutex_unlock(&ctx->mutex);
	KUNIT_ASSERT_GE(test, eb.fd, 0);
	vb2t_close_fd_at_exit(test, eb.fd);
	KUNIT_EXPECT_EQ(test, vb2t_count(ctx, VB2T_GET_DMABUF), 1);
	KUNIT_EXPECT_EQ(test, vb2t_qbuf_mmap(ctx, 0), 0);

	/* USERPTR buffers cannot be exported. */
	KUNIT_ASSERT_EQ(test, vb2t_streamoff(ctx), 0);
	KUNIT_ASSERT_EQ(test, vb2t_reqbufs(ctx, V4L2_MEMORY_USERPTR, &count), 0);
	eb.plane = 0;
	mutex_lock(&ctx->mutex);
	KUNIT_EXPECT_EQ(test, vb2_expbuf(&ctx->q, &eb), -EINVAL);
	mutex_unlock(&ctx->mutex);

	/* Nor can memory of an allocator without an exporter. */
	alloc_mmap(test, plain, 1);
	eb.type = CAP;
	mutex_lock(&plain->mutex);
	KUNIT_EXPECT_EQ(test, vb2_expbuf(&plain->q, &eb), -EINVAL);
	mutex_unlock(&plain->mutex);
}

static void vb2_args_prepare_buf(struct kunit *test)
{
	struct vb2t_ctx *ctx = vb2t_ctx_simple(test, CAP);
	struct v4l2_buffer b;

	alloc_mmap(test, ctx, 2);
	vb2t_init_buffer(ctx, &b, NULL, 0);
	KUNIT_EXPECT_EQ(test, vb2t_prepare_buf(ctx, &b), 0);
	vb2t_log_reset(ctx);
	vb2t_init_buffer(ctx, &b, NULL, 0);
	KUNIT_EXPECT_EQ(test, vb2t_prepare_buf(ctx, &b), -EINVAL);
	vb2t_init_buffer(ctx, &b, NULL, 2);
	KUNIT_EXPECT_EQ(test, vb2t_prepare_buf(ctx, &b), -EINVAL);
	vb2t_init_buffer(ctx, &b, NULL, 1);
	b.type = OUT;
	KUNIT_EXPECT_EQ(test, vb2t_prepare_buf(ctx, &b), -EINVAL);
	vb2t_init_buffer(ctx, &b, NULL, 1);
	b.memory = V4L2_MEMORY_DMABUF;
	KUNIT_EXPECT_EQ(test, vb2t_prepare_buf(ctx, &b), -EINVAL);
	expect_untouched(test, ctx);

	/* In error state. */
	vb2_queue_error(&ctx->q);
	vb2t_init_buffer(ctx, &b, NULL, 1);
	KUNIT_EXPECT_EQ(test, vb2t_prepare_buf(ctx, &b), -EIO);
	KUNIT_EXPECT_EQ(test, vb2t_qbuf_mmap(ctx, 1), -EIO);
	expect_untouched(test, ctx);
	KUNIT_EXPECT_EQ(test, vb2t_streamoff(ctx), 0);
	KUNIT_EXPECT_EQ(test, vb2t_qbuf_mmap(ctx, 1), 0);
}

/* COPY queues take the output timestamp from user space. */
static void vb2_args_timestamp_copy(struct kunit *test)
{
	struct vb2t_config cfg = {
		.type = OUT, .timestamp_flags = V4L2_BUF_FLAG_TIMESTAMP_COPY,
	};
	struct vb2t_ctx *ctx = vb2t_ctx_create(test, &cfg);
	struct v4l2_buffer b;

	alloc_mmap(test, ctx, 1);
	vb2t_init_buffer(ctx, &b, NULL, 0);
	b.timestamp.tv_sec = 3;
	b.timestamp.tv_usec = 500;
	KUNIT_ASSERT_EQ(test, vb2t_qbuf(ctx, &b), 0);
	KUNIT_EXPECT_EQ(test, vb2_get_buffer(&ctx->q, 0)->timestamp,
			3 * NSEC_PER_SEC + 500 * NSEC_PER_USEC);
	KUNIT_ASSERT_EQ(test, vb2t_streamon(ctx), 0);
	KUNIT_ASSERT_TRUE(test, vb2t_complete_next(ctx, VB2_BUF_STATE_DONE));
	vb2t_init_buffer(ctx, &b, NULL, 0);
	KUNIT_ASSERT_EQ(test, vb2t_dqbuf(ctx, &b), 0);
	KUNIT_EXPECT_EQ(test, b.timestamp.tv_sec, 3);
	KUNIT_EXPECT_EQ(test, b.timestamp.tv_usec, 500);
	KUNIT_EXPECT_EQ(test, b.flags & V4L2_BUF_FLAG_TIMESTAMP_MASK,
			V4L2_BUF_FLAG_TIMESTAMP_COPY);

	/* PREPARE_BUF, then QBUF: the timestamp of the QBUF counts. */
	vb2t_init_buffer(ctx, &b, NULL, 0);
	b.timestamp.tv_sec = 5;
	KUNIT_ASSERT_EQ(test, vb2t_prepare_buf(ctx, &b), 0);
	vb2t_init_buffer(ctx, &b, NULL, 0);
	b.timestamp.tv_sec = 7;
	KUNIT_ASSERT_EQ(test, vb2t_qbuf(ctx, &b), 0);
	KUNIT_EXPECT_EQ(test, vb2_get_buffer(&ctx->q, 0)->timestamp,
			7 * NSEC_PER_SEC);
}

/* Capture timestamps are the driver's, whatever user space passed. */
static void vb2_args_timestamp_capture(struct kunit *test)
{
	struct vb2t_ctx *ctx = vb2t_ctx_simple(test, CAP);
	struct vb2_buffer *vb;
	struct v4l2_buffer b;

	alloc_mmap(test, ctx, 1);
	vb2t_init_buffer(ctx, &b, NULL, 0);
	b.timestamp.tv_sec = 99;
	KUNIT_ASSERT_EQ(test, vb2t_qbuf(ctx, &b), 0);
	KUNIT_ASSERT_EQ(test, vb2t_streamon(ctx), 0);
	vb = vb2t_peek(ctx);
	KUNIT_ASSERT_NOT_NULL(test, vb);
	vb->timestamp = 12 * NSEC_PER_MSEC;
	to_vb2_v4l2_buffer(vb)->sequence = 41;
	KUNIT_ASSERT_TRUE(test, vb2t_complete_next(ctx, VB2_BUF_STATE_DONE));
	vb2t_init_buffer(ctx, &b, NULL, 0);
	KUNIT_ASSERT_EQ(test, vb2t_dqbuf(ctx, &b), 0);
	KUNIT_EXPECT_EQ(test, b.timestamp.tv_sec, 0);
	KUNIT_EXPECT_EQ(test, b.timestamp.tv_usec, 12000);
	KUNIT_EXPECT_EQ(test, b.sequence, 41);
	/* The sequence is the driver's to set again at the next QBUF. */
	KUNIT_ASSERT_EQ(test, vb2t_qbuf_mmap(ctx, 0), 0);
	KUNIT_EXPECT_EQ(test, to_vb2_v4l2_buffer(vb2_get_buffer(&ctx->q, 0))->sequence,
			0);
}

/* Cache hints count only where the queue allows them. */
static void vb2_args_cache_hints(struct kunit *test)
{
	struct vb2t_config cfg = { .type = CAP, .allow_cache_hints = true };
	struct vb2t_ctx *hints = vb2t_ctx_create(test, &cfg);
	struct vb2t_ctx *plain = vb2t_ctx_simple(test, CAP);
	const u32 skip = V4L2_BUF_FLAG_NO_CACHE_CLEAN |
			 V4L2_BUF_FLAG_NO_CACHE_INVALIDATE;
	struct v4l2_requestbuffers req = {
		.count = 2, .type = CAP, .memory = V4L2_MEMORY_MMAP,
		.flags = V4L2_MEMORY_FLAG_NON_COHERENT,
	};
	struct vb2_buffer *vb;
	struct v4l2_buffer b;

	mutex_lock(&hints->mutex);
	KUNIT_EXPECT_EQ(test, vb2_reqbufs(&hints->q, &req), 0);
	mutex_unlock(&hints->mutex);
	KUNIT_EXPECT_EQ(test, req.flags, V4L2_MEMORY_FLAG_NON_COHERENT);
	KUNIT_EXPECT_TRUE(test, req.capabilities &
			  V4L2_BUF_CAP_SUPPORTS_MMAP_CACHE_HINTS);
	KUNIT_EXPECT_TRUE(test, hints->q.non_coherent_mem);
	/* CREATE_BUFS must ask for the same coherency. */
	KUNIT_EXPECT_EQ(test, vb2t_create_bufs(hints, V4L2_MEMORY_MMAP, 1,
					       PAGE_SIZE, NULL, NULL), -EINVAL);

	vb2t_init_buffer(hints, &b, NULL, 0);
	b.flags = skip;
	KUNIT_ASSERT_EQ(test, vb2t_qbuf(hints, &b), 0);
	vb = vb2_get_buffer(&hints->q, 0);
	KUNIT_EXPECT_TRUE(test, vb->skip_cache_sync_on_prepare);
	KUNIT_EXPECT_TRUE(test, vb->skip_cache_sync_on_finish);

	alloc_mmap(test, plain, 1);
	vb2t_init_buffer(plain, &b, NULL, 0);
	b.flags = skip;
	KUNIT_ASSERT_EQ(test, vb2t_qbuf(plain, &b), 0);
	KUNIT_EXPECT_EQ(test, b.flags & skip, 0);
	vb = vb2_get_buffer(&plain->q, 0);
	KUNIT_EXPECT_FALSE(test, vb->skip_cache_sync_on_prepare);
	KUNIT_EXPECT_FALSE(test, vb->skip_cache_sync_on_finish);
	KUNIT_EXPECT_FALSE(test, plain->q.non_coherent_mem);
}

/* Capabilities set by v4l2-ioctl.c before vb2 runs are kept. */
static void vb2_args_caps_ored(struct kunit *test)
{
	struct vb2t_config cfg = { .type = CAP, .max_num_buffers = 64 };
	struct vb2t_ctx *ctx = vb2t_ctx_create(test, &cfg);
	struct v4l2_requestbuffers req = {
		.count = 1, .type = CAP, .memory = V4L2_MEMORY_MMAP,
		.capabilities = V4L2_BUF_CAP_SUPPORTS_REMOVE_BUFS,
	};
	struct v4l2_create_buffers cb = {
		.count = 1, .memory = V4L2_MEMORY_MMAP,
		.capabilities = V4L2_BUF_CAP_SUPPORTS_REMOVE_BUFS,
	};

	cb.format.type = CAP;
	cb.format.fmt.pix.sizeimage = PAGE_SIZE;
	mutex_lock(&ctx->mutex);
	KUNIT_EXPECT_EQ(test, vb2_reqbufs(&ctx->q, &req), 0);
	KUNIT_EXPECT_EQ(test, vb2_create_bufs(&ctx->q, &cb), 0);
	mutex_unlock(&ctx->mutex);
	KUNIT_EXPECT_TRUE(test, req.capabilities &
			  V4L2_BUF_CAP_SUPPORTS_REMOVE_BUFS);
	KUNIT_EXPECT_TRUE(test, req.capabilities & V4L2_BUF_CAP_SUPPORTS_MMAP);
	KUNIT_EXPECT_TRUE(test, cb.capabilities &
			  V4L2_BUF_CAP_SUPPORTS_REMOVE_BUFS);
	KUNIT_EXPECT_TRUE(test, cb.capabilities &
			  V4L2_BUF_CAP_SUPPORTS_MAX_NUM_BUFFERS);
	KUNIT_EXPECT_EQ(test, cb.max_num_buffers, 64);
	KUNIT_EXPECT_EQ(test, cb.index, 1);
	KUNIT_EXPECT_EQ(test, cb.count, 1);
}

/*
 * The buffer type of an idle queue may change, not that of a busy one.
 * Only the type changes (see also vb2_contract_change_type_only_type).
 */
static void vb2_args_change_type(struct kunit *test)
{
	struct vb2t_ctx *ctx = vb2t_ctx_simple(test, CAP);

	KUNIT_EXPECT_EQ(test, vb2_queue_change_type(&ctx->q, OUT), 0);
	KUNIT_EXPECT_FALSE(test, ctx->q.is_output);
	alloc_mmap(test, ctx, 1);
	KUNIT_EXPECT_EQ(test, vb2_queue_change_type(&ctx->q, CAP), -EBUSY);
	KUNIT_EXPECT_EQ(test, vb2_queue_change_type(&ctx->q, OUT), 0);
	KUNIT_EXPECT_EQ(test, ctx->q.type, OUT);
	KUNIT_EXPECT_EQ(test, vb2t_qbuf_mmap(ctx, 0), 0);
}

/* vb2_find_buffer() finds buffers by a copied timestamp only. */
static void vb2_args_find_buffer(struct kunit *test)
{
	struct vb2t_ctx *ctx = vb2t_ctx_simple(test, CAP);
	struct vb2_buffer *vb;

	alloc_mmap(test, ctx, 3);
	vb = vb2_get_buffer(&ctx->q, 2);
	vb->timestamp = 1234;
	KUNIT_EXPECT_NULL(test, vb2_find_buffer(&ctx->q, 1234));
	vb->copied_timestamp = 1;
	KUNIT_EXPECT_PTR_EQ(test, vb2_find_buffer(&ctx->q, 1234), vb);
	KUNIT_EXPECT_NULL(test, vb2_find_buffer(&ctx->q, 1235));
	/*
	 * Queued again, the flag stays (a non-COPY queue zeroes the time
	 * stamp itself); a cancel clears it.
	 */
	KUNIT_EXPECT_EQ(test, vb2t_qbuf_mmap(ctx, 2), 0);
	KUNIT_EXPECT_TRUE(test, vb->copied_timestamp);
	KUNIT_EXPECT_EQ(test, vb2t_streamoff(ctx), 0);
	KUNIT_EXPECT_FALSE(test, vb->copied_timestamp);
}

static struct kunit_case vb2_args_cases[] = {
	KUNIT_CASE(vb2_args_querybuf),
	KUNIT_CASE(vb2_args_qbuf_bad_buffer),
	KUNIT_CASE(vb2_args_qbuf_planes),
	KUNIT_CASE(vb2_args_qbuf_output_lengths),
	KUNIT_CASE(vb2_args_qbuf_output_single),
	KUNIT_CASE(vb2_args_flags_stripped),
	KUNIT_CASE(vb2_args_flags_output_kept),
	KUNIT_CASE(vb2_args_request_fd_unsupported),
	KUNIT_CASE(vb2_args_request_fd),
	KUNIT_CASE(vb2_args_dqbuf),
	KUNIT_CASE(vb2_args_dqbuf_planes),
	KUNIT_CASE(vb2_args_streamon_off),
	KUNIT_CASE(vb2_args_reqbufs),
	KUNIT_CASE(vb2_args_reqbufs_streaming),
	KUNIT_CASE(vb2_args_create_bufs_streaming),
	KUNIT_CASE(vb2_args_create_bufs),
	KUNIT_CASE(vb2_args_expbuf),
	KUNIT_CASE(vb2_args_prepare_buf),
	KUNIT_CASE(vb2_args_timestamp_copy),
	KUNIT_CASE(vb2_args_timestamp_capture),
	KUNIT_CASE(vb2_args_cache_hints),
	KUNIT_CASE(vb2_args_caps_ored),
	KUNIT_CASE(vb2_args_change_type),
	KUNIT_CASE(vb2_args_find_buffer),
	{}
};

static struct kunit_suite vb2_args_suite = {
	.name = "videobuf2-v4l2-args",
	.test_cases = vb2_args_cases,
};

kunit_test_suite(vb2_args_suite);
