// SPDX-License-Identifier: GPL-2.0
/*
 * Test doubles for the videobuf2 KUnit suites.
 *
 * The fake driver keeps what it knows of each buffer index (initialised,
 * prepared, owned) and flags every call that breaks the contract of
 * &struct vb2_ops: buf_prepare without buf_init, buf_finish without
 * buf_prepare, buf_cleanup of a buffer it still holds, start_streaming with
 * the wrong count, and so on. The fake allocator either owns memory itself
 * (vmalloc_user() memory, reference counted so that the test sees when
 * memory is really freed) or sits in front of a real allocator and only
 * counts and fails. Both record every call in one log, in order.
 */

#include <kunit/device.h>
#include <kunit/resource.h>
#include <linux/anon_inodes.h>
#include <linux/delay.h>
#include <linux/dma-buf.h>
#include <linux/dma-mapping.h>
#include <linux/err.h>
#include <linux/fdtable.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/kthread.h>
#include <linux/mm.h>
#include <linux/mman.h>
#include <linux/refcount.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/vmalloc.h>

#include <media/v4l2-device.h>
#include <media/v4l2-fh.h>
#include <media/v4l2-ioctl.h>
#include <media/videobuf2-core.h>
#include <media/videobuf2-dma-contig.h>
#include <media/videobuf2-dma-sg.h>
#include <media/videobuf2-v4l2.h>
#include <media/videobuf2-vmalloc.h>

#include "vb2-test-helpers.h"

static const char *const vb2t_cb_names[VB2T_NR_CB] = {
	[VB2T_QUEUE_SETUP]		= "queue_setup",
	[VB2T_WAIT_PREPARE]		= "wait_prepare",
	[VB2T_WAIT_FINISH]		= "wait_finish",
	[VB2T_BUF_OUT_VALIDATE]		= "buf_out_validate",
	[VB2T_BUF_INIT]			= "buf_init",
	[VB2T_BUF_PREPARE]		= "buf_prepare",
	[VB2T_BUF_FINISH]		= "buf_finish",
	[VB2T_BUF_CLEANUP]		= "buf_cleanup",
	[VB2T_PREPARE_STREAMING]	= "prepare_streaming",
	[VB2T_START_STREAMING]		= "start_streaming",
	[VB2T_STOP_STREAMING]		= "stop_streaming",
	[VB2T_UNPREPARE_STREAMING]	= "unprepare_streaming",
	[VB2T_BUF_QUEUE]		= "buf_queue",
	[VB2T_BUF_REQUEST_COMPLETE]	= "buf_request_complete",
	[VB2T_ALLOC]			= "alloc",
	[VB2T_PUT]			= "put",
	[VB2T_FREE]			= "free",
	[VB2T_GET_DMABUF]		= "get_dmabuf",
	[VB2T_GET_USERPTR]		= "get_userptr",
	[VB2T_PUT_USERPTR]		= "put_userptr",
	[VB2T_PREPARE]			= "prepare",
	[VB2T_FINISH]			= "finish",
	[VB2T_ATTACH_DMABUF]		= "attach_dmabuf",
	[VB2T_DETACH_DMABUF]		= "detach_dmabuf",
	[VB2T_MAP_DMABUF]		= "map_dmabuf",
	[VB2T_UNMAP_DMABUF]		= "unmap_dmabuf",
	[VB2T_VADDR]			= "vaddr",
	[VB2T_COOKIE]			= "cookie",
	[VB2T_NUM_USERS]		= "num_users",
	[VB2T_MMAP]			= "mmap",
};

/* Recording, failure injection and contract violations */

/*
 * Count and log a call; returns true (with *err set) if the call must
 * fail. Any context.
 */
static bool vb2t_enter(struct vb2t_ctx *ctx, enum vb2t_cb cb, int index,
		       int *err)
{
	struct vb2t_fail *f = &ctx->fail[cb];
	unsigned long flags;
	bool fail = false;
	unsigned int n;

	spin_lock_irqsave(&ctx->lock, flags);
	n = ++ctx->count[cb];
	if (f->at && (n == f->at || (f->sticky && n > f->at))) {
		fail = true;
		if (err)
			*err = f->err;
	}
	if (ctx->log_mask & BIT_ULL(cb)) {
		if (ctx->log_len < VB2T_LOG_SIZE) {
			ctx->log[ctx->log_len].cb = cb;
			ctx->log[ctx->log_len].index = index;
			ctx->log_len++;
		} else {
			ctx->log_overflow = true;
		}
	}
	spin_unlock_irqrestore(&ctx->lock, flags);
	return fail;
}

static __printf(2, 3)
void vb2t_violation(struct vb2t_ctx *ctx, const char *fmt, ...)
{
	unsigned long flags;
	va_list args;

	spin_lock_irqsave(&ctx->lock, flags);
	if (!ctx->violations++) {
		va_start(args, fmt);
		vsnprintf(ctx->first_violation, sizeof(ctx->first_violation),
			  fmt, args);
		va_end(args);
	}
	spin_unlock_irqrestore(&ctx->lock, flags);
}

/**
 * vb2t_fail() - make the nth next call of a callback fail
 * @ctx:	the context.
 * @cb:		the callback.
 * @nth:	1 for the next call, 2 for the one after, ...
 * @err:	the error the callback returns.
 */
void vb2t_fail(struct vb2t_ctx *ctx, enum vb2t_cb cb, unsigned int nth,
	       int err)
{
	unsigned long flags;

	spin_lock_irqsave(&ctx->lock, flags);
	ctx->fail[cb].at = ctx->count[cb] + nth;
	ctx->fail[cb].sticky = false;
	ctx->fail[cb].err = err;
	spin_unlock_irqrestore(&ctx->lock, flags);
}

/**
 * vb2t_fail_from() - make the nth next call of a callback and all later
 *	ones fail
 * @ctx:	the context.
 * @cb:		the callback.
 * @nth:	1 for the next call, 2 for the one after, ...
 * @err:	the error the callback returns.
 */
void vb2t_fail_from(struct vb2t_ctx *ctx, enum vb2t_cb cb, unsigned int nth,
		    int err)
{
	vb2t_fail(ctx, cb, nth, err);
	ctx->fail[cb].sticky = true;
}

/**
 * vb2t_fail_clear() - stop all failure injection
 * @ctx:	the context.
 */
void vb2t_fail_clear(struct vb2t_ctx *ctx)
{
	unsigned long flags;

	spin_lock_irqsave(&ctx->lock, flags);
	memset(ctx->fail, 0, sizeof(ctx->fail));
	spin_unlock_irqrestore(&ctx->lock, flags);
}

/**
 * vb2t_count() - how often a callback was called
 * @ctx:	the context.
 * @cb:		the callback.
 *
 * Return: the number of calls, failed ones included.
 */
unsigned int vb2t_count(struct vb2t_ctx *ctx, enum vb2t_cb cb)
{
	unsigned long flags;
	unsigned int n;

	spin_lock_irqsave(&ctx->lock, flags);
	n = ctx->count[cb];
	spin_unlock_irqrestore(&ctx->lock, flags);
	return n;
}

/**
 * vb2t_log_reset() - empty the log
 * @ctx:	the context.
 */
void vb2t_log_reset(struct vb2t_ctx *ctx)
{
	unsigned long flags;

	spin_lock_irqsave(&ctx->lock, flags);
	ctx->log_len = 0;
	ctx->log_overflow = false;
	spin_unlock_irqrestore(&ctx->lock, flags);
}

#define VB2T_LOG_ALL	(-2)

/* Render the log; @which selects a buffer index, -1 queue-wide, or all. */
static const char *vb2t_log_render(struct vb2t_ctx *ctx, int which)
{
	const size_t size = VB2T_LOG_SIZE * 32;
	unsigned long flags;
	size_t len = 0;
	unsigned int i;
	char *s;

	s = kunit_kzalloc(ctx->test, size, GFP_KERNEL);
	if (!s)
		return "(no memory)";
	spin_lock_irqsave(&ctx->lock, flags);
	for (i = 0; i < ctx->log_len && len < size; i++) {
		const struct vb2t_event *e = &ctx->log[i];

		if (which != VB2T_LOG_ALL && e->index != which)
			continue;
		len += scnprintf(s + len, size - len, "%s%s", len ? " " : "",
				 vb2t_cb_names[e->cb]);
		if (which == VB2T_LOG_ALL && e->index >= 0)
			len += scnprintf(s + len, size - len, "(%d)", e->index);
	}
	if (ctx->log_overflow)
		scnprintf(s + len, size - len, " ...");
	spin_unlock_irqrestore(&ctx->lock, flags);
	return s;
}

/**
 * vb2t_log_str() - the log as text
 * @ctx:	the context.
 *
 * Return: the logged callbacks separated by spaces, buffer callbacks
 * followed by the index in parentheses, e.g. "queue_setup alloc(0)"; the
 * string belongs to the test.
 */
const char *vb2t_log_str(struct vb2t_ctx *ctx)
{
	return vb2t_log_render(ctx, VB2T_LOG_ALL);
}

/**
 * vb2t_log_of() - the part of the log about one buffer, or the queue
 * @ctx:	the context.
 * @index:	a buffer index, or -1 for the callbacks about the whole queue.
 *
 * Return: the callback names separated by spaces, without indices.
 */
const char *vb2t_log_of(struct vb2t_ctx *ctx, int index)
{
	return vb2t_log_render(ctx, index);
}

/* The fake driver */

static struct vb2t_ctx *vb2t_ctx_of(struct vb2_queue *q)
{
	return vb2_get_drv_priv(q);
}

static struct vb2t_bufstate *vb2t_bs(struct vb2t_ctx *ctx,
				     struct vb2_buffer *vb)
{
	static struct vb2t_bufstate nowhere;

	if (vb->index >= VB2T_MAX_BUFS) {
		vb2t_violation(ctx, "buffer index %u out of range", vb->index);
		return &nowhere;
	}
	return &ctx->bufs[vb->index];
}

