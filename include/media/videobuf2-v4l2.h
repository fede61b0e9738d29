/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The V4L2 side of videobuf2.
 *
 * videobuf2-core knows buffers, planes and queue states but nothing of the
 * V4L2 uAPI. This header adds what a V4L2 driver needs on top of it: the
 * per-buffer V4L2 metadata (struct vb2_v4l2_buffer), the functions that turn
 * struct v4l2_buffer & co. from user space into core calls, and ready-made
 * &struct v4l2_ioctl_ops and &struct v4l2_file_operations helpers that also
 * enforce which file handle owns a queue.
 */
#ifndef _MEDIA_VIDEOBUF2_V4L2_H
#define _MEDIA_VIDEOBUF2_V4L2_H

#include <linux/videodev2.h>
#include <media/videobuf2-core.h>

/*
 * The core sizes its arrays with its own constants; the uAPI hands user space
 * indexes and plane counts bounded by the V4L2 ones. They have to agree.
 */
#if VB2_MAX_FRAME != VIDEO_MAX_FRAME
#error VB2_MAX_FRAME != VIDEO_MAX_FRAME
#endif

#if VB2_MAX_PLANES != VIDEO_MAX_PLANES
#error VB2_MAX_PLANES != VIDEO_MAX_PLANES
#endif

struct video_device;
struct media_request;

/**
 * struct vb2_v4l2_buffer - a videobuf2 buffer with its V4L2 metadata
 *
 * Drivers embed this structure as the first member of their own buffer
 * structure and set &vb2_queue.buf_struct_size to the size of theirs; the
 * core allocates that many bytes per buffer.
 *
 * Who writes what (the tag that ends the description of each member):
 *
 * - U: taken from user space by VIDIOC_QBUF or VIDIOC_PREPARE_BUF, under
 *   the queue lock, while the buffer is dequeued.
 * - D: written by the driver while it owns the buffer (between
 *   &vb2_ops.buf_queue and vb2_buffer_done()), read back at VIDIOC_DQBUF.
 * - V: managed by videobuf2 itself (and by v4l2-mem2mem for @is_held).
 */
struct vb2_v4l2_buffer {
	/**
	 * @vb2_buf: the core buffer; must stay the first member so that
	 * to_vb2_v4l2_buffer() can recover this structure from it. (V)
	 */
	struct vb2_buffer	vb2_buf;

	/**
	 * @flags: the V4L2_BUF_FLAG_* bits that travel with the buffer: on
	 * output queues the ones user space may set (key/P/B frame, timecode,
	 * hold-capture-buffer, timestamp source for COPY queues), on capture
	 * queues the ones the driver reports (frame type, %V4L2_BUF_FLAG_LAST,
	 * ...). The state bits (QUEUED, DONE, MAPPED, ...) are never stored
	 * here; they are computed when the buffer is reported to user
	 * space. (U, D)
	 */
	__u32			flags;

	/**
	 * @field: the &enum v4l2_field of the content. Taken from user space on
	 * output queues only; capture drivers fill it in. (U, D)
	 */
	__u32			field;

	/**
	 * @timecode: SMPTE timecode; valid when @flags has
	 * %V4L2_BUF_FLAG_TIMECODE. (U, D)
	 */
	struct v4l2_timecode	timecode;

	/**
	 * @sequence: frame sequence number; reset to 0 whenever the buffer is
	 * taken from user space. (D)
	 */
	__u32			sequence;

	/**
	 * @request_fd: the file descriptor of the media request the buffer was
	 * queued in, while the buffer belongs to that request (until it is
	 * dequeued or cancelled); -1 otherwise. (U)
	 */
	__s32			request_fd;

	/**
	 * @is_held: set by v4l2-mem2mem while a capture buffer is held back for
	 * the next slice (%V4L2_BUF_FLAG_M2M_HOLD_CAPTURE_BUF). (V)
	 */
	bool			is_held;

	/**
	 * @planes: staging copy of the plane description user space passed
	 * (memory location, length, bytesused, data_offset), kept until the
	 * core prepares the buffer; for buffers queued in a request that
	 * happens only when the request is queued. (U)
	 */
	struct vb2_plane	planes[VB2_MAX_PLANES];
};

