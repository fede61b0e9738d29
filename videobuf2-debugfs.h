/* SPDX-License-Identifier: GPL-2.0 */
/*
 * videobuf2 core: the queues in debugfs and their counters
 * (videobuf2-debugfs.c, CONFIG_VIDEOBUF2_DEBUGFS), and the hooks through
 * which the rest of videobuf2-common.ko counts. Without the option the
 * hooks compile to nothing. Like videobuf2-internal.h, which includes it,
 * nothing here is visible outside videobuf2-common.ko.
 */
#ifndef _VIDEOBUF2_DEBUGFS_H
#define _VIDEOBUF2_DEBUGFS_H

#include <linux/jiffies.h>
#include <linux/jump_label.h>
#include <linux/ktime.h>
#include <linux/types.h>
#include <media/videobuf2-core.h>

#define VB2_STATS_BUCKETS	10

/**
 * struct vb2_stats - counters of a queue since its last STREAMON
 *
 * Written under &vb2_queue.lock (@queued, @dequeued, @reclaimed) or
 * &vb2_queue.done_lock (the rest, from vb2_buffer_done()); reset under
 * both; read without a lock.
 *
 * @queued:	buffers queued by user space (or the emulation).
 * @done:	buffers the driver returned as DONE.
 * @error:	buffers the driver returned as ERROR.
 * @dequeued:	buffers dequeued.
 * @requeued:	buffers the driver gave back as QUEUED.
 * @reclaimed:	buffers the core took back from a driver that kept them
 *		after stop_streaming.
 * @latency_count: completions measured below.
 * @latency_sum_ns: the time from buf_queue to vb2_buffer_done(), summed.
 * @latency_min_ns: its minimum.
 * @latency_max_ns: its maximum.
 * @histogram:	completions by that time: bucket i below 2^i ms, the last
 *		one the rest.
 */
struct vb2_stats {
	u64	queued;
	u64	done;
	u64	error;
	u64	dequeued;
	u64	requeued;
	u64	reclaimed;
	u64	latency_count;
	u64	latency_sum_ns;
	u64	latency_min_ns;
	u64	latency_max_ns;
	u32	histogram[VB2_STATS_BUCKETS];
};

/**
 * struct vb2_debugfs - what a queue keeps for its debugfs files
 * @dir:	the queue's directory.
 * @id:		number unique for the boot, in the names of nameless queues.
 * @stats:	the counters of the ``stats`` file.
 */
struct vb2_debugfs {
	struct dentry		*dir;
	int			id;
	struct vb2_stats	stats;
};

#if IS_ENABLED(CONFIG_VIDEOBUF2_DEBUGFS)
/*
 * Whether buffers are timed from buf_queue to vb2_buffer_done(): two clock
 * reads per buffer, so off until /sys/kernel/debug/videobuf2/latency says.
 */
DECLARE_STATIC_KEY_FALSE(vb2_stats_timing);

void vb2_debugfs_add(struct vb2_queue *q);
void vb2_debugfs_remove(struct vb2_queue *q);
void vb2_stats_reset(struct vb2_queue *q);

/* The counters of @q, or NULL while it has no debugfs files. */
static inline struct vb2_stats *vb2_debugfs_stats(struct vb2_queue *q)
{
	struct vb2_debugfs *dbg = READ_ONCE(q->debugfs);

	return dbg ? &dbg->stats : NULL;
}

void vb2_stats_time_done(struct vb2_stats *st, struct vb2_buffer *vb);

/* vb2_buffer_done(), under &vb2_queue.done_lock: count, and time if asked. */
static __always_inline void vb2_stats_done(struct vb2_buffer *vb,
					   enum vb2_buffer_state state)
{
	struct vb2_stats *st = vb2_debugfs_stats(vb->vb2_queue);

	if (!st)
		return;
	if (state == VB2_BUF_STATE_QUEUED) {
		st->requeued++;
		return;
	}
	if (state == VB2_BUF_STATE_ERROR)
		st->error++;
	else
		st->done++;
	/* Handed over with the timing off (0), or timed already. */
	if (static_branch_unlikely(&vb2_stats_timing) && vb->handed_ns)
		vb2_stats_time_done(st, vb);
}

#if IS_ENABLED(CONFIG_KUNIT)
int vb2_debugfs_format(struct vb2_queue *q, bool stats, char *buf,
		       size_t size);
void vb2_stats_set_timing(bool on);
#endif

/* A buffer went to the driver's queue (QBUF) or came back to user space. */
static inline void vb2_stats_queued(struct vb2_queue *q)
{
	struct vb2_stats *st = vb2_debugfs_stats(q);

	if (st)
		st->queued++;
}

static inline void vb2_stats_dequeued(struct vb2_queue *q)
{
	struct vb2_stats *st = vb2_debugfs_stats(q);

	if (st)
		st->dequeued++;
}

/* @n buffers taken back from a driver that kept them. */
static inline void vb2_stats_reclaimed(struct vb2_queue *q, unsigned int n)
{
	struct vb2_stats *st = vb2_debugfs_stats(q);

	if (st)
		st->reclaimed += n;
}

static inline void vb2_stats_state_changed(struct vb2_buffer *vb)
{
	WRITE_ONCE(vb->state_since, jiffies);
}

static __always_inline void vb2_stats_handed(struct vb2_buffer *vb)
{
	if (static_branch_unlikely(&vb2_stats_timing) &&
	    READ_ONCE(vb->vb2_queue->debugfs))
		vb->handed_ns = ktime_get_ns();
}
#else
static inline void vb2_debugfs_add(struct vb2_queue *q) { }
static inline void vb2_debugfs_remove(struct vb2_queue *q) { }
static inline void vb2_stats_reset(struct vb2_queue *q) { }
static inline void vb2_stats_done(struct vb2_buffer *vb,
				  enum vb2_buffer_state state) { }
static inline void vb2_stats_queued(struct vb2_queue *q) { }
static inline void vb2_stats_dequeued(struct vb2_queue *q) { }
static inline void vb2_stats_reclaimed(struct vb2_queue *q, unsigned int n) { }
static inline void vb2_stats_state_changed(struct vb2_buffer *vb) { }
static inline void vb2_stats_handed(struct vb2_buffer *vb) { }
#endif

#endif /* _VIDEOBUF2_DEBUGFS_H */
