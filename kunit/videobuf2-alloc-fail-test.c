// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests of the videobuf2 allocators when memory runs out: each slab
 * and page allocation an operation makes is failed in turn, and the
 * operation must fail cleanly every time.
 */

#include <kunit/resource.h>
#include <kunit/test.h>
#include <linux/debugfs.h>
#include <linux/delay.h>
#include <linux/dma-buf.h>
#include <linux/dma-mapping.h>
#include <linux/fcntl.h>
#include <linux/fdtable.h>
#include <linux/file.h>
#include <linux/gfp.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include <media/videobuf2-v4l2.h>
#include <media/videobuf2-vmalloc.h>

#include "vb2-test-helpers.h"

/**
 * DOC: how allocation failures are injected
 *
 * With CONFIG_FAULT_INJECTION, a task's fail_nth makes the n-th allocation
 * of that task that may be failed (a slab allocation with
 * CONFIG_FAILSLAB, a page allocation with CONFIG_FAIL_PAGE_ALLOC) fail;
 * each such allocation counts fail_nth down, and it stays above zero if
 * the task made fewer. A test runs an operation with fail_nth = 1, 2, ...
 * until it makes fewer allocations than that (VB2F_MISSES times in a row),
 * so every allocation the operation makes fails once: videobuf2's, the
 * test doubles', the kernel's below them, kmemleak's own objects. Many of
 * these failures are absorbed (a retry, a fallback, kmemleak's reserve
 * pool); the others make the operation fail. After those the test checks
 * that the operation returned the errno the uAPI documents for lack of
 * memory (ENOMEM), that the queue is as it was (same buffers, same states,
 * nothing left allocated by the fake allocator, no reference or dma-buf
 * attachment left over), and that the operation then works without
 * injection, followed by a streaming cycle. What the fake allocator cannot
 * see (memory of the real allocators, of the dma-buf core) is left to
 * kmemleak.
 *
 * By default the attributes ignore allocations that may sleep (almost all
 * of videobuf2's), order-0 pages and highmem-capable pages (vmalloc, user
 * memory), and dump a stack for each injected failure. The tests change
 * that for their duration through the variables behind the debugfs files
 * (debugfs keeps a file's data pointer in the inode's i_private), so they
 * need CONFIG_FAULT_INJECTION_DEBUG_FS, and are skipped without it. Other
 * tasks are not affected: they fail nothing as long as the attributes'
 * probability is 0, as it is by default.
 */

#define CAP	V4L2_BUF_TYPE_VIDEO_CAPTURE
#define OUT	V4L2_BUF_TYPE_VIDEO_OUTPUT
#define PLANE	(3 * PAGE_SIZE)

/*
 * vm_map_ram() takes up to BITS_PER_LONG pages from per-CPU blocks, which
 * allocate only when one is used up; a larger mapping gets an area of its
 * own, and allocates, every time. Paths that map buffers use this size.
 */
#define LARGE_PLANE	((BITS_PER_LONG + 1) * PAGE_SIZE)

/* More allocations than any operation here makes, to stop a runaway loop. */
#define VB2F_MAX_POINTS	2000

/*
 * An operation does not always make the same number of allocations (per-CPU
 * caches and vmap blocks, kmemleak's own objects...): the loop ends when it
 * made fewer than n this many times in a row.
 */
#define VB2F_MISSES	3

/* Fault injection control */

#ifdef CONFIG_FAULT_INJECTION
static void vb2f_arm(unsigned int nth)
{
	WRITE_ONCE(current->fail_nth, nth);
}

/* Stop injecting; true if the armed allocation was reached (and failed). */
static bool vb2f_disarm(void)
{
	unsigned int left = READ_ONCE(current->fail_nth);

	WRITE_ONCE(current->fail_nth, 0);
	return !left;
}
#else
static void vb2f_arm(unsigned int nth)
{
}

static bool vb2f_disarm(void)
{
	return false;
}
#endif

/**
 * enum vb2f_var_type - C type of the variable behind a debugfs file
 * @VB2F_BOOL: bool (debugfs_create_bool()).
 * @VB2F_U32: u32 (debugfs_create_u32()).
 * @VB2F_ULONG: unsigned long (debugfs_create_ul()).
 */
enum vb2f_var_type {
	VB2F_BOOL,
	VB2F_U32,
	VB2F_ULONG,
};

/**
 * struct vb2f_knob - a fault injection attribute the tests set to 0
 * @dir:	its directory at the top of debugfs.
 * @name:	its file.
 * @type:	type of the variable behind it.
 */
struct vb2f_knob {
	const char		*dir;
	const char		*name;
	enum vb2f_var_type	type;
};

static const struct vb2f_knob vb2f_knobs[] = {
	/* Fail allocations that may sleep too (GFP_KERNEL). */
	{ "failslab", "ignore-gfp-wait", VB2F_BOOL },
	{ "fail_page_alloc", "ignore-gfp-wait", VB2F_BOOL },
	/* Single pages, and pages that may be highmem (vmalloc, user). */
	{ "fail_page_alloc", "min-order", VB2F_U32 },
	{ "fail_page_alloc", "ignore-gfp-highmem", VB2F_BOOL },
	/* No message and stack dump for each injected failure. */
	{ "failslab", "verbose", VB2F_ULONG },
	{ "fail_page_alloc", "verbose", VB2F_ULONG },
};

