// SPDX-License-Identifier: GPL-2.0
/*
 * videobuf2 core: implicit write fences on the dma-bufs of capture buffers
 * (CONFIG_VIDEOBUF2_IMPLICIT_SYNC). The functions are vb2_fence_*: "sync"
 * in videobuf2's names means cache maintenance (vb2_sync_for_cpu()).
 */

#include <linux/dma-buf.h>
#include <linux/dma-fence.h>
#include <linux/dma-resv.h>
#include <linux/fs.h>
#include <linux/hashtable.h>
#include <linux/list.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/string.h>

#include <media/videobuf2-core.h>

#include "videobuf2-internal.h"

/**
 * DOC: implicit synchronisation
 *
 * Importers of a dma-buf that follow implicit synchronisation (compositors,
 * GPU drivers, poll() and DMA_BUF_IOCTL_EXPORT_SYNC_FILE on the dma-buf)
 * look at the fences in its reservation object to know when its contents
 * are ready. With this option, a capture buffer that goes to the driver
 * puts one write fence into the reservation object of every dma-buf that
 * holds its memory: each one exported from it with VIDIOC_EXPBUF that is
 * still open, and each one user space imported into it (DMABUF memory).
 * vb2_buffer_done() signals the fence: without error for DONE, with -EIO
 * for ERROR and with -ECANCELED for a buffer the driver gives back QUEUED
 * (it will get a new fence when it goes to the driver again). Every buffer
 * the driver got comes back through vb2_buffer_done(), also when the queue
 * is cancelled (the core reclaims what a driver keeps), so no fence is left
 * unsignalled.
 *
 * What is not done: no fence is taken from user space (no in-fences at
 * QBUF), output queues put no read fences, and no uAPI is added. Buffers
 * that are neither exported nor imported get no fence: an MMAP-only
 * application pays a list check per buffer.
 *
 * The dma-fence rules: the fence is allocated and the reservation slots
 * reserved in process context, with the reservation lock held, right
 * before buf_queue (in QBUF, STREAMON or a request's queueing, all under
 * the queue lock; the queue lock is taken before reservation locks,
 * never after). The signalling path, vb2_buffer_done(), may run in
 * interrupt context: it allocates nothing, takes only spinlocks, and is
 * annotated with dma_fence_begin_signalling().
 *
 * Exported dma-bufs are tracked without a reference, so that they go
 * away when user space and every importer let go, as without this option:
 * each has an entry in &vb2_buffer.exports and in a table keyed by the
 * dma-buf, which the allocator's dma-buf release op removes
 * (vb2_fence_export_released(), called by the shared exporter of
 * videobuf2-memops.c; a driver's own allocator gets no fences on its
 * exports). Handing over takes a reference on each export whose file is
 * still open, under vb2_exports_lock; an entry still in the table means the dma-buf and its
 * file are not freed yet (its release op has not finished).
 */

/**
 * struct vb2_export - a dma-buf exported from a buffer, not referenced
 * @entry:	link in &vb2_buffer.exports.
 * @node:	link in vb2_exports, keyed by @dbuf.
 * @dbuf:	the dma-buf.
 */
struct vb2_export {
	struct list_head	entry;
	struct hlist_node	node;
	struct dma_buf		*dbuf;
};

/* Every tracked export, by dma-buf; protects the entries and the lists. */
static DEFINE_HASHTABLE(vb2_exports, 6);
static DEFINE_SPINLOCK(vb2_exports_lock);

static const char *vb2_fence_driver_name(struct dma_fence *fence)
{
	return "videobuf2";
}

static const char *vb2_fence_timeline_name(struct dma_fence *fence)
{
	return "vb2-capture";
}

static const struct dma_fence_ops vb2_fence_ops = {
	.get_driver_name	= vb2_fence_driver_name,
	.get_timeline_name	= vb2_fence_timeline_name,
};

