// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests of the driver contract: what a driver observes from inside
 * its callbacks, and what user space finds after a call that failed. Each
 * case pins one row (or a few related rows) of the table in
 * Documentation/driver-contract.rst; the row ids are in the comments.
 *
 * The fake driver of vb2-test-helpers.c calls an observer first thing in
 * every callback; the observer here writes down the queue and buffer state
 * a driver could read at that moment.
 */

#include <kunit/device.h>
#include <kunit/test.h>
#include <linux/completion.h>
#include <linux/delay.h>
#include <linux/dma-buf.h>
#include <linux/file.h>
#include <linux/mm.h>
#include <linux/mman.h>
#include <linux/poll.h>
#include <linux/sched.h>
#include <linux/uaccess.h>

#include <media/videobuf2-core.h>
#include <media/videobuf2-dma-contig.h>
#include <media/videobuf2-dma-sg.h>
#include <media/videobuf2-v4l2.h>
#include <media/videobuf2-vmalloc.h>

#include "vb2-test-helpers.h"

#define CAP	V4L2_BUF_TYPE_VIDEO_CAPTURE
#define OUT	V4L2_BUF_TYPE_VIDEO_OUTPUT
#define CAP_MP	V4L2_BUF_TYPE_VIDEO_CAPTURE_MPLANE
#define PLANE	(4 * PAGE_SIZE)

/* ---------------------------------------------------------------------- */
/* What the driver saw                                                    */
/* ---------------------------------------------------------------------- */

/**
 * struct seen - the state a driver could read in one callback
 * @cb:		the callback.
 * @index:	its buffer, -1 for callbacks about the queue.
 * @state:	&vb2_buffer.state of that buffer.
 * @streaming:	vb2_is_streaming().
 * @started:	vb2_start_streaming_called().
 * @memory:	&vb2_queue.memory.
 * @non_coherent: &vb2_queue.non_coherent_mem.
 * @num_buffers: vb2_get_num_buffers().
 * @queued_count: &vb2_queue.queued_count.
 * @owned:	&vb2_queue.owned_by_drv_count.
 * @planes_in:	queue_setup only: \*num_planes as it came in.
 * @buffers_in:	queue_setup only: \*num_buffers as it came in.
 * @request:	&vb2_buffer.request was set.
 * @found:	vb2_get_buffer() finds the buffer at its index.
 */
struct seen {
	enum vb2t_cb		cb;
	int			index;
	enum vb2_buffer_state	state;
	bool			streaming;
	bool			started;
	unsigned int		memory;
	bool			non_coherent;
	unsigned int		num_buffers;
	unsigned int		queued_count;
	int			owned;
	unsigned int		planes_in;
	unsigned int		buffers_in;
	bool			request;
	bool			found;
};

#define SEEN_MAX	64

struct watch {
	struct seen	s[SEEN_MAX];
	unsigned int	n;
	bool		full;	/* a call came when s[] was full */
};

static void record(struct vb2t_ctx *ctx, enum vb2t_cb cb,
		   struct vb2_buffer *vb)
{
	struct watch *w = ctx->observe_priv;
	struct vb2_queue *q = &ctx->q;
	struct seen *e;

	if (w->n >= SEEN_MAX) {
		w->full = true;
		return;
	}
	e = &w->s[w->n++];
	e->cb = cb;
	e->index = vb ? vb->index : -1;
	e->state = vb ? vb->state : 0;
	e->request = vb && vb->request;
	e->found = vb && vb2_get_buffer(q, vb->index) == vb;
	e->streaming = vb2_is_streaming(q);
	e->started = vb2_start_streaming_called(q);
	e->memory = q->memory;
	e->non_coherent = q->non_coherent_mem;
	e->num_buffers = vb2_get_num_buffers(q);
	e->queued_count = q->queued_count;
	e->owned = atomic_read(&q->owned_by_drv_count);
	e->planes_in = ctx->setup_planes_in;
	e->buffers_in = ctx->setup_buffers_in;
}

static void unwatch(void *data)
{
	struct vb2t_ctx *ctx = data;

	ctx->observe = NULL;
	ctx->observe_priv = NULL;
}

/*
 * The record lives in test-managed memory that is freed before the context
 * (cleanup runs in reverse order), so unhook it first: releasing the queue
 * calls stop_streaming after the test body has returned.
 */
static struct watch *watch(struct kunit *test, struct vb2t_ctx *ctx)
{
	struct watch *w = kunit_kzalloc(test, sizeof(*w), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, w);
	ctx->observe_priv = w;
	ctx->observe = record;
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, unwatch, ctx), 0);
	return w;
}

/* Start a new record, for a case that makes more calls than s[] holds. */
static void watch_clear(struct watch *w)
{
	w->n = 0;
	w->full = false;
}

/* The @nth (from 0) record of @cb about buffer @index (-1: the queue). */
static const struct seen *seen_nth(struct kunit *test, struct watch *w,
				   enum vb2t_cb cb, int index, unsigned int nth)
{
	unsigned int i;

	KUNIT_ASSERT_FALSE_MSG(test, w->full, "more than %d calls", SEEN_MAX);

	for (i = 0; i < w->n; i++) {
		if (w->s[i].cb == cb && w->s[i].index == index && !nth--)
			return &w->s[i];
	}
	KUNIT_FAIL_AND_ABORT(test, "callback %d(%d) not seen", cb, index);
	return NULL;
}

static const struct seen *seen(struct kunit *test, struct watch *w,
			       enum vb2t_cb cb, int index)
{
	return seen_nth(test, w, cb, index, 0);
}

/* The last record of @cb. */
static const struct seen *seen_last(struct kunit *test, struct watch *w,
				    enum vb2t_cb cb)
{
	unsigned int i;

	KUNIT_ASSERT_FALSE_MSG(test, w->full, "more than %d calls", SEEN_MAX);

	for (i = w->n; i-- > 0;) {
		if (w->s[i].cb == cb)
			return &w->s[i];
	}
	KUNIT_FAIL_AND_ABORT(test, "callback %d not seen", cb);
	return NULL;
}

/* ---------------------------------------------------------------------- */
/* Small steps                                                            */
/* ---------------------------------------------------------------------- */

static void reqbufs_n(struct kunit *test, struct vb2t_ctx *ctx, u32 memory,
		      unsigned int n)
{
	unsigned int count = n;

	KUNIT_ASSERT_EQ(test, vb2t_reqbufs(ctx, memory, &count), 0);
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

/* The driver completes the buffer it got first; user space dequeues it. */
static struct vb2_buffer *complete_and_dqbuf(struct kunit *test,
					     struct vb2t_ctx *ctx)
{
	struct vb2_buffer *vb = vb2t_peek(ctx);
	unsigned int index;

	KUNIT_ASSERT_NOT_NULL(test, vb);
	KUNIT_ASSERT_TRUE(test, vb2t_complete_next(ctx, VB2_BUF_STATE_DONE));
	KUNIT_ASSERT_EQ(test, vb2t_dqbuf_index(ctx, &index, NULL), 0);
	KUNIT_ASSERT_EQ(test, index, vb->index);
	return vb;
}

static int qbuf_userptr(struct vb2t_ctx *ctx, unsigned int index,
			unsigned long addr)
{
	struct v4l2_buffer b;

	vb2t_init_buffer(ctx, &b, NULL, index);
	b.memory = V4L2_MEMORY_USERPTR;
	b.m.userptr = addr;
	b.length = ctx->sizes[0];
	return vb2t_qbuf(ctx, &b);
}

static int qbuf_dmabuf(struct vb2t_ctx *ctx, unsigned int index, int fd)
{
	struct v4l2_buffer b;

	vb2t_init_buffer(ctx, &b, NULL, index);
	b.memory = V4L2_MEMORY_DMABUF;
	b.m.fd = fd;
	b.length = ctx->sizes[0];
	return vb2t_qbuf(ctx, &b);
}

/*
 * An MMAP queue of allocator @ops whose buffers are exported. An output
 * queue: its own mapping is DMA_TO_DEVICE, so DMA-API debugging does not
 * see two device-writable mappings of one cache line when a capture queue
 * imports the buffer (upstream's dma-sg exporter would trip that).
 */
static struct vb2t_ctx *exporter(struct kunit *test,
				 const struct vb2_mem_ops *ops, unsigned int n)
{
	struct vb2t_config cfg = {
		.type = OUT, .io_modes = VB2_MMAP, .backend = ops,
		.size = PLANE, .dma_all_memory = true,
	};
	struct vb2t_ctx *ctx = vb2t_ctx_create(test, &cfg);

	reqbufs_n(test, ctx, V4L2_MEMORY_MMAP, n);
	return ctx;
}

/* Plane 0 of buffer @index as a dma-buf fd, closed when the test ends. */
static int export_fd(struct kunit *test, struct vb2t_ctx *ctx,
		     unsigned int index)
{
	int fd = -1, ret;

	mutex_lock(&ctx->mutex);
	ret = vb2_core_expbuf(&ctx->q, &fd, ctx->q.type,
			      vb2_get_buffer(&ctx->q, index), 0,
			      O_CLOEXEC | O_RDWR);
	mutex_unlock(&ctx->mutex);
	KUNIT_ASSERT_EQ(test, ret, 0);
	vb2t_close_fd_at_exit(test, fd);
	return fd;
}

/* ---------------------------------------------------------------------- */
/* Streaming flags (rows S1-S6)                                           */
/* ---------------------------------------------------------------------- */

/*
 * S1, S2: buffers handed over by STREAMON see neither flag; start_streaming
 * sees start_streaming_called but not streaming; buffers queued after the
 * start see both. owned_by_drv_count already counts the buffer in buf_queue.
 */
static void vb2_contract_streaming_in_buf_queue(struct kunit *test)
{
	struct vb2t_ctx *ctx = vb2t_ctx_simple(test, CAP);
	struct watch *w = watch(test, ctx);
	const struct seen *e;
	unsigned int i;

	reqbufs_n(test, ctx, V4L2_MEMORY_MMAP, 3);
	qbuf_range(test, ctx, 0, 2);
	KUNIT_ASSERT_EQ(test, vb2t_streamon(ctx), 0);
	for (i = 0; i < 2; i++) {
		e = seen(test, w, VB2T_BUF_QUEUE, i);
		KUNIT_EXPECT_FALSE(test, e->streaming);
		KUNIT_EXPECT_FALSE(test, e->started);
		KUNIT_EXPECT_EQ(test, e->state, VB2_BUF_STATE_ACTIVE);
		KUNIT_EXPECT_EQ(test, e->owned, i + 1);
	}
	e = seen(test, w, VB2T_START_STREAMING, -1);
	KUNIT_EXPECT_FALSE(test, e->streaming);
	KUNIT_EXPECT_TRUE(test, e->started);
	KUNIT_EXPECT_EQ(test, e->owned, 2);
	KUNIT_EXPECT_EQ(test, ctx->start_count, 2);
	KUNIT_EXPECT_TRUE(test, vb2_is_streaming(&ctx->q));

	KUNIT_ASSERT_EQ(test, vb2t_qbuf_mmap(ctx, 2), 0);
	e = seen(test, w, VB2T_BUF_QUEUE, 2);
	KUNIT_EXPECT_TRUE(test, e->streaming);
	KUNIT_EXPECT_TRUE(test, e->started);
	KUNIT_EXPECT_EQ(test, e->owned, 3);
	KUNIT_EXPECT_EQ(test, e->queued_count, 3);
}

/*
 * S3: with min_queued_buffers, STREAMON only sets streaming; the QBUF that
 * reaches the minimum hands the buffers over (streaming already true) and
 * starts the driver.
 */
static void vb2_contract_streaming_deferred_start(struct kunit *test)
{
	struct vb2t_config cfg = { .type = CAP, .min_queued_buffers = 2 };
	struct vb2t_ctx *ctx = vb2t_ctx_create(test, &cfg);
	struct watch *w = watch(test, ctx);
	const struct seen *e;

	reqbufs_n(test, ctx, V4L2_MEMORY_MMAP, 3);
	KUNIT_ASSERT_EQ(test, vb2t_streamon(ctx), 0);
	KUNIT_EXPECT_TRUE(test, vb2_is_streaming(&ctx->q));
	KUNIT_EXPECT_FALSE(test, vb2_start_streaming_called(&ctx->q));
	KUNIT_EXPECT_EQ(test, vb2t_count(ctx, VB2T_PREPARE_STREAMING), 1);
	qbuf_range(test, ctx, 0, 1);
	KUNIT_EXPECT_EQ(test, vb2t_count(ctx, VB2T_BUF_QUEUE), 0);
	qbuf_range(test, ctx, 1, 1);
	e = seen(test, w, VB2T_BUF_QUEUE, 0);
	KUNIT_EXPECT_TRUE(test, e->streaming);
	KUNIT_EXPECT_FALSE(test, e->started);
	e = seen(test, w, VB2T_START_STREAMING, -1);
	KUNIT_EXPECT_TRUE(test, e->streaming);
	KUNIT_EXPECT_TRUE(test, e->started);
	KUNIT_EXPECT_EQ(test, ctx->start_count, 2);
}

/*
 * S4: stop_streaming and unprepare_streaming see both flags still set;
 * buf_finish of the cancelled buffers sees them cleared, and comes for
 * every prepared buffer, queued or only prepared. A stream that was never
 * started gets unprepare_streaming only.
 */
static void vb2_contract_streaming_on_stop(struct kunit *test)
{
	struct vb2t_config cfg = { .type = CAP, .min_queued_buffers = 2 };
	struct vb2t_ctx *ctx = vb2t_ctx_create(test, &cfg);
	struct watch *w = watch(test, ctx);
	struct v4l2_buffer b;
	const struct seen *e;

	reqbufs_n(test, ctx, V4L2_MEMORY_MMAP, 3);
	qbuf_range(test, ctx, 0, 2);
	vb2t_init_buffer(ctx, &b, NULL, 2);
	KUNIT_ASSERT_EQ(test, vb2t_prepare_buf(ctx, &b), 0);
	KUNIT_ASSERT_EQ(test, vb2t_streamon(ctx), 0);
	KUNIT_ASSERT_EQ(test, vb2t_streamoff(ctx), 0);
	KUNIT_EXPECT_EQ(test, seen(test, w, VB2T_BUF_FINISH, 2)->state,
			VB2_BUF_STATE_DEQUEUED);
	e = seen(test, w, VB2T_STOP_STREAMING, -1);
	KUNIT_EXPECT_TRUE(test, e->streaming);
	KUNIT_EXPECT_TRUE(test, e->started);
	KUNIT_EXPECT_EQ(test, e->owned, 2);
	e = seen(test, w, VB2T_UNPREPARE_STREAMING, -1);
	KUNIT_EXPECT_TRUE(test, e->streaming);
	KUNIT_EXPECT_EQ(test, e->owned, 0);
	e = seen(test, w, VB2T_BUF_FINISH, 0);
	KUNIT_EXPECT_FALSE(test, e->streaming);
	KUNIT_EXPECT_FALSE(test, e->started);
	KUNIT_EXPECT_EQ(test, e->state, VB2_BUF_STATE_ERROR);
	KUNIT_EXPECT_FALSE(test, vb2_is_streaming(&ctx->q));

	/* Streaming, but the minimum never reached: no stop_streaming. */
	vb2t_log_reset(ctx);
	KUNIT_ASSERT_EQ(test, vb2t_streamon(ctx), 0);
	qbuf_range(test, ctx, 0, 1);
	KUNIT_ASSERT_EQ(test, vb2t_streamoff(ctx), 0);
	KUNIT_EXPECT_STREQ(test, vb2t_log_of(ctx, -1),
			   "prepare_streaming unprepare_streaming");
	KUNIT_EXPECT_STREQ(test, vb2t_log_of(ctx, 0), "buf_prepare buf_finish");
}

/*
 * S5: start_streaming fails in STREAMON: the driver gives the buffers back
 * as QUEUED, they stay queued, neither flag is set, unprepare_streaming
 * balances prepare_streaming, and STREAMON may be tried again.
 */
static void vb2_contract_start_fails_in_streamon(struct kunit *test)
{
	struct vb2t_ctx *ctx = vb2t_ctx_simple(test, CAP);
	struct watch *w = watch(test, ctx);
	const struct seen *e;

	reqbufs_n(test, ctx, V4L2_MEMORY_MMAP, 2);
	qbuf_range(test, ctx, 0, 2);
	vb2t_fail(ctx, VB2T_START_STREAMING, 1, -ENOLINK);
	KUNIT_EXPECT_EQ(test, vb2t_streamon(ctx), -ENOLINK);
	e = seen(test, w, VB2T_UNPREPARE_STREAMING, -1);
	KUNIT_EXPECT_FALSE(test, e->streaming);
	KUNIT_EXPECT_FALSE(test, e->started);
	KUNIT_EXPECT_EQ(test, e->queued_count, 2);
	KUNIT_EXPECT_EQ(test, e->owned, 0);
	KUNIT_EXPECT_EQ(test, vb2t_state(ctx, 1), VB2_BUF_STATE_QUEUED);
	KUNIT_EXPECT_EQ(test, vb2t_streamon(ctx), 0);
	KUNIT_EXPECT_EQ(test, ctx->start_count, 2);
}

/*
 * S6: the start_streaming of a QBUF fails: that QBUF fails, its buffer is
 * back in user space as before the call (still prepared), the others stay
 * queued, and a second QBUF of it starts the stream.
 */
static void vb2_contract_start_fails_in_qbuf(struct kunit *test)
{
	struct vb2t_config cfg = { .type = CAP, .min_queued_buffers = 2 };
	struct vb2t_ctx *ctx = vb2t_ctx_create(test, &cfg);
	u32 flags;

	reqbufs_n(test, ctx, V4L2_MEMORY_MMAP, 3);
	vb2t_log_reset(ctx);
	KUNIT_ASSERT_EQ(test, vb2t_streamon(ctx), 0);
	qbuf_range(test, ctx, 0, 1);
	vb2t_fail(ctx, VB2T_START_STREAMING, 1, -ENOLINK);
	KUNIT_EXPECT_EQ(test, vb2t_qbuf_mmap(ctx, 1), -ENOLINK);
	KUNIT_EXPECT_EQ(test, vb2t_state(ctx, 1), VB2_BUF_STATE_DEQUEUED);
	KUNIT_EXPECT_EQ(test, vb2t_state(ctx, 0), VB2_BUF_STATE_QUEUED);
	KUNIT_EXPECT_EQ(test, ctx->q.queued_count, 1);
	KUNIT_EXPECT_EQ(test, vb2t_owned(ctx), 0);
	KUNIT_EXPECT_TRUE(test, vb2_is_streaming(&ctx->q));
	KUNIT_EXPECT_FALSE(test, vb2_start_streaming_called(&ctx->q));
	flags = query_flags(test, ctx, 1);
	KUNIT_EXPECT_FALSE(test, flags & V4L2_BUF_FLAG_QUEUED);
	KUNIT_EXPECT_TRUE(test, flags & V4L2_BUF_FLAG_PREPARED);

	KUNIT_EXPECT_EQ(test, vb2t_qbuf_mmap(ctx, 1), 0);
	KUNIT_EXPECT_TRUE(test, vb2_start_streaming_called(&ctx->q));
	KUNIT_EXPECT_EQ(test, ctx->start_count, 2);
	KUNIT_EXPECT_STREQ(test, vb2t_log_of(ctx, 1),
			   "buf_prepare buf_queue buf_queue");
}

/**
 * struct retry_seen - what the STREAMON retry case watches
 * @queued:	buf_queue calls per buffer index.
 * @again:	buf_queue got a buffer that was on the done list.
 */
struct retry_seen {
	unsigned int	queued[2];
	bool		again;
};

/*
 * In the first STREAMON buf_queue fails buffer 0 at once, as atomisp does
 * when its pipeline is not ready. A buffer handed over while it is on the
 * done list (6.12) is taken off that list here, before the driver could
 * complete it a second time and corrupt the list: the case then fails
 * instead of the kernel.
 */
static void retry_observe(struct vb2t_ctx *ctx, enum vb2t_cb cb,
			  struct vb2_buffer *vb)
{
	struct retry_seen *r = ctx->observe_priv;
	struct vb2_queue *q = &ctx->q;
	struct vb2_buffer *done;
	unsigned long flags;

	if (cb != VB2T_BUF_QUEUE || vb->index > 1)
		return;
	r->queued[vb->index]++;
	ctx->complete_in_queue = vb->index == 0 && r->queued[0] == 1 ?
				 VB2_BUF_STATE_ERROR : 0;
	spin_lock_irqsave(&q->done_lock, flags);
	list_for_each_entry(done, &q->done_list, done_entry) {
		if (done == vb) {
			list_del_init(&vb->done_entry);
			r->again = true;
			break;
		}
	}
	spin_unlock_irqrestore(&q->done_lock, flags);
}

/*
 * S7: STREAMON retried after a failed start, while a buffer that buf_queue
 * completed with an error waits on the done list, hands the driver only
 * the buffers that are still queued; the failed one is dequeued as ERROR.
 * Deliberate difference: 6.12 hands it over again while it is on the done
 * list, and the driver's next vb2_buffer_done() of it adds it to that list
 * a second time.
 */
static void vb2_contract_streamon_retry_skips_done(struct kunit *test)
{
	struct vb2t_ctx *ctx = vb2t_ctx_simple(test, CAP);
	struct retry_seen *r = kunit_kzalloc(test, sizeof(*r), GFP_KERNEL);
	unsigned int index;
	u32 flags;

	KUNIT_ASSERT_NOT_NULL(test, r);
	reqbufs_n(test, ctx, V4L2_MEMORY_MMAP, 2);
	qbuf_range(test, ctx, 0, 2);
	ctx->observe_priv = r;
	ctx->observe = retry_observe;
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, unwatch, ctx), 0);

	vb2t_fail(ctx, VB2T_START_STREAMING, 1, -EIO);
	KUNIT_ASSERT_EQ(test, vb2t_streamon(ctx), -EIO);
	KUNIT_EXPECT_EQ(test, vb2t_state(ctx, 0), VB2_BUF_STATE_ERROR);
	KUNIT_EXPECT_EQ(test, vb2t_state(ctx, 1), VB2_BUF_STATE_QUEUED);

	KUNIT_ASSERT_EQ(test, vb2t_streamon(ctx), 0);
	KUNIT_EXPECT_FALSE_MSG(test, r->again,
			       "STREAMON handed over a buffer on the done list");
	KUNIT_EXPECT_EQ(test, r->queued[0], 1);
	KUNIT_EXPECT_EQ(test, r->queued[1], 2);
	KUNIT_EXPECT_EQ(test, vb2t_owned(ctx), 1);
	if (r->again)
		return;
	KUNIT_EXPECT_EQ(test, vb2t_dqbuf_index(ctx, &index, &flags), 0);
	KUNIT_EXPECT_EQ(test, index, 0);
	KUNIT_EXPECT_TRUE(test, flags & V4L2_BUF_FLAG_ERROR);
}

