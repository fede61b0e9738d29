/* SPDX-License-Identifier: GPL-2.0 */
/*
 * videobuf2-memops.h - helpers shared by the videobuf2 memory allocators
 *
 * Only allocators need this header; drivers pick an allocator by pointing
 * vb2_queue.mem_ops at one of the vb2_*_memops objects.
 */
#ifndef _MEDIA_VIDEOBUF2_MEMOPS_H
#define _MEDIA_VIDEOBUF2_MEMOPS_H

#include <media/videobuf2-v4l2.h>
#include <linux/mm.h>
#include <linux/refcount.h>

/**
 * struct vb2_vmarea_handler - ties user mappings to a buffer's reference count
 * @refcount: the buffer's reference count; every VMA that maps the buffer
 *	holds one reference on it
 * @put: drops one reference on the buffer and frees it when none is left
 * @arg: the buffer, passed to @put
 *
 * An allocator embeds one of these in each buffer it can map to user space,
 * stores its address in &vm_area_struct.vm_private_data and installs
 * &vb2_common_vm_ops as the VMA's operations. Copies of the VMA (fork, split)
 * then take a reference and every unmap drops one, so the memory lives as
 * long as the last mapping even after the queue has freed the buffer.
 */
struct vb2_vmarea_handler {
	refcount_t		*refcount;
	void			(*put)(void *arg);
	void			*arg;
};

extern const struct vm_operations_struct vb2_common_vm_ops;

struct frame_vector *vb2_create_framevec(unsigned long start,
					 unsigned long length,
					 bool write);
void vb2_destroy_framevec(struct frame_vector *vec);

#endif /* _MEDIA_VIDEOBUF2_MEMOPS_H */
