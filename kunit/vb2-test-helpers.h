/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Test doubles for the videobuf2 KUnit suites: a fake driver (&struct
 * vb2_ops) and a fake allocator (&struct vb2_mem_ops) that write every
 * callback into a log, can be told to fail any callback, and check the
 * rules the core must follow when it calls them.
 */
#ifndef _VB2_TEST_HELPERS_H
#define _VB2_TEST_HELPERS_H

#include <kunit/test.h>
#include <linux/completion.h>
#include <linux/delay.h>
#include <linux/file.h>
#include <linux/jiffies.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/spinlock.h>
#include <linux/types.h>
#include <media/media-device.h>
#include <media/media-request.h>
#include <media/v4l2-dev.h>
#include <media/v4l2-device.h>
#include <media/videobuf2-v4l2.h>

/**
 * enum vb2t_cb - the callbacks the test doubles record
 *
 * The first group are &struct vb2_ops members, the second
 * &struct vb2_mem_ops members.
 *
 * @VB2T_QUEUE_SETUP: &vb2_ops.queue_setup.
 * @VB2T_WAIT_PREPARE: &vb2_ops.wait_prepare.
 * @VB2T_WAIT_FINISH: &vb2_ops.wait_finish.
 * @VB2T_BUF_OUT_VALIDATE: &vb2_ops.buf_out_validate.
 * @VB2T_BUF_INIT: &vb2_ops.buf_init.
 * @VB2T_BUF_PREPARE: &vb2_ops.buf_prepare.
 * @VB2T_BUF_FINISH: &vb2_ops.buf_finish.
 * @VB2T_BUF_CLEANUP: &vb2_ops.buf_cleanup.
 * @VB2T_PREPARE_STREAMING: &vb2_ops.prepare_streaming.
 * @VB2T_START_STREAMING: &vb2_ops.start_streaming.
 * @VB2T_STOP_STREAMING: &vb2_ops.stop_streaming.
 * @VB2T_UNPREPARE_STREAMING: &vb2_ops.unprepare_streaming.
 * @VB2T_BUF_QUEUE: &vb2_ops.buf_queue.
 * @VB2T_BUF_REQUEST_COMPLETE: &vb2_ops.buf_request_complete.
 * @VB2T_ALLOC: &vb2_mem_ops.alloc.
 * @VB2T_PUT: &vb2_mem_ops.put.
 * @VB2T_FREE: not a callback: the fake allocator freed memory (its last
 *	reference, the queue's or a mapping's, went away).
 * @VB2T_GET_DMABUF: &vb2_mem_ops.get_dmabuf.
 * @VB2T_GET_USERPTR: &vb2_mem_ops.get_userptr.
 * @VB2T_PUT_USERPTR: &vb2_mem_ops.put_userptr.
 * @VB2T_PREPARE: &vb2_mem_ops.prepare.
 * @VB2T_FINISH: &vb2_mem_ops.finish.
 * @VB2T_ATTACH_DMABUF: &vb2_mem_ops.attach_dmabuf.
 * @VB2T_DETACH_DMABUF: &vb2_mem_ops.detach_dmabuf.
 * @VB2T_MAP_DMABUF: &vb2_mem_ops.map_dmabuf.
 * @VB2T_UNMAP_DMABUF: &vb2_mem_ops.unmap_dmabuf.
 * @VB2T_VADDR: &vb2_mem_ops.vaddr.
 * @VB2T_COOKIE: &vb2_mem_ops.cookie.
 * @VB2T_NUM_USERS: &vb2_mem_ops.num_users.
 * @VB2T_MMAP: &vb2_mem_ops.mmap.
 * @VB2T_NR_CB: number of entries.
 */