static struct vb2t_buffer *vb2t_buf(struct vb2_buffer *vb)
{
	return container_of(to_vb2_v4l2_buffer(vb), struct vb2t_buffer, vb);
}

static void vb2t_observe(struct vb2t_ctx *ctx, enum vb2t_cb cb,
			 struct vb2_buffer *vb)
{
	if (ctx->observe)
		ctx->observe(ctx, cb, vb);
}

static int vb2t_queue_setup(struct vb2_queue *q, unsigned int *num_buffers,
			    unsigned int *num_planes, unsigned int sizes[],
			    struct device *alloc_devs[])
{
	struct vb2t_ctx *ctx = vb2t_ctx_of(q);
	unsigned int i;
	int err;

	ctx->setup_planes_in = *num_planes;
	ctx->setup_buffers_in = *num_buffers;
	vb2t_observe(ctx, VB2T_QUEUE_SETUP, NULL);
	if (vb2t_enter(ctx, VB2T_QUEUE_SETUP, -1, &err))
		return err;
	if (vb2_is_streaming(q) && !vb2_get_num_buffers(q))
		vb2t_violation(ctx, "queue_setup while streaming without buffers");

	if (*num_planes) {
		/* CREATE_BUFS: check what user space asked for. */
		if (*num_planes != ctx->num_planes)
			return -EINVAL;
		for (i = 0; i < *num_planes; i++)
			if (sizes[i] < ctx->sizes[i])
				return -EINVAL;
		if (ctx->agree_none)
			*num_buffers = 0;
	} else {
		*num_planes = ctx->num_planes;
		for (i = 0; i < ctx->num_planes; i++)
			sizes[i] = ctx->sizes[i];
		if (ctx->max_buffers && *num_buffers > ctx->max_buffers)
			*num_buffers = ctx->max_buffers;
	}
	*num_buffers = max(*num_buffers, ctx->raise_buffers);
	for (i = 0; i < *num_planes; i++)
		alloc_devs[i] = ctx->plane_dev[i] ? : ctx->dev;
	return 0;
}

static void vb2t_wait_prepare(struct vb2_queue *q)
{
	vb2t_enter(vb2t_ctx_of(q), VB2T_WAIT_PREPARE, -1, NULL);
	mutex_unlock(q->lock);
}

static void vb2t_wait_finish(struct vb2_queue *q)
{
	mutex_lock(q->lock);
	vb2t_enter(vb2t_ctx_of(q), VB2T_WAIT_FINISH, -1, NULL);
}

static int vb2t_buf_out_validate(struct vb2_buffer *vb)
{
	int err;

	vb2t_observe(vb2t_ctx_of(vb->vb2_queue), VB2T_BUF_OUT_VALIDATE, vb);
	if (vb2t_enter(vb2t_ctx_of(vb->vb2_queue), VB2T_BUF_OUT_VALIDATE,
		       vb->index, &err))
		return err;
	return 0;
}

static int vb2t_buf_init(struct vb2_buffer *vb)
{
	struct vb2t_ctx *ctx = vb2t_ctx_of(vb->vb2_queue);
	struct vb2t_bufstate *bs = vb2t_bs(ctx, vb);
	int err;

	vb2t_observe(ctx, VB2T_BUF_INIT, vb);
	if (vb2t_enter(ctx, VB2T_BUF_INIT, vb->index, &err))
		return err;
	if (bs->inited)
		vb2t_violation(ctx, "buf_init(%u) twice without buf_cleanup",
			       vb->index);
	bs->inited = 1;
	return 0;
}

static int vb2t_buf_prepare(struct vb2_buffer *vb)
{
	struct vb2t_ctx *ctx = vb2t_ctx_of(vb->vb2_queue);
	struct vb2t_bufstate *bs = vb2t_bs(ctx, vb);
	int err;

	vb2t_observe(ctx, VB2T_BUF_PREPARE, vb);
	if (vb2t_enter(ctx, VB2T_BUF_PREPARE, vb->index, &err))
		return err;
	if (!bs->inited)
		vb2t_violation(ctx, "buf_prepare(%u) before buf_init", vb->index);
	if (bs->prepared)
		vb2t_violation(ctx, "buf_prepare(%u) twice without buf_finish",
			       vb->index);
	if (vb->state != VB2_BUF_STATE_PREPARING)
		vb2t_violation(ctx, "buf_prepare(%u) in state %d", vb->index,
			       vb->state);
	bs->prepared = 1;
	return 0;
}

static void vb2t_buf_finish(struct vb2_buffer *vb)
{
	struct vb2t_ctx *ctx = vb2t_ctx_of(vb->vb2_queue);
	struct vb2t_bufstate *bs = vb2t_bs(ctx, vb);

	vb2t_observe(ctx, VB2T_BUF_FINISH, vb);
	vb2t_enter(ctx, VB2T_BUF_FINISH, vb->index, NULL);
	if (!bs->prepared)
		vb2t_violation(ctx, "buf_finish(%u) without buf_prepare",
			       vb->index);
	if (bs->owned)
		vb2t_violation(ctx, "buf_finish(%u) while the driver owns it",
			       vb->index);
	bs->prepared = 0;
}

static void vb2t_buf_cleanup(struct vb2_buffer *vb)
{
	struct vb2t_ctx *ctx = vb2t_ctx_of(vb->vb2_queue);
	struct vb2t_bufstate *bs = vb2t_bs(ctx, vb);

	vb2t_observe(ctx, VB2T_BUF_CLEANUP, vb);
	vb2t_enter(ctx, VB2T_BUF_CLEANUP, vb->index, NULL);
	if (!bs->inited)
		vb2t_violation(ctx, "buf_cleanup(%u) without buf_init",
			       vb->index);
	if (bs->prepared && !ctx->removing)
		vb2t_violation(ctx, "buf_cleanup(%u) of a prepared buffer",
			       vb->index);
	if (bs->owned)
		vb2t_violation(ctx, "buf_cleanup(%u) while the driver owns it",
			       vb->index);
	bs->inited = 0;
	bs->prepared = 0;
}

static int vb2t_prepare_streaming(struct vb2_queue *q)
{
	int err;

	vb2t_observe(vb2t_ctx_of(q), VB2T_PREPARE_STREAMING, NULL);
	if (vb2t_enter(vb2t_ctx_of(q), VB2T_PREPARE_STREAMING, -1, &err))
		return err;
	return 0;
}

/* Take the first buffer the driver holds off its list, or NULL. */
static struct vb2_buffer *vb2t_take(struct vb2t_ctx *ctx, int index)
{
	struct vb2t_buffer *buf, *found = NULL;
	unsigned long flags;

	spin_lock_irqsave(&ctx->lock, flags);
	list_for_each_entry(buf, &ctx->active, list) {
		if (index < 0 || buf->vb.vb2_buf.index == index) {
			found = buf;
			break;
		}
	}
	if (found) {
		list_del_init(&found->list);
		ctx->bufs[found->vb.vb2_buf.index].owned = 0;
	}
	spin_unlock_irqrestore(&ctx->lock, flags);
	return found ? &found->vb.vb2_buf : NULL;
}

/**
 * vb2t_peek() - the oldest buffer the fake driver holds
 * @ctx:	the context.
 *
 * Return: the buffer, still owned by the driver, or NULL.
 */
struct vb2_buffer *vb2t_peek(struct vb2t_ctx *ctx)
{
	struct vb2t_buffer *buf;
	unsigned long flags;

	spin_lock_irqsave(&ctx->lock, flags);
	buf = list_first_entry_or_null(&ctx->active, struct vb2t_buffer, list);
	spin_unlock_irqrestore(&ctx->lock, flags);
	return buf ? &buf->vb.vb2_buf : NULL;
}

/**
 * vb2t_owned() - number of buffers the fake driver holds
 * @ctx:	the context.
 *
 * Return: the buffers given by buf_queue and not yet returned.
 */
unsigned int vb2t_owned(struct vb2t_ctx *ctx)
{
	unsigned long flags;
	size_t n;

	spin_lock_irqsave(&ctx->lock, flags);
	n = list_count_nodes(&ctx->active);
	spin_unlock_irqrestore(&ctx->lock, flags);
	return n;
}

/**
 * vb2t_complete_next() - return the oldest buffer the driver holds
 * @ctx:	the context.
 * @state:	%VB2_BUF_STATE_DONE, %VB2_BUF_STATE_ERROR or
 *		%VB2_BUF_STATE_QUEUED.
 *
 * Any context.
 *
 * Return: false if the driver held no buffer.
 */
bool vb2t_complete_next(struct vb2t_ctx *ctx, enum vb2_buffer_state state)
{
	struct vb2_buffer *vb = vb2t_take(ctx, -1);

	if (vb)
		vb2_buffer_done(vb, state);
	return vb;
}

/**
 * vb2t_complete_index() - return a given buffer the driver holds
 * @ctx:	the context.
 * @index:	the buffer index.
 * @state:	as for vb2t_complete_next().
 *
 * Return: false if the driver did not hold that buffer.
 */
bool vb2t_complete_index(struct vb2t_ctx *ctx, unsigned int index,
			 enum vb2_buffer_state state)
{
	struct vb2_buffer *vb = vb2t_take(ctx, index);

	if (vb)
		vb2_buffer_done(vb, state);
	return vb;
}

/**
 * vb2t_complete_all() - return every buffer the driver holds
 * @ctx:	the context.
 * @state:	as for vb2t_complete_next().
 */
void vb2t_complete_all(struct vb2t_ctx *ctx, enum vb2_buffer_state state)
{
	while (vb2t_complete_next(ctx, state))
		;
}

