// SPDX-License-Identifier: GPL-2.0
/*
 * vb2-sync: implicit synchronisation of capture buffers (CONFIG_VIDEOBUF2_IMPLICIT_SYNC)
 * and the debugfs files of a queue, seen from user space on a capture node of the test
 * driver. A guest program of the test harness (tools/plans/sync.plan).
 *
 *   vb2-sync --dev NAME [--exporter NAME] [--unbind] [--only CASE,CASE..]
 *
 * --dev: the capture node (vb2-testdrv-N-cap), run with completion=2 (timer) at fps=1 or
 * 2 so that a buffer stays with the driver for a while. --exporter: a multi-planar
 * capture node of another instance, set to YUV420M 1920x1080, whose dma-bufs "import"
 * imports. --unbind: also the "unbind" case.
 *
 * videobuf2/implicit_sync in debugfs says whether the kernel fences dma-bufs. With 1, a
 * capture buffer with the driver has an unsignalled write fence on every dma-buf of it
 * that is exported or imported, signalled when it comes back: 1 for DONE, -EIO for
 * ERROR, -ECANCELED when given back QUEUED. With 0 (and upstream) nothing waits. Cases:
 *
 *   mmap       exported buffers: the fence pending (sync_files from EXPORT_SYNC_FILE,
 *              poll() on the dma-buf) while the buffer is with the driver, none on a
 *              buffer not queued, signalled (1) once it can be dequeued; then QBUF/DQBUF
 *              cycles, where the fence never signals early.
 *   error      fail_done=1: the buffer comes back ERROR, the fence's status is -EIO.
 *   streamoff  two buffers with the driver, STREAMOFF: both fences signal, -EIO.
 *   start-fail fail_start=1: STREAMON fails, no fence left pending; one caught during
 *              STREAMON by a second thread has -ECANCELED. The next STREAMON fences anew.
 *   import     DMABUF buffers from --exporter: as mmap, then ERROR.
 *   close      the file closed with a buffer with the driver: the fence signals (-EIO).
 *   output     the output node (-out for -cap): no fence, in either mode.
 *   pileup     EXPBUF and close 64 times: dma-bufs do not pile up (dma_buf/bufinfo).
 *   debugfs    the queue's state and stats files while streaming: the fields, legal
 *              buffer states, counters that grow and reset at STREAMON, the latency
 *              switch (videobuf2/latency, put back as found), the directory gone after
 *              close.
 *   unbind     (--unbind) the device unbound with a buffer with the driver, its dma-buf
 *              and the file held: the fence signals (-EIO); bound again, all works again.
 *
 * KTAP through kselftest.h: a case NODE/CASE per case (import without --exporter and
 * unbind without --unbind skip), after its checks ("# ...: ok" or "# ...: FAIL"). A
 * setup error is "Bail out!" (exit code 2), a case over 60 s too (exit code 3). Exit
 * code 0 when every case passed, 1 otherwise.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <linux/dma-buf.h>
#include <linux/sync_file.h>
#include <linux/videodev2.h>

#include <kselftest.h>

#include "vb2-guest.h"

#define PROG		"vb2-sync"
#define MAXP		VIDEO_MAX_PLANES
#define NBUF		4
#define WAIT_MS		5000	/* the longest a fence or a buffer may take */
#define CASE_SECONDS	60
#define LATENCY		"/sys/kernel/debug/videobuf2/latency"
#define UNBIND		"/sys/bus/platform/drivers/vb2-testdrv/unbind"
#define BIND		"/sys/bus/platform/drivers/vb2-testdrv/bind"

struct node {
	char name[64], path[300];
	int fd;
	bool mp, output;
	unsigned int type, nplanes, memory;
	unsigned int sizes[MAXP];
	unsigned int lengths[MAXP];	/* of the buffers, after REQBUFS */
	int inst;			/* the test driver's instance */
};

static struct node D, X;		/* the node under test, the exporter */
static bool implicit;
static const char *cur = "-";
static unsigned int checks, failed;
static int exp_fds[NBUF][MAXP];		/* the dma-bufs exported from D's buffers */

/* Reporting */

static double now(void)
{
	return vb2_now_ns() / 1e9;
}

/* The first failed checks of the case under way, repeated before its result. */
static char case_fails[4][200];
static unsigned int case_failed;

static bool check(bool ok, const char *fmt, ...)
{
	char what[200];
	va_list ap;

	checks++;
	failed += !ok;
	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	ksft_print_msg("%s %s: %s: %s\n", D.name, cur, what, ok ? "ok" : "FAIL");
	if (!ok && case_failed < ARRAY_SIZE(case_fails))
		snprintf(case_fails[case_failed], sizeof(case_fails[0]), "%s", what);
	case_failed += !ok;
	return ok;
}

static void note(const char *fmt, ...)
{
	va_list ap;

	printf("# %s %s: ", D.name, cur);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
}

/* A setup error: the program gives up (the cases not run yet have no result). */
static void __attribute__((noreturn)) die(const char *fmt, ...)
{
	va_list ap;

	printf("Bail out! %s %s: ", D.name, cur);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf(": setup error\n");
	exit(2);
}

/* The result @r of a call that setup needs: if it is an -errno, die() saying what failed. */
static int must(int r, const char *fmt, ...)
{
	char what[200];
	va_list ap;

	if (r >= 0)
		return r;
	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	die("%s: %s", what, strerror(-r));
}

static void on_alarm(int sig)
{
	char msg[200];
	int n;

	(void)sig;
	n = snprintf(msg, sizeof(msg), "Bail out! %s %s: HANG: no end after %d s\n", D.name,
		     cur, CASE_SECONDS);
	if (write(1, msg, n) < 0)
		_exit(4);
	_exit(3);
}

static const char *status_name(int s)
{
	static char buf[32];

	switch (s) {
	case 1: return "1 (signalled)";
	case 0: return "0 (active)";
	case -EIO: return "-EIO";
	case -ECANCELED: return "-ECANCELED";
	case -ENODEV: return "-ENODEV";
	}
	snprintf(buf, sizeof(buf), "%d", s);
	return buf;
}

static const char *rdy(bool ready)
{
	return ready ? "ready" : "NOT ready";
}

/* Files */

static bool read_file(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	size_t got = 0;
	ssize_t r;

	if (fd < 0)
		return false;
	while (got + 1 < len && (r = read(fd, buf + got, len - 1 - got)) > 0)
		got += r;
	close(fd);
	buf[got] = 0;
	return true;
}

