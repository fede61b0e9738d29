#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Parse what a guest run printed and judge it.

A guest run (tools/host/run-guest.sh) leaves two logs in its directory:
  results.log  the plan's records (see tools/guest/plan-lib.sh): steps, their output,
               their exit codes and the kernel log written during each of them;
  console.log  the kernel console, for the runs that never reached the end.

Subcommands:
  summary         judge runs and the host-side check items; print a readable summary that
                  ends with "N passed, N failed"; exit 1 when anything failed.
  baseline        write the per-test compliance results of runs to a baseline file.
  kunit-baseline  write the KUnit cases of a run to a KUnit baseline file.
  flaky-report    count the failures of a flaky_measure step (tools/guest/plan-lib.sh),
                  per test and failure location, upstream's and ours side by side.
  compliance      print the per-test compliance results of a run (one per line).
  contract-doc    check Documentation/driver-contract.rst against upstream's results.
  selftest        run the parser's own tests on the fixtures in tools/report/fixtures/.

Every excuse names what it covers (see Documentation/testing.rst, "Verdicts"): a test
that fails upstream too is forgiven only when ours fails it at the same place (the
file(line) of its first "fail:" line), a flaky one only at the place its measurement
saw, and only while that measurement says ours fails it no more often than upstream.
"""

import argparse
import collections
import json
import math
import os
import re
import subprocess
import sys
import tempfile

MARK = '@@VB2 '
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


class Step:
    """One step of a plan; part: the plan (of several composed into one) it belongs to."""

    def __init__(self, sid, kind, label, part):
        self.id, self.kind, self.label, self.part = sid, kind, label, part
        self.output, self.rc, self.secs, self.dmesg = [], None, None, []


class Run:
    """A parsed guest run. taints: (step id, /proc/sys/kernel/tainted after its log);
    debug: (step id, {aid: state}) of the DEBUG records."""

    def __init__(self, path):
        self.path = path
        self.name = os.path.basename(os.path.normpath(path))
        # make check's guests are out/check/guest-FLAVOR: the kernel they ran.
        self.flavor = self.name[6:] if self.name.startswith('guest-') else None
        self.plan, self.steps, self.boot_dmesg = None, [], []
        self.taints, self.debug, self.done = [], [], False
        self._parse()

    def _parse(self):
        res = os.path.join(self.path, 'results.log')
        cur = sink = part = None    # the step being read; where plain lines go
        dmesg_of = {}
        for line in _read_lines(res) if os.path.exists(res) else []:
            if not line.startswith(MARK):
                if sink is not None:
                    sink.append(line)
                continue
            words = line[len(MARK):].split()
            rec, n = (words[0] if words else ''), len(words)
            if rec == 'PLAN':
                self.plan = ' '.join(words[1:])
            elif rec == 'PART' and n >= 2:
                part = words[1]
            elif rec == 'STEP' and n >= 3:
                # Without PART records the run is one plan.
                cur = Step(words[1], words[2], ' '.join(words[3:]) or '-',
                           part or self.plan or '-')
                self.steps.append(cur)
                dmesg_of[cur.id] = cur
                sink = cur.output
            elif rec == 'RC' and cur is not None and n >= 3:
                cur.rc = _int(words[2])
                cur.secs = float(words[3]) if n >= 4 else None
                sink = None
            elif rec == 'DMESG' and n >= 2:
                owner = dmesg_of.get(words[1])
                sink = owner.dmesg if owner is not None else self.boot_dmesg
            elif rec == 'ENDDMESG':
                sink = None
            elif rec == 'TAINT' and n >= 3:
                self.taints.append((words[1], _int(words[2])))
            elif rec == 'DEBUG' and n >= 2:
                self.debug.append((words[1], dict(w.partition('=')[::2] for w in words[2:])))
            elif rec == 'DONE':
                self.done = True
        con = os.path.join(self.path, 'console.log')
        self.console = _read_lines(con) if os.path.exists(con) else []

    def all_dmesg(self):
        """(step id, line) for every kernel log line of the run."""
        yield from (('boot', line) for line in self.boot_dmesg)
        for step in self.steps:
            yield from ((step.id, line) for line in step.dmesg)


def _read_lines(path):
    """The lines of a log; a carriage return (progress output) becomes a tab."""
    with open(path, 'rb') as f:
        data = f.read().decode('utf-8', 'replace')
    out = [raw.rstrip('\r').replace('\r', '\t') for raw in data.split('\n')]
    if out and out[-1] == '':
        out.pop()
    return out


def _int(s):
    try:
        return int(s)
    except ValueError:
        return None


# ---------------------------------------------------------------------------------------
# v4l2-compliance

_DEV_RE = re.compile(r'^Compliance test for (?:.*\s)?device (\S+?):?$')
_TEST_RE = re.compile(r'(?:^|\t)test (.+?): (OK \([^)]*\)|OK|FAIL)\s*$')
_SECTION_RE = re.compile(r'^([A-Z][^\t:]*(?:\([^)]*\))?[^\t:]*):$')
# A fail line may follow progress output on the same line (a carriage return became a
# tab): search for it after any tab. warn: and info: lines do not count.
_FAIL_RE = re.compile(r'(?:^|\t)fail: (.*)$')
_ANSI_RE = re.compile(r'\x1b\[[0-9;]*m')
_LOC_RE = re.compile(r'^(\S+?)\((\d+)\)')


def fail_location(text):
    """"file(line)" of a fail line (the file by its base name), or "?"."""
    m = _LOC_RE.match(text)
    return '%s(%s)' % (os.path.basename(m.group(1)), m.group(2)) if m else '?'


def first_failure(fails):
    """The location of a test's first fail line (the later ones are its callers giving
    up), or "-" for a failure that printed none."""
    return fail_location(fails[0]) if fails else '-'


def compliance_tests(step):
    """Per-test results of a compliance step: [(key, result, fail lines)].

    key is "step|device|section|test", "#n" appended when a test runs again in one
    section. A test's fail lines are those since the previous result line (or heading):
    v4l2-compliance prints the result when the test has returned. plan-lib.sh's
    VB2_COMPLIANCE_AWK reads them the same way.
    """
    results, seen, device, section, fails = [], {}, '-', '-', []
    for line in step.output:
        line = _ANSI_RE.sub('', line)
        m = _DEV_RE.match(line)
        if m:
            device, section, fails = m.group(1), '-', []
            continue
        m = _SECTION_RE.match(line)
        if m and not line.startswith('\t'):
            section, fails = m.group(1), []
            continue
        m = _FAIL_RE.search(line)
        if m:
            fails.append(m.group(1))
            continue
        m = _TEST_RE.search(line)
        if m:
            base = '|'.join((step.id, device, section, m.group(1)))
            seen[base] = n = seen.get(base, 0) + 1
            results.append((base if n == 1 else '%s #%d' % (base, n), m.group(2), fails))
            fails = []
    return results


def data_lines(path):
    """The lines of a results file that carry data: not empty, not # comments."""
    with open(path) as f:
        for line in f:
            line = line.rstrip('\n')
            if line and not line.startswith('#'):
                yield line


# An entry of baseline/compliance.txt: upstream's result and, for FAIL and FLAKY, the
# first-failure locations of its failing runs (None: an old line naming none, which
# excuses nothing).
Expected = collections.namedtuple('Expected', 'result locs')


def read_baseline(path):
    """baseline/compliance.txt as {key: Expected}. A line is "key<TAB>result", and for
    FAIL and FLAKY "<TAB>locations", space-separated ("-": failed without a fail line;
    "none": a FLAKY test that never failed)."""
    base = {}
    for line in data_lines(path):
        parts = line.split('\t')
        key, result = parts[0], parts[1] if len(parts) > 1 else ''
        locs = None
        if len(parts) > 2:
            locs = tuple(l for l in parts[2].split() if l != 'none')
        elif result not in ('FAIL', 'FLAKY'):
            locs = ()
        base[key] = Expected(result, locs)
    return base


def read_results(path):
    """A results file (baseline/anchor.txt) as {key: result}."""
    return dict((line.split('\t')[0], line.split('\t')[1] if '\t' in line else '')
                for line in data_lines(path))


# ---------------------------------------------------------------------------------------
# The flaky list (baseline/flaky.txt)