static int vb2t_start_streaming(struct vb2_queue *q, unsigned int count)
{
	struct vb2t_ctx *ctx = vb2t_ctx_of(q);
	unsigned int owned = vb2t_owned(ctx);
	int err;

	vb2t_observe(ctx, VB2T_START_STREAMING, NULL);
	ctx->start_count = count;
	if (count != owned)
		vb2t_violation(ctx, "start_streaming(%u) but the driver holds %u",
			       count, owned);
	if (!vb2_start_streaming_called(q))
		vb2t_violation(ctx, "start_streaming before start_streaming_called");
	if (vb2t_enter(ctx, VB2T_START_STREAMING, -1, &err)) {
		if (ctx->start_returns_queued)
			vb2t_complete_all(ctx, VB2_BUF_STATE_QUEUED);
		else	/* A buggy driver: it forgets them. */
			while (vb2t_take(ctx, -1))
				;
		return err;
	}
	return 0;
}

static void vb2t_stop_streaming(struct vb2_queue *q)
{
	struct vb2t_ctx *ctx = vb2t_ctx_of(q);

	vb2t_observe(ctx, VB2T_STOP_STREAMING, NULL);
	vb2t_enter(ctx, VB2T_STOP_STREAMING, -1, NULL);
	if (!ctx->keep_on_stop) {
		vb2t_complete_all(ctx, VB2_BUF_STATE_ERROR);
		return;
	}
	/* A buggy driver: it forgets its buffers instead of returning them. */
	while (vb2t_take(ctx, -1))
		;
}

static void vb2t_unprepare_streaming(struct vb2_queue *q)
{
	vb2t_observe(vb2t_ctx_of(q), VB2T_UNPREPARE_STREAMING, NULL);
	vb2t_enter(vb2t_ctx_of(q), VB2T_UNPREPARE_STREAMING, -1, NULL);
}

static void vb2t_buf_queue(struct vb2_buffer *vb)
{
	struct vb2t_ctx *ctx = vb2t_ctx_of(vb->vb2_queue);
	struct vb2t_bufstate *bs = vb2t_bs(ctx, vb);
	struct vb2t_buffer *buf = vb2t_buf(vb);
	unsigned long flags;

	vb2t_observe(ctx, VB2T_BUF_QUEUE, vb);
	vb2t_enter(ctx, VB2T_BUF_QUEUE, vb->index, NULL);
	if (vb->state != VB2_BUF_STATE_ACTIVE)
		vb2t_violation(ctx, "buf_queue(%u) in state %d", vb->index,
			       vb->state);
	if (!bs->prepared)
		vb2t_violation(ctx, "buf_queue(%u) of an unprepared buffer",
			       vb->index);
	if (bs->owned) {
		vb2t_violation(ctx, "buf_queue(%u) twice", vb->index);
		return;
	}
	spin_lock_irqsave(&ctx->lock, flags);
	bs->owned = 1;
	list_add_tail(&buf->list, &ctx->active);
	spin_unlock_irqrestore(&ctx->lock, flags);

	if (ctx->complete_in_queue)
		vb2t_complete_index(ctx, vb->index, ctx->complete_in_queue);
}

static void vb2t_buf_request_complete(struct vb2_buffer *vb)
{
	vb2t_observe(vb2t_ctx_of(vb->vb2_queue), VB2T_BUF_REQUEST_COMPLETE, vb);
	vb2t_enter(vb2t_ctx_of(vb->vb2_queue), VB2T_BUF_REQUEST_COMPLETE,
		   vb->index, NULL);
}

/* The callbacks of the fake driver, but for the two around sleeping. */
#define VB2T_DRIVER_OPS							\
	.queue_setup		= vb2t_queue_setup,			\
	.buf_out_validate	= vb2t_buf_out_validate,		\
	.buf_init		= vb2t_buf_init,			\
	.buf_prepare		= vb2t_buf_prepare,			\
	.buf_finish		= vb2t_buf_finish,			\
	.buf_cleanup		= vb2t_buf_cleanup,			\
	.prepare_streaming	= vb2t_prepare_streaming,		\
	.start_streaming	= vb2t_start_streaming,			\
	.stop_streaming		= vb2t_stop_streaming,			\
	.unprepare_streaming	= vb2t_unprepare_streaming,		\
	.buf_queue		= vb2t_buf_queue,			\
	.buf_request_complete	= vb2t_buf_request_complete

static const struct vb2_ops vb2t_ops = {
	VB2T_DRIVER_OPS,
	.wait_prepare		= vb2t_wait_prepare,
	.wait_finish		= vb2t_wait_finish,
};

/* A driver that lets the core drop &vb2_queue.lock around sleeping. */
static const struct vb2_ops vb2t_ops_no_wait = {
	VB2T_DRIVER_OPS,
};

/* The fake allocator */

/**
 * struct vb2t_mem - one plane's memory as the fake allocator sees it
 * @ctx:	the context.
 * @priv:	the backend's cookie, NULL without a backend.
 * @vaddr:	own memory (no backend, MMAP).
 * @size:	its size.
 * @refs:	own memory: the queue's reference plus one per mapping.
 * @dbuf:	the attached dma-buf (no backend, DMABUF).
 * @index:	index of the buffer, for the log.
 * @synced:	prepare was called and finish has not been since.
 * @mapped:	map_dmabuf was called and unmap_dmabuf has not been since.
 */
struct vb2t_mem {
	struct vb2t_ctx		*ctx;
	void			*priv;
	void			*vaddr;
	unsigned long		size;
	refcount_t		refs;
	struct dma_buf		*dbuf;
	int			index;
	bool			synced;
	bool			mapped;
};

static void vb2t_live(struct vb2t_ctx *ctx, int delta)
{
	unsigned long flags;

	spin_lock_irqsave(&ctx->lock, flags);
	ctx->live_mem += delta;
	spin_unlock_irqrestore(&ctx->lock, flags);
}

static struct vb2t_mem *vb2t_mem_new(struct vb2_buffer *vb)
{
	struct vb2t_mem *m = kzalloc(sizeof(*m), GFP_KERNEL);

	if (!m)
		return NULL;
	m->ctx = vb2t_ctx_of(vb->vb2_queue);
	m->index = vb->index;
	refcount_set(&m->refs, 1);
	return m;
}

static void vb2t_mem_free(struct vb2t_mem *m)
{
	/* Only the fake's own memory has a lifetime worth logging. */
	if (m->vaddr)
		vb2t_enter(m->ctx, VB2T_FREE, m->index, NULL);
	vb2t_live(m->ctx, -1);
	vfree(m->vaddr);
	kfree(m);
}

static void vb2t_mem_unref(struct vb2t_mem *m)
{
	if (refcount_dec_and_test(&m->refs))
		vb2t_mem_free(m);
}

static void *vb2t_alloc(struct vb2_buffer *vb, struct device *dev,
			unsigned long size)
{
	struct vb2t_ctx *ctx = vb2t_ctx_of(vb->vb2_queue);
	struct vb2t_mem *m;
	int err;

	if (vb2t_enter(ctx, VB2T_ALLOC, vb->index, &err))
		return ERR_PTR(err);
	m = vb2t_mem_new(vb);
	if (!m)
		return ERR_PTR(-ENOMEM);
	m->size = size;
	if (ctx->backend) {
		m->priv = ctx->backend->alloc(vb, dev, size);
		if (IS_ERR_OR_NULL(m->priv)) {
			void *ret = m->priv ? m->priv : ERR_PTR(-ENOMEM);

			kfree(m);
			return ret;
		}
	} else {
		m->vaddr = vmalloc_user(size);
		if (!m->vaddr) {
			kfree(m);
			return ERR_PTR(-ENOMEM);
		}
	}
	vb2t_live(ctx, 1);
	return m;
}

static void vb2t_put(void *buf_priv)
{
	struct vb2t_mem *m = buf_priv;

	vb2t_enter(m->ctx, VB2T_PUT, m->index, NULL);
	if (m->ctx->backend) {
		m->ctx->backend->put(m->priv);
		vb2t_mem_free(m);
		return;
	}
	vb2t_mem_unref(m);
}

static struct dma_buf *vb2t_get_dmabuf(struct vb2_buffer *vb, void *buf_priv,
				       unsigned long flags)
{
	struct vb2t_mem *m = buf_priv;
	int err;

	if (vb2t_enter(m->ctx, VB2T_GET_DMABUF, m->index, &err))
		return ERR_PTR(err);
	return m->ctx->backend->get_dmabuf(vb, m->priv, flags);
}

static void *vb2t_get_userptr(struct vb2_buffer *vb, struct device *dev,
			      unsigned long vaddr, unsigned long size)
{
	struct vb2t_ctx *ctx = vb2t_ctx_of(vb->vb2_queue);
	struct vb2t_mem *m;
	int err;

	if (vb2t_enter(ctx, VB2T_GET_USERPTR, vb->index, &err))
		return ERR_PTR(err);
	m = vb2t_mem_new(vb);
	if (!m)
		return ERR_PTR(-ENOMEM);
	m->size = size;
	if (ctx->backend) {
		m->priv = ctx->backend->get_userptr(vb, dev, vaddr, size);
		if (IS_ERR_OR_NULL(m->priv)) {
			void *ret = m->priv ? m->priv : ERR_PTR(-EFAULT);

			kfree(m);
			return ret;
		}
	}
	vb2t_live(ctx, 1);
	return m;
}

static void vb2t_put_userptr(void *buf_priv)
{
	struct vb2t_mem *m = buf_priv;

	vb2t_enter(m->ctx, VB2T_PUT_USERPTR, m->index, NULL);
	if (m->synced)
		vb2t_violation(m->ctx, "put_userptr(%d) while synced for the device",
			       m->index);
	if (m->ctx->backend)
		m->ctx->backend->put_userptr(m->priv);
	vb2t_mem_free(m);
}

static void vb2t_prepare(void *buf_priv)
{
	struct vb2t_mem *m = buf_priv;

	vb2t_enter(m->ctx, VB2T_PREPARE, m->index, NULL);
	if (m->synced)
		vb2t_violation(m->ctx, "prepare(%d) twice without finish",
			       m->index);
	m->synced = true;
	if (m->ctx->backend && m->ctx->backend->prepare)
		m->ctx->backend->prepare(m->priv);
}

