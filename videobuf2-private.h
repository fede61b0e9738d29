/* SPDX-License-Identifier: GPL-2.0 */
/*
 * videobuf2: declarations shared by the modules of this directory
 * (videobuf2-common, videobuf2-memops and the allocators). Not for drivers:
 * nothing here is under include/media, and nothing here is a promise to
 * modules built elsewhere. The functions are exported in the symbol
 * namespace VIDEOBUF2_PRIVATE, which only these modules import.
 */
#ifndef _VIDEOBUF2_PRIVATE_H
#define _VIDEOBUF2_PRIVATE_H

#include <linux/iosys-map.h>
#include <media/videobuf2-memops.h>

struct dma_buf;

/* videobuf2-fence.c (in videobuf2-common): implicit fences */
#if IS_ENABLED(CONFIG_VIDEOBUF2_IMPLICIT_SYNC)
void vb2_fence_export_released(struct dma_buf *dbuf);
#else
static inline void vb2_fence_export_released(struct dma_buf *dbuf) { }
#endif

/* videobuf2-memops.c: the dma-buf exporter of the allocators */

struct device;
struct module;
struct sg_table;
struct vm_area_struct;

/**
 * struct vb2_dmabuf_exporter - what the shared dma-buf exporter needs of an
 *	allocator
 * @name: the allocator's module name (KBUILD_MODNAME), the dma-buf's
 *	exp_name
 * @owner: the allocator's module (THIS_MODULE), held by each dma-buf
 * @sg_table: fills @sgt with the pages of @buf in segments that @dev
 *	accepts, for a device attaching; frees what it allocated on failure.
 *	Process context, may sleep.
 * @vmap: the kernel address of @buf, NULL if none can be made; needed only
 *	by buffers exported with a vmap() operation
 * @mmap: maps @buf from page @vma->vm_pgoff on into @vma and ties @vma to
 *	the buffer's references, as the allocator's mmap memop does
 * @dev_writes: how many times the queue's own device may have written @buf:
 *	a count that the allocator's finish memop advances for every buffer
 *	done in a direction the device writes. Required. Any context; it must
 *	not sleep.
 *
 * @buf is the &vb2_vmarea_handler.arg of the exported buffer.
 */
struct vb2_dmabuf_exporter {
	const char	*name;
	struct module	*owner;
	int		(*sg_table)(void *buf, struct sg_table *sgt,
				    struct device *dev);
	void		*(*vmap)(void *buf);
	int		(*mmap)(void *buf, struct vm_area_struct *vma);
	unsigned int	(*dev_writes)(void *buf);
};

/**
 * struct vb2_dmabuf - the exporter's part of an MMAP buffer, and the priv of
 *	each dma-buf exported from it
 * @handler: the buffer's references, which its user mappings hold too; each
 *	dma-buf holds one
 * @exp: the allocator's hooks, set by vb2_memops_export_dmabuf()
 *
 * Each allocator embeds one in its MMAP buffers, so that exporting
 * allocates nothing of its own.
 */
struct vb2_dmabuf {
	struct vb2_vmarea_handler		handler;
	const struct vb2_dmabuf_exporter	*exp;
};

struct dma_buf *vb2_memops_export_dmabuf(const struct vb2_dmabuf_exporter *exp,
					 struct vb2_dmabuf *vdb,
					 unsigned long size, unsigned long flags,
					 bool vmap);

/* The allocators: the kernel address of an imported dma-buf */

/**
 * vb2_dmabuf_map_vaddr() - what vb2_plane_vaddr() gives for a dma-buf's vmap
 * @map:	the mapping dma_buf_vmap() returned.
 *
 * An exporter of device memory (a PCI BAR, a carveout) hands out an
 * I/O memory mapping. Drivers get it from vb2_plane_vaddr() as a plain
 * pointer, as from 6.12, and read or write it with the CPU (mediatek's
 * decoders parse their OUTPUT buffers so); on the architectures such
 * exporters run on, ioremap() memory takes plain loads and stores. The
 * __force cast is what the kernel itself writes for that (sev-guest's
 * secrets page, an ioremap_encrypted() mapping read as memory); it drops
 * the address space here and nowhere else.
 *
 * Return: the kernel address of the first byte of the dma-buf.
 */
static inline void *vb2_dmabuf_map_vaddr(const struct iosys_map *map)
{
	if (map->is_iomem)
		return (__force void *)map->vaddr_iomem;
	return map->vaddr;
}

#endif /* _VIDEOBUF2_PRIVATE_H */
