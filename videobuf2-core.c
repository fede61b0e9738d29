// SPDX-License-Identifier: GPL-2.0
/*
 * videobuf2 core: the buffer state machine and the queue operations
 * (QBUF, DQBUF, STREAMON/OFF, completion, poll) shared by V4L2 and DVB.
 *
 * Buffer allocation and the memory models live in videobuf2-memory.c,
 * media requests in videobuf2-request.c, read()/write() emulation in
 * videobuf2-fileio.c.
 */

#include <linux/err.h>
#include <linux/kernel.h>
#include <linux/lockdep.h>
#include <linux/module.h>
#include <linux/poll.h>
#include <linux/sched.h>
#include <linux/spinlock.h>
#include <linux/wait.h>

#include <kunit/visibility.h>
#include <media/videobuf2-core.h>
#include <trace/events/vb2.h>

#include "videobuf2-internal.h"

int vb2_core_debug;
module_param_named(debug, vb2_core_debug, int, 0644);
MODULE_PARM_DESC(debug, "debug level of the videobuf2 core (0-4)");

/**
 * DOC: buffer states
 *
 * A buffer moves through the states of &enum vb2_buffer_state. Every
 * change goes through vb2_set_state(), which looks the change up in
 * vb2_transitions[] below. An entry names the lock the change needs:
 *
 * - %VB2_LOCK_QUEUE: the queue lock (&vb2_queue.lock, when the queue has
 *   one and the core is not in a lockless teardown). These are the
 *   changes made by the ioctls: prepare, queue, hand over to the driver,
 *   dequeue and cancel; and the release of a buffer by a request that
 *   never queued it (videobuf2-request.c takes the lock for it).
 * - %VB2_LOCK_DONE: &vb2_queue.done_lock; the driver's completion
 *   (vb2_buffer_done(), which may run in interrupt context) and
 *   vb2_discard_done().
 *
 * A change that has no entry is a bug in the core or in a driver that
 * wrote &vb2_buffer.state itself; it triggers a one-time warning and is
 * applied anyway, so the queue can still be cancelled.
 */
const u8 vb2_transitions[VB2_NR_STATES][VB2_NR_STATES] = {
	[VB2_BUF_STATE_DEQUEUED] = {
		[VB2_BUF_STATE_IN_REQUEST]	= VB2_LOCK_QUEUE,
		[VB2_BUF_STATE_PREPARING]	= VB2_LOCK_QUEUE,
		[VB2_BUF_STATE_QUEUED]		= VB2_LOCK_QUEUE,
	},
	[VB2_BUF_STATE_IN_REQUEST] = {
		[VB2_BUF_STATE_DEQUEUED]	= VB2_LOCK_QUEUE,
		[VB2_BUF_STATE_PREPARING]	= VB2_LOCK_QUEUE,
		[VB2_BUF_STATE_QUEUED]		= VB2_LOCK_QUEUE,
	},
	[VB2_BUF_STATE_PREPARING] = {
		[VB2_BUF_STATE_DEQUEUED]	= VB2_LOCK_QUEUE,
		[VB2_BUF_STATE_IN_REQUEST]	= VB2_LOCK_QUEUE,
	},
	[VB2_BUF_STATE_QUEUED] = {
		[VB2_BUF_STATE_DEQUEUED]	= VB2_LOCK_QUEUE,
		[VB2_BUF_STATE_ACTIVE]		= VB2_LOCK_QUEUE,
	},
	[VB2_BUF_STATE_ACTIVE] = {
		[VB2_BUF_STATE_QUEUED]		= VB2_LOCK_DONE,
		[VB2_BUF_STATE_DONE]		= VB2_LOCK_DONE,
		[VB2_BUF_STATE_ERROR]		= VB2_LOCK_DONE,
	},
	[VB2_BUF_STATE_DONE] = {
		[VB2_BUF_STATE_DEQUEUED]	= VB2_LOCK_QUEUE,
		[VB2_BUF_STATE_ERROR]		= VB2_LOCK_DONE,
	},
	[VB2_BUF_STATE_ERROR] = {
		[VB2_BUF_STATE_DEQUEUED]	= VB2_LOCK_QUEUE,
	},
};

const char *vb2_state_name(enum vb2_buffer_state state)
{
	/* In the order of enum vb2_buffer_state. */
	static const char *const names[] = {
		"dequeued", "in-request", "preparing", "queued", "active",
		"done", "error",
	};

	static_assert(ARRAY_SIZE(names) == VB2_NR_STATES);
	return (unsigned int)state < VB2_NR_STATES ? names[state] : "invalid";
}

