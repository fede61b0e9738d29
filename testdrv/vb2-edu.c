// SPDX-License-Identifier: GPL-2.0
/*
 * vb2-edu: a V4L2 driver for QEMU's "edu" PCI device, whose DMA engine moves
 * every byte of every buffer. It tests what videobuf2 hands a DMA driver:
 * the bus addresses of dma-contig and the mapped scatterlists of dma-sg,
 * that they stay mapped while the device owns the buffer, and that what the
 * device wrote is what user space reads (through an IOMMU, through swiotlb
 * bounce buffers, or mapped directly).
 *
 * The device (QEMU's docs/specs/edu.rst) has a 4 KiB buffer of its own at
 * device address 0x40000 and copies between it and memory, one transfer at
 * a time, raising an interrupt when a transfer is done. Each instance has a
 * capture and an output node that share the engine:
 *
 * - capture: for each run of a plane that fits the device's buffer, the driver writes
 *   the frame's pattern (vb2-edu-pattern.h) into a coherent page, the engine
 *   copies it into the device and from there into the buffer;
 * - output: the engine copies each run of the buffer into the device and
 *   from there into a coherent page, which the driver compares with the
 *   pattern of the frame whose sequence number the time stamp carries. A
 *   frame that differs completes with %VB2_BUF_STATE_ERROR.
 *
 * The CPU never touches the buffers. Buffers complete from the interrupt
 * handler, as on real hardware.
 *
 * With nodma=1 (make bench's IOMMU guest, tools/plans/bench-iommu.plan) the
 * engine stays idle: a queued buffer completes inside buf_queue, DONE, its
 * planes full, without a transfer. What QBUF and DQBUF then cost is
 * videobuf2's work and the DMA mapping's (a DMABUF plane is mapped for this
 * PCI device, through the IOMMU when there is one), not 100 ms of QEMU's
 * time per transfer.
 */

#include <linux/debugfs.h>
#include <linux/delay.h>
#include <linux/dma-mapping.h>
#include <linux/idr.h>
#include <linux/interrupt.h>
#include <linux/io.h>
#include <linux/iommu.h>
#include <linux/module.h>
#include <linux/pci.h>
#include <linux/scatterlist.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/wait.h>
#include <media/v4l2-device.h>
#include <media/v4l2-fh.h>
#include <media/v4l2-ioctl.h>
#include <media/videobuf2-dma-contig.h>
#include <media/videobuf2-dma-sg.h>
#include <media/videobuf2-v4l2.h>

#include "vb2-edu-pattern.h"

#define EDU_NAME		"vb2-edu"
#define EDU_MAX_DEVS		4

/* Registers of BAR 0 and the device's own buffer (QEMU docs/specs/edu.rst). */
#define EDU_REG_ID		0x00
#define EDU_ID_MAGIC		0xed	/* low byte of the identification */
#define EDU_REG_IRQ_STATUS	0x24
#define EDU_REG_IRQ_ACK		0x64
#define EDU_REG_DMA_SRC		0x80
#define EDU_REG_DMA_DST		0x88
#define EDU_REG_DMA_COUNT	0x90
#define EDU_REG_DMA_CMD		0x98
#define EDU_DMA_START		BIT(0)
#define EDU_DMA_TO_RAM		BIT(1)	/* device buffer -> memory */
#define EDU_DMA_IRQ		BIT(2)
#define EDU_IRQ_DMA		0x100
#define EDU_BUF_ADDR		0x40000
#define EDU_BUF_SIZE		4096
/*
 * The longest transfer: QEMU 7.2's edu refuses (and stops the machine on) a
 * transfer that ends at the very end of its buffer, an off-by-one of its
 * range check.
 */
#define EDU_RUN_MAX		(EDU_BUF_SIZE - 1)

/*
 * debugfs stray_dma: the bus address of a transfer that nothing mapped for
 * the device. IOVAs are handed out from the top of the device's range down,
 * so behind an IOMMU this page is never mapped.
 */
#define EDU_STRAY_ADDR		0x1000

/*
 * How long a stop waits for the transfer under way (QEMU takes 100 ms); the
 * buffer ends after that transfer, whatever its size.
 */
#define EDU_STOP_TIMEOUT	(5 * HZ)

/**
 * DOC: vb2-edu module parameters
 *
 * Arrays with one value per device, by instance number (the lowest one
 * free at probe, so a device unbound and bound again gets its own back once
 * its files are closed):
 *
 * - ``allocators``: 0 dma-contig (default), 1 dma-sg.
 * - ``multiplanar``: 0 the single-planar API with GREY, 1 the multi-planar
 *   one with YUV420M (three planes).
 * - ``dma_bits``: the DMA mask the driver sets (default 64). Give QEMU's
 *   ``dma_mask`` property the same: the device drops the address bits
 *   above it.
 *
 * For every device:
 *
 * - ``nodma``: 1 completes each queued buffer at once, in buf_queue, without
 *   a transfer (capture: every plane's payload its full size); the buffers
 *   are still mapped for the device as for a transfer. For benchmarks of
 *   the mapping; the frames carry no pattern, and output frames are not
 *   checked. Default 0.
 *
 * ``debugfs/vb2-edu/<PCI device>/`` has counters: ``frames``, ``errors``
 * (output frames that differed from their pattern, capture frames that
 * could not be transferred), ``transfers``; and ``stray_dma``: writing to
 * it makes an idle device behind an IOMMU write to a bus address that was
 * never mapped for it, which the IOMMU must block and report (the harness's
 * proof that it would see such a fault); reading it gives how often.
 */