/*
 * Bits of &vb2_queue.subsystem_flags that belong to the V4L2 layer.
 * VB2_V4L2_FL_SUPPORTS_M2M_HOLD_CAPTURE_BUF: a stateless decoder queue that
 * lets user space set %V4L2_BUF_FLAG_M2M_HOLD_CAPTURE_BUF on output buffers.
 */
#define VB2_V4L2_FL_SUPPORTS_M2M_HOLD_CAPTURE_BUF	BIT(0)

/**
 * to_vb2_v4l2_buffer() - get the &struct vb2_v4l2_buffer around a buffer
 * @vb: pointer to the &struct vb2_buffer embedded in a &struct vb2_v4l2_buffer
 */
#define to_vb2_v4l2_buffer(vb) \
	container_of(vb, struct vb2_v4l2_buffer, vb2_buf)

/**
 * vb2_find_buffer() - look a buffer up by its timestamp
 * @q:		the queue to search
 * @timestamp:	the timestamp, in nanoseconds, to look for
 *
 * Codec drivers find reference frames this way: the timestamp of an output
 * buffer is copied to the capture buffer decoded from it (see
 * v4l2_m2m_buf_copy_metadata()), and later requests name the reference by that
 * timestamp. Only buffers whose timestamp was copied that way are candidates.
 *
 * Return: the buffer, or NULL if no buffer of @q carries @timestamp.
 */
struct vb2_buffer *vb2_find_buffer(struct vb2_queue *q, u64 timestamp);

/**
 * vb2_querybuf() - implement VIDIOC_QUERYBUF
 * @q:	the queue
 * @b:	the &struct v4l2_buffer from user space; @b->type and @b->index select
 *	the buffer, and for multi-planar types @b->m.planes must hold at least
 *	as many entries as the buffer has planes
 *
 * Fills @b with the current state of the buffer. Meant to be called from a
 * driver's vidioc_querybuf handler.
 *
 * Return: 0, or -EINVAL if the type, index or plane array is wrong.
 */
int vb2_querybuf(struct vb2_queue *q, struct v4l2_buffer *b);

/**
 * vb2_reqbufs() - implement VIDIOC_REQBUFS
 * @q:		the queue
 * @req:	the &struct v4l2_requestbuffers from user space
 *
 * Reports the queue's capabilities in @req->capabilities (ORed into what is
 * already there) and sanitises @req->flags even when the call fails, then
 * frees the existing buffers and allocates @req->count new ones through the
 * core. A count of 0 only frees.
 *
 * Return: 0 or a negative error code (see VIDIOC_REQBUFS in the uAPI).
 */
int vb2_reqbufs(struct vb2_queue *q, struct v4l2_requestbuffers *req);

/**
 * vb2_create_bufs() - implement VIDIOC_CREATE_BUFS
 * @q:		the queue
 * @create:	the &struct v4l2_create_buffers from user space
 *
 * Adds @create->count buffers sized after @create->format to the queue,
 * leaving the existing ones alone. Sets @create->index to the first new
 * index, reports capabilities, flags and the maximum number of buffers. A
 * count of 0 only validates memory and type.
 *
 * Return: 0 or a negative error code (see VIDIOC_CREATE_BUFS in the uAPI).
 */
int vb2_create_bufs(struct vb2_queue *q, struct v4l2_create_buffers *create);

/**
 * vb2_prepare_buf() - implement VIDIOC_PREPARE_BUF
 * @q:		the queue
 * @mdev:	the media device, if any (not used: PREPARE_BUF does not take
 *		requests)
 * @b:		the &struct v4l2_buffer from user space
 *
 * Validates @b, takes the plane description from it and has the core prepare
 * the buffer (pin or map memory, cache maintenance, &vb2_ops.buf_prepare), so
 * that a later VIDIOC_QBUF of it is cheap. Must be called with the queue lock
 * held.
 *
 * Return: 0 or a negative error code (see VIDIOC_PREPARE_BUF in the uAPI).
 */
