// SPDX-License-Identifier: GPL-2.0
/*
 * videobuf2 core: a live view of every queue in debugfs
 * (CONFIG_VIDEOBUF2_DEBUGFS).
 */

#include <linux/debugfs.h>
#include <linux/idr.h>
#include <linux/jump_label.h>
#include <linux/jiffies.h>
#include <linux/ktime.h>
#include <linux/module.h>
#include <linux/rcupdate.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/spinlock.h>

#include <kunit/visibility.h>
#include <media/videobuf2-core.h>

#include "videobuf2-debugfs.h"
#include "videobuf2-internal.h"

/**
 * DOC: queues in debugfs
 *
 * /sys/kernel/debug/videobuf2/ holds a directory per queue in use, named
 * after its video device node and direction (``video3-cap``) when the V4L2
 * layer has seen the node, otherwise after &vb2_queue.name and a number
 * unique for the boot (mem2mem contexts, DVB, queues driven without the
 * vb2_ioctl_* helpers). Each has two files:
 *
 * - ``state``: the queue (type, memory model, allocator, flags, counts,
 *   lengths of the queued and done lists) and one line per buffer (index,
 *   state, how long it has been in it, planes, its request);
 * - ``stats``: counters since the last STREAMON and, while
 *   ``videobuf2/latency`` is 1, the time from handing a buffer to the
 *   driver to its completion, as min/mean/max and a histogram.
 *
 * Timing a buffer reads the clock twice, which is most of what the files
 * cost the QBUF/DQBUF cycle (``make bench``); so it is off by default, and
 * a static key keeps the hooks at a no-op until someone writes 1 to
 * ``latency``. A buffer counts only if it went to the driver while the
 * timing was on.
 *
 * Lifetime. The directory appears with the queue's first buffers (REQBUFS,
 * CREATE_BUFS or read()/write() emulation) and goes in
 * vb2_core_queue_release(). Not at vb2_core_queue_init(): videobuf2 has no
 * call that ends a queue's life, and a driver may free a queue it only
 * initialised (a failing probe) without releasing it; a queue that had
 * buffers is always released. debugfs_remove() waits for readers in
 * progress, and later reads of a file still open fail, so no reader
 * outlives the queue.
 *
 * Locking. The reader takes no lock the queue uses: buffers are freed
 * after an RCU grace period (see vb2_find_buffer()), so the buffer walk
 * runs under rcu_read_lock(), and everything else is read as it is (with
 * READ_ONCE() where it is not a bit-field): a snapshot, consistent enough
 * to debug with. The release
 * path, which holds the queue lock, can thus wait for a reader. The
 * counters are written where the core already holds a lock (the queue
 * lock, or &vb2_queue.done_lock in vb2_buffer_done()); STREAMON resets
 * them under both.
 */

static struct dentry *vb2_debugfs_root;
static DEFINE_IDA(vb2_debugfs_ids);

DEFINE_STATIC_KEY_FALSE(vb2_stats_timing);

/* static_branch_enable()/disable() set the key as a flag, under their own lock. */
static void vb2_stats_timing_set(bool on)
{
	if (on)
		static_branch_enable(&vb2_stats_timing);
	else
		static_branch_disable(&vb2_stats_timing);
}

static const char *vb2_dbg_memory_name(unsigned int memory)
{
	switch (memory) {
	case VB2_MEMORY_MMAP:
		return "mmap";
	case VB2_MEMORY_USERPTR:
		return "userptr";
	case VB2_MEMORY_DMABUF:
		return "dmabuf";
	default:
		return "none";
	}
}

static void vb2_dbg_show_buffer(struct seq_file *m, struct vb2_buffer *vb)
{
	enum vb2_buffer_state state = READ_ONCE(vb->state);
	struct media_request *req = READ_ONCE(vb->request);
	unsigned int p;

	seq_printf(m, "buffer %u: %-10s %6u ms", vb->index,
		   vb2_state_name(state),
		   jiffies_to_msecs(jiffies - READ_ONCE(vb->state_since)));
	for (p = 0; p < vb->num_planes; p++)
		seq_printf(m, " [%u/%u]", READ_ONCE(vb->planes[p].bytesused),
			   READ_ONCE(vb->planes[p].length));
	if (req)
		seq_printf(m, " request %p", req);
	seq_putc(m, '\n');
}

