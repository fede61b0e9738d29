// SPDX-License-Identifier: GPL-2.0
/*
 * videobuf2 core: read()/write() on top of streaming I/O, and the vb2
 * kernel thread built on the same machinery.
 */

#include <linux/err.h>
#include <linux/freezer.h>
#include <linux/kthread.h>
#include <linux/overflow.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/timekeeping.h>
#include <linux/uaccess.h>

#include <media/videobuf2-core.h>

#include "videobuf2-internal.h"

/**
 * DOC: read() and write() emulation
 *
 * The first read() (capture) or write() (output) on a queue without
 * buffers, or a poll() asking for that direction, allocates MMAP buffers
 * with one plane each, streams them and copies between them and the user.
 * queue_setup is asked for &vb2_queue.min_reqbufs_allocation buffers, as
 * REQBUFS(1) would be (one buffer on a queue without minimum, as 6.12
 * does); it may raise the number, up to VB2_MAX_FRAME.
 *
 * - read() queues every buffer and starts streaming; each call dequeues a
 *   buffer when the current one is used up, copies from it, and queues it
 *   again once it has been read completely. A call that dequeues a buffer
 *   without payload returns 0. The copy starts at the plane's data_offset
 *   on a multi-planar queue, at its first byte otherwise (as in 6.12).
 * - write() starts streaming with no buffer queued; the calls fill the
 *   buffers in index order, queueing each when it is full (or after every
 *   call with &vb2_queue.fileio_write_immediately), and dequeue a buffer
 *   to refill once all of them have been queued once.
 *
 * While the emulation runs, the streaming ioctls fail with -EBUSY; it ends
 * when the queue is released (closing the file handle that owns it).
 */

static int vb2_fileio_check(struct vb2_queue *q, bool read)
{
	if (!(q->io_modes & (read ? VB2_READ : VB2_WRITE))) {
		vb2_dbg(q, 1, "%s() not supported\n", read ? "read" : "write");
		return -EINVAL;
	}
	if (!q->mem_ops->alloc || !q->mem_ops->put || !q->mem_ops->vaddr) {
		vb2_dbg(q, 1, "allocator cannot map buffers in the kernel\n");
		return -EBUSY;
	}
	if (q->streaming || vb2_get_num_buffers(q)) {
		vb2_dbg(q, 1, "queue is used for streaming I/O\n");
		return -EBUSY;
	}
	return 0;
}

/*
 * 6.12 emulates read() and write() with at most VB2_MAX_FRAME buffers and
 * refuses more, which only a driver with a larger max_num_buffers whose
 * queue_setup raises the count can ask for. The uAPI's error for a read()
 * or write() a device does not support is EINVAL.
 */
static int vb2_fileio_check_count(struct vb2_queue *q, unsigned int count)
{
	if (count <= VB2_MAX_FRAME)
		return 0;
	vb2_dbg(q, 1, "%u buffers, the emulation takes at most %d\n", count,
		VB2_MAX_FRAME);
	return -EINVAL;
}

static int vb2_fileio_setup_bufs(struct vb2_queue *q,
				 struct vb2_fileio_data *fileio)
{
	struct vb2_buffer *vb;
	unsigned int i;

	for (i = 0; i < fileio->count; i++) {
		vb = vb2_get_buffer(q, i);
		if (!vb || vb->num_planes != 1) {
			vb2_dbg(q, 1, "needs buffers with one plane\n");
			return -EBUSY;
		}
		fileio->bufs[i].vaddr = vb2_plane_vaddr(vb, 0);
		if (!fileio->bufs[i].vaddr)
			return -EINVAL;
		fileio->bufs[i].pos = 0;
		fileio->bufs[i].end = vb2_plane_size(vb, 0);
	}
	return 0;
}

/* Read: every buffer goes to the driver at once. */
static int vb2_fileio_queue_all(struct vb2_queue *q,
				struct vb2_fileio_data *fileio)
{
	unsigned int i;
	int ret;

	for (i = 0; i < fileio->count; i++) {
		ret = __vb2_core_qbuf(q, vb2_get_buffer(q, i), NULL);
		if (ret)
			return ret;
	}
	fileio->fresh = fileio->count;
	fileio->cur = fileio->count;
	return 0;
}

/**
 * vb2_fileio_start() - allocate buffers and start read/write emulation
 * @q:		the queue, without buffers.
 * @read:	true for read(), false for write().
 *
 * Return: 0 or a negative error code (-EBUSY if the queue streams).
 */
