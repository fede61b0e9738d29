// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests of the videobuf2 memory models: USERPTR on user memory,
 * DMABUF export and import between two queues, read() emulation against
 * streaming I/O, and buffers in media requests.
 *
 * The real vmalloc allocator does the work; the fake allocator sits in
 * front of it to count and order the calls.
 */

#include <kunit/device.h>
#include <kunit/resource.h>
#include <kunit/test.h>
#include <linux/dma-buf.h>
#include <linux/fcntl.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/kthread.h>
#include <linux/mm.h>
#include <linux/uaccess.h>

#include <media/media-device.h>
#include <media/media-request.h>
#include <media/videobuf2-memops.h>
#include <media/videobuf2-v4l2.h>
#include <media/videobuf2-vmalloc.h>

#include "vb2-test-helpers.h"

#define CAP	V4L2_BUF_TYPE_VIDEO_CAPTURE
#define OUT	V4L2_BUF_TYPE_VIDEO_OUTPUT

#define PLANE	(2 * PAGE_SIZE)

/* ---------------------------------------------------------------------- */
/* USERPTR                                                                */
/* ---------------------------------------------------------------------- */

static int qbuf_userptr(struct vb2t_ctx *ctx, unsigned int index,
			unsigned long ptr, unsigned int length)
{
	struct v4l2_buffer b;

	vb2t_init_buffer(ctx, &b, NULL, index);
	b.memory = V4L2_MEMORY_USERPTR;
	b.m.userptr = ptr;
	b.length = length;
	return vb2t_qbuf(ctx, &b);
}

/* The driver fills the oldest buffer it holds and completes it. */
static void fill_and_complete(struct kunit *test, struct vb2t_ctx *ctx,
			      u32 pattern)
{
	struct vb2_buffer *vb = vb2t_peek(ctx);
	u32 *vaddr;

	KUNIT_ASSERT_NOT_NULL(test, vb);
	vaddr = vb2_plane_vaddr(vb, 0);
	KUNIT_ASSERT_NOT_NULL(test, vaddr);
	vaddr[0] = pattern;
	vaddr[PLANE / 4 - 1] = pattern + 1;
	vb2_set_plane_payload(vb, 0, vb2_plane_size(vb, 0));
	KUNIT_ASSERT_TRUE(test, vb2t_complete_next(ctx, VB2_BUF_STATE_DONE));
}

static u32 user_word(struct kunit *test, unsigned long addr)
{
	u32 word = 0;

	KUNIT_EXPECT_EQ(test, copy_from_user(&word, (void __user *)addr, 4), 0);
	return word;
}

static struct vb2t_ctx *userptr_ctx(struct kunit *test)
{
	struct vb2t_config cfg = {
		.type = CAP, .io_modes = VB2_USERPTR,
		.backend = &vb2_vmalloc_memops, .size = PLANE,
	};
	struct vb2t_ctx *ctx = vb2t_ctx_create(test, &cfg);
	unsigned int count = 2;

	KUNIT_ASSERT_EQ(test, vb2t_reqbufs(ctx, V4L2_MEMORY_USERPTR, &count), 0);
	KUNIT_ASSERT_EQ(test, count, 2);
	/* No memory yet: USERPTR buffers get theirs at QBUF. */
	KUNIT_EXPECT_EQ(test, vb2t_count(ctx, VB2T_BUF_INIT), 0);
	return ctx;
}

/* Pinned at QBUF, kept while the same pointer comes back, dropped on change. */
static void vb2_mem_userptr_pin_reuse(struct kunit *test)
{
	struct vb2t_ctx *ctx = userptr_ctx(test);
	unsigned long a = vb2t_user_mem(test, 2 * PLANE);
	unsigned long b = a + PLANE;
	struct v4l2_buffer vb;
	unsigned int index;

	KUNIT_ASSERT_EQ(test, qbuf_userptr(ctx, 0, a, PLANE), 0);
	KUNIT_EXPECT_STREQ(test, vb2t_log_of(ctx, 0),
			   "get_userptr buf_init buf_prepare");
	KUNIT_ASSERT_EQ(test, vb2t_streamon(ctx), 0);
	fill_and_complete(test, ctx, 0x1234);
	vb2t_init_buffer(ctx, &vb, NULL, 0);
	KUNIT_ASSERT_EQ(test, vb2t_dqbuf(ctx, &vb), 0);
	KUNIT_EXPECT_EQ(test, vb.m.userptr, a);
	KUNIT_EXPECT_EQ(test, vb.length, PLANE);
	KUNIT_EXPECT_EQ(test, vb.bytesused, PLANE);
	/* The device wrote into the user's pages. */
	KUNIT_EXPECT_EQ(test, user_word(test, a), 0x1234);
	KUNIT_EXPECT_EQ(test, user_word(test, a + PLANE - 4), 0x1235);

	/* The same pointer: nothing is pinned again. */
	vb2t_log_reset(ctx);
	KUNIT_ASSERT_EQ(test, qbuf_userptr(ctx, 0, a, PLANE), 0);
	KUNIT_EXPECT_STREQ(test, vb2t_log_of(ctx, 0), "buf_prepare buf_queue");
	fill_and_complete(test, ctx, 0x5678);
	KUNIT_ASSERT_EQ(test, vb2t_dqbuf_index(ctx, &index, NULL), 0);
	KUNIT_EXPECT_EQ(test, user_word(test, a), 0x5678);

	/* The same pointer with another length: pinned again. */
	vb2t_log_reset(ctx);
	KUNIT_ASSERT_EQ(test, qbuf_userptr(ctx, 0, a, 2 * PLANE), 0);
	KUNIT_EXPECT_STREQ(test, vb2t_log_of(ctx, 0),
			   "buf_cleanup put_userptr get_userptr buf_init buf_prepare buf_queue");
	fill_and_complete(test, ctx, 0x4321);
	vb2t_init_buffer(ctx, &vb, NULL, 0);
	KUNIT_ASSERT_EQ(test, vb2t_dqbuf(ctx, &vb), 0);
	KUNIT_EXPECT_EQ(test, vb.m.userptr, a);
	KUNIT_EXPECT_EQ(test, vb.length, 2 * PLANE);
	KUNIT_EXPECT_EQ(test, user_word(test, a), 0x4321);

	/* Another pointer: the old pages go, after buf_cleanup. */
	vb2t_log_reset(ctx);
	KUNIT_ASSERT_EQ(test, qbuf_userptr(ctx, 0, b, PLANE), 0);
	KUNIT_EXPECT_STREQ(test, vb2t_log_of(ctx, 0),
			   "buf_cleanup put_userptr get_userptr buf_init buf_prepare buf_queue");
	fill_and_complete(test, ctx, 0x9abc);
	KUNIT_ASSERT_EQ(test, vb2t_dqbuf_index(ctx, &index, NULL), 0);
	KUNIT_EXPECT_EQ(test, user_word(test, b), 0x9abc);
	KUNIT_EXPECT_EQ(test, user_word(test, a), 0x4321);

	vb2t_release(ctx);
	KUNIT_EXPECT_EQ(test, vb2t_count(ctx, VB2T_PUT_USERPTR),
			vb2t_count(ctx, VB2T_GET_USERPTR));
}

/* Bad pointers and lengths fail; the buffer stays usable. */
static void vb2_mem_userptr_bad(struct kunit *test)
{
	struct vb2t_ctx *ctx = userptr_ctx(test);
	unsigned long a = vb2t_user_mem(test, PLANE);
	int ret;

	/* Shorter than the plane: refused before anything is pinned. */
	KUNIT_EXPECT_EQ(test, qbuf_userptr(ctx, 0, a, PLANE - 1), -EINVAL);
	KUNIT_EXPECT_EQ(test, vb2t_count(ctx, VB2T_GET_USERPTR), 0);

	/* Not mapped. */
	ret = qbuf_userptr(ctx, 0, PAGE_SIZE, PLANE);
	KUNIT_EXPECT_LT(test, ret, 0);
	KUNIT_EXPECT_EQ(test, vb2t_count(ctx, VB2T_GET_USERPTR), 1);
	/* Mapped only partly: the second page lies beyond the mapping. */
	ret = qbuf_userptr(ctx, 0, a + PAGE_SIZE, PLANE);
	KUNIT_EXPECT_LT(test, ret, 0);
	/* A kernel address. */
	ret = qbuf_userptr(ctx, 0, (unsigned long)ctx, PLANE);
	KUNIT_EXPECT_LT(test, ret, 0);
	KUNIT_EXPECT_EQ(test, vb2t_state(ctx, 0), VB2_BUF_STATE_DEQUEUED);
	KUNIT_EXPECT_EQ(test, vb2t_count(ctx, VB2T_BUF_INIT), 0);
	KUNIT_EXPECT_EQ(test, vb2t_count(ctx, VB2T_BUF_PREPARE), 0);

	/* buf_init failing on new user memory: the pages are released. */
	vb2t_fail(ctx, VB2T_BUF_INIT, 1, -ENOMEM);
	KUNIT_EXPECT_EQ(test, qbuf_userptr(ctx, 0, a, PLANE), -ENOMEM);
	KUNIT_EXPECT_EQ(test, vb2t_count(ctx, VB2T_PUT_USERPTR), 1);
	KUNIT_EXPECT_EQ(test, ctx->live_mem, 0);

	/* And the buffer still works. */
	KUNIT_EXPECT_EQ(test, qbuf_userptr(ctx, 0, a, PLANE), 0);
	KUNIT_EXPECT_EQ(test, vb2t_state(ctx, 0), VB2_BUF_STATE_QUEUED);
}