# One entry: the test (exact key), the failure it covers (first-failure location),
# failures/runs upstream and ours, and free text (plan, kernel, date).
FlakyEntry = collections.namedtuple('FlakyEntry', 'key loc up_f up_n ours_f ours_n text')
_MEASURE_RE = {side: re.compile(r'^%s (\d+)/(\d+)$' % side) for side in ('upstream', 'ours')}
_LOCATION_RE = re.compile(r'^\S+\(\d+\)$|^-$')
# Above upstream "beyond noise": a one-sided Fisher exact test at this level.
FLAKY_P = 0.05


def fisher_greater(a, n1, b, n2):
    """One-sided Fisher exact test: if ours (a failures in n1 runs) and upstream (b in
    n2) fail at the same rate, the probability that ours shows a or more of the a + b
    failures. Small: ours fails more often than upstream."""
    k, n = a + b, n1 + n2
    return sum(math.comb(k, x) * math.comb(n - k, n1 - x)
               for x in range(a, min(k, n1) + 1)) / math.comb(n, n1)


def flaky_p(entry):
    return fisher_greater(entry.ours_f, entry.ours_n, entry.up_f, entry.up_n)


def flaky_stands(entry):
    """Why an entry does not stand, or None: upstream must fail, and ours no more often
    than upstream beyond noise."""
    if entry.up_f == 0:
        return 'upstream never failed in the measurement: nothing to excuse'
    p = flaky_p(entry)
    if p < FLAKY_P:
        return ('ours fails more often than upstream: ours %d/%d, upstream %d/%d '
                '(one-sided Fisher p = %.3g < %g)' % (entry.ours_f, entry.ours_n,
                                                      entry.up_f, entry.up_n, p, FLAKY_P))
    return None


def parse_flaky_line(line):
    """A FlakyEntry of a line of flaky.txt, or raise ValueError saying what is wrong."""
    parts = line.split('\t')
    if len(parts) < 5:
        raise ValueError('not key, location, "upstream F/N", "ours F/N" and a text, '
                         'separated by tabs')
    key, loc, text = parts[0], parts[1], '\t'.join(parts[4:])
    if any(c in key for c in '*?['):
        raise ValueError('a pattern: an entry names one test, by its exact key')
    if key.count('|') < 3:
        raise ValueError('not a key (step|device|section|test)')
    if not _LOCATION_RE.match(loc):
        raise ValueError('%r is not a failure location (file(line))' % loc)
    counts = []
    for side, field in (('upstream', parts[2]), ('ours', parts[3])):
        m = _MEASURE_RE[side].match(field.strip())
        if not m:
            raise ValueError('%r: expected "%s FAILURES/RUNS"' % (field, side))
        f, n = int(m.group(1)), int(m.group(2))
        if n == 0 or f > n:
            raise ValueError('%r: not failures out of runs' % field)
        counts += [f, n]
    if not text.strip():
        raise ValueError('no text: say which plan measured it, on which kernel, when')
    return FlakyEntry(key, loc, *counts, text.strip())


def read_flaky(path):
    """The flaky list: ({key: [FlakyEntry]}, [(line, problem)]). An entry that cannot be
    read excuses nothing and is a problem."""
    entries, problems = {}, []
    if not os.path.exists(path):
        return entries, problems
    for line in data_lines(path):
        try:
            entry = parse_flaky_line(line)
        except ValueError as e:
            problems.append((line, str(e)))
            continue
        entries.setdefault(entry.key, []).append(entry)
    return entries, problems


# ---------------------------------------------------------------------------------------
# Judging compliance

Verdict = collections.namedtuple('Verdict', 'status key ours upstream fails why')


def _compare_failure(key, loc, up, flaky):
    """(status, why) of a test that ours failed, first at loc."""
    # The failure locations that the standing entries of the flaky list excuse.
    excused = set(e.loc for e in flaky.get(key, []) if flaky_stands(e) is None)
    if up is not None and up.result == 'FLAKY' and up.locs:
        excused |= set(up.locs)
    if up is not None and up.result == 'FAIL' and up.locs is not None and loc in up.locs:
        return 'known', None
    if loc in excused:
        return 'flaky', None
    ours = ('ours failed without a fail line' if loc == '-'
            else 'ours first failed at %s' % loc)
    if up is not None and up.result == 'FAIL':
        if up.locs is None:
            return 'fail', ('%s; upstream fails it too, but the baseline does not say where '
                            '(written by an older vb2check.py: rerun make baseline)' % ours)
        return 'fail', '%s, upstream at %s' % (ours, ' '.join(up.locs) or '-')
    dropped = [e for e in flaky.get(key, []) if flaky_stands(e) is not None]
    if excused:
        why = '%s; flaky upstream only at %s' % (ours, ' '.join(sorted(excused)))
    elif up is not None and up.result == 'FLAKY':
        why = '%s; flaky upstream, but never failing at a place the baseline recorded' % ours
    else:
        why = ours
    if dropped:
        why += '; the flaky entry for %s does not stand' % ' '.join(e.loc for e in dropped)
    return 'fail', why


def compare_compliance(tests, baseline, steps_run, flaky=None):
    """Judge our tests (compliance_tests()) against upstream's (read_baseline()) and the
    flaky list (read_flaky()): a Verdict each, status pass, known (fails upstream too,
    first at the same place), better (fails upstream, OK here), flaky (a failure where
    upstream's fails now and then) or fail. Only baseline entries of steps_run are
    expected."""
    flaky = flaky or {}
    out, ours = [], set()
    for key, result, fails in tests:
        ours.add(key)
        up = baseline.get(key)
        upres = up.result if up is not None else 'absent'
        if result == 'FAIL':
            status, why = _compare_failure(key, first_failure(fails), up, flaky)
        elif up is None or result == upres or upres == 'FLAKY':
            status, why = 'pass', None
        else:
            status, why = ('better' if upres == 'FAIL' else 'fail'), None
        out.append(Verdict(status, key, result, upres, fails, why))
    # A flake is rare: two of them in one run of v4l2-compliance are not two flakes.
    per_step = collections.Counter(v.key.split('|', 1)[0] for v in out if v.status == 'flaky')
    for i, v in enumerate(out):
        n = per_step.get(v.key.split('|', 1)[0], 0)
        if v.status == 'flaky' and n > 1:
            out[i] = v._replace(status='fail', why=(
                'first failed at %s, where it is flaky upstream, but one of %d flaky tests '
                'failing in this step: a flaky excuse covers one failure of a step'
                % (first_failure(v.fails), n)))
    for key, up in baseline.items():
        if key.split('|', 1)[0] in steps_run and key not in ours and up.result.startswith('OK'):
            out.append(Verdict('fail', key, 'missing', up.result, [], None))
    return out


# ---------------------------------------------------------------------------------------
# The kernel log

_TS_RE = re.compile(r'^\[\s*\d+\.\d+\]\s?')
# The lines of an Intel IOMMU fault report (drivers/iommu/intel/dmar.c).
_DMAR_FAULT = r'DMAR: (DRHD: handling fault|\[(DMA (Read|Write)|INTR-REMAP))'
_SPLAT_RES = [re.compile(p) for p in (
    r'WARNING:', r'BUG:', r'kernel BUG at', r'Oops', r'general protection fault',
    r'Kernel panic', r'UBSAN:', r'INFO: task .* blocked for more than',
    r'INFO: (possible|inconsistent|trying to register)', r'INFO: rcu', r'rcu: INFO:',
    r'watchdog: BUG', r'kmemleak: \d+ new suspected memory leak', r'unreferenced object 0x',
    r'ODEBUG: ', r'list_(add|del) corruption', r'refcount_t: ', r'Unable to handle kernel',
    r'stack-protector:',
    _DMAR_FAULT,    # a device reached an address it was not given (the edu guests)
)]
# A splat of one line (an IOMMU fault report): the lines after it are not its body.
_ONE_LINE_RE = re.compile('^' + _DMAR_FAULT)

# Leaks that are not videobuf2's and that upstream's kernel shows just the same: (a
# string of the hex dump, a function of the backtrace, why). A kmemleak step whose leaks
# are all known does not fail the run.
KNOWN_LEAKS = [
    ('vidtv.0', 'platform_device_add',
     'vidtv: unloading never deletes its i2c adapter, which keeps the platform device and '
     'its name (6.12, the same with upstream videobuf2)'),
]
_KMEMLEAK_NEW_RE = re.compile(r'kmemleak: \d+ new suspected memory leak')

