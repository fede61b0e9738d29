/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The helpers every guest program of the test harness shares (tools/guest/lib/).
 *
 * One convention: a call returns 0 (or a value: a file descriptor, a count) on success
 * and -errno on failure, never -1 with errno. tools/host/build-guest-progs.sh links
 * vb2-guest.c into every program in tools/guest/.
 */
#ifndef VB2_GUEST_H
#define VB2_GUEST_H

#include <stdbool.h>
#include <stddef.h>

/* ioctl(): its value (>= 0) or -errno; retried while it fails with EINTR. */
int vb2_ioctl(int fd, unsigned long req, void *arg);

/*
 * The name of an errno ("EINVAL"; "0" for 0; "errno123" for one it does not know).
 * @err may be the errno or its negative. The string is static, or one of the 8
 * most recent of a per-thread ring for unknown values.
 */
const char *vb2_errname(int err);

/* The first line of a (sysfs) file, without its newline: 0 or -errno. */
int vb2_read_line(const char *path, char *buf, size_t len);

/*
 * The video4linux node whose "name" attribute is @name: "/dev/videoN" in @path and,
 * when @sysname is not NULL, "videoN" in @sysname. 0, or -ENOENT when there is none.
 */
int vb2_find_node(const char *name, char *path, size_t plen, char *sysname, size_t slen);
/* The same, among the nodes of that name whose device_caps include all of @caps. */
int vb2_find_node_caps(const char *name, unsigned int caps, char *path, size_t plen,
		       char *sysname, size_t slen);

/*
 * The media device of the video node @sysname ("videoN"): the one whose bus_info is
 * @bus_info (vivid has one platform device and a media device per instance), else the
 * first mediaN beside the node in sysfs. "/dev/mediaN" in @path; 0 or -ENOENT.
 * @bus_info may be NULL (sysfs only), @sysname too (bus_info only).
 */
int vb2_find_media(const char *sysname, const char *bus_info, char *path, size_t plen);

/*
 * dma-bufs of @len bytes (rounded up to pages), O_RDWR and close-on-exec: from the
 * system dma-heap, from udmabuf on a sealed memfd, or from the first of the two that
 * works (@how, when not NULL, says which: "heap" or "udmabuf"). The fd, or -errno.
 */
int vb2_heap_alloc(size_t len);
int vb2_udmabuf_alloc(size_t len);
int vb2_dmabuf_alloc(size_t len, const char **how);

/* Requests (the Media Request API): the request's fd or 0, or -errno. */
int vb2_request_alloc(int media_fd);
int vb2_request_queue(int req_fd);
int vb2_request_reinit(int req_fd);
/* Wait for a queued request to complete (POLLPRI): 0, -ETIMEDOUT or -errno. */
int vb2_request_wait(int req_fd, int timeout_ms);

/*
 * A v4l2_buffer of @type, @memory and @index with every other field zero, and the
 * first @nplanes entries of @pl (if not NULL) zeroed. On a multi-planar type it points
 * at @pl, and its length is @nplanes: the buffer's planes, or VIDEO_MAX_PLANES for a
 * call that fills them in (QUERYBUF, DQBUF).
 */
struct v4l2_buffer;
struct v4l2_plane;
void vb2_buf_init(struct v4l2_buffer *b, struct v4l2_plane *pl, unsigned int type,
		  unsigned int memory, unsigned int index, unsigned int nplanes);

/* poll() one fd for @events: the revents, 0 on timeout, or -errno. */
int vb2_poll(int fd, short events, int timeout_ms);

/* CLOCK_MONOTONIC in nanoseconds. */
long long vb2_now_ns(void);

#endif /* VB2_GUEST_H */
