// SPDX-License-Identifier: GPL-2.0
/*
 * videobuf2 allocator for memory that only the CPU touches (vmalloc).
 */

#include <linux/dma-buf.h>
#include <linux/dma-mapping.h>
#include <linux/dma-resv.h>
#include <linux/err.h>
#include <linux/io.h>
#include <linux/iosys-map.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/refcount.h>
#include <linux/scatterlist.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>

#include <media/videobuf2-memops.h>
#include <media/videobuf2-vmalloc.h>

#include "videobuf2-private.h"

MODULE_DESCRIPTION("videobuf2 allocator for vmalloc memory");
MODULE_LICENSE("GPL");
MODULE_IMPORT_NS(DMA_BUF);

/**
 * DOC: vmalloc allocator - objects and their lifetime
 *
 * Every plane is a &struct vb2_vm_buf whose @vaddr is a kernel mapping
 * of the whole plane, for the driver to read or write with the CPU. Where
 * the memory comes from depends on the queue's memory model:
 *
 * MMAP: vmalloc_user() memory, zeroed, owned by the buffer; the queue's
 * gfp_flags are not used. The buffer is reference counted (@refcount). The
 * queue holds the first reference and drops it with the put() memop; every
 * user mapping holds one (taken and dropped through &vb2_common_vm_ops);
 * every exported dma-buf holds one, dropped by the dma-buf's release(). The
 * memory is freed when the last reference goes, so a buffer that is still
 * mapped or exported outlives the queue, and an exported dma-buf also keeps
 * this module loaded (its owner).
 *
 * USERPTR: the user pages are pinned (vb2_create_framevec()) and mapped
 * into the kernel with vm_map_ram(). Should the frame vector ever hold PFNs
 * without struct pages (frame_vector.c only pins pages today), a physically
 * contiguous range is mapped with ioremap() instead. The queue is the only
 * owner; put_userptr() undoes everything and marks the pages dirty if the
 * driver wrote to them.
 *
 * DMABUF: the imported dma-buf is mapped into the kernel with
 * dma_buf_vmap_unlocked() between map_dmabuf() and unmap_dmabuf(), also
 * when the exporter's mapping is I/O memory; no device attachment is made
 * since nothing but the CPU touches the memory. The core
 * owns the dma-buf reference; detach_dmabuf() frees the buffer.
 *
 * Only the first kind has users other than the queue, so only it can be
 * mapped or exported; for the others @refcount stays at one.
 *
 * Export: each device attaching to an exported buffer gets a
 * &struct vb2_vm_attachment with a scatter list of the buffer's pages,
 * mapped for that device by map_dma_buf() and unmapped by unmap_dma_buf().
 * All of it runs under the dma-buf's reservation lock, which is also what
 * begin_cpu_access() and end_cpu_access() take to walk the attachments.
 * Several devices may map the buffer at once, so the mappings are made
 * without CPU sync and the caches are handed over explicitly.
 */

/**
 * struct vb2_vm_buf - one plane of a vmalloc buffer
 * @vaddr: kernel address of the first byte of the plane (for USERPTR this
 *	includes the offset of the user address within its page)
 * @size: size of the plane in bytes
 * @dma_dir: direction of the data: DMA_FROM_DEVICE for capture (the driver
 *	writes the memory), DMA_TO_DEVICE for output
 * @refcount: references on the buffer; see the DOC section above
 * @memory: the &enum vb2_memory the plane was made for; it says which
 *	member of the union below is valid
 * @handler: ties user mappings to @refcount (MMAP)
 * @vec: pinned user pages (USERPTR)
 * @iomem: @vaddr comes from ioremap() rather than vm_map_ram() (USERPTR)
 * @dbuf: imported dma-buf (DMABUF); the core holds its reference
 * @map: kernel mapping of @dbuf while it is mapped (DMABUF)
 *
 * What only one memory model uses shares storage (a union): every plane of
 * every buffer carries this structure, and the union keeps it within a
 * 64-byte kmalloc cache.
 *
 * Locking legend:
 *
 * I: set when the buffer is created, never changes afterwards.
 * Q: changed only by the memops, which the core calls one at a time for a
 *    buffer (under the queue's lock).
 * C: a reference count, changed atomically from any context.
 */