# Kernel bugs outside videobuf2 that the guest runs can hit by chance: (the splat's first
# line, a function that must be in the stack that freed the object, what the bug is, the
# taint flags it sets). Only a splat that matches all of it is set aside, and named.
KNOWN_SPLATS = [
    (re.compile(r'BUG: KASAN: slab-use-after-free in vhci_urb_dequeue\b'),
     'pickup_urb_and_free_priv',
     'vhci_hcd: vhci_urb_dequeue() reads urb->hcpriv under vhci->lock while vhci_rx frees '
     'it under vdev->priv_lock only, when a URB completes as it is unlinked (6.12 USB/IP, '
     'below uvcvideo; not videobuf2)', 'B'),
]
_KASAN_END_RE = re.compile(r'^={40,}$')


def kmemleak_objects(lines):
    """Split a kmemleak report into its objects, each a list of lines."""
    objs = []
    for line in lines:
        if line.startswith('unreferenced object 0x'):
            objs.append([line])
        elif objs:
            objs[-1].append(line)
    return objs


def known_leak(obj):
    text = '\n'.join(obj)
    return next((why for dump, func, why in KNOWN_LEAKS if dump in text and func in text),
                None)


def known_leak_steps(run):
    """Steps whose kmemleak report has only known leaks: {step id: set of reasons}."""
    out = {}
    for step in run.steps:
        objs = kmemleak_objects(step.output) if step.kind == 'kmemleak' else []
        reasons = [known_leak(o) for o in objs]
        if objs and all(reasons):
            out[step.id] = set(reasons)
    return out


def strip_ts(line):
    return _TS_RE.sub('', line)


# A test that provokes a WARN (or an IOMMU fault) on purpose brackets it with these
# lines: such a splat inside the window is expected; one outside, anything worse, or a
# window without its WARN still fails.
_EXPECT_BEGIN_RE = re.compile(r'vb2-expect-warning: begin (\S+)')
_EXPECT_END_RE = re.compile(r'vb2-expect-warning: end (\S+)')
_EXPECTABLE_RE = re.compile(r'^WARNING: CPU: \d+ PID: \d+ at |^' + _DMAR_FAULT)


def known_splat(first, report):
    """(why, taint flags) of a KNOWN_SPLATS splat, or None; report: the lines of a KASAN
    report after its first."""
    freed = next((k for k, l in enumerate(report) if l.startswith('Freed by task')), None)
    if freed is None:
        return None
    return next(((why, taints) for first_re, func, why, taints in KNOWN_SPLATS
                 if first_re.search(first) and any(func in l for l in report[freed:])), None)


def _splat_body(lines, i, text, max_lines):
    """The lines of the splat that starts at lines[i], and the index after them."""
    body, j = [text], i + 1
    while j < len(lines) and j - i < max_lines and not _ONE_LINE_RE.match(text):
        t = strip_ts(lines[j][1])
        body.append(t)
        j += 1
        if t.startswith('---[ end trace') or t.startswith('---[ end Kernel panic'):
            break
    return body, j


def kernel_splats(lines, max_lines=60, known=None, expected=None):
    """Warnings, bugs, lockdep reports and leaks in (where, line) kernel log lines:
    [(where, first line, text)]. KNOWN_SPLATS are left out ((where, why, taint flags) to
    the list known), and so are the WARNs of expected-warning windows ((where, test) to
    the list expected)."""
    lines = list(lines)
    splats = []
    expecting = None        # [where, name, WARN splats seen] inside a window
    i = 0
    while i < len(lines):
        where, line = lines[i]
        text = strip_ts(line)
        begin, end = _EXPECT_BEGIN_RE.search(text), _EXPECT_END_RE.search(text)
        if begin:
            expecting = [where, begin.group(1), 0]
        elif end:
            if expecting is None or expecting[1] != end.group(1):
                splats.append((where, text, 'an expected-warning window ends that did not begin'))
            elif expecting[2] == 0:
                splats.append((where, 'expected warning missing: ' + end.group(1),
                               'the test %s expected a WARN between its markers; none came'
                               % end.group(1)))
            expecting = None
        elif any(r.search(text) for r in _SPLAT_RES):
            body, j = _splat_body(lines, i, text, max_lines)
            report = [strip_ts(l) for _, l in lines[i:i + 300]]
            stop = next((k for k, l in enumerate(report) if k and _KASAN_END_RE.match(l)), None)
            found = known_splat(text, report[1:stop]) if stop else None
            if found:
                # Set aside its first line only: the lines after it are read as before
                # (another CPU may print into the report).
                if known is not None:
                    known.append((where,) + found)
                i += 1
                continue
            if expecting is not None and _EXPECTABLE_RE.search(text):
                expecting[2] += 1
                if expected is not None:
                    expected.append((where, expecting[1]))
            else:
                splats.append((where, text, '\n'.join(body)))
            i = j
            continue
        i += 1
    if expecting is not None:
        splats.append((expecting[0], 'expected-warning window not closed: ' + expecting[1],
                       'the log ends inside the window of %s' % expecting[1]))
    return splats


# Taint flags that only a finding sets (Documentation/admin-guide/tainted-kernels.rst).
_TAINT_FINDINGS = {5: 'B (bad page)', 7: 'D (kernel died)', 9: 'W (warning)',
                   14: 'L (soft lockup)'}


def log_explanations(run):
    """What each step's kernel log shows that can taint the kernel or turn lockdep off:
    {step id: set}, "*" for a finding (it fails the run anyway), "W" for a test's
    expected warning, a known bug's taint letters and "known"."""
    known, expected = [], []
    findings = kernel_splats(run.all_dmesg(), known=known, expected=expected)
    out = collections.defaultdict(set)
    for where, _, _ in findings:
        out[where].add('*')
    for where, _ in expected:
        out[where].add('W')
    for where, _, taints in known:
        out[where].update(taints)
        out[where].add('known')
    return out


def silent_taints(run, explains=None):
    """[(step id, flag)]: taint flags that appeared during a step whose log shows nothing
    that set them (the log lost the splat). Judged step by step: an expected warning
    explains W only, a known bug its own flags."""
    if explains is None:
        explains = log_explanations(run)
    records = [(where, value) for where, value in run.taints if value is not None]
    found, before = [], 0
    for i, (where, value) in enumerate(records):
        new = value & ~before
        before |= value
        # The log is read before the flags (plan-lib.sh's vb2_dmesg): what set them may
        # be in the next step's log.
        nxt = records[i + 1][0] if i + 1 < len(records) else None
        seen = explains.get(where, set()) | explains.get(nxt, set())
        for bit, flag in sorted(_TAINT_FINDINGS.items()):
            if new & (1 << bit) and '*' not in seen and flag[0] not in seen:
                found.append((where, flag))
    return found


# The debugging aids that switch themselves off on a problem (plan-lib.sh's
# vb2_debug_aids DEBUG records): (field, on, off, name). Lockdep stops after its first
# report or a taint that makes it unreliable; kmemleak and DMA-API debugging when an
# allocation of their own fails.
DEBUG_AIDS = [
    ('debug_locks', '1', '0', 'lockdep (debug_locks)'),
    ('kmemleak', 'on', 'off', 'kmemleak'),
    ('dma_debug', 'on', 'off', 'DMA-API debugging'),
]
_AID_LOG_RE = {'debug_locks': re.compile(r'lock debugging|debug_locks|lockdep'),
               'kmemleak': re.compile(r'kmemleak:'),
               'dma_debug': re.compile(r'DMA-API:|dma-debug|dma_debug')}


def turned_off(run, field, on, off):
    """The record (step id) at which an aid was first seen off after being on, or None."""
    seen_on = False
    for where, fields in run.debug:
        state = fields.get(field)
        if state == on:
            seen_on = True
        elif state == off and seen_on:
            return where
    return None


def step_log(run, where):
    if where == 'boot':
        return run.boot_dmesg
    return next((s.dmesg for s in run.steps if s.id == where), [])


def _aid_log(run, where, field):
    """The record after where, and the first 3 lines about the aid in both logs."""
    ids = [w for w, _ in run.debug]
    i = ids.index(where)
    nxt = ids[i + 1] if i + 1 < len(ids) else None
    lines = [strip_ts(l) for l in step_log(run, where) + step_log(run, nxt)
             if _AID_LOG_RE[field].search(l)][:3]
    return nxt, ''.join('\n    ' + l for l in lines)


