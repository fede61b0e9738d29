/* SPDX-License-Identifier: GPL-2.0 */
/*
 * videobuf2 allocator for devices that need each plane contiguous in their
 * DMA address space.
 *
 * Without an IOMMU that means physically contiguous memory (CMA or the
 * buddy allocator); behind an IOMMU the pages may be scattered and are
 * mapped to one contiguous range of device addresses.
 */
#ifndef _MEDIA_VIDEOBUF2_DMA_CONTIG_H
#define _MEDIA_VIDEOBUF2_DMA_CONTIG_H

#include <media/videobuf2-v4l2.h>
#include <linux/dma-mapping.h>

/**
 * vb2_dma_contig_plane_dma_addr() - device address of a plane
 * @vb: buffer
 * @plane_no: plane index; the plane must have memory
 *
 * The address is valid for the device the queue allocates with (the queue's
 * alloc_devs[] entry or dev) while the driver owns the buffer. It is the
 * start of the plane; add &vb2_plane.data_offset yourself if the format
 * needs it.
 *
 * Return: the DMA address of the first byte of the plane.
 */
static inline dma_addr_t
vb2_dma_contig_plane_dma_addr(struct vb2_buffer *vb, unsigned int plane_no)
{
	dma_addr_t *addr = vb2_plane_cookie(vb, plane_no);

	return *addr;
}

int vb2_dma_contig_set_max_seg_size(struct device *dev, unsigned int size);

/**
 * vb2_dma_contig_clear_max_seg_size() - undo vb2_dma_contig_set_max_seg_size()
 * @dev: device
 *
 * Nothing to undo any more: the DMA parameters belong to the device and go
 * away with it. Kept so that existing drivers build unchanged.
 */
static inline void vb2_dma_contig_clear_max_seg_size(struct device *dev) { }

extern const struct vb2_mem_ops vb2_dma_contig_memops;

#endif /* _MEDIA_VIDEOBUF2_DMA_CONTIG_H */
