// SPDX-License-Identifier: GPL-2.0
/*
 * Helpers shared by the videobuf2 memory allocators.
 */

#include <linux/dma-buf.h>
#include <linux/dma-mapping.h>
#include <linux/dma-resv.h>
#include <linux/err.h>
#include <linux/export.h>
#include <linux/highmem.h>
#include <linux/iosys-map.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/scatterlist.h>
#include <linux/slab.h>

#include <media/frame_vector.h>
#include <media/videobuf2-memops.h>

#include "videobuf2-private.h"

MODULE_IMPORT_NS(DMA_BUF);
MODULE_IMPORT_NS(VIDEOBUF2_PRIVATE);

/**
 * DOC: user mappings and pinned user memory
 *
 * Two things every allocator needs and does the same way:
 *
 * Mappings of MMAP buffers. A buffer mapped to user space must survive until
 * the last mapping goes away, even if the queue frees it first (REQBUFS(0)
 * while an application still has it mapped). The allocator's mmap embeds a
 * &struct vb2_vmarea_handler in the buffer and installs &vb2_common_vm_ops,
 * then calls its open() once for the new VMA. From then on the VMA owns one
 * reference on the buffer: open() runs for every copy of the VMA (fork,
 * split) and takes one more, close() runs for every VMA that goes away and
 * drops one through the handler's put().
 *
 * USERPTR memory. vb2_create_framevec() pins every page a user range touches
 * with a long-term pin (see frame_vector.c), and vb2_destroy_framevec()
 * releases them. The vector is owned by the buffer that asked for it.
 */

static void vb2_vma_open(struct vm_area_struct *vma)
{
	struct vb2_vmarea_handler *handler = vma->vm_private_data;

	refcount_inc(handler->refcount);
}

static void vb2_vma_close(struct vm_area_struct *vma)
{
	struct vb2_vmarea_handler *handler = vma->vm_private_data;

	handler->put(handler->arg);
}

/**
 * DOC: vb2_common_vm_ops
 *
 * VMA operations that keep a mapped buffer alive: open() takes a reference
 * through the &struct vb2_vmarea_handler found in
 * &vm_area_struct.vm_private_data, close() drops one.
 */
const struct vm_operations_struct vb2_common_vm_ops = {
	.open = vb2_vma_open,
	.close = vb2_vma_close,
};
EXPORT_SYMBOL_GPL(vb2_common_vm_ops);

/**
 * vb2_destroy_framevec() - release the pages pinned by vb2_create_framevec()
 * @vec: vector returned by vb2_create_framevec()
 *
 * Unpins the pages and frees @vec. Pages a device wrote to should be marked
 * dirty by the caller first.
 *
 * Context: Process context.
 */
void vb2_destroy_framevec(struct frame_vector *vec)
{
	put_vaddr_frames(vec);
	frame_vector_destroy(vec);
}
EXPORT_SYMBOL(vb2_destroy_framevec);

/**
 * vb2_create_framevec() - pin the pages behind a user memory range
 * @start: user address of the first byte
 * @length: length of the range in bytes
 * @write: true if the device (or the CPU on its behalf) will write to the
 *	memory, i.e. for capture buffers
 *
 * Pins every page that the range touches, including the partial pages at
 * both ends. All of them must be pinnable.
 *
 * Context: Process context, in the task that owns the memory. May sleep.
 * Return: a vector holding the pinned pages, to be released with
 * vb2_destroy_framevec(); ERR_PTR(-EINVAL) for an empty or wrapping range,
 * ERR_PTR(-ENOMEM) if the vector cannot be allocated, ERR_PTR(-EFAULT) if
 * part of the range is not mapped, or the errno the pinning returned.
 */
struct frame_vector *vb2_create_framevec(unsigned long start,
					 unsigned long length,
					 bool write)
{
	unsigned long end = start + length - 1;
	unsigned long count = (end >> PAGE_SHIFT) - (start >> PAGE_SHIFT) + 1;
	struct frame_vector *vec;
	int pinned;

	if (!length || end < start || count > UINT_MAX)
		return ERR_PTR(-EINVAL);

	vec = frame_vector_create(count);
	if (!vec)
		return ERR_PTR(-ENOMEM);

	pinned = get_vaddr_frames(start & PAGE_MASK, count, write, vec);
	if (pinned > 0 && pinned == count)
		return vec;

	/* Part of the range is as useless as none of it. */
	vb2_destroy_framevec(vec);
	return ERR_PTR(pinned < 0 ? pinned : -EFAULT);
}
EXPORT_SYMBOL(vb2_create_framevec);