/* ---------------------------------------------------------------------- */
/* queue_setup (rows Q1-Q6)                                               */
/* ---------------------------------------------------------------------- */

/*
 * Q1, Q2: queue_setup sees the memory model it allocates for, on REQBUFS
 * and on the CREATE_BUFS of an empty queue; \*num_planes is 0 for REQBUFS
 * and the requested count for CREATE_BUFS; vb2_get_num_buffers() is the
 * number of buffers that stay. A refused queue_setup leaves no model.
 */
static void vb2_contract_memory_in_queue_setup(struct kunit *test)
{
	static const u32 models[] = {
		V4L2_MEMORY_MMAP, V4L2_MEMORY_USERPTR, V4L2_MEMORY_DMABUF,
	};
	struct vb2t_ctx *ctx = vb2t_ctx_simple(test, CAP);
	struct watch *w = watch(test, ctx);
	const struct seen *e;
	unsigned int i, count;

	for (i = 0; i < ARRAY_SIZE(models); i++) {
		reqbufs_n(test, ctx, models[i], 2);
		e = seen_last(test, w, VB2T_QUEUE_SETUP);
		KUNIT_EXPECT_EQ(test, e->memory, models[i]);
		KUNIT_EXPECT_EQ(test, e->planes_in, 0);
		KUNIT_EXPECT_EQ(test, e->num_buffers, 0);

		KUNIT_ASSERT_EQ(test, vb2t_create_bufs(ctx, models[i], 1,
						       PAGE_SIZE, NULL, NULL), 0);
		e = seen_last(test, w, VB2T_QUEUE_SETUP);
		KUNIT_EXPECT_EQ(test, e->memory, models[i]);
		KUNIT_EXPECT_EQ(test, e->planes_in, 1);
		KUNIT_EXPECT_EQ(test, e->num_buffers, 2);
	}
	count = 0;
	KUNIT_ASSERT_EQ(test, vb2t_reqbufs(ctx, V4L2_MEMORY_MMAP, &count), 0);
	KUNIT_EXPECT_EQ(test, ctx->q.memory, VB2_MEMORY_UNKNOWN);

	KUNIT_ASSERT_EQ(test, vb2t_create_bufs(ctx, V4L2_MEMORY_USERPTR, 1,
					       PAGE_SIZE, NULL, NULL), 0);
	e = seen_last(test, w, VB2T_QUEUE_SETUP);
	KUNIT_EXPECT_EQ(test, e->memory, V4L2_MEMORY_USERPTR);
	KUNIT_EXPECT_EQ(test, e->num_buffers, 0);

	/* Refused: the queue is left without buffers and without a model. */
	vb2t_fail(ctx, VB2T_QUEUE_SETUP, 1, -EINVAL);
	count = 2;
	KUNIT_EXPECT_EQ(test, vb2t_reqbufs(ctx, V4L2_MEMORY_DMABUF, &count),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, ctx->q.memory, VB2_MEMORY_UNKNOWN);
	vb2t_fail(ctx, VB2T_QUEUE_SETUP, 1, -EINVAL);
	KUNIT_EXPECT_EQ(test, vb2t_create_bufs(ctx, V4L2_MEMORY_DMABUF, 1,
					       PAGE_SIZE, NULL, NULL), -EINVAL);
	KUNIT_EXPECT_EQ(test, ctx->q.memory, VB2_MEMORY_UNKNOWN);
}

/* Q3: the non-coherent flag is in place when queue_setup runs. */
static void vb2_contract_coherency_in_queue_setup(struct kunit *test)
{
	struct vb2t_config cfg = { .type = CAP, .allow_cache_hints = true };
	struct vb2t_ctx *ctx = vb2t_ctx_create(test, &cfg);
	struct watch *w = watch(test, ctx);
	struct v4l2_requestbuffers req = {
		.count = 2, .type = CAP, .memory = V4L2_MEMORY_MMAP,
		.flags = V4L2_MEMORY_FLAG_NON_COHERENT,
	};
	struct v4l2_create_buffers cb = {
		.count = 1, .memory = V4L2_MEMORY_MMAP,
		.flags = V4L2_MEMORY_FLAG_NON_COHERENT,
	};
	int ret;

	mutex_lock(&ctx->mutex);
	ret = vb2_reqbufs(&ctx->q, &req);
	mutex_unlock(&ctx->mutex);
	KUNIT_ASSERT_EQ(test, ret, 0);
	KUNIT_EXPECT_TRUE(test, seen_last(test, w, VB2T_QUEUE_SETUP)->non_coherent);

	req.count = 0;
	mutex_lock(&ctx->mutex);
	ret = vb2_reqbufs(&ctx->q, &req);
	mutex_unlock(&ctx->mutex);
	KUNIT_ASSERT_EQ(test, ret, 0);

	cb.format.type = CAP;
	cb.format.fmt.pix.sizeimage = PAGE_SIZE;
	mutex_lock(&ctx->mutex);
	ret = vb2_create_bufs(&ctx->q, &cb);
	mutex_unlock(&ctx->mutex);
	KUNIT_ASSERT_EQ(test, ret, 0);
	KUNIT_EXPECT_TRUE(test, seen_last(test, w, VB2T_QUEUE_SETUP)->non_coherent);
}

/*
 * Q4: fewer buffers than agreed could be allocated: queue_setup is asked
 * again, in the form of the call it answered (REQBUFS: \*num_planes 0;
 * CREATE_BUFS: the planes requested), with \*num_buffers the number made.
 */
static void vb2_contract_reask_after_short_allocation(struct kunit *test)
{
	struct vb2t_ctx *ctx = vb2t_ctx_simple(test, CAP);
	struct watch *w = watch(test, ctx);
	const struct seen *e;
	unsigned int count = 4, created = 0;

	vb2t_fail(ctx, VB2T_ALLOC, 3, -ENOMEM);
	KUNIT_ASSERT_EQ(test, vb2t_reqbufs(ctx, V4L2_MEMORY_MMAP, &count), 0);
	KUNIT_EXPECT_EQ(test, count, 2);
	KUNIT_EXPECT_EQ(test, vb2t_count(ctx, VB2T_QUEUE_SETUP), 2);
	e = seen_last(test, w, VB2T_QUEUE_SETUP);
	KUNIT_EXPECT_EQ(test, e->planes_in, 0);
	KUNIT_EXPECT_EQ(test, e->buffers_in, 2);
	/* The buffers just made are counted already. */
	KUNIT_EXPECT_EQ(test, e->num_buffers, 2);

	vb2t_fail(ctx, VB2T_ALLOC, 2, -ENOMEM);
	KUNIT_ASSERT_EQ(test, vb2t_create_bufs(ctx, V4L2_MEMORY_MMAP, 3,
					       PAGE_SIZE, NULL, &created), 0);
	KUNIT_EXPECT_EQ(test, created, 1);
	e = seen_last(test, w, VB2T_QUEUE_SETUP);
	KUNIT_EXPECT_EQ(test, e->planes_in, 1);
	KUNIT_EXPECT_EQ(test, e->buffers_in, 1);
	KUNIT_EXPECT_EQ(test, e->num_buffers, 3);
}

/*
 * Q5: more buffers than the queue has room for. The count is capped at the
 * room before queue_setup; a driver that raises it beyond the room gets
 * what fits and is asked again, in the form of the first call; raising
 * again fails the ioctl with -ENOMEM, and so does, for CREATE_BUFS, any
 * error of that second call.
 */
static void vb2_contract_reask_beyond_room(struct kunit *test)
{
	struct vb2t_ctx *ctx = vb2t_ctx_simple(test, CAP);
	unsigned int count = 4, created = 0, setups;

	ctx->raise_buffers = VB2_MAX_FRAME + 2;
	KUNIT_EXPECT_EQ(test, vb2t_reqbufs(ctx, V4L2_MEMORY_MMAP, &count),
			-ENOMEM);
	KUNIT_EXPECT_EQ(test, vb2t_count(ctx, VB2T_QUEUE_SETUP), 2);
	KUNIT_EXPECT_EQ(test, ctx->setup_planes_in, 0);
	KUNIT_EXPECT_EQ(test, ctx->setup_buffers_in, VB2_MAX_FRAME);
	KUNIT_EXPECT_EQ(test, vb2_get_num_buffers(&ctx->q), 0);

	/* Capped before queue_setup: asked once, for the room left. */
	ctx->raise_buffers = 0;
	reqbufs_n(test, ctx, V4L2_MEMORY_MMAP, VB2_MAX_FRAME - 2);
	setups = vb2t_count(ctx, VB2T_QUEUE_SETUP);
	KUNIT_ASSERT_EQ(test, vb2t_create_bufs(ctx, V4L2_MEMORY_MMAP, 5,
					       PAGE_SIZE, NULL, &created), 0);
	KUNIT_EXPECT_EQ(test, created, 2);
	KUNIT_EXPECT_EQ(test, vb2t_count(ctx, VB2T_QUEUE_SETUP), setups + 1);
	KUNIT_EXPECT_EQ(test, ctx->setup_buffers_in, 2);
	reqbufs_n(test, ctx, V4L2_MEMORY_MMAP, VB2_MAX_FRAME - 2);

	/* Raised beyond the room, and again when asked with what fits. */
	ctx->raise_buffers = 5;
	setups = vb2t_count(ctx, VB2T_QUEUE_SETUP);
	KUNIT_EXPECT_EQ(test, vb2t_create_bufs(ctx, V4L2_MEMORY_MMAP, 2,
					       PAGE_SIZE, NULL, NULL), -ENOMEM);
	KUNIT_EXPECT_EQ(test, vb2t_count(ctx, VB2T_QUEUE_SETUP), setups + 2);
	KUNIT_EXPECT_EQ(test, ctx->setup_planes_in, 1);
	KUNIT_EXPECT_EQ(test, ctx->setup_buffers_in, 2);
	KUNIT_EXPECT_EQ(test, vb2_get_num_buffers(&ctx->q), VB2_MAX_FRAME - 2);

	/* The second answer an error of the driver's: -ENOMEM all the same. */
	vb2t_fail(ctx, VB2T_QUEUE_SETUP, 2, -EINVAL);
	KUNIT_EXPECT_EQ(test, vb2t_create_bufs(ctx, V4L2_MEMORY_MMAP, 2,
					       PAGE_SIZE, NULL, NULL), -ENOMEM);
	KUNIT_EXPECT_EQ(test, vb2_get_num_buffers(&ctx->q), VB2_MAX_FRAME - 2);
}