static void vb2t_finish(void *buf_priv)
{
	struct vb2t_mem *m = buf_priv;

	vb2t_enter(m->ctx, VB2T_FINISH, m->index, NULL);
	if (!m->synced)
		vb2t_violation(m->ctx, "finish(%d) without prepare", m->index);
	m->synced = false;
	if (m->ctx->backend && m->ctx->backend->finish)
		m->ctx->backend->finish(m->priv);
}

static void *vb2t_attach_dmabuf(struct vb2_buffer *vb, struct device *dev,
				struct dma_buf *dbuf, unsigned long size)
{
	struct vb2t_ctx *ctx = vb2t_ctx_of(vb->vb2_queue);
	struct vb2t_mem *m;
	int err;

	if (vb2t_enter(ctx, VB2T_ATTACH_DMABUF, vb->index, &err))
		return ERR_PTR(err);
	/* What every allocator of 6.12 says to more than the dma-buf holds. */
	if (dbuf->size < size)
		return ERR_PTR(-EFAULT);
	m = vb2t_mem_new(vb);
	if (!m)
		return ERR_PTR(-ENOMEM);
	m->size = size;
	m->dbuf = dbuf;
	if (ctx->backend) {
		m->priv = ctx->backend->attach_dmabuf(vb, dev, dbuf, size);
		if (IS_ERR_OR_NULL(m->priv)) {
			void *ret = m->priv ? m->priv : ERR_PTR(-EINVAL);

			kfree(m);
			return ret;
		}
	}
	vb2t_live(ctx, 1);
	return m;
}

static void vb2t_detach_dmabuf(void *buf_priv)
{
	struct vb2t_mem *m = buf_priv;

	vb2t_enter(m->ctx, VB2T_DETACH_DMABUF, m->index, NULL);
	if (m->mapped)
		vb2t_violation(m->ctx, "detach_dmabuf(%d) while mapped",
			       m->index);
	if (m->ctx->backend)
		m->ctx->backend->detach_dmabuf(m->priv);
	vb2t_mem_free(m);
}

static int vb2t_map_dmabuf(void *buf_priv)
{
	struct vb2t_mem *m = buf_priv;
	int err;

	if (vb2t_enter(m->ctx, VB2T_MAP_DMABUF, m->index, &err))
		return err;
	if (m->mapped)
		vb2t_violation(m->ctx, "map_dmabuf(%d) twice", m->index);
	if (m->ctx->backend) {
		err = m->ctx->backend->map_dmabuf(m->priv);
		if (err)
			return err;
	}
	m->mapped = true;
	return 0;
}

static void vb2t_unmap_dmabuf(void *buf_priv)
{
	struct vb2t_mem *m = buf_priv;

	vb2t_enter(m->ctx, VB2T_UNMAP_DMABUF, m->index, NULL);
	if (!m->mapped)
		vb2t_violation(m->ctx, "unmap_dmabuf(%d) of an unmapped plane",
			       m->index);
	if (m->ctx->backend)
		m->ctx->backend->unmap_dmabuf(m->priv);
	m->mapped = false;
}

static void *vb2t_vaddr(struct vb2_buffer *vb, void *buf_priv)
{
	struct vb2t_mem *m = buf_priv;

	vb2t_enter(m->ctx, VB2T_VADDR, m->index, NULL);
	if (m->ctx->backend)
		return m->ctx->backend->vaddr ?
		       m->ctx->backend->vaddr(vb, m->priv) : NULL;
	return m->vaddr;
}

static void *vb2t_cookie(struct vb2_buffer *vb, void *buf_priv)
{
	struct vb2t_mem *m = buf_priv;

	vb2t_enter(m->ctx, VB2T_COOKIE, m->index, NULL);
	if (m->ctx->backend)
		return m->ctx->backend->cookie ?
		       m->ctx->backend->cookie(vb, m->priv) : NULL;
	return m;
}

static unsigned int vb2t_num_users(void *buf_priv)
{
	struct vb2t_mem *m = buf_priv;

	vb2t_enter(m->ctx, VB2T_NUM_USERS, m->index, NULL);
	if (m->ctx->backend)
		return m->ctx->backend->num_users(m->priv);
	return refcount_read(&m->refs);
}

/**
 * vb2t_backend_priv() - the real allocator's state of a plane
 * @vb:		a buffer of a queue whose context has a backend.
 * @plane:	the plane.
 *
 * Return: what the backend's alloc, get_userptr or attach_dmabuf returned,
 * NULL if the plane has no memory.
 */
void *vb2t_backend_priv(struct vb2_buffer *vb, unsigned int plane)
{
	struct vb2t_mem *m = vb->planes[plane].mem_priv;

	return m ? m->priv : NULL;
}

static void vb2t_vm_open(struct vm_area_struct *vma)
{
	struct vb2t_mem *m = vma->vm_private_data;

	refcount_inc(&m->refs);
}

static void vb2t_vm_close(struct vm_area_struct *vma)
{
	vb2t_mem_unref(vma->vm_private_data);
}

static const struct vm_operations_struct vb2t_vm_ops = {
	.open	= vb2t_vm_open,
	.close	= vb2t_vm_close,
};

static int vb2t_mmap(void *buf_priv, struct vm_area_struct *vma)
{
	struct vb2t_mem *m = buf_priv;
	int err;

	if (vb2t_enter(m->ctx, VB2T_MMAP, m->index, &err))
		return err;
	if (m->ctx->backend)
		return m->ctx->backend->mmap(m->priv, vma);
	err = remap_vmalloc_range(vma, m->vaddr, 0);
	if (err)
		return err;
	vm_flags_set(vma, VM_DONTEXPAND | VM_DONTDUMP);
	vma->vm_private_data = m;
	vma->vm_ops = &vb2t_vm_ops;
	vb2t_vm_open(vma);
	return 0;
}

static const struct vb2_mem_ops vb2t_mem_ops = {
	.alloc		= vb2t_alloc,
	.put		= vb2t_put,
	.get_dmabuf	= vb2t_get_dmabuf,
	.get_userptr	= vb2t_get_userptr,
	.put_userptr	= vb2t_put_userptr,
	.prepare	= vb2t_prepare,
	.finish		= vb2t_finish,
	.attach_dmabuf	= vb2t_attach_dmabuf,
	.detach_dmabuf	= vb2t_detach_dmabuf,
	.map_dmabuf	= vb2t_map_dmabuf,
	.unmap_dmabuf	= vb2t_unmap_dmabuf,
	.vaddr		= vb2t_vaddr,
	.cookie		= vb2t_cookie,
	.num_users	= vb2t_num_users,
	.mmap		= vb2t_mmap,
};

/* Without a backend there is no dma-buf exporter; with one, what it has. */
static void vb2t_setup_mem_ops(struct vb2t_ctx *ctx)
{
	const struct vb2_mem_ops *b = ctx->backend;

	ctx->mem_ops = vb2t_mem_ops;
	if (!b) {
		ctx->mem_ops.get_dmabuf = NULL;
		return;
	}
	if (!b->get_dmabuf)
		ctx->mem_ops.get_dmabuf = NULL;
	if (!b->get_userptr)
		ctx->mem_ops.get_userptr = NULL;
	if (!b->attach_dmabuf)
		ctx->mem_ops.attach_dmabuf = NULL;
	if (!b->num_users)
		ctx->mem_ops.num_users = NULL;
}

/* Context life cycle */

/* KUnit devices come with a driver of the same name: keep names unique. */
static atomic_t vb2t_devices = ATOMIC_INIT(0);

/**
 * vb2t_check_contract() - report the contract violations seen so far
 * @ctx:	the context.
 *
 * Also checks that nothing is left after the queue was released: no
 * buffer initialised, prepared or held by the driver, and all memory of
 * the fake allocator freed.
 */
void vb2t_check_contract(struct vb2t_ctx *ctx)
{
	struct kunit *test = ctx->test;

	KUNIT_EXPECT_EQ_MSG(test, ctx->violations, 0,
			    "first violation: %s", ctx->first_violation);
}

static void vb2t_check_released(struct vb2t_ctx *ctx)
{
	struct kunit *test = ctx->test;
	unsigned int i, inited = 0, prepared = 0, owned = 0;

	vb2t_check_contract(ctx);
	for (i = 0; i < VB2T_MAX_BUFS; i++) {
		inited += ctx->bufs[i].inited;
		prepared += ctx->bufs[i].prepared;
		owned += ctx->bufs[i].owned;
	}
	KUNIT_EXPECT_EQ_MSG(test, inited, 0, "buffers without buf_cleanup");
	KUNIT_EXPECT_EQ_MSG(test, prepared, 0, "buffers without buf_finish");
	KUNIT_EXPECT_EQ_MSG(test, owned, 0, "buffers the driver still holds");
	KUNIT_EXPECT_EQ_MSG(test, ctx->live_mem, 0, "allocator memory leaked");
}

/**
 * vb2t_release() - release the queue and check that nothing is left
 * @ctx:	the context.
 *
 * Called automatically when the test ends; a test calls it earlier to
 * look at the counts after the release. Only the first call releases.
 */
void vb2t_release(struct vb2t_ctx *ctx)
{
	if (!ctx->q.ops)
		return;
	mutex_lock(&ctx->mutex);
	vb2_core_queue_release(&ctx->q);
	mutex_unlock(&ctx->mutex);
	ctx->q.ops = NULL;
	vb2t_check_released(ctx);
}

static void vb2t_ctx_cleanup(void *data)
{
	vb2t_release(data);
}