static bool write_file(const char *path, const char *val)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	ssize_t r;

	if (fd < 0)
		return false;
	r = write(fd, val, strlen(val));
	close(fd);
	return r == (ssize_t)strlen(val);
}

static void tdrv_knob(const char *knob, const char *val)
{
	char path[128];

	snprintf(path, sizeof(path), "/sys/kernel/debug/vb2-testdrv/%d/%s", D.inst, knob);
	if (!write_file(path, val))
		die("cannot write %s to %s: %s", val, path, strerror(errno));
}

/* V4L2 */

static void node_open(struct node *n)
{
	struct v4l2_capability cap = { 0 };
	struct v4l2_format fmt = { 0 };
	const char *card = (const char *)cap.card;
	unsigned int p, caps;

	if (vb2_find_node(n->name, n->path, sizeof(n->path), NULL, 0))
		die("no video node named %s", n->name);
	n->fd = open(n->path, O_RDWR | O_NONBLOCK | O_CLOEXEC);
	if (n->fd < 0)
		die("open %s: %s", n->path, strerror(errno));
	must(vb2_ioctl(n->fd, VIDIOC_QUERYCAP, &cap), "QUERYCAP");
	if (strncmp(card, "vb2-testdrv-", 12))
		die("%s is not a test driver node (card %s)", n->path, card);
	n->inst = atoi(card + 12);
	caps = cap.device_caps;
	n->output = caps & (V4L2_CAP_VIDEO_OUTPUT | V4L2_CAP_VIDEO_OUTPUT_MPLANE);
	n->mp = caps & (n->output ? V4L2_CAP_VIDEO_OUTPUT_MPLANE : V4L2_CAP_VIDEO_CAPTURE_MPLANE);
	if (!n->output && !n->mp && !(caps & V4L2_CAP_VIDEO_CAPTURE))
		die("%s is neither a capture nor an output node", n->path);
	n->type = n->output ? (n->mp ? V4L2_BUF_TYPE_VIDEO_OUTPUT_MPLANE :
			       V4L2_BUF_TYPE_VIDEO_OUTPUT) :
			      (n->mp ? V4L2_BUF_TYPE_VIDEO_CAPTURE_MPLANE :
			       V4L2_BUF_TYPE_VIDEO_CAPTURE);
	fmt.type = n->type;
	must(vb2_ioctl(n->fd, VIDIOC_G_FMT, &fmt), "G_FMT");
	n->nplanes = n->mp ? fmt.fmt.pix_mp.num_planes : 1;
	for (p = 0; p < n->nplanes; p++)
		n->sizes[p] = n->mp ? fmt.fmt.pix_mp.plane_fmt[p].sizeimage : fmt.fmt.pix.sizeimage;
}

static void node_close(struct node *n)
{
	if (n->fd >= 0)
		close(n->fd);
	n->fd = -1;
}

/* REQBUFS of @count (exactly; else a setup error), the plane lengths from QUERYBUF. */
static int reqbufs(struct node *n, unsigned int memory, unsigned int count)
{
	struct v4l2_requestbuffers rb = { .count = count, .type = n->type, .memory = memory };
	struct v4l2_plane planes[MAXP];
	struct v4l2_buffer b;
	unsigned int p;
	int r = vb2_ioctl(n->fd, VIDIOC_REQBUFS, &rb);

	if (r)
		return r;
	n->memory = memory;
	if (!count)
		return 0;
	if (rb.count != count)
		die("REQBUFS gave %u buffers, not %u", rb.count, count);
	vb2_buf_init(&b, planes, n->type, memory, 0, MAXP);
	must(vb2_ioctl(n->fd, VIDIOC_QUERYBUF, &b), "QUERYBUF");
	for (p = 0; p < n->nplanes; p++)
		n->lengths[p] = n->mp ? planes[p].length : b.length;
	return 0;
}

static int qbuf(struct node *n, unsigned int idx, const int *dmafds)
{
	struct v4l2_plane planes[MAXP];
	struct v4l2_buffer b;
	unsigned int p;

	vb2_buf_init(&b, planes, n->type, n->memory, idx, n->nplanes);
	for (p = 0; p < n->nplanes; p++) {
		planes[p].m.fd = dmafds ? dmafds[p] : 0;
		planes[p].bytesused = n->output ? n->sizes[p] : 0;
	}
	if (!n->mp) {
		b.m.fd = planes[0].m.fd;
		b.bytesused = planes[0].bytesused;
	}
	return vb2_ioctl(n->fd, VIDIOC_QBUF, &b);
}

static int dqbuf(struct node *n, unsigned int *idx, unsigned int *flags)
{
	struct v4l2_plane planes[MAXP];
	struct v4l2_buffer b;
	int r;

	vb2_buf_init(&b, planes, n->type, n->memory, 0, MAXP);
	r = vb2_ioctl(n->fd, VIDIOC_DQBUF, &b);
	if (!r) {
		*idx = b.index;
		*flags = b.flags;
	}
	return r;
}

static int stream(struct node *n, bool on)
{
	int type = n->type;

	return vb2_ioctl(n->fd, on ? VIDIOC_STREAMON : VIDIOC_STREAMOFF, &type);
}

static int expbuf(struct node *n, unsigned int idx, unsigned int plane)
{
	struct v4l2_exportbuffer e = { .type = n->type, .index = idx, .plane = plane,
				       .flags = O_RDWR | O_CLOEXEC };

	must(vb2_ioctl(n->fd, VIDIOC_EXPBUF, &e), "EXPBUF buffer %u plane %u", idx, plane);
	return e.fd;
}

/* QBUF @idx (imported from @dmafds, or MMAP), STREAMON: the timer completes it a frame later. */
static void qbuf_streamon(unsigned int idx, const int *dmafds)
{
	must(qbuf(&D, idx, dmafds), "QBUF %u", idx);
	must(stream(&D, true), "STREAMON");
}

/* Fences */

static bool ready(int fd, short events, int timeout_ms)
{
	return must(vb2_poll(fd, events, timeout_ms), "poll");
}

/* Milliseconds until @fd is ready, or -1 if it was not within @timeout_ms. */
static int wait_ready(int fd, short events, int timeout_ms)
{
	double t = now();

	if (!ready(fd, events, timeout_ms))
		return -1;
	return (int)((now() - t) * 1000 + 0.5);
}

static int export_sync(int dmafd, unsigned int flags)
{
	struct dma_buf_export_sync_file s = { .flags = flags, .fd = -1 };

	must(vb2_ioctl(dmafd, DMA_BUF_IOCTL_EXPORT_SYNC_FILE, &s),
	     "DMA_BUF_IOCTL_EXPORT_SYNC_FILE");
	return s.fd;
}

