// SPDX-License-Identifier: GPL-2.0
/*
 * vb2-stress: a seeded, multi-threaded fuzzer of the V4L2 buffer uAPI (videobuf2), a guest
 * program of the test harness (tools/plans/stress.plan). Options: usage() below, --help.
 *
 * Worker threads share tables of open files (several per device; opened, dup'ed, closed
 * and reopened at random), of DMABUFs (EXPBUF, udmabuf, the system dma-heap), of media
 * requests, and an arena of memory chunks (buffer mappings, USERPTR memory). Each thread
 * draws operations from ops[] with its own PRNG (from --seed and its number). --hostile
 * percent of them get hostile arguments; the others are valid and stream for real.
 * The report is KTAP (kselftest.h): per device and kind of call a diagnostic line
 *   # dev=vivid-000-vid-cap op=QBUF calls=1234 ok=345 EINVAL=800 EBUSY=89
 * and a case DEV/streaming per device that fails unless more than --min-success percent of
 * its QBUF, DQBUF and STREAMON calls without hostile arguments succeeded. Exit code 0;
 * 1 when a device is LOW; 2 for a usage error; 3 when the watchdog saw no progress for 60 s.
 *
 * Safety: all memory the kernel may write into lies in an arena reserved at start; plane
 * arrays end at a guard page; accesses to mapped buffers are guarded against SIGSEGV and
 * SIGBUS; a watchdog interrupts calls blocked for over a second. What trips bugs outside
 * videobuf2 (6.12, upstream's vb2 alike) is not done by default: see struct request,
 * op_dmabuf_sync(), struct mem, --huge, fail_allowed(), --no-import; and not visl, which
 * writes past capture buffers after S_FMT on a busy CAPTURE queue.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <getopt.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>
#include <linux/dma-buf.h>
#include <linux/dma-heap.h>
#include <linux/media.h>
#include <linux/udmabuf.h>
#include <linux/videodev2.h>

#include <kselftest.h>

#include "uapi-6.12.h"
#include "vb2-guest.h"

typedef uint8_t u8;
typedef uint32_t u32;
typedef uint64_t u64;

#define PAGE		4096UL
#define PAGE_UP(x)	(((x) + PAGE - 1) & ~(PAGE - 1))
#define MAX_DEVS	32
#define SLOTS_PER_DEV	3	/* open files per device in the shared table */
#define MAX_VFILES	256
#define MAX_HELD	4	/* closed files that mappings may keep open, see trim_held() */
#define MAX_TRACK	64	/* buffer indices whose state a thread tracks */
#define MAX_PLANES	VIDEO_MAX_PLANES
#define NR_DMABUFS	24
#define NR_REQS		24
#define NR_CHUNKS	128
#define CHUNK_SIZE	(16UL << 20)	/* largest mapping; bigger planes are mapped in part */
#define IO_SIZE		(16UL << 20)	/* read()/write() buffer of each thread */
#define MAX_THREADS	16
#define MAX_CHILDREN	64
#define NERR		256	/* errno slots in the statistics */
#define ERR_SIGSEGV	254	/* pseudo errnos: a guarded access faulted */
#define ERR_SIGBUS	255
#define KICK_AFTER	1.0	/* seconds in one call before the watchdog interrupts it */
#define STALL_LIMIT	60.0	/* seconds without progress before the watchdog gives up */
#define NODEV		MAX_DEVS	/* statistics of calls that belong to no device */
#define NR_MEMS		4096	/* pieces of memory with an import budget */
#define IMPORT_BUDGET	6	/* DMA mappings of one piece of memory, see struct mem */
/* Above this many bytes per buffer, no hostile huge buffer counts (the guest has 3 GiB). */
#define HUGE_COUNT_LIMIT (2UL << 20)
#define LOCKED(...)	do { lock(); __VA_ARGS__; unlock(); } while (0)
#define MMAP_RET(p)	((p) == MAP_FAILED ? -1 : 0)

/* What a call is counted as: one line of statistics per device and kind. */
enum kind {
	K_REQBUFS, K_CREATE_BUFS, K_QUERYBUF, K_QBUF, K_DQBUF, K_PREPARE_BUF, K_EXPBUF,
	K_STREAMON, K_STREAMOFF, K_REMOVE_BUFS, K_S_FMT, K_G_FMT, K_TRY_FMT, K_ENUM_FMT,
	K_MMAP, K_MUNMAP, K_MREMAP, K_MPROTECT, K_TOUCH, K_READ, K_WRITE, K_POLL,
	K_OPEN, K_CLOSE, K_DUP, K_FORK,
	K_REQ_ALLOC, K_REQ_QUEUE, K_REQ_REINIT, K_REQ_CLOSE,
	K_UDMABUF, K_HEAP_ALLOC, K_DMABUF_SYNC, K_DMABUF_CLOSE, K_USERPTR_MAP,
	NR_KINDS
};

static const char *const kind_names[NR_KINDS] = {
	"REQBUFS", "CREATE_BUFS", "QUERYBUF", "QBUF", "DQBUF", "PREPARE_BUF", "EXPBUF",
	"STREAMON", "STREAMOFF", "REMOVE_BUFS", "S_FMT", "G_FMT", "TRY_FMT", "ENUM_FMT",
	"MMAP", "MUNMAP", "MREMAP", "MPROTECT", "TOUCH", "READ", "WRITE", "POLL",
	"OPEN", "CLOSE", "DUP", "FORK",
	"REQ_ALLOC", "REQ_QUEUE", "REQ_REINIT", "REQ_CLOSE",
	"UDMABUF", "HEAP_ALLOC", "DMABUF_SYNC", "DMABUF_CLOSE", "USERPTR_MAP",
};

/* What a thread believes about a buffer. */
enum bstate { B_UNKNOWN, B_IDLE, B_PREPARED, B_QUEUED, B_GONE };

/*
 * What the program believes about one vb2 queue. Other threads change the real queue
 * behind its back: a wrong belief costs a failed call, and the calls' results correct it.
 */
struct queue {
	u32 type, caps, max_bufs;	/* caps: V4L2_BUF_CAP_* */
	bool output, mplane, video, streaming, uses_requests;
	u32 memory;		/* of the allocated buffers, 0 when none */
	u32 count;		/* indices below this may exist */
	u32 nplanes, sizes[MAX_PLANES];	/* of the current format */
	u8 bstate[MAX_TRACK];
	u32 gen;		/* changes when the buffers may have been freed */
	struct vfile *owner;	/* shared queues: the open file that allocated */
	int busy;		/* EBUSY in a row on the valid path */
	int uptr_ok, uptr_fail, dmabuf_ok, dmabuf_fail;
};

struct dev {
	int id;
	char name[40], path[64], media[300];
	bool m2m;		/* each open file has its own queues */
	bool rw;		/* read()/write() */
	bool no_import;		/* --no-import: never give it a real DMABUF */
	int nq, media_fd;
	struct queue q[2];	/* shared queues; the template of an m2m file's queues */
	int dma_id;		/* devices sharing one struct device share this */
	struct slot {
		int fd;
		struct vfile *vf;
	} slots[SLOTS_PER_DEV];
};

/* One open file description: the slots that dup'ed it share it. */
struct vfile {
	int refs;		/* slots, mappings and threads using it */
	struct dev *dev;
	struct queue q[2];	/* m2m devices: this file's queues */
};

/* A piece of the arena: what is mapped there. */
enum chunk_kind { CH_FREE, CH_BUF, CH_DMABUF, CH_USERPTR, CH_LOST };

struct chunk {
	pthread_mutex_t lock;	/* held while the memory is used or changed */
	char *addr;
	size_t len;
	int kind, prot, dev;	/* dev: for the statistics */
	struct vfile *vf;	/* CH_BUF: holds a reference */
	int memfd;		/* CH_USERPTR from a memfd (udmabuf can alias it) */
	int mem;		/* its import budget (struct mem), -1 none left */
};

enum db_origin { DB_EXPBUF, DB_UDMABUF, DB_HEAP };

struct dmabuf {
	int fd, origin;
	u32 id;			/* serial number, for --trace */
	u64 size;
	u32 imported;		/* heap: DMA devices (dev.dma_id) it was given to */
	int mem;		/* import budget of its memory (struct mem) */
};

/*
 * DMA-API debugging warns when a cacheline is in more than 7 DMA mappings at once, and
 * vb2's importers keep a DMABUF mapped until the buffer is freed or gets another (upstream
 * too). So each piece of memory (a plane of an MMAP buffer, exported or passed as USERPTR;
 * a heap buffer; memfd pages of USERPTR and udmabufs) has IMPORT_BUDGET imports in its life.
 */
struct mem {
	u64 key;		/* 0: free slot */
	int left;
};

/* dmabuf.imported of a heap buffer kept for DMA_BUF_IOCTL_SYNC: never imported. */
#define HEAP_CPU_ONLY	(1u << 31)

/*
 * A request holds at most one buffer (vivid WARNs when it completes a request's controls
 * twice): a thread claims an empty request before it queues a buffer in it.
 */
enum rstate { R_FREE, R_EMPTY, R_CLAIMED, R_HAS_BUF, R_QUEUED };

struct request {
	int fd, dev, state;
	u32 gen;		/* changes when the slot gets another request */
};

struct op;

/* One worker thread. */
struct ctx {
	int id;
	u64 rng, nops;
	pthread_t tid;
	bool hostile;
	/* the target of the current operation */
	struct dev *dev;
	struct vfile *vf;
	struct queue *q;
	int fd, qi;
	/* memory the kernel may fault on: plane arrays end at a guard page */
	struct v4l2_plane *planes, *planes_ro;
	char *rw_page, *ro_page;	/* two views of one page */
	char *io;			/* IO_SIZE bytes, then a guard page */
	/* for the watchdog */
	volatile int kind, in_call, alive;
	volatile double call_start;
	volatile u64 progress;
	int fail_fd;		/* /proc/thread-self/make-it-fail, or -1 */
	bool failing;		/* fault injection on for this thread */
	const struct op *op;
	char desc[160];
};

struct op {
	const char *name;
	void (*fn)(struct ctx *c);
	unsigned int weight;
	bool target;		/* the worker gets a target first (get_target()) */
	int arg;		/* for fn: which of two calls */
	bool allocates;		/* makes the kernel hold memory: see next_op() */
};

static struct {		/* the options: see usage() */
	u64 seed, ops;
	int threads, failslab, hostile, mem_floor;	/* percent */
	double seconds, progress, min_success;
	bool trace, huge, sync_any;
	u32 recorder;		/* calls the flight recorder keeps, 0 none */
	char only[512];
	char no_import[8][64];	/* --no-import patterns */
	int n_no_import;
} opt = { .threads = 4, .hostile = 50, .ops = 10000, .min_success = 10, .progress = 300,
	    .mem_floor = 15 };

static struct {
	pthread_mutex_t lock;	/* the tables and all beliefs */
	pthread_mutex_t udmabuf_sync;	/* one DMA_BUF_IOCTL_SYNC of a udmabuf at a time */
	struct dev devs[MAX_DEVS];
	int ndevs;
	struct vfile vfiles[MAX_VFILES];
	struct dmabuf dmabufs[NR_DMABUFS];
	struct request reqs[NR_REQS];
	struct chunk chunks[NR_CHUNKS];
	char *arena;
	pid_t children[MAX_CHILDREN];
	u32 dmabuf_ids, req_gen, queue_gen;
	u64 mem_serial;
	struct mem mems[NR_MEMS];
	int udmabuf_fd, heap_fd;
	volatile int stop, done;
	u64 ops_done, ops_reclaimed;	/* ops_reclaimed: see memory_low() */
	double t0;
	struct ctx *workers[MAX_THREADS];
} g = { .lock = PTHREAD_MUTEX_INITIALIZER, .udmabuf_sync = PTHREAD_MUTEX_INITIALIZER };

static u64 stats[MAX_DEVS + 1][NR_KINDS][NERR];	/* [0] counts successes */
/* The calls of operations without hostile arguments: [0] successes, [1] failures. */
static u64 wellformed[MAX_DEVS + 1][NR_KINDS][2];

static void lock(void) { pthread_mutex_lock(&g.lock); }
static void unlock(void) { pthread_mutex_unlock(&g.lock); }

/* The budget of the memory called key: found, or a new one. -1 when the table is full. */
static int mem_find_locked(u64 key)
{
	u32 h = (u32)(key ^ key >> 29 ^ key >> 47) % NR_MEMS, i;

	for (i = 0; i < NR_MEMS; i++) {
		struct mem *m = &g.mems[(h + i) % NR_MEMS];

		if (m->key == key)
			return (h + i) % NR_MEMS;
		if (!m->key) {
			m->key = key;
			m->left = IMPORT_BUDGET;
			return (h + i) % NR_MEMS;
		}
	}
	return -1;	/* full: no more imports of new memory */
}

/* A new piece of memory (heap, udmabuf, USERPTR pages) that may be imported budget times. */
static int mem_new(int budget)
{
	int mem;

	lock();
	mem = mem_find_locked(1ULL << 62 | ++g.mem_serial);
	if (mem >= 0)
		g.mems[mem].left = budget;
	unlock();
	return mem;
}

/*
 * A second DMA mapping of a system-heap buffer while the first lasts (importers keep
 * theirs) trips DMA-API debugging ("overlapping mappings"), silent for the rest of the run.
 */
#define HEAP_BUDGET	1

/* Plane p of buffer index of queue q of device d, in its current allocation. */
static int mem_of_buffer(int d, const struct queue *q, u32 index, u32 plane)
{
	int mem;

	LOCKED(mem = mem_find_locked(1ULL << 63 | (u64)d << 56 | (u64)(q->gen & 0xffffff) << 32 |
				     (u64)(index & 0xffffff) << 8 | (plane & 0xff)));
	return mem;
}

/* Take one import from the budget; false when it is spent. */
static bool mem_take_locked(int mem)
{
	if (mem < 0 || g.mems[mem].left <= 0)
		return false;
	g.mems[mem].left--;
	return true;
}

static double now(void)
{
	return vb2_now_ns() / 1e9;
}