static unsigned int allocators[EDU_MAX_DEVS];
module_param_array(allocators, uint, NULL, 0444);
MODULE_PARM_DESC(allocators, "per device: 0 dma-contig, 1 dma-sg");

static unsigned int multiplanar[EDU_MAX_DEVS];
module_param_array(multiplanar, uint, NULL, 0444);
MODULE_PARM_DESC(multiplanar, "per device: 0 single-planar (GREY), 1 multi-planar (YUV420M)");

static unsigned int dma_bits[EDU_MAX_DEVS] = { [0 ... EDU_MAX_DEVS - 1] = 64 };
module_param_array(dma_bits, uint, NULL, 0444);
MODULE_PARM_DESC(dma_bits, "per device: the DMA mask in bits (default 64)");

static bool nodma;
module_param(nodma, bool, 0444);
MODULE_PARM_DESC(nodma, "complete buffers at once, without a transfer (benchmarks)");

static bool trace;
module_param(trace, bool, 0644);
MODULE_PARM_DESC(trace, "log every transfer");

struct edu_buffer {
	struct vb2_v4l2_buffer	vb;	/* first: the core allocates it */
	struct list_head	list;	/* in edu_dev.pending */
};

struct edu_dev;

/*
 * Locks:
 *  E: edu_dev.lock, a spinlock taken in the interrupt handler: the engine's
 *     registers and everything about the transfer under way.
 */
struct edu_node {
	struct edu_dev		*edu;
	struct video_device	vdev;
	struct vb2_queue	q;
	struct mutex		lock;	/* the node's ioctls, and fmt */
	bool			output;
	struct v4l2_pix_format_mplane fmt;
	u32			sequence;	/* of the next frame; E */
	bool			stopping;	/* the engine's buffer ends early; E */
};

struct edu_dev {
	struct pci_dev		*pdev;
	int			inst;		/* in edu_ida, until released */
	void __iomem		*mmio;
	struct v4l2_device	v4l2;
	struct edu_node		node[2];	/* capture, output */
	bool			mplane;
	const struct vb2_mem_ops *mem_ops;
	int			irq;

	spinlock_t		lock;		/* E */
	struct list_head	pending;	/* buffers of both nodes, FIFO; E */
	struct edu_buffer	*cur;		/* the engine's buffer, or NULL; E */
	unsigned int		plane;		/* of cur; E */
	u32			offset;		/* in the plane; E */
	u32			len;		/* of the transfer; E */
	dma_addr_t		addr;		/* of the run in the buffer; E */
	bool			second;		/* device -> memory leg; E */
	bool			bad;		/* cur differs or failed; E */
	bool			stray;		/* a stray_dma transfer under way; E */
	wait_queue_head_t	idle;		/* cur changed */

	struct mutex		pages_lock;	/* pages_users, and the pages */
	unsigned int		pages_users;	/* nodes streaming */
	void			*pattern;	/* capture: memory -> device */
	dma_addr_t		pattern_dma;
	void			*check;		/* output: device -> memory */
	dma_addr_t		check_dma;

	struct dentry		*debugfs;
	u32			frames;
	u32			errors;
	u64			transfers;
	u32			strays;		/* stray_dma transfers; E */
};

static struct dentry *edu_debugfs_root;
static DEFINE_IDA(edu_ida);

static struct edu_node *edu_node_of(struct vb2_queue *q)
{
	return vb2_get_drv_priv(q);
}

static struct edu_buffer *edu_buffer_of(struct vb2_buffer *vb)
{
	return container_of(to_vb2_v4l2_buffer(vb), struct edu_buffer, vb);
}

/* ---------------------------------------------------------------------- */
/* Formats                                                                */
/* ---------------------------------------------------------------------- */

/* GREY single-planar; YUV420M: a full-size Y plane, U and V of a quarter. */
static void edu_fit(struct v4l2_pix_format_mplane *f, bool mplane)
{
	unsigned int p;

	f->width = clamp(ALIGN(f->width, 16), 16U, 1024U);
	f->height = clamp(ALIGN(f->height, 4), 4U, 768U);
	f->field = V4L2_FIELD_NONE;
	f->colorspace = V4L2_COLORSPACE_SRGB;
	f->ycbcr_enc = V4L2_YCBCR_ENC_DEFAULT;
	f->quantization = V4L2_QUANTIZATION_DEFAULT;
	f->xfer_func = V4L2_XFER_FUNC_DEFAULT;
	f->flags = 0;
	memset(f->reserved, 0, sizeof(f->reserved));
	if (!mplane) {
		f->pixelformat = V4L2_PIX_FMT_GREY;
		f->num_planes = 1;
	} else {
		f->pixelformat = V4L2_PIX_FMT_YUV420M;
		f->num_planes = 3;
	}
	for (p = 0; p < f->num_planes; p++) {
		struct v4l2_plane_pix_format *pf = &f->plane_fmt[p];

		pf->bytesperline = p ? f->width / 2 : f->width;
		pf->sizeimage = p ? f->width * f->height / 4 : f->width * f->height;
		memset(pf->reserved, 0, sizeof(pf->reserved));
	}
}

