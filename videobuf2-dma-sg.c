// SPDX-License-Identifier: GPL-2.0
/*
 * videobuf2 allocator for devices that do scatter-gather DMA.
 */

#include <linux/dma-buf.h>
#include <linux/dma-mapping.h>
#include <linux/err.h>
#include <linux/highmem.h>
#include <linux/iosys-map.h>
#include <linux/log2.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/refcount.h>
#include <linux/scatterlist.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>

#include <media/videobuf2-dma-sg.h>
#include <media/videobuf2-memops.h>

#include "videobuf2-private.h"

static int debug;
module_param(debug, int, 0644);
MODULE_PARM_DESC(debug, "debug level (0: off, 1: allocations and mappings)");

MODULE_DESCRIPTION("videobuf2 allocator for scatter-gather DMA");
MODULE_LICENSE("GPL");
MODULE_IMPORT_NS(DMA_BUF);
MODULE_IMPORT_NS(VIDEOBUF2_PRIVATE);

#define dprintk(level, fmt, arg...)					\
	do {								\
		if (debug >= (level))					\
			pr_info("vb2-dma-sg: %s: " fmt, __func__, ## arg); \
	} while (0)

/**
 * DOC: dma-sg allocator - objects and their lifetime
 *
 * Every plane is a &struct vb2_sg_buf. Its cookie, returned by
 * vb2_dma_sg_plane_desc(), is a &struct sg_table mapped for the queue's
 * device. Where the memory comes from depends on the memory model:
 *
 * MMAP: pages from the page allocator, zeroed. Chunks of the highest order
 * that is free right now are taken (never waiting for reclaim or
 * compaction), down to single pages; chunks are split into order-0 pages so
 * every page can be mapped on its own. The pages are described by an
 * sg_table (merged into segments the device accepts) and DMA-mapped once,
 * without CPU sync; prepare() and finish() sync for each use. The buffer is
 * reference counted (@refcount): the queue holds the first reference and
 * drops it with put(); every user mapping holds one (&vb2_common_vm_ops);
 * every exported dma-buf holds one until its release(). The last reference
 * unmaps and frees everything, so a buffer that is still mapped or exported
 * outlives the queue. The buffer also holds a reference on the device.
 *
 * USERPTR: the user pages are pinned (vb2_create_framevec()), described by
 * an sg_table and DMA-mapped, like MMAP memory. The queue is the only owner;
 * put_userptr() undoes everything and marks the pages dirty if the device
 * wrote to them.
 *
 * DMABUF: the queue's device attaches to the dma-buf in attach_dmabuf();
 * the exporter's sg_table is the cookie between map_dmabuf() and
 * unmap_dmabuf(). The exporter takes care of the caches. The core owns the
 * dma-buf reference.
 *
 * A kernel mapping (vb2_plane_vaddr()) is only made when someone asks for
 * one: vm_map_ram() of the pages for MMAP and USERPTR, dma_buf_vmap() for
 * DMABUF. It stays until the buffer is freed (or the dma-buf unmapped).
 *
 * Export: the shared exporter of videobuf2-memops.c, given an sg_table of
 * the buffer's pages in segments that the attaching device accepts. The
 * queue's own mapping is synced by prepare() and finish() only, also when
 * the buffer is exported.
 */

/**
 * struct vb2_sg_buf - one plane of a dma-sg buffer
 * @dev: device the memory is mapped for
 * @vaddr: kernel mapping of the pages, made on first use; NULL if none
 * @pages: the pages (MMAP: owned by the buffer, USERPTR: held by @vec)
 * @num_pages: number of entries in @pages
 * @offset: offset of the first byte in the first page (USERPTR)
 * @size: size of the plane in bytes
 * @dma_dir: direction of the DMA
 * @sg_table: the pages, mapped for @dev (MMAP, USERPTR)
 * @dma_sgt: the cookie: &@sg_table, or the exporter's table while a DMABUF
 *	is mapped
 * @refcount: references on the buffer; see the DOC section above
 * @memory: the &enum vb2_memory the plane was made for; it says which
 *	member of the union below is valid
 * @dev_writes: buffers done in a direction @dev writes, for the dma-buf
 *	exporter (&vb2_dmabuf_exporter.dev_writes)
 * @exp: ties user mappings and exported dma-bufs to @refcount (MMAP)
 * @vec: pinned user pages (USERPTR)
 * @db_attach: attachment of @dev to the imported dma-buf (DMABUF)
 * @map: kernel mapping of the imported dma-buf (DMABUF)
 * @vb: the buffer, for the cache hints; only valid in prepare() and finish()
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
 * A: set once with cmpxchg() (it can race with the dma-buf vmap() of an
 *    exported buffer), cleared only when the buffer is freed.
 * W: advanced by finish() alone, which the core calls once per completion
 *    of the buffer, from any context; read without a lock (READ_ONCE()) by
 *    the dma-buf exporter.
 */
struct vb2_sg_buf {
	struct device			*dev;		/* I */
	void				*vaddr;		/* A; DMABUF: Q */
	struct page			**pages;	/* I */
	unsigned int			num_pages;	/* I */
	unsigned int			offset;		/* I */
	unsigned long			size;		/* I */
	enum dma_data_direction		dma_dir;	/* I */
	refcount_t			refcount;	/* C */
	struct sg_table			sg_table;	/* I */
	struct sg_table			*dma_sgt;	/* I; DMABUF: Q */
	u8				memory;		/* I */
	unsigned int			dev_writes;	/* W */
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

static void vb2_sg_put(void *buf_priv);

static struct vb2_sg_buf *vb2_sg_new(struct vb2_buffer *vb,
				     struct device *dev,
				     unsigned long size,
				     enum vb2_memory memory)
{
	struct vb2_sg_buf *buf;

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

static bool vb2_sg_device_writes(struct vb2_sg_buf *buf)
{
	return buf->dma_dir == DMA_FROM_DEVICE ||
	       buf->dma_dir == DMA_BIDIRECTIONAL;
}

/* Largest segment @dev accepts, in whole pages as the sg_table code wants. */
static unsigned int vb2_sg_max_segment(struct device *dev)
{
	return max_t(unsigned int, dma_get_max_seg_size(dev) & PAGE_MASK,
		     PAGE_SIZE);
}

/* Kernel mapping of the pages, made on first use. */
static void *vb2_sg_kmap(struct vb2_sg_buf *buf)
{
	void *vaddr = READ_ONCE(buf->vaddr);
	void *old;

	if (vaddr)
		return vaddr;

	vaddr = vm_map_ram(buf->pages, buf->num_pages, NUMA_NO_NODE);
	if (!vaddr)
		return NULL;

	old = cmpxchg(&buf->vaddr, NULL, vaddr);
	if (old) {
		vm_unmap_ram(vaddr, buf->num_pages);
		return old;
	}
	return vaddr;
}

static void vb2_sg_kunmap(struct vb2_sg_buf *buf)
{
	if (buf->vaddr)
		vm_unmap_ram(buf->vaddr, buf->num_pages);
	buf->vaddr = NULL;
}

/* Caches: hand the pages to the device or back to the CPU */

static void vb2_sg_sync_for_device(struct vb2_sg_buf *buf)
{
	void *vaddr = READ_ONCE(buf->vaddr);

	if (vaddr)
		flush_kernel_vmap_range(vaddr, buf->num_pages << PAGE_SHIFT);
	dma_sync_sgtable_for_device(buf->dev, &buf->sg_table, buf->dma_dir);
}

static void vb2_sg_sync_for_cpu(struct vb2_sg_buf *buf)
{
	void *vaddr = READ_ONCE(buf->vaddr);

	dma_sync_sgtable_for_cpu(buf->dev, &buf->sg_table, buf->dma_dir);
	if (vaddr)
		invalidate_kernel_vmap_range(vaddr,
					     buf->num_pages << PAGE_SHIFT);
}

/* Called from the core's buffer preparation, in process context. */
static void vb2_sg_prepare(void *buf_priv)
{
	struct vb2_sg_buf *buf = buf_priv;

	if (buf->memory == VB2_MEMORY_DMABUF ||
	    buf->vb->skip_cache_sync_on_prepare)
		return;
	vb2_sg_sync_for_device(buf);
}

/* Called when the buffer is done, possibly in interrupt context. */
static void vb2_sg_finish(void *buf_priv)
{
	struct vb2_sg_buf *buf = buf_priv;

	if (buf->dma_dir != DMA_TO_DEVICE)
		WRITE_ONCE(buf->dev_writes, buf->dev_writes + 1);
	if (buf->memory == VB2_MEMORY_DMABUF ||
	    buf->vb->skip_cache_sync_on_finish)
		return;
	vb2_sg_sync_for_cpu(buf);
}

/* Describes the pages in buf->sg_table and maps it for the device. */
static int vb2_sg_map_pages(struct vb2_sg_buf *buf)
{
	int ret;

	ret = sg_alloc_table_from_pages_segment(&buf->sg_table, buf->pages,
						buf->num_pages, buf->offset,
						buf->size,
						vb2_sg_max_segment(buf->dev),
						GFP_KERNEL);
	if (ret)
		return ret;

	/* The caches are synced by prepare() and finish(). */
	ret = dma_map_sgtable(buf->dev, &buf->sg_table, buf->dma_dir,
			      DMA_ATTR_SKIP_CPU_SYNC);
	if (ret) {
		sg_free_table(&buf->sg_table);
		return ret;
	}

	buf->dma_sgt = &buf->sg_table;
	return 0;
}

static void vb2_sg_unmap_pages(struct vb2_sg_buf *buf)
{
	dma_unmap_sgtable(buf->dev, &buf->sg_table, buf->dma_dir,
			  DMA_ATTR_SKIP_CPU_SYNC);
	sg_free_table(&buf->sg_table);
	buf->dma_sgt = NULL;
}

/* MMAP buffers */

static void vb2_sg_free_pages(struct page **pages, unsigned int count)
{
	while (count--)
		__free_page(pages[count]);
}

/*
 * Fills buf->pages. Large chunks make for fewer DMA segments and TLB misses,
 * but are only taken if they are free now; once an order fails, smaller
 * chunks are used for the rest of the buffer.
 */
static int vb2_sg_alloc_pages(struct vb2_sg_buf *buf, gfp_t gfp)
{
	unsigned int max_order = MAX_PAGE_ORDER;
	unsigned int filled = 0, chunks = 0;

	while (filled < buf->num_pages) {
		unsigned int order = min_t(unsigned int, max_order,
					   ilog2(buf->num_pages - filled));
		struct page *page;
		unsigned int i;

		for (;;) {
			gfp_t flags = order ? gfp | __GFP_NORETRY | __GFP_NOWARN
					    : gfp;

			page = alloc_pages(flags, order);
			if (page || !order)
				break;
			order--;
		}
		if (!page) {
			vb2_sg_free_pages(buf->pages, filled);
			return -ENOMEM;
		}

		split_page(page, order);
		for (i = 0; i < (1U << order); i++)
			buf->pages[filled++] = nth_page(page, i);
		max_order = order;
		chunks++;
	}

	dprintk(1, "%u pages in %u chunks\n", buf->num_pages, chunks);
	return 0;
}

static void *vb2_sg_alloc(struct vb2_buffer *vb, struct device *dev,
			  unsigned long size)
{
	gfp_t gfp = (GFP_KERNEL | __GFP_ZERO | vb->vb2_queue->gfp_flags) &
		    ~__GFP_COMP;
	struct vb2_sg_buf *buf;
	int ret = -ENOMEM;

	if (WARN_ON(!dev) || !PAGE_ALIGN(size))
		return ERR_PTR(-EINVAL);

	buf = vb2_sg_new(vb, dev, PAGE_ALIGN(size), VB2_MEMORY_MMAP);
	if (!buf)
		return ERR_PTR(-ENOMEM);

	buf->num_pages = buf->size >> PAGE_SHIFT;
	buf->pages = kvcalloc(buf->num_pages, sizeof(*buf->pages), GFP_KERNEL);
	if (!buf->pages)
		goto err_free;

	ret = vb2_sg_alloc_pages(buf, gfp);
	if (ret)
		goto err_free_array;

	ret = vb2_sg_map_pages(buf);
	if (ret)
		goto err_free_pages;

	get_device(dev);
	buf->exp.handler.refcount = &buf->refcount;
	buf->exp.handler.put = vb2_sg_put;
	buf->exp.handler.arg = buf;
	return buf;

err_free_pages:
	vb2_sg_free_pages(buf->pages, buf->num_pages);
err_free_array:
	kvfree(buf->pages);
err_free:
	kfree(buf);
	return ERR_PTR(ret);
}

static void vb2_sg_put(void *buf_priv)
{
	struct vb2_sg_buf *buf = buf_priv;

	if (!refcount_dec_and_test(&buf->refcount))
		return;

	dprintk(1, "freeing %u pages\n", buf->num_pages);
	vb2_sg_unmap_pages(buf);
	vb2_sg_kunmap(buf);
	vb2_sg_free_pages(buf->pages, buf->num_pages);
	kvfree(buf->pages);
	put_device(buf->dev);
	kfree(buf);
}

/* Maps the buffer from page @pgoff on into @vma and ties @vma to it. */
static int vb2_sg_map_user(struct vb2_sg_buf *buf,
			   struct vm_area_struct *vma, unsigned long pgoff)
{
	unsigned long count = vma_pages(vma);
	int ret;

	if (pgoff > buf->num_pages || count > buf->num_pages - pgoff)
		return -EINVAL;

	ret = vm_insert_pages(vma, vma->vm_start, buf->pages + pgoff, &count);
	if (ret)
		return ret;

	vm_flags_set(vma, VM_DONTEXPAND | VM_DONTDUMP);
	vma->vm_private_data = &buf->exp.handler;
	vma->vm_ops = &vb2_common_vm_ops;
	vma->vm_ops->open(vma);
	dprintk(1, "mapped %lu pages at %#lx\n", vma_pages(vma),
		vma->vm_start);
	return 0;
}

static int vb2_sg_mmap(void *buf_priv, struct vm_area_struct *vma)
{
	struct vb2_sg_buf *buf = buf_priv;

	if (!buf || buf->memory != VB2_MEMORY_MMAP)
		return -EINVAL;

	/* vm_pgoff is the core's cookie for the plane: map from its start. */
	return vb2_sg_map_user(buf, vma, 0);
}

/* USERPTR buffers */

static void *vb2_sg_get_userptr(struct vb2_buffer *vb, struct device *dev,
				unsigned long vaddr, unsigned long size)
{
	struct vb2_sg_buf *buf;
	int ret;

	if (WARN_ON(!dev))
		return ERR_PTR(-EINVAL);

	buf = vb2_sg_new(vb, dev, size, VB2_MEMORY_USERPTR);
	if (!buf)
		return ERR_PTR(-ENOMEM);

	buf->offset = offset_in_page(vaddr);
	buf->vec = vb2_create_framevec(vaddr, size,
				       vb2_sg_device_writes(buf));
	if (IS_ERR(buf->vec)) {
		ret = PTR_ERR(buf->vec);
		goto err_free;
	}

	buf->pages = frame_vector_pages(buf->vec);
	if (IS_ERR(buf->pages)) {
		ret = PTR_ERR(buf->pages);
		goto err_unpin;
	}
	buf->num_pages = frame_vector_count(buf->vec);

	ret = vb2_sg_map_pages(buf);
	if (ret)
		goto err_unpin;

	dprintk(1, "%u user pages, %u DMA segments\n", buf->num_pages,
		buf->sg_table.nents);
	return buf;

err_unpin:
	vb2_destroy_framevec(buf->vec);
err_free:
	kfree(buf);
	/* 6.12 reports every failure to pin or map user memory as -ENOMEM. */
	dprintk(1, "user memory %#lx+%lu unusable: %d\n", vaddr, size, ret);
	return ERR_PTR(-ENOMEM);
}

static void vb2_sg_put_userptr(void *buf_priv)
{
	struct vb2_sg_buf *buf = buf_priv;
	unsigned int i;

	vb2_sg_unmap_pages(buf);
	vb2_sg_kunmap(buf);
	if (vb2_sg_device_writes(buf))
		for (i = 0; i < buf->num_pages; i++)
			set_page_dirty_lock(buf->pages[i]);
	vb2_destroy_framevec(buf->vec);
	kfree(buf);
}

/* DMABUF import */

static void *vb2_sg_attach_dmabuf(struct vb2_buffer *vb,
				  struct device *dev,
				  struct dma_buf *dbuf,
				  unsigned long size)
{
	struct dma_buf_attachment *attach;
	struct vb2_sg_buf *buf;

	if (WARN_ON(!dev))
		return ERR_PTR(-EINVAL);
	if (dbuf->size < size)
		return ERR_PTR(-EFAULT);

	buf = vb2_sg_new(vb, dev, size, VB2_MEMORY_DMABUF);
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

static void vb2_sg_vunmap_dmabuf(struct vb2_sg_buf *buf)
{
	if (!buf->vaddr)
		return;
	dma_buf_vunmap_unlocked(buf->db_attach->dmabuf, &buf->map);
	iosys_map_clear(&buf->map);
	buf->vaddr = NULL;
}

static void *vb2_sg_vmap_dmabuf(struct vb2_sg_buf *buf)
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

static int vb2_sg_map_dmabuf(void *buf_priv)
{
	struct vb2_sg_buf *buf = buf_priv;
	struct sg_table *sgt;

	if (buf->dma_sgt)
		return 0;

	/* 6.12 fails the import with -EINVAL whatever the exporter said. */
	sgt = dma_buf_map_attachment_unlocked(buf->db_attach, buf->dma_dir);
	if (IS_ERR(sgt))
		return -EINVAL;

	buf->dma_sgt = sgt;
	return 0;
}

static void vb2_sg_unmap_dmabuf(void *buf_priv)
{
	struct vb2_sg_buf *buf = buf_priv;

	if (!buf->dma_sgt)
		return;

	vb2_sg_vunmap_dmabuf(buf);
	dma_buf_unmap_attachment_unlocked(buf->db_attach, buf->dma_sgt,
					  buf->dma_dir);
	buf->dma_sgt = NULL;
}

static void vb2_sg_detach_dmabuf(void *buf_priv)
{
	struct vb2_sg_buf *buf = buf_priv;

	vb2_sg_unmap_dmabuf(buf);
	vb2_sg_vunmap_dmabuf(buf);
	dma_buf_detach(buf->db_attach->dmabuf, buf->db_attach);
	kfree(buf);
}

/* DMABUF export (see "the dma-buf exporter" in videobuf2-memops.c) */

static int vb2_sg_export_sg_table(void *buf_priv, struct sg_table *sgt,
				  struct device *dev)
{
	struct vb2_sg_buf *buf = buf_priv;

	return sg_alloc_table_from_pages_segment(sgt, buf->pages,
						 buf->num_pages, 0, buf->size,
						 vb2_sg_max_segment(dev),
						 GFP_KERNEL);
}

static void *vb2_sg_export_vmap(void *buf_priv)
{
	return vb2_sg_kmap(buf_priv);
}

static int vb2_sg_export_mmap(void *buf_priv, struct vm_area_struct *vma)
{
	return vb2_sg_map_user(buf_priv, vma, vma->vm_pgoff);
}

static unsigned int vb2_sg_export_dev_writes(void *buf_priv)
{
	struct vb2_sg_buf *buf = buf_priv;

	return READ_ONCE(buf->dev_writes);
}

static const struct vb2_dmabuf_exporter vb2_sg_exporter = {
	.name = KBUILD_MODNAME,
	.owner = THIS_MODULE,
	.sg_table = vb2_sg_export_sg_table,
	.vmap = vb2_sg_export_vmap,
	.mmap = vb2_sg_export_mmap,
	.dev_writes = vb2_sg_export_dev_writes,
};

static struct dma_buf *vb2_sg_get_dmabuf(struct vb2_buffer *vb, void *buf_priv,
					 unsigned long flags)
{
	struct vb2_sg_buf *buf = buf_priv;

	/* Only MMAP buffers belong to us and can be exported. */
	if (buf->memory != VB2_MEMORY_MMAP)
		return ERR_PTR(-EINVAL);

	return vb2_memops_export_dmabuf(&vb2_sg_exporter, &buf->exp,
					buf->size, flags, true);
}

/* Common to all kinds */

static void *vb2_sg_vaddr(struct vb2_buffer *vb, void *buf_priv)
{
	struct vb2_sg_buf *buf = buf_priv;
	void *vaddr;

	if (buf->memory == VB2_MEMORY_DMABUF)
		return vb2_sg_vmap_dmabuf(buf);

	vaddr = vb2_sg_kmap(buf);
	return vaddr ? vaddr + buf->offset : NULL;
}

static void *vb2_sg_cookie(struct vb2_buffer *vb, void *buf_priv)
{
	struct vb2_sg_buf *buf = buf_priv;

	return buf->dma_sgt;
}

static unsigned int vb2_sg_num_users(void *buf_priv)
{
	struct vb2_sg_buf *buf = buf_priv;

	return refcount_read(&buf->refcount);
}

/**
 * DOC: vb2_dma_sg_memops
 *
 * &struct vb2_mem_ops of the dma-sg allocator: MMAP, USERPTR and DMABUF
 * import, DMABUF export of MMAP buffers, and read()/write() emulation. The
 * memory is mapped for the device the core passes (the queue's alloc_devs[]
 * entry or dev), which must be set. vb2_dma_sg_plane_desc() returns the
 * mapped &struct sg_table; vb2_plane_vaddr() makes a kernel mapping on first
 * use, in process context.
 */
const struct vb2_mem_ops vb2_dma_sg_memops = {
	.alloc		= vb2_sg_alloc,
	.put		= vb2_sg_put,
	.get_dmabuf	= vb2_sg_get_dmabuf,
	.get_userptr	= vb2_sg_get_userptr,
	.put_userptr	= vb2_sg_put_userptr,
	.prepare	= vb2_sg_prepare,
	.finish		= vb2_sg_finish,
	.attach_dmabuf	= vb2_sg_attach_dmabuf,
	.detach_dmabuf	= vb2_sg_detach_dmabuf,
	.map_dmabuf	= vb2_sg_map_dmabuf,
	.unmap_dmabuf	= vb2_sg_unmap_dmabuf,
	.vaddr		= vb2_sg_vaddr,
	.cookie		= vb2_sg_cookie,
	.num_users	= vb2_sg_num_users,
	.mmap		= vb2_sg_mmap,
};
EXPORT_SYMBOL_GPL(vb2_dma_sg_memops);
