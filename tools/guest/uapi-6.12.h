/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the guest programs need of Linux 6.12's V4L2 uAPI that Debian 12's
 * headers (Linux 6.1's) lack: REMOVE_BUFS and its capability (6.10), the
 * max_num_buffers capability and field of CREATE_BUFS (6.8). Include after
 * <linux/videodev2.h>.
 */
#ifndef VB2_GUEST_UAPI_6_12_H
#define VB2_GUEST_UAPI_6_12_H

#ifndef V4L2_BUF_CAP_SUPPORTS_REMOVE_BUFS
#define V4L2_BUF_CAP_SUPPORTS_MAX_NUM_BUFFERS	(1 << 7)
#define V4L2_BUF_CAP_SUPPORTS_REMOVE_BUFS	(1 << 8)
struct v4l2_remove_buffers {
	__u32 index;
	__u32 count;
	__u32 type;
	__u32 reserved[13];
};
#define VIDIOC_REMOVE_BUFS	_IOWR('V', 104, struct v4l2_remove_buffers)
/* v4l2_create_buffers.max_num_buffers took the first reserved word. */
#define CREATE_MAX_NUM_BUFFERS(c)	((c)->reserved[0])
#else
#define CREATE_MAX_NUM_BUFFERS(c)	((c)->max_num_buffers)
#endif

#endif