void vb2_assert_rule(struct vb2_queue *q, enum vb2_lock_rule rule)
{
	switch (rule) {
	case VB2_LOCK_QUEUE:
		if (q->lock && !q->teardown)
			lockdep_assert_held(q->lock);
		break;
	case VB2_LOCK_DONE:
		lockdep_assert_held(&q->done_lock);
		break;
	default:
		break;
	}
}

/**
 * vb2_state_change_allowed() - is a buffer state change in the table?
 * @from:	the current state.
 * @to:		the new state, different from @from.
 *
 * Return: true when vb2_transitions[] has an entry for the change.
 */
VISIBLE_IF_KUNIT bool vb2_state_change_allowed(enum vb2_buffer_state from,
					       enum vb2_buffer_state to)
{
	return vb2_transition_rule(from, to) != VB2_ILLEGAL;
}
EXPORT_SYMBOL_IF_KUNIT(vb2_state_change_allowed);

/* The slow path of vb2_set_state(): a change that has no entry in the table. */
void vb2_illegal_state_change(struct vb2_buffer *vb,
			      enum vb2_buffer_state state)
{
	WARN_ONCE(1, "vb2: [%s] buffer %u: illegal state change %s -> %s\n",
		  vb->vb2_queue->name, vb->index, vb2_state_name(vb->state),
		  vb2_state_name(state));
}

/*
 * Sleeping with the driver's lock released. A driver provides
 * wait_prepare/wait_finish, or the core drops and retakes q->lock.
 */
static bool vb2_driver_handles_lock(struct vb2_queue *q)
{
	return q->ops->wait_prepare || q->ops->wait_finish;
}

void vb2_release_driver_lock(struct vb2_queue *q)
{
	if (!vb2_driver_handles_lock(q)) {
		if (q->lock)
			mutex_unlock(q->lock);
	} else if (q->ops->wait_prepare) {
		q->ops->wait_prepare(q);
	}
}

void vb2_retake_driver_lock(struct vb2_queue *q)
{
	if (!vb2_driver_handles_lock(q)) {
		if (q->lock)
			mutex_lock(q->lock);
	} else if (q->ops->wait_finish) {
		q->ops->wait_finish(q);
	}
}

/* Queue configuration */

static int vb2_check_config(struct vb2_queue *q)
{
	if (WARN_ON(!q->ops) || WARN_ON(!q->mem_ops) || WARN_ON(!q->type) ||
	    WARN_ON(!q->io_modes) || WARN_ON(!q->ops->queue_setup) ||
	    WARN_ON(!q->ops->buf_queue))
		return -EINVAL;
	if (WARN_ON(q->requires_requests && !q->supports_requests))
		return -EINVAL;
	/*
	 * Requests are queued one at a time and may complete at once: a
	 * driver that needs buffers in hand before it starts cannot take them.
	 */
	if (WARN_ON(q->supports_requests && q->min_queued_buffers))
		return -EINVAL;

	if (!q->max_num_buffers)
		q->max_num_buffers = VB2_MAX_FRAME;
	q->max_num_buffers = min(q->max_num_buffers, VB2_MAX_BUFFER_INDEX);
	if (WARN_ON(q->max_num_buffers < VB2_MAX_FRAME))
		return -EINVAL;

	if (WARN_ON(q->min_queued_buffers >= q->max_num_buffers))
		return -EINVAL;
	q->min_reqbufs_allocation = max(q->min_reqbufs_allocation,
					q->min_queued_buffers + 1);
	if (WARN_ON(q->min_reqbufs_allocation > q->max_num_buffers))
		return -EINVAL;

	if (!q->buf_struct_size)
		q->buf_struct_size = sizeof(struct vb2_buffer);
	if (WARN_ON(q->buf_struct_size < sizeof(struct vb2_buffer)))
		return -EINVAL;
	return 0;
}

int vb2_core_queue_init(struct vb2_queue *q)
{
	int ret;

	if (WARN_ON(!q))
		return -EINVAL;
	ret = vb2_check_config(q);
	if (ret)
		return ret;

	mutex_init(&q->mmap_lock);
	q->bufs = NULL;
	q->bufs_bitmap = NULL;
	q->num_buffers = 0;
	q->memory = VB2_MEMORY_UNKNOWN;
	INIT_LIST_HEAD(&q->queued_list);
	q->queued_count = 0;
	atomic_set(&q->owned_by_drv_count, 0);
	INIT_LIST_HEAD(&q->done_list);
	spin_lock_init(&q->done_lock);
	init_waitqueue_head(&q->done_wq);
	q->streaming = 0;
	q->start_streaming_called = 0;
	q->waiting_in_dqbuf = 0;
	q->is_busy = 0;
	q->last_buffer_dequeued = 0;
	q->teardown = false;
	q->error = 0;
	q->fileio = NULL;
	q->threadio = NULL;

	vb2_fence_queue_init(q);
	if (q->bidirectional)
		q->dma_dir = DMA_BIDIRECTIONAL;
	else
		q->dma_dir = q->is_output ? DMA_TO_DEVICE : DMA_FROM_DEVICE;

	if (!q->name[0])
		snprintf(q->name, sizeof(q->name), "%s-%p",
			 q->is_output ? "out" : "cap", q);
	return 0;
}
EXPORT_SYMBOL_GPL(vb2_core_queue_init);

