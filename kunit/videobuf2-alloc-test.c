// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests of the three videobuf2 allocators (vmalloc, dma-contig,
 * dma-sg) on a KUnit device: MMAP memory seen by the kernel, by user
 * space through mmap() and by another queue through DMABUF (every
 * exporter with every importer), and USERPTR memory where the allocator
 * can take it.
 */

#include <kunit/device.h>
#include <kunit/resource.h>
#include <kunit/test.h>
#include <linux/device.h>
#include <linux/dma-buf.h>
#include <linux/dma-direct.h>
#include <linux/dma-mapping.h>
#include <linux/dma-resv.h>
#include <linux/fcntl.h>
#include <linux/fdtable.h>
#include <linux/file.h>
#include <linux/mm.h>
#include <linux/mman.h>
#include <linux/scatterlist.h>
#include <linux/sizes.h>
#include <linux/string.h>
#include <linux/uaccess.h>
#include <linux/vmalloc.h>

#include <media/videobuf2-dma-contig.h>
#include <media/videobuf2-dma-sg.h>
#include <media/videobuf2-v4l2.h>
#include <media/videobuf2-vmalloc.h>

#include "vb2-test-helpers.h"

#define CAP	V4L2_BUF_TYPE_VIDEO_CAPTURE
#define OUT	V4L2_BUF_TYPE_VIDEO_OUTPUT
#define PLANE	(3 * PAGE_SIZE)

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

/*
 * One MMAP buffer on @exp, exported: its dma-buf, with a reference of the
 * caller's (the fd is closed when the test ends).
 */
static struct dma_buf *export_one(struct kunit *test, struct vb2t_ctx *exp)
{
	struct v4l2_exportbuffer eb = { .type = CAP, .flags = O_RDWR };
	unsigned int count = 1;
	struct dma_buf *dbuf;
	int ret;

	KUNIT_ASSERT_EQ(test, vb2t_reqbufs(exp, V4L2_MEMORY_MMAP, &count), 0);
	mutex_lock(&exp->mutex);
	ret = vb2_expbuf(&exp->q, &eb);
	mutex_unlock(&exp->mutex);
	KUNIT_ASSERT_EQ(test, ret, 0);
	vb2t_close_fd_at_exit(test, eb.fd);
	dbuf = dma_buf_get(eb.fd);
	KUNIT_ASSERT_FALSE(test, IS_ERR(dbuf));
	return dbuf;
}

/*
 * What an allocator refuses from a caller that breaks its rules, which the
 * core never does: a dma-buf smaller than the plane (EFAULT), and an export
 * of memory it does not own, here an imported dma-buf (EINVAL). vmalloc
 * also refuses a plane of 0 bytes.
 */
static void vb2_alloc_caller_errors(struct kunit *test)
{
	const struct vb2t_alloc *a = test->param_value;
	struct vb2t_ctx *exp = alloc_ctx(test, CAP, VB2_MMAP);
	struct dma_buf *dbuf, *again;
	struct vb2_buffer *vb;
	void *priv;

	dbuf = export_one(test, exp);
	vb = vb2_get_buffer(&exp->q, 0);

	priv = a->ops->attach_dmabuf(vb, exp->dev, dbuf, dbuf->size + PAGE_SIZE);
	KUNIT_EXPECT_EQ(test, PTR_ERR_OR_ZERO(priv), -EFAULT);
	if (!IS_ERR(priv))
		a->ops->detach_dmabuf(priv);

	priv = a->ops->attach_dmabuf(vb, exp->dev, dbuf, dbuf->size);
	KUNIT_ASSERT_FALSE(test, IS_ERR(priv));
	again = a->ops->get_dmabuf(vb, priv, O_RDWR);
	KUNIT_EXPECT_EQ(test, PTR_ERR_OR_ZERO(again), -EINVAL);
	if (!IS_ERR_OR_NULL(again))
		dma_buf_put(again);
	a->ops->detach_dmabuf(priv);
	dma_buf_put(dbuf);

	if (a->ops == &vb2_vmalloc_memops)
		KUNIT_EXPECT_EQ(test,
				PTR_ERR_OR_ZERO(a->ops->alloc(vb, exp->dev, 0)),
				-EINVAL);
}

/*
 * The shared exporter (videobuf2-memops.c) with two importers of one dma-buf:
 * CPU access skips the attachment that is not mapped and syncs the one that
 * is. An attachment maps once at a time: a second map_dma_buf() without an
 * unmap, which only a caller going round the dma-buf core can make (the core
 * caches the mapping), is refused. Detaching an attachment still mapped that
 * way unmaps it (DMA-API debug would report the mapping left behind).
 */
