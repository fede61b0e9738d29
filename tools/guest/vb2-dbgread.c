// SPDX-License-Identifier: GPL-2.0
/*
 * vb2-dbgread: read every queue's debugfs files (/sys/kernel/debug/videobuf2/<queue>/
 * state and stats, videobuf2-debugfs.c) in a tight loop, while something else makes
 * queues come and go, stream, and drivers unbind. A guest program of the test harness
 * (tools/plans/sync.plan).
 *
 *   vb2-dbgread [--seconds N] [--threads N] [--min-queues N] [--root DIR] [-v]
 *
 * Even threads open, read and close each file; odd threads keep every file open and read
 * it again from the start (lseek) each round, so that they hold files whose queue goes
 * away (reads of such a file must fail, with EIO, and nothing else may happen to it).
 * It runs until SIGTERM or SIGINT, or for --seconds (default 600). Meanwhile the main
 * thread switches the latency timing (<root>/latency) on and off every 200 ms, so that
 * buffers go to the driver and complete on both sides of each switch, and puts it back
 * as it was at the end (toggles=N in the last line; a failed switch is unexpected).
 *
 * What may fail: open() with ENOENT (the directory went between readdir and open), a
 * read with EIO or ENODEV (the file was removed while open). Anything else, a file whose
 * text is not what videobuf2-debugfs.c writes (state begins with "name: " and has
 * "num_buffers: "; stats begins with "queued: " and has "latency_histogram_ms:"; both
 * end with a newline), or a read that takes more than 20 s (a HANG) is a failure. At the
 * end:
 *   vb2-dbgread: reads=N bytes=N queues=N ENOENT=N EIO=N ENODEV=N read_after_removal=N
 *                max_read_ms=N toggles=N unexpected=N bad=N PASS|FAIL
 * (read_after_removal: a held file read once more after its directory was seen gone,
 * successfully: it raced with the removal; counted, not a failure).
 * queues is the count of distinct directory names seen; fewer than --min-queues
 * (default 1) fails. The exit code is 0 on PASS, 1 on FAIL, 2 for a usage error, 3 on a
 * hang.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "vb2-guest.h"

#define PROG		"vb2-dbgread"
#define MAX_THREADS	8
#define MAX_HELD	256
#define MAX_NAMES	1024
#define MAX_REPORTED	20
#define STALL		20	/* seconds in one read: a hang */
#define NERR		200

struct held {
	char path[320];
	int fd;
};

struct thread {
	pthread_t tid;
	int no;
	volatile double busy_since;	/* 0 when not inside a call */
	volatile unsigned long rounds;
	struct held held[MAX_HELD];
	unsigned int nheld;
	char buf[1 << 17];
};

static struct thread threads[MAX_THREADS];
static unsigned int nthreads = 2;
static volatile sig_atomic_t stop;
static bool verbose;
static const char *root = "/sys/kernel/debug/videobuf2";
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned long reads, bytes, unexpected, bad, gone_ok, errs[NERR + 1];
static double max_read;
static char names[MAX_NAMES][64];
static unsigned int nnames;

static double now(void)
{
	return vb2_now_ns() / 1e9;
}

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static void note_name(const char *name)
{
	unsigned int i;

	pthread_mutex_lock(&lock);
	for (i = 0; i < nnames; i++)
		if (!strncmp(names[i], name, sizeof(names[0]) - 1))
			break;
	if (i == nnames && nnames < MAX_NAMES) {
		snprintf(names[nnames++], sizeof(names[0]), "%.63s", name);
		if (verbose)
			printf("%s: queue %s\n", PROG, name);
	}
	pthread_mutex_unlock(&lock);
}

/* An error @e of @what on @path: counted; complained about unless it is expected. */
static void error(const char *what, const char *path, int e, bool expected)
{
	pthread_mutex_lock(&lock);
	errs[e > 0 && e < NERR ? e : NERR]++;
	if (!expected && ++unexpected <= MAX_REPORTED)
		printf("%s: UNEXPECTED %s %s: %s\n", PROG, what, path, strerror(e));
	pthread_mutex_unlock(&lock);
}