/* Multi-planar USERPTR: a bad second plane releases the first one. */
static void vb2_mem_userptr_mplane_unwind(struct kunit *test)
{
	struct vb2t_config cfg = {
		.type = V4L2_BUF_TYPE_VIDEO_CAPTURE_MPLANE, .num_planes = 2,
		.io_modes = VB2_USERPTR, .backend = &vb2_vmalloc_memops,
		.size = PLANE,
	};
	struct vb2t_ctx *ctx = vb2t_ctx_create(test, &cfg);
	unsigned long a = vb2t_user_mem(test, 2 * PLANE);
	struct v4l2_plane planes[VB2_MAX_PLANES];
	unsigned int count = 1;
	struct v4l2_buffer b;

	KUNIT_ASSERT_EQ(test, vb2t_reqbufs(ctx, V4L2_MEMORY_USERPTR, &count), 0);
	vb2t_init_buffer(ctx, &b, planes, 0);
	planes[0].m.userptr = a;
	planes[0].length = PLANE;
	planes[1].m.userptr = PAGE_SIZE;
	planes[1].length = PLANE;
	KUNIT_EXPECT_LT(test, vb2t_qbuf(ctx, &b), 0);
	KUNIT_EXPECT_EQ(test, vb2t_count(ctx, VB2T_GET_USERPTR), 2);
	KUNIT_EXPECT_EQ(test, vb2t_count(ctx, VB2T_PUT_USERPTR), 1);
	KUNIT_EXPECT_EQ(test, vb2t_count(ctx, VB2T_BUF_INIT), 0);
	KUNIT_EXPECT_EQ(test, ctx->live_mem, 0);
	KUNIT_EXPECT_EQ(test, vb2t_state(ctx, 0), VB2_BUF_STATE_DEQUEUED);

	vb2t_init_buffer(ctx, &b, planes, 0);
	planes[0].m.userptr = a;
	planes[0].length = PLANE;
	planes[1].m.userptr = a + PLANE;
	planes[1].length = PLANE;
	KUNIT_EXPECT_EQ(test, vb2t_qbuf(ctx, &b), 0);
	KUNIT_EXPECT_EQ(test, ctx->live_mem, 2);
}

/* REQBUFS(0) and a new memory model release the pinned pages. */
static void vb2_mem_userptr_release(struct kunit *test)
{
	struct vb2t_ctx *ctx = userptr_ctx(test);
	unsigned long a = vb2t_user_mem(test, 2 * PLANE);
	unsigned int count = 0;

	KUNIT_ASSERT_EQ(test, qbuf_userptr(ctx, 0, a, PLANE), 0);
	KUNIT_ASSERT_EQ(test, qbuf_userptr(ctx, 1, a + PLANE, PLANE), 0);
	KUNIT_EXPECT_EQ(test, ctx->live_mem, 2);
	KUNIT_ASSERT_EQ(test, vb2t_reqbufs(ctx, V4L2_MEMORY_USERPTR, &count), 0);
	KUNIT_EXPECT_EQ(test, vb2t_count(ctx, VB2T_PUT_USERPTR), 2);
	KUNIT_EXPECT_EQ(test, vb2t_count(ctx, VB2T_BUF_CLEANUP), 2);
	KUNIT_EXPECT_EQ(test, vb2t_count(ctx, VB2T_BUF_FINISH), 2);
	KUNIT_EXPECT_EQ(test, ctx->live_mem, 0);
}

/* Frees the pages of vb2_mem_frame_vector_pfns(), after its vector. */
static void free_page_action(void *page)
{
	__free_page(page);
}

/* Empties and frees a vector, whatever a failed assertion left in it. */
static void destroy_vector_action(void *vec)
{
	vb2_destroy_framevec(vec);
}

/*
 * The frame vector API (<media/frame_vector.h>) beyond what the allocators
 * use: a vector of pages switched to PFNs and back holds the same frames,
 * each conversion is a no-op on a vector that already has the form asked
 * for, a PFN without a struct page makes frame_vector_to_pages() fail and
 * leave the vector as it was, and a vector that pinned nothing can be
 * emptied and freed. No allocator fills a vector with PFNs (only pages are
 * pinned), so this case is what reaches those paths. Also the limits: no
 * vector larger than kvmalloc() allows, and pinning no frame is no error.
 */
/*
 * vb2_create_framevec() of an empty range, of one that wraps around the
 * address space, or of more pages than a frame vector counts: -EINVAL,
 * before anything is pinned.
 */
static void vb2_mem_frame_vector_bad_range(struct kunit *test)
{
	const unsigned long start = 16 * PAGE_SIZE;
	struct frame_vector *vec;

	vec = vb2_create_framevec(start, 0, true);
	KUNIT_EXPECT_EQ(test, PTR_ERR_OR_ZERO(vec), -EINVAL);
	if (!IS_ERR(vec))
		vb2_destroy_framevec(vec);
	vec = vb2_create_framevec(start, ULONG_MAX - PAGE_SIZE, false);
	KUNIT_EXPECT_EQ(test, PTR_ERR_OR_ZERO(vec), -EINVAL);
	if (!IS_ERR(vec))
		vb2_destroy_framevec(vec);
#if BITS_PER_LONG == 64
	/* 2^32 + 1 pages, without wrapping. */
	vec = vb2_create_framevec(start, (1UL << (32 + PAGE_SHIFT)) + 1, false);
	KUNIT_EXPECT_EQ(test, PTR_ERR_OR_ZERO(vec), -EINVAL);
	if (!IS_ERR(vec))
		vb2_destroy_framevec(vec);
#endif
}

static void vb2_mem_frame_vector_pfns(struct kunit *test)
{
	/* Not a frame of this machine: past every memory section there is. */
	const unsigned long bad = ULONG_MAX >> PAGE_SHIFT;
	struct page *pages[3];
	struct frame_vector *vec;
	unsigned long *pfns;
	unsigned int i;

	KUNIT_ASSERT_FALSE(test, pfn_valid(bad));
	/* Larger than kvmalloc() allows: refused without trying. */
	KUNIT_EXPECT_NULL(test, frame_vector_create(UINT_MAX));
	vec = frame_vector_create(ARRAY_SIZE(pages) + 1);
	KUNIT_ASSERT_NOT_NULL(test, vec);
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test,
							destroy_vector_action,
							vec), 0);
	/* Pinning nothing is no error. */
	KUNIT_EXPECT_EQ(test, get_vaddr_frames(0, 0, false, vec), 0);
	KUNIT_EXPECT_EQ(test, frame_vector_count(vec), 0);
	for (i = 0; i < ARRAY_SIZE(pages); i++) {
		pages[i] = alloc_page(GFP_KERNEL);
		KUNIT_ASSERT_NOT_NULL(test, pages[i]);
		KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test,
								free_page_action,
								pages[i]), 0);
		vec->ptrs[i] = pages[i];
	}
	vec->nr_frames = ARRAY_SIZE(pages);

	/* Pages to PFNs, twice: the second call changes nothing. */
	pfns = frame_vector_pfns(vec);
	KUNIT_EXPECT_PTR_EQ(test, (void *)pfns, (void *)vec->ptrs);
	KUNIT_EXPECT_TRUE(test, vec->is_pfns);
	frame_vector_to_pfns(vec);
	KUNIT_EXPECT_TRUE(test, vec->is_pfns);
	KUNIT_EXPECT_EQ(test, frame_vector_count(vec), ARRAY_SIZE(pages));
	for (i = 0; i < ARRAY_SIZE(pages); i++)
		KUNIT_EXPECT_EQ(test, pfns[i], page_to_pfn(pages[i]));

	/* And back, twice. */
	KUNIT_EXPECT_PTR_EQ(test, (void *)frame_vector_pages(vec),
			    (void *)vec->ptrs);
	KUNIT_EXPECT_FALSE(test, vec->is_pfns);
	KUNIT_EXPECT_EQ(test, frame_vector_to_pages(vec), 0);
	KUNIT_EXPECT_FALSE(test, vec->is_pfns);
	for (i = 0; i < ARRAY_SIZE(pages); i++)
		KUNIT_EXPECT_PTR_EQ(test, (struct page *)vec->ptrs[i], pages[i]);

	/* One PFN without a page: refused, nothing converted. */
	pfns = frame_vector_pfns(vec);
	pfns[ARRAY_SIZE(pages)] = bad;
	vec->nr_frames = ARRAY_SIZE(pages) + 1;
	KUNIT_EXPECT_EQ(test, frame_vector_to_pages(vec), -EINVAL);
	KUNIT_EXPECT_PTR_EQ(test, (void *)frame_vector_pages(vec),
			    ERR_PTR(-EINVAL));
	KUNIT_EXPECT_TRUE(test, vec->is_pfns);
	for (i = 0; i < ARRAY_SIZE(pages); i++)
		KUNIT_EXPECT_EQ(test, pfns[i], page_to_pfn(pages[i]));
	KUNIT_EXPECT_EQ(test, pfns[ARRAY_SIZE(pages)], bad);

	/* Nothing was pinned: emptying the vector only forgets the frames. */
	put_vaddr_frames(vec);
	KUNIT_EXPECT_EQ(test, frame_vector_count(vec), 0);
	for (i = 0; i < ARRAY_SIZE(pages); i++)
		KUNIT_EXPECT_EQ(test, page_ref_count(pages[i]), 1);
	kunit_release_action(test, destroy_vector_action, vec);
}

/* ---------------------------------------------------------------------- */
/* DMABUF                                                                 */
/* ---------------------------------------------------------------------- */

static struct vb2t_ctx *exporter_ctx(struct kunit *test, unsigned int size,
				     unsigned int n)
{
	struct vb2t_config cfg = {
		.type = CAP, .io_modes = VB2_MMAP,
		.backend = &vb2_vmalloc_memops, .size = size,
	};
	struct vb2t_ctx *ctx = vb2t_ctx_create(test, &cfg);
	unsigned int count = n;

	KUNIT_ASSERT_EQ(test, vb2t_reqbufs(ctx, V4L2_MEMORY_MMAP, &count), 0);
	KUNIT_ASSERT_EQ(test, count, n);
	return ctx;
}

/* Export plane 0 of a buffer through the core API. */
static int export_fd(struct kunit *test, struct vb2t_ctx *ctx,
		     unsigned int index)
{
	int fd = -1, ret;

	mutex_lock(&ctx->mutex);
	ret = vb2_core_expbuf(&ctx->q, &fd, ctx->q.type,
			      vb2_get_buffer(&ctx->q, index), 0,
			      O_CLOEXEC | O_RDWR);
	mutex_unlock(&ctx->mutex);
	KUNIT_ASSERT_EQ(test, ret, 0);
	KUNIT_ASSERT_GE(test, fd, 0);
	vb2t_close_fd_at_exit(test, fd);
	return fd;
}

