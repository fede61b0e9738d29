/* SPDX-License-Identifier: GPL-2.0 */
/*
 * videobuf2 core: the subsystem-neutral buffer queue.
 *
 * A &struct vb2_queue owns a set of &struct vb2_buffer objects, moves them
 * between user space and the driver, and hands the memory behind them to a
 * &struct vb2_mem_ops allocator. V4L2 (videobuf2-v4l2.h) and DVB
 * (dvb_vb2.c) sit on top of this header and translate their own ioctl
 * structures through &struct vb2_buf_ops.
 */
#ifndef _MEDIA_VIDEOBUF2_CORE_H
#define _MEDIA_VIDEOBUF2_CORE_H

#include <linux/mm_types.h>
#include <linux/mutex.h>
#include <linux/poll.h>
#include <linux/dma-buf.h>
#include <linux/bitops.h>
#include <linux/atomic.h>
#include <linux/dma-direction.h>
#include <linux/list.h>
#include <linux/spinlock.h>
#include <linux/wait.h>
#include <media/media-request.h>
#include <media/frame_vector.h>

#define VB2_MAX_FRAME	(32)
#define VB2_MAX_PLANES	(8)

/**
 * enum vb2_memory - where the memory of the buffers of a queue comes from
 *
 * The values are the ones of &enum v4l2_memory, so V4L2 can pass its
 * memory field through unchanged.
 *
 * @VB2_MEMORY_UNKNOWN:	no buffers exist, the queue has not chosen a model.
 * @VB2_MEMORY_MMAP:	the allocator provides the memory; user space maps
 *			it with mmap(). read()/write() emulation uses it too.
 * @VB2_MEMORY_USERPTR:	user space provides a virtual address range that
 *			is pinned for the time the buffer is queued.
 * @VB2_MEMORY_DMABUF:	user space provides a dma-buf file descriptor that
 *			is attached and mapped while the buffer is queued.
 */
enum vb2_memory {
	VB2_MEMORY_UNKNOWN	= 0,
	VB2_MEMORY_MMAP		= 1,
	VB2_MEMORY_USERPTR	= 2,
	VB2_MEMORY_DMABUF	= 4,
};

struct vb2_fileio_data;
struct vb2_threadio_data;
struct vb2_debugfs;
struct dma_fence;
struct vb2_buffer;

/**
 * struct vb2_mem_ops - the interface of a memory allocator
 *
 * Every callback that takes @buf_priv receives the per-plane cookie that
 * @alloc, @get_userptr or @attach_dmabuf returned. Which callbacks an
 * allocator must provide depends on the memory models it supports:
 * MMAP needs @alloc, @put and @mmap (@num_users and @get_dmabuf make
 * orphaned mappings and VIDIOC_EXPBUF work); USERPTR needs @get_userptr and
 * @put_userptr; DMABUF import needs @attach_dmabuf, @detach_dmabuf,
 * @map_dmabuf and @unmap_dmabuf; read()/write() emulation needs @vaddr.
 *
 * @alloc:	allocate @size bytes (a multiple of PAGE_SIZE) for one plane of
 *		@vb on @dev. Returns the allocator's cookie or an ERR_PTR().
 *		The memory is reference counted by the allocator: it lives
 *		until @put was called and every user mapping is gone.
 * @put:	drop the queue's reference on memory from @alloc.
 * @get_dmabuf:	export memory from @alloc as a new dma-buf; @flags are the
 *		O_ACCMODE bits the exporter should honour. Returns the dma-buf
 *		or an ERR_PTR()/NULL on failure.
 * @get_userptr: pin @size bytes of user memory at @vaddr for DMA by @dev.
 *		Returns the allocator's cookie or an ERR_PTR().
 * @put_userptr: unpin memory from @get_userptr.
 * @prepare:	make the plane's memory visible to the device (cache clean)
 *		before it is handed to the driver. Optional. The allocator
 *		honours &vb2_buffer.skip_cache_sync_on_prepare itself.
 * @finish:	make the plane's memory visible to the CPU (cache invalidate)
 *		after the driver returned it. May run in interrupt context.
 *		Optional. The allocator honours
 *		&vb2_buffer.skip_cache_sync_on_finish itself.
 * @attach_dmabuf: attach @dev to the dma-buf @dbuf, of which @size bytes
 *		are used. Returns the allocator's cookie or an ERR_PTR().
 * @detach_dmabuf: undo @attach_dmabuf.
 * @map_dmabuf:	map an attached dma-buf for DMA; returns 0 or an error.
 * @unmap_dmabuf: undo @map_dmabuf.
 * @vaddr:	return a kernel virtual address of the plane, creating the
 *		mapping if needed, or NULL if there cannot be one.
 * @cookie:	return the allocator-specific handle drivers program into
 *		hardware (e.g. a &dma_addr_t pointer or a &struct sg_table).
 * @num_users:	return how many users the memory has; 1 means only the
 *		queue, more means user mappings or exported dma-bufs exist.
 * @mmap:	map the plane into @vma (always from offset 0 of the plane).
 */
struct vb2_mem_ops {
	void		*(*alloc)(struct vb2_buffer *vb,
				  struct device *dev,
				  unsigned long size);
	void		(*put)(void *buf_priv);
	struct dma_buf *(*get_dmabuf)(struct vb2_buffer *vb,
				      void *buf_priv,
				      unsigned long flags);

	void		*(*get_userptr)(struct vb2_buffer *vb,
					struct device *dev,
					unsigned long vaddr,
					unsigned long size);
	void		(*put_userptr)(void *buf_priv);

	void		(*prepare)(void *buf_priv);
	void		(*finish)(void *buf_priv);

	void		*(*attach_dmabuf)(struct vb2_buffer *vb,
					  struct device *dev,
					  struct dma_buf *dbuf,
					  unsigned long size);
	void		(*detach_dmabuf)(void *buf_priv);
	int		(*map_dmabuf)(void *buf_priv);
	void		(*unmap_dmabuf)(void *buf_priv);

	void		*(*vaddr)(struct vb2_buffer *vb, void *buf_priv);
	void		*(*cookie)(struct vb2_buffer *vb, void *buf_priv);

	unsigned int	(*num_users)(void *buf_priv);

	int		(*mmap)(void *buf_priv, struct vm_area_struct *vma);
};

/**
 * struct vb2_plane - one memory plane of a buffer
 *
 * The core owns every member; drivers read @bytesused, @length and
 * @data_offset (and set the payload with vb2_set_plane_payload()).
 *
 * The members are ordered so that the structure has no padding: a buffer
 * embeds 16 of them (8 in &vb2_buffer, 8 in &vb2_v4l2_buffer), and 8 bytes
 * less per plane keep a typical driver buffer ({ vb2_v4l2_buffer,
 * list_head }) within a 1 KiB kmalloc cache instead of a 2 KiB one.
 *
 * @mem_priv:	the allocator's cookie for this plane, NULL if no memory is
 *		attached (e.g. a USERPTR buffer that was never queued).
 * @dbuf:	DMABUF only: the imported dma-buf, holding one reference.
 * @m:		memory-model specific location of the plane.
 * @m.offset:	MMAP: the cookie user space passes to mmap() as offset.
 * @m.userptr:	USERPTR: the user virtual address.
 * @m.fd:	DMABUF: the file descriptor user space passed at QBUF.
 * @dbuf_mapped: DMABUF only: non-zero while @map_dmabuf is in effect.
 * @bytesused:	payload of the plane in bytes.
 * @length:	size of the plane's memory in bytes.
 * @min_length:	the size queue_setup asked for; USERPTR and DMABUF memory
 *		smaller than this is refused.
 * @data_offset: offset of the payload from the start of the plane.
 * @dbuf_duplicated: DMABUF only: this plane uses the same dma-buf as an
 *		earlier plane of the buffer and shares its attachment
 *		(@mem_priv); it holds no reference and is never mapped or
 *		detached on its own.
 */
