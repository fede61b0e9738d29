// SPDX-License-Identifier: GPL-2.0
/*
 * vb2-uvcdev: a USB Video Class camera emulated in user space over USB/IP, and a
 * receiver that checks every byte uvcvideo delivers. A guest program of the test
 * harness (tools/plans/uvc.plan): it lets the real uvcvideo driver, a videobuf2 user,
 * stream in a guest without hardware.
 *
 *   vb2-uvcdev serve [--transfer bulk|isoc] [--fps F] [--header 2|12] [--payload BYTES]
 *                    [--no-status] [--port N] [--unplug-after FRAMES]
 *                    [--unplug close|detach] [--verbose]
 *   vb2-uvcdev find [--name NAME] [--wait SECONDS]
 *   vb2-uvcdev check --dev /dev/videoN [--frames N] [--memory mmap|userptr|dmabuf]
 *                    [--format yuyv|mjpeg] [--size WxH] [--buffers N] [--fps F]
 *                    [--expect-unplug] [--timeout SECONDS]
 *
 * serve: makes an AF_UNIX socket pair, hands one end to the USB/IP virtual host
 * controller (echo "PORT SOCKFD DEVID SPEED" > /sys/devices/platform/vhci_hcd.0/attach,
 * high speed), closes its copy of that end (vhci holds a reference) and answers the
 * USBIP_CMD_SUBMIT / USBIP_CMD_UNLINK requests vhci sends on the other end as a UVC 1.1
 * camera would: a VideoControl interface (camera terminal, processing unit with
 * brightness, contrast, saturation and power line frequency, output terminal, an
 * interrupt status endpoint unless --no-status) and a VideoStreaming interface with two
 * formats, YUYV and MJPEG, each 320x240 and 640x480 at 30 or 15 frames per second. The
 * streaming endpoint is bulk (one alternate setting; streaming starts with the COMMIT
 * control and stops with CLEAR_FEATURE(HALT)) or isochronous (alternate settings 1-4
 * with 512, 1024, 2x1024 and 3x1024 bytes per microframe; the alternate setting starts
 * and stops it). Frames are paced at the committed interval (--fps overrides it, 0 sends
 * them as fast as the host takes them), cut into payloads with a 2 or 12 byte payload
 * header (FID toggled per frame, EOF on the last payload, PTS and SCR with 12).
 *
 * Frame contents, checkable byte by byte: a 16-byte block "VB2F", the frame number, the
 * frame size and a checksum (32-bit little-endian each), then a pattern that is a
 * function of the frame number and the offset. YUYV frames are exactly width*height*2
 * bytes with the block at offset 0. MJPEG frames are a small JPEG-looking blob: SOI, a
 * COM segment holding the block, the pattern, EOI; their size varies from frame to
 * frame (a function of the frame number and of width*height).
 *
 * Unplugging: SIGTERM or SIGINT unplugs at once; --unplug-after N unplugs in the middle
 * of the frame after the Nth one, counted from the start (or from SIGUSR1, which arms it
 * again, 30 frames if no N was given). --unplug close shuts the socket down (vhci sees
 * the connection drop), detach writes the port to vhci's detach attribute. serve ends
 * when the connection is gone; it prints what it did.
 *
 * find: prints the /dev node of the capture device whose name is NAME (the product
 * string, "vb2-uvcdev camera" by default), waiting for it up to SECONDS.
 *
 * check: streams N frames with the given memory model (DMABUF buffers come from
 * /dev/dma_heap/system, or udmabuf), checks every byte of every frame, the sizes, the
 * checksums and that the frame numbers advance like the sequence numbers, and prints
 *   frames=N fps=F gaps=G error_bufs=E bytes_checked=B mismatched_bytes=M bad_frames=X
 *   seq_content_mismatch=S elapsed=T ...
 * It fails if any frame is wrong. With --expect-unplug it streams until the device goes
 * away and reports how streaming ended (it fails if it does not end, or ends without
 * an error). It then waits for uvcvideo to finish with the USB interface before it
 * stops streaming, frees the buffers and closes the node: in 6.12 a last close racing
 * uvc_disconnect() can dereference NULL in media_device_unregister_entity(), outside
 * videobuf2's code.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>
#include <linux/dma-buf.h>
#include <linux/dma-heap.h>
#include <linux/udmabuf.h>
#include <linux/usb/ch9.h>
#include <linux/usb/video.h>
#include <linux/videodev2.h>

#include <kselftest.h>

#include "vb2-guest.h"

#define PROG "vb2-uvcdev"
#define VHCI "/sys/devices/platform/vhci_hcd.0"
#define PRODUCT "vb2-uvcdev camera"

/* The USB/IP wire format (drivers/usb/usbip/usbip_common.h): 48-byte big-endian headers. */
#define USBIP_CMD_SUBMIT 1
#define USBIP_CMD_UNLINK 2
#define USBIP_RET_SUBMIT 3
#define USBIP_RET_UNLINK 4
#define USBIP_DIR_IN 1
#define USB_SPEED_HIGH_ 3	/* enum usb_device_speed */

/* ---------------------------------------------------------------------------------
 * Helpers shared by both sides
 */

static uint64_t now_ns(void)
{
	return vb2_now_ns();
}

static void put_le16(uint8_t *p, uint16_t v)
{
	p[0] = v;
	p[1] = v >> 8;
}

static void put_le32(uint8_t *p, uint32_t v)
{
	p[0] = v;
	p[1] = v >> 8;
	p[2] = v >> 16;
	p[3] = v >> 24;
}

static uint16_t get_le16(const uint8_t *p)
{
	return p[0] | p[1] << 8;
}