/**
 * struct vb2f_saved - a changed attribute, to be restored
 * @var:	the variable.
 * @type:	its type.
 * @old:	its value before the test.
 */
struct vb2f_saved {
	void			*var;
	enum vb2f_var_type	type;
	unsigned long		old;
};

static void *vb2f_knob_var(const struct vb2f_knob *k)
{
	struct dentry *dir, *file;
	void *var = NULL;

	dir = debugfs_lookup(k->dir, NULL);
	if (IS_ERR_OR_NULL(dir))
		return NULL;
	file = debugfs_lookup(k->name, dir);
	if (!IS_ERR_OR_NULL(file)) {
		var = d_inode(file)->i_private;
		dput(file);
	}
	dput(dir);
	return var;
}

static unsigned long vb2f_var_get(const struct vb2f_saved *s)
{
	switch (s->type) {
	case VB2F_BOOL:
		return READ_ONCE(*(bool *)s->var);
	case VB2F_U32:
		return READ_ONCE(*(u32 *)s->var);
	default:
		return READ_ONCE(*(unsigned long *)s->var);
	}
}

static void vb2f_var_set(const struct vb2f_saved *s, unsigned long val)
{
	switch (s->type) {
	case VB2F_BOOL:
		WRITE_ONCE(*(bool *)s->var, val);
		break;
	case VB2F_U32:
		WRITE_ONCE(*(u32 *)s->var, val);
		break;
	default:
		WRITE_ONCE(*(unsigned long *)s->var, val);
		break;
	}
}

static void vb2f_restore_knobs(void *data)
{
	struct vb2f_saved *saved = data;
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(vb2f_knobs); i++)
		if (saved[i].var)
			vb2f_var_set(&saved[i], saved[i].old);
}

/* Set every attribute to 0 until the test ends; false if one is missing. */
static bool vb2f_set_knobs(struct kunit *test)
{
	struct vb2f_saved *saved;
	unsigned int i;

	saved = kunit_kcalloc(test, ARRAY_SIZE(vb2f_knobs), sizeof(*saved),
			      GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, saved);
	for (i = 0; i < ARRAY_SIZE(vb2f_knobs); i++) {
		saved[i].var = vb2f_knob_var(&vb2f_knobs[i]);
		if (!saved[i].var)
			return false;
		saved[i].type = vb2f_knobs[i].type;
	}
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test,
							vb2f_restore_knobs,
							saved), 0);
	for (i = 0; i < ARRAY_SIZE(vb2f_knobs); i++) {
		saved[i].old = vb2f_var_get(&saved[i]);
		vb2f_var_set(&saved[i], 0);
	}
	return true;
}

/* Does the first allocation fail, a GFP_KERNEL object and a single page? */
static bool vb2f_probe(void)
{
	struct page *page;
	bool slab, pages;
	void *p;

	vb2f_arm(1);
	p = kmalloc(16, GFP_KERNEL);
	slab = vb2f_disarm() && !p;
	kfree(p);

	vb2f_arm(1);
	page = alloc_page(GFP_KERNEL);
	pages = vb2f_disarm() && !page;
	if (page)
		__free_page(page);
	return slab && pages;
}

/* Skip the test unless every allocation of this task can be failed. */
static void vb2f_require_injection(struct kunit *test)
{
	if (!IS_ENABLED(CONFIG_FAULT_INJECTION) ||
	    !IS_ENABLED(CONFIG_FAILSLAB) || !IS_ENABLED(CONFIG_FAIL_PAGE_ALLOC))
		kunit_skip(test, "needs CONFIG_FAILSLAB and CONFIG_FAIL_PAGE_ALLOC");
	if (!IS_ENABLED(CONFIG_FAULT_INJECTION_DEBUG_FS) ||
	    !vb2f_set_knobs(test))
		kunit_skip(test, "needs CONFIG_FAULT_INJECTION_DEBUG_FS");
	if (!vb2f_probe())
		kunit_skip(test, "fault injection does not fail GFP_KERNEL allocations");
}

/* One operation, failed allocation by allocation */

struct vb2f_run;

/**
 * struct vb2f_path - an operation whose allocations are failed in turn
 * @name:	for the test output.
 * @type:	buffer type of the queue. Output: with CONFIG_DMA_API_DEBUG,
 *		DMA mappings the device writes to are tracked in a radix
 *		tree, and a failed allocation there disables the DMA API
 *		debugging for the rest of the boot.
 * @io_modes:	I/O modes of the queue.
 * @exporter:	an MMAP queue of the same allocator exports the memory.
 * @large:	the buffers are LARGE_PLANE bytes, not PLANE.
 * @cache_hints: the queue allows cache hints (non-coherent memory).
 * @setup:	brings the queue to where the operation starts; no
 *		injection.
 * @op:		the operation, under injection. A multi-step operation
 *		records in &vb2f_run.stage how far it got, and continues
 *		from there when called again.
 * @check_failed: checks the queue after @op failed.
 * @use:	uses what @op made, in a streaming cycle.
 * @teardown:	brings the queue back to its state before @setup, and
 *		checks that nothing is left.
 */