int vb2_prepare_buf(struct vb2_queue *q, struct media_device *mdev,
		    struct v4l2_buffer *b);

/**
 * vb2_qbuf() - implement VIDIOC_QBUF
 * @q:		the queue
 * @mdev:	the media device that owns the requests user space may name in
 *		@b->request_fd; may be NULL if the queue does not support
 *		requests
 * @b:		the &struct v4l2_buffer from user space
 *
 * Validates @b and queues the buffer: directly to the driver, or, with
 * %V4L2_BUF_FLAG_REQUEST_FD, into the media request, which queues it later.
 * Must be called with the queue lock held.
 *
 * Return: 0 or a negative error code (see VIDIOC_QBUF in the uAPI).
 */
int vb2_qbuf(struct vb2_queue *q, struct media_device *mdev,
	     struct v4l2_buffer *b);

/**
 * vb2_expbuf() - implement VIDIOC_EXPBUF
 * @q:	the queue
 * @eb:	the &struct v4l2_exportbuffer from user space; @eb->fd receives the
 *	new dma-buf file descriptor
 *
 * Return: 0 or a negative error code (see VIDIOC_EXPBUF in the uAPI).
 */
int vb2_expbuf(struct vb2_queue *q, struct v4l2_exportbuffer *eb);

/**
 * vb2_dqbuf() - implement VIDIOC_DQBUF
 * @q:		the queue
 * @b:		the &struct v4l2_buffer from user space; filled with the
 *		dequeued buffer
 * @nonblocking: return -EAGAIN instead of waiting when no buffer is done
 *
 * Takes the oldest finished buffer off the queue and describes it in @b.
 * %V4L2_BUF_FLAG_DONE is never set in the result. Must be called with the
 * queue lock held; the lock is dropped while waiting.
 *
 * Return: 0 or a negative error code (see VIDIOC_DQBUF in the uAPI).
 */
int vb2_dqbuf(struct vb2_queue *q, struct v4l2_buffer *b, bool nonblocking);

/**
 * vb2_streamon() - implement VIDIOC_STREAMON
 * @q:		the queue
 * @type:	the buffer type user space passed; must be the queue's
 *
 * Return: 0 or a negative error code (see VIDIOC_STREAMON in the uAPI).
 */
int vb2_streamon(struct vb2_queue *q, enum v4l2_buf_type type);

/**
 * vb2_streamoff() - implement VIDIOC_STREAMOFF
 * @q:		the queue
 * @type:	the buffer type user space passed; must be the queue's
 *
 * Stops streaming and returns every buffer to the dequeued state.
 *
 * Return: 0 or a negative error code (see VIDIOC_STREAMOFF in the uAPI).
 */
int vb2_streamoff(struct vb2_queue *q, enum v4l2_buf_type type);

/**
 * vb2_queue_init() - initialise a V4L2 videobuf2 queue
 * @q:	the queue, with the driver's configuration filled in (type,
 *	io_modes, ops, mem_ops, timestamp_flags, ...)
 *
 * Same as vb2_queue_init_name() with no name.
 *
 * Return: 0, or -EINVAL if the configuration is inconsistent.
 */
int __must_check vb2_queue_init(struct vb2_queue *q);

/**
 * vb2_queue_init_name() - initialise a V4L2 videobuf2 queue with a name
 * @q:		the queue, with the driver's configuration filled in
 * @name:	a name for debug messages, or NULL
 *
 * Checks the V4L2 specific parts of the configuration (timestamp flags,
 * buffer structure size, what request support requires), derives what
 * follows from the buffer type (multi-planar, output, DMA direction) and the
 * timestamp type, installs the V4L2 &struct vb2_buf_ops and then initialises
 * the core part of the queue.
 *
 * Return: 0, or -EINVAL if the configuration is inconsistent.
 */
int __must_check vb2_queue_init_name(struct vb2_queue *q, const char *name);

/**
 * vb2_queue_release() - stop a queue and free its buffers
 * @q:	the queue
 *
 * For the driver's release path: stops streaming and frees every buffer (or
 * orphans those still mapped or exported). Must be called with the queue lock
 * held if the queue has one.
 */