/* Randomness: splitmix64, one state per thread, so a seed replays a thread's choices. */
static u64 next_rand(u64 *s)
{
	u64 z = (*s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static u32 rnd(struct ctx *c, u32 n)
{
	return n ? next_rand(&c->rng) % n : 0;
}

static bool chance(struct ctx *c, u32 pct)
{
	return rnd(c, 100) < pct;
}

#define PICK(c, arr)	((arr)[rnd(c, ARRAY_SIZE(arr))])

/* Boundary values for any u32 field. */
static u32 edge(struct ctx *c)
{
	static const u32 edge_u32[] = {
		0, 1, 2, 3, 7, 8, 9, 15, 16, 31, 32, 33, 63, 64, 65, 255, 256, 4095, 4096, 4097,
		32767, 32768, 32769, 65535, 65536, 0x7fffffff, 0x80000000, 0xfffff000,
		0xfffff001, 0xfffffffe, 0xffffffff,
	};

	if (chance(c, 10))
		return (u32)next_rand(&c->rng);
	return PICK(c, edge_u32);
}

/*
 * Hostile sizes: ones that overflow 32 bits when page-aligned or summed, and small ones.
 * Not 2 GiB or 4 GiB - 4 KiB unless --huge: drivers accept any size above the format's,
 * allocating that much succeeds, then the OOM killer ends the run.
 */
static u32 edge_size(struct ctx *c, u32 valid)
{
	static const u32 sizes[] = { 0, 1, 4095, 4097, 0xfffff001, 0xfffffffe, 0xffffffff };
	static const u32 huge[] = { 0x7fffffff, 0x80000000, 0xfffff000 };

	switch (rnd(c, 6)) {
	case 0:
		return valid ? valid - 1 : 0;
	case 1:
		return valid + 1;
	case 2:
		if (opt.huge)
			return PICK(c, huge);
		/* fall through */
	default:
		return PICK(c, sizes);
	}
}

/* Buffer counts, around the queue's maximum too; huge ones only for small buffers. */
static u32 edge_count(struct ctx *c, const struct queue *q)
{
	static const u32 counts[] = { 0, 1, 31, 32, 33, 63, 64, 65, 32768, 0x7fffffff, 0xffffffff };
	u32 total = 0, i, n;

	for (i = 0; i < q->nplanes && i < MAX_PLANES; i++)
		total += q->sizes[i];
	if (q->max_bufs && chance(c, 30))
		n = q->max_bufs + rnd(c, 2);
	else
		n = PICK(c, counts);
	if (n > 8 && (total > HUGE_COUNT_LIMIT || total == 0) && !opt.huge)
		n = 9;
	return n;
}

static u32 edge_type(struct ctx *c)
{
	static const u32 all_types[] = {
		V4L2_BUF_TYPE_VIDEO_CAPTURE, V4L2_BUF_TYPE_VIDEO_OUTPUT,
		V4L2_BUF_TYPE_VIDEO_OVERLAY, V4L2_BUF_TYPE_VBI_CAPTURE, V4L2_BUF_TYPE_VBI_OUTPUT,
		V4L2_BUF_TYPE_SLICED_VBI_CAPTURE, V4L2_BUF_TYPE_SLICED_VBI_OUTPUT,
		V4L2_BUF_TYPE_VIDEO_OUTPUT_OVERLAY, V4L2_BUF_TYPE_VIDEO_CAPTURE_MPLANE,
		V4L2_BUF_TYPE_VIDEO_OUTPUT_MPLANE, V4L2_BUF_TYPE_SDR_CAPTURE,
		V4L2_BUF_TYPE_SDR_OUTPUT, V4L2_BUF_TYPE_META_CAPTURE, V4L2_BUF_TYPE_META_OUTPUT,
		0, 15, 0x80, 0xffffffff,
	};

	return PICK(c, all_types);
}

static u32 edge_memory(struct ctx *c)
{
	static const u32 mem[] = { 0, V4L2_MEMORY_MMAP, V4L2_MEMORY_USERPTR,
				   V4L2_MEMORY_OVERLAY, V4L2_MEMORY_DMABUF, 5, 0xffffffff };

	return PICK(c, mem);
}

/* Plane counts of a format: none, one too many, far too many. */
static u8 edge_num_planes(struct ctx *c)
{
	return chance(c, 50) ? 0 : chance(c, 50) ? 9 : 0xff;
}

/*
 * File descriptors that are not what the call wants: none, stdio, the video node itself,
 * numbers above any in use. Not random small ones: they may be live DMABUFs of the table.
 */
static int edge_fd(struct ctx *c)
{
	switch (rnd(c, 6)) {
	case 0: return -1;
	case 1: return INT_MAX;
	case 2: return (int)rnd(c, 3);
	case 3: return c->fd;
	default: return 4000 + (int)rnd(c, 90);
	}
}

/* Pointers the kernel must refuse to read or write through. */
static void *edge_ptr(struct ctx *c)
{
	switch (rnd(c, 7)) {
	case 0: return NULL;
	case 1: return (void *)1;
	case 2: return (void *)0xffffffff80000000UL;	/* kernel text */
	case 3: return (void *)0x0000800000000000UL;	/* non-canonical */
	case 4: return c->ro_page;			/* readable, not writable */
	case 5: return c->rw_page + PAGE;		/* the guard page */
	default: return c->rw_page + PAGE - 8;	/* straddles into the guard */
	}
}

/* The argument of a hostile call: &arg, or with pct percent a pointer the kernel refuses. */
static void *arg_or_bad(struct ctx *c, u32 pct, void *arg)
{
	return chance(c, pct) ? edge_ptr(c) : arg;
}

/* Statistics and tracing. Every system call goes through SYS() below. */
static const char *err_name(int e)
{
	if (e == ERR_SIGSEGV)
		return "SIGSEGV";
	if (e == ERR_SIGBUS)
		return "SIGBUS";
	return vb2_errname(e);
}

/*
 * --failslab: whether a call runs with fault injection. Not where an injected failure
 * WARNs outside videobuf2: mmap() and fork() of dma-contig buffers (x86 PAT,
 * get_pat_info()), calls on queues that import DMABUFs (dma_buf_vmap()). Nor in
 * UDMABUF_CREATE: 6.12's udmabuf then leaks the pins of the memfd folios (528 MB in 50 s).
 */
static bool fail_allowed(struct ctx *c, int kind)
{
	if (kind == K_MMAP || kind == K_FORK || kind == K_UDMABUF)
		return false;
	return !(c->q && c->q->memory == V4L2_MEMORY_DMABUF);
}

static void fail_window(struct ctx *c, bool on)
{
	if (c->fail_fd < 0 || c->failing == on)
		return;
	if (pwrite(c->fail_fd, on ? "1" : "0", 1, 0) == 1)
		c->failing = on;
}

/*
 * The flight recorder (--recorder): the last lines --trace would print, of all threads,
 * with times, in a ring written without a lock (a line may come out torn or be skipped).
 */
#define REC_LINE	200

struct rec_entry {
	u64 seq;		/* 1 + the line's number, 0 while it is written */
	char line[REC_LINE];
};

static struct rec_entry *rec;
static u64 rec_next;

/* Keep a line of trace() that starts with its time. */
static void record(const char *line, int n)
{
	u64 seq = __atomic_fetch_add(&rec_next, 1, __ATOMIC_RELAXED);
	struct rec_entry *e = &rec[seq % opt.recorder];

	if (n >= REC_LINE)
		n = REC_LINE - 1;
	__atomic_store_n(&e->seq, 0, __ATOMIC_RELAXED);
	memcpy(e->line, line, n);
	e->line[n] = 0;
	__atomic_store_n(&e->seq, seq + 1, __ATOMIC_RELEASE);
}

static void recorder_dump(const char *why)
{
	u64 end = __atomic_load_n(&rec_next, __ATOMIC_ACQUIRE), s;

	fprintf(stderr, "vb2-stress: %s; the last %u calls (monotonic seconds, thread):\n",
		why, opt.recorder);
	for (s = end > opt.recorder ? end - opt.recorder : 0; s < end; s++) {
		struct rec_entry *e = &rec[s % opt.recorder];

		if (__atomic_load_n(&e->seq, __ATOMIC_ACQUIRE) == s + 1)
			fprintf(stderr, "vb2-stress: rec %.*s\n",
				(int)strcspn(e->line, "\n"), e->line);
	}
	fprintf(stderr, "vb2-stress: end of the recorded calls\n");
}

/*
 * A line of the trace, "T<thread> " and fmt (a call, see call_end(), or an event):
 * printed with --trace, kept with its time by the flight recorder with --recorder.
 */
static void trace(struct ctx *c, const char *fmt, ...)
{
	char line[340];
	va_list ap;
	int t, n;

	if (!opt.trace && !opt.recorder)
		return;
	t = snprintf(line, sizeof(line), "%.3f ", now());
	n = t + snprintf(line + t, sizeof(line) - t, "T%d ", c->id);
	va_start(ap, fmt);
	n += vsnprintf(line + n, sizeof(line) - n - 1, fmt, ap);
	va_end(ap);
	if (n > (int)sizeof(line) - 2)
		n = sizeof(line) - 2;
	line[n++] = '\n';
	line[n] = 0;
	if (opt.trace && write(1, line + t, n - t) < 0) {
		/* nowhere to report it */
	}
	if (opt.recorder)
		record(line, n);
}

static void call_begin(struct ctx *c, int kind)
{
	c->kind = kind;
	fail_window(c, fail_allowed(c, kind));
	c->call_start = now();
	c->in_call = 1;
}

static long call_end(struct ctx *c, int kind, long ret, int err)
{
	int dev = c->dev ? c->dev->id : NODEV;
	int slot = ret < 0 ? (err > 0 && err < NERR ? err : NERR - 3) : 0;

	c->in_call = 0;
	fail_window(c, false);
	c->progress++;
	__atomic_add_fetch(&stats[dev][kind][slot], 1, __ATOMIC_RELAXED);
	if (!c->hostile)
		__atomic_add_fetch(&wellformed[dev][kind][ret < 0], 1, __ATOMIC_RELAXED);
	trace(c, "%s dev=%s ret=%ld%s%s %s", kind_names[kind], c->dev ? c->dev->name : "-", ret,
	      ret < 0 ? " " : "", ret < 0 ? err_name(slot) : "", c->desc);
	errno = err;
	return ret;
}

#define SYS(c, kind, expr) ({						\
	long __r;							\
	call_begin(c, kind);						\
	__r = (long)(expr);						\
	call_end(c, kind, __r, __r < 0 ? errno : 0);			\
})

/* Describe the coming call, for --trace and the watchdog. */
static void note(struct ctx *c, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(c->desc, sizeof(c->desc), fmt, ap);
	va_end(ap);
}

/* Guarded memory accesses: a fault in them is counted, not fatal. */
static __thread sigjmp_buf touch_jmp;
static __thread volatile sig_atomic_t touch_armed;
static __thread struct ctx *self;	/* the worker running on this thread */

/* A fault in the program itself: say where and in which operation, then die of it. */
static void fault_handler(int sig, siginfo_t *si, void *uc_)
{
	ucontext_t *uc = uc_;
	char msg[400];
	int n;

	if (touch_armed) {
		touch_armed = 0;
		siglongjmp(touch_jmp, sig);
	}
	n = snprintf(msg, sizeof(msg),
		     "vb2-stress: signal %d outside a guarded access: addr=%p rip=%#llx "
		     "thread=%d op=%s call=%s: %s\n",
		     sig, si->si_addr, (unsigned long long)uc->uc_mcontext.gregs[REG_RIP],
		     self ? self->id : -1, self && self->op ? self->op->name : "-",
		     self ? kind_names[self->kind] : "-", self ? self->desc : "");
	if (write(2, msg, n) < 0) {
		/* dying anyway */
	}
	signal(sig, SIG_DFL);
	raise(sig);
}

static void kick_handler(int sig)
{
	(void)sig;	/* only interrupts a blocking call */
}

/* Read or write bytes of p[off..off+len); 0, or -signal when it faulted. */
static __attribute__((noinline)) int guarded_access(volatile char *p, size_t len, bool wr,
						     u8 val)
{
	size_t i;
	int sig;

	sig = sigsetjmp(touch_jmp, 1);
	if (sig)
		return -sig;
	touch_armed = 1;
	for (i = 0; i < len; i += 64) {
		if (wr)
			p[i] = val;
		else
			(void)p[i];
	}
	touch_armed = 0;
	return 0;
}

static long touch(struct ctx *c, char *p, size_t len, bool wr)
{
	int r;

	call_begin(c, K_TOUCH);
	r = guarded_access(p, len, wr, (u8)c->id);
	if (r == 0)
		return call_end(c, K_TOUCH, 0, 0);
	return call_end(c, K_TOUCH, -1, r == -SIGBUS ? ERR_SIGBUS : ERR_SIGSEGV);
}

/* The arena: all memory the kernel may be told to write into lies here. */
static int placeholder(char *addr, size_t len, bool noreplace)
{
	int flags = MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE |
		    (noreplace ? MAP_FIXED_NOREPLACE : MAP_FIXED);

	return mmap(addr, len, PROT_NONE, flags, -1, 0) == addr ? 0 : -1;
}

static void vfile_put_locked(struct vfile *vf);

/* A locked chunk now holds a mapping of kind, len bytes, prot, for statistics of dev. */
static void chunk_set(struct chunk *ch, int kind, size_t len, int prot, int dev)
{
	ch->kind = kind;
	ch->len = len;
	ch->prot = prot;
	ch->dev = dev;
}

/* Drop what a locked chunk holds besides its mapping (memfd, file), forget len and prot. */
static void chunk_release(struct chunk *ch)
{
	if (ch->memfd >= 0)
		close(ch->memfd);
	ch->memfd = -1;
	ch->mem = -1;
	ch->len = 0;
	ch->prot = PROT_NONE;
	if (ch->vf)
		LOCKED(vfile_put_locked(ch->vf));
	ch->vf = NULL;
}

/*
 * Give up a locked chunk whose range [hole, hole + hole_len) another thread's mmap() may
 * have taken: unmap the rest and drop what it holds. A mapping left there would keep its
 * queue and all its buffers until exit (a long run piled them up until the OOM killer).
 */
static void chunk_lose(struct chunk *ch, size_t hole, size_t hole_len)
{
	if (hole)
		munmap(ch->addr, hole);
	if (hole + hole_len < CHUNK_SIZE)
		munmap(ch->addr + hole + hole_len, CHUNK_SIZE - hole - hole_len);
	chunk_release(ch);
	ch->kind = CH_LOST;
}

/* Make a locked chunk free again, with munmap() or by mapping over it. */
static void chunk_clear(struct ctx *c, struct chunk *ch, bool use_munmap)
{
	int kind = ch->kind;

	if (kind == CH_FREE || kind == CH_LOST)
		return;
	note(c, "chunk %ld len=%zu kind=%d", (long)(ch - g.chunks), ch->len, kind);
	if (use_munmap) {
		if (SYS(c, K_MUNMAP, munmap(ch->addr, CHUNK_SIZE)) < 0)
			return;
		/* The hole is ours until something else is mapped there. */
		if (placeholder(ch->addr, CHUNK_SIZE, true) < 0) {
			chunk_lose(ch, 0, CHUNK_SIZE);
			return;
		}
	} else if (SYS(c, K_MUNMAP, placeholder(ch->addr, CHUNK_SIZE, false)) < 0) {
		return;
	}
	chunk_release(ch);
	ch->kind = CH_FREE;
}

/* A locked chunk of one of the kinds in mask (1 << kind), or NULL. */
static struct chunk *chunk_find(struct ctx *c, unsigned int mask, size_t minlen)
{
	u32 start = rnd(c, NR_CHUNKS), i;

	for (i = 0; i < NR_CHUNKS; i++) {
		struct chunk *ch = &g.chunks[(start + i) % NR_CHUNKS];

		if (!(mask & (1u << ch->kind)) || ch->len < minlen)
			continue;
		if (pthread_mutex_trylock(&ch->lock))
			continue;
		if ((mask & (1u << ch->kind)) && ch->len >= minlen)
			return ch;
		pthread_mutex_unlock(&ch->lock);
	}
	return NULL;
}

static const unsigned int mapped = (1u << CH_BUF) | (1u << CH_DMABUF) | (1u << CH_USERPTR);

/* A locked free chunk; evicts a random one when none is free. */
static struct chunk *chunk_get_free(struct ctx *c)
{
	struct chunk *ch = chunk_find(c, 1u << CH_FREE, 0);

	if (ch)
		return ch;
	/* A lost chunk whose range nobody else uses any more is free again. */
	ch = chunk_find(c, 1u << CH_LOST, 0);
	if (ch) {
		if (placeholder(ch->addr, CHUNK_SIZE, true) == 0) {
			ch->kind = CH_FREE;
			return ch;
		}
		pthread_mutex_unlock(&ch->lock);
	}
	ch = chunk_find(c, mapped, 0);
	if (!ch)
		return NULL;
	chunk_clear(c, ch, false);
	if (ch->kind == CH_FREE)
		return ch;
	pthread_mutex_unlock(&ch->lock);
	return NULL;
}

static void chunk_put(struct chunk *ch)
{
	if (ch)
		pthread_mutex_unlock(&ch->lock);
}

/* Open files, their beliefs and the targets of operations. */
static struct queue *queue_of(struct vfile *vf, int qi)
{
	return vf->dev->m2m ? &vf->q[qi] : &vf->dev->q[qi];
}

static void queue_forget(struct queue *q)
{
	q->gen = ++g.queue_gen;	/* under g.lock, or before the threads start */
	q->memory = 0;
	q->count = 0;
	q->streaming = false;
	q->uses_requests = false;
	q->owner = NULL;
	memset(q->bstate, B_UNKNOWN, sizeof(q->bstate));
}

/* After a REQBUFS or CREATE_BUFS that allocated count buffers. Locked. */
static void queue_allocated_locked(struct ctx *c, u32 count, u32 memory)
{
	queue_forget(c->q);
	c->q->count = count;
	c->q->memory = count ? memory : 0;
	c->q->owner = count ? c->vf : NULL;
	memset(c->q->bstate, B_IDLE, sizeof(c->q->bstate));
}

static struct vfile *vfile_new_locked(struct dev *d)
{
	int i;

	for (i = 0; i < MAX_VFILES; i++) {
		struct vfile *vf = &g.vfiles[i];

		if (vf->refs)
			continue;
		vf->refs = 1;
		vf->dev = d;
		memcpy(vf->q, d->q, sizeof(vf->q));
		queue_forget(&vf->q[0]);
		queue_forget(&vf->q[1]);
		return vf;
	}
	return NULL;
}

/* The last reference gone: the kernel released the file, and its queues with it. */
static void vfile_put_locked(struct vfile *vf)
{
	int qi;

	if (vf->refs <= 0 || --vf->refs > 0)
		return;
	for (qi = 0; qi < vf->dev->nq; qi++)
		if (vf->dev->q[qi].owner == vf)
			queue_forget(&vf->dev->q[qi]);
}

/* Take the file out of slot s; its fd, or -1 when the slot was empty. */
static int slot_take(struct slot *s)
{
	int fd;

	lock();
	fd = s->fd;
	if (fd >= 0) {
		s->fd = -1;
		vfile_put_locked(s->vf);
		s->vf = NULL;
	}
	unlock();
	return fd;
}

static int open_flags(struct ctx *c)
{
	int fl = O_RDWR;

	if (c->hostile && chance(c, 30))
		fl = chance(c, 50) ? O_RDONLY : O_WRONLY;
	/* Mostly non-blocking: DQBUF and read() block on a blocking file. */
	if (chance(c, 75))
		fl |= O_NONBLOCK;
	return fl | O_CLOEXEC;
}

/* Unmap the buffers of the files marked in drop (when not NULL), or of device dev. */
static void clear_buf_chunks(struct ctx *c, const bool *drop, int dev)
{
	int i;

	for (i = 0; i < NR_CHUNKS; i++) {
		struct chunk *ch = &g.chunks[i];
		bool match;

		/* The caller may hold a chunk: never wait for one. */
		if (pthread_mutex_trylock(&ch->lock))
			continue;
		match = drop ? ch->vf && drop[ch->vf - g.vfiles] : ch->dev == dev;
		if (ch->kind == CH_BUF && match)
			chunk_clear(c, ch, !!drop);
		pthread_mutex_unlock(&ch->lock);
	}
}

/*
 * A closed file stays open in the kernel while a buffer of it is mapped, with its queues
 * and all their buffers: with NR_CHUNKS such mappings they piled up until the OOM killer
 * came. Before each open, unmap the buffers of closed files beyond the first MAX_HELD.
 */
static void trim_held(struct ctx *c)
{
	bool in_slot[MAX_VFILES] = { false }, drop[MAX_VFILES] = { false };
	int d, si, i, held = 0;

	lock();
	for (d = 0; d < g.ndevs; d++)
		for (si = 0; si < SLOTS_PER_DEV; si++)
			if (g.devs[d].slots[si].fd >= 0)
				in_slot[g.devs[d].slots[si].vf - g.vfiles] = true;
	/* No slot holds such a file, so none can get it back: it only goes away. */
	for (i = 0; i < MAX_VFILES; i++)
		if (g.vfiles[i].refs > 0 && !in_slot[i] && ++held > MAX_HELD)
			drop[i] = true;
	unlock();
	if (held > MAX_HELD)
		clear_buf_chunks(c, drop, -1);
}

/* The device went away (unbound): find its node again by name (it may get another). */
static void refind_dev(struct dev *d)
{
	char path[sizeof(d->path)];

	if (!vb2_find_node(d->name, path, sizeof(path), NULL, 0))
		LOCKED(snprintf(d->path, sizeof(d->path), "%s", path));
}

/* Open the device in slot si (closing what was there: a reopen). */
static void slot_open(struct ctx *c, struct dev *d, int si)
{
	struct slot *s = &d->slots[si];
	int fd, old = -1;
	struct vfile *vf;
	char path[64];

	trim_held(c);
	LOCKED(snprintf(path, sizeof(path), "%s", d->path));
	note(c, "%s slot %d", path, si);
	fd = SYS(c, K_OPEN, open(path, open_flags(c)));
	if (fd < 0) {
		if (errno == ENODEV || errno == ENOENT || errno == ENXIO)
			refind_dev(d);
		return;
	}
	lock();
	vf = vfile_new_locked(d);
	if (!vf) {
		unlock();
		close(fd);
		return;
	}
	if (s->fd >= 0) {
		old = s->fd;
		vfile_put_locked(s->vf);
	}
	s->fd = fd;
	s->vf = vf;
	unlock();
	if (old >= 0)
		SYS(c, K_CLOSE, close(old));
}

