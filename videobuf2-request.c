// SPDX-License-Identifier: GPL-2.0
/*
 * videobuf2 core: buffers as objects of media requests.
 */

#include <linux/spinlock.h>

#include <media/media-request.h>
#include <media/videobuf2-core.h>

#include "videobuf2-internal.h"

/**
 * DOC: buffers in media requests
 *
 * QBUF with a request binds &vb2_buffer.req_obj to the request and moves
 * the buffer to IN_REQUEST; nothing else happens until the request is
 * queued. The buffer then holds two references: the binding itself (the
 * object's kref, dropped by whoever unbinds it) and &vb2_buffer.request
 * (a reference on the request, dropped when the buffer is dequeued or
 * cancelled). The second one guarantees that completing the request from
 * vb2_buffer_done(), in interrupt context, never frees it.
 *
 * MEDIA_REQUEST_IOC_QUEUE validates the request: the subsystem calls the
 * prepare op of each object (which prepares the buffer, under the queue
 * lock, unless PREPARE_BUF or an earlier validation did) and unprepare on
 * failure, which leaves the buffer prepared. It then calls the queue op,
 * which queues the buffer as QBUF would. The request completes when the
 * driver returns the buffer: vb2_buffer_done() unbinds it.
 *
 * A request that is never queued is released by the request core; the
 * release op returns the buffer to DEQUEUED. Cancelling the queue unbinds
 * every buffer and lets the driver complete the rest of a queued request
 * through &vb2_ops.buf_request_complete.
 */

static const struct media_request_object_ops vb2_core_req_ops;

static struct vb2_buffer *vb2_obj_to_buffer(struct media_request_object *obj)
{
	return container_of(obj, struct vb2_buffer, req_obj);
}

static void vb2_obj_lock(struct vb2_queue *q)
{
	if (q->lock)
		mutex_lock(q->lock);
}

static void vb2_obj_unlock(struct vb2_queue *q)
{
	if (q->lock)
		mutex_unlock(q->lock);
}

static int vb2_obj_prepare(struct media_request_object *obj)
{
	struct vb2_buffer *vb = vb2_obj_to_buffer(obj);
	struct vb2_queue *q = vb->vb2_queue;
	int ret = 0;

	if (WARN_ON(vb->state != VB2_BUF_STATE_IN_REQUEST))
		return -EINVAL;
	vb2_obj_lock(q);
	if (!vb->prepared)
		ret = vb2_prepare_buffer(vb, true);
	vb2_obj_unlock(q);
	return ret;
}

static void vb2_obj_unprepare(struct media_request_object *obj)
{
	struct vb2_buffer *vb = vb2_obj_to_buffer(obj);
	struct vb2_queue *q = vb->vb2_queue;

	vb2_obj_lock(q);
	WARN_ON(vb->state != VB2_BUF_STATE_IN_REQUEST);
	/*
	 * Another object failed validation. The buffer stays prepared, no
	 * buf_finish, as in 6.12: queueing the request again does not
	 * prepare it again. Its memory goes back to the CPU meanwhile;
	 * vb2_enqueue_buffer() syncs it for the device again.
	 */
	vb2_sync_for_cpu(vb);
	vb2_obj_unlock(q);
}

static void vb2_obj_queue(struct media_request_object *obj)
{
	struct vb2_buffer *vb = vb2_obj_to_buffer(obj);
	struct vb2_queue *q = vb->vb2_queue;
	int ret;

	vb2_obj_lock(q);
	if (!WARN_ON(vb->state != VB2_BUF_STATE_IN_REQUEST || !vb->prepared)) {
		/*
		 * Cannot fail: without min_queued_buffers (refused with
		 * requests) STREAMON starts the driver, never a QBUF.
		 */
		ret = vb2_enqueue_buffer(q, vb, NULL);
		if (ret)
			vb2_dbg(q, 1, "buffer %u: start_streaming failed: %d\n",
				vb->index, ret);
	}
	vb2_obj_unlock(q);
}