static void vb2t_init_queue(struct vb2t_ctx *ctx, const struct vb2t_config *cfg)
{
	struct vb2_queue *q = &ctx->q;

	q->type = cfg->type;
	q->io_modes = cfg->io_modes ? cfg->io_modes :
		      VB2_MMAP | VB2_USERPTR | VB2_DMABUF;
	q->dev = ctx->dev;
	q->lock = &ctx->mutex;
	q->ops = cfg->no_wait_ops ? &vb2t_ops_no_wait : &vb2t_ops;
	q->mem_ops = &ctx->mem_ops;
	q->drv_priv = ctx;
	q->buf_struct_size = sizeof(struct vb2t_buffer);
	q->timestamp_flags = cfg->timestamp_flags ? cfg->timestamp_flags :
			     V4L2_BUF_FLAG_TIMESTAMP_MONOTONIC;
	q->allow_cache_hints = cfg->allow_cache_hints;
	q->max_num_buffers = cfg->max_num_buffers;
	q->min_queued_buffers = cfg->min_queued_buffers;
	q->min_reqbufs_allocation = cfg->min_reqbufs_allocation;
	q->supports_requests = cfg->supports_requests;
}

/**
 * vb2t_ctx_create() - a fake driver with an initialised queue
 * @test:	the test.
 * @cfg:	the queue configuration.
 *
 * The queue is released, and the contract checked, when the test ends.
 *
 * Return: the context; the test is aborted if it cannot be made.
 */
struct vb2t_ctx *vb2t_ctx_create(struct kunit *test,
				 const struct vb2t_config *cfg)
{
	char name[32];
	struct vb2t_ctx *ctx;
	unsigned int i;
	int ret;

	ctx = kunit_kzalloc(test, sizeof(*ctx), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, ctx);
	ctx->bufs = kunit_kcalloc(test, VB2T_MAX_BUFS, sizeof(*ctx->bufs),
				  GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, ctx->bufs);
	ctx->test = test;
	mutex_init(&ctx->mutex);
	spin_lock_init(&ctx->lock);
	INIT_LIST_HEAD(&ctx->active);
	ctx->log_mask = VB2T_LOG_DEFAULT;
	ctx->start_returns_queued = true;
	ctx->num_planes = cfg->num_planes ? cfg->num_planes : 1;
	for (i = 0; i < ctx->num_planes; i++)
		ctx->sizes[i] = cfg->size ? cfg->size : PAGE_SIZE;
	ctx->backend = cfg->backend;
	vb2t_setup_mem_ops(ctx);
	snprintf(name, sizeof(name), "vb2t-%u", atomic_inc_return(&vb2t_devices));
	ctx->dev = kunit_device_register(test, name);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, ctx->dev);
	/* What the DMA allocators need of a device: a DMA mask. */
	ctx->dev->coherent_dma_mask = cfg->dma_all_memory ? DMA_BIT_MASK(64) :
							   DMA_BIT_MASK(32);
	ctx->dev->dma_mask = &ctx->dev->coherent_dma_mask;

	vb2t_init_queue(ctx, cfg);
	if (cfg->core_only) {
		ctx->q.is_output = V4L2_TYPE_IS_OUTPUT(cfg->type);
		ctx->q.is_multiplanar = V4L2_TYPE_IS_MULTIPLANAR(cfg->type);
		ret = vb2_core_queue_init(&ctx->q);
	} else {
		ret = vb2_queue_init(&ctx->q);
	}
	KUNIT_ASSERT_EQ(test, ret, 0);
	ret = kunit_add_action_or_reset(test, vb2t_ctx_cleanup, ctx);
	KUNIT_ASSERT_EQ(test, ret, 0);
	return ctx;
}

/**
 * vb2t_ctx_simple() - a fake driver with the fake allocator and defaults
 * @test:	the test.
 * @type:	the &enum v4l2_buf_type of the queue.
 *
 * Return: the context.
 */
struct vb2t_ctx *vb2t_ctx_simple(struct kunit *test, u32 type)
{
	struct vb2t_config cfg = { .type = type };

	return vb2t_ctx_create(test, &cfg);
}

/* V4L2 calls, each with the queue lock held */

/**
 * vb2t_init_buffer() - a struct v4l2_buffer naming a buffer of the queue
 * @ctx:	the context.
 * @b:		the structure to fill.
 * @planes:	VB2_MAX_PLANES entries for multi-planar queues, or NULL.
 * @index:	the buffer index.
 *
 * Uses the queue's memory type (MMAP if it has none yet); output buffers
 * get a full payload.
 */
void vb2t_init_buffer(struct vb2t_ctx *ctx, struct v4l2_buffer *b,
		      struct v4l2_plane *planes, unsigned int index)
{
	struct vb2_queue *q = &ctx->q;
	unsigned int i;

	memset(b, 0, sizeof(*b));
	b->type = q->type;
	b->index = index;
	b->memory = q->memory ? q->memory : V4L2_MEMORY_MMAP;
	b->field = V4L2_FIELD_NONE;
	if (q->is_multiplanar) {
		memset(planes, 0, VB2_MAX_PLANES * sizeof(*planes));
		b->m.planes = planes;
		b->length = ctx->num_planes;
		for (i = 0; i < ctx->num_planes; i++)
			planes[i].bytesused = q->is_output ? ctx->sizes[i] : 0;
	} else if (q->is_output) {
		b->bytesused = ctx->sizes[0];
	}
}

/**
 * vb2t_reqbufs() - VIDIOC_REQBUFS
 * @ctx:	the context.
 * @memory:	&enum v4l2_memory.
 * @count:	in: buffers wanted, out: buffers allocated.
 *
 * Return: what vb2_reqbufs() returned.
 */
int vb2t_reqbufs(struct vb2t_ctx *ctx, u32 memory, unsigned int *count)
{
	struct v4l2_requestbuffers req = {
		.count = *count,
		.type = ctx->q.type,
		.memory = memory,
	};
	int ret;

	mutex_lock(&ctx->mutex);
	ret = vb2_reqbufs(&ctx->q, &req);
	mutex_unlock(&ctx->mutex);
	*count = req.count;
	return ret;
}

/**
 * vb2t_create_bufs() - VIDIOC_CREATE_BUFS with a single-planar format
 * @ctx:	the context.
 * @memory:	&enum v4l2_memory.
 * @count:	buffers wanted.
 * @size:	sizeimage of the format.
 * @first:	out: index of the first new buffer; may be NULL.
 * @created:	out: number of buffers created; may be NULL.
 *
 * Return: what vb2_create_bufs() returned.
 */
int vb2t_create_bufs(struct vb2t_ctx *ctx, u32 memory, unsigned int count,
		     unsigned int size, unsigned int *first,
		     unsigned int *created)
{
	struct v4l2_create_buffers cb = {
		.count = count,
		.memory = memory,
	};
	int ret;

	cb.format.type = ctx->q.type;
	if (ctx->q.is_multiplanar) {
		cb.format.fmt.pix_mp.num_planes = 1;
		cb.format.fmt.pix_mp.plane_fmt[0].sizeimage = size;
	} else {
		cb.format.fmt.pix.sizeimage = size;
	}
	mutex_lock(&ctx->mutex);
	ret = vb2_create_bufs(&ctx->q, &cb);
	mutex_unlock(&ctx->mutex);
	if (first)
		*first = cb.index;
	if (created)
		*created = cb.count;
	return ret;
}

/**
 * vb2t_qbuf() - VIDIOC_QBUF
 * @ctx:	the context.
 * @b:		the buffer description.
 *
 * Return: what vb2_qbuf() returned.
 */
int vb2t_qbuf(struct vb2t_ctx *ctx, struct v4l2_buffer *b)
{
	int ret;

	mutex_lock(&ctx->mutex);
	ret = vb2_qbuf(&ctx->q, NULL, b);
	mutex_unlock(&ctx->mutex);
	return ret;
}

/**
 * vb2t_qbuf_mmap() - VIDIOC_QBUF of a buffer by index, nothing else set
 * @ctx:	the context.
 * @index:	the buffer.
 *
 * Return: what vb2_qbuf() returned.
 */
int vb2t_qbuf_mmap(struct vb2t_ctx *ctx, unsigned int index)
{
	struct v4l2_plane planes[VB2_MAX_PLANES];
	struct v4l2_buffer b;

	vb2t_init_buffer(ctx, &b, planes, index);
	return vb2t_qbuf(ctx, &b);
}

/**
 * vb2t_prepare_buf() - VIDIOC_PREPARE_BUF
 * @ctx:	the context.
 * @b:		the buffer description.
 *
 * Return: what vb2_prepare_buf() returned.
 */
int vb2t_prepare_buf(struct vb2t_ctx *ctx, struct v4l2_buffer *b)
{
	int ret;

	mutex_lock(&ctx->mutex);
	ret = vb2_prepare_buf(&ctx->q, NULL, b);
	mutex_unlock(&ctx->mutex);
	return ret;
}

/**
 * vb2t_querybuf() - VIDIOC_QUERYBUF
 * @ctx:	the context.
 * @b:		the buffer description.
 *
 * Return: what vb2_querybuf() returned.
 */
int vb2t_querybuf(struct vb2t_ctx *ctx, struct v4l2_buffer *b)
{
	int ret;

	mutex_lock(&ctx->mutex);
	ret = vb2_querybuf(&ctx->q, b);
	mutex_unlock(&ctx->mutex);
	return ret;
}

/**
 * vb2t_dqbuf() - VIDIOC_DQBUF without blocking
 * @ctx:	the context.
 * @b:		the buffer description.
 *
 * Return: what vb2_dqbuf() returned.
 */
int vb2t_dqbuf(struct vb2t_ctx *ctx, struct v4l2_buffer *b)
{
	int ret;

	mutex_lock(&ctx->mutex);
	ret = vb2_dqbuf(&ctx->q, b, true);
	mutex_unlock(&ctx->mutex);
	return ret;
}

