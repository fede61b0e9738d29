// SPDX-License-Identifier: GPL-2.0
/*
 * vb2-uvcdev: a UVC 1.1 camera emulated in user space over USB/IP, and a receiver that
 * checks every byte uvcvideo (a videobuf2 user) delivers from it (tools/plans/uvc.plan).
 * The options: USAGE below.
 *
 * serve: attaches one end of a socket pair to a high-speed port of vhci_hcd (with
 * --socket-fd, FD's peer plays the host instead) and answers USB/IP requests on the other
 * as a camera: VideoControl (camera, processing unit with four controls, output terminal,
 * status endpoint), VideoStreaming with YUYV and MJPEG at 320x240 and 640x480, 30 or 15
 * fps, on a bulk endpoint (COMMIT starts, CLEAR_FEATURE(HALT) stops) or on isochronous
 * alternate settings 1-4. Frames come at the committed interval (--fps overrides it, 0:
 * as fast as the host takes them) with 2 or 12 byte payload headers (PTS, SCR). A frame
 * starts with a 16-byte block "VB2F", frame number, size, checksum (le32), then a pattern
 * of the frame number and offset: YUYV frames are w*h*2 bytes; MJPEG ones are SOI, COM
 * (the block), pattern, EOI, of a size that varies. SIGTERM or SIGINT unplugs at once,
 * SIGUSR1 in the middle of the 31st frame from then: --unplug close (default) shuts the
 * socket down, detach writes vhci's detach attribute.
 *
 * find: prints the capture node named NAME ("vb2-uvcdev camera"), waiting up to SECONDS.
 *
 * check: streams N frames, checks every byte, the sizes, the checksums and that frame
 * numbers advance like sequence numbers; KTAP cases setup, stream, frames. With
 * --expect-unplug it streams until the device goes (case unplug): streaming must end
 * with an error; it then waits for the USB interface to go before STREAMOFF and close,
 * as in 6.12 a last close racing uvc_disconnect() can oops in
 * media_device_unregister_entity(), outside videobuf2.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>
#include <linux/dma-buf.h>
#include <linux/usb/ch9.h>
#include <linux/usb/functionfs.h>
#include <linux/usb/video.h>
#include <linux/videodev2.h>

#include <kselftest.h>

#include "vb2-guest.h"

#define PROG "vb2-uvcdev"
#define VHCI "/sys/devices/platform/vhci_hcd.0"
#define PRODUCT "vb2-uvcdev camera"
#define USAGE \
	"usage: " PROG " serve [--transfer bulk|isoc] [--fps F] [--header 2|12]\n" \
	"                  [--unplug close|detach] [--socket-fd FD]\n" \
	"       " PROG " find [--name NAME] [--wait SECONDS]\n" \
	"       " PROG " check --dev /dev/videoN [--frames N] [--memory mmap|userptr|dmabuf]\n" \
	"                  [--format yuyv|mjpeg] [--size WxH] [--buffers N] [--fps F]\n" \
	"                  [--expect-unplug] [--timeout SECONDS]\n"

#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "little-endian only: the USB structures are used as they are on the wire"
#endif

/* USB/IP (drivers/usb/usbip/usbip_common.h): 48-byte headers of big-endian words. */
enum { USBIP_CMD_SUBMIT = 1, USBIP_CMD_UNLINK, USBIP_RET_SUBMIT, USBIP_RET_UNLINK };
#define USBIP_DIR_IN 1
#define USB_SPEED_HIGH_ 3	/* enum usb_device_speed */

#define now_ns() ((uint64_t)vb2_now_ns())

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