/*
 * The request drops a buffer it never queued: MEDIA_REQUEST_IOC_REINIT, or
 * the last close of a request that was not queued. The request core holds
 * none of the queue's locks here, so both ops take the queue lock: without
 * it, REMOVE_BUFS could free the buffer the moment it reads DEQUEUED, and a
 * QBUF into another request could bind it before its reference on this
 * request is dropped (the put would then drop the new one).
 *
 * Only these two paths find the buffer IN_REQUEST: the core's own unbinds
 * (DQBUF, cancel, vb2_buffer_done()) change the state first, and they may
 * run under the queue lock or in interrupt context. IN_REQUEST cannot
 * change under the request core's feet: leaving it needs the queue lock
 * and, outside a request being queued, &media_device.req_queue_mutex,
 * which MEDIA_REQUEST_IOC_REINIT holds.
 */
static void vb2_obj_unbind(struct media_request_object *obj)
{
	struct vb2_buffer *vb = vb2_obj_to_buffer(obj);
	struct vb2_queue *q = vb->vb2_queue;

	if (READ_ONCE(vb->state) != VB2_BUF_STATE_IN_REQUEST)
		return;
	vb2_obj_lock(q);
	vb2_init_buffer(vb);
	vb2_obj_unlock(q);
}

/* The last reference to the binding is gone. */
static void vb2_obj_release(struct media_request_object *obj)
{
	struct vb2_buffer *vb = vb2_obj_to_buffer(obj);
	struct vb2_queue *q = vb->vb2_queue;

	if (READ_ONCE(vb->state) != VB2_BUF_STATE_IN_REQUEST)
		return;
	vb2_obj_lock(q);
	vb2_set_state(vb, VB2_BUF_STATE_DEQUEUED);
	/* Never the last reference: the REINIT caller holds one. */
	vb2_request_put(vb);
	vb2_obj_unlock(q);
}

/* Called by the request core in this order, release last. */
static const struct media_request_object_ops vb2_core_req_ops = {
	.prepare	= vb2_obj_prepare,
	.unprepare	= vb2_obj_unprepare,
	.queue		= vb2_obj_queue,
	.unbind		= vb2_obj_unbind,
	.release	= vb2_obj_release,
};

bool vb2_request_object_is_buffer(struct media_request_object *obj)
{
	return obj->ops == &vb2_core_req_ops;
}
EXPORT_SYMBOL_GPL(vb2_request_object_is_buffer);

/**
 * vb2_request_bind() - QBUF into a request
 * @q:		the queue, which supports requests.
 * @vb:		a DEQUEUED buffer.
 * @req:	the request, referenced by the caller.
 *
 * Return: 0, -EBUSY if the request cannot be changed (it is queued), or
 * the error of &vb2_ops.buf_out_validate (called unless the buffer is
 * prepared already).
 */
int vb2_request_bind(struct vb2_queue *q, struct vb2_buffer *vb,
		     struct media_request *req)
{
	int ret;

	/* A buffer PREPARE_BUF prepared was validated then, as 6.12 has it. */
	if (!vb->prepared) {
		ret = vb2_out_validate(vb);
		if (ret) {
			vb2_dbg(q, 1, "buffer %u: buf_out_validate failed\n",
				vb->index);
			return ret;
		}
	}

	media_request_object_init(&vb->req_obj);
	ret = media_request_lock_for_update(req);
	if (ret)
		return ret;
	/* In IN_REQUEST before the request can be validated. */
	vb2_set_state(vb, VB2_BUF_STATE_IN_REQUEST);
	ret = media_request_object_bind(req, &vb2_core_req_ops, q, true,
					&vb->req_obj);
	if (ret) {
		vb2_set_state(vb, VB2_BUF_STATE_DEQUEUED);
	} else {
		media_request_get(req);
		vb->request = req;
		q->uses_requests = 1;
	}
	media_request_unlock_for_update(req);
	return ret;
}