static uint32_t get_le32(const uint8_t *p)
{
	return p[0] | p[1] << 8 | p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint32_t get_be32(const uint8_t *p, int word)
{
	uint32_t v;

	memcpy(&v, p + 4 * word, 4);
	return ntohl(v);
}

static void put_be32(uint8_t *p, int word, uint32_t v)
{
	v = htonl(v);
	memcpy(p + 4 * word, &v, 4);
}

static uint32_t mix32(uint32_t x)
{
	x ^= x >> 16;
	x *= 0x7feb352dU;
	x ^= x >> 15;
	x *= 0x846ca68bU;
	x ^= x >> 16;
	return x;
}

/* The pattern of frame @frame: byte j is byte j%4 of mix32(seed + j/4). */
static void fill_pattern(uint8_t *p, size_t n, uint32_t frame)
{
	uint32_t seed = frame * 0x9e3779b9U + 0x5bd1e995U;
	size_t k;
	uint32_t v;

	for (k = 0; k + 4 <= n; k += 4) {
		v = mix32(seed + (uint32_t)(k / 4));
		put_le32(p + k, v);
	}
	if (k < n) {
		uint8_t tail[4];

		put_le32(tail, mix32(seed + (uint32_t)(k / 4)));
		memcpy(p + k, tail, n - k);
	}
}

static uint32_t checksum(const uint8_t *p, size_t n)
{
	uint32_t s = 0x811c9dc5U;
	size_t k;

	for (k = 0; k + 4 <= n; k += 4)
		s = ((s << 5) | (s >> 27)) ^ get_le32(p + k);
	for (; k < n; k++)
		s = ((s << 5) | (s >> 27)) ^ p[k];
	return s;
}

/* Frame layouts. */
#define INFO_SIZE 16
#define MJPEG_HDR 6	/* SOI, COM marker, COM length */
#define MJPEG_MIN 4096

static size_t mjpeg_size(uint32_t frame, unsigned int w, unsigned int h)
{
	size_t max = (size_t)w * h;

	if (max > 65536)
		max = 65536;
	return MJPEG_MIN + mix32(frame ^ 0xa5a5f00dU) % (max - MJPEG_MIN);
}

static size_t frame_size(int mjpeg, uint32_t frame, unsigned int w, unsigned int h)
{
	return mjpeg ? mjpeg_size(frame, w, h) : (size_t)w * h * 2;
}

/* Where the info block and the pattern are in a frame of @size bytes. */
static void frame_layout(int mjpeg, size_t size, size_t *info, size_t *pat, size_t *patlen)
{
	*info = mjpeg ? MJPEG_HDR : 0;
	*pat = *info + INFO_SIZE;
	*patlen = size - *pat - (mjpeg ? 2 : 0);
}

static void make_frame(uint8_t *buf, int mjpeg, uint32_t frame, size_t size)
{
	size_t info, pat, patlen;

	frame_layout(mjpeg, size, &info, &pat, &patlen);
	if (mjpeg) {
		buf[0] = 0xff;
		buf[1] = 0xd8;	/* SOI */
		buf[2] = 0xff;
		buf[3] = 0xfe;	/* COM */
		buf[4] = 0;
		buf[5] = INFO_SIZE + 2;
		buf[size - 2] = 0xff;
		buf[size - 1] = 0xd9;	/* EOI */
	}
	fill_pattern(buf + pat, patlen, frame);
	memcpy(buf + info, "VB2F", 4);
	put_le32(buf + info + 4, frame);
	put_le32(buf + info + 8, size);
	put_le32(buf + info + 12, checksum(buf + pat, patlen));
}

/* ---------------------------------------------------------------------------------
 * The camera: descriptors
 */

enum { XFER_BULK, XFER_ISOC };

#define EP_STATUS 0x81
#define EP_VIDEO 0x82
#define VC_INTF 0
#define VS_INTF 1
#define ID_CAMERA 1
#define ID_PU 2
#define ID_OT 3
#define N_ALTS 4
#define CLOCK_HZ 48000000u

static const uint16_t iso_maxp[N_ALTS + 1] = {
	0,
	512,
	1024,
	0x0800 | 1024,	/* 2 transactions per microframe */
	0x1000 | 1024,	/* 3 */
};

static unsigned int maxp_bytes(uint16_t wmaxp)
{
	return (wmaxp & 0x7ff) * (((wmaxp >> 11) & 3) + 1);
}

struct frame_desc {
	uint16_t w, h;
};

static const struct frame_desc frames[2] = { { 320, 240 }, { 640, 480 } };
static const uint32_t intervals[2] = { 333333, 666666 };	/* 100 ns units */

static const uint8_t guid_yuy2[16] = {
	'Y', 'U', 'Y', '2', 0x00, 0x00, 0x10, 0x00,
	0x80, 0x00, 0x00, 0xaa, 0x00, 0x38, 0x9b, 0x71,
};

static uint8_t dev_desc[18];
static uint8_t qual_desc[10];
static uint8_t cfg_desc[1024];
static size_t cfg_len;

struct desc_buf {
	uint8_t *p;
	size_t len;
};

static uint8_t *db_add(struct desc_buf *d, size_t n)
{
	uint8_t *p = d->p + d->len;

	memset(p, 0, n);
	p[0] = n;
	d->len += n;
	return p;
}

static size_t max_frame_bytes(int mjpeg, unsigned int fi)
{
	const struct frame_desc *f = &frames[fi - 1];

	return mjpeg ? (size_t)f->w * f->h : (size_t)f->w * f->h * 2;
}

static void add_frames(struct desc_buf *d, uint8_t subtype, int mjpeg)
{
	unsigned int i;

	for (i = 0; i < 2; i++) {
		uint8_t *p = db_add(d, 26 + 4 * 2);
		uint32_t bits = max_frame_bytes(mjpeg, i + 1) * 8;

		p[1] = USB_DT_CS_INTERFACE;
		p[2] = subtype;
		p[3] = i + 1;			/* bFrameIndex */
		p[4] = 0;			/* bmCapabilities */
		put_le16(p + 5, frames[i].w);
		put_le16(p + 7, frames[i].h);
		put_le32(p + 9, bits * 15);	/* dwMinBitRate */
		put_le32(p + 13, bits * 30);	/* dwMaxBitRate */
		put_le32(p + 17, max_frame_bytes(mjpeg, i + 1));
		put_le32(p + 21, intervals[0]);	/* dwDefaultFrameInterval */
		p[25] = 2;			/* bFrameIntervalType: discrete */
		put_le32(p + 26, intervals[0]);
		put_le32(p + 30, intervals[1]);
	}
}

static void add_color(struct desc_buf *d)
{
	uint8_t *p = db_add(d, 6);

	p[1] = USB_DT_CS_INTERFACE;
	p[2] = UVC_VS_COLORFORMAT;
	p[3] = 1;	/* BT.709 primaries */
	p[4] = 1;	/* BT.709 transfer */
	p[5] = 4;	/* SMPTE 170M matrix */
}

/* The device and device qualifier descriptors. */
static void build_device_descriptors(void)
{
	uint8_t *p;

	p = dev_desc;
	p[0] = 18;
	p[1] = USB_DT_DEVICE;
	put_le16(p + 2, 0x0200);
	p[4] = USB_CLASS_MISC;
	p[5] = 2;			/* common class */
	p[6] = 1;			/* interface association */
	p[7] = 64;
	put_le16(p + 8, 0x1d6b);	/* Linux Foundation */
	put_le16(p + 10, 0x0102);	/* the UVC gadget's product id */
	put_le16(p + 12, 0x0612);
	p[14] = 1;
	p[15] = 2;
	p[16] = 3;
	p[17] = 1;

	p = qual_desc;
	p[0] = 10;
	p[1] = USB_DT_DEVICE_QUALIFIER;
	put_le16(p + 2, 0x0200);
	p[4] = USB_CLASS_MISC;
	p[5] = 2;
	p[6] = 1;
	p[7] = 64;
	p[8] = 1;
}

/* The VideoControl interface: header, camera, processing unit, output terminal, status. */
static void add_vc_interface(struct desc_buf *d, int status_ep)
{
	uint8_t *p, *vch;
	size_t vc_start;

	p = db_add(d, 9);		/* VideoControl */
	p[1] = USB_DT_INTERFACE;
	p[2] = VC_INTF;
	p[4] = status_ep ? 1 : 0;
	p[5] = USB_CLASS_VIDEO;
	p[6] = UVC_SC_VIDEOCONTROL;

	vc_start = d->len;
	vch = db_add(d, 13);
	vch[1] = USB_DT_CS_INTERFACE;
	vch[2] = UVC_VC_HEADER;
	put_le16(vch + 3, 0x0110);
	put_le32(vch + 7, CLOCK_HZ);
	vch[11] = 1;			/* bInCollection */
	vch[12] = VS_INTF;

	p = db_add(d, 18);		/* camera terminal */
	p[1] = USB_DT_CS_INTERFACE;
	p[2] = UVC_VC_INPUT_TERMINAL;
	p[3] = ID_CAMERA;
	put_le16(p + 4, UVC_ITT_CAMERA);
	p[14] = 3;			/* bControlSize, no controls */

	p = db_add(d, 12);		/* processing unit (UVC 1.1 layout) */
	p[1] = USB_DT_CS_INTERFACE;
	p[2] = UVC_VC_PROCESSING_UNIT;
	p[3] = ID_PU;
	p[4] = ID_CAMERA;
	put_le16(p + 5, 0);
	p[7] = 2;			/* bControlSize */
	p[8] = 0x0b;			/* brightness, contrast, saturation */
	p[9] = 0x04;			/* power line frequency */

	p = db_add(d, 9);		/* output terminal */
	p[1] = USB_DT_CS_INTERFACE;
	p[2] = UVC_VC_OUTPUT_TERMINAL;
	p[3] = ID_OT;
	put_le16(p + 4, UVC_TT_STREAMING);
	p[7] = ID_PU;
	put_le16(vch + 5, d->len - vc_start);

	if (status_ep) {
		p = db_add(d, 7);
		p[1] = USB_DT_ENDPOINT;
		p[2] = EP_STATUS;
		p[3] = USB_ENDPOINT_XFER_INT;
		put_le16(p + 4, 16);
		p[6] = 8;
		p = db_add(d, 5);
		p[1] = USB_DT_CS_ENDPOINT;
		p[2] = USB_ENDPOINT_XFER_INT;
		put_le16(p + 3, 16);
	}
}

/* The VideoStreaming interface's alternate setting 0: header, YUYV and MJPEG formats. */
static void add_vs_interface(struct desc_buf *d, int xfer)
{
	uint8_t *p, *vsh;
	size_t vs_start;

	p = db_add(d, 9);		/* VideoStreaming, alternate setting 0 */
	p[1] = USB_DT_INTERFACE;
	p[2] = VS_INTF;
	p[4] = xfer == XFER_BULK ? 1 : 0;
	p[5] = USB_CLASS_VIDEO;
	p[6] = UVC_SC_VIDEOSTREAMING;

	vs_start = d->len;
	vsh = db_add(d, 13 + 2);
	vsh[1] = USB_DT_CS_INTERFACE;
	vsh[2] = UVC_VS_INPUT_HEADER;
	vsh[3] = 2;			/* bNumFormats */
	vsh[6] = EP_VIDEO;
	vsh[8] = ID_OT;			/* bTerminalLink */
	vsh[12] = 1;			/* bControlSize */

	p = db_add(d, 27);
	p[1] = USB_DT_CS_INTERFACE;
	p[2] = UVC_VS_FORMAT_UNCOMPRESSED;
	p[3] = 1;
	p[4] = 2;
	memcpy(p + 5, guid_yuy2, 16);
	p[21] = 16;
	p[22] = 1;
	add_frames(d, UVC_VS_FRAME_UNCOMPRESSED, 0);
	add_color(d);

	p = db_add(d, 11);
	p[1] = USB_DT_CS_INTERFACE;
	p[2] = UVC_VS_FORMAT_MJPEG;
	p[3] = 2;
	p[4] = 2;
	p[5] = 1;			/* fixed size samples */
	p[6] = 1;
	add_frames(d, UVC_VS_FRAME_MJPEG, 1);
	add_color(d);
	put_le16(vsh + 4, d->len - vs_start);
}

/* The streaming endpoint: bulk, or isochronous in alternate settings 1..N_ALTS. */
static void add_vs_endpoints(struct desc_buf *d, int xfer)
{
	unsigned int alt;
	uint8_t *p;

	if (xfer == XFER_BULK) {
		p = db_add(d, 7);
		p[1] = USB_DT_ENDPOINT;
		p[2] = EP_VIDEO;
		p[3] = USB_ENDPOINT_XFER_BULK;
		put_le16(p + 4, 512);
	} else {
		for (alt = 1; alt <= N_ALTS; alt++) {
			p = db_add(d, 9);
			p[1] = USB_DT_INTERFACE;
			p[2] = VS_INTF;
			p[3] = alt;
			p[4] = 1;
			p[5] = USB_CLASS_VIDEO;
			p[6] = UVC_SC_VIDEOSTREAMING;
			p = db_add(d, 7);
			p[1] = USB_DT_ENDPOINT;
			p[2] = EP_VIDEO;
			p[3] = USB_ENDPOINT_XFER_ISOC | USB_ENDPOINT_SYNC_ASYNC;
			put_le16(p + 4, iso_maxp[alt]);
			p[6] = 1;
		}
	}
}

static void build_descriptors(int xfer, int status_ep)
{
	struct desc_buf d = { cfg_desc, 0 };
	uint8_t *cfg, *p;

	build_device_descriptors();
	cfg = db_add(&d, 9);
	cfg[1] = USB_DT_CONFIG;
	cfg[4] = 2;			/* bNumInterfaces */
	cfg[5] = 1;			/* bConfigurationValue */
	cfg[7] = 0x80;			/* bus powered */
	cfg[8] = 250;			/* 500 mA */

	p = db_add(&d, 8);		/* interface association */
	p[1] = USB_DT_INTERFACE_ASSOCIATION;
	p[2] = VC_INTF;
	p[3] = 2;
	p[4] = USB_CLASS_VIDEO;
	p[5] = UVC_SC_VIDEO_INTERFACE_COLLECTION;

	add_vc_interface(&d, status_ep);
	add_vs_interface(&d, xfer);
	add_vs_endpoints(&d, xfer);
	put_le16(cfg + 2, d.len);
	cfg_len = d.len;
}

static size_t string_desc(unsigned int index, uint8_t *out)
{
	static const char *const strings[] = { NULL, "vb2 test harness", PRODUCT, "0001" };
	const char *s;
	size_t i, n;

	if (index == 0) {
		out[0] = 4;
		out[1] = USB_DT_STRING;
		put_le16(out + 2, 0x0409);
		return 4;
	}
	if (index >= sizeof(strings) / sizeof(strings[0]))
		return 0;
	s = strings[index];
	n = strlen(s);
	out[0] = 2 + 2 * n;
	out[1] = USB_DT_STRING;
	for (i = 0; i < n; i++)
		put_le16(out + 2 + 2 * i, (uint8_t)s[i]);
	return 2 + 2 * n;
}

/* ---------------------------------------------------------------------------------
 * The camera: state
 */

struct urb {
	struct urb *next;
	uint32_t seqnum;
	uint32_t ep;
	int32_t len;
	int32_t np;
	uint32_t *iso_off;
	uint32_t *iso_len;
};

struct probe {
	uint16_t hint;
	uint8_t format, frame;
	uint32_t interval;
	uint16_t key_rate, p_rate, quality, window;
	uint32_t max_frame, max_payload;
};

struct uvc_ctrl {
	uint8_t unit, cs, size, is_signed;
	int32_t min, max, res, def, cur;
};

static struct {
	/* options */
	int xfer;
	int status_ep;
	double fps;		/* < 0: the committed interval */
	unsigned int hdr_len;
	unsigned int bulk_payload;
	int verbose;
	long unplug_after;	/* frames, -1: not armed */
	int unplug_detach;
	int port;

	int sock;
	pthread_mutex_t lk;
	pthread_cond_t cond;
	int quit;		/* the connection is gone or going */
	int unplug_now;		/* the streaming thread asks main to unplug */
	const char *end_reason;

	/* USB state */
	int config;
	int vs_alt;
	struct urb *video_urbs, **video_tail;
	struct urb *status_urbs;
	uint8_t error_code;
	struct probe probe, commit;
	struct uvc_ctrl ctrls[4];

	/* streaming */
	int streaming;
	int mjpeg;
	unsigned int w, h;
	unsigned int psize;		/* isochronous bytes per packet */
	uint64_t interval_ns, t_start, frames_started;
	uint8_t *frame;
	size_t frame_len, frame_off;
	int frame_active;
	uint32_t frame_no;
	uint8_t fid;
	uint32_t pts;
	uint8_t payload[65536 + 16];
	size_t pay_len, pay_off;
	int zlp_pending;
	uint64_t unplug_base;

	/* statistics */
	uint64_t n_ctrl, n_stall, n_urbs, n_unlinks, n_unlink_hit, frames_done, bytes_sent;
	unsigned int streams;
} S = {
	.lk = PTHREAD_MUTEX_INITIALIZER,
	.cond = PTHREAD_COND_INITIALIZER,
	.xfer = XFER_ISOC,
	.status_ep = 1,
	.fps = -1,
	.hdr_len = 12,
	.bulk_payload = 16384,
	.unplug_after = -1,
	.port = -1,
};

static void logmsg(const char *fmt, ...)
{
	va_list ap;
	double t = now_ns() / 1e9;

	fprintf(stderr, "[%.3f] %s: ", t, PROG);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static int write_full(int fd, const struct iovec *iov, int n)
{
	struct iovec v[4];
	int i;

	memcpy(v, iov, n * sizeof(*iov));
	i = 0;
	while (i < n) {
		ssize_t r;

		if (v[i].iov_len == 0) {
			i++;
			continue;
		}
		r = writev(fd, v + i, n - i);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		while (r > 0 && i < n) {
			if ((size_t)r >= v[i].iov_len) {
				r -= v[i].iov_len;
				v[i].iov_len = 0;
				i++;
			} else {
				v[i].iov_base = (uint8_t *)v[i].iov_base + r;
				v[i].iov_len -= r;
				r = 0;
			}
		}
	}
	return 0;
}

static int read_full(int fd, void *buf, size_t n)
{
	uint8_t *p = buf;

	while (n) {
		ssize_t r = read(fd, p, n);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return r < 0 ? -1 : 0;
		p += r;
		n -= r;
	}
	return 1;
}

/* Called with S.lk held. Socket write errors end the connection. */
static void send_reply(const struct iovec *iov, int n)
{
	if (S.quit)
		return;
	if (write_full(S.sock, iov, n) < 0) {
		logmsg("socket write failed: %s", strerror(errno));
		S.quit = 1;
		if (!S.end_reason)
			S.end_reason = "write error";
		pthread_cond_broadcast(&S.cond);
	}
}

static void ret_submit(uint32_t seqnum, int32_t status, uint32_t actual, const void *data,
		       size_t len, int32_t np, const uint8_t *isodesc, size_t isolen)
{
	uint8_t hdr[48] = { 0 };
	struct iovec iov[3];

	put_be32(hdr, 0, USBIP_RET_SUBMIT);
	put_be32(hdr, 1, seqnum);
	put_be32(hdr, 5, status);
	put_be32(hdr, 6, actual);
	put_be32(hdr, 8, np);
	iov[0].iov_base = hdr;
	iov[0].iov_len = sizeof(hdr);
	iov[1].iov_base = (void *)data;
	iov[1].iov_len = len;
	iov[2].iov_base = (void *)isodesc;
	iov[2].iov_len = isolen;
	send_reply(iov, 3);
	S.n_urbs++;
}

/* ---------------------------------------------------------------------------------
 * The camera: control requests
 */

static void stall(uint32_t seq, uint8_t error_code)
{
	S.error_code = error_code;
	S.n_stall++;
	ret_submit(seq, -EPIPE, 0, NULL, 0, 0, NULL, 0);
}

static void ctrl_in(uint32_t seq, const void *data, size_t len, uint16_t wlength)
{
	if (len > wlength)
		len = wlength;
	S.error_code = 0;
	ret_submit(seq, 0, len, data, len, 0, NULL, 0);
}

static void ctrl_out(uint32_t seq, uint16_t wlength)
{
	S.error_code = 0;
	ret_submit(seq, 0, wlength, NULL, 0, 0, NULL, 0);
}

#define PROBE_SIZE 34

static uint32_t payload_for(const struct probe *p)
{
	uint64_t need;
	unsigned int alt;

	if (S.xfer == XFER_BULK)
		return S.bulk_payload;
	/* Bytes per microframe at the frame rate, plus a header per packet. */
	need = (uint64_t)p->max_frame * 10000000ull / p->interval / 8000 + S.hdr_len + 1;
	for (alt = 1; alt <= N_ALTS; alt++)
		if (maxp_bytes(iso_maxp[alt]) >= need)
			return maxp_bytes(iso_maxp[alt]);
	return maxp_bytes(iso_maxp[N_ALTS]);
}

static void probe_fix(struct probe *p)
{
	uint32_t d0, d1;

	if (p->format < 1 || p->format > 2)
		p->format = 1;
	if (p->frame < 1 || p->frame > 2)
		p->frame = 1;
	if (p->interval == 0) {
		p->interval = intervals[0];
	} else {
		d0 = p->interval > intervals[0] ? p->interval - intervals[0] : intervals[0] - p->interval;
		d1 = p->interval > intervals[1] ? p->interval - intervals[1] : intervals[1] - p->interval;
		p->interval = d0 <= d1 ? intervals[0] : intervals[1];
	}
	if (p->quality > 10000)
		p->quality = 10000;
	p->max_frame = max_frame_bytes(p->format == 2, p->frame);
	p->max_payload = payload_for(p);
}

static void probe_encode(const struct probe *p, uint8_t *d)
{
	memset(d, 0, PROBE_SIZE);
	put_le16(d + 0, p->hint);
	d[2] = p->format;
	d[3] = p->frame;
	put_le32(d + 4, p->interval);
	put_le16(d + 8, p->key_rate);
	put_le16(d + 10, p->p_rate);
	put_le16(d + 12, p->quality);
	put_le16(d + 14, p->window);
	put_le32(d + 18, p->max_frame);
	put_le32(d + 22, p->max_payload);
	put_le32(d + 26, CLOCK_HZ);
	d[30] = 3;	/* bmFramingInfo: FID and EOF */
	d[31] = 1;	/* bPreferedVersion */
	d[32] = 1;
	d[33] = 1;
}

static void probe_decode(struct probe *p, const uint8_t *d, size_t n)
{
	uint8_t buf[PROBE_SIZE] = { 0 };

	memcpy(buf, d, n < PROBE_SIZE ? n : PROBE_SIZE);
	p->hint = get_le16(buf + 0);
	p->format = buf[2];
	p->frame = buf[3];
	p->interval = get_le32(buf + 4);
	p->key_rate = get_le16(buf + 8);
	p->p_rate = get_le16(buf + 10);
	p->quality = get_le16(buf + 12);
	p->window = get_le16(buf + 14);
}

static void probe_limit(struct probe *p, int which)
{
	memset(p, 0, sizeof(*p));
	p->format = which == UVC_GET_MAX ? 2 : 1;
	p->frame = which == UVC_GET_MAX ? 2 : 1;
	p->interval = which == UVC_GET_MAX ? intervals[1] : intervals[0];
	p->quality = which == UVC_GET_MAX ? 10000 : which == UVC_GET_MIN ? 0 : 5000;
	p->window = 0;
	probe_fix(p);
}

static void stream_start(void);
static void stream_stop(const char *why);

static void vs_request(uint32_t seq, uint8_t req, uint8_t cs, const uint8_t *out,
		       uint16_t wlength)
{
	struct probe *cur = cs == UVC_VS_PROBE_CONTROL ? &S.probe : &S.commit;
	struct probe tmp;
	uint8_t d[PROBE_SIZE];

	if (cs != UVC_VS_PROBE_CONTROL && cs != UVC_VS_COMMIT_CONTROL) {
		stall(seq, 6);	/* invalid control */
		return;
	}
	switch (req) {
	case UVC_SET_CUR:
		if (wlength < 26 || !out) {
			stall(seq, 7);
			return;
		}
		probe_decode(&tmp, out, wlength);
		probe_fix(&tmp);
		*cur = tmp;
		if (cs == UVC_VS_COMMIT_CONTROL) {
			/* Probe and commit agree after a commit. */
			S.probe = tmp;
			if (S.xfer == XFER_BULK)
				stream_start();
		}
		ctrl_out(seq, wlength);
		return;
	case UVC_GET_CUR:
		probe_encode(cur, d);
		break;
	case UVC_GET_MIN:
	case UVC_GET_MAX:
	case UVC_GET_DEF:
		probe_limit(&tmp, req);
		probe_encode(&tmp, d);
		break;
	case UVC_GET_LEN:
		put_le16(d, PROBE_SIZE);
		ctrl_in(seq, d, 2, wlength);
		return;
	case UVC_GET_INFO:
		d[0] = 0x03;
		ctrl_in(seq, d, 1, wlength);
		return;
	default:
		stall(seq, 7);	/* invalid request */
		return;
	}
	ctrl_in(seq, d, PROBE_SIZE, wlength);
}

static void ctrl_put(const struct uvc_ctrl *c, int32_t v, uint8_t *d)
{
	if (c->size == 1)
		d[0] = v;
	else if (c->size == 2)
		put_le16(d, v);
	else
		put_le32(d, v);
}

static int32_t ctrl_get(const struct uvc_ctrl *c, const uint8_t *d)
{
	if (c->size == 1)
		return c->is_signed ? (int8_t)d[0] : d[0];
	if (c->size == 2)
		return c->is_signed ? (int16_t)get_le16(d) : get_le16(d);
	return get_le32(d);
}

static void vc_request(uint32_t seq, uint8_t req, uint8_t unit, uint8_t cs,
		       const uint8_t *out, uint16_t wlength)
{
	struct uvc_ctrl *c = NULL;
	uint8_t d[4] = { 0 };
	unsigned int i;

	if (unit == 0) {
		if (cs == UVC_VC_REQUEST_ERROR_CODE_CONTROL && req == UVC_GET_CUR) {
			d[0] = S.error_code;
			ret_submit(seq, 0, wlength ? 1 : 0, d, wlength ? 1 : 0, 0, NULL, 0);
			return;
		}
		if (cs == UVC_VC_REQUEST_ERROR_CODE_CONTROL && req == UVC_GET_INFO) {
			d[0] = 0x01;
			ctrl_in(seq, d, 1, wlength);
			return;
		}
		stall(seq, 6);
		return;
	}
	if (unit != ID_CAMERA && unit != ID_PU && unit != ID_OT) {
		stall(seq, 5);	/* invalid unit */
		return;
	}
	for (i = 0; i < sizeof(S.ctrls) / sizeof(S.ctrls[0]); i++)
		if (S.ctrls[i].unit == unit && S.ctrls[i].cs == cs)
			c = &S.ctrls[i];
	if (!c) {
		stall(seq, 6);	/* invalid control */
		return;
	}
	switch (req) {
	case UVC_SET_CUR: {
		int32_t v;

		if (wlength != c->size || !out) {
			stall(seq, 7);
			return;
		}
		v = ctrl_get(c, out);
		if (v < c->min || v > c->max) {
			stall(seq, 4);	/* out of range */
			return;
		}
		c->cur = v;
		ctrl_out(seq, wlength);
		return;
	}
	case UVC_GET_CUR:
		ctrl_put(c, c->cur, d);
		break;
	case UVC_GET_MIN:
		ctrl_put(c, c->min, d);
		break;
	case UVC_GET_MAX:
		ctrl_put(c, c->max, d);
		break;
	case UVC_GET_RES:
		ctrl_put(c, c->res, d);
		break;
	case UVC_GET_DEF:
		ctrl_put(c, c->def, d);
		break;
	case UVC_GET_LEN:
		put_le16(d, c->size);
		ctrl_in(seq, d, 2, wlength);
		return;
	case UVC_GET_INFO:
		d[0] = 0x03;	/* GET and SET supported */
		ctrl_in(seq, d, 1, wlength);
		return;
	default:
		stall(seq, 7);
		return;
	}
	ctrl_in(seq, d, c->size, wlength);
}

static void std_request(uint32_t seq, uint8_t rt, uint8_t req, uint16_t wvalue,
			uint16_t windex, uint16_t wlength)
{
	uint8_t d[256];
	size_t n;

	switch (req) {
	case USB_REQ_GET_DESCRIPTOR:
		switch (wvalue >> 8) {
		case USB_DT_DEVICE:
			ctrl_in(seq, dev_desc, sizeof(dev_desc), wlength);
			return;
		case USB_DT_CONFIG:
			if ((wvalue & 0xff) != 0)
				break;
			ctrl_in(seq, cfg_desc, cfg_len, wlength);
			return;
		case USB_DT_STRING:
			n = string_desc(wvalue & 0xff, d);
			if (!n)
				break;
			ctrl_in(seq, d, n, wlength);
			return;
		case USB_DT_DEVICE_QUALIFIER:
			ctrl_in(seq, qual_desc, sizeof(qual_desc), wlength);
			return;
		}
		stall(seq, 0);
		return;
	case USB_REQ_SET_CONFIGURATION:
		if (wvalue > 1) {
			stall(seq, 0);
			return;
		}
		S.config = wvalue;
		S.vs_alt = 0;
		stream_stop("SET_CONFIGURATION");
		ctrl_out(seq, 0);
		return;
	case USB_REQ_GET_CONFIGURATION:
		d[0] = S.config;
		ctrl_in(seq, d, 1, wlength);
		return;
	case USB_REQ_SET_INTERFACE:
		if (windex == VC_INTF && wvalue == 0) {
			ctrl_out(seq, 0);
			return;
		}
		if (windex != VS_INTF || wvalue > (S.xfer == XFER_ISOC ? N_ALTS : 0)) {
			stall(seq, 0);
			return;
		}
		S.vs_alt = wvalue;
		if (S.xfer == XFER_ISOC) {
			if (wvalue) {
				S.psize = maxp_bytes(iso_maxp[wvalue]);
				stream_start();
			} else {
				stream_stop("alternate setting 0");
			}
		}
		ctrl_out(seq, 0);
		return;
	case USB_REQ_GET_INTERFACE:
		d[0] = windex == VS_INTF ? S.vs_alt : 0;
		ctrl_in(seq, d, 1, wlength);
		return;
	case USB_REQ_GET_STATUS:
		memset(d, 0, 2);
		ctrl_in(seq, d, 2, wlength);
		return;
	case USB_REQ_CLEAR_FEATURE:
		if ((rt & USB_RECIP_MASK) == USB_RECIP_ENDPOINT && wvalue == USB_ENDPOINT_HALT &&
		    windex == EP_VIDEO && S.xfer == XFER_BULK)
			stream_stop("CLEAR_FEATURE(HALT)");
		ctrl_out(seq, 0);
		return;
	case USB_REQ_SET_FEATURE:
		ctrl_out(seq, 0);
		return;
	}
	stall(seq, 0);
}

static void control(uint32_t seq, const uint8_t *setup, const uint8_t *out, int32_t len)
{
	uint8_t rt = setup[0], req = setup[1];
	uint16_t wvalue = get_le16(setup + 2), windex = get_le16(setup + 4);
	uint16_t wlength = get_le16(setup + 6);

	S.n_ctrl++;
	if (S.verbose)
		logmsg("control %02x %02x %04x %04x %u", rt, req, wvalue, windex, wlength);
	if ((rt & USB_DIR_IN) == 0 && wlength && len != wlength) {
		stall(seq, 7);
		return;
	}
	switch (rt & USB_TYPE_MASK) {
	case USB_TYPE_STANDARD:
		std_request(seq, rt, req, wvalue, windex, wlength);
		return;
	case USB_TYPE_CLASS:
		if ((rt & USB_RECIP_MASK) != USB_RECIP_INTERFACE)
			break;
		if ((windex & 0xff) == VS_INTF && (windex >> 8) == 0) {
			vs_request(seq, req, wvalue >> 8, out, wlength);
			return;
		}
		if ((windex & 0xff) == VC_INTF) {
			vc_request(seq, req, windex >> 8, wvalue >> 8, out, wlength);
			return;
		}
		break;
	}
	stall(seq, 7);
}

/* ---------------------------------------------------------------------------------
 * The camera: streaming
 */

static void stream_start(void)
{
	const struct probe *c = &S.commit;
	size_t max = max_frame_bytes(c->format == 2, c->frame);

	S.mjpeg = c->format == 2;
	S.w = frames[c->frame - 1].w;
	S.h = frames[c->frame - 1].h;
	if (S.fps > 0)
		S.interval_ns = 1e9 / S.fps;
	else if (S.fps == 0)
		S.interval_ns = 0;
	else
		S.interval_ns = (uint64_t)c->interval * 100;
	free(S.frame);
	S.frame = malloc(max);
	if (!S.frame) {
		logmsg("out of memory");
		exit(1);
	}
	S.t_start = now_ns();
	S.frames_started = 0;
	S.frame_active = 0;
	S.frame_no = 0;
	S.pay_len = S.pay_off = 0;
	S.zlp_pending = 0;
	S.streaming = 1;
	S.streams++;
	logmsg("stream %u started: %s %ux%u, %s, %.1f fps, payload %u bytes%s", S.streams,
	       S.mjpeg ? "MJPEG" : "YUYV", S.w, S.h,
	       S.xfer == XFER_BULK ? "bulk" : "isochronous",
	       S.interval_ns ? 1e9 / S.interval_ns : 0.0,
	       S.xfer == XFER_BULK ? c->max_payload : S.psize,
	       S.interval_ns ? "" : " (unpaced)");
	pthread_cond_broadcast(&S.cond);
}

static void stream_stop(const char *why)
{
	if (!S.streaming)
		return;
	S.streaming = 0;
	logmsg("stream %u stopped by %s after %u frames", S.streams, why, S.frame_no);
}

/* Is the next frame due? If not, when it will be. */
static int frame_due(uint64_t *when)
{
	uint64_t t;

	if (S.interval_ns == 0)
		return 1;
	t = S.t_start + S.frames_started * S.interval_ns;
	if (now_ns() >= t)
		return 1;
	if (when)
		*when = t;
	return 0;
}

static void frame_begin(void)
{
	size_t size = frame_size(S.mjpeg, S.frame_no, S.w, S.h);

	make_frame(S.frame, S.mjpeg, S.frame_no, size);
	S.frame_len = size;
	S.frame_off = 0;
	S.frame_active = 1;
	S.fid = S.frame_no & 1;
	S.pts = (uint32_t)(now_ns() * (CLOCK_HZ / 1000000) / 1000);
	S.frames_started++;
}

static size_t payload_header(uint8_t *p, int eof)
{
	uint8_t flags = UVC_STREAM_EOH | (S.fid ? UVC_STREAM_FID : 0) | (eof ? UVC_STREAM_EOF : 0);
	uint64_t t;

	if (S.hdr_len == 2) {
		p[0] = 2;
		p[1] = flags;
		return 2;
	}
	t = now_ns();
	p[0] = 12;
	p[1] = flags | UVC_STREAM_PTS | UVC_STREAM_SCR;
	put_le32(p + 2, S.pts);
	put_le32(p + 6, (uint32_t)(t * (CLOCK_HZ / 1000000) / 1000));
	put_le16(p + 10, (t / 1000000) & 2047);
	return 12;
}

/* The next payload of the current frame, at most @max bytes, into @out. */
static size_t next_payload(uint8_t *out, size_t max)
{
	size_t n = max - S.hdr_len, left = S.frame_len - S.frame_off;
	int eof;

	if (n > left)
		n = left;
	eof = n == left;
	payload_header(out, eof);
	memcpy(out + S.hdr_len, S.frame + S.frame_off, n);
	S.frame_off += n;
	S.bytes_sent += n;
	if (eof) {
		S.frame_active = 0;
		S.frames_done++;
		S.frame_no++;
	} else if (S.unplug_after >= 0 && !S.unplug_now &&
		   S.frames_done - S.unplug_base >= (uint64_t)S.unplug_after &&
		   S.frame_off >= S.frame_len / 2) {
		/* In the middle of the frame after the last one we were to send. */
		S.unplug_now = 1;
		pthread_cond_broadcast(&S.cond);
	}
	return S.hdr_len + n;
}

static void serve_bulk(struct urb *u)
{
	size_t n;
	uint32_t maxp = S.commit.max_payload;

	if (S.zlp_pending) {
		S.zlp_pending = 0;
		ret_submit(u->seqnum, 0, 0, NULL, 0, 0, NULL, 0);
		return;
	}
	if (S.pay_off >= S.pay_len) {
		if (!S.frame_active)
			frame_begin();
		S.pay_len = next_payload(S.payload, maxp);
		S.pay_off = 0;
	}
	n = S.pay_len - S.pay_off;
	if (n > (size_t)u->len)
		n = u->len;
	ret_submit(u->seqnum, 0, n, S.payload + S.pay_off, n, 0, NULL, 0);
	S.pay_off += n;
	/*
	 * A transfer ends with a short packet, or when it reaches the maximum payload size:
	 * a payload that fills the URB exactly with whole packets needs a zero-length packet.
	 */
	if (S.pay_off == S.pay_len && n == (size_t)u->len && S.pay_len < maxp &&
	    S.pay_len % 512 == 0)
		S.zlp_pending = 1;
}

static void serve_isoc(struct urb *u)
{
	static uint8_t *data, *desc;
	static size_t data_cap, desc_cap;
	size_t total = 0;
	int i;

	if ((size_t)u->len > data_cap) {
		data_cap = u->len;
		data = realloc(data, data_cap);
	}
	if ((size_t)u->np * 16 > desc_cap) {
		desc_cap = u->np * 16;
		desc = realloc(desc, desc_cap);
	}
	if (!data || !desc) {
		logmsg("out of memory");
		exit(1);
	}
	for (i = 0; i < u->np; i++) {
		size_t cap = u->iso_len[i] < S.psize ? u->iso_len[i] : S.psize;
		size_t a = 0;

		if (u->iso_off[i] + (uint64_t)u->iso_len[i] > (uint64_t)u->len)
			cap = 0;
		if (cap > S.hdr_len && !S.unplug_now && (S.frame_active || frame_due(NULL))) {
			if (!S.frame_active)
				frame_begin();
			a = next_payload(data + total, cap);
		}
		put_be32(desc + 16 * i, 0, u->iso_off[i]);
		put_be32(desc + 16 * i, 1, u->iso_len[i]);
		put_be32(desc + 16 * i, 2, a);
		put_be32(desc + 16 * i, 3, 0);
		total += a;
	}
	ret_submit(u->seqnum, 0, total, data, total, u->np, desc, u->np * 16);
}

static void free_urb(struct urb *u)
{
	free(u->iso_off);
	free(u->iso_len);
	free(u);
}

static void *stream_thread(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&S.lk);
	while (!S.quit) {
		struct urb *u = S.video_urbs;
		uint64_t when = 0;

		if (!S.streaming || !u || S.unplug_now) {
			pthread_cond_wait(&S.cond, &S.lk);
			continue;
		}
		if (!S.frame_active && S.pay_off >= S.pay_len && !S.zlp_pending &&
		    !frame_due(&when)) {
			struct timespec ts = { when / 1000000000ull, when % 1000000000ull };

			pthread_cond_timedwait(&S.cond, &S.lk, &ts);
			continue;
		}
		S.video_urbs = u->next;
		if (!S.video_urbs)
			S.video_tail = &S.video_urbs;
		if (S.xfer == XFER_BULK)
			serve_bulk(u);
		else
			serve_isoc(u);
		free_urb(u);
	}
	pthread_mutex_unlock(&S.lk);
	return NULL;
}

/* ---------------------------------------------------------------------------------
 * The camera: the USB/IP connection
 */

static struct urb *unlink_from(struct urb **head, uint32_t seqnum)
{
	struct urb **pp, *u;

	for (pp = head; (u = *pp); pp = &u->next) {
		if (u->seqnum == seqnum) {
			*pp = u->next;
			return u;
		}
	}
	return NULL;
}

static void handle_unlink(uint32_t seq, uint32_t target)
{
	uint8_t hdr[48] = { 0 };
	struct iovec iov = { hdr, sizeof(hdr) };
	struct urb *u, *t;

	S.n_unlinks++;
	u = unlink_from(&S.video_urbs, target);
	if (u) {
		/* Fix the tail pointer. */
		S.video_tail = &S.video_urbs;
		for (t = S.video_urbs; t; t = t->next)
			S.video_tail = &t->next;
	} else {
		u = unlink_from(&S.status_urbs, target);
	}
	put_be32(hdr, 0, USBIP_RET_UNLINK);
	put_be32(hdr, 1, seq);
	/* -ECONNRESET: unlinked before completion; 0: it had completed already. */
	put_be32(hdr, 5, u ? -ECONNRESET : 0);
	if (u) {
		S.n_unlink_hit++;
		free_urb(u);
	}
	send_reply(&iov, 1);
}

static struct urb *new_urb(uint32_t seq, uint32_t ep, int32_t len)
{
	struct urb *u = calloc(1, sizeof(*u));

	if (!u) {
		logmsg("out of memory");
		exit(1);
	}
	u->seqnum = seq;
	u->ep = ep;
	u->len = len;
	return u;
}

/* A video URB for the streaming thread; @iso: its packet descriptors (isochronous). */
static void queue_video_urb(uint32_t seq, uint32_t ep, int32_t len, int32_t np,
			    const uint8_t *iso)
{
	struct urb *u = new_urb(seq, ep, len);
	int i;

	if (iso) {
		u->np = np;
		u->iso_off = calloc(np, sizeof(uint32_t));
		u->iso_len = calloc(np, sizeof(uint32_t));
		if (!u->iso_off || !u->iso_len) {
			logmsg("out of memory");
			exit(1);
		}
		for (i = 0; i < np; i++) {
			u->iso_off[i] = get_be32(iso + 16 * i, 0);
			u->iso_len[i] = get_be32(iso + 16 * i, 1);
		}
	}
	*S.video_tail = u;
	S.video_tail = &u->next;
	pthread_cond_broadcast(&S.cond);
}

/* A USBIP_CMD_SUBMIT with header @h: NULL, or why the connection cannot go on. */
static const char *handle_submit(const uint8_t *h)
{
	uint32_t seq = get_be32(h, 1), dir = get_be32(h, 3), ep = get_be32(h, 4);
	int32_t len = get_be32(h, 6), np = get_be32(h, 8);
	uint8_t *out = NULL, *iso = NULL;
	int isoc = ep == (EP_VIDEO & 0x0f) && S.xfer == XFER_ISOC;

	if (len < 0 || len > (1 << 24) || (isoc && (np <= 0 || np > 1024)))
		return "bad CMD_SUBMIT";
	if (dir != USBIP_DIR_IN && len > 0) {
		out = malloc(len);
		if (!out || read_full(S.sock, out, len) <= 0) {
			free(out);
			return "connection lost in CMD_SUBMIT";
		}
	}
	if (isoc) {
		iso = malloc(np * 16);
		if (!iso || read_full(S.sock, iso, np * 16) <= 0) {
			free(out);
			free(iso);
			return "connection lost in CMD_SUBMIT";
		}
	}
	pthread_mutex_lock(&S.lk);
	if (ep == 0) {
		control(seq, h + 40, out, len);
	} else if (ep == (EP_VIDEO & 0x0f) && dir == USBIP_DIR_IN && len > 0) {
		queue_video_urb(seq, ep, len, np, isoc ? iso : NULL);
	} else if (S.status_ep && ep == (EP_STATUS & 0x0f) && dir == USBIP_DIR_IN) {
		/* Status interrupts: nothing to report, kept until unlinked. */
		struct urb *u = new_urb(seq, ep, len);

		u->next = S.status_urbs;
		S.status_urbs = u;
	} else {
		if (S.verbose)
			logmsg("stalling a transfer on endpoint %u", ep);
		ret_submit(seq, -EPIPE, 0, NULL, 0, 0, NULL, 0);
	}
	pthread_mutex_unlock(&S.lk);
	free(out);
	free(iso);
	return NULL;
}

static void *reader_thread(void *arg)
{
	const char *reason = "connection closed by the host";
	uint8_t h[48];

	(void)arg;
	for (;;) {
		int r = read_full(S.sock, h, sizeof(h));
		uint32_t cmd;

		if (r <= 0) {
			if (r < 0)
				reason = "socket read error";
			break;
		}
		cmd = get_be32(h, 0);
		if (cmd == USBIP_CMD_SUBMIT) {
			const char *why = handle_submit(h);

			if (why) {
				reason = why;
				break;
			}
		} else if (cmd == USBIP_CMD_UNLINK) {
			pthread_mutex_lock(&S.lk);
			handle_unlink(get_be32(h, 1), get_be32(h, 5));
			pthread_mutex_unlock(&S.lk);
		} else {
			logmsg("unknown USB/IP command %u", cmd);
			reason = "unknown USB/IP command";
			break;
		}
	}
	pthread_mutex_lock(&S.lk);
	S.quit = 1;
	if (!S.end_reason)
		S.end_reason = reason;
	pthread_cond_broadcast(&S.cond);
	pthread_mutex_unlock(&S.lk);
	return NULL;
}

static int write_sysfs(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY);
	ssize_t r;

	if (fd < 0)
		return -1;
	r = write(fd, s, strlen(s));
	if (r < 0) {
		int e = errno;

		close(fd);
		errno = e;
		return -1;
	}
	close(fd);
	return 0;
}