static int sync_status(int syncfd)
{
	struct sync_file_info info = { 0 };

	must(vb2_ioctl(syncfd, SYNC_IOC_FILE_INFO, &info), "SYNC_IOC_FILE_INFO");
	return info.status;
}

/* Whether the buffer is still with the driver (the queue streams): nothing to dequeue. */
static bool with_driver(struct node *n)
{
	return !ready(n->fd, POLLIN | POLLRDNORM, 0);
}

struct probe {
	int sync_r, sync_rw;		/* sync_files (READ, RW) */
	bool sync_r_ready, sync_rw_ready, in_ready, out_ready;
	int status;
};

/* Look at a dma-buf: its fences as sync_files, and poll() on it. */
static void probe(int dmafd, struct probe *pr)
{
	pr->sync_r = export_sync(dmafd, DMA_BUF_SYNC_READ);
	pr->sync_rw = export_sync(dmafd, DMA_BUF_SYNC_RW);
	pr->sync_r_ready = ready(pr->sync_r, POLLIN, 0);
	pr->sync_rw_ready = ready(pr->sync_rw, POLLIN, 0);
	pr->status = sync_status(pr->sync_r);
	pr->in_ready = ready(dmafd, POLLIN, 0);
	pr->out_ready = ready(dmafd, POLLOUT, 0);
}

static void probe_close(struct probe *pr)
{
	close(pr->sync_r);
	close(pr->sync_rw);
}

/* A dma-buf of a buffer with the driver: with implicit sync an unsignalled fence, else none. */
static void check_pending(const char *what, const struct probe *pr)
{
	bool p = implicit;

	check(pr->sync_r_ready == !p && pr->sync_rw_ready == !p,
	      "%s with the driver: sync_file (READ, RW) %s, %s (want %s)", what,
	      rdy(pr->sync_r_ready), rdy(pr->sync_rw_ready), p ? "not ready" : "ready");
	check(pr->status == (p ? 0 : 1), "%s with the driver: fence status %s", what,
	      status_name(pr->status));
	check(pr->in_ready == !p && pr->out_ready == !p,
	      "%s with the driver: poll(POLLIN) on the dma-buf %s, poll(POLLOUT) %s (want %s)",
	      what, rdy(pr->in_ready), rdy(pr->out_ready), p ? "not ready" : "ready");
}

/* Probe @dmafd of a buffer just handed over: check_pending() if it still is with the driver. */
static void probe_pending(const char *what, int dmafd, struct probe *pr)
{
	probe(dmafd, pr);
	if (with_driver(&D))
		check_pending(what, pr);
	else
		note("the buffer completed before the checks ended");
}

/* A dma-buf whose buffer is not with the driver: ready, a fresh sync_file signalled. */
static void check_idle(const char *what, int dmafd)
{
	struct probe pr;

	probe(dmafd, &pr);
	check(pr.sync_r_ready && pr.sync_rw_ready && pr.status == 1 && pr.in_ready &&
	      pr.out_ready, "%s: a new sync_file %s, status %s, poll() on the dma-buf %s",
	      what, rdy(pr.sync_r_ready && pr.sync_rw_ready), status_name(pr.status),
	      rdy(pr.in_ready && pr.out_ready));
	probe_close(&pr);
}

/* The fence status of a buffer given back with an error: -EIO, or 1 without fences. */
static void check_error_status(const char *what, int syncfd)
{
	int s = sync_status(syncfd);

	check(s == (implicit ? -EIO : 1), "%s: fence status %s (want %s)", what,
	      status_name(s), implicit ? "-EIO" : "1");
}

/* The file closed or the device unbound: @pr's sync_file signals, -EIO if @busy (driver's). */
static void check_given_back(const char *what, struct probe *pr, bool busy)
{
	int ms = wait_ready(pr->sync_r, POLLIN, WAIT_MS), s = sync_status(pr->sync_r);

	check(ms >= 0, "%s: the sync_file ready after %d ms", what, ms);
	check(implicit && busy ? s == -EIO : s == 1 || (implicit && s == -EIO),
	      "%s%s: fence status %s", what, busy ? " (the buffer was with the driver)" : "",
	      status_name(s));
	probe_close(pr);
}

/* Wait for the fence (sync_file @syncfd); then the buffer can be dequeued: its flags, or ~0. */
static unsigned int fence_then_dqbuf(const char *what, int syncfd, unsigned int want_idx)
{
	unsigned int idx = ~0U, flags = ~0U;
	int ms = wait_ready(syncfd, POLLIN, WAIT_MS), r;

	if (!check(ms >= 0, "%s: the sync_file became ready after %d ms", what, ms))
		return ~0U;
	if (implicit)
		check(ready(D.fd, POLLIN | POLLRDNORM, 0),
		      "%s: once the fence signalled, the buffer can be dequeued", what);
	else
		ready(D.fd, POLLIN | POLLRDNORM, WAIT_MS);
	r = dqbuf(&D, &idx, &flags);
	if (!check(!r && idx == want_idx, "%s: DQBUF gives buffer %d%s%s", what, (int)idx,
		   r ? ", " : "", r ? strerror(-r) : ""))
		return ~0U;
	return flags;
}

/* fence_then_dqbuf(), and then whether DQBUF set ERROR as @error says. */
static void dqbuf_error(const char *what, int syncfd, unsigned int idx, bool error)
{
	unsigned int flags = fence_then_dqbuf(what, syncfd, idx);

	if (flags != ~0U)
		check(!(flags & V4L2_BUF_FLAG_ERROR) == !error, "%s: DQBUF %s ERROR", what,
		      error ? "with" : "without");
}

/* QBUF 0 (from @dmafds, or MMAP), STREAMON, probe @fds: again (3 times) if it completes first. */
static bool handover_probed(const int *dmafds, const int *fds, unsigned int n,
			    struct probe *pr)
{
	unsigned int attempt, i;

	for (attempt = 0; attempt < 3; attempt++) {
		qbuf_streamon(0, dmafds);
		for (i = 0; i < n; i++)
			probe(fds[i], &pr[i]);
		if (with_driver(&D))
			break;
		note("the buffer completed before the checks ended; again");
		for (i = 0; i < n; i++)
			probe_close(&pr[i]);
		stream(&D, false);
	}
	return check(attempt < 3, "the buffer stayed with the driver during the checks");
}

/* Cases */

