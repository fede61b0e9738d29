/* SPDX-License-Identifier: GPL-2.0 */
/*
 * videobuf2 core: declarations shared by the files of videobuf2-common.ko.
 * Nothing here is visible to drivers or to the other vb2 modules; what
 * those share with videobuf2-common.ko is in videobuf2-private.h.
 *
 * Names: __vb2_foo() is vb2_foo() without its checks, for a caller that
 * made them (or needs none); vb2_foo() is often an inline test in front
 * of it.
 */
#ifndef _VIDEOBUF2_INTERNAL_H
#define _VIDEOBUF2_INTERNAL_H

#include <linux/build_bug.h>
#include <linux/printk.h>
#include <linux/types.h>
#include <media/videobuf2-core.h>

#include "videobuf2-debugfs.h"
#include "videobuf2-private.h"

/*
 * MMAP offset cookies: user space passes vb2_plane.m.offset to mmap().
 * The cookie is (index << VB2_PLANE_INDEX_SHIFT) | (plane << PAGE_SHIFT),
 * so it names a buffer and one of its VB2_MAX_PLANES planes and stays
 * below 1 GiB: 2^(30 - PAGE_SHIFT - 3) buffer indices fit.
 */
#define VB2_PLANE_INDEX_BITS	3
#define VB2_PLANE_INDEX_SHIFT	(PAGE_SHIFT + VB2_PLANE_INDEX_BITS)
#define VB2_MAX_BUFFER_INDEX	(1U << (30 - VB2_PLANE_INDEX_SHIFT))

static_assert((1 << VB2_PLANE_INDEX_BITS) == VB2_MAX_PLANES);

extern int vb2_core_debug;