/* Attach @fd to a free high-speed port of vhci; returns the port. */
static int vhci_attach(int fd)
{
	char line[256], cmd[64];
	int ports[64], n = 0, i;
	FILE *f;

	if (S.port >= 0) {
		ports[n++] = S.port;
	} else {
		f = fopen(VHCI "/status", "r");
		if (!f) {
			logmsg("%s/status: %s (is vhci-hcd loaded?)", VHCI, strerror(errno));
			return -1;
		}
		while (fgets(line, sizeof(line), f) && n < 64) {
			char hub[8];
			int port, sta;

			if (sscanf(line, "%7s %d %d", hub, &port, &sta) == 3 &&
			    !strcmp(hub, "hs") && sta == 4 /* VDEV_ST_NULL */)
				ports[n++] = port;
		}
		fclose(f);
	}
	for (i = 0; i < n; i++) {
		snprintf(cmd, sizeof(cmd), "%d %d %u %d", ports[i], fd, 0x10002u, USB_SPEED_HIGH_);
		if (write_sysfs(VHCI "/attach", cmd) == 0)
			return ports[i];
		logmsg("attach '%s': %s", cmd, strerror(errno));
	}
	return -1;
}

static void serve_usage(void)
{
	fprintf(stderr, "usage: %s serve [--transfer bulk|isoc] [--fps F] [--header 2|12]\n"
		"       [--payload BYTES] [--no-status] [--port N] [--unplug-after FRAMES]\n"
		"       [--unplug close|detach] [--verbose]\n", PROG);
	exit(2);
}