static void setup_mmap(unsigned int nbuf)
{
	unsigned int b, p;

	node_open(&D);
	must(reqbufs(&D, V4L2_MEMORY_MMAP, nbuf), "REQBUFS MMAP %u", nbuf);
	for (b = 0; b < nbuf; b++)
		for (p = 0; p < D.nplanes; p++)
			exp_fds[b][p] = expbuf(&D, b, p);
}

static void close_exports(void)
{
	unsigned int b, p;

	for (b = 0; b < NBUF; b++)
		for (p = 0; p < MAXP; p++)
			if (exp_fds[b][p] >= 0)
				close(exp_fds[b][p]);
	memset(exp_fds, 0xff, sizeof(exp_fds));
}

static void teardown(void)
{
	node_close(&D);
	close_exports();
}

static void case_mmap(void)
{
	unsigned int p, i, pending = 0, early = 0, violations = 0;
	struct probe pr[MAXP + 2], *twice, *idle;
	int fds[MAXP + 2], again, s, s2;
	char what[64];

	setup_mmap(2);
	again = expbuf(&D, 0, 0);
	twice = &pr[D.nplanes];
	idle = &pr[D.nplanes + 1];
	/* Every plane of buffer 0, plane 0 exported a second time, buffer 1 (not queued). */
	memcpy(fds, exp_fds[0], sizeof(exp_fds[0]));
	fds[D.nplanes] = again;
	fds[D.nplanes + 1] = exp_fds[1][0];
	if (!handover_probed(NULL, fds, D.nplanes + 2, pr))
		goto out;
	for (p = 0; p < D.nplanes; p++) {
		snprintf(what, sizeof(what), "buffer 0 plane %u", p);
		check_pending(what, &pr[p]);
	}
	check_pending("buffer 0 plane 0, exported a second time", twice);
	check(idle->sync_r_ready && idle->status == 1 && idle->in_ready,
	      "buffer 1 (not queued): no fence (sync_file %s, status %s, dma-buf %s)",
	      rdy(idle->sync_r_ready), status_name(idle->status), rdy(idle->in_ready));
	probe_close(idle);

	dqbuf_error("buffer 0", pr[0].sync_r, 0, false);
	for (p = 0; p < D.nplanes; p++) {
		s = sync_status(pr[p].sync_r);
		s2 = sync_status(pr[p].sync_rw);
		check(ready(pr[p].sync_r, POLLIN, 0) && ready(pr[p].sync_rw, POLLIN, 0) &&
		      s == 1 && s2 == 1,
		      "buffer 0 plane %u after DQBUF: the sync_files ready, status %s, %s", p,
		      status_name(s), status_name(s2));
		check(ready(exp_fds[0][p], POLLIN, 0) && ready(exp_fds[0][p], POLLOUT, 0),
		      "buffer 0 plane %u after DQBUF: poll() on the dma-buf ready", p);
		snprintf(what, sizeof(what), "buffer 0 plane %u after DQBUF", p);
		check_idle(what, exp_fds[0][p]);
		probe_close(&pr[p]);
	}
	check(ready(twice->sync_r, POLLIN, 0) && sync_status(twice->sync_r) == 1,
	      "buffer 0 plane 0, exported a second time, after DQBUF: sync_file signalled");
	probe_close(twice);

	/* Cycles while streaming: the fence never signals while the buffer is with the driver. */
	for (i = 0; i < 4 && !qbuf(&D, i & 1, NULL); i++) {
		struct probe c;

		probe(exp_fds[i & 1][D.nplanes - 1], &c);
		if (implicit && c.sync_r_ready && with_driver(&D)) {
			check(false, "cycle %u: the fence signalled while the buffer was still "
			      "with the driver", i);
			violations++;
		}
		if (!implicit)
			check(c.sync_r_ready && c.in_ready, "cycle %u: no fence", i);
		pending += !c.sync_r_ready;
		early += c.sync_r_ready;
		snprintf(what, sizeof(what), "cycle %u", i);
		fence_then_dqbuf(what, c.sync_r, i & 1);
		s = sync_status(c.sync_r);
		check(s == 1, "cycle %u: fence status %s", i, status_name(s));
		probe_close(&c);
	}
	if (implicit)
		check(!violations && pending, "4 cycles while streaming: fence pending after "
		      "QBUF %u times, buffer already done %u times, signalled early %u times",
		      pending, early, violations);
	check(!stream(&D, false), "STREAMOFF");
out:
	close(again);
	teardown();
}

static void case_error(void)
{
	struct probe pr;

	setup_mmap(2);
	tdrv_knob("fail_done", "1");
	qbuf_streamon(0, NULL);
	probe_pending("buffer 0 plane 0", exp_fds[0][0], &pr);
	dqbuf_error("buffer 0", pr.sync_r, 0, true);
	tdrv_knob("fail_done", "0");
	check_error_status("buffer 0 (ERROR)", pr.sync_r);
	probe_close(&pr);
	check_idle("buffer 0 after DQBUF", exp_fds[0][0]);
	check(!stream(&D, false), "STREAMOFF");
	teardown();
}

static void case_streamoff(void)
{
	struct probe pr[2];
	char what[64];
	unsigned int b;

	setup_mmap(2);
	must(qbuf(&D, 0, NULL), "QBUF 0");
	qbuf_streamon(1, NULL);
	for (b = 0; b < 2; b++)
		probe(exp_fds[b][D.nplanes - 1], &pr[b]);
	if (with_driver(&D)) {
		check_pending("buffer 0", &pr[0]);
		check_pending("buffer 1", &pr[1]);
	} else {
		note("a buffer completed before the checks ended");
	}
	check(!stream(&D, false), "STREAMOFF with two buffers with the driver");
	/* -EIO: the test driver gives buffers back as ERROR at stop_streaming. */
	for (b = 0; b < 2; b++) {
		int ms = wait_ready(pr[b].sync_r, POLLIN, WAIT_MS);

		check(ms >= 0, "buffer %u: the sync_file ready %d ms after STREAMOFF", b, ms);
		snprintf(what, sizeof(what), "buffer %u after STREAMOFF", b);
		check_error_status(what, pr[b].sync_r);
		probe_close(&pr[b]);
		check_idle(what, exp_fds[b][D.nplanes - 1]);
	}
	teardown();
}

struct catcher {
	int dmafd;
	volatile bool stop;
	int caught;			/* a sync_file exported while its fence was active */
	unsigned long tries;
};