/* Pick an open slot of d; prefer the owner of queue qi when wanted. Locked. */
static struct slot *pick_slot_locked(struct ctx *c, struct dev *d, int qi, bool want_owner)
{
	struct slot *any = NULL;
	u32 start = rnd(c, SLOTS_PER_DEV), i;

	for (i = 0; i < SLOTS_PER_DEV; i++) {
		struct slot *s = &d->slots[(start + i) % SLOTS_PER_DEV];

		if (s->fd < 0)
			continue;
		if (!any)
			any = s;
		if (want_owner && !d->m2m && d->q[qi].owner == s->vf)
			return s;
	}
	return any;
}

/*
 * Choose the target of an operation: a device, one of its queues and an open file,
 * dup'ed so that no other thread can close it under us (the kernel sees the same file).
 */
static bool get_target_dev(struct ctx *c, struct dev *d)
{
	struct slot *s;
	int qi = rnd(c, d->nq), fd;

	c->dev = d;
	lock();
	s = pick_slot_locked(c, d, qi, !c->hostile || chance(c, 50));
	if (!s) {
		unlock();
		slot_open(c, d, rnd(c, SLOTS_PER_DEV));
		lock();
		s = pick_slot_locked(c, d, qi, true);
	}
	fd = s ? fcntl(s->fd, F_DUPFD_CLOEXEC, 3) : -1;
	if (fd >= 0) {
		c->fd = fd;
		c->vf = s->vf;
		c->vf->refs++;
		c->qi = qi;
		c->q = queue_of(c->vf, qi);
	}
	unlock();
	return fd >= 0;
}

static bool get_target(struct ctx *c)
{
	return get_target_dev(c, &g.devs[rnd(c, g.ndevs)]);
}

static void put_target(struct ctx *c)
{
	if (c->fd >= 0)
		close(c->fd);
	c->fd = -1;
	if (c->vf)
		LOCKED(vfile_put_locked(c->vf));
	c->vf = NULL;
	c->q = NULL;
}

/*
 * The queue stays busy on the valid path (read() emulation of a file gone from the table,
 * a mapping or a forked child holding the owner): close every file of the device and drop
 * its mappings, so that the kernel releases the queue.
 */
static void reset_device(struct ctx *c, struct dev *d)
{
	int si, fd;

	for (si = 0; si < SLOTS_PER_DEV; si++) {
		fd = slot_take(&d->slots[si]);
		if (fd >= 0) {
			note(c, "reset %s", d->name);
			SYS(c, K_CLOSE, close(fd));
		}
	}
	clear_buf_chunks(c, NULL, d->id);
}

/* Count EBUSY on the valid path; reset the device when it stays busy or is gone (ENODEV). */
static void valid_result(struct ctx *c, long ret)
{
	int busy;

	if (ret < 0 && errno == ENODEV) {
		reset_device(c, c->dev);
		refind_dev(c->dev);
		return;
	}
	lock();
	if (ret >= 0)
		c->q->busy = 0;
	else if (errno == EBUSY)
		c->q->busy++;
	busy = c->q->busy;
	if (busy > 12)
		c->q->busy = 0;
	unlock();
	if (busy > 12)
		reset_device(c, c->dev);
}

/* The plane sizes a format asks for. */
static void fmt_sizes(const struct v4l2_format *f, u32 *nplanes, u32 *sizes)
{
	u32 i;

	*nplanes = 1;
	sizes[0] = 0;
	if (V4L2_TYPE_IS_MULTIPLANAR(f->type) && f->fmt.pix_mp.num_planes <= MAX_PLANES)
		*nplanes = f->fmt.pix_mp.num_planes ? f->fmt.pix_mp.num_planes : 1;
	switch (f->type) {
	case V4L2_BUF_TYPE_VIDEO_CAPTURE:
	case V4L2_BUF_TYPE_VIDEO_OUTPUT:
		sizes[0] = f->fmt.pix.sizeimage;
		break;
	case V4L2_BUF_TYPE_VIDEO_CAPTURE_MPLANE:
	case V4L2_BUF_TYPE_VIDEO_OUTPUT_MPLANE:
		for (i = 0; i < *nplanes; i++)
			sizes[i] = f->fmt.pix_mp.plane_fmt[i].sizeimage;
		break;
	case V4L2_BUF_TYPE_VBI_CAPTURE:
	case V4L2_BUF_TYPE_VBI_OUTPUT:
		sizes[0] = (f->fmt.vbi.count[0] + f->fmt.vbi.count[1]) *
			   f->fmt.vbi.samples_per_line;
		break;
	case V4L2_BUF_TYPE_SLICED_VBI_CAPTURE:
	case V4L2_BUF_TYPE_SLICED_VBI_OUTPUT:
		sizes[0] = f->fmt.sliced.io_size;
		break;
	case V4L2_BUF_TYPE_SDR_CAPTURE:
	case V4L2_BUF_TYPE_SDR_OUTPUT:
		sizes[0] = f->fmt.sdr.buffersize;
		break;
	case V4L2_BUF_TYPE_META_CAPTURE:
	case V4L2_BUF_TYPE_META_OUTPUT:
		sizes[0] = f->fmt.meta.buffersize;
	}
}

static void learn_format(struct ctx *c, const struct v4l2_format *f)
{
	lock();
	if (f->type == c->q->type)
		fmt_sizes(f, &c->q->nplanes, c->q->sizes);
	unlock();
}

static long g_fmt(struct ctx *c, struct v4l2_format *f)
{
	long r;

	memset(f, 0, sizeof(*f));
	f->type = c->q->type;
	note(c, "type=%u", f->type);
	r = SYS(c, K_G_FMT, ioctl(c->fd, VIDIOC_G_FMT, f));
	if (r == 0)
		learn_format(c, f);
	return r;
}

/* Buffers: the valid path. */
static u32 pick_memory(struct ctx *c)
{
	struct queue *q = c->q;
	u32 r = rnd(c, 100);

	/* Memory types that keep failing here (dma-contig imports) are tried less. */
	if (r < 20 && (q->caps & V4L2_BUF_CAP_SUPPORTS_USERPTR) &&
	    q->uptr_fail < 4 * q->uptr_ok + 8)
		return V4L2_MEMORY_USERPTR;
	if (r >= 20 && r < 40 && (q->caps & V4L2_BUF_CAP_SUPPORTS_DMABUF) &&
	    q->dmabuf_fail < 4 * q->dmabuf_ok + 8)
		return V4L2_MEMORY_DMABUF;
	return V4L2_MEMORY_MMAP;
}

/* STREAMON or STREAMOFF of the queue, with its type. */
static long stream(struct ctx *c, bool on)
{
	u32 type = c->q->type, i;
	long r;

	note(c, "type=%u", type);
	r = SYS(c, on ? K_STREAMON : K_STREAMOFF,
		ioctl(c->fd, on ? VIDIOC_STREAMON : VIDIOC_STREAMOFF, &type));
	if (r)
		return r;
	lock();
	c->q->streaming = on;
	if (!on) {
		c->q->uses_requests = false;
		for (i = 0; i < MAX_TRACK; i++)
			if (c->q->bstate[i] != B_GONE)
				c->q->bstate[i] = B_IDLE;
	}
	unlock();
	return r;
}

/* REQBUFS with sane arguments; the belief follows what the kernel says. */
static long reqbufs(struct ctx *c, u32 count, u32 memory)
{
	struct v4l2_requestbuffers req = {
		.count = count, .type = c->q->type, .memory = memory,
	};
	long r;

	if ((c->q->caps & V4L2_BUF_CAP_SUPPORTS_MMAP_CACHE_HINTS) && chance(c, 25))
		req.flags = V4L2_MEMORY_FLAG_NON_COHERENT;
	note(c, "count=%u type=%u memory=%u flags=%u", count, req.type, memory, req.flags);
	r = SYS(c, K_REQBUFS, ioctl(c->fd, VIDIOC_REQBUFS, &req));
	if (r == 0) {
		lock();
		queue_allocated_locked(c, req.count, memory);
		c->q->caps = req.capabilities ? req.capabilities : c->q->caps;
		unlock();
	}
	valid_result(c, r);
	return r;
}

/* Make sure this file has buffers on its queue. */
static bool ensure_buffers(struct ctx *c)
{
	bool have, theirs;

	lock();
	have = c->q->count > 0 && (c->dev->m2m || c->q->owner == c->vf);
	theirs = !c->dev->m2m && c->q->owner && c->q->owner != c->vf;
	unlock();
	if (have)
		return true;
	/* Someone else's queue: REQBUFS tells whether it still is. */
	if (theirs && reqbufs(c, 0, V4L2_MEMORY_MMAP) < 0)
		return false;
	if (c->q->streaming)
		stream(c, false);
	return reqbufs(c, 2 + rnd(c, 5), pick_memory(c)) == 0;
}

/* QUERYBUF one index; planes in c->planes. */
static long querybuf(struct ctx *c, u32 index, struct v4l2_buffer *b)
{
	long r;

	vb2_buf_init(b, c->planes, c->q->type, 0, index, MAX_PLANES);
	note(c, "index=%u type=%u", index, b->type);
	r = SYS(c, K_QUERYBUF, ioctl(c->fd, VIDIOC_QUERYBUF, b));
	lock();
	if (index < MAX_TRACK) {
		if (r == 0)
			c->q->bstate[index] = (b->flags & (V4L2_BUF_FLAG_QUEUED | V4L2_BUF_FLAG_DONE)) ?
				B_QUEUED : (b->flags & V4L2_BUF_FLAG_PREPARED) ? B_PREPARED : B_IDLE;
		else if (errno == EINVAL)
			c->q->bstate[index] = B_GONE;
	}
	if (r == 0 && b->memory != c->q->memory && b->memory)
		c->q->memory = b->memory;
	unlock();
	return r;
}

/* An index believed idle (or prepared), or -1; asks the kernel when unsure. */
static int find_idle(struct ctx *c, bool prepared_ok)
{
	u32 count, start, i;
	int tries = 0, st;
	struct v4l2_buffer b;

	LOCKED(count = c->q->count < MAX_TRACK ? c->q->count : MAX_TRACK);
	if (!count)
		return -1;
	start = rnd(c, count);
	for (i = 0; i < count; i++) {
		u32 idx = (start + i) % count;

		LOCKED(st = c->q->bstate[idx]);
		if (st == B_IDLE || (prepared_ok && st == B_PREPARED))
			return idx;
		/* Queued or unknown: the kernel may know better (other threads dequeue). */
		if ((st == B_UNKNOWN || st == B_QUEUED) && tries++ < 2 &&
		    querybuf(c, idx, &b) == 0 &&
		    !(b.flags & (V4L2_BUF_FLAG_QUEUED | V4L2_BUF_FLAG_DONE)))
			return idx;
	}
	return -1;
}

/* Resources a QBUF holds until it returns (qbuf_index()). */
struct held {
	struct chunk *ch[MAX_PLANES];
	int nch;
	int fds[MAX_PLANES];
	u32 ids[MAX_PLANES];	/* their serial numbers */
	int nfd;
};

/* A memfd @name of @size bytes, sealed against shrinking unless !@seal; or -1. */
static int sealed_memfd(const char *name, u32 size, bool seal)
{
	int memfd = memfd_create(name, MFD_CLOEXEC | MFD_ALLOW_SEALING);

	if (memfd >= 0 && (ftruncate(memfd, size) < 0 ||
			   (seal && fcntl(memfd, F_ADD_SEALS, F_SEAL_SHRINK) < 0))) {
		close(memfd);
		return -1;
	}
	return memfd;
}

enum uptr_kind { UP_VALID, UP_MISALIGNED, UP_READONLY, UP_SHORT, UP_UNMAPPED, UP_BUFMAP,
		 NR_UP };

/* Map fresh USERPTR memory into a locked free chunk: anonymous or from a memfd. */
static bool userptr_map(struct ctx *c, struct chunk *ch, size_t len)
{
	int memfd = -1, rw = PROT_READ | PROT_WRITE;

	len = PAGE_UP(len);
	len = !len ? PAGE : len > CHUNK_SIZE ? CHUNK_SIZE : len;
	note(c, "chunk %ld len=%zu", (long)(ch - g.chunks), len);
	if (chance(c, 30))
		memfd = sealed_memfd("vb2-stress", len, true);	/* a udmabuf may alias it */
	if (SYS(c, K_USERPTR_MAP, MMAP_RET(mmap(ch->addr, len, rw, memfd >= 0 ?
						  MAP_SHARED | MAP_FIXED :
						  MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED,
						  memfd, 0))) < 0) {
		if (memfd >= 0)
			close(memfd);
		return false;
	}
	chunk_set(ch, CH_USERPTR, len, rw, c->dev ? c->dev->id : NODEV);
	ch->memfd = memfd;
	ch->mem = mem_new(IMPORT_BUDGET);
	return true;
}

/* Take one import from the budget of mem (a chunk's, say); false when it is spent. */
static bool mem_take(int mem)
{
	bool ok;

	LOCKED(ok = mem_take_locked(mem));
	return ok;
}

/* A USERPTR address and length for a plane of size len, of the given kind. */
static bool userptr_for(struct ctx *c, struct held *h, u32 len, int kind, unsigned long *ptr,
			u32 *plen)
{
	struct chunk *ch = NULL;

	/* USERPTR memory is mapped for DMA too (dma-sg): it spends import budget. */
	if (kind == UP_BUFMAP)
		ch = chunk_find(c, 1u << CH_BUF, len);
	if (!ch && chance(c, 60))
		ch = chunk_find(c, 1u << CH_USERPTR, len);
	if (ch && !mem_take(ch->mem)) {
		chunk_put(ch);
		ch = NULL;
	}
	if (!ch) {
		ch = chunk_get_free(c);
		if (!ch)
			return false;
		if (!userptr_map(c, ch, len) || !mem_take(ch->mem)) {
			chunk_put(ch);
			return false;
		}
	}
	h->ch[h->nch++] = ch;
	*ptr = (unsigned long)ch->addr;
	*plen = len;
	switch (kind) {
	case UP_MISALIGNED:
		*ptr += 1 + rnd(c, PAGE - 1);
		break;
	case UP_READONLY:
		if (mprotect(ch->addr, ch->len, PROT_READ) == 0)
			ch->prot = PROT_READ;
		break;
	case UP_SHORT:
		*plen = len ? len - 1 - rnd(c, len) % len : 0;
		if (*plen == len)
			*plen = len - 1;
		break;
	case UP_UNMAPPED:
		*ptr = (unsigned long)(g.arena + (size_t)NR_CHUNKS * CHUNK_SIZE);	/* guard */
		break;
	default:
		if (ch->prot != (PROT_READ | PROT_WRITE) &&
		    mprotect(ch->addr, ch->len, PROT_READ | PROT_WRITE) == 0)
			ch->prot = PROT_READ | PROT_WRITE;
	}
	return true;
}

/*
 * Put a DMABUF in the table (closing the one it replaces); returns its serial number.
 * mem: the import budget of its memory, -1 for none.
 */
static u32 dmabuf_put(struct ctx *c, int fd, u64 size, int origin, u32 imported, int mem)
{
	static const char *const origins[] = { "expbuf", "udmabuf", "heap" };
	u32 s = rnd(c, NR_DMABUFS), id;
	int old;

	lock();
	id = ++g.dmabuf_ids;
	old = g.dmabufs[s].fd;
	g.dmabufs[s] = (struct dmabuf){ .fd = fd, .id = id, .size = size, .origin = origin,
					.imported = imported, .mem = mem };
	unlock();
	if (old >= 0)
		close(old);
	trace(c, "dmabuf#%u %s size=%llu fd=%d", id, origins[origin], (unsigned long long)size,
	      fd);
	return id;
}

/*
 * A DMABUF fd (dup'ed) of at least len bytes (of any size when hostile). With id, for an
 * import into c->dev, its serial number in *id: only one whose memory has import budget
 * left; then allocates one from the heap if none fits.
 */
static int dmabuf_for(struct ctx *c, u32 len, u32 *id)
{
	u32 start = rnd(c, NR_DMABUFS), i;
	struct dev *d = c->dev;
	bool import = id;
	int fd = -1, mem;

	if (import)
		*id = 0;
	if (d && d->no_import)
		return -1;
	lock();
	for (i = 0; i < NR_DMABUFS && fd < 0; i++) {
		struct dmabuf *db = &g.dmabufs[(start + i) % NR_DMABUFS];

		if (db->fd < 0 || (!c->hostile && db->size < len))
			continue;
		/* Contiguous importers (dma-contig) need an exporter's buffer: prefer those. */
		if (db->origin != DB_EXPBUF && chance(c, 40))
			continue;
		/* Heap buffers: imported or synced, not both (see op_dmabuf_sync()). */
		if (import && d && db->origin == DB_HEAP &&
		    (db->imported & (HEAP_CPU_ONLY | 1u << d->dma_id)))
			continue;
		if (import && !mem_take_locked(db->mem))
			continue;
		if (import && d && db->origin == DB_HEAP)
			db->imported |= 1u << d->dma_id;
		fd = fcntl(db->fd, F_DUPFD_CLOEXEC, 3);
		if (import)
			*id = db->id;
	}
	unlock();
	if (fd < 0 && import && g.heap_fd >= 0 && len && len < (64u << 20)) {
		struct dma_heap_allocation_data a = {
			.len = PAGE_UP(len), .fd_flags = O_RDWR | O_CLOEXEC,
		};

		c->dev = NULL;
		note(c, "len=%llu (for an import)", (unsigned long long)a.len);
		if (SYS(c, K_HEAP_ALLOC, ioctl(g.heap_fd, DMA_HEAP_IOCTL_ALLOC, &a)) == 0) {
			mem = mem_new(HEAP_BUDGET);
			if (mem_take(mem))
				fd = fcntl(a.fd, F_DUPFD_CLOEXEC, 3);
			/* kept for the next imports, into other devices */
			*id = dmabuf_put(c, a.fd, a.len, DB_HEAP, d ? 1u << d->dma_id : 0, mem);
		}
		c->dev = d;
	}
	return fd;
}