#define vb2_dbg(q, level, fmt, ...)					\
	do {								\
		if (vb2_core_debug >= (level))				\
			pr_info("vb2: [%s] %s: " fmt,			\
				(q)->name, __func__, ##__VA_ARGS__);	\
	} while (0)

/*
 * Optional callbacks used in several places. A NULL callback does nothing
 * and succeeds: dvb-core, for one, sets only two &vb2_buf_ops members.
 * Always inline: -Os would otherwise make calls of these few tests, on
 * the QBUF/DQBUF path.
 */
static __always_inline void vb2_fill_user_buffer(struct vb2_buffer *vb, void *pb)
{
	const struct vb2_buf_ops *ops = vb->vb2_queue->buf_ops;

	if (pb && ops && ops->fill_user_buffer)
		ops->fill_user_buffer(vb, pb);
}

static __always_inline void vb2_copy_timestamp(struct vb2_buffer *vb, const void *pb)
{
	const struct vb2_buf_ops *ops = vb->vb2_queue->buf_ops;

	if (pb && ops && ops->copy_timestamp)
		ops->copy_timestamp(vb, pb);
}

static __always_inline void vb2_init_buffer(struct vb2_buffer *vb)
{
	const struct vb2_buf_ops *ops = vb->vb2_queue->buf_ops;

	if (ops && ops->init_buffer)
		ops->init_buffer(vb);
}

/* Output queues only: the driver checks the user's fields. */
static __always_inline int vb2_out_validate(struct vb2_buffer *vb)
{
	struct vb2_queue *q = vb->vb2_queue;

	if (!q->is_output || !q->ops->buf_out_validate)
		return 0;
	return q->ops->buf_out_validate(vb);
}

static inline int vb2_buf_init(struct vb2_buffer *vb)
{
	const struct vb2_ops *ops = vb->vb2_queue->ops;

	return ops->buf_init ? ops->buf_init(vb) : 0;
}

/**
 * struct vb2_fileio_buf - one buffer as read()/write() emulation sees it
 * @vaddr:	kernel address of the buffer's only plane.
 * @pos:	next byte to copy.
 * @end:	end of the valid data (read) or of the plane (write).
 */
struct vb2_fileio_buf {
	void		*vaddr;
	unsigned int	pos;
	unsigned int	end;
};

/**
 * struct vb2_fileio_data - state of read()/write() emulation
 *
 * Protected by the queue lock, like the queue it drives. The emulation
 * owns buffers 0 .. @count - 1, all with one MMAP plane.
 *
 * @read:	true for read(), false for write().
 * @read_once:	stop after the first buffer (from the queue's flag).
 * @write_immediately: queue after every write() (from the queue's flag).
 * @eof:	read once: the one buffer was read, read() returns 0.
 * @cur:	index of the buffer being copied, or @count when the next
 *		copy needs a buffer from DQBUF first.
 * @fresh:	buffers below this index have been queued at least once;
 *		write() fills the others, in order, before it dequeues.
 * @dequeued:	number of buffers dequeued so far.
 * @count:	number of buffers.
 * @bufs:	per-buffer state, @count entries.
 */
struct vb2_fileio_data {
	bool			read;
	bool			read_once;
	bool			write_immediately;
	bool			eof;
	unsigned int		cur;
	unsigned int		fresh;
	unsigned int		dequeued;
	unsigned int		count;
	struct vb2_fileio_buf	bufs[] __counted_by(count);
};

/**
 * struct vb2_threadio_data - state of vb2_thread_start()
 * @thread:	the kernel thread.
 * @fnc:	callback per buffer.
 * @priv:	its argument.
 * @stop:	set by vb2_thread_stop() before it wakes the thread.
 */
struct vb2_threadio_data {
	struct task_struct	*thread;
	vb2_thread_fnc		fnc;
	void			*priv;
	bool			stop;
};

/* videobuf2-fence.c: implicit fences (CONFIG_VIDEOBUF2_IMPLICIT_SYNC) */
#if IS_ENABLED(CONFIG_VIDEOBUF2_IMPLICIT_SYNC)
void vb2_fence_queue_init(struct vb2_queue *q);
void vb2_fence_buffer_init(struct vb2_buffer *vb);
void vb2_fence_buffer_free(struct vb2_buffer *vb);
void vb2_fence_exported(struct vb2_buffer *vb, struct dma_buf *dbuf);
void vb2_fence_handing_over(struct vb2_buffer *vb);
struct dma_fence *vb2_fence_take(struct vb2_buffer *vb);
void vb2_fence_signal(struct dma_fence *fence, enum vb2_buffer_state state);
#else
static inline void vb2_fence_queue_init(struct vb2_queue *q) { }
static inline void vb2_fence_buffer_init(struct vb2_buffer *vb) { }
static inline void vb2_fence_buffer_free(struct vb2_buffer *vb) { }
static inline void vb2_fence_exported(struct vb2_buffer *vb,
				      struct dma_buf *dbuf) { }
static inline void vb2_fence_handing_over(struct vb2_buffer *vb) { }
static inline struct dma_fence *vb2_fence_take(struct vb2_buffer *vb)
{
	return NULL;
}

static inline void vb2_fence_signal(struct dma_fence *fence,
				    enum vb2_buffer_state state) { }
#endif

/* videobuf2-core.c: the state machine and the queue */
const char *vb2_state_name(enum vb2_buffer_state state);
/* The lock a state change needs; see "buffer states" in videobuf2-core.c. */
enum vb2_lock_rule {
	VB2_ILLEGAL = 0,
	VB2_LOCK_QUEUE,
	VB2_LOCK_DONE,
};

#define VB2_NR_STATES	(VB2_BUF_STATE_ERROR + 1)

extern const u8 vb2_transitions[VB2_NR_STATES][VB2_NR_STATES];
void vb2_assert_rule(struct vb2_queue *q, enum vb2_lock_rule rule);
void vb2_illegal_state_change(struct vb2_buffer *vb,
			      enum vb2_buffer_state state);

static __always_inline enum vb2_lock_rule
vb2_transition_rule(enum vb2_buffer_state from, enum vb2_buffer_state to)
{
	if ((unsigned int)from >= VB2_NR_STATES ||
	    (unsigned int)to >= VB2_NR_STATES)
		return VB2_ILLEGAL;
	return vb2_transitions[from][to];
}

/**
 * vb2_set_state() - move a buffer to another state
 * @vb:		the buffer.
 * @state:	the new state.
 *
 * The only writer of &vb2_buffer.state in the core; see "buffer states".
 * Inline: several changes happen in every QBUF/DQBUF cycle. An illegal
 * change warns once and is applied anyway.
 */
static __always_inline void vb2_set_state(struct vb2_buffer *vb,
					  enum vb2_buffer_state state)
{
	enum vb2_lock_rule rule;

	if (vb->state == state)
		return;
	rule = vb2_transition_rule(vb->state, state);
	if (unlikely(rule == VB2_ILLEGAL))
		vb2_illegal_state_change(vb, state);
	else if (IS_ENABLED(CONFIG_LOCKDEP))
		vb2_assert_rule(vb->vb2_queue, rule);
	WRITE_ONCE(vb->state, state);
	vb2_stats_state_changed(vb);
}

#if IS_ENABLED(CONFIG_KUNIT)
bool vb2_state_change_allowed(enum vb2_buffer_state from,
			      enum vb2_buffer_state to);
#endif
void vb2_release_driver_lock(struct vb2_queue *q);
void vb2_retake_driver_lock(struct vb2_queue *q);
int vb2_prepare_buffer(struct vb2_buffer *vb, bool from_user);
int vb2_enqueue_buffer(struct vb2_queue *q, struct vb2_buffer *vb, void *pb);
int __vb2_core_qbuf(struct vb2_queue *q, struct vb2_buffer *vb, void *pb);
int __vb2_core_dqbuf(struct vb2_queue *q, unsigned int *pindex, void *pb,
		     bool nonblocking);
int __vb2_core_streamon(struct vb2_queue *q);
void vb2_queue_cancel(struct vb2_queue *q);

/* videobuf2-memory.c: buffers, planes and the three memory models */
int vb2_check_memory(struct vb2_queue *q, enum vb2_memory memory);
int __vb2_core_reqbufs(struct vb2_queue *q, enum vb2_memory memory,
		       unsigned int flags, unsigned int *count);
void vb2_release_buffers(struct vb2_queue *q);
int vb2_acquire_planes(struct vb2_buffer *vb, bool from_user);
void vb2_drop_user_memory(struct vb2_buffer *vb);
void __vb2_sync_for_device(struct vb2_buffer *vb);
void __vb2_sync_for_cpu(struct vb2_buffer *vb);

/*
 * Cache maintenance around the driver's use of a buffer: once each way,
 * and only through the memops the allocator has (vmalloc has no prepare;
 * its finish only counts what the driver wrote).
 */
static __always_inline void vb2_sync_for_device(struct vb2_buffer *vb)
{
	if (vb->synced)
		return;
	vb->synced = 1;
	if (vb->vb2_queue->mem_ops->prepare)
		__vb2_sync_for_device(vb);
}

/* May run in interrupt context, from vb2_buffer_done(). */
static __always_inline void vb2_sync_for_cpu(struct vb2_buffer *vb)
{
	if (!vb->synced)
		return;
	vb->synced = 0;
	if (vb->vb2_queue->mem_ops->finish)
		__vb2_sync_for_cpu(vb);
}

/**
 * vb2_unprepare_buffer() - undo vb2_prepare_buffer()
 * @vb:		the buffer; nothing happens if it is not prepared.
 *
 * Syncs the memory for the CPU (if vb2_buffer_done() did not) and calls
 * buf_finish. The memory itself stays: see "lifetime of buffers and their
 * memory". Inline: once per DQBUF.
 */
static __always_inline void vb2_unprepare_buffer(struct vb2_buffer *vb)
{
	struct vb2_queue *q = vb->vb2_queue;

	vb2_sync_for_cpu(vb);
	if (vb->prepared) {
		if (q->ops->buf_finish)
			q->ops->buf_finish(vb);
		vb->prepared = 0;
	}
}

/* videobuf2-request.c: buffers as media request objects */
int vb2_request_bind(struct vb2_queue *q, struct vb2_buffer *vb,
		     struct media_request *req);
void vb2_request_pick_completer(struct vb2_buffer *vb);
void vb2_request_complete_unused(struct vb2_buffer *vb);
void __vb2_request_detach(struct vb2_buffer *vb);
void __vb2_request_put(struct vb2_buffer *vb);

/* Unbind @vb from its request, if it is bound; see __vb2_request_detach(). */
static __always_inline void vb2_request_detach(struct vb2_buffer *vb)
{
	if (vb->req_obj.req)
		__vb2_request_detach(vb);
}

/* Drop @vb's reference on its request, if it holds one. */
static __always_inline void vb2_request_put(struct vb2_buffer *vb)
{
	if (vb->request)
		__vb2_request_put(vb);
}

/*
 * The cache flags a buffer has without user space hints: set for DMABUF
 * (the exporter keeps the caches), as 6.12 sets them when it creates the
 * buffer; drivers read them (atomisp flushes the whole CPU cache in
 * buf_queue unless both are set). Clear for MMAP and USERPTR.
 */
static inline void vb2_default_cache_hints(struct vb2_buffer *vb)
{
	bool dmabuf = vb->memory == VB2_MEMORY_DMABUF;

	vb->skip_cache_sync_on_prepare = dmabuf;
	vb->skip_cache_sync_on_finish = dmabuf;
}

/* videobuf2-fileio.c: read()/write() emulation */
int vb2_fileio_start(struct vb2_queue *q, bool read);
void vb2_fileio_stop(struct vb2_queue *q);

#endif /* _VIDEOBUF2_INTERNAL_H */