struct vb2f_path {
	const char	*name;
	u32		type;
	unsigned int	io_modes;
	bool		exporter;
	bool		large;
	bool		cache_hints;
	void		(*setup)(struct vb2f_run *r);
	int		(*op)(struct vb2f_run *r);
	void		(*check_failed)(struct vb2f_run *r, int ret);
	void		(*use)(struct vb2f_run *r);
	void		(*teardown)(struct vb2f_run *r);
};

/**
 * struct vb2f_run - the state of one test
 * @test:	the test.
 * @alloc:	the allocator under test.
 * @path:	the operation under test.
 * @ctx:	the queue under test.
 * @exp:	the exporting queue, or NULL.
 * @dbuf:	the exported dma-buf, referenced by the test, or NULL.
 * @fd:		a descriptor the test holds (exported dma-buf), or -1.
 * @user:	USERPTR memory.
 * @size:	plane size.
 * @nth:	the allocation being failed.
 * @stage:	how far a multi-step operation got.
 * @index:	buffer made by the operation (CREATE_BUFS).
 * @count:	buffers made by the operation.
 * @vaddr:	kernel mapping obtained by the operation.
 * @points:	allocations failed so far.
 * @failures:	of those, the ones that made the operation fail.
 * @einval:	of those, the ones where it said what 6.12 says there instead
 *		of ENOMEM (EINVAL, or EFAULT for a vmalloc import).
 */
struct vb2f_run {
	struct kunit		*test;
	const struct vb2t_alloc	*alloc;
	const struct vb2f_path	*path;
	struct vb2t_ctx		*ctx;
	struct vb2t_ctx		*exp;
	struct dma_buf		*dbuf;
	int			fd;
	unsigned long		user;
	unsigned long		size;
	unsigned int		nth;
	unsigned int		stage;
	unsigned int		index;
	unsigned int		count;
	void			*vaddr;
	unsigned int		points;
	unsigned int		failures;
	unsigned int		einval;
};

/* Common steps and checks */

static void vb2f_expect_enomem(struct vb2f_run *r, int ret)
{
	KUNIT_EXPECT_EQ_MSG(r->test, ret, -ENOMEM,
			    "%s: allocation %u failed", r->path->name, r->nth);
}

/* The fake allocator holds this many plane memories. */
static void vb2f_expect_live(struct vb2f_run *r, struct vb2t_ctx *ctx,
			     int live)
{
	KUNIT_EXPECT_EQ_MSG(r->test, ctx->live_mem, live,
			    "%s: allocation %u failed", r->path->name, r->nth);
}

static void vb2f_expect_buffers(struct vb2f_run *r, unsigned int n)
{
	KUNIT_EXPECT_EQ_MSG(r->test, vb2_get_num_buffers(&r->ctx->q), n,
			    "%s: allocation %u failed", r->path->name, r->nth);
}

static void vb2f_expect_state(struct vb2f_run *r, unsigned int index,
			      enum vb2_buffer_state state)
{
	KUNIT_EXPECT_EQ_MSG(r->test, vb2t_state(r->ctx, index), state,
			    "%s: allocation %u failed", r->path->name, r->nth);
}

/* References on plane 0 of a buffer: the queue's and each dma-buf's. */
static unsigned int vb2f_num_users(struct vb2t_ctx *ctx, unsigned int index)
{
	struct vb2_buffer *vb = vb2_get_buffer(&ctx->q, index);

	return ctx->q.mem_ops->num_users(vb->planes[0].mem_priv);
}

static int vb2f_reqbufs(struct vb2t_ctx *ctx, u32 memory, unsigned int count)
{
	int ret = vb2t_reqbufs(ctx, memory, &count);

	KUNIT_ASSERT_EQ(ctx->test, ret, 0);
	return count;
}

/* REQBUFS(0): every buffer and all memory of the fake allocator go. */
static void vb2f_free_all(struct vb2f_run *r, struct vb2t_ctx *ctx)
{
	u32 memory = ctx->q.memory;

	if (!memory)
		memory = ctx->q.io_modes & VB2_MMAP ? V4L2_MEMORY_MMAP :
			 ctx->q.io_modes & VB2_USERPTR ? V4L2_MEMORY_USERPTR :
			 V4L2_MEMORY_DMABUF;
	vb2f_reqbufs(ctx, memory, 0);
	KUNIT_EXPECT_EQ(r->test, vb2_get_num_buffers(&ctx->q), 0);
	vb2f_expect_live(r, ctx, 0);
}