/* Fill the memory fields of plane p (or of the buffer when !mplane). */
static bool fill_plane(struct ctx *c, struct v4l2_buffer *b, struct held *h, u32 p, u32 len)
{
	struct v4l2_plane *pl = c->q->mplane ? &b->m.planes[p] : NULL;
	int kind = UP_VALID, fd;
	unsigned long ptr;
	u32 plen = 0;

	if (b->memory == V4L2_MEMORY_USERPTR) {
		if (c->hostile)
			kind = rnd(c, NR_UP);
		if (kind == UP_READONLY && c->q->output)
			kind = UP_SHORT;	/* an output may read read-only memory */
		if (!userptr_for(c, h, len, kind, &ptr, &plen))
			return false;
		*(pl ? &pl->m.userptr : &b->m.userptr) = ptr;
	} else if (b->memory == V4L2_MEMORY_DMABUF) {
		fd = dmabuf_for(c, len, &h->ids[h->nfd]);
		if (fd < 0)
			return false;
		h->fds[h->nfd++] = fd;
		*(pl ? &pl->m.fd : &b->m.fd) = fd;	/* length 0: the size of the dmabuf */
	} else {
		return true;
	}
	*(pl ? &pl->length : &b->length) = plen;
	return true;
}

/*
 * A request of device d in state st (any if st < 0), dup'ed; -1 if none. *slot and *gen
 * say which, for request_set_state(). With claim, it becomes R_CLAIMED.
 */
static int request_get(struct ctx *c, struct dev *d, int st, int *slot, u32 *gen, bool claim)
{
	u32 start = rnd(c, NR_REQS), i;
	int fd = -1;

	lock();
	for (i = 0; i < NR_REQS; i++) {
		struct request *r = &g.reqs[(start + i) % NR_REQS];

		if (r->fd < 0 || (d && r->dev != d->id) || (st >= 0 && r->state != st))
			continue;
		fd = fcntl(r->fd, F_DUPFD_CLOEXEC, 3);
		if (fd < 0)
			break;
		*slot = (start + i) % NR_REQS;
		if (gen)
			*gen = r->gen;
		if (claim)
			r->state = R_CLAIMED;
		break;
	}
	unlock();
	return fd;
}

/* Record what a call did to a request, unless the slot holds another one by now. */
static void request_set_state(int slot, u32 gen, int st)
{
	if (slot < 0)
		return;
	lock();
	if (g.reqs[slot].fd >= 0 && g.reqs[slot].gen == gen)
		g.reqs[slot].state = st;
	unlock();
}

static int media_fd_dup(struct dev *d)
{
	int fd;

	LOCKED(fd = d->media_fd >= 0 ? fcntl(d->media_fd, F_DUPFD_CLOEXEC, 3) : -1);
	return fd;
}

/* Allocate a request on d's media device and put it in the table, in state st. */
static int request_alloc(struct ctx *c, struct dev *d, int st, int *slot_out, u32 *gen)
{
	int mfd = media_fd_dup(d), rfd = -1, old = -1;
	u32 s, old_gen, new_gen;
	long r;

	if (mfd < 0)
		return -1;
	note(c, "media=%s", d->media);
	r = SYS(c, K_REQ_ALLOC, ioctl(mfd, MEDIA_IOC_REQUEST_ALLOC, &rfd));
	close(mfd);
	if (r < 0)
		return -1;
	s = rnd(c, NR_REQS);
	lock();
	old = g.reqs[s].fd;
	old_gen = g.reqs[s].gen;
	new_gen = ++g.req_gen;
	g.reqs[s] = (struct request){ .fd = rfd, .dev = d->id, .state = st, .gen = new_gen };
	if (gen)
		*gen = new_gen;
	rfd = fcntl(rfd, F_DUPFD_CLOEXEC, 3);
	unlock();
	trace(c, "request %u/%u allocated", s, new_gen);
	if (old >= 0) {
		note(c, "request %u/%u replaced", s, old_gen);
		SYS(c, K_REQ_CLOSE, close(old));
	}
	*slot_out = s;
	return rfd;
}

static long request_queue(struct ctx *c, int rfd, int slot, u32 gen)
{
	long r;

	note(c, "request %d/%u", slot, gen);
	r = SYS(c, K_REQ_QUEUE, ioctl(rfd, MEDIA_REQUEST_IOC_QUEUE));
	if (r == 0)
		request_set_state(slot, gen, R_QUEUED);
	return r;
}

/* Hostile plane fields of plane p, including ones whose sums overflow 32 bits. */
static void corrupt_plane(struct ctx *c, struct v4l2_plane *pl, u32 memory)
{
	switch (rnd(c, 6)) {
	case 0: pl->bytesused = edge(c); break;
	case 1: pl->length = edge_size(c, pl->length); break;
	case 2:
		pl->data_offset = 0xfffffff0;
		pl->bytesused = 0x20;
		break;
	case 3: pl->data_offset = edge(c); break;
	case 4:
		if (memory == V4L2_MEMORY_DMABUF)
			pl->m.fd = edge_fd(c);
		else
			pl->m.userptr = (unsigned long)edge_ptr(c);
		break;
	default: memset(pl->reserved, 0xff, sizeof(pl->reserved));
	}
}

/* Corrupt one to three fields of a buffer about to be queued. */
static void corrupt_buffer(struct ctx *c, struct v4l2_buffer *b, u32 nplanes)
{
	int n = 1 + rnd(c, 3);

	while (n--) {
		u32 p = nplanes ? rnd(c, nplanes) : 0;

		switch (rnd(c, 16)) {
		case 0: b->index = chance(c, 50) ? b->index + c->q->count : edge(c); break;
		case 1: b->type = edge_type(c); break;
		case 2: b->memory = edge_memory(c); break;
		case 3: b->field = chance(c, 50) ? rnd(c, 12) : edge(c); break;
		case 4: b->flags ^= chance(c, 50) ? 1u << rnd(c, 32) : edge(c); break;
		case 5: b->bytesused = edge(c); break;
		case 6:
			if (c->q->mplane)
				b->length = chance(c, 50) ? edge(c) : nplanes + 1;
			else
				b->length = edge_size(c, b->length);
			break;
		case 7:
			if (c->q->mplane)
				b->m.planes = chance(c, 50) ? edge_ptr(c) : c->planes_ro;
			else if (b->memory == V4L2_MEMORY_DMABUF)
				b->m.fd = edge_fd(c);
			else
				b->m.userptr = (unsigned long)edge_ptr(c);
			break;
		case 8:
			b->flags |= V4L2_BUF_FLAG_REQUEST_FD;
			b->request_fd = edge_fd(c);
			break;
		case 9:
			b->reserved2 = edge(c);
			b->reserved = edge(c);
			break;
		case 10:
			b->timestamp.tv_sec = -1;
			b->timestamp.tv_usec = (long)edge(c);
			b->timecode.type = edge(c);
			b->flags |= V4L2_BUF_FLAG_TIMECODE;
			break;
		default:
			if (!c->q->mplane || !nplanes)
				b->bytesused = edge_size(c, b->length);
			else
				corrupt_plane(c, &c->planes[p], b->memory);
		}
	}
}

/* A request for the buffer in b when the queue takes them (then always, as vb2 wants). */
static int qbuf_request(struct ctx *c, struct v4l2_buffer *b, int *rslot, u32 *rgen)
{
	int rfd = -1;

	if ((c->q->caps & V4L2_BUF_CAP_SUPPORTS_REQUESTS) &&
	    (c->q->uses_requests || chance(c, 25))) {
		rfd = request_get(c, c->dev, R_EMPTY, rslot, rgen, true);
		if (rfd < 0)
			rfd = request_alloc(c, c->dev, R_CLAIMED, rslot, rgen);
		if (rfd >= 0) {
			b->flags |= V4L2_BUF_FLAG_REQUEST_FD;
			b->request_fd = rfd;
		}
	}
	return rfd;
}

/*
 * QBUF (or PREPARE_BUF) of one index: QUERYBUF for its lengths, memory for the queue's
 * type, maybe in a request, then the call. Hostile calls corrupt the result.
 */
static long qbuf_index(struct ctx *c, u32 index, bool prepare)
{
	struct v4l2_buffer b;
	struct held h = { .nch = 0 };
	u32 nplanes = 1, p, lens[MAX_PLANES], rgen = 0;
	int rslot = -1, rfd = -1, qerr;
	bool out = c->q->output;
	long r = -1;

	if (querybuf(c, index, &b) < 0)
		return -1;
	if (c->q->mplane)
		nplanes = b.length <= MAX_PLANES ? b.length : 1;
	for (p = 0; p < nplanes; p++)
		lens[p] = c->q->mplane ? c->planes[p].length : b.length;
	memset(&b.timestamp, 0, sizeof(b.timestamp));
	b.flags &= V4L2_BUF_FLAG_TIMECODE;
	b.field = out ? V4L2_FIELD_NONE : V4L2_FIELD_ANY;
	b.bytesused = out ? lens[0] : 0;
	if (out)
		clock_gettime(CLOCK_MONOTONIC, (struct timespec *)&b.timestamp);
	for (p = 0; p < nplanes; p++) {
		if (c->q->mplane) {
			c->planes[p].bytesused = out ? lens[p] : 0;
			c->planes[p].data_offset = 0;
		}
		if (!fill_plane(c, &b, &h, p, lens[p]))
			goto release;
	}
	if (b.memory == V4L2_MEMORY_MMAP && (c->q->caps & V4L2_BUF_CAP_SUPPORTS_MMAP_CACHE_HINTS) &&
	    chance(c, 20))
		b.flags |= V4L2_BUF_FLAG_NO_CACHE_INVALIDATE | V4L2_BUF_FLAG_NO_CACHE_CLEAN;
	if (!prepare)
		rfd = qbuf_request(c, &b, &rslot, &rgen);
	if (c->hostile)
		corrupt_buffer(c, &b, nplanes);
	note(c, "index=%u type=%u memory=%u length=%u flags=%#x req=%d/%u dmabufs=%u,%u,%u",
	     b.index, b.type, b.memory, b.length, b.flags, rslot, rgen, h.nfd > 0 ? h.ids[0] : 0,
	     h.nfd > 1 ? h.ids[1] : 0, h.nfd > 2 ? h.ids[2] : 0);
	if (b.memory == V4L2_MEMORY_DMABUF)
		c->q->memory = V4L2_MEMORY_DMABUF;	/* no fault injection, see fail_allowed() */
	r = SYS(c, prepare ? K_PREPARE_BUF : K_QBUF,
		ioctl(c->fd, prepare ? VIDIOC_PREPARE_BUF : VIDIOC_QBUF,
		      c->hostile ? arg_or_bad(c, 5, &b) : &b));
	qerr = r < 0 ? errno : 0;
	lock();
	if (r == 0 && index < MAX_TRACK)
		c->q->bstate[index] = prepare ? B_PREPARED : B_QUEUED;
	if (r == 0 && rfd >= 0)
		c->q->uses_requests = true;
	if (!c->hostile && b.memory == V4L2_MEMORY_USERPTR)
		r == 0 ? c->q->uptr_ok++ : c->q->uptr_fail++;
	if (!c->hostile && b.memory == V4L2_MEMORY_DMABUF)
		r == 0 ? c->q->dmabuf_ok++ : c->q->dmabuf_fail++;
	unlock();
	if (!c->hostile)
		valid_result(c, r);
	/*
	 * EFAULT may come after the buffer was bound (the V4L2 core copies the buffer back
	 * after the QBUF, and the plane array may be read-only): a second buffer in that
	 * request would make vivid WARN. So it stays claimed until its slot is reused.
	 */
	if (rfd >= 0 && qerr != EFAULT)
		request_set_state(rslot, rgen, r == 0 ? R_HAS_BUF : R_EMPTY);
	if (r == 0 && rfd >= 0 && chance(c, 80))
		request_queue(c, rfd, rslot, rgen);
release:
	if (rfd >= 0)
		close(rfd);
	for (p = 0; p < (u32)h.nch; p++)
		chunk_put(h.ch[p]);
	for (p = 0; p < (u32)h.nfd; p++)
		close(h.fds[p]);
	return r;
}

/* Wait until the file has a buffer to dequeue (or the timeout). */
static long wait_ready(struct ctx *c, int ms)
{
	struct pollfd pfd = {
		.fd = c->fd, .events = c->q->output ? POLLOUT | POLLWRNORM : POLLIN | POLLRDNORM,
	};
	long r;

	if (c->dev->m2m)
		pfd.events = POLLIN | POLLOUT;	/* m2m: either queue */
	note(c, "events=%#x timeout=%d", pfd.events, ms);
	r = SYS(c, K_POLL, poll(&pfd, 1, ms));
	return r > 0 && !(pfd.revents & POLLERR) ? 1 : 0;
}

static long dqbuf(struct ctx *c, struct v4l2_buffer *b)
{
	long r;

	vb2_buf_init(b, c->planes, c->q->type, c->q->memory ? c->q->memory : V4L2_MEMORY_MMAP, 0,
		     MAX_PLANES);
	note(c, "type=%u memory=%u", b->type, b->memory);
	r = SYS(c, K_DQBUF, ioctl(c->fd, VIDIOC_DQBUF, b));
	if (r == 0 && b->index < MAX_TRACK)
		LOCKED(c->q->bstate[b->index] = B_IDLE);
	return r;
}

/*
 * The operations. Those with op.target run on a target that the worker got (get_target():
 * c->dev, c->q, c->fd) and puts back after them.
 */
static void op_reqbufs(struct ctx *c)
{
	struct v4l2_requestbuffers req = { 0 };

	if (!c->hostile) {
		if (c->q->streaming && chance(c, 50))
			stream(c, false);
		reqbufs(c, chance(c, 20) ? 0 : 1 + rnd(c, 8), pick_memory(c));
		return;
	}
	req.count = chance(c, 60) ? edge_count(c, c->q) : 1 + rnd(c, 4);
	req.type = chance(c, 60) ? c->q->type : edge_type(c);
	req.memory = chance(c, 60) ? V4L2_MEMORY_MMAP + rnd(c, 4) : edge_memory(c);
	if (chance(c, 30))
		req.flags = (u8)rnd(c, 256);
	if (chance(c, 20))
		memset(req.reserved, 0xff, sizeof(req.reserved));
	note(c, "count=%u type=%u memory=%u flags=%#x", req.count, req.type, req.memory,
	     req.flags);
	if (SYS(c, K_REQBUFS, ioctl(c->fd, VIDIOC_REQBUFS, arg_or_bad(c, 5, &req))) == 0 &&
	    req.type == c->q->type)
		LOCKED(queue_allocated_locked(c, req.count, req.memory));
}

/* One to three hostile fields of a CREATE_BUFS. */
static void corrupt_create_bufs(struct ctx *c, struct v4l2_create_buffers *cb)
{
	struct v4l2_pix_format_mplane *mp = &cb->format.fmt.pix_mp;
	int n = 1 + rnd(c, 3);
	u32 p;

	while (n--) {
		switch (rnd(c, 9)) {
		case 0: cb->count = edge_count(c, c->q); break;
		case 1: cb->memory = edge_memory(c); break;
		case 2: cb->format.type = edge_type(c); break;
		case 3: cb->flags = edge(c); break;
		case 4: memset(cb->reserved, 0xff, sizeof(cb->reserved)); break;
		case 5:
			if (c->q->mplane)
				mp->num_planes = edge_num_planes(c);
			else
				cb->format.fmt.pix.sizeimage =
					edge_size(c, cb->format.fmt.pix.sizeimage);
			break;
		default:
			if (c->q->mplane) {
				p = rnd(c, mp->num_planes + 1);
				if (p < MAX_PLANES)
					mp->plane_fmt[p].sizeimage =
						edge_size(c, mp->plane_fmt[p].sizeimage);
			} else if (c->q->video) {
				cb->format.fmt.pix.sizeimage =
					edge_size(c, cb->format.fmt.pix.sizeimage);
			} else {
				cb->format.fmt.meta.buffersize = edge(c);
			}
		}
	}
}

static void op_create_bufs(struct ctx *c)
{
	struct v4l2_create_buffers cb = { 0 };
	u32 p;
	long r;

	if (g_fmt(c, &cb.format) < 0)
		cb.format.type = c->q->type;
	cb.count = chance(c, 15) ? 0 : 1 + rnd(c, 3);
	cb.memory = c->q->memory ? c->q->memory : pick_memory(c);
	if ((c->q->caps & V4L2_BUF_CAP_SUPPORTS_MMAP_CACHE_HINTS) && chance(c, 25))
		cb.flags = V4L2_MEMORY_FLAG_NON_COHERENT;
	/* Larger buffers than the format's are allowed: a page more. */
	if (chance(c, 30)) {
		if (c->q->mplane)
			cb.format.fmt.pix_mp.plane_fmt[0].sizeimage += PAGE;
		else if (c->q->video)
			cb.format.fmt.pix.sizeimage += PAGE;
	}
	if (c->hostile)
		corrupt_create_bufs(c, &cb);
	note(c, "count=%u memory=%u type=%u flags=%#x", cb.count, cb.memory, cb.format.type,
	     cb.flags);
	r = SYS(c, K_CREATE_BUFS, ioctl(c->fd, VIDIOC_CREATE_BUFS, &cb));
	if (r == 0 && cb.format.type == c->q->type && cb.count) {
		lock();
		/* New buffers beside the old ones: not a new generation (struct mem). */
		if (!c->q->count)
			queue_forget(c->q);
		if (cb.capabilities)
			c->q->caps = cb.capabilities;
		c->q->memory = cb.memory;
		c->q->owner = c->vf;
		if (cb.index + cb.count > c->q->count)
			c->q->count = cb.index + cb.count;
		for (p = cb.index; p < cb.index + cb.count && p < MAX_TRACK; p++)
			c->q->bstate[p] = B_IDLE;
		unlock();
	}
	if (!c->hostile)
		valid_result(c, r);
}

