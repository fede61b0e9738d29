// SPDX-License-Identifier: GPL-2.0
/*
 * videobuf2 allocator for devices that need each plane contiguous in their
 * DMA address space.
 */

#include <linux/device.h>
#include <linux/dma-buf.h>
#include <linux/dma-mapping.h>
#include <linux/err.h>
#include <linux/highmem.h>
#include <linux/iosys-map.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/refcount.h>
#include <linux/scatterlist.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>

#include <media/videobuf2-dma-contig.h>
#include <media/videobuf2-memops.h>

#include "videobuf2-private.h"

MODULE_DESCRIPTION("videobuf2 allocator for DMA-contiguous memory");
MODULE_LICENSE("GPL");
MODULE_IMPORT_NS(DMA_BUF);
MODULE_IMPORT_NS(VIDEOBUF2_PRIVATE);

/**
 * DOC: dma-contig allocator - objects and their lifetime
 *
 * Every plane is a &struct vb2_contig_buf. Its cookie, returned by
 * vb2_plane_cookie(), points at @dma_addr, the device address of the first
 * byte; vb2_dma_contig_plane_dma_addr() reads it. Where the memory comes
 * from depends on the memory model and the queue's flags:
 *
 * MMAP, coherent (the default): dma_alloc_attrs() with the queue's
 * dma_attrs. The CPU address it returns is the kernel mapping unless
 * %DMA_ATTR_NO_KERNEL_MAPPING was asked for. No cache maintenance is needed.
 *
 * MMAP, non-coherent (queue's non_coherent_mem): dma_alloc_noncontiguous(),
 * which gives cacheable pages that are contiguous for the device, mapped
 * into the kernel with dma_vmap_noncontiguous() (unless
 * %DMA_ATTR_NO_KERNEL_MAPPING). That API hands the memory over as one
 * scatterlist segment, which may not exceed the device's DMA segment limit;
 * a larger buffer is one physically contiguous block from dma_alloc_pages()
 * instead. prepare() and finish() sync the caches, unless the application's
 * cache hints say they may be skipped.
 *
 * Both MMAP kinds are reference counted (@refcount): the queue holds the
 * first reference and drops it with put(); every user mapping holds one
 * (&vb2_common_vm_ops); every exported dma-buf holds one until its
 * release(). The last reference frees the memory, so a buffer that is still
 * mapped or exported outlives the queue. The buffer also holds a reference
 * on the device, which the DMA API needs to free the memory.
 *
 * USERPTR: the user pages are pinned (vb2_create_framevec()) and DMA-mapped
 * as a scatter list. That only works if the mapping is contiguous for the
 * device (physically contiguous memory, or an IOMMU that merged the pages);
 * anything else is refused with -EFAULT, as by 6.12. A kernel mapping is
 * made with vm_map_ram() of the pinned pages when the driver first asks
 * for one (vb2_plane_vaddr()); frame vectors hold pages only, so there
 * always are pages to map. The queue is the only owner; put_userptr()
 * undoes everything and marks the pages dirty if the device wrote to them.
 *
 * DMABUF: the queue's device attaches to the dma-buf in attach_dmabuf(); on
 * map_dmabuf() the exporter's scatter list must be contiguous for the
 * device (-EFAULT otherwise) and gives @dma_addr. A kernel mapping is made
 * with dma_buf_vmap() when the driver asks for one (also of I/O memory)
 * and dropped on unmap.
 * The exporter takes care of the caches; the core owns the dma-buf
 * reference.
 *
 * Export: the shared exporter of videobuf2-memops.c, given a scatter list
 * of the buffer's pages in segments that the attaching device accepts. The
 * queue's own mapping of non-coherent memory is synced by prepare() and
 * finish() only, also when the buffer is exported. A buffer without a
 * kernel mapping is exported without a vmap() operation.
 */