static struct vb2t_ctx *importer_ctx(struct kunit *test)
{
	struct vb2t_config cfg = {
		.type = OUT, .io_modes = VB2_DMABUF,
		.backend = &vb2_vmalloc_memops, .size = PLANE,
	};
	struct vb2t_ctx *ctx = vb2t_ctx_create(test, &cfg);
	unsigned int count = 2;

	KUNIT_ASSERT_EQ(test, vb2t_reqbufs(ctx, V4L2_MEMORY_DMABUF, &count), 0);
	KUNIT_ASSERT_EQ(test, count, 2);
	return ctx;
}

static int qbuf_dmabuf(struct vb2t_ctx *ctx, unsigned int index, int fd)
{
	struct v4l2_buffer b;

	vb2t_init_buffer(ctx, &b, NULL, index);
	b.memory = V4L2_MEMORY_DMABUF;
	b.m.fd = fd;
	b.length = PLANE;
	b.bytesused = PLANE;
	return vb2t_qbuf(ctx, &b);
}

/*
 * An allocator that returns NULL where it means an error pointer. None in
 * the tree does, but the core takes NULL for a failure, not for memory:
 * REQBUFS allocates nothing and fails with ENOMEM, QBUF of USERPTR or
 * DMABUF memory fails with EINVAL, and the buffer takes the memory given
 * next time.
 */
static void vb2_mem_null_from_allocator(struct kunit *test)
{
	struct vb2t_config cfg = {
		.type = CAP, .io_modes = VB2_MMAP,
		.backend = &vb2_vmalloc_memops, .size = PLANE,
	};
	struct vb2t_ctx *mmap = vb2t_ctx_create(test, &cfg);
	struct vb2t_ctx *user = userptr_ctx(test);
	struct vb2t_ctx *exp = exporter_ctx(test, PLANE, 1);
	struct vb2t_ctx *imp = importer_ctx(test);
	unsigned long ptr = vb2t_user_mem(test, PLANE);
	int fd = export_fd(test, exp, 0);
	unsigned int count = 2;

	/* A failure with error 0 makes the fake allocator return NULL. */
	mmap->fail[VB2T_ALLOC] = (struct vb2t_fail){ .at = 1, .sticky = true };
	KUNIT_EXPECT_EQ(test, vb2t_reqbufs(mmap, V4L2_MEMORY_MMAP, &count), -ENOMEM);
	KUNIT_EXPECT_EQ(test, vb2_get_num_buffers(&mmap->q), 0);
	KUNIT_EXPECT_EQ(test, vb2t_count(mmap, VB2T_BUF_INIT), 0);

	user->fail[VB2T_GET_USERPTR] = (struct vb2t_fail){ .at = 1 };
	KUNIT_EXPECT_EQ(test, qbuf_userptr(user, 0, ptr, PLANE), -EINVAL);
	KUNIT_EXPECT_EQ(test, vb2t_count(user, VB2T_BUF_INIT), 0);
	KUNIT_EXPECT_EQ(test, qbuf_userptr(user, 0, ptr, PLANE), 0);
	KUNIT_EXPECT_EQ(test, vb2t_count(user, VB2T_GET_USERPTR), 2);

	imp->fail[VB2T_ATTACH_DMABUF] = (struct vb2t_fail){ .at = 1 };
	KUNIT_EXPECT_EQ(test, qbuf_dmabuf(imp, 0, fd), -EINVAL);
	KUNIT_EXPECT_EQ(test, vb2t_count(imp, VB2T_MAP_DMABUF), 0);
	KUNIT_EXPECT_EQ(test, qbuf_dmabuf(imp, 0, fd), 0);
	KUNIT_EXPECT_EQ(test, vb2t_count(imp, VB2T_MAP_DMABUF), 1);

	vb2t_release(user);
	vb2t_release(imp);
	KUNIT_EXPECT_EQ(test, vb2t_count(user, VB2T_PUT_USERPTR), 1);
	KUNIT_EXPECT_EQ(test, vb2t_count(imp, VB2T_DETACH_DMABUF), 1);
}

/*
 * A dma-buf queued again with another length is attached and mapped
 * again: the plane's length is part of what the driver was given.
 */
static void vb2_mem_dmabuf_same_fd_new_length(struct kunit *test)
{
	struct vb2t_ctx *exp = exporter_ctx(test, 2 * PLANE, 1);
	struct vb2t_ctx *imp = importer_ctx(test);
	int fd = export_fd(test, exp, 0);
	struct v4l2_buffer b;

	KUNIT_ASSERT_EQ(test, qbuf_dmabuf(imp, 0, fd), 0);
	KUNIT_ASSERT_EQ(test, vb2t_streamon(imp), 0);
	KUNIT_ASSERT_TRUE(test, vb2t_complete_next(imp, VB2_BUF_STATE_DONE));
	KUNIT_ASSERT_EQ(test, vb2t_dqbuf_index(imp, NULL, NULL), 0);

	vb2t_log_reset(imp);
	vb2t_init_buffer(imp, &b, NULL, 0);
	b.memory = V4L2_MEMORY_DMABUF;
	b.m.fd = fd;
	b.length = 2 * PLANE;
	b.bytesused = PLANE;
	KUNIT_ASSERT_EQ(test, vb2t_qbuf(imp, &b), 0);
	KUNIT_EXPECT_STREQ(test, vb2t_log_of(imp, 0),
			   "buf_out_validate buf_cleanup unmap_dmabuf detach_dmabuf attach_dmabuf map_dmabuf buf_init buf_prepare buf_queue");
	KUNIT_EXPECT_EQ(test, vb2_get_buffer(&imp->q, 0)->planes[0].length,
			2 * PLANE);
}

/*
 * Without &vb2_mem_ops.num_users the core cannot see that a buffer is
 * exported: QUERYBUF leaves V4L2_BUF_FLAG_MAPPED clear and
 * vb2_buffer_in_use() says no.
 */
static void vb2_mem_no_num_users(struct kunit *test)
{
	struct vb2t_ctx *exp = exporter_ctx(test, PLANE, 1);
	struct vb2_buffer *vb = vb2_get_buffer(&exp->q, 0);
	struct v4l2_buffer b;

	export_fd(test, exp, 0);
	vb2t_init_buffer(exp, &b, NULL, 0);
	KUNIT_ASSERT_EQ(test, vb2t_querybuf(exp, &b), 0);
	KUNIT_EXPECT_TRUE(test, b.flags & V4L2_BUF_FLAG_MAPPED);
	KUNIT_EXPECT_TRUE(test, vb2_buffer_in_use(&exp->q, vb));

	exp->mem_ops.num_users = NULL;
	vb2t_init_buffer(exp, &b, NULL, 0);
	KUNIT_ASSERT_EQ(test, vb2t_querybuf(exp, &b), 0);
	KUNIT_EXPECT_FALSE(test, b.flags & V4L2_BUF_FLAG_MAPPED);
	KUNIT_EXPECT_FALSE(test, vb2_buffer_in_use(&exp->q, vb));
}

/*
 * An output buffer queued with bytesused 0 carries its whole length,
 * unless the driver set allow_zero_bytesused (old codecs: end of stream).
 */
static void vb2_mem_zero_bytesused(struct kunit *test)
{
	struct vb2t_config cfg = {
		.type = OUT, .io_modes = VB2_MMAP,
		.backend = &vb2_vmalloc_memops, .size = PLANE,
	};
	unsigned int allow;

	for (allow = 0; allow < 2; allow++) {
		struct vb2t_ctx *ctx = vb2t_ctx_create(test, &cfg);
		unsigned int count = 1;
		struct v4l2_buffer b;

		ctx->q.allow_zero_bytesused = allow;
		KUNIT_ASSERT_EQ(test, vb2t_reqbufs(ctx, V4L2_MEMORY_MMAP, &count), 0);
		vb2t_init_buffer(ctx, &b, NULL, 0);
		b.bytesused = 0;
		KUNIT_ASSERT_EQ(test, vb2t_qbuf(ctx, &b), 0);
		KUNIT_EXPECT_EQ(test,
				vb2_get_plane_payload(vb2_get_buffer(&ctx->q, 0), 0),
				allow ? 0 : PLANE);
	}
}

