// SPDX-License-Identifier: GPL-2.0-only
/*
 * The V4L2 face of videobuf2.
 *
 * The core (videobuf2-core.c) runs buffers through their states without
 * knowing any uAPI. This file speaks V4L2 for it: it checks what user space
 * passes in struct v4l2_buffer and friends, writes the answers back, and
 * gives drivers ioctl and file operation helpers that also decide which file
 * handle owns a queue.
 */

#include <linux/device.h>
#include <linux/dma-direction.h>
#include <linux/err.h>
#include <linux/fs.h>
#include <linux/kernel.h>
#include <linux/list.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/overflow.h>
#include <linux/poll.h>
#include <linux/printk.h>
#include <linux/rcupdate.h>
#include <linux/sched.h>
#include <linux/string.h>

#include <media/media-request.h>
#include <media/v4l2-common.h>
#include <media/v4l2-dev.h>
#include <media/v4l2-device.h>
#include <media/v4l2-event.h>
#include <media/v4l2-fh.h>
#include <media/videobuf2-v4l2.h>

/**
 * DOC: From struct v4l2_buffer to the core and back
 *
 * The ioctl core has copied struct v4l2_buffer, and for multi-planar types
 * the array of struct v4l2_plane that @m.planes points to, into kernel memory
 * before any function here runs. A buffer travels like this:
 *
 * 1. vb2_qbuf() and vb2_prepare_buf() check what does not depend on the
 *    buffer's state: type, index, memory type, size of the plane array.
 * 2. If the buffer is dequeued and not prepared yet, the plane description,
 *    flags and field are validated and *staged* in struct vb2_v4l2_buffer
 *    (vb2_v4l2_take_user_buffer()). The core buffer itself does not change.
 * 3. The core prepares the buffer - right away, or when the media request it
 *    was queued in gets queued - and collects the staged planes through
 *    &vb2_buf_ops.fill_vb2_buffer.
 * 4. At every VIDIOC_QBUF, also of a buffer prepared earlier, the core hands
 *    the v4l2_buffer to &vb2_buf_ops.copy_timestamp, which takes timestamp and
 *    timecode of output buffers.
 * 5. Whenever the core reports a buffer (QUERYBUF, QBUF, PREPARE_BUF, DQBUF),
 *    &vb2_buf_ops.fill_user_buffer writes the v4l2_buffer back. The state
 *    flags there are computed from the core state, never stored.
 *
 * Locking: everything that takes a struct v4l2_buffer runs under the queue
 * lock (the ioctl core takes &vb2_queue.lock, else &video_device.lock). The
 * staged data of a dequeued buffer is only touched under that lock; the core
 * reads it under the same lock when it prepares the buffer.
 */

static int debug;
module_param(debug, int, 0644);
MODULE_PARM_DESC(debug, "debug messages: 0 none, 1 and up: why a call was refused");