void vb2_queue_release(struct vb2_queue *q);

/**
 * vb2_queue_change_type() - switch a queue to another buffer type
 * @q:		the queue
 * @type:	the new &enum v4l2_buf_type
 *
 * For devices whose node serves related buffer types (raw and sliced VBI,
 * for instance) from one queue. Only possible while the queue has no
 * buffers. Only &vb2_queue.type changes: the direction, the planarity and
 * the DMA direction stay those vb2_queue_init() derived from the first
 * type, so the new type must share them.
 *
 * Return: 0, or -EBUSY if the queue is in use.
 */
int vb2_queue_change_type(struct vb2_queue *q, unsigned int type);

/**
 * vb2_poll() - implement poll() for a queue
 * @q:		the queue
 * @file:	the file being polled
 * @wait:	the poll table
 *
 * Combines the readiness of the queue with the V4L2 event queue of @file
 * (%EPOLLPRI when an event is pending), if the device uses &struct v4l2_fh.
 *
 * Return: the poll mask.
 */
__poll_t vb2_poll(struct vb2_queue *q, struct file *file, poll_table *wait);

/**
 * vb2_queue_is_busy() - tell whether another file handle owns the queue
 * @q:		the queue
 * @file:	the file handle asking
 *
 * The vb2_ioctl_* and vb2_fop_* helpers make the file handle that allocated
 * buffers (or started read()/write() I/O) the owner of the queue; the
 * buffer-changing calls of any other file handle get -EBUSY.
 *
 * Return: true if @q has an owner and it is not @file.
 */
static inline bool vb2_queue_is_busy(struct vb2_queue *q, struct file *file)
{
	return q->owner && q->owner != file->private_data;
}

/*
 * Helpers for &struct v4l2_ioctl_ops. They work on video_devdata(file)->queue
 * and assume the ioctl core holds the queue lock (vdev->queue->lock, or
 * vdev->lock), which it does for these ioctls.
 */

/**
 * vb2_ioctl_reqbufs() - &v4l2_ioctl_ops.vidioc_reqbufs helper
 * @file:	the file handle
 * @priv:	unused
 * @p:		the ioctl argument
 *
 * Return: as vb2_reqbufs(), or -EBUSY if another file handle owns the queue.
 * On success the caller becomes the owner, or nobody is if @p->count is 0.
 */
int vb2_ioctl_reqbufs(struct file *file, void *priv,
		      struct v4l2_requestbuffers *p);

/**
 * vb2_ioctl_create_bufs() - &v4l2_ioctl_ops.vidioc_create_bufs helper
 * @file:	the file handle
 * @priv:	unused
 * @p:		the ioctl argument
 *
 * Return: as vb2_create_bufs(), or -EBUSY if another file handle owns the
 * queue. On success with a non-zero count the caller becomes the owner.
 */
int vb2_ioctl_create_bufs(struct file *file, void *priv,
			  struct v4l2_create_buffers *p);

/**
 * vb2_ioctl_prepare_buf() - &v4l2_ioctl_ops.vidioc_prepare_buf helper
 * @file:	the file handle
 * @priv:	unused
 * @p:		the ioctl argument
 *
 * Return: as vb2_prepare_buf(), or -EBUSY if another file handle owns the
 * queue.
 */
int vb2_ioctl_prepare_buf(struct file *file, void *priv,
			  struct v4l2_buffer *p);

/**
 * vb2_ioctl_querybuf() - &v4l2_ioctl_ops.vidioc_querybuf helper
 * @file:	the file handle
 * @priv:	unused
 * @p:		the ioctl argument
 *
 * Any file handle may query buffers, owner or not.
 *
 * Return: as vb2_querybuf().
 */
int vb2_ioctl_querybuf(struct file *file, void *priv, struct v4l2_buffer *p);

/**
 * vb2_ioctl_qbuf() - &v4l2_ioctl_ops.vidioc_qbuf helper
 * @file:	the file handle
 * @priv:	unused
 * @p:		the ioctl argument
 *
 * Return: as vb2_qbuf(), or -EBUSY if another file handle owns the queue.
 */
