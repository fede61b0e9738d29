// SPDX-License-Identifier: GPL-2.0
/*
 * videobuf2 core: creating and freeing buffers, the MMAP, USERPTR and
 * DMABUF memory models, mmap() and dma-buf export.
 */

#include <linux/bitmap.h>
#include <linux/dma-buf.h>
#include <linux/err.h>
#include <linux/fcntl.h>
#include <linux/mm.h>
#include <linux/slab.h>
#include <linux/videodev2.h>

#include <media/videobuf2-core.h>

#include "videobuf2-internal.h"

/**
 * DOC: lifetime of buffers and their memory
 *
 * A &struct vb2_buffer exists from VIDIOC_REQBUFS/CREATE_BUFS until
 * REQBUFS(0), REMOVE_BUFS or the release of the queue. It is reachable
 * through &vb2_queue.bufs, which changes only with both the queue lock and
 * &vb2_queue.mmap_lock held, so either lock keeps a looked-up buffer alive.
 *
 * The memory of a plane has a lifetime of its own, counted by the
 * allocator. MMAP memory is allocated with the buffer; every user mapping
 * (vb2_mmap()) and every exported dma-buf (vb2_core_expbuf()) takes a
 * reference of the allocator's, and freeing the buffer only drops the
 * queue's reference with &vb2_mem_ops.put. Memory that is still mapped
 * when its buffer is freed is thus orphaned, not freed: it goes with the
 * last munmap() or the last close() of the dma-buf.
 *
 * USERPTR memory is pinned (&vb2_mem_ops.get_userptr) when a buffer is
 * prepared with a new address or length and stays pinned across QBUF
 * cycles with the same ones; it is unpinned when user space passes a
 * different range or the buffer is freed.
 *
 * A DMABUF plane holds a reference on the imported dma-buf and a mapped
 * attachment from the moment it is prepared with a new file until another
 * file is passed or the buffer is freed; passing the same dma-buf again
 * reuses both. The mapping outlives DQBUF and STREAMOFF on purpose:
 * stateless decoders read the planes of reference frames that user space
 * holds (vb2_find_buffer()), and exporters that do not cache their
 * mappings would pay a map and an unmap per frame. Planes of one buffer
 * that share a dma-buf and an allocation device share the attachment too:
 * the later ones are marked &vb2_plane.dbuf_duplicated and own nothing.
 *
 * When buf_prepare refuses a USERPTR or DMABUF buffer, the memory it was
 * given is released (buf_cleanup first, if buf_init ran): the next QBUF
 * acquires it again and calls buf_init again.
 *
 * &vb2_buffer.copied_timestamp, which mem2mem drivers set on a capture
 * buffer to find it as a reference frame later, is cleared when the
 * buffer gets different USERPTR or DMABUF memory and when the queue is
 * cancelled; re-queueing the same memory keeps it.
 */

static struct device *vb2_plane_dev(struct vb2_queue *q, unsigned int plane)
{
	return q->alloc_devs[plane] ? : q->dev;
}

/* Memory model checks */

int vb2_check_memory(struct vb2_queue *q, enum vb2_memory memory)
{
	const struct vb2_mem_ops *ops = q->mem_ops;
	bool ok;

	switch (memory) {
	case VB2_MEMORY_MMAP:
		ok = (q->io_modes & VB2_MMAP) && ops->alloc && ops->put &&
		     ops->mmap;
		break;
	case VB2_MEMORY_USERPTR:
		ok = (q->io_modes & VB2_USERPTR) && ops->get_userptr &&
		     ops->put_userptr;
		break;
	case VB2_MEMORY_DMABUF:
		ok = (q->io_modes & VB2_DMABUF) && ops->attach_dmabuf &&
		     ops->detach_dmabuf && ops->map_dmabuf && ops->unmap_dmabuf;
		break;
	default:
		ok = false;
		break;
	}
	if (!ok)
		vb2_dbg(q, 1, "memory model %d not supported\n", memory);
	return ok ? 0 : -EINVAL;
}

int vb2_verify_memory_type(struct vb2_queue *q,
			   enum vb2_memory memory, unsigned int type)
{
	int ret = vb2_check_memory(q, memory);

	if (ret)
		return ret;
	if (type != q->type) {
		vb2_dbg(q, 1, "wrong buffer type %u\n", type);
		return -EINVAL;
	}
	/* Checked last: -EBUSY tells user space more than -EINVAL. */
	if (vb2_fileio_is_active(q)) {
		vb2_dbg(q, 1, "read/write emulation in progress\n");
		return -EBUSY;
	}
	return 0;
}
EXPORT_SYMBOL(vb2_verify_memory_type);

static bool vb2_wants_non_coherent(struct vb2_queue *q, enum vb2_memory memory,
				   unsigned int flags)
{
	return q->allow_cache_hints && memory == VB2_MEMORY_MMAP &&
	       (flags & V4L2_MEMORY_FLAG_NON_COHERENT);
}

/* Plane memory */

static void vb2_release_plane(struct vb2_buffer *vb, struct vb2_plane *p)
{
	struct vb2_queue *q = vb->vb2_queue;

	if (p->dbuf_duplicated) {
		p->dbuf_duplicated = false;
		p->dbuf = NULL;
		p->mem_priv = NULL;
		return;
	}
	if (p->mem_priv) {
		switch (vb->memory) {
		case VB2_MEMORY_MMAP:
			q->mem_ops->put(p->mem_priv);
			break;
		case VB2_MEMORY_USERPTR:
			q->mem_ops->put_userptr(p->mem_priv);
			break;
		case VB2_MEMORY_DMABUF:
			if (p->dbuf_mapped)
				q->mem_ops->unmap_dmabuf(p->mem_priv);
			q->mem_ops->detach_dmabuf(p->mem_priv);
			break;
		}
	}
	if (p->dbuf)
		dma_buf_put(p->dbuf);
	p->mem_priv = NULL;
	p->dbuf = NULL;
	p->dbuf_mapped = 0;
}