struct vb2_plane {
	void			*mem_priv;
	struct dma_buf		*dbuf;
	union {
		unsigned int	offset;
		unsigned long	userptr;
		int		fd;
	} m;
	unsigned int		dbuf_mapped;
	unsigned int		bytesused;
	unsigned int		length;
	unsigned int		min_length;
	unsigned int		data_offset;
	bool			dbuf_duplicated;
};

/**
 * enum vb2_io_modes - the I/O methods a queue offers (bit mask)
 * @VB2_MMAP:		streaming with driver-allocated, mmap()ed memory.
 * @VB2_USERPTR:	streaming with user-allocated memory.
 * @VB2_READ:		read() emulation on a capture queue.
 * @VB2_WRITE:		write() emulation on an output queue.
 * @VB2_DMABUF:		streaming with imported dma-bufs.
 */
enum vb2_io_modes {
	VB2_MMAP	= BIT(0),
	VB2_USERPTR	= BIT(1),
	VB2_READ	= BIT(2),
	VB2_WRITE	= BIT(3),
	VB2_DMABUF	= BIT(4),
};

/**
 * enum vb2_buffer_state - where a buffer is in its life cycle
 *
 * The legal changes between these states are listed in
 * vb2_transitions[] in videobuf2-core.c, drawn in the project's
 * Documentation/core.rst, and checked by the core on every change.
 *
 * @VB2_BUF_STATE_DEQUEUED:	user space owns the buffer.
 * @VB2_BUF_STATE_IN_REQUEST:	the buffer is bound to a media request that
 *				has not been queued to the queue yet.
 * @VB2_BUF_STATE_PREPARING:	the core is preparing the buffer (acquiring
 *				memory, calling buf_prepare).
 * @VB2_BUF_STATE_QUEUED:	queued by user space, waiting in the core for
 *				the driver to be started.
 * @VB2_BUF_STATE_ACTIVE:	handed to the driver with buf_queue; only the
 *				driver may touch it until vb2_buffer_done().
 * @VB2_BUF_STATE_DONE:		returned by the driver, waiting to be dequeued.
 * @VB2_BUF_STATE_ERROR:	like %VB2_BUF_STATE_DONE, but the driver (or
 *				vb2_discard_done()) reported a failure.
 */
enum vb2_buffer_state {
	VB2_BUF_STATE_DEQUEUED,
	VB2_BUF_STATE_IN_REQUEST,
	VB2_BUF_STATE_PREPARING,
	VB2_BUF_STATE_QUEUED,
	VB2_BUF_STATE_ACTIVE,
	VB2_BUF_STATE_DONE,
	VB2_BUF_STATE_ERROR,
};

struct vb2_queue;

/**
 * struct vb2_buffer - one buffer of a queue
 *
 * The core allocates &vb2_queue.buf_struct_size bytes per buffer; drivers
 * embed this structure (through &struct vb2_v4l2_buffer for V4L2) at the
 * start of their own buffer structure.
 *
 * Lock legend (the tag that ends the description of each member):
 *
 * - I: set when the buffer is created, constant until it is freed.
 * - O: written by the buffer's current owner: the driver while the buffer
 *   is %VB2_BUF_STATE_ACTIVE, otherwise whoever holds &vb2_queue.lock
 *   (the caller's own serialisation when that pointer is NULL).
 * - Q: &vb2_queue.lock.
 * - D: &vb2_queue.done_lock.
 * - S: see the table vb2_transitions[] in videobuf2-core.c; the core
 *   asserts the lock each change needs.
 */
struct vb2_buffer {
	/** @vb2_queue: the queue the buffer belongs to. (I) */
	struct vb2_queue	*vb2_queue;
	/** @index: position of the buffer in the queue. (I) */
	unsigned int		index;

	/**
	 * @type: the queue's &vb2_queue.type when the buffer was created. (I)
	 */
	unsigned int		type;

	/** @memory: the &enum vb2_memory the buffer was created for. (I) */
	unsigned int		memory;
	/** @num_planes: number of valid entries in @planes. (I) */
	unsigned int		num_planes;

	/**
	 * @timestamp: time stamp in nanoseconds; set by the driver for capture,
	 * taken from user space for output queues that copy time stamps. (O)
	 */
	u64			timestamp;

	/**
	 * @request: the media request the buffer was queued with; holds a
	 * reference until the buffer is dequeued or cancelled. (Q)
	 */
	struct media_request	*request;

	/**
	 * @req_obj: the buffer's media request object, bound to @request while
	 * the buffer is part of it: bound as the buffer enters IN_REQUEST
	 * (under Q), unbound as it completes (under D) or leaves the request
	 * otherwise (under Q). Its own members belong to the request core (see
	 * media-request.h). (S)
	 */
	struct media_request_object	req_obj;

	/**
	 * @state: the &enum vb2_buffer_state. Write it only through the core
	 * (v4l2-mem2mem's direct %VB2_BUF_STATE_ACTIVE is tolerated). (S)
	 */
	enum vb2_buffer_state	state;

	/** @synced: the prepare memop ran and finish has not run since. (O) */
	unsigned int		synced:1;

	/**
	 * @prepared: buf_prepare succeeded and buf_finish has not run
	 * since. (O)
	 */
	unsigned int		prepared:1;

	/**
	 * @copied_timestamp: @timestamp was copied from an output buffer
	 * (v4l2_m2m_buf_copy_metadata()); cleared when the buffer gets new
	 * USERPTR or DMABUF memory and when the queue is cancelled. (O)
	 */
	unsigned int		copied_timestamp:1;

	/**
	 * @skip_cache_sync_on_prepare: user space asked to skip the cache clean
	 * for this QBUF (checked by the allocator). (O)
	 */
	unsigned int		skip_cache_sync_on_prepare:1;

	/**
	 * @skip_cache_sync_on_finish: user space asked to skip the cache
	 * invalidate for this QBUF (checked by the allocator). (O)
	 */
	unsigned int		skip_cache_sync_on_finish:1;

	/**
	 * @initialized: buf_init succeeded for the memory currently attached,
	 * so buf_cleanup is owed before that memory goes. (O)
	 */
	unsigned int		initialized:1;

	/**
	 * @complete_request: during a cancel: this buffer makes the driver
	 * complete its unused request (buf_request_complete), once per request
	 * and queue. (Q)
	 */
	unsigned int		complete_request:1;

	/** @planes: the memory planes; see &struct vb2_plane. (O) */
	struct vb2_plane	planes[VB2_MAX_PLANES];

	/**
	 * @queued_entry: link in &vb2_queue.queued_list from QBUF until DQBUF
	 * or cancel. (Q)
	 */
	struct list_head	queued_entry;

	/** @done_entry: link in &vb2_queue.done_list while DONE/ERROR. (D) */
	struct list_head	done_entry;

	/**
	 * @rcu: frees the buffer after a grace period, so that
	 * vb2_find_buffer() may walk the buffers without the queue lock. (Q)
	 */
	struct rcu_head		rcu;
#if IS_ENABLED(CONFIG_VIDEOBUF2_DEBUGFS)
	/**
	 * @state_since: jiffies of the last change of @state
	 * (CONFIG_VIDEOBUF2_DEBUGFS). (S)
	 */
	unsigned long		state_since;