static void *catch_fence(void *arg)
{
	struct catcher *c = arg;

	while (!c->stop && c->caught < 0) {
		struct dma_buf_export_sync_file s = { .flags = DMA_BUF_SYNC_READ, .fd = -1 };
		struct sync_file_info info = { 0 };

		if (ioctl(c->dmafd, DMA_BUF_IOCTL_EXPORT_SYNC_FILE, &s))
			continue;
		c->tries++;
		if (!ioctl(s.fd, SYNC_IOC_FILE_INFO, &info) && info.status == 0)
			c->caught = s.fd;
		else
			close(s.fd);
	}
	return NULL;
}

static void case_start_fail(void)
{
	struct catcher c = { .caught = -1 };
	struct probe pr;
	int i, r = 0, fails = 0, s;
	pthread_t t;

	setup_mmap(2);
	c.dmafd = exp_fds[0][0];
	must(qbuf(&D, 0, NULL), "QBUF 0");
	tdrv_knob("fail_start", "1");
	/* Try to catch a fence in its few microseconds of life, up to 40 times. */
	for (i = 0; i < 40; i++) {
		c.stop = false;
		if (implicit && pthread_create(&t, NULL, catch_fence, &c))
			die("pthread_create");
		r = stream(&D, true);
		c.stop = true;
		if (implicit)
			pthread_join(t, NULL);
		fails += r == -EIO;
		if (r != -EIO || c.caught >= 0 || !implicit)
			break;
	}
	tdrv_knob("fail_start", "0");
	check(r == -EIO, "STREAMON with start_streaming failing: %s (want EIO), %d times",
	      r ? strerror(-r) : "succeeded", fails);
	check_idle("buffer 0 after the failed STREAMON", exp_fds[0][0]);
	if (c.caught >= 0) {
		s = sync_status(c.caught);
		check(ready(c.caught, POLLIN, 0) && s == -ECANCELED,
		      "a fence caught during the failed STREAMON (after %lu exports): %s, "
		      "status %s (want -ECANCELED)", c.tries,
		      ready(c.caught, POLLIN, 0) ? "signalled" : "NOT signalled",
		      status_name(s));
		close(c.caught);
	} else if (implicit) {
		note("no fence caught during %d failed STREAMONs (%lu exports): the window "
		     "is short, nothing to check", fails, c.tries);
	}
	/* The buffer is still queued: the next STREAMON hands it over with a new fence. */
	r = stream(&D, true);
	if (check(!r, "STREAMON again%s%s", r ? ": " : "", r ? strerror(-r) : "")) {
		probe_pending("buffer 0, handed over again", exp_fds[0][0], &pr);
		if (fence_then_dqbuf("buffer 0", pr.sync_r, 0) != ~0U)
			check(sync_status(pr.sync_r) == 1, "buffer 0: fence status %s",
			      status_name(sync_status(pr.sync_r)));
		probe_close(&pr);
	}
	stream(&D, false);
	teardown();
}

/* The exporter X at YUV420M 1920x1080 with 2 buffers, exported into @fds for D. */
static void setup_exporter(int fds[2][MAXP])
{
	struct v4l2_format fmt = { 0 };
	unsigned int b, p;

	node_open(&X);
	if (!X.mp)
		die("the exporter %s must be multi-planar", X.name);
	fmt.type = X.type;
	fmt.fmt.pix_mp.width = 1920;
	fmt.fmt.pix_mp.height = 1080;
	fmt.fmt.pix_mp.pixelformat = V4L2_PIX_FMT_YUV420M;
	must(vb2_ioctl(X.fd, VIDIOC_S_FMT, &fmt), "S_FMT on the exporter");
	X.nplanes = fmt.fmt.pix_mp.num_planes;
	must(reqbufs(&X, V4L2_MEMORY_MMAP, 2), "REQBUFS on the exporter");
	node_open(&D);
	if (X.nplanes < D.nplanes)
		die("the exporter has %u planes, the importer %u", X.nplanes, D.nplanes);
	for (p = 0; p < D.nplanes; p++)
		if (X.lengths[p] < D.sizes[p])
			die("exporter plane %u: %u bytes < %u", p, X.lengths[p], D.sizes[p]);
	for (b = 0; b < 2; b++)
		for (p = 0; p < D.nplanes; p++)
			fds[b][p] = expbuf(&X, b, p);
	must(reqbufs(&D, V4L2_MEMORY_DMABUF, 2), "REQBUFS DMABUF");
}

static void case_import(void)
{
	struct probe pr[MAXP];
	char what[64];
	unsigned int p;
	int s;

	/* exp_fds hold the exporter's dma-bufs here: teardown() closes them. */
	setup_exporter(exp_fds);
	if (!handover_probed(exp_fds[0], exp_fds[0], D.nplanes, pr))
		goto out;
	for (p = 0; p < D.nplanes; p++) {
		snprintf(what, sizeof(what), "imported buffer 0 plane %u", p);
		check_pending(what, &pr[p]);
	}
	check_idle("imported buffer 1 (not queued)", exp_fds[1][0]);
	dqbuf_error("imported buffer 0", pr[0].sync_r, 0, false);
	for (p = 0; p < D.nplanes; p++) {
		s = sync_status(pr[p].sync_r);
		check(s == 1, "imported buffer 0 plane %u after DQBUF: status %s", p,
		      status_name(s));
		snprintf(what, sizeof(what), "imported buffer 0 plane %u after DQBUF", p);
		check_idle(what, exp_fds[0][p]);
		probe_close(&pr[p]);
	}
	check(!stream(&D, false), "STREAMOFF");

	/* Imported, completed with ERROR. */
	tdrv_knob("fail_done", "1");
	qbuf_streamon(1, exp_fds[1]);
	probe_pending("imported buffer 1 plane 0", exp_fds[1][0], &pr[0]);
	dqbuf_error("imported buffer 1", pr[0].sync_r, 1, true);
	tdrv_knob("fail_done", "0");
	check_error_status("imported buffer 1 (ERROR)", pr[0].sync_r);
	probe_close(&pr[0]);
	check(!stream(&D, false), "STREAMOFF");
out:
	node_close(&D);
	node_close(&X);
	close_exports();
}

static void case_close(void)
{
	struct probe pr;
	bool busy;

	setup_mmap(2);
	qbuf_streamon(0, NULL);
	probe_pending("buffer 0", exp_fds[0][0], &pr);
	busy = with_driver(&D);
	/* The driver gives back what it has as ERROR. */
	node_close(&D);
	check_given_back("the file closed", &pr, busy);
	check_idle("the file closed", exp_fds[0][0]);
	teardown();
}