static void edu_to_single(const struct v4l2_pix_format_mplane *m,
			  struct v4l2_pix_format *s)
{
	memset(s, 0, sizeof(*s));
	s->width = m->width;
	s->height = m->height;
	s->pixelformat = m->pixelformat;
	s->field = m->field;
	s->bytesperline = m->plane_fmt[0].bytesperline;
	s->sizeimage = m->plane_fmt[0].sizeimage;
	s->colorspace = m->colorspace;
}

/* The format of @f, fitted, into @m. */
static void edu_try(struct edu_dev *edu, struct v4l2_format *f,
		    struct v4l2_pix_format_mplane *m)
{
	if (edu->mplane) {
		*m = f->fmt.pix_mp;
	} else {
		memset(m, 0, sizeof(*m));
		m->width = f->fmt.pix.width;
		m->height = f->fmt.pix.height;
	}
	edu_fit(m, edu->mplane);
	if (edu->mplane)
		f->fmt.pix_mp = *m;
	else
		edu_to_single(m, &f->fmt.pix);
}

/* ---------------------------------------------------------------------- */
/* The engine                                                             */
/* ---------------------------------------------------------------------- */

static void edu_dma(struct edu_dev *edu, dma_addr_t src, dma_addr_t dst,
		    u32 len, bool to_ram)
{
	u64 cmd = EDU_DMA_START | EDU_DMA_IRQ | (to_ram ? EDU_DMA_TO_RAM : 0);

	if (trace)
		dev_info(&edu->pdev->dev, "transfer %pad -> %pad, %u bytes\n", &src, &dst, len);

	writeq(src, edu->mmio + EDU_REG_DMA_SRC);
	writeq(dst, edu->mmio + EDU_REG_DMA_DST);
	writeq(len, edu->mmio + EDU_REG_DMA_COUNT);
	writeq(cmd, edu->mmio + EDU_REG_DMA_CMD);
	edu->transfers++;
}

/* How many bytes of plane @p the engine moves. */
static u32 edu_plane_bytes(struct edu_node *node, struct vb2_buffer *vb,
			   unsigned int p)
{
	if (node->output)
		return vb2_get_plane_payload(vb, p);
	return node->fmt.plane_fmt[p].sizeimage;
}

/*
 * The bus address of byte @off of plane @p, and how many bytes from there
 * (at most @want) are contiguous for the device. dma-contig's plane is one
 * run; dma-sg's follows the DMA segments of its table, which an IOMMU may
 * have merged.
 */
static int edu_run(struct edu_dev *edu, struct vb2_buffer *vb, unsigned int p,
		   u32 off, u32 want, dma_addr_t *addr, u32 *len)
{
	struct scatterlist *sg;
	struct sg_table *sgt;
	unsigned int i;

	if (edu->mem_ops == &vb2_dma_contig_memops) {
		*addr = vb2_dma_contig_plane_dma_addr(vb, p) + off;
		*len = want;
		return 0;
	}
	sgt = vb2_dma_sg_plane_desc(vb, p);
	if (!sgt)
		return -EINVAL;
	for_each_sgtable_dma_sg(sgt, sg, i) {
		if (off < sg_dma_len(sg)) {
			*addr = sg_dma_address(sg) + off;
			*len = min(want, sg_dma_len(sg) - off);
			return 0;
		}
		off -= sg_dma_len(sg);
	}
	return -EINVAL;
}

static unsigned int edu_output_seq(struct vb2_buffer *vb)
{
	return div_u64(vb->timestamp, NSEC_PER_USEC);
}

/* The first leg of the next run of cur, from the current position. E */
static int edu_start_run(struct edu_dev *edu)
{
	struct vb2_buffer *vb = &edu->cur->vb.vb2_buf;
	struct edu_node *node = edu_node_of(vb->vb2_queue);
	unsigned int seq = node->output ? edu_output_seq(vb) : edu->cur->vb.sequence;
	u32 want, i;

	while (edu->plane < vb->num_planes &&
	       edu->offset >= edu_plane_bytes(node, vb, edu->plane)) {
		edu->plane++;
		edu->offset = 0;
	}
	if (edu->plane == vb->num_planes)
		return 1;
	want = min_t(u32, EDU_RUN_MAX,
		     edu_plane_bytes(node, vb, edu->plane) - edu->offset);
	if (edu_run(edu, vb, edu->plane, edu->offset, want, &edu->addr, &edu->len))
		return -EINVAL;
	edu->second = false;
	if (node->output) {
		edu_dma(edu, edu->addr, EDU_BUF_ADDR, edu->len, false);
		return 0;
	}
	for (i = 0; i < edu->len; i++)
		((u8 *)edu->pattern)[i] = vb2_edu_byte(seq, edu->plane, edu->offset + i);
	edu_dma(edu, edu->pattern_dma, EDU_BUF_ADDR, edu->len, false);
	return 0;
}

/* An output run arrived in the check page: is it the frame's pattern? E */
static bool edu_run_matches(struct edu_dev *edu)
{
	unsigned int seq = edu_output_seq(&edu->cur->vb.vb2_buf);
	const u8 *got = edu->check;
	u32 i;

	for (i = 0; i < edu->len; i++)
		if (got[i] != vb2_edu_byte(seq, edu->plane, edu->offset + i))
			return false;
	return true;
}