/**
 * vb2t_dqbuf_index() - VIDIOC_DQBUF without blocking, for index and flags
 * @ctx:	the context.
 * @index:	out: the index of the buffer; may be NULL.
 * @flags:	out: the flags reported; may be NULL.
 *
 * Return: what vb2_dqbuf() returned.
 */
int vb2t_dqbuf_index(struct vb2t_ctx *ctx, unsigned int *index, u32 *flags)
{
	struct v4l2_plane planes[VB2_MAX_PLANES];
	struct v4l2_buffer b;
	int ret;

	vb2t_init_buffer(ctx, &b, planes, 0);
	ret = vb2t_dqbuf(ctx, &b);
	if (index)
		*index = b.index;
	if (flags)
		*flags = b.flags;
	return ret;
}

/**
 * vb2t_streamon() - VIDIOC_STREAMON
 * @ctx:	the context.
 *
 * Return: what vb2_streamon() returned.
 */
int vb2t_streamon(struct vb2t_ctx *ctx)
{
	int ret;

	mutex_lock(&ctx->mutex);
	ret = vb2_streamon(&ctx->q, ctx->q.type);
	mutex_unlock(&ctx->mutex);
	return ret;
}

/**
 * vb2t_streamoff() - VIDIOC_STREAMOFF
 * @ctx:	the context.
 *
 * Return: what vb2_streamoff() returned.
 */
int vb2t_streamoff(struct vb2t_ctx *ctx)
{
	int ret;

	mutex_lock(&ctx->mutex);
	ret = vb2_streamoff(&ctx->q, ctx->q.type);
	mutex_unlock(&ctx->mutex);
	return ret;
}

/**
 * vb2t_remove_bufs() - VIDIOC_REMOVE_BUFS (through the core)
 * @ctx:	the context.
 * @start:	first index.
 * @count:	number of buffers.
 *
 * Return: what vb2_core_remove_bufs() returned.
 */
int vb2t_remove_bufs(struct vb2t_ctx *ctx, unsigned int start,
		     unsigned int count)
{
	int ret;

	mutex_lock(&ctx->mutex);
	ctx->removing = true;
	ret = vb2_core_remove_bufs(&ctx->q, start, count);
	ctx->removing = false;
	mutex_unlock(&ctx->mutex);
	return ret;
}

/**
 * vb2t_state() - the state of a buffer
 * @ctx:	the context.
 * @index:	the buffer index.
 *
 * Return: its &enum vb2_buffer_state, or -1 if there is no such buffer.
 */
enum vb2_buffer_state vb2t_state(struct vb2t_ctx *ctx, unsigned int index)
{
	struct vb2_buffer *vb;
	int state = -1;

	mutex_lock(&ctx->mutex);
	vb = vb2_get_buffer(&ctx->q, index);
	if (vb)
		state = READ_ONCE(vb->state);
	mutex_unlock(&ctx->mutex);
	return state;
}

/* Core calls, each with the queue lock held */

/**
 * vb2t_core_reqbufs() - vb2_core_reqbufs()
 * @ctx:	the context.
 * @memory:	the memory model.
 * @count:	in: buffers wanted, out: buffers allocated.
 *
 * Return: what vb2_core_reqbufs() returned.
 */
int vb2t_core_reqbufs(struct vb2t_ctx *ctx, enum vb2_memory memory,
		      unsigned int *count)
{
	int ret;

	mutex_lock(&ctx->mutex);
	ret = vb2_core_reqbufs(&ctx->q, memory, 0, count);
	mutex_unlock(&ctx->mutex);
	return ret;
}

/**
 * vb2t_core_qbuf() - vb2_core_qbuf() of an MMAP buffer, without a user
 *	buffer description
 * @ctx:	the context.
 * @index:	the buffer index.
 * @req:	a media request or NULL.
 *
 * Return: what vb2_core_qbuf() returned, -ENOENT for a missing buffer.
 */
int vb2t_core_qbuf(struct vb2t_ctx *ctx, unsigned int index,
		   struct media_request *req)
{
	struct vb2_buffer *vb;
	int ret = -ENOENT;

	mutex_lock(&ctx->mutex);
	vb = vb2_get_buffer(&ctx->q, index);
	if (vb)
		ret = vb2_core_qbuf(&ctx->q, vb, NULL, req);
	mutex_unlock(&ctx->mutex);
	return ret;
}

/**
 * vb2t_core_dqbuf() - vb2_core_dqbuf() without blocking
 * @ctx:	the context.
 * @index:	out: the buffer index.
 *
 * Return: what vb2_core_dqbuf() returned.
 */
int vb2t_core_dqbuf(struct vb2t_ctx *ctx, unsigned int *index)
{
	int ret;

	mutex_lock(&ctx->mutex);
	ret = vb2_core_dqbuf(&ctx->q, index, NULL, true);
	mutex_unlock(&ctx->mutex);
	return ret;
}

/**
 * vb2t_core_streamon() - vb2_core_streamon()
 * @ctx:	the context.
 *
 * Return: what vb2_core_streamon() returned.
 */
int vb2t_core_streamon(struct vb2t_ctx *ctx)
{
	int ret;

	mutex_lock(&ctx->mutex);
	ret = vb2_core_streamon(&ctx->q, ctx->q.type);
	mutex_unlock(&ctx->mutex);
	return ret;
}

/**
 * vb2t_core_streamoff() - vb2_core_streamoff()
 * @ctx:	the context.
 *
 * Return: what vb2_core_streamoff() returned.
 */
int vb2t_core_streamoff(struct vb2t_ctx *ctx)
{
	int ret;

	mutex_lock(&ctx->mutex);
	ret = vb2_core_streamoff(&ctx->q, ctx->q.type);
	mutex_unlock(&ctx->mutex);
	return ret;
}

/* User memory, files and descriptors */

/**
 * vb2t_user_mem() - anonymous user memory for the test's thread
 * @test:	the test.
 * @size:	bytes.
 *
 * Return: the user address; the test is aborted on failure.
 */
unsigned long vb2t_user_mem(struct kunit *test, unsigned long size)
{
	unsigned long addr;

	addr = kunit_vm_mmap(test, NULL, 0, size, PROT_READ | PROT_WRITE,
			     MAP_ANONYMOUS | MAP_PRIVATE, 0);
	KUNIT_ASSERT_NE(test, addr, 0);
	KUNIT_ASSERT_FALSE(test, IS_ERR_VALUE(addr));
	return addr;
}

static int vb2t_file_mmap(struct file *file, struct vm_area_struct *vma)
{
	struct vb2t_ctx *ctx = file->private_data;

	return vb2_mmap(&ctx->q, vma);
}

static const struct file_operations vb2t_fops = {
	.owner	= THIS_MODULE,
	.mmap	= vb2t_file_mmap,
};

/*
 * The last fput() of a kernel thread, such as a KUnit case, hands the file
 * to a worker, and flush_delayed_fput() of 6.12 does not wait for a file
 * that worker has already taken. The test's own files are therefore
 * released here, synchronously, so that what follows sees them gone;
 * unless a mapping still holds one: its last reference then goes with the
 * test thread's mm, through the worker.
 */
static void vb2t_fput(void *file)
{
	__fput_sync(file);
}

/**
 * vb2t_queue_file() - a file whose mmap() is vb2_mmap() on the queue
 * @ctx:	the context.
 *
 * Return: the file, put when the test ends.
 */
struct file *vb2t_queue_file(struct vb2t_ctx *ctx)
{
	struct kunit *test = ctx->test;
	struct file *file;

	file = anon_inode_getfile("vb2t", &vb2t_fops, ctx, O_RDWR);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, file);
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, vb2t_fput, file),
			0);
	return file;
}

/**
 * vb2t_close_fd_now() - close a descriptor and release its file at once
 * @fd:		the descriptor, in the table this kernel thread shares.
 *
 * If nothing else holds the file, its release has run on return (see
 * vb2t_fput()).
 */
void vb2t_close_fd_now(int fd)
{
	struct file *file = fget(fd);

	close_fd(fd);
	if (file)
		__fput_sync(file);
}

static void vb2t_close_fd(void *fd)
{
	vb2t_close_fd_now((long)fd);
}

/**
 * vb2t_close_fd_at_exit() - close a file descriptor when the test ends
 * @test:	the test.
 * @fd:		the descriptor.
 */
void vb2t_close_fd_at_exit(struct kunit *test, int fd)
{
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, vb2t_close_fd,
							(void *)(long)fd), 0);
}

/**
 * vb2t_close_fd_early() - close now a descriptor of vb2t_close_fd_at_exit()
 * @test:	the test.
 * @fd:		the descriptor.
 *
 * Its file is released on return, as with vb2t_close_fd_now().
 */
void vb2t_close_fd_early(struct kunit *test, int fd)
{
	kunit_release_action(test, vb2t_close_fd, (void *)(long)fd);
}

/**
 * vb2t_export_fd() - a dma-buf of a test's own exporter, as a descriptor
 * @test:	the test.
 * @ops:	the exporter's operations.
 * @size:	size of the dma-buf in bytes.
 * @priv:	the dma-buf's &dma_buf.priv.
 *
 * The descriptor is closed when the test ends (vb2t_close_fd_at_exit()).
 * Once the dma-buf exists, @ops->release frees @priv, also if the test is
 * aborted here.
 *
 * Return: the file descriptor, or what dma_buf_export() failed with (the
 * caller still owns @priv then).
 */
int vb2t_export_fd(struct kunit *test, const struct dma_buf_ops *ops,
		   size_t size, void *priv)
{
	DEFINE_DMA_BUF_EXPORT_INFO(info);
	struct dma_buf *dbuf;
	int fd;

	info.ops = ops;
	info.size = size;
	info.flags = O_RDWR;
	info.priv = priv;
	dbuf = dma_buf_export(&info);
	if (IS_ERR(dbuf))
		return PTR_ERR(dbuf);
	fd = dma_buf_fd(dbuf, O_CLOEXEC);
	if (fd < 0)
		dma_buf_put(dbuf);
	KUNIT_ASSERT_GE(test, fd, 0);
	vb2t_close_fd_at_exit(test, fd);
	return fd;
}