/*
 * Q6: a queue_setup that agrees to no buffer for CREATE_BUFS (imx7-media-csi
 * at its memory limit) fails it with -ENOMEM; a queue without buffers is
 * left without a memory model.
 */
static void vb2_contract_create_none_agreed(struct kunit *test)
{
	struct vb2t_ctx *ctx = vb2t_ctx_simple(test, CAP);

	ctx->agree_none = true;
	KUNIT_EXPECT_EQ(test, vb2t_create_bufs(ctx, V4L2_MEMORY_MMAP, 2,
					       PAGE_SIZE, NULL, NULL), -ENOMEM);
	KUNIT_EXPECT_EQ(test, vb2_get_num_buffers(&ctx->q), 0);
	KUNIT_EXPECT_EQ(test, ctx->q.memory, VB2_MEMORY_UNKNOWN);
	KUNIT_EXPECT_EQ(test, vb2t_count(ctx, VB2T_ALLOC), 0);

	ctx->agree_none = false;
	reqbufs_n(test, ctx, V4L2_MEMORY_MMAP, 2);
	ctx->agree_none = true;
	KUNIT_EXPECT_EQ(test, vb2t_create_bufs(ctx, V4L2_MEMORY_MMAP, 2,
					       PAGE_SIZE, NULL, NULL), -ENOMEM);
	KUNIT_EXPECT_EQ(test, vb2_get_num_buffers(&ctx->q), 2);
}

/* ---------------------------------------------------------------------- */
/* Plane memory of buffers user space holds (rows P1-P4)                  */
/* ---------------------------------------------------------------------- */

/* What a driver would program into hardware for plane 0. */
struct plane_view {
	void		*vaddr;
	void		*cookie;
	dma_addr_t	dma;
	struct sg_table	*sgt;
};

static void view_plane(struct vb2_buffer *vb, const struct vb2_mem_ops *ops,
		       struct plane_view *v)
{
	v->vaddr = vb2_plane_vaddr(vb, 0);
	v->cookie = vb2_plane_cookie(vb, 0);
	v->dma = ops == &vb2_dma_contig_memops ?
		 vb2_dma_contig_plane_dma_addr(vb, 0) : 0;
	v->sgt = ops == &vb2_dma_sg_memops ? vb2_dma_sg_plane_desc(vb, 0) : NULL;
}

static void expect_same_view(struct kunit *test, struct vb2_buffer *vb,
			     const struct vb2_mem_ops *ops,
			     const struct plane_view *was)
{
	struct plane_view now;

	view_plane(vb, ops, &now);
	KUNIT_EXPECT_NOT_NULL(test, now.vaddr);
	KUNIT_EXPECT_PTR_EQ(test, now.vaddr, was->vaddr);
	KUNIT_EXPECT_PTR_EQ(test, now.cookie, was->cookie);
	KUNIT_EXPECT_EQ(test, now.dma, was->dma);
	KUNIT_EXPECT_PTR_EQ(test, now.sgt, was->sgt);
	if (ops == &vb2_dma_contig_memops)
		KUNIT_EXPECT_NE(test, now.dma, 0);
	if (ops == &vb2_dma_sg_memops && now.sgt)
		KUNIT_EXPECT_GT(test, now.sgt->nents, 0);
	if (ops == &vb2_dma_sg_memops)
		KUNIT_EXPECT_NOT_NULL(test, now.sgt);
}

/*
 * P1: an imported dma-buf stays attached and mapped from the QBUF that
 * brought it until another dma-buf is queued at that index or the buffer
 * is freed: the plane's kernel address, cookie, DMA address and sg_table
 * stay valid after DQBUF and after STREAMOFF, and queueing the same fd
 * again maps nothing. With each real allocator.
 */
static void vb2_contract_dmabuf_dequeued_keeps_mapping(struct kunit *test)
{
	const struct vb2t_alloc *a = test->param_value;
	struct vb2t_ctx *exp = exporter(test, a->ops, 2);
	struct vb2t_config cfg = {
		.type = CAP, .io_modes = VB2_DMABUF, .backend = a->ops,
		.size = PLANE, .dma_all_memory = true,
	};
	struct vb2t_ctx *imp = vb2t_ctx_create(test, &cfg);
	int fd0 = export_fd(test, exp, 0), fd1 = export_fd(test, exp, 1);
	struct plane_view was;
	struct vb2_buffer *vb;

	reqbufs_n(test, imp, V4L2_MEMORY_DMABUF, 1);
	KUNIT_ASSERT_EQ(test, qbuf_dmabuf(imp, 0, fd0), 0);
	KUNIT_ASSERT_EQ(test, vb2t_streamon(imp), 0);
	vb = vb2t_peek(imp);
	KUNIT_ASSERT_NOT_NULL(test, vb);
	view_plane(vb, a->ops, &was);
	KUNIT_ASSERT_NOT_NULL(test, was.vaddr);

	KUNIT_ASSERT_PTR_EQ(test, complete_and_dqbuf(test, imp), vb);
	expect_same_view(test, vb, a->ops, &was);
	KUNIT_ASSERT_EQ(test, vb2t_streamoff(imp), 0);
	expect_same_view(test, vb, a->ops, &was);
	KUNIT_EXPECT_EQ(test, vb2t_count(imp, VB2T_MAP_DMABUF), 1);
	KUNIT_EXPECT_EQ(test, vb2t_count(imp, VB2T_UNMAP_DMABUF), 0);

	/* The same dma-buf again: nothing is attached or mapped anew. */
	KUNIT_ASSERT_EQ(test, qbuf_dmabuf(imp, 0, fd0), 0);
	KUNIT_ASSERT_EQ(test, vb2t_streamon(imp), 0);
	KUNIT_ASSERT_PTR_EQ(test, complete_and_dqbuf(test, imp), vb);
	KUNIT_EXPECT_EQ(test, vb2t_count(imp, VB2T_ATTACH_DMABUF), 1);
	KUNIT_EXPECT_EQ(test, vb2t_count(imp, VB2T_MAP_DMABUF), 1);
	expect_same_view(test, vb, a->ops, &was);

	/* Another dma-buf: the first is unmapped and detached. */
	KUNIT_ASSERT_EQ(test, qbuf_dmabuf(imp, 0, fd1), 0);
	KUNIT_EXPECT_EQ(test, vb2t_count(imp, VB2T_UNMAP_DMABUF), 1);
	KUNIT_EXPECT_EQ(test, vb2t_count(imp, VB2T_DETACH_DMABUF), 1);
	KUNIT_EXPECT_EQ(test, vb2t_count(imp, VB2T_MAP_DMABUF), 2);

	/* Freeing the buffers unmaps and detaches the second. */
	KUNIT_ASSERT_EQ(test, vb2t_streamoff(imp), 0);
	KUNIT_EXPECT_EQ(test, vb2t_count(imp, VB2T_UNMAP_DMABUF), 1);
	reqbufs_n(test, imp, V4L2_MEMORY_DMABUF, 0);
	KUNIT_EXPECT_EQ(test, vb2t_count(imp, VB2T_UNMAP_DMABUF), 2);
	KUNIT_EXPECT_EQ(test, vb2t_count(imp, VB2T_DETACH_DMABUF), 2);
}

/*
 * P2: MMAP and USERPTR planes of a dequeued buffer keep their memory:
 * same kernel address, nothing unpinned, until the buffer is freed or gets
 * another user pointer.
 */
static void vb2_contract_dequeued_keeps_memory(struct kunit *test)
{
	struct vb2t_ctx *ctx = vb2t_ctx_simple(test, CAP);
	unsigned long user = vb2t_user_mem(test, PAGE_SIZE);
	struct vb2_buffer *vb;
	void *vaddr;

	reqbufs_n(test, ctx, V4L2_MEMORY_MMAP, 1);
	qbuf_range(test, ctx, 0, 1);
	KUNIT_ASSERT_EQ(test, vb2t_streamon(ctx), 0);
	vaddr = vb2_plane_vaddr(vb2t_peek(ctx), 0);
	KUNIT_ASSERT_NOT_NULL(test, vaddr);
	vb = complete_and_dqbuf(test, ctx);
	KUNIT_EXPECT_PTR_EQ(test, vb2_plane_vaddr(vb, 0), vaddr);
	KUNIT_ASSERT_EQ(test, vb2t_streamoff(ctx), 0);
	KUNIT_EXPECT_PTR_EQ(test, vb2_plane_vaddr(vb, 0), vaddr);
	KUNIT_EXPECT_EQ(test, vb2t_count(ctx, VB2T_PUT), 0);

	reqbufs_n(test, ctx, V4L2_MEMORY_USERPTR, 1);
	KUNIT_ASSERT_EQ(test, qbuf_userptr(ctx, 0, user), 0);
	KUNIT_ASSERT_EQ(test, vb2t_streamon(ctx), 0);
	vb = complete_and_dqbuf(test, ctx);
	KUNIT_EXPECT_NOT_NULL(test, vb->planes[0].mem_priv);
	KUNIT_ASSERT_EQ(test, vb2t_streamoff(ctx), 0);
	KUNIT_EXPECT_EQ(test, vb2t_count(ctx, VB2T_PUT_USERPTR), 0);
	KUNIT_EXPECT_NOT_NULL(test, vb2_plane_cookie(vb, 0));
}

/*
 * P3: planes of one buffer that carry the same dma-buf share one
 * attachment only when queue_setup gave them the same allocation device.
 */
static void vb2_contract_dmabuf_shared_by_device(struct kunit *test)
{
	struct vb2t_config cfg = {
		.type = CAP_MP, .num_planes = 2, .io_modes = VB2_DMABUF,
		.size = PLANE,
	};
	struct vb2t_ctx *exp = exporter(test, &vb2_vmalloc_memops, 1);
	struct vb2t_ctx *same = vb2t_ctx_create(test, &cfg);
	struct vb2t_ctx *apart = vb2t_ctx_create(test, &cfg);
	struct v4l2_plane planes[VB2_MAX_PLANES];
	int fd = export_fd(test, exp, 0);
	struct vb2t_ctx *ctx[] = { same, apart };
	unsigned int i;
	struct v4l2_buffer b;

	apart->plane_dev[1] = kunit_device_register(test, "vb2t-contract-dev2");
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, apart->plane_dev[1]);
	for (i = 0; i < ARRAY_SIZE(ctx); i++) {
		reqbufs_n(test, ctx[i], V4L2_MEMORY_DMABUF, 1);
		vb2t_init_buffer(ctx[i], &b, planes, 0);
		planes[0].m.fd = fd;
		planes[1].m.fd = fd;
		planes[0].length = PLANE;
		planes[1].length = PLANE;
		KUNIT_ASSERT_EQ(test, vb2t_qbuf(ctx[i], &b), 0);
	}
	KUNIT_EXPECT_EQ(test, vb2t_count(same, VB2T_ATTACH_DMABUF), 1);
	KUNIT_EXPECT_TRUE(test, vb2_get_buffer(&same->q, 0)->planes[1].dbuf_duplicated);
	KUNIT_EXPECT_EQ(test, vb2t_count(apart, VB2T_ATTACH_DMABUF), 2);
	KUNIT_EXPECT_EQ(test, vb2t_count(apart, VB2T_MAP_DMABUF), 2);
	KUNIT_EXPECT_FALSE(test, vb2_get_buffer(&apart->q, 0)->planes[1].dbuf_duplicated);
	vb2t_release(apart);
	KUNIT_EXPECT_EQ(test, vb2t_count(apart, VB2T_DETACH_DMABUF), 2);
}

/* ---------------------------------------------------------------------- */
/* Reference frames: copied_timestamp and vb2_find_buffer() (rows T1-T4)  */
/* ---------------------------------------------------------------------- */

#define REF_TS	123456789ULL

/* A capture queue with copied time stamps, as mem2mem decoders have. */
static struct vb2t_ctx *decoder_ctx(struct kunit *test, unsigned int io_modes)
{
	struct vb2t_config cfg = {
		.type = CAP, .io_modes = io_modes,
		.timestamp_flags = V4L2_BUF_FLAG_TIMESTAMP_COPY,
	};

	return vb2t_ctx_create(test, &cfg);
}

/* The driver decodes into its oldest buffer, as v4l2_m2m_buf_copy_metadata()
 * marks it, and user space dequeues it.
 */
static struct vb2_buffer *decode_and_dqbuf(struct kunit *test,
					   struct vb2t_ctx *ctx)
{
	struct vb2_buffer *vb = vb2t_peek(ctx);

	KUNIT_ASSERT_NOT_NULL(test, vb);
	vb->timestamp = REF_TS;
	vb->copied_timestamp = 1;
	return complete_and_dqbuf(test, ctx);
}

/*
 * T1, T2: a decoded frame is found by its time stamp while user space holds
 * it and after user space queued it again (same memory); its planes are
 * usable. T4: STREAMOFF forgets it.
 */
static void vb2_contract_reference_mmap(struct kunit *test)
{
	struct vb2t_ctx *ctx = decoder_ctx(test, VB2_MMAP);
	struct vb2_buffer *vb;

	reqbufs_n(test, ctx, V4L2_MEMORY_MMAP, 2);
	qbuf_range(test, ctx, 0, 1);
	KUNIT_ASSERT_EQ(test, vb2t_streamon(ctx), 0);
	vb = decode_and_dqbuf(test, ctx);
	KUNIT_EXPECT_PTR_EQ(test, vb2_find_buffer(&ctx->q, REF_TS), vb);
	KUNIT_EXPECT_NOT_NULL(test, vb2_plane_vaddr(vb, 0));

	qbuf_range(test, ctx, 0, 1);
	KUNIT_EXPECT_EQ(test, vb2t_state(ctx, 0), VB2_BUF_STATE_ACTIVE);
	KUNIT_EXPECT_PTR_EQ(test, vb2_find_buffer(&ctx->q, REF_TS), vb);
	KUNIT_EXPECT_EQ(test, vb->timestamp, REF_TS);
	vb = complete_and_dqbuf(test, ctx);
	KUNIT_EXPECT_PTR_EQ(test, vb2_find_buffer(&ctx->q, REF_TS), vb);

	KUNIT_ASSERT_EQ(test, vb2t_streamoff(ctx), 0);
	KUNIT_EXPECT_NULL(test, vb2_find_buffer(&ctx->q, REF_TS));
}

/* T2, T3: USERPTR: the same pointer keeps the reference, another drops it. */
static void vb2_contract_reference_userptr(struct kunit *test)
{
	struct vb2t_ctx *ctx = decoder_ctx(test, VB2_USERPTR);
	unsigned long a = vb2t_user_mem(test, PAGE_SIZE);
	unsigned long b = vb2t_user_mem(test, PAGE_SIZE);
	struct vb2_buffer *vb;

	reqbufs_n(test, ctx, V4L2_MEMORY_USERPTR, 1);
	KUNIT_ASSERT_EQ(test, qbuf_userptr(ctx, 0, a), 0);
	KUNIT_ASSERT_EQ(test, vb2t_streamon(ctx), 0);
	vb = decode_and_dqbuf(test, ctx);
	KUNIT_ASSERT_EQ(test, qbuf_userptr(ctx, 0, a), 0);
	KUNIT_EXPECT_PTR_EQ(test, vb2_find_buffer(&ctx->q, REF_TS), vb);
	KUNIT_ASSERT_PTR_EQ(test, complete_and_dqbuf(test, ctx), vb);
	KUNIT_ASSERT_EQ(test, qbuf_userptr(ctx, 0, b), 0);
	KUNIT_EXPECT_NULL(test, vb2_find_buffer(&ctx->q, REF_TS));
}

/*
 * T1-T3 behind DMABUF: the dequeued reference is found and its planes are
 * mapped; queued again with the same dma-buf it stays a reference; with
 * another it is not one any more.
 */