/* Drop all memory of a buffer, after buf_cleanup if buf_init ran. */
static void vb2_release_memory(struct vb2_buffer *vb)
{
	unsigned int i;

	if (vb->initialized) {
		if (vb->vb2_queue->ops->buf_cleanup)
			vb->vb2_queue->ops->buf_cleanup(vb);
		vb->initialized = 0;
	}
	for (i = 0; i < vb->num_planes; i++)
		vb2_release_plane(vb, &vb->planes[i]);
}

static int vb2_alloc_mmap_planes(struct vb2_buffer *vb)
{
	struct vb2_queue *q = vb->vb2_queue;
	unsigned int i;
	void *priv;

	for (i = 0; i < vb->num_planes; i++) {
		unsigned long size = PAGE_ALIGN(vb->planes[i].length);

		/* PAGE_ALIGN() wraps for lengths close to ULONG_MAX. */
		if (size < vb->planes[i].length)
			return -EINVAL;
		priv = q->mem_ops->alloc(vb, vb2_plane_dev(q, i), size);
		if (IS_ERR_OR_NULL(priv))
			return priv ? PTR_ERR(priv) : -ENOMEM;
		vb->planes[i].mem_priv = priv;
		vb->planes[i].m.offset = (vb->index << VB2_PLANE_INDEX_SHIFT) |
					 (i << PAGE_SHIFT);
	}
	return 0;
}

/* Buffer creation and destruction (queue lock and mmap_lock held) */

static void vb2_buffer_destroy(struct vb2_buffer *vb)
{
	vb2_release_memory(vb);
	vb2_fence_buffer_free(vb);
	/* vb2_find_buffer() may still look at it: see there. */
	kfree_rcu(vb, rcu);
}

static struct vb2_buffer *vb2_buffer_create(struct vb2_queue *q,
					    unsigned int index,
					    unsigned int num_planes,
					    const unsigned int sizes[])
{
	struct vb2_buffer *vb;
	unsigned int i;
	int ret;

	vb = kzalloc(q->buf_struct_size, GFP_KERNEL);
	if (!vb)
		return NULL;
	vb->vb2_queue = q;
	vb->index = index;
	vb->type = q->type;
	vb->memory = q->memory;
	vb->num_planes = num_planes;
	vb2_default_cache_hints(vb);
	vb->state = VB2_BUF_STATE_DEQUEUED;
	vb2_stats_state_changed(vb);
	vb2_fence_buffer_init(vb);
	INIT_LIST_HEAD(&vb->queued_entry);
	INIT_LIST_HEAD(&vb->done_entry);
	media_request_object_init(&vb->req_obj);
	for (i = 0; i < num_planes; i++) {
		vb->planes[i].length = sizes[i];
		vb->planes[i].min_length = sizes[i];
	}
	vb2_init_buffer(vb);

	if (vb->memory != VB2_MEMORY_MMAP)
		return vb;

	ret = vb2_alloc_mmap_planes(vb);
	if (ret) {
		vb2_dbg(q, 1, "buffer %u: memory setup failed: %d\n", index, ret);
		vb2_buffer_destroy(vb);
		return NULL;
	}
	return vb;
}

/* Make @vb part of the queue: vb2_get_buffer() finds it, it is counted. */
static void vb2_add_buffer(struct vb2_queue *q, struct vb2_buffer *vb)
{
	/* Set up before lockless walks (vb2_find_buffer()) can see it. */
	smp_store_release(&q->bufs[vb->index], vb);
	/* Lockless walks read the bitmap racily: see vb2_next_buffer(). */
	__set_bit(vb->index, q->bufs_bitmap);
	WRITE_ONCE(q->num_buffers, q->num_buffers + 1);
}

static void vb2_remove_buffer(struct vb2_queue *q, struct vb2_buffer *vb)
{
	WRITE_ONCE(q->bufs[vb->index], NULL);
	/* Read racily by lockless walks: see vb2_next_buffer(). */
	__clear_bit(vb->index, q->bufs_bitmap);
	WRITE_ONCE(q->num_buffers, q->num_buffers - 1);
}

/*
 * Create up to @count buffers at @first...; returns how many were made.
 * buf_init of an MMAP buffer runs once the buffer is in the queue, as in
 * 6.12: drivers look it up there (vb2_get_buffer(), vb2_get_num_buffers()).
 * A buffer whose memory or buf_init fails leaves the queue again, and
 * creation stops there.
 */
static unsigned int vb2_create_buffers(struct vb2_queue *q, unsigned int first,
				       unsigned int count,
				       unsigned int num_planes,
				       const unsigned int sizes[])
{
	struct vb2_buffer *vb;
	unsigned int n;
	int ret;

	lockdep_assert_held(&q->mmap_lock);
	for (n = 0; n < count; n++) {
		vb = vb2_buffer_create(q, first + n, num_planes, sizes);
		if (!vb)
			break;
		vb2_add_buffer(q, vb);
		if (vb->memory != VB2_MEMORY_MMAP)
			continue;
		ret = vb2_buf_init(vb);
		if (ret) {
			vb2_dbg(q, 1, "buffer %u: buf_init failed: %d\n",
				vb->index, ret);
			vb2_remove_buffer(q, vb);
			vb2_buffer_destroy(vb);
			break;
		}
		vb->initialized = 1;
	}
	return n;
}

/*
 * The buffer table and bitmap, the memory model and the coherency exist
 * only while buffers do: the last buffer to go, or an allocation that made
 * none, resets them (REQBUFS(0), REMOVE_BUFS, a failed REQBUFS or
 * CREATE_BUFS).
 */