/* The queued buffer goes to the driver, comes back and is dequeued. */
static void vb2f_stream_one(struct vb2f_run *r, unsigned int index)
{
	struct kunit *test = r->test;
	unsigned int got = ~0U;

	if (!vb2_is_streaming(&r->ctx->q))
		KUNIT_ASSERT_EQ(test, vb2t_streamon(r->ctx), 0);
	KUNIT_ASSERT_TRUE(test, vb2t_complete_next(r->ctx, VB2_BUF_STATE_DONE));
	KUNIT_EXPECT_EQ(test, vb2t_dqbuf_index(r->ctx, &got, NULL), 0);
	KUNIT_EXPECT_EQ(test, got, index);
	KUNIT_EXPECT_EQ(test, vb2t_streamoff(r->ctx), 0);
}

/* QBUF of an MMAP buffer, then as above. */
static void vb2f_cycle_mmap(struct vb2f_run *r, unsigned int index)
{
	KUNIT_ASSERT_EQ(r->test, vb2t_qbuf_mmap(r->ctx, index), 0);
	vb2f_stream_one(r, index);
}

/* REQBUFS and CREATE_BUFS of MMAP memory */

static void vb2f_reqbufs_setup(struct vb2f_run *r)
{
	KUNIT_ASSERT_EQ(r->test, vb2_get_num_buffers(&r->ctx->q), 0);
}

/* Two buffers: a failure on the second may leave the queue with one. */
static int vb2f_reqbufs_op(struct vb2f_run *r)
{
	r->count = 2;
	return vb2t_reqbufs(r->ctx, V4L2_MEMORY_MMAP, &r->count);
}

static void vb2f_reqbufs_failed(struct vb2f_run *r, int ret)
{
	vb2f_expect_enomem(r, ret);
	vb2f_expect_buffers(r, 0);
	vb2f_expect_live(r, r->ctx, 0);
}

static void vb2f_reqbufs_use(struct vb2f_run *r)
{
	KUNIT_EXPECT_GE(r->test, r->count, 1);
	KUNIT_EXPECT_LE(r->test, r->count, 2);
	KUNIT_EXPECT_EQ(r->test, vb2_get_num_buffers(&r->ctx->q), r->count);
	vb2f_expect_live(r, r->ctx, r->count);
	vb2f_cycle_mmap(r, r->count - 1);
}

static void vb2f_teardown(struct vb2f_run *r)
{
	vb2f_free_all(r, r->ctx);
}

static const struct vb2f_path vb2f_reqbufs_path = {
	.name		= "REQBUFS",
	.type		= OUT,
	.io_modes	= VB2_MMAP,
	.setup		= vb2f_reqbufs_setup,
	.op		= vb2f_reqbufs_op,
	.check_failed	= vb2f_reqbufs_failed,
	.use		= vb2f_reqbufs_use,
	.teardown	= vb2f_teardown,
};

/* The same with a cache hint: dma-contig allocates differently then. */
static int vb2f_reqbufs_non_coherent_op(struct vb2f_run *r)
{
	struct v4l2_requestbuffers req = {
		.count = 2, .type = OUT, .memory = V4L2_MEMORY_MMAP,
		.flags = V4L2_MEMORY_FLAG_NON_COHERENT,
	};
	int ret;

	mutex_lock(&r->ctx->mutex);
	ret = vb2_reqbufs(&r->ctx->q, &req);
	mutex_unlock(&r->ctx->mutex);
	r->count = req.count;
	return ret;
}

static void vb2f_reqbufs_non_coherent_use(struct vb2f_run *r)
{
	KUNIT_EXPECT_TRUE(r->test, r->ctx->q.non_coherent_mem);
	vb2f_reqbufs_use(r);
}

static const struct vb2f_path vb2f_reqbufs_non_coherent_path = {
	.name		= "REQBUFS non-coherent",
	.type		= OUT,
	.io_modes	= VB2_MMAP,
	.cache_hints	= true,
	.setup		= vb2f_reqbufs_setup,
	.op		= vb2f_reqbufs_non_coherent_op,
	.check_failed	= vb2f_reqbufs_failed,
	.use		= vb2f_reqbufs_non_coherent_use,
	.teardown	= vb2f_teardown,
};

static void vb2f_one_mmap_buffer(struct vb2f_run *r)
{
	KUNIT_ASSERT_EQ(r->test, vb2f_reqbufs(r->ctx, V4L2_MEMORY_MMAP, 1), 1);
}

static int vb2f_create_bufs_op(struct vb2f_run *r)
{
	return vb2t_create_bufs(r->ctx, V4L2_MEMORY_MMAP, 2, r->size,
				&r->index, &r->count);
}

static void vb2f_create_bufs_failed(struct vb2f_run *r, int ret)
{
	vb2f_expect_enomem(r, ret);
	vb2f_expect_buffers(r, 1);
	vb2f_expect_live(r, r->ctx, 1);
}

static void vb2f_create_bufs_use(struct vb2f_run *r)
{
	KUNIT_EXPECT_EQ(r->test, r->index, 1);
	KUNIT_EXPECT_GE(r->test, r->count, 1);
	KUNIT_EXPECT_LE(r->test, r->count, 2);
	KUNIT_EXPECT_EQ(r->test, vb2_get_num_buffers(&r->ctx->q),
			1 + r->count);
	vb2f_expect_live(r, r->ctx, 1 + r->count);
	vb2f_cycle_mmap(r, r->index + r->count - 1);
}