static void op_querybuf(struct ctx *c)
{
	struct v4l2_buffer b = { 0 };

	if (!c->hostile) {
		querybuf(c, rnd(c, c->q->count ? c->q->count : 1), &b);
		return;
	}
	b.type = chance(c, 60) ? c->q->type : edge_type(c);
	b.index = chance(c, 50) ? edge(c) : rnd(c, c->q->count + 2);
	b.memory = edge_memory(c);
	if (c->q->mplane) {
		b.m.planes = chance(c, 50) ? c->planes : edge_ptr(c);
		b.length = chance(c, 50) ? rnd(c, MAX_PLANES + 2) : edge(c);
		/* A length past the guard: the kernel must not write beyond 8 planes. */
		if (b.m.planes == c->planes && b.length > MAX_PLANES && chance(c, 50))
			b.length = MAX_PLANES + 1;
	}
	note(c, "index=%u type=%u length=%u planes=%p", b.index, b.type, b.length, b.m.planes);
	SYS(c, K_QUERYBUF, ioctl(c->fd, VIDIOC_QUERYBUF, arg_or_bad(c, 5, &b)));
}

/* QBUF (arg 0) or PREPARE_BUF (arg 1) of an idle buffer; any index when hostile. */
static void op_qbuf(struct ctx *c)
{
	bool prepare = c->op->arg;
	int idx;

	if (!ensure_buffers(c) && !c->hostile)
		return;
	idx = find_idle(c, !prepare);
	if (idx < 0 && !c->hostile)
		return;
	qbuf_index(c, idx < 0 ? rnd(c, MAX_TRACK) : (u32)idx, prepare);
	/* Streaming needs STREAMON; an m2m context needs both queues going. */
	if (!prepare && !c->hostile && !c->q->streaming && chance(c, 50))
		stream(c, true);
}

/* A buffer queued (pct percent of the time), then STREAMON: outputs start once enough are. */
static void queue_and_start(struct ctx *c, u32 pct)
{
	int idx;

	if (!ensure_buffers(c))
		return;
	idx = find_idle(c, true);
	if (idx >= 0 && (pct == 100 || chance(c, pct)))
		qbuf_index(c, idx, false);
	stream(c, true);
}

static void op_dqbuf(struct ctx *c)
{
	struct v4l2_buffer b = { 0 };

	if (c->hostile) {
		b.type = chance(c, 50) ? c->q->type : edge_type(c);
		b.memory = chance(c, 50) ? c->q->memory : edge_memory(c);
		if (c->q->mplane) {
			b.m.planes = chance(c, 40) ? c->planes_ro : chance(c, 50) ? edge_ptr(c) :
				     c->planes;
			b.length = chance(c, 50) ? rnd(c, MAX_PLANES + 2) : edge(c);
		}
		note(c, "type=%u memory=%u length=%u planes=%p", b.type, b.memory, b.length,
		     b.m.planes);
		/* A read-only argument: the buffer is dequeued, then the copy-out fails. */
		SYS(c, K_DQBUF, ioctl(c->fd, VIDIOC_DQBUF, chance(c, 10) ? (void *)c->ro_page : &b));
		return;
	}
	if (!c->q->streaming || !c->q->count) {
		queue_and_start(c, 100);	/* nothing to dequeue yet: get it going */
		return;
	}
	if (!wait_ready(c, chance(c, 80) ? 100 : 300) && chance(c, 75))
		return;
	/* Queue it again: the buffer cycles as in a real application. */
	if (dqbuf(c, &b) == 0 && chance(c, 70))
		qbuf_index(c, b.index, false);
}

static void op_expbuf(struct ctx *c)
{
	struct v4l2_exportbuffer e = { 0 };
	off_t size;

	e.type = c->q->type;
	e.index = rnd(c, c->q->count ? c->q->count : 1);
	e.plane = rnd(c, c->q->nplanes ? c->q->nplanes : 1);
	e.flags = O_CLOEXEC | (chance(c, 80) ? O_RDWR : O_RDONLY);
	if (c->hostile) {
		switch (rnd(c, 6)) {
		case 0: e.type = edge_type(c); break;
		case 1: e.index = edge(c); break;
		case 2: e.plane = chance(c, 50) ? MAX_PLANES + 1 : edge(c); break;
		case 3: e.flags = edge(c); break;
		case 4: e.fd = (int)edge(c); break;
		default: memset(e.reserved, 0xff, sizeof(e.reserved));
		}
	}
	note(c, "type=%u index=%u plane=%u flags=%#x", e.type, e.index, e.plane, e.flags);
	if (SYS(c, K_EXPBUF, ioctl(c->fd, VIDIOC_EXPBUF, &e)) < 0 || e.fd < 0)
		return;
	size = lseek(e.fd, 0, SEEK_END);
	dmabuf_put(c, e.fd, size > 0 ? (u64)size : 0, DB_EXPBUF, 0,
		   mem_of_buffer(c->dev->id, c->q, e.index, e.plane));
}

/* STREAMON (arg 1) or STREAMOFF (arg 0); hostile: types near or far from the queue's. */
static void op_stream(struct ctx *c)
{
	bool on = c->op->arg;
	u32 type;

	if (!c->hostile && on)
		queue_and_start(c, 70);
	else if (!c->hostile)
		stream(c, false);
	if (!c->hostile)
		return;
	type = !on || chance(c, 50) ? edge_type(c) : c->q->type ^ (1u << rnd(c, 4));
	note(c, "type=%u", type);
	SYS(c, on ? K_STREAMON : K_STREAMOFF,
	    ioctl(c->fd, on ? VIDIOC_STREAMON : VIDIOC_STREAMOFF, arg_or_bad(c, 10, &type)));
}

static void op_remove_bufs(struct ctx *c)
{
	struct v4l2_remove_buffers rb = { 0 };
	int idx;
	u32 i;

	rb.type = c->q->type;
	idx = find_idle(c, true);
	rb.index = idx >= 0 ? (u32)idx : 0;
	rb.count = chance(c, 10) ? 0 : 1 + (chance(c, 20) ? 1 : 0);
	if (c->hostile) {
		switch (rnd(c, 5)) {
		case 0: rb.index = edge(c); break;
		case 1: rb.count = edge(c); break;
		case 2:	/* index + count overflows */
			rb.index = 0xffffffff - rnd(c, 2);
			rb.count = 2 + rnd(c, 2);
			break;
		case 3: rb.type = edge_type(c); break;
		default: memset(rb.reserved, 0xff, sizeof(rb.reserved));
		}
	}
	note(c, "index=%u count=%u type=%u", rb.index, rb.count, rb.type);
	if (SYS(c, K_REMOVE_BUFS, ioctl(c->fd, VIDIOC_REMOVE_BUFS, &rb)) || rb.type != c->q->type)
		return;
	lock();
	for (i = rb.index; i < rb.index + rb.count && i < MAX_TRACK; i++)
		c->q->bstate[i] = B_GONE;
	unlock();
}

static void corrupt_format(struct ctx *c, struct v4l2_format *f)
{
	struct v4l2_pix_format_mplane *mp = &f->fmt.pix_mp;
	int n = 1 + rnd(c, 3);
	u32 *w = (u32 *)&f->fmt;
	size_t i;

	if (chance(c, 5)) {	/* anything at all */
		for (i = 0; i < sizeof(f->fmt) / 4; i++)
			w[i] = edge(c);
		return;
	}
	while (n--) {
		switch (rnd(c, 8)) {
		case 0: f->type = edge_type(c); break;
		case 1: f->fmt.pix.width = edge(c); break;
		case 2: f->fmt.pix.height = edge(c); break;
		case 3: f->fmt.pix.pixelformat = edge(c); break;
		case 4: f->fmt.pix.field = edge(c); break;
		case 5:
			if (V4L2_TYPE_IS_MULTIPLANAR(f->type))
				mp->num_planes = edge_num_planes(c);
			else
				f->fmt.pix.bytesperline = edge(c);
			break;
		case 6:
			if (V4L2_TYPE_IS_MULTIPLANAR(f->type))
				mp->plane_fmt[rnd(c, MAX_PLANES)].sizeimage = edge(c);
			else
				f->fmt.pix.sizeimage = edge(c);
			break;
		default:
			if (V4L2_TYPE_IS_MULTIPLANAR(f->type))
				mp->plane_fmt[rnd(c, MAX_PLANES)].bytesperline = edge(c);
			else
				f->fmt.pix.colorspace = edge(c);
		}
	}
}

/*
 * S_FMT (arg 0) or TRY_FMT (arg 1): a small size (memory stays plentiful) and a format
 * the driver lists, or a hostile one.
 */
static void op_set_format(struct ctx *c)
{
	static const struct { u32 w, h; } sane_sizes[] = {
		{ 640, 480 }, { 320, 240 }, { 160, 120 }, { 352, 288 }, { 64, 64 }, { 640, 360 },
	};
	struct v4l2_fmtdesc fd = { .type = c->q->type };
	bool try = c->op->arg;
	struct v4l2_format f;
	u32 i;

	if (g_fmt(c, &f) < 0)
		f.type = c->q->type;
	if (c->q->video) {
		i = rnd(c, ARRAY_SIZE(sane_sizes));
		fd.index = rnd(c, 6);
		note(c, "index=%u type=%u", fd.index, fd.type);
		if (chance(c, 50) && SYS(c, K_ENUM_FMT, ioctl(c->fd, VIDIOC_ENUM_FMT, &fd)) == 0)
			f.fmt.pix.pixelformat = fd.pixelformat;	/* same place in pix_mp */
		/* width and height: the same places in pix and pix_mp */
		f.fmt.pix.width = sane_sizes[i].w;
		f.fmt.pix.height = sane_sizes[i].h;
	}
	if (c->hostile)
		corrupt_format(c, &f);
	note(c, "type=%u %ux%u fourcc=%#x", f.type, f.fmt.pix.width, f.fmt.pix.height,
	     f.fmt.pix.pixelformat);
	if (SYS(c, try ? K_TRY_FMT : K_S_FMT,
		ioctl(c->fd, try ? VIDIOC_TRY_FMT : VIDIOC_S_FMT,
		      c->hostile ? arg_or_bad(c, 3, &f) : &f)) == 0 && !try)
		learn_format(c, &f);
}

static void op_g_fmt(struct ctx *c)
{
	struct v4l2_format f = { 0 };

	if (!c->hostile) {
		g_fmt(c, &f);
		return;
	}
	f.type = edge_type(c);
	note(c, "type=%u", f.type);
	SYS(c, K_G_FMT, ioctl(c->fd, VIDIOC_G_FMT, arg_or_bad(c, 10, &f)));
}

/* mmap a DMABUF (the exporter's mmap) into a free chunk. */
static void mmap_dmabuf(struct ctx *c)
{
	int rw = PROT_READ | PROT_WRITE, fd = dmabuf_for(c, 0, NULL);
	struct chunk *ch;
	u32 len;

	c->dev = NULL;
	if (fd < 0)
		return;
	ch = chunk_get_free(c);
	if (ch) {
		len = PAGE * (1 + rnd(c, 64));
		note(c, "dmabuf len=%u", len);
		if (SYS(c, K_MMAP, MMAP_RET(mmap(ch->addr, len, rw, MAP_SHARED | MAP_FIXED, fd,
						 0))) == 0) {
			chunk_set(ch, CH_DMABUF, len, rw, NODEV);
			ch->mem = -1;
		}
		chunk_put(ch);
	}
	close(fd);
}

/* mmap a buffer plane (or a DMABUF) into a free chunk. */
static void op_mmap(struct ctx *c)
{
	int prot, flags = MAP_SHARED | MAP_FIXED;
	struct v4l2_buffer b;
	struct chunk *ch;
	u32 off, len, plane;

	if (chance(c, 15)) {
		mmap_dmabuf(c);
		return;
	}
	if (!get_target(c))
		return;
	if ((!c->q->count || c->q->memory != V4L2_MEMORY_MMAP) &&
	    (c->hostile || !ensure_buffers(c)))
		goto out;
	if (querybuf(c, rnd(c, c->q->count ? c->q->count : 1), &b) < 0 && !c->hostile)
		goto out;
	plane = c->q->mplane ? rnd(c, b.length && b.length <= MAX_PLANES ? b.length : 1) : 0;
	off = c->q->mplane ? c->planes[plane].m.mem_offset : b.m.offset;
	len = c->q->mplane ? c->planes[plane].length : b.length;
	prot = c->q->output || chance(c, 70) ? PROT_READ | PROT_WRITE : PROT_READ;
	if (c->hostile) {
		switch (rnd(c, 7)) {
		case 0: off += PAGE * (1 + rnd(c, 4)); break;
		case 1: off = edge(c) & ~(PAGE - 1); break;
		case 2: len = chance(c, 50) ? 0 : len + PAGE; break;
		case 3: flags = MAP_PRIVATE | MAP_FIXED; break;
		case 4: prot = chance(c, 50) ? PROT_WRITE : PROT_READ | PROT_WRITE | PROT_EXEC; break;
		case 5: prot = PROT_NONE; break;
		default: off += 1 + rnd(c, PAGE - 1);
		}
	}
	if (len > CHUNK_SIZE)
		len = CHUNK_SIZE;
	ch = chunk_get_free(c);
	if (!ch)
		goto out;
	note(c, "offset=%#x len=%u prot=%d flags=%#x", off, len, prot, flags);
	if (SYS(c, K_MMAP, MMAP_RET(mmap(ch->addr, len, prot, flags, c->fd, off))) == 0) {
		chunk_set(ch, CH_BUF, PAGE_UP(len), prot, c->dev->id);
		ch->vf = c->vf;
		LOCKED(c->vf->refs++);	/* the mapping keeps the file open */
		/* As USERPTR, the same memory as an export of the plane: its budget. */
		ch->mem = c->hostile ? -1 : mem_of_buffer(c->dev->id, c->q, b.index, plane);
		if (chance(c, 50))
			touch(c, ch->addr, len, prot & PROT_WRITE);
	}
	chunk_put(ch);
out:
	put_target(c);
}

/* A locked chunk of the kinds in mask, its statistics counted for the device it holds. */
static struct chunk *chunk_op(struct ctx *c, unsigned int mask, size_t minlen)
{
	struct chunk *ch = chunk_find(c, mask, minlen);

	if (ch)
		c->dev = ch->dev < g.ndevs ? &g.devs[ch->dev] : NULL;
	return ch;
}

static void op_munmap(struct ctx *c)
{
	struct chunk *ch = chunk_op(c, mapped & ~(1u << CH_USERPTR), 0);
	size_t off;

	if (!ch)
		return;
	if (c->hostile && ch->len > PAGE) {
		/* Part of it: the first, the last or a middle page (the VMA splits). */
		off = rnd(c, 3) == 0 ? 0 : (rnd(c, ch->len / PAGE) * PAGE);
		note(c, "chunk %ld page at %zu of %zu", (long)(ch - g.chunks), off, ch->len);
		if (SYS(c, K_MUNMAP, munmap(ch->addr + off, PAGE)) == 0 &&
		    placeholder(ch->addr + off, PAGE, true) < 0)
			chunk_lose(ch, off, PAGE);
	} else {
		chunk_clear(c, ch, true);
	}
	chunk_put(ch);
}

/* USERPTR memory unmapped (or made inaccessible) while the kernel may use it. */
static void op_userptr_unmap(struct ctx *c)
{
	struct chunk *ch = chunk_op(c, 1u << CH_USERPTR, 0);

	if (!ch)
		return;
	switch (rnd(c, 3)) {
	case 0:
		note(c, "chunk %ld PROT_NONE", (long)(ch - g.chunks));
		if (SYS(c, K_MPROTECT, mprotect(ch->addr, ch->len, PROT_NONE)) == 0)
			ch->prot = PROT_NONE;
		break;
	case 1:
		note(c, "chunk %ld MADV_DONTNEED", (long)(ch - g.chunks));
		SYS(c, K_MUNMAP, madvise(ch->addr, ch->len, MADV_DONTNEED));
		break;
	default:
		chunk_clear(c, ch, true);
	}
	chunk_put(ch);
}

/* Moved by mremap(): the chunk's state goes with it, the old place gets a placeholder. */
static void chunk_moved(struct chunk *ch, struct chunk *to, size_t newlen)
{
	chunk_set(to, ch->kind, newlen, ch->prot, ch->dev);
	to->vf = ch->vf;
	to->memfd = ch->memfd;
	to->mem = ch->mem;
	ch->mem = -1;
	ch->vf = NULL;
	ch->memfd = -1;
	if (placeholder(ch->addr, ch->len, true) < 0) {
		chunk_lose(ch, 0, ch->len);
		return;
	}
	ch->kind = CH_FREE;
	ch->len = 0;
}

static void op_mremap(struct ctx *c)
{
	struct chunk *ch = chunk_op(c, mapped, PAGE), *to = NULL;
	size_t newlen;

	if (!ch)
		return;
	switch (rnd(c, 4)) {
	case 0:	/* move to another chunk */
	case 1:	/* move and grow: vb2 mappings must refuse to grow */
		to = chunk_get_free(c);
		if (!to)
			break;
		newlen = ch->len + (rnd(c, 2) && ch->len < CHUNK_SIZE ? PAGE : 0);
		note(c, "chunk %ld -> %ld len %zu -> %zu", (long)(ch - g.chunks),
		     (long)(to - g.chunks), ch->len, newlen);
		if (SYS(c, K_MREMAP, MMAP_RET(mremap(ch->addr, ch->len, newlen, MREMAP_MAYMOVE |
						     MREMAP_FIXED, to->addr))) == 0)
			chunk_moved(ch, to, newlen);
		break;
	case 2:	/* shrink in place */
		newlen = PAGE_UP(ch->len / 2);
		note(c, "chunk %ld shrink %zu -> %zu", (long)(ch - g.chunks), ch->len, newlen);
		if (SYS(c, K_MREMAP, MMAP_RET(mremap(ch->addr, ch->len, newlen, 0))) < 0)
			break;
		if (placeholder(ch->addr + newlen, ch->len - newlen, true) < 0)
			chunk_lose(ch, newlen, ch->len - newlen);
		else
			ch->len = newlen;
		break;
	default:	/* grow in place: the placeholder after it is in the way */
		if (ch->len >= CHUNK_SIZE)
			break;
		note(c, "chunk %ld grow %zu", (long)(ch - g.chunks), ch->len);
		if (SYS(c, K_MREMAP, MMAP_RET(mremap(ch->addr, ch->len, ch->len + PAGE, 0))) == 0)
			ch->len += PAGE;	/* cannot happen; then it is ours anyway */
	}
	chunk_put(to);
	chunk_put(ch);
}

