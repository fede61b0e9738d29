// SPDX-License-Identifier: GPL-2.0
/*
 * A QEMU TCG plugin that counts the instructions the guest executes, per
 * translation block, between two markers, for make profile (tools/host/profile.sh).
 *
 * The marker is the instruction "xchg %bx,%bx" (66 87 db), which nothing in
 * the kernel or the C library executes; tools/guest/vb2-spin.c runs it before
 * and after its measured loop. At an odd marker the plugin takes a snapshot of
 * every counter; at the even one after it, it appends to the output file one
 * line per translation block that ran in between:
 *
 *	<guest address of the block> <instructions in it> <times it ran>
 *
 * then "# end". tools/report/profreport.py --exact turns that into instructions per
 * function. Every count is exact: the block's executions times its length (a
 * block cut short by an interrupt counts whole, which the timer makes rare).
 *
 *   qemu-system-x86_64 ... -plugin path/icount.so,out=FILE
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plugin-api.h"

QEMU_PLUGIN_EXPORT int qemu_plugin_version = QEMU_PLUGIN_VERSION;

/* One translation of a block; never moves, the inline counter points into it. */
struct block {
	uint64_t vaddr;
	uint64_t runs;
	uint64_t base;		/* @runs at the opening marker */
	uint32_t insns;
	struct block *next;
};

static struct block *blocks;
static const char *out_path;
static unsigned int markers;

static const unsigned char marker[] = { 0x66, 0x87, 0xdb };

static void dump(void)
{
	FILE *f = fopen(out_path, "a");
	struct block *b;

	if (!f) {
		perror(out_path);
		return;
	}
	for (b = blocks; b; b = b->next)
		if (b->runs != b->base)
			fprintf(f, "%llx %u %llu\n", (unsigned long long)b->vaddr,
				b->insns, (unsigned long long)(b->runs - b->base));
	fprintf(f, "# end\n");
	fclose(f);
}

static void on_marker(unsigned int vcpu, void *udata)
{
	struct block *b;

	(void)vcpu;
	(void)udata;
	if (markers++ % 2) {
		dump();
		return;
	}
	for (b = blocks; b; b = b->next)
		b->base = b->runs;
}

static int is_marker(struct qemu_plugin_insn *insn)
{
	return qemu_plugin_insn_size(insn) == sizeof(marker) &&
	       !memcmp(qemu_plugin_insn_data(insn), marker, sizeof(marker));
}

static void on_translate(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
	size_t i, n = qemu_plugin_tb_n_insns(tb);
	struct block *b = calloc(1, sizeof(*b));

	(void)id;
	if (!b)
		abort();
	b->vaddr = qemu_plugin_tb_vaddr(tb);
	b->insns = n;
	b->next = blocks;
	blocks = b;
	qemu_plugin_register_vcpu_tb_exec_inline(tb, QEMU_PLUGIN_INLINE_ADD_U64,
						 &b->runs, 1);
	for (i = 0; i < n; i++) {
		struct qemu_plugin_insn *insn = qemu_plugin_tb_get_insn(tb, i);

		if (is_marker(insn))
			qemu_plugin_register_vcpu_insn_exec_cb(insn, on_marker,
							       QEMU_PLUGIN_CB_NO_REGS,
							       NULL);
	}
}

QEMU_PLUGIN_EXPORT int qemu_plugin_install(qemu_plugin_id_t id,
					   const qemu_info_t *info,
					   int argc, char **argv)
{
	int i;

	(void)info;
	for (i = 0; i < argc; i++)
		if (!strncmp(argv[i], "out=", 4))
			out_path = argv[i] + 4;
	if (!out_path) {
		fprintf(stderr, "icount plugin: out=FILE is required\n");
		return -1;
	}
	qemu_plugin_register_vcpu_tb_trans_cb(id, on_translate);
	return 0;
}