/* The pattern of frame @frame: byte j is byte j%4 of mix32(seed + j/4), little-endian. */
static void fill_pattern(uint8_t *p, size_t n, uint32_t frame)
{
	uint32_t seed = frame * 0x9e3779b9U + 0x5bd1e995U, v;
	size_t k;

	for (k = 0; k + 4 <= n; k += 4) {
		v = mix32(seed + (uint32_t)(k / 4));
		memcpy(p + k, &v, 4);
	}
	v = mix32(seed + (uint32_t)(k / 4));
	memcpy(p + k, &v, n - k);
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

static size_t frame_size(int mjpeg, uint32_t frame, unsigned int w, unsigned int h)
{
	size_t max = (size_t)w * h < 65536 ? (size_t)w * h : 65536;

	if (!mjpeg)
		return (size_t)w * h * 2;
	return MJPEG_MIN + mix32(frame ^ 0xa5a5f00dU) % (max - MJPEG_MIN);
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
	uint32_t info_words[3] = { frame, size };
	size_t info, pat, patlen;

	frame_layout(mjpeg, size, &info, &pat, &patlen);
	if (mjpeg) {
		memcpy(buf, "\xff\xd8\xff\xfe\x00\x12", MJPEG_HDR);	/* SOI, COM of 18 */
		memcpy(buf + size - 2, "\xff\xd9", 2);			/* EOI */
	}
	fill_pattern(buf + pat, patlen, frame);
	info_words[2] = checksum(buf + pat, patlen);
	memcpy(buf + info, "VB2F", 4);
	memcpy(buf + info + 4, info_words, sizeof(info_words));
}

/* ---- The camera: descriptors ---- */

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

/* wMaxPacketSize of the isochronous alternate settings: 512 to 3x1024 bytes. */
static const uint16_t iso_maxp[N_ALTS + 1] = { 0, 512, 1024, 0x0800 | 1024, 0x1000 | 1024 };

static unsigned int maxp_bytes(uint16_t wmaxp)
{
	return (wmaxp & 0x7ff) * (((wmaxp >> 11) & 3) + 1);
}

static const struct { uint16_t w, h; } frames[2] = { { 320, 240 }, { 640, 480 } };
static const uint32_t intervals[2] = { 333333, 666666 };	/* 100 ns units */

static size_t max_frame_bytes(int mjpeg, unsigned int fi)
{
	return (size_t)frames[fi - 1].w * frames[fi - 1].h * (mjpeg ? 1 : 2);
}

static const struct usb_device_descriptor dev_desc = {
	USB_DT_DEVICE_SIZE, USB_DT_DEVICE, 0x0200, USB_CLASS_MISC, 2, 1, 64,
	0x1d6b, 0x0102, 0x0612, 1, 2, 3, 1	/* Linux Foundation, the UVC gadget's id */
};

static const struct usb_qualifier_descriptor qual_desc = {
	sizeof(qual_desc), USB_DT_DEVICE_QUALIFIER, 0x0200, USB_CLASS_MISC, 2, 1, 64, 1, 0
};

DECLARE_UVC_HEADER_DESCRIPTOR(1);
DECLARE_UVC_INPUT_HEADER_DESCRIPTOR(1, 2);
DECLARE_UVC_FRAME_UNCOMPRESSED(2);	/* the MJPEG frame descriptors are alike */

struct vs_alt {
	struct usb_interface_descriptor intf;
	struct usb_endpoint_descriptor_no_audio ep;
};

/* The configuration descriptor and all that follows it. */
static struct uvc_cfg {
	struct usb_config_descriptor cfg;
	struct usb_interface_assoc_descriptor iad;
	struct usb_interface_descriptor vc;
	struct UVC_HEADER_DESCRIPTOR(1) vch;
	struct uvc_camera_terminal_descriptor ct;
	struct uvc_processing_unit_descriptor pu;
	struct uvc_output_terminal_descriptor ot;
	struct usb_endpoint_descriptor_no_audio status;
	struct uvc_control_endpoint_descriptor status_cs;
	struct usb_interface_descriptor vs;
	struct UVC_INPUT_HEADER_DESCRIPTOR(1, 2) vsh;
	struct uvc_format_uncompressed yuyv;
	struct UVC_FRAME_UNCOMPRESSED(2) yuyv_frames[2];
	struct uvc_color_matching_descriptor yuyv_color;
	struct uvc_format_mjpeg mjpeg;
	struct UVC_FRAME_UNCOMPRESSED(2) mjpeg_frames[2];
	struct uvc_color_matching_descriptor mjpeg_color;
	union {
		struct usb_endpoint_descriptor_no_audio bulk;
		struct vs_alt alts[N_ALTS];
	};
} cfg = {
	.iad = { sizeof(cfg.iad), USB_DT_INTERFACE_ASSOCIATION, VC_INTF, 2, USB_CLASS_VIDEO,
		 UVC_SC_VIDEO_INTERFACE_COLLECTION },
	.vc = { USB_DT_INTERFACE_SIZE, USB_DT_INTERFACE, VC_INTF, 0, 1, USB_CLASS_VIDEO,
		UVC_SC_VIDEOCONTROL },
	.vch = { sizeof(cfg.vch), USB_DT_CS_INTERFACE, UVC_VC_HEADER, 0x0110,
		 offsetof(struct uvc_cfg, status) - offsetof(struct uvc_cfg, vch), CLOCK_HZ, 1,
		 { VS_INTF } },
	.ct = { sizeof(cfg.ct), USB_DT_CS_INTERFACE, UVC_VC_INPUT_TERMINAL, ID_CAMERA,
		UVC_ITT_CAMERA, 0, 0, 0, 0, 0, 3, { 0 } },	/* no controls */
	/* Brightness, contrast, saturation; power line frequency. */
	.pu = { sizeof(cfg.pu), USB_DT_CS_INTERFACE, UVC_VC_PROCESSING_UNIT, ID_PU, ID_CAMERA,
		0, 2, { 0x0b, 0x04 } },
	.ot = { sizeof(cfg.ot), USB_DT_CS_INTERFACE, UVC_VC_OUTPUT_TERMINAL, ID_OT,
		UVC_TT_STREAMING, 0, ID_PU },
	.status = { USB_DT_ENDPOINT_SIZE, USB_DT_ENDPOINT, EP_STATUS, USB_ENDPOINT_XFER_INT, 16,
		    8 },
	.status_cs = { sizeof(cfg.status_cs), USB_DT_CS_ENDPOINT, USB_ENDPOINT_XFER_INT, 16 },
	.vsh = { sizeof(cfg.vsh), USB_DT_CS_INTERFACE, UVC_VS_INPUT_HEADER, 2,
		 offsetof(struct uvc_cfg, bulk) - offsetof(struct uvc_cfg, vsh), EP_VIDEO, 0,
		 ID_OT, 0, 0, 0, 1, { { 0 } } },
	.yuyv = { sizeof(cfg.yuyv), USB_DT_CS_INTERFACE, UVC_VS_FORMAT_UNCOMPRESSED, 1, 2,
		  { 'Y', 'U', 'Y', '2', 0x00, 0x00, 0x10, 0x00, 0x80, 0x00, 0x00, 0xaa, 0x00,
		    0x38, 0x9b, 0x71 }, 16, 1 },
	/* BT.709 primaries and transfer, SMPTE 170M matrix. */
	.yuyv_color = { sizeof(cfg.yuyv_color), USB_DT_CS_INTERFACE, UVC_VS_COLORFORMAT, 1, 1,
			4 },
	.mjpeg = { sizeof(cfg.mjpeg), USB_DT_CS_INTERFACE, UVC_VS_FORMAT_MJPEG, 2, 2, 1, 1 },
	.mjpeg_color = { sizeof(cfg.mjpeg_color), USB_DT_CS_INTERFACE, UVC_VS_COLORFORMAT, 1, 1,
			 4 },
};

static size_t cfg_len;

static struct UVC_FRAME_UNCOMPRESSED(2) frame_desc(int mjpeg, unsigned int i)
{
	uint32_t n = max_frame_bytes(mjpeg, i + 1);
	struct UVC_FRAME_UNCOMPRESSED(2) f = {
		sizeof(f), USB_DT_CS_INTERFACE,
		mjpeg ? UVC_VS_FRAME_MJPEG : UVC_VS_FRAME_UNCOMPRESSED, i + 1, 0, frames[i].w,
		frames[i].h, n * 8 * 15, n * 8 * 30, n, intervals[0], 2,
		{ intervals[0], intervals[1] }
	};

	return f;
}

/* The frame descriptors and the streaming endpoint: bulk, or isochronous in alt 1-4. */
static void build_descriptors(int xfer)
{
	unsigned int i;

	for (i = 0; i < 2; i++) {
		cfg.yuyv_frames[i] = frame_desc(0, i);
		cfg.mjpeg_frames[i] = frame_desc(1, i);
	}
	cfg.vs = (struct usb_interface_descriptor){ USB_DT_INTERFACE_SIZE, USB_DT_INTERFACE,
		VS_INTF, 0, xfer == XFER_BULK, USB_CLASS_VIDEO, UVC_SC_VIDEOSTREAMING, 0, 0 };
	cfg.bulk = (struct usb_endpoint_descriptor_no_audio){
		USB_DT_ENDPOINT_SIZE, USB_DT_ENDPOINT, EP_VIDEO, USB_ENDPOINT_XFER_BULK, 512, 0 };
	for (i = 0; xfer == XFER_ISOC && i < N_ALTS; i++)
		cfg.alts[i] = (struct vs_alt){
			{ USB_DT_INTERFACE_SIZE, USB_DT_INTERFACE, VS_INTF, i + 1, 1,
			  USB_CLASS_VIDEO, UVC_SC_VIDEOSTREAMING, 0, 0 },
			{ USB_DT_ENDPOINT_SIZE, USB_DT_ENDPOINT, EP_VIDEO,
			  USB_ENDPOINT_XFER_ISOC | USB_ENDPOINT_SYNC_ASYNC, iso_maxp[i + 1], 1 } };
	cfg_len = offsetof(struct uvc_cfg, bulk) +
		  (xfer == XFER_BULK ? sizeof(cfg.bulk) : sizeof(cfg.alts));
	cfg.cfg = (struct usb_config_descriptor){ USB_DT_CONFIG_SIZE, USB_DT_CONFIG, cfg_len,
		2, 1, 0, 0x80, 250 };	/* 500 mA */
}

static size_t string_desc(unsigned int index, uint8_t *out)
{
	static const char *const strings[] = { NULL, "vb2 test harness", PRODUCT, "0001" };
	size_t i, n;

	if (index == 0) {
		memcpy(out, "\x04\x03\x09\x04", 4);	/* LANGID 0x0409 */
		return 4;
	}
	if (index >= ARRAY_SIZE(strings))
		return 0;
	n = strlen(strings[index]);
	out[0] = 2 + 2 * n;
	out[1] = USB_DT_STRING;
	for (i = 0; i < n; i++) {
		out[2 + 2 * i] = strings[index][i];
		out[3 + 2 * i] = 0;
	}
	return out[0];
}

/* ---- The camera: state ---- */

struct urb {
	struct urb *next;
	uint32_t seqnum;
	int32_t len, np;
	uint8_t *iso;		/* isochronous: the host's np packet descriptors */
};

/* The video probe and commit controls, as on the wire. */
#pragma pack(push, 1)
struct probe {
	uint16_t hint;
	uint8_t format, frame;
	uint32_t interval;
	uint16_t key_rate, p_rate, quality, window, delay;
	uint32_t max_frame, max_payload, clock;
	uint8_t framing, version[3];
};

#pragma pack(pop)
static_assert(sizeof(struct probe) == 34, "the UVC 1.1 probe control");

/* A control of the processing unit: its values for get_reqs[], in that order. */
static const uint8_t get_reqs[] = { UVC_GET_CUR, UVC_GET_MIN, UVC_GET_MAX, UVC_GET_RES,
				    UVC_GET_DEF };
static struct uvc_ctrl {
	uint8_t cs, size, is_signed;
	int32_t v[ARRAY_SIZE(get_reqs)];
} ctrls[] = {
	{ UVC_PU_BRIGHTNESS_CONTROL, 2, 1, { 0, -64, 64, 1, 0 } },
	{ UVC_PU_CONTRAST_CONTROL, 2, 0, { 50, 0, 100, 1, 50 } },
	{ UVC_PU_SATURATION_CONTROL, 2, 0, { 64, 0, 100, 1, 64 } },
	{ UVC_PU_POWER_LINE_FREQUENCY_CONTROL, 1, 0, { 1, 0, 2, 1, 1 } },
};

static struct {
	int xfer, unplug_detach, port, sock;	/* options, the vhci port, the socket */
	unsigned int hdr_len;
	double fps;			/* < 0: the committed interval */
	pthread_mutex_t lk;
	pthread_cond_t cond;
	int quit;			/* the connection is gone or going */
	int unplug_now;			/* the streaming thread asks main to unplug */
	const char *end_reason;
	/* USB state */
	int config, vs_alt;
	struct urb *video_urbs, *status_urbs;
	/*
	 * vhci_hcd can send the unlink of a URB before the URB itself. Such an unlink (of a
	 * seqnum above any submitted yet) is kept here, and the URB is dropped when it comes:
	 * answering it would give vhci a URB it has already given back, and it closes the
	 * connection for that.
	 */
	uint32_t max_seq, early[32];
	unsigned int n_early;
	uint8_t error_code;
	struct probe probe, commit;
	/* streaming: the frame, and the current payload (bulk) */
	int streaming, mjpeg, frame_active, zlp_pending;
	unsigned int w, h, psize;	/* psize: isochronous bytes per packet */
	uint64_t interval_ns, t_start, frames_started;
	uint8_t *frame, fid;
	size_t frame_len, frame_off, pay_len, pay_off;
	uint32_t frame_no, pts;
	uint8_t payload[16384];
	int64_t unplug_at;		/* SIGUSR1: frames_done to unplug after, or -1 */
	/* statistics */
	unsigned long n_ctrl, n_stall, n_urbs, n_unlinks, n_unlink_hit, frames_done, bytes_sent;
	unsigned int streams;
} S = {
	.lk = PTHREAD_MUTEX_INITIALIZER,
	.xfer = XFER_ISOC,
	.fps = -1,
	.hdr_len = 12,
	.unplug_at = -1,
	.port = -1,
	.sock = -1,
};

static void logmsg(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "[%.3f] %s: ", now_ns() / 1e9, PROG);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static void *xrealloc(void *p, size_t n)
{
	p = realloc(p, n);
	if (!p) {
		logmsg("out of memory");
		exit(1);
	}
	return p;
}

static int write_full(int fd, struct iovec *v, int n)
{
	while (n) {
		ssize_t r = writev(fd, v, n);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -1;
		for (; n && (size_t)r >= v->iov_len; v++, n--)
			r -= v->iov_len;
		if (n) {
			v->iov_base = (uint8_t *)v->iov_base + r;
			v->iov_len -= r;
		}
	}
	return 0;
}

/* 1: @n bytes read, 0: the connection closed, -1: an error. */
static int read_full(uint8_t *p, size_t n)
{
	while (n) {
		ssize_t r = read(S.sock, p, n);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return r < 0 ? -1 : 0;
		p += r;
		n -= r;
	}
	return 1;
}

/* The connection is gone or going, for @why. Called with S.lk held. */
static void conn_end(const char *why)
{
	S.quit = 1;
	if (!S.end_reason)
		S.end_reason = why;
	pthread_cond_broadcast(&S.cond);
}

/* Called with S.lk held. Socket write errors end the connection. */
static void send_reply(struct iovec *iov, int n)
{
	if (S.quit)
		return;
	if (write_full(S.sock, iov, n) < 0) {
		logmsg("socket write failed: %s", strerror(errno));
		conn_end("write error");
	}
}

/* A RET_SUBMIT: @len bytes of @data, then @np isochronous packet descriptors. */
static void ret_submit(uint32_t seqnum, int32_t status, uint32_t actual, const void *data,
		       size_t len, int32_t np, const uint8_t *iso)
{
	uint8_t hdr[48] = { 0 };
	struct iovec iov[3] = { { hdr, sizeof(hdr) }, { (void *)data, len },
				{ (void *)iso, np * 16 } };

	put_be32(hdr, 0, USBIP_RET_SUBMIT);
	put_be32(hdr, 1, seqnum);
	put_be32(hdr, 5, status);
	put_be32(hdr, 6, actual);
	put_be32(hdr, 8, np);
	send_reply(iov, 3);
	S.n_urbs++;
}

/* ---- The camera: control requests ---- */

static void stall(uint32_t seq, uint8_t error_code)
{
	S.error_code = error_code;
	S.n_stall++;
	ret_submit(seq, -EPIPE, 0, NULL, 0, 0, NULL);
}

static void ctrl_in(uint32_t seq, const void *data, size_t len, uint16_t wlength)
{
	if (len > wlength)
		len = wlength;
	S.error_code = 0;
	ret_submit(seq, 0, len, data, len, 0, NULL);
}

static void ctrl_out(uint32_t seq, uint16_t wlength)
{
	S.error_code = 0;
	ret_submit(seq, 0, wlength, NULL, 0, 0, NULL);
}

/* GET_LEN (@len) and GET_INFO (GET and SET): 0 if @req is another request. */
static int get_len_info(uint32_t seq, uint8_t req, uint16_t len, uint16_t wlength)
{
	uint8_t info = 0x03;

	if (req == UVC_GET_LEN)
		ctrl_in(seq, &len, 2, wlength);
	else if (req == UVC_GET_INFO)
		ctrl_in(seq, &info, 1, wlength);
	return req == UVC_GET_LEN || req == UVC_GET_INFO;
}

static uint32_t payload_for(const struct probe *p)
{
	uint64_t need;
	unsigned int alt;

	if (S.xfer == XFER_BULK)
		return sizeof(S.payload);
	/* Bytes per microframe at the frame rate, plus a header per packet. */
	need = (uint64_t)p->max_frame * 10000000ull / p->interval / 8000 + S.hdr_len + 1;
	for (alt = 1; alt < N_ALTS && maxp_bytes(iso_maxp[alt]) < need; alt++)
		;
	return maxp_bytes(iso_maxp[alt]);
}

/* The nearest streaming parameters the camera can do, and the camera's own fields. */
static void probe_fix(struct probe *p)
{
	int64_t iv = p->interval;

	if (p->format < 1 || p->format > 2)
		p->format = 1;
	if (p->frame < 1 || p->frame > 2)
		p->frame = 1;
	p->interval = intervals[llabs(iv - intervals[0]) > llabs(iv - intervals[1])];
	if (p->quality > 10000)
		p->quality = 10000;
	p->delay = 0;
	p->max_frame = max_frame_bytes(p->format == 2, p->frame);
	p->max_payload = payload_for(p);
	p->clock = CLOCK_HZ;
	p->framing = 3;	/* FID and EOF */
	memset(p->version, 1, 3);	/* preferred, min, max */
}

static void probe_limit(struct probe *p, int which)
{
	memset(p, 0, sizeof(*p));
	p->format = which == UVC_GET_MAX ? 2 : 1;
	p->frame = which == UVC_GET_MAX ? 2 : 1;
	p->interval = intervals[which == UVC_GET_MAX];
	p->quality = which == UVC_GET_MAX ? 10000 : which == UVC_GET_MIN ? 0 : 5000;
	probe_fix(p);
}

static void stream_start(void)
{
	const struct probe *c = &S.commit;

	S.mjpeg = c->format == 2;
	S.w = frames[c->frame - 1].w;
	S.h = frames[c->frame - 1].h;
	if (S.fps >= 0)
		S.interval_ns = S.fps > 0 ? 1e9 / S.fps : 0;
	else
		S.interval_ns = (uint64_t)c->interval * 100;
	S.frame = xrealloc(S.frame, max_frame_bytes(S.mjpeg, c->frame));
	S.t_start = now_ns();
	S.frames_started = 0;
	S.frame_active = 0;
	S.frame_no = 0;
	S.pay_len = 0;
	S.pay_off = 0;
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

static void vs_request(uint32_t seq, uint8_t req, uint8_t cs, const uint8_t *out,
		       uint16_t wlength)
{
	struct probe *cur = cs == UVC_VS_PROBE_CONTROL ? &S.probe : &S.commit;
	struct probe tmp = { 0 };

	if (cs != UVC_VS_PROBE_CONTROL && cs != UVC_VS_COMMIT_CONTROL) {
		stall(seq, 6);	/* invalid control */
	} else if (req == UVC_SET_CUR) {
		if (wlength < 26 || !out) {
			stall(seq, 7);
			return;
		}
		/* The host's fields, up to wCompWindowSize. */
		memcpy(&tmp, out, offsetof(struct probe, delay));
		probe_fix(&tmp);
		*cur = tmp;
		if (cs == UVC_VS_COMMIT_CONTROL) {
			S.probe = tmp;	/* probe and commit agree after a commit */
			if (S.xfer == XFER_BULK)
				stream_start();
		}
		ctrl_out(seq, wlength);
	} else if (req == UVC_GET_CUR) {
		ctrl_in(seq, cur, sizeof(*cur), wlength);
	} else if (req == UVC_GET_MIN || req == UVC_GET_MAX || req == UVC_GET_DEF) {
		probe_limit(&tmp, req);
		ctrl_in(seq, &tmp, sizeof(tmp), wlength);
	} else if (!get_len_info(seq, req, sizeof(tmp), wlength)) {
		stall(seq, 7);	/* invalid request */
	}
}

static void vc_request(uint32_t seq, uint8_t req, uint8_t unit, uint8_t cs,
		       const uint8_t *out, uint16_t wlength)
{
	const uint8_t *r = memchr(get_reqs, req, sizeof(get_reqs));
	struct uvc_ctrl *c = NULL;
	uint8_t e = S.error_code;
	int32_t v = 0;
	unsigned int i;

	if (unit == 0 && cs == UVC_VC_REQUEST_ERROR_CODE_CONTROL &&
	    (req == UVC_GET_CUR || req == UVC_GET_INFO)) {
		ctrl_in(seq, req == UVC_GET_CUR ? &e : (uint8_t[]){ 0x01 }, 1, wlength);
		if (req == UVC_GET_CUR)
			S.error_code = e;	/* reading the error code keeps it */
		return;
	}
	for (i = 0; i < ARRAY_SIZE(ctrls); i++)
		if (unit == ID_PU && ctrls[i].cs == cs)
			c = &ctrls[i];
	if (unit != 0 && unit != ID_CAMERA && unit != ID_PU && unit != ID_OT) {
		stall(seq, 5);	/* invalid unit */
	} else if (!c) {
		stall(seq, 6);	/* invalid control */
	} else if (req == UVC_SET_CUR) {
		if (wlength != c->size || !out) {
			stall(seq, 7);
			return;
		}
		memcpy(&v, out, c->size);
		if (c->is_signed)
			v = c->size == 1 ? (int8_t)v : (int16_t)v;
		if (v < c->v[1] || v > c->v[2]) {
			stall(seq, 4);	/* out of range */
			return;
		}
		c->v[0] = v;
		ctrl_out(seq, wlength);
	} else if (r) {
		ctrl_in(seq, &c->v[r - get_reqs], c->size, wlength);
	} else if (!get_len_info(seq, req, c->size, wlength)) {
		stall(seq, 7);
	}
}

/* A control request's setup packet (struct usb_ctrlrequest). */
struct setup {
	uint8_t type, req;
	uint16_t value, index, len;
};

static void std_request(uint32_t seq, const struct setup *r)
{
	uint16_t wvalue = r->value, windex = r->index, wlength = r->len;
	uint8_t d[256] = { 0 };
	size_t n;

	switch (r->req) {
	case USB_REQ_GET_DESCRIPTOR:
		n = wvalue >> 8 == USB_DT_STRING ? string_desc(wvalue & 0xff, d) : 0;
		if (wvalue >> 8 == USB_DT_DEVICE)
			ctrl_in(seq, &dev_desc, sizeof(dev_desc), wlength);
		else if (wvalue == USB_DT_CONFIG << 8)
			ctrl_in(seq, &cfg, cfg_len, wlength);
		else if (wvalue >> 8 == USB_DT_DEVICE_QUALIFIER)
			ctrl_in(seq, &qual_desc, sizeof(qual_desc), wlength);
		else if (n)
			ctrl_in(seq, d, n, wlength);
		else
			stall(seq, 0);
		return;
	case USB_REQ_SET_CONFIGURATION:
		if (wvalue > 1)
			break;
		S.config = wvalue;
		S.vs_alt = 0;
		stream_stop("SET_CONFIGURATION");
		ctrl_out(seq, 0);
		return;
	case USB_REQ_SET_INTERFACE:
		if (windex == VC_INTF && wvalue == 0) {
			ctrl_out(seq, 0);
			return;
		}
		if (windex != VS_INTF || wvalue > (S.xfer == XFER_ISOC ? N_ALTS : 0))
			break;
		S.vs_alt = wvalue;
		S.psize = maxp_bytes(iso_maxp[wvalue]);
		if (S.xfer == XFER_ISOC && wvalue)
			stream_start();
		else if (S.xfer == XFER_ISOC)
			stream_stop("alternate setting 0");
		ctrl_out(seq, 0);
		return;
	case USB_REQ_GET_CONFIGURATION:
	case USB_REQ_GET_INTERFACE:
	case USB_REQ_GET_STATUS:
		d[0] = r->req == USB_REQ_GET_CONFIGURATION ? S.config :
		       r->req == USB_REQ_GET_INTERFACE && windex == VS_INTF ? S.vs_alt : 0;
		ctrl_in(seq, d, r->req == USB_REQ_GET_STATUS ? 2 : 1, wlength);
		return;
	case USB_REQ_CLEAR_FEATURE:
		if ((r->type & USB_RECIP_MASK) == USB_RECIP_ENDPOINT &&
		    wvalue == USB_ENDPOINT_HALT && windex == EP_VIDEO && S.xfer == XFER_BULK)
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
	const struct setup *r = (const void *)setup;
	uint16_t windex = r->index;
	int class_intf = (r->type & (USB_TYPE_MASK | USB_RECIP_MASK)) ==
			 (USB_TYPE_CLASS | USB_RECIP_INTERFACE);

	S.n_ctrl++;
	if ((r->type & USB_DIR_IN) == 0 && r->len && len != r->len)
		stall(seq, 7);
	else if ((r->type & USB_TYPE_MASK) == USB_TYPE_STANDARD)
		std_request(seq, r);
	else if (class_intf && windex == VS_INTF)
		vs_request(seq, r->req, r->value >> 8, out, r->len);
	else if (class_intf && (windex & 0xff) == VC_INTF)
		vc_request(seq, r->req, windex >> 8, r->value >> 8, out, r->len);
	else
		stall(seq, 7);
}

/* ---- The camera: streaming ---- */

/* Is the next frame due? If not, when it will be. */
static int frame_due(uint64_t *when)
{
	uint64_t t = S.t_start + S.frames_started * S.interval_ns;

	if (S.interval_ns == 0 || now_ns() >= t)
		return 1;
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

/* The next payload of the current frame, at most @max bytes with its header, into @out. */
static size_t next_payload(uint8_t *out, size_t max)
{
	size_t n = max - S.hdr_len, left = S.frame_len - S.frame_off;
	uint64_t t = now_ns();
	uint32_t scr = t * (CLOCK_HZ / 1000000) / 1000;
	uint16_t sof = (t / 1000000) & 2047;

	if (n > left)
		n = left;
	out[0] = S.hdr_len;
	out[1] = UVC_STREAM_EOH | (S.fid ? UVC_STREAM_FID : 0) | (n == left ? UVC_STREAM_EOF : 0);
	if (S.hdr_len == 12) {
		out[1] |= UVC_STREAM_PTS | UVC_STREAM_SCR;
		memcpy(out + 2, &S.pts, 4);
		memcpy(out + 6, &scr, 4);
		memcpy(out + 10, &sof, 2);
	}
	memcpy(out + S.hdr_len, S.frame + S.frame_off, n);
	S.frame_off += n;
	S.bytes_sent += n;
	if (n == left) {
		S.frame_active = 0;
		S.frames_done++;
		S.frame_no++;
	} else if (S.unplug_at >= 0 && !S.unplug_now &&
		   S.frames_done >= (uint64_t)S.unplug_at && S.frame_off >= S.frame_len / 2) {
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
		ret_submit(u->seqnum, 0, 0, NULL, 0, 0, NULL);
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
	ret_submit(u->seqnum, 0, n, S.payload + S.pay_off, n, 0, NULL);
	S.pay_off += n;
	/*
	 * A payload shorter than the maximum that fills the URB with whole packets ends
	 * with a zero-length packet.
	 */
	if (S.pay_off == S.pay_len && n == (size_t)u->len && S.pay_len < maxp &&
	    S.pay_len % 512 == 0)
		S.zlp_pending = 1;
}

static void serve_isoc(struct urb *u)
{
	static uint8_t *data;
	static size_t data_cap;
	size_t total = 0;
	uint64_t when;
	int i;

	if ((size_t)u->len > data_cap) {
		data_cap = u->len;
		data = xrealloc(data, data_cap);
	}
	for (i = 0; i < u->np; i++) {
		uint8_t *d = u->iso + 16 * i;
		uint32_t off = get_be32(d, 0), len = get_be32(d, 1);
		size_t cap = len < S.psize ? len : S.psize, a = 0;

		if (off + (uint64_t)len > (uint64_t)u->len)
			cap = 0;
		if (cap > S.hdr_len && !S.unplug_now && (S.frame_active || frame_due(&when))) {
			if (!S.frame_active)
				frame_begin();
			a = next_payload(data + total, cap);
		}
		put_be32(d, 2, a);	/* actual_length */
		put_be32(d, 3, 0);	/* status */
		total += a;
	}
	ret_submit(u->seqnum, 0, total, data, total, u->np, u->iso);
}

static void free_urb(struct urb *u)
{
	free(u->iso);
	free(u);
}

static void *stream_thread(void *arg)
{
	pthread_mutex_lock(&S.lk);
	while (!S.quit) {
		struct urb *u = S.video_urbs;
		uint64_t when;

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
		if (S.xfer == XFER_BULK)
			serve_bulk(u);
		else
			serve_isoc(u);
		free_urb(u);
	}
	pthread_mutex_unlock(&S.lk);
	return arg;
}

/* ---- The camera: the USB/IP connection ---- */

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
	struct urb *u = unlink_from(&S.video_urbs, target);
	int early = 0;

	S.n_unlinks++;
	if (!u)
		u = unlink_from(&S.status_urbs, target);
	if (!u && target > S.max_seq && S.n_early < ARRAY_SIZE(S.early)) {
		S.early[S.n_early++] = target;
		early = 1;
	}
	put_be32(hdr, 0, USBIP_RET_UNLINK);
	put_be32(hdr, 1, seq);
	/* -ECONNRESET: unlinked before completion; 0: it had completed already. */
	put_be32(hdr, 5, u || early ? -ECONNRESET : 0);
	if (u || early)
		S.n_unlink_hit++;
	if (u)
		free_urb(u);
	send_reply(&iov, 1);
}

/* Whether the URB @seq was unlinked before it came (and is forgotten now). */
static int unlinked_early(uint32_t seq)
{
	unsigned int i;

	if (seq > S.max_seq)
		S.max_seq = seq;
	for (i = 0; i < S.n_early; i++) {
		if (S.early[i] == seq) {
			S.early[i] = S.early[--S.n_early];
			return 1;
		}
	}
	return 0;
}

/* A USBIP_CMD_SUBMIT with header @h: NULL, or why the connection cannot go on. */
static const char *handle_submit(const uint8_t *h)
{
	uint32_t seq = get_be32(h, 1), dir = get_be32(h, 3), ep = get_be32(h, 4);
	int32_t len = get_be32(h, 6), np = get_be32(h, 8);
	int isoc = ep == (EP_VIDEO & 0x0f) && S.xfer == XFER_ISOC;
	int video_in = ep == (EP_VIDEO & 0x0f) && dir == USBIP_DIR_IN && len > 0;
	int status_in = ep == (EP_STATUS & 0x0f) && dir == USBIP_DIR_IN;
	uint8_t *out = NULL, *iso = NULL;
	struct urb *u, **pp;

	if (len < 0 || len > (1 << 24) || (isoc && (np <= 0 || np > 1024)))
		return "bad CMD_SUBMIT";
	if (dir != USBIP_DIR_IN && len > 0)
		out = xrealloc(NULL, len);
	if (isoc)
		iso = xrealloc(NULL, np * 16);
	if ((out && read_full(out, len) <= 0) ||
	    (iso && read_full(iso, np * 16) <= 0)) {
		free(out);
		free(iso);
		return "connection lost in CMD_SUBMIT";
	}
	pthread_mutex_lock(&S.lk);
	if (unlinked_early(seq)) {
		/* Given back by vhci already: no answer. */
	} else if (ep == 0) {
		control(seq, h + 40, out, len);
	} else if (video_in || status_in) {
		u = xrealloc(NULL, sizeof(*u));
		*u = (struct urb){ .seqnum = seq, .len = len, .np = isoc ? np : 0, .iso = iso };
		iso = NULL;
		if (status_in) {
			/* Status interrupts: nothing to report, kept until unlinked. */
			u->next = S.status_urbs;
			S.status_urbs = u;
		} else {
			/* Video: last in the streaming thread's queue. */
			for (pp = &S.video_urbs; *pp; pp = &(*pp)->next)
				;
			*pp = u;
			pthread_cond_broadcast(&S.cond);
		}
	} else {
		ret_submit(seq, -EPIPE, 0, NULL, 0, 0, NULL);
	}
	pthread_mutex_unlock(&S.lk);
	free(out);
	free(iso);
	return NULL;
}

static void *reader_thread(void *arg)
{
	const char *reason = NULL;
	uint8_t h[48];
	int r;

	while (!reason) {
		r = read_full(h, sizeof(h));
		if (r <= 0) {
			reason = r < 0 ? "socket read error" : "connection closed by the host";
		} else if (get_be32(h, 0) == USBIP_CMD_SUBMIT) {
			reason = handle_submit(h);
		} else if (get_be32(h, 0) == USBIP_CMD_UNLINK) {
			pthread_mutex_lock(&S.lk);
			handle_unlink(get_be32(h, 1), get_be32(h, 5));
			pthread_mutex_unlock(&S.lk);
		} else {
			logmsg("unknown USB/IP command %u", get_be32(h, 0));
			reason = "unknown USB/IP command";
		}
	}
	pthread_mutex_lock(&S.lk);
	conn_end(reason);
	pthread_mutex_unlock(&S.lk);
	return arg;
}

/* 0 or -errno. */
static int write_sysfs(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY), r;

	if (fd < 0)
		return -errno;
	r = write(fd, s, strlen(s)) < 0 ? -errno : 0;
	close(fd);
	return r;
}

/* Attach @fd to a free high-speed port of vhci; returns the port. */
static int vhci_attach(int fd)
{
	char line[256], cmd[64], hub[8];
	int port, sta, r;
	FILE *f = fopen(VHCI "/status", "r");

	if (!f) {
		logmsg("%s/status: %s (is vhci-hcd loaded?)", VHCI, strerror(errno));
		return -1;
	}
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%7s %d %d", hub, &port, &sta) != 3 || strcmp(hub, "hs") ||
		    sta != 4 /* VDEV_ST_NULL */)
			continue;
		snprintf(cmd, sizeof(cmd), "%d %d %u %d", port, fd, 0x10002u, USB_SPEED_HIGH_);
		r = write_sysfs(VHCI "/attach", cmd);
		if (r == 0) {
			fclose(f);
			return port;
		}
		logmsg("attach '%s': %s", cmd, strerror(-r));
	}
	fclose(f);
	return -1;
}

/* Command line options: a table for each command. */
struct opt {
	const char *name;
	char type;	/* b: flag, s: string, i: int, f: double, c: index in choices */
	void *val;
	const char *const *choices;
};

static int parse_opts(const struct opt *opts, int argc, char **argv)
{
	const struct opt *o;
	int i, k;

	for (i = 1; i < argc; i++) {
		for (o = opts; o->name && strcmp(o->name, argv[i]); o++)
			;
		if (!o->name || (o->type != 'b' && ++i >= argc))
			return -1;
		if (o->type == 'b')
			*(int *)o->val = 1;
		else if (o->type == 's')
			*(const char **)o->val = argv[i];
		else if (o->type == 'i')
			*(int *)o->val = atoi(argv[i]);
		else if (o->type == 'f')
			*(double *)o->val = atof(argv[i]);
		for (k = 0; o->type == 'c' && o->choices[k]; k++)
			if (!strcmp(o->choices[k], argv[i]))
				break;
		if (o->type == 'c' && !o->choices[k])
			return -1;
		if (o->type == 'c')
			*(int *)o->val = k;
	}
	return 0;
}

/* Until the connection is gone: signals, unplugging. 1 if the unplug was ours. */
static int serve_loop(const sigset_t *set)
{
	struct timespec tmo = { 0, 100 * 1000 * 1000 };
	const char *why = NULL;
	uint64_t unplug_t = 0;
	char port[16];
	int sig, quit, r;

	snprintf(port, sizeof(port), "%d", S.port);
	for (;;) {
		sig = sigtimedwait(set, NULL, &tmo);
		pthread_mutex_lock(&S.lk);
		if (sig == SIGUSR1) {
			S.unplug_at = S.frames_done + 30;
			logmsg("unplug armed: after 30 more frames");
		}
		quit = S.quit;
		/* On a signal, or mid-frame after SIGUSR1 (the streaming thread says when). */
		if (!why && !quit && (sig == SIGTERM || sig == SIGINT || S.unplug_now)) {
			why = sig == SIGTERM || sig == SIGINT ? "unplugged on a signal" :
			      "unplugged in the middle of a frame";
			logmsg("%s (%s), %lu frames sent", why,
			       S.unplug_detach ? "detach" : "socket closed",
			       S.frames_done);
			S.unplug_now = 1;
			if (!S.end_reason)
				S.end_reason = why;
		}
		pthread_mutex_unlock(&S.lk);
		if (quit)
			return !!why;
		if (why && !unplug_t) {
			/* Pull the plug: detach the port from vhci, or close the connection. */
			unplug_t = now_ns();
			r = S.unplug_detach ? write_sysfs(VHCI "/detach", port) : 1;
			if (r < 0)
				logmsg("detach: %s", strerror(-r));
			if (r)
				shutdown(S.sock, SHUT_RDWR);
		} else if (why && now_ns() - unplug_t > 10000000000ull) {
			logmsg("the host did not close the connection 10 s after the detach");
			shutdown(S.sock, SHUT_RDWR);
			unplug_t = now_ns();
		}
	}
}

#define ENDED "ended: %s; %lu control requests (%lu stalled), %lu URBs completed, %lu unlinks (%lu of pending URBs), %u streams, %lu frames, %lu bytes of frame data"

static int cmd_serve(int argc, char **argv)
{
	static const char *const xfers[] = { "bulk", "isoc", NULL };
	static const char *const unplugs[] = { "close", "detach", NULL };
	const struct opt opts[] = {
		{ "--transfer", 'c', &S.xfer, xfers },
		{ "--fps", 'f', &S.fps, NULL },
		{ "--header", 'i', &S.hdr_len, NULL },
		{ "--unplug", 'c', &S.unplug_detach, unplugs },
		{ "--socket-fd", 'i', &S.sock, NULL },	/* its peer plays the host, no vhci */
		{ NULL }
	};
	pthread_t reader, streamer;
	pthread_condattr_t ca;
	sigset_t set;
	int sv[2] = { -1, -1 }, deliberate;

	if (parse_opts(opts, argc, argv) || (S.hdr_len != 2 && S.hdr_len != 12)) {
		fputs(USAGE, stderr);
		return 2;
	}
	build_descriptors(S.xfer);
	probe_limit(&S.probe, UVC_GET_DEF);
	S.commit = S.probe;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&S.cond, &ca);
	signal(SIGPIPE, SIG_IGN);
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGUSR1);
	pthread_sigmask(SIG_BLOCK, &set, NULL);

	if (S.sock < 0 && socketpair(AF_UNIX, SOCK_STREAM, 0, sv) < 0) {
		logmsg("socketpair: %s", strerror(errno));
		return 1;
	}
	if (S.sock < 0)
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
		close(sv[1]);	/* vhci holds its own reference */
	}
	logmsg("attached to vhci port %d: UVC 1.1, %s streaming, %u-byte payload headers",
	       S.port, S.xfer == XFER_BULK ? "bulk" : "isochronous", S.hdr_len);
	fflush(stderr);

	deliberate = serve_loop(&set);
	pthread_join(reader, NULL);	/* which set S.quit and woke the streaming thread */
	pthread_join(streamer, NULL);
	close(S.sock);
	logmsg(ENDED, S.end_reason, S.n_ctrl, S.n_stall, S.n_urbs, S.n_unlinks, S.n_unlink_hit,
	       S.streams, S.frames_done, S.bytes_sent);
	return deliberate ? 0 : 1;
}