enum vb2t_cb {
	VB2T_QUEUE_SETUP,
	VB2T_WAIT_PREPARE,
	VB2T_WAIT_FINISH,
	VB2T_BUF_OUT_VALIDATE,
	VB2T_BUF_INIT,
	VB2T_BUF_PREPARE,
	VB2T_BUF_FINISH,
	VB2T_BUF_CLEANUP,
	VB2T_PREPARE_STREAMING,
	VB2T_START_STREAMING,
	VB2T_STOP_STREAMING,
	VB2T_UNPREPARE_STREAMING,
	VB2T_BUF_QUEUE,
	VB2T_BUF_REQUEST_COMPLETE,
	VB2T_ALLOC,
	VB2T_PUT,
	VB2T_FREE,
	VB2T_GET_DMABUF,
	VB2T_GET_USERPTR,
	VB2T_PUT_USERPTR,
	VB2T_PREPARE,
	VB2T_FINISH,
	VB2T_ATTACH_DMABUF,
	VB2T_DETACH_DMABUF,
	VB2T_MAP_DMABUF,
	VB2T_UNMAP_DMABUF,
	VB2T_VADDR,
	VB2T_COOKIE,
	VB2T_NUM_USERS,
	VB2T_MMAP,
	VB2T_NR_CB,
};

/* Which callbacks go into the log by default: all but the chatty ones. */
#define VB2T_LOG_DEFAULT						\
	(~(BIT_ULL(VB2T_VADDR) | BIT_ULL(VB2T_COOKIE) |		\
	   BIT_ULL(VB2T_NUM_USERS) | BIT_ULL(VB2T_PREPARE) |		\
	   BIT_ULL(VB2T_FINISH) | BIT_ULL(VB2T_WAIT_PREPARE) |		\
	   BIT_ULL(VB2T_WAIT_FINISH)))

/* Only the driver's callbacks. */
#define VB2T_LOG_DRIVER	(BIT_ULL(VB2T_ALLOC) - 1)

#define VB2T_LOG_SIZE	512
#define VB2T_MAX_BUFS	1024

/**
 * struct vb2t_buffer - the fake driver's buffer
 * @vb:		the V4L2 buffer, first as videobuf2 requires.
 * @list:	entry in &vb2t_ctx.active while the driver owns the buffer.
 */
struct vb2t_buffer {
	struct vb2_v4l2_buffer	vb;
	struct list_head	list;
};

/**
 * struct vb2t_event - one log entry
 * @cb:		the &enum vb2t_cb.
 * @index:	the buffer index, or -1 for queue-wide callbacks.
 */
struct vb2t_event {
	u8	cb;
	s16	index;
};

/**
 * struct vb2t_bufstate - what the fake driver knows of one buffer index
 * @inited:	buf_init succeeded and buf_cleanup has not been called.
 * @prepared:	buf_prepare succeeded and buf_finish has not been called.
 * @owned:	the buffer went through buf_queue and has not been returned.
 */
struct vb2t_bufstate {
	u8	inited;
	u8	prepared;
	u8	owned;
};

/**
 * struct vb2t_fail - failure injection for one callback
 * @at:		fail the call whose running count equals this (0: never).
 * @sticky:	also fail every later call.
 * @err:	the error to return.
 */
struct vb2t_fail {
	unsigned int	at;
	bool		sticky;
	int		err;
};