void vb2_core_queue_release(struct vb2_queue *q)
{
	/* First: readers of the files may look at the buffers. */
	vb2_debugfs_remove(q);
	q->teardown = true;
	vb2_fileio_stop(q);
	vb2_release_buffers(q);
	q->waiting_for_buffers = 0;
	q->last_buffer_dequeued = 0;
	q->teardown = false;
}
EXPORT_SYMBOL_GPL(vb2_core_queue_release);

/* Preparing buffers */

/*
 * Cache hints count only where the queue allows them (MMAP, opted in).
 * Elsewhere the flags keep what the buffer was created with: both set for
 * DMABUF, whose caches the exporter keeps, neither for the others.
 */
static void vb2_forget_cache_hints(struct vb2_buffer *vb)
{
	if (vb2_queue_allows_cache_hints(vb->vb2_queue))
		return;
	vb2_default_cache_hints(vb);
}

/**
 * vb2_prepare_buffer() - make a buffer ready to be handed to the driver
 * @vb:		a DEQUEUED or IN_REQUEST buffer that is not prepared.
 * @from_user:	take the memory description from user space through
 *		&vb2_buf_ops.fill_vb2_buffer; false when the core queues
 *		its own (read/write emulation) buffers.
 *
 * Acquires the memory, lets the driver check the buffer and syncs it for
 * the device. The buffer ends in the state it started in, prepared or not.
 *
 * Return: 0 or a negative error code.
 */
int vb2_prepare_buffer(struct vb2_buffer *vb, bool from_user)
{
	struct vb2_queue *q = vb->vb2_queue;
	enum vb2_buffer_state back = vb->state;
	int ret;

	/* After vb2_queue_error() the queue takes nothing until cancelled. */
	if (q->error)
		return -EIO;
	vb2_forget_cache_hints(vb);

	/* In the state user space left it, as in 6.12: not PREPARING yet. */
	ret = vb2_out_validate(vb);
	if (ret) {
		vb2_dbg(q, 1, "buffer %u: buf_out_validate failed\n", vb->index);
		return ret;
	}
	vb2_set_state(vb, VB2_BUF_STATE_PREPARING);
	ret = vb2_acquire_planes(vb, from_user);
	if (ret)
		goto out;
	ret = q->ops->buf_prepare ? q->ops->buf_prepare(vb) : 0;
	if (ret) {
		vb2_dbg(q, 1, "buffer %u: buf_prepare failed\n", vb->index);
		vb2_drop_user_memory(vb);
		goto out;
	}
	vb2_sync_for_device(vb);
	vb->prepared = 1;
out:
	vb2_set_state(vb, back);
	return ret;
}

int vb2_core_prepare_buf(struct vb2_queue *q, struct vb2_buffer *vb, void *pb)
{
	int ret;

	if (vb2_fileio_is_active(q))
		return -EBUSY;
	if (vb->state != VB2_BUF_STATE_DEQUEUED) {
		vb2_dbg(q, 1, "buffer %u is %s\n", vb->index,
			vb2_state_name(vb->state));
		return -EINVAL;
	}
	if (vb->prepared) {
		vb2_dbg(q, 1, "buffer %u is already prepared\n", vb->index);
		return -EINVAL;
	}

	ret = vb2_prepare_buffer(vb, true);
	if (ret)
		return ret;
	vb2_fill_user_buffer(vb, pb);
	vb2_dbg(q, 2, "buffer %u prepared\n", vb->index);
	return 0;
}
EXPORT_SYMBOL_GPL(vb2_core_prepare_buf);

void vb2_core_querybuf(struct vb2_queue *q, struct vb2_buffer *vb, void *pb)
{
	vb2_fill_user_buffer(vb, pb);
}
EXPORT_SYMBOL_GPL(vb2_core_querybuf);

/* Streaming */