int vb2_ioctl_qbuf(struct file *file, void *priv, struct v4l2_buffer *p);

/**
 * vb2_ioctl_dqbuf() - &v4l2_ioctl_ops.vidioc_dqbuf helper
 * @file:	the file handle; %O_NONBLOCK selects non-blocking operation
 * @priv:	unused
 * @p:		the ioctl argument
 *
 * Return: as vb2_dqbuf(), or -EBUSY if another file handle owns the queue.
 */
int vb2_ioctl_dqbuf(struct file *file, void *priv, struct v4l2_buffer *p);

/**
 * vb2_ioctl_streamon() - &v4l2_ioctl_ops.vidioc_streamon helper
 * @file:	the file handle
 * @priv:	unused
 * @i:		the buffer type
 *
 * Return: as vb2_streamon(), or -EBUSY if another file handle owns the
 * queue.
 */
int vb2_ioctl_streamon(struct file *file, void *priv, enum v4l2_buf_type i);

/**
 * vb2_ioctl_streamoff() - &v4l2_ioctl_ops.vidioc_streamoff helper
 * @file:	the file handle
 * @priv:	unused
 * @i:		the buffer type
 *
 * Return: as vb2_streamoff(), or -EBUSY if another file handle owns the
 * queue.
 */
int vb2_ioctl_streamoff(struct file *file, void *priv, enum v4l2_buf_type i);

/**
 * vb2_ioctl_expbuf() - &v4l2_ioctl_ops.vidioc_expbuf helper
 * @file:	the file handle
 * @priv:	unused
 * @p:		the ioctl argument
 *
 * Return: as vb2_expbuf(), or -EBUSY if another file handle owns the queue.
 */
int vb2_ioctl_expbuf(struct file *file, void *priv,
		     struct v4l2_exportbuffer *p);

/**
 * vb2_ioctl_remove_bufs() - &v4l2_ioctl_ops.vidioc_remove_bufs helper
 * @file:	the file handle
 * @priv:	unused
 * @p:		the ioctl argument
 *
 * Frees buffers @p->index to @p->index + @p->count - 1; their indexes may be
 * reused by later VIDIOC_CREATE_BUFS calls.
 *
 * Return: 0 or a negative error code (see VIDIOC_REMOVE_BUFS in the uAPI),
 * -EBUSY if another file handle owns the queue.
 */
int vb2_ioctl_remove_bufs(struct file *file, void *priv,
			  struct v4l2_remove_buffers *p);

/*
 * Helpers for &struct v4l2_file_operations. Unless stated otherwise they
 * take the queue lock themselves (vdev->queue->lock, or vdev->lock if the
 * queue has none).
 */

/**
 * vb2_fop_mmap() - &v4l2_file_operations.mmap helper
 * @file:	the file being mapped
 * @vma:	the new mapping
 *
 * Return: 0 or a negative error code (see mmap() in the uAPI).
 */
int vb2_fop_mmap(struct file *file, struct vm_area_struct *vma);

/**
 * vb2_fop_release() - &v4l2_file_operations.release helper
 * @file:	the file being closed
 *
 * Releases the queue if @file owns it (or nobody does), under the queue lock,
 * then releases the &struct v4l2_fh with v4l2_fh_release().
 *
 * Return: 0.
 */
int vb2_fop_release(struct file *file);

/**
 * _vb2_fop_release() - vb2_fop_release() for drivers with their own release
 * @file:	the file being closed
 * @lock:	the lock to hold while releasing the queue, or NULL if the
 *		caller already holds the right one
 *
 * For a driver release function that does more than vb2_fop_release() and
 * calls this in the middle.
 *
 * Return: 0.
 */
int _vb2_fop_release(struct file *file, struct mutex *lock);