static void vb2_alloc_export_attachments(struct kunit *test)
{
	struct vb2t_ctx *exp = alloc_ctx(test, CAP, VB2_MMAP);
	struct dma_buf_attachment *idle, *busy;
	struct sg_table *sgt, *again;
	struct dma_buf *dbuf;

	dbuf = export_one(test, exp);

	idle = dma_buf_attach(dbuf, exp->dev);
	KUNIT_ASSERT_FALSE(test, IS_ERR(idle));
	busy = dma_buf_attach(dbuf, exp->dev);
	KUNIT_ASSERT_FALSE(test, IS_ERR(busy));
	sgt = dma_buf_map_attachment_unlocked(busy, DMA_FROM_DEVICE);
	KUNIT_ASSERT_FALSE(test, IS_ERR(sgt));
	KUNIT_EXPECT_EQ(test, dma_buf_begin_cpu_access(dbuf, DMA_FROM_DEVICE), 0);
	KUNIT_EXPECT_EQ(test, dma_buf_end_cpu_access(dbuf, DMA_FROM_DEVICE), 0);

	dma_resv_lock(dbuf->resv, NULL);
	again = dbuf->ops->map_dma_buf(busy, DMA_FROM_DEVICE);
	dma_resv_unlock(dbuf->resv);
	KUNIT_EXPECT_EQ(test, PTR_ERR_OR_ZERO(again), -EBUSY);
	dma_buf_unmap_attachment_unlocked(busy, sgt, DMA_FROM_DEVICE);
	dma_buf_detach(dbuf, busy);

	dma_resv_lock(dbuf->resv, NULL);
	sgt = dbuf->ops->map_dma_buf(idle, DMA_TO_DEVICE);
	dma_resv_unlock(dbuf->resv);
	KUNIT_EXPECT_FALSE(test, IS_ERR(sgt));
	dma_buf_detach(dbuf, idle);
	dma_buf_put(dbuf);
}

/*
 * A dma-buf whose vmap() is I/O memory (an exporter of device memory):
 * every allocator imports it, vb2_plane_vaddr() gives that mapping, and
 * freeing the buffer unmaps it as it was mapped (dma_buf_vunmap() checks
 * that with BUG_ON()). Not in the contract suite: 6.12 hands back a
 * mapping rebuilt as system memory there and so hits that BUG_ON() (row P5
 * of Documentation/driver-contract.rst).
 */