static void judge(const char *path, const char *text, size_t len, double secs)
{
	const char *file = strrchr(path, '/') + 1;
	bool ok;

	if (!strcmp(file, "state"))
		ok = !strncmp(text, "name: ", 6) && strstr(text, "\nnum_buffers: ");
	else
		ok = !strncmp(text, "queued: ", 8) && strstr(text, "\nlatency_histogram_ms:");
	ok = ok && len && text[len - 1] == '\n';
	pthread_mutex_lock(&lock);
	reads++;
	bytes += len;
	if (secs > max_read)
		max_read = secs;
	if (!ok && ++bad <= MAX_REPORTED)
		printf("%s: BAD %s (%zu bytes):\n%.*s\n", PROG, path, len, (int)len, text);
	pthread_mutex_unlock(&lock);
}

/* Read @fd from where it is to its end; the length, or -errno. */
static long read_all(struct thread *t, int fd)
{
	size_t got = 0;
	ssize_t r;

	while (got + 1 < sizeof(t->buf)) {
		r = read(fd, t->buf + got, sizeof(t->buf) - 1 - got);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -errno;
		if (!r)
			break;
		got += r;
	}
	t->buf[got] = 0;
	return got;
}

static void read_once(struct thread *t, const char *path)
{
	double t0 = now();
	long n;
	int fd;

	t->busy_since = t0;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		t->busy_since = 0;
		error("open", path, errno, errno == ENOENT);
		return;
	}
	n = read_all(t, fd);
	close(fd);
	t->busy_since = 0;
	if (n < 0)
		error("read", path, -n, n == -EIO || n == -ENODEV);
	else
		judge(path, t->buf, n, now() - t0);
}

static struct held *held_get(struct thread *t, const char *path)
{
	unsigned int i;

	for (i = 0; i < t->nheld; i++)
		if (!strcmp(t->held[i].path, path))
			return &t->held[i];
	if (t->nheld == MAX_HELD)
		return NULL;
	snprintf(t->held[t->nheld].path, sizeof(t->held[0].path), "%s", path);
	t->held[t->nheld].fd = -1;
	return &t->held[t->nheld++];
}

static void held_drop(struct thread *t, struct held *h)
{
	if (h->fd >= 0)
		close(h->fd);
	*h = t->held[--t->nheld];
}

static void read_held(struct thread *t, const char *path)
{
	struct held *h = held_get(t, path);
	double t0 = now();
	long n;

	if (!h) {
		read_once(t, path);
		return;
	}
	t->busy_since = t0;
	if (h->fd < 0) {
		h->fd = open(path, O_RDONLY | O_CLOEXEC);
		if (h->fd < 0) {
			t->busy_since = 0;
			error("open", path, errno, errno == ENOENT);
			held_drop(t, h);
			return;
		}
	}
	if (lseek(h->fd, 0, SEEK_SET) < 0) {
		n = -errno;
	} else {
		n = read_all(t, h->fd);
	}
	t->busy_since = 0;
	if (n < 0) {
		/* The queue went: this file is dead, open the new one next round. */
		error("read (held)", path, -n, n == -EIO || n == -ENODEV);
		held_drop(t, h);
		return;
	}
	judge(path, t->buf, n, now() - t0);
}

/*
 * Files held open whose directory is gone: read once more (EIO expected; a read that
 * still works is counted, it may have raced with the removal), close.
 */
static void held_sweep(struct thread *t)
{
	unsigned int i = 0;

	while (i < t->nheld) {
		struct held *h = &t->held[i];
		char dir[320];
		long n;

		snprintf(dir, sizeof(dir), "%s", h->path);
		*strrchr(dir, '/') = 0;
		if (h->fd < 0 || access(dir, F_OK) == 0) {
			i++;
			continue;
		}
		t->busy_since = now();
		n = lseek(h->fd, 0, SEEK_SET) < 0 ? -errno : read_all(t, h->fd);
		t->busy_since = 0;
		if (n < 0) {
			error("read (gone)", h->path, -n, n == -EIO || n == -ENODEV);
		} else {
			pthread_mutex_lock(&lock);
			gone_ok++;
			pthread_mutex_unlock(&lock);
		}
		held_drop(t, h);
	}
}