/**
 * vb2_fop_write() - &v4l2_file_operations.write helper
 * @file:	the file written to
 * @buf:	user data
 * @count:	number of bytes at @buf
 * @ppos:	file position
 *
 * write() on a %VB2_WRITE output queue: the data goes into buffers that the
 * core queues for the driver. The writer becomes the owner of the queue.
 *
 * Return: the number of bytes consumed or a negative error code; -EBUSY if
 * another file handle owns the queue.
 */
ssize_t vb2_fop_write(struct file *file, const char __user *buf,
		      size_t count, loff_t *ppos);

/**
 * vb2_fop_read() - &v4l2_file_operations.read helper
 * @file:	the file read from
 * @buf:	user buffer
 * @count:	size of @buf
 * @ppos:	file position
 *
 * read() on a %VB2_READ capture queue: the core runs the queue and copies
 * finished buffers out. The reader becomes the owner of the queue.
 *
 * Return: the number of bytes read or a negative error code; -EBUSY if
 * another file handle owns the queue.
 */
ssize_t vb2_fop_read(struct file *file, char __user *buf,
		     size_t count, loff_t *ppos);

/**
 * vb2_fop_poll() - &v4l2_file_operations.poll helper
 * @file:	the file being polled
 * @wait:	the poll table
 *
 * As vb2_poll(), under the queue lock. If polling starts read()/write()
 * emulation, @file becomes the owner of the queue.
 *
 * Return: the poll mask.
 */
__poll_t vb2_fop_poll(struct file *file, poll_table *wait);

#ifndef CONFIG_MMU
/**
 * vb2_fop_get_unmapped_area() - &v4l2_file_operations.get_unmapped_area helper
 * @file:	the file being mapped
 * @addr:	address hint
 * @len:	length of the mapping
 * @pgoff:	page offset, the mmap cookie of a plane
 * @flags:	mmap flags
 *
 * Only for kernels without an MMU, where a mapping is the buffer itself.
 *
 * Return: the kernel address of the plane, or a negative error code.
 */
unsigned long vb2_fop_get_unmapped_area(struct file *file, unsigned long addr,
					unsigned long len, unsigned long pgoff,
					unsigned long flags);
#endif

/**
 * vb2_video_unregister_device() - unregister a video device and stop its queue
 * @vdev:	the video device; @vdev->queue is the queue to release
 *
 * Use instead of video_unregister_device() when the device uses
 * vb2_fop_release(). The device node goes first, so no new call can reach
 * the queue; then the queue is released under its lock, which stops
 * streaming (the driver's &vb2_ops.stop_streaming runs now, not at the last
 * close) and wakes any thread blocked in VIDIOC_DQBUF. The video device is
 * kept alive until the queue has been released.
 */
void vb2_video_unregister_device(struct video_device *vdev);

/**
 * vb2_ops_wait_prepare() - &vb2_ops.wait_prepare helper
 * @vq:	the queue; @vq->lock must be set
 *
 * Drops @vq->lock before the core sleeps waiting for a buffer.
 */
void vb2_ops_wait_prepare(struct vb2_queue *vq);

/**
 * vb2_ops_wait_finish() - &vb2_ops.wait_finish helper
 * @vq:	the queue; @vq->lock must be set
 *
 * Takes @vq->lock again after the core has waited for a buffer.
 */
void vb2_ops_wait_finish(struct vb2_queue *vq);

/**
 * vb2_request_validate() - &media_device_ops.req_validate helper
 * @req:	the request being queued
 *
 * Refuses a request without buffers, then prepares every object of the
 * request that can be prepared. If one fails, those already prepared are
 * unprepared again. Drivers with their own req_validate call this at the
 * end of it.
 *
 * Return: 0; -ENOENT if @req holds no buffer; or the error of the object that
 * failed to prepare.
 */
int vb2_request_validate(struct media_request *req);

/**
 * vb2_request_queue() - &media_device_ops.req_queue helper
 * @req:	the validated request
 *
 * Queues every object of @req. Buffers sit at the end of the object list, so
 * they are queued after the controls and whatever else the request carries.
 * An object may leave the request while it is queued.
 */
void vb2_request_queue(struct media_request *req);

#endif /* _MEDIA_VIDEOBUF2_V4L2_H */