static void vb2_mem_dmabuf_export_import(struct kunit *test)
{
	struct vb2t_ctx *exp = exporter_ctx(test, PLANE, 2);
	struct vb2t_ctx *imp = importer_ctx(test);
	int fd0 = export_fd(test, exp, 0);
	int fd1 = export_fd(test, exp, 1);
	struct v4l2_buffer b;
	u32 *src, *dst;

	/* The exporter's buffer is in use while exported. */
	vb2t_init_buffer(exp, &b, NULL, 0);
	KUNIT_ASSERT_EQ(test, vb2t_querybuf(exp, &b), 0);
	KUNIT_EXPECT_TRUE(test, b.flags & V4L2_BUF_FLAG_MAPPED);

	src = vb2_plane_vaddr(vb2_get_buffer(&exp->q, 0), 0);
	KUNIT_ASSERT_NOT_NULL(test, src);
	src[0] = 0xd0d0;

	KUNIT_ASSERT_EQ(test, qbuf_dmabuf(imp, 0, fd0), 0);
	KUNIT_EXPECT_STREQ(test, vb2t_log_of(imp, 0),
			   "buf_out_validate attach_dmabuf map_dmabuf buf_init buf_prepare");
	KUNIT_ASSERT_EQ(test, vb2t_streamon(imp), 0);
	/* The importer sees the exporter's memory. */
	dst = vb2_plane_vaddr(vb2t_peek(imp), 0);
	KUNIT_ASSERT_NOT_NULL(test, dst);
	KUNIT_EXPECT_EQ(test, dst[0], 0xd0d0);
	KUNIT_ASSERT_TRUE(test, vb2t_complete_next(imp, VB2_BUF_STATE_DONE));
	vb2t_init_buffer(imp, &b, NULL, 0);
	b.memory = V4L2_MEMORY_DMABUF;
	KUNIT_ASSERT_EQ(test, vb2t_dqbuf(imp, &b), 0);
	KUNIT_EXPECT_EQ(test, b.m.fd, fd0);
	KUNIT_EXPECT_EQ(test, b.length, PLANE);
	/* Dequeued, the dma-buf stays mapped for the driver. */
	KUNIT_EXPECT_EQ(test, vb2t_count(imp, VB2T_UNMAP_DMABUF), 0);

	/* The same fd: neither attached nor mapped again. */
	vb2t_log_reset(imp);
	KUNIT_ASSERT_EQ(test, qbuf_dmabuf(imp, 0, fd0), 0);
	KUNIT_EXPECT_STREQ(test, vb2t_log_of(imp, 0),
			   "buf_out_validate buf_prepare buf_queue");
	KUNIT_ASSERT_TRUE(test, vb2t_complete_next(imp, VB2_BUF_STATE_DONE));
	KUNIT_ASSERT_EQ(test, vb2t_dqbuf_index(imp, NULL, NULL), 0);

	/* Another dma-buf: the old one is detached first. */
	vb2t_log_reset(imp);
	KUNIT_ASSERT_EQ(test, qbuf_dmabuf(imp, 0, fd1), 0);
	KUNIT_EXPECT_STREQ(test, vb2t_log_of(imp, 0),
			   "buf_out_validate buf_cleanup unmap_dmabuf detach_dmabuf attach_dmabuf map_dmabuf buf_init buf_prepare buf_queue");

	vb2t_release(imp);
	KUNIT_EXPECT_EQ(test, vb2t_count(imp, VB2T_ATTACH_DMABUF),
			vb2t_count(imp, VB2T_DETACH_DMABUF));
	KUNIT_EXPECT_EQ(test, vb2t_count(imp, VB2T_MAP_DMABUF),
			vb2t_count(imp, VB2T_UNMAP_DMABUF));
}

static void vb2_mem_dmabuf_bad(struct kunit *test)
{
	struct vb2t_ctx *small = exporter_ctx(test, PAGE_SIZE, 1);
	struct vb2t_ctx *exp = exporter_ctx(test, PLANE, 1);
	struct vb2t_ctx *imp = importer_ctx(test);
	int fd_small = export_fd(test, small, 0);
	int fd = export_fd(test, exp, 0);

	/* Smaller than the length asked for: -EFAULT, as in 6.12. */
	KUNIT_EXPECT_EQ(test, qbuf_dmabuf(imp, 1, fd_small), -EFAULT);
	/* Not a dma-buf, and not a file at all. */
	KUNIT_EXPECT_EQ(test, qbuf_dmabuf(imp, 1, -1), -EINVAL);
	KUNIT_EXPECT_EQ(test, qbuf_dmabuf(imp, 1, 100000), -EINVAL);
	KUNIT_EXPECT_EQ(test, vb2t_count(imp, VB2T_ATTACH_DMABUF), 0);
	KUNIT_EXPECT_EQ(test, vb2t_state(imp, 1), VB2_BUF_STATE_DEQUEUED);

	/* The attach or the map failing. */
	vb2t_fail(imp, VB2T_ATTACH_DMABUF, 1, -ENOMEM);
	KUNIT_EXPECT_EQ(test, qbuf_dmabuf(imp, 1, fd), -ENOMEM);
	vb2t_fail(imp, VB2T_MAP_DMABUF, 1, -EIO);
	KUNIT_EXPECT_EQ(test, qbuf_dmabuf(imp, 1, fd), -EIO);
	KUNIT_EXPECT_EQ(test, imp->live_mem, 0);
	KUNIT_EXPECT_EQ(test, vb2t_count(imp, VB2T_BUF_PREPARE), 0);

	/* The buffer is still usable. */
	KUNIT_EXPECT_EQ(test, qbuf_dmabuf(imp, 1, fd), 0);
	KUNIT_EXPECT_EQ(test, vb2t_state(imp, 1), VB2_BUF_STATE_QUEUED);
}

/* The exporter frees its buffers; the exported memory stays usable. */
static void vb2_mem_dmabuf_orphan(struct kunit *test)
{
	struct vb2t_ctx *exp = exporter_ctx(test, PLANE, 1);
	struct vb2t_ctx *imp = importer_ctx(test);
	int fd = export_fd(test, exp, 0);
	unsigned int count = 0;

	KUNIT_EXPECT_EQ(test, vb2t_reqbufs(exp, V4L2_MEMORY_MMAP, &count), 0);
	KUNIT_EXPECT_EQ(test, vb2_get_num_buffers(&exp->q), 0);
	KUNIT_EXPECT_EQ(test, qbuf_dmabuf(imp, 0, fd), 0);
	KUNIT_ASSERT_EQ(test, vb2t_streamon(imp), 0);
	KUNIT_EXPECT_NOT_NULL(test, vb2_plane_vaddr(vb2t_peek(imp), 0));
}

/* Two planes on one dma-buf share one attachment and one mapping. */
static void vb2_mem_dmabuf_same_in_two_planes(struct kunit *test)
{
	struct vb2t_config cfg = {
		.type = V4L2_BUF_TYPE_VIDEO_CAPTURE_MPLANE, .num_planes = 2,
		.io_modes = VB2_DMABUF, .backend = &vb2_vmalloc_memops,
		.size = PLANE,
	};
	struct vb2t_ctx *exp = exporter_ctx(test, PLANE, 1);
	struct vb2t_ctx *imp = vb2t_ctx_create(test, &cfg);
	struct v4l2_plane planes[VB2_MAX_PLANES];
	int fd = export_fd(test, exp, 0);
	unsigned int count = 1;
	struct vb2_buffer *vb;
	struct v4l2_buffer b;

	KUNIT_ASSERT_EQ(test, vb2t_reqbufs(imp, V4L2_MEMORY_DMABUF, &count), 0);
	vb2t_init_buffer(imp, &b, planes, 0);
	planes[0].m.fd = fd;
	planes[1].m.fd = fd;
	planes[0].length = PLANE;
	planes[1].length = PLANE;
	KUNIT_ASSERT_EQ(test, vb2t_qbuf(imp, &b), 0);
	KUNIT_EXPECT_EQ(test, vb2t_count(imp, VB2T_ATTACH_DMABUF), 1);
	KUNIT_EXPECT_EQ(test, vb2t_count(imp, VB2T_MAP_DMABUF), 1);
	vb = vb2_get_buffer(&imp->q, 0);
	KUNIT_EXPECT_PTR_EQ(test, vb2_plane_vaddr(vb, 0), vb2_plane_vaddr(vb, 1));

	KUNIT_ASSERT_EQ(test, vb2t_streamon(imp), 0);
	KUNIT_ASSERT_TRUE(test, vb2t_complete_next(imp, VB2_BUF_STATE_DONE));
	vb2t_init_buffer(imp, &b, planes, 0);
	KUNIT_ASSERT_EQ(test, vb2t_dqbuf(imp, &b), 0);
	KUNIT_EXPECT_EQ(test, planes[1].m.fd, fd);
	KUNIT_EXPECT_EQ(test, vb2t_count(imp, VB2T_UNMAP_DMABUF), 0);

	vb2t_release(imp);
	KUNIT_EXPECT_EQ(test, vb2t_count(imp, VB2T_DETACH_DMABUF), 1);
}

static long dmabuf_refs(struct kunit *test, int fd)
{
	struct dma_buf *dbuf = dma_buf_get(fd);
	long refs;

	KUNIT_ASSERT_FALSE(test, IS_ERR(dbuf));
	refs = file_count(dbuf->file);
	dma_buf_put(dbuf);
	return refs - 1;
}

static int qbuf_dmabuf_mp(struct vb2t_ctx *ctx, int fd0, int fd1)
{
	struct v4l2_plane planes[VB2_MAX_PLANES];
	struct v4l2_buffer b;

	vb2t_init_buffer(ctx, &b, planes, 0);
	planes[0].m.fd = fd0;
	planes[0].length = PLANE;
	planes[1].m.fd = fd1;
	planes[1].length = PLANE;
	return vb2t_qbuf(ctx, &b);
}

/* Multi-planar DMABUF: whatever fails, no attachment or reference leaks. */
static void vb2_mem_dmabuf_mplane_unwind(struct kunit *test)
{
	struct vb2t_config cfg = {
		.type = V4L2_BUF_TYPE_VIDEO_CAPTURE_MPLANE, .num_planes = 2,
		.io_modes = VB2_DMABUF, .backend = &vb2_vmalloc_memops,
		.size = PLANE,
	};
	struct vb2t_ctx *exp = exporter_ctx(test, PLANE, 2);
	struct vb2t_ctx *imp = vb2t_ctx_create(test, &cfg);
	int fd0 = export_fd(test, exp, 0);
	int fd1 = export_fd(test, exp, 1);
	long refs0 = dmabuf_refs(test, fd0);
	unsigned int count = 1;

	KUNIT_ASSERT_EQ(test, vb2t_reqbufs(imp, V4L2_MEMORY_DMABUF, &count), 0);

	/* A bad second fd: nothing is attached, no reference is kept. */
	KUNIT_EXPECT_EQ(test, qbuf_dmabuf_mp(imp, fd0, -1), -EINVAL);
	KUNIT_EXPECT_EQ(test, vb2t_count(imp, VB2T_ATTACH_DMABUF), 0);
	KUNIT_EXPECT_EQ(test, dmabuf_refs(test, fd0), refs0);

	/* The second attach fails: the first is detached. */
	vb2t_fail(imp, VB2T_ATTACH_DMABUF, 2, -ENOMEM);
	KUNIT_EXPECT_EQ(test, qbuf_dmabuf_mp(imp, fd0, fd1), -ENOMEM);
	KUNIT_EXPECT_EQ(test, vb2t_count(imp, VB2T_DETACH_DMABUF), 1);
	KUNIT_EXPECT_EQ(test, dmabuf_refs(test, fd0), refs0);

	/* The second map fails: the first is unmapped, both detached. */
	vb2t_fail(imp, VB2T_MAP_DMABUF, 2, -EIO);
	KUNIT_EXPECT_EQ(test, qbuf_dmabuf_mp(imp, fd0, fd1), -EIO);
	KUNIT_EXPECT_EQ(test, vb2t_count(imp, VB2T_UNMAP_DMABUF), 1);
	KUNIT_EXPECT_EQ(test, vb2t_count(imp, VB2T_DETACH_DMABUF), 3);
	KUNIT_EXPECT_EQ(test, imp->live_mem, 0);
	KUNIT_EXPECT_EQ(test, dmabuf_refs(test, fd0), refs0);
	KUNIT_EXPECT_EQ(test, vb2t_state(imp, 0), VB2_BUF_STATE_DEQUEUED);

	/* And then it works, holding one reference per dma-buf. */
	KUNIT_EXPECT_EQ(test, qbuf_dmabuf_mp(imp, fd0, fd1), 0);
	KUNIT_EXPECT_EQ(test, dmabuf_refs(test, fd0), refs0 + 1);
	vb2t_release(imp);
	KUNIT_EXPECT_EQ(test, dmabuf_refs(test, fd0), refs0);
}