/**
 * struct vb2t_ctx - one fake driver with its queue and fake allocator
 *
 * Everything counted or checked is protected by @lock, a spinlock
 * because some callbacks (mem finish, via vb2_buffer_done()) may run in
 * interrupt context.
 *
 * @test:	the test this context belongs to.
 * @q:		the queue under test.
 * @mutex:	&vb2_queue.lock of @q.
 * @dev:	a struct device for allocators that need one.
 * @backend:	a real allocator the fake one wraps (counting and failing
 *		in front of it), or NULL for the fake's own memory.
 * @mem_ops:	the allocator @q uses: the fake one.
 * @lock:	protects what follows.
 * @count:	calls per &enum vb2t_cb.
 * @fail:	failure injection per &enum vb2t_cb.
 * @log:	the callbacks in the order they came, see @log_mask.
 * @log_len:	entries used in @log (entries beyond VB2T_LOG_SIZE are
 *		counted in @count only, and flagged by @log_overflow).
 * @log_overflow: @log was full.
 * @log_mask:	BIT_ULL() of each &enum vb2t_cb that is logged.
 * @bufs:	per index knowledge of the fake driver.
 * @active:	buffers the fake driver holds, in buf_queue order.
 * @violations:	broken contract rules seen so far.
 * @first_violation: description of the first one.
 * @num_planes:	planes per buffer that queue_setup asks for.
 * @sizes:	plane sizes that queue_setup asks for (and accepts as
 *		minimum for CREATE_BUFS).
 * @max_buffers: queue_setup lowers the number of buffers to this (0: no
 *		limit).
 * @raise_buffers: queue_setup raises the number of buffers to this, in
 *		either form, also when asked again (0: does not).
 * @agree_none:	queue_setup of the CREATE_BUFS form agrees to no buffer,
 *		as imx7-media-csi does once its memory limit is reached.
 * @plane_dev:	allocation device queue_setup gives each plane (NULL: @dev).
 * @keep_on_stop: stop_streaming forgets the buffers instead of returning
 *		them, as a buggy driver would (only for tests that want the
 *		core to reclaim them).
 * @start_returns_queued: a failing start_streaming returns its buffers
 *		with %VB2_BUF_STATE_QUEUED, as drivers must (false: it forgets
 *		them, as a buggy driver would).
 * @complete_in_queue: buf_queue completes the buffer at once with this
 *		state (0: do not).
 * @start_count: the count argument of the last start_streaming.
 * @setup_planes_in: \*num_planes as the last queue_setup received it.
 * @setup_buffers_in: \*num_buffers as the last queue_setup received it.
 * @observe:	called first thing in every &struct vb2_ops callback with
 *		the callback and its buffer (NULL for callbacks about the
 *		queue), so that a test can record what a driver sees there.
 * @observe_priv: for @observe.
 * @live_mem:	memory objects of the fake allocator not freed yet.
 * @removing:	vb2t_remove_bufs() is running: buf_cleanup may come for a
 *		buffer that is still prepared, as in 6.12 (REMOVE_BUFS drops
 *		a buffer prepared with PREPARE_BUF without buf_finish).
 */
struct vb2t_ctx {
	struct kunit		*test;
	struct vb2_queue	q;
	struct mutex		mutex;	/* the queue lock */
	struct device		*dev;
	const struct vb2_mem_ops *backend;
	struct vb2_mem_ops	mem_ops;

	spinlock_t		lock;	/* see above */
	unsigned int		count[VB2T_NR_CB];
	struct vb2t_fail	fail[VB2T_NR_CB];
	struct vb2t_event	log[VB2T_LOG_SIZE];
	unsigned int		log_len;
	bool			log_overflow;
	u64			log_mask;
	struct vb2t_bufstate	*bufs;
	struct list_head	active;
	unsigned int		violations;
	char			first_violation[128];

	unsigned int		num_planes;
	unsigned int		sizes[VB2_MAX_PLANES];
	unsigned int		max_buffers;
	unsigned int		raise_buffers;
	bool			agree_none;
	struct device		*plane_dev[VB2_MAX_PLANES];
	bool			keep_on_stop;
	bool			start_returns_queued;
	enum vb2_buffer_state	complete_in_queue;
	unsigned int		start_count;
	unsigned int		setup_planes_in;
	unsigned int		setup_buffers_in;
	void			(*observe)(struct vb2t_ctx *ctx, enum vb2t_cb cb,
					   struct vb2_buffer *vb);
	void			*observe_priv;
	int			live_mem;
	bool			removing;
};

/**
 * struct vb2t_config - how vb2t_ctx_create() sets a queue up
 * @type:	&enum v4l2_buf_type of the queue.
 * @io_modes:	&enum vb2_io_modes; 0 means MMAP, USERPTR and DMABUF.
 * @backend:	real allocator behind the fake one, or NULL.
 * @core_only:	initialise with vb2_core_queue_init() and no
 *		&vb2_queue.buf_ops, as a non-V4L2 subsystem would.
 * @max_num_buffers: &vb2_queue.max_num_buffers (0: the default).
 * @min_queued_buffers: &vb2_queue.min_queued_buffers.
 * @min_reqbufs_allocation: &vb2_queue.min_reqbufs_allocation (0: the
 *		default, @min_queued_buffers + 1).
 * @supports_requests: &vb2_queue.supports_requests.
 * @num_planes:	planes per buffer (0: one).
 * @size:	size of every plane (0: one page).
 * @timestamp_flags: &vb2_queue.timestamp_flags (0: monotonic).
 * @allow_cache_hints: &vb2_queue.allow_cache_hints.
 * @dma_all_memory: give the device a DMA mask that covers all memory, so
 *		that the DMA API maps pages where they are instead of bouncing
 *		them through swiotlb (0: a 32-bit mask).
 * @no_wait_ops: leave &vb2_ops.wait_prepare and &vb2_ops.wait_finish NULL,
 *		as drivers that let the core drop &vb2_queue.lock do.
 */
