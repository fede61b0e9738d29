// SPDX-License-Identifier: GPL-2.0
/*
 * vb2-testdrv: a virtual video device for testing videobuf2.
 *
 * Every instance is a platform device with a media controller, one video
 * capture node and one video output node. Module parameters choose per
 * instance the allocator (vmalloc, dma-contig or dma-sg), the single- or
 * multi-planar API, and how buffers complete; debugfs knobs inject faults.
 * There is no hardware: the driver writes a test pattern into capture
 * buffers and reads every byte of output buffers, through the CPU mapping
 * the allocator provides.
 */

#include <linux/atomic.h>
#include <linux/debugfs.h>
#include <linux/delay.h>
#include <linux/dma-mapping.h>
#include <linux/hrtimer.h>
#include <linux/module.h>
#include <linux/platform_device.h>
#include <linux/sched.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/workqueue.h>
#include <media/media-device.h>
#include <media/v4l2-common.h>
#include <media/v4l2-device.h>
#include <media/v4l2-fh.h>
#include <media/v4l2-ioctl.h>
#include <media/videobuf2-dma-contig.h>
#include <media/videobuf2-dma-sg.h>
#include <media/videobuf2-vmalloc.h>

#define TDRV_NAME		"vb2-testdrv"
#define TDRV_MAX_DEVS		12
#define TDRV_MIN_SIZE		16
#define TDRV_MAX_WIDTH		1920
#define TDRV_MAX_HEIGHT		1080
#define TDRV_MAX_PLANES		3

/**
 * DOC: module parameters
 *
 * ``n_devs`` sets the number of instances (1 to 12). The others are arrays
 * with one value per instance, e.g. ``allocators=0,1,2``:
 *
 * - ``allocators``: 0 vmalloc, 1 dma-contig, 2 dma-sg.
 * - ``multiplanar``: 0 the single-planar API, 1 the multi-planar one (which
 *   adds the three-buffer YUV420M format, the default there).
 * - ``completion``: 0 buffers complete at once, in buf_queue; 1 a work item
 *   completes them; 2 an hrtimer completes one buffer per frame period.
 * - ``fps``: frames per second of the timer (completion=2).
 * - ``cache_hints``: set &vb2_queue.allow_cache_hints.
 * - ``fail_prepare``, ``fail_start``, ``fail_done``: every Nth buf_prepare
 *   fails, every Nth start_streaming fails, every Nth buffer completes with
 *   %VB2_BUF_STATE_ERROR (0: never). They can be changed at run time in
 *   debugfs, ``vb2-testdrv/<instance>/``, which also has frame counters.
 * - ``max_buffers``: &vb2_queue.max_num_buffers of both queues (0: the
 *   default of 32; up to 32768), for queues with many small buffers.
 * - ``fail_probe``: the probe registers the nodes, waits ``probe_wait_ms``
 *   (a single value) and then fails, as a late probe step might: user space
 *   may have opened the nodes, even be streaming, by then. The instance
 *   must go cleanly while those files stay open.
 * - ``thread``: N > 0 streams the capture queue at probe through the vb2
 *   thread (vb2_thread_start(), as videobuf2-dvb's drivers do) instead of
 *   user space: the driver completes N buffers, then holds the rest. The
 *   debugfs file ``thread`` starts such a run (N) and stops it (0) at run
 *   time; ``thread_calls`` counts the buffers the thread's callback got,
 *   ``thread_errors`` those of them the driver completed with
 *   %VB2_BUF_STATE_ERROR, ``thread_name`` is the task the callback ran in
 *   ("vb2-testdrv<instance>"). Single-planar formats only, as read().
 */
static unsigned int n_devs = 1;
module_param(n_devs, uint, 0444);
MODULE_PARM_DESC(n_devs, "number of instances, 1-12");

static unsigned int allocators[TDRV_MAX_DEVS];
module_param_array(allocators, uint, NULL, 0444);
MODULE_PARM_DESC(allocators, "per instance: 0 vmalloc, 1 dma-contig, 2 dma-sg");

static unsigned int multiplanar[TDRV_MAX_DEVS];
module_param_array(multiplanar, uint, NULL, 0444);
MODULE_PARM_DESC(multiplanar, "per instance: 0 single-planar, 1 multi-planar API");

static unsigned int completion[TDRV_MAX_DEVS] = {
	[0 ... TDRV_MAX_DEVS - 1] = 2
};
module_param_array(completion, uint, NULL, 0444);
MODULE_PARM_DESC(completion, "per instance: 0 in buf_queue, 1 workqueue, 2 timer (default)");

static unsigned int fps[TDRV_MAX_DEVS] = { [0 ... TDRV_MAX_DEVS - 1] = 30 };
module_param_array(fps, uint, NULL, 0444);
MODULE_PARM_DESC(fps, "per instance: frame rate with completion=2, 1-240 (default 30)");

static unsigned int data[TDRV_MAX_DEVS] = {
	[0 ... TDRV_MAX_DEVS - 1] = 1
};
module_param_array(data, uint, NULL, 0444);
MODULE_PARM_DESC(data, "per instance: 1 pattern in capture, checksum of output buffers (default); 0 leave the memory alone");

static unsigned int cache_hints[TDRV_MAX_DEVS];
module_param_array(cache_hints, uint, NULL, 0444);
MODULE_PARM_DESC(cache_hints, "per instance: allow cache hints (MMAP)");

static unsigned int fail_prepare[TDRV_MAX_DEVS];
module_param_array(fail_prepare, uint, NULL, 0444);
MODULE_PARM_DESC(fail_prepare, "per instance: fail every Nth buf_prepare (0 never)");

static unsigned int fail_start[TDRV_MAX_DEVS];
module_param_array(fail_start, uint, NULL, 0444);
MODULE_PARM_DESC(fail_start, "per instance: fail every Nth start_streaming (0 never)");

static unsigned int fail_done[TDRV_MAX_DEVS];
module_param_array(fail_done, uint, NULL, 0444);
MODULE_PARM_DESC(fail_done, "per instance: complete every Nth buffer with ERROR (0 never)");

static unsigned int fail_probe[TDRV_MAX_DEVS];
module_param_array(fail_probe, uint, NULL, 0444);
MODULE_PARM_DESC(fail_probe, "per instance: fail the probe after the nodes are registered");

static unsigned int max_buffers[TDRV_MAX_DEVS];
module_param_array(max_buffers, uint, NULL, 0444);
MODULE_PARM_DESC(max_buffers, "per instance: max_num_buffers of both queues (0: the default, 32)");