struct vb2_vm_buf {
	void			*vaddr;		/* I; DMABUF: Q */
	unsigned long		size;		/* I */
	enum dma_data_direction	dma_dir;	/* I */
	refcount_t		refcount;	/* C */
	u8			memory;		/* I */
	union {
		struct vb2_vmarea_handler handler; /* I */
		struct {
			struct frame_vector *vec; /* I */
			bool		iomem;	/* I */
		};
		struct {
			struct dma_buf	*dbuf;	/* I */
			struct iosys_map map;	/* Q */
		};
	};
};

static void vb2_vm_put(void *buf_priv);

static struct vb2_vm_buf *vb2_vm_new(struct vb2_buffer *vb,
				     unsigned long size,
				     enum vb2_memory memory)
{
	struct vb2_vm_buf *buf;

	buf = kzalloc(sizeof(*buf), GFP_KERNEL);
	if (!buf)
		return NULL;

	buf->size = size;
	buf->dma_dir = vb->vb2_queue->dma_dir;
	buf->memory = memory;
	refcount_set(&buf->refcount, 1);
	return buf;
}

/* True if the device side (here: the driver's CPU code) writes the memory. */
static bool vb2_vm_device_writes(struct vb2_vm_buf *buf)
{
	return buf->dma_dir == DMA_FROM_DEVICE ||
	       buf->dma_dir == DMA_BIDIRECTIONAL;
}

/* MMAP buffers */

static void *vb2_vm_alloc(struct vb2_buffer *vb, struct device *dev,
			  unsigned long size)
{
	struct vb2_vm_buf *buf;

	if (!size)
		return ERR_PTR(-EINVAL);

	buf = vb2_vm_new(vb, size, VB2_MEMORY_MMAP);
	if (!buf)
		return ERR_PTR(-ENOMEM);

	buf->vaddr = vmalloc_user(size);
	if (!buf->vaddr) {
		kfree(buf);
		return ERR_PTR(-ENOMEM);
	}

	buf->handler.refcount = &buf->refcount;
	buf->handler.put = vb2_vm_put;
	buf->handler.arg = buf;
	return buf;
}

static void vb2_vm_put(void *buf_priv)
{
	struct vb2_vm_buf *buf = buf_priv;

	if (!refcount_dec_and_test(&buf->refcount))
		return;

	vfree(buf->vaddr);
	kfree(buf);
}

/* Maps the buffer from page @pgoff on into @vma and ties @vma to it. */
static int vb2_vm_map_user(struct vb2_vm_buf *buf,
			   struct vm_area_struct *vma, unsigned long pgoff)
{
	int ret;

	ret = remap_vmalloc_range(vma, buf->vaddr, pgoff);
	if (ret)
		return ret;

	vm_flags_set(vma, VM_DONTEXPAND | VM_DONTDUMP);
	vma->vm_private_data = &buf->handler;
	vma->vm_ops = &vb2_common_vm_ops;
	vma->vm_ops->open(vma);
	return 0;
}

static int vb2_vm_mmap(void *buf_priv, struct vm_area_struct *vma)
{
	struct vb2_vm_buf *buf = buf_priv;

	if (!buf || buf->memory != VB2_MEMORY_MMAP)
		return -EINVAL;

	/* vm_pgoff is the core's cookie for the plane: map from its start. */
	return vb2_vm_map_user(buf, vma, 0);
}

/* USERPTR buffers */

/*
 * Memory without struct pages can still be used if it is one physically
 * contiguous range: map it with ioremap().
 */
static int vb2_vm_map_pfns(struct vb2_vm_buf *buf)
{
	unsigned int n_pages = frame_vector_count(buf->vec);
	unsigned long *pfns = frame_vector_pfns(buf->vec);
	void __iomem *io;
	unsigned int i;

	for (i = 1; i < n_pages; i++)
		if (pfns[i] != pfns[0] + i)
			return -EINVAL;

	io = ioremap(PFN_PHYS(pfns[0]), (size_t)n_pages << PAGE_SHIFT);
	if (!io)
		return -ENOMEM;

	buf->vaddr = (__force void *)io;
	buf->iomem = true;
	return 0;
}

static int vb2_vm_map_pages(struct vb2_vm_buf *buf)
{
	struct page **pages = frame_vector_pages(buf->vec);

	if (IS_ERR(pages))
		return vb2_vm_map_pfns(buf);

	buf->vaddr = vm_map_ram(pages, frame_vector_count(buf->vec),
				NUMA_NO_NODE);
	return buf->vaddr ? 0 : -ENOMEM;
}