static void vb2_reset_if_empty(struct vb2_queue *q)
{
	struct vb2_buffer **bufs;
	unsigned long *map;

	lockdep_assert_held(&q->mmap_lock);
	if (q->num_buffers)
		return;
	map = q->bufs_bitmap;
	bufs = q->bufs;
	WRITE_ONCE(q->bufs_bitmap, NULL);
	WRITE_ONCE(q->bufs, NULL);
	/* Lockless walks may still read them: see vb2_next_buffer(). */
	kvfree_rcu_mightsleep(map);
	kvfree_rcu_mightsleep(bufs);
	q->memory = VB2_MEMORY_UNKNOWN;
	q->non_coherent_mem = 0;
}

static void vb2_reset_if_empty_locked(struct vb2_queue *q)
{
	mutex_lock(&q->mmap_lock);
	vb2_reset_if_empty(q);
	mutex_unlock(&q->mmap_lock);
}

/*
 * The memory model is chosen before queue_setup, which may look at it
 * (and at the coherency) to pick its sizes or allocation devices.
 */
static void vb2_choose_memory(struct vb2_queue *q, enum vb2_memory memory,
			      bool non_coherent)
{
	mutex_lock(&q->mmap_lock);
	q->memory = memory;
	q->non_coherent_mem = non_coherent;
	mutex_unlock(&q->mmap_lock);
}

/*
 * Called only while the queue has buffers, hence its tables. The memory
 * of every buffer goes first, buf_cleanup with it, while the buffers are
 * all still found and counted, as in 6.12; then the buffers themselves.
 * A buffer still prepared (REMOVE_BUFS of one that PREPARE_BUF prepared;
 * the other callers cancel first) gets no buf_finish, as in 6.12: only its
 * memory is handed back to the CPU.
 */
static void vb2_destroy_buffers(struct vb2_queue *q, unsigned int first,
				unsigned int count)
{
	unsigned long index = first;
	struct vb2_buffer *vb;

	lockdep_assert_held(&q->mmap_lock);
	for_each_set_bit_from(index, q->bufs_bitmap, first + count) {
		vb = q->bufs[index];
		if (WARN_ON_ONCE(!vb))
			continue;
		vb2_sync_for_cpu(vb);
		vb->prepared = 0;
		vb2_release_memory(vb);
	}
	index = first;
	for_each_set_bit_from(index, q->bufs_bitmap, first + count) {
		vb = q->bufs[index];
		if (!vb)
			continue;
		vb2_remove_buffer(q, vb);
		vb2_buffer_destroy(vb);
	}
	vb2_reset_if_empty(q);
}

/* The buffer table and its bitmap come with the first buffers. */
static int vb2_get_tables(struct vb2_queue *q)
{
	struct vb2_buffer **bufs;
	unsigned long *map;

	if (q->bufs)
		return 0;
	bufs = kvcalloc(q->max_num_buffers, sizeof(*bufs), GFP_KERNEL);
	map = bitmap_zalloc(q->max_num_buffers, GFP_KERNEL);
	if (!bufs || !map) {
		kvfree(bufs);
		bitmap_free(map);
		return -ENOMEM;
	}
	/* Both zeroed before lockless walks can see them. */
	smp_store_release(&q->bufs, bufs);
	/* A walk that sees the bitmap also sees the array. */
	smp_store_release(&q->bufs_bitmap, map);
	return 0;
}

/*
 * Find @want consecutive free indices. Failing that, the largest run of
 * free indices; returns its length (0 if the queue is full).
 */
static unsigned int vb2_find_free_range(struct vb2_queue *q, unsigned int want,
					unsigned int *first)
{
	unsigned int max = q->max_num_buffers;
	unsigned int start, end, best = 0;
	unsigned long pos;

	pos = bitmap_find_next_zero_area(q->bufs_bitmap, max, 0, want, 0);
	if (pos + want <= max) {
		*first = pos;
		return want;
	}
	for_each_clear_bitrange(start, end, q->bufs_bitmap, max) {
		if (end - start > best) {
			best = end - start;
			*first = start;
		}
	}
	return best;
}

/* Cancel the queue and free every buffer (REQBUFS(0), release). */
void vb2_release_buffers(struct vb2_queue *q)
{
	vb2_queue_cancel(q);
	mutex_lock(&q->mmap_lock);
	if (q->num_buffers)
		vb2_destroy_buffers(q, 0, q->max_num_buffers);
	vb2_reset_if_empty(q);
	mutex_unlock(&q->mmap_lock);
	q->is_busy = 0;
}

/* Check what queue_setup returned. */
static int vb2_check_layout(unsigned int num_planes, const unsigned int sizes[])
{
	unsigned int i;

	if (!num_planes || num_planes > VB2_MAX_PLANES)
		return -EINVAL;
	for (i = 0; i < num_planes; i++)
		if (!sizes[i])
			return -EINVAL;
	return 0;
}

/*
 * Called when fewer buffers than agreed were made (memory ran out, or the
 * queue has no room for the number the driver agreed to): the driver must
 * accept the smaller number. It is asked the way it was the first time:
 * @num_planes is 0 for REQBUFS, the requested count for CREATE_BUFS.
 */
static int vb2_confirm_count(struct vb2_queue *q, unsigned int got,
			     unsigned int num_planes, unsigned int sizes[])
{
	unsigned int n = got, planes = num_planes;
	int ret;

	ret = q->ops->queue_setup(q, &n, &planes, sizes, q->alloc_devs);
	if (!ret && n > got)
		ret = -ENOMEM;
	return ret;
}

/*
 * Allocate the @want buffers the driver agreed to at index 0 of an empty
 * queue, as many as fit.
 */