	/**
	 * @handed_ns: when the buffer last went to the driver, for the time the
	 * driver takes; 0 if that is not being timed
	 * (CONFIG_VIDEOBUF2_DEBUGFS). (S)
	 */
	u64			handed_ns;
#endif
#if IS_ENABLED(CONFIG_VIDEOBUF2_IMPLICIT_SYNC)
	/**
	 * @fence: the fence that implicit synchronisation put on the buffer's
	 * dma-bufs while the driver has it, or NULL
	 * (CONFIG_VIDEOBUF2_IMPLICIT_SYNC). (S)
	 */
	struct dma_fence	*fence;

	/**
	 * @exports: the dma-bufs exported from the buffer that are still open,
	 * which get @fence (CONFIG_VIDEOBUF2_IMPLICIT_SYNC). (Q)
	 */
	struct list_head	exports;
#endif
};

/**
 * struct vb2_ops - callbacks of the driver that owns a queue
 *
 * The core calls them with &vb2_queue.lock held when the queue has one
 * (always, for the ioctl paths) and never from interrupt context.
 *
 * @queue_setup:	negotiate the buffer layout before memory is allocated.
 *			For VIDIOC_REQBUFS \*num_planes is 0 on entry and the
 *			driver fills \*num_planes, sizes[] and optionally
 *			alloc_devs[] from its current format; \*num_buffers
 *			is the total wanted and may be changed. For
 *			VIDIOC_CREATE_BUFS \*num_planes and sizes[] hold what
 *			user space asked for, \*num_buffers is the number to
 *			add to the existing buffers, and the driver returns
 *			-EINVAL if the request cannot work. When fewer buffers
 *			were made than agreed (memory ran out, or the queue
 *			has no room for a number the driver raised), it is
 *			called again, in the form of the first call, with the
 *			smaller count, which it may accept or refuse.
 * @wait_prepare:	release the driver's lock before the core sleeps
 *			waiting for a buffer. When both @wait_prepare and
 *			@wait_finish are NULL, the core releases
 *			&vb2_queue.lock itself.
 * @wait_finish:	take the lock released by @wait_prepare again.
 * @buf_out_validate:	check the user-provided fields of an output buffer
 *			at prepare time and when it is queued into a request
 *			(unless PREPARE_BUF prepared it), in the state user
 *			space left it: DEQUEUED, or IN_REQUEST while its
 *			request is validated. Needed by output queues that
 *			support requests.
 * @buf_init:		called once the memory of a buffer is known: after
 *			allocation for MMAP (the buffer is already in the
 *			queue, vb2_get_buffer() finds it), after new user
 *			memory or a new dma-buf is attached for
 *			USERPTR/DMABUF. An error fails the allocation or the
 *			QBUF. Optional.
 * @buf_prepare:	called before each hand-over of the buffer to the
 *			driver (QBUF or VIDIOC_PREPARE_BUF), while the memory
 *			is still in the CPU domain; validate sizes and set up
 *			hardware state here. An error fails the QBUF. Optional.
 * @buf_finish:		counterpart of @buf_prepare, called before the buffer
 *			returns to user space; the state is DONE or ERROR
 *			after processing, or DEQUEUED/QUEUED when the queue is
 *			being cancelled. Not called when a request fails
 *			validation (the buffer stays prepared) nor when
 *			REMOVE_BUFS drops a prepared buffer. Optional.
 * @buf_cleanup:	counterpart of @buf_init, called before the memory of
 *			the buffer is released, while the buffer is still in
 *			the queue. Optional.
 * @prepare_streaming:	called by STREAMON before anything else; may claim
 *			resources or refuse to stream. Optional.
 * @start_streaming:	the hardware may start: @count buffers have already
 *			been given to @buf_queue. It is deferred until
 *			&vb2_queue.min_queued_buffers buffers are queued. On
 *			error the driver returns every buffer it got with
 *			vb2_buffer_done(%VB2_BUF_STATE_QUEUED).
 * @stop_streaming:	stop the hardware and return every buffer received by
 *			@buf_queue with vb2_buffer_done() (DONE or ERROR).
 *			The core reclaims, with a warning, buffers a driver
 *			keeps.
 * @unprepare_streaming: counterpart of @prepare_streaming, called by
 *			STREAMOFF, REQBUFS or release. Optional.
 * @buf_queue:		give a buffer to the driver. May be called before
 *			@start_streaming for buffers queued before STREAMON.
 *			The driver may complete the buffer from here.
 * @buf_request_complete: a buffer that belongs to a queued request is being
 *			cancelled without having reached the driver; complete
 *			the request's other objects (e.g. controls). Needed by
 *			queues that support requests.
 */
struct vb2_ops {
	int (*queue_setup)(struct vb2_queue *q,
			   unsigned int *num_buffers, unsigned int *num_planes,
			   unsigned int sizes[], struct device *alloc_devs[]);

	void (*wait_prepare)(struct vb2_queue *q);
	void (*wait_finish)(struct vb2_queue *q);

	int (*buf_out_validate)(struct vb2_buffer *vb);
	int (*buf_init)(struct vb2_buffer *vb);
	int (*buf_prepare)(struct vb2_buffer *vb);
	void (*buf_finish)(struct vb2_buffer *vb);
	void (*buf_cleanup)(struct vb2_buffer *vb);

	int (*prepare_streaming)(struct vb2_queue *q);
	int (*start_streaming)(struct vb2_queue *q, unsigned int count);
	void (*stop_streaming)(struct vb2_queue *q);
	void (*unprepare_streaming)(struct vb2_queue *q);

	void (*buf_queue)(struct vb2_buffer *vb);

	void (*buf_request_complete)(struct vb2_buffer *vb);
};

/**
 * struct vb2_buf_ops - translation between the core and a subsystem's
 *	user-space buffer description (&struct v4l2_buffer, &struct dmx_buffer)
 *
 * The @pb arguments are the subsystem's structure; the core never looks
 * inside it. Only @fill_user_buffer and @fill_vb2_buffer are required;
 * the others may be NULL.
 *
 * @verify_planes_array: check that @pb can describe the planes of @vb;
 *			called before a buffer is dequeued into @pb.
 * @init_buffer:	reset the subsystem part that follows the &struct
 *			vb2_buffer: when a buffer is created and whenever it
 *			returns to user space (DQBUF after its description was
 *			filled in, cancel, a request dropping it unused).
 * @fill_user_buffer:	describe @vb in @pb (QUERYBUF, QBUF, DQBUF ...).
 * @fill_vb2_buffer:	fill @planes with what user space supplied for the
 *			next use of @vb (memory location, length, payload,
 *			data offset); return an error to refuse it.
 * @copy_timestamp:	take the time stamp (and related metadata) from @pb
 *			when the buffer is queued.
 */
struct vb2_buf_ops {
	int (*verify_planes_array)(struct vb2_buffer *vb, const void *pb);
	void (*init_buffer)(struct vb2_buffer *vb);
	void (*fill_user_buffer)(struct vb2_buffer *vb, void *pb);
	int (*fill_vb2_buffer)(struct vb2_buffer *vb, struct vb2_plane *planes);
	void (*copy_timestamp)(struct vb2_buffer *vb, const void *pb);
};