#define vb2_v4l2_dbg(level, q, fmt, ...)				\
	do {								\
		if (debug >= (level))					\
			pr_info("vb2-v4l2: [%s] %s: " fmt,		\
				(q)->name, __func__, ##__VA_ARGS__);	\
	} while (0)

/* enum vb2_memory values travel to and from user space unchanged. */
static_assert((int)VB2_MEMORY_MMAP == (int)V4L2_MEMORY_MMAP);
static_assert((int)VB2_MEMORY_USERPTR == (int)V4L2_MEMORY_USERPTR);
static_assert((int)VB2_MEMORY_DMABUF == (int)V4L2_MEMORY_DMABUF);

/* Buffer state, computed when a buffer is reported; never taken from user space. */
#define VB2_V4L2_STATE_FLAGS						\
	(V4L2_BUF_FLAG_MAPPED | V4L2_BUF_FLAG_QUEUED |			\
	 V4L2_BUF_FLAG_DONE | V4L2_BUF_FLAG_ERROR |			\
	 V4L2_BUF_FLAG_PREPARED | V4L2_BUF_FLAG_IN_REQUEST |		\
	 V4L2_BUF_FLAG_REQUEST_FD | V4L2_BUF_FLAG_TIMESTAMP_MASK)

/* Properties of the data that only its producer states: user space on output queues. */
#define VB2_V4L2_PRODUCER_FLAGS						\
	(V4L2_BUF_FLAG_KEYFRAME | V4L2_BUF_FLAG_PFRAME |		\
	 V4L2_BUF_FLAG_BFRAME | V4L2_BUF_FLAG_TIMECODE |		\
	 V4L2_BUF_FLAG_M2M_HOLD_CAPTURE_BUF)

#define VB2_V4L2_CACHE_HINT_FLAGS					\
	(V4L2_BUF_FLAG_NO_CACHE_INVALIDATE | V4L2_BUF_FLAG_NO_CACHE_CLEAN)

static bool vb2_v4l2_copies_timestamps(const struct vb2_queue *q)
{
	return (q->timestamp_flags & V4L2_BUF_FLAG_TIMESTAMP_MASK) ==
	       V4L2_BUF_FLAG_TIMESTAMP_COPY;
}

/* USERPTR and DMABUF memory is described by user space, MMAP memory by us. */
static bool vb2_v4l2_memory_from_user(u32 memory)
{
	return memory == V4L2_MEMORY_USERPTR || memory == V4L2_MEMORY_DMABUF;
}

/* ---------------------------------------------------------------------- */
/* User space to kernel: VIDIOC_QBUF and VIDIOC_PREPARE_BUF               */
/* ---------------------------------------------------------------------- */

/* What user space says about one plane, in either layout of struct v4l2_buffer. */
struct vb2_v4l2_user_plane {
	u32 bytesused;
	u32 length;
	u32 data_offset;
	s32 fd;
	unsigned long userptr;
};

/*
 * The single-planar API folds its one plane into struct v4l2_buffer (with
 * no data offset). Read both layouts into the same shape, so that the rules
 * below are written once. Only the memory type's own field of m is read.
 */
static struct vb2_v4l2_user_plane
vb2_v4l2_user_plane(const struct v4l2_buffer *b, unsigned int p)
{
	bool userptr = b->memory == V4L2_MEMORY_USERPTR;
	bool dmabuf = b->memory == V4L2_MEMORY_DMABUF;
	const struct v4l2_plane *mp;

	if (!V4L2_TYPE_IS_MULTIPLANAR(b->type)) {
		if (p)
			return (struct vb2_v4l2_user_plane) { };
		return (struct vb2_v4l2_user_plane) {
			.bytesused = b->bytesused,
			.length = b->length,
			.userptr = userptr ? b->m.userptr : 0,
			.fd = dmabuf ? b->m.fd : 0,
		};
	}

	mp = &b->m.planes[p];
	return (struct vb2_v4l2_user_plane) {
		.bytesused = mp->bytesused,
		.length = mp->length,
		.data_offset = mp->data_offset,
		.userptr = userptr ? mp->m.userptr : 0,
		.fd = dmabuf ? mp->m.fd : 0,
	};
}

static void vb2_v4l2_warn_zero_bytesused(void)
{
	pr_warn_once("vb2-v4l2: %s queued an output buffer with bytesused 0, which means 'the whole plane'; this is deprecated, pass the real payload size\n",
		     current->comm);
}

/*
 * Whether the length of plane @src is known before its memory is acquired.
 * A single-planar DMABUF buffer of length 0 takes the dma-buf's size, which
 * only the import tells: the core checks the payload against it then
 * (vb2_get_dmabufs()). In a plane array, length 0 means 0, as in 6.12.
 */
static bool vb2_v4l2_length_known(const struct v4l2_buffer *b,
				  const struct vb2_v4l2_user_plane *src)
{
	return src->length || b->memory != V4L2_MEMORY_DMABUF ||
	       V4L2_TYPE_IS_MULTIPLANAR(b->type);
}

/*
 * Check plane @p of the user's buffer description and stage it in @dst.
 * Payload and data offset only mean something on output queues: on capture
 * queues the driver reports them when the buffer is done.
 */
static int vb2_v4l2_stage_plane(struct vb2_buffer *vb,
				const struct v4l2_buffer *b, unsigned int p,
				struct vb2_plane *dst)
{
	struct vb2_queue *q = vb->vb2_queue;
	struct vb2_v4l2_user_plane src = vb2_v4l2_user_plane(b, p);
	u32 end;

	if (!vb2_v4l2_memory_from_user(b->memory)) {
		dst->m.offset = vb->planes[p].m.offset;
		dst->length = vb->planes[p].length;
	} else if (b->memory == V4L2_MEMORY_USERPTR) {
		dst->m.userptr = src.userptr;
		dst->length = src.length;
	} else {
		dst->m.fd = src.fd;
		dst->length = src.length;
	}

	if (!q->is_output)
		return 0;

	if (vb2_v4l2_length_known(b, &src) && src.bytesused > dst->length) {
		vb2_v4l2_dbg(1, q, "plane %u: bytesused %u is larger than the plane (%u)\n",
			     p, src.bytesused, dst->length);
		return -EINVAL;
	}

	/* The data must start inside the payload (buffer.rst, data_offset). */
	end = src.bytesused ? src.bytesused : dst->length;
	if (src.data_offset && src.data_offset >= end) {
		vb2_v4l2_dbg(1, q, "plane %u: data_offset %u not below the payload end %u\n",
			     p, src.data_offset, end);
		return -EINVAL;
	}

	dst->data_offset = src.data_offset;
	dst->bytesused = src.bytesused;
	if (!src.bytesused) {
		vb2_v4l2_warn_zero_bytesused();
		/* Old codec drivers take an empty buffer as end of stream. */
		if (!q->allow_zero_bytesused)
			dst->bytesused = dst->length;
	}
	return 0;
}

/* The flags of a v4l2_buffer that the buffer keeps, on this queue. */
static u32 vb2_v4l2_kept_flags(const struct vb2_queue *q, u32 flags)
{
	u32 drop = VB2_V4L2_STATE_FLAGS;

	if (q->is_output) {
		/* The timecode is taken at every QBUF, see vb2_v4l2_copy_timestamp(). */
		drop |= V4L2_BUF_FLAG_TIMECODE;
		/* Only a COPY queue passes the user's timestamp source on. */
		if (!vb2_v4l2_copies_timestamps(q))
			drop |= V4L2_BUF_FLAG_TSTAMP_SRC_MASK;
		if (!(q->subsystem_flags &
		      VB2_V4L2_FL_SUPPORTS_M2M_HOLD_CAPTURE_BUF))
			drop |= V4L2_BUF_FLAG_M2M_HOLD_CAPTURE_BUF;
	} else {
		/* Frame type, timecode, LAST: the driver's to say. */
		drop |= VB2_V4L2_PRODUCER_FLAGS | V4L2_BUF_FLAG_LAST |
			V4L2_BUF_FLAG_TSTAMP_SRC_MASK;
	}
	return flags & ~drop;
}

/*
 * Cache-maintenance hints count only on queues that allow them and only for
 * MMAP memory. Elsewhere they are cleared in @b, so that user space sees
 * they were ignored, and the buffer keeps the flags the core gives it (set
 * for DMABUF, clear otherwise; see vb2_default_cache_hints()).
 */
static void vb2_v4l2_take_cache_hints(struct vb2_buffer *vb,
				      struct v4l2_buffer *b)
{
	struct vb2_queue *q = vb->vb2_queue;

	if (!q->allow_cache_hints || q->memory != VB2_MEMORY_MMAP) {
		b->flags &= ~VB2_V4L2_CACHE_HINT_FLAGS;
		return;
	}
	vb->skip_cache_sync_on_prepare =
		!!(b->flags & V4L2_BUF_FLAG_NO_CACHE_CLEAN);
	vb->skip_cache_sync_on_finish =
		!!(b->flags & V4L2_BUF_FLAG_NO_CACHE_INVALIDATE);
}

/*
 * Validate everything @b says about a dequeued, unprepared buffer and stage
 * it in the struct vb2_v4l2_buffer, for the core to pick up.
 */
static int vb2_v4l2_take_user_buffer(struct vb2_buffer *vb,
				     struct v4l2_buffer *b)
{
	struct vb2_v4l2_buffer *vbuf = to_vb2_v4l2_buffer(vb);
	struct vb2_queue *q = vb->vb2_queue;
	unsigned int p;
	int ret;

	/*
	 * An output buffer carries one field, top or bottom; ALTERNATE names
	 * the sequence of fields, not one of them.
	 */
	if (q->is_output && b->field == V4L2_FIELD_ALTERNATE) {
		vb2_v4l2_dbg(1, q, "field ALTERNATE is not valid for an output buffer\n");
		return -EINVAL;
	}

	vb2_v4l2_take_cache_hints(vb, b);

	for (p = 0; p < vb->num_planes; p++) {
		struct vb2_plane *dst = &vbuf->planes[p];

		/*
		 * vb2_v4l2_fill_vb2_buffer() reads m, length, bytesused and
		 * data_offset of a staged plane, nothing else: clear those
		 * (the widest member clears all of m), not the whole struct.
		 */
		dst->m.userptr = 0;
		dst->bytesused = 0;
		dst->data_offset = 0;
		ret = vb2_v4l2_stage_plane(vb, b, p, dst);
		if (ret)
			return ret;
	}

	vbuf->flags = vb2_v4l2_kept_flags(q, b->flags);
	if (q->is_output)
		vbuf->field = b->field;
	vbuf->sequence = 0;
	vbuf->request_fd = -1;
	vbuf->is_held = false;
	return 0;
}

/*
 * Multi-planar types pass an array of struct v4l2_plane in @m.planes and its
 * size in @length; it must describe every plane of the buffer.
 */
static int vb2_v4l2_verify_planes_array(struct vb2_buffer *vb, const void *pb)
{
	const struct v4l2_buffer *b = pb;

	if (!V4L2_TYPE_IS_MULTIPLANAR(b->type))
		return 0;

	if (!b->m.planes) {
		vb2_v4l2_dbg(1, vb->vb2_queue, "multi-planar buffer without a plane array\n");
		return -EINVAL;
	}
	if (b->length < vb->num_planes || b->length > VB2_MAX_PLANES) {
		vb2_v4l2_dbg(1, vb->vb2_queue, "plane array of %u entries, the buffer has %u planes\n",
			     b->length, vb->num_planes);
		return -EINVAL;
	}
	return 0;
}

/*
 * Find the buffer @b names and check what does not depend on its state.
 * QUERYBUF does not care about the memory type; the others pass
 * @check_memory.
 */
static struct vb2_buffer *vb2_v4l2_named_buffer(struct vb2_queue *q,
						const struct v4l2_buffer *b,
						bool check_memory)
{
	struct vb2_buffer *vb;
	int ret;

	if (b->type != q->type) {
		vb2_v4l2_dbg(1, q, "buffer type %u, queue type %u\n",
			     b->type, q->type);
		return ERR_PTR(-EINVAL);
	}

	vb = vb2_get_buffer(q, b->index);
	if (!vb) {
		vb2_v4l2_dbg(1, q, "no buffer with index %u\n", b->index);
		return ERR_PTR(-EINVAL);
	}

	if (check_memory && b->memory != q->memory) {
		vb2_v4l2_dbg(1, q, "memory type %u, queue uses %u\n",
			     b->memory, q->memory);
		return ERR_PTR(-EINVAL);
	}

	ret = vb2_v4l2_verify_planes_array(vb, b);
	return ret ? ERR_PTR(ret) : vb;
}

/*
 * Stage @b if the buffer needs it. A prepared buffer keeps what
 * VIDIOC_PREPARE_BUF took; one that is not dequeued is in use, and the core
 * refuses it - its staged data must not change meanwhile.
 */
static int vb2_v4l2_stage_buffer(struct vb2_buffer *vb, struct v4l2_buffer *b)
{
	if (vb->state != VB2_BUF_STATE_DEQUEUED || vb->prepared)
		return 0;
	return vb2_v4l2_take_user_buffer(vb, b);
}

/*
 * What the driver must provide for buffers queued through requests: the
 * queue lock (requests are prepared and queued from the media device, not
 * from an ioctl of this queue), buf_request_complete (a cancelled request
 * must complete its other objects), and on video output queues
 * buf_out_validate, which checks the field of a frame before the request
 * is accepted; VBI and metadata buffers have no field. Returns what is
 * missing, or NULL.
 */
static const char *vb2_v4l2_request_support_gap(const struct vb2_queue *q)
{
	bool video_output = q->type == V4L2_BUF_TYPE_VIDEO_OUTPUT ||
			    q->type == V4L2_BUF_TYPE_VIDEO_OUTPUT_MPLANE;

	if (!q->lock)
		return "a queue lock";
	if (!q->ops->buf_request_complete)
		return "buf_request_complete";
	if (video_output && !q->ops->buf_out_validate)
		return "buf_out_validate";
	return NULL;
}

/*
 * Decide between direct queueing and queueing into a request
 * (request-api.rst), and for the latter resolve @b->request_fd. On success
 * *@req is the request, with a reference, or NULL.
 */
static int vb2_v4l2_resolve_request(struct vb2_queue *q,
				    struct media_device *mdev,
				    const struct v4l2_buffer *b,
				    struct media_request **req)
{
	struct media_request *found;
	enum media_request_state state;
	const char *gap;

	*req = NULL;
	if (!(b->flags & V4L2_BUF_FLAG_REQUEST_FD)) {
		if (q->requires_requests) {
			vb2_v4l2_dbg(1, q, "this queue takes buffers only through requests\n");
			return -EBADR;
		}
		if (q->uses_requests) {
			vb2_v4l2_dbg(1, q, "queue is in request mode, cannot queue directly\n");
			return -EBUSY;
		}
		return 0;
	}

	if (!q->supports_requests) {
		vb2_v4l2_dbg(1, q, "this queue does not support requests\n");
		return -EBADR;
	}
	if (q->uses_qbuf) {
		vb2_v4l2_dbg(1, q, "queue is in direct mode, cannot queue into a request\n");
		return -EBUSY;
	}
	gap = vb2_v4l2_request_support_gap(q);
	if (gap) {
		vb2_v4l2_dbg(1, q, "driver bug: requests need %s\n", gap);
		return -EINVAL;
	}

	found = media_request_get_by_fd(mdev, b->request_fd);
	if (IS_ERR(found)) {
		vb2_v4l2_dbg(1, q, "request_fd %d is not a request of this device\n",
			     b->request_fd);
		return PTR_ERR(found);
	}

	/*
	 * A request already queued cannot take more buffers. The core checks
	 * again, under the request's lock, when it binds the buffer; this
	 * only fails early.
	 */
	state = READ_ONCE(found->state);
	if (state != MEDIA_REQUEST_STATE_IDLE &&
	    state != MEDIA_REQUEST_STATE_UPDATING) {
		vb2_v4l2_dbg(1, q, "request_fd %d is no longer open for buffers\n",
			     b->request_fd);
		media_request_put(found);
		return -EBUSY;
	}

	*req = found;
	return 0;
}

/* ---------------------------------------------------------------------- */
/* Kernel to user space: filling struct v4l2_buffer                        */
/* ---------------------------------------------------------------------- */

static u32 vb2_v4l2_flags_of_state(const struct vb2_buffer *vb)
{
	switch (vb->state) {
	case VB2_BUF_STATE_QUEUED:
	case VB2_BUF_STATE_ACTIVE:
		return V4L2_BUF_FLAG_QUEUED;
	case VB2_BUF_STATE_IN_REQUEST:
		return V4L2_BUF_FLAG_IN_REQUEST;
	case VB2_BUF_STATE_DONE:
		return V4L2_BUF_FLAG_DONE;
	case VB2_BUF_STATE_ERROR:
		return V4L2_BUF_FLAG_DONE | V4L2_BUF_FLAG_ERROR;
	default:
		return 0;
	}
}

/* The flags user space gets: the buffer's own, the queue's timestamp type, the state. */
static u32 vb2_v4l2_reported_flags(struct vb2_buffer *vb)
{
	struct vb2_v4l2_buffer *vbuf = to_vb2_v4l2_buffer(vb);
	struct vb2_queue *q = vb->vb2_queue;
	u32 ts_bits = V4L2_BUF_FLAG_TIMESTAMP_MASK;
	u32 flags;

	/*
	 * COPY queues report the timestamp source the data came with;
	 * otherwise it is a property of the queue.
	 */
	if (!vb2_v4l2_copies_timestamps(q))
		ts_bits |= V4L2_BUF_FLAG_TSTAMP_SRC_MASK;

	flags = vbuf->flags & ~(VB2_V4L2_STATE_FLAGS | ts_bits);
	flags |= q->timestamp_flags & ts_bits;
	flags |= vb2_v4l2_flags_of_state(vb);

	if ((vb->state == VB2_BUF_STATE_DEQUEUED ||
	     vb->state == VB2_BUF_STATE_IN_REQUEST) &&
	    vb->prepared && vb->synced)
		flags |= V4L2_BUF_FLAG_PREPARED;
	if (vb2_buffer_in_use(q, vb))
		flags |= V4L2_BUF_FLAG_MAPPED;
	if (vbuf->request_fd >= 0)
		flags |= V4L2_BUF_FLAG_REQUEST_FD;
	return flags;
}

/* Where plane @p lives, in the terms of the queue's memory type. */
static void vb2_v4l2_report_plane(const struct vb2_buffer *vb, unsigned int p,
				  struct v4l2_plane *dst)
{
	const struct vb2_plane *src = &vb->planes[p];

	memset(dst, 0, sizeof(*dst));
	dst->bytesused = src->bytesused;
	dst->length = src->length;
	dst->data_offset = src->data_offset;
	if (vb->memory == VB2_MEMORY_MMAP)
		dst->m.mem_offset = src->m.offset;
	else if (vb->memory == VB2_MEMORY_USERPTR)
		dst->m.userptr = src->m.userptr;
	else if (vb->memory == VB2_MEMORY_DMABUF)
		dst->m.fd = src->m.fd;
}

static void vb2_v4l2_report_planes(const struct vb2_buffer *vb,
				   struct v4l2_buffer *b)
{
	unsigned int p;

	if (V4L2_TYPE_IS_MULTIPLANAR(b->type)) {
		/* The array was checked against num_planes before we got here. */
		if (WARN_ON_ONCE(!b->m.planes || b->length < vb->num_planes))
			return;
		for (p = 0; p < vb->num_planes; p++)
			vb2_v4l2_report_plane(vb, p, &b->m.planes[p]);
		b->length = vb->num_planes;
		b->bytesused = 0;
		return;
	}

	/* Single-planar: no data offset to report. */
	b->bytesused = vb->planes[0].bytesused;
	b->length = vb->planes[0].length;
	if (vb->memory == VB2_MEMORY_MMAP)
		b->m.offset = vb->planes[0].m.offset;
	else if (vb->memory == VB2_MEMORY_USERPTR)
		b->m.userptr = vb->planes[0].m.userptr;
	else if (vb->memory == VB2_MEMORY_DMABUF)
		b->m.fd = vb->planes[0].m.fd;
}

/* ---------------------------------------------------------------------- */
/* The struct vb2_buf_ops the core calls                                  */
/* ---------------------------------------------------------------------- */

static void vb2_v4l2_init_buffer(struct vb2_buffer *vb)
{
	to_vb2_v4l2_buffer(vb)->request_fd = -1;
}

static void vb2_v4l2_fill_user_buffer(struct vb2_buffer *vb, void *pb)
{
	struct vb2_v4l2_buffer *vbuf = to_vb2_v4l2_buffer(vb);
	struct v4l2_buffer *b = pb;

	/* Layout first: b->type says how the ioctl core laid the planes out. */
	vb2_v4l2_report_planes(vb, b);

	b->index = vb->index;
	b->type = vb->type;
	b->memory = vb->memory;
	b->flags = vb2_v4l2_reported_flags(vb);
	b->field = vbuf->field;
	v4l2_buffer_set_timestamp(b, vb->timestamp);
	b->timecode = vbuf->timecode;
	b->sequence = vbuf->sequence;
	b->reserved2 = 0;
	b->request_fd = vbuf->request_fd >= 0 ? vbuf->request_fd : 0;
}

static int vb2_v4l2_fill_vb2_buffer(struct vb2_buffer *vb,
				    struct vb2_plane *planes)
{
	const struct vb2_v4l2_buffer *vbuf = to_vb2_v4l2_buffer(vb);
	unsigned int p;

	/* Timestamps of non-COPY queues are the driver's; start from zero. */
	if (!vb2_v4l2_copies_timestamps(vb->vb2_queue))
		vb->timestamp = 0;

	for (p = 0; p < vb->num_planes; p++) {
		const struct vb2_plane *staged = &vbuf->planes[p];

		planes[p].m = staged->m;
		planes[p].length = staged->length;
		planes[p].bytesused = staged->bytesused;
		planes[p].data_offset = staged->data_offset;
	}
	return 0;
}

/*
 * Called at every VIDIOC_QBUF. Output buffers take their timestamp (on COPY
 * queues) and timecode now, also when the rest was staged by an earlier
 * VIDIOC_PREPARE_BUF.
 */
static void vb2_v4l2_copy_timestamp(struct vb2_buffer *vb, const void *pb)
{
	struct vb2_v4l2_buffer *vbuf = to_vb2_v4l2_buffer(vb);
	struct vb2_queue *q = vb->vb2_queue;
	const struct v4l2_buffer *b = pb;

	if (!q->is_output)
		return;

	if (vb2_v4l2_copies_timestamps(q))
		vb->timestamp = v4l2_buffer_get_timestamp(b);

	vbuf->flags &= ~V4L2_BUF_FLAG_TIMECODE;
	if (b->flags & V4L2_BUF_FLAG_TIMECODE) {
		vbuf->flags |= V4L2_BUF_FLAG_TIMECODE;
		vbuf->timecode = b->timecode;
	}
}

static const struct vb2_buf_ops vb2_v4l2_buf_ops = {
	.verify_planes_array	= vb2_v4l2_verify_planes_array,
	.init_buffer		= vb2_v4l2_init_buffer,
	.fill_user_buffer	= vb2_v4l2_fill_user_buffer,
	.fill_vb2_buffer	= vb2_v4l2_fill_vb2_buffer,
	.copy_timestamp		= vb2_v4l2_copy_timestamp,
};

/* ---------------------------------------------------------------------- */
/* Buffer ioctls                                                          */
/* ---------------------------------------------------------------------- */

struct vb2_buffer *vb2_find_buffer(struct vb2_queue *q, u64 timestamp)
{
	struct vb2_buffer *vb;
	unsigned long index;

	/*
	 * Stateless decoders call this from device_run, which the mem2mem
	 * job worker runs without the queue lock, while VIDIOC_REMOVE_BUFS
	 * may free buffers. Buffers are freed after an RCU grace period, so
	 * the walk itself is safe; what the driver does with the buffer next
	 * is up to it (user space that removes a reference frame it still
	 * decodes against gets a broken picture).
	 */
	rcu_read_lock();
	vb2_for_each_buffer(q, index, vb) {
		if (vb->copied_timestamp && vb->timestamp == timestamp)
			break;
	}
	rcu_read_unlock();
	return vb;
}
EXPORT_SYMBOL_GPL(vb2_find_buffer);

int vb2_querybuf(struct vb2_queue *q, struct v4l2_buffer *b)
{
	struct vb2_buffer *vb = vb2_v4l2_named_buffer(q, b, false);

	if (IS_ERR(vb))
		return PTR_ERR(vb);
	vb2_core_querybuf(q, vb, b);
	return 0;
}
EXPORT_SYMBOL(vb2_querybuf);

/* What the queue can do, as V4L2_BUF_CAP_* bits. */
static u32 vb2_v4l2_capabilities(const struct vb2_queue *q)
{
	/* Buffers still mapped or exported outlive VIDIOC_REQBUFS(0). */
	u32 caps = V4L2_BUF_CAP_SUPPORTS_ORPHANED_BUFS;

	if (q->io_modes & VB2_MMAP) {
		caps |= V4L2_BUF_CAP_SUPPORTS_MMAP;
		if (q->allow_cache_hints)
			caps |= V4L2_BUF_CAP_SUPPORTS_MMAP_CACHE_HINTS;
	}
	if (q->io_modes & VB2_USERPTR)
		caps |= V4L2_BUF_CAP_SUPPORTS_USERPTR;
	if (q->io_modes & VB2_DMABUF)
		caps |= V4L2_BUF_CAP_SUPPORTS_DMABUF;
	if (q->supports_requests)
		caps |= V4L2_BUF_CAP_SUPPORTS_REQUESTS;
	if (q->subsystem_flags & VB2_V4L2_FL_SUPPORTS_M2M_HOLD_CAPTURE_BUF)
		caps |= V4L2_BUF_CAP_SUPPORTS_M2M_HOLD_CAPTURE_BUF;
	return caps;
}

/*
 * The V4L2_MEMORY_FLAG_* bits the queue honours for @memory. Non-coherent
 * memory is a cache hint too; every other bit is cleared so that user space
 * can tell.
 */
static u32 vb2_v4l2_memory_flags(const struct vb2_queue *q, u32 memory,
				 u32 flags)
{
	if (!q->allow_cache_hints || memory != V4L2_MEMORY_MMAP)
		return 0;
	return flags & V4L2_MEMORY_FLAG_NON_COHERENT;
}

/*
 * The part of VIDIOC_REQBUFS that runs whatever happens next: user space
 * learns the capabilities and honoured flags even from a failing call.
 * v4l2-ioctl.c may have set bits of its own in @capabilities already.
 */
static int vb2_v4l2_reqbufs_check(struct vb2_queue *q,
				  struct v4l2_requestbuffers *req)
{
	req->capabilities |= vb2_v4l2_capabilities(q);
	req->flags = vb2_v4l2_memory_flags(q, req->memory, req->flags);
	return vb2_verify_memory_type(q, req->memory, req->type);
}

int vb2_reqbufs(struct vb2_queue *q, struct v4l2_requestbuffers *req)
{
	int ret = vb2_v4l2_reqbufs_check(q, req);

	if (ret)
		return ret;
	return vb2_core_reqbufs(q, req->memory, req->flags, &req->count);
}
EXPORT_SYMBOL_GPL(vb2_reqbufs);

/* Payload of the VBI lines of @vbi, or 0 if it does not fit in 32 bits. */
static u32 vb2_v4l2_vbi_size(const struct v4l2_vbi_format *vbi)
{
	u32 lines, size;

	if (check_add_overflow(vbi->count[0], vbi->count[1], &lines) ||
	    check_mul_overflow(vbi->samples_per_line, lines, &size))
		return 0;
	return size;
}

/*
 * Plane sizes for VIDIOC_CREATE_BUFS, from whichever member of @f->fmt its
 * type selects. Every plane must have a size.
 */
static int vb2_v4l2_format_sizes(const struct v4l2_format *f,
				 unsigned int sizes[VB2_MAX_PLANES],
				 unsigned int *num_planes)
{
	unsigned int n = 1;
	unsigned int p;

	switch (f->type) {
	case V4L2_BUF_TYPE_VIDEO_CAPTURE_MPLANE:
	case V4L2_BUF_TYPE_VIDEO_OUTPUT_MPLANE:
		n = f->fmt.pix_mp.num_planes;
		if (!n || n > VB2_MAX_PLANES)
			return -EINVAL;
		for (p = 0; p < n; p++)
			sizes[p] = f->fmt.pix_mp.plane_fmt[p].sizeimage;
		break;
	case V4L2_BUF_TYPE_VIDEO_CAPTURE:
	case V4L2_BUF_TYPE_VIDEO_OUTPUT:
		sizes[0] = f->fmt.pix.sizeimage;
		break;
	case V4L2_BUF_TYPE_VBI_CAPTURE:
	case V4L2_BUF_TYPE_VBI_OUTPUT:
		sizes[0] = vb2_v4l2_vbi_size(&f->fmt.vbi);
		break;
	case V4L2_BUF_TYPE_SLICED_VBI_CAPTURE:
	case V4L2_BUF_TYPE_SLICED_VBI_OUTPUT:
		sizes[0] = f->fmt.sliced.io_size;
		break;
	case V4L2_BUF_TYPE_SDR_CAPTURE:
	case V4L2_BUF_TYPE_SDR_OUTPUT:
		sizes[0] = f->fmt.sdr.buffersize;
		break;
	case V4L2_BUF_TYPE_META_CAPTURE:
	case V4L2_BUF_TYPE_META_OUTPUT:
		sizes[0] = f->fmt.meta.buffersize;
		break;
	default:
		return -EINVAL;
	}

	for (p = 0; p < n; p++)
		if (!sizes[p])
			return -EINVAL;
	*num_planes = n;
	return 0;
}

/*
 * The part of VIDIOC_CREATE_BUFS that runs whatever happens next. With a
 * count of 0 the call only asks whether memory and type would be accepted;
 * a queue busy with buffers of another memory type is no answer to that.
 */
static int vb2_v4l2_create_bufs_check(struct vb2_queue *q,
				      struct v4l2_create_buffers *create)
{
	int ret;

	create->capabilities |= vb2_v4l2_capabilities(q) |
				V4L2_BUF_CAP_SUPPORTS_MAX_NUM_BUFFERS;
	create->max_num_buffers = q->max_num_buffers;
	create->flags = vb2_v4l2_memory_flags(q, create->memory, create->flags);
	create->index = vb2_get_num_buffers(q);

	ret = vb2_verify_memory_type(q, create->memory, create->format.type);
	if (ret == -EBUSY && !create->count)
		return 0;
	return ret;
}

static int vb2_v4l2_create_more(struct vb2_queue *q,
				struct v4l2_create_buffers *create)
{
	unsigned int sizes[VB2_MAX_PLANES];
	unsigned int num_planes;
	int ret;

	ret = vb2_v4l2_format_sizes(&create->format, sizes, &num_planes);
	if (ret) {
		vb2_v4l2_dbg(1, q, "the format gives no valid buffer size\n");
		return ret;
	}
	return vb2_core_create_bufs(q, create->memory, create->flags,
				    &create->count, num_planes, sizes,
				    &create->index);
}

int vb2_create_bufs(struct vb2_queue *q, struct v4l2_create_buffers *create)
{
	int ret = vb2_v4l2_create_bufs_check(q, create);

	if (ret || !create->count)
		return ret;
	return vb2_v4l2_create_more(q, create);
}
EXPORT_SYMBOL_GPL(vb2_create_bufs);

int vb2_prepare_buf(struct vb2_queue *q, struct media_device *mdev,
		    struct v4l2_buffer *b)
{
	struct vb2_buffer *vb;
	int ret;

	if (vb2_fileio_is_active(q)) {
		vb2_v4l2_dbg(1, q, "read()/write() I/O is active\n");
		return -EBUSY;
	}
	/* A buffer of a request is prepared when the request is queued. */
	if (b->flags & V4L2_BUF_FLAG_REQUEST_FD) {
		vb2_v4l2_dbg(1, q, "VIDIOC_PREPARE_BUF does not take requests\n");
		return -EINVAL;
	}

	vb = vb2_v4l2_named_buffer(q, b, true);
	if (IS_ERR(vb))
		return PTR_ERR(vb);
	ret = vb2_v4l2_stage_buffer(vb, b);
	if (ret)
		return ret;
	return vb2_core_prepare_buf(q, vb, b);
}
EXPORT_SYMBOL_GPL(vb2_prepare_buf);

/* Queue @vb into @req; the buffer reports the request's fd from now on. */
static int vb2_v4l2_qbuf_in_request(struct vb2_queue *q, struct vb2_buffer *vb,
				    struct v4l2_buffer *b,
				    struct media_request *req)
{
	struct vb2_v4l2_buffer *vbuf = to_vb2_v4l2_buffer(vb);
	s32 old_fd = vbuf->request_fd;
	int ret;

	vbuf->request_fd = b->request_fd;
	ret = vb2_core_qbuf(q, vb, b, req);
	if (ret)
		vbuf->request_fd = old_fd;
	return ret;
}

int vb2_qbuf(struct vb2_queue *q, struct media_device *mdev,
	     struct v4l2_buffer *b)
{
	struct media_request *req;
	struct vb2_buffer *vb;
	int ret;

	if (vb2_fileio_is_active(q)) {
		vb2_v4l2_dbg(1, q, "read()/write() I/O is active\n");
		return -EBUSY;
	}

	vb = vb2_v4l2_named_buffer(q, b, true);
	if (IS_ERR(vb))
		return PTR_ERR(vb);
	if ((b->flags & V4L2_BUF_FLAG_REQUEST_FD) &&
	    vb->state != VB2_BUF_STATE_DEQUEUED) {
		vb2_v4l2_dbg(1, q, "buffer %u is not dequeued\n", vb->index);
		return -EINVAL;
	}

	ret = vb2_v4l2_stage_buffer(vb, b);
	if (ret)
		return ret;
	ret = vb2_v4l2_resolve_request(q, mdev, b, &req);
	if (ret)
		return ret;
	if (!req)
		return vb2_core_qbuf(q, vb, b, NULL);

	ret = vb2_v4l2_qbuf_in_request(q, vb, b, req);
	media_request_put(req);
	return ret;
}
EXPORT_SYMBOL_GPL(vb2_qbuf);

/*
 * &vb2_ops.wait_prepare and &vb2_ops.wait_finish for queues with a lock: the
 * core calls them around its sleep in VIDIOC_DQBUF, so that other calls can
 * take the lock meanwhile (and vb2_buffer_done() needs none).
 */
void vb2_ops_wait_prepare(struct vb2_queue *vq)
{
	mutex_unlock(vq->lock);
}
EXPORT_SYMBOL_GPL(vb2_ops_wait_prepare);

int vb2_dqbuf(struct vb2_queue *q, struct v4l2_buffer *b, bool nonblocking)
{
	const u32 done_last = V4L2_BUF_FLAG_DONE | V4L2_BUF_FLAG_LAST;
	int ret;

	if (vb2_fileio_is_active(q)) {
		vb2_v4l2_dbg(1, q, "read()/write() I/O is active\n");
		return -EBUSY;
	}
	if (b->type != q->type) {
		vb2_v4l2_dbg(1, q, "buffer type %u, queue type %u\n",
			     b->type, q->type);
		return -EINVAL;
	}

	ret = vb2_core_dqbuf(q, NULL, b, nonblocking);
	if (ret)
		return ret;

	/*
	 * A finished LAST capture buffer ends the stream: from now on DQBUF
	 * says -EPIPE and poll() says readable, until STREAMOFF.
	 */
	if (!q->is_output && (b->flags & done_last) == done_last)
		q->last_buffer_dequeued = true;
	/* DONE describes buffers waiting to be dequeued; this one no longer is. */
	b->flags &= ~V4L2_BUF_FLAG_DONE;
	return 0;
}
EXPORT_SYMBOL_GPL(vb2_dqbuf);

void vb2_ops_wait_finish(struct vb2_queue *vq)
{
	mutex_lock(vq->lock);
}
EXPORT_SYMBOL_GPL(vb2_ops_wait_finish);

int vb2_streamon(struct vb2_queue *q, enum v4l2_buf_type type)
{
	if (vb2_fileio_is_active(q)) {
		vb2_v4l2_dbg(1, q, "read()/write() I/O is active\n");
		return -EBUSY;
	}
	return vb2_core_streamon(q, type);
}
EXPORT_SYMBOL_GPL(vb2_streamon);

int vb2_streamoff(struct vb2_queue *q, enum v4l2_buf_type type)
{
	if (vb2_fileio_is_active(q)) {
		vb2_v4l2_dbg(1, q, "read()/write() I/O is active\n");
		return -EBUSY;
	}
	return vb2_core_streamoff(q, type);
}
EXPORT_SYMBOL_GPL(vb2_streamoff);

int vb2_expbuf(struct vb2_queue *q, struct v4l2_exportbuffer *eb)
{
	struct vb2_buffer *vb = vb2_get_buffer(q, eb->index);

	if (!vb) {
		vb2_v4l2_dbg(1, q, "no buffer with index %u\n", eb->index);
		return -EINVAL;
	}
	return vb2_core_expbuf(q, &eb->fd, eb->type, vb, eb->plane, eb->flags);
}
EXPORT_SYMBOL_GPL(vb2_expbuf);

/* ---------------------------------------------------------------------- */
/* Queue setup                                                            */
/* ---------------------------------------------------------------------- */

/* What the buffer type says about the queue. */
static void vb2_v4l2_derive_from_type(struct vb2_queue *q)
{
	q->is_multiplanar = V4L2_TYPE_IS_MULTIPLANAR(q->type);
	q->is_output = V4L2_TYPE_IS_OUTPUT(q->type);
	if (q->bidirectional)
		q->dma_dir = DMA_BIDIRECTIONAL;
	else
		q->dma_dir = q->is_output ? DMA_TO_DEVICE : DMA_FROM_DEVICE;
}

int vb2_queue_change_type(struct vb2_queue *q, unsigned int type)
{
	if (type != q->type) {
		/* The buffers were set up for the old type. */
		if (vb2_is_busy(q)) {
			vb2_v4l2_dbg(1, q, "cannot change the type of a queue in use\n");
			return -EBUSY;
		}
		/*
		 * The type only, as in 6.12: direction, planarity and DMA
		 * direction stay those of vb2_queue_init(). The callers switch
		 * between types that share them (VBI and sliced VBI, video and
		 * metadata capture).
		 */
		q->type = type;
	}
	return 0;
}
EXPORT_SYMBOL_GPL(vb2_queue_change_type);

/* The V4L2 half of checking a driver's queue configuration. */
static int vb2_v4l2_check_queue_config(const struct vb2_queue *q)
{
	const u32 ts_bits = V4L2_BUF_FLAG_TIMESTAMP_MASK |
			    V4L2_BUF_FLAG_TSTAMP_SRC_MASK;

	if (WARN_ON(q->timestamp_flags & ~ts_bits))
		return -EINVAL;
	/* Not fatal, but user space cannot interpret the timestamps. */
	WARN_ON((q->timestamp_flags & V4L2_BUF_FLAG_TIMESTAMP_MASK) ==
		V4L2_BUF_FLAG_TIMESTAMP_UNKNOWN);

	/* The driver's buffer must embed a whole struct vb2_v4l2_buffer. */
	if (WARN_ON(q->buf_struct_size &&
		    q->buf_struct_size < sizeof(struct vb2_v4l2_buffer)))
		return -EINVAL;

	/*
	 * See vb2_v4l2_request_support_gap(). Drivers that turn requests on
	 * after vb2_queue_init() are caught when a buffer enters a request.
	 */
	if (q->supports_requests && q->ops) {
		const char *gap = vb2_v4l2_request_support_gap(q);

		if (WARN(gap, "vb2-v4l2: a queue with requests needs %s\n", gap))
			return -EINVAL;
	}
	return 0;
}

int vb2_queue_init(struct vb2_queue *q)
{
	return vb2_queue_init_name(q, NULL);
}
EXPORT_SYMBOL_GPL(vb2_queue_init);

int vb2_queue_init_name(struct vb2_queue *q, const char *name)
{
	int ret;

	if (WARN_ON(!q))
		return -EINVAL;
	ret = vb2_v4l2_check_queue_config(q);
	if (ret)
		return ret;

	if (!q->buf_struct_size)
		q->buf_struct_size = sizeof(struct vb2_v4l2_buffer);
	q->buf_ops = &vb2_v4l2_buf_ops;
	vb2_v4l2_derive_from_type(q);
	q->copy_timestamp = vb2_v4l2_copies_timestamps(q);
	/*
	 * poll() on a capture queue reports an error until the first QBUF,
	 * as videobuf1 did; applications still expect that.
	 */
	q->quirk_poll_must_check_waiting_for_buffers = true;
	strscpy(q->name, name ? name : "", sizeof(q->name));

	return vb2_core_queue_init(q);
}
EXPORT_SYMBOL_GPL(vb2_queue_init_name);

__poll_t vb2_poll(struct vb2_queue *q, struct file *file, poll_table *wait)
{
	struct video_device *vdev = video_devdata(file);
	__poll_t mask = vb2_core_poll(q, file, wait);
	struct v4l2_fh *fh;

	/* Only a struct v4l2_fh has an event queue to look at. */
	if (!test_bit(V4L2_FL_USES_V4L2_FH, &vdev->flags))
		return mask;

	fh = file->private_data;
	poll_wait(file, &fh->wait, wait);
	if (v4l2_event_pending(fh))
		mask |= EPOLLPRI;
	return mask;
}
EXPORT_SYMBOL_GPL(vb2_poll);

/* ---------------------------------------------------------------------- */
/* struct v4l2_ioctl_ops helpers: queue ownership                         */
/* ---------------------------------------------------------------------- */

/*
 * The queue of @vdev, @file's device, if @file may change it: when nobody
 * owns the queue yet, or @file does. ERR_PTR(-EBUSY) otherwise.
 */
static struct vb2_queue *vb2_v4l2_queue_for(struct video_device *vdev,
					    struct file *file)
{
	struct vb2_queue *q = vdev->queue;

	if (vb2_queue_is_busy(q, file)) {
		vb2_v4l2_dbg(1, q, "queue is owned by another file handle\n");
		return ERR_PTR(-EBUSY);
	}
	return q;
}

/*
 * Remember the node of a queue that is about to get buffers: its debugfs
 * directory is named after it.
 */
static void vb2_v4l2_note_node(struct video_device *vdev)
{
#if IS_ENABLED(CONFIG_VIDEOBUF2_DEBUGFS)
	struct vb2_queue *q = vdev->queue;

	if (!q->dev_node_name[0])
		strscpy(q->dev_node_name, video_device_node_name(vdev),
			sizeof(q->dev_node_name));
#endif
}

int vb2_ioctl_reqbufs(struct file *file, void *priv,
		      struct v4l2_requestbuffers *p)
{
	struct vb2_queue *q = video_devdata(file)->queue;
	int ret = vb2_v4l2_reqbufs_check(q, p);

	if (ret)
		return ret;
	if (vb2_queue_is_busy(q, file)) {
		vb2_v4l2_dbg(1, q, "queue is owned by another file handle\n");
		return -EBUSY;
	}

	vb2_v4l2_note_node(video_devdata(file));
	ret = vb2_core_reqbufs(q, p->memory, p->flags, &p->count);
	if (ret)
		return ret;
	/* Allocating makes the caller the owner; freeing everything frees the queue. */
	q->owner = p->count ? file->private_data : NULL;
	return 0;
}
EXPORT_SYMBOL_GPL(vb2_ioctl_reqbufs);

int vb2_ioctl_create_bufs(struct file *file, void *priv,
			  struct v4l2_create_buffers *p)
{
	struct vb2_queue *q = video_devdata(file)->queue;
	int ret = vb2_v4l2_create_bufs_check(q, p);

	if (ret || !p->count)
		return ret;
	if (vb2_queue_is_busy(q, file)) {
		vb2_v4l2_dbg(1, q, "queue is owned by another file handle\n");
		return -EBUSY;
	}

	vb2_v4l2_note_node(video_devdata(file));
	ret = vb2_v4l2_create_more(q, p);
	if (!ret)
		q->owner = file->private_data;
	return ret;
}
EXPORT_SYMBOL_GPL(vb2_ioctl_create_bufs);

int vb2_ioctl_prepare_buf(struct file *file, void *priv,
			  struct v4l2_buffer *p)
{
	struct video_device *vdev = video_devdata(file);
	struct vb2_queue *q = vb2_v4l2_queue_for(vdev, file);

	return IS_ERR(q) ? PTR_ERR(q) :
	       vb2_prepare_buf(q, vdev->v4l2_dev->mdev, p);
}
EXPORT_SYMBOL_GPL(vb2_ioctl_prepare_buf);

int vb2_ioctl_querybuf(struct file *file, void *priv, struct v4l2_buffer *p)
{
	/* Anyone may look; only the owner may touch. */
	return vb2_querybuf(video_devdata(file)->queue, p);
}
EXPORT_SYMBOL_GPL(vb2_ioctl_querybuf);

int vb2_ioctl_qbuf(struct file *file, void *priv, struct v4l2_buffer *p)
{
	struct video_device *vdev = video_devdata(file);
	struct vb2_queue *q = vb2_v4l2_queue_for(vdev, file);

	return IS_ERR(q) ? PTR_ERR(q) : vb2_qbuf(q, vdev->v4l2_dev->mdev, p);
}
EXPORT_SYMBOL_GPL(vb2_ioctl_qbuf);

int vb2_ioctl_dqbuf(struct file *file, void *priv, struct v4l2_buffer *p)
{
	struct vb2_queue *q = vb2_v4l2_queue_for(video_devdata(file), file);

	return IS_ERR(q) ? PTR_ERR(q) :
	       vb2_dqbuf(q, p, file->f_flags & O_NONBLOCK);
}
EXPORT_SYMBOL_GPL(vb2_ioctl_dqbuf);

int vb2_ioctl_streamon(struct file *file, void *priv, enum v4l2_buf_type i)
{
	struct vb2_queue *q = vb2_v4l2_queue_for(video_devdata(file), file);

	return IS_ERR(q) ? PTR_ERR(q) : vb2_streamon(q, i);
}
EXPORT_SYMBOL_GPL(vb2_ioctl_streamon);

int vb2_ioctl_streamoff(struct file *file, void *priv, enum v4l2_buf_type i)
{
	struct vb2_queue *q = vb2_v4l2_queue_for(video_devdata(file), file);

	return IS_ERR(q) ? PTR_ERR(q) : vb2_streamoff(q, i);
}
EXPORT_SYMBOL_GPL(vb2_ioctl_streamoff);

int vb2_ioctl_expbuf(struct file *file, void *priv,
		     struct v4l2_exportbuffer *p)
{
	struct vb2_queue *q = vb2_v4l2_queue_for(video_devdata(file), file);

	return IS_ERR(q) ? PTR_ERR(q) : vb2_expbuf(q, p);
}
EXPORT_SYMBOL_GPL(vb2_ioctl_expbuf);

int vb2_ioctl_remove_bufs(struct file *file, void *priv,
			  struct v4l2_remove_buffers *p)
{
	struct vb2_queue *q = video_devdata(file)->queue;

	/* The type is checked first, whatever else is wrong (vidioc-remove-bufs.rst). */
	if (p->type != q->type) {
		vb2_v4l2_dbg(1, q, "buffer type %u, queue type %u\n",
			     p->type, q->type);
		return -EINVAL;
	}
	/* Removing nothing is not a use of the queue: any file may. */
	if (!p->count)
		return 0;
	q = vb2_v4l2_queue_for(video_devdata(file), file);
	if (IS_ERR(q))
		return PTR_ERR(q);
	if (vb2_fileio_is_active(q)) {
		vb2_v4l2_dbg(1, q, "read()/write() I/O is active\n");
		return -EBUSY;
	}
	return vb2_core_remove_bufs(q, p->index, p->count);
}
EXPORT_SYMBOL_GPL(vb2_ioctl_remove_bufs);

/* ---------------------------------------------------------------------- */
/* struct v4l2_file_operations helpers                                    */
/* ---------------------------------------------------------------------- */

/* The lock the file operation helpers take: the queue's, else the device's. */
static struct mutex *vb2_v4l2_fop_lock(struct video_device *vdev)
{
	return vdev->queue->lock ? vdev->queue->lock : vdev->lock;
}

/*
 * Release @q on behalf of file handle @fh, under @lock if there is one. A
 * file handle releases the queue only if it owns it or nobody does;
 * @fh == NULL (the device goes away) releases it in any case.
 */
static void vb2_v4l2_release_queue(struct vb2_queue *q, struct mutex *lock,
				   void *fh)
{
	if (lock)
		mutex_lock(lock);
	if (!fh || !q->owner || q->owner == fh) {
		vb2_queue_release(q);
		q->owner = NULL;
	}
	if (lock)
		mutex_unlock(lock);
}

/*
 * For drivers that release the queue in their own release path: the same as
 * the core, nothing V4L2 specific is left to do.
 */
void vb2_queue_release(struct vb2_queue *q)
{
	vb2_core_queue_release(q);
}
EXPORT_SYMBOL_GPL(vb2_queue_release);

int vb2_fop_mmap(struct file *file, struct vm_area_struct *vma)
{
	return vb2_mmap(video_devdata(file)->queue, vma);
}
EXPORT_SYMBOL_GPL(vb2_fop_mmap);

int _vb2_fop_release(struct file *file, struct mutex *lock)
{
	struct video_device *vdev = video_devdata(file);

	vb2_v4l2_release_queue(vdev->queue, lock, file->private_data);
	return v4l2_fh_release(file);
}
EXPORT_SYMBOL_GPL(_vb2_fop_release);

int vb2_fop_release(struct file *file)
{
	struct video_device *vdev = video_devdata(file);

	return _vb2_fop_release(file, vb2_v4l2_fop_lock(vdev));
}
EXPORT_SYMBOL_GPL(vb2_fop_release);

/*
 * read() and write() emulation. The file handle that gets it going becomes
 * the owner of the queue, like one that allocates buffers.
 */
static ssize_t vb2_v4l2_file_io(struct file *file, bool write,
				void __user *buf, size_t count, loff_t *ppos)
{
	struct video_device *vdev = video_devdata(file);
	struct mutex *lock = vb2_v4l2_fop_lock(vdev);
	int nonblock = file->f_flags & O_NONBLOCK;
	struct vb2_queue *q = vdev->queue;
	ssize_t ret;

	if (!(q->io_modes & (write ? VB2_WRITE : VB2_READ)))
		return -EINVAL;
	if (lock && mutex_lock_interruptible(lock))
		return -ERESTARTSYS;

	if (vb2_queue_is_busy(q, file)) {
		vb2_v4l2_dbg(1, q, "queue is owned by another file handle\n");
		ret = -EBUSY;
		goto unlock;
	}
	vb2_v4l2_note_node(vdev);
	if (write)
		ret = vb2_write(q, buf, count, ppos, nonblock);
	else
		ret = vb2_read(q, buf, count, ppos, nonblock);
	if (vb2_fileio_is_active(q))
		q->owner = file->private_data;
unlock:
	if (lock)
		mutex_unlock(lock);
	return ret;
}

ssize_t vb2_fop_write(struct file *file, const char __user *buf,
		      size_t count, loff_t *ppos)
{
	return vb2_v4l2_file_io(file, true, (void __user *)buf, count, ppos);
}
EXPORT_SYMBOL_GPL(vb2_fop_write);

ssize_t vb2_fop_read(struct file *file, char __user *buf,
		     size_t count, loff_t *ppos)
{
	return vb2_v4l2_file_io(file, false, buf, count, ppos);
}
EXPORT_SYMBOL_GPL(vb2_fop_read);

__poll_t vb2_fop_poll(struct file *file, poll_table *wait)
{
	struct video_device *vdev = video_devdata(file);
	struct mutex *lock = vb2_v4l2_fop_lock(vdev);
	struct vb2_queue *q = vdev->queue;
	bool had_file_io;
	__poll_t mask;

	/* A driver without any lock must write its own poll(). */
	WARN_ON_ONCE(!lock);
	if (lock && mutex_lock_interruptible(lock))
		return EPOLLERR;

	/* poll() may start read() emulation; then the poller owns the queue. */
	had_file_io = vb2_fileio_is_active(q);
	mask = vb2_poll(q, file, wait);
	if (!had_file_io && vb2_fileio_is_active(q))
		q->owner = file->private_data;

	if (lock)
		mutex_unlock(lock);
	return mask;
}
EXPORT_SYMBOL_GPL(vb2_fop_poll);

#ifndef CONFIG_MMU
unsigned long vb2_fop_get_unmapped_area(struct file *file, unsigned long addr,
					unsigned long len, unsigned long pgoff,
					unsigned long flags)
{
	return vb2_get_unmapped_area(video_devdata(file)->queue, addr, len,
				     pgoff, flags);
}
EXPORT_SYMBOL_GPL(vb2_fop_get_unmapped_area);
#endif

void vb2_video_unregister_device(struct video_device *vdev)
{
	struct vb2_queue *q;

	if (!vdev || !video_is_registered(vdev))
		return;

	q = vdev->queue;
	/* Without a queue, video_unregister_device() was the right call. */
	if (WARN_ON(!q)) {
		video_unregister_device(vdev);
		return;
	}

	/*
	 * Unregistering first shuts the door: no new ioctl, mmap or read can
	 * reach the queue. Releasing it then stops streaming now, not at the
	 * last close, and wakes anyone waiting in DQBUF. The extra reference
	 * keeps the device - and the driver structure the queue usually lives
	 * in - from being freed before that.
	 */
	get_device(&vdev->dev);
	video_unregister_device(vdev);
	/*
	 * Cancelling unbinds buffers from their requests, which must not
	 * happen while MEDIA_REQUEST_IOC_QUEUE validates or queues one: take
	 * the mutex it holds, as v4l2_release() does for the last close.
	 */
	if (v4l2_device_supports_requests(vdev->v4l2_dev))
		mutex_lock(&vdev->v4l2_dev->mdev->req_queue_mutex);
	vb2_v4l2_release_queue(q, vb2_v4l2_fop_lock(vdev), NULL);
	if (v4l2_device_supports_requests(vdev->v4l2_dev))
		mutex_unlock(&vdev->v4l2_dev->mdev->req_queue_mutex);
	put_device(&vdev->dev);
}
EXPORT_SYMBOL_GPL(vb2_video_unregister_device);

/* ---------------------------------------------------------------------- */
/* struct media_device_ops helpers                                        */
/* ---------------------------------------------------------------------- */

/*
 * Undo the preparation of the objects in front of @failed, last prepared
 * first. The request is in the VALIDATING state: no object joins or leaves.
 */
static void vb2_v4l2_unprepare_before(struct media_request *req,
				      struct media_request_object *failed)
{
	struct media_request_object *obj = failed;

	list_for_each_entry_continue_reverse(obj, &req->objects, list) {
		if (obj->ops->unprepare)
			obj->ops->unprepare(obj);
	}
}

int vb2_request_validate(struct media_request *req)
{
	struct media_request_object *obj;
	int ret;

	/* A request must carry at least one buffer (request-api.rst). */
	if (!vb2_request_buffer_cnt(req))
		return -ENOENT;

	list_for_each_entry(obj, &req->objects, list) {
		ret = obj->ops->prepare ? obj->ops->prepare(obj) : 0;
		if (ret) {
			vb2_v4l2_unprepare_before(req, obj);
			return ret;
		}
	}
	return 0;
}
EXPORT_SYMBOL_GPL(vb2_request_validate);

void vb2_request_queue(struct media_request *req)
{
	struct media_request_object *obj, *next;

	/*
	 * mc-request.c keeps buffers at the tail of the list, so controls and
	 * the like are queued before them. Queueing a buffer may complete and
	 * unbind it at once: hence the _safe walk.
	 */
	list_for_each_entry_safe(obj, next, &req->objects, list) {
		if (obj->ops->queue)
			obj->ops->queue(obj);
	}
}
EXPORT_SYMBOL_GPL(vb2_request_queue);

MODULE_DESCRIPTION("videobuf2: V4L2 buffer ioctls, file operations and request helpers");
MODULE_LICENSE("GPL");