/* ---------------------------------------------------------------------- */
/* read() emulation                                                       */
/* ---------------------------------------------------------------------- */

static ssize_t do_read(struct vb2t_ctx *ctx, unsigned long buf, size_t len)
{
	loff_t pos = 0;
	ssize_t ret;

	mutex_lock(&ctx->mutex);
	ret = vb2_read(&ctx->q, (char __user *)buf, len, &pos, 1);
	mutex_unlock(&ctx->mutex);
	return ret;
}

static struct vb2t_ctx *read_ctx(struct kunit *test)
{
	struct vb2t_config cfg = {
		.type = CAP, .io_modes = VB2_MMAP | VB2_READ, .size = PLANE,
	};

	return vb2t_ctx_create(test, &cfg);
}

static void vb2_mem_read(struct kunit *test)
{
	struct vb2t_ctx *ctx = read_ctx(test);
	unsigned long buf = vb2t_user_mem(test, PLANE);
	unsigned int count = 2;
	ssize_t n;

	/* The first read() sets everything up; nothing is there yet. */
	KUNIT_EXPECT_EQ(test, do_read(ctx, buf, PLANE), -EAGAIN);
	KUNIT_EXPECT_TRUE(test, vb2_fileio_is_active(&ctx->q));
	KUNIT_EXPECT_TRUE(test, vb2_is_streaming(&ctx->q));
	/* min_reqbufs_allocation: one buffer, without min_queued_buffers. */
	KUNIT_EXPECT_EQ(test, vb2_get_num_buffers(&ctx->q), 1);
	KUNIT_EXPECT_EQ(test, vb2t_owned(ctx), vb2_get_num_buffers(&ctx->q));

	fill_and_complete(test, ctx, 0xbeef);
	n = do_read(ctx, buf, PLANE);
	KUNIT_EXPECT_EQ(test, n, PLANE);
	KUNIT_EXPECT_EQ(test, user_word(test, buf), 0xbeef);
	KUNIT_EXPECT_EQ(test, user_word(test, buf + PLANE - 4), 0xbef0);
	/* The buffer went back to the driver. */
	KUNIT_EXPECT_EQ(test, vb2t_owned(ctx), vb2_get_num_buffers(&ctx->q));

	/* Streaming ioctls are refused while read() owns the queue. */
	KUNIT_EXPECT_EQ(test, vb2t_reqbufs(ctx, V4L2_MEMORY_MMAP, &count), -EBUSY);
	KUNIT_EXPECT_EQ(test, vb2t_create_bufs(ctx, V4L2_MEMORY_MMAP, 1, PLANE,
					       NULL, NULL), -EBUSY);
	KUNIT_EXPECT_EQ(test, vb2t_qbuf_mmap(ctx, 0), -EBUSY);
	KUNIT_EXPECT_EQ(test, vb2t_dqbuf_index(ctx, NULL, NULL), -EBUSY);
	KUNIT_EXPECT_EQ(test, vb2t_streamon(ctx), -EBUSY);
	KUNIT_EXPECT_EQ(test, vb2t_streamoff(ctx), -EBUSY);
	KUNIT_EXPECT_TRUE(test, vb2_fileio_is_active(&ctx->q));

	/* Reading goes on. */
	fill_and_complete(test, ctx, 0xf00d);
	KUNIT_EXPECT_EQ(test, do_read(ctx, buf, 16), 16);
	KUNIT_EXPECT_EQ(test, user_word(test, buf), 0xf00d);
}

static ssize_t do_write(struct vb2t_ctx *ctx, unsigned long buf, size_t len)
{
	loff_t pos = 0;
	ssize_t ret;

	mutex_lock(&ctx->mutex);
	ret = vb2_write(&ctx->q, (const char __user *)buf, len, &pos, 1);
	mutex_unlock(&ctx->mutex);
	return ret;
}

/*
 * write() fills buffers in order and queues each when it is full. The
 * driver asks for two buffers, the emulation gets as many.
 */
static void vb2_mem_write(struct kunit *test)
{
	struct vb2t_config cfg = {
		.type = OUT, .io_modes = VB2_MMAP | VB2_WRITE, .size = PLANE,
		.min_reqbufs_allocation = 2,
	};
	struct vb2t_ctx *ctx = vb2t_ctx_create(test, &cfg);
	unsigned long buf = vb2t_user_mem(test, PLANE);
	u32 word = 0xabcd;
	struct vb2_buffer *vb;
	u32 *vaddr;

	KUNIT_ASSERT_EQ(test, copy_to_user((void __user *)buf, &word, 4), 0);
	KUNIT_EXPECT_EQ(test, do_write(ctx, buf, PLANE), PLANE);
	KUNIT_EXPECT_TRUE(test, vb2_fileio_is_active(&ctx->q));
	KUNIT_ASSERT_EQ(test, vb2t_owned(ctx), 1);
	vb = vb2t_peek(ctx);
	KUNIT_EXPECT_EQ(test, vb2_get_plane_payload(vb, 0), PLANE);
	vaddr = vb2_plane_vaddr(vb, 0);
	KUNIT_ASSERT_NOT_NULL(test, vaddr);
	KUNIT_EXPECT_EQ(test, vaddr[0], 0xabcd);

	/* A partial buffer stays with the writer. */
	KUNIT_EXPECT_EQ(test, do_write(ctx, buf, 16), 16);
	KUNIT_EXPECT_EQ(test, vb2t_owned(ctx), 1);
	KUNIT_EXPECT_EQ(test, do_write(ctx, buf, PLANE - 16), PLANE - 16);
	KUNIT_EXPECT_EQ(test, vb2t_owned(ctx), 2);

	/* All buffers are out: the next write waits for a returned one. */
	KUNIT_EXPECT_EQ(test, do_write(ctx, buf, 16), -EAGAIN);
	KUNIT_ASSERT_TRUE(test, vb2t_complete_next(ctx, VB2_BUF_STATE_DONE));
	KUNIT_EXPECT_EQ(test, do_write(ctx, buf, PLANE), PLANE);
	KUNIT_EXPECT_EQ(test, vb2t_owned(ctx), 2);

	/* read() on a write() queue: not supported there. */
	KUNIT_EXPECT_LT(test, do_read(ctx, buf, 16), 0);
}

/* fileio_read_once: one buffer, then end of file. */
static void vb2_mem_read_once(struct kunit *test)
{
	struct vb2t_ctx *ctx = read_ctx(test);
	unsigned long buf = vb2t_user_mem(test, PLANE);

	ctx->q.fileio_read_once = 1;
	KUNIT_EXPECT_EQ(test, do_read(ctx, buf, PLANE), -EAGAIN);
	fill_and_complete(test, ctx, 0x0dd);
	KUNIT_EXPECT_EQ(test, do_read(ctx, buf, PLANE / 2), PLANE / 2);
	KUNIT_EXPECT_EQ(test, do_read(ctx, buf, PLANE), PLANE / 2);
	KUNIT_EXPECT_EQ(test, do_read(ctx, buf, PLANE), 0);
	/* The driver was stopped and holds nothing. */
	KUNIT_EXPECT_EQ(test, vb2t_owned(ctx), 0);
	KUNIT_EXPECT_EQ(test, vb2t_count(ctx, VB2T_STOP_STREAMING), 1);
}

/* fileio_write_immediately: every write() queues its buffer (of two). */
static void vb2_mem_write_immediately(struct kunit *test)
{
	struct vb2t_config cfg = {
		.type = OUT, .io_modes = VB2_MMAP | VB2_WRITE, .size = PLANE,
		.min_reqbufs_allocation = 2,
	};
	struct vb2t_ctx *ctx = vb2t_ctx_create(test, &cfg);
	unsigned long buf = vb2t_user_mem(test, PLANE);
	struct vb2_buffer *vb;

	ctx->q.fileio_write_immediately = 1;
	KUNIT_EXPECT_EQ(test, do_write(ctx, buf, 100), 100);
	KUNIT_ASSERT_EQ(test, vb2t_owned(ctx), 1);
	vb = vb2t_peek(ctx);
	KUNIT_EXPECT_EQ(test, vb2_get_plane_payload(vb, 0), 100);
	KUNIT_EXPECT_EQ(test, do_write(ctx, buf, 200), 200);
	KUNIT_EXPECT_EQ(test, vb2t_owned(ctx), 2);
}

/* A queue streaming through ioctls does not read(). */
static void vb2_mem_read_vs_streaming(struct kunit *test)
{
	struct vb2t_ctx *ctx = read_ctx(test);
	unsigned long buf = vb2t_user_mem(test, PLANE);
	unsigned int count = 2;

	KUNIT_ASSERT_EQ(test, vb2t_reqbufs(ctx, V4L2_MEMORY_MMAP, &count), 0);
	KUNIT_EXPECT_EQ(test, do_read(ctx, buf, PLANE), -EBUSY);
	KUNIT_EXPECT_FALSE(test, vb2_fileio_is_active(&ctx->q));
	KUNIT_EXPECT_EQ(test, vb2t_qbuf_mmap(ctx, 0), 0);
	KUNIT_ASSERT_EQ(test, vb2t_streamon(ctx), 0);
	KUNIT_EXPECT_EQ(test, do_read(ctx, buf, PLANE), -EBUSY);
	KUNIT_EXPECT_EQ(test, vb2t_owned(ctx), 1);
	KUNIT_EXPECT_EQ(test, vb2_get_num_buffers(&ctx->q), 2);
}