static void vb2_alloc_dmabuf_iomem(struct kunit *test)
{
	const struct vb2t_alloc *a = test->param_value;
	struct vb2t_config cfg = {
		.type = CAP, .io_modes = VB2_DMABUF, .backend = a->ops,
		.size = PLANE, .dma_all_memory = true,
	};
	struct vb2t_ctx *ctx = vb2t_ctx_create(test, &cfg);
	unsigned int count = 1;
	struct v4l2_buffer b;
	void *mem;
	int fd = vb2t_iomem_fd(test, 4 * PAGE_SIZE, &mem);
	u32 *vaddr;

	KUNIT_ASSERT_EQ(test, vb2t_reqbufs(ctx, V4L2_MEMORY_DMABUF, &count), 0);
	vb2t_init_buffer(ctx, &b, NULL, 0);
	b.memory = V4L2_MEMORY_DMABUF;
	b.m.fd = fd;
	b.length = PLANE;
	KUNIT_ASSERT_EQ(test, vb2t_qbuf(ctx, &b), 0);
	vaddr = vb2_plane_vaddr(vb2_get_buffer(&ctx->q, 0), 0);
	KUNIT_EXPECT_PTR_EQ(test, (void *)vaddr, mem);
	if (vaddr)
		vaddr[1] = 0x7788;
	KUNIT_EXPECT_EQ(test, ((u32 *)mem)[1], 0x7788);
	vb2t_release(ctx);
	KUNIT_EXPECT_EQ(test, vb2t_count(ctx, VB2T_DETACH_DMABUF), 1);
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

	if (!a->any_user_memory)
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

	if (!a->any_user_memory)
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

/* Every exporter with every importer */

#define PLANE_PAGES	(PLANE / PAGE_SIZE)

/**
 * struct vb2t_pair - a DMABUF exporter and importer
 * @exp:	allocator of the exporting queue (MMAP memory, VIDIOC_EXPBUF).
 * @imp:	allocator of the importing queue (DMABUF memory).
 */
struct vb2t_pair {
	const struct vb2t_alloc	*exp;
	const struct vb2t_alloc	*imp;
};

#define PAIR(e, i)	{ &vb2t_allocs[e], &vb2t_allocs[i] }

static const struct vb2t_pair vb2t_pairs[] = {
	PAIR(VB2T_VMALLOC, VB2T_VMALLOC), PAIR(VB2T_VMALLOC, VB2T_CONTIG),
	PAIR(VB2T_VMALLOC, VB2T_SG), PAIR(VB2T_CONTIG, VB2T_VMALLOC),
	PAIR(VB2T_CONTIG, VB2T_CONTIG), PAIR(VB2T_CONTIG, VB2T_SG),
	PAIR(VB2T_SG, VB2T_VMALLOC), PAIR(VB2T_SG, VB2T_CONTIG),
	PAIR(VB2T_SG, VB2T_SG),
};

static void vb2t_pair_desc(const struct vb2t_pair *p, char *desc)
{
	snprintf(desc, KUNIT_PARAM_DESC_SIZE, "%s->%s", p->exp->name,
		 p->imp->name);
}

KUNIT_ARRAY_PARAM(vb2t_pair, vb2t_pairs, vb2t_pair_desc);

/* Exporters whose pages may be scattered. */
static const struct vb2t_alloc *const vb2t_scattered[] = {
	&vb2t_allocs[VB2T_VMALLOC], &vb2t_allocs[VB2T_SG],
};

static void vb2t_scattered_desc(const struct vb2t_alloc *const *a,
				char *desc)
{
	strscpy(desc, (*a)->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(vb2t_scattered, vb2t_scattered, vb2t_scattered_desc);

/*
 * A queue of allocator @a. The mask covers all memory, so that the DMA API
 * maps pages where they are instead of bouncing them through swiotlb: the
 * tests compare device addresses with the pages.
 */
static struct vb2t_ctx *pair_ctx(struct kunit *test,
				 const struct vb2t_alloc *a, u32 type,
				 unsigned int io_modes)
{
	struct vb2t_config cfg = {
		.type = type, .io_modes = io_modes, .backend = a->ops,
		.size = PLANE, .dma_all_memory = true,
	};

	return vb2t_ctx_create(test, &cfg);
}

/* References on plane 0 of a buffer: the queue's, mappings', dma-bufs'. */
static unsigned int ctx_num_users(struct vb2t_ctx *ctx, unsigned int index)
{
	struct vb2_buffer *vb = vb2_get_buffer(&ctx->q, index);

	return ctx->q.mem_ops->num_users(vb->planes[0].mem_priv);
}

/* VIDIOC_EXPBUF of plane 0; the descriptor is closed when the test ends. */
static int export_plane(struct kunit *test, struct vb2t_ctx *ctx,
			unsigned int index)
{
	struct v4l2_exportbuffer eb = {
		.type = ctx->q.type, .index = index, .flags = O_RDWR,
	};
	int ret;

	mutex_lock(&ctx->mutex);
	ret = vb2_expbuf(&ctx->q, &eb);
	mutex_unlock(&ctx->mutex);
	KUNIT_ASSERT_EQ(test, ret, 0);
	vb2t_close_fd_at_exit(test, eb.fd);
	return eb.fd;
}

/* Close it now, and release the dma-buf before returning. */
static void close_export(struct kunit *test, int fd)
{
	vb2t_close_fd_early(test, fd);
}

static void init_dmabuf_buffer(struct vb2t_ctx *ctx, struct v4l2_buffer *b,
			       unsigned int index, int fd)
{
	vb2t_init_buffer(ctx, b, NULL, index);
	b->memory = V4L2_MEMORY_DMABUF;
	b->m.fd = fd;
	b->length = PLANE;
}

/* The page behind a kernel address, in vmalloc space or the linear map. */
static struct page *kaddr_page(const void *p)
{
	return is_vmalloc_addr(p) ? vmalloc_to_page(p) : virt_to_page(p);
}

static void plane_pages(struct kunit *test, const u8 *vaddr,
			struct page **pages)
{
	unsigned int k;

	for (k = 0; k < PLANE_PAGES; k++) {
		pages[k] = kaddr_page(vaddr + k * PAGE_SIZE);
		KUNIT_ASSERT_NOT_NULL(test, pages[k]);
	}
}

/* The pages follow each other in physical memory, in order. */
static bool pages_contiguous(struct page *const *pages)
{
	unsigned int k;

	for (k = 1; k < PLANE_PAGES; k++)
		if (page_to_phys(pages[k]) != page_to_phys(pages[0]) +
					      k * PAGE_SIZE)
			return false;
	return true;
}

/* A word at both ends of every page, different everywhere. */
static u32 *pattern_word(u8 *vaddr, unsigned int k, bool end)
{
	return (u32 *)(vaddr + k * PAGE_SIZE + (end ? PAGE_SIZE - 4 : 0));
}

static u32 pattern_value(unsigned int k, bool end)
{
	return 0xb2000000 | k << 8 | end;
}

static void fill_pattern(u8 *vaddr)
{
	unsigned int k;

	for (k = 0; k < PLANE_PAGES; k++) {
		*pattern_word(vaddr, k, false) = pattern_value(k, false);
		*pattern_word(vaddr, k, true) = pattern_value(k, true);
	}
}

static void expect_pattern(struct kunit *test, u8 *vaddr)
{
	unsigned int k;

	for (k = 0; k < PLANE_PAGES; k++) {
		KUNIT_EXPECT_EQ(test, *pattern_word(vaddr, k, false),
				pattern_value(k, false));
		KUNIT_EXPECT_EQ(test, *pattern_word(vaddr, k, true),
				pattern_value(k, true));
	}
}

/*
 * Device addresses @addr..@addr + @len are pages @*k, @*k + 1, ... of the
 * exported plane. Only meaningful without an IOMMU (a KUnit device never
 * has one), where a device address is a physical address.
 */
static void expect_dma_range(struct kunit *test, struct device *dev,
			     dma_addr_t addr, unsigned long len,
			     struct page *const *pages, unsigned int *k)
{
	unsigned long off;

	for (off = 0; off < len && *k < PLANE_PAGES; off += PAGE_SIZE, ++*k)
		KUNIT_EXPECT_EQ_MSG(test, dma_to_phys(dev, addr + off),
				    page_to_phys(pages[*k]), "page %u", *k);
}

/* What the importing driver sees for the device covers the whole plane. */
static void expect_device_view(struct kunit *test, struct vb2t_ctx *imp,
			       struct vb2_buffer *vb,
			       struct page *const *pages)
{
	const struct vb2_mem_ops *ops = imp->backend;
	unsigned long total = 0;
	struct scatterlist *sg;
	struct sg_table *sgt;
	unsigned int i, k = 0;

	if (ops == &vb2_vmalloc_memops || device_iommu_mapped(imp->dev))
		return;
	if (ops == &vb2_dma_contig_memops) {
		expect_dma_range(test, imp->dev,
				 vb2_dma_contig_plane_dma_addr(vb, 0), PLANE,
				 pages, &k);
		return;
	}
	/* The importer's copy: its page links may be scrambled, not its DMA. */
	sgt = vb2_dma_sg_plane_desc(vb, 0);
	KUNIT_ASSERT_NOT_NULL(test, sgt);
	for_each_sgtable_dma_sg(sgt, sg, i) {
		expect_dma_range(test, imp->dev, sg_dma_address(sg),
				 sg_dma_len(sg), pages, &k);
		total += sg_dma_len(sg);
	}
	KUNIT_EXPECT_GE(test, total, PLANE);
}

/* The importer's kernel mapping shows the exporter's pages. */
static void expect_same_pages(struct kunit *test, u8 *vaddr,
			      struct page *const *pages)
{
	unsigned int k;

	for (k = 0; k < PLANE_PAGES; k++)
		KUNIT_EXPECT_PTR_EQ(test, kaddr_page(vaddr + k * PAGE_SIZE),
				    pages[k]);
}

/* A refused import leaves the buffer as it was and nothing attached. */
static void expect_refused(struct kunit *test, struct vb2t_ctx *imp, int ret)
{
	/* As in 6.12: memory the device cannot address in one piece. */
	KUNIT_EXPECT_EQ(test, ret, -EFAULT);
	KUNIT_EXPECT_EQ(test, vb2t_state(imp, 0), VB2_BUF_STATE_DEQUEUED);
	KUNIT_EXPECT_EQ(test, vb2t_count(imp, VB2T_ATTACH_DMABUF),
			vb2t_count(imp, VB2T_DETACH_DMABUF));
	KUNIT_EXPECT_EQ(test, imp->live_mem, 0);
}

/*
 * The imported buffer is queued; let the exporter go entirely (its file
 * descriptor and its queue), then use the buffer through the importer.
 */
static void exporter_goes_first(struct kunit *test, struct vb2t_ctx *exp,
				int fd, struct vb2t_ctx *imp)
{
	struct vb2_buffer *vb;
	u8 *vaddr;

	close_export(test, fd);
	vb2t_release(exp);
	vb = vb2t_peek(imp);
	KUNIT_ASSERT_NOT_NULL(test, vb);
	vaddr = vb2_plane_vaddr(vb, 0);
	KUNIT_ASSERT_NOT_NULL(test, vaddr);
	expect_pattern(test, vaddr);
	KUNIT_ASSERT_TRUE(test, vb2t_complete_next(imp, VB2_BUF_STATE_DONE));
	KUNIT_EXPECT_EQ(test, vb2t_dqbuf_index(imp, NULL, NULL), 0);
	KUNIT_EXPECT_EQ(test, vb2t_streamoff(imp), 0);
	KUNIT_EXPECT_EQ(test, vb2t_count(imp, VB2T_ATTACH_DMABUF), 1);
	vb2t_release(imp);
}

/*
 * Export plane 0 of an MMAP buffer of one allocator, import it into a
 * DMABUF queue of another: the importer's kernel mapping and device view
 * are the exporter's pages. dma-contig can only import memory that is
 * contiguous for its device: without an IOMMU, physically contiguous
 * memory. Other exporters give that only by luck (vmalloc and dma-sg
 * pages come one by one or in chunks), so the expected outcome is worked
 * out from the pages: contiguous, the import works; scattered, QBUF fails
 * with -EFAULT, as the DMABUF import of memory a device cannot use does.
 */
static void vb2_alloc_dmabuf_matrix(struct kunit *test)
{
	const struct vb2t_pair *p = test->param_value;
	struct vb2t_ctx *exp = pair_ctx(test, p->exp, CAP, VB2_MMAP);
	struct vb2t_ctx *imp = pair_ctx(test, p->imp, OUT, VB2_DMABUF);
	struct page *pages[PLANE_PAGES];
	unsigned int count = 1;
	struct vb2_buffer *vb;
	struct v4l2_buffer b;
	u8 *src, *dst;
	bool usable;
	int fd, ret;

	KUNIT_ASSERT_EQ(test, vb2t_reqbufs(exp, V4L2_MEMORY_MMAP, &count), 0);
	fd = export_plane(test, exp, 0);
	src = vb2_plane_vaddr(vb2_get_buffer(&exp->q, 0), 0);
	KUNIT_ASSERT_NOT_NULL(test, src);
	plane_pages(test, src, pages);
	fill_pattern(src);
	usable = p->imp->ops != &vb2_dma_contig_memops ||
		 device_iommu_mapped(imp->dev) || pages_contiguous(pages);

	count = 1;
	KUNIT_ASSERT_EQ(test, vb2t_reqbufs(imp, V4L2_MEMORY_DMABUF, &count), 0);
	init_dmabuf_buffer(imp, &b, 0, fd);
	ret = vb2t_qbuf(imp, &b);
	if (!usable) {
		kunit_info(test, "%s pages are scattered: import refused\n",
			   p->exp->name);
		expect_refused(test, imp, ret);
		return;
	}
	KUNIT_ASSERT_EQ(test, ret, 0);
	KUNIT_ASSERT_EQ(test, vb2t_streamon(imp), 0);
	vb = vb2t_peek(imp);
	KUNIT_ASSERT_NOT_NULL(test, vb);
	dst = vb2_plane_vaddr(vb, 0);
	KUNIT_ASSERT_NOT_NULL(test, dst);
	expect_pattern(test, dst);
	expect_same_pages(test, dst, pages);
	expect_device_view(test, imp, vb, pages);

	/* And the other way round. */
	*pattern_word(dst, 1, false) = 0x2bb2;
	KUNIT_EXPECT_EQ(test, *pattern_word(src, 1, false), 0x2bb2);
	*pattern_word(dst, 1, false) = pattern_value(1, false);
	KUNIT_ASSERT_TRUE(test, vb2t_complete_next(imp, VB2_BUF_STATE_DONE));
	KUNIT_EXPECT_EQ(test, vb2t_dqbuf_index(imp, NULL, NULL), 0);

	KUNIT_ASSERT_EQ(test, vb2t_qbuf(imp, &b), 0);
	exporter_goes_first(test, exp, fd, imp);
}

/*
 * dma-contig refuses a scattered buffer. Whether an exporter's buffer is
 * scattered is luck, so several are made and a scattered one is picked.
 */
static void vb2_alloc_dmabuf_scattered(struct kunit *test)
{
	const struct vb2t_alloc *const *a = test->param_value;
	struct vb2t_ctx *exp = pair_ctx(test, *a, CAP, VB2_MMAP);
	struct vb2t_ctx *imp = pair_ctx(test, &vb2t_allocs[VB2T_CONTIG], OUT,
					VB2_DMABUF);
	struct page *pages[PLANE_PAGES];
	unsigned int count = 8, i;
	struct v4l2_buffer b;
	u8 *src;
	int fd;

	if (device_iommu_mapped(imp->dev))
		kunit_skip(test, "behind an IOMMU any memory is contiguous");
	KUNIT_ASSERT_EQ(test, vb2t_reqbufs(exp, V4L2_MEMORY_MMAP, &count), 0);
	for (i = 0; i < count; i++) {
		src = vb2_plane_vaddr(vb2_get_buffer(&exp->q, i), 0);
		KUNIT_ASSERT_NOT_NULL(test, src);
		plane_pages(test, src, pages);
		if (!pages_contiguous(pages))
			break;
	}
	if (i == count)
		kunit_skip(test, "all %u buffers happen to be contiguous", count);

	fd = export_plane(test, exp, i);
	count = 1;
	KUNIT_ASSERT_EQ(test, vb2t_reqbufs(imp, V4L2_MEMORY_DMABUF, &count), 0);
	init_dmabuf_buffer(imp, &b, 0, fd);
	expect_refused(test, imp, vb2t_qbuf(imp, &b));
	/* Nothing was left behind that would make a second try different. */
	expect_refused(test, imp, vb2t_qbuf(imp, &b));
	KUNIT_EXPECT_EQ(test, vb2t_count(imp, VB2T_ATTACH_DMABUF), 2);
	KUNIT_EXPECT_EQ(test, ctx_num_users(exp, i), 2);
	close_export(test, fd);
	KUNIT_EXPECT_EQ(test, ctx_num_users(exp, i), 1);
}

/* Larger than the 64 KiB DMA segment limit of a KUnit device. */
#define BIG_PLANE	(SZ_128K + PAGE_SIZE)

/*
 * Non-coherent dma-contig memory larger than the device's DMA segment limit
 * (a KUnit device has no DMA parameters to raise the default 64 KiB) is not
 * handed over as one scatterlist segment longer than the device takes,
 * which the DMA API's debugging warns about: it is one physically
 * contiguous block whose kernel mapping, device address, user mapping,
 * cache syncs and export work as for any buffer, and it starts zeroed.
 */
static void vb2_alloc_contig_non_coherent_large(struct kunit *test)
{
	struct vb2t_config cfg = {
		.type = CAP, .io_modes = VB2_MMAP,
		.backend = &vb2_dma_contig_memops, .size = BIG_PLANE,
		.allow_cache_hints = true, .dma_all_memory = true,
	};
	struct vb2t_ctx *ctx = vb2t_ctx_create(test, &cfg);
	struct v4l2_requestbuffers req = {
		.count = 1, .type = CAP, .memory = V4L2_MEMORY_MMAP,
		.flags = V4L2_MEMORY_FLAG_NON_COHERENT,
	};
	struct vb2t_ctx *imp;
	struct vb2_buffer *vb;
	struct v4l2_buffer b;
	unsigned long addr, k;
	struct page *first;
	unsigned int count;
	u8 byte = 0;
	u8 *vaddr, *dst;
	int fd, ret;

	KUNIT_ASSERT_GT(test, BIG_PLANE, dma_get_max_seg_size(ctx->dev));
	mutex_lock(&ctx->mutex);
	ret = vb2_reqbufs(&ctx->q, &req);
	mutex_unlock(&ctx->mutex);
	KUNIT_ASSERT_EQ(test, ret, 0);
	KUNIT_ASSERT_TRUE(test, ctx->q.non_coherent_mem);
	vb = vb2_get_buffer(&ctx->q, 0);
	vaddr = vb2_plane_vaddr(vb, 0);
	KUNIT_ASSERT_NOT_NULL(test, vaddr);
	KUNIT_EXPECT_NULL(test, memchr_inv(vaddr, 0, BIG_PLANE));

	/* One block: consecutive pages, the device address is its start. */
	first = kaddr_page(vaddr);
	for (k = 1; k < BIG_PLANE / PAGE_SIZE; k++)
		KUNIT_EXPECT_EQ_MSG(test, page_to_phys(kaddr_page(vaddr +
								  k * PAGE_SIZE)),
				    page_to_phys(first) + k * PAGE_SIZE,
				    "page %lu", k);
	KUNIT_EXPECT_EQ(test, dma_to_phys(ctx->dev,
					  vb2_dma_contig_plane_dma_addr(vb, 0)),
			page_to_phys(first));

	/* Both ends, through a user mapping and after a streaming cycle. */
	vaddr[0] = 0x5a;
	vaddr[BIG_PLANE - 1] = 0xa5;
	vb2t_init_buffer(ctx, &b, NULL, 0);
	KUNIT_ASSERT_EQ(test, vb2t_querybuf(ctx, &b), 0);
	addr = kunit_vm_mmap(test, vb2t_queue_file(ctx), 0, BIG_PLANE,
			     PROT_READ, MAP_SHARED, b.m.offset);
	KUNIT_ASSERT_FALSE(test, IS_ERR_VALUE(addr));
	KUNIT_ASSERT_NE(test, addr, 0);
	KUNIT_EXPECT_EQ(test, copy_from_user(&byte, (void __user *)addr, 1), 0);
	KUNIT_EXPECT_EQ(test, byte, 0x5a);
	KUNIT_EXPECT_EQ(test, copy_from_user(&byte, (void __user *)addr +
					     BIG_PLANE - 1, 1), 0);
	KUNIT_EXPECT_EQ(test, byte, 0xa5);
	KUNIT_EXPECT_EQ(test, vm_munmap(addr, BIG_PLANE), 0);

	KUNIT_ASSERT_EQ(test, vb2t_qbuf_mmap(ctx, 0), 0);
	KUNIT_ASSERT_EQ(test, vb2t_streamon(ctx), 0);
	KUNIT_ASSERT_TRUE(test, vb2t_complete_next(ctx, VB2_BUF_STATE_DONE));
	KUNIT_EXPECT_EQ(test, vb2t_dqbuf_index(ctx, NULL, NULL), 0);
	KUNIT_EXPECT_EQ(test, vaddr[BIG_PLANE - 1], 0xa5);
	KUNIT_EXPECT_EQ(test, vb2t_streamoff(ctx), 0);

	/*
	 * Exported to a dma-contig queue: its device sees the same block (in
	 * segments of at most 64 KiB, contiguous), its kernel mapping the
	 * same memory. The block outlives the exporting queue.
	 */
	fd = export_plane(test, ctx, 0);
	cfg.type = OUT;
	cfg.io_modes = VB2_DMABUF;
	cfg.allow_cache_hints = false;
	imp = vb2t_ctx_create(test, &cfg);
	count = 1;
	KUNIT_ASSERT_EQ(test, vb2t_reqbufs(imp, V4L2_MEMORY_DMABUF, &count), 0);
	vb2t_init_buffer(imp, &b, NULL, 0);
	b.memory = V4L2_MEMORY_DMABUF;
	b.m.fd = fd;
	b.length = BIG_PLANE;
	KUNIT_ASSERT_EQ(test, vb2t_qbuf(imp, &b), 0);
	KUNIT_ASSERT_EQ(test, vb2t_streamon(imp), 0);
	vb = vb2t_peek(imp);
	KUNIT_ASSERT_NOT_NULL(test, vb);
	KUNIT_EXPECT_EQ(test, dma_to_phys(imp->dev,
					  vb2_dma_contig_plane_dma_addr(vb, 0)),
			page_to_phys(first));
	count = 0;
	KUNIT_EXPECT_EQ(test, vb2t_reqbufs(ctx, V4L2_MEMORY_MMAP, &count), 0);
	close_export(test, fd);
	dst = vb2_plane_vaddr(vb, 0);
	KUNIT_ASSERT_NOT_NULL(test, dst);
	KUNIT_EXPECT_EQ(test, dst[0], 0x5a);
	KUNIT_EXPECT_EQ(test, dst[BIG_PLANE - 1], 0xa5);
	KUNIT_ASSERT_TRUE(test, vb2t_complete_next(imp, VB2_BUF_STATE_DONE));
	KUNIT_EXPECT_EQ(test, vb2t_dqbuf_index(imp, NULL, NULL), 0);
	vb2t_release(imp);
	KUNIT_EXPECT_EQ(test, ctx->live_mem, 0);
	KUNIT_EXPECT_EQ(test, imp->live_mem, 0);
}

/* One buffer of a DMA_ATTR_NO_KERNEL_MAPPING queue, exported and imported. */
static void no_kernel_mapping_one(struct kunit *test, bool non_coherent,
				  unsigned long size)
{
	struct vb2t_config cfg = {
		.type = CAP, .io_modes = VB2_MMAP,
		.backend = &vb2_dma_contig_memops, .size = size,
		.allow_cache_hints = true, .dma_all_memory = true,
	};
	struct vb2t_ctx *ctx = vb2t_ctx_create(test, &cfg), *imp;
	struct v4l2_requestbuffers req = {
		.count = 1, .type = CAP, .memory = V4L2_MEMORY_MMAP,
		.flags = non_coherent ? V4L2_MEMORY_FLAG_NON_COHERENT : 0,
	};
	struct vb2_buffer *vb;
	struct v4l2_buffer b;
	unsigned int count = 1;
	unsigned long addr;
	u8 byte = 0x3c;
	int fd, ret;

	ctx->q.dma_attrs = DMA_ATTR_NO_KERNEL_MAPPING;
	mutex_lock(&ctx->mutex);
	ret = vb2_reqbufs(&ctx->q, &req);
	mutex_unlock(&ctx->mutex);
	KUNIT_ASSERT_EQ(test, ret, 0);
	KUNIT_EXPECT_EQ(test, (bool)ctx->q.non_coherent_mem, non_coherent);
	vb = vb2_get_buffer(&ctx->q, 0);
	KUNIT_EXPECT_NULL(test, vb2_plane_vaddr(vb, 0));
	KUNIT_EXPECT_NE(test, vb2_dma_contig_plane_dma_addr(vb, 0), 0);

	/* User space has the memory, from its last byte back to the first. */
	vb2t_init_buffer(ctx, &b, NULL, 0);
	KUNIT_ASSERT_EQ(test, vb2t_querybuf(ctx, &b), 0);
	addr = kunit_vm_mmap(test, vb2t_queue_file(ctx), 0, size,
			     PROT_READ | PROT_WRITE, MAP_SHARED, b.m.offset);
	KUNIT_ASSERT_FALSE(test, IS_ERR_VALUE(addr));
	KUNIT_ASSERT_NE(test, addr, 0);
	KUNIT_EXPECT_EQ(test, copy_to_user((void __user *)addr + size - 1,
					   &byte, 1), 0);
	KUNIT_ASSERT_EQ(test, vb2t_qbuf_mmap(ctx, 0), 0);
	KUNIT_ASSERT_EQ(test, vb2t_streamon(ctx), 0);
	KUNIT_ASSERT_TRUE(test, vb2t_complete_next(ctx, VB2_BUF_STATE_DONE));
	KUNIT_EXPECT_EQ(test, vb2t_dqbuf_index(ctx, NULL, NULL), 0);
	byte = 0;
	KUNIT_EXPECT_EQ(test, copy_from_user(&byte, (void __user *)addr +
					     size - 1, 1), 0);
	KUNIT_EXPECT_EQ(test, byte, 0x3c);

	/* An importer's device gets the memory, its kernel no mapping. */
	fd = export_plane(test, ctx, 0);
	cfg.type = OUT;
	cfg.io_modes = VB2_DMABUF;
	imp = vb2t_ctx_create(test, &cfg);
	KUNIT_ASSERT_EQ(test, vb2t_reqbufs(imp, V4L2_MEMORY_DMABUF, &count), 0);
	vb2t_init_buffer(imp, &b, NULL, 0);
	b.memory = V4L2_MEMORY_DMABUF;
	b.m.fd = fd;
	b.length = size;
	KUNIT_ASSERT_EQ(test, vb2t_qbuf(imp, &b), 0);
	KUNIT_ASSERT_EQ(test, vb2t_streamon(imp), 0);
	vb = vb2t_peek(imp);
	KUNIT_ASSERT_NOT_NULL(test, vb);
	KUNIT_EXPECT_NE(test, vb2_dma_contig_plane_dma_addr(vb, 0), 0);
	KUNIT_EXPECT_NULL(test, vb2_plane_vaddr(vb, 0));
	KUNIT_ASSERT_TRUE(test, vb2t_complete_next(imp, VB2_BUF_STATE_DONE));
	KUNIT_EXPECT_EQ(test, vb2t_dqbuf_index(imp, NULL, NULL), 0);
	vb2t_release(imp);
	close_export(test, fd);
	KUNIT_EXPECT_EQ(test, vm_munmap(addr, size), 0);
	vb2t_release(ctx);
}

/*
 * DMA_ATTR_NO_KERNEL_MAPPING in the queue's dma_attrs: dma-contig MMAP
 * memory, coherent, non-coherent, and non-coherent above the segment
 * limit, has no kernel mapping (vb2_plane_vaddr() is NULL) but a device
 * address, user mappings and a streaming cycle; its dma-buf offers no
 * vmap(), so an importing queue has no kernel mapping either.
 */
static void vb2_alloc_contig_no_kernel_mapping(struct kunit *test)
{
	no_kernel_mapping_one(test, false, PLANE);
	no_kernel_mapping_one(test, true, PLANE);
	no_kernel_mapping_one(test, true, BIG_PLANE);
}

/*
 * vb2_dma_contig_set_max_seg_size() raises the limit of a device with DMA
 * parameters, never lowers it, and fails with -ENODEV without them (a
 * KUnit device has none until the test gives it some).
 */
static void vb2_alloc_contig_set_max_seg_size(struct kunit *test)
{
	struct device_dma_parameters *parms;
	struct device *dev;

	dev = kunit_device_register(test, "vb2t-max-seg-size");
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, dev);
	KUNIT_ASSERT_NULL(test, dev->dma_parms);
	KUNIT_EXPECT_EQ(test, vb2_dma_contig_set_max_seg_size(dev, SZ_1M),
			-ENODEV);
	KUNIT_EXPECT_EQ(test, dma_get_max_seg_size(dev), SZ_64K);

	parms = kunit_kzalloc(test, sizeof(*parms), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, parms);
	dev->dma_parms = parms;
	dma_set_max_seg_size(dev, SZ_128K);
	KUNIT_EXPECT_EQ(test, vb2_dma_contig_set_max_seg_size(dev, SZ_1M), 0);
	KUNIT_EXPECT_EQ(test, dma_get_max_seg_size(dev), SZ_1M);
	KUNIT_EXPECT_EQ(test, vb2_dma_contig_set_max_seg_size(dev, SZ_64K), 0);
	KUNIT_EXPECT_EQ(test, dma_get_max_seg_size(dev), SZ_1M);
	KUNIT_EXPECT_EQ(test, vb2_dma_contig_set_max_seg_size(dev,
							      DMA_BIT_MASK(32)),
			0);
	KUNIT_EXPECT_EQ(test, dma_get_max_seg_size(dev), DMA_BIT_MASK(32));
	dev->dma_parms = NULL;
}

/*
 * What a buffer costs in kernel memory besides its planes. A driver buffer
 * of the usual shape (the V4L2 buffer and a list head, as &struct
 * vb2t_buffer) fits a 1 KiB kmalloc cache on 64-bit, and each plane's
 * allocator state a 64-byte (vmalloc) or 128-byte one.
 */
static void vb2_alloc_footprint(struct kunit *test)
{
	const struct vb2t_alloc *a = test->param_value;
	struct vb2t_ctx *ctx = alloc_ctx(test, CAP, VB2_MMAP);
	size_t priv = a->ops == &vb2_vmalloc_memops ? 64 : 128;
	unsigned int count = 2;
	struct vb2_buffer *vb;

	KUNIT_ASSERT_EQ(test, vb2t_reqbufs(ctx, V4L2_MEMORY_MMAP, &count), 0);
	vb = vb2_get_buffer(&ctx->q, 1);
	KUNIT_ASSERT_NOT_NULL(test, vb);
	KUNIT_EXPECT_EQ(test, ksize(vb),
			kmalloc_size_roundup(sizeof(struct vb2t_buffer)));
	KUNIT_EXPECT_LE(test, ksize(vb2t_backend_priv(vb, 0)), priv);
	if (BITS_PER_LONG == 64)
		KUNIT_EXPECT_LE(test, ksize(vb), 1024);
}

static struct kunit_case vb2_alloc_cases[] = {
	KUNIT_CASE_PARAM(vb2_alloc_footprint, vb2t_alloc_gen_params),
	KUNIT_CASE_PARAM(vb2_alloc_mmap, vb2t_alloc_gen_params),
	KUNIT_CASE_PARAM(vb2_alloc_dmabuf, vb2t_alloc_gen_params),
	KUNIT_CASE_PARAM(vb2_alloc_dmabuf_iomem, vb2t_alloc_gen_params),
	KUNIT_CASE_PARAM(vb2_alloc_caller_errors, vb2t_alloc_gen_params),
	KUNIT_CASE_PARAM(vb2_alloc_export_attachments, vb2t_alloc_gen_params),
	KUNIT_CASE_PARAM(vb2_alloc_userptr, vb2t_alloc_gen_params),
	KUNIT_CASE_PARAM(vb2_alloc_userptr_unaligned, vb2t_alloc_gen_params),
	KUNIT_CASE_PARAM(vb2_alloc_non_coherent, vb2t_alloc_gen_params),
	KUNIT_CASE(vb2_alloc_contig_non_coherent_large),
	KUNIT_CASE(vb2_alloc_contig_no_kernel_mapping),
	KUNIT_CASE(vb2_alloc_contig_set_max_seg_size),
	KUNIT_CASE_PARAM(vb2_alloc_dmabuf_matrix, vb2t_pair_gen_params),
	KUNIT_CASE_PARAM(vb2_alloc_dmabuf_scattered, vb2t_scattered_gen_params),
	{}
};

static struct kunit_suite vb2_alloc_suite = {
	.name = "videobuf2-allocators",
	.test_cases = vb2_alloc_cases,
};

kunit_test_suite(vb2_alloc_suite);