/**
 * struct vb2_contig_buf - one plane of a dma-contig buffer
 * @dev: device the memory is allocated or mapped for
 * @vaddr: kernel address of the plane, NULL if there is none
 * @cookie: what dma_alloc_attrs() returned (coherent MMAP)
 * @dma_addr: device address of the first byte of the plane
 * @size: size of the plane in bytes
 * @attrs: DMA attributes of the allocation (MMAP)
 * @dma_dir: direction of the DMA
 * @non_coherent_mem: cacheable memory that prepare() and finish() sync
 *	(MMAP)
 * @memory: the &enum vb2_memory the plane was made for; it says which
 *	member of the union below is valid
 * @dma_sgt: scatter list of the memory: from dma_alloc_noncontiguous()
 *	(non-coherent MMAP), our mapping of the user pages (USERPTR), or the
 *	exporter's table while a dma-buf is mapped (DMABUF)
 * @page: first page of non-coherent memory from dma_alloc_pages() (MMAP)
 * @refcount: references on the buffer; see the DOC section above
 * @exp: ties user mappings and exported dma-bufs to @refcount (MMAP)
 * @vec: pinned user pages (USERPTR)
 * @db_attach: attachment of @dev to the imported dma-buf (DMABUF)
 * @map: kernel mapping of the imported dma-buf (DMABUF)
 * @vb: the buffer, for the cache hints; only valid in prepare() and finish()
 * @dev_writes: buffers done in a direction @dev writes, for the dma-buf
 *	exporter (&vb2_dmabuf_exporter.dev_writes)
 *
 * What only one memory model uses shares storage (a union): every plane of
 * every buffer carries this structure, and the union keeps it within a
 * 128-byte kmalloc cache.
 *
 * Locking legend:
 *
 * I: set when the buffer is created, never changes afterwards.
 * Q: changed only by the memops, which the core calls one at a time for a
 *    buffer (under the queue's lock).
 * C: a reference count, changed atomically from any context.
 * A: set once with cmpxchg() by vb2_plane_vaddr(), read without a lock by
 *    the cache sync of finish(), cleared only when the buffer is freed.
 * W: advanced by finish() alone, which the core calls once per completion
 *    of the buffer, from any context; read without a lock (READ_ONCE()) by
 *    the dma-buf exporter.
 */
struct vb2_contig_buf {
	struct device			*dev;		/* I */
	void				*vaddr;		/* I; USERPTR: A; DMABUF: Q */
	void				*cookie;	/* I */
	dma_addr_t			dma_addr;	/* I; DMABUF: Q */
	unsigned long			size;		/* I */
	unsigned long			attrs;		/* I */
	enum dma_data_direction		dma_dir;	/* I */
	refcount_t			refcount;	/* C */
	bool				non_coherent_mem; /* I */
	u8				memory;		/* I */
	unsigned int			dev_writes;	/* W */
	struct sg_table			*dma_sgt;	/* I; DMABUF: Q */
	struct page			*page;		/* I */
	union {
		struct vb2_dmabuf	exp;		/* I; exp.exp: Q */
		struct frame_vector	*vec;		/* I */
		struct {
			struct dma_buf_attachment *db_attach; /* I */
			struct iosys_map map;		/* Q */
		};
	};
	struct vb2_buffer		*vb;		/* I */
};

/**
 * vb2_dma_contig_set_max_seg_size() - let the device's DMA mappings use
 *	large segments
 * @dev: device the queue allocates or maps memory for
 * @size: largest segment the device can handle, usually DMA_BIT_MASK(32)
 *
 * The DMA API assumes a device handles segments of at most 64 KiB unless
 * told otherwise, and an IOMMU then refuses to merge a scattered buffer into
 * one contiguous range. Call this from probe() so that USERPTR and imported
 * DMABUF memory can be used with this allocator. The limit is only ever
 * raised, never lowered; it lives in the device's &device_dma_parameters,
 * which bus code sets up (platform, PCI and most other buses do).
 *
 * Context: Process context, usually probe().
 * Return: 0 on success, -ENODEV if the device has no DMA parameters.
 */
int vb2_dma_contig_set_max_seg_size(struct device *dev, unsigned int size)
{
	if (dev->dma_parms) {
		if (size > dma_get_max_seg_size(dev))
			dma_set_max_seg_size(dev, size);
		return 0;
	}

	dev_err(dev, "no DMA parameters, cannot raise the segment size\n");
	return -ENODEV;
}
EXPORT_SYMBOL_GPL(vb2_dma_contig_set_max_seg_size);