static void op_mprotect(struct ctx *c)
{
	static const int prots[] = { PROT_NONE, PROT_READ, PROT_READ | PROT_WRITE,
				     PROT_READ | PROT_WRITE | PROT_EXEC, PROT_WRITE };
	struct chunk *ch = chunk_op(c, mapped, 0);
	int prot = PICK(c, prots);

	if (!ch)
		return;
	note(c, "chunk %ld len=%zu prot=%d", (long)(ch - g.chunks), ch->len, prot);
	if (SYS(c, K_MPROTECT, mprotect(ch->addr, ch->len, prot)) == 0)
		ch->prot = prot;
	chunk_put(ch);
}

static void op_touch(struct ctx *c)
{
	struct chunk *ch = chunk_op(c, mapped, 0);
	size_t off, len;
	bool wr;

	if (!ch)
		return;
	off = rnd(c, ch->len) & ~63UL;
	len = 1 + rnd(c, ch->len - off < 65536 ? ch->len - off : 65536);
	/* Mostly what the protection allows; sometimes not (the fault is counted). */
	wr = (ch->prot & PROT_WRITE) ? chance(c, 50) : chance(c, 5);
	note(c, "chunk %ld off=%zu len=%zu %s", (long)(ch - g.chunks), off, len,
	     wr ? "write" : "read");
	touch(c, ch->addr + off, len, wr);
	chunk_put(ch);
}

/* read() (arg 0) or write() (arg 1) emulation. */
static void op_rw(struct ctx *c)
{
	bool wr = c->op->arg;
	u32 sz = c->q->nplanes ? c->q->sizes[0] : PAGE;
	size_t len = sz ? sz : PAGE;
	char *buf;
	long r;

	if (len > IO_SIZE)
		len = IO_SIZE;
	buf = c->io + IO_SIZE - len;	/* ends at the guard page */
	if (!c->hostile) {
		/* The right direction on a node that has it, on a queue without buffers. */
		if (!c->dev->rw || c->q->output != wr)
			return;
		if (c->q->count && c->q->owner == c->vf && chance(c, 50)) {
			stream(c, false);
			reqbufs(c, 0, c->q->memory ? c->q->memory : V4L2_MEMORY_MMAP);
		}
		if (!wait_ready(c, 100) && chance(c, 50))
			return;
	} else {
		switch (rnd(c, 6)) {
		case 0: len = 0; break;
		case 1: len = 1; break;
		case 2: len = edge(c); break;	/* reaches the guard page */
		case 3: buf = edge_ptr(c); break;
		case 4: buf = g.arena + (size_t)NR_CHUNKS * CHUNK_SIZE; break;
		default: buf = c->ro_page; len = PAGE;
		}
	}
	note(c, "len=%zu buf=%p", len, buf);
	r = wr ? SYS(c, K_WRITE, write(c->fd, buf, len)) : SYS(c, K_READ, read(c->fd, buf, len));
	/* The emulation owns the queue now, until this file is closed. */
	if (r >= 0 && len && !c->dev->m2m)
		LOCKED(c->q->owner = c->q->owner ? c->q->owner : c->vf);
}

/* poll() on video, media, request and DMABUF fds, one or several. */
static void op_poll(struct ctx *c)
{
	struct pollfd pfd[4];
	int n = 0, i, slot, timeout;
	struct dev *d = c->dev;

	pfd[n++].fd = c->fd;
	if (chance(c, 30) && (pfd[n].fd = media_fd_dup(d)) >= 0)
		n++;
	if (chance(c, 40) && (pfd[n].fd = request_get(c, d, -1, &slot, NULL, false)) >= 0)
		n++;
	if (chance(c, 20) && (pfd[n].fd = dmabuf_for(c, 0, NULL)) >= 0)
		n++;
	c->dev = d;
	for (i = 0; i < n; i++) {
		pfd[i].events = POLLIN | POLLOUT | POLLPRI | POLLRDNORM | POLLWRNORM;
		if (c->hostile)
			pfd[i].events = (short)rnd(c, 0x10000);
		pfd[i].revents = 0;
	}
	timeout = chance(c, 50) ? 0 : chance(c, 80) ? 20 : 2000;	/* the watchdog cuts 2 s */
	note(c, "nfds=%d timeout=%d", n, timeout);
	SYS(c, K_POLL, poll(pfd, n, timeout));
	for (i = 1; i < n; i++)
		close(pfd[i].fd);
}

static void op_open(struct ctx *c)
{
	struct dev *d = &g.devs[rnd(c, g.ndevs)];
	int fd, old;

	c->dev = d;
	if (!d->media[0] || !chance(c, 15)) {
		slot_open(c, d, rnd(c, SLOTS_PER_DEV));
		return;
	}
	/* The media device, reopened. */
	note(c, "%s", d->media);
	fd = SYS(c, K_OPEN, open(d->media, O_RDWR | O_CLOEXEC));
	if (fd < 0)
		return;
	lock();
	old = d->media_fd;
	d->media_fd = fd;
	unlock();
	if (old >= 0)
		SYS(c, K_CLOSE, close(old));
}

static void op_close(struct ctx *c)
{
	struct dev *d = &g.devs[rnd(c, g.ndevs)];
	struct slot *s = &d->slots[rnd(c, SLOTS_PER_DEV)];
	int fd = slot_take(s);

	c->dev = d;
	if (fd >= 0) {
		note(c, "slot %ld", (long)(s - d->slots));
		SYS(c, K_CLOSE, close(fd));
	} else if (c->hostile) {
		note(c, "bad fd");
		SYS(c, K_CLOSE, close(1000 + rnd(c, 1000)));
	}
}

/* dup a slot into another one of the same device (dup2 onto an open one closes it). */
static void op_dup(struct ctx *c)
{
	struct dev *d = &g.devs[rnd(c, g.ndevs)];
	struct slot *from = &d->slots[rnd(c, SLOTS_PER_DEV)];
	struct slot *to = &d->slots[rnd(c, SLOTS_PER_DEV)];
	long r;

	c->dev = d;
	if (from == to)
		return;
	lock();
	if (from->fd < 0) {
		unlock();
		return;
	}
	note(c, "slot %ld -> %ld", (long)(from - d->slots), (long)(to - d->slots));
	if (to->fd >= 0)
		r = SYS(c, K_DUP, dup3(from->fd, to->fd, O_CLOEXEC));
	else
		r = SYS(c, K_DUP, fcntl(from->fd, F_DUPFD_CLOEXEC, 3));
	if (r >= 0) {
		if (to->fd >= 0)
			vfile_put_locked(to->vf);
		else
			to->fd = r;
		to->vf = from->vf;
		to->vf->refs++;
	}
	unlock();
}

/*
 * fork: the child does a few calls on the files and memory it inherited, then exits.
 * Only system calls in the child (other threads may hold locks); alarm() ends it should
 * one block.
 */
static void child_ops(struct ctx *c)
{
	struct v4l2_plane planes[MAX_PLANES];
	struct v4l2_buffer b;
	u32 type = c->q->type;
	int n = 2 + rnd(c, 5), i, fd;

	alarm(2);
	if (opt.failslab) {
		fd = open("/proc/thread-self/make-it-fail", O_WRONLY);
		if (fd >= 0 && write(fd, "0", 1) == 1)
			close(fd);
	}
	while (n--) {
		struct chunk *ch = &g.chunks[rnd(c, NR_CHUNKS)];
		struct v4l2_requestbuffers req = { .type = type, .memory = V4L2_MEMORY_MMAP };

		switch (rnd(c, 6)) {
		case 0:
			memset(&b, 0, sizeof(b));
			b.type = type;
			b.memory = c->q->memory;
			b.index = rnd(c, 4);
			/*
			 * Memory that names nothing: c->planes has the parent's last fds, which
			 * may name other dma-bufs by now, and an import here would spend no
			 * budget (a heap buffer imported twice: DMA-API debugging warns).
			 */
			memset(planes, 0, sizeof(planes));
			if (c->q->memory == V4L2_MEMORY_DMABUF) {
				b.m.fd = -1;
				for (i = 0; i < MAX_PLANES; i++)
					planes[i].m.fd = -1;
			}
			if (c->q->mplane) {
				b.m.planes = planes;
				b.length = MAX_PLANES;
			}
			ioctl(c->fd, rnd(c, 2) ? VIDIOC_QBUF : VIDIOC_DQBUF, &b);
			break;
		case 1:
			ioctl(c->fd, rnd(c, 2) ? VIDIOC_STREAMON : VIDIOC_STREAMOFF, &type);
			break;
		case 2:	/* the child's copy of the arena: no one else uses it */
			if (ch->kind == CH_BUF || ch->kind == CH_USERPTR)
				guarded_access(ch->addr, ch->len < 65536 ? ch->len : 65536, true, 0x5a);
			break;
		case 3:
			if (ch->kind != CH_LOST)
				munmap(ch->addr, CHUNK_SIZE);
			break;
		case 4:
			ioctl(c->fd, VIDIOC_REQBUFS, &req);
			break;
		default:
			close(c->fd);
		}
	}
	_exit(0);
}

static void reap_children(bool all)
{
	int i;

	for (i = 0; i < MAX_CHILDREN; i++) {
		pid_t pid = __atomic_load_n(&g.children[i], __ATOMIC_RELAXED);

		if (pid <= 0)
			continue;
		if (all)
			kill(pid, SIGKILL);
		if (waitpid(pid, NULL, all ? 0 : WNOHANG) == pid)
			__atomic_compare_exchange_n(&g.children[i], &pid, 0, false,
						    __ATOMIC_RELAXED, __ATOMIC_RELAXED);
	}
}

static void op_fork(struct ctx *c)
{
	pid_t pid, zero = 0;
	int i;

	reap_children(false);
	for (i = 0; i < MAX_CHILDREN; i++)
		if (!__atomic_load_n(&g.children[i], __ATOMIC_RELAXED))
			break;
	if (i == MAX_CHILDREN || !get_target(c))
		return;
	note(c, "child %d", i);
	pid = SYS(c, K_FORK, fork());
	if (pid == 0)
		child_ops(c);
	if (pid > 0 && !__atomic_compare_exchange_n(&g.children[i], &zero, pid, false,
						    __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		waitpid(pid, NULL, 0);	/* the place was taken meanwhile */
	put_target(c);
}

/* Devices whose media device takes requests. */
static struct dev *request_dev(struct ctx *c)
{
	struct dev *d = &g.devs[rnd(c, g.ndevs)];
	u32 i;

	for (i = 0; i < (u32)g.ndevs && !c->hostile; i++) {
		struct dev *e = &g.devs[(d->id + i) % g.ndevs];

		if (e->media_fd >= 0 && (e->q[0].caps & V4L2_BUF_CAP_SUPPORTS_REQUESTS))
			return e;
	}
	return d;
}

static void op_req_alloc(struct ctx *c)
{
	struct dev *d = request_dev(c);
	int slot, fd;

	c->dev = d;
	if (!c->hostile || !chance(c, 50)) {
		fd = request_alloc(c, d, R_EMPTY, &slot, NULL);
		if (fd >= 0)
			close(fd);
		return;
	}
	/* On a video fd, or with a pointer the kernel cannot write. */
	if (!get_target_dev(c, d))
		return;
	note(c, "on %s", chance(c, 50) ? "video fd" : "bad pointer");
	fd = media_fd_dup(d);
	SYS(c, K_REQ_ALLOC, ioctl(chance(c, 50) || fd < 0 ? c->fd : fd, MEDIA_IOC_REQUEST_ALLOC,
				  edge_ptr(c)));
	if (fd >= 0)
		close(fd);
	put_target(c);
}

/*
 * A request fd of some device, or a hostile fd in its place. Never one that a thread
 * claimed, and for REINIT (!empty_ok) not an empty one either, which a thread may claim
 * meanwhile: marking it empty after the REINIT would make room for a second buffer.
 */
static int request_or_bad(struct ctx *c, int *slot, u32 *gen, bool empty_ok)
{
	struct dev *d = request_dev(c);
	int fd, st;

	c->dev = d;
	*slot = -1;
	if (c->hostile && chance(c, 40)) {
		switch (rnd(c, 3)) {
		case 0: return -1;
		case 1: return media_fd_dup(d);
		default: return dmabuf_for(c, 0, NULL);
		}
	}
	fd = request_get(c, d, R_HAS_BUF, slot, gen, false);
	for (st = R_QUEUED; fd < 0 && st >= R_EMPTY; st--)
		if (st != R_CLAIMED && (st != R_EMPTY || empty_ok))
			fd = request_get(c, d, st, slot, gen, false);
	return fd;
}

/* MEDIA_REQUEST_IOC_QUEUE (arg 0) or MEDIA_REQUEST_IOC_REINIT (arg 1). */
static void op_req_queue(struct ctx *c)
{
	bool reinit = c->op->arg;
	u32 gen = 0;
	int slot, fd = request_or_bad(c, &slot, &gen, !reinit);

	if (fd < 0 && !c->hostile)
		return;
	if (!reinit) {
		request_queue(c, fd, slot, gen);
	} else {
		note(c, "request %d/%u", slot, gen);
		if (SYS(c, K_REQ_REINIT, ioctl(fd, MEDIA_REQUEST_IOC_REINIT)) == 0)
			request_set_state(slot, gen, R_EMPTY);
	}
	if (fd >= 0)
		close(fd);
}

static void op_req_close(struct ctx *c)
{
	u32 s = rnd(c, NR_REQS), gen;
	int fd;

	lock();
	fd = g.reqs[s].fd;
	gen = g.reqs[s].gen;
	c->dev = fd >= 0 ? &g.devs[g.reqs[s].dev] : NULL;
	g.reqs[s].fd = -1;
	g.reqs[s].state = R_FREE;
	unlock();
	if (fd < 0)
		return;
	note(c, "request %u/%u", s, gen);
	SYS(c, K_REQ_CLOSE, close(fd));
}

/* A plane size some queue wants, for DMABUFs that fit somewhere. */
static u32 some_plane_size(struct ctx *c)
{
	struct dev *d = &g.devs[rnd(c, g.ndevs)];
	u32 s = d->q[rnd(c, d->nq)].sizes[0];

	return PAGE_UP(s ? s : 1 << 20);
}

/* udmabuf: memfd pages as a DMABUF (the memfd must be sealed against shrinking). */
static void op_udmabuf(struct ctx *c)
{
	struct udmabuf_create cr = { .flags = UDMABUF_FLAGS_CLOEXEC };
	struct chunk *ch = NULL;
	u32 size = some_plane_size(c);
	int memfd = -1, fd, mem = -1;
	bool seal = true;

	c->dev = NULL;
	if (g.udmabuf_fd < 0)
		return;
	/* Sometimes the memfd behind USERPTR memory: the same pages both ways. */
	if (chance(c, 30)) {
		ch = chunk_find(c, 1u << CH_USERPTR, 0);
		if (ch && ch->memfd >= 0) {
			memfd = dup(ch->memfd);
			size = ch->len;
			mem = ch->mem;	/* the same pages: the same budget */
		}
		chunk_put(ch);
	}
	if (memfd < 0) {
		mem = mem_new(IMPORT_BUDGET);
		if (c->hostile && chance(c, 30))
			seal = false;
		memfd = sealed_memfd("vb2-stress-udmabuf", size, seal);
		if (memfd < 0)
			return;
	}
	cr.memfd = memfd;
	cr.size = size;
	if (c->hostile) {
		switch (rnd(c, 6)) {
		case 0: cr.size = edge(c); break;
		case 1: cr.offset = edge(c); break;
		case 2: cr.offset = 1 + rnd(c, PAGE - 1); break;
		case 3: cr.flags = edge(c); break;
		case 4: cr.memfd = chance(c, 50) ? (u32)-1 : (u32)g.heap_fd; break;
		default: cr.size = size + PAGE;	/* past the end of the memfd */
		}
	}
	note(c, "size=%llu offset=%llu flags=%#x seal=%d", (unsigned long long)cr.size,
	     (unsigned long long)cr.offset, cr.flags, seal);
	fd = SYS(c, K_UDMABUF, ioctl(g.udmabuf_fd, UDMABUF_CREATE, &cr));
	close(memfd);
	if (fd >= 0)
		dmabuf_put(c, fd, cr.size, DB_UDMABUF, 0, mem);
}

static void op_heap_alloc(struct ctx *c)
{
	struct dma_heap_allocation_data a = {
		.len = some_plane_size(c), .fd_flags = O_RDWR | O_CLOEXEC,
	};

	c->dev = NULL;
	if (g.heap_fd < 0)
		return;
	if (c->hostile) {
		switch (rnd(c, 5)) {
		case 0: a.len = 0; break;
		case 1:
			/* The system heap allocates until the OOM killer comes: only --huge. */
			a.len = opt.huge ? 1ULL << (32 + rnd(c, 31)) :
				chance(c, 50) ? PAGE - 1 : a.len + 1;
			break;
		case 2: a.fd_flags = edge(c); break;
		case 3: a.heap_flags = 1ULL << rnd(c, 64); break;
		default: a.fd = (u32)edge(c);
		}
	}
	note(c, "len=%llu fd_flags=%#x heap_flags=%#llx", (unsigned long long)a.len, a.fd_flags,
	     (unsigned long long)a.heap_flags);
	if (SYS(c, K_HEAP_ALLOC, ioctl(g.heap_fd, DMA_HEAP_IOCTL_ALLOC, &a)) == 0)
		dmabuf_put(c, a.fd, a.len, DB_HEAP, 0, mem_new(HEAP_BUDGET));
}

/*
 * DMA_BUF_IOCTL_SYNC, START then END with the same flags. On other exporters' DMABUFs
 * only what they get right in 6.12 (--sync-any lifts this):
 * - udmabuf maps its pages on the first START with that direction and syncs later ones
 *   with theirs (DMA-API debugging warns): synced both ways only; and it builds that
 *   mapping without a lock (two first STARTs leak an sg_table): one thread at a time;
 * - the system heap syncs its importers' mappings with the caller's direction, and with
 *   CONFIG_DMABUF_DEBUG through scrambled page pointers (an oops, upstream too): a heap
 *   buffer is either imported or synced, never both (HEAP_CPU_ONLY).
 * Hostile flags have bits the core refuses.
 */
static void op_dmabuf_sync(struct ctx *c)
{
	u32 start = rnd(c, NR_DMABUFS), i, id = 0;
	u64 flags = 1 + rnd(c, 3);
	int fd = -1, origin = DB_EXPBUF;
	bool serial;

	c->dev = NULL;
	lock();
	for (i = 0; i < NR_DMABUFS && fd < 0; i++) {
		struct dmabuf *db = &g.dmabufs[(start + i) % NR_DMABUFS];

		if (db->fd < 0 || (db->origin == DB_HEAP && !opt.sync_any &&
				    (db->imported & ~HEAP_CPU_ONLY)))
			continue;
		if (db->origin == DB_HEAP)
			db->imported |= HEAP_CPU_ONLY;
		fd = fcntl(db->fd, F_DUPFD_CLOEXEC, 3);
		id = db->id;
		origin = db->origin;
	}
	unlock();
	if (fd < 0)
		return;
	if (origin != DB_EXPBUF && !opt.sync_any)
		flags = DMA_BUF_SYNC_RW;
	serial = origin == DB_UDMABUF && !opt.sync_any;
	if (c->hostile && !opt.sync_any)
		flags = (edge(c) | 1ULL << (3 + rnd(c, 61))) & ~(u64)DMA_BUF_SYNC_VALID_FLAGS_MASK;
	for (i = 0; i < 2; i++) {
		struct dma_buf_sync s = {
			.flags = flags | (i ? DMA_BUF_SYNC_END : DMA_BUF_SYNC_START),
		};

		note(c, "dmabuf#%u flags=%#llx", id, (unsigned long long)s.flags);
		trace(c, "> DMABUF_SYNC %s", c->desc);	/* before: the call may not return */
		if (serial)
			pthread_mutex_lock(&g.udmabuf_sync);
		SYS(c, K_DMABUF_SYNC, ioctl(fd, DMA_BUF_IOCTL_SYNC, &s));
		if (serial)
			pthread_mutex_unlock(&g.udmabuf_sync);
		if (c->hostile)
			break;
	}
	close(fd);
}

static void op_dmabuf_close(struct ctx *c)
{
	u32 s = rnd(c, NR_DMABUFS), id;
	int fd;

	c->dev = NULL;
	lock();
	fd = g.dmabufs[s].fd;
	id = g.dmabufs[s].id;
	g.dmabufs[s].fd = -1;
	unlock();
	if (fd < 0)
		return;
	note(c, "dmabuf#%u", id);
	SYS(c, K_DMABUF_CLOSE, close(fd));
}

/*
 * The operations: name (for --only), function, weight, whether on a target, argument,
 * whether it allocates.
 * The weights favour the calls that make buffers move (QBUF, DQBUF, STREAMON) and keep
 * the ones that tear things down (close, munmap, REQBUFS 0, fork) rare enough.
 */
static const struct op ops[] = {
	{ "REQBUFS", op_reqbufs, 5, 1, 0, 1 }, { "CREATE_BUFS", op_create_bufs, 3, 1, 0, 1 },
	{ "QUERYBUF", op_querybuf, 3, 1, 0, 0 }, { "QBUF", op_qbuf, 18, 1, 0, 0 },
	{ "DQBUF", op_dqbuf, 18, 1, 0, 0 }, { "PREPARE_BUF", op_qbuf, 3, 1, 1, 0 },
	{ "EXPBUF", op_expbuf, 3, 1, 0, 0 }, { "STREAMON", op_stream, 6, 1, 1, 0 },
	{ "STREAMOFF", op_stream, 2, 1, 0, 0 }, { "REMOVE_BUFS", op_remove_bufs, 2, 1, 0, 0 },
	{ "S_FMT", op_set_format, 2, 1, 0, 0 }, { "G_FMT", op_g_fmt, 1, 1, 0, 0 },
	{ "TRY_FMT", op_set_format, 1, 1, 1, 0 }, { "MMAP", op_mmap, 4, 0, 0, 0 },
	{ "MUNMAP", op_munmap, 2, 0, 0, 0 }, { "MREMAP", op_mremap, 1, 0, 0, 0 },
	{ "MPROTECT", op_mprotect, 1, 0, 0, 0 }, { "TOUCH", op_touch, 3, 0, 0, 0 },
	{ "READ", op_rw, 2, 1, 0, 0 }, { "WRITE", op_rw, 2, 1, 1, 0 },
	{ "POLL", op_poll, 3, 1, 0, 0 }, { "OPEN", op_open, 2, 0, 0, 1 },
	{ "CLOSE", op_close, 1, 0, 0, 0 }, { "DUP", op_dup, 1, 0, 0, 0 },
	{ "FORK", op_fork, 1, 0, 0, 0 }, { "REQ_ALLOC", op_req_alloc, 2, 0, 0, 0 },
	{ "REQ_QUEUE", op_req_queue, 2, 0, 0, 0 }, { "REQ_REINIT", op_req_queue, 1, 0, 1, 0 },
	{ "REQ_CLOSE", op_req_close, 1, 0, 0, 0 }, { "UDMABUF", op_udmabuf, 1, 0, 0, 1 },
	{ "HEAP_ALLOC", op_heap_alloc, 1, 0, 0, 1 }, { "DMABUF_SYNC", op_dmabuf_sync, 1, 0, 0, 0 },
	{ "DMABUF_CLOSE", op_dmabuf_close, 1, 0, 0, 0 },
	{ "USERPTR_UNMAP", op_userptr_unmap, 1, 0, 0, 0 },
};

static unsigned int op_weight[ARRAY_SIZE(ops)];
static unsigned int total_weight;

static bool op_enabled(const char *name)
{
	char list[sizeof(opt.only) + 2];
	char want[40];

	if (!opt.only[0])
		return true;
	snprintf(list, sizeof(list), ",%s,", opt.only);
	snprintf(want, sizeof(want), ",%s,", name);
	return strstr(list, want) != NULL;
}

static const struct op *pick_op(struct ctx *c)
{
	u32 r = rnd(c, total_weight);
	size_t i;

	for (i = 0; i < ARRAY_SIZE(ops); i++) {
		if (r < op_weight[i])
			return &ops[i];
		r -= op_weight[i];
	}
	return &ops[0];
}

/*
 * The memory the guest has left for the kernel. What the allocating calls make the kernel
 * hold (buffers, dma-bufs of the system heap) is nobody's RSS: the OOM killer cannot tell
 * it is the fuzzer's, and together it can take all of a guest's memory (the KASAN guest
 * of make check, 4 GiB, ran out once after 60 s of the short run). Low when what is
 * available outside CMA, which those allocations mostly cannot use, is below --mem-floor
 * percent of the memory outside CMA. A file it cannot read is not low, nor any with
 * --mem-floor 0.
 */
static const char *const meminfo_keys[] = { "MemTotal", "MemAvailable", "CmaTotal", "CmaFree" };

/* The fields of /proc/meminfo named in meminfo_keys, in kB; false when it cannot be read. */
static bool read_meminfo(unsigned long long *v)
{
	char line[128], key[32];
	unsigned long long n;
	size_t i;
	FILE *f = fopen("/proc/meminfo", "re");

	memset(v, 0, ARRAY_SIZE(meminfo_keys) * sizeof(*v));
	if (!f)
		return false;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%31[^:]: %llu", key, &n) != 2)
			continue;
		for (i = 0; i < ARRAY_SIZE(meminfo_keys); i++)
			if (!strcmp(key, meminfo_keys[i]))
				v[i] = n;
	}
	fclose(f);
	return true;
}

static bool memory_low(void)
{
	unsigned long long v[4];	/* total, available, CMA total, CMA free */

	if (!opt.mem_floor || !read_meminfo(v) || !v[0] || v[2] >= v[0] || v[3] > v[1])
		return false;
	return v[1] - v[3] < (v[0] - v[2]) * opt.mem_floor / 100;
}

/*
 * The operation a worker runs next. When memory is low (memory_low()), one that
 * allocates (struct op) gives way to one that lets go: a close of a file or of a
 * dma-buf, counted in g.ops_reclaimed.
 */
static const struct op *next_op(struct ctx *c)
{
	const struct op *op = pick_op(c);
	void (*instead)(struct ctx *c);
	size_t i;

	if (!op->allocates || !memory_low())
		return op;
	__atomic_add_fetch(&g.ops_reclaimed, 1, __ATOMIC_RELAXED);
	instead = chance(c, 50) ? op_close : op_dmabuf_close;
	i = 0;
	while (ops[i].fn != instead)
		i++;
	return &ops[i];
}

/* Fault injection (--failslab): slab and page allocations of the workers fail. */
static int write_str(const char *path, const char *val)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC), r;

	if (fd < 0)
		return -1;
	r = write(fd, val, strlen(val)) < 0 ? -1 : 0;
	close(fd);
	return r;
}

