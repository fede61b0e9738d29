// SPDX-License-Identifier: GPL-2.0
/*
 * Helpers shared by the videobuf2 memory allocators.
 */

#include <linux/err.h>
#include <linux/export.h>
#include <linux/mm.h>
#include <linux/module.h>

#include <media/frame_vector.h>
#include <media/videobuf2-memops.h>

/**
 * DOC: user mappings and pinned user memory
 *
 * Two things every allocator needs and does the same way:
 *
 * Mappings of MMAP buffers. A buffer mapped to user space must survive until
 * the last mapping goes away, even if the queue frees it first (REQBUFS(0)
 * while an application still has it mapped). The allocator's mmap embeds a
 * &struct vb2_vmarea_handler in the buffer and installs &vb2_common_vm_ops,
 * then calls its open() once for the new VMA. From then on the VMA owns one
 * reference on the buffer: open() runs for every copy of the VMA (fork,
 * split) and takes one more, close() runs for every VMA that goes away and
 * drops one through the handler's put().
 *
 * USERPTR memory. vb2_create_framevec() pins every page a user range touches
 * with a long-term pin (see frame_vector.c), and vb2_destroy_framevec()
 * releases them. The vector is owned by the buffer that asked for it.
 */

static void vb2_vma_open(struct vm_area_struct *vma)
{
	struct vb2_vmarea_handler *handler = vma->vm_private_data;

	refcount_inc(handler->refcount);
}

static void vb2_vma_close(struct vm_area_struct *vma)
{
	struct vb2_vmarea_handler *handler = vma->vm_private_data;

	handler->put(handler->arg);
}

/**
 * DOC: vb2_common_vm_ops
 *
 * VMA operations that keep a mapped buffer alive: open() takes a reference
 * through the &struct vb2_vmarea_handler found in
 * &vm_area_struct.vm_private_data, close() drops one.
 */
const struct vm_operations_struct vb2_common_vm_ops = {
	.open = vb2_vma_open,
	.close = vb2_vma_close,
};
EXPORT_SYMBOL_GPL(vb2_common_vm_ops);

/**
 * vb2_destroy_framevec() - release the pages pinned by vb2_create_framevec()
 * @vec: vector returned by vb2_create_framevec()
 *
 * Unpins the pages and frees @vec. Pages a device wrote to should be marked
 * dirty by the caller first.
 *
 * Context: Process context.
 */
void vb2_destroy_framevec(struct frame_vector *vec)
{
	put_vaddr_frames(vec);
	frame_vector_destroy(vec);
}
EXPORT_SYMBOL(vb2_destroy_framevec);

/**
 * vb2_create_framevec() - pin the pages behind a user memory range
 * @start: user address of the first byte
 * @length: length of the range in bytes
 * @write: true if the device (or the CPU on its behalf) will write to the
 *	memory, i.e. for capture buffers
 *
 * Pins every page that the range touches, including the partial pages at
 * both ends. All of them must be pinnable.
 *
 * Context: Process context, in the task that owns the memory. May sleep.
 * Return: a vector holding the pinned pages, to be released with
 * vb2_destroy_framevec(); ERR_PTR(-EINVAL) for an empty or wrapping range,
 * ERR_PTR(-ENOMEM) if the vector cannot be allocated, ERR_PTR(-EFAULT) if
 * part of the range is not mapped, or the errno the pinning returned.
 */
struct frame_vector *vb2_create_framevec(unsigned long start,
					 unsigned long length,
					 bool write)
{
	unsigned long end = start + length - 1;
	unsigned long count = (end >> PAGE_SHIFT) - (start >> PAGE_SHIFT) + 1;
	struct frame_vector *vec;
	int pinned;

	if (!length || end < start || count > UINT_MAX)
		return ERR_PTR(-EINVAL);

	vec = frame_vector_create(count);
	if (!vec)
		return ERR_PTR(-ENOMEM);

	pinned = get_vaddr_frames(start & PAGE_MASK, count, write, vec);
	if (pinned > 0 && pinned == count)
		return vec;

	/* Part of the range is as useless as none of it. */
	vb2_destroy_framevec(vec);
	return ERR_PTR(pinned < 0 ? pinned : -EFAULT);
}
EXPORT_SYMBOL(vb2_create_framevec);

MODULE_DESCRIPTION("helpers shared by the videobuf2 memory allocators");
MODULE_LICENSE("GPL");