static unsigned int thread[TDRV_MAX_DEVS];
module_param_array(thread, uint, NULL, 0444);
MODULE_PARM_DESC(thread, "per instance: run the capture queue from the vb2 thread at probe, completing N buffers (0 no)");

static unsigned int probe_wait_ms;
module_param(probe_wait_ms, uint, 0444);
MODULE_PARM_DESC(probe_wait_ms, "with fail_probe: how long the nodes exist before the failure");

static unsigned int debug;
module_param(debug, uint, 0644);
MODULE_PARM_DESC(debug, "debug level, 0-1");

#define tdrv_dbg(node, fmt, ...)					\
	do {								\
		if (debug)						\
			dev_info(&(node)->vdev.dev, fmt, ##__VA_ARGS__);\
	} while (0)

enum tdrv_allocator { TDRV_VMALLOC, TDRV_DMA_CONTIG, TDRV_DMA_SG };
enum tdrv_completion { TDRV_IMMEDIATE, TDRV_WORKQUEUE, TDRV_TIMER };

static const struct vb2_mem_ops *const tdrv_mem_ops[] = {
	[TDRV_VMALLOC] = &vb2_vmalloc_memops,
	[TDRV_DMA_CONTIG] = &vb2_dma_contig_memops,
	[TDRV_DMA_SG] = &vb2_dma_sg_memops,
};

static const char *const tdrv_allocator_names[] = {
	[TDRV_VMALLOC] = "vmalloc",
	[TDRV_DMA_CONTIG] = "dma-contig",
	[TDRV_DMA_SG] = "dma-sg",
};

/**
 * struct tdrv_format - a pixel format
 * @fourcc:	V4L2_PIX_FMT_*.
 * @planes:	colour planes (1 packed, 3 for Y, Cb and Cr).
 * @buffers:	memory planes; YUV420M puts each colour plane in its own.
 * @bpp:	bytes per pixel of the first colour plane.
 * @sub:	horizontal and vertical subsampling of the other planes.
 */
struct tdrv_format {
	u32 fourcc;
	u8 planes;
	u8 buffers;
	u8 bpp;
	u8 sub;
};

/* The first TDRV_SP_FORMATS work with both APIs; the rest need mplane. */
static const struct tdrv_format tdrv_formats[] = {
	{ V4L2_PIX_FMT_YUYV, 1, 1, 2, 1 },
	{ V4L2_PIX_FMT_GREY, 1, 1, 1, 1 },
	{ V4L2_PIX_FMT_YUV420, 3, 1, 1, 2 },
	{ V4L2_PIX_FMT_YUV420M, 3, 3, 1, 2 },
};

#define TDRV_SP_FORMATS		3

/**
 * struct tdrv_image - a format with its size and memory layout
 * @fmt:	the pixel format.
 * @width:	in pixels, even.
 * @height:	in lines, even.
 * @bytesperline: line length of each memory plane.
 * @sizeimage:	size of each memory plane.
 * @line:	line length of each colour plane.
 * @lines:	lines of each colour plane.
 */
struct tdrv_image {
	const struct tdrv_format *fmt;
	u32 width;
	u32 height;
	u32 bytesperline[TDRV_MAX_PLANES];
	u32 sizeimage[TDRV_MAX_PLANES];
	u32 line[TDRV_MAX_PLANES];
	u32 lines[TDRV_MAX_PLANES];
};

/**
 * struct tdrv_buffer - a driver buffer
 * @vb:		the vb2 buffer, first as videobuf2 requires.
 * @list:	(S) entry in &tdrv_node.pending.
 * @failed:	(S) last completed with %VB2_BUF_STATE_ERROR, for the vb2
 *		thread's callback, which cannot tell otherwise.
 */
struct tdrv_buffer {
	struct vb2_v4l2_buffer vb;
	struct list_head list;
	bool failed;
};

struct tdrv_dev;

/**
 * struct tdrv_node - a video node and its queue
 *
 * I: set at probe. Q: @lock. S: @slock (irqsave; the timer takes it in
 * hard interrupt context). A: atomic or READ_ONCE/WRITE_ONCE, debug only.
 *
 * @dev:	(I) the instance.
 * @is_output:	(I) output node, else capture.
 * @vdev:	the video device.
 * @pad:	(I) its media pad.
 * @queue:	the vb2 queue.
 * @lock:	serialises the node's ioctls, file operations and vb2 calls.
 * @img:	(Q) the current format.
 * @slock:	protects @pending, @running, @sequence and the vb2 thread's
 *		@thread_run, @thread_left and @thread_comm.
 * @pending:	(S) buffers owned by the driver, oldest first.
 * @running:	(S) between start_streaming and stop_streaming.
 * @sequence:	(S) sequence number of the next completed buffer.
 * @timer:	completes a buffer per frame (completion=2).
 * @period:	(I) its period.
 * @work:	completes all pending buffers (completion=1).
 * @prepares:	(Q) buf_prepare calls, for fail_prepare.
 * @starts:	(Q) start_streaming calls, for fail_start.
 * @dones:	(S) completed buffers, for fail_done.
 * @patterns:	(A) test patterns written, moves the pattern along.
 * @frames:	(A) buffers completed with DONE.
 * @errors:	(A) buffers completed with ERROR while streaming.
 * @checksum:	(A) sum of the bytes of the last output buffer checked.
 * @thread_run:	(S) the vb2 thread streams the queue: @thread_left applies.
 * @thread_left: (S) buffers the driver may still complete in this run.
 * @thread_calls: (A) buffers the vb2 thread's callback got in this run.
 * @thread_errors: (A) of them, buffers completed with ERROR.
 * @thread_comm: (S) the task the callback last ran in.
 */
struct tdrv_node {
	struct tdrv_dev *dev;
	bool is_output;
	struct video_device vdev;
	struct media_pad pad;
	struct vb2_queue queue;
	struct mutex lock;		/* see above */
	struct tdrv_image img;

	spinlock_t slock;		/* see above */
	struct list_head pending;
	bool running;
	u32 sequence;
	struct hrtimer timer;
	ktime_t period;
	struct work_struct work;

	u32 prepares;
	u32 starts;
	u32 dones;
	atomic_t patterns;
	u32 frames;
	u32 errors;
	u32 checksum;
	bool thread_run;
	u32 thread_left;
	u32 thread_calls;
	u32 thread_errors;
	char thread_comm[TASK_COMM_LEN];
};

/**
 * struct tdrv_dev - an instance
 *
 * I: set at probe. A: READ_ONCE, written through debugfs.
 *
 * @pdev:	(I) the platform device.
 * @v4l2_dev:	the V4L2 device; its release frees the instance.
 * @mdev:	the media device.
 * @cap:	the capture node.
 * @out:	the output node.
 * @allocator:	(I) &enum tdrv_allocator.
 * @completion:	(I) &enum tdrv_completion.
 * @multiplanar: (I) the nodes use the multi-planar API.
 * @data:	(I) buffers carry a pattern (capture) or are checksummed
 *		(output); without it the driver never touches their memory.
 * @fail_prepare: (A) fail every Nth buf_prepare, 0 never.
 * @fail_start:	(A) fail every Nth start_streaming, 0 never.
 * @fail_done:	(A) complete every Nth buffer with ERROR, 0 never.
 * @thread_lock: serialises starting and stopping the vb2 thread.
 * @thread:	(T, A) buffers the vb2 thread's run completes, 0 when it does
 *		not run. T: @thread_lock.
 * @debugfs:	(I) the instance's debugfs directory.
 */
struct tdrv_dev {
	struct platform_device *pdev;
	struct v4l2_device v4l2_dev;
	struct media_device mdev;
	struct tdrv_node cap;
	struct tdrv_node out;
	enum tdrv_allocator allocator;
	enum tdrv_completion completion;
	bool multiplanar;
	bool data;
	u32 fail_prepare;
	u32 fail_start;
	u32 fail_done;
	struct mutex thread_lock;	/* see above */
	u32 thread;
	struct dentry *debugfs;
};

static struct dentry *tdrv_debugfs_root;
static struct platform_device *tdrv_pdevs[TDRV_MAX_DEVS];

static struct tdrv_buffer *to_tdrv_buffer(struct vb2_buffer *vb)
{
	return container_of(to_vb2_v4l2_buffer(vb), struct tdrv_buffer, vb);
}

/* Count an event; true if it is the Nth (fault injection). */
static bool tdrv_nth(u32 *count, const u32 *every)
{
	u32 n = READ_ONCE(*every);

	return n && ++*count % n == 0;
}

/* Formats and sizes */

static const struct tdrv_format *tdrv_find_format(u32 fourcc, bool mplane)
{
	unsigned int i, n = mplane ? ARRAY_SIZE(tdrv_formats) : TDRV_SP_FORMATS;

	for (i = 0; i < n; i++)
		if (tdrv_formats[i].fourcc == fourcc)
			return &tdrv_formats[i];
	return NULL;
}

/* Fill @img for the nearest supported image to @fourcc, @width x @height. */
static void tdrv_image_fit(struct tdrv_image *img, bool mplane, u32 fourcc,
			   u32 width, u32 height)
{
	const struct tdrv_format *fmt = tdrv_find_format(fourcc, mplane);
	unsigned int p, b;

	if (!fmt)
		fmt = &tdrv_formats[0];
	v4l_bound_align_image(&width, TDRV_MIN_SIZE, TDRV_MAX_WIDTH, 1,
			      &height, TDRV_MIN_SIZE, TDRV_MAX_HEIGHT, 1, 0);
	memset(img, 0, sizeof(*img));
	img->fmt = fmt;
	img->width = width;
	img->height = height;
	for (p = 0; p < fmt->planes; p++) {
		unsigned int sub = p ? fmt->sub : 1;

		img->line[p] = width * fmt->bpp / sub;
		img->lines[p] = height / sub;
		b = fmt->buffers == 1 ? 0 : p;
		if (!img->bytesperline[b])
			img->bytesperline[b] = img->line[p];
		img->sizeimage[b] += img->line[p] * img->lines[p];
	}
}

static void tdrv_image_to_format(const struct tdrv_image *img,
				 struct v4l2_format *f)
{
	unsigned int b;

	if (V4L2_TYPE_IS_MULTIPLANAR(f->type)) {
		struct v4l2_pix_format_mplane *mp = &f->fmt.pix_mp;

		memset(mp, 0, sizeof(*mp));
		mp->width = img->width;
		mp->height = img->height;
		mp->pixelformat = img->fmt->fourcc;
		mp->field = V4L2_FIELD_NONE;
		mp->colorspace = V4L2_COLORSPACE_SRGB;
		mp->num_planes = img->fmt->buffers;
		for (b = 0; b < img->fmt->buffers; b++) {
			mp->plane_fmt[b].bytesperline = img->bytesperline[b];
			mp->plane_fmt[b].sizeimage = img->sizeimage[b];
		}
	} else {
		struct v4l2_pix_format *pix = &f->fmt.pix;

		memset(pix, 0, sizeof(*pix));
		pix->width = img->width;
		pix->height = img->height;
		pix->pixelformat = img->fmt->fourcc;
		pix->field = V4L2_FIELD_NONE;
		pix->colorspace = V4L2_COLORSPACE_SRGB;
		pix->bytesperline = img->bytesperline[0];
		pix->sizeimage = img->sizeimage[0];
	}
}

static void tdrv_format_to_image(const struct v4l2_format *f,
				 struct tdrv_image *img)
{
	if (V4L2_TYPE_IS_MULTIPLANAR(f->type))
		tdrv_image_fit(img, true, f->fmt.pix_mp.pixelformat,
			       f->fmt.pix_mp.width, f->fmt.pix_mp.height);
	else
		tdrv_image_fit(img, false, f->fmt.pix.pixelformat,
			       f->fmt.pix.width, f->fmt.pix.height);
}

/* The data: a test pattern in, a checksum out */

/* Horizontal bands that move down one line per frame. */
static void tdrv_fill_capture(struct tdrv_node *node, struct vb2_buffer *vb)
{
	const struct tdrv_image *img = &node->img;
	const struct tdrv_format *fmt = img->fmt;
	unsigned int frame = atomic_inc_return(&node->patterns);
	unsigned int p, y;
	u8 *line = NULL;

	for (p = 0; p < fmt->planes; p++) {
		/* In a single buffer, each colour plane follows the last. */
		if (fmt->buffers > 1 || !p)
			line = vb2_plane_vaddr(vb, p);
		if (!line)
			return;
		for (y = 0; y < img->lines[p]; y++, line += img->line[p])
			memset(line, (y + frame + p * 0x60) & 0xff,
			       img->line[p]);
	}
}

/* Read every byte of the payload, as a device would. */
static void tdrv_check_output(struct tdrv_node *node, struct vb2_buffer *vb)
{
	unsigned int p, i;
	u32 sum = 0;

	for (p = 0; p < vb->num_planes; p++) {
		const u8 *data = vb2_plane_vaddr(vb, p);
		unsigned int end = vb2_get_plane_payload(vb, p);

		if (!data)
			return;
		for (i = vb->planes[p].data_offset; i < end; i++)
			sum += data[i];
	}
	WRITE_ONCE(node->checksum, sum);
}

static void tdrv_process(struct tdrv_node *node, struct vb2_buffer *vb)
{
	if (!node->dev->data)
		return;
	if (node->is_output)
		tdrv_check_output(node, vb);
	else
		tdrv_fill_capture(node, vb);
}

/* Completion */

/*
 * Complete the oldest pending buffer, processing its data first if
 * @process. Returns false if there was none (or the node stopped).
 * Called from buf_queue, start_streaming, the work item and the timer.
 */
static bool tdrv_complete_next(struct tdrv_node *node, bool process)
{
	struct tdrv_buffer *buf;
	struct vb2_v4l2_buffer *vbuf;
	enum vb2_buffer_state state;
	unsigned long flags;

	spin_lock_irqsave(&node->slock, flags);
	buf = list_first_entry_or_null(&node->pending, struct tdrv_buffer,
				       list);
	/* A run of the vb2 thread holds its buffers after its last one. */
	if (!node->running || !buf || (node->thread_run && !node->thread_left)) {
		spin_unlock_irqrestore(&node->slock, flags);
		return false;
	}
	if (node->thread_run)
		node->thread_left--;
	list_del(&buf->list);
	vbuf = &buf->vb;
	vbuf->sequence = node->sequence++;
	state = tdrv_nth(&node->dones, &node->dev->fail_done) ?
		VB2_BUF_STATE_ERROR : VB2_BUF_STATE_DONE;
	buf->failed = state == VB2_BUF_STATE_ERROR;
	spin_unlock_irqrestore(&node->slock, flags);

	if (process)
		tdrv_process(node, &vbuf->vb2_buf);
	vbuf->field = V4L2_FIELD_NONE;
	/* Output time stamps are the application's (TIMESTAMP_COPY). */
	if (!node->is_output)
		vbuf->vb2_buf.timestamp = ktime_get_ns();
	if (state == VB2_BUF_STATE_DONE)
		WRITE_ONCE(node->frames, node->frames + 1);
	else
		WRITE_ONCE(node->errors, node->errors + 1);
	vb2_buffer_done(&vbuf->vb2_buf, state);
	return true;
}

static void tdrv_work(struct work_struct *work)
{
	struct tdrv_node *node = container_of(work, struct tdrv_node, work);

	while (tdrv_complete_next(node, true))
		;
}

/* Hard interrupt context: the data was processed in buf_queue. */
static enum hrtimer_restart tdrv_timer(struct hrtimer *timer)
{
	struct tdrv_node *node = container_of(timer, struct tdrv_node, timer);

	tdrv_complete_next(node, false);
	hrtimer_forward_now(timer, node->period);
	return HRTIMER_RESTART;
}

/* Give every pending buffer back to vb2 in @state. */
static void tdrv_return_all(struct tdrv_node *node,
			    enum vb2_buffer_state state)
{
	struct tdrv_buffer *buf, *tmp;
	unsigned long flags;
	LIST_HEAD(bufs);

	spin_lock_irqsave(&node->slock, flags);
	list_splice_init(&node->pending, &bufs);
	spin_unlock_irqrestore(&node->slock, flags);

	list_for_each_entry_safe(buf, tmp, &bufs, list) {
		list_del(&buf->list);
		vb2_buffer_done(&buf->vb.vb2_buf, state);
	}
}

/* vb2_ops */

static int tdrv_queue_setup(struct vb2_queue *q, unsigned int *nbuffers,
			    unsigned int *nplanes, unsigned int sizes[],
			    struct device *alloc_devs[])
{
	struct tdrv_node *node = vb2_get_drv_priv(q);
	const struct tdrv_image *img = &node->img;
	unsigned int b;

	/* VIDIOC_CREATE_BUFS: the sizes may be larger than the format's. */
	if (*nplanes) {
		if (*nplanes != img->fmt->buffers)
			return -EINVAL;
		for (b = 0; b < *nplanes; b++)
			if (sizes[b] < img->sizeimage[b])
				return -EINVAL;
		return 0;
	}
	*nplanes = img->fmt->buffers;
	for (b = 0; b < *nplanes; b++)
		sizes[b] = img->sizeimage[b];
	return 0;
}

static int tdrv_buf_out_validate(struct vb2_buffer *vb)
{
	struct vb2_v4l2_buffer *vbuf = to_vb2_v4l2_buffer(vb);

	if (vbuf->field == V4L2_FIELD_ANY)
		vbuf->field = V4L2_FIELD_NONE;
	return vbuf->field == V4L2_FIELD_NONE ? 0 : -EINVAL;
}

static int tdrv_buf_prepare(struct vb2_buffer *vb)
{
	struct tdrv_node *node = vb2_get_drv_priv(vb->vb2_queue);
	const struct tdrv_image *img = &node->img;
	unsigned int b;

	if (tdrv_nth(&node->prepares, &node->dev->fail_prepare)) {
		tdrv_dbg(node, "buffer %u: injected buf_prepare failure\n",
			 vb->index);
		return -EIO;
	}
	for (b = 0; b < vb->num_planes; b++) {
		unsigned long need = img->sizeimage[b];

		if (vb2_plane_size(vb, b) < need)
			return -EINVAL;
		if (!node->is_output) {
			vb2_set_plane_payload(vb, b, need);
			continue;
		}
		/*
		 * An output buffer must hold a whole image. write() emulation
		 * queues whole buffers, but upstream's videobuf2 hands them to
		 * buf_prepare with a payload of 0: take such a plane as full,
		 * so that the driver behaves the same on both.
		 */
		if (vb2_fileio_is_active(vb->vb2_queue) &&
		    !vb2_get_plane_payload(vb, b))
			vb2_set_plane_payload(vb, b, need);
		if (vb2_get_plane_payload(vb, b) <
		    need + vb->planes[b].data_offset) {
			tdrv_dbg(node, "buffer %u plane %u: payload %lu < %lu\n",
				 vb->index, b, vb2_get_plane_payload(vb, b),
				 need);
			return -EINVAL;
		}
	}
	return 0;
}

static void tdrv_buf_queue(struct vb2_buffer *vb)
{
	struct tdrv_node *node = vb2_get_drv_priv(vb->vb2_queue);
	struct tdrv_buffer *buf = to_tdrv_buffer(vb);
	enum tdrv_completion mode = node->dev->completion;
	unsigned long flags;
	bool running;

	/* The timer runs in hard interrupt context: process the data now. */
	if (mode != TDRV_WORKQUEUE)
		tdrv_process(node, vb);

	spin_lock_irqsave(&node->slock, flags);
	list_add_tail(&buf->list, &node->pending);
	running = node->running;
	spin_unlock_irqrestore(&node->slock, flags);

	/* Before start_streaming, buffers wait for it. */
	if (!running)
		return;
	if (mode == TDRV_IMMEDIATE)
		tdrv_complete_next(node, false);
	else if (mode == TDRV_WORKQUEUE)
		queue_work(system_wq, &node->work);
}

static int tdrv_start_streaming(struct vb2_queue *q, unsigned int count)
{
	struct tdrv_node *node = vb2_get_drv_priv(q);
	unsigned long flags;

	if (tdrv_nth(&node->starts, &node->dev->fail_start)) {
		tdrv_dbg(node, "injected start_streaming failure\n");
		tdrv_return_all(node, VB2_BUF_STATE_QUEUED);
		return -EIO;
	}

	spin_lock_irqsave(&node->slock, flags);
	node->sequence = 0;
	node->running = true;
	spin_unlock_irqrestore(&node->slock, flags);

	switch (node->dev->completion) {
	case TDRV_IMMEDIATE:
		while (tdrv_complete_next(node, false))
			;
		break;
	case TDRV_WORKQUEUE:
		queue_work(system_wq, &node->work);
		break;
	case TDRV_TIMER:
		hrtimer_start(&node->timer, node->period, HRTIMER_MODE_REL);
		break;
	}
	return 0;
}

static void tdrv_stop_streaming(struct vb2_queue *q)
{
	struct tdrv_node *node = vb2_get_drv_priv(q);
	unsigned long flags;

	spin_lock_irqsave(&node->slock, flags);
	node->running = false;
	spin_unlock_irqrestore(&node->slock, flags);

	hrtimer_cancel(&node->timer);
	cancel_work_sync(&node->work);
	tdrv_return_all(node, VB2_BUF_STATE_ERROR);
}

static const struct vb2_ops tdrv_qops = {
	.queue_setup		= tdrv_queue_setup,
	.buf_out_validate	= tdrv_buf_out_validate,
	.buf_prepare		= tdrv_buf_prepare,
	.buf_queue		= tdrv_buf_queue,
	.start_streaming	= tdrv_start_streaming,
	.stop_streaming		= tdrv_stop_streaming,
	.wait_prepare		= vb2_ops_wait_prepare,
	.wait_finish		= vb2_ops_wait_finish,
};

/* V4L2 ioctls */

static int tdrv_querycap(struct file *file, void *priv,
			 struct v4l2_capability *cap)
{
	struct tdrv_node *node = video_drvdata(file);

	strscpy(cap->driver, TDRV_NAME, sizeof(cap->driver));
	snprintf(cap->card, sizeof(cap->card), "%s-%d", TDRV_NAME,
		 node->dev->pdev->id);
	return 0;
}

static int tdrv_enum_fmt(struct file *file, void *priv,
			 struct v4l2_fmtdesc *f)
{
	unsigned int n = V4L2_TYPE_IS_MULTIPLANAR(f->type) ?
			 ARRAY_SIZE(tdrv_formats) : TDRV_SP_FORMATS;

	if (f->index >= n)
		return -EINVAL;
	f->pixelformat = tdrv_formats[f->index].fourcc;
	return 0;
}

static int tdrv_g_fmt(struct file *file, void *priv, struct v4l2_format *f)
{
	struct tdrv_node *node = video_drvdata(file);

	tdrv_image_to_format(&node->img, f);
	return 0;
}

static int tdrv_try_fmt(struct file *file, void *priv, struct v4l2_format *f)
{
	struct tdrv_image img;

	tdrv_format_to_image(f, &img);
	tdrv_image_to_format(&img, f);
	return 0;
}

static int tdrv_s_fmt(struct file *file, void *priv, struct v4l2_format *f)
{
	struct tdrv_node *node = video_drvdata(file);
	struct tdrv_image img;

	tdrv_format_to_image(f, &img);
	tdrv_image_to_format(&img, f);
	if (vb2_is_busy(&node->queue))
		return -EBUSY;
	node->img = img;
	return 0;
}

static int tdrv_enum_framesizes(struct file *file, void *priv,
				struct v4l2_frmsizeenum *fsize)
{
	struct tdrv_node *node = video_drvdata(file);

	if (fsize->index ||
	    !tdrv_find_format(fsize->pixel_format, node->dev->multiplanar))
		return -EINVAL;
	fsize->type = V4L2_FRMSIZE_TYPE_STEPWISE;
	fsize->stepwise.min_width = TDRV_MIN_SIZE;
	fsize->stepwise.max_width = TDRV_MAX_WIDTH;
	fsize->stepwise.step_width = 2;
	fsize->stepwise.min_height = TDRV_MIN_SIZE;
	fsize->stepwise.max_height = TDRV_MAX_HEIGHT;
	fsize->stepwise.step_height = 2;
	return 0;
}

static int tdrv_enum_input(struct file *file, void *priv,
			   struct v4l2_input *inp)
{
	if (inp->index)
		return -EINVAL;
	inp->type = V4L2_INPUT_TYPE_CAMERA;
	strscpy(inp->name, "Test pattern", sizeof(inp->name));
	return 0;
}

static int tdrv_enum_output(struct file *file, void *priv,
			    struct v4l2_output *out)
{
	if (out->index)
		return -EINVAL;
	out->type = V4L2_OUTPUT_TYPE_ANALOG;
	strscpy(out->name, "Checksum", sizeof(out->name));
	return 0;
}

/* The one input or output, number 0. */
static int tdrv_g_io(struct file *file, void *priv, unsigned int *i)
{
	*i = 0;
	return 0;
}

static int tdrv_s_io(struct file *file, void *priv, unsigned int i)
{
	return i ? -EINVAL : 0;
}

#define TDRV_COMMON_IOCTLS						\
	.vidioc_querycap		= tdrv_querycap,		\
	.vidioc_enum_framesizes		= tdrv_enum_framesizes,		\
	.vidioc_enum_input		= tdrv_enum_input,		\
	.vidioc_g_input			= tdrv_g_io,			\
	.vidioc_s_input			= tdrv_s_io,			\
	.vidioc_enum_output		= tdrv_enum_output,		\
	.vidioc_g_output		= tdrv_g_io,			\
	.vidioc_s_output		= tdrv_s_io,			\
	.vidioc_reqbufs			= vb2_ioctl_reqbufs,		\
	.vidioc_create_bufs		= vb2_ioctl_create_bufs,	\
	.vidioc_remove_bufs		= vb2_ioctl_remove_bufs,	\
	.vidioc_prepare_buf		= vb2_ioctl_prepare_buf,	\
	.vidioc_querybuf		= vb2_ioctl_querybuf,		\
	.vidioc_qbuf			= vb2_ioctl_qbuf,		\
	.vidioc_dqbuf			= vb2_ioctl_dqbuf,		\
	.vidioc_expbuf			= vb2_ioctl_expbuf,		\
	.vidioc_streamon		= vb2_ioctl_streamon,		\
	.vidioc_streamoff		= vb2_ioctl_streamoff

/*
 * The V4L2 core accepts a buffer type when the matching callback exists,
 * so single- and multi-planar instances need tables of their own. Which of
 * the capture or output callbacks apply follows from the node's direction.
 */
static const struct v4l2_ioctl_ops tdrv_ioctl_ops_sp = {
	TDRV_COMMON_IOCTLS,
	.vidioc_enum_fmt_vid_cap	= tdrv_enum_fmt,
	.vidioc_g_fmt_vid_cap		= tdrv_g_fmt,
	.vidioc_try_fmt_vid_cap		= tdrv_try_fmt,
	.vidioc_s_fmt_vid_cap		= tdrv_s_fmt,
	.vidioc_enum_fmt_vid_out	= tdrv_enum_fmt,
	.vidioc_g_fmt_vid_out		= tdrv_g_fmt,
	.vidioc_try_fmt_vid_out		= tdrv_try_fmt,
	.vidioc_s_fmt_vid_out		= tdrv_s_fmt,
};

static const struct v4l2_ioctl_ops tdrv_ioctl_ops_mp = {
	TDRV_COMMON_IOCTLS,
	.vidioc_enum_fmt_vid_cap	= tdrv_enum_fmt,
	.vidioc_g_fmt_vid_cap_mplane	= tdrv_g_fmt,
	.vidioc_try_fmt_vid_cap_mplane	= tdrv_try_fmt,
	.vidioc_s_fmt_vid_cap_mplane	= tdrv_s_fmt,
	.vidioc_enum_fmt_vid_out	= tdrv_enum_fmt,
	.vidioc_g_fmt_vid_out_mplane	= tdrv_g_fmt,
	.vidioc_try_fmt_vid_out_mplane	= tdrv_try_fmt,
	.vidioc_s_fmt_vid_out_mplane	= tdrv_s_fmt,
};

static const struct v4l2_file_operations tdrv_fops = {
	.owner		= THIS_MODULE,
	.open		= v4l2_fh_open,
	.release	= vb2_fop_release,
	.read		= vb2_fop_read,
	.write		= vb2_fop_write,
	.poll		= vb2_fop_poll,
	.mmap		= vb2_fop_mmap,
	.unlocked_ioctl	= video_ioctl2,
};

/* Setting up an instance */

static int tdrv_init_queue(struct tdrv_node *node)
{
	struct tdrv_dev *dev = node->dev;
	struct vb2_queue *q = &node->queue;
	unsigned int inst = dev->pdev->id;

	if (node->is_output)
		q->type = dev->multiplanar ? V4L2_BUF_TYPE_VIDEO_OUTPUT_MPLANE :
					     V4L2_BUF_TYPE_VIDEO_OUTPUT;
	else
		q->type = dev->multiplanar ? V4L2_BUF_TYPE_VIDEO_CAPTURE_MPLANE :
					     V4L2_BUF_TYPE_VIDEO_CAPTURE;
	q->io_modes = VB2_MMAP | VB2_DMABUF |
		      (node->is_output ? VB2_WRITE : VB2_READ);
	/* dma-contig needs user memory to be physically contiguous. */
	if (dev->allocator != TDRV_DMA_CONTIG)
		q->io_modes |= VB2_USERPTR;
	q->dev = &dev->pdev->dev;
	q->lock = &node->lock;
	q->ops = &tdrv_qops;
	q->mem_ops = tdrv_mem_ops[dev->allocator];
	q->drv_priv = node;
	q->buf_struct_size = sizeof(struct tdrv_buffer);
	q->timestamp_flags = node->is_output ?
		V4L2_BUF_FLAG_TIMESTAMP_COPY :
		V4L2_BUF_FLAG_TIMESTAMP_MONOTONIC | V4L2_BUF_FLAG_TSTAMP_SRC_EOF;
	q->allow_cache_hints = !!cache_hints[inst];
	q->max_num_buffers = min(max_buffers[inst], 32768U);
	return vb2_queue_init(q);
}

static int tdrv_init_node(struct tdrv_dev *dev, struct tdrv_node *node,
			  bool is_output)
{
	struct video_device *vdev = &node->vdev;
	unsigned int inst = dev->pdev->id;
	u32 caps;
	int ret;

	node->dev = dev;
	node->is_output = is_output;
	mutex_init(&node->lock);
	spin_lock_init(&node->slock);
	INIT_LIST_HEAD(&node->pending);
	INIT_WORK(&node->work, tdrv_work);
	hrtimer_init(&node->timer, CLOCK_MONOTONIC, HRTIMER_MODE_REL);
	node->timer.function = tdrv_timer;
	node->period = ns_to_ktime(NSEC_PER_SEC / clamp(fps[inst], 1U, 240U));
	/* Multi-planar instances start with three memory planes. */
	tdrv_image_fit(&node->img, dev->multiplanar,
		       dev->multiplanar ? V4L2_PIX_FMT_YUV420M :
					  V4L2_PIX_FMT_YUYV, 640, 480);

	ret = tdrv_init_queue(node);
	if (ret)
		return ret;

	if (is_output)
		caps = dev->multiplanar ? V4L2_CAP_VIDEO_OUTPUT_MPLANE :
					  V4L2_CAP_VIDEO_OUTPUT;
	else
		caps = dev->multiplanar ? V4L2_CAP_VIDEO_CAPTURE_MPLANE :
					  V4L2_CAP_VIDEO_CAPTURE;
	snprintf(vdev->name, sizeof(vdev->name), "%s-%u-%s", TDRV_NAME, inst,
		 is_output ? "out" : "cap");
	vdev->device_caps = caps | V4L2_CAP_STREAMING | V4L2_CAP_READWRITE;
	vdev->vfl_dir = is_output ? VFL_DIR_TX : VFL_DIR_RX;
	vdev->fops = &tdrv_fops;
	vdev->ioctl_ops = dev->multiplanar ? &tdrv_ioctl_ops_mp :
					     &tdrv_ioctl_ops_sp;
	vdev->release = video_device_release_empty;
	vdev->v4l2_dev = &dev->v4l2_dev;
	vdev->queue = &node->queue;
	vdev->lock = &node->lock;
	video_set_drvdata(vdev, node);

	node->pad.flags = is_output ? MEDIA_PAD_FL_SOURCE : MEDIA_PAD_FL_SINK;
	ret = media_entity_pads_init(&vdev->entity, 1, &node->pad);
	if (ret)
		return ret;
	return video_register_device(vdev, VFL_TYPE_VIDEO, -1);
}

/* The vb2 thread */

/*
 * Called by the vb2 thread for every buffer it dequeued, the failed ones
 * too: count them, as the demux callback of a DVB driver would see them.
 */
static int tdrv_thread_buffer(struct vb2_buffer *vb, void *priv)
{
	struct tdrv_node *node = priv;
	struct tdrv_buffer *buf = to_tdrv_buffer(vb);
	char comm[TASK_COMM_LEN];
	unsigned long flags;

	get_task_comm(comm, current);
	spin_lock_irqsave(&node->slock, flags);
	memcpy(node->thread_comm, comm, sizeof(comm));
	spin_unlock_irqrestore(&node->slock, flags);
	if (buf->failed)
		WRITE_ONCE(node->thread_errors, node->thread_errors + 1);
	WRITE_ONCE(node->thread_calls, node->thread_calls + 1);
	return 0;
}

static void tdrv_thread_limit(struct tdrv_node *node, bool run, u32 left)
{
	unsigned long flags;

	spin_lock_irqsave(&node->slock, flags);
	node->thread_run = run;
	node->thread_left = left;
	if (run)
		node->thread_comm[0] = '\0';
	spin_unlock_irqrestore(&node->slock, flags);
}

/* Stream the capture queue from the vb2 thread, @n buffers. */
static int tdrv_thread_start(struct tdrv_dev *dev, u32 n)
{
	struct tdrv_node *node = &dev->cap;
	char name[16];
	int ret = -EBUSY;

	lockdep_assert_held(&dev->thread_lock);
	snprintf(name, sizeof(name), "testdrv%d", dev->pdev->id);
	/* Not while user space has buffers, nor with a thread waiting. */
	mutex_lock(&node->lock);
	if (!vb2_is_busy(&node->queue)) {
		WRITE_ONCE(node->thread_calls, 0);
		WRITE_ONCE(node->thread_errors, 0);
		tdrv_thread_limit(node, true, n);
		ret = vb2_thread_start(&node->queue, tdrv_thread_buffer, node,
				       name);
		if (ret)
			tdrv_thread_limit(node, false, 0);
	}
	mutex_unlock(&node->lock);
	if (!ret)
		WRITE_ONCE(dev->thread, n);
	return ret;
}

/*
 * Without the node's lock: the thread takes it around each DQBUF and QBUF
 * (wait_finish, wait_prepare), and vb2_thread_stop() waits for the thread.
 */
static void tdrv_thread_stop(struct tdrv_dev *dev)
{
	struct tdrv_node *node = &dev->cap;
	int ret;

	lockdep_assert_held(&dev->thread_lock);
	if (!dev->thread)
		return;
	ret = vb2_thread_stop(&node->queue);
	if (ret)
		dev_warn(&dev->pdev->dev, "vb2 thread stopped with %d\n", ret);
	tdrv_thread_limit(node, false, 0);
	WRITE_ONCE(dev->thread, 0);
}

static int tdrv_thread_get(void *data, u64 *val)
{
	struct tdrv_dev *dev = data;

	*val = READ_ONCE(dev->thread);
	return 0;
}

/* N starts a run of N buffers, 0 stops it. */
static int tdrv_thread_set(void *data, u64 val)
{
	struct tdrv_dev *dev = data;
	int ret = 0;

	if (val > U32_MAX)
		return -EINVAL;
	mutex_lock(&dev->thread_lock);
	if (!val)
		tdrv_thread_stop(dev);
	else if (dev->thread)
		ret = -EBUSY;
	else
		ret = tdrv_thread_start(dev, val);
	mutex_unlock(&dev->thread_lock);
	return ret;
}

DEFINE_DEBUGFS_ATTRIBUTE(tdrv_thread_fops, tdrv_thread_get, tdrv_thread_set,
			 "%llu\n");

static int tdrv_thread_name_show(struct seq_file *m, void *unused)
{
	struct tdrv_node *node = m->private;
	char comm[TASK_COMM_LEN];
	unsigned long flags;

	spin_lock_irqsave(&node->slock, flags);
	memcpy(comm, node->thread_comm, sizeof(comm));
	spin_unlock_irqrestore(&node->slock, flags);
	seq_printf(m, "%s\n", comm);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(tdrv_thread_name);

static void tdrv_init_debugfs(struct tdrv_dev *dev)
{
	struct dentry *d;
	char name[8];

	snprintf(name, sizeof(name), "%d", dev->pdev->id);
	d = debugfs_create_dir(name, tdrv_debugfs_root);
	dev->debugfs = d;
	debugfs_create_u32("fail_prepare", 0644, d, &dev->fail_prepare);
	debugfs_create_u32("fail_start", 0644, d, &dev->fail_start);
	debugfs_create_u32("fail_done", 0644, d, &dev->fail_done);
	debugfs_create_u32("cap_frames", 0444, d, &dev->cap.frames);
	debugfs_create_u32("cap_errors", 0444, d, &dev->cap.errors);
	debugfs_create_u32("out_frames", 0444, d, &dev->out.frames);
	debugfs_create_u32("out_errors", 0444, d, &dev->out.errors);
	debugfs_create_x32("out_checksum", 0444, d, &dev->out.checksum);
	debugfs_create_file_unsafe("thread", 0644, d, dev, &tdrv_thread_fops);
	debugfs_create_u32("thread_calls", 0444, d, &dev->cap.thread_calls);
	debugfs_create_u32("thread_errors", 0444, d, &dev->cap.thread_errors);
	debugfs_create_file("thread_name", 0444, d, &dev->cap,
			    &tdrv_thread_name_fops);
}

/* The device-side DMA limits; vmalloc needs none. */
static int tdrv_setup_dma(struct tdrv_dev *dev)
{
	struct device *d = &dev->pdev->dev;
	int ret;

	if (dev->allocator == TDRV_VMALLOC)
		return 0;
	ret = dma_coerce_mask_and_coherent(d, DMA_BIT_MASK(32));
	if (ret)
		return ret;
	/* One segment may be a whole plane (DMA-API debug checks this). */
	if (dev->allocator == TDRV_DMA_CONTIG)
		return vb2_dma_contig_set_max_seg_size(d, UINT_MAX);
	dma_set_max_seg_size(d, UINT_MAX);
	return 0;
}

/* Last reference to the V4L2 device gone: no file is open any more. */
static void tdrv_release(struct v4l2_device *v4l2_dev)
{
	struct tdrv_dev *dev = container_of(v4l2_dev, struct tdrv_dev,
					    v4l2_dev);

	v4l2_device_unregister(&dev->v4l2_dev);
	media_device_cleanup(&dev->mdev);
	mutex_destroy(&dev->cap.lock);
	mutex_destroy(&dev->out.lock);
	mutex_destroy(&dev->thread_lock);
	kfree(dev);
}

static int tdrv_probe(struct platform_device *pdev)
{
	unsigned int inst = pdev->id;
	struct tdrv_dev *dev;
	int ret;

	dev = kzalloc(sizeof(*dev), GFP_KERNEL);
	if (!dev)
		return -ENOMEM;
	dev->pdev = pdev;
	dev->allocator = min_t(unsigned int, allocators[inst], TDRV_DMA_SG);
	dev->completion = min_t(unsigned int, completion[inst], TDRV_TIMER);
	dev->multiplanar = multiplanar[inst];
	dev->data = data[inst];
	dev->fail_prepare = fail_prepare[inst];
	dev->fail_start = fail_start[inst];
	dev->fail_done = fail_done[inst];
	mutex_init(&dev->thread_lock);
	platform_set_drvdata(pdev, dev);

	ret = tdrv_setup_dma(dev);
	if (ret) {
		kfree(dev);
		return ret;
	}

	dev->mdev.dev = &pdev->dev;
	snprintf(dev->mdev.model, sizeof(dev->mdev.model), "%s-%u",
		 TDRV_NAME, inst);
	media_device_init(&dev->mdev);
	dev->v4l2_dev.mdev = &dev->mdev;
	dev->v4l2_dev.release = tdrv_release;
	ret = v4l2_device_register(&pdev->dev, &dev->v4l2_dev);
	if (ret) {
		media_device_cleanup(&dev->mdev);
		kfree(dev);
		return ret;
	}

	ret = tdrv_init_node(dev, &dev->cap, false);
	if (!ret)
		ret = tdrv_init_node(dev, &dev->out, true);
	if (!ret)
		ret = media_device_register(&dev->mdev);
	if (ret)
		goto unregister;
	if (fail_probe[inst]) {
		msleep(probe_wait_ms);
		dev_info(&pdev->dev, "failing the probe, as asked\n");
		ret = -EIO;
		media_device_unregister(&dev->mdev);
		goto unregister;
	}

	tdrv_init_debugfs(dev);
	if (thread[inst]) {
		ret = tdrv_thread_set(dev, thread[inst]);
		if (ret)
			dev_warn(&pdev->dev, "no vb2 thread: %d\n", ret);
	}
	dev_info(&pdev->dev, "%s, %s-planar, completion %u: %s and %s\n",
		 tdrv_allocator_names[dev->allocator],
		 dev->multiplanar ? "multi" : "single", dev->completion,
		 video_device_node_name(&dev->cap.vdev),
		 video_device_node_name(&dev->out.vdev));
	return 0;

unregister:
	/*
	 * Files may be open on the nodes: the queues are released now, the
	 * instance is freed by tdrv_release() when the last file goes.
	 */
	vb2_video_unregister_device(&dev->out.vdev);
	vb2_video_unregister_device(&dev->cap.vdev);
	v4l2_device_put(&dev->v4l2_dev);
	return ret;
}

static void tdrv_remove(struct platform_device *pdev)
{
	struct tdrv_dev *dev = platform_get_drvdata(pdev);

	debugfs_remove_recursive(dev->debugfs);
	media_device_unregister(&dev->mdev);
	/* The vb2 thread must be gone before its queue is released. */
	tdrv_thread_set(dev, 0);
	/* Stops streaming now, even if files stay open. */
	vb2_video_unregister_device(&dev->out.vdev);
	vb2_video_unregister_device(&dev->cap.vdev);
	v4l2_device_put(&dev->v4l2_dev);
}

static struct platform_driver tdrv_driver = {
	.probe		= tdrv_probe,
	.remove		= tdrv_remove,
	.driver		= {
		.name	= TDRV_NAME,
	},
};

static void tdrv_destroy_devices(void)
{
	unsigned int i;

	for (i = 0; i < TDRV_MAX_DEVS; i++) {
		platform_device_unregister(tdrv_pdevs[i]);
		tdrv_pdevs[i] = NULL;
	}
}

static int __init tdrv_init(void)
{
	unsigned int i;
	int ret;

	tdrv_debugfs_root = debugfs_create_dir(TDRV_NAME, NULL);
	ret = platform_driver_register(&tdrv_driver);
	if (ret)
		goto remove_debugfs;

	for (i = 0; i < clamp(n_devs, 1U, (unsigned int)TDRV_MAX_DEVS); i++) {
		tdrv_pdevs[i] = platform_device_register_simple(TDRV_NAME, i,
								NULL, 0);
		if (IS_ERR(tdrv_pdevs[i])) {
			ret = PTR_ERR(tdrv_pdevs[i]);
			tdrv_pdevs[i] = NULL;
			goto destroy;
		}
	}
	return 0;

destroy:
	tdrv_destroy_devices();
	platform_driver_unregister(&tdrv_driver);
remove_debugfs:
	debugfs_remove_recursive(tdrv_debugfs_root);
	return ret;
}

static void __exit tdrv_exit(void)
{
	tdrv_destroy_devices();
	platform_driver_unregister(&tdrv_driver);
	debugfs_remove_recursive(tdrv_debugfs_root);
}

module_init(tdrv_init);
module_exit(tdrv_exit);

MODULE_DESCRIPTION("Virtual capture and output device for testing videobuf2");
MODULE_LICENSE("GPL");