static void *vb2_vm_get_userptr(struct vb2_buffer *vb, struct device *dev,
				unsigned long vaddr, unsigned long size)
{
	struct vb2_vm_buf *buf;
	int ret;

	buf = vb2_vm_new(vb, size, VB2_MEMORY_USERPTR);
	if (!buf)
		return ERR_PTR(-ENOMEM);

	buf->vec = vb2_create_framevec(vaddr, size,
				       vb2_vm_device_writes(buf));
	if (IS_ERR(buf->vec)) {
		ret = PTR_ERR(buf->vec);
		goto err_free;
	}

	ret = vb2_vm_map_pages(buf);
	if (ret)
		goto err_unpin;

	buf->vaddr += offset_in_page(vaddr);
	return buf;

err_unpin:
	vb2_destroy_framevec(buf->vec);
err_free:
	kfree(buf);
	return ERR_PTR(ret);
}

static void vb2_vm_put_userptr(void *buf_priv)
{
	struct vb2_vm_buf *buf = buf_priv;
	unsigned int n_pages = frame_vector_count(buf->vec);
	void *base = (void *)PAGE_ALIGN_DOWN((unsigned long)buf->vaddr);
	struct page **pages;
	unsigned int i;

	if (buf->iomem) {
		iounmap((__force void __iomem *)base);
	} else {
		vm_unmap_ram(base, n_pages);
		pages = frame_vector_pages(buf->vec);
		if (vb2_vm_device_writes(buf) && !IS_ERR(pages))
			for (i = 0; i < n_pages; i++)
				set_page_dirty_lock(pages[i]);
	}

	vb2_destroy_framevec(buf->vec);
	kfree(buf);
}

/* DMABUF import */

static void *vb2_vm_attach_dmabuf(struct vb2_buffer *vb,
				  struct device *dev,
				  struct dma_buf *dbuf,
				  unsigned long size)
{
	struct vb2_vm_buf *buf;

	if (dbuf->size < size)
		return ERR_PTR(-EFAULT);

	buf = vb2_vm_new(vb, size, VB2_MEMORY_DMABUF);
	if (!buf)
		return ERR_PTR(-ENOMEM);

	buf->dbuf = dbuf;
	return buf;
}

static void vb2_vm_unmap_dmabuf(void *buf_priv)
{
	struct vb2_vm_buf *buf = buf_priv;

	if (!buf->vaddr)
		return;

	dma_buf_vunmap_unlocked(buf->dbuf, &buf->map);
	iosys_map_clear(&buf->map);
	buf->vaddr = NULL;
}

/*
 * The kernel mapping is what a vmalloc driver works with; without one the
 * import fails with -EFAULT, 6.12's code, whatever the exporter said.
 */
static int vb2_vm_map_dmabuf(void *buf_priv)
{
	struct vb2_vm_buf *buf = buf_priv;

	if (buf->vaddr)
		return 0;

	if (dma_buf_vmap_unlocked(buf->dbuf, &buf->map))
		return -EFAULT;

	/* I/O memory too, as 6.12 (see vb2_dmabuf_map_vaddr()). */
	buf->vaddr = vb2_dmabuf_map_vaddr(&buf->map);
	return 0;
}

static void vb2_vm_detach_dmabuf(void *buf_priv)
{
	struct vb2_vm_buf *buf = buf_priv;

	vb2_vm_unmap_dmabuf(buf);
	kfree(buf);
}

/* DMABUF export */

/**
 * struct vb2_vm_attachment - an exported buffer, seen by one device
 * @sgt: the buffer's pages; mapped for the attached device while
 *	@dma_dir is not DMA_NONE
 * @importer: copy of the mapped @sgt handed to the importer. The dma-buf
 *	core may scramble its page links (CONFIG_DMABUF_DEBUG); @sgt stays
 *	intact for the CPU access syncs.
 * @dma_dir: direction of the current mapping, DMA_NONE when unmapped
 *
 * Everything here is protected by the dma-buf's reservation lock, except
 * @sgt's page list, which is set up by attach and never changes.
 */
struct vb2_vm_attachment {
	struct sg_table		sgt;
	struct sg_table		importer;
	enum dma_data_direction	dma_dir;
};

static int vb2_vm_dmabuf_attach(struct dma_buf *dbuf,
				struct dma_buf_attachment *attach)
{
	struct vb2_vm_buf *buf = dbuf->priv;
	unsigned int n_pages = PAGE_ALIGN(buf->size) >> PAGE_SHIFT;
	struct vb2_vm_attachment *att;
	struct scatterlist *sg;
	void *vaddr = buf->vaddr;
	unsigned int i;
	int ret;