/* serve's options into S; the fd of --socket-fd, or -1. */
static int parse_serve_args(int argc, char **argv)
{
	int i, sockfd = -1;

	for (i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (!strcmp(a, "--transfer") && v) {
			if (!strcmp(v, "bulk"))
				S.xfer = XFER_BULK;
			else if (!strcmp(v, "isoc"))
				S.xfer = XFER_ISOC;
			else
				serve_usage();
			i++;
		} else if (!strcmp(a, "--fps") && v) {
			S.fps = atof(v);
			i++;
		} else if (!strcmp(a, "--header") && v) {
			S.hdr_len = atoi(v);
			if (S.hdr_len != 2 && S.hdr_len != 12)
				serve_usage();
			i++;
		} else if (!strcmp(a, "--payload") && v) {
			S.bulk_payload = atoi(v);
			if (S.bulk_payload < 512 || S.bulk_payload > 65536)
				serve_usage();
			i++;
		} else if (!strcmp(a, "--no-status")) {
			S.status_ep = 0;
		} else if (!strcmp(a, "--port") && v) {
			S.port = atoi(v);
			i++;
		} else if (!strcmp(a, "--unplug-after") && v) {
			S.unplug_after = atol(v);
			i++;
		} else if (!strcmp(a, "--unplug") && v) {
			if (!strcmp(v, "detach"))
				S.unplug_detach = 1;
			else if (strcmp(v, "close"))
				serve_usage();
			i++;
		} else if (!strcmp(a, "--verbose")) {
			S.verbose = 1;
		} else if (!strcmp(a, "--socket-fd") && v) {
			/* Testing without vhci: the peer of this socket plays the host. */
			sockfd = atoi(v);
			i++;
		} else {
			serve_usage();
		}
	}

	return sockfd;
}