/*
 * read() and write() a queue cannot emulate fail before anything is
 * allocated: a model not in io_modes (-EINVAL), an allocator that gives no
 * kernel mappings, buffers of more than one plane (-EBUSY).
 */
static void vb2_mem_fileio_refused(struct kunit *test)
{
	struct vb2t_config cfg = {
		.type = CAP, .io_modes = VB2_MMAP, .size = PLANE,
	};
	struct vb2t_ctx *ctx = vb2t_ctx_create(test, &cfg);
	unsigned long buf = vb2t_user_mem(test, PLANE);

	KUNIT_EXPECT_EQ(test, do_read(ctx, buf, PLANE), -EINVAL);
	KUNIT_EXPECT_EQ(test, do_write(ctx, buf, PLANE), -EINVAL);
	KUNIT_EXPECT_EQ(test, vb2t_count(ctx, VB2T_QUEUE_SETUP), 0);

	ctx->q.io_modes |= VB2_READ;
	ctx->mem_ops.vaddr = NULL;
	KUNIT_EXPECT_EQ(test, do_read(ctx, buf, PLANE), -EBUSY);
	KUNIT_EXPECT_EQ(test, vb2t_count(ctx, VB2T_QUEUE_SETUP), 0);

	cfg.type = V4L2_BUF_TYPE_VIDEO_CAPTURE_MPLANE;
	cfg.io_modes = VB2_MMAP | VB2_READ;
	cfg.num_planes = 2;
	ctx = vb2t_ctx_create(test, &cfg);
	KUNIT_EXPECT_EQ(test, do_read(ctx, buf, PLANE), -EBUSY);
	KUNIT_EXPECT_EQ(test, vb2t_count(ctx, VB2T_QUEUE_SETUP), 1);
	KUNIT_EXPECT_FALSE(test, vb2_fileio_is_active(&ctx->q));
	KUNIT_EXPECT_EQ(test, vb2_get_num_buffers(&ctx->q), 0);
	KUNIT_EXPECT_EQ(test, ctx->live_mem, 0);
}

/* The queue read() set up is gone again, and the next read() starts anew. */
static void expect_read_not_started(struct kunit *test, struct vb2t_ctx *ctx,
				    unsigned long buf)
{
	KUNIT_EXPECT_FALSE(test, vb2_fileio_is_active(&ctx->q));
	KUNIT_EXPECT_FALSE(test, vb2_is_streaming(&ctx->q));
	KUNIT_EXPECT_EQ(test, vb2_get_num_buffers(&ctx->q), 0);
	KUNIT_EXPECT_EQ(test, vb2t_owned(ctx), 0);
	KUNIT_EXPECT_EQ(test, ctx->live_mem, 0);
	KUNIT_EXPECT_EQ(test, do_read(ctx, buf, PLANE), -EAGAIN);
	KUNIT_EXPECT_TRUE(test, vb2_is_streaming(&ctx->q));
	vb2t_release(ctx);
}

/*
 * The driver's error from buf_prepare or start_streaming while read() sets
 * up is what read() returns, and the set-up is undone.
 */
static void vb2_mem_read_start_fails(struct kunit *test)
{
	struct vb2t_ctx *ctx = read_ctx(test);
	unsigned long buf = vb2t_user_mem(test, PLANE);

	vb2t_fail(ctx, VB2T_BUF_PREPARE, 1, -EIO);
	KUNIT_EXPECT_EQ(test, do_read(ctx, buf, PLANE), -EIO);
	KUNIT_EXPECT_EQ(test, vb2t_count(ctx, VB2T_START_STREAMING), 0);
	expect_read_not_started(test, ctx, buf);

	ctx = read_ctx(test);
	vb2t_fail(ctx, VB2T_START_STREAMING, 1, -EIO);
	KUNIT_EXPECT_EQ(test, do_read(ctx, buf, PLANE), -EIO);
	expect_read_not_started(test, ctx, buf);
}

/* write() on a queue that copies timestamps stamps the buffers it queues. */
static void vb2_mem_write_timestamp(struct kunit *test)
{
	struct vb2t_config cfg = {
		.type = OUT, .io_modes = VB2_MMAP | VB2_WRITE, .size = PLANE,
		.timestamp_flags = V4L2_BUF_FLAG_TIMESTAMP_COPY,
	};
	struct vb2t_ctx *ctx = vb2t_ctx_create(test, &cfg);
	unsigned long buf = vb2t_user_mem(test, PLANE);
	u64 start = ktime_get_ns();
	struct vb2_buffer *vb;

	KUNIT_EXPECT_EQ(test, do_write(ctx, buf, PLANE), PLANE);
	vb = vb2t_peek(ctx);
	KUNIT_ASSERT_NOT_NULL(test, vb);
	KUNIT_EXPECT_GE(test, vb->timestamp, start);
	KUNIT_EXPECT_LE(test, vb->timestamp, ktime_get_ns());
}

/* ---------------------------------------------------------------------- */
/* Media requests                                                         */
/* ---------------------------------------------------------------------- */

#define NQ	3

static struct vb2t_ctx *request_ctx(struct kunit *test)
{
	struct vb2t_config cfg = {
		.type = OUT, .io_modes = VB2_MMAP, .core_only = true,
		.supports_requests = true,
	};
	struct vb2t_ctx *ctx = vb2t_ctx_create(test, &cfg);
	unsigned int count = 2;

	KUNIT_ASSERT_EQ(test, vb2t_core_reqbufs(ctx, VB2_MEMORY_MMAP, &count), 0);
	return ctx;
}

/* Three buffers in one request; the second fails validation. */
static void vb2_mem_request_validate_unwinds(struct kunit *test)
{
	struct media_device *mdev = vb2t_mdev_create(test);
	struct media_request *req = vb2t_request_alloc(test, mdev);
	struct vb2t_ctx *ctx[NQ];
	unsigned int i, index;

	for (i = 0; i < NQ; i++) {
		ctx[i] = request_ctx(test);
		KUNIT_ASSERT_EQ(test, vb2t_core_qbuf(ctx[i], 0, req), 0);
		KUNIT_EXPECT_EQ(test, vb2t_state(ctx[i], 0),
				VB2_BUF_STATE_IN_REQUEST);
		vb2t_log_reset(ctx[i]);
	}
	KUNIT_EXPECT_EQ(test, vb2_request_buffer_cnt(req), NQ);

	vb2t_fail(ctx[1], VB2T_BUF_PREPARE, 1, -EINVAL);
	KUNIT_EXPECT_EQ(test, vb2t_request_queue(req), -EINVAL);
	KUNIT_EXPECT_EQ(test, req->state, MEDIA_REQUEST_STATE_IDLE);
	/* The first buffer was prepared and stays so, without buf_finish. */
	KUNIT_EXPECT_STREQ(test, vb2t_log_of(ctx[0], 0),
			   "buf_out_validate buf_prepare");
	KUNIT_EXPECT_STREQ(test, vb2t_log_of(ctx[1], 0),
			   "buf_out_validate buf_prepare");
	KUNIT_EXPECT_STREQ(test, vb2t_log_of(ctx[2], 0), "");
	for (i = 0; i < NQ; i++) {
		KUNIT_EXPECT_EQ(test, vb2t_state(ctx[i], 0),
				VB2_BUF_STATE_IN_REQUEST);
		vb2t_check_contract(ctx[i]);
	}

	/* Fixed: the request is queued and completes with the buffers. */
	KUNIT_ASSERT_EQ(test, vb2t_request_queue(req), 0);
	for (i = 0; i < NQ; i++) {
		KUNIT_EXPECT_EQ(test, vb2t_state(ctx[i], 0),
				VB2_BUF_STATE_QUEUED);
		KUNIT_ASSERT_EQ(test, vb2t_core_streamon(ctx[i]), 0);
		KUNIT_EXPECT_EQ(test, vb2t_owned(ctx[i]), 1);
	}
	KUNIT_EXPECT_EQ(test, req->state, MEDIA_REQUEST_STATE_QUEUED);
	/* A queued request takes no more buffers. */
	KUNIT_EXPECT_EQ(test, vb2t_core_qbuf(ctx[0], 1, req), -EBUSY);
	KUNIT_EXPECT_EQ(test, vb2t_state(ctx[0], 1), VB2_BUF_STATE_DEQUEUED);
	KUNIT_EXPECT_EQ(test, vb2_request_buffer_cnt(req), NQ);
	for (i = 0; i < NQ; i++)
		KUNIT_ASSERT_TRUE(test, vb2t_complete_next(ctx[i],
							   VB2_BUF_STATE_DONE));
	KUNIT_EXPECT_EQ(test, req->state, MEDIA_REQUEST_STATE_COMPLETE);
	for (i = 0; i < NQ; i++) {
		KUNIT_EXPECT_EQ(test, vb2t_core_dqbuf(ctx[i], &index), 0);
		KUNIT_EXPECT_EQ(test, index, 0);
	}
}