/**
 * DOC: the dma-buf exporter
 *
 * VIDIOC_EXPBUF hands an MMAP buffer out as a dma-buf. Being a dma-buf
 * exporter is the same work for every allocator and is done here, once: an
 * allocator describes what is its own in a &struct vb2_dmabuf_exporter and
 * calls vb2_memops_export_dmabuf() from its get_dmabuf memop.
 *
 * Lifetime. Each dma-buf holds one reference on the buffer, through the
 * &struct vb2_vmarea_handler that the buffer's user mappings use too. It is
 * taken before the dma-buf exists, since release() runs as soon as the last
 * file reference goes, and dropped by release(). An exported buffer thus
 * outlives its queue. The dma-buf also holds the allocator's module (its
 * owner), which holds this one.
 *
 * Attachments. Each device that attaches gets a
 * &struct vb2_dmabuf_attachment holding its own scatter list of the
 * buffer's pages, built by the allocator's sg_table() hook in segments that
 * device accepts. map_dma_buf() maps it for the device, unmap_dma_buf()
 * unmaps it; the dma-buf core calls both with the reservation lock held,
 * and begin_cpu_access() and end_cpu_access() take it to walk the list.
 *
 * Caches. The pages may be mapped for several devices at once: for every
 * importer, and for the queue's own device (dma-sg, and non-coherent
 * dma-contig memory). Each mapping is therefore made without CPU sync,
 * which is how the DMA API is told that the overlap is intended, and the
 * memory is handed over explicitly: to an importer when it maps, back to
 * the CPU when it unmaps.
 *
 * CPU access, and who syncs which mapping. A mapping may see other bytes
 * than the pages do: a CPU cache on one side, a bounce buffer (swiotlb) on
 * the other. Handing a mapping to the CPU makes the pages what its device
 * last left in it, which is right only if that device wrote since the
 * mapping was last handed to it. Otherwise it brings back stale bytes: a
 * bounce buffer the device did not write holds what the pages held when it
 * was filled, and lands on top of newer data. The DMA API copies back only
 * the mappings a device may write (DMA_FROM_DEVICE, DMA_BIDIRECTIONAL); it
 * cannot know whether the device did. So each mapping is synced by the one
 * who sees its device use it:
 *
 * - The queue's own mapping, by videobuf2: prepare() hands it to the device
 *   when the buffer is queued, finish() back to the CPU when the buffer is
 *   done. Whenever user space holds the buffer, the pages are current as far
 *   as that device goes, so begin_cpu_access() and end_cpu_access() leave
 *   this mapping alone. (User space that skips those syncs with the cache
 *   hints V4L2_BUF_FLAG_NO_CACHE_INVALIDATE and V4L2_BUF_FLAG_NO_CACHE_CLEAN
 *   has said that the CPU does not touch the buffer, through a dma-buf
 *   neither.)
 * - An importer's mapping, by the CPU access brackets: the exporter does not
 *   see when an importer's device uses the buffer (a vb2 importer keeps its
 *   mapping from one QBUF to the next), so begin_cpu_access() hands an
 *   importer's mapping to the CPU, and end_cpu_access() hands it back. What
 *   the exporter does see is its own device finishing with the buffer (the
 *   allocator's dev_writes() count). An importer's mapping handed to its
 *   device before that holds older bytes than the pages, whatever its
 *   device did, so it is left alone until it is handed over again: capture
 *   on the queue's own device, then reading the frame through the dma-buf
 *   while a display holds it mapped, gives the frame.
 *
 * Two devices that write the buffer in turn cannot be told apart: where they
 * bounce, what the exporter last saw wins. An importer that writes after the
 * queue's own device did is seen again once its mapping is handed back to it
 * (end_cpu_access(), or a new map). User space gives a buffer to one writer
 * at a time.
 */