int vb2_fileio_start(struct vb2_queue *q, bool read)
{
	struct vb2_fileio_data *fileio;
	unsigned int count;
	int ret;

	ret = vb2_fileio_check(q, read);
	if (ret)
		return ret;

	/* What REQBUFS(1) would get; queue_setup may raise it. */
	count = q->min_reqbufs_allocation;
	ret = __vb2_core_reqbufs(q, VB2_MEMORY_MMAP, 0, &count);
	if (ret)
		return ret;
	ret = vb2_fileio_check_count(q, count);
	if (ret)
		goto free_buffers;

	fileio = kzalloc(struct_size(fileio, bufs, count), GFP_KERNEL);
	if (!fileio) {
		ret = -ENOMEM;
		goto free_buffers;
	}
	fileio->count = count;
	fileio->read = read;
	fileio->read_once = q->fileio_read_once;
	fileio->write_immediately = q->fileio_write_immediately;
	ret = vb2_fileio_setup_bufs(q, fileio);
	if (ret)
		goto free_fileio;

	q->fileio = fileio;
	if (read)
		ret = vb2_fileio_queue_all(q, fileio);
	if (!ret)
		ret = __vb2_core_streamon(q);
	if (!ret) {
		vb2_dbg(q, 3, "%s() emulation started\n",
			read ? "read" : "write");
		return 0;
	}
	q->fileio = NULL;
free_fileio:
	kfree(fileio);
free_buffers:
	vb2_release_buffers(q);
	return ret;
}

/**
 * vb2_fileio_stop() - end read/write emulation and free its buffers
 * @q:		the queue; nothing happens if no emulation runs.
 */
void vb2_fileio_stop(struct vb2_queue *q)
{
	struct vb2_fileio_data *fileio = q->fileio;

	if (!fileio)
		return;
	q->fileio = NULL;
	vb2_release_buffers(q);
	q->waiting_for_buffers = 0;
	q->last_buffer_dequeued = 0;
	kfree(fileio);
	vb2_dbg(q, 3, "emulation stopped\n");
}

/* Make fileio->cur a buffer owned by the emulation, dequeueing if needed. */
static int vb2_fileio_get_buffer(struct vb2_queue *q, bool nonblock)
{
	struct vb2_fileio_data *fileio = q->fileio;
	struct vb2_fileio_buf *buf;
	struct vb2_buffer *vb;
	unsigned int index;
	int ret;

	if (fileio->cur < fileio->count)
		return 0;

	ret = __vb2_core_dqbuf(q, &index, NULL, nonblock);
	if (ret)
		return ret;
	fileio->dequeued++;
	vb = vb2_get_buffer(q, index);
	buf = &fileio->bufs[index];
	if (fileio->read) {
		/*
		 * 6.12 honours data_offset on multi-planar queues only (and
		 * there reads data_offset bytes short of the payload's end,
		 * which we do not).
		 */
		buf->end = vb2_get_plane_payload(vb, 0);
		buf->pos = q->is_multiplanar ?
			   min(vb->planes[0].data_offset, buf->end) : 0;
	} else {
		buf->end = vb2_plane_size(vb, 0);
		buf->pos = 0;
	}
	fileio->cur = index;
	return 0;
}

/* Give fileio->cur back to the queue. */
static int vb2_fileio_put_buffer(struct vb2_queue *q)
{
	struct vb2_fileio_data *fileio = q->fileio;
	struct vb2_fileio_buf *buf = &fileio->bufs[fileio->cur];
	struct vb2_buffer *vb = vb2_get_buffer(q, fileio->cur);
	int ret;

	if (!fileio->read) {
		vb->planes[0].bytesused = buf->pos;
		vb->planes[0].data_offset = 0;
		if (q->copy_timestamp)
			vb->timestamp = ktime_get_ns();
	}
	ret = __vb2_core_qbuf(q, vb, NULL);
	if (ret)
		return ret;
	buf->pos = 0;
	if (fileio->fresh < fileio->count)
		fileio->fresh++;
	/* Unused buffers first, then the next one from DQBUF. */
	fileio->cur = fileio->fresh;
	return 0;
}

/* Copy from or to the current buffer; returns bytes copied or an error. */
static ssize_t vb2_fileio_chunk(struct vb2_queue *q, void __user *data,
				size_t count, loff_t *ppos, bool nonblock)
{
	struct vb2_fileio_data *fileio = q->fileio;
	struct vb2_fileio_buf *buf;
	size_t n;
	int ret;

	ret = vb2_fileio_get_buffer(q, nonblock);
	if (ret)
		return ret;
	buf = &fileio->bufs[fileio->cur];
	n = min_t(size_t, count, buf->end - buf->pos);
	if (fileio->read ? copy_to_user(data, buf->vaddr + buf->pos, n) :
			   copy_from_user(buf->vaddr + buf->pos, data, n))
		return -EFAULT;
	buf->pos += n;
	*ppos += n;

	if (buf->pos < buf->end && (fileio->read || !fileio->write_immediately))
		return n;
	if (fileio->read && fileio->read_once && fileio->dequeued == 1) {
		/* One buffer per open: stop the driver, read() sees EOF. */
		vb2_queue_cancel(q);
		fileio->eof = true;
		return n;
	}
	ret = vb2_fileio_put_buffer(q);
	return ret ? ret : n;
}