static int vb2_reqbufs_alloc(struct vb2_queue *q, unsigned int want,
			     unsigned int num_planes, unsigned int sizes[],
			     unsigned int *count)
{
	unsigned int got = 0;
	int ret;

	mutex_lock(&q->mmap_lock);
	ret = vb2_get_tables(q);
	if (!ret)
		got = vb2_create_buffers(q, 0, min(want, q->max_num_buffers),
					 num_planes, sizes);
	mutex_unlock(&q->mmap_lock);

	if (!ret && got < q->min_reqbufs_allocation) {
		vb2_dbg(q, 1, "only %u of %u buffers allocated\n", got, want);
		ret = -ENOMEM;
	}
	if (!ret && got < want)
		ret = vb2_confirm_count(q, got, 0, sizes);
	if (ret) {
		vb2_release_buffers(q);
		return ret;
	}
	q->waiting_for_buffers = !q->is_output;
	q->is_busy = 1;
	*count = got;
	vb2_debugfs_add(q);
	return 0;
}

/**
 * __vb2_core_reqbufs() - REQBUFS without the emulation and I/O mode checks
 * @q:		the queue.
 * @memory:	memory model, supported by the allocator.
 * @flags:	V4L2_MEMORY_FLAG_* bits.
 * @count:	in: buffers wanted, out: buffers allocated.
 *
 * Return: 0 or a negative error code.
 */
int __vb2_core_reqbufs(struct vb2_queue *q, enum vb2_memory memory,
		       unsigned int flags, unsigned int *count)
{
	unsigned int sizes[VB2_MAX_PLANES] = { };
	unsigned int want, num_planes = 0;
	int ret;

	if (q->streaming) {
		vb2_dbg(q, 1, "streaming\n");
		return -EBUSY;
	}
	/* Freeing is allowed: the waiter holds no buffer while it sleeps. */
	if (q->waiting_in_dqbuf && *count) {
		vb2_dbg(q, 1, "another task waits in DQBUF\n");
		return -EBUSY;
	}

	/*
	 * Mapped or exported MMAP memory is orphaned, not an error. REQBUFS(0)
	 * always releases, so that it clears is_busy even on a queue that
	 * REMOVE_BUFS already emptied (and that so forgot its memory model).
	 */
	if (!*count || vb2_get_num_buffers(q) ||
	    q->memory != VB2_MEMORY_UNKNOWN)
		vb2_release_buffers(q);
	if (!*count)
		return 0;

	want = max(*count, q->min_reqbufs_allocation);
	want = min(want, q->max_num_buffers);
	vb2_choose_memory(q, memory, vb2_wants_non_coherent(q, memory, flags));
	memset(q->alloc_devs, 0, sizeof(q->alloc_devs));
	ret = q->ops->queue_setup(q, &want, &num_planes, sizes, q->alloc_devs);
	/*
	 * No warning: the sizes may be user space's. dvb-core's queue_setup
	 * passes DMX_REQBUFS' size through, and 0 must not splat.
	 */
	if (!ret && vb2_check_layout(num_planes, sizes)) {
		vb2_dbg(q, 1, "bad plane layout from queue_setup\n");
		ret = -EINVAL;
	}
	if (ret) {
		vb2_reset_if_empty_locked(q);
		return ret;
	}

	return vb2_reqbufs_alloc(q, want, num_planes, sizes, count);
}

int vb2_core_reqbufs(struct vb2_queue *q, enum vb2_memory memory,
		     unsigned int flags, unsigned int *count)
{
	int ret;

	if (vb2_fileio_is_active(q)) {
		vb2_dbg(q, 1, "read/write emulation in progress\n");
		return -EBUSY;
	}
	ret = vb2_check_memory(q, memory);
	if (ret)
		return ret;
	return __vb2_core_reqbufs(q, memory, flags, count);
}
EXPORT_SYMBOL_GPL(vb2_core_reqbufs);

/*
 * CREATE_BUFS: allocate after queue_setup agreed to @agreed buffers. They
 * take the first free run of indices long enough, or the longest one; if
 * that or memory gives fewer, the driver is asked again. Whatever fails
 * here fails with -ENOMEM, as in 6.12: no buffer made (also when the
 * driver agreed to none, as imx7-media-csi does at its memory limit), or
 * the driver's second answer, an error or a larger number.
 */
static int vb2_create_alloc(struct vb2_queue *q, unsigned int agreed,
			    unsigned int num_planes, unsigned int sizes[],
			    unsigned int *count, unsigned int *first_index)
{
	bool fresh = !vb2_get_num_buffers(q);
	unsigned int first = 0, got = 0, room;
	int ret;

	mutex_lock(&q->mmap_lock);
	ret = vb2_get_tables(q);
	if (!ret) {
		room = vb2_find_free_range(q, agreed, &first);
		got = vb2_create_buffers(q, first, room, num_planes, sizes);
	}
	mutex_unlock(&q->mmap_lock);

	if (!ret && !got) {
		vb2_dbg(q, 1, "no buffer made of %u\n", agreed);
		ret = -ENOMEM;
	}
	if (!ret && got < agreed && vb2_confirm_count(q, got, num_planes, sizes))
		ret = -ENOMEM;
	if (ret) {
		mutex_lock(&q->mmap_lock);
		if (got)
			vb2_destroy_buffers(q, first, got);
		vb2_reset_if_empty(q);
		mutex_unlock(&q->mmap_lock);
		return ret;
	}
	if (fresh)
		q->waiting_for_buffers = !q->is_output;
	q->is_busy = 1;
	*count = got;
	*first_index = first;
	vb2_debugfs_add(q);
	return 0;
}