/**
 * struct vb2_queue - a queue of buffers between user space and a driver
 *
 * The driver allocates the structure (usually zeroed and embedded in its
 * own state), fills the configuration members and calls
 * vb2_core_queue_init() (or vb2_queue_init() for V4L2).
 *
 * Lock legend (the tag that ends the description of each member):
 *
 * - I: configuration, set before vb2_core_queue_init() (or by it) and not
 *   changed while buffers exist.
 * - Q: &vb2_queue.lock, the driver's mutex that serialises the entry
 *   points; when it is NULL the caller serialises them itself.
 * - QM: written with both Q and @mmap_lock held; read with either one.
 * - D: @done_lock (spinlock, taken irqsave: vb2_buffer_done() runs in
 *   interrupt context). list_empty() peeks without it are allowed only to
 *   decide whether to sleep or to report poll events.
 * - A: atomic, no lock.
 * - X: may be set from any context; readers tolerate a stale value.
 * - T: written only by the entry points that drivers may call without Q
 *   (vb2_core_queue_release(), vb2_thread_start(), vb2_thread_stop()),
 *   which run alone on the queue; read by the same task.
 */
struct vb2_queue {
	/**
	 * @type: subsystem-defined buffer type (&enum v4l2_buf_type for V4L2);
	 * user requests must match it. (I)
	 */
	unsigned int			type;

	/** @io_modes: &enum vb2_io_modes the queue offers. (I) */
	unsigned int			io_modes;

	/**
	 * @dev: device used for allocations when queue_setup leaves @alloc_devs
	 * empty. (I)
	 */
	struct device			*dev;

	/** @dma_attrs: DMA attributes passed to the allocator. (I) */
	unsigned long			dma_attrs;

	/**
	 * @bidirectional: map buffers %DMA_BIDIRECTIONAL whatever the direction
	 * of the queue (hardware that reads back what it writes, or the
	 * reverse). (I)
	 */
	unsigned int			bidirectional:1;

	/**
	 * @fileio_read_once: read() emulation stops (EOF) after one buffer. (I)
	 */
	unsigned int			fileio_read_once:1;

	/**
	 * @fileio_write_immediately: write() emulation queues the buffer after
	 * every write() call instead of when it is full. (I)
	 */
	unsigned int			fileio_write_immediately:1;

	/**
	 * @allow_zero_bytesused: let output buffers with a zero payload reach
	 * the driver (the V4L2 layer otherwise uses the plane length). (I)
	 */
	unsigned int			allow_zero_bytesused:1;

	/**
	 * @quirk_poll_must_check_waiting_for_buffers: poll() reports EPOLLERR
	 * on a capture queue on which nothing was queued yet. (I)
	 */
	unsigned int		   quirk_poll_must_check_waiting_for_buffers:1;

	/**
	 * @supports_requests: buffers may be queued through media requests. (I)
	 */
	unsigned int			supports_requests:1;

	/**
	 * @requires_requests: buffers must be queued through media requests;
	 * implies @supports_requests. (I)
	 */
	unsigned int			requires_requests:1;

	/**
	 * @uses_qbuf: a buffer was queued without a request since the last
	 * cancel; request queueing now fails with -EBUSY. (Q)
	 */
	unsigned int			uses_qbuf:1;

	/**
	 * @uses_requests: a buffer was queued with a request since the last
	 * cancel; direct queueing now fails with -EBUSY. (Q)
	 */
	unsigned int			uses_requests:1;

	/**
	 * @allow_cache_hints: honour the user's cache-sync hints and
	 * %V4L2_MEMORY_FLAG_NON_COHERENT for MMAP buffers. (I)
	 */
	unsigned int			allow_cache_hints:1;

	/**
	 * @non_coherent_mem: the current MMAP buffers were allocated from
	 * non-coherent memory. (QM)
	 */
	unsigned int			non_coherent_mem:1;

	/**
	 * @lock: the driver's mutex serialising the queue's entry points, or
	 * NULL. v4l2-ioctl.c takes it around queue ioctls. (I)
	 */
	struct mutex			*lock;

	/**
	 * @owner: the file handle that owns the buffers; managed by the
	 * subsystem layer (V4L2), not by the core. (Q)
	 */
	void				*owner;

	/** @ops: driver callbacks. (I) */
	const struct vb2_ops		*ops;
	/** @mem_ops: allocator callbacks. (I) */
	const struct vb2_mem_ops	*mem_ops;
	/** @buf_ops: subsystem translation callbacks. (I) */
	const struct vb2_buf_ops	*buf_ops;

	/** @drv_priv: driver data, see vb2_get_drv_priv(). (I) */
	void				*drv_priv;

	/**
	 * @subsystem_flags: flags owned by the subsystem layer (for V4L2:
	 * %VB2_V4L2_FL_SUPPORTS_M2M_HOLD_CAPTURE_BUF). (I)
	 */
	u32				subsystem_flags;

	/**
	 * @buf_struct_size: bytes to allocate per buffer (the driver's buffer
	 * structure); 0 selects the subsystem default. (I)
	 */
	unsigned int			buf_struct_size;

	/**
	 * @timestamp_flags: V4L2_BUF_FLAG_TIMESTAMP_* and TSTAMP_SRC_*
	 * bits. (I)
	 */
	u32				timestamp_flags;

	/**
	 * @gfp_flags: extra GFP flags for buffer memory (e.g. %GFP_DMA32). (I)
	 */
	gfp_t				gfp_flags;

	/**
	 * @min_queued_buffers: buffers that must be queued before
	 * start_streaming is called. (I)
	 */
	u32				min_queued_buffers;

	/**
	 * @min_reqbufs_allocation: VIDIOC_REQBUFS allocates at least this many
	 * buffers; raised to @min_queued_buffers + 1 when smaller. (I)
	 */
	u32				min_reqbufs_allocation;

	/**
	 * @alloc_devs: per-plane allocation devices chosen by queue_setup. (Q)
	 */
	struct device			*alloc_devs[VB2_MAX_PLANES];

	/**
	 * @mmap_lock: serialises buffer creation and freeing (with Q held)
	 * against vb2_mmap() and vb2_get_unmapped_area(), which run without
	 * Q. (I)
	 */
	struct mutex			mmap_lock;

	/** @memory: &enum vb2_memory of the current buffers. (QM) */
	unsigned int			memory;

	/**
	 * @dma_dir: DMA direction of the buffers, from @is_output and
	 * @bidirectional. (I)
	 */
	enum dma_data_direction		dma_dir;

	/**
	 * @bufs: the buffers by index: an array of @max_num_buffers pointers,
	 * NULL for a hole. A lookup is one load at any index. (QM)
	 */
	struct vb2_buffer		**bufs;

	/**
	 * @bufs_bitmap: the indices that have a buffer, beside @bufs: for
	 * finding free index ranges and the next buffer of a walk. @bufs and
	 * @bufs_bitmap exist only while buffers do (allocated with the first,
	 * freed with the last) and are freed after an RCU grace period, as
	 * buffers are, for the lockless walks (see vb2_next_buffer()). (QM)
	 */
	unsigned long			*bufs_bitmap;

	/** @num_buffers: number of buffers in @bufs. (QM) */
	unsigned int			num_buffers;

	/**
	 * @max_num_buffers: highest number of buffers (and indices); 0 asks for
	 * %VB2_MAX_FRAME, at most 32768 with 4 KiB pages. (I)
	 */
	unsigned int			max_num_buffers;

	/**
	 * @queued_list: buffers queued by user space and not yet dequeued, in
	 * QBUF order. (Q)
	 */
	struct list_head		queued_list;

	/** @queued_count: length of @queued_list. (Q) */
	unsigned int			queued_count;

	/** @owned_by_drv_count: buffers the driver holds (state ACTIVE). (A) */
	atomic_t			owned_by_drv_count;
	/** @done_list: buffers returned by the driver, oldest first. (D) */
	struct list_head		done_list;