struct vb2t_config {
	u32			type;
	unsigned int		io_modes;
	const struct vb2_mem_ops *backend;
	bool			core_only;
	unsigned int		max_num_buffers;
	unsigned int		min_queued_buffers;
	unsigned int		min_reqbufs_allocation;
	bool			supports_requests;
	unsigned int		num_planes;
	unsigned int		size;
	u32			timestamp_flags;
	bool			allow_cache_hints;
	bool			dma_all_memory;
	bool			no_wait_ops;
};

/**
 * struct vb2t_alloc - a real allocator, a parameter of the allocator tests
 * @name:	for the test output.
 * @ops:	its &struct vb2_mem_ops.
 * @any_user_memory: it takes any user memory for USERPTR; dma-contig only
 *		takes memory contiguous for the device, which anonymous user
 *		memory is only within a page.
 * @user_vaddr:	it maps USERPTR memory into the kernel.
 * @lazy_vaddr:	it maps MMAP memory into the kernel on the first
 *		vb2_plane_vaddr(), not when it allocates it.
 */
struct vb2t_alloc {
	const char			*name;
	const struct vb2_mem_ops	*ops;
	bool				any_user_memory;
	bool				user_vaddr;
	bool				lazy_vaddr;
};

enum { VB2T_VMALLOC, VB2T_CONTIG, VB2T_SG, VB2T_NR_ALLOCS };

extern const struct vb2t_alloc vb2t_allocs[VB2T_NR_ALLOCS];
const void *vb2t_alloc_gen_params(const void *prev, char *desc);

struct vb2t_ctx *vb2t_ctx_create(struct kunit *test,
				 const struct vb2t_config *cfg);
struct vb2t_ctx *vb2t_ctx_simple(struct kunit *test, u32 type);

void vb2t_fail(struct vb2t_ctx *ctx, enum vb2t_cb cb, unsigned int nth,
	       int err);
void vb2t_fail_from(struct vb2t_ctx *ctx, enum vb2t_cb cb, unsigned int nth,
		    int err);
void vb2t_fail_clear(struct vb2t_ctx *ctx);

unsigned int vb2t_count(struct vb2t_ctx *ctx, enum vb2t_cb cb);
void *vb2t_backend_priv(struct vb2_buffer *vb, unsigned int plane);
void vb2t_log_reset(struct vb2t_ctx *ctx);
const char *vb2t_log_str(struct vb2t_ctx *ctx);
const char *vb2t_log_of(struct vb2t_ctx *ctx, int index);
unsigned int vb2t_owned(struct vb2t_ctx *ctx);
struct vb2_buffer *vb2t_peek(struct vb2t_ctx *ctx);

bool vb2t_complete_next(struct vb2t_ctx *ctx, enum vb2_buffer_state state);
bool vb2t_complete_index(struct vb2t_ctx *ctx, unsigned int index,
			 enum vb2_buffer_state state);
void vb2t_complete_all(struct vb2t_ctx *ctx, enum vb2_buffer_state state);

void vb2t_check_contract(struct vb2t_ctx *ctx);
void vb2t_release(struct vb2t_ctx *ctx);

/* V4L2 calls with the queue lock held, on a buffer described by index. */
void vb2t_init_buffer(struct vb2t_ctx *ctx, struct v4l2_buffer *b,
		      struct v4l2_plane *planes, unsigned int index);
int vb2t_reqbufs(struct vb2t_ctx *ctx, u32 memory, unsigned int *count);
int vb2t_create_bufs(struct vb2t_ctx *ctx, u32 memory, unsigned int count,
		     unsigned int size, unsigned int *first,
		     unsigned int *created);