/**
 * struct vb2_dmabuf_attachment - an exported buffer, seen by one device
 * @sgt: the buffer's pages, in segments the attached device accepts; mapped
 *	for it while @dma_dir is not DMA_NONE
 * @importer: copy of the mapped @sgt handed to the importer. The dma-buf
 *	core may scramble its page links (CONFIG_DMABUF_DEBUG); @sgt stays
 *	intact for the CPU access syncs.
 * @dma_dir: direction of the current mapping, DMA_NONE when unmapped
 * @handed: the exporter's dev_writes() count when the mapping was last handed
 *	to the device with the pages' bytes in it; a later count means that
 *	the pages are newer than anything the device holds
 *
 * Everything here is protected by the dma-buf's reservation lock, except
 * @sgt's page list, which is set up by attach and never changes.
 */
struct vb2_dmabuf_attachment {
	struct sg_table		sgt;
	struct sg_table		importer;
	enum dma_data_direction	dma_dir;
	unsigned int		handed;
};

/* The exporter's count of writes by the queue's own device. */
static unsigned int vb2_dmabuf_dev_writes(struct dma_buf *dbuf)
{
	struct vb2_dmabuf *vdb = dbuf->priv;

	return vdb->exp->dev_writes(vdb->handler.arg);
}

/*
 * Whether handing the importer's mapping to the CPU may bring newer bytes:
 * not if the queue's own device wrote since it was handed to its device.
 */
static bool vb2_dmabuf_att_current(struct dma_buf_attachment *attach,
				   struct vb2_dmabuf_attachment *att)
{
	return att->handed == vb2_dmabuf_dev_writes(attach->dmabuf);
}

/*
 * After a sync for the device: a mapping the device only writes
 * (DMA_FROM_DEVICE) was not given the pages' bytes, so it stays as old as
 * it was.
 */
static void vb2_dmabuf_att_handed(struct dma_buf_attachment *attach,
				  struct vb2_dmabuf_attachment *att)
{
	if (att->dma_dir != DMA_FROM_DEVICE)
		att->handed = vb2_dmabuf_dev_writes(attach->dmabuf);
}

static int vb2_dmabuf_attach(struct dma_buf *dbuf,
			     struct dma_buf_attachment *attach)
{
	struct vb2_dmabuf *vdb = dbuf->priv;
	struct vb2_dmabuf_attachment *att;
	int ret;

	att = kzalloc(sizeof(*att), GFP_KERNEL);
	if (!att)
		return -ENOMEM;

	ret = vdb->exp->sg_table(vdb->handler.arg, &att->sgt, attach->dev);
	if (ret) {
		kfree(att);
		return ret;
	}

	att->dma_dir = DMA_NONE;
	attach->priv = att;
	return 0;
}

/* Copies the pages and DMA segments of a mapped table into a new table. */
static int vb2_dmabuf_copy_mapped(struct sg_table *dst, struct sg_table *src)
{
	struct scatterlist *s, *d;
	unsigned int i;
	int ret;

	ret = sg_alloc_table(dst, src->orig_nents, GFP_KERNEL);
	if (ret)
		return ret;

	d = dst->sgl;
	for_each_sgtable_sg(src, s, i) {
		sg_set_page(d, sg_page(s), s->length, s->offset);
		d = sg_next(d);
	}

	d = dst->sgl;
	for_each_sgtable_dma_sg(src, s, i) {
		sg_dma_address(d) = sg_dma_address(s);
		sg_dma_len(d) = sg_dma_len(s);
		d = sg_next(d);
	}
	dst->nents = src->nents;
	return 0;
}

/* Unmaps the importer's mapping, handing the memory back to the CPU. */
static void vb2_dmabuf_att_unmap(struct dma_buf_attachment *attach,
				 struct vb2_dmabuf_attachment *att)
{
	sg_free_table(&att->importer);
	if (vb2_dmabuf_att_current(attach, att))
		dma_sync_sgtable_for_cpu(attach->dev, &att->sgt, att->dma_dir);
	dma_unmap_sgtable(attach->dev, &att->sgt, att->dma_dir,
			  DMA_ATTR_SKIP_CPU_SYNC);
	att->dma_dir = DMA_NONE;
}

static struct sg_table *
vb2_dmabuf_map(struct dma_buf_attachment *attach,
	       enum dma_data_direction dma_dir)
{
	struct vb2_dmabuf_attachment *att = attach->priv;
	int ret;

	/* The core caches the mapping (cache_sgt_mapping): one at a time. */
	if (att->dma_dir != DMA_NONE)
		return ERR_PTR(-EBUSY);