static void vb2_contract_reference_dmabuf(struct kunit *test)
{
	struct vb2t_ctx *exp = exporter(test, &vb2_vmalloc_memops, 2);
	struct vb2t_config cfg = {
		.type = CAP, .io_modes = VB2_DMABUF,
		.backend = &vb2_vmalloc_memops, .size = PLANE,
		.timestamp_flags = V4L2_BUF_FLAG_TIMESTAMP_COPY,
	};
	struct vb2t_ctx *ctx = vb2t_ctx_create(test, &cfg);
	int fd0 = export_fd(test, exp, 0), fd1 = export_fd(test, exp, 1);
	struct vb2_buffer *vb;
	u32 *ref, *src;

	src = vb2_plane_vaddr(vb2_get_buffer(&exp->q, 0), 0);
	KUNIT_ASSERT_NOT_NULL(test, src);
	reqbufs_n(test, ctx, V4L2_MEMORY_DMABUF, 1);
	KUNIT_ASSERT_EQ(test, qbuf_dmabuf(ctx, 0, fd0), 0);
	KUNIT_ASSERT_EQ(test, vb2t_streamon(ctx), 0);
	vb = decode_and_dqbuf(test, ctx);
	KUNIT_ASSERT_PTR_EQ(test, vb2_find_buffer(&ctx->q, REF_TS), vb);
	/* The decoder reads the reference through its mapping. */
	src[7] = 0xfeed;
	ref = vb2_plane_vaddr(vb, 0);
	KUNIT_ASSERT_NOT_NULL(test, ref);
	KUNIT_EXPECT_EQ(test, ref[7], 0xfeed);

	KUNIT_ASSERT_EQ(test, qbuf_dmabuf(ctx, 0, fd0), 0);
	KUNIT_EXPECT_PTR_EQ(test, vb2_find_buffer(&ctx->q, REF_TS), vb);
	KUNIT_ASSERT_PTR_EQ(test, complete_and_dqbuf(test, ctx), vb);
	KUNIT_ASSERT_EQ(test, qbuf_dmabuf(ctx, 0, fd1), 0);
	KUNIT_EXPECT_NULL(test, vb2_find_buffer(&ctx->q, REF_TS));
}

/* ---------------------------------------------------------------------- */
/* Payload of DMABUF output buffers (rows O1, O2)                         */
/* ---------------------------------------------------------------------- */

/* QBUF of single-planar DMABUF buffer 0 with this length and payload. */
static int qbuf_dmabuf_sized(struct vb2t_ctx *ctx, int fd, u32 length,
			     u32 bytesused)
{
	struct v4l2_buffer b;

	vb2t_init_buffer(ctx, &b, NULL, 0);
	b.memory = V4L2_MEMORY_DMABUF;
	b.m.fd = fd;
	b.length = length;
	b.bytesused = bytesused;
	return vb2t_qbuf(ctx, &b);
}

/* A single-planar DMABUF output queue whose format needs @size bytes. */
static struct vb2t_ctx *dmabuf_output(struct kunit *test, unsigned int size)
{
	struct vb2t_config cfg = {
		.type = OUT, .io_modes = VB2_DMABUF, .size = size,
	};
	struct vb2t_ctx *ctx = vb2t_ctx_create(test, &cfg);

	reqbufs_n(test, ctx, V4L2_MEMORY_DMABUF, 1);
	return ctx;
}

/*
 * O1: length 0 on a single-planar DMABUF output buffer means the whole
 * dma-buf; a payload of the format's size is accepted, one beyond the
 * dma-buf refused, and the driver sees the dma-buf's size as the plane's.
 */
static void vb2_contract_dmabuf_output_length_zero(struct kunit *test)
{
	struct vb2t_ctx *exp = exporter(test, &vb2_vmalloc_memops, 1);
	struct vb2t_ctx *ctx = dmabuf_output(test, PLANE);
	int fd = export_fd(test, exp, 0);
	struct vb2_buffer *vb = vb2_get_buffer(&ctx->q, 0);

	KUNIT_EXPECT_EQ(test, qbuf_dmabuf_sized(ctx, fd, 0, PLANE + 1),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, vb2t_count(ctx, VB2T_BUF_PREPARE), 0);
	KUNIT_ASSERT_EQ(test, qbuf_dmabuf_sized(ctx, fd, 0, PLANE), 0);
	KUNIT_EXPECT_EQ(test, vb2_plane_size(vb, 0), PLANE);
	KUNIT_EXPECT_EQ(test, vb2_get_plane_payload(vb, 0), PLANE);
}

/*
 * O2: the payload of a DMABUF output buffer is checked against the length
 * the buffer gets from this import: a dma-buf larger than the format may
 * carry a larger payload, and a payload larger than the dma-buf is refused
 * even if an earlier, larger dma-buf had room for it. 6.12 checks against
 * the plane's length before the import and fails both.
 */
static void vb2_contract_dmabuf_payload_fits_import(struct kunit *test)
{
	struct vb2t_config big_cfg = {
		.type = OUT, .io_modes = VB2_MMAP, .backend = &vb2_vmalloc_memops,
		.size = 2 * PLANE, .dma_all_memory = true,
	};
	struct vb2t_ctx *big = vb2t_ctx_create(test, &big_cfg);
	struct vb2t_ctx *small = exporter(test, &vb2_vmalloc_memops, 1);
	struct vb2t_ctx *ctx = dmabuf_output(test, PLANE);
	struct vb2_buffer *vb = vb2_get_buffer(&ctx->q, 0);
	int fd_big, fd_small = export_fd(test, small, 0);

	reqbufs_n(test, big, V4L2_MEMORY_MMAP, 1);
	fd_big = export_fd(test, big, 0);
	KUNIT_ASSERT_EQ(test, qbuf_dmabuf_sized(ctx, fd_big, 0, 2 * PLANE), 0);
	KUNIT_EXPECT_EQ(test, vb2_plane_size(vb, 0), 2 * PLANE);
	KUNIT_EXPECT_EQ(test, vb2_get_plane_payload(vb, 0), 2 * PLANE);
	KUNIT_ASSERT_EQ(test, vb2t_streamon(ctx), 0);
	complete_and_dqbuf(test, ctx);

	KUNIT_EXPECT_EQ(test, qbuf_dmabuf_sized(ctx, fd_small, 0, 2 * PLANE),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, qbuf_dmabuf_sized(ctx, fd_small, 0, PLANE), 0);
}

/* ---------------------------------------------------------------------- */
/* Error codes of imports (table "Error codes")                           */
/* ---------------------------------------------------------------------- */

static struct sg_table *refusing_map(struct dma_buf_attachment *attach,
				     enum dma_data_direction dir)
{
	return ERR_PTR(-ENOMEM);
}

static void refusing_unmap(struct dma_buf_attachment *attach,
			   struct sg_table *sgt, enum dma_data_direction dir)
{
}

static void refusing_release(struct dma_buf *dbuf)
{
}

/* An exporter that cannot map its buffer, for a device or the kernel. */
static const struct dma_buf_ops refusing_ops = {
	.map_dma_buf = refusing_map,
	.unmap_dma_buf = refusing_unmap,
	.release = refusing_release,
};

/* A dma-buf of @size bytes of that exporter, closed when the test ends. */
static int refusing_fd(struct kunit *test, size_t size)
{
	int fd = vb2t_export_fd(test, &refusing_ops, size, test);

	KUNIT_ASSERT_GE(test, fd, 0);
	return fd;
}

/*
 * A DMABUF plane longer than its dma-buf: -EFAULT. A dma-buf its exporter
 * cannot map: -EINVAL with dma-contig and dma-sg, -EFAULT with vmalloc
 * (which maps it into the kernel), whatever the exporter returned. With
 * each real allocator; nothing stays attached.
 */
static void vb2_contract_dmabuf_import_errors(struct kunit *test)
{
	const struct vb2t_alloc *a = test->param_value;
	struct vb2t_ctx *exp = exporter(test, a->ops, 1);
	struct vb2t_config cfg = {
		.type = CAP, .io_modes = VB2_DMABUF, .backend = a->ops,
		.size = PLANE, .dma_all_memory = true,
	};
	struct vb2t_ctx *ctx = vb2t_ctx_create(test, &cfg);
	int fd = export_fd(test, exp, 0), bad = refusing_fd(test, PLANE);
	int map_err = a->ops == &vb2_vmalloc_memops ? -EFAULT : -EINVAL;

	reqbufs_n(test, ctx, V4L2_MEMORY_DMABUF, 1);
	KUNIT_EXPECT_EQ(test, qbuf_dmabuf_sized(ctx, fd, 2 * PLANE, 0), -EFAULT);
	KUNIT_EXPECT_EQ(test, qbuf_dmabuf_sized(ctx, bad, PLANE, 0), map_err);
	KUNIT_EXPECT_EQ(test, ctx->live_mem, 0);
	KUNIT_EXPECT_EQ(test, vb2t_count(ctx, VB2T_BUF_PREPARE), 0);
	KUNIT_EXPECT_EQ(test, qbuf_dmabuf_sized(ctx, fd, PLANE, 0), 0);
}

/*
 * USERPTR memory that cannot be pinned (nothing mapped there, or a
 * read-only mapping for a capture buffer): -EFAULT with vmalloc and
 * dma-contig, -ENOMEM with dma-sg, which reports every failure to pin or
 * map user memory so.
 */
static void vb2_contract_userptr_unpinnable(struct kunit *test)
{
	const struct vb2t_alloc *a = test->param_value;
	struct vb2t_config cfg = {
		.type = CAP, .io_modes = VB2_USERPTR, .backend = a->ops,
		.size = PLANE, .dma_all_memory = true,
	};
	struct vb2t_ctx *ctx = vb2t_ctx_create(test, &cfg);
	int want = a->ops == &vb2_dma_sg_memops ? -ENOMEM : -EFAULT;

	unsigned long ro;

	/* A user address space; nothing is mapped at PAGE_SIZE, ever. */
	vb2t_user_mem(test, PAGE_SIZE);
	reqbufs_n(test, ctx, V4L2_MEMORY_USERPTR, 1);
	KUNIT_EXPECT_EQ(test, qbuf_userptr(ctx, 0, PAGE_SIZE), want);
	KUNIT_EXPECT_EQ(test, ctx->live_mem, 0);
	KUNIT_EXPECT_EQ(test, vb2t_state(ctx, 0), VB2_BUF_STATE_DEQUEUED);

	/* Memory the device of a capture queue may not write to. */
	ro = kunit_vm_mmap(test, NULL, 0, PLANE, PROT_READ,
			   MAP_ANONYMOUS | MAP_PRIVATE, 0);
	KUNIT_ASSERT_FALSE(test, IS_ERR_VALUE(ro));
	KUNIT_EXPECT_EQ(test, qbuf_userptr(ctx, 0, ro), want);
	KUNIT_EXPECT_EQ(test, ctx->live_mem, 0);
	KUNIT_EXPECT_EQ(test, vb2t_state(ctx, 0), VB2_BUF_STATE_DEQUEUED);
}

/*
 * P6: dma-contig maps USERPTR memory into the kernel when the driver asks:
 * vb2_plane_vaddr() is not NULL, and what the driver writes there is in
 * the user's memory (the mediatek encoder writes its headers so). Memory
 * in one page, which is contiguous for any device.
 */
static void vb2_contract_userptr_contig_vaddr(struct kunit *test)
{
	struct vb2t_config cfg = {
		.type = CAP, .io_modes = VB2_USERPTR,
		.backend = &vb2_dma_contig_memops, .size = PAGE_SIZE,
		.dma_all_memory = true,
	};
	struct vb2t_ctx *ctx = vb2t_ctx_create(test, &cfg);
	unsigned long user = vb2t_user_mem(test, PAGE_SIZE);
	struct vb2_buffer *vb;
	u32 word = 0;
	u32 *vaddr;

	reqbufs_n(test, ctx, V4L2_MEMORY_USERPTR, 1);
	vb = vb2_get_buffer(&ctx->q, 0);
	KUNIT_ASSERT_EQ(test, qbuf_userptr(ctx, 0, user), 0);
	KUNIT_ASSERT_EQ(test, vb2t_streamon(ctx), 0);
	vaddr = vb2_plane_vaddr(vb, 0);
	KUNIT_ASSERT_NOT_NULL(test, vaddr);
	KUNIT_EXPECT_PTR_EQ(test, vb2_plane_vaddr(vb, 0), (void *)vaddr);
	vaddr[2] = 0x5566;
	KUNIT_ASSERT_PTR_EQ(test, complete_and_dqbuf(test, ctx), vb);
	KUNIT_EXPECT_EQ(test, copy_from_user(&word, (void __user *)user + 8, 4),
			0);
	KUNIT_EXPECT_EQ(test, word, 0x5566);
}

/*
 * B6: DMABUF buffers have skip_cache_sync_on_prepare and
 * skip_cache_sync_on_finish set from their creation on, and QBUF leaves
 * them set on a queue without cache hints, as in 6.12 (atomisp flushes the
 * whole CPU cache in buf_queue unless both are set).
 */
static void vb2_contract_dmabuf_skips_cache_sync(struct kunit *test)
{
	struct vb2t_ctx *exp = exporter(test, &vb2_vmalloc_memops, 1);
	struct vb2t_config cfg = {
		.type = CAP, .io_modes = VB2_DMABUF,
		.backend = &vb2_vmalloc_memops, .size = PLANE,
	};
	struct vb2t_ctx *ctx = vb2t_ctx_create(test, &cfg);
	int fd = export_fd(test, exp, 0);
	struct vb2_buffer *vb;

	reqbufs_n(test, ctx, V4L2_MEMORY_DMABUF, 1);
	vb = vb2_get_buffer(&ctx->q, 0);
	KUNIT_EXPECT_TRUE(test, vb->skip_cache_sync_on_prepare);
	KUNIT_EXPECT_TRUE(test, vb->skip_cache_sync_on_finish);
	KUNIT_ASSERT_EQ(test, qbuf_dmabuf(ctx, 0, fd), 0);
	KUNIT_EXPECT_TRUE(test, vb->skip_cache_sync_on_prepare);
	KUNIT_EXPECT_TRUE(test, vb->skip_cache_sync_on_finish);
	KUNIT_ASSERT_EQ(test, vb2t_streamon(ctx), 0);
	KUNIT_ASSERT_PTR_EQ(test, complete_and_dqbuf(test, ctx), vb);
	KUNIT_ASSERT_EQ(test, qbuf_dmabuf(ctx, 0, fd), 0);
	KUNIT_EXPECT_TRUE(test, vb->skip_cache_sync_on_prepare);
	KUNIT_EXPECT_TRUE(test, vb->skip_cache_sync_on_finish);
}

/* ---------------------------------------------------------------------- */
/* Failed QBUF (rows F1-F4)                                               */
/* ---------------------------------------------------------------------- */

/* F1: buf_prepare refuses an MMAP buffer: the memory stays, nothing else. */
static void vb2_contract_prepare_fails_mmap(struct kunit *test)
{
	struct vb2t_ctx *ctx = vb2t_ctx_simple(test, CAP);

	reqbufs_n(test, ctx, V4L2_MEMORY_MMAP, 1);
	vb2t_log_reset(ctx);
	vb2t_fail(ctx, VB2T_BUF_PREPARE, 1, -EINVAL);
	KUNIT_EXPECT_EQ(test, vb2t_qbuf_mmap(ctx, 0), -EINVAL);
	KUNIT_EXPECT_STREQ(test, vb2t_log_of(ctx, 0), "buf_prepare");
	KUNIT_EXPECT_EQ(test, vb2t_state(ctx, 0), VB2_BUF_STATE_DEQUEUED);
	KUNIT_EXPECT_EQ(test, vb2t_qbuf_mmap(ctx, 0), 0);
	KUNIT_EXPECT_STREQ(test, vb2t_log_of(ctx, 0), "buf_prepare buf_prepare");
}

/*
 * F2: buf_prepare refuses a USERPTR buffer: buf_cleanup, then the pages
 * are unpinned; the next QBUF pins them again and calls buf_init again.
 * Also when the memory had been in use before.
 */