/* ---- find: the capture node of the camera ---- */

static int cmd_find(int argc, char **argv)
{
	const char *name = PRODUCT;
	double wait = 0;
	const struct opt opts[] = {
		{ "--name", 's', &name, NULL }, { "--wait", 'f', &wait, NULL }, { NULL }
	};
	uint64_t t0 = now_ns();
	char node[600];

	if (parse_opts(opts, argc, argv)) {
		fputs(USAGE, stderr);
		return 2;
	}
	while (vb2_find_node_caps(name, V4L2_CAP_VIDEO_CAPTURE, node, sizeof(node), NULL, 0)) {
		if ((now_ns() - t0) / 1e9 >= wait) {
			fprintf(stderr, "%s: no capture node named '%s'\n", PROG, name);
			return 1;
		}
		usleep(200000);
	}
	printf("%s\n", node);
	return 0;
}

/* ---- check: stream from uvcvideo and check every frame ---- */

struct cbuf {
	uint8_t *addr;
	size_t len;
	int dmafd;
};

/* A check run: what was asked, the node, its buffers, and how the stream went. */
struct check_run {
	const char *dev, *size;
	int nframes, nbufs, mem, mjpeg, expect_unplug;
	unsigned int w, h, memory;
	double fps, timeout;
	int fd;
	char intf[PATH_MAX];		/* the USB interface in sysfs (--expect-unplug) */
	size_t sizeimage;
	struct cbuf *bufs;
	uint8_t *scratch;
	const char *dmahow;
	unsigned long frames, gaps, error_bufs, bytes_checked, mismatched_bytes, bad_frames;
	unsigned long seq_content_mismatch;
	int have_first, reported;
	uint32_t first_fno, first_seq, last_seq;
	uint64_t t0, t1, t_first, t_last;
	int ended_err, end_errno;	/* streaming ended with an error, which */
	const char *end_how;
	int stalled;			/* a timeout or a bad index ended it */
	int r_off, r_free;		/* STREAMOFF and REQBUFS(0) at the end */
	int intf_gone;			/* the interface went after the unplug */
};

