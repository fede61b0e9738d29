// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests of the three videobuf2 allocators (vmalloc, dma-contig,
 * dma-sg) on a KUnit device: MMAP memory seen by the kernel, by user
 * space through mmap() and by another queue through DMABUF, and USERPTR
 * memory where the allocator can take it.
 */

#include <kunit/test.h>
#include <linux/dma-mapping.h>
#include <linux/fcntl.h>
#include <linux/mman.h>
#include <linux/scatterlist.h>
#include <linux/uaccess.h>

#include <media/videobuf2-dma-contig.h>
#include <media/videobuf2-dma-sg.h>
#include <media/videobuf2-v4l2.h>
#include <media/videobuf2-vmalloc.h>

#include "vb2-test-helpers.h"

#define CAP	V4L2_BUF_TYPE_VIDEO_CAPTURE
#define OUT	V4L2_BUF_TYPE_VIDEO_OUTPUT
#define PLANE	(3 * PAGE_SIZE)

/**
 * struct vb2t_alloc - an allocator under test
 * @name:	for the test output.
 * @ops:	its &struct vb2_mem_ops.
 * @userptr:	it can take any user memory (dma-contig needs physically
 *		contiguous memory, which anonymous memory is not).
 */
struct vb2t_alloc {
	const char			*name;
	const struct vb2_mem_ops	*ops;
	bool				userptr;
};

static const struct vb2t_alloc vb2t_allocs[] = {
	{ "vmalloc", &vb2_vmalloc_memops, true },
	{ "dma-contig", &vb2_dma_contig_memops, false },
	{ "dma-sg", &vb2_dma_sg_memops, true },
};

