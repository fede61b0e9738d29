/* SPDX-License-Identifier: GPL-2.0 */
/*
 * videobuf2 allocator for devices that do scatter-gather DMA.
 *
 * Buffers are made of pages anywhere in memory, described by a DMA-mapped
 * &struct sg_table that the driver programs into its DMA engine.
 */
#ifndef _MEDIA_VIDEOBUF2_DMA_SG_H
#define _MEDIA_VIDEOBUF2_DMA_SG_H

#include <media/videobuf2-v4l2.h>

/**
 * vb2_dma_sg_plane_desc() - scatter list of a plane, mapped for the device
 * @vb: buffer
 * @plane_no: plane index
 *
 * The DMA addresses and lengths of the table (sg_dma_address(),
 * sg_dma_len(), walked with for_each_sgtable_dma_sg()) are valid for the
 * queue's device while the driver owns the buffer. For an imported DMABUF
 * plane the table belongs to the exporter: do not look at its pages.
 *
 * Return: the plane's &struct sg_table, or NULL if the plane has no memory.
 */
static inline struct sg_table *vb2_dma_sg_plane_desc(struct vb2_buffer *vb,
						     unsigned int plane_no)
{
	return (struct sg_table *)vb2_plane_cookie(vb, plane_no);
}

extern const struct vb2_mem_ops vb2_dma_sg_memops;

#endif /* _MEDIA_VIDEOBUF2_DMA_SG_H */