/*
 * DMA-API debugging allocates its cacheline tracking (radix_tree_node) with GFP_ATOMIC in
 * the mapping task and turns itself off for good when that fails: failslab fails every
 * cache but radix_tree_node (the guest boots with slab_nomerge). videobuf2 uses none of it.
 */
static void failslab_caches(void)
{
	const char *dir = "/sys/kernel/slab";
	char path[PATH_MAX];
	struct dirent *e;
	DIR *d = opendir(dir);
	int refused = 0;

	if (!d)
		return;
	while ((e = readdir(d))) {
		if (e->d_type != DT_DIR || e->d_name[0] == '.' ||
		    !strcmp(e->d_name, "radix_tree_node"))
			continue;
		snprintf(path, sizeof(path), "%s/%s/failslab", dir, e->d_name);
		if (write_str(path, "1") < 0)
			refused++;
	}
	closedir(d);
	if (refused)
		fprintf(stderr, "vb2-stress: %d slab caches refused failslab (merged?)\n",
			refused);
}

static void failslab_setup(bool on)
{
	static const char *const dirs[] = { "/sys/kernel/debug/failslab",
					    "/sys/kernel/debug/fail_page_alloc" };
	/* For failslab (0), fail_page_alloc (1) or both (-1); on: when turning it on. */
	static const struct { int dir; bool on; const char *file, *val; } set[] = {
		{ -1, false, "probability", "0" }, { -1, false, "times", "0" },
		{ 0, false, "cache-filter", "N" },
		{ -1, true, "task-filter", "Y" },	/* only tasks with make-it-fail */
		{ 0, true, "cache-filter", "Y" },	/* see failslab_caches() */
		{ -1, true, "verbose", "0" },		/* no stack dump per failure */
		{ -1, true, "interval", "1" }, { -1, true, "times", "-1" },
		{ -1, true, "space", "0" },
		{ -1, true, "ignore-gfp-wait", "N" },	/* GFP_KERNEL too, not only atomic */
		{ 1, true, "ignore-gfp-highmem", "N" },
		{ 1, true, "min-order", "1" },	/* order 0: page tables fail, faults loop */
		{ -1, true, "probability", NULL },
	};
	char path[128], prob[16];
	size_t i, k;

	if (on && access(dirs[0], F_OK) != 0)
		mount("debugfs", "/sys/kernel/debug", "debugfs", 0, NULL);
	if (on)
		failslab_caches();
	snprintf(prob, sizeof(prob), "%d", on ? opt.failslab : 0);
	for (i = 0; i < ARRAY_SIZE(dirs); i++) {
		for (k = 0; k < ARRAY_SIZE(set); k++) {
			if (set[k].on != on || (set[k].dir >= 0 && set[k].dir != (int)i))
				continue;
			snprintf(path, sizeof(path), "%s/%s", dirs[i], set[k].file);
			if (write_str(path, set[k].val ? set[k].val : prob) < 0 && on)
				fprintf(stderr, "vb2-stress: cannot set %s\n", path);
		}
	}
}