static void vb2_contract_prepare_fails_userptr(struct kunit *test)
{
	struct vb2t_ctx *ctx = vb2t_ctx_simple(test, CAP);
	unsigned long user = vb2t_user_mem(test, PAGE_SIZE);

	reqbufs_n(test, ctx, V4L2_MEMORY_USERPTR, 1);
	vb2t_fail(ctx, VB2T_BUF_PREPARE, 1, -EINVAL);
	KUNIT_EXPECT_EQ(test, qbuf_userptr(ctx, 0, user), -EINVAL);
	KUNIT_EXPECT_STREQ(test, vb2t_log_of(ctx, 0),
			   "get_userptr buf_init buf_prepare buf_cleanup put_userptr");
	KUNIT_EXPECT_EQ(test, ctx->live_mem, 0);
	KUNIT_EXPECT_EQ(test, vb2t_state(ctx, 0), VB2_BUF_STATE_DEQUEUED);

	vb2t_log_reset(ctx);
	KUNIT_ASSERT_EQ(test, qbuf_userptr(ctx, 0, user), 0);
	KUNIT_EXPECT_STREQ(test, vb2t_log_of(ctx, 0),
			   "get_userptr buf_init buf_prepare");
	KUNIT_ASSERT_EQ(test, vb2t_streamon(ctx), 0);
	complete_and_dqbuf(test, ctx);

	/* Refused on a later QBUF of the same memory: released just the same. */
	vb2t_log_reset(ctx);
	vb2t_fail(ctx, VB2T_BUF_PREPARE, 1, -EINVAL);
	KUNIT_EXPECT_EQ(test, qbuf_userptr(ctx, 0, user), -EINVAL);
	KUNIT_EXPECT_STREQ(test, vb2t_log_of(ctx, 0),
			   "buf_prepare buf_cleanup put_userptr");
	KUNIT_EXPECT_EQ(test, ctx->live_mem, 0);
}

/* F3: the same for DMABUF: buf_cleanup, unmap, detach; then all again. */
static void vb2_contract_prepare_fails_dmabuf(struct kunit *test)
{
	struct vb2t_ctx *exp = exporter(test, &vb2_vmalloc_memops, 1);
	struct vb2t_config cfg = {
		.type = CAP, .io_modes = VB2_DMABUF, .size = PLANE,
	};
	struct vb2t_ctx *ctx = vb2t_ctx_create(test, &cfg);
	int fd = export_fd(test, exp, 0);

	reqbufs_n(test, ctx, V4L2_MEMORY_DMABUF, 1);
	vb2t_fail(ctx, VB2T_BUF_PREPARE, 1, -EINVAL);
	KUNIT_EXPECT_EQ(test, qbuf_dmabuf(ctx, 0, fd), -EINVAL);
	KUNIT_EXPECT_STREQ(test, vb2t_log_of(ctx, 0),
			   "attach_dmabuf map_dmabuf buf_init buf_prepare buf_cleanup unmap_dmabuf detach_dmabuf");
	KUNIT_EXPECT_EQ(test, ctx->live_mem, 0);
	KUNIT_EXPECT_NULL(test, vb2_get_buffer(&ctx->q, 0)->planes[0].dbuf);

	vb2t_log_reset(ctx);
	KUNIT_ASSERT_EQ(test, qbuf_dmabuf(ctx, 0, fd), 0);
	KUNIT_EXPECT_STREQ(test, vb2t_log_of(ctx, 0),
			   "attach_dmabuf map_dmabuf buf_init buf_prepare");
}

/* F4: buf_out_validate refuses: no memory is acquired, nothing changes. */
static void vb2_contract_out_validate_fails(struct kunit *test)
{
	struct vb2t_ctx *ctx = vb2t_ctx_simple(test, OUT);
	unsigned long user = vb2t_user_mem(test, PAGE_SIZE);

	reqbufs_n(test, ctx, V4L2_MEMORY_USERPTR, 1);
	vb2t_fail(ctx, VB2T_BUF_OUT_VALIDATE, 1, -EINVAL);
	KUNIT_EXPECT_EQ(test, qbuf_userptr(ctx, 0, user), -EINVAL);
	KUNIT_EXPECT_STREQ(test, vb2t_log_of(ctx, 0), "buf_out_validate");
	KUNIT_EXPECT_EQ(test, ctx->live_mem, 0);
	KUNIT_EXPECT_EQ(test, vb2t_state(ctx, 0), VB2_BUF_STATE_DEQUEUED);
}

/*
 * The queue of the cases with requests: OUTPUT, MMAP, driven through the
 * core, with @count buffers, and request @a, and @b unless it is NULL, of
 * a media device of their own (made after the queue, so gone before it).
 */
static struct vb2t_ctx *request_queue(struct kunit *test, unsigned int count,
				      struct media_request **a,
				      struct media_request **b)
{
	struct vb2t_config cfg = {
		.type = OUT, .io_modes = VB2_MMAP, .core_only = true,
		.supports_requests = true,
	};
	struct vb2t_ctx *ctx = vb2t_ctx_create(test, &cfg);
	struct media_device *mdev = vb2t_mdev_create(test);

	*a = vb2t_request_alloc(test, mdev);
	if (b)
		*b = vb2t_request_alloc(test, mdev);
	KUNIT_ASSERT_EQ(test, vb2t_core_reqbufs(ctx, VB2_MEMORY_MMAP, &count), 0);
	return ctx;
}

/*
 * F5: a request that fails validation leaves the buffers buf_prepare
 * accepted prepared: no buf_finish for them, and no second buf_prepare
 * when the request is queued again; buf_finish comes at DQBUF, once.
 */
static void vb2_contract_failed_request_no_finish(struct kunit *test)
{
	struct media_request *req;
	struct vb2t_ctx *ctx = request_queue(test, 2, &req, NULL);
	unsigned int index;

	KUNIT_ASSERT_EQ(test, vb2t_core_qbuf(ctx, 0, req), 0);
	KUNIT_ASSERT_EQ(test, vb2t_core_qbuf(ctx, 1, req), 0);
	vb2t_log_reset(ctx);
	vb2t_fail(ctx, VB2T_BUF_PREPARE, 2, -EINVAL);
	KUNIT_EXPECT_EQ(test, vb2t_request_queue(req), -EINVAL);
	KUNIT_EXPECT_EQ(test, vb2t_count(ctx, VB2T_BUF_FINISH), 0);
	KUNIT_EXPECT_EQ(test, vb2t_state(ctx, 0), VB2_BUF_STATE_IN_REQUEST);

	KUNIT_ASSERT_EQ(test, vb2t_request_queue(req), 0);
	KUNIT_ASSERT_EQ(test, vb2t_core_streamon(ctx), 0);
	vb2t_complete_all(ctx, VB2_BUF_STATE_DONE);
	KUNIT_EXPECT_EQ(test, vb2t_core_dqbuf(ctx, &index), 0);
	KUNIT_EXPECT_EQ(test, vb2t_core_dqbuf(ctx, &index), 0);
	KUNIT_EXPECT_STREQ(test, vb2t_log_of(ctx, 0),
			   "buf_out_validate buf_prepare buf_queue buf_finish");
	KUNIT_EXPECT_STREQ(test, vb2t_log_of(ctx, 1),
			   "buf_out_validate buf_prepare buf_out_validate buf_prepare buf_queue buf_finish");
}

/*
 * F5: REMOVE_BUFS of a buffer prepared with PREPARE_BUF calls buf_cleanup
 * and no buf_finish.
 */
static void vb2_contract_remove_prepared_no_finish(struct kunit *test)
{
	struct vb2t_ctx *ctx = vb2t_ctx_simple(test, CAP);
	struct v4l2_buffer b;

	reqbufs_n(test, ctx, V4L2_MEMORY_MMAP, 2);
	vb2t_init_buffer(ctx, &b, NULL, 1);
	KUNIT_ASSERT_EQ(test, vb2t_prepare_buf(ctx, &b), 0);
	vb2t_log_reset(ctx);
	KUNIT_ASSERT_EQ(test, vb2t_remove_bufs(ctx, 1, 1), 0);
	KUNIT_EXPECT_STREQ(test, vb2t_log_of(ctx, 1), "buf_cleanup put free");
	KUNIT_EXPECT_EQ(test, vb2t_count(ctx, VB2T_BUF_FINISH), 0);
	KUNIT_EXPECT_EQ(test, vb2_get_num_buffers(&ctx->q), 1);
}

/*
 * B1: buf_out_validate sees the buffer as user space left it: DEQUEUED at
 * QBUF, PREPARE_BUF and the QBUF that binds it to a request, IN_REQUEST
 * when the request is validated. A buffer prepared with PREPARE_BUF is not
 * validated again when it is bound to a request.
 */
static void vb2_contract_out_validate_state(struct kunit *test)
{
	struct media_request *a, *b;
	struct vb2t_ctx *ctx = request_queue(test, 2, &a, &b);
	struct watch *w = watch(test, ctx);
	unsigned int count, validated;
	int ret;

	mutex_lock(&ctx->mutex);
	ret = vb2_core_prepare_buf(&ctx->q, vb2_get_buffer(&ctx->q, 1), NULL);
	mutex_unlock(&ctx->mutex);
	KUNIT_ASSERT_EQ(test, ret, 0);
	KUNIT_EXPECT_EQ(test, seen(test, w, VB2T_BUF_OUT_VALIDATE, 1)->state,
			VB2_BUF_STATE_DEQUEUED);

	KUNIT_ASSERT_EQ(test, vb2t_core_qbuf(ctx, 0, a), 0);
	KUNIT_EXPECT_EQ(test, seen(test, w, VB2T_BUF_OUT_VALIDATE, 0)->state,
			VB2_BUF_STATE_DEQUEUED);
	KUNIT_ASSERT_EQ(test, vb2t_request_queue(a), 0);
	KUNIT_EXPECT_EQ(test,
			seen_nth(test, w, VB2T_BUF_OUT_VALIDATE, 0, 1)->state,
			VB2_BUF_STATE_IN_REQUEST);
	KUNIT_EXPECT_EQ(test, seen(test, w, VB2T_BUF_PREPARE, 0)->state,
			VB2_BUF_STATE_PREPARING);

	validated = vb2t_count(ctx, VB2T_BUF_OUT_VALIDATE);
	KUNIT_ASSERT_EQ(test, vb2t_core_qbuf(ctx, 1, b), 0);
	KUNIT_EXPECT_EQ(test, vb2t_count(ctx, VB2T_BUF_OUT_VALIDATE), validated);
	KUNIT_ASSERT_EQ(test, vb2t_request_queue(b), 0);
	KUNIT_EXPECT_STREQ(test, vb2t_log_of(ctx, 1),
			   "alloc buf_init buf_out_validate buf_prepare");

	/* Cancel both requests while their media device still exists. */
	count = 0;
	KUNIT_EXPECT_EQ(test, vb2t_core_reqbufs(ctx, VB2_MEMORY_MMAP, &count), 0);
}

/* ---------------------------------------------------------------------- */
/* Buffer callbacks and completion (rows B1-B4)                           */
/* ---------------------------------------------------------------------- */

/*
 * B1: buf_prepare sees PREPARING, buf_queue ACTIVE; buf_finish at DQBUF
 * sees the state the driver returned, the buffer still counted in
 * queued_count, and the queue streaming.
 */
static void vb2_contract_states_in_callbacks(struct kunit *test)
{
	struct vb2t_ctx *ctx = vb2t_ctx_simple(test, CAP);
	struct watch *w = watch(test, ctx);
	const struct seen *e;
	unsigned int index;

	reqbufs_n(test, ctx, V4L2_MEMORY_MMAP, 2);
	qbuf_range(test, ctx, 0, 2);
	KUNIT_ASSERT_EQ(test, vb2t_streamon(ctx), 0);
	KUNIT_EXPECT_EQ(test, seen(test, w, VB2T_BUF_PREPARE, 0)->state,
			VB2_BUF_STATE_PREPARING);
	KUNIT_ASSERT_TRUE(test, vb2t_complete_index(ctx, 1, VB2_BUF_STATE_ERROR));
	KUNIT_ASSERT_EQ(test, vb2t_dqbuf_index(ctx, &index, NULL), 0);
	KUNIT_EXPECT_EQ(test, index, 1);
	e = seen(test, w, VB2T_BUF_FINISH, 1);
	KUNIT_EXPECT_EQ(test, e->state, VB2_BUF_STATE_ERROR);
	KUNIT_EXPECT_EQ(test, e->queued_count, 2);
	KUNIT_EXPECT_TRUE(test, e->streaming);
	KUNIT_EXPECT_EQ(test, e->owned, 1);
}

/* B2: a buffer queued through a request carries the request in buf_queue. */
static void vb2_contract_request_in_buf_queue(struct kunit *test)
{
	struct media_request *req;
	struct vb2t_ctx *ctx = request_queue(test, 1, &req, NULL);
	struct watch *w = watch(test, ctx);
	unsigned int index;

	KUNIT_ASSERT_EQ(test, vb2t_core_qbuf(ctx, 0, req), 0);
	KUNIT_ASSERT_EQ(test, vb2t_request_queue(req), 0);
	KUNIT_ASSERT_EQ(test, vb2t_core_streamon(ctx), 0);
	KUNIT_EXPECT_TRUE(test, seen(test, w, VB2T_BUF_QUEUE, 0)->request);
	KUNIT_EXPECT_PTR_EQ(test, vb2t_peek(ctx)->req_obj.req, req);
	KUNIT_ASSERT_TRUE(test, vb2t_complete_next(ctx, VB2_BUF_STATE_DONE));
	KUNIT_EXPECT_EQ(test, READ_ONCE(req->state), MEDIA_REQUEST_STATE_COMPLETE);
	KUNIT_EXPECT_EQ(test, vb2t_core_dqbuf(ctx, &index), 0);
	KUNIT_EXPECT_NULL(test, vb2_get_buffer(&ctx->q, 0)->request);
}

/*
 * B5: a queued request whose buffers never reached the driver is completed
 * by the driver's buf_request_complete when the queue is cancelled: once
 * per request and queue, however many buffers of the queue it holds. A
 * second call would complete the driver's control object of the request
 * twice (v4l2_ctrl_request_complete() warns; user space can provoke it).
 * 6.12 calls it for every buffer.
 */
static void vb2_contract_request_completed_once(struct kunit *test)
{
	struct media_request *a, *b;
	struct vb2t_ctx *ctx = request_queue(test, 3, &a, &b);
	const char *log;

	KUNIT_ASSERT_EQ(test, vb2t_core_qbuf(ctx, 0, a), 0);
	KUNIT_ASSERT_EQ(test, vb2t_core_qbuf(ctx, 1, b), 0);
	KUNIT_ASSERT_EQ(test, vb2t_core_qbuf(ctx, 2, a), 0);
	KUNIT_ASSERT_EQ(test, vb2t_request_queue(a), 0);
	KUNIT_ASSERT_EQ(test, vb2t_request_queue(b), 0);
	KUNIT_EXPECT_EQ(test, vb2t_owned(ctx), 0);
	KUNIT_ASSERT_EQ(test, vb2t_core_streamoff(ctx), 0);
	KUNIT_EXPECT_EQ(test, vb2t_count(ctx, VB2T_BUF_REQUEST_COMPLETE), 2);
	/* Buffer 1 alone in its request completes it; so does buffer 0. */
	log = vb2t_log_of(ctx, 1);
	KUNIT_EXPECT_NOT_NULL_MSG(test, strstr(log, "buf_prepare buf_request_complete buf_finish"),
				  "%s", log);
	KUNIT_EXPECT_NOT_NULL(test, strstr(vb2t_log_of(ctx, 0),
					   "buf_request_complete"));
	KUNIT_EXPECT_NULL(test, strstr(vb2t_log_of(ctx, 2),
				       "buf_request_complete"));
}

/*
 * B3: stop_streaming must return every buffer. A driver that does not is
 * warned about; the core takes the buffers back, and the next STREAMON
 * works.
 */
static void vb2_contract_stop_keeps_buffers(struct kunit *test)
{
	struct vb2t_ctx *ctx = vb2t_ctx_simple(test, CAP);
	unsigned int i;

	reqbufs_n(test, ctx, V4L2_MEMORY_MMAP, 2);
	qbuf_range(test, ctx, 0, 2);
	KUNIT_ASSERT_EQ(test, vb2t_streamon(ctx), 0);
	ctx->keep_on_stop = true;
	vb2t_expect_warning_begin(test);
	KUNIT_EXPECT_EQ(test, vb2t_streamoff(ctx), 0);
	vb2t_expect_warning_end(test);
	ctx->keep_on_stop = false;
	KUNIT_EXPECT_EQ(test, atomic_read(&ctx->q.owned_by_drv_count), 0);
	for (i = 0; i < 2; i++)
		KUNIT_EXPECT_EQ(test, vb2t_state(ctx, i), VB2_BUF_STATE_DEQUEUED);
	qbuf_range(test, ctx, 0, 2);
	KUNIT_EXPECT_EQ(test, vb2t_streamon(ctx), 0);
	KUNIT_EXPECT_EQ(test, ctx->start_count, 2);
}

