# SPDX-License-Identifier: GPL-2.0
"""Compare vb2-bench runs of our and upstream's videobuf2 (make bench).

    benchreport.py --run=ours:DIR [--run=ours:DIR2 ...] --run=upstream:DIR ...
                   [--config=ours:FILE --config=upstream:FILE ...] [--json FILE] [--png FILE]

Each DIR is a guest run whose results.log holds lines of tools/guest/vb2-bench:
    vb2-bench: group=hot op=QBUF alloc=vmalloc mem=MMAP planes=1 ns=1234 iters=20000
A row is named by its keys that are not measurements; each measurement (ns, ns_per_buf,
bytes_per_s, ...) is compared ours / upstream. Under -icount shift=0 a guest nanosecond is
an executed instruction, so repeated runs of one kernel give the same numbers: with
several runs per kernel the report shows the largest difference between them.

A run label IMPL@GUEST (ours@iommu) is another guest of the same kernel, booted with other
devices (tools/plans/bench-iommu.plan): its rows join those of IMPL's run of the same
number (the first ours@iommu with the first ours, ...).

Each --config is the .config of the kernel that a run label (ours, upstream, ours+NAME)
ran; a FILE without a label is ours'. The report starts with the options that matter for
the numbers in ours, and then, for every other kernel, each option where it differs from
ours (all options of the files, not only those).

Prints one table (row, ours, upstream, ratio, goal) and the rows that miss their goal.
Exit status: 0, or 1 when a run has no results at all (never because of a number); a
GUEST run without results still lets the report be printed.
"""

import argparse
import json
import os
import re
import sys

# Measurements, and whether more is better (then the ratio is inverted so that a ratio
# below 1 always means "ours is better").
MEASURES = {
    'ns': False, 'ns_per_buf': False, 'ns_per_call': False,
    'slab_bytes': False, 'vmalloc_bytes': False, 'bytes': False,
    'bytes_per_s': True, 'memcpy_bytes_per_s': True,
}
IGNORED = {'iters', 'rows', 'seconds', 'reason'}
LINE_RE = re.compile(r'^vb2-bench: (.*)$')


def parse_run(path):
    """(row names in the order printed, {row name: {measure: value}}) of one run."""
    rows, order = {}, []
    with open(os.path.join(path, 'results.log'), errors='replace') as f:
        for line in f:
            m = LINE_RE.match(line.rstrip('\n').rstrip('\r'))
            words = m.group(1).split() if m else []
            if not words or '=' not in words[0] or words[0].startswith(('done', 'skip')):
                continue
            keys, values = [], {}
            for k, _, v in (w.partition('=') for w in words):
                if k in MEASURES:
                    try:
                        values[k] = float(v)
                    except ValueError:
                        pass
                elif k not in IGNORED:
                    keys.append('%s=%s' % (k, v))
            name = ' '.join(keys)
            if values and name not in rows:
                order.append(name)
            if values:
                rows[name] = values
    return order, rows


def field(name, key):
    for w in name.split():
        k, _, v = w.partition('=')
        if k == key:
            return v
    return None


def goal_of(name, measure):
    """The goal of a row: (text, function(ratio, ours, everything) -> bool or None).
    The floors (syscalls, the memcpy() beside read()) are there to read the other rows
    by, not to win; through the IOMMU most of a row is the mapping, the same code in both
    kernels: ours must not cost more."""
    if field(name, 'group') == 'floor' or measure == 'memcpy_bytes_per_s':
        return 'floor', lambda r, o, a: None
    if field(name, 'group') in ('hot', 'dmabuf', 'vivid'):
        return '<= 0.8', lambda r, o, a: r <= 0.8
    return '<= 1.0', lambda r, o, a: r <= 1.0


def absolute_goals(ours):
    """Goals on our own figures alone: [(text, met or None)]."""
    out = []
    enotty = next((v['ns'] for n, v in ours.items()
                   if field(n, 'op') == 'ENOTTY' and 'ns' in v), None)
    cycle = next((v['ns'] for n, v in ours.items()
                  if field(n, 'group') == 'hot' and field(n, 'op') in ('QBUF+DQBUF', 'cycle')
                  and field(n, 'alloc') == 'vmalloc' and field(n, 'mem') == 'MMAP'
                  and field(n, 'planes') in (None, '1') and 'ns' in v), None)
    if enotty and cycle:
        out.append(('QBUF+DQBUF (MMAP, vmalloc) %.0f ns <= 1.5 x two ENOTTY ioctls (%.0f ns)'
                    % (cycle, 3 * enotty), cycle <= 3 * enotty))
    # Scaling: the cost per operation with many buffers against the cost with two.
    by_op = {}
    for n, v in ours.items():
        if field(n, 'group') != 'scale':
            continue
        count = field(n, 'n')
        if count is None:
            continue
        for meas, val in v.items():
            base = ' '.join(w for w in n.split() if not w.startswith('n='))
            by_op.setdefault((base, meas), {})[int(count)] = val
    for (base, meas), per_n in sorted(by_op.items()):
        if len(per_n) < 2:
            continue
        lo, hi = min(per_n), max(per_n)
        if per_n[lo] <= 0:
            continue
        scale = per_n[hi] / per_n[lo]
        out.append(('%s: %s at n=%d / n=%d = %.2f <= 1.1' % (base, meas, hi, lo, scale),
                    scale <= 1.1))
    return out


