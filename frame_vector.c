// SPDX-License-Identifier: GPL-2.0
/*
 * Pin the pages behind a user address range for DMA.
 *
 * Part of videobuf2-common.ko. The API is declared in <media/frame_vector.h>.
 */

#include <linux/err.h>
#include <linux/export.h>
#include <linux/mm.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include <media/frame_vector.h>

/**
 * DOC: frame vectors
 *
 * A &struct frame_vector records the frames behind a range of user memory
 * that a device is going to read or write for an unbounded time (a USERPTR
 * buffer stays queued as long as user space wants).
 *
 * The frames are taken with pin_user_pages_fast() and %FOLL_LONGTERM, the
 * documented way to hold user memory for DMA over a long period: the pages
 * are migrated out of ZONE_MOVABLE and CMA first, and page cache backed
 * mappings that cannot be pinned for long (file systems with writeback) are
 * refused. Memory without struct pages (%VM_IO or %VM_PFNMAP mappings) cannot
 * be pinned and is refused as well, so every vector filled here holds pages
 * and has @got_ref set.
 *
 * Life of a vector:
 *
 * 1. frame_vector_create() allocates room for a number of frames.
 * 2. get_vaddr_frames() pins up to that many pages.
 * 3. The user may switch the array between page pointers and PFNs with
 *    frame_vector_to_pfns() and frame_vector_to_pages() (or the
 *    frame_vector_pfns() / frame_vector_pages() inlines).
 * 4. put_vaddr_frames() drops the pins, whatever the array holds.
 * 5. frame_vector_destroy() frees the vector; it must be empty by then.
 *
 * None of these functions take locks; a vector belongs to one user.
 */

/*
 * The same array holds page pointers or PFNs, one slot per frame; that only
 * works while both have the size of a pointer.
 */
static_assert(sizeof(struct page *) == sizeof(unsigned long));

/* Pins are counted in an int, and kvmalloc() wants less than INT_MAX bytes. */
#define FRAME_VECTOR_MAX_FRAMES \
	((INT_MAX - sizeof(struct frame_vector)) / sizeof(void *))

/**
 * get_vaddr_frames() - pin the pages of a user address range
 * @start: user address of the first page (rounded down to a page boundary)
 * @nr_frames: number of pages to pin
 * @write: true if the pages will be written to (by the CPU or a device)
 * @vec: vector to fill; it must be empty and have room for @nr_frames
 *
 * Takes long-term pins (%FOLL_LONGTERM) on the pages, so the memory stays in
 * place until put_vaddr_frames() is called, whatever user space does with the
 * mapping meanwhile. Must be called from the task that owns the memory.
 *
 * Context: Process context. May sleep.
 * Return: the number of pages pinned, which may be less than @nr_frames when
 * the range ends early, or a negative errno (-EFAULT for a range that cannot
 * be pinned at all).
 */
int get_vaddr_frames(unsigned long start, unsigned int nr_frames, bool write,
		     struct frame_vector *vec)
{
	unsigned int gup_flags = FOLL_LONGTERM;
	int ret;

	if (!nr_frames)
		return 0;
	if (WARN_ON_ONCE(vec->nr_frames))
		return -EINVAL;
	if (WARN_ON_ONCE(nr_frames > vec->nr_allocated))
		nr_frames = vec->nr_allocated;

	if (write)
		gup_flags |= FOLL_WRITE;

	ret = pin_user_pages_fast(untagged_addr(start), nr_frames, gup_flags,
				  (struct page **)vec->ptrs);
	vec->got_ref = true;
	vec->is_pfns = false;
	vec->nr_frames = ret > 0 ? ret : 0;

	if (!ret)
		return -EFAULT;
	return ret;
}
EXPORT_SYMBOL(get_vaddr_frames);

/**
 * put_vaddr_frames() - release the pages pinned by get_vaddr_frames()
 * @vec: vector to empty
 *
 * Unpins every frame in @vec, converting the array back to page pointers if
 * it holds PFNs, and leaves the vector empty so it can be filled again or
 * destroyed. The caller marks pages dirty beforehand if a device wrote to
 * them.
 *
 * Context: Process context.
 */
void put_vaddr_frames(struct frame_vector *vec)
{
	if (!vec->got_ref)
		goto out;

	/* Pins are only taken on pages, so the conversion cannot fail. */
	if (WARN_ON(frame_vector_to_pages(vec)))
		goto out;

	unpin_user_pages((struct page **)vec->ptrs, vec->nr_frames);
	vec->got_ref = false;
out:
	vec->nr_frames = 0;
}
EXPORT_SYMBOL(put_vaddr_frames);

/**
 * frame_vector_to_pages() - turn the PFNs held by a vector into page pointers
 * @vec: vector to convert
 *
 * Does nothing if @vec already holds pages.
 *
 * Return: 0 on success, -EINVAL if one of the PFNs has no struct page (the
 * vector is then left untouched).
 */
int frame_vector_to_pages(struct frame_vector *vec)
{
	unsigned long *pfns = (unsigned long *)vec->ptrs;
	struct page **pages = (struct page **)vec->ptrs;
	unsigned int i;

	if (!vec->is_pfns)
		return 0;

	for (i = 0; i < vec->nr_frames; i++)
		if (!pfn_valid(pfns[i]))
			return -EINVAL;

	for (i = 0; i < vec->nr_frames; i++)
		pages[i] = pfn_to_page(pfns[i]);
	vec->is_pfns = false;
	return 0;
}
EXPORT_SYMBOL(frame_vector_to_pages);

/**
 * frame_vector_to_pfns() - turn the page pointers held by a vector into PFNs
 * @vec: vector to convert
 *
 * Does nothing if @vec already holds PFNs. The pins stay as they are.
 */
void frame_vector_to_pfns(struct frame_vector *vec)
{
	unsigned long *pfns = (unsigned long *)vec->ptrs;
	struct page **pages = (struct page **)vec->ptrs;
	unsigned int i;

	if (vec->is_pfns)
		return;

	for (i = 0; i < vec->nr_frames; i++)
		pfns[i] = page_to_pfn(pages[i]);
	vec->is_pfns = true;
}
EXPORT_SYMBOL(frame_vector_to_pfns);

/**
 * frame_vector_create() - allocate an empty frame vector
 * @nr_frames: number of frames the vector must have room for
 *
 * Context: Process context. May sleep.
 * Return: the new vector, or NULL if @nr_frames is zero, too large, or memory
 * ran out.
 */
struct frame_vector *frame_vector_create(unsigned int nr_frames)
{
	struct frame_vector *vec;

	if (WARN_ON_ONCE(!nr_frames))
		return NULL;
	if (nr_frames > FRAME_VECTOR_MAX_FRAMES)
		return NULL;

	vec = kvmalloc(struct_size(vec, ptrs, nr_frames), GFP_KERNEL);
	if (!vec)
		return NULL;

	vec->nr_allocated = nr_frames;
	vec->nr_frames = 0;
	vec->got_ref = false;
	vec->is_pfns = false;
	return vec;
}
EXPORT_SYMBOL(frame_vector_create);

/**
 * frame_vector_destroy() - free a frame vector
 * @vec: vector to free; put_vaddr_frames() must have emptied it
 */
void frame_vector_destroy(struct frame_vector *vec)
{
	/* Freeing a vector that still holds pins would leak them forever. */
	WARN_ON(vec->nr_frames);
	kvfree(vec);
}
EXPORT_SYMBOL(frame_vector_destroy);