void vb2_fence_queue_init(struct vb2_queue *q)
{
	q->fence_context = dma_fence_context_alloc(1);
	q->fence_seqno = 0;
	spin_lock_init(&q->fence_lock);
}

void vb2_fence_buffer_init(struct vb2_buffer *vb)
{
	vb->fence = NULL;
	INIT_LIST_HEAD(&vb->exports);
}

/* Under vb2_exports_lock. */
static void vb2_export_drop(struct vb2_export *e)
{
	list_del(&e->entry);
	hash_del(&e->node);
	kfree(e);
}

/**
 * vb2_fence_export_released() - forget an exported dma-buf being freed
 * @dbuf:	the dma-buf, from the exporter's &dma_buf_ops.release.
 */
void vb2_fence_export_released(struct dma_buf *dbuf)
{
	struct vb2_export *e;
	struct hlist_node *next;

	spin_lock(&vb2_exports_lock);
	hash_for_each_possible_safe(vb2_exports, e, next, node,
				    (unsigned long)dbuf)
		if (e->dbuf == dbuf)
			vb2_export_drop(e);
	spin_unlock(&vb2_exports_lock);
}
EXPORT_SYMBOL_NS_GPL(vb2_fence_export_released, VIDEOBUF2_PRIVATE);

/*
 * Only the allocators of this directory tell when their dma-bufs go (see
 * vb2_fence_export_released()); a dma-buf of another exporter could be
 * freed under our entry.
 */
static bool vb2_fence_tracks(const struct dma_buf *dbuf)
{
	static const char * const ours[] = {
		"videobuf2_vmalloc", "videobuf2_dma_contig", "videobuf2_dma_sg",
	};
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(ours); i++)
		if (dbuf->exp_name && !strcmp(dbuf->exp_name, ours[i]))
			return true;
	return false;
}

/**
 * vb2_fence_exported() - remember a dma-buf exported from a buffer
 * @vb:		the buffer.
 * @dbuf:	the new dma-buf, on which user space got a descriptor.
 *
 * Under the queue lock. Without memory the dma-buf is simply not fenced.
 */
void vb2_fence_exported(struct vb2_buffer *vb, struct dma_buf *dbuf)
{
	struct vb2_export *e;

	if (!vb2_fence_tracks(dbuf))
		return;
	e = kmalloc(sizeof(*e), GFP_KERNEL);
	if (!e)
		return;
	e->dbuf = dbuf;
	spin_lock(&vb2_exports_lock);
	list_add_tail(&e->entry, &vb->exports);
	hash_add(vb2_exports, &e->node, (unsigned long)dbuf);
	spin_unlock(&vb2_exports_lock);
}

/* Put @fence into @dbuf's reservation object as its writer. */
static void vb2_fence_dmabuf(struct dma_buf *dbuf, struct dma_fence *fence)
{
	struct dma_resv *resv = dbuf->resv;

	dma_resv_lock(resv, NULL);
	if (!dma_resv_reserve_fences(resv, 1))
		dma_resv_add_fence(resv, fence, DMA_RESV_USAGE_WRITE);
	dma_resv_unlock(resv);
}

static bool vb2_fence_wanted(struct vb2_buffer *vb)
{
	return !vb->vb2_queue->is_output &&
	       (vb->memory == VB2_MEMORY_DMABUF || !list_empty(&vb->exports));
}

/*
 * References on the exports of @vb that are still open, in @held (at most
 * @max); the rest is counted in the return value so that the caller can
 * try again with more room.
 */
static unsigned int vb2_fence_hold_exports(struct vb2_buffer *vb,
					   struct dma_buf **held,
					   unsigned int max)
{
	struct vb2_export *e;
	unsigned int n = 0;

	spin_lock(&vb2_exports_lock);
	list_for_each_entry(e, &vb->exports, entry) {
		if (n < max) {
			if (!atomic_long_inc_not_zero(&e->dbuf->file->f_count))
				continue;
			held[n] = e->dbuf;
		}
		n++;
	}
	spin_unlock(&vb2_exports_lock);
	return n;
}