	att = kzalloc(sizeof(*att), GFP_KERNEL);
	if (!att)
		return -ENOMEM;

	ret = sg_alloc_table(&att->sgt, n_pages, GFP_KERNEL);
	if (ret)
		goto err_free;

	for_each_sgtable_sg(&att->sgt, sg, i) {
		struct page *page = vmalloc_to_page(vaddr);

		if (!page) {
			ret = -EFAULT;
			goto err_table;
		}
		sg_set_page(sg, page, PAGE_SIZE, 0);
		vaddr += PAGE_SIZE;
	}

	att->dma_dir = DMA_NONE;
	attach->priv = att;
	return 0;

err_table:
	sg_free_table(&att->sgt);
err_free:
	kfree(att);
	return ret;
}

/* Copies the pages and DMA segments of a mapped table into a new table. */
static int vb2_vm_copy_mapped(struct sg_table *dst, struct sg_table *src)
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
static void vb2_vm_att_unmap(struct dma_buf_attachment *attach,
			     struct vb2_vm_attachment *att)
{
	sg_free_table(&att->importer);
	dma_sync_sgtable_for_cpu(attach->dev, &att->sgt, att->dma_dir);
	dma_unmap_sgtable(attach->dev, &att->sgt, att->dma_dir,
			  DMA_ATTR_SKIP_CPU_SYNC);
	att->dma_dir = DMA_NONE;
}

static struct sg_table *
vb2_vm_dmabuf_map(struct dma_buf_attachment *attach,
		  enum dma_data_direction dma_dir)
{
	struct vb2_vm_attachment *att = attach->priv;
	int ret;

	/* The core caches the mapping (cache_sgt_mapping): one at a time. */
	if (att->dma_dir != DMA_NONE)
		return ERR_PTR(-EBUSY);

	/*
	 * The pages may be mapped for other devices too (the queue's device,
	 * other importers). Mapping without CPU sync is how the DMA API is
	 * told that the overlap is intended; the caches are then handed to
	 * the device explicitly.
	 */
	ret = dma_map_sgtable(attach->dev, &att->sgt, dma_dir,
			      DMA_ATTR_SKIP_CPU_SYNC);
	if (ret)
		return ERR_PTR(ret);

	ret = vb2_vm_copy_mapped(&att->importer, &att->sgt);
	if (ret) {
		dma_unmap_sgtable(attach->dev, &att->sgt, dma_dir,
				  DMA_ATTR_SKIP_CPU_SYNC);
		return ERR_PTR(ret);
	}

	dma_sync_sgtable_for_device(attach->dev, &att->sgt, dma_dir);
	att->dma_dir = dma_dir;
	return &att->importer;
}

static void vb2_vm_dmabuf_unmap(struct dma_buf_attachment *attach,
				struct sg_table *sgt,
				enum dma_data_direction dma_dir)
{
	struct vb2_vm_attachment *att = attach->priv;

	if (WARN_ON(sgt != &att->importer || att->dma_dir == DMA_NONE))
		return;
	vb2_vm_att_unmap(attach, att);
}

static void vb2_vm_dmabuf_detach(struct dma_buf *dbuf,
				 struct dma_buf_attachment *attach)
{
	struct vb2_vm_attachment *att = attach->priv;

	/* The dma-buf core unmaps before detaching; be safe anyway. */
	if (att->dma_dir != DMA_NONE)
		vb2_vm_att_unmap(attach, att);
	sg_free_table(&att->sgt);
	kfree(att);
	attach->priv = NULL;
}

/* Hands the memory to the CPU (@for_cpu) or back to the attached devices. */
static void vb2_vm_sync_attachments(struct dma_buf *dbuf, bool for_cpu)
{
	struct dma_buf_attachment *attach;

	dma_resv_lock(dbuf->resv, NULL);
	list_for_each_entry(attach, &dbuf->attachments, node) {
		struct vb2_vm_attachment *att = attach->priv;

		if (att->dma_dir == DMA_NONE)
			continue;
		if (for_cpu)
			dma_sync_sgtable_for_cpu(attach->dev, &att->sgt,
						 att->dma_dir);
		else
			dma_sync_sgtable_for_device(attach->dev, &att->sgt,
						    att->dma_dir);
	}
	dma_resv_unlock(dbuf->resv);
}

static int vb2_vm_dmabuf_begin_cpu_access(struct dma_buf *dbuf,
					  enum dma_data_direction dma_dir)
{
	vb2_vm_sync_attachments(dbuf, true);
	return 0;
}

