#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Parse what a guest run printed and judge it.

A guest run (tools/run-guest.sh) leaves two logs in its directory:
  results.log  the plan's records (see tools/guest/plan-lib.sh): steps, their output,
               their exit codes and the kernel log written during each of them;
  console.log  the kernel console, for the runs that never reached the end.

Subcommands:
  summary     judge runs and the host-side check items; print a readable summary that ends
              with "N passed, N failed"; exit 1 when anything failed.
  baseline    write the per-test compliance results of a run to a baseline file.
  compliance  print the per-test compliance results of a run (one per line).
  selftest    run the parser's own tests on the fixtures in tools/fixtures/.
"""

import argparse
import fnmatch
import json
import os
import re
import subprocess
import sys
import tempfile

MARK = '@@VB2 '


class Step:
    """One step of a plan: its records and what it printed."""

    def __init__(self, sid, kind, label):
        self.id = sid
        self.kind = kind
        self.label = label
        self.output = []
        self.rc = None
        self.secs = None
        self.dmesg = []


class Run:
    """A parsed guest run."""

    def __init__(self, path):
        self.path = path
        self.name = os.path.basename(os.path.normpath(path))
        self.plan = None
        self.steps = []
        self.boot_dmesg = []
        self.taints = []    # (step id, /proc/sys/kernel/tainted after its log)
        self.done = False
        self.console = []
        self._parse()

    def _parse(self):
        res = os.path.join(self.path, 'results.log')
        lines = _read_lines(res) if os.path.exists(res) else []
        cur = None          # the step whose output is being read
        sink = None         # where plain lines go
        dmesg_of = {}
        for line in lines:
            if line.startswith(MARK):
                words = line[len(MARK):].split()
                rec = words[0] if words else ''
                if rec == 'PLAN':
                    self.plan = ' '.join(words[1:])
                elif rec == 'STEP' and len(words) >= 3:
                    cur = Step(words[1], words[2], ' '.join(words[3:]) or '-')
                    self.steps.append(cur)
                    dmesg_of[cur.id] = cur
                    sink = cur.output
                elif rec == 'RC' and cur is not None and len(words) >= 3:
                    cur.rc = _int(words[2])
                    cur.secs = float(words[3]) if len(words) >= 4 else None
                    sink = None
                elif rec == 'DMESG' and len(words) >= 2:
                    owner = dmesg_of.get(words[1])
                    sink = owner.dmesg if owner is not None else self.boot_dmesg
                elif rec == 'ENDDMESG':
                    sink = None
                elif rec == 'TAINT' and len(words) >= 3:
                    self.taints.append((words[1], _int(words[2])))
                elif rec == 'DONE':
                    self.done = True
                continue
            if sink is not None:
                sink.append(line)
        con = os.path.join(self.path, 'console.log')
        self.console = _read_lines(con) if os.path.exists(con) else []

    def all_dmesg(self):
        """(step id, line) for every kernel log line of the run."""
        for line in self.boot_dmesg:
            yield 'boot', line
        for step in self.steps:
            for line in step.dmesg:
                yield step.id, line


def _read_lines(path):
    with open(path, 'rb') as f:
        data = f.read().decode('utf-8', 'replace')
    # Progress output uses carriage returns; keep the text after the last one of a line
    # only where nothing follows it, otherwise join the pieces.
    out = []
    for raw in data.split('\n'):
        raw = raw.rstrip('\r')
        out.append(raw.replace('\r', '\t'))
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
_TEST_RE = re.compile(r'(?:^|\t)test (.+?): (OK \(Not Supported\)|OK|FAIL)\s*$')
_SECTION_RE = re.compile(r'^([A-Z][^\t:]*(?:\([^)]*\))?[^\t:]*):$')
_FAIL_RE = re.compile(r'^\s*fail: (.*)$')


def compliance_tests(step):
    """Per-test results of a compliance step: a list of (key, result, fail lines).

    key is "step|device|section|test", with "#n" appended to the test when the same
    test runs more than once in one section (say, for every input).
    """
    results = []
    seen = {}
    device = '-'
    section = '-'
    fails = []
    for line in step.output:
        m = _DEV_RE.match(line)
        if m:
            device, section, fails = m.group(1), '-', []
            continue
        m = _SECTION_RE.match(line)
        if m and not line.startswith('\t'):
            section, fails = m.group(1), []
            continue
        m = _FAIL_RE.match(line)
        if m:
            fails.append(m.group(1))
            continue
        m = _TEST_RE.search(line)
        if m:
            base = '|'.join((step.id, device, section, m.group(1)))
            n = seen.get(base, 0) + 1
            seen[base] = n
            key = base if n == 1 else '%s #%d' % (base, n)
            results.append((key, m.group(2), fails))
            fails = []
    return results


def data_lines(path):
    """The lines of a results file that carry data: not empty, not # comments."""
    with open(path) as f:
        for line in f:
            line = line.rstrip('\n')
            if line and not line.startswith('#'):
                yield line