def lockdep_findings(run, explains):
    """(failures, notes) of the lockdep rule: a step that ran with debug_locks 0 fails,
    and so does lockdep turning off with no splat to say why. Spared, with a note: the
    kmemleak steps at the very end (a scan runs none of the code under test), and after
    a known bug of another subsystem the steps of its own plan (PART record)."""
    failures, notes = [], []
    where = turned_off(run, 'debug_locks', '1', '0')
    if where is None:
        return failures, notes
    nxt, lines = _aid_log(run, where, 'debug_locks')
    seen = explains.get(where, set()) | explains.get(nxt, set())
    known = '*' not in seen and 'known' in seen
    if '*' in seen:
        cause = 'after a splat in its log (a finding of its own)'
    elif known:
        cause = 'by a known bug of another subsystem, noted with the kernel log'
    else:
        cause = 'with no splat in its log'
        failures.append('lockdep (debug_locks) turned itself off during step %s %s%s' % (
            where, cause, lines))
    ids = [s.id for s in run.steps]
    after = run.steps[ids.index(where) + 1:] if where in ids else []
    tail = len(run.steps)
    while tail > 0 and run.steps[tail - 1].kind == 'kmemleak':
        tail -= 1
    final = set(ids[tail:])
    part = run.steps[ids.index(where)].part if where in ids else None
    spared = [s.id for s in after if s.id in final or (known and s.part == part)]
    without = [s.id for s in after if s.id not in spared]
    if spared:
        notes.append('lockdep off from step %s on (%s); spared: %s' % (
            where, cause, _id_list(spared)))
    if without:
        failures.append('%d steps ran without lockdep: debug_locks turned off during step %s '
                        '(%s): %s' % (len(without), where, cause, _id_list(without)))
    return failures, notes


def _id_list(ids, most=12):
    if len(ids) <= most:
        return ', '.join(ids)
    return '%s, ... (%d more), %s' % (', '.join(ids[:most - 1]), len(ids) - most, ids[-1])


def debug_aid_findings(run, explains=None):
    """(failures, notes) of the DEBUG records (each after its step's log: the state at
    the end of the step): an aid that switched itself off is a finding."""
    if not run.debug:
        return [], (['no DEBUG records: the debugging aids were not watched']
                    if run.steps else [])
    if explains is None:
        explains = log_explanations(run)
    failures, notes = lockdep_findings(run, explains)
    for field, on, off, name in DEBUG_AIDS[1:]:
        where = turned_off(run, field, on, off)
        if where is not None:
            failures.append('%s turned itself off during step %s: what ran after it went '
                            'unchecked%s' % (name, where, _aid_log(run, where, field)[1]))
    states = dict(run.debug[-1][1])
    notes.append('at the end: ' + ' '.join('%s=%s' % (f, states.get(f, '?'))
                                          for f, _, _, _ in DEBUG_AIDS))
    return failures, notes


# ---------------------------------------------------------------------------------------
# KUnit

def kunit_cases(step, kunit_py):
    """(cases, report) of a kunit step, parsed by the kernel tree's kunit.py: cases is
    [(name, PASS/FAIL/SKIP/CRASHED)], report kunit.py's own output."""
    return ktap_cases([strip_ts(line) for line in step.dmesg], step.label, kunit_py)


def ktap_cases(ktap, label, kunit_py):
    """The cases of the KTAP lines ktap, as kunit_cases() gives them (a case that never
    reported comes out with the name '' and status ERROR)."""
    with tempfile.TemporaryDirectory() as tmp:
        src, js = os.path.join(tmp, 'ktap.log'), os.path.join(tmp, 'ktap.json')
        with open(src, 'w') as f:
            f.write('\n'.join(ktap) + '\n')
        proc = subprocess.run([sys.executable, kunit_py, 'parse', '--json=' + js, src],
                              capture_output=True, text=True)
        report = proc.stdout + proc.stderr
        if not os.path.exists(js):
            return [('%s: kunit.py parse' % label, 'CRASHED')], report
        with open(js) as f:
            data = json.load(f)
    cases = []

    def walk(group, prefix):
        name = group.get('name', '')
        path = prefix + [name] if name else prefix
        for case in group.get('test_cases', []):
            cases.append(('.'.join(path + [case.get('name', '?')]), case.get('status', 'CRASHED')))
        for sub in group.get('sub_groups', []):
            walk(sub, path)

    # kunit.py wraps everything in a top-level group of its own; leave its name out.
    for sub in data.get('sub_groups', []):
        walk(sub, [])
    for case in data.get('test_cases', []):
        cases.append((case.get('name', '?'), case.get('status', 'CRASHED')))
    if not cases:
        cases.append(('%s: no test results' % label, 'CRASHED'))
    return cases, report


_KTAP_END_RE = re.compile(r'^\s*(?:(?:not )?ok \d+\b|1\.\.\d+|# Subtest:|KTAP version)')
_KTAP_FAILED_RE = re.compile(r'(EXPECTATION|ASSERTION) FAILED')


def _ktap_result(ktap, name, result_fmt):
    """(start, index) in stripped KTAP lines of the result line of case name
    (suite.case[.param]) matching result_fmt (%s: the name's last part), or None. It
    walks down the "# Subtest:" lines of the name's path, so that a parameter of one case
    is not taken for the same parameter of another."""
    path = name.split('.', 2)
    pos = 0
    for part in path[:-1]:
        pos = next((k for k in range(pos, len(ktap)) if ktap[k] == '# Subtest: ' + part),
                   None)
        if pos is None:
            return None
    end_re = re.compile(result_fmt % re.escape(path[-1]))
    i = next((k for k in range(pos, len(ktap)) if end_re.match(ktap[k])), None)
    return None if i is None else (pos, i)


def kunit_case_log(step, name, max_lines=20):
    """What a failed case printed above its "not ok" line, from its first failed
    expectation on."""
    ktap = [strip_ts(line).strip() for line in step.dmesg]
    found = _ktap_result(ktap, name, r'^not ok \d+ %s\s*(?:#.*)?$')
    if found is None:
        return []
    pos, i = found
    j = i
    while j > pos and not _KTAP_END_RE.match(ktap[j - 1]):
        j -= 1
    lines = ktap[j:i]
    first = next((k for k, l in enumerate(lines) if _KTAP_FAILED_RE.search(l)), 0)
    return lines[first:first + max_lines]


def kunit_skip_reason(step, name):
    """The reason a skipped case gave ("ok 3 case # SKIP reason"), or ''."""
    ktap = [strip_ts(line).strip() for line in step.dmesg]
    found = _ktap_result(ktap, name, r'^ok \d+ %s\s*# SKIP\b')
    return '' if found is None else ktap[found[1]].split('# SKIP', 1)[1].strip()


# ---------------------------------------------------------------------------------------
# The guest test programs' KTAP (tools/guest/*.c through the tree's kselftest.h)

_TAP_START_RE = re.compile(r'^\s*K?TAP version \d+\s*$')
_TAP_RESULT_RE = re.compile(r'^\s*(?:not )?ok (\d+)\b')
_TAP_EMPTY_PLAN_RE = re.compile(r'^\s*1\.\.0\b')


def ktap_documents(lines):
    """The KTAP documents in what a step printed, each from a "(K)TAP version" line to
    the next one or the end (a step may run several programs, or none)."""
    docs = []
    for line in lines:
        if _TAP_START_RE.match(line):
            docs.append([])
        if docs:
            docs[-1].append(line)
    return docs


def _ktap_diagnostics(doc):
    """{result number: the "# " lines since the result before it}; under 'end' those
    after the last result (and a "Bail out!")."""
    out, pending = {}, []
    for line in doc:
        m = _TAP_RESULT_RE.match(line)
        if m:
            out[int(m.group(1))] = pending
            pending = []
        elif line.lstrip().startswith(('#', 'Bail out!')):
            pending.append(line.strip())
    out['end'] = pending
    return out


def guest_cases(step, kunit_py):
    """[(name, status, diagnostics)] of the KTAP a cmd step printed, each document parsed
    by kunit.py. A name met again in the step gets " #2", "#3"...; a case that never
    reported is "case N (no result: the program stopped)", ERROR. A document whose plan is
    1..0 (ksft_exit_skip()) has no cases."""
    out, seen = [], collections.Counter()
    for doc in ktap_documents(step.output):
        if any(_TAP_EMPTY_PLAN_RE.match(l) for l in doc):
            continue
        diag = _ktap_diagnostics(doc)
        for i, (name, status) in enumerate(ktap_cases(doc, step.id, kunit_py)[0]):
            if not name:
                name = 'case %d (no result: the program stopped)' % (i + 1)
                diag[i + 1] = diag.pop('end', [])
            seen[name] += 1
            if seen[name] > 1:
                name += ' #%d' % seen[name]
            out.append((name, status, diag.get(i + 1) or []))
    return out