	/**
	 * @done_lock: protects @done_list and the transitions out of
	 * ACTIVE. (I)
	 */
	spinlock_t			done_lock;

	/**
	 * @done_wq: waiters for @done_list, for the driver to return all
	 * buffers, and for @error. (I)
	 */
	wait_queue_head_t		done_wq;

	/**
	 * @streaming: STREAMON succeeded and STREAMOFF has not happened. (Q)
	 */
	unsigned int			streaming:1;

	/**
	 * @start_streaming_called: start_streaming succeeded; buffers go to the
	 * driver as soon as they are queued. (Q)
	 */
	unsigned int			start_streaming_called:1;

	/**
	 * @waiting_for_buffers: capture queue on which nothing was queued since
	 * allocation or STREAMOFF (see
	 * @quirk_poll_must_check_waiting_for_buffers). (Q)
	 */
	unsigned int			waiting_for_buffers:1;

	/**
	 * @waiting_in_dqbuf: a task sleeps in DQBUF with Q released; every
	 * other DQBUF and REQBUFS(n > 0) get -EBUSY. (Q)
	 */
	unsigned int			waiting_in_dqbuf:1;

	/** @is_multiplanar: the buffer type is multi-planar. (I) */
	unsigned int			is_multiplanar:1;
	/** @is_output: the queue takes data from user space. (I) */
	unsigned int			is_output:1;

	/**
	 * @is_busy: buffers were allocated since the last REQBUFS(0) or
	 * release, see vb2_is_busy(). (Q)
	 */
	unsigned int			is_busy:1;

	/**
	 * @copy_timestamp: time stamps of output buffers come from user
	 * space. (I)
	 */
	unsigned int			copy_timestamp:1;

	/**
	 * @last_buffer_dequeued: a capture buffer flagged LAST was dequeued;
	 * DQBUF returns -EPIPE and poll reports readable until STREAMOFF or
	 * vb2_clear_last_buffer_dequeued(). (Q)
	 */
	unsigned int			last_buffer_dequeued:1;

	/**
	 * @teardown: set while the core runs a queue-wide operation that
	 * drivers may call without Q (vb2_core_queue_release(), the vb2
	 * thread's start and stop); the state machine then does not assert
	 * Q. (T)
	 */
	bool				teardown;

	/* Alone in its memory location: vb2_queue_error() sets it anywhere. */
	/** @error: vb2_queue_error() was called; cleared by a cancel. (X) */
	unsigned int			error:1;

	/** @fileio: read()/write() emulation state, NULL when inactive. (Q) */
	struct vb2_fileio_data		*fileio;
	/** @threadio: vb2_thread_start() state, NULL when inactive. (Q) */
	struct vb2_threadio_data	*threadio;

	/** @name: name used in debug messages; filled in when empty. (I) */
	char				name[32];
#if IS_ENABLED(CONFIG_VIDEOBUF2_DEBUGFS)
	/**
	 * @dev_node_name: the name of the video device node of the queue, once
	 * the V4L2 layer has seen it; names the debugfs directory
	 * (CONFIG_VIDEOBUF2_DEBUGFS). (Q)
	 */
	char				dev_node_name[32];

	/**
	 * @debugfs: the queue's debugfs files and counters, from its first
	 * buffers to its release (CONFIG_VIDEOBUF2_DEBUGFS). (Q)
	 */
	struct vb2_debugfs		*debugfs;
#endif
#if IS_ENABLED(CONFIG_VIDEOBUF2_IMPLICIT_SYNC)
	/**
	 * @fence_context: dma-fence context of the queue's implicit fences
	 * (CONFIG_VIDEOBUF2_IMPLICIT_SYNC). (I)
	 */
	u64				fence_context;

	/** @fence_seqno: the last fence's sequence number. (Q) */
	u64				fence_seqno;
	/** @fence_lock: the lock of the queue's fences. (I) */
	spinlock_t			fence_lock;
#endif
};

/**
 * vb2_queue_allows_cache_hints() - may user space skip cache maintenance?
 * @q:		the queue.
 *
 * Return: true if the driver allows cache hints and the queue uses MMAP
 * memory, the only model for which the hints are honoured.
 */
static inline bool vb2_queue_allows_cache_hints(struct vb2_queue *q)
{
	return q->allow_cache_hints && q->memory == VB2_MEMORY_MMAP;
}

/**
 * vb2_plane_vaddr() - kernel virtual address of a plane
 * @vb:		the buffer.
 * @plane_no:	index of the plane.
 *
 * Return: the address the allocator provides (creating the kernel mapping
 * if needed), or NULL if the plane does not exist, has no memory attached
 * or cannot be mapped.
 */
void *vb2_plane_vaddr(struct vb2_buffer *vb, unsigned int plane_no);

/**
 * vb2_plane_cookie() - allocator-specific handle of a plane
 * @vb:		the buffer.
 * @plane_no:	index of the plane.
 *
 * Allocators ship a typed accessor for the cookie, for example
 * vb2_dma_contig_plane_dma_addr() or vb2_dma_sg_plane_desc().
 *
 * Return: the allocator's cookie, or NULL if the plane does not exist or
 * has no memory attached.
 */
void *vb2_plane_cookie(struct vb2_buffer *vb, unsigned int plane_no);

/**
 * vb2_buffer_done() - the driver gives a buffer back
 * @vb:		a buffer the driver received through &vb2_ops.buf_queue.
 * @state:	%VB2_BUF_STATE_DONE or %VB2_BUF_STATE_ERROR for a processed
 *		buffer, or %VB2_BUF_STATE_QUEUED to return a buffer unused
 *		(start_streaming failing).
 *
 * Buffers may be returned in any order and from any context, including
 * hard interrupt handlers. A DONE or ERROR buffer is synced for the CPU,
 * unbound from its request and appended to the done list, and DQBUF or
 * poll() waiters are woken. After this call the driver must not touch
 * the buffer until it is queued to it again.
 */
void vb2_buffer_done(struct vb2_buffer *vb, enum vb2_buffer_state state);

/**
 * vb2_discard_done() - mark every buffer on the done list as failed
 * @q:		the queue.
 *
 * For suspend/resume: data captured before the suspend is stale, so the
 * buffers already returned are reported to user space as errors. The
 * driver must have stopped its hardware and interrupt handlers first.
 */
void vb2_discard_done(struct vb2_queue *q);

/**
 * vb2_wait_for_all_buffers() - sleep until the driver returned all buffers
 * @q:		the queue.
 *
 * Meant for &vb2_ops.stop_streaming: it waits, without releasing any
 * lock, until the driver has passed every buffer it owns to
 * vb2_buffer_done().
 *
 * Return: 0, or -EINVAL if the queue is not streaming.
 */
int vb2_wait_for_all_buffers(struct vb2_queue *q);

/**
 * vb2_core_querybuf() - describe a buffer to user space
 * @q:		the queue.
 * @vb:		a buffer of @q (the caller checked the index).
 * @pb:		the subsystem's buffer structure to fill.
 */
void vb2_core_querybuf(struct vb2_queue *q, struct vb2_buffer *vb, void *pb);