def spread(runs):
    """Largest relative difference of one measurement between runs of one kernel."""
    worst = (0.0, None)
    for rows in runs[1:]:
        for name, values in rows.items():
            first = runs[0].get(name, {})
            for meas, v in values.items():
                a = first.get(meas)
                if a:
                    d = abs(v - a) / a
                    if d > worst[0]:
                        worst = (d, '%s %s' % (name, meas))
    return worst


# The options that change what the rows measure, shown for ours.
CONFIG_WANTED = ('PROVE_LOCKING', 'DEBUG_LIST', 'DEBUG_KMEMLEAK', 'DMA_API_DEBUG', 'KASAN',
                 'DEBUG_OBJECTS', 'FAULT_INJECTION', 'FRAME_POINTER', 'PREEMPT', 'HZ',
                 'SLUB_TINY', 'CC_OPTIMIZE_FOR_SIZE', 'CC_OPTIMIZE_FOR_PERFORMANCE')
# Differences beyond this many are counted, not listed.
CONFIG_DIFF_MAX = 20


def parse_config(path):
    """{option: value} of the options a .config sets (without CONFIG_), or None."""
    if not path or not os.path.exists(path):
        return None
    got = {}
    with open(path, errors='replace') as f:
        for line in f:
            m = re.match(r'^CONFIG_(\w+)=(.*)$', line.strip())
            if m:
                got[m.group(1)] = m.group(2)
    return got


def config_spec(spec):
    """(label, path) of a --config argument: LABEL:FILE, or FILE for ours."""
    label, sep, path = spec.partition(':')
    if sep and label and '/' not in label:
        return label, path
    return 'ours', spec