int vb2_core_create_bufs(struct vb2_queue *q, enum vb2_memory memory,
			 unsigned int flags, unsigned int *count,
			 unsigned int requested_planes,
			 const unsigned int requested_sizes[],
			 unsigned int *first_index)
{
	unsigned int sizes[VB2_MAX_PLANES] = { };
	unsigned int have = vb2_get_num_buffers(q);
	unsigned int want, num_planes = requested_planes;
	bool non_coherent = vb2_wants_non_coherent(q, memory, flags);
	int ret;

	if (vb2_fileio_is_active(q))
		return -EBUSY;
	ret = vb2_check_memory(q, memory);
	if (ret)
		return ret;
	if (have && (q->memory != memory ||
		     q->non_coherent_mem != non_coherent)) {
		vb2_dbg(q, 1, "memory model or coherency differs from the existing buffers\n");
		return -EINVAL;
	}
	if (have >= q->max_num_buffers) {
		vb2_dbg(q, 1, "queue is full\n");
		return -ENOBUFS;
	}
	/* The first buffers, as REQBUFS makes them: not under a sleeper. */
	if (!have && q->waiting_in_dqbuf) {
		vb2_dbg(q, 1, "another task waits in DQBUF\n");
		return -EBUSY;
	}
	if (!requested_planes || requested_planes > VB2_MAX_PLANES)
		return -EINVAL;
	if (!*count) {
		*first_index = have;
		return 0;
	}

	memcpy(sizes, requested_sizes, requested_planes * sizeof(sizes[0]));
	want = min(*count, q->max_num_buffers - have);
	if (!have) {
		vb2_choose_memory(q, memory, non_coherent);
		memset(q->alloc_devs, 0, sizeof(q->alloc_devs));
	}
	ret = q->ops->queue_setup(q, &want, &num_planes, sizes, q->alloc_devs);
	/* Sizes may come from user space: no warning here. */
	if (!ret && vb2_check_layout(num_planes, sizes)) {
		vb2_dbg(q, 1, "bad plane layout\n");
		ret = -EINVAL;
	}
	if (ret) {
		vb2_reset_if_empty_locked(q);
		return ret;
	}

	return vb2_create_alloc(q, want, num_planes, sizes, count, first_index);
}
EXPORT_SYMBOL_GPL(vb2_core_create_bufs);

int vb2_core_remove_bufs(struct vb2_queue *q, unsigned int start,
			 unsigned int count)
{
	unsigned int end = start + count;
	struct vb2_buffer *vb;
	unsigned long index;

	if (!count)
		return 0;
	if (vb2_fileio_is_active(q))
		return -EBUSY;
	if (start >= q->max_num_buffers || count > q->max_num_buffers - start ||
	    !q->bufs_bitmap ||
	    find_next_zero_bit(q->bufs_bitmap, end, start) < end) {
		vb2_dbg(q, 1, "no buffers at [%u, %u)\n", start, end);
		return -EINVAL;
	}
	for (index = start; index < end; index++) {
		vb = vb2_get_buffer(q, index);
		if (vb->state != VB2_BUF_STATE_DEQUEUED) {
			vb2_dbg(q, 1, "buffer %lu is in use\n", index);
			return -EBUSY;
		}
	}

	mutex_lock(&q->mmap_lock);
	vb2_destroy_buffers(q, start, count);
	mutex_unlock(&q->mmap_lock);
	return 0;
}
EXPORT_SYMBOL_GPL(vb2_core_remove_bufs);

/* Acquiring user memory at prepare time */

/*
 * Ask the subsystem for the memory description user space passed. The
 * description starts as the current one, so a subsystem that fills only
 * some fields leaves the others as they are.
 */
static int vb2_fetch_planes(struct vb2_buffer *vb, struct vb2_plane *planes)
{
	struct vb2_queue *q = vb->vb2_queue;
	unsigned int i;
	int ret;

	/*
	 * The description is m, length, bytesused and data_offset, nothing
	 * else of @planes is read; copying just those is cheaper than the
	 * whole struct.
	 */
	for (i = 0; i < vb->num_planes; i++) {
		planes[i].m = vb->planes[i].m;
		planes[i].length = vb->planes[i].length;
		planes[i].bytesused = vb->planes[i].bytesused;
		planes[i].data_offset = vb->planes[i].data_offset;
	}
	ret = 0;
	if (q->buf_ops && q->buf_ops->fill_vb2_buffer)
		ret = q->buf_ops->fill_vb2_buffer(vb, planes);
	if (ret)
		vb2_dbg(q, 1, "buffer %u: bad plane description\n", vb->index);
	return ret;
}

static void vb2_take_payload(struct vb2_buffer *vb,
			     const struct vb2_plane *planes)
{
	unsigned int i;

	for (i = 0; i < vb->num_planes; i++) {
		vb->planes[i].bytesused = planes[i].bytesused;
		vb->planes[i].data_offset = planes[i].data_offset;
	}
}

static int vb2_init_new_memory(struct vb2_buffer *vb)
{
	int ret = vb2_buf_init(vb);

	if (ret) {
		vb2_dbg(vb->vb2_queue, 1, "buffer %u: buf_init failed\n",
			vb->index);
		vb2_release_memory(vb);
		return ret;
	}
	vb->initialized = 1;
	return 0;
}

static bool vb2_userptr_changed(struct vb2_buffer *vb,
				const struct vb2_plane *planes)
{
	unsigned int i;

	for (i = 0; i < vb->num_planes; i++)
		if (!vb->planes[i].mem_priv ||
		    vb->planes[i].m.userptr != planes[i].m.userptr ||
		    vb->planes[i].length != planes[i].length)
			return true;
	return false;
}