static const struct vb2f_path vb2f_create_bufs_path = {
	.name		= "CREATE_BUFS",
	.type		= OUT,
	.io_modes	= VB2_MMAP,
	.setup		= vb2f_one_mmap_buffer,
	.op		= vb2f_create_bufs_op,
	.check_failed	= vb2f_create_bufs_failed,
	.use		= vb2f_create_bufs_use,
	.teardown	= vb2f_teardown,
};

/* VIDIOC_EXPBUF */

/* Export plane 0 of buffer 0 into r->fd. */
static int vb2f_export(struct vb2f_run *r, struct vb2t_ctx *ctx)
{
	struct v4l2_exportbuffer eb = { .type = ctx->q.type, .flags = O_RDWR };
	int ret;

	mutex_lock(&ctx->mutex);
	ret = vb2_expbuf(&ctx->q, &eb);
	mutex_unlock(&ctx->mutex);
	if (!ret)
		r->fd = eb.fd;
	return ret;
}

static int vb2f_expbuf_op(struct vb2f_run *r)
{
	return vb2f_export(r, r->ctx);
}

static void vb2f_expbuf_failed(struct vb2f_run *r, int ret)
{
	/*
	 * ENOMEM is the generic error for lack of memory. The core turns
	 * every failure of &vb2_mem_ops.get_dmabuf into EINVAL, the error
	 * VIDIOC_EXPBUF documents for a buffer that cannot be exported at
	 * all; accepted, and counted, until the core passes the error on.
	 */
	if (ret == -EINVAL)
		r->einval++;
	else
		vb2f_expect_enomem(r, ret);
	/* A dma-buf made before the failure is released by a worker. */
	KUNIT_EXPECT_TRUE_MSG(r->test,
			      vb2t_wait_until(vb2f_num_users(r->ctx, 0) == 1),
			      "allocation %u failed: %u users", r->nth,
			      vb2f_num_users(r->ctx, 0));
}

static void vb2f_close_fd(struct vb2f_run *r)
{
	if (r->fd < 0)
		return;
	vb2t_close_fd_now(r->fd);
	r->fd = -1;
}

static void vb2f_expbuf_use(struct vb2f_run *r)
{
	KUNIT_EXPECT_EQ(r->test, vb2f_num_users(r->ctx, 0), 2);
	vb2f_close_fd(r);
	KUNIT_EXPECT_EQ(r->test, vb2f_num_users(r->ctx, 0), 1);
	vb2f_cycle_mmap(r, 0);
}

static const struct vb2f_path vb2f_expbuf_path = {
	.name		= "EXPBUF",
	.type		= OUT,
	.io_modes	= VB2_MMAP,
	.setup		= vb2f_one_mmap_buffer,
	.op		= vb2f_expbuf_op,
	.check_failed	= vb2f_expbuf_failed,
	.use		= vb2f_expbuf_use,
	.teardown	= vb2f_teardown,
};

/* The kernel mapping of an MMAP buffer, made on first use by dma-sg */

static int vb2f_vaddr_op(struct vb2f_run *r)
{
	r->vaddr = vb2_plane_vaddr(vb2_get_buffer(&r->ctx->q, 0), 0);
	/* vaddr() has no error code; the driver would see no mapping. */
	return r->vaddr ? 0 : -ENOMEM;
}

static void vb2f_vaddr_failed(struct vb2f_run *r, int ret)
{
	vb2f_expect_buffers(r, 1);
	vb2f_expect_state(r, 0, VB2_BUF_STATE_DEQUEUED);
	vb2f_expect_live(r, r->ctx, 1);
}

static void vb2f_vaddr_use(struct vb2f_run *r)
{
	struct vb2_buffer *vb = vb2_get_buffer(&r->ctx->q, 0);

	memset(r->vaddr, 0xb2, r->size);
	vb2f_cycle_mmap(r, 0);
	/* Made once, kept until the buffer is freed. */
	KUNIT_EXPECT_PTR_EQ(r->test, vb2_plane_vaddr(vb, 0), r->vaddr);
}

static const struct vb2f_path vb2f_vaddr_path = {
	.name		= "vaddr",
	.type		= OUT,
	.io_modes	= VB2_MMAP,
	.large		= true,
	.setup		= vb2f_one_mmap_buffer,
	.op		= vb2f_vaddr_op,
	.check_failed	= vb2f_vaddr_failed,
	.use		= vb2f_vaddr_use,
	.teardown	= vb2f_teardown,
};

/*
 * Does the path's operation allocate at all? vb2_plane_vaddr() of an MMAP
 * buffer does only where the allocator maps its memory lazily.
 */
static bool vb2f_allocates(const struct vb2f_run *r)
{
	return r->path != &vb2f_vaddr_path || r->alloc->lazy_vaddr;
}

/* QBUF of USERPTR or DMABUF memory, STREAMON, vaddr */

enum { VB2F_QBUF, VB2F_STREAMON, VB2F_VADDR, VB2F_DONE };

static const char *const vb2f_stage_names[] = {
	[VB2F_QBUF]	= "QBUF",
	[VB2F_STREAMON]	= "STREAMON",
	[VB2F_VADDR]	= "vaddr",
	[VB2F_DONE]	= "done",
};