/* B4: a driver may complete a buffer from buf_queue and from IRQ context;
 * DQBUF returns buffers in the order they completed, not queued.
 */
static void vb2_contract_completion_order(struct kunit *test)
{
	struct vb2t_ctx *ctx = vb2t_ctx_simple(test, CAP);
	unsigned int index;
	unsigned long flags;

	reqbufs_n(test, ctx, V4L2_MEMORY_MMAP, 3);
	qbuf_range(test, ctx, 0, 2);
	KUNIT_ASSERT_EQ(test, vb2t_streamon(ctx), 0);
	local_irq_save(flags);
	KUNIT_EXPECT_TRUE(test, vb2t_complete_index(ctx, 1, VB2_BUF_STATE_DONE));
	local_irq_restore(flags);
	ctx->complete_in_queue = VB2_BUF_STATE_DONE;
	qbuf_range(test, ctx, 2, 1);
	ctx->complete_in_queue = 0;
	KUNIT_ASSERT_EQ(test, vb2t_dqbuf_index(ctx, &index, NULL), 0);
	KUNIT_EXPECT_EQ(test, index, 1);
	KUNIT_ASSERT_EQ(test, vb2t_dqbuf_index(ctx, &index, NULL), 0);
	KUNIT_EXPECT_EQ(test, index, 2);
	KUNIT_EXPECT_EQ(test, vb2t_dqbuf_index(ctx, &index, NULL), -EAGAIN);
}

/*
 * B7: a driver finds its MMAP buffer in the queue in buf_init and in
 * buf_cleanup: vb2_get_buffer() returns it and vb2_get_num_buffers()
 * counts it. A buffer whose buf_init or allocation fails is not left in
 * the queue.
 */
static void vb2_contract_buffer_visible_in_init_cleanup(struct kunit *test)
{
	struct vb2t_ctx *ctx = vb2t_ctx_simple(test, CAP);
	struct watch *w = watch(test, ctx);
	const struct seen *e;
	unsigned int i, count;

	reqbufs_n(test, ctx, V4L2_MEMORY_MMAP, 3);
	KUNIT_ASSERT_EQ(test, vb2t_create_bufs(ctx, V4L2_MEMORY_MMAP, 1,
					       PAGE_SIZE, NULL, NULL), 0);
	for (i = 0; i < 4; i++) {
		e = seen(test, w, VB2T_BUF_INIT, i);
		KUNIT_EXPECT_TRUE(test, e->found);
		KUNIT_EXPECT_EQ(test, e->num_buffers, i + 1);
	}
	KUNIT_ASSERT_EQ(test, vb2t_remove_bufs(ctx, 1, 2), 0);
	count = 0;
	KUNIT_ASSERT_EQ(test, vb2t_reqbufs(ctx, V4L2_MEMORY_MMAP, &count), 0);
	/* All cleaned up before any goes: 4 buffers at REMOVE_BUFS, 2 after. */
	for (i = 0; i < 4; i++) {
		e = seen(test, w, VB2T_BUF_CLEANUP, i);
		KUNIT_EXPECT_TRUE(test, e->found);
		KUNIT_EXPECT_EQ(test, e->num_buffers, i == 1 || i == 2 ? 4 : 2);
	}

	/* buf_init refuses the second buffer, then memory runs out. */
	watch_clear(w);
	vb2t_fail(ctx, VB2T_BUF_INIT, 2, -ENOMEM);
	vb2t_log_reset(ctx);
	count = 3;
	KUNIT_EXPECT_EQ(test, vb2t_reqbufs(ctx, V4L2_MEMORY_MMAP, &count), 0);
	KUNIT_EXPECT_STREQ(test, vb2t_log_of(ctx, 1), "alloc buf_init put free");
	KUNIT_EXPECT_EQ(test, count, 1);
	KUNIT_EXPECT_EQ(test, vb2_get_num_buffers(&ctx->q), 1);
	KUNIT_EXPECT_NULL(test, vb2_get_buffer(&ctx->q, 1));
	vb2t_fail(ctx, VB2T_ALLOC, 2, -ENOMEM);
	KUNIT_EXPECT_EQ(test, vb2t_create_bufs(ctx, V4L2_MEMORY_MMAP, 3,
					       PAGE_SIZE, NULL, &count), 0);
	KUNIT_EXPECT_EQ(test, count, 1);
	KUNIT_EXPECT_EQ(test, vb2_get_num_buffers(&ctx->q), 2);
	KUNIT_EXPECT_NOT_NULL(test, vb2_get_buffer(&ctx->q, 1));
	KUNIT_EXPECT_NULL(test, vb2_get_buffer(&ctx->q, 2));
	KUNIT_EXPECT_EQ(test, vb2t_qbuf_mmap(ctx, 1), 0);
}

/* ---------------------------------------------------------------------- */
/* read() and write() emulation (rows W1-W6)                             */
/* ---------------------------------------------------------------------- */

/* A non-blocking read() of up to a page into @user. */
static ssize_t read_into(struct vb2t_ctx *ctx, unsigned long user)
{
	loff_t pos = 0;
	ssize_t ret;

	mutex_lock(&ctx->mutex);
	ret = vb2_read(&ctx->q, (char __user *)user, PAGE_SIZE, &pos, 1);
	mutex_unlock(&ctx->mutex);
	return ret;
}

/* A non-blocking read() of one page into new user memory. */
static ssize_t read_nonblock(struct kunit *test, struct vb2t_ctx *ctx)
{
	return read_into(ctx, vb2t_user_mem(test, PAGE_SIZE));
}

/*
 * W1: the emulation asks queue_setup for min_reqbufs_allocation buffers,
 * as REQBUFS(1) would: one on a queue without min_queued_buffers (em28xx,
 * saa7134), the driver's number where it set one.
 */
static void vb2_contract_fileio_buffer_count(struct kunit *test)
{
	struct vb2t_config cfg = {
		.type = CAP, .io_modes = VB2_MMAP | VB2_READ,
	};
	struct vb2t_ctx *plain = vb2t_ctx_create(test, &cfg);
	struct watch *w = watch(test, plain);
	struct vb2t_ctx *four;

	KUNIT_EXPECT_EQ(test, read_nonblock(test, plain), -EAGAIN);
	KUNIT_EXPECT_EQ(test, seen_last(test, w, VB2T_QUEUE_SETUP)->buffers_in, 1);
	KUNIT_EXPECT_EQ(test, vb2_get_num_buffers(&plain->q), 1);

	cfg.min_reqbufs_allocation = 4;
	four = vb2t_ctx_create(test, &cfg);
	w = watch(test, four);
	KUNIT_EXPECT_EQ(test, read_nonblock(test, four), -EAGAIN);
	KUNIT_EXPECT_EQ(test, seen_last(test, w, VB2T_QUEUE_SETUP)->buffers_in, 4);
	KUNIT_EXPECT_EQ(test, vb2_get_num_buffers(&four->q), 4);
}

/*
 * W2: the emulation takes at most VB2_MAX_FRAME buffers; asked to start
 * with more, read() fails and leaves the queue without buffers. Only the
 * failure is pinned here (the code is ours in the core suite's
 * vb2_misc_fileio_too_many_buffers); the log shows the code.
 */
static void vb2_contract_fileio_at_most_max_frame(struct kunit *test)
{
	struct vb2t_config cfg = {
		.type = CAP, .io_modes = VB2_MMAP | VB2_READ,
		.max_num_buffers = 2 * VB2_MAX_FRAME,
		.min_reqbufs_allocation = VB2_MAX_FRAME + 1,
	};
	struct vb2t_ctx *ctx = vb2t_ctx_create(test, &cfg);
	ssize_t ret = read_nonblock(test, ctx);

	kunit_info(test, "read() needing %d buffers: %zd\n",
		   VB2_MAX_FRAME + 1, ret);
	KUNIT_EXPECT_LT(test, ret, 0);
	KUNIT_EXPECT_NE(test, ret, -EAGAIN);
	KUNIT_EXPECT_FALSE(test, vb2_fileio_is_active(&ctx->q));
	KUNIT_EXPECT_FALSE(test, vb2_is_streaming(&ctx->q));
	KUNIT_EXPECT_EQ(test, vb2_get_num_buffers(&ctx->q), 0);
}

/*
 * W6: a frame written with write() reaches the driver with the bytes
 * written as its payload, so a driver that checks the payload in
 * buf_prepare (vivid) takes it. Deliberate difference: 6.12 does not set
 * the payload (0 for a buffer not queued before) and vivid refuses it.
 */
static void vb2_contract_write_sets_payload(struct kunit *test)
{
	struct vb2t_config cfg = {
		.type = OUT, .io_modes = VB2_MMAP | VB2_WRITE,
	};
	struct vb2t_ctx *ctx = vb2t_ctx_create(test, &cfg);
	unsigned long user = vb2t_user_mem(test, PAGE_SIZE);
	struct vb2_buffer *vb;
	loff_t pos = 0;
	ssize_t ret;

	mutex_lock(&ctx->mutex);
	ret = vb2_write(&ctx->q, (const char __user *)user, PAGE_SIZE, &pos, 1);
	mutex_unlock(&ctx->mutex);
	KUNIT_ASSERT_EQ(test, ret, PAGE_SIZE);
	vb = vb2t_peek(ctx);
	KUNIT_ASSERT_NOT_NULL(test, vb);
	kunit_info(test, "payload of a written frame of %lu bytes: %lu\n",
		   PAGE_SIZE, vb2_get_plane_payload(vb, 0));
	KUNIT_EXPECT_EQ(test, vb2_get_plane_payload(vb, 0), PAGE_SIZE);
}

/* The driver completes its next buffer with @payload bytes from @offset. */
static void complete_payload(struct kunit *test, struct vb2t_ctx *ctx,
			     unsigned int payload, unsigned int offset)
{
	struct vb2_buffer *vb = vb2t_peek(ctx);
	u8 *p;

	KUNIT_ASSERT_NOT_NULL(test, vb);
	p = vb2_plane_vaddr(vb, 0);
	KUNIT_ASSERT_NOT_NULL(test, p);
	memset(p, 0xaa, offset);
	memset(p + offset, 0x55, payload - offset);
	vb2_set_plane_payload(vb, 0, payload);
	vb->planes[0].data_offset = offset;
	KUNIT_ASSERT_TRUE(test, vb2t_complete_next(ctx, VB2_BUF_STATE_DONE));
}

/*
 * W3: a buffer the driver completes without payload ends the read() that
 * dequeues it: read() returns 0 (end of file) and the next read() goes on
 * with the next buffer, as in 6.12.
 */
static void vb2_contract_fileio_empty_buffer(struct kunit *test)
{
	struct vb2t_config cfg = {
		.type = CAP, .io_modes = VB2_MMAP | VB2_READ,
		.min_reqbufs_allocation = 2,
	};
	struct vb2t_ctx *ctx = vb2t_ctx_create(test, &cfg);
	unsigned long user = vb2t_user_mem(test, PAGE_SIZE);

	KUNIT_ASSERT_EQ(test, read_into(ctx, user), -EAGAIN);
	complete_payload(test, ctx, 0, 0);
	complete_payload(test, ctx, 100, 0);
	KUNIT_EXPECT_EQ(test, read_into(ctx, user), 0);
	KUNIT_EXPECT_EQ(test, read_into(ctx, user), 100);
	KUNIT_EXPECT_EQ(test, read_into(ctx, user), -EAGAIN);
}

/*
 * W4: read() copies a single-planar buffer from its first byte to the end
 * of the payload, whatever data_offset the driver set, as in 6.12.
 */
static void vb2_contract_fileio_data_offset(struct kunit *test)
{
	struct vb2t_config cfg = {
		.type = CAP, .io_modes = VB2_MMAP | VB2_READ,
	};
	struct vb2t_ctx *ctx = vb2t_ctx_create(test, &cfg);
	unsigned long user = vb2t_user_mem(test, PAGE_SIZE);
	u8 first = 0;

	KUNIT_ASSERT_EQ(test, read_into(ctx, user), -EAGAIN);
	complete_payload(test, ctx, 100, 16);
	KUNIT_EXPECT_EQ(test, read_into(ctx, user), 100);
	KUNIT_EXPECT_EQ(test, get_user(first, (u8 __user *)user), 0);
	KUNIT_EXPECT_EQ(test, first, 0xaa);
}

/*
 * W5: on a multi-planar queue read() copies from data_offset to the end
 * of the payload. Deliberate difference: 6.12 starts at data_offset too
 * but stops data_offset bytes before the end (68 of the 84 bytes here).
 */
static void vb2_contract_fileio_data_offset_mplane(struct kunit *test)
{
	struct vb2t_config cfg = {
		.type = CAP_MP, .io_modes = VB2_MMAP | VB2_READ,
	};
	struct vb2t_ctx *ctx = vb2t_ctx_create(test, &cfg);
	unsigned long user = vb2t_user_mem(test, PAGE_SIZE);
	u8 first = 0;
	ssize_t n;

	KUNIT_ASSERT_EQ(test, read_into(ctx, user), -EAGAIN);
	complete_payload(test, ctx, 100, 16);
	n = read_into(ctx, user);
	KUNIT_EXPECT_EQ(test, get_user(first, (u8 __user *)user), 0);
	KUNIT_EXPECT_EQ(test, n, 84);
	KUNIT_EXPECT_EQ(test, first, 0x55);
}

/* ---------------------------------------------------------------------- */
/* The vb2 thread (rows V1, V2)                                           */
/* ---------------------------------------------------------------------- */

/**
 * struct thread_seen - what the vb2 thread's callback saw
 * @calls:	number of calls.
 * @comm:	the name of the task that made the last call.
 * @wq:		woken on each call.
 */
struct thread_seen {
	atomic_t		calls;
	char			comm[TASK_COMM_LEN];
	wait_queue_head_t	wq;
};

static int thread_record(struct vb2_buffer *vb, void *priv)
{
	struct thread_seen *t = priv;

	get_task_comm(t->comm, current);
	atomic_inc(&t->calls);
	wake_up(&t->wq);
	return 0;
}

/* Up to five seconds for the driver to hold @n buffers. */
static bool wait_driver_holds(struct vb2t_ctx *ctx, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < 250 && vb2t_owned(ctx) != n; i++)
		msleep(20);
	return vb2t_owned(ctx) == n;
}

/* The callback has been called @n times, within five seconds. */
static bool wait_calls(struct thread_seen *t, int n)
{
	return wait_event_timeout(t->wq, atomic_read(&t->calls) >= n, 5 * HZ);
}

/*
 * V1, V2: the vb2 thread hands every buffer it dequeues to its callback,
 * also one the driver returned with an error (the DVB drivers' demux
 * callback sees it), and runs as "vb2-" followed by the name it was given.
 */
static void vb2_contract_thread_gets_every_buffer(struct kunit *test)
{
	struct vb2t_config cfg = { .type = CAP, .io_modes = VB2_MMAP | VB2_READ };
	struct vb2t_ctx *ctx = vb2t_ctx_create(test, &cfg);
	struct thread_seen *t;
	unsigned int n;

	t = kunit_kzalloc(test, sizeof(*t), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, t);
	init_waitqueue_head(&t->wq);
	KUNIT_ASSERT_EQ(test, vb2_thread_start(&ctx->q, thread_record, t,
					       "contract"), 0);
	n = vb2_get_num_buffers(&ctx->q);
	KUNIT_EXPECT_TRUE(test, wait_driver_holds(ctx, n));

	KUNIT_EXPECT_TRUE(test, vb2t_complete_next(ctx, VB2_BUF_STATE_ERROR));
	KUNIT_EXPECT_TRUE(test, wait_calls(t, 1));
	KUNIT_EXPECT_TRUE(test, wait_driver_holds(ctx, n));
	KUNIT_EXPECT_TRUE(test, vb2t_complete_next(ctx, VB2_BUF_STATE_DONE));
	KUNIT_EXPECT_TRUE(test, wait_calls(t, 2));
	KUNIT_EXPECT_TRUE(test, wait_driver_holds(ctx, n));

	KUNIT_EXPECT_EQ(test, vb2_thread_stop(&ctx->q), 0);
	KUNIT_EXPECT_EQ(test, atomic_read(&t->calls), 2);
	KUNIT_EXPECT_STREQ(test, t->comm, "vb2-contract");
}