static void vb2_contig_put(void *buf_priv);

static struct vb2_contig_buf *vb2_contig_new(struct vb2_buffer *vb,
					     struct device *dev,
					     unsigned long size,
					     enum vb2_memory memory)
{
	struct vb2_contig_buf *buf;

	buf = kzalloc(sizeof(*buf), GFP_KERNEL);
	if (!buf)
		return NULL;

	buf->dev = dev;
	buf->size = size;
	buf->dma_dir = vb->vb2_queue->dma_dir;
	buf->vb = vb;
	buf->memory = memory;
	refcount_set(&buf->refcount, 1);
	return buf;
}

static bool vb2_contig_device_writes(struct vb2_contig_buf *buf)
{
	return buf->dma_dir == DMA_FROM_DEVICE ||
	       buf->dma_dir == DMA_BIDIRECTIONAL;
}

/* Number of bytes at the start of @sgt that are contiguous for the device. */
static unsigned long vb2_contig_contiguous_size(struct sg_table *sgt)
{
	dma_addr_t expected = sg_dma_address(sgt->sgl);
	unsigned long size = 0;
	struct scatterlist *sg;
	unsigned int i;

	for_each_sgtable_dma_sg(sgt, sg, i) {
		if (sg_dma_address(sg) != expected)
			break;
		expected += sg_dma_len(sg);
		size += sg_dma_len(sg);
	}
	return size;
}

/* Largest segment @dev accepts, in whole pages as the sg_table code wants. */
static unsigned int vb2_contig_max_segment(struct device *dev)
{
	return max_t(unsigned int, dma_get_max_seg_size(dev) & PAGE_MASK,
		     PAGE_SIZE);
}

/* Caches of our own memory (non-coherent MMAP and USERPTR) */

static bool vb2_contig_needs_sync(struct vb2_contig_buf *buf)
{
	return buf->non_coherent_mem || buf->memory == VB2_MEMORY_USERPTR;
}

static void vb2_contig_sync_for_device(struct vb2_contig_buf *buf)
{
	void *vaddr = READ_ONCE(buf->vaddr);

	if (vaddr)
		flush_kernel_vmap_range(vaddr, buf->size);
	if (buf->dma_sgt)
		dma_sync_sgtable_for_device(buf->dev, buf->dma_sgt,
					    buf->dma_dir);
	else
		dma_sync_single_for_device(buf->dev, buf->dma_addr, buf->size,
					   buf->dma_dir);
}

static void vb2_contig_sync_for_cpu(struct vb2_contig_buf *buf)
{
	void *vaddr = READ_ONCE(buf->vaddr);

	if (buf->dma_sgt)
		dma_sync_sgtable_for_cpu(buf->dev, buf->dma_sgt, buf->dma_dir);
	else
		dma_sync_single_for_cpu(buf->dev, buf->dma_addr, buf->size,
					buf->dma_dir);
	if (vaddr)
		invalidate_kernel_vmap_range(vaddr, buf->size);
}

/* Called from the core's buffer preparation, in process context. */
static void vb2_contig_prepare(void *buf_priv)
{
	struct vb2_contig_buf *buf = buf_priv;

	if (!vb2_contig_needs_sync(buf) || buf->vb->skip_cache_sync_on_prepare)
		return;
	vb2_contig_sync_for_device(buf);
}

/* Called when the buffer is done, possibly in interrupt context. */
static void vb2_contig_finish(void *buf_priv)
{
	struct vb2_contig_buf *buf = buf_priv;

	if (buf->dma_dir != DMA_TO_DEVICE)
		WRITE_ONCE(buf->dev_writes, buf->dev_writes + 1);
	if (!vb2_contig_needs_sync(buf) || buf->vb->skip_cache_sync_on_finish)
		return;
	vb2_contig_sync_for_cpu(buf);
}

/* MMAP buffers */

static int vb2_contig_alloc_coherent(struct vb2_contig_buf *buf, gfp_t gfp)
{
	buf->cookie = dma_alloc_attrs(buf->dev, buf->size, &buf->dma_addr,
				      GFP_KERNEL | __GFP_NOWARN | gfp,
				      buf->attrs);
	if (!buf->cookie)
		return -ENOMEM;

	if (!(buf->attrs & DMA_ATTR_NO_KERNEL_MAPPING))
		buf->vaddr = buf->cookie;
	return 0;
}