/* The camera's state before the host sees it: descriptors, controls, probe. */
static void serve_init(void)
{
	pthread_condattr_t ca;

	build_descriptors(S.xfer, S.status_ep);
	S.video_tail = &S.video_urbs;
	S.ctrls[0] = (struct uvc_ctrl){ ID_PU, UVC_PU_BRIGHTNESS_CONTROL, 2, 1, -64, 64, 1, 0, 0 };
	S.ctrls[1] = (struct uvc_ctrl){ ID_PU, UVC_PU_CONTRAST_CONTROL, 2, 0, 0, 100, 1, 50, 50 };
	S.ctrls[2] = (struct uvc_ctrl){ ID_PU, UVC_PU_SATURATION_CONTROL, 2, 0, 0, 100, 1, 64, 64 };
	S.ctrls[3] = (struct uvc_ctrl){ ID_PU, UVC_PU_POWER_LINE_FREQUENCY_CONTROL, 1, 0, 0, 2, 1,
					1, 1 };
	probe_limit(&S.probe, UVC_GET_DEF);
	S.commit = S.probe;

	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&S.cond, &ca);
}

/* Pull the plug: detach the port from vhci, or close the connection. */
static void unplug(const char *why, const char *port_s)
{
	logmsg("%s (%s), %lu frames sent", why, S.unplug_detach ? "detach" : "socket closed",
	       (unsigned long)S.frames_done);
	pthread_mutex_lock(&S.lk);
	S.unplug_now = 1;
	if (!S.end_reason)
		S.end_reason = why;
	pthread_mutex_unlock(&S.lk);
	if (!S.unplug_detach) {
		shutdown(S.sock, SHUT_RDWR);
	} else if (write_sysfs(VHCI "/detach", port_s) < 0) {
		logmsg("detach: %s", strerror(errno));
		shutdown(S.sock, SHUT_RDWR);
	}
}