static int vb2_acquire_userptr(struct vb2_buffer *vb, struct vb2_plane *planes)
{
	struct vb2_queue *q = vb->vb2_queue;
	unsigned int i;
	void *priv;

	for (i = 0; i < vb->num_planes; i++) {
		if (planes[i].length < vb->planes[i].min_length) {
			vb2_dbg(q, 1, "buffer %u plane %u: %u bytes, %u needed\n",
				vb->index, i, planes[i].length,
				vb->planes[i].min_length);
			return -EINVAL;
		}
	}
	if (!vb2_userptr_changed(vb, planes))
		return 0;

	/* A new range: the old pages go first, all or nothing. */
	vb2_release_memory(vb);
	vb->copied_timestamp = 0;
	for (i = 0; i < vb->num_planes; i++) {
		priv = q->mem_ops->get_userptr(vb, vb2_plane_dev(q, i),
					       planes[i].m.userptr,
					       planes[i].length);
		if (IS_ERR_OR_NULL(priv)) {
			vb2_dbg(q, 1, "buffer %u plane %u: cannot pin memory\n",
				vb->index, i);
			vb2_release_memory(vb);
			return priv ? PTR_ERR(priv) : -EINVAL;
		}
		vb->planes[i].mem_priv = priv;
		vb->planes[i].m.userptr = planes[i].m.userptr;
		vb->planes[i].length = planes[i].length;
	}
	return vb2_init_new_memory(vb);
}

/*
 * Check the length plane @i uses of @dbuf (0: all of it, which sets it)
 * and that the payload fits that length: the V4L2 layer could not check a
 * payload against a length it did not know. A length beyond the dma-buf
 * is -EFAULT, as 6.12's allocators say when they attach.
 */
static int vb2_check_dmabuf_plane(struct vb2_buffer *vb, unsigned int i,
				  struct vb2_plane *plane,
				  const struct dma_buf *dbuf)
{
	if (!plane->length)
		plane->length = dbuf->size;
	if (plane->length < vb->planes[i].min_length) {
		vb2_dbg(vb->vb2_queue, 1, "buffer %u plane %u: %u bytes, %u needed\n",
			vb->index, i, plane->length, vb->planes[i].min_length);
		return -EINVAL;
	}
	if (plane->length > dbuf->size) {
		vb2_dbg(vb->vb2_queue, 1, "buffer %u plane %u: %u bytes of a dma-buf of %zu\n",
			vb->index, i, plane->length, dbuf->size);
		return -EFAULT;
	}
	if (plane->bytesused > plane->length) {
		vb2_dbg(vb->vb2_queue, 1, "buffer %u plane %u: payload %u larger than the plane (%u)\n",
			vb->index, i, plane->bytesused, plane->length);
		return -EINVAL;
	}
	return 0;
}

/* Take a reference on each plane's dma-buf and check its size. */
static int vb2_get_dmabufs(struct vb2_buffer *vb, struct vb2_plane *planes,
			   struct dma_buf **dbufs)
{
	unsigned int i;
	int ret;

	for (i = 0; i < vb->num_planes; i++) {
		struct dma_buf *dbuf = dma_buf_get(planes[i].m.fd);

		if (IS_ERR(dbuf)) {
			vb2_dbg(vb->vb2_queue, 1, "buffer %u plane %u: bad dma-buf fd\n",
				vb->index, i);
			return -EINVAL;
		}
		dbufs[i] = dbuf;
		ret = vb2_check_dmabuf_plane(vb, i, &planes[i], dbuf);
		if (ret)
			return ret;
	}
	return 0;
}

static void vb2_put_dmabufs(struct dma_buf **dbufs, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		if (dbufs[i])
			dma_buf_put(dbufs[i]);
}

static bool vb2_dmabuf_changed(struct vb2_buffer *vb,
			       const struct vb2_plane *planes,
			       struct dma_buf **dbufs)
{
	unsigned int i;

	for (i = 0; i < vb->num_planes; i++)
		if (!vb->planes[i].mem_priv || vb->planes[i].dbuf != dbufs[i] ||
		    vb->planes[i].length != planes[i].length)
			return true;
	return false;
}

/* Attach plane @i to @dbuf, or share an earlier plane's attachment. */
static int vb2_attach_plane(struct vb2_buffer *vb, unsigned int i,
			    struct dma_buf **dbufs, unsigned int length)
{
	struct vb2_queue *q = vb->vb2_queue;
	struct vb2_plane *p = &vb->planes[i];
	unsigned int j;
	void *priv;

	for (j = 0; j < i; j++) {
		if (vb->planes[j].dbuf == dbufs[i] &&
		    vb2_plane_dev(q, j) == vb2_plane_dev(q, i)) {
			p->dbuf = dbufs[i];
			p->mem_priv = vb->planes[j].mem_priv;
			p->dbuf_duplicated = true;
			dma_buf_put(dbufs[i]);
			dbufs[i] = NULL;
			return 0;
		}
	}
	priv = q->mem_ops->attach_dmabuf(vb, vb2_plane_dev(q, i), dbufs[i],
					 length);
	if (IS_ERR_OR_NULL(priv)) {
		vb2_dbg(q, 1, "buffer %u plane %u: attach failed\n", vb->index, i);
		return priv ? PTR_ERR(priv) : -EINVAL;
	}
	p->mem_priv = priv;
	p->dbuf = dbufs[i];
	dbufs[i] = NULL;
	return 0;
}

static void vb2_unmap_dmabuf_planes(struct vb2_buffer *vb);

static int vb2_map_dmabuf_planes(struct vb2_buffer *vb)
{
	struct vb2_queue *q = vb->vb2_queue;
	unsigned int i;
	int ret;

	for (i = 0; i < vb->num_planes; i++) {
		struct vb2_plane *p = &vb->planes[i];

		if (p->dbuf_duplicated || p->dbuf_mapped)
			continue;
		ret = q->mem_ops->map_dmabuf(p->mem_priv);
		if (ret) {
			vb2_dbg(q, 1, "buffer %u plane %u: map failed\n",
				vb->index, i);
			vb2_unmap_dmabuf_planes(vb);
			return ret;
		}
		p->dbuf_mapped = 1;
	}
	return 0;
}