/* Output queues put no fences: their buffers are read, not written. */
static void case_output(void)
{
	struct node cap = D;
	char what[128];
	int fd;

	snprintf(D.name, sizeof(D.name), "%.*s-out", (int)strlen(cap.name) - 4, cap.name);
	node_open(&D);
	must(reqbufs(&D, V4L2_MEMORY_MMAP, 2), "REQBUFS MMAP on %s", D.name);
	fd = expbuf(&D, 0, 0);
	qbuf_streamon(0, NULL);
	snprintf(what, sizeof(what), "%s buffer 0 with the driver: no fence", D.name);
	check_idle(what, fd);
	check(!stream(&D, false), "STREAMOFF");
	node_close(&D);
	close(fd);
	D = cap;
}

/* The "Total N objects" of dma_buf/bufinfo: every dma-buf in the system. */
static int dmabuf_count(void)
{
	static char buf[1 << 20];
	const char *t = buf;
	char word[16];
	int n;

	if (!read_file("/sys/kernel/debug/dma_buf/bufinfo", buf, sizeof(buf)))
		return -1;
	/* Each buffer has a "Total N devices attached" line too. */
	while ((t = strstr(t, "\nTotal ")))
		if (sscanf(++t, "Total %d %15s", &n, word) == 2 && !strcmp(word, "objects,"))
			return n;
	return -1;
}

static void case_pileup(void)
{
	struct probe pr;
	int before, after, i;

	setup_mmap(2);
	before = dmabuf_count();
	if (before < 0) {
		note("no /sys/kernel/debug/dma_buf/bufinfo: skipped");
		teardown();
		return;
	}
	for (i = 0; i < 64; i++)
		close(expbuf(&D, 1, 0));
	/* A QBUF looks at the list too. */
	qbuf_streamon(1, NULL);
	probe(exp_fds[1][0], &pr);
	fence_then_dqbuf("buffer 1", pr.sync_r, 1);
	probe_close(&pr);
	after = dmabuf_count();
	check(after - before <= 1, "64 times EXPBUF and close: %d dma-bufs before, %d after",
	      before, after);
	stream(&D, false);
	teardown();
	usleep(100 * 1000);
	after = dmabuf_count();
	check(after <= before - (int)(2 * D.nplanes), "all closed: %d dma-bufs left, %d before "
	      "(with %u of ours)", after, before, 2 * D.nplanes);
}

/* debugfs */

static char qdir[400];				/* the queue's directory */
static char state[16384], stats[4096];		/* its files, as last read */

/* Read file @name of the queue's directory into @buf. */
static bool read_q(const char *name, char *buf, size_t len)
{
	char path[420];

	snprintf(path, sizeof(path), "%s/%s", qdir, name);
	return read_file(path, buf, len);
}

/* The value of "key: " in @text, in @out; "" if there is none. */
static const char *field_str(const char *text, const char *key, char *out, size_t len)
{
	char k[64];
	const char *s;

	snprintf(k, sizeof(k), "\n%s: ", key);
	if (!strncmp(text, k + 1, strlen(k + 1)))
		s = text + strlen(k + 1);
	else if ((s = strstr(text, k)))
		s += strlen(k);
	else
		return "";
	snprintf(out, len, "%.*s", (int)strcspn(s, "\n"), s);
	return out;
}

/* The same as a number, or -1. */
static long field(const char *text, const char *key)
{
	char v[64];

	return *field_str(text, key, v, sizeof(v)) ? strtol(v, NULL, 10) : -1;
}

/* The buffer lines "buffer N: STATE ..." of state: how many, how many in @st_want. */
static unsigned int buffer_lines(const char *st_want, unsigned int *in_state, bool *legal)
{
	static const char *const states[] = {
		"dequeued", "in-request", "preparing", "queued", "active", "done", "error",
	};
	const char *s = state;
	unsigned int n = 0, i, idx;

	*in_state = 0;
	*legal = true;
	while ((s = strstr(s, "\nbuffer "))) {
		char st[16] = "";
		bool ok = false;

		if (sscanf(++s, "buffer %u: %15s", &idx, st) != 2 || idx != n) {
			*legal = false;
			continue;
		}
		for (i = 0; i < ARRAY_SIZE(states); i++)
			ok |= !strcmp(st, states[i]);
		*legal &= ok;
		*in_state += !strcmp(st, st_want);
		n++;
	}
	return n;
}

/* videobuf2/latency: checks it switches, then leaves it on; returns what it was (-1). */
static int latency_on(void)
{
	char tmp[128];
	int was = read_file(LATENCY, tmp, sizeof(tmp)) ? atoi(tmp) : -1;

	check(was >= 0 && write_file(LATENCY, "0") && read_q("stats", stats, sizeof(stats)) &&
	      strstr(stats, "latency: off"),
	      "%s was %d; written 0, stats says latency: off", LATENCY, was);
	check(write_file(LATENCY, "1") && read_file(LATENCY, tmp, sizeof(tmp)) &&
	      atoi(tmp) == 1 && read_q("stats", stats, sizeof(stats)) &&
	      !strstr(stats, "latency: off"),
	      "%s: written 1, reads 1, stats no longer says latency: off", LATENCY);
	check(!write_file(LATENCY, "2"), "%s refuses 2", LATENCY);
	return was;
}

/* The allocator of the node's test driver instance (0 vmalloc, 1 dma-contig, 2 dma-sg). */
static int testdrv_allocator(void)
{
	char params[256], *s = params;
	int i;

	if (!read_file("/sys/module/vb2_testdrv/parameters/allocators", params, sizeof(params)))
		return -1;
	for (i = 0; i < D.inst && s; i++)
		s = strchr(s, ',') ? strchr(s, ',') + 1 : NULL;
	return s && atoi(s) >= 0 && atoi(s) < 3 ? atoi(s) : -1;
}