/* Why to unplug now (a signal, --unplug-after), or NULL; SIGUSR1 arms the count. */
static const char *unplug_reason(int sig)
{
	const char *why = NULL;

	if (sig == SIGTERM || sig == SIGINT) {
		why = "unplugged on a signal";
	} else if (sig == SIGUSR1) {
		if (S.unplug_after < 0)
			S.unplug_after = 30;
		S.unplug_base = S.frames_done;
		logmsg("unplug armed: after %ld more frames", S.unplug_after);
	}
	if (S.unplug_now && !why)
		why = "unplugged in the middle of a frame";
	return why;
}

/* Until the connection is gone: signals, unplugging. 1 if the unplug was ours. */
static int serve_loop(const sigset_t *set, const char *port_s)
{
	uint64_t unplug_t = 0;
	int unplugged = 0, quit;

	for (;;) {
		struct timespec tmo = { 0, 100 * 1000 * 1000 };
		int sig = sigtimedwait(set, NULL, &tmo);
		const char *why;

		pthread_mutex_lock(&S.lk);
		why = unplug_reason(sig);
		quit = S.quit;
		pthread_mutex_unlock(&S.lk);
		if (quit && !unplugged)
			break;
		if (why && !unplugged) {
			unplugged = 1;
			unplug_t = now_ns();
			unplug(why, port_s);
		}
		if (!unplugged)
			continue;
		pthread_mutex_lock(&S.lk);
		quit = S.quit;
		pthread_mutex_unlock(&S.lk);
		if (quit)
			break;
		if (now_ns() - unplug_t > 10000000000ull) {
			logmsg("the host did not close the connection 10 s after the detach");
			shutdown(S.sock, SHUT_RDWR);
			unplug_t = now_ns();
		}
	}
	return unplugged;
}

static int cmd_serve(int argc, char **argv)
{
	pthread_t reader, streamer;
	sigset_t set;
	int sv[2], deliberate, sockfd = parse_serve_args(argc, argv);
	char port_s[16];

	serve_init();
	signal(SIGPIPE, SIG_IGN);
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGUSR1);
	pthread_sigmask(SIG_BLOCK, &set, NULL);

	if (sockfd >= 0) {
		sv[0] = sockfd;
		sv[1] = -1;
	} else if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) < 0) {
		logmsg("socketpair: %s", strerror(errno));
		return 1;
	}
	S.sock = sv[0];
	if (pthread_create(&reader, NULL, reader_thread, NULL) ||
	    pthread_create(&streamer, NULL, stream_thread, NULL)) {
		logmsg("pthread_create failed");
		return 1;
	}
	if (sv[1] >= 0) {
		S.port = vhci_attach(sv[1]);
		if (S.port < 0) {
			logmsg("could not attach to vhci");
			return 1;
		}
		/* vhci holds its own reference to the socket. */
		close(sv[1]);
	}
	snprintf(port_s, sizeof(port_s), "%d", S.port);
	logmsg("attached to vhci port %d: UVC 1.1, %s streaming, %u-byte payload headers%s%s",
	       S.port, S.xfer == XFER_BULK ? "bulk" : "isochronous", S.hdr_len,
	       S.status_ep ? ", status endpoint" : "",
	       S.unplug_after >= 0 ? ", unplug armed" : "");
	fflush(stderr);

	deliberate = serve_loop(&set, port_s);
	pthread_join(reader, NULL);
	pthread_mutex_lock(&S.lk);
	S.quit = 1;
	pthread_cond_broadcast(&S.cond);
	pthread_mutex_unlock(&S.lk);
	pthread_join(streamer, NULL);
	close(S.sock);
	logmsg("ended: %s; %lu control requests (%lu stalled), %lu URBs completed, "
	       "%lu unlinks (%lu of pending URBs), %u streams, %lu frames, %lu bytes of frame data",
	       S.end_reason, (unsigned long)S.n_ctrl, (unsigned long)S.n_stall,
	       (unsigned long)S.n_urbs, (unsigned long)S.n_unlinks,
	       (unsigned long)S.n_unlink_hit, S.streams, (unsigned long)S.frames_done,
	       (unsigned long)S.bytes_sent);
	return deliberate ? 0 : 1;
}

/* ---------------------------------------------------------------------------------
 * find: the capture node of the camera
 */

static int cmd_find(int argc, char **argv)
{
	const char *name = PRODUCT;
	double wait = 0;
	uint64_t t0 = now_ns();
	char node[600];
	int i;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--name") && i + 1 < argc) {
			name = argv[++i];
		} else if (!strcmp(argv[i], "--wait") && i + 1 < argc) {
			wait = atof(argv[++i]);
		} else {
			fprintf(stderr, "usage: %s find [--name NAME] [--wait SECONDS]\n", PROG);
			return 2;
		}
	}
	for (;;) {
		if (!vb2_find_node_caps(name, V4L2_CAP_VIDEO_CAPTURE, node, sizeof(node), NULL, 0)) {
			printf("%s\n", node);
			return 0;
		}
		if ((now_ns() - t0) / 1e9 >= wait)
			break;
		usleep(200000);
	}
	fprintf(stderr, "%s: no capture node named '%s'\n", PROG, name);
	return 1;
}

/* ---------------------------------------------------------------------------------
 * check: stream from uvcvideo and check every frame
 */

struct cbuf {
	uint8_t *addr;
	size_t len;
	int dmafd;
};

struct check_stats {
	uint64_t frames, gaps, error_bufs, bytes_checked, mismatched_bytes, bad_frames;
	uint64_t seq_content_mismatch;
	int have_first;
	uint32_t first_fno, first_seq, last_seq;
	int reported;
};

