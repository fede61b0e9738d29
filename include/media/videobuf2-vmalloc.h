/* SPDX-License-Identifier: GPL-2.0 */
/*
 * videobuf2 allocator for memory that only the CPU touches.
 *
 * Buffers are virtually contiguous (vmalloc) and have no DMA address: the
 * driver fills or reads them with the CPU through vb2_plane_vaddr(). Use it
 * for USB devices and for drivers that copy data in software.
 */
#ifndef _MEDIA_VIDEOBUF2_VMALLOC_H
#define _MEDIA_VIDEOBUF2_VMALLOC_H

#include <media/videobuf2-v4l2.h>

extern const struct vb2_mem_ops vb2_vmalloc_memops;

#endif /* _MEDIA_VIDEOBUF2_VMALLOC_H */