	/* Without CPU sync: see "Caches" above. */
	ret = dma_map_sgtable(attach->dev, &att->sgt, dma_dir,
			      DMA_ATTR_SKIP_CPU_SYNC);
	if (ret)
		return ERR_PTR(ret);

	ret = vb2_dmabuf_copy_mapped(&att->importer, &att->sgt);
	if (ret) {
		dma_unmap_sgtable(attach->dev, &att->sgt, dma_dir,
				  DMA_ATTR_SKIP_CPU_SYNC);
		return ERR_PTR(ret);
	}

	/* Mapping bounces the pages' bytes, whatever the direction. */
	dma_sync_sgtable_for_device(attach->dev, &att->sgt, dma_dir);
	att->dma_dir = dma_dir;
	att->handed = vb2_dmabuf_dev_writes(attach->dmabuf);
	return &att->importer;
}

static void vb2_dmabuf_unmap(struct dma_buf_attachment *attach,
			     struct sg_table *sgt,
			     enum dma_data_direction dma_dir)
{
	struct vb2_dmabuf_attachment *att = attach->priv;

	if (WARN_ON(sgt != &att->importer || att->dma_dir == DMA_NONE))
		return;
	vb2_dmabuf_att_unmap(attach, att);
}

static void vb2_dmabuf_detach(struct dma_buf *dbuf,
			      struct dma_buf_attachment *attach)
{
	struct vb2_dmabuf_attachment *att = attach->priv;

	/* The dma-buf core unmaps before detaching; be safe anyway. */
	if (att->dma_dir != DMA_NONE)
		vb2_dmabuf_att_unmap(attach, att);
	sg_free_table(&att->sgt);
	kfree(att);
	attach->priv = NULL;
}

/*
 * The kernel mapping handed out by vmap() while one is, else NULL.
 * dma_buf_vmap() keeps it in @dbuf->vmap_ptr while @dbuf->vmapping_counter
 * is not zero, both under the reservation lock.
 */
static void *vb2_dmabuf_vmapped(struct dma_buf *dbuf)
{
	dma_resv_assert_held(dbuf->resv);
	return dbuf->vmapping_counter ? dbuf->vmap_ptr.vaddr : NULL;
}

/*
 * Hands the importers' mappings to the CPU (@for_cpu) or back to them.
 * A kernel mapping from vmap() is one more alias of the pages: where CPU
 * caches alias, it is written back before the pages go to the devices and
 * dropped from the cache once they come back (a no-op elsewhere).
 */
static void vb2_dmabuf_sync_attachments(struct dma_buf *dbuf, bool for_cpu)
{
	struct dma_buf_attachment *attach;
	void *vaddr;

	dma_resv_lock(dbuf->resv, NULL);
	vaddr = vb2_dmabuf_vmapped(dbuf);
	if (vaddr && !for_cpu)
		flush_kernel_vmap_range(vaddr, dbuf->size);
	list_for_each_entry(attach, &dbuf->attachments, node) {
		struct vb2_dmabuf_attachment *att = attach->priv;

		if (att->dma_dir == DMA_NONE)
			continue;
		if (!for_cpu) {
			dma_sync_sgtable_for_device(attach->dev, &att->sgt,
						    att->dma_dir);
			vb2_dmabuf_att_handed(attach, att);
		} else if (vb2_dmabuf_att_current(attach, att)) {
			dma_sync_sgtable_for_cpu(attach->dev, &att->sgt,
						 att->dma_dir);
		}
	}
	if (vaddr && for_cpu)
		invalidate_kernel_vmap_range(vaddr, dbuf->size);
	dma_resv_unlock(dbuf->resv);
}

/*
 * The dma-buf core waits for the buffer's fences only after this returns.
 * Wait here first: a queue with implicit sync (videobuf2-fence.c) fences
 * the frame a device is still writing, and an importer's mapping synced
 * before that device is done would bring back bytes it has not written yet.
 */
static int vb2_dmabuf_begin_cpu_access(struct dma_buf *dbuf,
				       enum dma_data_direction dma_dir)
{
	bool write = dma_dir == DMA_TO_DEVICE || dma_dir == DMA_BIDIRECTIONAL;
	long ret;

	ret = dma_resv_wait_timeout(dbuf->resv, dma_resv_usage_rw(write), true,
				    MAX_SCHEDULE_TIMEOUT);
	if (ret < 0)
		return ret;
	vb2_dmabuf_sync_attachments(dbuf, true);
	return 0;
}

