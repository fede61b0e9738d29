// SPDX-License-Identifier: GPL-2.0
/*
 * videobuf2 allocator for memory that only the CPU touches (vmalloc).
 */

#include <linux/dma-buf.h>
#include <linux/dma-mapping.h>
#include <linux/err.h>
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
MODULE_IMPORT_NS(VIDEOBUF2_PRIVATE);

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
 * into the kernel with vm_map_ram(). Memory without struct pages (%VM_IO or
 * %VM_PFNMAP mappings) cannot be pinned and is refused there already. The
 * queue is the only owner; put_userptr() undoes everything and marks the
 * pages dirty if the driver wrote to them.
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
 * Export: the shared exporter of videobuf2-memops.c, given a scatter list
 * of the buffer's pages, one page an entry, for each device attaching. The
 * memory has no mapping of its own to sync.
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
 * @dev_writes: buffers done in a direction the driver writes, for the
 *	dma-buf exporter (&vb2_dmabuf_exporter.dev_writes)
 * @exp: ties user mappings and exported dma-bufs to @refcount (MMAP)
 * @vec: pinned user pages (USERPTR)
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
 * W: advanced by finish() alone, which the core calls once per completion
 *    of the buffer, from any context; read without a lock (READ_ONCE()) by
 *    the dma-buf exporter.
 */
struct vb2_vm_buf {
	void			*vaddr;		/* I; DMABUF: Q */
	unsigned long		size;		/* I */
	enum dma_data_direction	dma_dir;	/* I */
	refcount_t		refcount;	/* C */
	u8			memory;		/* I */
	unsigned int		dev_writes;	/* W */
	union {
		struct vb2_dmabuf exp;	/* I; exp.exp: Q */
		struct frame_vector	*vec;	/* I */
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

	buf->exp.handler.refcount = &buf->refcount;
	buf->exp.handler.put = vb2_vm_put;
	buf->exp.handler.arg = buf;
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
	vma->vm_private_data = &buf->exp.handler;
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

static int vb2_vm_map_pages(struct vb2_vm_buf *buf)
{
	struct page **pages = frame_vector_pages(buf->vec);

	if (IS_ERR(pages))
		return PTR_ERR(pages);

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

	vm_unmap_ram(base, n_pages);
	pages = frame_vector_pages(buf->vec);
	if (vb2_vm_device_writes(buf) && !IS_ERR(pages))
		for (i = 0; i < n_pages; i++)
			set_page_dirty_lock(pages[i]);

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

/* DMABUF export (see "the dma-buf exporter" in videobuf2-memops.c) */

/* A table of the buffer's pages, one per entry, for a device attaching. */
static int vb2_vm_export_sg_table(void *buf_priv, struct sg_table *sgt,
				  struct device *dev)
{
	struct vb2_vm_buf *buf = buf_priv;
	unsigned int n_pages = PAGE_ALIGN(buf->size) >> PAGE_SHIFT;
	struct scatterlist *sg;
	void *vaddr = buf->vaddr;
	unsigned int i;
	int ret;

	ret = sg_alloc_table(sgt, n_pages, GFP_KERNEL);
	if (ret)
		return ret;

	for_each_sgtable_sg(sgt, sg, i) {
		struct page *page = vmalloc_to_page(vaddr);

		if (!page) {
			sg_free_table(sgt);
			return -EFAULT;
		}
		sg_set_page(sg, page, PAGE_SIZE, 0);
		vaddr += PAGE_SIZE;
	}
	return 0;
}

static void *vb2_vm_export_vmap(void *buf_priv)
{
	struct vb2_vm_buf *buf = buf_priv;

	return buf->vaddr;
}

static int vb2_vm_export_mmap(void *buf_priv, struct vm_area_struct *vma)
{
	return vb2_vm_map_user(buf_priv, vma, vma->vm_pgoff);
}

static unsigned int vb2_vm_export_dev_writes(void *buf_priv)
{
	struct vb2_vm_buf *buf = buf_priv;

	return READ_ONCE(buf->dev_writes);
}

static const struct vb2_dmabuf_exporter vb2_vm_exporter = {
	.name = KBUILD_MODNAME,
	.owner = THIS_MODULE,
	.sg_table = vb2_vm_export_sg_table,
	.vmap = vb2_vm_export_vmap,
	.mmap = vb2_vm_export_mmap,
	.dev_writes = vb2_vm_export_dev_writes,
};

static struct dma_buf *vb2_vm_get_dmabuf(struct vb2_buffer *vb, void *buf_priv,
					 unsigned long flags)
{
	struct vb2_vm_buf *buf = buf_priv;

	/* Only MMAP buffers belong to us and can be exported. */
	if (buf->memory != VB2_MEMORY_MMAP)
		return ERR_PTR(-EINVAL);

	return vb2_memops_export_dmabuf(&vb2_vm_exporter, &buf->exp,
					buf->size, flags, true);
}

/* Common to all kinds */

static void *vb2_vm_vaddr(struct vb2_buffer *vb, void *buf_priv)
{
	struct vb2_vm_buf *buf = buf_priv;

	return buf->vaddr;
}

/*
 * Called when the buffer is done, possibly in interrupt context. The memory
 * needs no sync; what the driver wrote is counted for the dma-buf exporter.
 */
static void vb2_vm_finish(void *buf_priv)
{
	struct vb2_vm_buf *buf = buf_priv;

	if (buf->dma_dir != DMA_TO_DEVICE)
		WRITE_ONCE(buf->dev_writes, buf->dev_writes + 1);
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
	.finish		= vb2_vm_finish,
	.vaddr		= vb2_vm_vaddr,
	.num_users	= vb2_vm_num_users,
	.mmap		= vb2_vm_mmap,
};
EXPORT_SYMBOL_GPL(vb2_vmalloc_memops);