/* A dma-buf exporter whose kernel mapping is I/O memory */

/**
 * struct vb2t_iomem_buf - the memory behind a vb2t_iomem_fd() dma-buf
 * @pages:	physically contiguous pages, so dma-contig may import them.
 * @size:	the dma-buf's size.
 */
struct vb2t_iomem_buf {
	struct page	*pages;
	size_t		size;
};

static struct sg_table *vb2t_iomem_map(struct dma_buf_attachment *attach,
				       enum dma_data_direction dir)
{
	struct vb2t_iomem_buf *buf = attach->dmabuf->priv;
	struct sg_table *sgt = kzalloc(sizeof(*sgt), GFP_KERNEL);
	int ret;

	if (!sgt)
		return ERR_PTR(-ENOMEM);
	ret = sg_alloc_table(sgt, 1, GFP_KERNEL);
	if (ret)
		goto free;
	sg_set_page(sgt->sgl, buf->pages, buf->size, 0);
	ret = dma_map_sgtable(attach->dev, sgt, dir, 0);
	if (!ret)
		return sgt;
	sg_free_table(sgt);
free:
	kfree(sgt);
	return ERR_PTR(ret);
}

static void vb2t_iomem_unmap(struct dma_buf_attachment *attach,
			     struct sg_table *sgt, enum dma_data_direction dir)
{
	dma_unmap_sgtable(attach->dev, sgt, dir, 0);
	sg_free_table(sgt);
	kfree(sgt);
}

/*
 * The mapping is ordinary memory, handed out as an I/O memory one the way
 * an exporter of device memory (a PCI BAR) does: the __force cast only
 * tells sparse that this memory is also fine for readl() and memcpy_fromio().
 */
static int vb2t_iomem_vmap(struct dma_buf *dbuf, struct iosys_map *map)
{
	struct vb2t_iomem_buf *buf = dbuf->priv;

	iosys_map_set_vaddr_iomem(map,
				  (__force void __iomem *)page_address(buf->pages));
	return 0;
}

static void vb2t_iomem_release(struct dma_buf *dbuf)
{
	struct vb2t_iomem_buf *buf = dbuf->priv;

	__free_pages(buf->pages, get_order(buf->size));
	kfree(buf);
}

static const struct dma_buf_ops vb2t_iomem_ops = {
	.map_dma_buf = vb2t_iomem_map,
	.unmap_dma_buf = vb2t_iomem_unmap,
	.vmap = vb2t_iomem_vmap,
	.release = vb2t_iomem_release,
};

/**
 * vb2t_iomem_fd() - a dma-buf whose vmap() gives an I/O memory mapping
 * @test:	the test.
 * @size:	its size, a power of two pages.
 * @vaddr:	set to the kernel address of its memory, which is also what
 *		the vmap() hands out (as &iosys_map.vaddr_iomem).
 *
 * Devices map it as one contiguous block. The descriptor is closed when
 * the test ends.
 *
 * Return: the file descriptor; the test is aborted on failure.
 */
int vb2t_iomem_fd(struct kunit *test, size_t size, void **vaddr)
{
	struct vb2t_iomem_buf *buf;
	int fd;

	buf = kzalloc(sizeof(*buf), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, buf);
	buf->size = size;
	buf->pages = alloc_pages(GFP_KERNEL | __GFP_ZERO, get_order(size));
	if (!buf->pages)
		kfree(buf);
	KUNIT_ASSERT_NOT_NULL(test, buf->pages);
	*vaddr = page_address(buf->pages);

	fd = vb2t_export_fd(test, &vb2t_iomem_ops, size, buf);
	if (fd < 0) {
		__free_pages(buf->pages, get_order(size));
		kfree(buf);
	}
	KUNIT_ASSERT_GE(test, fd, 0);
	return fd;
}

/* A second task in a blocking DQBUF */

static int vb2t_waiter_fn(void *data)
{
	struct vb2t_waiter *w = data;
	struct v4l2_buffer b;

	vb2t_init_buffer(w->ctx, &b, NULL, 0);
	mutex_lock(&w->ctx->mutex);
	w->ret = vb2_dqbuf(&w->ctx->q, &b, false);
	mutex_unlock(&w->ctx->mutex);
	w->index = b.index;
	complete(&w->done);
	return 0;
}

/*
 * Up to five seconds for the waiter to go to sleep with the queue lock
 * dropped. Only trylock: a videobuf2 that sleeps with the lock held must
 * fail the test, not hang it.
 */
static bool vb2t_wait_dqbuf_sleeper(struct vb2t_ctx *ctx)
{
	bool sleeping = false;
	unsigned int i;

	for (i = 0; i < 250 && !sleeping; i++) {
		msleep(20);
		if (!mutex_trylock(&ctx->mutex))
			continue;
		sleeping = ctx->q.waiting_in_dqbuf;
		mutex_unlock(&ctx->mutex);
	}
	return sleeping;
}

/**
 * vb2t_start_waiter() - start a task that sleeps in a blocking DQBUF
 * @test:	the test.
 * @ctx:	a streaming context with nothing to dequeue.
 * @pw:		out: the waiter; wait for &vb2t_waiter.done before the test
 *		ends.
 *
 * Return: true once the task sleeps; false if it never did (it has
 * returned by then).
 */
bool vb2t_start_waiter(struct kunit *test, struct vb2t_ctx *ctx,
		       struct vb2t_waiter **pw)
{
	struct task_struct *task;
	struct vb2t_waiter *w;

	w = kunit_kzalloc(test, sizeof(*w), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, w);
	w->ctx = ctx;
	init_completion(&w->done);
	*pw = w;
	task = kthread_run(vb2t_waiter_fn, w, "vb2t-waiter");
	KUNIT_ASSERT_FALSE(test, IS_ERR(task));
	if (vb2t_wait_dqbuf_sleeper(ctx))
		return true;
	/* Let it return before the test goes away. */
	vb2t_complete_all(ctx, VB2_BUF_STATE_DONE);
	wait_for_completion(&w->done);
	return false;
}

/* Expected warnings */

/**
 * vb2t_expect_warning_begin() - a WARN follows on purpose
 * @test:	the test.
 *
 * The guest's log check accepts WARN splats between this and
 * vb2t_expect_warning_end(), and fails if none came.
 */
void vb2t_expect_warning_begin(struct kunit *test)
{
	pr_warn("vb2-expect-warning: begin %s\n", test->name);
}

/**
 * vb2t_expect_warning_end() - end of the window of vb2t_expect_warning_begin()
 * @test:	the test.
 */
void vb2t_expect_warning_end(struct kunit *test)
{
	pr_warn("vb2-expect-warning: end %s\n", test->name);
}

/* A registered video device on the context's queue */

static int vb2t_vdev_querycap(struct file *file, void *fh,
			      struct v4l2_capability *cap)
{
	strscpy(cap->driver, "vb2t", sizeof(cap->driver));
	strscpy(cap->card, "vb2t", sizeof(cap->card));
	return 0;
}

static int vb2t_vdev_g_fmt(struct file *file, void *fh, struct v4l2_format *f)
{
	struct vb2t_ctx *ctx = video_drvdata(file);

	f->fmt.pix.width = ctx->sizes[0] / 4;
	f->fmt.pix.height = 1;
	f->fmt.pix.pixelformat = V4L2_PIX_FMT_RGB32;
	f->fmt.pix.bytesperline = ctx->sizes[0];
	f->fmt.pix.sizeimage = ctx->sizes[0];
	f->fmt.pix.field = V4L2_FIELD_NONE;
	return 0;
}

/*
 * As most drivers do: the format cannot change while the queue has (or
 * had, until REQBUFS(0)) buffers. The new size is the next queue_setup's.
 */
static int vb2t_vdev_s_fmt(struct file *file, void *fh, struct v4l2_format *f)
{
	struct vb2t_ctx *ctx = video_drvdata(file);

	if (vb2_is_busy(&ctx->q))
		return -EBUSY;
	if (f->fmt.pix.sizeimage)
		ctx->sizes[0] = PAGE_ALIGN(f->fmt.pix.sizeimage);
	return vb2t_vdev_g_fmt(file, fh, f);
}

static const struct v4l2_ioctl_ops vb2t_vdev_ioctl_ops = {
	.vidioc_querycap	= vb2t_vdev_querycap,
	.vidioc_g_fmt_vid_cap	= vb2t_vdev_g_fmt,
	.vidioc_g_fmt_vid_out	= vb2t_vdev_g_fmt,
	.vidioc_s_fmt_vid_cap	= vb2t_vdev_s_fmt,
	.vidioc_s_fmt_vid_out	= vb2t_vdev_s_fmt,
	.vidioc_reqbufs		= vb2_ioctl_reqbufs,
	.vidioc_create_bufs	= vb2_ioctl_create_bufs,
	.vidioc_prepare_buf	= vb2_ioctl_prepare_buf,
	.vidioc_querybuf	= vb2_ioctl_querybuf,
	.vidioc_qbuf		= vb2_ioctl_qbuf,
	.vidioc_dqbuf		= vb2_ioctl_dqbuf,
	.vidioc_expbuf		= vb2_ioctl_expbuf,
	.vidioc_streamon	= vb2_ioctl_streamon,
	.vidioc_streamoff	= vb2_ioctl_streamoff,
	.vidioc_remove_bufs	= vb2_ioctl_remove_bufs,
};

static const struct v4l2_file_operations vb2t_vdev_fops = {
	.owner		= THIS_MODULE,
	.open		= v4l2_fh_open,
	.release	= vb2_fop_release,
	.unlocked_ioctl	= video_ioctl2,
	.mmap		= vb2_fop_mmap,
	.poll		= vb2_fop_poll,
};