static void edu_finish(struct edu_dev *edu)
{
	struct edu_buffer *buf = edu->cur;
	struct vb2_buffer *vb = &buf->vb.vb2_buf;
	struct edu_node *node = edu_node_of(vb->vb2_queue);
	unsigned int p;

	edu->cur = NULL;
	buf->vb.field = V4L2_FIELD_NONE;
	if (!node->output) {
		for (p = 0; p < vb->num_planes; p++)
			vb2_set_plane_payload(vb, p, node->fmt.plane_fmt[p].sizeimage);
		vb->timestamp = ktime_get_ns();
	}
	edu->frames++;
	if (edu->bad)
		edu->errors++;
	vb2_buffer_done(vb, edu->bad ? VB2_BUF_STATE_ERROR : VB2_BUF_STATE_DONE);
	wake_up(&edu->idle);
}

/* Program the next run of the engine's buffer, or finish the buffer. E */
static void edu_advance(struct edu_dev *edu)
{
	int ret = edu_start_run(edu);

	if (!ret)
		return;
	if (ret < 0)
		edu->bad = true;
	edu_finish(edu);
}

/* An idle engine takes the next buffer (until one has a run to move). E */
static void edu_kick(struct edu_dev *edu)
{
	while (!edu->cur && !edu->stray && !list_empty(&edu->pending)) {
		struct edu_node *node;

		edu->cur = list_first_entry(&edu->pending, struct edu_buffer, list);
		list_del(&edu->cur->list);
		node = edu_node_of(edu->cur->vb.vb2_buf.vb2_queue);
		edu->cur->vb.sequence = node->sequence++;
		edu->plane = 0;
		edu->offset = 0;
		edu->bad = false;
		edu_advance(edu);
	}
}

/* A transfer is done: the second leg of the run, or the next run. E */
static void edu_transfer_done(struct edu_dev *edu)
{
	struct edu_node *node;

	if (!edu->cur)
		return;
	node = edu_node_of(edu->cur->vb.vb2_buf.vb2_queue);
	if (node->stopping) {
		/* The engine has left the buffer: it goes back now, unfinished. */
		edu->bad = true;
		edu_finish(edu);
		edu_kick(edu);
		return;
	}
	if (!edu->second) {
		edu->second = true;
		if (node->output)
			edu_dma(edu, EDU_BUF_ADDR, edu->check_dma, edu->len, true);
		else
			edu_dma(edu, EDU_BUF_ADDR, edu->addr, edu->len, true);
		return;
	}
	if (node->output && !edu_run_matches(edu))
		edu->bad = true;
	edu->offset += edu->len;
	edu_advance(edu);
	edu_kick(edu);
}

static irqreturn_t edu_irq(int irq, void *data)
{
	struct edu_dev *edu = data;
	u32 status = readl(edu->mmio + EDU_REG_IRQ_STATUS);

	if (!status)
		return IRQ_NONE;
	writel(status, edu->mmio + EDU_REG_IRQ_ACK);
	if (status & EDU_IRQ_DMA) {
		spin_lock(&edu->lock);
		if (edu->stray) {
			edu->stray = false;
			wake_up(&edu->idle);
			edu_kick(edu);
		} else {
			edu_transfer_done(edu);
		}
		spin_unlock(&edu->lock);
	}
	return IRQ_HANDLED;
}

/* ---------------------------------------------------------------------- */
/* vb2_ops                                                                */
/* ---------------------------------------------------------------------- */

/* With pages_lock held, no node streaming. */
static void edu_free_pages(struct edu_dev *edu)
{
	struct device *dev = &edu->pdev->dev;

	if (edu->pattern)
		dma_free_coherent(dev, EDU_BUF_SIZE, edu->pattern, edu->pattern_dma);
	if (edu->check)
		dma_free_coherent(dev, EDU_BUF_SIZE, edu->check, edu->check_dma);
	edu->pattern = NULL;
	edu->check = NULL;
}

static int edu_queue_setup(struct vb2_queue *q, unsigned int *nbuffers,
			   unsigned int *nplanes, unsigned int sizes[],
			   struct device *alloc_devs[])
{
	struct edu_node *node = edu_node_of(q);
	unsigned int p;

	if (*nplanes) {
		if (*nplanes != node->fmt.num_planes)
			return -EINVAL;
		for (p = 0; p < *nplanes; p++)
			if (sizes[p] < node->fmt.plane_fmt[p].sizeimage)
				return -EINVAL;
		return 0;
	}
	*nplanes = node->fmt.num_planes;
	for (p = 0; p < *nplanes; p++)
		sizes[p] = node->fmt.plane_fmt[p].sizeimage;
	return 0;
}

static int edu_buf_prepare(struct vb2_buffer *vb)
{
	struct edu_node *node = edu_node_of(vb->vb2_queue);
	unsigned int p;

	for (p = 0; p < vb->num_planes; p++) {
		u32 size = node->fmt.plane_fmt[p].sizeimage;

		if (vb2_plane_size(vb, p) < size)
			return -EINVAL;
		if (node->output && vb2_get_plane_payload(vb, p) != size)
			return -EINVAL;
	}
	return 0;
}

