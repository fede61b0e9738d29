/* SPDX-License-Identifier: GPL-2.0 */
/*
 * videobuf2: declarations shared by the modules of this directory
 * (videobuf2-common, videobuf2-memops and the allocators). Not for drivers:
 * nothing here is under include/media, and nothing here is a promise to
 * modules built elsewhere.
 */
#ifndef _VIDEOBUF2_PRIVATE_H
#define _VIDEOBUF2_PRIVATE_H

#include <linux/iosys-map.h>

struct dma_buf;

/* videobuf2-sync.c (in videobuf2-common): implicit fences */
#if IS_ENABLED(CONFIG_VIDEOBUF2_IMPLICIT_SYNC)
void vb2_sync_export_released(struct dma_buf *dbuf);
#else
static inline void vb2_sync_export_released(struct dma_buf *dbuf) { }
#endif

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