/* ---------------------------------------------------------------------- */
/* Queue-wide rules (rows R1-R8)                                          */
/* ---------------------------------------------------------------------- */

/*
 * R1: REQBUFS(0) is allowed while another task still waits in DQBUF (it was
 * woken by STREAMOFF and has not run yet); REQBUFS(n) is not. The waiter
 * holds no buffer and returns -EINVAL.
 */
static void vb2_contract_free_under_dqbuf_waiter(struct kunit *test)
{
	struct vb2t_ctx *ctx = vb2t_ctx_simple(test, CAP);
	struct v4l2_requestbuffers req = {
		.type = CAP, .memory = V4L2_MEMORY_MMAP,
	};
	struct vb2t_waiter *wt;
	int ret_n, ret_0;

	reqbufs_n(test, ctx, V4L2_MEMORY_MMAP, 2);
	qbuf_range(test, ctx, 0, 2);
	KUNIT_ASSERT_EQ(test, vb2t_streamon(ctx), 0);
	KUNIT_ASSERT_TRUE_MSG(test, vb2t_start_waiter(test, ctx, &wt),
			      "DQBUF did not sleep");
	/* The waiter needs the lock to return: it stays in DQBUF meanwhile. */
	mutex_lock(&ctx->mutex);
	KUNIT_EXPECT_EQ(test, vb2_streamoff(&ctx->q, CAP), 0);
	req.count = 2;
	ret_n = vb2_reqbufs(&ctx->q, &req);
	req.count = 0;
	ret_0 = vb2_reqbufs(&ctx->q, &req);
	mutex_unlock(&ctx->mutex);
	KUNIT_EXPECT_EQ(test, ret_n, -EBUSY);
	KUNIT_EXPECT_EQ(test, ret_0, 0);
	KUNIT_EXPECT_GT(test, wait_for_completion_timeout(&wt->done, 5 * HZ), 0);
	KUNIT_EXPECT_EQ(test, wt->ret, -EINVAL);
	KUNIT_EXPECT_EQ(test, vb2_get_num_buffers(&ctx->q), 0);
}

/*
 * R9: CREATE_BUFS on a queue without buffers while another task is inside
 * a blocking DQBUF fails with -EBUSY, as REQBUFS does (R1); on a queue
 * that has buffers it is allowed.
 */
static void vb2_contract_create_under_dqbuf_waiter(struct kunit *test)
{
	struct vb2t_ctx *ctx = vb2t_ctx_simple(test, CAP);
	struct v4l2_requestbuffers req = {
		.type = CAP, .memory = V4L2_MEMORY_MMAP,
	};
	struct v4l2_create_buffers cb = {
		.count = 1, .memory = V4L2_MEMORY_MMAP,
	};
	struct vb2t_waiter *wt;
	int ret_some, ret_0, ret_empty;

	cb.format.type = CAP;
	cb.format.fmt.pix.sizeimage = PAGE_SIZE;
	reqbufs_n(test, ctx, V4L2_MEMORY_MMAP, 2);
	qbuf_range(test, ctx, 0, 2);
	KUNIT_ASSERT_EQ(test, vb2t_streamon(ctx), 0);
	KUNIT_ASSERT_TRUE_MSG(test, vb2t_start_waiter(test, ctx, &wt),
			      "DQBUF did not sleep");
	/* The waiter needs the lock to return: it stays in DQBUF meanwhile. */
	mutex_lock(&ctx->mutex);
	KUNIT_EXPECT_EQ(test, vb2_streamoff(&ctx->q, CAP), 0);
	ret_some = vb2_create_bufs(&ctx->q, &cb);
	req.count = 0;
	ret_0 = vb2_reqbufs(&ctx->q, &req);
	cb.count = 1;
	ret_empty = vb2_create_bufs(&ctx->q, &cb);
	mutex_unlock(&ctx->mutex);
	KUNIT_EXPECT_EQ(test, ret_some, 0);
	KUNIT_EXPECT_EQ(test, ret_0, 0);
	KUNIT_EXPECT_EQ(test, ret_empty, -EBUSY);
	KUNIT_EXPECT_GT(test, wait_for_completion_timeout(&wt->done, 5 * HZ), 0);
	KUNIT_EXPECT_EQ(test, wt->ret, -EINVAL);
	KUNIT_EXPECT_EQ(test, vb2_get_num_buffers(&ctx->q), 0);
}

/*
 * R8: while a task sleeps in DQBUF, every other DQBUF is refused with
 * -EBUSY: a non-blocking one, and one that finds a buffer ready. The
 * sleeper gets that buffer.
 */
static void vb2_contract_dqbuf_busy_while_one_sleeps(struct kunit *test)
{
	struct vb2t_ctx *ctx = vb2t_ctx_simple(test, CAP);
	struct vb2t_waiter *wt;
	int empty, ready, blocking;
	struct v4l2_buffer b;

	reqbufs_n(test, ctx, V4L2_MEMORY_MMAP, 2);
	qbuf_range(test, ctx, 0, 2);
	KUNIT_ASSERT_EQ(test, vb2t_streamon(ctx), 0);
	KUNIT_ASSERT_TRUE_MSG(test, vb2t_start_waiter(test, ctx, &wt),
			      "DQBUF did not sleep");
	/* The waiter needs the lock to return: it stays in DQBUF meanwhile. */
	mutex_lock(&ctx->mutex);
	vb2t_init_buffer(ctx, &b, NULL, 0);
	empty = vb2_dqbuf(&ctx->q, &b, true);
	KUNIT_EXPECT_TRUE(test, vb2t_complete_next(ctx, VB2_BUF_STATE_DONE));
	vb2t_init_buffer(ctx, &b, NULL, 0);
	ready = vb2_dqbuf(&ctx->q, &b, true);
	vb2t_init_buffer(ctx, &b, NULL, 0);
	blocking = vb2_dqbuf(&ctx->q, &b, false);
	mutex_unlock(&ctx->mutex);
	KUNIT_EXPECT_EQ(test, empty, -EBUSY);
	KUNIT_EXPECT_EQ(test, ready, -EBUSY);
	KUNIT_EXPECT_EQ(test, blocking, -EBUSY);

	if (!wait_for_completion_timeout(&wt->done, 2 * HZ)) {
		/* Its buffer was taken: give it another so that it returns. */
		vb2t_complete_next(ctx, VB2_BUF_STATE_DONE);
		wait_for_completion(&wt->done);
	}
	KUNIT_EXPECT_EQ(test, wt->ret, 0);
	KUNIT_EXPECT_EQ(test, wt->index, 0);
}

/*
 * R2: REMOVE_BUFS of nothing succeeds from any file; removing something
 * needs the file that owns the buffers. The type is checked first.
 */
static void vb2_contract_remove_nothing_any_file(struct kunit *test)
{
	struct vb2t_ctx *ctx = vb2t_ctx_simple(test, CAP);
	struct vb2t_vdev *v = vb2t_vdev_register(ctx);
	struct v4l2_requestbuffers rb = {
		.count = 2, .type = CAP, .memory = V4L2_MEMORY_MMAP,
	};
	struct v4l2_remove_buffers rm = { .index = 0, .count = 0, .type = CAP };
	struct file *owner, *other;

	KUNIT_ASSERT_NOT_NULL(test, v);
	owner = vb2t_vdev_open(v);
	other = vb2t_vdev_open(v);
	KUNIT_ASSERT_EQ(test, vb2t_vdev_ioctl(v, owner, VIDIOC_REQBUFS, &rb,
					      sizeof(rb)), 0);
	KUNIT_EXPECT_EQ(test, vb2t_vdev_ioctl(v, other, VIDIOC_REMOVE_BUFS, &rm,
					      sizeof(rm)), 0);
	rm.count = 1;
	KUNIT_EXPECT_EQ(test, vb2t_vdev_ioctl(v, other, VIDIOC_REMOVE_BUFS, &rm,
					      sizeof(rm)), -EBUSY);
	rm.type = OUT;
	rm.count = 0;
	KUNIT_EXPECT_EQ(test, vb2t_vdev_ioctl(v, other, VIDIOC_REMOVE_BUFS, &rm,
					      sizeof(rm)), -EINVAL);
	rm.type = CAP;
	rm.count = 1;
	KUNIT_EXPECT_EQ(test, vb2t_vdev_ioctl(v, owner, VIDIOC_REMOVE_BUFS, &rm,
					      sizeof(rm)), 0);
	KUNIT_EXPECT_EQ(test, vb2_get_num_buffers(&ctx->q), 1);
}

/*
 * R3: once REMOVE_BUFS removed the last buffer, the queue has no memory
 * model: CREATE_BUFS may pick another one.
 */
static void vb2_contract_memory_reset_when_empty(struct kunit *test)
{
	struct vb2t_ctx *ctx = vb2t_ctx_simple(test, CAP);

	reqbufs_n(test, ctx, V4L2_MEMORY_MMAP, 2);
	KUNIT_EXPECT_EQ(test, vb2t_create_bufs(ctx, V4L2_MEMORY_USERPTR, 1,
					       PAGE_SIZE, NULL, NULL), -EINVAL);
	KUNIT_ASSERT_EQ(test, vb2t_remove_bufs(ctx, 0, 1), 0);
	KUNIT_EXPECT_EQ(test, ctx->q.memory, VB2_MEMORY_MMAP);
	KUNIT_ASSERT_EQ(test, vb2t_remove_bufs(ctx, 1, 1), 0);
	KUNIT_EXPECT_EQ(test, ctx->q.memory, VB2_MEMORY_UNKNOWN);
	KUNIT_EXPECT_EQ(test, vb2t_create_bufs(ctx, V4L2_MEMORY_USERPTR, 1,
					       PAGE_SIZE, NULL, NULL), 0);
	KUNIT_EXPECT_EQ(test, ctx->q.memory, VB2_MEMORY_USERPTR);
}

/*
 * R7: REQBUFS(0) leaves the queue not busy, also after REMOVE_BUFS emptied
 * it (which already forgot the memory model): a driver that refuses S_FMT
 * on a busy queue accepts it again.
 */
static void vb2_contract_reqbufs0_after_remove_all(struct kunit *test)
{
	struct vb2t_ctx *ctx = vb2t_ctx_simple(test, CAP);
	struct vb2t_vdev *v = vb2t_vdev_register(ctx);
	struct v4l2_create_buffers cb = {
		.count = 2, .memory = V4L2_MEMORY_MMAP,
		.format.type = CAP,
		.format.fmt.pix.sizeimage = PLANE,
	};
	struct v4l2_remove_buffers rm = { .index = 0, .count = 2, .type = CAP };
	struct v4l2_requestbuffers rb = {
		.count = 0, .type = CAP, .memory = V4L2_MEMORY_MMAP,
	};
	struct v4l2_format fmt = { .type = CAP };
	struct file *f;

	KUNIT_ASSERT_NOT_NULL(test, v);
	f = vb2t_vdev_open(v);
	KUNIT_ASSERT_EQ(test, vb2t_vdev_ioctl(v, f, VIDIOC_CREATE_BUFS, &cb,
					      sizeof(cb)), 0);
	KUNIT_ASSERT_EQ(test, cb.count, 2);
	fmt.fmt.pix.sizeimage = 2 * PLANE;
	KUNIT_EXPECT_EQ(test, vb2t_vdev_ioctl(v, f, VIDIOC_S_FMT, &fmt,
					      sizeof(fmt)), -EBUSY);
	KUNIT_ASSERT_EQ(test, vb2t_vdev_ioctl(v, f, VIDIOC_REMOVE_BUFS, &rm,
					      sizeof(rm)), 0);
	KUNIT_EXPECT_EQ(test, vb2_get_num_buffers(&ctx->q), 0);
	KUNIT_ASSERT_EQ(test, vb2t_vdev_ioctl(v, f, VIDIOC_REQBUFS, &rb,
					      sizeof(rb)), 0);
	KUNIT_EXPECT_FALSE(test, vb2_is_busy(&ctx->q));
	fmt.fmt.pix.sizeimage = 2 * PLANE;
	KUNIT_EXPECT_EQ(test, vb2t_vdev_ioctl(v, f, VIDIOC_S_FMT, &fmt,
					      sizeof(fmt)), 0);
	KUNIT_EXPECT_EQ(test, fmt.fmt.pix.sizeimage, 2 * PLANE);
}

/*
 * R4: a queue that supports requests cannot have min_queued_buffers: the
 * driver is told with a warning and the queue is not initialised.
 */
static void vb2_contract_requests_exclude_min_queued(struct kunit *test)
{
	struct vb2t_ctx *ctx = vb2t_ctx_simple(test, OUT);
	struct vb2_queue *q;
	int ret;

	q = kunit_kzalloc(test, sizeof(*q), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, q);
	q->type = OUT;
	q->io_modes = VB2_MMAP;
	q->ops = ctx->q.ops;
	q->mem_ops = ctx->q.mem_ops;
	q->drv_priv = ctx;
	q->timestamp_flags = V4L2_BUF_FLAG_TIMESTAMP_COPY;
	q->supports_requests = 1;
	q->min_queued_buffers = 1;
	vb2t_expect_warning_begin(test);
	ret = vb2_queue_init(q);
	vb2t_expect_warning_end(test);
	KUNIT_EXPECT_EQ(test, ret, -EINVAL);
}

/*
 * R5: a driver without wait_prepare/wait_finish: a blocking DQBUF drops
 * &vb2_queue.lock while it sleeps (the lock is free to other tasks) and
 * holds it again when it returns.
 */
static void vb2_contract_dqbuf_without_wait_ops(struct kunit *test)
{
	struct vb2t_config cfg = { .type = CAP, .no_wait_ops = true };
	struct vb2t_ctx *ctx = vb2t_ctx_create(test, &cfg);
	struct vb2t_waiter *wt;

	reqbufs_n(test, ctx, V4L2_MEMORY_MMAP, 2);
	qbuf_range(test, ctx, 0, 2);
	KUNIT_ASSERT_EQ(test, vb2t_streamon(ctx), 0);
	KUNIT_ASSERT_TRUE_MSG(test, vb2t_start_waiter(test, ctx, &wt),
			      "DQBUF did not sleep with the lock dropped");
	KUNIT_ASSERT_TRUE(test, vb2t_complete_next(ctx, VB2_BUF_STATE_DONE));
	KUNIT_EXPECT_GT(test, wait_for_completion_timeout(&wt->done, 5 * HZ), 0);
	KUNIT_EXPECT_EQ(test, wt->ret, 0);
	KUNIT_EXPECT_EQ(test, wt->index, 0);
	KUNIT_EXPECT_EQ(test, vb2t_count(ctx, VB2T_WAIT_PREPARE), 0);
	KUNIT_EXPECT_FALSE(test, mutex_is_locked(&ctx->mutex));
}

/*
 * R6: a driver that ends a drain by setting last_buffer_dequeued and waking
 * done_wq (coda, amphion) ends a blocking DQBUF too: -EPIPE, as the next
 * DQBUF would get. 6.12 leaves that sleeper asleep until a buffer comes.
 */
static void vb2_contract_last_buffer_wakes_dqbuf(struct kunit *test)
{
	struct vb2t_ctx *ctx = vb2t_ctx_simple(test, CAP);
	struct vb2t_waiter *wt;
	long left;

	reqbufs_n(test, ctx, V4L2_MEMORY_MMAP, 2);
	qbuf_range(test, ctx, 0, 2);
	KUNIT_ASSERT_EQ(test, vb2t_streamon(ctx), 0);
	KUNIT_ASSERT_TRUE_MSG(test, vb2t_start_waiter(test, ctx, &wt),
			      "DQBUF did not sleep");
	/* As the drivers do it, under the queue lock the sleeper dropped. */
	mutex_lock(&ctx->mutex);
	ctx->q.last_buffer_dequeued = 1;
	wake_up(&ctx->q.done_wq);
	mutex_unlock(&ctx->mutex);
	left = wait_for_completion_timeout(&wt->done, 2 * HZ);
	if (!left) {
		/* Not woken: give it a buffer so that it returns at all. */
		vb2t_complete_next(ctx, VB2_BUF_STATE_DONE);
		wait_for_completion(&wt->done);
	}
	KUNIT_EXPECT_GT(test, left, 0);
	KUNIT_EXPECT_EQ(test, wt->ret, -EPIPE);
}