static int vb2_dmabuf_end_cpu_access(struct dma_buf *dbuf,
				     enum dma_data_direction dma_dir)
{
	vb2_dmabuf_sync_attachments(dbuf, false);
	return 0;
}

static int vb2_dmabuf_vmap(struct dma_buf *dbuf, struct iosys_map *map)
{
	struct vb2_dmabuf *vdb = dbuf->priv;
	void *vaddr = vdb->exp->vmap(vdb->handler.arg);

	if (!vaddr)
		return -ENOMEM;
	iosys_map_set_vaddr(map, vaddr);
	return 0;
}

static int vb2_dmabuf_mmap(struct dma_buf *dbuf, struct vm_area_struct *vma)
{
	struct vb2_dmabuf *vdb = dbuf->priv;

	/* The dma-buf core has checked that vm_pgoff and the size fit. */
	return vdb->exp->mmap(vdb->handler.arg, vma);
}

static void vb2_dmabuf_release(struct dma_buf *dbuf)
{
	struct vb2_dmabuf *vdb = dbuf->priv;

	vb2_fence_export_released(dbuf);
	vdb->handler.put(vdb->handler.arg);
}

/* Every operation but vmap(), in both tables below. */
#define VB2_DMABUF_OPS							\
	.cache_sgt_mapping = true,					\
	.attach = vb2_dmabuf_attach,					\
	.detach = vb2_dmabuf_detach,					\
	.map_dma_buf = vb2_dmabuf_map,					\
	.unmap_dma_buf = vb2_dmabuf_unmap,				\
	.begin_cpu_access = vb2_dmabuf_begin_cpu_access,		\
	.end_cpu_access = vb2_dmabuf_end_cpu_access,			\
	.mmap = vb2_dmabuf_mmap,					\
	.release = vb2_dmabuf_release

static const struct dma_buf_ops vb2_dmabuf_ops = {
	VB2_DMABUF_OPS,
	.vmap = vb2_dmabuf_vmap,
};

/*
 * For buffers without a kernel mapping: with no vmap() operation,
 * dma_buf_vmap() fails cleanly instead of warning about a failed vmap().
 */
static const struct dma_buf_ops vb2_dmabuf_ops_no_vmap = {
	VB2_DMABUF_OPS,
};

/**
 * vb2_memops_export_dmabuf() - export a buffer as a dma-buf
 * @exp: the allocator's hooks
 * @vdb: the exporter's part of the buffer: the dma-buf holds one of
 *	@vdb->handler's references, and the hooks get its @arg
 * @size: size of the buffer in bytes
 * @flags: flags of the dma-buf's file (O_RDWR, O_CLOEXEC...), from
 *	VIDIOC_EXPBUF
 * @vmap: whether the dma-buf offers a vmap() operation (@exp must then have
 *	a vmap() hook); a buffer that can have no kernel mapping offers none
 *
 * For the get_dmabuf memop of the allocators of this directory; see "the
 * dma-buf exporter" above.
 *
 * Context: Process context.
 * Return: the new dma-buf, or what dma_buf_export() returned on failure.
 */
struct dma_buf *vb2_memops_export_dmabuf(const struct vb2_dmabuf_exporter *exp,
					 struct vb2_dmabuf *vdb,
					 unsigned long size, unsigned long flags,
					 bool vmap)
{
	struct dma_buf_export_info info = {
		.exp_name = exp->name,
		.owner = exp->owner,
		.ops = vmap ? &vb2_dmabuf_ops : &vb2_dmabuf_ops_no_vmap,
		.size = size,
		.flags = flags,
		.priv = vdb,
	};
	struct dma_buf *dbuf;

	vdb->exp = exp;
	/* The dma-buf's reference, taken before release() can run. */
	refcount_inc(vdb->handler.refcount);
	dbuf = dma_buf_export(&info);
	if (IS_ERR(dbuf))
		vdb->handler.put(vdb->handler.arg);
	return dbuf;
}
EXPORT_SYMBOL_NS_GPL(vb2_memops_export_dmabuf, VIDEOBUF2_PRIVATE);

MODULE_DESCRIPTION("helpers shared by the videobuf2 memory allocators");
MODULE_LICENSE("GPL");