/* Does the operation end with vb2_plane_vaddr() of the queued buffer? */
static bool vb2f_wants_vaddr(struct vb2f_run *r)
{
	return r->path->io_modes == VB2_DMABUF || r->alloc->user_vaddr;
}

static void vb2f_init_buffer(struct vb2f_run *r, struct v4l2_buffer *b)
{
	vb2t_init_buffer(r->ctx, b, NULL, 0);
	if (r->path->io_modes == VB2_USERPTR) {
		b->memory = V4L2_MEMORY_USERPTR;
		b->m.userptr = r->user;
	} else {
		b->memory = V4L2_MEMORY_DMABUF;
		b->m.fd = r->fd;
	}
	b->length = r->size;
}

static int vb2f_queue_op(struct vb2f_run *r)
{
	struct v4l2_buffer b;
	int ret;

	if (r->stage == VB2F_QBUF) {
		vb2f_init_buffer(r, &b);
		ret = vb2t_qbuf(r->ctx, &b);
		if (ret)
			return ret;
		r->stage++;
	}
	if (r->stage == VB2F_STREAMON) {
		ret = vb2t_streamon(r->ctx);
		if (ret)
			return ret;
		r->stage++;
	}
	if (r->stage == VB2F_VADDR) {
		if (vb2f_wants_vaddr(r)) {
			r->vaddr = vb2_plane_vaddr(vb2t_peek(r->ctx), 0);
			if (!r->vaddr)
				return -ENOMEM;
		}
		r->stage++;
	}
	return 0;
}

/* The exported dma-buf has no attachment and no kernel mapping left. */
static void vb2f_expect_exporter_idle(struct vb2f_run *r)
{
	KUNIT_EXPECT_TRUE_MSG(r->test, list_empty(&r->dbuf->attachments),
			      "allocation %u failed", r->nth);
	KUNIT_EXPECT_EQ_MSG(r->test, r->dbuf->vmapping_counter, 0,
			    "allocation %u failed", r->nth);
	KUNIT_EXPECT_EQ_MSG(r->test, vb2f_num_users(r->exp, 0), 2,
			    "allocation %u failed", r->nth);
}

/*
 * A DMABUF import whose mapping failed fails with 6.12's code for that,
 * whatever the exporter said: -EINVAL with dma-contig and dma-sg, -EFAULT
 * with vmalloc (its mapping is the kernel's).
 */
static bool vb2f_import_map_error(struct vb2f_run *r, int ret)
{
	int map_err = r->alloc->ops == &vb2_vmalloc_memops ? -EFAULT : -EINVAL;

	return r->exp && r->stage == VB2F_QBUF && ret == map_err;
}

static void vb2f_queue_failed(struct vb2f_run *r, int ret)
{
	if (vb2f_import_map_error(r, ret))
		r->einval++;
	else
		KUNIT_EXPECT_EQ_MSG(r->test, ret, -ENOMEM,
				    "%s: allocation %u failed",
				    vb2f_stage_names[r->stage], r->nth);
	if (r->stage != VB2F_QBUF)
		return;
	vb2f_expect_state(r, 0, VB2_BUF_STATE_DEQUEUED);
	vb2f_expect_live(r, r->ctx, 0);
	KUNIT_EXPECT_EQ(r->test, vb2t_owned(r->ctx), 0);
	if (r->exp)
		vb2f_expect_exporter_idle(r);
}

static void vb2f_queue_use(struct vb2f_run *r)
{
	u8 *exported;

	vb2f_expect_live(r, r->ctx, 1);
	if (r->vaddr)
		memset(r->vaddr, 0x2b, r->size);
	if (r->exp) {
		/* The importer wrote into the exporter's memory. */
		exported = vb2_plane_vaddr(vb2_get_buffer(&r->exp->q, 0), 0);
		KUNIT_ASSERT_NOT_NULL(r->test, exported);
		KUNIT_EXPECT_EQ(r->test, exported[0], 0x2b);
		KUNIT_EXPECT_EQ(r->test, exported[r->size - 1], 0x2b);
	}
	vb2f_stream_one(r, 0);
}

static void vb2f_userptr_setup(struct vb2f_run *r)
{
	KUNIT_ASSERT_EQ(r->test, vb2f_reqbufs(r->ctx, V4L2_MEMORY_USERPTR, 1),
			1);
	r->stage = VB2F_QBUF;
	r->vaddr = NULL;
}

static const struct vb2f_path vb2f_userptr_path = {
	.name		= "USERPTR",
	.type		= OUT,
	.io_modes	= VB2_USERPTR,
	.setup		= vb2f_userptr_setup,
	.op		= vb2f_queue_op,
	.check_failed	= vb2f_queue_failed,
	.use		= vb2f_queue_use,
	.teardown	= vb2f_teardown,
};