/**
 * vb2_core_reqbufs() - free all buffers and allocate a new set
 * @q:		the queue.
 * @memory:	the &enum vb2_memory of the new buffers.
 * @flags:	%V4L2_MEMORY_FLAG_NON_COHERENT or 0; honoured only for MMAP
 *		on queues that allow cache hints.
 * @count:	in: the number of buffers wanted, 0 to only free; out: the
 *		number allocated.
 *
 * Cancels the queue, frees every buffer (memory still mapped or exported
 * stays alive, orphaned, until its last user goes), then negotiates the
 * layout with &vb2_ops.queue_setup and allocates. The count is raised to
 * &vb2_queue.min_reqbufs_allocation and capped at
 * &vb2_queue.max_num_buffers; if queue_setup raises it beyond that, or
 * memory runs out, queue_setup is asked to accept what was made.
 *
 * Return: 0 or a negative error: -EBUSY while streaming, while a DQBUF
 * sleeps or while read()/write() emulation is active, -EINVAL for a
 * memory model the queue does not offer, -ENOMEM if not even
 * &vb2_queue.min_reqbufs_allocation buffers could be allocated or
 * queue_setup raises the smaller count again, or queue_setup's error.
 */
int vb2_core_reqbufs(struct vb2_queue *q, enum vb2_memory memory,
		     unsigned int flags, unsigned int *count);

/**
 * vb2_core_create_bufs() - add buffers to a queue
 * @q:		the queue.
 * @memory:	the &enum vb2_memory; must equal the current one if buffers
 *		exist.
 * @flags:	as for vb2_core_reqbufs(); must match the current buffers.
 * @count:	in: the number of buffers wanted; out: the number created.
 * @requested_planes: the number of planes user space asked for.
 * @requested_sizes: their sizes, checked by &vb2_ops.queue_setup.
 * @first_index: out: index of the first new buffer; the new buffers use
 *		the consecutive indices from there (reusing holes left by
 *		vb2_core_remove_bufs()).
 *
 * The count is capped at the room left below &vb2_queue.max_num_buffers
 * before queue_setup; when fewer buffers than queue_setup agreed to are
 * made (memory, room for a raised count, or a run of free indices),
 * queue_setup is asked to accept what was made.
 *
 * Return: 0 or a negative error: -ENOBUFS when the queue already holds
 * &vb2_queue.max_num_buffers buffers, -EINVAL on a memory model or
 * coherency mismatch or when queue_setup refuses the first time, -ENOMEM
 * when no buffer was made (also when queue_setup agreed to none) or when
 * queue_setup does not accept the smaller number, whatever it returned,
 * -EBUSY during read()/write() emulation.
 */
int vb2_core_create_bufs(struct vb2_queue *q, enum vb2_memory memory,
			 unsigned int flags, unsigned int *count,
			 unsigned int requested_planes,
			 const unsigned int requested_sizes[],
			 unsigned int *first_index);

/**
 * vb2_core_prepare_buf() - prepare a buffer without queueing it
 * @q:		the queue.
 * @vb:		a DEQUEUED buffer of @q.
 * @pb:		the subsystem's buffer structure (in: memory description,
 *		out: updated buffer description).
 *
 * Acquires the memory (USERPTR, DMABUF), calls &vb2_ops.buf_prepare and
 * syncs the memory for the device, so that a later QBUF is cheap.
 *
 * Return: 0 or a negative error (-EINVAL if the buffer is not dequeued or
 * already prepared, -EIO if the queue is in error, -EBUSY during
 * read()/write() emulation, or the error of a failing callback).
 */
int vb2_core_prepare_buf(struct vb2_queue *q, struct vb2_buffer *vb, void *pb);

/**
 * vb2_core_remove_bufs() - free a range of buffers
 * @q:		the queue.
 * @start:	index of the first buffer.
 * @count:	number of buffers; 0 does nothing.
 *
 * Every index in the range must hold a DEQUEUED buffer; the freed
 * indices can be reused by vb2_core_create_bufs(). Either all buffers
 * of the range are freed or none is.
 *
 * Return: 0, -EINVAL if the range leaves the queue or contains a hole,
 * -EBUSY if a buffer in it is in use or read()/write() emulation is
 * active.
 */
int vb2_core_remove_bufs(struct vb2_queue *q, unsigned int start, unsigned int count);

/**
 * vb2_core_qbuf() - queue a buffer, directly or into a media request
 * @q:		the queue.
 * @vb:		a DEQUEUED buffer of @q.
 * @pb:		the subsystem's buffer structure, or NULL when the core
 *		queues on its own behalf.
 * @req:	the media request to bind the buffer to, or NULL.
 *
 * With @req the buffer is only bound to the request (state IN_REQUEST);
 * it is prepared when the request is validated and queued when the
 * request is queued. Without @req the buffer is prepared if needed,
 * queued, and handed to the driver if it has started; the call may start
 * streaming when &vb2_queue.min_queued_buffers is reached.
 *
 * Return: 0 or a negative error: -EINVAL for a buffer in the wrong state,
 * -EIO if the queue is in error, -EBADR if the queue requires requests and
 * @req is NULL, -EBUSY when mixing queueing with and without requests, or
 * the error of a failing callback (including start_streaming, in which
 * case the buffer stays queued).
 */
int vb2_core_qbuf(struct vb2_queue *q, struct vb2_buffer *vb, void *pb,
		  struct media_request *req);

/**
 * vb2_core_dqbuf() - take the oldest finished buffer back from the queue
 * @q:		the queue.
 * @pindex:	out: index of the buffer; may be NULL.
 * @pb:		the subsystem's buffer structure to fill; may be NULL.
 * @nonblocking: return -EAGAIN instead of sleeping.
 *
 * Sleeps (dropping the driver's lock, see &vb2_ops.wait_prepare) until a
 * buffer is done, the queue stops streaming or fails. A buffer the driver
 * completed with an error is returned successfully; the subsystem
 * reports the error flag.
 *
 * Return: 0 or a negative error: -EBUSY while another task sleeps in
 * DQBUF (whatever else holds), -EINVAL if not streaming, -EIO if the
 * queue is in error, -EPIPE after the last buffer of a capture queue,
 * -EAGAIN, -ERESTARTSYS on a signal, or the error of
 * &vb2_buf_ops.verify_planes_array.
 */
int vb2_core_dqbuf(struct vb2_queue *q, unsigned int *pindex, void *pb,
		   bool nonblocking);

/**
 * vb2_core_streamon() - start streaming
 * @q:		the queue.
 * @type:	must be &vb2_queue.type.
 *
 * Calls &vb2_ops.prepare_streaming and, once
 * &vb2_queue.min_queued_buffers buffers are queued (now or by a later
 * QBUF), &vb2_ops.start_streaming. If start_streaming fails, the buffers
 * are back in the QUEUED state and STREAMON can be tried again.
 *
 * Return: 0 (also when already streaming) or a negative error: -EINVAL
 * for a wrong type, no buffers, fewer buffers than min_queued_buffers;
 * -EBUSY during read()/write() emulation; or the driver's error.
 */
int vb2_core_streamon(struct vb2_queue *q, unsigned int type);

/**
 * vb2_core_streamoff() - stop streaming and cancel all buffers
 * @q:		the queue.
 * @type:	must be &vb2_queue.type.
 *
 * Stops the driver, returns every buffer to DEQUEUED (also those on the
 * done list and those waiting in media requests), and clears the error and
 * last-buffer state. Works when not streaming, too.
 *
 * Return: 0, -EINVAL for a wrong type, -EBUSY during read()/write()
 * emulation.
 */
int vb2_core_streamoff(struct vb2_queue *q, unsigned int type);

/**
 * vb2_core_expbuf() - export a plane of an MMAP buffer as a dma-buf
 * @q:		the queue.
 * @fd:		out: the new file descriptor.
 * @type:	must be &vb2_queue.type.
 * @vb:		the buffer.
 * @plane:	the plane to export.
 * @flags:	%O_CLOEXEC and access mode (%O_ACCMODE) of the new file.
 *
 * Return: 0, -EINVAL (not MMAP, no exporter, bad type/plane/flags), -EBUSY
 * during read()/write() emulation, or the error of dma_buf_fd().
 */