def read_flaky(path):
    """[(pattern, evidence)] of a flaky list: tests whose upstream result was seen to
    change from run to run in a dedicated measurement, beyond the runs of the baseline."""
    out = []
    if not os.path.exists(path):
        return out
    for line in data_lines(path):
        pattern, _, evidence = line.partition('\t')
        if not evidence.strip():
            raise ValueError('%s: %s: no measurement given' % (path, pattern))
        out.append((pattern, evidence))
    return out


def read_baseline(path):
    """The baseline's results by key; the keys that match a pattern of flaky.txt (in the
    same directory) are FLAKY whatever the baseline runs gave."""
    base = {}
    for line in data_lines(path):
        key, _, result = line.rpartition('\t')
        base[key] = result
    for pattern, _ in read_flaky(os.path.join(os.path.dirname(path), 'flaky.txt')):
        for key in fnmatch.filter(list(base), pattern):
            base[key] = 'FLAKY'
    return base


def is_ok(result):
    return result is not None and result.startswith('OK')


def compare_compliance(tests, baseline, steps_run):
    """Judge our per-test results against upstream's.

    Returns a list of (status, key, ours, upstream, fail lines), where status is one of
    pass, known (fails upstream too), better (fails upstream, OK here), flaky (upstream
    gives different results from run to run), fail.
    Only baseline entries of steps that ran are expected.
    """
    out = []
    ours = {}
    for key, result, fails in tests:
        ours[key] = (result, fails)
        up = baseline.get(key)
        if up == 'FLAKY':
            out.append(('flaky', key, result, up, fails))
        elif up is None:
            out.append(('pass' if is_ok(result) else 'fail', key, result, 'absent', fails))
        elif result == up:
            out.append(('pass' if is_ok(result) else 'known', key, result, up, fails))
        elif not is_ok(up):
            out.append(('better', key, result, up, fails))
        else:
            out.append(('fail', key, result, up, fails))
    for key, up in baseline.items():
        if key.split('|', 1)[0] in steps_run and key not in ours and is_ok(up):
            out.append(('fail', key, 'missing', up, []))
    return out


# ---------------------------------------------------------------------------------------
# The kernel log

_TS_RE = re.compile(r'^\[\s*\d+\.\d+\]\s?')
_SPLAT_RES = [re.compile(p) for p in (
    r'WARNING:',
    r'BUG:',
    r'kernel BUG at',
    r'Oops',
    r'general protection fault',
    r'Kernel panic',
    r'UBSAN:',
    r'INFO: task .* blocked for more than',
    r'INFO: (possible|inconsistent|trying to register)',
    r'INFO: rcu',
    r'rcu: INFO:',
    r'watchdog: BUG',
    r'kmemleak: \d+ new suspected memory leak',
    r'unreferenced object 0x',
    r'ODEBUG: ',
    r'list_(add|del) corruption',
    r'refcount_t: ',
    r'Unable to handle kernel',
    r'stack-protector:',
)]
_END_RE = re.compile(r'---\[ end trace|^\s*$')


# Leaks that are not videobuf2's and that upstream's kernel shows just the same, each with
# what identifies it (a string of the hex dump, a function of the backtrace) and why it is
# there. A kmemleak step whose leaks are all known does not fail the run; one unknown leak
# and the step's report fails it as before.
KNOWN_LEAKS = [
    ('vidtv.0', 'platform_device_add',
     'vidtv: unloading never deletes its i2c adapter, which keeps the platform device and '
     'its name (6.12, the same with upstream videobuf2)'),
]
_KMEMLEAK_NEW_RE = re.compile(r'kmemleak: \d+ new suspected memory leak')