/*
 * Non-coherent memory in one physically contiguous block, for buffers
 * larger than the device's DMA segment limit (see below).
 */
static int vb2_contig_alloc_pages(struct vb2_contig_buf *buf)
{
	buf->page = dma_alloc_pages(buf->dev, buf->size, &buf->dma_addr,
				    buf->dma_dir, GFP_KERNEL | __GFP_NOWARN);
	if (!buf->page)
		return -ENOMEM;

	/* Not every backend clears the memory (CMA does not). */
	memset(page_address(buf->page), 0, buf->size);
	if (!(buf->attrs & DMA_ATTR_NO_KERNEL_MAPPING))
		buf->vaddr = page_address(buf->page);
	return 0;
}

static int vb2_contig_alloc_non_coherent(struct vb2_contig_buf *buf)
{
	struct sg_table *sgt;

	/*
	 * dma_alloc_noncontiguous() describes the memory as one scatterlist
	 * segment, which must respect the device's segment limit (64 KiB
	 * unless the driver raised it with vb2_dma_contig_set_max_seg_size()).
	 * Larger buffers come from dma_alloc_pages() instead.
	 */
	if (buf->size > dma_get_max_seg_size(buf->dev))
		return vb2_contig_alloc_pages(buf);

	/*
	 * Only this attribute means something here; the queue's zone flags
	 * are left to the DMA API, which picks the zone from the DMA mask.
	 */
	sgt = dma_alloc_noncontiguous(buf->dev, buf->size, buf->dma_dir,
				      GFP_KERNEL | __GFP_ZERO | __GFP_NOWARN,
				      buf->attrs & DMA_ATTR_ALLOC_SINGLE_PAGES);
	if (!sgt)
		return -ENOMEM;

	if (!(buf->attrs & DMA_ATTR_NO_KERNEL_MAPPING)) {
		buf->vaddr = dma_vmap_noncontiguous(buf->dev, buf->size, sgt);
		if (!buf->vaddr) {
			dma_free_noncontiguous(buf->dev, buf->size, sgt,
					       buf->dma_dir);
			return -ENOMEM;
		}
	}

	buf->dma_sgt = sgt;
	buf->dma_addr = sg_dma_address(sgt->sgl);
	return 0;
}

static void *vb2_contig_alloc(struct vb2_buffer *vb, struct device *dev,
			      unsigned long size)
{
	struct vb2_queue *q = vb->vb2_queue;
	struct vb2_contig_buf *buf;
	int ret;

	if (WARN_ON(!dev) || !PAGE_ALIGN(size))
		return ERR_PTR(-EINVAL);

	buf = vb2_contig_new(vb, dev, PAGE_ALIGN(size), VB2_MEMORY_MMAP);
	if (!buf)
		return ERR_PTR(-ENOMEM);

	buf->attrs = q->dma_attrs;
	buf->non_coherent_mem = q->non_coherent_mem;
	if (buf->non_coherent_mem)
		ret = vb2_contig_alloc_non_coherent(buf);
	else
		ret = vb2_contig_alloc_coherent(buf, q->gfp_flags);
	if (ret) {
		dev_dbg(dev, "cannot allocate %lu bytes of DMA memory\n",
			buf->size);
		kfree(buf);
		return ERR_PTR(ret);
	}

	get_device(dev);
	buf->exp.handler.refcount = &buf->refcount;
	buf->exp.handler.put = vb2_contig_put;
	buf->exp.handler.arg = buf;
	return buf;
}

/* Gives the memory of an MMAP buffer back to the DMA API. */
static void vb2_contig_free_memory(struct vb2_contig_buf *buf)
{
	if (!buf->non_coherent_mem) {
		dma_free_attrs(buf->dev, buf->size, buf->cookie, buf->dma_addr,
			       buf->attrs);
		return;
	}

	if (buf->page) {
		dma_free_pages(buf->dev, buf->size, buf->page, buf->dma_addr,
			       buf->dma_dir);
		return;
	}
	if (buf->vaddr)
		dma_vunmap_noncontiguous(buf->dev, buf->vaddr);
	dma_free_noncontiguous(buf->dev, buf->size, buf->dma_sgt, buf->dma_dir);
}