int vb2t_qbuf_mmap(struct vb2t_ctx *ctx, unsigned int index);
int vb2t_qbuf(struct vb2t_ctx *ctx, struct v4l2_buffer *b);
int vb2t_prepare_buf(struct vb2t_ctx *ctx, struct v4l2_buffer *b);
int vb2t_querybuf(struct vb2t_ctx *ctx, struct v4l2_buffer *b);
int vb2t_dqbuf(struct vb2t_ctx *ctx, struct v4l2_buffer *b);
int vb2t_dqbuf_index(struct vb2t_ctx *ctx, unsigned int *index, u32 *flags);
int vb2t_streamon(struct vb2t_ctx *ctx);
int vb2t_streamoff(struct vb2t_ctx *ctx);
int vb2t_remove_bufs(struct vb2t_ctx *ctx, unsigned int start,
		     unsigned int count);
enum vb2_buffer_state vb2t_state(struct vb2t_ctx *ctx, unsigned int index);

/* Core calls with the queue lock held. */
int vb2t_core_reqbufs(struct vb2t_ctx *ctx, enum vb2_memory memory,
		      unsigned int *count);
int vb2t_core_qbuf(struct vb2t_ctx *ctx, unsigned int index,
		   struct media_request *req);
int vb2t_core_dqbuf(struct vb2t_ctx *ctx, unsigned int *index);
int vb2t_core_streamon(struct vb2t_ctx *ctx);
int vb2t_core_streamoff(struct vb2t_ctx *ctx);

/* User memory and files for the memory model tests. */
unsigned long vb2t_user_mem(struct kunit *test, unsigned long size);
struct file *vb2t_queue_file(struct vb2t_ctx *ctx);
void vb2t_close_fd_at_exit(struct kunit *test, int fd);
void vb2t_close_fd_now(int fd);
void vb2t_close_fd_early(struct kunit *test, int fd);
int vb2t_export_fd(struct kunit *test, const struct dma_buf_ops *ops,
		   size_t size, void *priv);
int vb2t_iomem_fd(struct kunit *test, size_t size, void **vaddr);

/**
 * vb2t_wait_until() - wait for what a worker releases
 * @cond:	the condition, true once it is done.
 *
 * For files the code under test puts from a KUnit case: their release runs
 * in a worker (see vb2t_close_fd_now()). Polls for up to 5 s.
 *
 * Return: @cond's last value.
 */
#define vb2t_wait_until(cond)						\
({									\
	unsigned long __end = jiffies + 5 * HZ;				\
	bool __done;							\
									\
	for (;;) {							\
		flush_delayed_fput();					\
		__done = (cond);					\
		if (__done || time_after(jiffies, __end))		\
			break;						\
		usleep_range(1000, 2000);				\
	}								\
	__done;								\
})

/**
 * struct vb2t_waiter - a second task sleeping in a blocking DQBUF
 * @ctx:	the context.
 * @ret:	what its DQBUF returned.
 * @index:	the index of the buffer it dequeued.
 * @done:	signalled when it returned.
 */
struct vb2t_waiter {
	struct vb2t_ctx		*ctx;
	int			ret;
	unsigned int		index;
	struct completion	done;
};

bool vb2t_start_waiter(struct kunit *test, struct vb2t_ctx *ctx,
		       struct vb2t_waiter **pw);

/* A test that provokes a WARN on purpose brackets it (see tools/report/vb2check.py). */
void vb2t_expect_warning_begin(struct kunit *test);
void vb2t_expect_warning_end(struct kunit *test);

/**
 * struct vb2t_vdev - a registered video device whose queue is a context's
 * @ctx:	the context.
 * @v4l2_dev:	its V4L2 device.
 * @vdev:	the video device, with the vb2_ioctl_* and vb2_fop_* helpers.
 * @user:	a page of user memory for ioctl arguments.
 */
struct vb2t_vdev {
	struct vb2t_ctx		*ctx;
	struct v4l2_device	v4l2_dev;
	struct video_device	vdev;
	unsigned long		user;
};

struct vb2t_vdev *vb2t_vdev_register(struct vb2t_ctx *ctx);
struct file *vb2t_vdev_open(struct vb2t_vdev *v);
long vb2t_vdev_ioctl(struct vb2t_vdev *v, struct file *file, unsigned int cmd,
		     void *arg, size_t size);

/* Media requests without a media device node. */
struct media_device *vb2t_mdev_create(struct kunit *test);
struct media_request *vb2t_request_alloc(struct kunit *test,
					 struct media_device *mdev);
int vb2t_request_queue(struct media_request *req);
int vb2t_request_reinit(struct media_request *req);

#endif /* _VB2_TEST_HELPERS_H */