static void problem(struct check_run *c, const char *fmt, ...)
{
	va_list ap;

	if (c->reported++ >= 20)
		return;
	printf("# ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
}

static void check_frame(struct check_run *c, const uint8_t *p, size_t used, uint32_t seq)
{
	size_t info = c->mjpeg ? MJPEG_HDR : 0, pat, patlen, exp, i;
	uint32_t fno, size, mism = 0;

	if (used < info + INFO_SIZE + 2) {
		c->bad_frames++;
		problem(c, "sequence %u: only %zu bytes", seq, used);
		return;
	}
	fno = get_le32(p + info + 4);
	size = get_le32(p + info + 8);
	exp = frame_size(c->mjpeg, fno, c->w, c->h);
	if (memcmp(p + info, "VB2F", 4) || size != exp || used != exp) {
		c->bad_frames++;
		c->mismatched_bytes += used;
		problem(c,
			"sequence %u: bad frame header (magic %.4s, frame %u, size %u, bytesused %zu, expected %zu)",
			seq, (const char *)p + info, fno, size, used, exp);
		return;
	}
	frame_layout(c->mjpeg, exp, &info, &pat, &patlen);
	if (c->mjpeg && (memcmp(p, "\xff\xd8\xff\xfe", 4) || memcmp(p + exp - 2, "\xff\xd9", 2)))
		mism += 1;
	fill_pattern(c->scratch, patlen, fno);
	if (memcmp(c->scratch, p + pat, patlen))
		for (i = 0; i < patlen; i++)
			mism += c->scratch[i] != p[pat + i];
	if (get_le32(p + info + 12) != checksum(p + pat, patlen))
		mism += 4;
	c->bytes_checked += used;
	if (mism) {
		c->bad_frames++;
		c->mismatched_bytes += mism;
		problem(c, "sequence %u: frame %u has %u wrong bytes", seq, fno, mism);
	}
	if (!c->have_first) {
		c->have_first = 1;
		c->first_fno = fno;
		c->first_seq = seq;
	} else if (fno - c->first_fno != seq - c->first_seq) {
		c->seq_content_mismatch++;
		problem(c, "sequence %u carries frame %u (first: sequence %u, frame %u)", seq,
			fno, c->first_seq, c->first_fno);
	}
}

static const char *const mem_names[] = { "mmap", "userptr", "dmabuf", NULL };
static const unsigned int mem_types[] = { V4L2_MEMORY_MMAP, V4L2_MEMORY_USERPTR,
					  V4L2_MEMORY_DMABUF };

static void parse_check_args(int argc, char **argv, struct check_run *c)
{
	static const char *const formats[] = { "yuyv", "mjpeg", NULL };
	const struct opt opts[] = {
		{ "--dev", 's', &c->dev, NULL }, { "--frames", 'i', &c->nframes, NULL },
		{ "--memory", 'c', &c->mem, mem_names }, { "--format", 'c', &c->mjpeg, formats },
		{ "--size", 's', &c->size, NULL }, { "--buffers", 'i', &c->nbufs, NULL },
		{ "--fps", 'f', &c->fps, NULL }, { "--timeout", 'f', &c->timeout, NULL },
		{ "--expect-unplug", 'b', &c->expect_unplug, NULL }, { NULL }
	};

	if (parse_opts(opts, argc, argv) || !c->dev || c->nbufs < 1 || c->nbufs > 32 ||
	    sscanf(c->size, "%ux%u", &c->w, &c->h) != 2) {
		fputs(USAGE, stderr);
		exit(2);
	}
	c->memory = mem_types[c->mem];
}

/* Open the node and set the format (and the rate); a message and -1 on failure. */
static int check_open(struct check_run *c)
{
	__u32 pixfmt = c->mjpeg ? V4L2_PIX_FMT_MJPEG : V4L2_PIX_FMT_YUYV;
	struct v4l2_format fmt = { .type = V4L2_BUF_TYPE_VIDEO_CAPTURE };
	struct v4l2_streamparm parm = { .type = V4L2_BUF_TYPE_VIDEO_CAPTURE };
	struct v4l2_capability cap = { 0 };
	char link[64] = "";
	struct stat st;
	int r;

	c->fd = open(c->dev, O_RDWR | O_NONBLOCK);
	if (c->fd < 0)
		return ksft_print_msg("%s: %s\n", c->dev, strerror(errno)), -1;
	if (c->expect_unplug && fstat(c->fd, &st) == 0)
		snprintf(link, sizeof(link), "/sys/dev/char/%u:%u/device", major(st.st_rdev),
			 minor(st.st_rdev));
	if (c->expect_unplug && !realpath(link, c->intf)) {
		*c->intf = 0;
		ksft_print_msg("no USB interface in sysfs for %s\n", c->dev);
	}
	if (vb2_ioctl(c->fd, VIDIOC_QUERYCAP, &cap) < 0 ||
	    !(cap.device_caps & V4L2_CAP_VIDEO_CAPTURE) ||
	    !(cap.device_caps & V4L2_CAP_STREAMING))
		return ksft_print_msg("%s is not a streaming capture node\n", c->dev), -1;
	fmt.fmt.pix.width = c->w;
	fmt.fmt.pix.height = c->h;
	fmt.fmt.pix.pixelformat = pixfmt;
	fmt.fmt.pix.field = V4L2_FIELD_NONE;
	r = vb2_ioctl(c->fd, VIDIOC_S_FMT, &fmt);
	if (r < 0)
		return ksft_print_msg("VIDIOC_S_FMT: %s\n", strerror(-r)), -1;
	if (fmt.fmt.pix.width != c->w || fmt.fmt.pix.height != c->h ||
	    fmt.fmt.pix.pixelformat != pixfmt)
		return ksft_print_msg("the driver chose %ux%u %.4s\n", fmt.fmt.pix.width,
				      fmt.fmt.pix.height, (char *)&fmt.fmt.pix.pixelformat), -1;
	c->sizeimage = fmt.fmt.pix.sizeimage;
	parm.parm.capture.timeperframe.numerator = 1000;
	parm.parm.capture.timeperframe.denominator = c->fps * 1000;
	r = c->fps > 0 ? vb2_ioctl(c->fd, VIDIOC_S_PARM, &parm) : 0;
	if (r < 0)
		ksft_print_msg("VIDIOC_S_PARM: %s\n", strerror(-r));
	return 0;
}

/* The memory of buffer @i: mapped (MMAP), allocated (USERPTR) or a dma-buf (DMABUF). */
static int check_buffer_memory(struct check_run *c, unsigned int i)
{
	struct v4l2_buffer b = { .index = i, .type = V4L2_BUF_TYPE_VIDEO_CAPTURE,
				 .memory = c->memory };
	int mmap_io = c->memory == V4L2_MEMORY_MMAP, r;
	struct cbuf *cb = &c->bufs[i];
	void *p;

	cb->dmafd = -1;
	cb->len = (c->sizeimage + 4095) & ~(size_t)4095;
	if (c->memory == V4L2_MEMORY_USERPTR) {
		if (posix_memalign(&p, 4096, cb->len))
			return -1;
		memset(p, 0xee, cb->len);
		cb->addr = p;
		return 0;
	}
	r = mmap_io ? vb2_ioctl(c->fd, VIDIOC_QUERYBUF, &b) : vb2_dmabuf_alloc(cb->len, &c->dmahow);
	if (r < 0)
		return ksft_print_msg("%s: %s\n", mmap_io ? "VIDIOC_QUERYBUF" : "no dma-buf",
				      strerror(-r)), -1;
	if (mmap_io)
		cb->len = b.length;
	else
		cb->dmafd = r;
	/* b.m.offset: 0 for a dma-buf */
	cb->addr = mmap(NULL, cb->len, PROT_READ | PROT_WRITE, MAP_SHARED,
			mmap_io ? c->fd : cb->dmafd, b.m.offset);
	if (cb->addr == MAP_FAILED)
		return ksft_print_msg("mmap: %s\n", strerror(errno)), -1;
	return 0;
}

/* Queue buffer @b->index with its memory. */
static int check_qbuf(struct check_run *c, struct v4l2_buffer *b)
{
	if (c->memory == V4L2_MEMORY_USERPTR)
		b->m.userptr = (unsigned long)c->bufs[b->index].addr;
	else if (c->memory == V4L2_MEMORY_DMABUF)
		b->m.fd = c->bufs[b->index].dmafd;
	if (c->memory != V4L2_MEMORY_MMAP)
		b->length = c->bufs[b->index].len;
	return vb2_ioctl(c->fd, VIDIOC_QBUF, b);
}

/* REQBUFS, the buffers' memory, every buffer queued, STREAMON. */
static int check_start(struct check_run *c)
{
	struct v4l2_requestbuffers req = { .count = c->nbufs,
					   .type = V4L2_BUF_TYPE_VIDEO_CAPTURE,
					   .memory = c->memory };
	enum v4l2_buf_type type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
	int i, r = vb2_ioctl(c->fd, VIDIOC_REQBUFS, &req);

	if (r < 0)
		return ksft_print_msg("VIDIOC_REQBUFS(%s): %s\n", mem_names[c->mem],
				      strerror(-r)), -1;
	c->nbufs = req.count;
	c->bufs = calloc(c->nbufs, sizeof(*c->bufs));
	c->scratch = malloc(c->sizeimage + 4096);
	if (!c->bufs || !c->scratch)
		return -1;
	for (i = 0; i < c->nbufs; i++)
		if (check_buffer_memory(c, i))
			return -1;
	for (i = 0; i < c->nbufs; i++) {
		struct v4l2_buffer b = { .index = i, .type = type, .memory = c->memory };

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

	if (c->frames && b->sequence > c->last_seq + 1)
		c->gaps += b->sequence - c->last_seq - 1;
	c->last_seq = b->sequence;
	if (!c->frames)
		c->t_first = now_ns();
	c->t_last = now_ns();
	c->frames++;
	if (b->flags & V4L2_BUF_FLAG_ERROR) {
		c->error_bufs++;
		problem(c, "sequence %u: buffer flagged ERROR (bytesused %u)", b->sequence,
			b->bytesused);
		return;
	}
	if (dmafd >= 0)
		vb2_ioctl(dmafd, DMA_BUF_IOCTL_SYNC, &sync);
	check_frame(c, c->bufs[b->index].addr, b->bytesused, b->sequence);
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
	struct v4l2_buffer b = { .type = V4L2_BUF_TYPE_VIDEO_CAPTURE, .memory = c->memory };
	int rev, r = vb2_poll(c->fd, POLLIN, c->timeout * 1000);

	if (r == 0) {
		ksft_print_msg("no frame for %.0f s after %lu frames\n", c->timeout,
			       c->frames);
		c->end_how = "timeout";
		c->stalled = 1;
		return 1;
	}
	if (r < 0)
		return check_ended(c, "poll", -r);
	rev = r;
	r = vb2_ioctl(c->fd, VIDIOC_DQBUF, &b);
	if (r == -EAGAIN && (rev & (POLLERR | POLLHUP)))
		return check_ended(c, "poll POLLERR, DQBUF EAGAIN", EAGAIN);
	if (r == -EAGAIN)
		return 0;
	if (r < 0)
		return check_ended(c, "DQBUF", -r);
	if (b.index >= (unsigned int)c->nbufs) {
		ksft_print_msg("DQBUF returned index %u\n", b.index);
		c->stalled = 1;
		return 1;
	}
	check_dequeued(c, &b);
	r = check_qbuf(c, &b);
	return r < 0 ? check_ended(c, "QBUF", -r) : 0;
}

/* After an unplug: wait up to 30 s for uvcvideo to let go of the USB interface. */
static void check_wait_intf(struct check_run *c)
{
	uint64_t t0 = now_ns();

	if (!*c->intf) {
		ksft_print_msg("USB interface unknown, not waited for\n");
		return;
	}
	while (access(c->intf, F_OK) == 0 && now_ns() - t0 <= 30000000000ull)
		usleep(20000);
	if (access(c->intf, F_OK) == 0) {
		ksft_print_msg("%s still there 30 s after streaming ended\n", c->intf);
		return;
	}
	ksft_print_msg("USB interface gone %.2f s after streaming ended\n",
		       (now_ns() - t0) / 1e9);
	c->intf_gone = 1;
}

/* STREAMOFF, unmap, REQBUFS(0), free, close. */
static void check_release(struct check_run *c)
{
	struct v4l2_requestbuffers req = { .type = V4L2_BUF_TYPE_VIDEO_CAPTURE,
					   .memory = c->memory };
	enum v4l2_buf_type type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
	int i;

	c->r_off = vb2_ioctl(c->fd, VIDIOC_STREAMOFF, &type);
	for (i = 0; i < c->nbufs; i++)
		if (c->memory != V4L2_MEMORY_USERPTR)
			munmap(c->bufs[i].addr, c->bufs[i].len);
	c->r_free = vb2_ioctl(c->fd, VIDIOC_REQBUFS, &req);
	for (i = 0; i < c->nbufs; i++) {
		if (c->memory == V4L2_MEMORY_USERPTR)
			free(c->bufs[i].addr);
		if (c->bufs[i].dmafd >= 0)
			close(c->bufs[i].dmafd);
	}
	close(c->fd);
}

#define FIGURES "frames=%lu fps=%.2f gaps=%lu error_bufs=%lu bytes_checked=%lu mismatched_bytes=%lu bad_frames=%lu seq_content_mismatch=%lu elapsed=%.2f memory=%s%s%s format=%s size=%ux%u buffers=%u\n"

/* The figures, then the cases: stream, frames, and unplug with --expect-unplug. */
static void check_report(struct check_run *c)
{
	int stream_ok;

	ksft_print_msg(FIGURES,
		       c->frames, c->frames > 1 && c->t_last > c->t_first ?
		       (c->frames - 1) / ((c->t_last - c->t_first) / 1e9) : 0.0, c->gaps,
		       c->error_bufs, c->bytes_checked, c->mismatched_bytes, c->bad_frames,
		       c->seq_content_mismatch,
		       (c->t1 - c->t0) / 1e9, mem_names[c->mem], *c->dmahow ? ":" : "",
		       c->dmahow, c->mjpeg ? "MJPEG" : "YUYV", c->w, c->h, c->nbufs);
	if (c->ended_err || c->expect_unplug)
		ksft_print_msg("streaming ended: %s %s (%s); STREAMOFF %s; REQBUFS(0) %s\n",
			       c->end_how, c->end_errno ? strerror(c->end_errno) : "-",
			       c->ended_err ? "error" : "no error",
			       c->r_off < 0 ? strerror(-c->r_off) : "ok",
			       c->r_free < 0 ? strerror(-c->r_free) : "ok");
	stream_ok = c->expect_unplug ? c->ended_err && c->frames :
		    !c->ended_err && !c->stalled && c->frames >= (unsigned long)c->nframes;
	ksft_test_result(stream_ok, "stream\n");
	ksft_test_result(!c->bad_frames && !c->error_bufs && !c->seq_content_mismatch,
			 "frames\n");
	if (c->expect_unplug)
		ksft_test_result(c->intf_gone, "unplug\n");
}

static int cmd_check(int argc, char **argv)
{
	struct check_run c = { .size = "320x240", .nframes = 300, .nbufs = 4, .timeout = 10,
			       .dmahow = "", .end_how = "" };

	parse_check_args(argc, argv, &c);
	ksft_print_header();
	ksft_set_plan(c.expect_unplug ? 4 : 3);
	if (check_open(&c) || check_start(&c))
		ksft_exit_fail_msg("setup of %s failed\n", c.dev);
	ksft_test_result_pass("setup\n");
	c.t0 = now_ns();
	while ((c.expect_unplug || c.frames < (uint64_t)c.nframes) && !check_one(&c))
		;
	c.t1 = now_ns();
	if (c.expect_unplug && c.ended_err)
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
	fputs(USAGE, stderr);
	return 2;
}