static void vb2_contig_put(void *buf_priv)
{
	struct vb2_contig_buf *buf = buf_priv;

	if (refcount_dec_and_test(&buf->refcount)) {
		vb2_contig_free_memory(buf);
		put_device(buf->dev);
		kfree(buf);
	}
}

/* Lets the DMA API fill @vma, from page vma->vm_pgoff of the buffer on. */
static int vb2_contig_remap(struct vb2_contig_buf *buf,
			    struct vm_area_struct *vma)
{
	if (!buf->non_coherent_mem)
		return dma_mmap_attrs(buf->dev, vma, buf->cookie,
				      buf->dma_addr, buf->size, buf->attrs);
	if (buf->page)
		return dma_mmap_pages(buf->dev, vma, buf->size, buf->page);
	return dma_mmap_noncontiguous(buf->dev, vma, buf->size, buf->dma_sgt);
}

/* Maps the buffer into @vma and ties @vma to it. */
static int vb2_contig_map_user(struct vb2_contig_buf *buf,
			       struct vm_area_struct *vma)
{
	int ret = vb2_contig_remap(buf, vma);

	if (ret)
		return ret;

	vm_flags_set(vma, VM_DONTEXPAND | VM_DONTDUMP);
	vma->vm_private_data = &buf->exp.handler;
	vma->vm_ops = &vb2_common_vm_ops;
	vma->vm_ops->open(vma);
	return 0;
}

static int vb2_contig_mmap(void *buf_priv, struct vm_area_struct *vma)
{
	struct vb2_contig_buf *buf = buf_priv;
	unsigned long pgoff = vma->vm_pgoff;
	int ret;

	if (!buf || buf->memory != VB2_MEMORY_MMAP)
		return -EINVAL;

	/*
	 * vm_pgoff is the core's cookie for the plane, but the DMA API reads
	 * it as an offset into the buffer: map from the start of the plane.
	 */
	vma->vm_pgoff = 0;
	ret = vb2_contig_map_user(buf, vma);
	vma->vm_pgoff = pgoff;
	return ret;
}

/* USERPTR buffers */

static int vb2_contig_map_user_pages(struct vb2_contig_buf *buf,
				     unsigned long vaddr)
{
	unsigned long contig;
	struct sg_table *sgt;
	struct page **pages;
	int ret;

	pages = frame_vector_pages(buf->vec);
	if (IS_ERR(pages))
		return PTR_ERR(pages);

	sgt = kzalloc(sizeof(*sgt), GFP_KERNEL);
	if (!sgt)
		return -ENOMEM;

	ret = sg_alloc_table_from_pages_segment(sgt, pages,
						frame_vector_count(buf->vec),
						offset_in_page(vaddr),
						buf->size,
						vb2_contig_max_segment(buf->dev),
						GFP_KERNEL);
	if (ret)
		goto err_free;

	/* The caches are synced by prepare() and finish(). */
	ret = dma_map_sgtable(buf->dev, sgt, buf->dma_dir,
			      DMA_ATTR_SKIP_CPU_SYNC);
	if (ret)
		goto err_table;

	contig = vb2_contig_contiguous_size(sgt);
	if (contig < buf->size) {
		dev_err_ratelimited(buf->dev,
				    "USERPTR memory not contiguous for DMA (%lu of %lu bytes)\n",
				    contig, buf->size);
		ret = -EFAULT;
		goto err_unmap;
	}

	buf->dma_sgt = sgt;
	buf->dma_addr = sg_dma_address(sgt->sgl);
	return 0;

err_unmap:
	dma_unmap_sgtable(buf->dev, sgt, buf->dma_dir, DMA_ATTR_SKIP_CPU_SYNC);
err_table:
	sg_free_table(sgt);
err_free:
	kfree(sgt);
	return ret;
}