/* nodma: the buffer completes now, as if the engine had moved it. */
static void edu_buf_done_now(struct vb2_buffer *vb)
{
	struct edu_node *node = edu_node_of(vb->vb2_queue);
	struct vb2_v4l2_buffer *vbuf = to_vb2_v4l2_buffer(vb);
	struct edu_dev *edu = node->edu;
	unsigned long flags;
	unsigned int p;

	spin_lock_irqsave(&edu->lock, flags);
	vbuf->sequence = node->sequence++;
	edu->frames++;
	spin_unlock_irqrestore(&edu->lock, flags);
	vbuf->field = V4L2_FIELD_NONE;
	if (!node->output) {
		for (p = 0; p < vb->num_planes; p++)
			vb2_set_plane_payload(vb, p, node->fmt.plane_fmt[p].sizeimage);
		vb->timestamp = ktime_get_ns();
	}
	vb2_buffer_done(vb, VB2_BUF_STATE_DONE);
}

static void edu_buf_queue(struct vb2_buffer *vb)
{
	struct edu_dev *edu = edu_node_of(vb->vb2_queue)->edu;
	unsigned long flags;

	if (nodma) {
		edu_buf_done_now(vb);
		return;
	}
	spin_lock_irqsave(&edu->lock, flags);
	list_add_tail(&edu_buffer_of(vb)->list, &edu->pending);
	edu_kick(edu);
	spin_unlock_irqrestore(&edu->lock, flags);
}

static bool edu_engine_left(struct edu_dev *edu, struct edu_node *node)
{
	bool left;

	spin_lock_irq(&edu->lock);
	left = !edu->cur || edu_node_of(edu->cur->vb.vb2_buf.vb2_queue) != node;
	spin_unlock_irq(&edu->lock);
	return left;
}

/*
 * Take the node's buffers off the engine's list, wait until the engine has
 * left the node's buffer under way (it ends with the transfer in flight),
 * and give them all back.
 */
static void edu_stop_streaming(struct vb2_queue *q)
{
	struct edu_node *node = edu_node_of(q);
	struct edu_dev *edu = node->edu;
	struct edu_buffer *buf, *tmp;
	LIST_HEAD(mine);

	spin_lock_irq(&edu->lock);
	node->stopping = true;
	list_for_each_entry_safe(buf, tmp, &edu->pending, list)
		if (buf->vb.vb2_buf.vb2_queue == q)
			list_move_tail(&buf->list, &mine);
	spin_unlock_irq(&edu->lock);

	if (!wait_event_timeout(edu->idle, edu_engine_left(edu, node),
				EDU_STOP_TIMEOUT)) {
		/*
		 * The device never finished a transfer: it is gone or hung,
		 * and the buffer is taken back anyway.
		 */
		dev_err(&edu->pdev->dev, "DMA did not complete\n");
		spin_lock_irq(&edu->lock);
		if (edu->cur && edu->cur->vb.vb2_buf.vb2_queue == q) {
			list_add_tail(&edu->cur->list, &mine);
			edu->cur = NULL;
		}
		spin_unlock_irq(&edu->lock);
	}
	list_for_each_entry_safe(buf, tmp, &mine, list) {
		list_del(&buf->list);
		vb2_buffer_done(&buf->vb.vb2_buf, VB2_BUF_STATE_ERROR);
	}
	spin_lock_irq(&edu->lock);
	node->sequence = 0;
	node->stopping = false;
	spin_unlock_irq(&edu->lock);
}

/*
 * The engine's two coherent pages exist only while a node streams, so that
 * an idle driver holds no DMA memory (the harness checks that none is left
 * mapped before a module goes).
 */
static int edu_prepare_streaming(struct vb2_queue *q)
{
	struct edu_dev *edu = edu_node_of(q)->edu;
	struct device *dev = &edu->pdev->dev;
	int ret = 0;

	mutex_lock(&edu->pages_lock);
	if (!edu->pages_users) {
		edu->pattern = dma_alloc_coherent(dev, EDU_BUF_SIZE, &edu->pattern_dma,
						  GFP_KERNEL);
		edu->check = dma_alloc_coherent(dev, EDU_BUF_SIZE, &edu->check_dma,
						GFP_KERNEL);
	}
	if (edu->pattern && edu->check) {
		edu->pages_users++;
	} else {
		edu_free_pages(edu);
		ret = -ENOMEM;
	}
	mutex_unlock(&edu->pages_lock);
	return ret;
}

static void edu_unprepare_streaming(struct vb2_queue *q)
{
	struct edu_dev *edu = edu_node_of(q)->edu;

	mutex_lock(&edu->pages_lock);
	if (!--edu->pages_users)
		edu_free_pages(edu);
	mutex_unlock(&edu->pages_lock);
}

static const struct vb2_ops edu_qops = {
	.prepare_streaming	= edu_prepare_streaming,
	.unprepare_streaming	= edu_unprepare_streaming,
	.queue_setup		= edu_queue_setup,
	.buf_prepare		= edu_buf_prepare,
	.buf_queue		= edu_buf_queue,
	.stop_streaming		= edu_stop_streaming,
	.wait_prepare		= vb2_ops_wait_prepare,
	.wait_finish		= vb2_ops_wait_finish,
};

/* ---------------------------------------------------------------------- */
/* ioctls                                                                 */
/* ---------------------------------------------------------------------- */

static int edu_querycap(struct file *file, void *priv,
			struct v4l2_capability *cap)
{
	struct edu_node *node = video_drvdata(file);

