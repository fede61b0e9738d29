// SPDX-License-Identifier: GPL-2.0
/*
 * The helpers every guest program of the test harness shares: see vb2-guest.h.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
#include <linux/dma-heap.h>
#include <linux/media.h>
#include <linux/udmabuf.h>
#include <linux/videodev2.h>

#include "vb2-guest.h"

int vb2_ioctl(int fd, unsigned long req, void *arg)
{
	int r;

	do {
		r = ioctl(fd, req, arg);
	} while (r < 0 && errno == EINTR);
	return r < 0 ? -errno : r;
}

#define E(x) [x] = #x
static const char *const errnames[] = {
	E(EPERM), E(ENOENT), E(ESRCH), E(EINTR), E(EIO), E(ENXIO), E(E2BIG), E(EBADF),
	E(ECHILD), E(EAGAIN), E(ENOMEM), E(EACCES), E(EFAULT), E(EBUSY), E(EEXIST),
	E(ENODEV), E(ENOTDIR), E(EISDIR), E(EINVAL), E(ENFILE), E(EMFILE), E(ENOTTY),
	E(EFBIG), E(ENOSPC), E(ESPIPE), E(EROFS), E(EPIPE), E(ERANGE), E(EDEADLK),
	E(ENOSYS), E(ENOMSG), E(EBADR), E(ENODATA), E(ETIME), E(EPROTO), E(EOVERFLOW),
	E(EBADFD), E(ENOBUFS), E(ETIMEDOUT), E(ECANCELED), E(EOPNOTSUPP), E(ENOTCONN),
	E(ESHUTDOWN), E(EALREADY), E(EINPROGRESS), E(ENOLINK), E(EREMOTEIO),
};
#undef E

const char *vb2_errname(int err)
{
	static __thread char ring[8][16];
	static __thread unsigned int next;
	char *buf;

	if (err < 0)
		err = -err;
	if (!err)
		return "0";
	if ((size_t)err < sizeof(errnames) / sizeof(errnames[0]) && errnames[err])
		return errnames[err];
	buf = ring[next++ % 8];
	snprintf(buf, sizeof(ring[0]), "errno%d", err);
	return buf;
}

int vb2_read_line(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "re");
	int r = 0;

	if (!f)
		return -errno;
	if (!fgets(buf, len, f))
		r = ferror(f) ? -EIO : -ENODATA;
	fclose(f);
	if (!r)
		buf[strcspn(buf, "\n")] = 0;
	return r;
}

/* Does the node /dev/@sysname have every capability of @caps (device_caps)? */
static bool node_has_caps(const char *sysname, unsigned int caps)
{
	struct v4l2_capability cap;
	char path[300];
	bool has;
	int fd;

	if (!caps)
		return true;
	snprintf(path, sizeof(path), "/dev/%s", sysname);
	fd = open(path, O_RDWR | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return false;
	memset(&cap, 0, sizeof(cap));
	has = !vb2_ioctl(fd, VIDIOC_QUERYCAP, &cap) && (cap.device_caps & caps) == caps;
	close(fd);
	return has;
}

int vb2_find_node_caps(const char *name, unsigned int caps, char *path, size_t plen,
		       char *sysname, size_t slen)
{
	DIR *dir = opendir("/sys/class/video4linux");
	struct dirent *e;
	int r = -ENOENT;

	while (dir && r && (e = readdir(dir))) {
		char p[300], n[128];

		if (e->d_name[0] == '.')
			continue;
		snprintf(p, sizeof(p), "/sys/class/video4linux/%s/name", e->d_name);
		if (vb2_read_line(p, n, sizeof(n)) || strcmp(n, name) ||
		    !node_has_caps(e->d_name, caps))
			continue;
		snprintf(path, plen, "/dev/%s", e->d_name);
		if (sysname)
			snprintf(sysname, slen, "%s", e->d_name);
		r = 0;
	}
	if (dir)
		closedir(dir);
	return r;
}

int vb2_find_node(const char *name, char *path, size_t plen, char *sysname, size_t slen)
{
	return vb2_find_node_caps(name, 0, path, plen, sysname, slen);
}

static bool media_bus_info_is(const char *path, const char *bus_info)
{
	struct media_device_info info;
	int fd = open(path, O_RDWR | O_CLOEXEC);
	bool same;

	if (fd < 0)
		return false;
	memset(&info, 0, sizeof(info));
	same = !vb2_ioctl(fd, MEDIA_IOC_DEVICE_INFO, &info) &&
	       !strncmp(info.bus_info, bus_info, sizeof(info.bus_info));
	close(fd);
	return same;
}

int vb2_find_media(const char *sysname, const char *bus_info, char *path, size_t plen)
{
	char p[300];
	struct dirent *e;
	DIR *dir;
	int i, r = -ENOENT;

	for (i = 0; bus_info && i < 64; i++) {
		snprintf(p, sizeof(p), "/dev/media%d", i);
		if (media_bus_info_is(p, bus_info)) {
			snprintf(path, plen, "%s", p);
			return 0;
		}
	}
	if (!sysname)
		return r;
	snprintf(p, sizeof(p), "/sys/class/video4linux/%s/device", sysname);
	dir = opendir(p);
	while (dir && r && (e = readdir(dir))) {
		if (strncmp(e->d_name, "media", 5))
			continue;
		snprintf(path, plen, "/dev/%s", e->d_name);
		r = 0;
	}
	if (dir)
		closedir(dir);
	return r;
}

static size_t page_align(size_t len)
{
	size_t page = sysconf(_SC_PAGESIZE);

	return (len + page - 1) / page * page;
}

int vb2_heap_alloc(size_t len)
{
	struct dma_heap_allocation_data h = {
		.len = page_align(len), .fd_flags = O_RDWR | O_CLOEXEC,
	};
	int fd = open("/dev/dma_heap/system", O_RDONLY | O_CLOEXEC);
	int r;

	if (fd < 0)
		return -errno;
	r = vb2_ioctl(fd, DMA_HEAP_IOCTL_ALLOC, &h);
	close(fd);
	return r < 0 ? r : (int)h.fd;
}

int vb2_udmabuf_alloc(size_t len)
{
	struct udmabuf_create u = { .flags = UDMABUF_FLAGS_CLOEXEC, .size = page_align(len) };
	int dev, r;

	u.memfd = memfd_create("vb2-udmabuf", MFD_ALLOW_SEALING | MFD_CLOEXEC);
	if ((int)u.memfd < 0)
		return -errno;
	/* udmabuf wants the memfd sealed against shrinking. */
	if (ftruncate(u.memfd, u.size) || fcntl(u.memfd, F_ADD_SEALS, F_SEAL_SHRINK)) {
		r = -errno;
		close(u.memfd);
		return r;
	}
	dev = open("/dev/udmabuf", O_RDWR | O_CLOEXEC);
	if (dev < 0) {
		r = -errno;
		close(u.memfd);
		return r;
	}
	r = vb2_ioctl(dev, UDMABUF_CREATE, &u);
	close(dev);
	close(u.memfd);
	return r;
}

int vb2_dmabuf_alloc(size_t len, const char **how)
{
	int fd = vb2_heap_alloc(len);

	if (fd >= 0) {
		if (how)
			*how = "heap";
		return fd;
	}
	fd = vb2_udmabuf_alloc(len);
	if (fd >= 0 && how)
		*how = "udmabuf";
	return fd;
}

int vb2_request_alloc(int media_fd)
{
	int fd = -1, r = vb2_ioctl(media_fd, MEDIA_IOC_REQUEST_ALLOC, &fd);

	return r < 0 ? r : fd;
}

int vb2_request_queue(int req_fd)
{
	return vb2_ioctl(req_fd, MEDIA_REQUEST_IOC_QUEUE, NULL);
}

int vb2_request_reinit(int req_fd)
{
	return vb2_ioctl(req_fd, MEDIA_REQUEST_IOC_REINIT, NULL);
}

int vb2_poll(int fd, short events, int timeout_ms)
{
	struct pollfd p = { .fd = fd, .events = events };
	int r;

	do {
		r = poll(&p, 1, timeout_ms);
	} while (r < 0 && errno == EINTR);
	if (r < 0)
		return -errno;
	return r ? p.revents : 0;
}

int vb2_request_wait(int req_fd, int timeout_ms)
{
	int r = vb2_poll(req_fd, POLLPRI, timeout_ms);

	if (r < 0)
		return r;
	if (!r)
		return -ETIMEDOUT;
	return (r & POLLPRI) ? 0 : -EIO;
}

long long vb2_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

void vb2_buf_init(struct v4l2_buffer *b, struct v4l2_plane *pl, unsigned int type,
		  unsigned int memory, unsigned int index, unsigned int nplanes)
{
	memset(b, 0, sizeof(*b));
	b->type = type;
	b->memory = memory;
	b->index = index;
	if (pl)
		memset(pl, 0, nplanes * sizeof(*pl));
	if (V4L2_TYPE_IS_MULTIPLANAR(type)) {
		b->m.planes = pl;
		b->length = nplanes;
	}
}