static void *vb2_contig_get_userptr(struct vb2_buffer *vb, struct device *dev,
				    unsigned long vaddr, unsigned long size)
{
	struct vb2_contig_buf *buf;
	int ret;

	if (WARN_ON(!dev))
		return ERR_PTR(-EINVAL);

	/* A cache line shared with other data would be corrupted by DMA. */
	if (!IS_ALIGNED(vaddr | size, dma_get_cache_alignment())) {
		dev_dbg(dev, "user buffer %#lx+%lu is not cache line aligned\n",
			vaddr, size);
		return ERR_PTR(-EINVAL);
	}

	buf = vb2_contig_new(vb, dev, size, VB2_MEMORY_USERPTR);
	if (!buf)
		return ERR_PTR(-ENOMEM);

	buf->vec = vb2_create_framevec(vaddr, size,
				       vb2_contig_device_writes(buf));
	if (IS_ERR(buf->vec)) {
		ret = PTR_ERR(buf->vec);
		goto err_free;
	}

	ret = vb2_contig_map_user_pages(buf, vaddr);
	if (ret)
		goto err_unpin;
	return buf;

err_unpin:
	vb2_destroy_framevec(buf->vec);
err_free:
	kfree(buf);
	return ERR_PTR(ret);
}

/*
 * The kernel mapping of USERPTR memory, made on the driver's first
 * vb2_plane_vaddr(): the pinned pages mapped with vm_map_ram(), from the
 * byte the user address points at. 6.12 gives a mapping there too, which
 * the mediatek encoder writes its stream headers through.
 */
static void *vb2_contig_vmap_user(struct vb2_contig_buf *buf)
{
	void *vaddr = READ_ONCE(buf->vaddr);
	unsigned int count = frame_vector_count(buf->vec);
	struct page **pages;
	void *old;

	if (vaddr)
		return vaddr;
	pages = frame_vector_pages(buf->vec);
	if (IS_ERR(pages))
		return NULL;
	vaddr = vm_map_ram(pages, count, NUMA_NO_NODE);
	if (!vaddr)
		return NULL;
	vaddr += buf->dma_sgt->sgl->offset;
	old = cmpxchg(&buf->vaddr, NULL, vaddr);
	if (old) {
		vm_unmap_ram((void *)PAGE_ALIGN_DOWN((unsigned long)vaddr),
			     count);
		return old;
	}
	return vaddr;
}

static void vb2_contig_put_userptr(void *buf_priv)
{
	struct vb2_contig_buf *buf = buf_priv;
	struct sg_table *sgt = buf->dma_sgt;
	struct page **pages;
	unsigned int i;

	if (buf->vaddr)
		vm_unmap_ram((void *)PAGE_ALIGN_DOWN((unsigned long)buf->vaddr),
			     frame_vector_count(buf->vec));
	dma_unmap_sgtable(buf->dev, sgt, buf->dma_dir, DMA_ATTR_SKIP_CPU_SYNC);
	sg_free_table(sgt);
	kfree(sgt);

	pages = frame_vector_pages(buf->vec);
	if (vb2_contig_device_writes(buf) && !IS_ERR(pages))
		for (i = 0; i < frame_vector_count(buf->vec); i++)
			set_page_dirty_lock(pages[i]);
	vb2_destroy_framevec(buf->vec);
	kfree(buf);
}

/* DMABUF import */

static void *vb2_contig_attach_dmabuf(struct vb2_buffer *vb, struct device *dev,
				      struct dma_buf *dbuf, unsigned long size)
{
	struct dma_buf_attachment *attach;
	struct vb2_contig_buf *buf;

	if (WARN_ON(!dev))
		return ERR_PTR(-EINVAL);
	if (dbuf->size < size)
		return ERR_PTR(-EFAULT);

	buf = vb2_contig_new(vb, dev, size, VB2_MEMORY_DMABUF);
	if (!buf)
		return ERR_PTR(-ENOMEM);

	attach = dma_buf_attach(dbuf, dev);
	if (IS_ERR(attach)) {
		kfree(buf);
		return ERR_CAST(attach);
	}

	buf->db_attach = attach;
	return buf;
}

