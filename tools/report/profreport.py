#!/usr/bin/python3
"""Turn the RIP samples of tools/host/sampler.py into a flat profile, per kernel.

    profreport.py --run NAME:SAMPLES:SYSTEM_MAP[:KALLSYMS] ... [--top N]
    profreport.py --exact --run NAME:COUNTS:SYSTEM_MAP[:KALLSYMS] --ops NAME=N ...
    profreport.py --exact ... --annotate FUNCTION

With --exact, COUNTS is what tools/host/icount/icount.c wrote (one line per translation
block: address, instructions, executions) and the tables give exact instructions per
op: the counts divided by the ops of --ops.

KALLSYMS is a /proc/kallsyms dump from the guest (for module symbols); System.map
covers the kernel image. Prints, for each run, the share of samples per symbol, and a
last table with each symbol's share side by side.

--annotate FUNCTION (with --exact, a function of the kernel image) prints instead the
disassembly of FUNCTION from the vmlinux beside each run's System.map, with how many
times per op each instruction ran: a translation block of N instructions that ran R
times adds R to each of its N instructions.
"""
import argparse
import bisect
import collections
import os
import re
import subprocess


def load_symbols(paths):
    """(sorted addresses, their names) of the text symbols of System.map/kallsyms files."""
    syms = {}
    for path in paths:
        with open(path) as f:
            for parts in map(str.split, f):
                if len(parts) < 3 or parts[1] not in 'tTwW':
                    continue
                try:
                    addr = int(parts[0], 16)
                except ValueError:
                    continue
                if addr:
                    syms[addr] = ' '.join(parts[2:4])
    addrs = sorted(syms)
    return addrs, [syms[a] for a in addrs]


def attribute(symbol_paths, pairs):
    """Sum (instruction pointer, weight) pairs per symbol; user space is one bucket."""
    addrs, names = load_symbols(symbol_paths)
    counts = collections.Counter()
    total = 0
    for rip, n in pairs:
        total += n
        if rip < 0xffff800000000000:
            counts['user space'] += n
            continue
        i = bisect.bisect_right(addrs, rip) - 1
        counts[names[i] if i >= 0 else '?'] += n
    return total, counts


def sampled(path):
    """The instruction pointers of tools/host/sampler.py, one per line."""
    with open(path) as f:
        for line in f:
            if line.strip():
                yield int(line, 16), 1


def block_counts(path):
    """tools/host/icount/icount.c: block address, instructions, executions; first dump only."""
    with open(path) as f:
        for line in f:
            if line.startswith('# end'):
                return
            vaddr, insns, runs = line.split()
            yield int(vaddr, 16), int(insns) * int(runs)


def function_range(system_map, name):
    """Start and end address of NAME in a System.map (end: the next symbol's start)."""
    addrs, names = load_symbols([system_map])
    if name not in names:
        return None
    i = names.index(name)
    return addrs[i], addrs[i + 1] if i + 1 < len(addrs) else addrs[i] + 4096


def disassemble(vmlinux, start, end):
    """(address, text) of each instruction of vmlinux in [start, end)."""
    out = subprocess.run(['objdump', '-d', '--no-show-raw-insn', '--start-address=%#x' % start,
                          '--stop-address=%#x' % end, vmlinux],
                         check=True, capture_output=True, text=True).stdout
    insns = []
    for line in out.splitlines():
        m = re.match(r'\s*([0-9a-f]+):\s+(.*)', line)
        if m:
            insns.append((int(m.group(1), 16), m.group(2).strip()))
    return insns


def annotate(name, counts_path, system_map, ops, function):
    """Per-instruction executions per op of FUNCTION in one exact run."""
    where = function_range(system_map, function)
    if not where:
        print('%s: no function %s in the kernel image\n' % (name, function))
        return
    start, end = where
    insns = disassemble(os.path.join(os.path.dirname(system_map), 'vmlinux'), start, end)
    index = dict((a, i) for i, (a, _) in enumerate(insns))
    runs = [0] * len(insns)
    with open(counts_path) as f:
        for line in f:
            if line.startswith('# end'):
                break
            vaddr, n, r = (int(x, 16 if i == 0 else 10) for i, x in enumerate(line.split()))
            first = index.get(vaddr)
            if first is None:
                continue
            for i in range(first, min(first + n, len(insns))):
                runs[i] += r
    total = sum(runs) / ops
    print('%s: %s, %.1f instructions per op' % (name, function, total))
    for (addr, text), r in zip(insns, runs):
        print('  %8.2f  %x  %s' % (r / ops, addr, text))
    print()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--run', action='append', required=True)
    ap.add_argument('--top', type=int, default=40)
    ap.add_argument('--exact', action='store_true',
                    help='each run is an instruction count of tools/host/icount/icount.c')
    ap.add_argument('--ops', action='append', default=[],
                    help='NAME=N: the ops the counted stretch of that run did (--exact)')
    ap.add_argument('--per-op', action='append', default=[],
                    help='NAME=INSTRUCTIONS: the instructions one op took in that run; '
                         'the tables then show instructions per op instead of shares')
    ap.add_argument('--annotate', metavar='FUNCTION',
                    help='with --exact: the instructions of FUNCTION, with executions per op')
    args = ap.parse_args()

    per_op = {k: float(v) for k, _, v in (x.partition('=') for x in args.per_op)}
    ops = {k: int(v) for k, _, v in (x.partition('=') for x in args.ops)}
    if args.annotate:
        if not args.exact:
            raise SystemExit('--annotate needs --exact')
        for spec in args.run:
            name, data, system_map = spec.split(':')[:3]
            annotate(name, data, system_map, ops[name], args.annotate)
        return

    results = []
    for spec in args.run:
        name, data, *maps = spec.split(':')
        if args.exact:
            total, counts = attribute(maps, block_counts(data))
            # Exact counts: a "sample" is one instruction.
            per_op[name] = total / ops[name]
        else:
            total, counts = attribute(maps, sampled(data))
        results.append((name, total, counts))
        scale = per_op.get(name)
        print('%s: %d %s%s' % (name, total, 'instructions' if args.exact else 'samples',
                                ', %.0f instructions per op' % scale if scale else ''))
        for sym, n in counts.most_common(args.top):
            if n > 0:
                print('  %6.2f%%  %s' % (100.0 * n / total, sym) if not scale else
                      '  %8.1f  %s' % (scale * n / total, sym))
        print()

    if len(results) > 1:
        union = collections.Counter()
        for _, total, counts in results:
            for sym, n in counts.items():
                union[sym] += n / total
        both = len(results) == 2 and all(per_op.get(r[0]) for r in results)
        print('%-48s' % 'symbol' + ''.join('%12s' % r[0] for r in results) +
              ('%12s' % 'difference' if both else ''))
        for sym, _ in union.most_common(args.top * 2):
            cells, values = [], []
            for name, total, counts in results:
                scale = per_op.get(name)
                if scale:
                    values.append(scale * counts[sym] / total)
                cells.append('%12.1f' % values[-1] if scale else
                             '%11.2f%%' % (100.0 * counts[sym] / total))
            if both:
                cells.append('%+12.1f' % (values[0] - values[1]))
            print('%-48s' % sym[:48] + ''.join(cells))


if __name__ == '__main__':
    main()
