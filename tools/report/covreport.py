# SPDX-License-Identifier: GPL-2.0
"""Coverage of videobuf2 by its tests (make coverage, tools/host/coverage.sh).

    covreport.py extract --into DIR RESULTS_LOG...
        Every gcov dump a guest sent (plan-lib.sh's gcov_dump: a gzipped tar in base64
        between "@@GCOV-BEGIN NAME" and "@@GCOV-END NAME") unpacked into DIR/NAME/.
        Prints the names, one a line.

    covreport.py report --total INFO [--group NAME=INFO ...] [--root DIR]
                        [--json FILE] [--png FILE [--title T]] [--unreached FILE]
                        [--branches FILE]
        Tables from lcov tracefiles (made with branch coverage): lines, functions and
        branches per file of the total; per group the same totals and the lines that
        only that group reaches; per file, the lines each group reaches; per file, the
        branches no test takes by kind (BRANCH_KINDS), each listed in --branches.
        Source paths are shown relative to --root.

The goal (issue 24) is marked for the core, V4L2, memory and allocator files: at least
95% of lines, 100% of functions and 85% of branches.
"""

import argparse
import base64
import io
import json
import os
import re
import sys
import tarfile
from collections import Counter

GOAL = {'lines': 95.0, 'functions': 100.0, 'branches': 85.0}
GOAL_FILES = ('videobuf2-core.c', 'videobuf2-v4l2.c', 'videobuf2-memory.c',
              'videobuf2-memops.c', 'videobuf2-vmalloc.c', 'videobuf2-dma-contig.c',
              'videobuf2-dma-sg.c')
# Why no test takes a branch, judged from the line of source it is on, tried in this
# order; the line of a function's name is "entry" (code gcc generated there, no condition of
# ours). What matches nothing is "test": a branch a test could take and none does yet.
BRANCH_KINDS = (
    ('guard', re.compile(r'\bWARN(_ON)?(_ONCE)?\s*\(')),
    ('assert', re.compile(r'\b(lockdep_assert\w*|dma_resv_assert_held|might_sleep)\s*\(')),
    ('debug', re.compile(r'\b(vb2_dbg|vb2_v4l2_dbg|dprintk)\s*\(')),
    ('macro', re.compile(r'\b(__set_bit|__clear_bit|for_each_\w+|kfree_rcu|wait_event\w*|'
                         r'list_first_entry_or_null|check_\w+_overflow|min_t|max_t|min|max|'
                         r'kref_put|refcount_\w+|atomic_\w+|copy_\w+_user|[pg]et_user)\s*\(')),
)
KIND_NAMES = ('guard', 'assert', 'debug', 'macro', 'entry', 'test')
BEGIN_RE = re.compile(r'^@@GCOV-BEGIN (\S+)\s*$')
END_RE = re.compile(r'^@@GCOV-END (\S+)\s*$')


def extract(args):
    os.makedirs(args.into, exist_ok=True)
    bad = 0
    for path in args.results:
        name, chunks = None, []
        with open(path, errors='replace') as f:
            for line in f:
                line = line.rstrip('\n').rstrip('\r')
                m = BEGIN_RE.match(line)
                if m:
                    name, chunks = m.group(1), []
                    continue
                m = END_RE.match(line)
                if m and name == m.group(1):
                    dest = os.path.join(args.into, name)
                    try:
                        data = base64.b64decode(''.join(chunks), validate=False)
                        os.makedirs(dest, exist_ok=True)
                        with tarfile.open(fileobj=io.BytesIO(data), mode='r:gz') as t:
                            for member in t.getmembers():
                                if member.isfile() and member.name.endswith('.gcda'):
                                    member.name = os.path.basename(member.name)
                                    t.extract(member, dest)
                        print(name)
                    except (ValueError, tarfile.TarError, EOFError) as e:
                        print('covreport: dump %s in %s is damaged: %s' % (name, path, e),
                              file=sys.stderr)
                        bad = 1
                    name = None
                    continue
                if name is not None:
                    chunks.append(line.strip())
        if name is not None:
            print('covreport: dump %s in %s has no end (the guest stopped?)' % (name, path),
                  file=sys.stderr)
            bad = 1
    return bad


class FileCov:
    """One source file of a tracefile: counts per line, function and branch."""

    def __init__(self):
        self.lines, self.fns, self.branches = Counter(), Counter(), Counter()
        self.fn_line = {}

    def add(self, other):
        for mine, theirs in ((self.lines, other.lines), (self.fns, other.fns),
                             (self.branches, other.branches)):
            for k, v in theirs.items():
                mine[k] += v
        self.fn_line.update(other.fn_line)

    def counts(self):
        return {k: (sum(1 for v in c.values() if v), len(c)) for k, c in (
            ('lines', self.lines), ('functions', self.fns), ('branches', self.branches))}