static ssize_t vb2_fileio_copy(struct vb2_queue *q, void __user *data,
			       size_t count, loff_t *ppos, bool nonblock,
			       bool read)
{
	ssize_t ret;

	if (!vb2_fileio_is_active(q)) {
		ret = vb2_fileio_start(q, read);
		if (ret)
			return ret;
	}
	if (q->fileio->read != read)
		return -EBUSY;

	/*
	 * A buffer without payload makes read() return 0, end of file, as in
	 * 6.12; the next read() goes on with the next buffer.
	 */
	if (q->fileio->eof)
		return 0;
	return vb2_fileio_chunk(q, data, count, ppos, nonblock);
}

ssize_t vb2_read(struct vb2_queue *q, char __user *data, size_t count,
		 loff_t *ppos, int nonblocking)
{
	return vb2_fileio_copy(q, data, count, ppos, nonblocking, true);
}
EXPORT_SYMBOL_GPL(vb2_read);

ssize_t vb2_write(struct vb2_queue *q, const char __user *data, size_t count,
		  loff_t *ppos, int nonblocking)
{
	return vb2_fileio_copy(q, (void __user *)data, count, ppos,
			       nonblocking, false);
}
EXPORT_SYMBOL_GPL(vb2_write);

/* The vb2 thread */

/* Idle until vb2_thread_stop() calls kthread_stop(). */
static void vb2_thread_park(void)
{
	set_current_state(TASK_INTERRUPTIBLE);
	while (!kthread_should_stop()) {
		schedule();
		set_current_state(TASK_INTERRUPTIBLE);
	}
	__set_current_state(TASK_RUNNING);
}

/*
 * The next buffer for the callback. An output queue starts with all its
 * buffers unqueued (@next counts them out), then dequeues like capture.
 */
static int vb2_thread_next(struct vb2_queue *q, unsigned int *next,
			   struct vb2_buffer **pvb)
{
	struct vb2_threadio_data *threadio = q->threadio;
	unsigned int index;
	int ret;

	if (*next < q->fileio->count) {
		*pvb = vb2_get_buffer(q, (*next)++);
		return 0;
	}
	vb2_retake_driver_lock(q);
	if (READ_ONCE(threadio->stop))
		ret = -EINTR;
	else
		ret = __vb2_core_dqbuf(q, &index, NULL, false);
	vb2_release_driver_lock(q);
	if (!ret)
		*pvb = vb2_get_buffer(q, index);
	return ret;
}

static int vb2_thread(void *data)
{
	struct vb2_queue *q = data;
	struct vb2_threadio_data *threadio = q->threadio;
	bool stamp = q->is_output && q->copy_timestamp;
	unsigned int next = q->fileio->fresh;
	struct vb2_buffer *vb;
	int ret;

	set_freezable();
	for (;;) {
		ret = vb2_thread_next(q, &next, &vb);
		if (ret || READ_ONCE(threadio->stop))
			break;
		try_to_freeze();

		/* Every buffer, also one the driver failed, as 6.12 does. */
		if (threadio->fnc(vb, threadio->priv))
			break;

		vb2_retake_driver_lock(q);
		if (stamp)
			vb->timestamp = ktime_get_ns();
		if (!READ_ONCE(threadio->stop))
			ret = __vb2_core_qbuf(q, vb, NULL);
		vb2_release_driver_lock(q);
		if (ret || READ_ONCE(threadio->stop))
			break;
	}
	vb2_thread_park();
	return 0;
}

int vb2_thread_start(struct vb2_queue *q, vb2_thread_fnc fnc, void *priv,
		     const char *thread_name)
{
	struct vb2_threadio_data *threadio;
	struct task_struct *thread;
	int ret;

	if (q->threadio || vb2_is_busy(q))
		return -EBUSY;
	if (WARN_ON(vb2_fileio_is_active(q)))
		return -EBUSY;

	threadio = kzalloc(sizeof(*threadio), GFP_KERNEL);
	if (!threadio)
		return -ENOMEM;
	threadio->fnc = fnc;
	threadio->priv = priv;

	q->teardown = true;
	ret = vb2_fileio_start(q, !q->is_output);
	q->teardown = false;
	if (ret)
		goto free;

	q->threadio = threadio;
	thread = kthread_run(vb2_thread, q, "vb2-%s", thread_name);
	if (!IS_ERR(thread)) {
		threadio->thread = thread;
		return 0;
	}
	ret = PTR_ERR(thread);
	q->threadio = NULL;
	q->teardown = true;
	vb2_fileio_stop(q);
	q->teardown = false;
free:
	kfree(threadio);
	return ret;
}
EXPORT_SYMBOL_GPL(vb2_thread_start);

int vb2_thread_stop(struct vb2_queue *q)
{
	struct vb2_threadio_data *threadio = q->threadio;
	int ret;

	if (!threadio)
		return 0;
	WRITE_ONCE(threadio->stop, true);
	/* Wake the thread if it sleeps in DQBUF. */
	vb2_queue_error(q);
	ret = kthread_stop(threadio->thread);

	q->teardown = true;
	vb2_fileio_stop(q);
	q->teardown = false;
	q->threadio = NULL;
	kfree(threadio);
	return ret;
}
EXPORT_SYMBOL_GPL(vb2_thread_stop);