/* The state file of the queue, streaming with NBUF buffers queued. */
static void check_state_streaming(void)
{
	/* What the allocator's alloc op is called (ours or upstream's), and what not. */
	static const char *const allocs[][3] = {
		{ "vmalloc", "vm", "contig" },
		{ "dma-contig", "contig", "vmalloc" },
		{ "dma-sg", "sg", "contig" },
	};
	int alloc = testdrv_allocator();
	unsigned int n, active;
	char tmp[128];
	bool legal;

	read_q("state", state, sizeof(state));
	check(!strncmp(state, "name: ", 6), "state: starts with the name");
	check(field(state, "type") == (long)D.type && strstr(state, "(capture)\n"),
	      "state: type %s", field_str(state, "type", tmp, sizeof(tmp)));
	check(!strcmp(field_str(state, "memory", tmp, sizeof(tmp)), "mmap"),
	      "state: memory %s", tmp);
	field_str(state, "allocator", tmp, sizeof(tmp));
	check(tmp[0] && (alloc < 0 || (strstr(tmp, allocs[alloc][1]) &&
					!strstr(tmp, allocs[alloc][2]))),
	      "state: allocator %s (%s)", tmp, alloc < 0 ? "?" : allocs[alloc][0]);
	check(strstr(field_str(state, "driver", tmp, sizeof(tmp)), "tdrv_buf_queue") != NULL,
	      "state: driver %s", tmp);
	check(field(state, "streaming") == 1 && field(state, "start_streaming_called") == 1,
	      "state: streaming %ld, start_streaming_called %ld", field(state, "streaming"),
	      field(state, "start_streaming_called"));
	check(field(state, "num_buffers") == NBUF, "state: num_buffers %ld",
	      field(state, "num_buffers"));
	check(field(state, "error") == 0 && field(state, "min_queued_buffers") >= 0 &&
	      field(state, "max_num_buffers") >= NBUF && field(state, "waiting_for_buffers") >= 0,
	      "state: error, min_queued_buffers, max_num_buffers, waiting_for_buffers");
	check(field(state, "owned_by_drv_count") >= 0 && field(state, "queued") == NBUF &&
	      field(state, "done") >= 0, "state: owned_by_drv_count %ld, queued %ld, done %ld",
	      field(state, "owned_by_drv_count"), field(state, "queued"), field(state, "done"));
	n = buffer_lines("active", &active, &legal);
	check(n == NBUF && legal && active >= 1,
	      "state: %u buffer lines (want %u) in legal states, %u active", n, NBUF, active);
}

/* The stats file while streaming, then after three frames; false: no frame came. */
static bool check_stats_grow(void)
{
	unsigned long long mn = 0, mean = 0, mx = 0;
	long done1, done2, deq2, lat1, lat2, q2;
	unsigned int b, idx, flags, n, active;
	const char *l;
	bool legal;

	check(read_q("stats", stats, sizeof(stats)), "%s/stats exists", qdir);
	done1 = field(stats, "done");
	lat1 = field(stats, "latency_count");
	check(!strncmp(stats, "queued: ", 8) && field(stats, "queued") >= 0 && done1 >= 0 &&
	      field(stats, "error") >= 0 && field(stats, "dequeued") >= 0 &&
	      field(stats, "requeued_by_driver") >= 0 && field(stats, "reclaimed_at_stop") >= 0 &&
	      lat1 >= 0 && strstr(stats, "\nlatency_histogram_ms: <1:"),
	      "stats: the fields (queued %ld, done %ld, latency_count %ld)",
	      field(stats, "queued"), done1, lat1);
	/* Three frames, each buffer queued again. */
	for (b = 0; b < 3; b++) {
		if (!ready(D.fd, POLLIN, WAIT_MS) || dqbuf(&D, &idx, &flags))
			return check(false, "stats: frame %u dequeued", b);
		qbuf(&D, idx, NULL);
	}
	read_q("stats", stats, sizeof(stats));
	done2 = field(stats, "done");
	deq2 = field(stats, "dequeued");
	lat2 = field(stats, "latency_count");
	q2 = field(stats, "queued");
	check(done2 >= done1 + 3 && done2 >= 3 && deq2 >= 3 && lat2 >= lat1 + 3 && q2 >= 3,
	      "stats grow: done %ld -> %ld, dequeued %ld, latency_count %ld -> %ld, queued %ld",
	      done1, done2, deq2, lat1, lat2, q2);
	l = strstr(stats, "\nlatency_us: ");
	check(l && sscanf(l, "\nlatency_us: min %llu mean %llu max %llu", &mn, &mean, &mx) == 3 &&
	      mn <= mean && mean <= mx && mx > 0,
	      "stats: latency_us min %llu <= mean %llu <= max %llu", mn, mean, mx);
	read_q("state", state, sizeof(state));
	n = buffer_lines("active", &active, &legal);
	check(n == NBUF && legal, "state while streaming: %u buffer lines in legal states", n);
	return true;
}

/* STREAMOFF: every buffer dequeued; STREAMON again counts from zero; REQBUFS(0). */
static void check_after_streamoff(void)
{
	unsigned int n, dequeued, b;
	bool legal;
	int r;

	check(!stream(&D, false), "STREAMOFF");
	read_q("state", state, sizeof(state));
	n = buffer_lines("dequeued", &dequeued, &legal);
	check(field(state, "streaming") == 0 && n == NBUF && dequeued == NBUF &&
	      field(state, "owned_by_drv_count") == 0,
	      "state after STREAMOFF: streaming %ld, %u of %u buffers dequeued, "
	      "owned_by_drv_count %ld", field(state, "streaming"), dequeued, n,
	      field(state, "owned_by_drv_count"));
	/* STREAMON counts from zero (the timer completes nothing for a frame period). */
	for (b = 0; b < NBUF; b++)
		qbuf(&D, b, NULL);
	if (!stream(&D, true)) {
		read_q("stats", stats, sizeof(stats));
		/* QBUF counts in "queued": these came before STREAMON. */
		check(field(stats, "dequeued") == 0 && field(stats, "queued") == 0 &&
		      field(stats, "done") == 0,
		      "stats reset at STREAMON: dequeued %ld, queued %ld, done %ld",
		      field(stats, "dequeued"), field(stats, "queued"), field(stats, "done"));
		stream(&D, false);
	}
	r = reqbufs(&D, V4L2_MEMORY_MMAP, 0);
	close_exports();
	usleep(50 * 1000);
	read_q("state", state, sizeof(state));
	check(!r && field(state, "num_buffers") == 0,
	      "REQBUFS 0: num_buffers %ld, the directory stays", field(state, "num_buffers"));
	/* Buffers again, so that this file owns the queue: closing it releases the queue. */
	must(reqbufs(&D, V4L2_MEMORY_MMAP, 1), "REQBUFS 1");
}