def parse_info(path):
    """{source file: FileCov} of an lcov tracefile; records of one file are merged."""
    files, cur = {}, None
    with open(path, errors='replace') as f:
        for line in f:
            key, _, val = line.strip().partition(':')
            if key == 'SF':
                cur, name = FileCov(), val
                files.setdefault(val, FileCov())
            elif cur is None:
                continue
            elif key == 'DA':
                ln, cnt = val.split(',')[:2]
                cur.lines[int(ln)] += int(cnt)
            elif key == 'FN':
                ln, fn = val.split(',', 1)
                cur.fn_line[fn] = int(ln)
                cur.fns[fn] += 0
            elif key == 'FNDA':
                cnt, fn = val.split(',', 1)
                cur.fns[fn] += int(cnt)
            elif key == 'BRDA':
                ln, block, br, taken = val.split(',')
                cur.branches[(int(ln), block, br)] += 0 if taken == '-' else int(taken)
            elif key == 'end_of_record':
                files[name].add(cur)
                cur = None
    return files


def pct(hit, total):
    return 100.0 * hit / total if total else None


def fmt(hit, total):
    p = pct(hit, total)
    return '%5d/%-5d %7s' % (hit, total, '-' if p is None else '%.1f%%' % p)


def sum_counts(files):
    tot = {'lines': [0, 0], 'functions': [0, 0], 'branches': [0, 0]}
    for fc in files.values():
        for k, (h, n) in fc.counts().items():
            tot[k][0] += h
            tot[k][1] += n
    return {k: tuple(v) for k, v in tot.items()}


def below_goal(c):
    return [k for k, goal in GOAL.items() if pct(*c[k]) is not None and pct(*c[k]) < goal]


def branch_gaps(path, fc):
    """The branches of file PATH (its FileCov FC) that no test takes, in line order:
    (line, function, kind, source line)."""
    try:
        with open(path, errors='replace') as f:
            src = f.read().split('\n')
    except OSError:
        src = []
    starts = sorted((ln, fn) for fn, ln in fc.fn_line.items())
    gaps = []
    for (ln, _, _), cnt in sorted(fc.branches.items()):
        if cnt:
            continue
        text = src[ln - 1].strip() if ln <= len(src) else ''
        fn = max((s for s in starts if s[0] <= ln), default=(0, '?'))
        kind = 'entry' if fn[0] == ln else next(
            (k for k, pat in BRANCH_KINDS if pat.search(text)), 'test')
        gaps.append((ln, fn[1], kind, text))
    return gaps


def report_branches(total, names, root, path):
    """Per file, the branches no test takes by kind; every one of them into PATH."""
    print()
    print('Branches no test takes, by kind (guard: a WARN; assert: a lock assertion; '
          'debug: a debug message;')
    print('macro: inside a kernel macro; entry: a function\'s first line; test: '
          'none of these)')
    print('%-36s' % 'file' + ''.join(' %6s' % k for k in KIND_NAMES))
    lines, out = [], {}
    for p in names:
        gaps = branch_gaps(root + p, total[p])
        kinds = Counter(g[2] for g in gaps)
        if gaps:
            print('%-36s' % p + ''.join(' %6d' % kinds[k] for k in KIND_NAMES))
        out[p] = {k: kinds[k] for k in KIND_NAMES}
        lines += ['%s:%d %s %s | %s\n' % (p, ln, fn, kind, text)
                  for ln, fn, kind, text in gaps]
    if path:
        with open(path, 'w') as f:
            f.write(''.join(lines))
        print('every one of them: %s' % path)
    return out