static void vb2_contig_vunmap_dmabuf(struct vb2_contig_buf *buf)
{
	if (!buf->vaddr)
		return;
	dma_buf_vunmap_unlocked(buf->db_attach->dmabuf, &buf->map);
	iosys_map_clear(&buf->map);
	buf->vaddr = NULL;
}

static void *vb2_contig_vmap_dmabuf(struct vb2_contig_buf *buf)
{
	struct dma_buf *dbuf = buf->db_attach->dmabuf;

	if (buf->vaddr)
		return buf->vaddr;

	if (dma_buf_vmap_unlocked(dbuf, &buf->map))
		return NULL;

	/* I/O memory too, as 6.12 (see vb2_dmabuf_map_vaddr()). */
	buf->vaddr = vb2_dmabuf_map_vaddr(&buf->map);
	return buf->vaddr;
}

static int vb2_contig_map_dmabuf(void *buf_priv)
{
	struct vb2_contig_buf *buf = buf_priv;
	unsigned long contig;
	struct sg_table *sgt;

	if (buf->dma_sgt)
		return 0;

	/* 6.12 fails the import with -EINVAL whatever the exporter said. */
	sgt = dma_buf_map_attachment_unlocked(buf->db_attach, buf->dma_dir);
	if (IS_ERR(sgt))
		return -EINVAL;

	contig = vb2_contig_contiguous_size(sgt);
	if (contig < buf->size) {
		dev_err_ratelimited(buf->dev,
				    "dma-buf not contiguous for DMA (%lu of %lu bytes)\n",
				    contig, buf->size);
		dma_buf_unmap_attachment_unlocked(buf->db_attach, sgt,
						  buf->dma_dir);
		return -EFAULT;
	}

	buf->dma_sgt = sgt;
	buf->dma_addr = sg_dma_address(sgt->sgl);
	return 0;
}

static void vb2_contig_unmap_dmabuf(void *buf_priv)
{
	struct vb2_contig_buf *buf = buf_priv;

	if (!buf->dma_sgt)
		return;

	vb2_contig_vunmap_dmabuf(buf);
	dma_buf_unmap_attachment_unlocked(buf->db_attach, buf->dma_sgt,
					  buf->dma_dir);
	buf->dma_sgt = NULL;
	buf->dma_addr = 0;
}

static void vb2_contig_detach_dmabuf(void *buf_priv)
{
	struct vb2_contig_buf *buf = buf_priv;

	vb2_contig_unmap_dmabuf(buf);
	vb2_contig_vunmap_dmabuf(buf);
	dma_buf_detach(buf->db_attach->dmabuf, buf->db_attach);
	kfree(buf);
}

/* DMABUF export (see "the dma-buf exporter" in videobuf2-memops.c) */

/*
 * Describes the buffer's pages in @sgt, in segments @dev accepts. The pages
 * of non-coherent memory are known; for coherent memory the DMA API is
 * asked (which fails for memory without struct pages).
 */
static int vb2_contig_export_sg_table(void *buf_priv, struct sg_table *sgt,
				      struct device *dev)
{
	struct vb2_contig_buf *buf = buf_priv;
	unsigned int n_pages = buf->size >> PAGE_SHIFT, count = 0;
	struct sg_table coherent, *src = buf->dma_sgt;
	struct sg_page_iter iter;
	struct page **pages;
	int ret;

	if (!buf->non_coherent_mem) {
		ret = dma_get_sgtable_attrs(buf->dev, &coherent, buf->cookie,
					    buf->dma_addr, buf->size,
					    buf->attrs);
		if (ret)
			return ret;
		src = &coherent;
	}

	pages = kvmalloc_array(n_pages, sizeof(*pages), GFP_KERNEL);
	if (!pages) {
		ret = -ENOMEM;
		goto out;
	}
	if (buf->page) {
		for (count = 0; count < n_pages; count++)
			pages[count] = nth_page(buf->page, count);
	} else {
		for_each_sgtable_page(src, &iter, 0) {
			if (count == n_pages)
				break;
			pages[count++] = sg_page_iter_page(&iter);
		}
	}

	ret = sg_alloc_table_from_pages_segment(sgt, pages, count, 0,
						(unsigned long)count << PAGE_SHIFT,
						vb2_contig_max_segment(dev),
						GFP_KERNEL);
	kvfree(pages);
out:
	if (src == &coherent)
		sg_free_table(&coherent);
	return ret;
}