def guest_key(step, name):
    """The key of a guest program's case in baseline/anchor.txt."""
    return 'ktap|%s|%s' % (step.id, name)


def judge_guest_cases(tally, run, expect, steps, kunit_py):
    """Every case a guest program reported (steps: from judge_steps()) is a result:
    "not ok" fails, a skip passes. Where upstream's anchor has the step's cases, each
    must have run here, and one upstream passed must not be skipped here."""
    if not steps:
        return
    sec = tally.section('guest programs\' KTAP cases (%s)' % run.name)
    if kunit_py is None:
        tally.add(sec, False, 'no kunit.py to parse the results with')
        return
    anchor = expect.anchor or {}
    counts = collections.Counter()
    for step, cases in steps:
        prefix = guest_key(step, '')
        upstream = dict((k[len(prefix):], v) for k, v in anchor.items() if k.startswith(prefix))
        if upstream:
            counts['steps compared with upstream'] += 1
        for name, status, diag in cases:
            up = upstream.get(name)
            ok = status in ('PASS', 'SKIP') and not (status == 'SKIP' and up == 'PASS')
            counts['skipped' if status == 'SKIP' else 'cases'] += 1
            if up is not None and up != 'PASS' and status == 'PASS':
                counts['better than upstream'] += 1
            detail = '%s %s: %s%s' % (step.id, name, status,
                                      '' if up is None else ', upstream ' + up)
            tally.add(sec, ok, None if ok else detail + ''.join('\n    ' + l for l in diag[-12:]))
        for name in sorted(set(upstream) - set(n for n, _, _ in cases)):
            tally.add(sec, False, '%s %s: did not run (upstream %s)' % (step.id, name,
                                                                        upstream[name]))
    sec['notes'].append(', '.join('%d %s' % (n, what) for what, n in sorted(counts.items())))


# baseline/kunit.txt: the KUnit cases a run must show, by module (the kunit step's
# label). A case listed and missing from a run of its module fails; so does a SKIP that
# is not listed as one.
KUNIT_BASELINE_HEAD = """\
# KUnit cases that make check must see (tools/plans/kunit.plan), written by
# "tools/report/vb2check.py kunit-baseline RUN_DIR" from a guest run of make check.
# module<TAB>suite.case[.param]<TAB>PASS, or SKIP<TAB>why the skip is expected.
# module is MODULE/FLAVOR where the cases come from make check's guest of that kernel
# (guest-debug, guest-kasan): the kernels' options differ, and so do their cases.
# A listed case that does not run fails make check; so does a SKIP not listed as one.
# A SKIP line carries the reason the case printed: make sure it says why the skip is
# right (a case that does not apply to an allocator, say), or make the case run.
"""


def read_kunit_baseline(path):
    """({module: {case: (status, reason)}}, [(line, problem)]), or (None, []) when the
    file is missing."""
    if not os.path.exists(path):
        return None, []
    cases, problems = {}, []
    for line in data_lines(path):
        parts = line.split('\t')
        if len(parts) < 3 or parts[2] not in ('PASS', 'SKIP'):
            problems.append((line, 'not module, case and PASS or SKIP, separated by tabs'))
            continue
        reason = '\t'.join(parts[3:]).strip()
        if parts[2] == 'SKIP' and not reason:
            problems.append((line, 'an expected SKIP must say why it is expected'))
            continue
        cases.setdefault(parts[0], {})[parts[1]] = (parts[2], reason)
    return cases, problems


def kunit_module_key(step, run):
    """A KUnit step's module as the baseline names it: MODULE/FLAVOR in a guest of make
    check, else MODULE."""
    return '%s/%s' % (step.label, run.flavor) if run.flavor else step.label


def judge_kunit_step(tally, run, step, expect, kunit_py):
    """Judge the cases of one kunit step against the KUnit baseline: every case counts,
    and every case of the baseline must run."""
    sec = tally.section('KUnit %s (%s)' % (step.label, run.name))
    for line, problem in expect.kunit_problems:
        tally.add(sec, False, '%s: %s\n    %s' % (expect.kunit_path, problem, line))
    if kunit_py is None:
        tally.add(sec, False, 'no kunit.py to parse the results with')
        return
    cases, _ = kunit_cases(step, kunit_py)
    listed = None
    module = kunit_module_key(step, run)
    if expect.kunit is None:
        tally.add(sec, False, 'no KUnit baseline (%s): write it with "tools/report/vb2check.py '
                  'kunit-baseline RUN_DIR" from a run of make check' % expect.kunit_path)
    else:
        listed = expect.kunit.get(module)
        if listed is None:
            tally.add(sec, False, 'module %s is not in the KUnit baseline' % module)
            listed = {}
    seen = set()
    for name, status in cases:
        seen.add(name)
        detail = '%s: %s' % (name, status)
        ok = status == 'PASS'
        if status == 'SKIP':
            ok = listed is None or listed.get(name, ('',))[0] == 'SKIP'
            detail += (' (%s), not an expected skip in the KUnit baseline'
                       % (kunit_skip_reason(step, name) or 'no reason given'))
        elif not ok:
            detail += ''.join('\n    ' + l for l in kunit_case_log(step, name))
        tally.add(sec, ok, detail)
    for name in sorted(set(listed or {}) - seen):
        tally.add(sec, False, '%s: in the KUnit baseline, did not run' % name)
    if listed:
        sec['notes'].append('%d of %d cases of the baseline' % (len(set(listed) & seen),
                                                              len(listed)))
    if step.rc not in (0, None):
        tally.add(sec, False, 'modprobe %s exited with %s' % (step.label, step.rc))
    sec['notes'].append('%d cases' % len(cases))


# ---------------------------------------------------------------------------------------
# Judging and printing

class Tally:
    def __init__(self):
        self.passed = self.failed = 0
        self.sections = []

    def section(self, title):
        sec = {'title': title, 'passed': 0, 'failed': 0, 'notes': [], 'failures': []}
        self.sections.append(sec)
        return sec

    def add(self, sec, ok, failure=None):
        if ok:
            self.passed += 1
            sec['passed'] += 1
        else:
            self.failed += 1
            sec['failed'] += 1
            if failure:
                sec['failures'].append(failure)


def judge_items(tally, path):
    """Host-side check items: a TSV of name, PASS|FAIL, detail file."""
    sec = tally.section('host checks')
    with open(path) as f:
        for line in f:
            parts = line.rstrip('\n').split('\t')
            if len(parts) < 2:
                continue
            text, status = parts[0], parts[1]
            detail = parts[2] if len(parts) > 2 else ''
            if status != 'PASS' and detail and os.path.exists(detail):
                with open(detail, errors='replace') as d:
                    body = d.read().strip().splitlines()
                text += '\n' + '\n'.join('    ' + b for b in body[:40])
                if len(body) > 40:
                    text += '\n    ... (%d more lines in %s)' % (len(body) - 40, detail)
            tally.add(sec, status == 'PASS', text)


class Expectations:
    """What runs are judged against: upstream's compliance results
    (baseline/compliance.txt), the flaky list, the KUnit baseline and the anchor (beside
    it). kunit is None when its file is missing: every run with a KUnit step fails."""

    def __init__(self, compliance=None):
        self.compliance, self.anchor = compliance or {}, {}
        self.flaky, self.flaky_problems, self.flaky_path = {}, [], None
        self.kunit, self.kunit_problems, self.kunit_path = None, [], 'baseline/kunit.txt'

    @classmethod
    def load(cls, baseline, flaky=None, kunit=None):
        where = os.path.dirname(baseline) if baseline else os.path.join(ROOT, 'baseline')
        self = cls(read_baseline(baseline) if baseline else {})
        self.flaky_path = flaky or os.path.join(where, 'flaky.txt')
        self.kunit_path = kunit or os.path.join(where, 'kunit.txt')
        self.flaky, self.flaky_problems = read_flaky(self.flaky_path)
        self.kunit, self.kunit_problems = read_kunit_baseline(self.kunit_path)
        anchor = os.path.join(where, 'anchor.txt')
        if os.path.exists(anchor):
            self.anchor = read_results(anchor)
        return self