/*
 * R10: vb2_queue_change_type() changes the type and nothing else: the
 * direction, the planarity and the DMA direction stay those the queue was
 * initialised with (the in-tree callers switch between types that share
 * all three).
 */
static void vb2_contract_change_type_only_type(struct kunit *test)
{
	struct vb2t_ctx *ctx = vb2t_ctx_simple(test, CAP);
	struct vb2_queue *q = &ctx->q;

	KUNIT_EXPECT_EQ(test, vb2_queue_change_type(q, OUT), 0);
	KUNIT_EXPECT_EQ(test, q->type, OUT);
	KUNIT_EXPECT_FALSE(test, q->is_output);
	KUNIT_EXPECT_EQ(test, q->dma_dir, DMA_FROM_DEVICE);
	KUNIT_EXPECT_EQ(test, vb2_queue_change_type(q, CAP_MP), 0);
	KUNIT_EXPECT_EQ(test, q->type, CAP_MP);
	KUNIT_EXPECT_FALSE(test, q->is_multiplanar);
	KUNIT_EXPECT_EQ(test, vb2_queue_change_type(q, CAP), 0);
	reqbufs_n(test, ctx, V4L2_MEMORY_MMAP, 1);
}

/*
 * Queue initialisation: a bidirectional queue maps its memory both ways,
 * whatever its type; vb2_queue_init_name() names the queue; a V4L2 queue
 * without buf_struct_size gets buffers of struct vb2_v4l2_buffer.
 */
static void vb2_contract_queue_init_fields(struct kunit *test)
{
	struct vb2t_ctx *ctx = vb2t_ctx_simple(test, CAP);
	struct vb2_queue *q = kunit_kcalloc(test, 2, sizeof(*q), GFP_KERNEL);
	unsigned int i;

	KUNIT_ASSERT_NOT_NULL(test, q);
	for (i = 0; i < 2; i++) {
		q[i].type = i ? OUT : CAP;
		q[i].io_modes = VB2_MMAP;
		q[i].ops = ctx->q.ops;
		q[i].mem_ops = ctx->q.mem_ops;
		q[i].drv_priv = ctx;
		q[i].lock = &ctx->mutex;
		q[i].timestamp_flags = V4L2_BUF_FLAG_TIMESTAMP_MONOTONIC;
	}

	q[0].bidirectional = 1;
	q[0].buf_struct_size = sizeof(struct vb2_v4l2_buffer);
	KUNIT_ASSERT_EQ(test, vb2_queue_init_name(&q[0], "vb2t-both-ways"), 0);
	KUNIT_EXPECT_EQ(test, q[0].dma_dir, DMA_BIDIRECTIONAL);
	KUNIT_EXPECT_STREQ(test, q[0].name, "vb2t-both-ways");

	KUNIT_ASSERT_EQ(test, vb2_queue_init(&q[1]), 0);
	KUNIT_EXPECT_EQ(test, q[1].dma_dir, DMA_TO_DEVICE);
	KUNIT_EXPECT_EQ(test, q[1].buf_struct_size, sizeof(struct vb2_v4l2_buffer));

	vb2_queue_release(&q[0]);
	vb2_queue_release(&q[1]);
}

/* Without buf_prepare/buf_finish a queued buffer is as good as prepared. */
static void no_prepare_observe(struct vb2t_ctx *ctx, enum vb2t_cb cb,
			       struct vb2_buffer *vb)
{
	if (cb == VB2T_BUF_QUEUE)
		ctx->bufs[vb->index].prepared = 1;
	else if (cb == VB2T_BUF_CLEANUP)
		ctx->bufs[vb->index].prepared = 0;
}

/*
 * buf_prepare, buf_finish and stop_streaming are optional: a driver
 * without them streams, and STREAMOFF after it returned every buffer
 * succeeds.
 */
static void vb2_contract_optional_buffer_ops(struct kunit *test)
{
	/* Before the context: freed after the queue release that uses it. */
	struct vb2_ops *const ops = kunit_kzalloc(test, sizeof(*ops), GFP_KERNEL);
	struct vb2t_ctx *ctx;
	unsigned int i;

	KUNIT_ASSERT_NOT_NULL(test, ops);
	ctx = vb2t_ctx_simple(test, CAP);
	*ops = *ctx->q.ops;
	ops->buf_prepare = NULL;
	ops->buf_finish = NULL;
	ops->stop_streaming = NULL;
	ctx->q.ops = ops;
	ctx->observe = no_prepare_observe;

	reqbufs_n(test, ctx, V4L2_MEMORY_MMAP, 2);
	for (i = 0; i < 2; i++)
		KUNIT_ASSERT_EQ(test, vb2t_qbuf_mmap(ctx, i), 0);
	KUNIT_ASSERT_EQ(test, vb2t_streamon(ctx), 0);
	KUNIT_EXPECT_EQ(test, vb2t_owned(ctx), 2);
	vb2t_complete_all(ctx, VB2_BUF_STATE_DONE);
	KUNIT_EXPECT_EQ(test, vb2t_dqbuf_index(ctx, &i, NULL), 0);
	KUNIT_EXPECT_EQ(test, i, 0);
	KUNIT_EXPECT_EQ(test, vb2t_qbuf_mmap(ctx, 0), 0);
	KUNIT_EXPECT_EQ(test, vb2t_owned(ctx), 1);
	vb2t_complete_all(ctx, VB2_BUF_STATE_DONE);
	KUNIT_EXPECT_EQ(test, vb2t_streamoff(ctx), 0);
	KUNIT_EXPECT_FALSE(test, vb2_is_streaming(&ctx->q));
	for (i = 0; i < 2; i++)
		KUNIT_EXPECT_EQ(test, vb2t_state(ctx, i), VB2_BUF_STATE_DEQUEUED);
	KUNIT_EXPECT_EQ(test, vb2t_count(ctx, VB2T_BUF_QUEUE), 3);
	KUNIT_EXPECT_EQ(test, vb2t_count(ctx, VB2T_STOP_STREAMING), 0);
	vb2t_release(ctx);
}

/*
 * REMOVE_BUFS over a range with a removed buffer in it fails with -EINVAL
 * and removes nothing (every buffer in the range must exist).
 */
static void vb2_contract_remove_bufs_over_hole(struct kunit *test)
{
	struct vb2t_ctx *ctx = vb2t_ctx_simple(test, CAP);

	reqbufs_n(test, ctx, V4L2_MEMORY_MMAP, 4);
	KUNIT_ASSERT_EQ(test, vb2t_remove_bufs(ctx, 1, 1), 0);
	KUNIT_EXPECT_EQ(test, vb2t_remove_bufs(ctx, 0, 3), -EINVAL);
	KUNIT_EXPECT_EQ(test, vb2_get_num_buffers(&ctx->q), 3);
	KUNIT_EXPECT_EQ(test, vb2t_state(ctx, 0), VB2_BUF_STATE_DEQUEUED);
	KUNIT_EXPECT_EQ(test, vb2t_state(ctx, 2), VB2_BUF_STATE_DEQUEUED);
	KUNIT_EXPECT_EQ(test, vb2t_remove_bufs(ctx, 2, 2), 0);
	KUNIT_EXPECT_EQ(test, vb2_get_num_buffers(&ctx->q), 1);
}

/*
 * vb2_video_unregister_device() of no device, or of one never registered
 * (a probe that failed before video_register_device()), does nothing: the
 * queue keeps its buffers.
 */
static void vb2_contract_unregister_unregistered(struct kunit *test)
{
	struct vb2t_ctx *ctx = vb2t_ctx_simple(test, CAP);
	struct video_device *vdev = kunit_kzalloc(test, sizeof(*vdev),
						  GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, vdev);
	vdev->queue = &ctx->q;
	reqbufs_n(test, ctx, V4L2_MEMORY_MMAP, 2);
	vb2_video_unregister_device(NULL);
	vb2_video_unregister_device(vdev);
	KUNIT_EXPECT_EQ(test, vb2_get_num_buffers(&ctx->q), 2);
	KUNIT_EXPECT_EQ(test, vb2t_count(ctx, VB2T_BUF_CLEANUP), 0);
}

/*
 * vb2_fop_poll() of a driver whose queue has no lock takes the device's
 * lock; of a device whose files are not struct v4l2_fh it looks at the
 * queue alone. Either way a capture queue that does not stream reports
 * EPOLLERR. (A driver with neither lock must write its own poll(): that
 * warns.)
 */
static void vb2_contract_fop_poll_device_lock(struct kunit *test)
{
	struct vb2t_ctx *ctx = vb2t_ctx_simple(test, CAP);
	struct vb2t_vdev *v = vb2t_vdev_register(ctx);
	__poll_t with_fh, without_fh;
	struct file *f;

	KUNIT_ASSERT_NOT_NULL(test, v);
	f = vb2t_vdev_open(v);
	reqbufs_n(test, ctx, V4L2_MEMORY_MMAP, 2);
	ctx->q.lock = NULL;
	with_fh = f->f_op->poll(f, NULL);
	clear_bit(V4L2_FL_USES_V4L2_FH, &v->vdev.flags);
	without_fh = f->f_op->poll(f, NULL);
	set_bit(V4L2_FL_USES_V4L2_FH, &v->vdev.flags);
	ctx->q.lock = &ctx->mutex;
	KUNIT_EXPECT_EQ(test, (__force u32)with_fh, (__force u32)EPOLLERR);
	KUNIT_EXPECT_EQ(test, (__force u32)without_fh, (__force u32)EPOLLERR);
	KUNIT_EXPECT_FALSE(test, mutex_is_locked(&ctx->mutex));
	KUNIT_EXPECT_EQ(test, vb2_get_num_buffers(&ctx->q), 2);
}

/*
 * vb2_plane_vaddr() and vb2_plane_cookie() are NULL for a plane the buffer
 * does not have, for a USERPTR plane before it is queued (no memory yet),
 * and with an allocator that lacks the op.
 */
static void vb2_contract_plane_addr_none(struct kunit *test)
{
	struct vb2t_ctx *ctx = vb2t_ctx_simple(test, CAP);
	void *(*vaddr)(struct vb2_buffer *vb, void *buf_priv);
	void *(*cookie)(struct vb2_buffer *vb, void *buf_priv);
	struct vb2_buffer *vb;
	unsigned int count = 1;

	reqbufs_n(test, ctx, V4L2_MEMORY_MMAP, 1);
	vb = vb2_get_buffer(&ctx->q, 0);
	KUNIT_ASSERT_NOT_NULL(test, vb);
	KUNIT_EXPECT_NOT_NULL(test, vb2_plane_vaddr(vb, 0));
	KUNIT_EXPECT_NULL(test, vb2_plane_vaddr(vb, 1));
	KUNIT_EXPECT_NULL(test, vb2_plane_cookie(vb, 1));
	KUNIT_EXPECT_NULL(test, vb2_plane_vaddr(vb, VB2_MAX_PLANES));

	vaddr = ctx->mem_ops.vaddr;
	cookie = ctx->mem_ops.cookie;
	ctx->mem_ops.vaddr = NULL;
	ctx->mem_ops.cookie = NULL;
	KUNIT_EXPECT_NULL(test, vb2_plane_vaddr(vb, 0));
	KUNIT_EXPECT_NULL(test, vb2_plane_cookie(vb, 0));
	ctx->mem_ops.vaddr = vaddr;
	ctx->mem_ops.cookie = cookie;

	KUNIT_ASSERT_EQ(test, vb2t_reqbufs(ctx, V4L2_MEMORY_USERPTR, &count), 0);
	vb = vb2_get_buffer(&ctx->q, 0);
	KUNIT_ASSERT_NOT_NULL(test, vb);
	KUNIT_EXPECT_NULL(test, vb2_plane_vaddr(vb, 0));
	KUNIT_EXPECT_NULL(test, vb2_plane_cookie(vb, 0));
}

static struct kunit_case vb2_contract_cases[] = {
	KUNIT_CASE(vb2_contract_streaming_in_buf_queue),
	KUNIT_CASE(vb2_contract_streaming_deferred_start),
	KUNIT_CASE(vb2_contract_streaming_on_stop),
	KUNIT_CASE(vb2_contract_start_fails_in_streamon),
	KUNIT_CASE(vb2_contract_start_fails_in_qbuf),
	KUNIT_CASE(vb2_contract_streamon_retry_skips_done),
	KUNIT_CASE(vb2_contract_memory_in_queue_setup),
	KUNIT_CASE(vb2_contract_coherency_in_queue_setup),
	KUNIT_CASE(vb2_contract_reask_after_short_allocation),
	KUNIT_CASE(vb2_contract_reask_beyond_room),
	KUNIT_CASE(vb2_contract_create_none_agreed),
	KUNIT_CASE_PARAM(vb2_contract_dmabuf_dequeued_keeps_mapping,
			 vb2t_alloc_gen_params),
	KUNIT_CASE(vb2_contract_dequeued_keeps_memory),
	KUNIT_CASE(vb2_contract_dmabuf_shared_by_device),
	KUNIT_CASE(vb2_contract_reference_mmap),
	KUNIT_CASE(vb2_contract_reference_userptr),
	KUNIT_CASE(vb2_contract_reference_dmabuf),
	KUNIT_CASE(vb2_contract_dmabuf_output_length_zero),
	KUNIT_CASE(vb2_contract_dmabuf_payload_fits_import),
	KUNIT_CASE_PARAM(vb2_contract_dmabuf_import_errors,
			 vb2t_alloc_gen_params),
	KUNIT_CASE_PARAM(vb2_contract_userptr_unpinnable,
			 vb2t_alloc_gen_params),
	KUNIT_CASE(vb2_contract_userptr_contig_vaddr),
	KUNIT_CASE(vb2_contract_dmabuf_skips_cache_sync),
	KUNIT_CASE(vb2_contract_prepare_fails_mmap),
	KUNIT_CASE(vb2_contract_prepare_fails_userptr),
	KUNIT_CASE(vb2_contract_prepare_fails_dmabuf),
	KUNIT_CASE(vb2_contract_out_validate_fails),
	KUNIT_CASE(vb2_contract_failed_request_no_finish),
	KUNIT_CASE(vb2_contract_remove_prepared_no_finish),
	KUNIT_CASE(vb2_contract_out_validate_state),
	KUNIT_CASE(vb2_contract_states_in_callbacks),
	KUNIT_CASE(vb2_contract_request_in_buf_queue),
	KUNIT_CASE(vb2_contract_request_completed_once),
	KUNIT_CASE(vb2_contract_stop_keeps_buffers),
	KUNIT_CASE(vb2_contract_completion_order),
	KUNIT_CASE(vb2_contract_buffer_visible_in_init_cleanup),
	KUNIT_CASE(vb2_contract_fileio_buffer_count),
	KUNIT_CASE(vb2_contract_fileio_at_most_max_frame),
	KUNIT_CASE(vb2_contract_write_sets_payload),
	KUNIT_CASE(vb2_contract_fileio_empty_buffer),
	KUNIT_CASE(vb2_contract_fileio_data_offset),
	KUNIT_CASE(vb2_contract_fileio_data_offset_mplane),
	KUNIT_CASE(vb2_contract_thread_gets_every_buffer),
	KUNIT_CASE(vb2_contract_free_under_dqbuf_waiter),
	KUNIT_CASE(vb2_contract_create_under_dqbuf_waiter),
	KUNIT_CASE(vb2_contract_dqbuf_busy_while_one_sleeps),
	KUNIT_CASE(vb2_contract_remove_nothing_any_file),
	KUNIT_CASE(vb2_contract_memory_reset_when_empty),
	KUNIT_CASE(vb2_contract_reqbufs0_after_remove_all),
	KUNIT_CASE(vb2_contract_requests_exclude_min_queued),
	KUNIT_CASE(vb2_contract_dqbuf_without_wait_ops),
	KUNIT_CASE(vb2_contract_last_buffer_wakes_dqbuf),
	KUNIT_CASE(vb2_contract_change_type_only_type),
	KUNIT_CASE(vb2_contract_queue_init_fields),
	KUNIT_CASE(vb2_contract_optional_buffer_ops),
	KUNIT_CASE(vb2_contract_remove_bufs_over_hole),
	KUNIT_CASE(vb2_contract_unregister_unregistered),
	KUNIT_CASE(vb2_contract_fop_poll_device_lock),
	KUNIT_CASE(vb2_contract_plane_addr_none),
	{}
};

static struct kunit_suite vb2_contract_suite = {
	.name = "videobuf2-contract",
	.test_cases = vb2_contract_cases,
};

kunit_test_suite(vb2_contract_suite);