static void *scratch_map(size_t len)
{
	/* len bytes, then a guard page */
	char *p = mmap(NULL, len + PAGE, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

	if (p == MAP_FAILED)
		return NULL;
	mprotect(p + len, PAGE, PROT_NONE);
	return p;
}

/* Two views of one page, each followed by a guard page; plane arrays at their ends. */
static bool ctx_setup(struct ctx *c)
{
	int memfd = memfd_create("vb2-stress-scratch", MFD_CLOEXEC);
	char *rw = scratch_map(PAGE), *ro = scratch_map(PAGE);
	size_t poff = PAGE - MAX_PLANES * sizeof(struct v4l2_plane);

	if (memfd < 0 || !rw || !ro || ftruncate(memfd, PAGE) < 0)
		return false;
	if (mmap(rw, PAGE, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, memfd, 0) != rw ||
	    mmap(ro, PAGE, PROT_READ, MAP_SHARED | MAP_FIXED, memfd, 0) != ro)
		return false;
	close(memfd);
	c->rw_page = rw;
	c->ro_page = ro;
	c->planes = (struct v4l2_plane *)(rw + poff);
	c->planes_ro = (struct v4l2_plane *)(ro + poff);
	c->io = scratch_map(IO_SIZE);
	c->fd = -1;
	return c->io != NULL;
}

static void *worker(void *arg)
{
	struct ctx *c = arg;
	u64 i;

	self = c;
	/* The switch of fault injection, flipped around each call (fail_window()). */
	c->fail_fd = opt.failslab ? open("/proc/thread-self/make-it-fail", O_WRONLY | O_CLOEXEC) :
				    -1;
	c->failing = true;
	fail_window(c, false);
	for (i = 0; i < c->nops && !g.stop; i++) {
		c->op = next_op(c);
		c->hostile = chance(c, opt.hostile);
		c->dev = NULL;
		if (!c->op->target || get_target(c)) {
			c->op->fn(c);
			if (c->op->target)
				put_target(c);
		}
		__atomic_add_fetch(&g.ops_done, 1, __ATOMIC_RELAXED);
	}
	fail_window(c, false);
	c->alive = 0;
	return NULL;
}

static void dump_threads(void)
{
	int i;

	for (i = 0; i < opt.threads; i++) {
		struct ctx *c = g.workers[i];

		fprintf(stderr, "vb2-stress: thread %d op=%s call=%s%s for %.1fs dev=%s: %s\n",
			i, c->op ? c->op->name : "-", kind_names[c->kind],
			c->in_call ? " (in the call)" : "",
			c->in_call ? now() - c->call_start : 0.0,
			c->dev ? c->dev->name : "-", c->desc);
	}
}

/* With --recorder: print the recorded calls when the kernel gets a new taint flag. */
static void watch_taint(void)
{
	static long seen = -2;
	static int dumps;
	char buf[32], why[80];
	long t = vb2_read_line("/proc/sys/kernel/tainted", buf, sizeof(buf)) ? -1 : atol(buf);

	if (seen == -2)
		seen = t;
	if (t < 0 || !(t & ~seen))
		return;
	snprintf(why, sizeof(why), "kernel taint went from %ld to %ld", seen, t);
	seen = t;
	if (dumps++ < 3)
		recorder_dump(why);
}

/*
 * Interrupts calls blocked for more than KICK_AFTER seconds (a signal without SA_RESTART:
 * EINTR), ends the run at --seconds, gives up after STALL_LIMIT seconds without a call
 * finished, and prints a progress line every --progress seconds.
 */
static void *watchdog(void *arg)
{
	double last_change = now(), last_report = last_change, last_taint = 0;
	u64 last_sum = 0, last_ops = 0;
	unsigned long long mem[4];

	(void)arg;
	while (!g.done) {
		double t = now();
		u64 sum = 0, ops;
		int i;

		usleep(100000);
		for (i = 0; i < opt.threads; i++) {
			struct ctx *c = g.workers[i];

			sum += c->progress;
			if (c->alive && c->in_call && t - c->call_start > KICK_AFTER)
				pthread_kill(c->tid, SIGUSR1);
		}
		if (sum != last_sum) {
			last_sum = sum;
			last_change = t;
		} else if (t - last_change > STALL_LIMIT) {
			fprintf(stderr, "vb2-stress: no progress for %.0f s\n", STALL_LIMIT);
			dump_threads();
			failslab_setup(false);
			fflush(NULL);
			_exit(3);
		}
		if (opt.seconds > 0 && t - g.t0 > opt.seconds)
			g.stop = 1;
		if (opt.recorder && t - last_taint >= 1.0) {
			watch_taint();
			last_taint = t;
		}
		if (opt.progress <= 0 || t - last_report < opt.progress)
			continue;
		/* The rate of the last interval, and the memory left. */
		ops = __atomic_load_n(&g.ops_done, __ATOMIC_RELAXED);
		fprintf(stderr, "vb2-stress: progress seconds=%.0f ops=%llu ops/s=%.1f"
			" MemAvailable=%lldkB\n", t - g.t0, (unsigned long long)ops,
			(ops - last_ops) / (t - last_report),
			read_meminfo(mem) ? (long long)mem[1] : -1);
		last_ops = ops;
		last_report = t;
	}
	return NULL;
}

static void probe_queue(int fd, struct queue *q, u32 type)
{
	struct v4l2_requestbuffers req = { .type = type, .memory = V4L2_MEMORY_MMAP };
	struct v4l2_create_buffers cb = { .memory = V4L2_MEMORY_MMAP };
	struct v4l2_format f = { .type = type };

	memset(q, 0, sizeof(*q));
	q->type = type;
	q->mplane = V4L2_TYPE_IS_MULTIPLANAR(type);
	q->video = type == V4L2_BUF_TYPE_VIDEO_CAPTURE || type == V4L2_BUF_TYPE_VIDEO_OUTPUT ||
		   q->mplane;
	q->output = V4L2_TYPE_IS_OUTPUT(type);
	if (ioctl(fd, VIDIOC_G_FMT, &f) == 0)
		fmt_sizes(&f, &q->nplanes, q->sizes);
	if (ioctl(fd, VIDIOC_REQBUFS, &req) == 0)
		q->caps = req.capabilities;
	cb.format = f;
	if (ioctl(fd, VIDIOC_CREATE_BUFS, &cb) == 0)
		q->max_bufs = CREATE_MAX_NUM_BUFFERS(&cb);
	queue_forget(q);
}

/* The queues of a device that is not m2m: the first two of these it has. */
#define T(x)	{ V4L2_CAP_##x, V4L2_BUF_TYPE_##x }
static const struct { u32 cap, type; } types[] = {
	T(VIDEO_CAPTURE), T(VIDEO_CAPTURE_MPLANE), T(VIDEO_OUTPUT), T(VIDEO_OUTPUT_MPLANE),
	T(META_CAPTURE), T(META_OUTPUT), T(VBI_CAPTURE), T(SLICED_VBI_CAPTURE), T(VBI_OUTPUT),
	T(SLICED_VBI_OUTPUT), T(SDR_CAPTURE), T(SDR_OUTPUT),
};

#undef T

static int add_dev(const char *name, const char *path, const char *sysname)
{
	struct v4l2_capability cap;
	struct dev *d = &g.devs[g.ndevs];
	size_t i;
	int fd, si;
	u32 caps;
	bool mp;

	if (g.ndevs == MAX_DEVS) {
		fprintf(stderr, "vb2-stress: more than %d devices\n", MAX_DEVS);
		return -1;
	}
	memset(d, 0, sizeof(*d));
	snprintf(d->name, sizeof(d->name), "%s", name);
	snprintf(d->path, sizeof(d->path), "%s", path);
	fd = open(path, O_RDWR | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0 || ioctl(fd, VIDIOC_QUERYCAP, &cap) < 0) {
		fprintf(stderr, "vb2-stress: %s (%s): %s\n", name, path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	caps = (cap.capabilities & V4L2_CAP_DEVICE_CAPS) ? cap.device_caps : cap.capabilities;
	d->rw = caps & V4L2_CAP_READWRITE;
	d->m2m = caps & (V4L2_CAP_VIDEO_M2M | V4L2_CAP_VIDEO_M2M_MPLANE);
	mp = caps & V4L2_CAP_VIDEO_M2M_MPLANE;
	if (d->m2m) {
		d->nq = 2;
		probe_queue(fd, &d->q[0], mp ? V4L2_BUF_TYPE_VIDEO_OUTPUT_MPLANE :
					       V4L2_BUF_TYPE_VIDEO_OUTPUT);
		probe_queue(fd, &d->q[1], mp ? V4L2_BUF_TYPE_VIDEO_CAPTURE_MPLANE :
					       V4L2_BUF_TYPE_VIDEO_CAPTURE);
	}
	for (i = 0; i < ARRAY_SIZE(types) && !d->m2m && d->nq < 2; i++)
		if (caps & types[i].cap)
			probe_queue(fd, &d->q[d->nq++], types[i].type);
	close(fd);
	if (!d->nq || !(caps & V4L2_CAP_STREAMING)) {
		fprintf(stderr, "vb2-stress: %s: no streaming queue\n", name);
		return -1;
	}
	vb2_find_media(sysname, (const char *)cap.bus_info, d->media, sizeof(d->media));
	d->media_fd = d->media[0] ? open(d->media, O_RDWR | O_CLOEXEC) : -1;
	for (si = 0; si < SLOTS_PER_DEV; si++)
		d->slots[si].fd = -1;
	d->id = g.ndevs;
	d->dma_id = d->id;
	for (si = 0; si < d->id; si++)
		if (d->media[0] && !strcmp(g.devs[si].media, d->media))
			d->dma_id = g.devs[si].dma_id;
	g.ndevs++;
	return 0;
}

static void print_dev(struct dev *d)
{
	int i;

	printf("vb2-stress: device %s %s media=%s m2m=%d queues=%d%s", d->name, d->path,
	       d->media[0] ? d->media : "-", d->m2m, d->nq, d->no_import ? " no-import" : "");
	for (i = 0; i < d->nq; i++)
		printf(" type%d=%u caps=%#x planes=%u size=%u", i, d->q[i].type, d->q[i].caps,
		       d->q[i].nplanes, d->q[i].sizes[0]);
	printf("\n");
}

static int cmp_names(const struct dirent **a, const struct dirent **b)
{
	return strverscmp((*a)->d_name, (*b)->d_name);
}

/* Every video node whose V4L2 name matches the pattern. */
static int add_devs_by_name(const char *pattern)
{
	struct dirent **list;
	int n, i, j, found = 0, dup;
	char path[300], name[64], dev[300];

	n = scandir("/sys/class/video4linux", &list, NULL, cmp_names);
	for (i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "/sys/class/video4linux/%s/name", list[i]->d_name);
		snprintf(dev, sizeof(dev), "/dev/%s", list[i]->d_name);
		for (j = 0, dup = 0; j < g.ndevs; j++)
			dup |= !strcmp(g.devs[j].path, dev);
		if (!strncmp(list[i]->d_name, "video", 5) &&
		    !vb2_read_line(path, name, sizeof(name)) && !fnmatch(pattern, name, 0) &&
		    !dup && add_dev(name, dev, list[i]->d_name) == 0)
			found++;
		free(list[i]);
	}
	if (n >= 0)
		free(list);
	if (!found)
		fprintf(stderr, "vb2-stress: no video node named '%s'\n", pattern);
	return found ? 0 : -1;
}

static u64 calls_of(int dev, int kind, u64 *ok)
{
	u64 sum = 0;
	int e;

	for (e = 0; e < NERR; e++)
		sum += stats[dev][kind][e];
	*ok = stats[dev][kind][0];
	return sum;
}

/* The calls of a kind on a device, with the four most frequent errors (ties: lower first). */
static void report_line(int dev, int kind)
{
	u64 calls, ok, left[NERR];
	int e, top, n, len;
	char line[512];

	calls = calls_of(dev, kind, &ok);
	if (!calls)
		return;
	memcpy(left, stats[dev][kind], sizeof(left));
	left[0] = 0;	/* the successes */
	len = snprintf(line, sizeof(line), "# dev=%s op=%s calls=%llu ok=%llu",
		       dev == NODEV ? "-" : g.devs[dev].name, kind_names[kind],
		       (unsigned long long)calls, (unsigned long long)ok);
	for (n = 0; n < 4; n++) {
		top = 0;
		for (e = 1; e < NERR; e++)
			if (left[e] > left[top])
				top = e;
		if (!top)
			break;
		len += snprintf(line + len, sizeof(line) - len, " %s=%llu", err_name(top),
				(unsigned long long)left[top]);
		left[top] = 0;
	}
	printf("%s\n", line);
}

/* Of the calls without hostile arguments (those fail by design), the share that succeeded. */
static double pct(int dev, int kind)
{
	u64 ok = wellformed[dev][kind][0], calls = ok + wellformed[dev][kind][1];

	return calls ? 100.0 * ok / calls : 0.0;
}

/* The figures as KTAP diagnostic lines, and a case DEV/streaming per device. */
static void report(double secs)
{
	u64 calls = 0, ok = 0, o;
	unsigned int i, lost = 0;
	char name[96];
	int d, k;

	ksft_print_header();
	ksft_set_plan(g.ndevs);
	for (d = 0; d <= NODEV; d++) {
		for (k = 0; k < NR_KINDS && (d < g.ndevs || d == NODEV); k++) {
			report_line(d, k);
			calls += calls_of(d, k, &o);
			ok += o;
		}
	}
	for (d = 0; d < g.ndevs; d++) {
		double q = pct(d, K_QBUF), dq = pct(d, K_DQBUF), so = pct(d, K_STREAMON);
		/* --hostile 100 leaves nothing to judge by. */
		bool good = opt.hostile >= 100 ||
			    (q > opt.min_success && dq > opt.min_success && so > opt.min_success);

		ksft_print_msg("dev=%s success QBUF=%.1f%% DQBUF=%.1f%% STREAMON=%.1f%% %s\n",
			       g.devs[d].name, q, dq, so, good ? "OK" : "LOW");
		snprintf(name, sizeof(name), "%s/streaming", g.devs[d].name);
		ksft_test_result_code(good ? KSFT_PASS : KSFT_FAIL, name, NULL);
	}
	for (i = 0; i < NR_CHUNKS; i++)
		lost += g.chunks[i].kind == CH_LOST;
	ksft_print_msg("total ops=%llu calls=%llu ok=%llu seconds=%.1f ops/s=%.1f"
		       " lost-chunks=%u closed-for-memory=%llu\n",
		       (unsigned long long)g.ops_done, (unsigned long long)calls,
		       (unsigned long long)ok, secs, secs > 0 ? g.ops_done / secs : 0.0, lost,
		       (unsigned long long)g.ops_reclaimed);
}

static void cleanup(void)
{
	int d, s, i;

	reap_children(true);
	for (d = 0; d < g.ndevs; d++) {
		for (s = 0; s < SLOTS_PER_DEV; s++)
			if (g.devs[d].slots[s].fd >= 0)
				close(g.devs[d].slots[s].fd);
		if (g.devs[d].media_fd >= 0)
			close(g.devs[d].media_fd);
	}
	for (i = 0; i < NR_DMABUFS; i++)
		if (g.dmabufs[i].fd >= 0)
			close(g.dmabufs[i].fd);
	for (i = 0; i < NR_REQS; i++)
		if (g.reqs[i].fd >= 0)
			close(g.reqs[i].fd);
	for (i = 0; i < NR_CHUNKS; i++)
		if (g.chunks[i].kind != CH_LOST)
			munmap(g.chunks[i].addr, CHUNK_SIZE);
}

static void usage(int code)
{
	fprintf(code ? stderr : stdout,
		"usage: vb2-stress --seed N --ops N [--threads N] [--seconds S] [--progress S]\n"
		"                  [--failslab[=PCT]] [--hostile PCT] [--min-success PCT]\n"
		"                  [--only OP,OP..] [--no-import NAME]... [--trace]\n"
		"                  [--recorder N] [--huge] [--mem-floor PCT]\n"
		"                  [--sync-any] [--dev NAME]... [LABEL=/dev/videoN]...\n"
		"  --seed N          thread t draws its choices from (N, t)\n"
		"  --ops N           operations in all (default 10000)\n"
		"  --threads N       worker threads (default 4, at most %d)\n"
		"  --seconds S       stop after S seconds even if operations remain\n"
		"  --progress S      a progress line every S seconds (default 300, 0: none)\n"
		"  --failslab[=PCT]  fault injection in the workers' calls (default 1%%)\n"
		"  --hostile PCT     operations with hostile arguments (default 50%%)\n"
		"  --min-success PCT exit 1 unless QBUF, DQBUF, STREAMON succeed more (10%%)\n"
		"                    in the operations without hostile arguments\n"
		"  --only OPS        only these operations, e.g. QBUF,DQBUF,STREAMON\n"
		"  --no-import NAME  never give matching nodes a DMABUF to import\n"
		"  --trace           print every call\n"
		"  --recorder N      print the last N calls when the kernel gets tainted\n"
		"  --huge            also sizes that drivers try to allocate in full (OOM)\n"
		"  --mem-floor PCT   below PCT%% of memory left, close instead of allocating (15)\n"
		"  --sync-any        DMA_BUF_IOCTL_SYNC on any DMABUF, any way\n"
		"  --dev NAME        video nodes by V4L2 name, wildcards allowed\n",
		MAX_THREADS);
	exit(code);
}

static void setup_signals(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = kick_handler;	/* no SA_RESTART: blocking calls return EINTR */
	sigaction(SIGUSR1, &sa, NULL);
	sa.sa_sigaction = fault_handler;
	sa.sa_flags = SA_NODEFER | SA_SIGINFO;
	sigaction(SIGSEGV, &sa, NULL);
	sigaction(SIGBUS, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
}

/* The options, and the devices they name. 0, or the exit code of a usage error. */
static int parse_options(int argc, char **argv)
{
	static const struct option lopts[] = {
		{ "seed", required_argument, NULL, 's' }, { "ops", required_argument, NULL, 'n' },
		{ "threads", required_argument, NULL, 't' },
		{ "seconds", required_argument, NULL, 'S' },
		{ "progress", required_argument, NULL, 'P' },
		{ "failslab", optional_argument, NULL, 'f' },
		{ "hostile", required_argument, NULL, 'H' },
		{ "only", required_argument, NULL, 'o' }, { "dev", required_argument, NULL, 'd' },
		{ "trace", no_argument, NULL, 'T' }, { "recorder", required_argument, NULL, 'R' },
		{ "huge", no_argument, NULL, 'u' }, { "no-import", required_argument, NULL, 'I' },
		{ "sync-any", no_argument, NULL, 'y' }, { "help", no_argument, NULL, 'h' },
		{ "min-success", required_argument, NULL, 'm' },
		{ "mem-floor", required_argument, NULL, 'M' }, { NULL, 0, NULL, 0 },
	};
	int ch;

	while ((ch = getopt_long(argc, argv, "", lopts, NULL)) != -1) {
		switch (ch) {
		case 's': opt.seed = strtoull(optarg, NULL, 0); break;
		case 'n': opt.ops = strtoull(optarg, NULL, 0); break;
		case 't': opt.threads = atoi(optarg); break;
		case 'S': opt.seconds = atof(optarg); break;
		case 'P': opt.progress = atof(optarg); break;
		case 'f': opt.failslab = optarg ? atoi(optarg) : 1; break;
		case 'H': opt.hostile = atoi(optarg); break;
		case 'o': snprintf(opt.only, sizeof(opt.only), "%s", optarg); break;
		case 'T': opt.trace = true; break;
		case 'R': opt.recorder = strtoul(optarg, NULL, 0); break;
		case 'u': opt.huge = true; break;
		case 'y': opt.sync_any = true; break;
		case 'h': usage(0); break;
		case 'm': opt.min_success = atof(optarg); break;
		case 'M': opt.mem_floor = atoi(optarg); break;
		case 'I':
			if (opt.n_no_import < (int)ARRAY_SIZE(opt.no_import))
				snprintf(opt.no_import[opt.n_no_import++], sizeof(opt.no_import[0]),
					 "%s", optarg);
			break;
		case 'd':
			if (add_devs_by_name(optarg) < 0)
				return 2;
			break;
		default: usage(2);
		}
	}
	for (; optind < argc; optind++) {
		char *eq = strchr(argv[optind], '=');

		if (!eq)
			usage(2);
		*eq = 0;
		if (add_dev(argv[optind], eq + 1, NULL) < 0)
			return 2;
	}
	return 0;
}

/* The arena, the chunks and the shared tables; 0, or 2 when the arena is refused. */
static int setup_tables(void)
{
	size_t i;

	g.arena = mmap(NULL, (NR_CHUNKS + 1) * CHUNK_SIZE, PROT_NONE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (g.arena == MAP_FAILED) {
		perror("vb2-stress: arena");
		return 2;
	}
	for (i = 0; i < NR_CHUNKS; i++) {
		pthread_mutex_init(&g.chunks[i].lock, NULL);
		g.chunks[i].addr = g.arena + i * CHUNK_SIZE;
		g.chunks[i].memfd = -1;
		g.chunks[i].mem = -1;
	}
	for (i = 0; i < NR_DMABUFS; i++)
		g.dmabufs[i].fd = -1;
	for (i = 0; i < NR_REQS; i++)
		g.reqs[i].fd = -1;
	g.udmabuf_fd = open("/dev/udmabuf", O_RDWR | O_CLOEXEC);
	g.heap_fd = open("/dev/dma_heap/system", O_RDONLY | O_CLOEXEC);
	return 0;
}

/* The workers' contexts, each with its own PRNG; NULL when memory is short. */
static struct ctx *setup_workers(void)
{
	struct ctx *ctxs = calloc(opt.threads, sizeof(*ctxs));
	int t;

	for (t = 0; ctxs && t < opt.threads; t++) {
		struct ctx *c = &ctxs[t];

		c->id = t;
		c->rng = opt.seed * 0x100000001b3ULL + t + 1;
		next_rand(&c->rng);
		c->nops = opt.ops / opt.threads + ((u64)t < opt.ops % opt.threads);
		c->alive = 1;
		if (!ctx_setup(c)) {
			perror("vb2-stress: thread memory");
			return NULL;
		}
		g.workers[t] = c;
	}
	return ctxs;
}

int main(int argc, char **argv)
{
	struct rlimit rl = { 4096, 4096 };
	pthread_t wd;
	struct ctx *ctxs;
	double secs;
	size_t i;
	int t, r;

	setvbuf(stdout, NULL, _IOLBF, 0);
	r = parse_options(argc, argv);
	if (r)
		return r;
	if (!g.ndevs || opt.threads < 1 || opt.threads > MAX_THREADS)
		usage(2);
	for (t = 0; t < g.ndevs; t++) {
		for (i = 0; i < (size_t)opt.n_no_import; i++)
			g.devs[t].no_import |= !fnmatch(opt.no_import[i], g.devs[t].name, 0);
		print_dev(&g.devs[t]);
	}
	for (i = 0; i < ARRAY_SIZE(ops); i++) {
		op_weight[i] = op_enabled(ops[i].name) ? ops[i].weight : 0;
		total_weight += op_weight[i];
	}
	if (!total_weight)
		usage(2);
	setrlimit(RLIMIT_NOFILE, &rl);
	setup_signals();
	if (setup_tables())
		return 2;
	printf("vb2-stress: seed=%llu ops=%llu threads=%d hostile=%d%% failslab=%d%% devices=%d"
	       " udmabuf=%s dma-heap=%s\n", (unsigned long long)opt.seed,
	       (unsigned long long)opt.ops, opt.threads, opt.hostile, opt.failslab, g.ndevs,
	       g.udmabuf_fd >= 0 ? "yes" : "no", g.heap_fd >= 0 ? "yes" : "no");
	ctxs = setup_workers();
	if (!ctxs)
		return 2;
	if (opt.recorder) {
		rec = calloc(opt.recorder, sizeof(*rec));
		if (!rec) {
			fprintf(stderr, "vb2-stress: no memory for --recorder %u\n", opt.recorder);
			return 2;
		}
		watch_taint();	/* the flags before the run */
	}
	if (opt.failslab)
		failslab_setup(true);
	g.t0 = now();
	for (t = 0; t < opt.threads; t++)
		if (pthread_create(&ctxs[t].tid, NULL, worker, &ctxs[t])) {
			fprintf(stderr, "vb2-stress: pthread_create failed\n");
			return 2;
		}
	pthread_create(&wd, NULL, watchdog, NULL);
	for (t = 0; t < opt.threads; t++)
		pthread_join(ctxs[t].tid, NULL);
	secs = now() - g.t0;
	if (opt.failslab)
		failslab_setup(false);
	g.done = 1;
	pthread_join(wd, NULL);
	if (opt.recorder)
		watch_taint();	/* a flag the watchdog's last look missed */
	cleanup();
	report(secs);
	ksft_finished();
}