def config_summary(configs):
    """The report's config lines for {label: path}: ours' options, then the differences
    of each other kernel from ours."""
    if not configs:
        return ['config: unknown']
    labels = sorted(configs, key=lambda x: (x != 'ours', x != 'upstream', x))
    base = labels[0]
    parsed = {label: parse_config(configs[label]) for label in labels}
    lines = []
    got = parsed[base]
    if got is None:
        lines.append('config (%s): unknown (no %s)' % (base, configs[base]))
    else:
        off = [w for w in CONFIG_WANTED if w not in got]
        on = ['%s=%s' % (k, got[k]) for k in CONFIG_WANTED if k in got]
        lines.append('config (%s): %s; not set: %s' % (base, ', '.join(on), ', '.join(off)))
    for label in labels[1:]:
        other = parsed[label]
        if other is None:
            lines.append('config (%s): unknown (no %s)' % (label, configs[label]))
            continue
        if got is None:
            continue
        diff = sorted(k for k in set(got) | set(other) if got.get(k) != other.get(k))
        if not diff:
            lines.append('config (%s): the same options as %s' % (label, base))
            continue
        shown = ['%s %s/%s' % (k, got.get(k, '-'), other.get(k, '-'))
                 for k in diff[:CONFIG_DIFF_MAX]]
        more = len(diff) - len(shown)
        lines.append('config (%s): as %s but for %d option%s (%s/%s, - not set): %s%s' % (
            label, base, len(diff), '' if len(diff) == 1 else 's', base, label,
            ', '.join(shown), ' and %d more' % more if more else ''))
    return lines


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--run', action='append', required=True, help='IMPL:DIR')
    ap.add_argument('--config', action='append', default=[],
                    help='[LABEL:]FILE, the .config of a run label\'s kernel')
    ap.add_argument('--json')
    ap.add_argument('--png')
    args = ap.parse_args()

    runs = {'ours': [], 'upstream': []}
    guests = {}     # (impl, guest): [rows of each run]
    order = []
    status = 0
    for spec in args.run:
        label, _, path = spec.partition(':')
        impl, _, guest = label.partition('@')
        o, rows = parse_run(path)
        if not rows:
            print('benchreport: no vb2-bench results in %s' % path, file=sys.stderr)
            if not guest:
                return 1
            status = 1
        if guest:
            guests.setdefault((impl, guest), []).append(rows)
        else:
            runs.setdefault(impl, []).append(rows)
        order += [n for n in o if n not in order]
    if not runs['ours'] or not runs['upstream']:
        print('benchreport: need runs of both ours and upstream', file=sys.stderr)
        return 1
    for (impl, guest), per_run in sorted(guests.items()):
        for i, rows in enumerate(per_run):
            if i < len(runs.get(impl, [])):
                runs[impl][i].update(rows)
            else:
                print('benchreport: %s@%s run %d has no %s run to join' % (
                    impl, guest, i + 1, impl), file=sys.stderr)
                status = 1
    ours, up = runs['ours'][0], runs['upstream'][0]

    configs = dict(config_spec(c) for c in args.config)
    config_lines = config_summary(configs)
    for line in config_lines:
        print(line)
    for impl in ('ours', 'upstream'):
        if len(runs[impl]) > 1:
            d, where = spread(runs[impl])
            print('repeatability (%s, %d runs): largest difference %.4f%%%s' % (
                impl, len(runs[impl]), 100 * d, (' (%s)' % where) if where else ''))
    print()
    w = max([len(n) for n in order] + [20])
    print('%-*s %-14s %12s %12s %7s  %s' % (w, 'row', 'measure', 'ours', 'upstream', 'ratio',
                                              'goal'))
    table, misses = [], []
    for name in order:
        for meas in sorted(set(ours.get(name, {})) | set(up.get(name, {}))):
            o, u = ours.get(name, {}).get(meas), up.get(name, {}).get(meas)
            ratio = None
            if o is not None and u:
                ratio = (u / o if o else None) if MEASURES.get(meas) else o / u
            text, test = goal_of(name, meas)
            met = test(ratio, o, ours) if ratio is not None else None
            mark = '' if met is None else ('ok' if met else 'MISSED')
            print('%-*s %-14s %12s %12s %7s  %s %s' % (
                w, name, meas, '-' if o is None else '%.0f' % o,
                '-' if u is None else '%.0f' % u,
                '-' if ratio is None else '%.2f' % ratio, text, mark))
            table.append({'row': name, 'measure': meas, 'ours': o, 'upstream': u,
                          'ratio': ratio, 'goal': text, 'met': met})
            if met is False:
                misses.append('%s %s: %.2f (goal %s)' % (name, meas, ratio, text))
    print()
    goals = absolute_goals(ours)
    for text, met in goals:
        print('%s goal: %s' % ('ok    ' if met else 'MISSED', text))
        if not met:
            misses.append(text)
    print()
    print('%d rows, %d goals missed' % (len(table), len(misses)))
    for m in misses:
        print('  missed: %s' % m)

    variants = variant_tables(runs, order, ours)

    if args.json:
        with open(args.json, 'w') as f:
            json.dump({'config': config_lines, 'rows': table, 'absolute_goals': [
                {'goal': t, 'met': m} for t, m in goals], 'variants': variants}, f, indent=1)
    if args.png:
        draw(table, args.png)
    return status


def variant_tables(runs, order, ours):
    """Ours built with other options (IMPL ours+NAME, VB2_BENCH_VARIANTS): what they cost
    on the per-buffer rows, against ours with its default options."""
    out = {}
    for impl in sorted(runs):
        if not impl.startswith('ours+') or not runs[impl]:
            continue
        var = runs[impl][0]
        print()
        print('variant %s against ours with its defaults (instructions per call):' % impl)
        rows = []
        for name in order:
            if not re.match(r'group=(hot|dmabuf|vivid) ', name):
                continue
            o, v = ours.get(name, {}).get('ns'), var.get(name, {}).get('ns')
            if o is None or v is None:
                continue
            print('  %-76s %8.0f %8.0f %+7.0f' % (name, o, v, v - o))
            rows.append({'row': name, 'ours': o, 'variant': v})
        out[impl] = rows
    return out


def draw(table, path):
    try:
        import matplotlib
        matplotlib.use('Agg')
        import matplotlib.pyplot as plt
    except ImportError:
        print('benchreport: no matplotlib, no %s' % path, file=sys.stderr)
        return
    rows = [r for r in table if r['ratio'] is not None]
    if not rows:
        return
    labels = ['%s %s' % (r['row'].replace('group=', '').replace('op=', ''), r['measure'])
              for r in rows]
    ratios = [r['ratio'] for r in rows]
    colors = ['tab:green' if r['met'] else 'tab:red' for r in rows]
    fig, ax = plt.subplots(figsize=(10, max(4, 0.22 * len(rows))))
    ax.barh(range(len(rows)), ratios, color=colors)
    ax.set_yticks(range(len(rows)))
    ax.set_yticklabels(labels, fontsize=6)
    ax.invert_yaxis()
    ax.axvline(1.0, color='black', linewidth=0.8)
    ax.axvline(0.8, color='grey', linewidth=0.8, linestyle='--')
    ax.set_xlabel('ours / upstream (instructions; below 1: ours is cheaper)')
    ax.set_title('videobuf2: ours vs upstream (make bench)')
    fig.tight_layout()
    fig.savefig(path, dpi=110)


if __name__ == '__main__':
    sys.exit(main())