/* Inline: once per QBUF while streaming. */
static __always_inline void vb2_give_to_driver(struct vb2_buffer *vb)
{
	struct vb2_queue *q = vb->vb2_queue;

	vb2_set_state(vb, VB2_BUF_STATE_ACTIVE);
	atomic_inc(&q->owned_by_drv_count);
	vb2_stats_handed(vb);
	vb2_fence_handing_over(vb);
	trace_vb2_buf_queue(q, vb);
	q->ops->buf_queue(vb);
}

/*
 * Return the buffers a driver failed to give back, in @state. Only
 * reached when a driver is buggy, hence the warning, which names the
 * driver (by its buf_queue), the queue and each buffer it kept.
 */
static void vb2_reclaim_buffers(struct vb2_queue *q,
				enum vb2_buffer_state state)
{
	struct vb2_buffer *vb;
	int kept = atomic_read(&q->owned_by_drv_count);

	WARN(1, "vb2: [%s] driver %ps kept %d buffer(s) after %s; reclaiming them\n",
	     q->name, q->ops->buf_queue, kept,
	     state == VB2_BUF_STATE_QUEUED ? "a failed start_streaming" :
					     "stop_streaming");
	list_for_each_entry(vb, &q->queued_list, queued_entry) {
		if (vb->state != VB2_BUF_STATE_ACTIVE)
			continue;
		pr_warn("vb2: [%s] buffer %u: %s, with the driver, reclaimed as %s\n",
			q->name, vb->index, vb2_state_name(vb->state),
			vb2_state_name(state));
		vb2_buffer_done(vb, state);
	}
	atomic_set(&q->owned_by_drv_count, 0);
	vb2_stats_reclaimed(q, kept);
}

static int vb2_start_streaming(struct vb2_queue *q)
{
	struct vb2_buffer *vb;
	int ret;

	/* The driver may complete a buffer from buf_queue: no list changes. */
	list_for_each_entry(vb, &q->queued_list, queued_entry)
		if (vb->state == VB2_BUF_STATE_QUEUED)
			vb2_give_to_driver(vb);

	q->start_streaming_called = 1;
	ret = 0;
	if (q->ops->start_streaming)
		ret = q->ops->start_streaming(q,
				atomic_read(&q->owned_by_drv_count));
	if (!ret)
		return 0;

	q->start_streaming_called = 0;
	vb2_dbg(q, 1, "start_streaming failed: %d\n", ret);
	/* The driver should have returned its buffers as QUEUED. */
	if (atomic_read(&q->owned_by_drv_count))
		vb2_reclaim_buffers(q, VB2_BUF_STATE_QUEUED);
	return ret;
}

/*
 * Undo vb2_enqueue_buffer() after a deferred start_streaming failed: the
 * driver returned every buffer as QUEUED, so @vb goes back to user space
 * in @back (DEQUEUED: a start is deferred only with min_queued_buffers,
 * which queues with requests cannot have), still prepared, and QBUF may be
 * retried.
 */
static void vb2_dequeue_unstarted(struct vb2_buffer *vb,
				  enum vb2_buffer_state back)
{
	struct vb2_queue *q = vb->vb2_queue;

	list_del_init(&vb->queued_entry);
	q->queued_count--;
	vb2_set_state(vb, back);
}

/**
 * vb2_enqueue_buffer() - queue a prepared buffer
 * @q:		the queue.
 * @vb:		a prepared DEQUEUED or IN_REQUEST buffer.
 * @pb:		the user's buffer structure, or NULL.
 *
 * Return: 0, or the error of a deferred start_streaming; the buffer is
 * then back in the state it came in, as if it had never been queued.
 */
int vb2_enqueue_buffer(struct vb2_queue *q, struct vb2_buffer *vb, void *pb)
{
	enum vb2_buffer_state back = vb->state;
	int ret;

	/* Prepared earlier, its memory may have gone back to the CPU since. */
	vb2_sync_for_device(vb);
	list_add_tail(&vb->queued_entry, &q->queued_list);
	q->queued_count++;
	q->waiting_for_buffers = 0;
	vb2_set_state(vb, VB2_BUF_STATE_QUEUED);
	vb2_stats_queued(q);
	vb2_copy_timestamp(vb, pb);
	trace_vb2_qbuf(q, vb);

	if (q->start_streaming_called)
		vb2_give_to_driver(vb);
	vb2_fill_user_buffer(vb, pb);
	vb2_dbg(q, 2, "buffer %u queued\n", vb->index);

	if (!q->streaming || q->start_streaming_called ||
	    q->queued_count < q->min_queued_buffers)
		return 0;
	ret = vb2_start_streaming(q);
	if (ret)
		vb2_dequeue_unstarted(vb, back);
	return ret;
}