static void vb2t_vdev_cleanup(void *data)
{
	struct vb2t_vdev *v = data;

	/* The files of vb2t_vdev_open() are released: their actions ran. */
	video_unregister_device(&v->vdev);
	v4l2_device_unregister(&v->v4l2_dev);
}

/**
 * vb2t_vdev_register() - register a video device for the context's queue
 * @ctx:	a context with a single-planar capture or output queue.
 *
 * The device is unregistered when the test ends, after the files opened
 * with vb2t_vdev_open() are closed.
 *
 * Return: the device; the test is aborted if it cannot be registered.
 */
struct vb2t_vdev *vb2t_vdev_register(struct vb2t_ctx *ctx)
{
	struct kunit *test = ctx->test;
	struct vb2t_vdev *v;
	int ret;

	v = kunit_kzalloc(test, sizeof(*v), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, v);
	v->ctx = ctx;
	v->user = vb2t_user_mem(test, PAGE_SIZE);
	KUNIT_ASSERT_EQ(test, v4l2_device_register(ctx->dev, &v->v4l2_dev), 0);
	strscpy(v->vdev.name, "vb2t", sizeof(v->vdev.name));
	v->vdev.v4l2_dev = &v->v4l2_dev;
	v->vdev.fops = &vb2t_vdev_fops;
	v->vdev.ioctl_ops = &vb2t_vdev_ioctl_ops;
	v->vdev.release = video_device_release_empty;
	v->vdev.lock = &ctx->mutex;
	v->vdev.queue = &ctx->q;
	v->vdev.vfl_dir = ctx->q.is_output ? VFL_DIR_TX : VFL_DIR_RX;
	v->vdev.device_caps = V4L2_CAP_STREAMING |
		(ctx->q.is_output ? V4L2_CAP_VIDEO_OUTPUT : V4L2_CAP_VIDEO_CAPTURE);
	video_set_drvdata(&v->vdev, ctx);
	ret = video_register_device(&v->vdev, VFL_TYPE_VIDEO, -1);
	if (ret) {
		v4l2_device_unregister(&v->v4l2_dev);
		KUNIT_FAIL(test, "video_register_device: %d", ret);
		return NULL;
	}
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, vb2t_vdev_cleanup,
							v), 0);
	return v;
}

/**
 * vb2t_vdev_open() - open the device node
 * @v:		the device.
 *
 * Skips the test without devtmpfs. The file is closed when the test ends.
 *
 * Return: the open file.
 */
struct file *vb2t_vdev_open(struct vb2t_vdev *v)
{
	struct kunit *test = v->ctx->test;
	struct file *file;
	char path[32];

	snprintf(path, sizeof(path), "/dev/video%d", v->vdev.num);
	file = filp_open(path, O_RDWR, 0);
	if (IS_ERR(file))
		kunit_skip(test, "cannot open %s (no devtmpfs?)", path);
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, vb2t_fput, file),
			0);
	return file;
}

/**
 * vb2t_vdev_ioctl() - an ioctl on an open node, as user space makes it
 * @v:		the device.
 * @file:	a file from vb2t_vdev_open().
 * @cmd:	the ioctl.
 * @arg:	its argument, copied in and, when the call succeeds, back.
 * @size:	the size of @arg, at most a page.
 *
 * Return: what the ioctl returned.
 */
long vb2t_vdev_ioctl(struct vb2t_vdev *v, struct file *file, unsigned int cmd,
		     void *arg, size_t size)
{
	void __user *uarg = (void __user *)v->user;
	long ret;

	if (WARN_ON(size > PAGE_SIZE) || copy_to_user(uarg, arg, size))
		return -EFAULT;
	ret = file->f_op->unlocked_ioctl(file, cmd, v->user);
	if (!ret && copy_from_user(arg, uarg, size))
		return -EFAULT;
	return ret;
}

/* Media requests */

static const struct media_device_ops vb2t_mdev_ops = {
	.req_validate	= vb2_request_validate,
	.req_queue	= vb2_request_queue,
};

/**
 * vb2t_mdev_create() - the part of a media device requests need
 * @test:	the test.
 *
 * Not registered: requests are made with vb2t_request_alloc() instead of
 * MEDIA_IOC_REQUEST_ALLOC.
 *
 * Return: the media device.
 */
struct media_device *vb2t_mdev_create(struct kunit *test)
{
	struct media_device *mdev;
	char name[32];

	mdev = kunit_kzalloc(test, sizeof(*mdev), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, mdev);
	snprintf(name, sizeof(name), "vb2t-mdev-%u",
		 atomic_inc_return(&vb2t_devices));
	mdev->dev = kunit_device_register(test, name);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, mdev->dev);
	mdev->ops = &vb2t_mdev_ops;
	mutex_init(&mdev->req_queue_mutex);
	return mdev;
}

static void vb2t_request_put(void *req)
{
	media_request_put(req);
}

/**
 * vb2t_request_alloc() - a new request, as MEDIA_IOC_REQUEST_ALLOC makes it
 * @test:	the test.
 * @mdev:	from vb2t_mdev_create().
 *
 * The test holds one reference, the one a file descriptor would hold,
 * dropped when the test ends.
 *
 * Return: the request.
 */
struct media_request *vb2t_request_alloc(struct kunit *test,
					 struct media_device *mdev)
{
	struct media_request *req;

	req = kzalloc(sizeof(*req), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, req);
	req->mdev = mdev;
	req->state = MEDIA_REQUEST_STATE_IDLE;
	kref_init(&req->kref);
	INIT_LIST_HEAD(&req->objects);
	init_waitqueue_head(&req->poll_wait);
	spin_lock_init(&req->lock);
	strscpy(req->debug_str, "vb2t", sizeof(req->debug_str));
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, vb2t_request_put,
							req), 0);
	return req;
}

/**
 * vb2t_request_reinit() - MEDIA_REQUEST_IOC_REINIT
 * @req:	the request.
 *
 * Does what the media request core does for the ioctl: an idle or
 * completed request drops all its objects and becomes empty.
 *
 * Return: 0, or -EBUSY if the request is queued or being validated.
 */
int vb2t_request_reinit(struct media_request *req)
{
	struct media_request_object *obj, *next;
	unsigned long flags;

	mutex_lock(&req->mdev->req_queue_mutex);
	spin_lock_irqsave(&req->lock, flags);
	if (req->state != MEDIA_REQUEST_STATE_IDLE &&
	    req->state != MEDIA_REQUEST_STATE_COMPLETE) {
		spin_unlock_irqrestore(&req->lock, flags);
		mutex_unlock(&req->mdev->req_queue_mutex);
		return -EBUSY;
	}
	req->state = MEDIA_REQUEST_STATE_CLEANING;
	spin_unlock_irqrestore(&req->lock, flags);

	list_for_each_entry_safe(obj, next, &req->objects, list) {
		media_request_object_unbind(obj);
		media_request_object_put(obj);
	}

	spin_lock_irqsave(&req->lock, flags);
	req->num_incomplete_objects = 0;
	req->state = MEDIA_REQUEST_STATE_IDLE;
	spin_unlock_irqrestore(&req->lock, flags);
	mutex_unlock(&req->mdev->req_queue_mutex);
	return 0;
}

/**
 * vb2t_request_queue() - MEDIA_REQUEST_IOC_QUEUE
 * @req:	the request.
 *
 * Does what the media request core does for the ioctl: validate under
 * the device's request mutex, then queue, or go back to idle.
 *
 * Return: 0, -EBUSY if the request is not idle, or the validation error.
 */
int vb2t_request_queue(struct media_request *req)
{
	struct media_device *mdev = req->mdev;
	unsigned long flags;
	int ret;

	mutex_lock(&mdev->req_queue_mutex);
	spin_lock_irqsave(&req->lock, flags);
	ret = req->state == MEDIA_REQUEST_STATE_IDLE ? 0 : -EBUSY;
	if (!ret)
		req->state = MEDIA_REQUEST_STATE_VALIDATING;
	spin_unlock_irqrestore(&req->lock, flags);
	if (ret) {
		mutex_unlock(&mdev->req_queue_mutex);
		return ret;
	}
	/* The reference a queued request holds until it completes. */
	media_request_get(req);
	ret = mdev->ops->req_validate(req);
	spin_lock_irqsave(&req->lock, flags);
	req->state = ret ? MEDIA_REQUEST_STATE_IDLE : MEDIA_REQUEST_STATE_QUEUED;
	spin_unlock_irqrestore(&req->lock, flags);
	if (!ret)
		mdev->ops->req_queue(req);
	mutex_unlock(&mdev->req_queue_mutex);
	if (ret)
		media_request_put(req);
	return ret;
}

/* The real allocators */

const struct vb2t_alloc vb2t_allocs[VB2T_NR_ALLOCS] = {
	[VB2T_VMALLOC]	= { "vmalloc", &vb2_vmalloc_memops, true, true, false },
	[VB2T_CONTIG]	= { "dma-contig", &vb2_dma_contig_memops, false, false,
			    false },
	[VB2T_SG]	= { "dma-sg", &vb2_dma_sg_memops, true, true, true },
};

static void vb2t_alloc_desc(const struct vb2t_alloc *a, char *desc)
{
	strscpy(desc, a->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(vb2t_alloc_array, vb2t_allocs, vb2t_alloc_desc);

/**
 * vb2t_alloc_gen_params() - every real allocator, as a KUnit parameter
 * @prev:	the previous &struct vb2t_alloc, or NULL for the first.
 * @desc:	gets the allocator's name.
 *
 * Return: the next allocator, or NULL after the last.
 */
const void *vb2t_alloc_gen_params(const void *prev, char *desc)
{
	return vb2t_alloc_array_gen_params(prev, desc);
}

/* The helpers are in every module built from the suites: the module's data is here. */
MODULE_DESCRIPTION("KUnit tests for videobuf2");
MODULE_LICENSE("GPL");
MODULE_IMPORT_NS(DMA_BUF);