	strscpy(cap->driver, EDU_NAME, sizeof(cap->driver));
	strscpy(cap->card, node->vdev.name, sizeof(cap->card));
	snprintf(cap->bus_info, sizeof(cap->bus_info), "PCI:%s",
		 pci_name(node->edu->pdev));
	return 0;
}

static int edu_enum_fmt(struct file *file, void *priv, struct v4l2_fmtdesc *f)
{
	struct edu_node *node = video_drvdata(file);

	if (f->index)
		return -EINVAL;
	f->pixelformat = node->fmt.pixelformat;
	return 0;
}

static int edu_g_fmt(struct file *file, void *priv, struct v4l2_format *f)
{
	struct edu_node *node = video_drvdata(file);

	if (node->edu->mplane)
		f->fmt.pix_mp = node->fmt;
	else
		edu_to_single(&node->fmt, &f->fmt.pix);
	return 0;
}

static int edu_try_fmt(struct file *file, void *priv, struct v4l2_format *f)
{
	struct edu_node *node = video_drvdata(file);
	struct v4l2_pix_format_mplane m;

	edu_try(node->edu, f, &m);
	return 0;
}

static int edu_s_fmt(struct file *file, void *priv, struct v4l2_format *f)
{
	struct edu_node *node = video_drvdata(file);
	struct v4l2_pix_format_mplane m;

	if (vb2_is_busy(&node->q))
		return -EBUSY;
	edu_try(node->edu, f, &m);
	node->fmt = m;
	return 0;
}

static int edu_enum_input(struct file *file, void *priv, struct v4l2_input *i)
{
	if (i->index)
		return -EINVAL;
	strscpy(i->name, "edu", sizeof(i->name));
	i->type = V4L2_INPUT_TYPE_CAMERA;
	return 0;
}

static int edu_enum_output(struct file *file, void *priv, struct v4l2_output *o)
{
	if (o->index)
		return -EINVAL;
	strscpy(o->name, "edu", sizeof(o->name));
	o->type = V4L2_OUTPUT_TYPE_ANALOG;
	return 0;
}

static int edu_g_io(struct file *file, void *priv, unsigned int *i)
{
	*i = 0;
	return 0;
}

static int edu_s_io(struct file *file, void *priv, unsigned int i)
{
	return i ? -EINVAL : 0;
}

#define EDU_BUFFER_IOCTLS						\
	.vidioc_querycap		= edu_querycap,			\
	.vidioc_enum_input		= edu_enum_input,		\
	.vidioc_g_input			= edu_g_io,			\
	.vidioc_s_input			= edu_s_io,			\
	.vidioc_enum_output		= edu_enum_output,		\
	.vidioc_g_output		= edu_g_io,			\
	.vidioc_s_output		= edu_s_io,			\
	.vidioc_reqbufs			= vb2_ioctl_reqbufs,		\
	.vidioc_create_bufs		= vb2_ioctl_create_bufs,	\
	.vidioc_prepare_buf		= vb2_ioctl_prepare_buf,	\
	.vidioc_querybuf		= vb2_ioctl_querybuf,		\
	.vidioc_qbuf			= vb2_ioctl_qbuf,		\
	.vidioc_dqbuf			= vb2_ioctl_dqbuf,		\
	.vidioc_expbuf			= vb2_ioctl_expbuf,		\
	.vidioc_remove_bufs		= vb2_ioctl_remove_bufs,	\
	.vidioc_streamon		= vb2_ioctl_streamon,		\
	.vidioc_streamoff		= vb2_ioctl_streamoff

static const struct v4l2_ioctl_ops edu_ioctl_ops_sp = {
	EDU_BUFFER_IOCTLS,
	.vidioc_enum_fmt_vid_cap	= edu_enum_fmt,
	.vidioc_g_fmt_vid_cap		= edu_g_fmt,
	.vidioc_try_fmt_vid_cap		= edu_try_fmt,
	.vidioc_s_fmt_vid_cap		= edu_s_fmt,
	.vidioc_enum_fmt_vid_out	= edu_enum_fmt,
	.vidioc_g_fmt_vid_out		= edu_g_fmt,
	.vidioc_try_fmt_vid_out		= edu_try_fmt,
	.vidioc_s_fmt_vid_out		= edu_s_fmt,
};

static const struct v4l2_ioctl_ops edu_ioctl_ops_mp = {
	EDU_BUFFER_IOCTLS,
	.vidioc_enum_fmt_vid_cap	= edu_enum_fmt,
	.vidioc_g_fmt_vid_cap_mplane	= edu_g_fmt,
	.vidioc_try_fmt_vid_cap_mplane	= edu_try_fmt,
	.vidioc_s_fmt_vid_cap_mplane	= edu_s_fmt,
	.vidioc_enum_fmt_vid_out	= edu_enum_fmt,
	.vidioc_g_fmt_vid_out_mplane	= edu_g_fmt,
	.vidioc_try_fmt_vid_out_mplane	= edu_try_fmt,
	.vidioc_s_fmt_vid_out_mplane	= edu_s_fmt,
};

static const struct v4l2_file_operations edu_fops = {
	.owner		= THIS_MODULE,
	.open		= v4l2_fh_open,
	.release	= vb2_fop_release,
	.poll		= vb2_fop_poll,
	.mmap		= vb2_fop_mmap,
	.unlocked_ioctl	= video_ioctl2,
};

/* ---------------------------------------------------------------------- */
/* Device                                                                 */
/* ---------------------------------------------------------------------- */