/**
 * __vb2_core_qbuf() - queue a DEQUEUED buffer without a request
 * @q:		the queue.
 * @vb:		the buffer.
 * @pb:		the user's buffer structure, or NULL for the core's own use.
 *
 * Return: 0 or a negative error code.
 */
int __vb2_core_qbuf(struct vb2_queue *q, struct vb2_buffer *vb, void *pb)
{
	int ret;

	if (vb->state != VB2_BUF_STATE_DEQUEUED) {
		vb2_dbg(q, 1, "buffer %u is %s\n", vb->index,
			vb2_state_name(vb->state));
		return -EINVAL;
	}
	if (!vb->prepared) {
		ret = vb2_prepare_buffer(vb, !!pb);
		if (ret)
			return ret;
	}
	q->uses_qbuf = 1;
	return vb2_enqueue_buffer(q, vb, pb);
}

int vb2_core_qbuf(struct vb2_queue *q, struct vb2_buffer *vb, void *pb,
		  struct media_request *req)
{
	int ret;

	if (vb2_fileio_is_active(q))
		return -EBUSY;
	if (q->error) {
		vb2_dbg(q, 1, "queue in error state\n");
		return -EIO;
	}
	if (req ? !q->supports_requests : q->requires_requests) {
		vb2_dbg(q, 1, "requests %s\n", req ? "not supported" : "required");
		return -EBADR;
	}
	if (req ? q->uses_qbuf : q->uses_requests) {
		vb2_dbg(q, 1, "cannot mix queueing with and without requests\n");
		return -EBUSY;
	}
	if (!req)
		return __vb2_core_qbuf(q, vb, pb);

	if (vb->state != VB2_BUF_STATE_DEQUEUED) {
		vb2_dbg(q, 1, "buffer %u is %s\n", vb->index,
			vb2_state_name(vb->state));
		return -EINVAL;
	}
	ret = vb2_request_bind(q, vb, req);
	if (ret)
		return ret;
	vb2_copy_timestamp(vb, pb);
	vb2_fill_user_buffer(vb, pb);
	vb2_dbg(q, 2, "buffer %u bound to a request\n", vb->index);
	return 0;
}
EXPORT_SYMBOL_GPL(vb2_core_qbuf);

/*
 * What ends a DQBUF sleep. coda and amphion set last_buffer_dequeued and
 * wake done_wq themselves when a drain ends without a buffer to flag: the
 * sleeper then gets -EPIPE instead of sleeping on.
 */
static bool vb2_done_or_stopped(struct vb2_queue *q)
{
	return !list_empty(&q->done_list) || !q->streaming || q->error ||
	       q->last_buffer_dequeued;
}

/*
 * Why DQBUF cannot take a buffer right now: -EAGAIN if it only has to
 * wait for the driver, another error if waiting is pointless, 0 if a
 * buffer is ready.
 */
static int vb2_dqbuf_blocker(struct vb2_queue *q)
{
	if (!q->streaming)
		return -EINVAL;
	if (q->error)
		return -EIO;
	/* Capture after a LAST buffer: nothing more will come. */
	if (q->last_buffer_dequeued)
		return -EPIPE;
	return list_empty(&q->done_list) ? -EAGAIN : 0;
}

/*
 * Sleep (with the driver's lock released) until DQBUF can proceed. While
 * one task sleeps here, every other DQBUF is refused, also a non-blocking
 * one and one that finds a buffer ready, as in 6.12: the sleeper is owed
 * the next buffer.
 */
static int vb2_wait_for_done(struct vb2_queue *q, bool nonblocking)
{
	int ret;

	if (q->waiting_in_dqbuf) {
		vb2_dbg(q, 1, "another task waits in DQBUF\n");
		return -EBUSY;
	}
	while ((ret = vb2_dqbuf_blocker(q)) == -EAGAIN && !nonblocking) {
		q->waiting_in_dqbuf = 1;
		vb2_release_driver_lock(q);
		ret = wait_event_interruptible(q->done_wq,
					       vb2_done_or_stopped(q));
		vb2_retake_driver_lock(q);
		q->waiting_in_dqbuf = 0;
		if (ret)
			return ret;
	}
	if (ret)
		vb2_dbg(q, ret == -EAGAIN ? 3 : 1, "cannot dequeue: %d\n", ret);
	return ret;
}

/*
 * Take the first buffer off the done list, if @pb (the user's buffer
 * structure, may be NULL) can describe it; one pass under done_lock.
 */