static void case_debugfs(void)
{
	int latency_was = -1;
	struct stat st;
	unsigned int b;

	setup_mmap(NBUF);
	snprintf(qdir, sizeof(qdir), "/sys/kernel/debug/videobuf2/%.64s-cap", D.path + 5);
	if (check(read_q("state", state, sizeof(state)), "%s/state exists after REQBUFS",
		  qdir)) {
		/* The timing: off, then on for this stream; put back as found at the end. */
		latency_was = latency_on();
		for (b = 0; b < NBUF; b++)
			must(qbuf(&D, b, NULL), "QBUF %u", b);
		must(stream(&D, true), "STREAMON");
		check_state_streaming();
		check_stats_grow();
		check_after_streamoff();
	}
	node_close(&D);
	check(stat(qdir, &st) < 0 && errno == ENOENT, "%s gone after close", qdir);
	memset(exp_fds, 0xff, sizeof(exp_fds));
	if (latency_was >= 0)
		write_file(LATENCY, latency_was ? "1" : "0");
}

static void case_unbind(void)
{
	char pdev[64], path[300];
	unsigned int idx, flags;
	struct probe pr;
	bool bound, busy;
	int r, i;

	setup_mmap(2);
	snprintf(pdev, sizeof(pdev), "vb2-testdrv.%d", D.inst);
	qbuf_streamon(0, NULL);
	probe_pending("buffer 0", exp_fds[0][0], &pr);
	busy = with_driver(&D);
	check(write_file(UNBIND, pdev), "unbind %s with the file, a buffer and its dma-buf held",
	      pdev);
	check_given_back("after the unbind", &pr, busy);
	check(ready(exp_fds[0][0], POLLIN, 0), "after the unbind: poll() on the dma-buf ready");
	r = dqbuf(&D, &idx, &flags);
	check(r == -ENODEV || r == -EINVAL || r == -EAGAIN || r == -EPIPE,
	      "after the unbind: DQBUF %s", r ? strerror(-r) : "succeeded");
	check_idle("buffer 0 after the unbind", exp_fds[0][0]);
	teardown();
	bound = write_file(BIND, pdev);
	check(bound, "bind %s again", pdev);
	for (i = 0; bound && i < 50 && vb2_find_node(D.name, path, sizeof(path), NULL, 0); i++)
		usleep(100 * 1000);
	if (!check(bound && i < 50, "%s is back", D.name))
		return;
	/* It streams again, fenced as before. */
	setup_mmap(2);
	qbuf_streamon(0, NULL);
	probe_pending("after the rebind, buffer 0", exp_fds[0][0], &pr);
	fence_then_dqbuf("after the rebind, buffer 0", pr.sync_r, 0);
	probe_close(&pr);
	stream(&D, false);
	teardown();
}

/* needs: 'x' the case needs --exporter, 'u' --unbind. */
static const struct {
	const char *name;
	void (*fn)(void);
	char needs;
} cases[] = {
	{ "mmap", case_mmap, 0 }, { "error", case_error, 0 },
	{ "streamoff", case_streamoff, 0 }, { "start-fail", case_start_fail, 0 },
	{ "import", case_import, 'x' }, { "close", case_close, 0 }, { "output", case_output, 0 },
	{ "pileup", case_pileup, 0 }, { "debugfs", case_debugfs, 0 },
	{ "unbind", case_unbind, 'u' },
};

static void usage(void)
{
	fprintf(stderr, "usage: %s --dev NAME [--exporter NAME] [--unbind] [--only CASE,..]\n",
		PROG);
	exit(2);
}

static bool selected(const char *only, const char *name)
{
	size_t l = strlen(name);
	const char *s = only;

	if (!only)
		return true;
	for (; (s = strstr(s, name)); s += l)
		if ((s == only || s[-1] == ',') && (s[l] == ',' || !s[l]))
			return true;
	return false;
}

/* One case, a KTAP result of its own: NODE/CASE ("vb2-testdrv-0-cap/mmap"). */
static void run_case(unsigned int i, bool unbind)
{
	char name[128];
	unsigned int k;
	double t;

	cur = cases[i].name;
	snprintf(name, sizeof(name), "%s/%s", D.name, cur);
	if (cases[i].needs == 'x' && !X.name[0])
		return ksft_test_result_code(KSFT_SKIP, name, "no --exporter");
	if (cases[i].needs == 'u' && !unbind)
		return ksft_test_result_code(KSFT_SKIP, name, "no --unbind");
	case_failed = 0;
	t = now();
	alarm(CASE_SECONDS);
	cases[i].fn();
	alarm(0);
	note("done in %.1f s", now() - t);
	for (k = 0; k < case_failed && k < ARRAY_SIZE(case_fails); k++)
		ksft_print_msg("failed: %s\n", case_fails[k]);
	ksft_test_result_code(case_failed ? KSFT_FAIL : KSFT_PASS, name, NULL);
}

int main(int argc, char **argv)
{
	const char *only = NULL;
	bool unbind = false;
	unsigned int i, n = 0;
	char buf[32];
	double t0;
	int a;

	memset(exp_fds, 0xff, sizeof(exp_fds));
	D.fd = X.fd = -1;
	for (a = 1; a < argc; a++) {
		if (!strcmp(argv[a], "--dev") && a + 1 < argc)
			snprintf(D.name, sizeof(D.name), "%s", argv[++a]);
		else if (!strcmp(argv[a], "--exporter") && a + 1 < argc)
			snprintf(X.name, sizeof(X.name), "%s", argv[++a]);
		else if (!strcmp(argv[a], "--only") && a + 1 < argc)
			only = argv[++a];
		else if (!strcmp(argv[a], "--unbind"))
			unbind = true;
		else
			usage();
	}
	if (!D.name[0])
		usage();
	signal(SIGALRM, on_alarm);
	ksft_print_header();
	if (!read_file("/sys/kernel/debug/videobuf2/implicit_sync", buf, sizeof(buf)))
		ksft_print_msg("no /sys/kernel/debug/videobuf2/implicit_sync (upstream's "
			       "videobuf2?): no fences expected\n");
	else
		implicit = atoi(buf) == 1;
	ksft_print_msg("dev=%s implicit_sync=%d: %s\n", D.name, implicit,
		       implicit ? "capture buffers with the driver fence their dma-bufs" :
				  "no fences: all is ready at once");
	for (i = 0; i < ARRAY_SIZE(cases); i++)
		n += selected(only, cases[i].name);
	ksft_set_plan(n);
	t0 = now();
	for (i = 0; i < ARRAY_SIZE(cases); i++)
		if (selected(only, cases[i].name))
			run_case(i, unbind);
	cur = "-";
	ksft_print_msg("dev=%s implicit_sync=%d checks=%u failed=%u %.1f s\n", D.name, implicit,
		       checks, failed, now() - t0);
	ksft_finished();
}