static int edu_init_node(struct edu_dev *edu, struct edu_node *node,
			 bool output, int inst)
{
	struct video_device *vdev = &node->vdev;
	struct vb2_queue *q = &node->q;
	int ret;

	node->edu = edu;
	node->output = output;
	mutex_init(&node->lock);
	edu_fit(&node->fmt, edu->mplane);

	if (edu->mplane)
		q->type = output ? V4L2_BUF_TYPE_VIDEO_OUTPUT_MPLANE :
				   V4L2_BUF_TYPE_VIDEO_CAPTURE_MPLANE;
	else
		q->type = output ? V4L2_BUF_TYPE_VIDEO_OUTPUT :
				   V4L2_BUF_TYPE_VIDEO_CAPTURE;
	q->io_modes = VB2_MMAP | VB2_USERPTR | VB2_DMABUF;
	q->drv_priv = node;
	q->buf_struct_size = sizeof(struct edu_buffer);
	q->ops = &edu_qops;
	q->mem_ops = edu->mem_ops;
	/* Output frames carry their sequence number in the time stamp. */
	q->timestamp_flags = output ? V4L2_BUF_FLAG_TIMESTAMP_COPY :
				      V4L2_BUF_FLAG_TIMESTAMP_MONOTONIC;
	q->allow_cache_hints = 1;
	q->lock = &node->lock;
	q->dev = &edu->pdev->dev;
	ret = vb2_queue_init(q);
	if (ret)
		return ret;

	snprintf(vdev->name, sizeof(vdev->name), "%s-%d-%s", EDU_NAME, inst,
		 output ? "out" : "cap");
	vdev->fops = &edu_fops;
	vdev->ioctl_ops = edu->mplane ? &edu_ioctl_ops_mp : &edu_ioctl_ops_sp;
	vdev->release = video_device_release_empty;
	vdev->v4l2_dev = &edu->v4l2;
	vdev->queue = q;
	vdev->lock = &node->lock;
	vdev->vfl_dir = output ? VFL_DIR_TX : VFL_DIR_RX;
	if (edu->mplane)
		vdev->device_caps = output ? V4L2_CAP_VIDEO_OUTPUT_MPLANE :
					     V4L2_CAP_VIDEO_CAPTURE_MPLANE;
	else
		vdev->device_caps = output ? V4L2_CAP_VIDEO_OUTPUT :
					     V4L2_CAP_VIDEO_CAPTURE;
	vdev->device_caps |= V4L2_CAP_STREAMING;
	video_set_drvdata(vdev, node);
	return video_register_device(vdev, VFL_TYPE_VIDEO, -1);
}

/* The last reference to the V4L2 device is gone: no file is open. */
static void edu_release(struct v4l2_device *v4l2)
{
	struct edu_dev *edu = container_of(v4l2, struct edu_dev, v4l2);

	mutex_destroy(&edu->node[0].lock);
	mutex_destroy(&edu->node[1].lock);
	mutex_destroy(&edu->pages_lock);
	ida_free(&edu_ida, edu->inst);
	kfree(edu);
}

/* debugfs stray_dma: see the DOC section; reading it gives the count. */
static int edu_stray_set(void *data, u64 val)
{
	struct edu_dev *edu = data;
	struct iommu_domain *dom = iommu_get_domain_for_dev(&edu->pdev->dev);
	int ret = 0;

	/* Without a translating IOMMU, the address would be real memory. */
	if (!dom || !iommu_is_dma_domain(dom))
		return -ENODEV;
	spin_lock_irq(&edu->lock);
	if (edu->cur || edu->stray) {
		ret = -EBUSY;
	} else {
		edu->stray = true;
		edu->strays++;
		edu_dma(edu, EDU_BUF_ADDR, EDU_STRAY_ADDR, 64, true);
	}
	spin_unlock_irq(&edu->lock);
	if (!ret && !wait_event_timeout(edu->idle, !READ_ONCE(edu->stray), EDU_STOP_TIMEOUT))
		ret = -ETIMEDOUT;
	return ret;
}

static int edu_stray_get(void *data, u64 *val)
{
	struct edu_dev *edu = data;

	*val = edu->strays;
	return 0;
}

DEFINE_DEBUGFS_ATTRIBUTE(edu_stray_fops, edu_stray_get, edu_stray_set, "%llu\n");

static void edu_debugfs_init(struct edu_dev *edu)
{
	edu->debugfs = debugfs_create_dir(pci_name(edu->pdev), edu_debugfs_root);
	debugfs_create_u32("frames", 0444, edu->debugfs, &edu->frames);
	debugfs_create_u32("errors", 0444, edu->debugfs, &edu->errors);
	debugfs_create_u64("transfers", 0444, edu->debugfs, &edu->transfers);
	debugfs_create_file_unsafe("stray_dma", 0600, edu->debugfs, edu, &edu_stray_fops);
}