static struct vb2_buffer *vb2_take_first_done(struct vb2_queue *q, void *pb)
{
	struct vb2_buffer *vb;
	unsigned long flags;
	int ret = 0;

	spin_lock_irqsave(&q->done_lock, flags);
	vb = list_first_entry_or_null(&q->done_list, struct vb2_buffer,
				      done_entry);
	if (vb && pb && q->buf_ops && q->buf_ops->verify_planes_array)
		ret = q->buf_ops->verify_planes_array(vb, pb);
	if (vb && !ret)
		list_del_init(&vb->done_entry);
	spin_unlock_irqrestore(&q->done_lock, flags);
	if (WARN_ON_ONCE(!vb))
		return ERR_PTR(-EIO);
	return ret ? ERR_PTR(ret) : vb;
}

/**
 * __vb2_core_dqbuf() - DQBUF without the read/write emulation check
 * @q:		the queue.
 * @pindex:	out: the index of the buffer, may be NULL.
 * @pb:		the user's buffer structure, may be NULL.
 * @nonblocking: do not sleep.
 *
 * Return: 0 or a negative error code.
 */
int __vb2_core_dqbuf(struct vb2_queue *q, unsigned int *pindex, void *pb,
		     bool nonblocking)
{
	struct vb2_buffer *vb;
	bool had_request;
	int ret;

	ret = vb2_wait_for_done(q, nonblocking);
	if (ret)
		return ret;

	/* Only holders of the queue lock take buffers off the done list. */
	vb = vb2_take_first_done(q, pb);
	if (IS_ERR(vb))
		return PTR_ERR(vb);

	vb2_unprepare_buffer(vb);
	list_del_init(&vb->queued_entry);
	q->queued_count--;
	vb2_stats_dequeued(q);
	trace_vb2_dqbuf(q, vb);

	if (pindex)
		*pindex = vb->index;
	vb2_fill_user_buffer(vb, pb);

	vb2_set_state(vb, VB2_BUF_STATE_DEQUEUED);
	had_request = vb->request;
	vb2_request_detach(vb);
	vb2_request_put(vb);
	/*
	 * Back with user space: the subsystem forgets the request fd, which
	 * only a buffer queued in a request has.
	 */
	if (had_request)
		vb2_init_buffer(vb);
	vb2_dbg(q, 2, "buffer %u dequeued\n", vb->index);
	return 0;
}

int vb2_core_dqbuf(struct vb2_queue *q, unsigned int *pindex, void *pb,
		   bool nonblocking)
{
	if (vb2_fileio_is_active(q))
		return -EBUSY;
	return __vb2_core_dqbuf(q, pindex, pb, nonblocking);
}
EXPORT_SYMBOL_GPL(vb2_core_dqbuf);

/**
 * __vb2_core_streamon() - STREAMON without the type and emulation checks
 * @q:		the queue.
 *
 * Return: 0 or a negative error code.
 */
int __vb2_core_streamon(struct vb2_queue *q)
{
	unsigned int num = vb2_get_num_buffers(q);
	int ret;

	if (q->streaming)
		return 0;
	if (!num || num < q->min_queued_buffers) {
		vb2_dbg(q, 1, "%u buffers allocated, %u needed\n", num,
			max(q->min_queued_buffers, 1U));
		return -EINVAL;
	}

	ret = q->ops->prepare_streaming ? q->ops->prepare_streaming(q) : 0;
	if (ret)
		return ret;
	vb2_stats_reset(q);

	/*
	 * Drivers test vb2_is_streaming() in buf_queue to decide whether to
	 * start the hardware themselves: it stays false until start_streaming
	 * has succeeded, or until STREAMON returns if the start is deferred.
	 */
	if (q->queued_count >= q->min_queued_buffers) {
		ret = vb2_start_streaming(q);
		if (ret) {
			/* The buffers stay queued: STREAMON may be retried. */
			if (q->ops->unprepare_streaming)
				q->ops->unprepare_streaming(q);
			return ret;
		}
	}
	q->streaming = 1;
	vb2_dbg(q, 3, "streaming\n");
	return 0;
}

int vb2_core_streamon(struct vb2_queue *q, unsigned int type)
{
	if (vb2_fileio_is_active(q))
		return -EBUSY;
	if (type != q->type) {
		vb2_dbg(q, 1, "wrong buffer type %u\n", type);
		return -EINVAL;
	}
	return __vb2_core_streamon(q);
}
EXPORT_SYMBOL_GPL(vb2_core_streamon);

