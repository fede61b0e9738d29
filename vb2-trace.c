// SPDX-License-Identifier: GPL-2.0
/*
 * Instances of the vb2 tracepoints (include/trace/events/vb2.h). The core
 * fires them when a buffer is queued by user space (vb2_qbuf), handed to
 * the driver (vb2_buf_queue), returned by it (vb2_buf_done) and dequeued
 * (vb2_dqbuf). They are exported for modules that attach probes.
 */
#include <media/videobuf2-core.h>

#define CREATE_TRACE_POINTS
#include <trace/events/vb2.h>

/* User space side */
EXPORT_TRACEPOINT_SYMBOL_GPL(vb2_qbuf);
EXPORT_TRACEPOINT_SYMBOL_GPL(vb2_dqbuf);

/* Driver side */
EXPORT_TRACEPOINT_SYMBOL_GPL(vb2_buf_queue);
EXPORT_TRACEPOINT_SYMBOL_GPL(vb2_buf_done);