/*
 * A buffer of a queued request that never reached the driver: the request
 * must be completed without it.
 */
static bool vb2_request_unused(struct vb2_buffer *vb)
{
	struct media_request *req = vb->req_obj.req;
	unsigned long flags;
	bool queued;

	if (!req || (vb->state != VB2_BUF_STATE_IN_REQUEST &&
		     vb->state != VB2_BUF_STATE_QUEUED))
		return false;
	spin_lock_irqsave(&req->lock, flags);
	queued = req->state == MEDIA_REQUEST_STATE_QUEUED;
	spin_unlock_irqrestore(&req->lock, flags);
	return queued;
}

/* Is @vb the first object of its queue in its request's object list? */
static bool vb2_request_first_of_queue(struct vb2_buffer *vb)
{
	struct media_request *req = vb->req_obj.req;
	struct media_request_object *obj;
	unsigned long flags;
	bool first = false;

	spin_lock_irqsave(&req->lock, flags);
	list_for_each_entry(obj, &req->objects, list) {
		if (obj->ops == &vb2_core_req_ops && obj->priv == vb->vb2_queue) {
			first = obj == &vb->req_obj;
			break;
		}
	}
	spin_unlock_irqrestore(&req->lock, flags);
	return first;
}

/**
 * vb2_request_pick_completer() - choose the buffer that completes a request
 * @vb:		a buffer about to be cancelled; every buffer of its queue is
 *		still bound to its request.
 *
 * The driver's buf_request_complete marks the other objects of a request
 * (its controls) complete. It is called once per request and queue, for
 * the first buffer of the queue in the request: a second call would
 * complete the same control object again, which v4l2-ctrls warns about.
 */
void vb2_request_pick_completer(struct vb2_buffer *vb)
{
	vb->complete_request = vb2_request_unused(vb) &&
			       vb2_request_first_of_queue(vb);
}

/**
 * vb2_request_complete_unused() - let the driver complete a request whose
 *	buffer it will never see
 * @vb:		a buffer being cancelled, after vb2_request_pick_completer().
 */
void vb2_request_complete_unused(struct vb2_buffer *vb)
{
	if (!vb->complete_request)
		return;
	vb->complete_request = 0;
	if (vb->vb2_queue->ops->buf_request_complete)
		vb->vb2_queue->ops->buf_request_complete(vb);
}

/**
 * __vb2_request_detach() - unbind a buffer from its request
 * @vb:		the buffer, bound to a request (vb2_request_detach() checks).
 *
 * Safe in interrupt context; may complete the request. The buffer's own
 * reference on the request (&vb2_buffer.request) is kept.
 */
void __vb2_request_detach(struct vb2_buffer *vb)
{
	media_request_object_unbind(&vb->req_obj);
	media_request_object_put(&vb->req_obj);
}

/**
 * __vb2_request_put() - drop the buffer's reference on its request
 * @vb:		the buffer, no longer bound to the request, holding a
 *		reference (vb2_request_put() checks).
 */
void __vb2_request_put(struct vb2_buffer *vb)
{
	struct media_request *req = vb->request;

	vb->request = NULL;
	media_request_put(req);
}

unsigned int vb2_request_buffer_cnt(struct media_request *req)
{
	struct media_request_object *obj;
	unsigned int buffers = 0;
	unsigned long flags;

	spin_lock_irqsave(&req->lock, flags);
	list_for_each_entry(obj, &req->objects, list) {
		/* Buffers sit at the tail, behind controls and the like. */
		if (obj->ops == &vb2_core_req_ops)
			buffers++;
	}
	spin_unlock_irqrestore(&req->lock, flags);
	return buffers;
}
EXPORT_SYMBOL_GPL(vb2_request_buffer_cnt);