/* A new exported buffer each time, and the importing queue ready. */
static void vb2f_dmabuf_setup(struct vb2f_run *r)
{
	struct kunit *test = r->test;

	KUNIT_ASSERT_EQ(test, vb2f_reqbufs(r->exp, V4L2_MEMORY_MMAP, 1), 1);
	KUNIT_ASSERT_EQ(test, vb2f_export(r, r->exp), 0);
	/*
	 * dma-sg maps an exported buffer into the kernel on first use, in
	 * its dma-buf vmap(), and dma_buf_vmap() warns when that fails: the
	 * mapping is made here, outside the injection.
	 */
	KUNIT_ASSERT_NOT_NULL(test,
			      vb2_plane_vaddr(vb2_get_buffer(&r->exp->q, 0), 0));
	r->dbuf = dma_buf_get(r->fd);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, r->dbuf);
	KUNIT_ASSERT_EQ(test, vb2f_reqbufs(r->ctx, V4L2_MEMORY_DMABUF, 1), 1);
	r->stage = VB2F_QBUF;
	r->vaddr = NULL;
}

static void vb2f_dmabuf_teardown(struct vb2f_run *r)
{
	vb2f_free_all(r, r->ctx);
	KUNIT_EXPECT_TRUE(r->test, list_empty(&r->dbuf->attachments));
	dma_buf_put(r->dbuf);
	r->dbuf = NULL;
	vb2f_close_fd(r);
	KUNIT_EXPECT_EQ(r->test, vb2f_num_users(r->exp, 0), 1);
	vb2f_free_all(r, r->exp);
}

static const struct vb2f_path vb2f_dmabuf_path = {
	.name		= "DMABUF",
	.type		= OUT,
	.io_modes	= VB2_DMABUF,
	.exporter	= true,
	.large		= true,
	.setup		= vb2f_dmabuf_setup,
	.op		= vb2f_queue_op,
	.check_failed	= vb2f_queue_failed,
	.use		= vb2f_queue_use,
	.teardown	= vb2f_dmabuf_teardown,
};

/* vb2_thread_start() of an output queue: write() emulation and a thread */

static int vb2f_thread_fn(struct vb2_buffer *vb, void *priv)
{
	return 0;
}

static int vb2f_thread_op(struct vb2f_run *r)
{
	return vb2_thread_start(&r->ctx->q, vb2f_thread_fn, NULL, "vb2f");
}

/*
 * The emulation refuses a buffer without a kernel mapping with 6.12's
 * -EINVAL, and dma-sg makes its mapping on first use, which may fail.
 */
static void vb2f_thread_failed(struct vb2f_run *r, int ret)
{
	if (ret == -EINVAL && r->alloc->lazy_vaddr)
		r->einval++;
	else
		vb2f_expect_enomem(r, ret);
	KUNIT_EXPECT_NULL(r->test, r->ctx->q.threadio);
	KUNIT_EXPECT_FALSE(r->test, vb2_fileio_is_active(&r->ctx->q));
	KUNIT_EXPECT_FALSE(r->test, vb2_is_streaming(&r->ctx->q));
	vb2f_expect_buffers(r, 0);
	vb2f_expect_live(r, r->ctx, 0);
}

/* The thread gives every buffer to the driver, without waiting for one. */
static void vb2f_thread_use(struct vb2f_run *r)
{
	unsigned int n = vb2_get_num_buffers(&r->ctx->q), i;

	KUNIT_EXPECT_GT(r->test, n, 0);
	for (i = 0; i < 250 && vb2t_owned(r->ctx) < n; i++)
		msleep(20);
	KUNIT_EXPECT_EQ(r->test, vb2t_owned(r->ctx), n);
}

static void vb2f_thread_teardown(struct vb2f_run *r)
{
	KUNIT_EXPECT_EQ(r->test, vb2_thread_stop(&r->ctx->q), 0);
	vb2f_expect_buffers(r, 0);
	vb2f_expect_live(r, r->ctx, 0);
}

static const struct vb2f_path vb2f_thread_path = {
	.name		= "vb2_thread_start",
	.type		= OUT,
	.io_modes	= VB2_MMAP | VB2_WRITE,
	.setup		= vb2f_reqbufs_setup,
	.op		= vb2f_thread_op,
	.check_failed	= vb2f_thread_failed,
	.use		= vb2f_thread_use,
	.teardown	= vb2f_thread_teardown,
};

/* The loop */

static struct vb2t_ctx *vb2f_queue(struct kunit *test,
				   const struct vb2t_alloc *a, u32 type,
				   unsigned int io_modes, unsigned long size,
				   bool cache_hints)
{
	struct vb2t_config cfg = {
		.type = type, .io_modes = io_modes, .backend = a->ops,
		.size = size, .allow_cache_hints = cache_hints,
		.dma_all_memory = true,
	};

	return vb2t_ctx_create(test, &cfg);
}

/* Fail allocation r->nth of the operation; false once there is none. */
static bool vb2f_iteration(struct vb2f_run *r)
{
	const struct vb2f_path *path = r->path;
	struct kunit *test = r->test;
	bool reached;
	int ret;

	path->setup(r);
	vb2f_arm(r->nth);
	ret = path->op(r);
	reached = vb2f_disarm();
	if (ret) {
		KUNIT_ASSERT_TRUE_MSG(test, reached,
				      "%s failed without injection: %d",
				      path->name, ret);
		r->failures++;
		path->check_failed(r, ret);
		KUNIT_ASSERT_EQ_MSG(test, path->op(r), 0,
				    "%s again after allocation %u failed",
				    path->name, r->nth);
	}
	path->use(r);
	path->teardown(r);
	return reached;
}