/* Return one buffer to DEQUEUED during a cancel. */
static void vb2_cancel_buffer(struct vb2_buffer *vb)
{
	bool was_queued = vb->state != VB2_BUF_STATE_DEQUEUED;

	vb2_request_complete_unused(vb);
	vb2_unprepare_buffer(vb);
	vb2_set_state(vb, VB2_BUF_STATE_DEQUEUED);
	vb2_request_detach(vb);
	vb2_request_put(vb);
	if (was_queued)
		vb2_init_buffer(vb);
	vb->copied_timestamp = 0;
}

/* The next stream may choose requests or not, and starts without error. */
static void vb2_clear_modes(struct vb2_queue *q)
{
	q->uses_qbuf = 0;
	q->uses_requests = 0;
	q->error = 0;
}

/**
 * vb2_queue_cancel() - stop the driver and return all buffers to user space
 * @q:		the queue.
 *
 * Used by STREAMOFF, REQBUFS and release. Buffers end up DEQUEUED and
 * unprepared, requests holding them are completed.
 */
void vb2_queue_cancel(struct vb2_queue *q)
{
	struct vb2_buffer *vb;
	unsigned long index, flags;

	if (q->start_streaming_called && q->ops->stop_streaming)
		q->ops->stop_streaming(q);
	if (q->streaming && q->ops->unprepare_streaming)
		q->ops->unprepare_streaming(q);
	if (atomic_read(&q->owned_by_drv_count))
		vb2_reclaim_buffers(q, VB2_BUF_STATE_ERROR);

	/* Forget the stream; the buffers are reset one by one below. */
	q->start_streaming_called = 0;
	q->streaming = 0;
	spin_lock_irqsave(&q->done_lock, flags);
	INIT_LIST_HEAD(&q->done_list);
	spin_unlock_irqrestore(&q->done_lock, flags);
	INIT_LIST_HEAD(&q->queued_list);
	q->queued_count = 0;
	/* Sleepers in DQBUF see !streaming and give up. */
	wake_up_all(&q->done_wq);
	vb2_clear_modes(q);

	/* Before any buffer leaves its request: see the request's objects. */
	vb2_for_each_buffer(q, index, vb)
		vb2_request_pick_completer(vb);
	vb2_for_each_buffer(q, index, vb)
		vb2_cancel_buffer(vb);
}

int vb2_core_streamoff(struct vb2_queue *q, unsigned int type)
{
	if (vb2_fileio_is_active(q))
		return -EBUSY;
	if (type != q->type) {
		vb2_dbg(q, 1, "wrong buffer type %u\n", type);
		return -EINVAL;
	}
	vb2_queue_cancel(q);
	q->waiting_for_buffers = !q->is_output;
	q->last_buffer_dequeued = 0;
	vb2_dbg(q, 3, "stream off\n");
	return 0;
}
EXPORT_SYMBOL_GPL(vb2_core_streamoff);

/* Completion: may run in interrupt context. */

/* What a driver may pass to vb2_buffer_done(). */
static bool vb2_is_return_state(enum vb2_buffer_state state)
{
	switch (state) {
	case VB2_BUF_STATE_DONE:
	case VB2_BUF_STATE_ERROR:
	case VB2_BUF_STATE_QUEUED:
		return true;
	default:
		return false;
	}
}

void vb2_buffer_done(struct vb2_buffer *vb, enum vb2_buffer_state state)
{
	struct vb2_queue *q = vb->vb2_queue;
	struct dma_fence *fence;
	unsigned long flags;
	bool finished;

	if (WARN_ONCE(vb->state != VB2_BUF_STATE_ACTIVE,
		      "vb2: [%s] buffer %u is %s, not with the driver\n",
		      q->name, vb->index, vb2_state_name(vb->state)))
		return;
	if (WARN_ONCE(!vb2_is_return_state(state),
		      "vb2: [%s] buffer %u returned as %s\n", q->name,
		      vb->index, vb2_state_name(state)))
		state = VB2_BUF_STATE_ERROR;
	finished = state != VB2_BUF_STATE_QUEUED;

	vb2_dbg(q, 4, "buffer %u: %s\n", vb->index, vb2_state_name(state));
	if (finished)
		vb2_sync_for_cpu(vb);
	trace_vb2_buf_done(q, vb);
	/* Taken while the driver still owns the buffer, signalled once on the done list. */
	fence = vb2_fence_take(vb);

	spin_lock_irqsave(&q->done_lock, flags);
	vb2_set_state(vb, state);
	vb2_stats_done(vb, state);
	if (finished) {
		list_add_tail(&vb->done_entry, &q->done_list);
		/* Before DQBUF can see it: the request completes here. */
		vb2_request_detach(vb);
	}
	atomic_dec(&q->owned_by_drv_count);
	spin_unlock_irqrestore(&q->done_lock, flags);
	vb2_fence_signal(fence, state);

	/*
	 * DQBUF, poll() and vb2_wait_for_all_buffers() sleep here. Each joins
	 * done_wq before it checks its condition (poll() and the mem2mem
	 * helpers read the done list under done_lock, waiters check after
	 * set_current_state()); the full barrier of wq_has_sleeper() orders
	 * the updates above against that. So the waitqueue lock is taken
	 * only when someone is queued, not for every buffer of a stream
	 * that nobody sleeps on.
	 */
	if (wq_has_sleeper(&q->done_wq))
		wake_up(&q->done_wq);
}
EXPORT_SYMBOL_GPL(vb2_buffer_done);