def judge_flaky_list(tally, expect):
    """Every entry of the flaky list must be readable, name a test of the baseline and
    stand (flaky_stands()); one that does not excuses nothing and fails here."""
    sec = tally.section('flaky list (%s)' % (expect.flaky_path or 'flaky.txt'))
    for line, problem in expect.flaky_problems:
        tally.add(sec, False, '%s\n    %s' % (problem, line))
    for key, entries in sorted(expect.flaky.items()):
        for e in entries:
            why = flaky_stands(e)
            if why is None and expect.compliance and key not in expect.compliance:
                why = 'the baseline has no such test (a key of another v4l2-compliance?)'
            tally.add(sec, why is None, None if why is None else '%s at %s: %s' % (
                key, e.loc, why))
    if not expect.flaky and not expect.flaky_problems:
        sec['notes'].append('no entries')


def judge_compliance(tally, run, expect, steps_run):
    tests = [t for step in run.steps if step.kind == 'compliance'
             for t in compliance_tests(step)]
    if not tests:
        return
    csec = tally.section('v4l2-compliance vs upstream baseline (%s)' % run.name)
    verdicts = compare_compliance(tests, expect.compliance, steps_run, expect.flaky)
    counts = collections.Counter(v.status for v in verdicts)
    for v in verdicts:
        if v.status != 'fail':
            tally.add(csec, True)
            continue
        detail = '%s: ours %s, upstream %s' % (v.key, v.ours, v.upstream)
        if v.why:
            detail += '\n    ' + v.why
        if v.fails:
            detail += '\n' + '\n'.join('    fail: ' + f for f in v.fails[:6])
        tally.add(csec, False, detail)
    csec['notes'].append('%d tests: %d OK as upstream, %d fail upstream too (same place), %d '
                         'better than upstream, %d flaky failures excused, %d regressions' % (
                             len(verdicts), counts['pass'], counts['known'], counts['better'],
                             counts['flaky'], counts['fail']))


def judge_steps(tally, run, kunit_py):
    """The plan must run to its end, and each step end well. Returns [(step,
    guest_cases())] of the cmd steps that printed KTAP."""
    sec = tally.section('guest run %s (plan %s)' % (run.name, run.plan or '?'))
    if run.done:
        tally.add(sec, True)
    else:
        tail = '\n'.join('    ' + strip_ts(l) for l in run.console[-30:])
        last = run.steps[-1].id if run.steps else 'boot'
        tally.add(sec, False, 'the guest did not finish its plan (last step: %s); console tail:\n%s'
                  % (last, tail))
    # A test program's failed cases are results of their own (judge_guest_cases()): its
    # exit status 1 (kselftest's KSFT_FAIL) then says nothing more.
    guest = [(step, guest_cases(step, kunit_py) if kunit_py else [])
             for step in run.steps if step.kind == 'cmd' and ktap_documents(step.output)]
    ktap_failed = set(step.id for step, cases in guest
                      if any(status not in ('PASS', 'SKIP') for _, status, _ in cases))
    for step in run.steps:
        if step.kind == 'compliance':
            if step.rc is None or step.rc >= 124:
                tally.add(sec, False, 'compliance %s: v4l2-compliance did not end normally (rc %s)'
                          % (step.id, step.rc))
            continue
        if step.kind == 'kunit':
            continue
        ok = step.rc == 0 or (step.rc == 1 and step.id in ktap_failed)
        # A kmemleak step's scan write fails when kmemleak is off: no scan, no verdict.
        what = ('the scan failed (exit %s)' if step.kind == 'kmemleak'
                else 'exited with %s') % step.rc
        tally.add(sec, ok, None if ok else 'step %s (%s) %s; output:\n%s' % (
            step.id, step.kind, what, '\n'.join('    ' + l for l in step.output[-20:])))
    return guest


def judge_kernel_log(tally, run, explains):
    lsec = tally.section('kernel log (%s)' % run.name)
    known = []
    splats = kernel_splats(run.all_dmesg(), known=known)
    for where, why, _ in known:
        lsec['notes'].append('known bug in %s: %s' % (where, why))
    forgiven = known_leak_steps(run)
    for step_id, reasons in sorted(forgiven.items()):
        lsec['notes'].append('known leak in %s: %s' % (step_id, '; '.join(sorted(reasons))))
    splats = [sp for sp in splats if not (sp[0] in forgiven and _KMEMLEAK_NEW_RE.search(sp[1]))]
    if not run.done:
        splats += kernel_splats(('console', l) for l in run.console)
    for where, flag in silent_taints(run, explains):
        splats.append((where, 'kernel tainted %s with no splat in its log' % flag,
                       'the log buffer lost it: read the console, or boot with a larger '
                       'log_buf_len'))
    for where, first, text in splats:
        tally.add(lsec, False, 'during step %s: %s\n%s' % (
            where, first, '\n'.join('    ' + l for l in text.splitlines()[:40])))
    if not splats:
        tally.add(lsec, True)


def judge_run(tally, run, expect, kunit_py):
    if not isinstance(expect, Expectations):
        expect = Expectations(compliance=expect)
    guest = judge_steps(tally, run, kunit_py)
    for step in run.steps:
        if step.kind == 'kunit':
            judge_kunit_step(tally, run, step, expect, kunit_py)
    judge_guest_cases(tally, run, expect, guest, kunit_py)
    judge_compliance(tally, run, expect, set(s.id for s in run.steps))
    explains = log_explanations(run)
    judge_kernel_log(tally, run, explains)
    # The debugging aids: each must still be on when a step runs.
    dsec = tally.section('debugging aids (%s)' % run.name)
    failures, notes = debug_aid_findings(run, explains)
    dsec['notes'].extend(notes)
    for f in failures:
        tally.add(dsec, False, f)
    if not failures:
        tally.add(dsec, True)


def print_summary(tally, out=sys.stdout, max_per_section=None, details=None):
    """Print the summary, at most max_per_section failures of a section (all of them
    go to the file details, when given)."""
    w = out.write
    for sec in tally.sections:
        notes = ('; ' + '; '.join(sec['notes'])) if sec['notes'] else ''
        w('%s %-64s %5d passed %5d failed%s\n' % ('ok  ' if sec['failed'] == 0 else 'FAIL',
                                                   sec['title'], sec['passed'],
                                                   sec['failed'], notes))
    failures = [(s['title'], f) for s in tally.sections for f in s['failures']]
    if failures:
        w('\nFailures:\n')
        shown = collections.Counter()
        for title, f in failures:
            shown[title] += 1
            if max_per_section is None or shown[title] <= max_per_section:
                w('- [%s] %s\n' % (title, f))
        for title, n in shown.items():
            if max_per_section is not None and n > max_per_section:
                w('- [%s] ... %d more%s\n' % (title, n - max_per_section,
                                               ' in ' + details if details else ''))
    if details:
        with open(details, 'w') as f:
            f.write(''.join('- [%s] %s\n' % failure for failure in failures))
    w('\n%d passed, %d failed\n' % (tally.passed, tally.failed))


def find_kunit_py():
    cache = os.environ.get('VB2_CACHE') or os.path.expanduser('~/.cache/videobuf2')
    p = os.path.join(cache, 'src', 'linux-6.12', 'tools', 'testing', 'kunit', 'kunit.py')
    return p if os.path.exists(p) else None


def cmd_summary(args):
    tally = Tally()
    for items in args.items or []:
        judge_items(tally, items)
    expect = Expectations.load(args.baseline, args.flaky, args.kunit_baseline)
    kunit_py = args.kunit_py or find_kunit_py()
    runs = [Run(path) for path in args.run or []]
    # The flaky list is judged once, and only where it excuses something.
    if any(s.kind == 'compliance' for run in runs for s in run.steps):
        judge_flaky_list(tally, expect)
    for run in runs:
        judge_run(tally, run, expect, kunit_py)
    print_summary(tally, max_per_section=args.max_failures, details=args.details)
    return 1 if tally.failed else 0


# ---------------------------------------------------------------------------------------
# Baselines (make baseline)