int vb2_core_expbuf(struct vb2_queue *q, int *fd, unsigned int type,
		    struct vb2_buffer *vb, unsigned int plane, unsigned int flags);

/**
 * vb2_core_queue_init() - check the configuration and initialise a queue
 * @q:		the queue; the driver set at least @type, @io_modes, @ops
 *		(with queue_setup and buf_queue) and @mem_ops.
 *
 * Applies defaults: @max_num_buffers 0 becomes %VB2_MAX_FRAME and values
 * above the index space are clamped; @min_reqbufs_allocation is raised to
 * @min_queued_buffers + 1; @buf_struct_size 0 becomes the size of
 * &struct vb2_buffer.
 *
 * Return: 0, or -EINVAL (with a warning) for an unusable configuration.
 */
int vb2_core_queue_init(struct vb2_queue *q);

/**
 * vb2_core_queue_release() - stop a queue and free all its buffers
 * @q:		the queue.
 *
 * Ends read()/write() emulation, cancels the queue and frees the buffers
 * (mappings and exported dma-bufs keep their memory until they go). The
 * queue structure itself belongs to the driver. Callable without
 * &vb2_queue.lock when nobody else uses the queue any more.
 */
void vb2_core_queue_release(struct vb2_queue *q);

/**
 * vb2_queue_error() - report an unrecoverable error on a queue
 * @q:		the queue.
 *
 * From now on poll() reports EPOLLERR and QBUF/DQBUF fail with -EIO; all
 * sleepers are woken. STREAMOFF, REQBUFS or releasing the queue clear the
 * error, so call this only while streaming. Any context.
 */
void vb2_queue_error(struct vb2_queue *q);

/**
 * vb2_mmap() - map a plane of an MMAP buffer into user space
 * @q:		the queue.
 * @vma:	the area; its offset is the &vb2_plane.m.offset cookie of the
 *		plane, it must be %VM_SHARED, readable for capture queues,
 *		writable for output queues, and not larger than the plane.
 *
 * The mapping keeps the memory alive after the buffers are freed.
 *
 * Return: 0 or -EINVAL (bad cookie, flags or size; not MMAP), -EBUSY during
 * read()/write() emulation, or the allocator's error.
 */
int vb2_mmap(struct vb2_queue *q, struct vm_area_struct *vma);

#ifndef CONFIG_MMU
/**
 * vb2_get_unmapped_area() - address of a plane for mmap() without an MMU
 * @q:		the queue.
 * @addr:	hint from user space, unused.
 * @len:	length of the mapping.
 * @pgoff:	the plane's mmap cookie in pages.
 * @flags:	mmap flags, unused.
 *
 * Return: the kernel address of the plane, or a negative error code.
 */
unsigned long vb2_get_unmapped_area(struct vb2_queue *q,
				    unsigned long addr,
				    unsigned long len,
				    unsigned long pgoff,
				    unsigned long flags);
#endif

/**
 * vb2_core_poll() - poll() on a queue
 * @q:		the queue.
 * @file:	the polled file.
 * @wait:	the poll table.
 *
 * Reports EPOLLIN|EPOLLRDNORM (capture) or EPOLLOUT|EPOLLWRNORM (output)
 * when a buffer can be dequeued, EPOLLERR when the queue is not streaming
 * or in error. May start read()/write() emulation on a queue without
 * buffers.
 *
 * Return: the event mask.
 */
__poll_t vb2_core_poll(struct vb2_queue *q, struct file *file,
		       struct poll_table_struct *wait);

/**
 * vb2_read() - read() emulation
 * @q:		the queue (capture, with %VB2_READ).
 * @data:	user buffer.
 * @count:	its size.
 * @ppos:	file position, advanced by the bytes read.
 * @nonblock:	do not sleep when no data is available (-EAGAIN).
 *
 * The first call allocates MMAP buffers and starts streaming.
 *
 * Return: the number of bytes read, 0 at the end (read-once queues), or a
 * negative error; -EBUSY if the queue streams through ioctls.
 */
ssize_t vb2_read(struct vb2_queue *q, char __user *data, size_t count,
		 loff_t *ppos, int nonblock);

/**
 * vb2_write() - write() emulation
 * @q:		the queue (output, with %VB2_WRITE).
 * @data:	user data.
 * @count:	its size.
 * @ppos:	file position, advanced by the bytes written.
 * @nonblock:	do not sleep when no buffer is free (-EAGAIN).
 *
 * Return: the number of bytes written or a negative error; -EBUSY if the
 * queue streams through ioctls.
 */
ssize_t vb2_write(struct vb2_queue *q, const char __user *data, size_t count,
		  loff_t *ppos, int nonblock);

/**
 * typedef vb2_thread_fnc - consumer or producer called by the vb2 thread
 * @vb:		a buffer that was just dequeued (capture: holds data; output:
 *		to be filled), also one the driver returned with
 *		%VB2_BUF_STATE_ERROR: its state is DEQUEUED by now, as in 6.12,
 *		so the callback cannot tell.
 * @priv:	the pointer given to vb2_thread_start().
 *
 * Return: 0 to go on, anything else ends the thread's loop.
 */
typedef int (*vb2_thread_fnc)(struct vb2_buffer *vb, void *priv);

/**
 * vb2_thread_start() - run a kernel thread that cycles the queue's buffers
 * @q:		the queue, without buffers.
 * @fnc:	called for every buffer.
 * @priv:	passed to @fnc.
 * @thread_name: the thread is called "vb2-" followed by this.
 *
 * Allocates buffers like read()/write() emulation does and loops DQBUF,
 * @fnc, QBUF in a kernel thread. Kept for videobuf2-dvb and the like; new
 * code should not need it.
 *
 * Return: 0 or a negative error (-EBUSY if the queue is in use).
 */
int vb2_thread_start(struct vb2_queue *q, vb2_thread_fnc fnc, void *priv,
		     const char *thread_name);

/**
 * vb2_thread_stop() - stop the thread started by vb2_thread_start()
 * @q:		the queue.
 *
 * Stops streaming and frees the buffers.
 *
 * Return: 0 or the thread's exit code.
 */
int vb2_thread_stop(struct vb2_queue *q);

/**
 * vb2_is_streaming() - has STREAMON succeeded?
 * @q:		the queue.
 *
 * Return: true between a successful STREAMON and STREAMOFF.
 */
static inline bool vb2_is_streaming(struct vb2_queue *q)
{
	return q->streaming;
}

/**
 * vb2_fileio_is_active() - is read()/write() emulation in use?
 * @q:		the queue.
 *
 * Drivers need this rarely, e.g. to refuse field orders (like
 * %V4L2_FIELD_ALTERNATE) that read() cannot report.
 *
 * Return: true while the emulation owns the queue's buffers.
 */
static inline bool vb2_fileio_is_active(struct vb2_queue *q)
{
	return q->fileio;
}

/**
 * vb2_get_num_buffers() - number of buffers in a queue
 * @q:		the queue.
 *
 * Return: how many buffers exist; with holes from vb2_core_remove_bufs()
 * the highest index may be larger.
 */
static inline unsigned int vb2_get_num_buffers(struct vb2_queue *q)
{
	return READ_ONCE(q->num_buffers);
}

/**
 * vb2_is_busy() - were buffers allocated?
 * @q:		the queue.
 *
 * Drivers refuse format changes while this is true.
 *
 * Return: true from the first allocation until REQBUFS(0) or release.
 */