/* Requests and direct queueing do not mix; queues without support refuse. */
static void vb2_mem_request_rules(struct kunit *test)
{
	struct media_device *mdev = vb2t_mdev_create(test);
	struct media_request *req = vb2t_request_alloc(test, mdev);
	struct vb2t_config cfg = { .type = OUT, .core_only = true };
	struct vb2t_ctx *plain = vb2t_ctx_create(test, &cfg);
	struct vb2t_ctx *ctx = request_ctx(test);
	unsigned int count = 1;

	KUNIT_ASSERT_EQ(test, vb2t_core_reqbufs(plain, VB2_MEMORY_MMAP, &count), 0);
	KUNIT_EXPECT_EQ(test, vb2t_core_qbuf(plain, 0, req), -EBADR);
	KUNIT_EXPECT_EQ(test, vb2_request_buffer_cnt(req), 0);

	/* A request needs at least one buffer (media-request-ioc-queue.rst). */
	KUNIT_EXPECT_EQ(test, vb2t_request_queue(req), -ENOENT);
	KUNIT_EXPECT_EQ(test, req->state, MEDIA_REQUEST_STATE_IDLE);

	KUNIT_ASSERT_EQ(test, vb2t_core_qbuf(ctx, 0, req), 0);
	KUNIT_EXPECT_EQ(test, vb2t_core_qbuf(ctx, 1, NULL), -EBUSY);
	KUNIT_EXPECT_EQ(test, vb2t_state(ctx, 1), VB2_BUF_STATE_DEQUEUED);
	/* A buffer already in a request is not queued again. */
	KUNIT_EXPECT_EQ(test, vb2t_core_qbuf(ctx, 0, req), -EINVAL);
	KUNIT_EXPECT_EQ(test, vb2_request_buffer_cnt(req), 1);
}

/* Direct queueing first: requests are refused until STREAMOFF. */
static void vb2_mem_request_after_direct(struct kunit *test)
{
	struct media_device *mdev = vb2t_mdev_create(test);
	struct media_request *req = vb2t_request_alloc(test, mdev);
	struct vb2t_ctx *ctx = request_ctx(test);

	KUNIT_ASSERT_EQ(test, vb2t_core_qbuf(ctx, 0, NULL), 0);
	KUNIT_EXPECT_EQ(test, vb2t_core_qbuf(ctx, 1, req), -EBUSY);
	KUNIT_EXPECT_EQ(test, vb2_request_buffer_cnt(req), 0);
	KUNIT_EXPECT_EQ(test, vb2t_state(ctx, 1), VB2_BUF_STATE_DEQUEUED);
	KUNIT_EXPECT_EQ(test, vb2t_core_streamoff(ctx), 0);
	KUNIT_EXPECT_EQ(test, vb2t_core_qbuf(ctx, 1, req), 0);
	/* A queue in error takes no buffer into a request either. */
	vb2_queue_error(&ctx->q);
	KUNIT_EXPECT_EQ(test, vb2t_core_qbuf(ctx, 0, req), -EIO);
	KUNIT_EXPECT_EQ(test, vb2_request_buffer_cnt(req), 1);
}

/* IN_REQUEST -> DEQUEUED when an unqueued request is emptied. */
static void vb2_mem_request_reinit(struct kunit *test)
{
	struct media_device *mdev = vb2t_mdev_create(test);
	struct media_request *req = vb2t_request_alloc(test, mdev);
	struct vb2t_ctx *ctx = request_ctx(test);

	KUNIT_ASSERT_EQ(test, vb2t_core_qbuf(ctx, 0, req), 0);
	KUNIT_ASSERT_EQ(test, vb2t_request_reinit(req), 0);
	KUNIT_EXPECT_EQ(test, vb2t_state(ctx, 0), VB2_BUF_STATE_DEQUEUED);
	KUNIT_EXPECT_EQ(test, vb2t_count(ctx, VB2T_BUF_PREPARE), 0);
	KUNIT_EXPECT_EQ(test, vb2_request_buffer_cnt(req), 0);
	/* The buffer dropped its reference: only the test's is left. */
	KUNIT_EXPECT_NULL(test, vb2_get_buffer(&ctx->q, 0)->request);
	KUNIT_EXPECT_EQ(test, kref_read(&req->kref), 1);

	KUNIT_EXPECT_EQ(test, vb2t_core_qbuf(ctx, 0, req), 0);
	KUNIT_EXPECT_EQ(test, vb2t_request_queue(req), 0);
	KUNIT_EXPECT_EQ(test, vb2t_state(ctx, 0), VB2_BUF_STATE_QUEUED);
}

struct reinit_job {
	struct media_request *req;
	struct completion done;
	int ret;
};

static int reinit_fn(void *data)
{
	struct reinit_job *job = data;

	job->ret = vb2t_request_reinit(job->req);
	complete(&job->done);
	return 0;
}

/*
 * REINIT returns the buffer to DEQUEUED under the queue lock, as every
 * other change out of IN_REQUEST: REMOVE_BUFS, which frees DEQUEUED
 * buffers under that lock, must not see the buffer DEQUEUED while the
 * request is still dropping it.
 */
static void vb2_mem_request_reinit_takes_queue_lock(struct kunit *test)
{
	struct media_device *mdev = vb2t_mdev_create(test);
	struct media_request *req = vb2t_request_alloc(test, mdev);
	struct vb2t_ctx *ctx = request_ctx(test);
	struct reinit_job job = { .req = req };
	struct task_struct *task;
	enum vb2_buffer_state state;
	unsigned long left;

	KUNIT_ASSERT_EQ(test, vb2t_core_qbuf(ctx, 0, req), 0);
	init_completion(&job.done);
	mutex_lock(&ctx->mutex);
	task = kthread_run(reinit_fn, &job, "vb2t-reinit");
	if (IS_ERR(task)) {
		mutex_unlock(&ctx->mutex);
		KUNIT_FAIL(test, "kthread_run: %ld", PTR_ERR(task));
		return;
	}
	left = wait_for_completion_timeout(&job.done, msecs_to_jiffies(200));
	state = READ_ONCE(vb2_get_buffer(&ctx->q, 0)->state);
	mutex_unlock(&ctx->mutex);
	KUNIT_EXPECT_EQ_MSG(test, left, 0, "REINIT did not wait for the queue lock");
	KUNIT_EXPECT_EQ(test, state, VB2_BUF_STATE_IN_REQUEST);

	wait_for_completion(&job.done);
	KUNIT_EXPECT_EQ(test, job.ret, 0);
	KUNIT_EXPECT_EQ(test, vb2t_state(ctx, 0), VB2_BUF_STATE_DEQUEUED);
	KUNIT_EXPECT_NULL(test, vb2_get_buffer(&ctx->q, 0)->request);
	KUNIT_EXPECT_EQ(test, kref_read(&req->kref), 1);
}

/* An unqueued request whose fd was closed is cleaned up by STREAMOFF. */
static void vb2_mem_request_cancel_unqueued(struct kunit *test)
{
	struct media_device *mdev = vb2t_mdev_create(test);
	struct media_request *req = vb2t_request_alloc(test, mdev);
	struct vb2t_ctx *ctx = request_ctx(test);

	KUNIT_ASSERT_EQ(test, vb2t_core_qbuf(ctx, 0, req), 0);
	KUNIT_EXPECT_EQ(test, vb2t_core_streamoff(ctx), 0);
	KUNIT_EXPECT_EQ(test, vb2t_state(ctx, 0), VB2_BUF_STATE_DEQUEUED);
	KUNIT_EXPECT_EQ(test, vb2_request_buffer_cnt(req), 0);
	KUNIT_EXPECT_EQ(test, kref_read(&req->kref), 1);
	/* Not queued: the driver has nothing to complete. */
	KUNIT_EXPECT_EQ(test, vb2t_count(ctx, VB2T_BUF_REQUEST_COMPLETE), 0);
}

/* Cancelling a queued request whose buffer never reached the driver. */
static void vb2_mem_request_cancelled(struct kunit *test)
{
	struct media_device *mdev = vb2t_mdev_create(test);
	struct media_request *req = vb2t_request_alloc(test, mdev);
	struct vb2t_ctx *ctx = request_ctx(test);

	KUNIT_ASSERT_EQ(test, vb2t_core_qbuf(ctx, 0, req), 0);
	KUNIT_ASSERT_EQ(test, vb2t_request_queue(req), 0);
	KUNIT_EXPECT_EQ(test, vb2t_core_streamoff(ctx), 0);
	KUNIT_EXPECT_EQ(test, vb2t_count(ctx, VB2T_BUF_REQUEST_COMPLETE), 1);
	KUNIT_EXPECT_EQ(test, vb2t_state(ctx, 0), VB2_BUF_STATE_DEQUEUED);
	KUNIT_EXPECT_EQ(test, req->state, MEDIA_REQUEST_STATE_COMPLETE);
	/* After STREAMOFF the queue may be used without requests. */
	KUNIT_EXPECT_EQ(test, vb2t_core_qbuf(ctx, 1, NULL), 0);
}

/*
 * Requests through the V4L2 API need request file descriptors, which only
 * MEDIA_IOC_REQUEST_ALLOC on a registered media device hands out. The
 * test registers one and opens its node; without devtmpfs it skips.
 */

/**
 * struct vb2t_media - a registered media device and its open node
 * @mdev:	the media device.
 * @node:	the open /dev/mediaN.
 * @user:	user memory for ioctl arguments.
 */
struct vb2t_media {
	struct media_device	mdev;
	struct file		*node;
	unsigned long		user;
};

static const struct media_device_ops vb2t_media_ops = {
	.req_validate	= vb2_request_validate,
	.req_queue	= vb2_request_queue,
};

static void vb2t_media_cleanup(void *data)
{
	struct vb2t_media *m = data;

	/*
	 * The releases of the node and of the request files use the media
	 * device: they have run before it goes (vb2t_close_fd_now() closed
	 * the request files; KASAN saw the device freed first when a worker
	 * released them).
	 */
	if (m->node)
		__fput_sync(m->node);
	media_device_unregister(&m->mdev);
	media_device_cleanup(&m->mdev);
}

static struct vb2t_media *vb2t_media_open(struct kunit *test)
{
	struct vb2t_media *m;
	char path[32];
	int ret;

	m = kunit_kzalloc(test, sizeof(*m), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, m);
	m->user = vb2t_user_mem(test, PAGE_SIZE);
	m->mdev.dev = kunit_device_register(test, "vb2t-media");
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, m->mdev.dev);
	strscpy(m->mdev.model, "vb2t", sizeof(m->mdev.model));
	m->mdev.ops = &vb2t_media_ops;
	media_device_init(&m->mdev);
	ret = media_device_register(&m->mdev);
	if (ret) {
		media_device_cleanup(&m->mdev);
		KUNIT_FAIL(test, "media_device_register: %d", ret);
		return NULL;
	}
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, vb2t_media_cleanup,
							m), 0);
	snprintf(path, sizeof(path), "/dev/media%d", m->mdev.devnode->minor);
	m->node = filp_open(path, O_RDWR, 0);
	if (IS_ERR(m->node)) {
		m->node = NULL;
		kunit_skip(test, "cannot open %s (no devtmpfs?)", path);
	}
	return m;
}