def anchor_results(run, kunit_py):
    """Upstream's results that are not compliance tests: each KUnit case (key
    kunit|suite.case[.param]), each run step (run|step: OK or FAIL rc N) and each case a
    test program of a run step reported in KTAP (ktap|step|case)."""
    out = []
    for step in run.steps:
        if step.kind == 'kunit':
            out.extend(('kunit|' + name, status) for name, status in kunit_cases(step, kunit_py)[0])
        elif step.kind == 'cmd' and step.label == '-':
            out.append(('run|' + step.id, 'OK' if step.rc == 0 else 'FAIL rc %s' % step.rc))
            out.extend((guest_key(step, name), status)
                       for name, status, _ in guest_cases(step, kunit_py))
    return out


def merge_compliance(runs_tests, nruns):
    """[(key, result, first failure)] of each of nruns runs -> [(key, result, locations)]
    in first-seen order. A test with the same result in every run (for FAIL, first
    failing at the same place) keeps it; any other is FLAKY, with the places where its
    failing runs first failed: the only failures of ours it excuses."""
    order, seen = [], {}
    for tests in runs_tests:
        for key, result, loc in tests:
            if key not in seen:
                order.append(key)
            seen.setdefault(key, []).append((result, loc if result == 'FAIL' else None))
    out = []
    for key in order:
        got = seen[key]
        locs = sorted(set(loc for result, loc in got if result == 'FAIL'))
        same = len(got) == nruns and len(set(got)) == 1
        out.append((key, got[0][0] if same else 'FLAKY', locs))
    return out


def baseline_line(key, result, locs):
    """A line of baseline/compliance.txt (read_baseline() reads it)."""
    if result == 'FAIL':
        return '%s\tFAIL\t%s' % (key, locs[0])
    if result == 'FLAKY':
        return '%s\tFLAKY\t%s' % (key, ' '.join(locs) or 'none')
    return '%s\t%s' % (key, result)


ANCHOR_HEAD = (
    '# Upstream videobuf2 (VB2_IMPL=upstream): KUnit cases (the driver contract suite,\n'
    '# built against it) and the steps that run a program, from %d run(s) of "make\n'
    '# baseline". key: kunit|suite.case, run|step or ktap|step|case (a case a test\n'
    '# program reported in KTAP), a tab, the result; FLAKY: not the same in every\n'
    '# run. Documentation/driver-contract.rst must name every contract case that\n'
    '# fails here as a deliberate difference (vb2check.py contract-doc).\n')
COMPLIANCE_HEAD = (
    '# v4l2-compliance per-test results of upstream videobuf2 (VB2_IMPL=upstream),\n'
    '# written by "make baseline" from %d run(s) of the compliance plan.\n'
    '# key: step|device|section|test, a tab, the result. FAIL: failed in every run,\n'
    '# first at the same place, given after another tab: the file(line) of the test\'s\n'
    '# first "fail:" line ("-": none printed). FLAKY: not the same in every run; the\n'
    '# places where its failing runs first failed follow, space-separated ("none").\n'
    '# Ours may fail a test only where upstream did (tools/report/vb2check.py).\n')
UPDATE_NOTE = ('# Updated (make baseline VB2_BASELINE_PLANS=...): the steps run again, %d time(s),\n'
               '# replace theirs; the lines of other steps are from an earlier run.\n')


def write_results(path, head, lines, nruns, update):
    """Write a baseline file; with update, keep the lines of other steps (kept_lines())
    first. Returns the number of lines kept."""
    kept = kept_lines(path, lines) if update else []
    with open(path, 'w') as f:
        f.write(head % nruns + (UPDATE_NOTE % nruns if update else ''))
        f.write(''.join(line + '\n' for line in kept + lines))
    return len(kept)


def cmd_baseline(args):
    """Merge runs of the same plan into a baseline (merge_compliance())."""
    anchors, tests = [], []
    kunit_py = find_kunit_py()
    for path in args.run:
        run = Run(path)
        if not run.done:
            print('baseline: run %s did not finish its plan' % path, file=sys.stderr)
            return 1
        anchors.append(anchor_results(run, kunit_py))
        tests.append([(key, result, first_failure(fails))
                      for step in run.steps if step.kind == 'compliance'
                      for key, result, fails in compliance_tests(step)])
    nruns = len(args.run)
    if args.anchor:
        # The anchor's results have no failure locations.
        entries = [(key, result) for key, result, _ in
                   merge_compliance([[(k, v, None) for k, v in a] for a in anchors], nruns)]
        kept = write_results(args.anchor, ANCHOR_HEAD, ['%s\t%s' % e for e in entries], nruns,
                             args.update)
        print('baseline: %d KUnit cases and run steps written to %s (%d kept)'
              % (len(entries), args.anchor, kept))
    merged = merge_compliance(tests, nruns)
    kept = write_results(args.output, COMPLIANCE_HEAD, [baseline_line(*m) for m in merged],
                         nruns, args.update)
    flaky = sum(1 for _, result, _ in merged if result == 'FLAKY')
    print('baseline: %d tests (%d flaky) written to %s (%d kept)'
          % (len(merged), flaky, args.output, kept))
    return 0


def result_group(key):
    """What a baseline line belongs to: its step (step|device|section|test; run|step,
    and ktap|step|case with it), or its KUnit suite (kunit|suite.case)."""
    kind, _, rest = key.partition('|')
    if kind == 'run':
        return key
    if kind == 'ktap':
        return 'run|' + rest.split('|')[0]
    if kind == 'kunit':
        return 'kunit|' + rest.split('.')[0]
    return kind


def kept_lines(path, new_lines):
    """The lines of the baseline file path whose step or suite new_lines do not have
    (make baseline with VB2_BASELINE_PLANS runs only some plans)."""
    groups = set(result_group(line.split('\t')[0]) for line in new_lines)
    if not os.path.exists(path):
        return []
    return [line for line in data_lines(path) if result_group(line.split('\t')[0]) not in groups]


def kunit_baseline_entries(run, kunit_py):
    """[(module, case, status, reason)] of the KUnit steps of a run, and the problems
    that keep it from being a baseline (a case that failed, a step that did not end)."""
    entries, problems = [], []
    for step in run.steps:
        if step.kind != 'kunit':
            continue
        module = kunit_module_key(step, run)
        if step.rc is None:
            problems.append('%s: the step did not end' % module)
        for name, status in kunit_cases(step, kunit_py)[0]:
            if status == 'PASS':
                entries.append((module, name, 'PASS', ''))
            elif status == 'SKIP':
                entries.append((module, name, 'SKIP',
                                kunit_skip_reason(step, name) or 'no reason given'))
            else:
                problems.append('%s: %s %s' % (module, name, status))
    if not entries and not problems:
        problems.append('no KUnit cases in %s' % run.path)
    return entries, problems


def cmd_kunit_baseline(args):
    kunit_py = args.kunit_py or find_kunit_py()
    if kunit_py is None:
        print('kunit-baseline: no kunit.py (tools/host/kernel-tree.sh makes the tree)',
              file=sys.stderr)
        return 2
    entries, problems = [], []
    for path in args.run:
        e, p = kunit_baseline_entries(Run(path), kunit_py)
        entries += e
        problems += p
    for p in problems:
        print('kunit-baseline: ' + p, file=sys.stderr)
    if problems:
        print('kunit-baseline: not written: a baseline is a run in which every case passed '
              'or skipped', file=sys.stderr)
        return 1
    with open(args.output, 'w') as f:
        f.write(KUNIT_BASELINE_HEAD)
        for module, name, status, reason in entries:
            f.write('\t'.join((module, name, status) + ((reason,) if reason else ())) + '\n')
    skips = sum(1 for e in entries if e[2] == 'SKIP')
    print('kunit-baseline: %d cases (%d skipped: check their reasons) written to %s'
          % (len(entries), skips, args.output))
    return 0


# ---------------------------------------------------------------------------------------
# Flaky measurements (plan-lib.sh's flaky_measure)

_FLAKY_RUN_RE = re.compile(r'^vb2-flaky: run (\d+)/(\d+) (OK|FAIL|NONE) (.+?)(?: at (\S+))?$')


def flaky_counts(paths):
    """Count the lines of the flaky_measure steps of runs: (counts, missing, multi).
    counts {key: [runs, Counter of first-failure locations]}; missing, the runs without
    the test; multi {step: [runs, runs in which more than one instance of the test
    failed]} (make check fails those, see compare_compliance())."""
    counts, missing, multi = {}, 0, {}
    for path in paths:
        for step in Run(path).steps:
            failed = collections.Counter()
            for m in filter(None, map(_FLAKY_RUN_RE.match, step.output)):
                if m.group(3) == 'NONE':
                    missing += 1
                    continue
                key = m.group(4)
                entry = counts.setdefault(key, [0, collections.Counter()])
                entry[0] += 1
                failed[(key.split('|', 1)[0], m.group(1))] += m.group(3) == 'FAIL'
                if m.group(3) == 'FAIL':
                    entry[1][m.group(5) or '-'] += 1
            for (sid, _), n in failed.items():
                tally = multi.setdefault(sid, [0, 0])
                tally[0] += 1
                tally[1] += n > 1
    return counts, missing, multi