static void vb2_unmap_dmabuf_planes(struct vb2_buffer *vb)
{
	struct vb2_queue *q = vb->vb2_queue;
	unsigned int i;

	if (vb->memory != VB2_MEMORY_DMABUF)
		return;
	for (i = 0; i < vb->num_planes; i++) {
		struct vb2_plane *p = &vb->planes[i];

		if (p->dbuf_mapped) {
			q->mem_ops->unmap_dmabuf(p->mem_priv);
			p->dbuf_mapped = 0;
		}
	}
}

static int vb2_attach_dmabufs(struct vb2_buffer *vb, struct vb2_plane *planes,
			      struct dma_buf **dbufs)
{
	unsigned int i;
	int ret;

	vb2_release_memory(vb);
	vb->copied_timestamp = 0;
	for (i = 0; i < vb->num_planes; i++) {
		ret = vb2_attach_plane(vb, i, dbufs, planes[i].length);
		if (ret) {
			vb2_release_memory(vb);
			return ret;
		}
		vb->planes[i].length = planes[i].length;
		vb->planes[i].m.fd = planes[i].m.fd;
	}
	/* buf_init may ask for DMA addresses: map first. */
	ret = vb2_map_dmabuf_planes(vb);
	if (ret) {
		vb2_release_memory(vb);
		return ret;
	}
	return vb2_init_new_memory(vb);
}

static int vb2_acquire_dmabuf(struct vb2_buffer *vb, struct vb2_plane *planes)
{
	struct dma_buf *dbufs[VB2_MAX_PLANES] = { };
	unsigned int i;
	int ret;

	ret = vb2_get_dmabufs(vb, planes, dbufs);
	if (ret)
		goto out;
	if (vb2_dmabuf_changed(vb, planes, dbufs)) {
		ret = vb2_attach_dmabufs(vb, planes, dbufs);
		goto out;
	}
	/* The same dma-bufs as last time: keep the attachments. */
	for (i = 0; i < vb->num_planes; i++)
		vb->planes[i].m.fd = planes[i].m.fd;
	ret = vb2_map_dmabuf_planes(vb);
out:
	vb2_put_dmabufs(dbufs, vb->num_planes);
	return ret;
}

/**
 * vb2_acquire_planes() - get the memory of a buffer ready for the driver
 * @vb:		the buffer being prepared.
 * @from_user:	ask &vb2_buf_ops.fill_vb2_buffer for user space's memory
 *		description and payload; otherwise use the buffer as it is.
 *
 * For MMAP only the payload changes. USERPTR and DMABUF memory is
 * (re)acquired when user space passed a different one, and dma-bufs are
 * mapped.
 *
 * Return: 0 or a negative error code; the buffer stays usable on error.
 */
int vb2_acquire_planes(struct vb2_buffer *vb, bool from_user)
{
	/* vb2_fetch_planes() fills what is read of it, for num_planes. */
	struct vb2_plane planes[VB2_MAX_PLANES] __uninitialized;
	int ret;

	if (!from_user) {
		if (vb->memory == VB2_MEMORY_DMABUF)
			return vb2_map_dmabuf_planes(vb);
		return vb->memory == VB2_MEMORY_MMAP ? 0 : -EINVAL;
	}

	ret = vb2_fetch_planes(vb, planes);
	if (ret)
		return ret;
	switch (vb->memory) {
	case VB2_MEMORY_USERPTR:
		ret = vb2_acquire_userptr(vb, planes);
		break;
	case VB2_MEMORY_DMABUF:
		ret = vb2_acquire_dmabuf(vb, planes);
		break;
	default:
		break;
	}
	if (!ret)
		vb2_take_payload(vb, planes);
	return ret;
}

/**
 * vb2_drop_user_memory() - forget the USERPTR or DMABUF memory of a buffer
 * @vb:		a buffer that buf_prepare refused.
 *
 * The next QBUF acquires the memory again, as it would a new one. MMAP
 * memory belongs to the buffer and stays.
 */
void vb2_drop_user_memory(struct vb2_buffer *vb)
{
	if (vb->memory == VB2_MEMORY_USERPTR || vb->memory == VB2_MEMORY_DMABUF)
		vb2_release_memory(vb);
}

/* Cache maintenance around the driver's use of a buffer */

/* The planes' part of vb2_sync_for_device(), which checked the rest. */
void __vb2_sync_for_device(struct vb2_buffer *vb)
{
	struct vb2_queue *q = vb->vb2_queue;
	unsigned int i;

	for (i = 0; i < vb->num_planes; i++)
		if (vb->planes[i].mem_priv && !vb->planes[i].dbuf_duplicated)
			q->mem_ops->prepare(vb->planes[i].mem_priv);
}

/* The planes' part of vb2_sync_for_cpu(); may run in interrupt context. */
void __vb2_sync_for_cpu(struct vb2_buffer *vb)
{
	struct vb2_queue *q = vb->vb2_queue;
	unsigned int i;

	for (i = 0; i < vb->num_planes; i++)
		if (vb->planes[i].mem_priv && !vb->planes[i].dbuf_duplicated)
			q->mem_ops->finish(vb->planes[i].mem_priv);
}

/* Planes seen by drivers and by user space */

void *vb2_plane_vaddr(struct vb2_buffer *vb, unsigned int plane_no)
{
	const struct vb2_mem_ops *ops = vb->vb2_queue->mem_ops;

	if (plane_no >= vb->num_planes || !vb->planes[plane_no].mem_priv ||
	    !ops->vaddr)
		return NULL;
	return ops->vaddr(vb, vb->planes[plane_no].mem_priv);
}
EXPORT_SYMBOL_GPL(vb2_plane_vaddr);

void *vb2_plane_cookie(struct vb2_buffer *vb, unsigned int plane_no)
{
	const struct vb2_mem_ops *ops = vb->vb2_queue->mem_ops;

	if (plane_no >= vb->num_planes || !vb->planes[plane_no].mem_priv ||
	    !ops->cookie)
		return NULL;
	return ops->cookie(vb, vb->planes[plane_no].mem_priv);
}
EXPORT_SYMBOL_GPL(vb2_plane_cookie);