static int vb2_dbg_state_show(struct seq_file *m, void *unused)
{
	struct vb2_queue *q = m->private;
	unsigned int done = 0;
	struct vb2_buffer *vb;
	unsigned long index;

	seq_printf(m, "name: %s\ntype: %u (%s)\nmemory: %s%s\nallocator: %ps\n",
		   q->name, q->type, q->is_output ? "output" : "capture",
		   vb2_dbg_memory_name(READ_ONCE(q->memory)),
		   q->non_coherent_mem ? ", non-coherent" : "",
		   q->mem_ops->alloc ? (void *)q->mem_ops->alloc :
				       (void *)q->mem_ops);
	seq_printf(m, "driver: %ps\n", q->ops->buf_queue);
	seq_printf(m, "streaming: %u\nstart_streaming_called: %u\nerror: %u\n",
		   q->streaming, q->start_streaming_called,
		   q->error);
	seq_printf(m, "waiting_for_buffers: %u\nmin_queued_buffers: %u\n",
		   q->waiting_for_buffers,
		   READ_ONCE(q->min_queued_buffers));
	seq_printf(m, "max_num_buffers: %u\nnum_buffers: %u\n",
		   q->max_num_buffers, vb2_get_num_buffers(q));
	seq_printf(m, "owned_by_drv_count: %d\nqueued: %u\n",
		   atomic_read(&q->owned_by_drv_count),
		   READ_ONCE(q->queued_count));

	rcu_read_lock();
	vb2_for_each_buffer(q, index, vb) {
		enum vb2_buffer_state s = READ_ONCE(vb->state);

		done += s == VB2_BUF_STATE_DONE || s == VB2_BUF_STATE_ERROR;
	}
	seq_printf(m, "done: %u\n", done);
	vb2_for_each_buffer(q, index, vb)
		vb2_dbg_show_buffer(m, vb);
	rcu_read_unlock();
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(vb2_dbg_state);

static int vb2_dbg_stats_show(struct seq_file *m, void *unused)
{
	struct vb2_queue *q = m->private;
	const struct vb2_stats *st = &q->debugfs->stats;
	u64 count = READ_ONCE(st->latency_count);
	unsigned int i;

	seq_printf(m, "queued: %llu\ndone: %llu\nerror: %llu\ndequeued: %llu\n",
		   READ_ONCE(st->queued), READ_ONCE(st->done),
		   READ_ONCE(st->error), READ_ONCE(st->dequeued));
	seq_printf(m, "requeued_by_driver: %llu\nreclaimed_at_stop: %llu\n",
		   READ_ONCE(st->requeued), READ_ONCE(st->reclaimed));
	if (!static_key_enabled(&vb2_stats_timing))
		seq_puts(m, "latency: off (write 1 to videobuf2/latency)\n");
	seq_printf(m, "latency_count: %llu\n", count);
	if (count)
		seq_printf(m, "latency_us: min %llu mean %llu max %llu\n",
			   READ_ONCE(st->latency_min_ns) / NSEC_PER_USEC,
			   div64_u64(READ_ONCE(st->latency_sum_ns), count) /
				NSEC_PER_USEC,
			   READ_ONCE(st->latency_max_ns) / NSEC_PER_USEC);
	seq_puts(m, "latency_histogram_ms:");
	for (i = 0; i < VB2_STATS_BUCKETS; i++) {
		if (i < VB2_STATS_BUCKETS - 1)
			seq_printf(m, " <%u:%u", 1U << i,
				   READ_ONCE(st->histogram[i]));
		else
			seq_printf(m, " >=%u:%u", 1U << (i - 1),
				   READ_ONCE(st->histogram[i]));
	}
	seq_putc(m, '\n');
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(vb2_dbg_stats);

/**
 * vb2_debugfs_add() - give a queue its debugfs directory, if it has none
 * @q:		a queue that is getting its first buffers.
 *
 * Failures are not errors: the queue works without its files.
 */
void vb2_debugfs_add(struct vb2_queue *q)
{
	struct vb2_debugfs *dbg;
	char name[64];

	if (q->debugfs || !vb2_debugfs_root)
		return;
	dbg = kzalloc(sizeof(*dbg), GFP_KERNEL);
	if (!dbg)
		return;
	dbg->id = ida_alloc(&vb2_debugfs_ids, GFP_KERNEL);
	if (dbg->id < 0) {
		kfree(dbg);
		return;
	}
	if (q->dev_node_name[0])
		snprintf(name, sizeof(name), "%s-%s", q->dev_node_name,
			 q->is_output ? "out" : "cap");
	else
		snprintf(name, sizeof(name), "%s-%d", q->name, dbg->id);
	dbg->dir = debugfs_create_dir(name, vb2_debugfs_root);
	if (IS_ERR(dbg->dir)) {
		/* Two queues on one node and direction: make it unique. */
		snprintf(name, sizeof(name), "%s-%s-%d", q->dev_node_name,
			 q->is_output ? "out" : "cap", dbg->id);
		dbg->dir = debugfs_create_dir(name, vb2_debugfs_root);
	}
	dbg->stats.latency_min_ns = U64_MAX;
	/* Before the files: vb2_dbg_stats_show() dereferences it. */
	WRITE_ONCE(q->debugfs, dbg);
	debugfs_create_file("state", 0444, dbg->dir, q, &vb2_dbg_state_fops);
	debugfs_create_file("stats", 0444, dbg->dir, q, &vb2_dbg_stats_fops);
}

/**
 * vb2_debugfs_remove() - remove a queue's directory
 * @q:		the queue, being released.
 *
 * Waits for readers in progress; they take no lock of the queue.
 */
void vb2_debugfs_remove(struct vb2_queue *q)
{
	struct vb2_debugfs *dbg = q->debugfs;
	unsigned long flags;

	if (!dbg)
		return;
	debugfs_remove(dbg->dir);
	/*
	 * The driver may still complete buffers (the queue is cancelled after
	 * this): vb2_stats_done() looks at q->debugfs under done_lock, from any
	 * context, so clear it under that lock before freeing.
	 */
	spin_lock_irqsave(&q->done_lock, flags);
	WRITE_ONCE(q->debugfs, NULL);
	spin_unlock_irqrestore(&q->done_lock, flags);
	ida_free(&vb2_debugfs_ids, dbg->id);
	kfree(dbg);
}

/* STREAMON: count from zero. Under the queue lock. */
void vb2_stats_reset(struct vb2_queue *q)
{
	struct vb2_stats *st = vb2_debugfs_stats(q);
	unsigned long flags;

	if (!st)
		return;
	spin_lock_irqsave(&q->done_lock, flags);
	memset(st, 0, sizeof(*st));
	st->latency_min_ns = U64_MAX;
	spin_unlock_irqrestore(&q->done_lock, flags);
}

/* The timing part of vb2_stats_done(): the time @vb spent with the driver. */
void vb2_stats_time_done(struct vb2_stats *st, struct vb2_buffer *vb)
{
	u64 ns = ktime_get_ns() - vb->handed_ns;
	unsigned int bucket;

	vb->handed_ns = 0;
	st->latency_count++;
	st->latency_sum_ns += ns;
	st->latency_min_ns = min(st->latency_min_ns, ns);
	st->latency_max_ns = max(st->latency_max_ns, ns);
	/* Bucket i: below 2^i ms; the last takes the rest. */
	bucket = ns < NSEC_PER_MSEC ? 0 :
		 min_t(unsigned int, ilog2(div_u64(ns, NSEC_PER_MSEC)) + 1,
		       VB2_STATS_BUCKETS - 1);
	st->histogram[bucket]++;
}

/**
 * vb2_debugfs_format() - what the state or stats file shows, into a buffer
 * @q:		a queue with debugfs files.
 * @stats:	the stats file; otherwise the state file.
 * @buf:	the buffer.
 * @size:	its size.
 *
 * Return: the length of the text, or -ENOSPC if it did not fit.
 */
VISIBLE_IF_KUNIT int vb2_debugfs_format(struct vb2_queue *q, bool stats,
					char *buf, size_t size)
{
	struct seq_file m = { .buf = buf, .size = size, .private = q };

	if (stats)
		vb2_dbg_stats_show(&m, NULL);
	else
		vb2_dbg_state_show(&m, NULL);
	if (seq_has_overflowed(&m))
		return -ENOSPC;
	buf[min(m.count, size - 1)] = '\0';
	return m.count;
}
EXPORT_SYMBOL_IF_KUNIT(vb2_debugfs_format);

#if IS_ENABLED(CONFIG_KUNIT)
/* Tests time their buffers whatever the file says, and put it back after. */
void vb2_stats_set_timing(bool on)
{
	vb2_stats_timing_set(on);
}
EXPORT_SYMBOL_IF_KUNIT(vb2_stats_set_timing);
#endif

static int vb2_dbg_latency_get(void *data, u64 *val)
{
	*val = static_key_enabled(&vb2_stats_timing);
	return 0;
}

static int vb2_dbg_latency_set(void *data, u64 val)
{
	if (val > 1)
		return -EINVAL;
	vb2_stats_timing_set(val);
	return 0;
}
DEFINE_DEBUGFS_ATTRIBUTE(vb2_dbg_latency_fops, vb2_dbg_latency_get,
			 vb2_dbg_latency_set, "%llu\n");

/* Whether this kernel fences exported dma-bufs: tests read it to know what to expect. */
static u32 vb2_implicit_sync = IS_ENABLED(CONFIG_VIDEOBUF2_IMPLICIT_SYNC);

static int __init vb2_debugfs_init(void)
{
	vb2_debugfs_root = debugfs_create_dir("videobuf2", NULL);
	if (IS_ERR(vb2_debugfs_root)) {
		vb2_debugfs_root = NULL;
		return 0;
	}
	debugfs_create_u32("implicit_sync", 0444, vb2_debugfs_root,
			   &vb2_implicit_sync);
	debugfs_create_file_unsafe("latency", 0644, vb2_debugfs_root, NULL,
				   &vb2_dbg_latency_fops);
	return 0;
}

static void __exit vb2_debugfs_exit(void)
{
	debugfs_remove(vb2_debugfs_root);
}

module_init(vb2_debugfs_init);
module_exit(vb2_debugfs_exit);