static inline bool vb2_is_busy(struct vb2_queue *q)
{
	return !!q->is_busy;
}

/**
 * vb2_get_drv_priv() - the driver's private pointer of a queue
 * @q:		the queue.
 *
 * Return: &vb2_queue.drv_priv.
 */
static inline void *vb2_get_drv_priv(struct vb2_queue *q)
{
	return q->drv_priv;
}

/**
 * vb2_set_plane_payload() - set the number of valid bytes in a plane
 * @vb:		the buffer.
 * @plane_no:	the plane; ignored if it does not exist.
 * @size:	payload in bytes; clamped, with a warning, to the plane size.
 *
 * Always inline: drivers call it for every buffer, and -Os kernels would
 * otherwise give each driver an out-of-line copy to call.
 */
static __always_inline void vb2_set_plane_payload(struct vb2_buffer *vb,
						  unsigned int plane_no,
						  unsigned long size)
{
	struct vb2_plane *plane;

	if (plane_no >= vb->num_planes)
		return;
	plane = &vb->planes[plane_no];
	if (WARN_ON_ONCE(size > plane->length))
		size = plane->length;
	plane->bytesused = size;
}

/**
 * vb2_get_plane_payload() - number of valid bytes in a plane
 * @vb:		the buffer.
 * @plane_no:	the plane.
 *
 * Return: the payload, or 0 if the plane does not exist.
 */
static inline unsigned long vb2_get_plane_payload(struct vb2_buffer *vb,
						  unsigned int plane_no)
{
	return plane_no < vb->num_planes ? vb->planes[plane_no].bytesused : 0;
}

/**
 * vb2_plane_size() - size of a plane's memory
 * @vb:		the buffer.
 * @plane_no:	the plane.
 *
 * Return: the plane length in bytes, or 0 if the plane does not exist.
 */
static inline unsigned long
vb2_plane_size(struct vb2_buffer *vb, unsigned int plane_no)
{
	return plane_no < vb->num_planes ? vb->planes[plane_no].length : 0;
}

/**
 * vb2_start_streaming_called() - has the driver been started?
 * @q:		the queue.
 *
 * Return: true once &vb2_ops.start_streaming succeeded, until the queue
 * is cancelled.
 */
static inline bool vb2_start_streaming_called(struct vb2_queue *q)
{
	return q->start_streaming_called;
}

/**
 * vb2_clear_last_buffer_dequeued() - allow dequeueing after a LAST buffer
 * @q:		the queue.
 *
 * For codec drivers that restart decoding without a STREAMOFF.
 */
static inline void vb2_clear_last_buffer_dequeued(struct vb2_queue *q)
{
	q->last_buffer_dequeued = false;
}

/**
 * vb2_get_buffer() - look a buffer up by index
 * @q:		the queue.
 * @index:	the index.
 *
 * The result stays valid while the caller keeps buffers from being freed,
 * i.e. holds &vb2_queue.lock (or &vb2_queue.mmap_lock).
 *
 * Return: the buffer, or NULL if @index holds none.
 */
static inline struct vb2_buffer *vb2_get_buffer(struct vb2_queue *q,
						unsigned int index)
{
	struct vb2_buffer **bufs;

	if (index >= q->max_num_buffers)
		return NULL;
	bufs = READ_ONCE(q->bufs);
	return bufs ? READ_ONCE(bufs[index]) : NULL;
}

/**
 * vb2_next_buffer() - the buffer at or after an index
 * @q:		the queue.
 * @index:	in: the first index to look at; out: the index of the result.
 *
 * The step of vb2_for_each_buffer(): &vb2_queue.bufs_bitmap says where the
 * next buffer is, &vb2_queue.bufs gives it.
 *
 * Same locking as vb2_get_buffer(), or rcu_read_lock() for a walk that
 * may race with buffers being freed: buffers and both tables are freed
 * after a grace period, and an index whose buffer is gone is skipped.
 *
 * Return: the buffer, or NULL if there is none at @index or above.
 */
static inline struct vb2_buffer *vb2_next_buffer(struct vb2_queue *q,
						 unsigned long *index)
{
	/* Pairs with the release in the allocation: see &vb2_queue.bufs. */
	unsigned long *map = smp_load_acquire(&q->bufs_bitmap);
	struct vb2_buffer **bufs = READ_ONCE(q->bufs);
	unsigned long i;

	if (!map || !bufs)
		return NULL;
	for (i = *index;; i++) {
		struct vb2_buffer *vb;

		/*
		 * A walk under rcu_read_lock() only (debugfs, or
		 * vb2_find_buffer() from a mem2mem device_run) reads the
		 * bitmap while __set_bit() and __clear_bit() change it under
		 * the queue's locks. A bit read stale costs nothing: bufs[]
		 * decides, and a buffer created or freed meanwhile may or
		 * may not be seen. data_race() says so to KCSAN.
		 */
		i = data_race(find_next_bit(map, q->max_num_buffers, i));
		if (i >= q->max_num_buffers)
			return NULL;
		vb = READ_ONCE(bufs[i]);
		if (vb) {
			*index = i;
			return vb;
		}
	}
}

/* vb2_for_each_buffer(): start the cursor at index 0. */
static inline unsigned long *vb2_walk_start(unsigned long *index)
{
	*index = 0;
	return index;
}

/**
 * vb2_for_each_buffer() - iterate over the buffers of a queue
 * @q:		the queue.
 * @index:	an unsigned long cursor, set to the index of @vb.
 * @vb:		a &struct vb2_buffer pointer, set to each buffer in turn.
 *
 * Visits the existing buffers in index order, skipping holes. Same
 * locking as vb2_get_buffer(); see vb2_next_buffer() for the cost.
 */
#define vb2_for_each_buffer(q, index, vb)				\
	for (unsigned long *__vb2_at = vb2_walk_start(&(index));	\
	     ((vb) = vb2_next_buffer(q, __vb2_at)); (*__vb2_at)++)

/**
 * vb2_buffer_in_use() - is the memory of a buffer used outside the queue?
 * @q:		the queue.
 * @vb:		the buffer.
 *
 * Return: true if a plane is mapped by user space or exported as a
 * dma-buf (the allocator reports more than one user).
 */
bool vb2_buffer_in_use(struct vb2_queue *q, struct vb2_buffer *vb);

/**
 * vb2_verify_memory_type() - may buffers of this memory model and type be
 *	allocated on the queue?
 * @q:		the queue.
 * @memory:	the &enum vb2_memory asked for.
 * @type:	the buffer type asked for.
 *
 * Return: 0, -EINVAL if the memory model is unknown, not offered by the
 * queue or its allocator, or the type does not match, -EBUSY during
 * read()/write() emulation.
 */
int vb2_verify_memory_type(struct vb2_queue *q,
			   enum vb2_memory memory, unsigned int type);

/**
 * vb2_request_object_is_buffer() - is a request object a vb2 buffer?
 * @obj:	the request object.
 *
 * If so, container_of(obj, struct vb2_buffer, req_obj) is the buffer.
 *
 * Return: true for objects bound by vb2_core_qbuf().
 */
bool vb2_request_object_is_buffer(struct media_request_object *obj);

/**
 * vb2_request_buffer_cnt() - count the buffers in a request
 * @req:	the request.
 *
 * Return: the number of vb2 buffers bound to @req.
 */
unsigned int vb2_request_buffer_cnt(struct media_request *req);

#endif /* _MEDIA_VIDEOBUF2_CORE_H */