bool vb2_buffer_in_use(struct vb2_queue *q, struct vb2_buffer *vb)
{
	unsigned int i;

	/* Only MMAP memory can be mapped or exported through the queue. */
	if (vb->memory != VB2_MEMORY_MMAP || !q->mem_ops->num_users)
		return false;
	for (i = 0; i < vb->num_planes; i++) {
		void *priv = vb->planes[i].mem_priv;

		if (priv && !vb->planes[i].dbuf_duplicated &&
		    q->mem_ops->num_users(priv) > 1)
			return true;
	}
	return false;
}
EXPORT_SYMBOL(vb2_buffer_in_use);

/*
 * Resolve an mmap offset (in pages) to a buffer plane. Called with
 * mmap_lock held.
 */
static int vb2_find_mmap_plane(struct vb2_queue *q, unsigned long pgoff,
			       struct vb2_buffer **pvb, unsigned int *pplane)
{
	unsigned long index = pgoff >> VB2_PLANE_INDEX_BITS;
	unsigned int plane = pgoff & (VB2_MAX_PLANES - 1);
	struct vb2_buffer *vb;

	if (q->memory != VB2_MEMORY_MMAP) {
		vb2_dbg(q, 1, "queue does not use MMAP memory\n");
		return -EINVAL;
	}
	if (vb2_fileio_is_active(q)) {
		vb2_dbg(q, 1, "read/write emulation in progress\n");
		return -EBUSY;
	}
	vb = index < q->max_num_buffers ? vb2_get_buffer(q, index) : NULL;
	if (!vb || plane >= vb->num_planes) {
		vb2_dbg(q, 1, "no plane at offset %#lx\n", pgoff << PAGE_SHIFT);
		return -EINVAL;
	}
	*pvb = vb;
	*pplane = plane;
	return 0;
}

int vb2_mmap(struct vb2_queue *q, struct vm_area_struct *vma)
{
	unsigned long size = vma->vm_end - vma->vm_start;
	struct vb2_buffer *vb;
	unsigned int plane;
	int ret;

	if (!(vma->vm_flags & VM_SHARED)) {
		vb2_dbg(q, 1, "mapping must be shared\n");
		return -EINVAL;
	}
	if (!(vma->vm_flags & (q->is_output ? VM_WRITE : VM_READ))) {
		vb2_dbg(q, 1, "mapping must be %s\n",
			q->is_output ? "writable" : "readable");
		return -EINVAL;
	}

	mutex_lock(&q->mmap_lock);
	ret = vb2_find_mmap_plane(q, vma->vm_pgoff, &vb, &plane);
	if (!ret && size > PAGE_ALIGN(vb->planes[plane].length)) {
		vb2_dbg(q, 1, "mapping of %lu bytes exceeds the plane\n", size);
		ret = -EINVAL;
	}
	if (!ret) {
		/* The offset selected the plane; map it from its start. */
		vma->vm_pgoff = 0;
		ret = q->mem_ops->mmap(vb->planes[plane].mem_priv, vma);
	}
	mutex_unlock(&q->mmap_lock);
	if (!ret)
		vb2_dbg(q, 3, "buffer %u plane %u mapped\n", vb->index, plane);
	return ret;
}
EXPORT_SYMBOL_GPL(vb2_mmap);

#ifndef CONFIG_MMU
unsigned long vb2_get_unmapped_area(struct vb2_queue *q, unsigned long addr,
				    unsigned long len, unsigned long pgoff,
				    unsigned long flags)
{
	struct vb2_buffer *vb;
	unsigned int plane;
	void *vaddr = NULL;
	int ret;

	mutex_lock(&q->mmap_lock);
	ret = vb2_find_mmap_plane(q, pgoff, &vb, &plane);
	if (!ret)
		vaddr = vb2_plane_vaddr(vb, plane);
	mutex_unlock(&q->mmap_lock);
	if (ret)
		return ret;
	return vaddr ? (unsigned long)vaddr : -EINVAL;
}
EXPORT_SYMBOL_GPL(vb2_get_unmapped_area);
#endif

int vb2_core_expbuf(struct vb2_queue *q, int *fd, unsigned int type,
		    struct vb2_buffer *vb, unsigned int plane, unsigned int flags)
{
	struct dma_buf *dbuf;
	int ret;

	if (q->memory != VB2_MEMORY_MMAP || !q->mem_ops->get_dmabuf) {
		vb2_dbg(q, 1, "export needs MMAP memory and an exporter\n");
		return -EINVAL;
	}
	if (flags & ~(O_CLOEXEC | O_ACCMODE)) {
		vb2_dbg(q, 1, "bad flags %#x\n", flags);
		return -EINVAL;
	}
	if (type != q->type || !vb || plane >= vb->num_planes) {
		vb2_dbg(q, 1, "bad type, buffer or plane\n");
		return -EINVAL;
	}
	if (vb2_fileio_is_active(q))
		return -EBUSY;

	dbuf = q->mem_ops->get_dmabuf(vb, vb->planes[plane].mem_priv,
				      flags & O_ACCMODE);
	if (IS_ERR_OR_NULL(dbuf)) {
		vb2_dbg(q, 1, "buffer %u plane %u: export failed\n", vb->index,
			plane);
		return -EINVAL;
	}
	/* Before user space has the descriptor and can close it. */
	vb2_fence_exported(vb, dbuf);
	ret = dma_buf_fd(dbuf, flags & ~O_ACCMODE);
	if (ret < 0) {
		dma_buf_put(dbuf);
		return ret;
	}
	*fd = ret;
	vb2_dbg(q, 3, "buffer %u plane %u exported as fd %d\n", vb->index,
		plane, ret);
	return 0;
}
EXPORT_SYMBOL_GPL(vb2_core_expbuf);