/* MEDIA_IOC_REQUEST_ALLOC: a new request fd, closed when the test ends. */
static int vb2t_media_request_fd(struct kunit *test, struct vb2t_media *m)
{
	long ret;
	int fd;

	ret = m->node->f_op->unlocked_ioctl(m->node, MEDIA_IOC_REQUEST_ALLOC,
					    m->user);
	KUNIT_ASSERT_EQ(test, ret, 0);
	KUNIT_ASSERT_EQ(test, copy_from_user(&fd, (void __user *)m->user,
					     sizeof(fd)), 0);
	KUNIT_ASSERT_GE(test, fd, 0);
	vb2t_close_fd_at_exit(test, fd);
	return fd;
}

/* MEDIA_REQUEST_IOC_QUEUE on a request fd. */
static long vb2t_media_queue(int fd)
{
	struct file *file = fget(fd);
	long ret;

	if (!file)
		return -EBADF;
	ret = file->f_op->unlocked_ioctl(file, MEDIA_REQUEST_IOC_QUEUE, 0);
	fput(file);
	return ret;
}

static int qbuf_request(struct vb2t_ctx *ctx, struct media_device *mdev,
			struct v4l2_buffer *b, unsigned int index, int fd)
{
	int ret;

	vb2t_init_buffer(ctx, b, NULL, index);
	b->flags = V4L2_BUF_FLAG_REQUEST_FD;
	b->request_fd = fd;
	mutex_lock(&ctx->mutex);
	ret = vb2_qbuf(&ctx->q, mdev, b);
	mutex_unlock(&ctx->mutex);
	return ret;
}

static void vb2_mem_request_v4l2(struct kunit *test)
{
	struct vb2t_config cfg = { .type = OUT, .supports_requests = true };
	struct vb2t_ctx *ctx = vb2t_ctx_create(test, &cfg);
	struct vb2t_media *m = vb2t_media_open(test);
	struct media_request *req;
	unsigned int count = 3;
	struct v4l2_buffer b;
	int fd, fd2;

	KUNIT_ASSERT_NOT_NULL(test, m);
	KUNIT_ASSERT_EQ(test, vb2t_reqbufs(ctx, V4L2_MEMORY_MMAP, &count), 0);
	fd = vb2t_media_request_fd(test, m);
	fd2 = vb2t_media_request_fd(test, m);

	/* Not a request of this device, or no file at all. */
	KUNIT_EXPECT_EQ(test, qbuf_request(ctx, &m->mdev, &b, 0, 100000), -EINVAL);
	KUNIT_EXPECT_EQ(test, vb2t_state(ctx, 0), VB2_BUF_STATE_DEQUEUED);

	KUNIT_ASSERT_EQ(test, qbuf_request(ctx, &m->mdev, &b, 0, fd), 0);
	KUNIT_EXPECT_TRUE(test, b.flags & V4L2_BUF_FLAG_IN_REQUEST);
	KUNIT_EXPECT_TRUE(test, b.flags & V4L2_BUF_FLAG_REQUEST_FD);
	KUNIT_EXPECT_EQ(test, b.request_fd, fd);
	KUNIT_EXPECT_EQ(test, vb2t_state(ctx, 0), VB2_BUF_STATE_IN_REQUEST);
	/* Direct QBUF is refused once requests are in use. */
	KUNIT_EXPECT_EQ(test, vb2t_qbuf_mmap(ctx, 1), -EBUSY);

	req = media_request_get_by_fd(&m->mdev, fd);
	KUNIT_ASSERT_FALSE(test, IS_ERR(req));
	KUNIT_EXPECT_EQ(test, vb2_request_buffer_cnt(req), 1);

	/* An empty request cannot be queued. */
	KUNIT_EXPECT_EQ(test, vb2t_media_queue(fd2), -ENOENT);
	KUNIT_EXPECT_EQ(test, vb2t_media_queue(fd), 0);
	KUNIT_EXPECT_EQ(test, vb2t_state(ctx, 0), VB2_BUF_STATE_QUEUED);
	/* A queued request takes no more buffers. */
	KUNIT_EXPECT_EQ(test, qbuf_request(ctx, &m->mdev, &b, 1, fd), -EBUSY);
	KUNIT_EXPECT_EQ(test, vb2t_state(ctx, 1), VB2_BUF_STATE_DEQUEUED);

	KUNIT_ASSERT_EQ(test, vb2t_streamon(ctx), 0);
	KUNIT_ASSERT_TRUE(test, vb2t_complete_next(ctx, VB2_BUF_STATE_DONE));
	KUNIT_EXPECT_EQ(test, READ_ONCE(req->state), MEDIA_REQUEST_STATE_COMPLETE);
	vb2t_init_buffer(ctx, &b, NULL, 0);
	KUNIT_EXPECT_EQ(test, vb2t_dqbuf(ctx, &b), 0);
	KUNIT_EXPECT_EQ(test, b.index, 0);
	media_request_put(req);
}

/*
 * A driver that turns supports_requests on after vb2_queue_init() without
 * what requests need (buf_request_complete; buf_out_validate on a video
 * output queue): QBUF into a valid request fails with -EINVAL and the
 * buffer stays DEQUEUED; with the callbacks in place the same QBUF works.
 */
static void vb2_mem_request_driver_gap(struct kunit *test)
{
	/* Before the context: freed after the queue release that uses it. */
	struct vb2_ops *const ops = kunit_kzalloc(test, sizeof(*ops), GFP_KERNEL);
	const struct vb2_ops *orig;
	struct vb2t_ctx *ctx;
	struct vb2t_media *m;
	unsigned int count = 1;
	struct v4l2_buffer b;
	int fd;

	KUNIT_ASSERT_NOT_NULL(test, ops);
	/*
	 * Before the context too: the buffer is left in the request, which
	 * the queue release puts last, and the request then needs its device.
	 */
	m = vb2t_media_open(test);
	KUNIT_ASSERT_NOT_NULL(test, m);
	ctx = vb2t_ctx_simple(test, OUT);
	orig = ctx->q.ops;
	*ops = *orig;
	ctx->q.ops = ops;
	KUNIT_ASSERT_EQ(test, vb2t_reqbufs(ctx, V4L2_MEMORY_MMAP, &count), 0);
	fd = vb2t_media_request_fd(test, m);
	ctx->q.supports_requests = 1;

	ops->buf_request_complete = NULL;
	KUNIT_EXPECT_EQ(test, qbuf_request(ctx, &m->mdev, &b, 0, fd), -EINVAL);
	ops->buf_request_complete = orig->buf_request_complete;
	ops->buf_out_validate = NULL;
	KUNIT_EXPECT_EQ(test, qbuf_request(ctx, &m->mdev, &b, 0, fd), -EINVAL);
	KUNIT_EXPECT_EQ(test, vb2t_state(ctx, 0), VB2_BUF_STATE_DEQUEUED);
	KUNIT_EXPECT_EQ(test, vb2t_count(ctx, VB2T_BUF_PREPARE), 0);

	ops->buf_out_validate = orig->buf_out_validate;
	KUNIT_EXPECT_EQ(test, qbuf_request(ctx, &m->mdev, &b, 0, fd), 0);
	KUNIT_EXPECT_EQ(test, vb2t_state(ctx, 0), VB2_BUF_STATE_IN_REQUEST);
}

static struct kunit_case vb2_mem_cases[] = {
	KUNIT_CASE(vb2_mem_userptr_pin_reuse),
	KUNIT_CASE(vb2_mem_userptr_bad),
	KUNIT_CASE(vb2_mem_userptr_release),
	KUNIT_CASE(vb2_mem_userptr_mplane_unwind),
	KUNIT_CASE(vb2_mem_frame_vector_pfns),
	KUNIT_CASE(vb2_mem_frame_vector_bad_range),
	KUNIT_CASE(vb2_mem_null_from_allocator),
	KUNIT_CASE(vb2_mem_dmabuf_export_import),
	KUNIT_CASE(vb2_mem_dmabuf_same_fd_new_length),
	KUNIT_CASE(vb2_mem_no_num_users),
	KUNIT_CASE(vb2_mem_zero_bytesused),
	KUNIT_CASE(vb2_mem_dmabuf_bad),
	KUNIT_CASE(vb2_mem_dmabuf_orphan),
	KUNIT_CASE(vb2_mem_dmabuf_same_in_two_planes),
	KUNIT_CASE(vb2_mem_dmabuf_mplane_unwind),
	KUNIT_CASE(vb2_mem_read),
	KUNIT_CASE(vb2_mem_read_vs_streaming),
	KUNIT_CASE(vb2_mem_write),
	KUNIT_CASE(vb2_mem_read_once),
	KUNIT_CASE(vb2_mem_write_immediately),
	KUNIT_CASE(vb2_mem_fileio_refused),
	KUNIT_CASE(vb2_mem_read_start_fails),
	KUNIT_CASE(vb2_mem_write_timestamp),
	KUNIT_CASE(vb2_mem_request_validate_unwinds),
	KUNIT_CASE(vb2_mem_request_rules),
	KUNIT_CASE(vb2_mem_request_after_direct),
	KUNIT_CASE(vb2_mem_request_reinit),
	KUNIT_CASE(vb2_mem_request_reinit_takes_queue_lock),
	KUNIT_CASE(vb2_mem_request_cancel_unqueued),
	KUNIT_CASE(vb2_mem_request_cancelled),
	KUNIT_CASE(vb2_mem_request_v4l2),
	KUNIT_CASE(vb2_mem_request_driver_gap),
	{}
};

static struct kunit_suite vb2_mem_suite = {
	.name = "videobuf2-memory",
	.test_cases = vb2_mem_cases,
};

kunit_test_suite(vb2_mem_suite);