static void problem(struct check_stats *st, const char *fmt, ...)
{
	va_list ap;

	if (st->reported++ >= 20)
		return;
	printf("# ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
}

static void check_frame(struct check_stats *st, const uint8_t *p, size_t used, int mjpeg,
			unsigned int w, unsigned int h, uint32_t seq, uint8_t *scratch)
{
	size_t info = mjpeg ? MJPEG_HDR : 0, pat, patlen, exp, i;
	uint32_t fno, size, mism = 0;

	if (used < info + INFO_SIZE + 2) {
		st->bad_frames++;
		problem(st, "sequence %u: only %zu bytes", seq, used);
		return;
	}
	fno = get_le32(p + info + 4);
	size = get_le32(p + info + 8);
	exp = frame_size(mjpeg, fno, w, h);
	if (memcmp(p + info, "VB2F", 4) || size != exp || used != exp) {
		st->bad_frames++;
		st->mismatched_bytes += used;
		problem(st, "sequence %u: bad frame header (magic %.4s, frame %u, size %u, "
			"bytesused %zu, expected %zu)", seq, (const char *)p + info, fno, size,
			used, exp);
		return;
	}
	frame_layout(mjpeg, exp, &info, &pat, &patlen);
	if (mjpeg && (p[0] != 0xff || p[1] != 0xd8 || p[2] != 0xff || p[3] != 0xfe ||
		      p[exp - 2] != 0xff || p[exp - 1] != 0xd9))
		mism += 1;
	fill_pattern(scratch, patlen, fno);
	if (memcmp(scratch, p + pat, patlen)) {
		for (i = 0; i < patlen; i++)
			mism += scratch[i] != p[pat + i];
	}
	if (get_le32(p + info + 12) != checksum(p + pat, patlen))
		mism += 4;
	st->bytes_checked += used;
	if (mism) {
		st->bad_frames++;
		st->mismatched_bytes += mism;
		problem(st, "sequence %u: frame %u has %u wrong bytes", seq, fno, mism);
	}
	if (!st->have_first) {
		st->have_first = 1;
		st->first_fno = fno;
		st->first_seq = seq;
	} else if (fno - st->first_fno != seq - st->first_seq) {
		st->seq_content_mismatch++;
		problem(st, "sequence %u carries frame %u (first: sequence %u, frame %u)", seq,
			fno, st->first_seq, st->first_fno);
	}
}

static void check_usage(void)
{
	fprintf(stderr, "usage: %s check --dev /dev/videoN [--frames N] "
		"[--memory mmap|userptr|dmabuf]\n"
		"       [--format yuyv|mjpeg] [--size WxH] [--buffers N] [--fps F]\n"
		"       [--expect-unplug] [--timeout SECONDS]\n", PROG);
	exit(2);
}

/* The sysfs directory of the USB interface that @fd's video node belongs to. */
static int usb_intf_dir(int fd, char *dir, size_t size)
{
	char link[64];
	struct stat st;

	if (fstat(fd, &st) < 0)
		return -1;
	snprintf(link, sizeof(link), "/sys/dev/char/%u:%u/device", major(st.st_rdev),
		 minor(st.st_rdev));
	char path[PATH_MAX];

	if (!realpath(link, path) || strlen(path) >= size)
		return -1;
	strcpy(dir, path);
	return 0;
}

/* Wait up to @secs for @dir to go; the seconds it took, or -1. */
static double wait_gone(const char *dir, double secs)
{
	double t0 = now_ns();

	while (access(dir, F_OK) == 0) {
		if (now_ns() - t0 > secs * 1e9)
			return -1;
		usleep(20000);
	}
	return (now_ns() - t0) / 1e9;
}

/* What check was asked to do. */
struct check_opts {
	const char *dev, *memname;
	unsigned int nframes, nbufs, w, h, memory;
	double fps, timeout;
	int mjpeg, expect_unplug;
};

/* A check run: the node, its buffers, and how the stream went. */
struct check_run {
	struct check_opts o;
	int fd;
	char intf[PATH_MAX];		/* the USB interface in sysfs (--expect-unplug) */
	size_t sizeimage;
	struct cbuf *bufs;
	uint8_t *scratch;
	const char *dmahow;
	struct check_stats st;
	uint64_t t0, t1, t_first, t_last;
	int ended_err, end_errno;	/* streaming ended with an error, which */
	const char *end_how;
	int stalled;			/* a timeout or a bad index ended it */
	int r_off, r_free;		/* STREAMOFF and REQBUFS(0) at the end */
	int intf_gone;			/* the interface went after the unplug */
};

static void parse_check_args(int argc, char **argv, struct check_opts *o)
{
	unsigned int i;

	for (i = 1; i < (unsigned int)argc; i++) {
		const char *a = argv[i], *v = i + 1 < (unsigned int)argc ? argv[i + 1] : NULL;

		if (!strcmp(a, "--dev") && v) {
			o->dev = v;
		} else if (!strcmp(a, "--frames") && v) {
			o->nframes = atoi(v);
		} else if (!strcmp(a, "--memory") && v) {
			o->memname = v;
			if (!strcmp(v, "mmap"))
				o->memory = V4L2_MEMORY_MMAP;
			else if (!strcmp(v, "userptr"))
				o->memory = V4L2_MEMORY_USERPTR;
			else if (!strcmp(v, "dmabuf"))
				o->memory = V4L2_MEMORY_DMABUF;
			else
				check_usage();
		} else if (!strcmp(a, "--format") && v) {
			if (!strcmp(v, "mjpeg"))
				o->mjpeg = 1;
			else if (strcmp(v, "yuyv"))
				check_usage();
		} else if (!strcmp(a, "--size") && v) {
			if (sscanf(v, "%ux%u", &o->w, &o->h) != 2)
				check_usage();
		} else if (!strcmp(a, "--buffers") && v) {
			o->nbufs = atoi(v);
		} else if (!strcmp(a, "--fps") && v) {
			o->fps = atof(v);
		} else if (!strcmp(a, "--timeout") && v) {
			o->timeout = atof(v);
		} else if (!strcmp(a, "--expect-unplug")) {
			o->expect_unplug = 1;
			i--;
		} else {
			check_usage();
		}
		i++;
	}
	if (!o->dev || o->nbufs < 1 || o->nbufs > 32)
		check_usage();
}

/* Open the node and set the format (and the rate); a message and -1 on failure. */
static int check_open(struct check_run *c)
{
	const struct check_opts *o = &c->o;
	__u32 pixfmt = o->mjpeg ? V4L2_PIX_FMT_MJPEG : V4L2_PIX_FMT_YUYV;
	struct v4l2_format fmt = { .type = V4L2_BUF_TYPE_VIDEO_CAPTURE };
	struct v4l2_capability cap = { 0 };
	int r;

	c->fd = open(o->dev, O_RDWR | O_NONBLOCK);
	if (c->fd < 0)
		return ksft_print_msg("%s: %s\n", o->dev, strerror(errno)), -1;
	if (o->expect_unplug && usb_intf_dir(c->fd, c->intf, sizeof(c->intf)) < 0)
		ksft_print_msg("no USB interface in sysfs for %s\n", o->dev);
	if (vb2_ioctl(c->fd, VIDIOC_QUERYCAP, &cap) < 0 ||
	    !(cap.device_caps & V4L2_CAP_VIDEO_CAPTURE) ||
	    !(cap.device_caps & V4L2_CAP_STREAMING))
		return ksft_print_msg("%s is not a streaming capture node\n", o->dev), -1;
	fmt.fmt.pix.width = o->w;
	fmt.fmt.pix.height = o->h;
	fmt.fmt.pix.pixelformat = pixfmt;
	fmt.fmt.pix.field = V4L2_FIELD_NONE;
	r = vb2_ioctl(c->fd, VIDIOC_S_FMT, &fmt);
	if (r < 0)
		return ksft_print_msg("VIDIOC_S_FMT: %s\n", strerror(-r)), -1;
	if (fmt.fmt.pix.width != o->w || fmt.fmt.pix.height != o->h ||
	    fmt.fmt.pix.pixelformat != pixfmt)
		return ksft_print_msg("the driver chose %ux%u %.4s\n", fmt.fmt.pix.width,
				      fmt.fmt.pix.height, (char *)&fmt.fmt.pix.pixelformat), -1;
	c->sizeimage = fmt.fmt.pix.sizeimage;
	if (o->fps > 0) {
		struct v4l2_streamparm parm = { .type = V4L2_BUF_TYPE_VIDEO_CAPTURE };

		parm.parm.capture.timeperframe.numerator = 1000;
		parm.parm.capture.timeperframe.denominator = o->fps * 1000;
		r = vb2_ioctl(c->fd, VIDIOC_S_PARM, &parm);
		if (r < 0)
			ksft_print_msg("VIDIOC_S_PARM: %s\n", strerror(-r));
	}
	return 0;
}

/* The memory of buffer @i: mapped (MMAP), allocated (USERPTR) or a dma-buf (DMABUF). */
static int check_buffer_memory(struct check_run *c, unsigned int i)
{
	struct v4l2_buffer b = { .index = i, .type = V4L2_BUF_TYPE_VIDEO_CAPTURE,
				 .memory = c->o.memory };
	size_t len = (c->sizeimage + 4095) & ~(size_t)4095;
	struct cbuf *cb = &c->bufs[i];
	void *p;
	int r;

	cb->dmafd = -1;
	if (c->o.memory == V4L2_MEMORY_USERPTR) {
		if (posix_memalign(&p, 4096, len))
			return -1;
		memset(p, 0xee, len);
		cb->addr = p;
		cb->len = len;
		return 0;
	}
	if (c->o.memory == V4L2_MEMORY_MMAP) {
		r = vb2_ioctl(c->fd, VIDIOC_QUERYBUF, &b);
		if (r < 0)
			return ksft_print_msg("VIDIOC_QUERYBUF: %s\n", strerror(-r)), -1;
		cb->len = b.length;
		cb->addr = mmap(NULL, b.length, PROT_READ | PROT_WRITE, MAP_SHARED, c->fd,
				b.m.offset);
	} else {
		cb->dmafd = vb2_dmabuf_alloc(len, &c->dmahow);
		if (cb->dmafd < 0)
			return ksft_print_msg("no dma-buf: %s\n", strerror(-cb->dmafd)), -1;
		cb->len = len;
		cb->addr = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, cb->dmafd, 0);
	}
	if (cb->addr == MAP_FAILED)
		return ksft_print_msg("mmap: %s\n", strerror(errno)), -1;
	return 0;
}