def wilson(f, n, z=1.96):
    """The 95% Wilson score interval of a failure rate of f in n."""
    if n == 0:
        return 0.0, 1.0
    p, d = f / n, 1 + z * z / n
    c = (p + z * z / (2 * n)) / d
    h = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / d
    return max(0.0, c - h), min(1.0, c + h)


def _rate(f, n):
    lo, hi = wilson(f, n)
    return '%3d/%-4d %5.1f%% (95%% CI %.1f-%.1f%%)' % (f, n, 100.0 * f / n if n else 0,
                                                     100 * lo, 100 * hi)


def flaky_report(sides, out=sys.stdout):
    """Print failures/runs with their Wilson intervals per key and location, for each
    side (name, counts); with upstream's and ours, Fisher's p and the flaky.txt line."""
    both = set(('upstream', 'ours')) <= set(name for name, _ in sides)
    for key in sorted(set(k for _, counts in sides for k in counts)):
        out.write('%s\n' % key)
        locs = sorted(set(loc for _, counts in sides for loc in counts.get(key, (0, {}))[1]))
        for loc in locs + ['any']:
            row, fn = [], {}
            for name, counts in sides:
                runs, fails = counts.get(key, (0, collections.Counter()))
                f = sum(fails.values()) if loc == 'any' else fails.get(loc, 0)
                fn[name] = (f, runs)
                row.append('%s %s' % (name, _rate(f, runs)))
            out.write('  %-34s %s\n' % ('any location' if loc == 'any' else 'at ' + loc,
                                        '   '.join(row)))
            if both and loc != 'any' and fn['upstream'][1] and fn['ours'][1]:
                e = FlakyEntry(key, loc, *fn['upstream'], *fn['ours'], '-')
                why = flaky_stands(e)
                out.write('    Fisher p (ours fails more often) = %.3g: %s\n' % (
                    flaky_p(e), 'the entry would stand' if why is None else why))
                out.write('    flaky.txt: %s\t%s\tupstream %d/%d\tours %d/%d\t'
                          '<plan, kernel, v4l2-compliance version, date>\n' % (
                              key, loc, e.up_f, e.up_n, e.ours_f, e.ours_n))


def cmd_flaky_report(args):
    sides = [(name, paths) for name, paths in (('upstream', args.upstream), ('ours', args.ours),
                                               ('runs', args.run)) if paths]
    if not sides:
        print('flaky-report: no run directories', file=sys.stderr)
        return 2
    counted = []
    for name, paths in sides:
        counts, missing, multi = flaky_counts(paths)
        if missing:
            print('flaky-report: %s: %d runs without the test' % (name, missing))
        for sid, (runs, many) in sorted(multi.items()):
            print('%s: %s: %d of %d runs failed more than one instance of the test (a step '
                  'of make check that does fails)' % (name, sid, many, runs))
        counted.append((name, counts))
    if not any(counts for _, counts in counted):
        print('flaky-report: no "vb2-flaky: run" lines (tools/guest/plan-lib.sh, '
              'flaky_measure)', file=sys.stderr)
        return 1
    flaky_report(counted)
    return 0


# ---------------------------------------------------------------------------------------
# The driver contract page against upstream's results

_ROW_RE = re.compile(r'^   \* - ', re.M)
_CASE_RE = re.compile(r'\b(vb2_contract_\w+)')


def contract_doc_problems(anchor, rst_text):
    """Every contract case that fails upstream must be a deliberate difference on the
    page, and every deliberate difference must fail upstream. Returns the problems."""
    known, failing = set(), set()
    for key, result in anchor.items():
        if key.startswith('kunit|videobuf2-contract.'):
            case = key.split('.')[1]
            known.add(case)
            if result not in ('PASS', 'SKIP'):
                failing.add(case)
    if not known:
        return ['the anchor has no videobuf2-contract cases: run "make baseline"']
    # The cases named in rows of the page that say 'Deliberate difference'.
    deliberate = set(case for row in _ROW_RE.split(rst_text)[1:]
                     if 'Deliberate difference' in row for case in _CASE_RE.findall(row))
    return (['%s fails on upstream but the page does not call it a deliberate difference' % c
             for c in sorted(failing - deliberate)] +
            ['%s is called a deliberate difference but passes on upstream' % c
             for c in sorted(deliberate & known - failing)] +
            ['%s is named on the page but upstream never ran it' % c
             for c in sorted(deliberate - known)])


def cmd_contract_doc(args):
    with open(args.doc) as f:
        problems = contract_doc_problems(read_results(args.anchor), f.read())
    for p in problems:
        print('contract-doc: ' + p)
    return 1 if problems else 0


def cmd_compliance(args):
    for step in Run(args.run).steps:
        if step.kind == 'compliance':
            for key, result, fails in compliance_tests(step):
                print(baseline_line(key, result, [first_failure(fails)]))
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest='cmd', required=True)
    s = sub.add_parser('summary')
    s.add_argument('--items', action='append', help='TSV of host-side check items')
    s.add_argument('--run', action='append', help='a guest run directory')
    s.add_argument('--baseline', help='compliance baseline file (baseline/compliance.txt)')
    s.add_argument('--flaky', help='the flaky list (default: flaky.txt beside the baseline)')
    s.add_argument('--kunit-baseline',
                   help='the KUnit baseline (default: kunit.txt beside the baseline)')
    s.add_argument('--kunit-py', help="the kernel tree's tools/testing/kunit/kunit.py")
    s.add_argument('--max-failures', type=int, default=None,
                   help='show at most this many failures per section')
    s.add_argument('--details', help='write every failure to this file')
    s.set_defaults(func=cmd_summary)
    b = sub.add_parser('baseline')
    b.add_argument('--output', required=True)
    b.add_argument('--anchor', help='write the KUnit cases and run steps here')
    b.add_argument('--update', action='store_true',
                   help='keep the lines of steps (and KUnit suites) the runs do not have')
    b.add_argument('run', nargs='+')
    b.set_defaults(func=cmd_baseline)
    k = sub.add_parser('kunit-baseline', help='write the KUnit cases of a run as a baseline')
    k.add_argument('--output', default=os.path.join(ROOT, 'baseline', 'kunit.txt'))
    k.add_argument('--kunit-py', help="the kernel tree's tools/testing/kunit/kunit.py")
    k.add_argument('run', nargs='+',
                   help='guest run directories of make check (out/check/guest-FLAVOR)')
    k.set_defaults(func=cmd_kunit_baseline)
    f = sub.add_parser('flaky-report', help='failure rates of flaky_measure steps')
    f.add_argument('--upstream', action='append', help="a run on upstream's videobuf2")
    f.add_argument('--ours', action='append', help='a run on ours')
    f.add_argument('run', nargs='*', help='runs of either, counted together')
    f.set_defaults(func=cmd_flaky_report)
    d = sub.add_parser('contract-doc')
    d.add_argument('--anchor', required=True)
    d.add_argument('--doc', required=True)
    d.set_defaults(func=cmd_contract_doc)
    c = sub.add_parser('compliance')
    c.add_argument('run')
    c.set_defaults(func=cmd_compliance)
    t = sub.add_parser('selftest')
    t.set_defaults(func=lambda a: selftest())
    args = ap.parse_args()
    sys.exit(args.func(args))


def selftest():
    """Run the parser tests (tools/report/test_vb2check.py), make bench's report's
    (tools/report/test_benchreport.py) and make coverage's (tools/report/test_covreport.py)."""
    if not find_kunit_py():
        # KTAP goes through the tree's kunit.py: without it half the parser is untested.
        print('selftest: needs the 6.12 tree (tools/host/kernel-tree.sh makes it)', file=sys.stderr)
        return 2
    here = os.path.dirname(os.path.abspath(__file__))
    return subprocess.call([sys.executable, '-m', 'unittest', '-q', 'test_vb2check',
                            'test_benchreport', 'test_covreport'], cwd=here)


if __name__ == '__main__':
    main()