static void *vb2_contig_export_vmap(void *buf_priv)
{
	struct vb2_contig_buf *buf = buf_priv;

	return buf->vaddr;
}

static int vb2_contig_export_mmap(void *buf_priv, struct vm_area_struct *vma)
{
	return vb2_contig_map_user(buf_priv, vma);
}

static unsigned int vb2_contig_export_dev_writes(void *buf_priv)
{
	struct vb2_contig_buf *buf = buf_priv;

	return READ_ONCE(buf->dev_writes);
}

static const struct vb2_dmabuf_exporter vb2_contig_exporter = {
	.name = KBUILD_MODNAME,
	.owner = THIS_MODULE,
	.sg_table = vb2_contig_export_sg_table,
	.vmap = vb2_contig_export_vmap,
	.mmap = vb2_contig_export_mmap,
	.dev_writes = vb2_contig_export_dev_writes,
};

static struct dma_buf *vb2_contig_get_dmabuf(struct vb2_buffer *vb,
					     void *buf_priv,
					     unsigned long flags)
{
	struct vb2_contig_buf *buf = buf_priv;

	/* Only MMAP buffers belong to us and can be exported. */
	if (buf->memory != VB2_MEMORY_MMAP)
		return ERR_PTR(-EINVAL);

	/* Without a kernel mapping, offer no vmap(). */
	return vb2_memops_export_dmabuf(&vb2_contig_exporter, &buf->exp,
					buf->size, flags, buf->vaddr);
}

/* Common to all kinds */

static void *vb2_contig_vaddr(struct vb2_buffer *vb, void *buf_priv)
{
	struct vb2_contig_buf *buf = buf_priv;

	if (buf->memory == VB2_MEMORY_DMABUF)
		return vb2_contig_vmap_dmabuf(buf);
	if (buf->memory == VB2_MEMORY_USERPTR)
		return vb2_contig_vmap_user(buf);
	return buf->vaddr;
}

static void *vb2_contig_cookie(struct vb2_buffer *vb, void *buf_priv)
{
	struct vb2_contig_buf *buf = buf_priv;

	return &buf->dma_addr;
}

static unsigned int vb2_contig_num_users(void *buf_priv)
{
	struct vb2_contig_buf *buf = buf_priv;

	return refcount_read(&buf->refcount);
}

/**
 * DOC: vb2_dma_contig_memops
 *
 * &struct vb2_mem_ops of the dma-contig allocator: MMAP (coherent, or
 * non-coherent with the queue's non_coherent_mem), USERPTR and DMABUF import
 * of memory that is contiguous for the device, DMABUF export of MMAP
 * buffers, and read()/write() emulation. The memory is allocated or mapped
 * for the device the core passes (the queue's alloc_devs[] entry or dev),
 * which must be set. vb2_dma_contig_plane_dma_addr() gives the device
 * address; vb2_plane_vaddr() the kernel mapping, if the buffer has one.
 */
const struct vb2_mem_ops vb2_dma_contig_memops = {
	/* every memory model */
	.cookie		= vb2_contig_cookie,
	.vaddr		= vb2_contig_vaddr,
	.prepare	= vb2_contig_prepare,
	.finish		= vb2_contig_finish,
	/* MMAP, and read()/write() emulation */
	.alloc		= vb2_contig_alloc,
	.put		= vb2_contig_put,
	.mmap		= vb2_contig_mmap,
	.num_users	= vb2_contig_num_users,
	.get_dmabuf	= vb2_contig_get_dmabuf,
	/* USERPTR */
	.get_userptr	= vb2_contig_get_userptr,
	.put_userptr	= vb2_contig_put_userptr,
	/* DMABUF import */
	.attach_dmabuf	= vb2_contig_attach_dmabuf,
	.map_dmabuf	= vb2_contig_map_dmabuf,
	.unmap_dmabuf	= vb2_contig_unmap_dmabuf,
	.detach_dmabuf	= vb2_contig_detach_dmabuf,
};
EXPORT_SYMBOL_GPL(vb2_dma_contig_memops);