/* Fence what vb2_fence_hold_exports() held, and let go of it. */
static void vb2_fence_and_drop(struct dma_buf **held, unsigned int n,
			       struct dma_fence *fence)
{
	while (n--) {
		vb2_fence_dmabuf(held[n], fence);
		dma_buf_put(held[n]);
	}
}

/**
 * vb2_fence_handing_over() - fence a capture buffer's dma-bufs
 * @vb:		a buffer about to go to the driver (process context, under
 *		the queue lock).
 */
void vb2_fence_handing_over(struct vb2_buffer *vb)
{
	struct vb2_queue *q = vb->vb2_queue;
	struct dma_buf *small[4], **held = small;
	unsigned int i, n, max = ARRAY_SIZE(small);
	struct dma_fence *fence;

	if (WARN_ON_ONCE(vb->fence) || !vb2_fence_wanted(vb))
		return;
	fence = kzalloc(sizeof(*fence), GFP_KERNEL);
	if (!fence)
		return;
	dma_fence_init(fence, &vb2_fence_ops, &q->fence_lock, q->fence_context,
		       ++q->fence_seqno);
	n = vb2_fence_hold_exports(vb, held, max);
	if (n > max) {
		/* Many exports of one buffer: hold them in two goes. */
		vb2_fence_and_drop(held, max, fence);
		held = kmalloc_array(n, sizeof(*held), GFP_KERNEL);
		if (held) {
			max = n;
			n = min(vb2_fence_hold_exports(vb, held, max), max);
			vb2_fence_and_drop(held, n, fence);
			kfree(held);
		}
	} else {
		vb2_fence_and_drop(held, n, fence);
	}
	if (vb->memory == VB2_MEMORY_DMABUF) {
		for (i = 0; i < vb->num_planes; i++)
			if (vb->planes[i].dbuf && !vb->planes[i].dbuf_duplicated)
				vb2_fence_dmabuf(vb->planes[i].dbuf, fence);
	}
	vb->fence = fence;
}

/**
 * vb2_fence_take() - take the fence of a buffer the driver gives back
 * @vb:		the buffer, still with the driver.
 *
 * Return: the fence, or NULL; signal it with vb2_fence_signal() once the
 * buffer can be dequeued.
 */
struct dma_fence *vb2_fence_take(struct vb2_buffer *vb)
{
	struct dma_fence *fence = vb->fence;

	vb->fence = NULL;
	return fence;
}

/**
 * vb2_fence_signal() - signal a fence taken from a buffer
 * @fence:	the fence, or NULL.
 * @state:	the state the buffer came back in: DONE, ERROR or QUEUED.
 *
 * Any context; allocates nothing.
 */
void vb2_fence_signal(struct dma_fence *fence, enum vb2_buffer_state state)
{
	bool cookie;

	if (!fence)
		return;
	cookie = dma_fence_begin_signalling();
	if (state == VB2_BUF_STATE_ERROR)
		dma_fence_set_error(fence, -EIO);
	else if (state == VB2_BUF_STATE_QUEUED)
		dma_fence_set_error(fence, -ECANCELED);
	dma_fence_signal(fence);
	dma_fence_end_signalling(cookie);
	dma_fence_put(fence);
}

/**
 * vb2_fence_buffer_free() - forget a buffer's exports, as it is freed
 * @vb:		the buffer.
 *
 * The dma-bufs may live on; their release no longer finds an entry.
 */
void vb2_fence_buffer_free(struct vb2_buffer *vb)
{
	struct vb2_export *e, *next;

	spin_lock(&vb2_exports_lock);
	list_for_each_entry_safe(e, next, &vb->exports, entry)
		vb2_export_drop(e);
	spin_unlock(&vb2_exports_lock);
}