static void *reader(void *arg)
{
	struct thread *t = arg;
	bool hold = t->no & 1;

	while (!stop) {
		struct dirent *e;
		DIR *dir;

		t->busy_since = now();
		dir = opendir(root);
		t->busy_since = 0;
		if (!dir) {
			error("opendir", root, errno, false);
			sleep(1);
			continue;
		}
		while (!stop && (e = readdir(dir))) {
			char path[320];

			if (e->d_name[0] == '.' || (e->d_type != DT_DIR && e->d_type != DT_UNKNOWN))
				continue;
			note_name(e->d_name);
			snprintf(path, sizeof(path), "%.200s/%.64s/state", root, e->d_name);
			hold ? read_held(t, path) : read_once(t, path);
			snprintf(path, sizeof(path), "%.200s/%.64s/stats", root, e->d_name);
			hold ? read_held(t, path) : read_once(t, path);
		}
		closedir(dir);
		if (hold)
			held_sweep(t);
		t->rounds++;
	}
	while (t->nheld)
		held_drop(t, &t->held[0]);
	return NULL;
}

/* The latency switch: its value, or -1 if the kernel has none (upstream, no debugfs). */
static int read_latency(const char *path)
{
	char buf[8] = "";
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t r;

	if (fd < 0)
		return -1;
	r = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	return r > 0 ? atoi(buf) : -1;
}

static bool write_latency(const char *path, const char *val)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	bool ok;

	if (fd < 0)
		return false;
	ok = write(fd, val, strlen(val)) == (ssize_t)strlen(val);
	close(fd);
	return ok;
}

static void usage(void)
{
	fprintf(stderr, "usage: %s [--seconds N] [--threads N] [--min-queues N] [--root DIR] "
		"[-v]\n", PROG);
	exit(2);
}

int main(int argc, char **argv)
{
	unsigned long rounds = 0, toggles = 0;
	unsigned int i, min_queues = 1;
	char latency[300];
	int latency_was;
	double t0, seconds = 600;
	bool hang = false, fail;
	int a;

	setvbuf(stdout, NULL, _IOLBF, 0);
	for (a = 1; a < argc; a++) {
		if (!strcmp(argv[a], "--seconds") && a + 1 < argc)
			seconds = atof(argv[++a]);
		else if (!strcmp(argv[a], "--threads") && a + 1 < argc)
			nthreads = atoi(argv[++a]);
		else if (!strcmp(argv[a], "--min-queues") && a + 1 < argc)
			min_queues = atoi(argv[++a]);
		else if (!strcmp(argv[a], "--root") && a + 1 < argc)
			root = argv[++a];
		else if (!strcmp(argv[a], "-v"))
			verbose = true;
		else
			usage();
	}
	if (!nthreads || nthreads > MAX_THREADS)
		usage();
	signal(SIGTERM, on_signal);
	signal(SIGINT, on_signal);
	t0 = now();
	printf("%s: %u threads reading %s/*/{state,stats}\n", PROG, nthreads, root);
	for (i = 0; i < nthreads; i++) {
		threads[i].no = i;
		if (pthread_create(&threads[i].tid, NULL, reader, &threads[i])) {
			perror("pthread_create");
			return 2;
		}
	}
	snprintf(latency, sizeof(latency), "%s/latency", root);
	latency_was = read_latency(latency);
	while (!stop && now() - t0 < seconds) {
		usleep(200 * 1000);
		if (latency_was >= 0) {
			if (write_latency(latency, toggles % 2 ? "0" : "1"))
				toggles++;
			else
				__atomic_add_fetch(&unexpected, 1, __ATOMIC_RELAXED);
		}
		for (i = 0; i < nthreads; i++) {
			double b = threads[i].busy_since;

			if (b && now() - b > STALL && !hang) {
				hang = true;
				printf("%s: HANG: thread %u in a call for %.0f s\n", PROG, i,
				       now() - b);
			}
		}
		if (hang)
			break;
	}
	stop = 1;
	if (hang) {
		fflush(stdout);
		_exit(3);
	}
	for (i = 0; i < nthreads; i++) {
		pthread_join(threads[i].tid, NULL);
		rounds += threads[i].rounds;
	}
	if (latency_was >= 0 && !write_latency(latency, latency_was ? "1" : "0"))
		unexpected++;
	fail = unexpected || bad || nnames < min_queues || !reads;
	printf("%s: %.1f s rounds=%lu reads=%lu bytes=%lu queues=%u ENOENT=%lu EIO=%lu "
	       "ENODEV=%lu read_after_removal=%lu max_read_ms=%.1f toggles=%lu unexpected=%lu "
	       "bad=%lu %s\n",
	       PROG, now() - t0, rounds, reads, bytes, nnames, errs[ENOENT], errs[EIO],
	       errs[ENODEV], gone_ok, max_read * 1000, toggles, unexpected, bad,
	       fail ? "FAIL" : "PASS");
	return fail ? 1 : 0;
}