static void vb2t_alloc_desc(const struct vb2t_alloc *a, char *desc)
{
	strscpy(desc, a->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(vb2t_alloc, vb2t_allocs, vb2t_alloc_desc);

static struct vb2t_ctx *alloc_ctx(struct kunit *test, u32 type,
				  unsigned int io_modes)
{
	const struct vb2t_alloc *a = test->param_value;
	struct vb2t_config cfg = {
		.type = type, .io_modes = io_modes, .backend = a->ops,
		.size = PLANE,
	};

	return vb2t_ctx_create(test, &cfg);
}

/* The allocator's own handle for the device is there and plausible. */
static void expect_cookie(struct kunit *test, struct vb2_buffer *vb)
{
	const struct vb2t_alloc *a = test->param_value;
	struct sg_table *sgt;

	if (a->ops == &vb2_dma_contig_memops) {
		KUNIT_EXPECT_NE(test, vb2_dma_contig_plane_dma_addr(vb, 0), 0);
	} else if (a->ops == &vb2_dma_sg_memops) {
		sgt = vb2_dma_sg_plane_desc(vb, 0);
		KUNIT_ASSERT_NOT_NULL(test, sgt);
		KUNIT_EXPECT_GT(test, sgt->nents, 0);
		KUNIT_EXPECT_GE(test, sg_dma_len(sgt->sgl), PAGE_SIZE);
	}
	/* vmalloc memory has no device handle: drivers use the vaddr. */
}

/* MMAP: kernel mapping, user mapping, a streaming cycle, orphaning. */
static void vb2_alloc_mmap(struct kunit *test)
{
	struct vb2t_ctx *ctx = alloc_ctx(test, CAP, VB2_MMAP);
	struct file *file = vb2t_queue_file(ctx);
	unsigned int count = 2, index;
	struct vb2_buffer *vb;
	struct v4l2_buffer b;
	unsigned long addr;
	u32 word = 0;
	u32 *vaddr;

	KUNIT_ASSERT_EQ(test, vb2t_reqbufs(ctx, V4L2_MEMORY_MMAP, &count), 0);
	KUNIT_ASSERT_EQ(test, count, 2);
	vb = vb2_get_buffer(&ctx->q, 1);
	KUNIT_EXPECT_GE(test, vb2_plane_size(vb, 0), PLANE);
	vaddr = vb2_plane_vaddr(vb, 0);
	KUNIT_ASSERT_NOT_NULL(test, vaddr);
	expect_cookie(test, vb);
	vaddr[0] = 0x11;
	vaddr[PLANE / 4 - 1] = 0x22;

	vb2t_init_buffer(ctx, &b, NULL, 1);
	KUNIT_ASSERT_EQ(test, vb2t_querybuf(ctx, &b), 0);
	addr = kunit_vm_mmap(test, file, 0, PLANE, PROT_READ, MAP_SHARED,
			     b.m.offset);
	KUNIT_ASSERT_FALSE(test, IS_ERR_VALUE(addr));
	KUNIT_ASSERT_NE(test, addr, 0);
	KUNIT_EXPECT_EQ(test, copy_from_user(&word, (void __user *)addr, 4), 0);
	KUNIT_EXPECT_EQ(test, word, 0x11);
	KUNIT_EXPECT_EQ(test, copy_from_user(&word,
					     (void __user *)addr + PLANE - 4, 4),
			0);
	KUNIT_EXPECT_EQ(test, word, 0x22);

	/* A cycle syncs for the device and back. */
	KUNIT_ASSERT_EQ(test, vb2t_qbuf_mmap(ctx, 1), 0);
	KUNIT_ASSERT_EQ(test, vb2t_streamon(ctx), 0);
	KUNIT_ASSERT_TRUE(test, vb2t_complete_next(ctx, VB2_BUF_STATE_DONE));
	KUNIT_EXPECT_EQ(test, vb2t_dqbuf_index(ctx, &index, NULL), 0);
	KUNIT_EXPECT_EQ(test, index, 1);
	KUNIT_EXPECT_EQ(test, vb2t_streamoff(ctx), 0);

	/* Orphaned by REQBUFS(0), still mapped and readable. */
	count = 0;
	KUNIT_EXPECT_EQ(test, vb2t_reqbufs(ctx, V4L2_MEMORY_MMAP, &count), 0);
	word = 0;
	KUNIT_EXPECT_EQ(test, copy_from_user(&word, (void __user *)addr, 4), 0);
	KUNIT_EXPECT_EQ(test, word, 0x11);
	KUNIT_EXPECT_EQ(test, vm_munmap(addr, PLANE), 0);
}

/* Export from one queue, import into another of the same allocator. */
static void vb2_alloc_dmabuf(struct kunit *test)
{
	struct vb2t_ctx *exp = alloc_ctx(test, CAP, VB2_MMAP);
	struct vb2t_ctx *imp = alloc_ctx(test, OUT, VB2_DMABUF);
	struct v4l2_exportbuffer eb = { .type = CAP, .flags = O_RDWR };
	unsigned int count = 1;
	struct vb2_buffer *vb;
	struct v4l2_buffer b;
	u32 *src, *dst;
	int ret;

	KUNIT_ASSERT_EQ(test, vb2t_reqbufs(exp, V4L2_MEMORY_MMAP, &count), 0);
	count = 1;
	KUNIT_ASSERT_EQ(test, vb2t_reqbufs(imp, V4L2_MEMORY_DMABUF, &count), 0);
	mutex_lock(&exp->mutex);
	ret = vb2_expbuf(&exp->q, &eb);
	mutex_unlock(&exp->mutex);
	KUNIT_ASSERT_EQ(test, ret, 0);
	vb2t_close_fd_at_exit(test, eb.fd);

	src = vb2_plane_vaddr(vb2_get_buffer(&exp->q, 0), 0);
	KUNIT_ASSERT_NOT_NULL(test, src);
	src[1] = 0x3344;

	vb2t_init_buffer(imp, &b, NULL, 0);
	b.memory = V4L2_MEMORY_DMABUF;
	b.m.fd = eb.fd;
	b.length = PLANE;
	KUNIT_ASSERT_EQ(test, vb2t_qbuf(imp, &b), 0);
	KUNIT_ASSERT_EQ(test, vb2t_streamon(imp), 0);
	vb = vb2t_peek(imp);
	KUNIT_ASSERT_NOT_NULL(test, vb);
	expect_cookie(test, vb);
	dst = vb2_plane_vaddr(vb, 0);
	KUNIT_ASSERT_NOT_NULL(test, dst);
	KUNIT_EXPECT_EQ(test, dst[1], 0x3344);
	KUNIT_ASSERT_TRUE(test, vb2t_complete_next(imp, VB2_BUF_STATE_DONE));
	KUNIT_EXPECT_EQ(test, vb2t_dqbuf_index(imp, NULL, NULL), 0);

	/* The exporter may go away first. */
	count = 0;
	KUNIT_EXPECT_EQ(test, vb2t_reqbufs(exp, V4L2_MEMORY_MMAP, &count), 0);
	KUNIT_ASSERT_EQ(test, vb2t_qbuf(imp, &b), 0);
	KUNIT_EXPECT_EQ(test, vb2t_count(imp, VB2T_ATTACH_DMABUF), 1);
}

/* USERPTR: the device's writes land in the user's memory. */
static void vb2_alloc_userptr(struct kunit *test)
{
	const struct vb2t_alloc *a = test->param_value;
	struct vb2t_ctx *ctx;
	unsigned int count = 1;
	unsigned long user;
	struct vb2_buffer *vb;
	struct v4l2_buffer b;
	u32 word = 0;
	u32 *vaddr;

	if (!a->userptr)
		kunit_skip(test, "%s needs contiguous user memory", a->name);
	ctx = alloc_ctx(test, CAP, VB2_USERPTR);
	user = vb2t_user_mem(test, PLANE);
	KUNIT_ASSERT_EQ(test, vb2t_reqbufs(ctx, V4L2_MEMORY_USERPTR, &count), 0);
	vb2t_init_buffer(ctx, &b, NULL, 0);
	b.memory = V4L2_MEMORY_USERPTR;
	b.m.userptr = user;
	b.length = PLANE;
	KUNIT_ASSERT_EQ(test, vb2t_qbuf(ctx, &b), 0);
	KUNIT_ASSERT_EQ(test, vb2t_streamon(ctx), 0);
	vb = vb2t_peek(ctx);
	KUNIT_ASSERT_NOT_NULL(test, vb);
	expect_cookie(test, vb);
	vaddr = vb2_plane_vaddr(vb, 0);
	KUNIT_ASSERT_NOT_NULL(test, vaddr);
	vaddr[2] = 0x5566;
	KUNIT_ASSERT_TRUE(test, vb2t_complete_next(ctx, VB2_BUF_STATE_DONE));
	KUNIT_EXPECT_EQ(test, vb2t_dqbuf_index(ctx, NULL, NULL), 0);
	KUNIT_EXPECT_EQ(test, copy_from_user(&word, (void __user *)user + 8, 4),
			0);
	KUNIT_EXPECT_EQ(test, word, 0x5566);
	vb2t_release(ctx);
	KUNIT_EXPECT_EQ(test, vb2t_count(ctx, VB2T_PUT_USERPTR), 1);
}

/* USERPTR memory that does not start on a page boundary. */
static void vb2_alloc_userptr_unaligned(struct kunit *test)
{
	const struct vb2t_alloc *a = test->param_value;
	const unsigned long offset = 100;
	struct vb2t_ctx *ctx;
	unsigned int count = 1;
	unsigned long user;
	struct v4l2_buffer b;
	u8 *vaddr;
	u8 byte = 0;

	if (!a->userptr)
		kunit_skip(test, "%s needs contiguous user memory", a->name);
	ctx = alloc_ctx(test, CAP, VB2_USERPTR);
	user = vb2t_user_mem(test, PLANE + PAGE_SIZE);
	KUNIT_ASSERT_EQ(test, vb2t_reqbufs(ctx, V4L2_MEMORY_USERPTR, &count), 0);
	vb2t_init_buffer(ctx, &b, NULL, 0);
	b.memory = V4L2_MEMORY_USERPTR;
	b.m.userptr = user + offset;
	b.length = PLANE;
	KUNIT_ASSERT_EQ(test, vb2t_qbuf(ctx, &b), 0);
	KUNIT_ASSERT_EQ(test, vb2t_streamon(ctx), 0);
	vaddr = vb2_plane_vaddr(vb2t_peek(ctx), 0);
	KUNIT_ASSERT_NOT_NULL(test, vaddr);
	vaddr[0] = 0x77;
	vaddr[PLANE - 1] = 0x88;
	KUNIT_ASSERT_TRUE(test, vb2t_complete_next(ctx, VB2_BUF_STATE_DONE));
	KUNIT_EXPECT_EQ(test, vb2t_dqbuf_index(ctx, NULL, NULL), 0);
	KUNIT_EXPECT_EQ(test, copy_from_user(&byte, (void __user *)user + offset,
					     1), 0);
	KUNIT_EXPECT_EQ(test, byte, 0x77);
	KUNIT_EXPECT_EQ(test, copy_from_user(&byte, (void __user *)user +
					     offset + PLANE - 1, 1), 0);
	KUNIT_EXPECT_EQ(test, byte, 0x88);
}

/* Non-coherent MMAP memory (a cache hint) works like coherent memory. */
static void vb2_alloc_non_coherent(struct kunit *test)
{
	const struct vb2t_alloc *a = test->param_value;
	struct vb2t_config cfg = {
		.type = CAP, .io_modes = VB2_MMAP, .backend = a->ops,
		.size = PLANE, .allow_cache_hints = true,
	};
	struct vb2t_ctx *ctx = vb2t_ctx_create(test, &cfg);
	struct file *file = vb2t_queue_file(ctx);
	struct v4l2_requestbuffers req = {
		.count = 2, .type = CAP, .memory = V4L2_MEMORY_MMAP,
		.flags = V4L2_MEMORY_FLAG_NON_COHERENT,
	};
	struct v4l2_buffer b;
	unsigned long addr;
	u32 word = 0;
	u32 *vaddr;
	int ret;

	mutex_lock(&ctx->mutex);
	ret = vb2_reqbufs(&ctx->q, &req);
	mutex_unlock(&ctx->mutex);
	KUNIT_ASSERT_EQ(test, ret, 0);
	KUNIT_EXPECT_TRUE(test, ctx->q.non_coherent_mem);

	vb2t_init_buffer(ctx, &b, NULL, 0);
	KUNIT_ASSERT_EQ(test, vb2t_qbuf(ctx, &b), 0);
	KUNIT_ASSERT_EQ(test, vb2t_streamon(ctx), 0);
	vaddr = vb2_plane_vaddr(vb2t_peek(ctx), 0);
	KUNIT_ASSERT_NOT_NULL(test, vaddr);
	expect_cookie(test, vb2t_peek(ctx));
	vaddr[3] = 0x99aa;
	KUNIT_ASSERT_TRUE(test, vb2t_complete_next(ctx, VB2_BUF_STATE_DONE));
	KUNIT_EXPECT_EQ(test, vb2t_dqbuf_index(ctx, NULL, NULL), 0);

	vb2t_init_buffer(ctx, &b, NULL, 0);
	KUNIT_ASSERT_EQ(test, vb2t_querybuf(ctx, &b), 0);
	addr = kunit_vm_mmap(test, file, 0, PLANE, PROT_READ, MAP_SHARED,
			     b.m.offset);
	KUNIT_ASSERT_FALSE(test, IS_ERR_VALUE(addr));
	KUNIT_ASSERT_NE(test, addr, 0);
	KUNIT_EXPECT_EQ(test, copy_from_user(&word, (void __user *)addr + 12, 4),
			0);
	KUNIT_EXPECT_EQ(test, word, 0x99aa);
	KUNIT_EXPECT_EQ(test, vm_munmap(addr, PLANE), 0);

	/* Skipping the cache maintenance is allowed on this queue. */
	vb2t_init_buffer(ctx, &b, NULL, 1);
	b.flags = V4L2_BUF_FLAG_NO_CACHE_CLEAN | V4L2_BUF_FLAG_NO_CACHE_INVALIDATE;
	KUNIT_ASSERT_EQ(test, vb2t_qbuf(ctx, &b), 0);
	KUNIT_ASSERT_TRUE(test, vb2t_complete_next(ctx, VB2_BUF_STATE_DONE));
	KUNIT_EXPECT_EQ(test, vb2t_dqbuf_index(ctx, NULL, NULL), 0);
}

static struct kunit_case vb2_alloc_cases[] = {
	KUNIT_CASE_PARAM(vb2_alloc_mmap, vb2t_alloc_gen_params),
	KUNIT_CASE_PARAM(vb2_alloc_dmabuf, vb2t_alloc_gen_params),
	KUNIT_CASE_PARAM(vb2_alloc_userptr, vb2t_alloc_gen_params),
	KUNIT_CASE_PARAM(vb2_alloc_userptr_unaligned, vb2t_alloc_gen_params),
	KUNIT_CASE_PARAM(vb2_alloc_non_coherent, vb2t_alloc_gen_params),
	{}
};

static struct kunit_suite vb2_alloc_suite = {
	.name = "videobuf2-allocators",
	.test_cases = vb2_alloc_cases,
};

kunit_test_suite(vb2_alloc_suite);