void vb2_discard_done(struct vb2_queue *q)
{
	struct vb2_buffer *vb;
	unsigned long flags;

	/* The data predates a suspend: fail every buffer still waiting. */
	spin_lock_irqsave(&q->done_lock, flags);
	list_for_each_entry(vb, &q->done_list, done_entry) {
		if (vb->state == VB2_BUF_STATE_DONE)
			vb2_set_state(vb, VB2_BUF_STATE_ERROR);
	}
	spin_unlock_irqrestore(&q->done_lock, flags);
}
EXPORT_SYMBOL_GPL(vb2_discard_done);

int vb2_wait_for_all_buffers(struct vb2_queue *q)
{
	if (!vb2_is_streaming(q))
		return -EINVAL;
	/* Only a started driver owns buffers; never sleeps on a stopped one. */
	if (vb2_start_streaming_called(q))
		wait_event(q->done_wq, atomic_read(&q->owned_by_drv_count) == 0);
	return 0;
}
EXPORT_SYMBOL_GPL(vb2_wait_for_all_buffers);

void vb2_queue_error(struct vb2_queue *q)
{
	q->error = 1;
	wake_up_all(&q->done_wq);
}
EXPORT_SYMBOL_GPL(vb2_queue_error);

/* poll() */

static __poll_t vb2_data_events(struct vb2_queue *q)
{
	return q->is_output ? EPOLLOUT | EPOLLWRNORM : EPOLLIN | EPOLLRDNORM;
}

/*
 * A queue without buffers that offers read()/write() starts the emulation
 * on poll(), as the first read() or write() would.
 */
static __poll_t vb2_poll_start_fileio(struct vb2_queue *q)
{
	bool read = !q->is_output;

	if (!(q->io_modes & (read ? VB2_READ : VB2_WRITE)))
		return 0;
	if (vb2_fileio_start(q, read))
		return EPOLLERR;
	/* Every buffer of a fresh write() emulation is free to be filled. */
	return read ? 0 : vb2_data_events(q);
}

__poll_t vb2_core_poll(struct vb2_queue *q, struct file *file,
		       struct poll_table_struct *wait)
{
	__poll_t wanted = poll_requested_events(wait) & vb2_data_events(q);
	unsigned long flags;
	__poll_t events;
	bool done;

	/*
	 * Register even when no data event is asked for: epoll may add the
	 * file with an empty mask and ask for EPOLLIN later (EPOLL_CTL_MOD),
	 * without calling poll_wait() again.
	 */
	poll_wait(file, &q->done_wq, wait);
	if (!wanted)
		return 0;

	if (!vb2_get_num_buffers(q) && !vb2_fileio_is_active(q)) {
		events = vb2_poll_start_fileio(q);
		if (events)
			return events;
	}

	if (!q->streaming || q->error)
		return EPOLLERR;
	if (q->quirk_poll_must_check_waiting_for_buffers &&
	    q->waiting_for_buffers && !q->is_output)
		return EPOLLERR;

	/* write() may go on while the emulation has unqueued buffers. */
	if (q->is_output && vb2_fileio_is_active(q) &&
	    q->queued_count < vb2_get_num_buffers(q))
		return vb2_data_events(q);

	/* After the LAST buffer, DQBUF fails at once with -EPIPE. */
	spin_lock_irqsave(&q->done_lock, flags);
	done = !list_empty(&q->done_list);
	spin_unlock_irqrestore(&q->done_lock, flags);
	if (done || q->last_buffer_dequeued)
		return vb2_data_events(q);
	return 0;
}
EXPORT_SYMBOL_GPL(vb2_core_poll);

MODULE_DESCRIPTION("videobuf2: buffer queues for media drivers");
MODULE_LICENSE("GPL");
MODULE_IMPORT_NS(DMA_BUF);