static int vb2_vm_dmabuf_end_cpu_access(struct dma_buf *dbuf,
					enum dma_data_direction dma_dir)
{
	vb2_vm_sync_attachments(dbuf, false);
	return 0;
}

static int vb2_vm_dmabuf_vmap(struct dma_buf *dbuf, struct iosys_map *map)
{
	struct vb2_vm_buf *buf = dbuf->priv;

	iosys_map_set_vaddr(map, buf->vaddr);
	return 0;
}

static int vb2_vm_dmabuf_mmap(struct dma_buf *dbuf,
			      struct vm_area_struct *vma)
{
	/* The dma-buf core has checked that vm_pgoff and the size fit. */
	return vb2_vm_map_user(dbuf->priv, vma, vma->vm_pgoff);
}

static void vb2_vm_dmabuf_release(struct dma_buf *dbuf)
{
	vb2_sync_export_released(dbuf);
	vb2_vm_put(dbuf->priv);
}

static const struct dma_buf_ops vb2_vm_dmabuf_ops = {
	.cache_sgt_mapping = true,
	.attach = vb2_vm_dmabuf_attach,
	.detach = vb2_vm_dmabuf_detach,
	.map_dma_buf = vb2_vm_dmabuf_map,
	.unmap_dma_buf = vb2_vm_dmabuf_unmap,
	.begin_cpu_access = vb2_vm_dmabuf_begin_cpu_access,
	.end_cpu_access = vb2_vm_dmabuf_end_cpu_access,
	.vmap = vb2_vm_dmabuf_vmap,
	.mmap = vb2_vm_dmabuf_mmap,
	.release = vb2_vm_dmabuf_release,
};

static struct dma_buf *vb2_vm_get_dmabuf(struct vb2_buffer *vb, void *buf_priv,
					 unsigned long flags)
{
	struct vb2_vm_buf *buf = buf_priv;
	struct dma_buf_export_info info = {
		.exp_name = KBUILD_MODNAME,
		.owner = THIS_MODULE,
		.ops = &vb2_vm_dmabuf_ops,
		.size = buf->size,
		.flags = flags,
		.priv = buf,
	};
	struct dma_buf *dbuf;

	/* Only MMAP buffers belong to us and can be exported. */
	if (buf->memory != VB2_MEMORY_MMAP)
		return ERR_PTR(-EINVAL);

	/*
	 * The new dma-buf's reference. Taken first because release() runs
	 * as soon as the dma-buf exists and its last file reference goes.
	 */
	refcount_inc(&buf->refcount);
	dbuf = dma_buf_export(&info);
	if (IS_ERR(dbuf))
		vb2_vm_put(buf);
	return dbuf;
}

/* Common to all kinds */

static void *vb2_vm_vaddr(struct vb2_buffer *vb, void *buf_priv)
{
	struct vb2_vm_buf *buf = buf_priv;

	return buf->vaddr;
}

static unsigned int vb2_vm_num_users(void *buf_priv)
{
	struct vb2_vm_buf *buf = buf_priv;

	return refcount_read(&buf->refcount);
}

/**
 * DOC: vb2_vmalloc_memops
 *
 * &struct vb2_mem_ops of the vmalloc allocator: MMAP, USERPTR and DMABUF
 * import, DMABUF export of MMAP buffers, and read()/write() emulation. The
 * device pointer given by the core is not used; vb2_plane_vaddr() always
 * returns the kernel address of the plane (for DMABUF while it is mapped)
 * and vb2_plane_cookie() returns NULL.
 */
const struct vb2_mem_ops vb2_vmalloc_memops = {
	.alloc		= vb2_vm_alloc,
	.put		= vb2_vm_put,
	.get_dmabuf	= vb2_vm_get_dmabuf,
	.get_userptr	= vb2_vm_get_userptr,
	.put_userptr	= vb2_vm_put_userptr,
	.attach_dmabuf	= vb2_vm_attach_dmabuf,
	.detach_dmabuf	= vb2_vm_detach_dmabuf,
	.map_dmabuf	= vb2_vm_map_dmabuf,
	.unmap_dmabuf	= vb2_vm_unmap_dmabuf,
	.vaddr		= vb2_vm_vaddr,
	.num_users	= vb2_vm_num_users,
	.mmap		= vb2_vm_mmap,
};
EXPORT_SYMBOL_GPL(vb2_vmalloc_memops);