static int edu_probe(struct pci_dev *pdev, const struct pci_device_id *id)
{
	struct device *dev = &pdev->dev;
	void __iomem *mmio;
	struct edu_dev *edu;
	unsigned int idx;
	int inst, ret;

	ret = pcim_enable_device(pdev);
	if (ret)
		return dev_err_probe(dev, ret, "enable\n");
	pci_set_master(pdev);
	mmio = pcim_iomap_region(pdev, 0, EDU_NAME);
	if (IS_ERR(mmio))
		return dev_err_probe(dev, PTR_ERR(mmio), "BAR 0\n");
	inst = ida_alloc(&edu_ida, GFP_KERNEL);
	if (inst < 0)
		return inst;
	idx = min(inst, EDU_MAX_DEVS - 1);
	ret = dma_set_mask_and_coherent(dev, DMA_BIT_MASK(clamp(dma_bits[idx], 24U, 64U)));
	if (!ret)
		/* Behind an IOMMU, a plane may be one range of device addresses. */
		ret = vb2_dma_contig_set_max_seg_size(dev, DMA_BIT_MASK(32));
	if (ret) {
		ida_free(&edu_ida, inst);
		return dev_err_probe(dev, ret, "DMA mask\n");
	}

	edu = kzalloc(sizeof(*edu), GFP_KERNEL);
	if (!edu) {
		ida_free(&edu_ida, inst);
		return -ENOMEM;
	}
	edu->pdev = pdev;
	edu->inst = inst;
	edu->mmio = mmio;
	edu->mplane = multiplanar[idx];
	edu->mem_ops = allocators[idx] ? &vb2_dma_sg_memops : &vb2_dma_contig_memops;
	spin_lock_init(&edu->lock);
	mutex_init(&edu->pages_lock);
	INIT_LIST_HEAD(&edu->pending);
	init_waitqueue_head(&edu->idle);
	if ((readl(edu->mmio + EDU_REG_ID) & 0xff) != EDU_ID_MAGIC) {
		ret = dev_err_probe(dev, -ENODEV, "not an edu device\n");
		goto free;
	}

	ret = pci_alloc_irq_vectors(pdev, 1, 1, PCI_IRQ_ALL_TYPES);
	if (ret < 0) {
		dev_err_probe(dev, ret, "no interrupt\n");
		goto free;
	}
	edu->irq = pci_irq_vector(pdev, 0);
	ret = request_irq(edu->irq, edu_irq, IRQF_SHARED, EDU_NAME, edu);
	if (ret) {
		dev_err_probe(dev, ret, "interrupt %d\n", edu->irq);
		goto vectors;
	}

	ret = v4l2_device_register(dev, &edu->v4l2);
	if (ret)
		goto irq;
	edu->v4l2.release = edu_release;
	pci_set_drvdata(pdev, edu);
	ret = edu_init_node(edu, &edu->node[0], false, inst);
	if (!ret)
		ret = edu_init_node(edu, &edu->node[1], true, inst);
	if (ret) {
		dev_err_probe(dev, ret, "video nodes\n");
		/* Registered nodes hold the V4L2 device until their files close. */
		vb2_video_unregister_device(&edu->node[0].vdev);
		vb2_video_unregister_device(&edu->node[1].vdev);
		free_irq(edu->irq, edu);
		pci_free_irq_vectors(pdev);
		v4l2_device_unregister(&edu->v4l2);
		v4l2_device_put(&edu->v4l2);
		return ret;
	}
	edu_debugfs_init(edu);
	dev_info(dev, "%s: %s, %s, %u-bit DMA%s\n", EDU_NAME,
		 allocators[idx] ? "dma-sg" : "dma-contig",
		 edu->mplane ? "multi-planar" : "single-planar",
		 clamp(dma_bits[idx], 24U, 64U), nodma ? ", no transfers (nodma)" : "");
	return 0;

irq:
	free_irq(edu->irq, edu);
vectors:
	pci_free_irq_vectors(pdev);
free:
	ida_free(&edu_ida, inst);
	kfree(edu);
	return ret;
}

/*
 * Unbind, also while streaming: unregistering a node stops its queue, which
 * waits for the engine and frees the coherent pages; only then may the
 * interrupt go. Open files keep the V4L2 device until closed.
 */
static void edu_remove(struct pci_dev *pdev)
{
	struct edu_dev *edu = pci_get_drvdata(pdev);

	debugfs_remove_recursive(edu->debugfs);
	vb2_video_unregister_device(&edu->node[0].vdev);
	vb2_video_unregister_device(&edu->node[1].vdev);
	free_irq(edu->irq, edu);
	pci_free_irq_vectors(pdev);
	v4l2_device_unregister(&edu->v4l2);
	v4l2_device_put(&edu->v4l2);
}

static const struct pci_device_id edu_ids[] = {
	{ PCI_DEVICE(0x1234, 0x11e8) },
	{ }
};
MODULE_DEVICE_TABLE(pci, edu_ids);

static struct pci_driver edu_driver = {
	.name		= EDU_NAME,
	.id_table	= edu_ids,
	.probe		= edu_probe,
	.remove		= edu_remove,
};

static int __init edu_init(void)
{
	int ret;

	edu_debugfs_root = debugfs_create_dir(EDU_NAME, NULL);
	ret = pci_register_driver(&edu_driver);
	if (ret)
		debugfs_remove_recursive(edu_debugfs_root);
	return ret;
}

static void __exit edu_exit(void)
{
	pci_unregister_driver(&edu_driver);
	debugfs_remove_recursive(edu_debugfs_root);
}

module_init(edu_init);
module_exit(edu_exit);

MODULE_DESCRIPTION("V4L2 driver for QEMU's edu device: real DMA into videobuf2 buffers");
MODULE_LICENSE("GPL");