# Kernel bugs outside videobuf2 that the guest runs can hit by chance, each with its
# fingerprint: the splat's first line, and a function that must appear in the whole
# report (for KASAN, the stack that freed the object), and what the bug is. Only a splat
# that matches all of it is set aside, and the summary names it.
KNOWN_SPLATS = [
    (re.compile(r'BUG: KASAN: slab-use-after-free in vhci_urb_dequeue\b'),
     'pickup_urb_and_free_priv',
     'vhci_hcd: vhci_urb_dequeue() reads urb->hcpriv under vhci->lock while vhci_rx frees '
     'it under vdev->priv_lock only, when a URB completes as it is unlinked (6.12 USB/IP, '
     'below uvcvideo; not videobuf2)'),
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
    for dump, func, why in KNOWN_LEAKS:
        if dump in text and func in text:
            return why
    return None


def known_leak_steps(run):
    """Steps whose kmemleak report has only known leaks: {step id: set of reasons}."""
    out = {}
    for step in run.steps:
        if step.kind != 'kmemleak':
            continue
        objs = kmemleak_objects(step.output)
        reasons = [known_leak(o) for o in objs]
        if objs and all(reasons):
            out[step.id] = set(reasons)
    return out


def strip_ts(line):
    return _TS_RE.sub('', line)


# A test that provokes a WARN on purpose (a driver bug the core must catch and survive)
# brackets it with these lines; a WARN splat inside the window is expected, one outside
# or anything worse (BUG, KASAN, lockdep) still fails, and so does a window without its
# WARN: the warning is part of what the test asserts.
_EXPECT_BEGIN_RE = re.compile(r'vb2-expect-warning: begin (\S+)')
_EXPECT_END_RE = re.compile(r'vb2-expect-warning: end (\S+)')
_WARN_RE = re.compile(r'^WARNING: CPU: \d+ PID: \d+ at ')


def known_splat(first, report):
    """Why a splat is a known bug of another subsystem (KNOWN_SPLATS), or None.

    report: the lines of a KASAN report after its first; the function must be in the
    stack that freed the object."""
    freed = next((k for k, l in enumerate(report) if l.startswith('Freed by task')), None)
    if freed is None:
        return None
    for first_re, func, why in KNOWN_SPLATS:
        if first_re.search(first) and any(func in l for l in report[freed:]):
            return why
    return None


def kernel_splats(lines, max_lines=60, known=None):
    """Find warnings, bugs, lockdep reports and leaks in kernel log lines.

    lines: iterable of (where, line). Returns a list of (where, first line, text).
    Splats of KNOWN_SPLATS are left out; (where, why) of each goes to the list known,
    when given.
    """
    lines = list(lines)
    splats = []
    expecting = None        # (where, name, WARN splats seen) inside an expected-warning window
    i = 0
    while i < len(lines):
        where, line = lines[i]
        text = strip_ts(line)
        m = _EXPECT_BEGIN_RE.search(text)
        if m:
            expecting = [where, m.group(1), 0]
            i += 1
            continue
        m = _EXPECT_END_RE.search(text)
        if m:
            if expecting is None or expecting[1] != m.group(1):
                splats.append((where, text, 'an expected-warning window ends that did not begin'))
            elif expecting[2] == 0:
                splats.append((where, 'expected warning missing: ' + m.group(1),
                               'the test %s expected a WARN between its markers; none came'
                               % m.group(1)))
            expecting = None
            i += 1
            continue
        if any(r.search(text) for r in _SPLAT_RES):
            body = [text]
            j = i + 1
            while j < len(lines) and j - i < max_lines:
                t = strip_ts(lines[j][1])
                body.append(t)
                j += 1
                if t.startswith('---[ end trace') or t.startswith('---[ end Kernel panic'):
                    break
            report = [strip_ts(l) for _, l in lines[i:i + 300]]
            end = next((k for k, l in enumerate(report) if k and _KASAN_END_RE.match(l)), None)
            why = known_splat(text, report[1:end]) if end else None
            if why:
                # Set aside its first line only: every line after it, the rest of the
                # report included, is read as before (another CPU may print into it).
                if known is not None:
                    known.append((where, why))
                i += 1
                continue
            if expecting is not None and _WARN_RE.search(text):
                expecting[2] += 1
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


def silent_taints(run):
    """Taint flags a step set while the kernel log, up to that step, shows no splat.

    Such a flag means the log lost the splat (its buffer wrapped), so the finding is
    there but its text is not. Returns a list of (step id, flag).
    """
    order = {'boot': 0}
    for i, step in enumerate(run.steps):
        order[step.id] = i + 1
    last = len(run.steps) + 1       # 'end': after every step
    first_splat = min((order.get(where, last) for where, line in run.all_dmesg()
                       if any(r.search(strip_ts(line)) for r in _SPLAT_RES)), default=None)
    found = []
    before = 0
    for where, value in run.taints:
        if value is None:
            continue
        new = value & ~before
        before |= value
        pos = order.get(where, last)
        for bit, flag in sorted(_TAINT_FINDINGS.items()):
            if new & (1 << bit) and (first_splat is None or first_splat > pos):
                found.append((where, flag))
    return found


# ---------------------------------------------------------------------------------------
# KUnit

def kunit_cases(step, kunit_py):
    """KUnit results of a kunit step, parsed by the kernel tree's kunit.py.

    Returns (cases, report): cases is a list of (name, status), status being PASS,
    FAIL, SKIP or CRASHED; report is kunit.py's own readable output.
    """
    ktap = [strip_ts(line) for line in step.dmesg]
    with tempfile.TemporaryDirectory() as tmp:
        src = os.path.join(tmp, 'ktap.log')
        js = os.path.join(tmp, 'ktap.json')
        with open(src, 'w') as f:
            f.write('\n'.join(ktap) + '\n')
        proc = subprocess.run([sys.executable, kunit_py, 'parse', '--json=' + js, src],
                              capture_output=True, text=True)
        report = proc.stdout + proc.stderr
        if not os.path.exists(js):
            return [('%s: kunit.py parse' % step.label, 'CRASHED')], report
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
        cases.append(('%s: no test results' % step.label, 'CRASHED'))
    return cases, report


_KTAP_END_RE = re.compile(r'^\s*(?:(?:not )?ok \d+\b|1\.\.\d+|# Subtest:|KTAP version)')


_KTAP_FAILED_RE = re.compile(r'(EXPECTATION|ASSERTION) FAILED')


def kunit_case_log(step, name, max_lines=20):
    """What a failed case printed (its "# ..." diagnostic lines, from the first failed
    expectation on), found above its "not ok" line in the KTAP.

    name: suite.case or suite.case.param, as kunit_cases() gives it. The search walks
    down "# Subtest:" lines along that path, so that a parameter of one case is not
    taken for the same parameter of another."""
    ktap = [strip_ts(line).strip() for line in step.dmesg]
    path = name.split('.', 2)
    pos = 0
    for part in path[:-1]:
        pos = next((k for k in range(pos, len(ktap)) if ktap[k] == '# Subtest: ' + part),
                   None)
        if pos is None:
            return []
    end_re = re.compile(r'^not ok \d+ %s\s*(?:#.*)?$' % re.escape(path[-1]))
    i = next((k for k in range(pos, len(ktap)) if end_re.match(ktap[k])), None)
    if i is None:
        return []
    j = i
    while j > pos and not _KTAP_END_RE.match(ktap[j - 1]):
        j -= 1
    lines = ktap[j:i]
    first = next((k for k, l in enumerate(lines) if _KTAP_FAILED_RE.search(l)), 0)
    return lines[first:first + max_lines]


# ---------------------------------------------------------------------------------------
# Judging and printing

class Tally:
    def __init__(self):
        self.passed = 0
        self.failed = 0
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
            name, status = parts[0], parts[1]
            detail = parts[2] if len(parts) > 2 else ''
            text = name
            if status != 'PASS' and detail and os.path.exists(detail):
                with open(detail, errors='replace') as d:
                    body = d.read().strip().splitlines()
                text += '\n' + '\n'.join('    ' + b for b in body[:40])
                if len(body) > 40:
                    text += '\n    ... (%d more lines in %s)' % (len(body) - 40, detail)
            tally.add(sec, status == 'PASS', text)


def judge_run(tally, run, baseline, kunit_py, allow_compliance_fail=False):
    sec = tally.section('guest run %s (plan %s)' % (run.name, run.plan or '?'))
    # The plan must run to its end.
    if run.done:
        tally.add(sec, True)
    else:
        tail = '\n'.join('    ' + strip_ts(l) for l in run.console[-30:])
        last = run.steps[-1].id if run.steps else 'boot'
        tally.add(sec, False, 'the guest did not finish its plan (last step: %s); console tail:\n%s'
                  % (last, tail))
    steps_run = set()
    for step in run.steps:
        steps_run.add(step.id)
        if step.kind == 'compliance':
            if step.rc is None or step.rc >= 124:
                tally.add(sec, False, 'compliance %s: v4l2-compliance did not end normally (rc %s)'
                          % (step.id, step.rc))
            continue
        if step.kind == 'kunit':
            continue
        ok = step.rc == 0
        tally.add(sec, ok, None if ok else 'step %s (%s) exited with %s; output:\n%s' % (
            step.id, step.kind, step.rc, '\n'.join('    ' + l for l in step.output[-20:])))

    # KUnit: every case counts.
    for step in run.steps:
        if step.kind != 'kunit':
            continue
        ksec = tally.section('KUnit %s (%s)' % (step.label, run.name))
        if kunit_py is None:
            tally.add(ksec, False, 'no kunit.py to parse the results with')
            continue
        cases, report = kunit_cases(step, kunit_py)
        for name, status in cases:
            ok = status in ('PASS', 'SKIP')
            detail = '%s: %s' % (name, status)
            if not ok:
                detail += ''.join('\n    ' + l for l in kunit_case_log(step, name))
            tally.add(ksec, ok, detail)
        if step.rc not in (0, None):
            tally.add(ksec, False, 'modprobe %s exited with %s' % (step.label, step.rc))
        ksec['notes'].append('%d cases' % len(cases))

    # Compliance, test by test against the baseline.
    tests = []
    for step in run.steps:
        if step.kind == 'compliance':
            tests.extend(compliance_tests(step))
    if tests:
        csec = tally.section('v4l2-compliance vs upstream baseline (%s)' % run.name)
        verdicts = compare_compliance(tests, baseline or {}, steps_run)
        counts = {}
        for status, key, ours, up, fails in verdicts:
            counts[status] = counts.get(status, 0) + 1
            if status == 'fail':
                detail = '%s: ours %s, upstream %s' % (key, ours, up)
                if fails:
                    detail += '\n' + '\n'.join('    fail: ' + f for f in fails[:6])
                tally.add(csec, allow_compliance_fail, detail)
            else:
                tally.add(csec, True)
        csec['notes'].append('%d tests: %d OK as upstream, %d fail upstream too, %d better than '
                             'upstream, %d flaky upstream, %d regressions' % (
                                 len(verdicts), counts.get('pass', 0), counts.get('known', 0),
                                 counts.get('better', 0), counts.get('flaky', 0),
                                 counts.get('fail', 0)))

    # The kernel log.
    lsec = tally.section('kernel log (%s)' % run.name)
    known = []
    splats = kernel_splats(run.all_dmesg(), known=known)
    for where, why in known:
        lsec['notes'].append('known bug in %s: %s' % (where, why))
    forgiven = known_leak_steps(run)
    for step_id, reasons in sorted(forgiven.items()):
        lsec['notes'].append('known leak in %s: %s' % (step_id, '; '.join(sorted(reasons))))
    splats = [sp for sp in splats if not (sp[0] in forgiven and _KMEMLEAK_NEW_RE.search(sp[1]))]
    if not run.done:
        splats += kernel_splats(('console', l) for l in run.console)
    for where, flag in silent_taints(run):
        splats.append((where, 'kernel tainted %s with no splat in its log' % flag,
                       'the log buffer lost it: read the console, or boot with a larger '
                       'log_buf_len'))
    if splats:
        for where, first, text in splats:
            tally.add(lsec, False, 'during step %s: %s\n%s' % (
                where, first, '\n'.join('    ' + l for l in text.splitlines()[:40])))
    else:
        tally.add(lsec, True)


def print_summary(tally, out=sys.stdout, max_per_section=None, details=None):
    """Print the summary; at most max_per_section failures of a section are shown
    (all of them go to the file details, when given)."""
    w = out.write
    for sec in tally.sections:
        mark = 'ok  ' if sec['failed'] == 0 else 'FAIL'
        notes = ('; ' + '; '.join(sec['notes'])) if sec['notes'] else ''
        w('%s %-64s %5d passed %5d failed%s\n' % (mark, sec['title'], sec['passed'],
                                                   sec['failed'], notes))
    failures = [(s['title'], f) for s in tally.sections for f in s['failures']]
    if failures:
        w('\nFailures:\n')
        shown = {}
        for title, f in failures:
            shown[title] = shown.get(title, 0) + 1
            if max_per_section is None or shown[title] <= max_per_section:
                w('- [%s] %s\n' % (title, f))
        for title, n in shown.items():
            if max_per_section is not None and n > max_per_section:
                w('- [%s] ... %d more%s\n' % (title, n - max_per_section,
                                               ' in ' + details if details else ''))
    if details:
        with open(details, 'w') as f:
            for title, text in failures:
                f.write('- [%s] %s\n' % (title, text))
    w('\n%d passed, %d failed\n' % (tally.passed, tally.failed))


def find_kunit_py():
    cache = os.environ.get('VB2_CACHE') or os.path.expanduser('~/.cache/videobuf2')
    p = os.path.join(cache, 'src', 'linux-6.12', 'tools', 'testing', 'kunit', 'kunit.py')
    return p if os.path.exists(p) else None


def cmd_summary(args):
    tally = Tally()
    for items in args.items or []:
        judge_items(tally, items)
    baseline = read_baseline(args.baseline) if args.baseline else None
    kunit_py = args.kunit_py or find_kunit_py()
    for path in args.run or []:
        judge_run(tally, Run(path), baseline, kunit_py)
    print_summary(tally, max_per_section=args.max_failures, details=args.details)
    return 1 if tally.failed else 0


def anchor_results(run, kunit_py):
    """Upstream's results that are not compliance tests: each KUnit case (key
    kunit|suite.case[.param], PASS/FAIL/SKIP/CRASHED) and each run step (key
    run|step, OK or FAIL rc N)."""
    out = []
    for step in run.steps:
        if step.kind == 'kunit':
            cases, _ = kunit_cases(step, kunit_py)
            out.extend(('kunit|' + name, status) for name, status in cases)
        elif step.kind == 'cmd' and step.label == '-':
            out.append(('run|' + step.id, 'OK' if step.rc == 0 else 'FAIL rc %s' % step.rc))
    return out


def merge_runs(pairs_per_run, nruns):
    """[(key, result)] of several runs -> [(key, result or FLAKY)] in first-seen order."""
    order, results = [], {}
    for pairs in pairs_per_run:
        for key, result in pairs:
            if key not in results:
                order.append(key)
            results.setdefault(key, []).append(result)
    out = []
    for key in order:
        seen = results[key]
        same = len(seen) == nruns and len(set(seen)) == 1
        out.append((key, seen[0] if same else 'FLAKY'))
    return out


def write_anchor(path, entries, nruns):
    with open(path, 'w') as f:
        f.write('# Upstream videobuf2 (VB2_IMPL=upstream): KUnit cases (the driver contract suite,\n')
        f.write('# built against it) and the steps that run a program, from %d run(s) of "make\n' % nruns)
        f.write('# baseline". key: kunit|suite.case or run|step, a tab, the result; FLAKY: not the\n')
        f.write('# same in every run. Documentation/driver-contract.rst must name every contract\n')
        f.write('# case that fails here as a deliberate difference (vb2check.py contract-doc).\n')
        for key, result in entries:
            f.write('%s\t%s\n' % (key, result))


def cmd_baseline(args):
    """Merge runs of the same plan into a baseline: a test whose result is not the same
    in every run is written as FLAKY, and is not held against us."""
    order, results = [], {}
    anchors = []
    kunit_py = find_kunit_py()
    for path in args.run:
        run = Run(path)
        if not run.done:
            print('baseline: run %s did not finish its plan' % path, file=sys.stderr)
            return 1
        anchors.append(anchor_results(run, kunit_py))
        for step in run.steps:
            if step.kind != 'compliance':
                continue
            for key, result, _ in compliance_tests(step):
                if key not in results:
                    order.append(key)
                results.setdefault(key, []).append(result)
    if args.anchor:
        entries = merge_runs(anchors, len(args.run))
        write_anchor(args.anchor, entries, len(args.run))
        print('baseline: %d KUnit cases and run steps written to %s' % (len(entries), args.anchor))
    flaky = 0
    with open(args.output, 'w') as f:
        f.write('# v4l2-compliance per-test results of upstream videobuf2 (VB2_IMPL=upstream),\n')
        f.write('# written by "make baseline" from %d run(s) of the compliance plan.\n' % len(args.run))
        f.write('# key: step|device|section|test, a tab, the result; FLAKY: not the same in every run.\n')
        for key in order:
            seen = results[key]
            same = len(seen) == len(args.run) and len(set(seen)) == 1
            flaky += not same
            f.write('%s\t%s\n' % (key, seen[0] if same else 'FLAKY'))
    print('baseline: %d tests (%d flaky) written to %s' % (len(order), flaky, args.output))
    return 0


# ---------------------------------------------------------------------------------------
# The driver contract page against upstream's results

_ROW_RE = re.compile(r'^   \* - ', re.M)
_CASE_RE = re.compile(r'\b(vb2_contract_\w+)')


def deliberate_cases(rst_text):
    """Contract cases named in rows of the page that say 'Deliberate difference'."""
    cases = set()
    for row in _ROW_RE.split(rst_text)[1:]:
        if 'Deliberate difference' in row:
            cases.update(_CASE_RE.findall(row))
    return cases


def contract_doc_problems(anchor, rst_text):
    """Every contract case that fails upstream must be a deliberate difference on the
    page, and every deliberate difference must fail upstream. Returns a list of problems."""
    failing = set()
    known = set()
    for key, result in anchor.items():
        if not key.startswith('kunit|videobuf2-contract.'):
            continue
        case = key.split('.')[1]
        known.add(case)
        if result not in ('PASS', 'SKIP'):
            failing.add(case)
    deliberate = deliberate_cases(rst_text)
    problems = []
    if not known:
        return ['the anchor has no videobuf2-contract cases: run "make baseline"']
    for case in sorted(failing - deliberate):
        problems.append('%s fails on upstream but the page does not call it a deliberate '
                        'difference' % case)
    for case in sorted(deliberate & known - failing):
        problems.append('%s is called a deliberate difference but passes on upstream' % case)
    for case in sorted(deliberate - known):
        problems.append('%s is named on the page but upstream never ran it' % case)
    return problems


def cmd_contract_doc(args):
    with open(args.doc) as f:
        text = f.read()
    problems = contract_doc_problems(read_baseline(args.anchor), text)
    for p in problems:
        print('contract-doc: ' + p)
    return 1 if problems else 0


def cmd_compliance(args):
    run = Run(args.run)
    for step in run.steps:
        if step.kind == 'compliance':
            for key, result, _ in compliance_tests(step):
                print('%s\t%s' % (key, result))
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest='cmd', required=True)
    s = sub.add_parser('summary')
    s.add_argument('--items', action='append', help='TSV of host-side check items')
    s.add_argument('--run', action='append', help='a guest run directory')
    s.add_argument('--baseline', help='compliance baseline file')
    s.add_argument('--kunit-py', help="the kernel tree's tools/testing/kunit/kunit.py")
    s.add_argument('--max-failures', type=int, default=None,
                   help='show at most this many failures per section')
    s.add_argument('--details', help='write every failure to this file')
    s.set_defaults(func=cmd_summary)
    b = sub.add_parser('baseline')
    b.add_argument('--output', required=True)
    b.add_argument('--anchor', help='write the KUnit cases and run steps here')
    b.add_argument('run', nargs='+')
    b.set_defaults(func=cmd_baseline)
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
    """Run the parser tests (tools/test_vb2check.py)."""
    if not find_kunit_py():
        # KTAP goes through the tree's kunit.py: without it half the parser is untested.
        print('selftest: needs the 6.12 tree (tools/kernel-tree.sh makes it)', file=sys.stderr)
        return 2
    here = os.path.dirname(os.path.abspath(__file__))
    return subprocess.call([sys.executable, '-m', 'unittest', '-q', 'test_vb2check'], cwd=here)


if __name__ == '__main__':
    main()