static void vb2f_run_path(struct kunit *test, const struct vb2f_path *path)
{
	const struct vb2t_alloc *a = test->param_value;
	unsigned int misses = 0;
	struct vb2f_run *r;

	vb2f_require_injection(test);
	r = kunit_kzalloc(test, sizeof(*r), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, r);
	r->test = test;
	r->alloc = a;
	r->path = path;
	r->fd = -1;
	r->size = path->large ? LARGE_PLANE : PLANE;
	/* dma-contig takes only a page of anonymous user memory. */
	if (path->io_modes == VB2_USERPTR)
		r->size = a->any_user_memory ? LARGE_PLANE : PAGE_SIZE;
	r->ctx = vb2f_queue(test, a, path->type, path->io_modes, r->size,
			    path->cache_hints);
	if (path->exporter)
		r->exp = vb2f_queue(test, a, CAP, VB2_MMAP, r->size, false);
	if (path->io_modes == VB2_USERPTR) {
		r->user = vb2t_user_mem(test, r->size);
		/* Fault the pages in now: the test is about videobuf2. */
		KUNIT_ASSERT_EQ(test, clear_user((void __user *)r->user,
						 r->size), 0);
	}

	for (r->nth = 1; r->nth <= VB2F_MAX_POINTS; ) {
		if (vb2f_iteration(r)) {
			r->points++;
			r->nth++;
			misses = 0;
		} else if (++misses == VB2F_MISSES) {
			break;
		}
		/* One report is enough when something is wrong. */
		if (test->status == KUNIT_FAILURE)
			break;
	}
	KUNIT_EXPECT_LE(test, r->nth, VB2F_MAX_POINTS);
	kunit_info(test, "%s %s: %u allocations failed in turn, %u failed the operation\n",
		   a->name, path->name, r->points, r->failures);
	/* A fault injection test that injected nothing tested nothing. */
	if (vb2f_allocates(r)) {
		KUNIT_EXPECT_GT_MSG(test, r->points, 0, "no allocation failed");
		KUNIT_EXPECT_GT_MSG(test, r->failures, 0,
				    "no injected failure reached the operation");
	}
	if (r->einval)
		kunit_info(test, "%s %s: 6.12's EINVAL or EFAULT instead of ENOMEM %u times\n",
			   a->name, path->name, r->einval);
}

static void vb2_fail_reqbufs(struct kunit *test)
{
	vb2f_run_path(test, &vb2f_reqbufs_path);
}

static void vb2_fail_reqbufs_non_coherent(struct kunit *test)
{
	const struct vb2t_alloc *a = test->param_value;

	if (a != &vb2t_allocs[VB2T_CONTIG])
		kunit_skip(test, "%s memory is the same either way", a->name);
	vb2f_run_path(test, &vb2f_reqbufs_non_coherent_path);
}

static void vb2_fail_create_bufs(struct kunit *test)
{
	vb2f_run_path(test, &vb2f_create_bufs_path);
}

static void vb2_fail_userptr(struct kunit *test)
{
	vb2f_run_path(test, &vb2f_userptr_path);
}

static void vb2_fail_dmabuf(struct kunit *test)
{
	vb2f_run_path(test, &vb2f_dmabuf_path);
}

static void vb2_fail_expbuf(struct kunit *test)
{
	vb2f_run_path(test, &vb2f_expbuf_path);
}

static void vb2_fail_vaddr(struct kunit *test)
{
	vb2f_run_path(test, &vb2f_vaddr_path);
}

static void vb2_fail_thread_start(struct kunit *test)
{
	vb2f_run_path(test, &vb2f_thread_path);
}

static struct kunit_case vb2_alloc_fail_cases[] = {
	KUNIT_CASE_PARAM(vb2_fail_reqbufs, vb2t_alloc_gen_params),
	KUNIT_CASE_PARAM(vb2_fail_reqbufs_non_coherent, vb2t_alloc_gen_params),
	KUNIT_CASE_PARAM(vb2_fail_create_bufs, vb2t_alloc_gen_params),
	KUNIT_CASE_PARAM(vb2_fail_userptr, vb2t_alloc_gen_params),
	KUNIT_CASE_PARAM(vb2_fail_dmabuf, vb2t_alloc_gen_params),
	KUNIT_CASE_PARAM(vb2_fail_expbuf, vb2t_alloc_gen_params),
	KUNIT_CASE_PARAM(vb2_fail_vaddr, vb2t_alloc_gen_params),
	KUNIT_CASE_PARAM(vb2_fail_thread_start, vb2t_alloc_gen_params),
	{}
};

static struct kunit_suite vb2_alloc_fail_suite = {
	.name = "videobuf2-allocators-out-of-memory",
	.test_cases = vb2_alloc_fail_cases,
};

kunit_test_suite(vb2_alloc_fail_suite);