/* Queue buffer @i with its memory. */
static int check_qbuf(struct check_run *c, struct v4l2_buffer *b)
{
	if (c->o.memory == V4L2_MEMORY_USERPTR) {
		b->m.userptr = (unsigned long)c->bufs[b->index].addr;
		b->length = c->bufs[b->index].len;
	} else if (c->o.memory == V4L2_MEMORY_DMABUF) {
		b->m.fd = c->bufs[b->index].dmafd;
		b->length = c->bufs[b->index].len;
	}
	return vb2_ioctl(c->fd, VIDIOC_QBUF, b);
}

/* REQBUFS, the buffers' memory, every buffer queued, STREAMON. */
static int check_start(struct check_run *c)
{
	struct v4l2_requestbuffers req = { .count = c->o.nbufs,
					   .type = V4L2_BUF_TYPE_VIDEO_CAPTURE,
					   .memory = c->o.memory };
	enum v4l2_buf_type type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
	unsigned int i;
	int r = vb2_ioctl(c->fd, VIDIOC_REQBUFS, &req);

	if (r < 0)
		return ksft_print_msg("VIDIOC_REQBUFS(%s): %s\n", c->o.memname, strerror(-r)), -1;
	c->o.nbufs = req.count;
	c->bufs = calloc(c->o.nbufs, sizeof(*c->bufs));
	c->scratch = malloc(c->sizeimage + 4096);
	if (!c->bufs || !c->scratch)
		return -1;
	for (i = 0; i < c->o.nbufs; i++)
		if (check_buffer_memory(c, i))
			return -1;
	for (i = 0; i < c->o.nbufs; i++) {
		struct v4l2_buffer b = { .index = i, .type = type, .memory = c->o.memory };

		r = check_qbuf(c, &b);
		if (r < 0)
			return ksft_print_msg("VIDIOC_QBUF: %s\n", strerror(-r)), -1;
	}
	r = vb2_ioctl(c->fd, VIDIOC_STREAMON, &type);
	if (r < 0)
		return ksft_print_msg("VIDIOC_STREAMON: %s\n", strerror(-r)), -1;
	return 0;
}

/* Check a dequeued buffer's frame (between the dma-buf's CPU access calls). */
static void check_dequeued(struct check_run *c, const struct v4l2_buffer *b)
{
	struct dma_buf_sync sync = { DMA_BUF_SYNC_START | DMA_BUF_SYNC_READ };
	int dmafd = c->bufs[b->index].dmafd;

	if (c->st.frames && b->sequence > c->st.last_seq + 1)
		c->st.gaps += b->sequence - c->st.last_seq - 1;
	c->st.last_seq = b->sequence;
	if (!c->st.frames)
		c->t_first = now_ns();
	c->t_last = now_ns();
	c->st.frames++;
	if (b->flags & V4L2_BUF_FLAG_ERROR) {
		c->st.error_bufs++;
		problem(&c->st, "sequence %u: buffer flagged ERROR (bytesused %u)", b->sequence,
			b->bytesused);
		return;
	}
	if (dmafd >= 0)
		vb2_ioctl(dmafd, DMA_BUF_IOCTL_SYNC, &sync);
	check_frame(&c->st, c->bufs[b->index].addr, b->bytesused, c->o.mjpeg, c->o.w, c->o.h,
		    b->sequence, c->scratch);
	sync.flags = DMA_BUF_SYNC_END | DMA_BUF_SYNC_READ;
	if (dmafd >= 0)
		vb2_ioctl(dmafd, DMA_BUF_IOCTL_SYNC, &sync);
}

/* Streaming ended with an error: how, and with which errno. */
static int check_ended(struct check_run *c, const char *how, int err)
{
	c->end_how = how;
	c->end_errno = err;
	c->ended_err = 1;
	return 1;
}

/* One frame: wait, DQBUF, check, QBUF again. 0 to go on, 1 when streaming ended. */
static int check_one(struct check_run *c)
{
	struct v4l2_buffer b = { .type = V4L2_BUF_TYPE_VIDEO_CAPTURE, .memory = c->o.memory };
	int rev, r = vb2_poll(c->fd, POLLIN, c->o.timeout * 1000);

	if (r == 0) {
		ksft_print_msg("no frame for %.0f s after %lu frames\n", c->o.timeout,
			       (unsigned long)c->st.frames);
		c->end_how = "timeout";
		c->stalled = 1;
		return 1;
	}
	if (r < 0)
		return check_ended(c, "poll", -r);
	rev = r;
	r = vb2_ioctl(c->fd, VIDIOC_DQBUF, &b);
	if (r == -EAGAIN) {
		if (rev & (POLLERR | POLLHUP))
			return check_ended(c, "poll POLLERR, DQBUF EAGAIN", EAGAIN);
		return 0;
	}
	if (r < 0)
		return check_ended(c, "DQBUF", -r);
	if (b.index >= c->o.nbufs) {
		ksft_print_msg("DQBUF returned index %u\n", b.index);
		c->stalled = 1;
		return 1;
	}
	check_dequeued(c, &b);
	r = check_qbuf(c, &b);
	return r < 0 ? check_ended(c, "QBUF", -r) : 0;
}

/* After an unplug: wait for uvcvideo to let go of the USB interface. */
static void check_wait_intf(struct check_run *c)
{
	double gone;

	if (!*c->intf) {
		ksft_print_msg("USB interface unknown, not waited for\n");
		return;
	}
	gone = wait_gone(c->intf, 30);
	if (gone < 0) {
		ksft_print_msg("%s still there 30 s after streaming ended\n", c->intf);
		return;
	}
	ksft_print_msg("USB interface gone %.2f s after streaming ended\n", gone);
	c->intf_gone = 1;
}

/* STREAMOFF, unmap, REQBUFS(0), free, close. */
static void check_release(struct check_run *c)
{
	struct v4l2_requestbuffers req = { .type = V4L2_BUF_TYPE_VIDEO_CAPTURE,
					   .memory = c->o.memory };
	enum v4l2_buf_type type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
	unsigned int i;

	c->r_off = vb2_ioctl(c->fd, VIDIOC_STREAMOFF, &type);
	for (i = 0; i < c->o.nbufs; i++)
		if (c->o.memory != V4L2_MEMORY_USERPTR)
			munmap(c->bufs[i].addr, c->bufs[i].len);
	c->r_free = vb2_ioctl(c->fd, VIDIOC_REQBUFS, &req);
	for (i = 0; i < c->o.nbufs; i++) {
		if (c->o.memory == V4L2_MEMORY_USERPTR)
			free(c->bufs[i].addr);
		if (c->bufs[i].dmafd >= 0)
			close(c->bufs[i].dmafd);
	}
	close(c->fd);
}

/* The figures, then the cases: stream, frames, and unplug with --expect-unplug. */
static void check_report(struct check_run *c)
{
	const struct check_stats *st = &c->st;
	int stream_ok;

	ksft_print_msg("frames=%lu fps=%.2f gaps=%lu error_bufs=%lu bytes_checked=%lu "
		       "mismatched_bytes=%lu bad_frames=%lu seq_content_mismatch=%lu "
		       "elapsed=%.2f memory=%s%s%s format=%s size=%ux%u buffers=%u\n",
		       (unsigned long)st->frames,
		       st->frames > 1 && c->t_last > c->t_first ?
		       (st->frames - 1) / ((c->t_last - c->t_first) / 1e9) : 0.0,
		       (unsigned long)st->gaps, (unsigned long)st->error_bufs,
		       (unsigned long)st->bytes_checked, (unsigned long)st->mismatched_bytes,
		       (unsigned long)st->bad_frames, (unsigned long)st->seq_content_mismatch,
		       (c->t1 - c->t0) / 1e9, c->o.memname, *c->dmahow ? ":" : "", c->dmahow,
		       c->o.mjpeg ? "MJPEG" : "YUYV", c->o.w, c->o.h, c->o.nbufs);
	if (c->ended_err || c->o.expect_unplug)
		ksft_print_msg("streaming ended: %s %s (%s); STREAMOFF %s; REQBUFS(0) %s\n",
			       c->end_how, c->end_errno ? strerror(c->end_errno) : "-",
			       c->ended_err ? "error" : "no error",
			       c->r_off < 0 ? strerror(-c->r_off) : "ok",
			       c->r_free < 0 ? strerror(-c->r_free) : "ok");
	if (c->o.expect_unplug)
		stream_ok = c->ended_err && st->frames;
	else
		stream_ok = !c->ended_err && !c->stalled && st->frames >= c->o.nframes;
	ksft_test_result(stream_ok, "stream\n");
	ksft_test_result(!st->bad_frames && !st->error_bufs && !st->seq_content_mismatch,
			 "frames\n");
	if (c->o.expect_unplug)
		ksft_test_result(c->intf_gone, "unplug\n");
}

static int cmd_check(int argc, char **argv)
{
	struct check_run c = {
		.o = { .memname = "mmap", .nframes = 300, .nbufs = 4, .w = 320, .h = 240,
		       .memory = V4L2_MEMORY_MMAP, .timeout = 10 },
		.dmahow = "", .end_how = "",
	};

	parse_check_args(argc, argv, &c.o);
	ksft_print_header();
	ksft_set_plan(c.o.expect_unplug ? 4 : 3);
	if (check_open(&c) || check_start(&c))
		ksft_exit_fail_msg("setup of %s failed\n", c.o.dev);
	ksft_test_result_pass("setup\n");
	c.t0 = now_ns();
	while (c.o.expect_unplug || c.st.frames < c.o.nframes)
		if (check_one(&c))
			break;
	c.t1 = now_ns();
	if (c.o.expect_unplug && c.ended_err)
		check_wait_intf(&c);
	check_release(&c);
	check_report(&c);
	ksft_finished();
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc >= 2 && !strcmp(argv[1], "serve"))
		return cmd_serve(argc - 1, argv + 1);
	if (argc >= 2 && !strcmp(argv[1], "find"))
		return cmd_find(argc - 1, argv + 1);
	if (argc >= 2 && !strcmp(argv[1], "check"))
		return cmd_check(argc - 1, argv + 1);
	fprintf(stderr, "usage: %s serve|find|check [OPTIONS]\n", PROG);
	return 2;
}