def report(args):
    root = os.path.abspath(args.root) + '/' if args.root else ''

    def rel(path):
        return path[len(root):] if root and path.startswith(root) else path

    total = {rel(k): v for k, v in parse_info(args.total).items()}
    groups = []
    for spec in args.group:
        name, _, path = spec.partition('=')
        groups.append((name, {rel(k): v for k, v in parse_info(path).items()}))
    names = sorted(total, key=lambda p: (p.startswith('include/'), p))
    out = {'files': {}, 'groups': {}, 'total': {}}

    print('Per file (all tests): hit/total and percentage')
    print('%-36s %19s %19s %19s  %s' % ('file', 'lines', 'functions', 'branches',
                                        'goal 95/100/85'))
    for p in names:
        c = total[p].counts()
        goal = ''
        if os.path.basename(p) in GOAL_FILES:
            short = below_goal(c)
            goal = 'met' if not short else 'below: ' + ', '.join(short)
        print('%-36s %19s %19s %19s  %s' % (p, fmt(*c['lines']), fmt(*c['functions']),
                                            fmt(*c['branches']), goal))
        out['files'][p] = {k: list(v) for k, v in c.items()}
        out['files'][p]['goal'] = goal
    t = sum_counts(total)
    print('%-36s %19s %19s %19s' % ('all', fmt(*t['lines']), fmt(*t['functions']),
                                    fmt(*t['branches'])))
    out['total'] = {k: list(v) for k, v in t.items()}

    if groups:
        # A line only one group reaches: what that group alone adds.
        reached_by = {}
        for name, files in groups:
            for p, fc in files.items():
                for ln, cnt in fc.lines.items():
                    if cnt:
                        reached_by.setdefault((p, ln), set()).add(name)
        print()
        print('Per group (each group alone; "only": lines no other group reaches)')
        print('%-12s %19s %19s %19s %6s' % ('group', 'lines', 'functions', 'branches', 'only'))
        for name, files in groups:
            c = sum_counts(files)
            only = sum(1 for by in reached_by.values() if by == {name})
            print('%-12s %19s %19s %19s %6d' % (name, fmt(*c['lines']), fmt(*c['functions']),
                                                fmt(*c['branches']), only))
            out['groups'][name] = {k: list(v) for k, v in c.items()}
            out['groups'][name]['only_lines'] = only
        print()
        print('Lines per file and group (%)')
        print('%-36s' % 'file' + ''.join(' %11s' % n[:11] for n, _ in groups) + ' %11s' % 'all')
        for p in names:
            row = '%-36s' % p
            for _, files in groups:
                fc = files.get(p)
                v = pct(*fc.counts()['lines']) if fc else None
                row += ' %11s' % ('-' if v is None else '%.1f' % v)
            row += ' %11s' % ('%.1f' % pct(*total[p].counts()['lines'])
                              if total[p].lines else '-')
            print(row)

    out['branch_kinds'] = report_branches(total, names, root, args.branches)

    unreached = []
    for p in names:
        for fn, cnt in sorted(total[p].fns.items(), key=lambda kv: total[p].fn_line.get(kv[0], 0)):
            if not cnt:
                unreached.append('%s:%d %s' % (p, total[p].fn_line.get(fn, 0), fn))
    print()
    print('Functions no test reaches: %d%s' % (len(unreached),
                                              ' (%s)' % args.unreached if args.unreached else ''))
    if args.unreached:
        with open(args.unreached, 'w') as f:
            f.write(''.join(u + '\n' for u in unreached))
    out['unreached_functions'] = unreached

    if args.json:
        with open(args.json, 'w') as f:
            json.dump(out, f, indent=1, sort_keys=True)
    if args.png:
        draw(out, names, args.png, args.title)
    return 0


def draw(out, names, path, title):
    try:
        import matplotlib
        matplotlib.use('Agg')
        import matplotlib.pyplot as plt
    except ImportError:
        print('covreport: no matplotlib, no %s' % path, file=sys.stderr)
        return
    rows = [p for p in names if out['files'][p]['lines'][1]] + ['all']
    files = dict(out['files'], all=out['total'])
    kinds = (('lines', 'tab:blue'), ('functions', 'tab:green'), ('branches', 'tab:orange'))
    h = 0.27
    fig, ax = plt.subplots(figsize=(10, max(4, 0.5 * len(rows))))
    for i, (kind, color) in enumerate(kinds):
        vals = [pct(*files[p][kind]) or 0 for p in rows]
        ax.barh([r + (i - 1) * h for r in range(len(rows))], vals, height=h, color=color,
                label=kind)
    ax.set_yticks(range(len(rows)))
    ax.set_yticklabels(rows, fontsize=7)
    ax.invert_yaxis()
    ax.set_xlim(0, 100)
    for kind, color in kinds:
        ax.axvline(GOAL[kind], color=color, linewidth=0.8, linestyle='--')
    ax.set_xlabel('% reached by the tests (dashed: the goal of the core, V4L2, memory '
                  'and allocator files)')
    ax.set_title(title or 'videobuf2: coverage (make coverage)', fontsize=9)
    ax.legend(loc='lower right', fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest='cmd', required=True)
    e = sub.add_parser('extract')
    e.add_argument('--into', required=True)
    e.add_argument('results', nargs='+')
    r = sub.add_parser('report')
    r.add_argument('--total', required=True)
    r.add_argument('--group', action='append', default=[], help='NAME=INFO')
    r.add_argument('--root')
    r.add_argument('--json')
    r.add_argument('--png')
    r.add_argument('--unreached')
    r.add_argument('--branches', help='every branch no test takes, with its kind')
    r.add_argument('--title', help='of the chart')
    args = ap.parse_args()
    return extract(args) if args.cmd == 'extract' else report(args)


if __name__ == '__main__':
    sys.exit(main())
