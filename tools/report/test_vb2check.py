# SPDX-License-Identifier: GPL-2.0
"""Tests of the result parsers in vb2check.py, on the runs under tools/report/fixtures/."""

import argparse
import contextlib
import io
import re
import shutil
import subprocess
import tempfile
import os
import unittest

import vb2check

WARN = 'WARNING: CPU: 1 PID: 9 at videobuf2-core.c:10 vb2_foo+0x1/0x2'
HERE = os.path.dirname(os.path.abspath(__file__))
FIX = os.path.join(HERE, 'fixtures')


def expectations(flaky=None, kunit=None):
    """The fixture baseline, with fixtures/kunit.txt and no flaky list unless given."""
    return vb2check.Expectations.load(os.path.join(FIX, 'baseline.txt'),
                                      flaky=os.path.join(FIX, flaky or 'none.txt'),
                                      kunit=kunit and os.path.join(FIX, kunit))


def judge(run, kunit=True, expect=None):
    """The Tally of a run (a Run, or the name of a fixture)."""
    tally = vb2check.Tally()
    if not isinstance(run, vb2check.Run):
        run = vb2check.Run(os.path.join(FIX, run))
    kunit_py = vb2check.find_kunit_py() if kunit else None
    vb2check.judge_run(tally, run, expectations() if expect is None else expect, kunit_py)
    return tally


def summary(tally):
    out = io.StringIO()
    vb2check.print_summary(tally, out)
    return out.getvalue()


def section(tally, title):
    return [sec for sec in tally.sections if sec['title'].startswith(title)][0]


def make_run(records, plan='x'):
    """A Run of the results.log records after its PLAN record (and before DONE)."""
    with tempfile.TemporaryDirectory() as d:
        with open(os.path.join(d, 'results.log'), 'w') as f:
            f.write('\n'.join(['@@VB2 PLAN ' + plan] + records + ['@@VB2 DONE']) + '\n')
        return vb2check.Run(d)


def step(sid, dmesg=(), taint=None, debug=None, kind='cmd', output=(), rc=0):
    """The records of a step: output, exit code, kernel log lines, TAINT and DEBUG."""
    return (['@@VB2 STEP %s %s -' % (sid, kind)] + list(output) +
            ['@@VB2 RC %s %d 1.0' % (sid, rc), '@@VB2 DMESG ' + sid] +
            ['[    1.0] ' + l for l in dmesg] + ['@@VB2 ENDDMESG ' + sid] +
            ([] if taint is None else ['@@VB2 TAINT %s %d' % (sid, taint)]) +
            ([] if debug is None else ['@@VB2 DEBUG %s %s' % (sid, debug)]))


class ResultsLog(unittest.TestCase):
    def test_steps_and_records(self):
        run = vb2check.Run(os.path.join(FIX, 'run-ok'))
        self.assertEqual(run.plan, 'fixture-ok')
        self.assertTrue(run.done)
        self.assertEqual([s.id for s in run.steps], ['load-vivid', 'vivid0', 'suite'])
        self.assertEqual([s.rc for s in run.steps], [0, 1, 0])
        self.assertEqual(run.steps[1].secs, 12.5)
        self.assertEqual(run.steps[0].dmesg, ['[    1.000000] vivid-000: using single planar format API'])
        self.assertEqual(run.boot_dmesg, ['[    0.000000] Linux version 6.12.118'])

    def test_unfinished_run(self):
        run = vb2check.Run(os.path.join(FIX, 'run-bad'))
        self.assertFalse(run.done)
        self.assertEqual(run.steps[-1].id, 'rmmod')


Q = 'vivid0|/dev/video0|Required ioctls|VIDIOC_QUERYCAP'
INV = 'vivid0|/dev/video0|Required ioctls|invalid ioctls'
EXT = 'vivid0|/dev/video0|Control ioctls (Input 0)|VIDIOC_QUERY_EXT_CTRL/QUERYMENU'
MMAP = 'vivid0|/dev/video0|Streaming ioctls|MMAP (no poll)'
RW = 'vivid0|/dev/video0|Streaming ioctls|read/write'


def fail(*locations):
    """The fail lines of a test that failed at these places, first to last."""
    return ['%s: check %d' % (loc, i) for i, loc in enumerate(locations)]


def verdicts(tests, flaky=None, baseline=None):
    """{key: Verdict} of our tests [(key, result, fail lines)] against the fixtures."""
    expect = expectations(flaky)
    out = vb2check.compare_compliance(tests, baseline or expect.compliance, {'vivid0'},
                                      expect.flaky)
    return dict((v.key, v) for v in out)


class Compliance(unittest.TestCase):
    def assertVerdict(self, key, fails, status, why=None, flaky=None, baseline=None):
        """The verdict on our test key, failed with the fail lines fails (None: passed)."""
        test = (key, 'OK', []) if fails is None else (key, 'FAIL', fails)
        got = verdicts([test], flaky, baseline)[key]
        self.assertEqual(got.status, status)
        if why is not None:
            self.assertIn(why, got.why)

    def test_keys_sections_and_repeats(self):
        run = vb2check.Run(os.path.join(FIX, 'run-ok'))
        tests = vb2check.compliance_tests(run.steps[1])
        keys = [k for k, _, _ in tests]
        self.assertIn('vivid0|/dev/video0|Required ioctls|VIDIOC_QUERYCAP', keys)
        self.assertIn('vivid0|/dev/video0|Control ioctls (Input 1)|VIDIOC_G/S_JPEGCOMP', keys)
        # A test line after progress output on the same line is found.
        self.assertIn('vivid0|/dev/video0|Streaming ioctls|MMAP (no poll)', keys)
        self.assertIn('vivid0|/dev/video0|Streaming ioctls|MMAP (no poll) #2', keys)
        self.assertEqual(len(tests), 8)
        result = dict((k, (r, f)) for k, r, f in tests)
        fail = result['vivid0|/dev/video0|Control ioctls (Input 0)|VIDIOC_QUERY_EXT_CTRL/QUERYMENU']
        self.assertEqual(fail[0], 'FAIL')
        self.assertEqual(fail[1], ['v4l2-test-controls.cpp(324): expected 8 private controls, got 7'])
        self.assertEqual(result['vivid0|/dev/video0|Control ioctls (Input 0)|VIDIOC_G/S_JPEGCOMP'][0],
                         'OK (Not Supported)')

    @staticmethod
    def compliance_130():
        step = vb2check.Step('vivid0-s', 'compliance', 'vivid0-s', '-')
        step.output = vb2check._read_lines(os.path.join(FIX, 'compliance-1.30.log'))
        return vb2check.compliance_tests(step)

    def test_first_failure_of_v4l2_compliance_1_30(self):
        got = dict((k.split('|', 2)[2], (r, vb2check.first_failure(f)))
                   for k, r, f in self.compliance_130())
        # warn: and info: lines around the fail lines do not count; the first fail line
        # is where the test failed, the ones after it are its callers.
        self.assertEqual(got['Buffer ioctls (Input 0)|Requests'],
                         ('FAIL', 'v4l2-test-buffers.cpp(2371)'))
        self.assertEqual(got['Buffer ioctls (Input 1)|Requests'], ('OK', '-'))
        # A fail line after progress output (a carriage return) is the first; the file
        # goes by its base name.
        self.assertEqual(got['Streaming ioctls|MMAP (no poll)'],
                         ('FAIL', 'v4l2-test-buffers.cpp(1395)'))
        self.assertEqual(got['Streaming ioctls|MMAP (select)'], ('OK', '-'))
        self.assertEqual(got['Streaming ioctls|MMAP (epoll)'], ('OK (Not Supported)', '-'))
        # A fail line of a test that passed stays with it, not with the next test.
        self.assertEqual(got['Streaming ioctls|USERPTR (select)'][0], 'OK')
        self.assertEqual(got['Streaming ioctls|DMABUF (select)'], ('FAIL', '-'))
        self.assertEqual(got['Buffer ioctls (Input 0)|CREATE_BUFS maximum buffers'], ('OK', '-'))
        self.assertEqual(len(got), 13)

    def test_flaky_measure_reads_output_as_vb2check_does(self):
        """plan-lib.sh's awk program and compliance_tests() give the same keys, results
        and first failures, with the host's awk and with busybox's (the guest's)."""
        with open(os.path.join(vb2check.ROOT, 'tools', 'guest', 'plan-lib.sh')) as f:
            prog = re.search(r"^VB2_COMPLIANCE_AWK='(.*?)'$", f.read(), re.S | re.M).group(1)
        awks = [['awk']] + ([['busybox', 'awk']] if shutil.which('busybox') else [])
        tests = self.compliance_130()
        for name in ('Requests', 'MMAP (no poll)', 'DMABUF (select)', 'USERPTR (select)'):
            want = ['vb2-flaky: run 7/9 %s %s%s' % (
                'FAIL' if r == 'FAIL' else 'OK', k,
                ' at ' + vb2check.first_failure(f) if r == 'FAIL' else '')
                    for k, r, f in tests if k.split('|')[3] == name]
            for awk in awks:
                out = subprocess.run(awk + ['-v', 'id=vivid0-s', '-v', 'test=' + name,
                                            '-v', 'run=7/9', prog,
                                            os.path.join(FIX, 'compliance-1.30.log')],
                                     capture_output=True, text=True, check=True).stdout
                self.assertEqual(out.splitlines(), want, (awk, name))

    def test_compare_with_baseline(self):
        baseline = vb2check.read_baseline(os.path.join(FIX, 'baseline.txt'))
        run = vb2check.Run(os.path.join(FIX, 'run-bad'))
        tests = vb2check.compliance_tests(run.steps[0])
        verdicts = {v.key: v.status for v in vb2check.compare_compliance(tests, baseline, {'vivid0'})}
        self.assertEqual(verdicts['vivid0|/dev/video0|Required ioctls|VIDIOC_QUERYCAP'], 'fail')
        self.assertEqual(verdicts['vivid0|/dev/video0|Control ioctls (Input 0)|VIDIOC_QUERY_EXT_CTRL/QUERYMENU'],
                         'better')
        # Tests of the baseline that did not run are failures; steps that did not run are not.
        self.assertEqual(verdicts['vivid0|/dev/video0|Control ioctls (Input 1)|VIDIOC_G/S_JPEGCOMP'], 'fail')
        self.assertNotIn('other|/dev/video9|Required ioctls|VIDIOC_QUERYCAP', verdicts)

    def test_known_failure_is_not_a_regression(self):
        baseline = vb2check.read_baseline(os.path.join(FIX, 'baseline.txt'))
        run = vb2check.Run(os.path.join(FIX, 'run-ok'))
        tests = vb2check.compliance_tests(run.steps[1])
        statuses = [v.status for v in vb2check.compare_compliance(tests, baseline, {'vivid0'})]
        self.assertEqual(statuses.count('known'), 1)
        # read/write is FLAKY upstream and OK here: a pass.
        self.assertEqual(statuses.count('flaky'), 0)
        self.assertEqual(statuses.count('fail'), 0)

    def test_known_failure_must_fail_at_the_same_place(self):
        self.assertVerdict(EXT, fail('v4l2-test-controls.cpp(324)'), 'known')
        # Earlier: a check before upstream's fails, and hides whether upstream's would.
        self.assertVerdict(EXT, fail('v4l2-test-controls.cpp(300)', 'v4l2-test-controls.cpp(324)'),
                           'fail', 'ours first failed at v4l2-test-controls.cpp(300), upstream '
                           'at v4l2-test-controls.cpp(324)')
        # Elsewhere.
        self.assertVerdict(EXT, fail('v4l2-test-buffers.cpp(2371)'), 'fail')
        # Missing: no fail line at all.
        self.assertVerdict(EXT, [], 'fail', 'ours failed without a fail line')

    def test_old_baseline_line_excuses_nothing(self):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, 'compliance.txt')
            with open(path, 'w') as f:
                f.write('%s\tFAIL\n%s\tOK\n' % (EXT, Q))
            baseline = vb2check.read_baseline(path)
        self.assertIsNone(baseline[EXT].locs)
        self.assertVerdict(EXT, fail('v4l2-test-controls.cpp(324)'), 'fail',
                           'rerun make baseline', baseline=baseline)

    def test_baseline_flaky_excuses_only_its_places(self):
        self.assertVerdict(RW, fail('v4l2-test-buffers.cpp(1100)'), 'flaky')
        self.assertVerdict(RW, fail('v4l2-test-buffers.cpp(1200)'), 'fail',
                           'flaky upstream only at v4l2-test-buffers.cpp(1100)')
        self.assertVerdict(RW, None, 'pass')

    def test_baseline_update_replaces_only_the_steps_run_again(self):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, 'anchor.txt')
            with open(path, 'w') as f:
                f.write('# header\nrun|edu-0-cap-mmap\tOK\nrun|load-vivid\tOK\n'
                        'kunit|videobuf2-contract.old_case\tPASS\nkunit|other.case\tFAIL\n'
                        'vivid0-s|/dev/video0|Buffer ioctls|Requests\tOK\n'
                        'vivid1-s|/dev/video4|Buffer ioctls|Requests\tOK\n')
            new = ['run|edu-0-cap-mmap\tFAIL rc 1', 'kunit|videobuf2-contract.new_case\tPASS',
                   'vivid0-s|/dev/video0|Buffer ioctls|Requests\tFAIL\tx.cpp(1)']
            self.assertEqual(vb2check.kept_lines(path, new),
                             ['run|load-vivid\tOK', 'kunit|other.case\tFAIL',
                              'vivid1-s|/dev/video4|Buffer ioctls|Requests\tOK'])
            self.assertEqual(vb2check.kept_lines(os.path.join(d, 'none.txt'), new), [])

    def test_flaky_entry_excuses_its_failure(self):
        self.assertVerdict(Q, fail('v4l2-test.cpp(1)'), 'flaky', flaky='flaky-good.txt')
        self.assertVerdict(Q, None, 'pass', flaky='flaky-good.txt')

    def test_flaky_test_failing_at_another_line_fails(self):
        self.assertVerdict(Q, fail('v4l2-test.cpp(2)'), 'fail', 'ours first failed at '
                           'v4l2-test.cpp(2); flaky upstream only at v4l2-test.cpp(1)',
                           flaky='flaky-good.txt')

    def test_two_flaky_failures_in_a_step_fail(self):
        got = verdicts([(Q, 'FAIL', fail('v4l2-test.cpp(1)')),
                        (MMAP, 'FAIL', fail('v4l2-test-buffers.cpp(1395)'))],
                       flaky='flaky-good.txt')
        self.assertEqual([got[Q].status, got[MMAP].status], ['fail', 'fail'])
        self.assertIn('one of 2 flaky tests failing in this step', got[MMAP].why)
        # One in each of two steps is two flakes.
        other = 'vivid0-32' + MMAP[len('vivid0'):]
        expect = expectations('flaky-good.txt')
        expect.flaky[other] = [e._replace(key=other) for e in expect.flaky[MMAP]]
        out = vb2check.compare_compliance(
            [(Q, 'FAIL', fail('v4l2-test.cpp(1)')), (other, 'FAIL', fail('v4l2-test-buffers.cpp(1395)'))],
            expect.compliance, {'vivid0'}, expect.flaky)
        self.assertEqual([v.status for v in out[:2]], ['flaky', 'flaky'])

    def test_flaky_entry_that_does_not_stand_excuses_nothing(self):
        self.assertVerdict(INV, fail('v4l2-test.cpp(9)'), 'fail',
                           'the flaky entry for v4l2-test.cpp(9) does not stand',
                           flaky='flaky-bad.txt')
        # A pattern excuses nothing either.
        self.assertVerdict(Q, fail('v4l2-test.cpp(1)'), 'fail', flaky='flaky-bad.txt')

    def test_flaky_list_problems_are_failed_items(self):
        tally = vb2check.Tally()
        vb2check.judge_flaky_list(tally, expectations('flaky-bad.txt'))
        text = summary(tally)
        self.assertEqual(tally.failed, 6, text)
        self.assertIn('a pattern: an entry names one test, by its exact key', text)
        self.assertIn('ours fails more often than upstream: ours 9/30, upstream 1/60', text)
        self.assertIn('upstream never failed in the measurement', text)
        self.assertIn('"ours F/N" and a text, separated by tabs\n    %s\t3 of 150 runs' % Q, text)
        self.assertIn('no text: say which plan measured it', text)
        self.assertIn('no|such|test|here at v4l2-test.cpp(1): the baseline has no such test', text)
        tally = vb2check.Tally()
        vb2check.judge_flaky_list(tally, expectations('flaky-good.txt'))
        self.assertEqual((tally.passed, tally.failed), (2, 0))

    def test_fisher_exact_test(self):
        # All three failures of six runs on ours' side of three: 1 in C(6, 3) = 20.
        self.assertAlmostEqual(vb2check.fisher_greater(3, 3, 0, 3), 0.05)
        self.assertAlmostEqual(vb2check.fisher_greater(5, 140, 4, 140), 0.5)
        self.assertAlmostEqual(vb2check.fisher_greater(0, 30, 4, 60), 1.0)
        self.assertLess(vb2check.fisher_greater(9, 30, 1, 60), 0.001)
        self.assertGreater(vb2check.fisher_greater(3, 30, 3, 60), 0.05)

    def test_wilson_interval(self):
        lo, hi = vb2check.wilson(0, 10)
        self.assertEqual(lo, 0.0)
        self.assertAlmostEqual(hi, 0.2775, places=4)
        lo, hi = vb2check.wilson(5, 10)
        self.assertAlmostEqual(lo, 0.2366, places=4)
        self.assertAlmostEqual(hi, 0.7634, places=4)

    def test_the_repository_flaky_list(self):
        """baseline/flaky.txt: readable, exact keys of the baseline, every entry standing."""
        expect = vb2check.Expectations.load(os.path.join(vb2check.ROOT, 'baseline',
                                                         'compliance.txt'))
        tally = vb2check.Tally()
        vb2check.judge_flaky_list(tally, expect)
        self.assertEqual(tally.failed, 0, summary(tally))
        # Each entry judged once (the list may be empty: no measured flake).
        self.assertEqual(tally.passed, sum(len(e) for e in expect.flaky.values()))


class Baseline(unittest.TestCase):
    A = 'vivid0-s|/dev/video0|Buffer ioctls (Input 0)|Requests'

    def test_merge_runs(self):
        a, b, c, d, e = ('s|d|x|%s' % t for t in 'abcde')
        runs = [[(a, 'OK', '-'), (b, 'FAIL', 'x.cpp(1)'), (c, 'FAIL', 'x.cpp(1)'),
                 (d, 'OK', '-'), (e, 'OK', '-')],
                [(a, 'OK', '-'), (b, 'FAIL', 'x.cpp(1)'), (c, 'FAIL', 'x.cpp(2)'),
                 (d, 'FAIL', 'x.cpp(3)')]]
        merged = vb2check.merge_compliance(runs, 2)
        self.assertEqual(merged, [(a, 'OK', []), (b, 'FAIL', ['x.cpp(1)']),
                                  (c, 'FLAKY', ['x.cpp(1)', 'x.cpp(2)']),
                                  (d, 'FLAKY', ['x.cpp(3)']), (e, 'FLAKY', [])])
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, 'compliance.txt')
            with open(path, 'w') as f:
                f.write(''.join(vb2check.baseline_line(*m) + '\n' for m in merged))
            back = vb2check.read_baseline(path)
        self.assertEqual(back[b], vb2check.Expected('FAIL', ('x.cpp(1)',)))
        self.assertEqual(back[c], vb2check.Expected('FLAKY', ('x.cpp(1)', 'x.cpp(2)')))
        self.assertEqual(back[e], vb2check.Expected('FLAKY', ()))
        self.assertEqual(back[a], vb2check.Expected('OK', ()))

    def test_baseline_command_writes_the_places(self):
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, 'compliance.txt')
            args = argparse.Namespace(run=[os.path.join(FIX, 'run-ok')] * 2, output=out,
                                      anchor=None, update=False)
            with contextlib.redirect_stdout(io.StringIO()):
                self.assertEqual(vb2check.cmd_baseline(args), 0)
            with open(out) as f:
                self.assertIn(EXT + '\tFAIL\tv4l2-test-controls.cpp(324)\n', f.read())
            self.assertEqual(vb2check.read_baseline(out)[EXT].locs,
                             ('v4l2-test-controls.cpp(324)',))

    def test_flaky_report(self):
        sides = []
        for name, run in (('upstream', 'run-flaky-up'), ('ours', 'run-flaky-ours')):
            counts, missing, multi = vb2check.flaky_counts([os.path.join(FIX, run)])
            sides.append((name, counts))
        up = dict(sides)['upstream']
        self.assertEqual(up[self.A][0], 6)
        self.assertEqual(dict(up[self.A][1]), {'v4l2-test-buffers.cpp(2371)': 1,
                                               'v4l2-test-buffers.cpp(2380)': 1})
        # Ours: the test did not run in one of four runs; no run failed two inputs.
        self.assertEqual((missing, multi), (1, {'vivid0-s': [3, 0]}))
        out = io.StringIO()
        vb2check.flaky_report(sides, out)
        text = out.getvalue()
        self.assertIn('upstream   1/6     16.7% (95% CI 3.0-56.4%)', text)
        # The line it proposes is one the flaky list reads.
        line = next(l for l in text.splitlines() if 'flaky.txt: ' + self.A in l)
        entry = vb2check.parse_flaky_line(line.split('flaky.txt: ', 1)[1])
        self.assertEqual((entry.loc, entry.up_f, entry.up_n, entry.ours_f, entry.ours_n),
                         ('v4l2-test-buffers.cpp(2371)', 1, 6, 0, 3))


class KernelLog(unittest.TestCase):
    def test_warning_splat_is_found_with_its_step(self):
        run = vb2check.Run(os.path.join(FIX, 'run-bad'))
        splats = vb2check.kernel_splats(run.all_dmesg())
        self.assertEqual(len(splats), 1)
        where, first, text = splats[0]
        self.assertEqual(where, 'vivid0')
        self.assertTrue(first.startswith('WARNING: CPU: 0 PID: 77'))
        self.assertIn('end trace', text)
        self.assertNotIn('after the splat', text)

    def test_clean_log(self):
        run = vb2check.Run(os.path.join(FIX, 'run-ok'))
        self.assertEqual(vb2check.kernel_splats(run.all_dmesg()), [])

    def test_patterns(self):
        for line in ('BUG: KASAN: slab-use-after-free in vb2_core_qbuf+0x1/0x2',
                     'WARNING: possible circular locking dependency detected',
                     'kmemleak: 3 new suspected memory leaks (see /sys/kernel/debug/kmemleak)',
                     'unreferenced object 0xffff888003b2c000 (size 1024):',
                     'BUG: sleeping function called from invalid context at kernel/locking/mutex.c:283',
                     'INFO: task v4l2-ctl:99 blocked for more than 60 seconds.',
                     'DMAR: DRHD: handling fault status reg 2',
                     'DMAR: [DMA Write NO_PASID] Request device [00:02.0] fault addr 0x7000 '
                     '[fault reason 0x05] PTE Write access is not set'):
            self.assertEqual(len(vb2check.kernel_splats([('s', '[    1.0] ' + line)])), 1, line)
        for line in ('vivid-000: disconnect', 'DMAR: Intel(R) Virtualization Technology for '
                     'Directed I/O', 'DMAR: IOMMU enabled'):
            self.assertEqual(vb2check.kernel_splats([('s', '[    1.0] ' + line)]), [], line)

    def test_taint_without_a_splat_is_a_finding(self):
        run = make_run(['@@VB2 DMESG boot', '@@VB2 ENDDMESG boot', '@@VB2 TAINT boot 8192'] +
                       step('load', ['vivid-000: loaded'], 8192) +
                       step('fuzz', ['vivid-000: disconnect'], 8704))
        self.assertEqual(run.taints, [('boot', 8192), ('load', 8192), ('fuzz', 8704)])
        # 8192 (E, an unsigned module) is no finding; 512 (W) came with no WARNING.
        self.assertEqual(vb2check.silent_taints(run), [('fuzz', 'W (warning)')])
        tally = judge(run, kunit=False, expect={})
        self.assertEqual(tally.failed, 1, summary(tally))
        self.assertIn('during step fuzz: kernel tainted W (warning) with no splat',
                      summary(tally))

    def test_taint_is_judged_step_by_step(self):
        run = make_run(step('fuzz', [WARN], 512) + step('more', [], 544))
        # W came with its WARNING (a finding of its own, not counted twice); B (32) came
        # in a later step whose log shows nothing: a splat of another step explains nothing.
        self.assertEqual(vb2check.silent_taints(run), [('more', 'B (bad page)')])
        self.assertEqual(len(vb2check.kernel_splats(run.all_dmesg())), 1)

    def test_splat_read_with_the_next_log_explains_the_flags(self):
        # The log is read before the flags: a WARN printed in between is in the next log.
        run = make_run(step('fuzz', [], 512) + step('more', [WARN], 512))
        self.assertEqual(vb2check.silent_taints(run), [])

    def test_silent_taint_after_the_kunit_steps_expected_warnings(self):
        """The KUnit step's expected WARNs explain its W, and nothing after it."""
        run = make_run(step('suite', ['vb2-expect-warning: begin t1', WARN,
                                      '---[ end trace 0000000000000000 ]---',
                                      'vb2-expect-warning: end t1'], 512, kind='kunit') +
                       step('load', [], 512) + step('fuzz', ['vivid-000: disconnect'], 16928))
        self.assertEqual(vb2check.kernel_splats(run.all_dmesg()), [])
        # 16928: W (already there), and B (32) and L (16384) that fuzz's log does not explain.
        self.assertEqual(vb2check.silent_taints(run),
                         [('fuzz', 'B (bad page)'), ('fuzz', 'L (soft lockup)')])

    def test_expected_iommu_fault(self):
        fault = ['[    2.0] DMAR: DRHD: handling fault status reg 2',
                 '[    2.0] DMAR: [DMA Write NO_PASID] Request device [00:01.0] fault addr 0x1000 '
                 '[fault reason 0x02] Present bit in context entry is clear']
        begin = '[    1.0] vb2-expect-warning: begin edu-stray-dma'
        end = '[    3.0] vb2-expect-warning: end edu-stray-dma'
        expected = []
        self.assertEqual(vb2check.kernel_splats([('s', l) for l in [begin] + fault + [end]],
                                                expected=expected), [])
        self.assertEqual(len(expected), 2)
        # Outside the window each line is a finding, and the next line is not its body.
        found = vb2check.kernel_splats([('s', l) for l in fault + ['[    3.0] BUG: x']])
        self.assertEqual([f[1][:10] for f in found], ['DMAR: DRHD', 'DMAR: [DMA', 'BUG: x'])
        # A window whose fault never came fails.
        missing = vb2check.kernel_splats([('s', begin), ('s', end)])
        self.assertIn('expected warning missing', missing[0][1])

    def test_expected_warning_window(self):
        warn = ['[    2.0] WARNING: CPU: 1 PID: 9 at videobuf2-core.c:10 vb2_core_queue_init+0x1/0x2',
                '[    2.0] Modules linked in: videobuf2_kunit',
                '[    2.0] ---[ end trace 0000000000000000 ]---']
        begin = '[    1.0] vb2-expect-warning: begin t1'
        end = '[    3.0] vb2-expect-warning: end t1'
        ok = [('s', l) for l in [begin] + warn + [end]]
        self.assertEqual(vb2check.kernel_splats(ok), [])
        # The same WARN outside a window is a finding.
        self.assertEqual(len(vb2check.kernel_splats([('s', l) for l in warn])), 1)
        # A window without its WARN is a finding too.
        missing = vb2check.kernel_splats([('s', begin), ('s', end)])
        self.assertEqual(len(missing), 1)
        self.assertIn('expected warning missing', missing[0][1])
        # Worse than a WARN is never expected.
        bad = [('s', begin), ('s', '[    2.0] BUG: KASAN: slab-use-after-free in x+0x1/0x2'),
               ('s', end)]
        found = vb2check.kernel_splats(bad)
        self.assertTrue(any('KASAN' in f[1] for f in found))
        lockdep = [('s', begin), ('s', '[    2.0] WARNING: possible circular locking dependency detected'),
                   ('s', end)]
        self.assertTrue(any('circular' in f[1] for f in vb2check.kernel_splats(lockdep)))
        # A window left open is reported.
        self.assertEqual(len(vb2check.kernel_splats([('s', begin)] + [('s', l) for l in warn])), 1)

    def test_known_splat_of_another_subsystem(self):
        def splats_and_known(lines):
            known = []
            return vb2check.kernel_splats(lines, known=known), known

        def report(freer):
            return [('uvc', '[    5.0] ' + l) for l in [
                '==================================================================',
                'BUG: KASAN: slab-use-after-free in vhci_urb_dequeue+0x30b/0x45b [vhci_hcd]',
                'Read of size 8 at addr ffff88800485d900 by task vb2-uvcdev/1774',
                ' usb_poison_urb+0xf6/0x216 [usbcore]',
                ' vb2_core_streamoff+0xaa/0x153',
                'Freed by task 1700:',
                ' kfree+0x10/0x20',
                ' %s+0x1/0x2 [vhci_hcd]' % freer,
                '==================================================================',
                'BUG: KASAN: slab-use-after-free in vb2_core_dqbuf+0x1/0x2',
                'Freed by task 1:',
                ' pickup_urb_and_free_priv+0x1/0x2 [vhci_hcd]',
                '==================================================================']]
        splats, known = splats_and_known(report('pickup_urb_and_free_priv'))
        # Only the vhci report is known; the one after it, in videobuf2, is a finding.
        self.assertEqual([s[1] for s in splats],
                         ['BUG: KASAN: slab-use-after-free in vb2_core_dqbuf+0x1/0x2'])
        self.assertEqual(len(known), 1)
        self.assertIn('vhci_hcd', known[0][1])
        # Freed somewhere else: not the known bug, a finding.
        splats, known = splats_and_known(report('vb2_buffer_done'))
        self.assertIn('vhci_urb_dequeue', splats[0][1])
        self.assertEqual(known, [])
        # A splat another CPU prints inside the known report is still found.
        lines = report('pickup_urb_and_free_priv')
        lines.insert(4, ('uvc', '[    5.1] WARNING: CPU: 0 PID: 9 at videobuf2-core.c:1 x'))
        splats, known = splats_and_known(lines[:10])
        self.assertEqual(len(known), 1)
        self.assertEqual([s[1][:8] for s in splats], ['WARNING:'])
        # A report cut short (no closing line) is never set aside.
        splats, known = splats_and_known(report('pickup_urb_and_free_priv')[:8])
        self.assertEqual(len(splats), 1)
        self.assertEqual(known, [])


class ContractDoc(unittest.TestCase):
    PAGE = """
   * - R5
     - DQBUF
     - Deliberate difference: drops the lock. Case
       ``vb2_contract_dqbuf_without_wait_ops``.
   * - S1
     - buf_queue
     - As in 6.12. Case ``vb2_contract_streaming_in_buf_queue``.
"""

    def anchor(self, **results):
        return dict(('kunit|videobuf2-contract.' + k, v) for k, v in results.items())

    def test_consistent(self):
        anchor = self.anchor(vb2_contract_dqbuf_without_wait_ops='FAIL',
                             vb2_contract_streaming_in_buf_queue='PASS')
        self.assertEqual(vb2check.contract_doc_problems(anchor, self.PAGE), [])

    def test_undocumented_failure_and_false_claim(self):
        anchor = self.anchor(vb2_contract_dqbuf_without_wait_ops='PASS',
                             vb2_contract_streaming_in_buf_queue='FAIL')
        problems = vb2check.contract_doc_problems(anchor, self.PAGE)
        self.assertEqual(len(problems), 2)
        self.assertIn('streaming_in_buf_queue fails on upstream', problems[0])
        self.assertIn('dqbuf_without_wait_ops is called a deliberate difference', problems[1])

    def test_parametrised_case_and_empty_anchor(self):
        anchor = {'kunit|videobuf2-contract.vb2_contract_dqbuf_without_wait_ops.vmalloc': 'FAIL'}
        self.assertEqual(vb2check.contract_doc_problems(anchor, self.PAGE), [])
        self.assertEqual(len(vb2check.contract_doc_problems({}, self.PAGE)), 1)


class KnownLeaks(unittest.TestCase):
    VIDTV = ['unreferenced object 0xffff888000efcf90 (size 8):',
             '  comm "modprobe", pid 43, jiffies 4294893137',
             '  hex dump (first 8 bytes):',
             '    76 69 64 74 76 2e 30 00                          vidtv.0.',
             '  backtrace (crc 48e7383b):',
             '    dev_set_name+0x50/0x52',
             '    platform_device_add+0x92/0x180']
    OURS = ['unreferenced object 0xffff888000efd000 (size 64):',
            '  backtrace (crc 1):',
            '    vb2_core_reqbufs+0x1/0x2']

    def judge_leaks(self, report):
        run = make_run(step('leaks', ['kmemleak: %d new suspected memory leaks'
                                      % len(vb2check.kmemleak_objects(report))],
                            kind='kmemleak', output=report))
        return section(judge(run, kunit=False, expect={}), 'kernel log')

    def test_known_leak_does_not_fail_the_run(self):
        sec = self.judge_leaks(self.VIDTV)
        self.assertEqual(sec['failed'], 0)
        self.assertIn('known leak in leaks', sec['notes'][0])
        sec = self.judge_leaks(self.VIDTV + self.OURS)
        self.assertEqual(sec['failed'], 1)

    def test_only_known(self):
        objs = vb2check.kmemleak_objects(self.VIDTV)
        self.assertEqual(len(objs), 1)
        self.assertIn('i2c adapter', vb2check.known_leak(objs[0]))

    def test_unknown_is_not_forgiven(self):
        objs = vb2check.kmemleak_objects(self.VIDTV + self.OURS)
        self.assertEqual(len(objs), 2)
        self.assertIsNone(vb2check.known_leak(objs[1]))


class KUnit(unittest.TestCase):
    def test_cases_through_kunit_py(self):
        run = vb2check.Run(os.path.join(FIX, 'run-ok'))
        cases, _ = vb2check.kunit_cases(run.steps[2], vb2check.find_kunit_py())
        self.assertEqual(cases, [('vb2-fixture.first_case', 'PASS'),
                                 ('vb2-fixture.second_case', 'PASS'),
                                 ('vb2-fixture.skipped_case', 'SKIP')])

    def test_failed_case(self):
        run = vb2check.Run(os.path.join(FIX, 'run-bad'))
        cases, _ = vb2check.kunit_cases(run.steps[1], vb2check.find_kunit_py())
        self.assertEqual(dict(cases)['vb2-fixture.second_case'], 'FAIL')

    def test_failed_case_log_of_a_parameter(self):
        class Step:
            dmesg = ['[ 1.0] ' + l for l in [
                'KTAP version 1', '1..1', '    # Subtest: suite', '    1..2',
                '        # Subtest: case_a', '        ok 1 vmalloc',
                '        # case_a: EXPECTATION FAILED at a.c:1', '        not ok 2 dma-sg',
                '    not ok 1 case_a',
                '        # Subtest: case_b', '        # case_b: noise',
                '        # case_b: ASSERTION FAILED at b.c:2', '        # more',
                '        not ok 1 vmalloc', '        ok 2 dma-sg',
                '    not ok 2 case_b', 'not ok 1 suite']]
        self.assertEqual(vb2check.kunit_case_log(Step, 'suite.case_b.vmalloc'),
                         ['# case_b: ASSERTION FAILED at b.c:2', '# more'])
        self.assertEqual(vb2check.kunit_case_log(Step, 'suite.case_a.dma-sg'),
                         ['# case_a: EXPECTATION FAILED at a.c:1'])
        self.assertEqual(vb2check.kunit_case_log(Step, 'suite.case_c.vmalloc'), [])

    def test_failed_case_log(self):
        run = vb2check.Run(os.path.join(FIX, 'run-bad'))
        self.assertEqual(vb2check.kunit_case_log(run.steps[1], 'vb2-fixture.second_case'),
                         ['# second_case: EXPECTATION FAILED at kunit/x.c:10'])
        self.assertEqual(vb2check.kunit_case_log(run.steps[1], 'vb2-fixture.first_case'), [])


class DebugAids(unittest.TestCase):
    def test_records(self):
        run = vb2check.Run(os.path.join(FIX, 'run-kasan-ok'))
        self.assertEqual(run.debug[0], ('boot', {'debug_locks': '1', 'kmemleak': 'on',
                                                 'dma_debug': 'on'}))
        parts = dict((s.id, s.part) for s in run.steps)
        self.assertEqual(parts['videobuf2-kunit'], 'kunit')
        self.assertEqual(parts['uvc-gone-bulk'], 'uvc')
        self.assertEqual(parts['leaks'], 'leaks-final')
        # Without PART records a run is one plan.
        self.assertEqual(set(s.part for s in vb2check.Run(os.path.join(FIX, 'run-ok')).steps),
                         {'fixture-ok'})

    def test_lockdep_off_in_the_known_bugs_own_plan_passes(self):
        """make check's KASAN guest, uvc last: the known vhci_hcd report turns lockdep
        off for the rest of uvc and the final scan, and nothing else."""
        tally = judge('run-kasan-ok', expect=expectations(kunit='kunit.txt'))
        self.assertEqual(tally.failed, 0, summary(tally))
        notes = ' '.join(section(tally, 'debugging aids')['notes'])
        self.assertIn('spared: uvc-gone-bulk, dma-mappings-rmmod-vhci, rmmod-vhci, leaks', notes)

    def test_steps_run_with_lockdep_off_fail(self):
        """uvc before the races: the races run without lockdep; the rest of uvc and the
        final kmemleak scan are spared, as above."""
        tally = judge('run-kasan-bad', expect=expectations(kunit='kunit.txt'))
        failures = section(tally, 'debugging aids')['failures']
        self.assertIn('3 steps ran without lockdep: debug_locks turned off during step '
                      'uvc-stream-mmap', failures[0])
        self.assertTrue(failures[0].endswith(': race-fileio-vs-bufs-vivid-cap, '
                                             'race-dmabuf-cpu-access, stress'), failures[0])

    def test_disabled_kmemleak_and_dma_debug_fail(self):
        tally = judge('run-kasan-bad', expect=expectations(kunit='kunit.txt'))
        text = '\n'.join(section(tally, 'debugging aids')['failures'])
        self.assertIn('kmemleak turned itself off during step stress', text)
        self.assertIn('kmemleak: Kernel memory leak detector disabled', text)
        self.assertIn('DMA-API debugging turned itself off during step race-dmabuf-cpu-access',
                      text)
        self.assertIn('DMA-API: debugging out of memory - disabled', text)
        self.assertEqual(section(tally, 'debugging aids')['failed'], 3)
        # The final scan that could not scan fails too.
        self.assertIn('step leaks (kmemleak) the scan failed (exit 1)',
                      '\n'.join(section(tally, 'guest run')['failures']))

    def test_silent_taint_after_kunit(self):
        tally = judge('run-kasan-bad', expect=expectations(kunit='kunit.txt'))
        self.assertEqual(section(tally, 'kernel log')['failures'],
                         ['during step race-fileio-vs-bufs-vivid-cap: kernel tainted L (soft '
                          'lockup) with no splat in its log\n    the log buffer lost it: read '
                          'the console, or boot with a larger log_buf_len'])

    @staticmethod
    def _run(*steps, boot='1'):
        return make_run(['@@VB2 DEBUG boot debug_locks=%s kmemleak=absent dma_debug=absent'
                         % boot] + sum(steps, []))

    @staticmethod
    def _step(sid, locks, dmesg=(), kind='cmd'):
        return step(sid, dmesg, kind=kind,
                    debug='debug_locks=%s kmemleak=absent dma_debug=absent' % locks)

    def test_lockdep_off_without_a_splat_fails(self):
        run = self._run(self._step('a', 0), self._step('leaks', 0, kind='kmemleak'))
        failures, notes = vb2check.debug_aid_findings(run)
        # Off during a with nothing in its log: a finding, though only the final scan
        # ran after it.
        self.assertEqual(failures, ['lockdep (debug_locks) turned itself off during step a '
                                    'with no splat in its log'])

    def test_lockdep_off_after_a_finding_spares_nothing_but_the_final_scan(self):
        run = self._run(self._step('a', 0, ['BUG: KASAN: slab-use-after-free in '
                                            'vb2_core_qbuf+0x1/0x2']),
                        self._step('b', 0), self._step('leaks', 0, kind='kmemleak'))
        failures, _ = vb2check.debug_aid_findings(run)
        self.assertEqual(len(failures), 1)
        self.assertIn('1 steps ran without lockdep: debug_locks turned off during step a '
                      '(after a splat in its log (a finding of its own)): b', failures[0])

    def test_kernel_without_lockdep(self):
        run = self._run(self._step('a', 'absent'), boot='absent')
        self.assertEqual(vb2check.debug_aid_findings(run)[0], [])


class KUnitBaseline(unittest.TestCase):
    def test_expected_and_unexpected_skips_and_missing_cases(self):
        self.assertEqual(judge('run-ok').failed, 0)
        tally = judge('run-kasan-bad', expect=expectations(kunit='kunit.txt'))
        self.assertEqual(section(tally, 'KUnit')['failures'], [
            'vb2-fixture.second_case: SKIP (no media device), not an expected skip in the '
            'KUnit baseline',
            'vb2-fixture.skipped_case: in the KUnit baseline, did not run'])

    def test_missing_baseline_is_a_failed_item(self):
        tally = judge('run-ok', expect=expectations(kunit='no-such-kunit.txt'))
        failures = section(tally, 'KUnit')['failures']
        self.assertEqual(len(failures), 1)
        self.assertIn('no KUnit baseline (', failures[0])
        # A run without a KUnit step does not need one.
        tally = judge('run-flaky-up', expect=expectations(kunit='no-such-kunit.txt'))
        self.assertEqual(tally.failed, 0, summary(tally))

    def test_skip_needs_a_reason(self):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, 'kunit.txt')
            with open(path, 'w') as f:
                f.write('m\ts.a\tPASS\nm\ts.b\tSKIP\nm\ts.c\tFAIL\nm\ts.d\tSKIP\tno device\n')
            cases, problems = vb2check.read_kunit_baseline(path)
        self.assertEqual(cases, {'m': {'s.a': ('PASS', ''), 's.d': ('SKIP', 'no device')}})
        self.assertEqual([p for _, p in problems],
                         ['an expected SKIP must say why it is expected',
                          'not module, case and PASS or SKIP, separated by tabs'])

    def test_kunit_baseline_command(self):
        with tempfile.TemporaryDirectory() as d:
            out = os.path.join(d, 'kunit.txt')
            args = argparse.Namespace(run=[os.path.join(FIX, 'run-ok')], output=out, kunit_py=None)
            with contextlib.redirect_stdout(io.StringIO()):
                self.assertEqual(vb2check.cmd_kunit_baseline(args), 0)
            cases, problems = vb2check.read_kunit_baseline(out)
            self.assertEqual(problems, [])
            self.assertEqual(cases, {'videobuf2-kunit': {
                'vb2-fixture.first_case': ('PASS', ''), 'vb2-fixture.second_case': ('PASS', ''),
                'vb2-fixture.skipped_case': ('SKIP', 'not here')}})
            # A run with a failed case is no baseline.
            args.run = [os.path.join(FIX, 'run-bad')]
            with contextlib.redirect_stderr(io.StringIO()) as err:
                self.assertEqual(vb2check.cmd_kunit_baseline(args), 1)
            self.assertIn('vb2-fixture.second_case FAIL', err.getvalue())


    def test_kernel_flavor_qualifies_the_module(self):
        # make check's guests differ in options, so in cases: each has its own list,
        # and a guest's module missing from the baseline fails.
        with tempfile.TemporaryDirectory() as d:
            guest = os.path.join(d, 'guest-kasan')
            os.symlink(os.path.join(FIX, 'run-ok'), guest)
            out = os.path.join(d, 'kunit.txt')
            args = argparse.Namespace(run=[guest], output=out, kunit_py=None)
            with contextlib.redirect_stdout(io.StringIO()):
                self.assertEqual(vb2check.cmd_kunit_baseline(args), 0)
            cases, _ = vb2check.read_kunit_baseline(out)
            self.assertEqual(list(cases), ['videobuf2-kunit/kasan'])
            run = vb2check.Run(guest)
            self.assertEqual(run.flavor, 'kasan')
            tally = judge(run, expect=expectations(kunit='kunit.txt'))
            self.assertIn('module videobuf2-kunit/kasan is not in the KUnit baseline',
                          summary(tally))


class GuestKtap(unittest.TestCase):
    """A test program's KTAP (kselftest.h) in a run step: one result per case."""
    KTAP = ['vb2-misuse: device vim2m:out /dev/video0', 'TAP version 13', '1..4',
            'ok 1 vim2m:out/reqbufs-bad-type',
            '# expect=EINVAL got=0', '# doc: vidioc-reqbufs.rst',
            'not ok 2 vim2m:out/qbuf-bad-index #  got 0',
            'ok 3 vim2m:out/req-queue-empty # SKIP no media device',
            'ok 4 vim2m:out/streamon-twice',
            '# Totals: pass:2 fail:1 xfail:0 xpass:0 skip:1 error:0']

    @staticmethod
    def _run(output, rc=1):
        return make_run(step('misuse-vim2m', output=output, rc=rc))

    def _judge(self, output, rc=1, anchor=None):
        expect = expectations()
        expect.anchor = anchor or {}
        return judge(self._run(output, rc), expect=expect)

    def test_cases_and_diagnostics(self):
        cases = vb2check.guest_cases(self._run(self.KTAP).steps[0], vb2check.find_kunit_py())
        self.assertEqual([(n, s) for n, s, _ in cases], [
            ('vim2m:out/reqbufs-bad-type', 'PASS'), ('vim2m:out/qbuf-bad-index', 'FAIL'),
            ('vim2m:out/req-queue-empty', 'SKIP'), ('vim2m:out/streamon-twice', 'PASS')])
        self.assertEqual(cases[1][2], ['# expect=EINVAL got=0', '# doc: vidioc-reqbufs.rst'])

    def test_failed_case_fails_once(self):
        tally = self._judge(self.KTAP)
        sec = section(tally, "guest programs' KTAP cases")
        self.assertEqual((sec['passed'], sec['failed']), (3, 1))
        self.assertEqual(sec['failures'], [
            'misuse-vim2m vim2m:out/qbuf-bad-index: FAIL\n    # expect=EINVAL got=0\n'
            '    # doc: vidioc-reqbufs.rst'])
        # The exit status 1 that goes with it is not a second failure...
        self.assertEqual(tally.failed, 1, summary(tally))
        # ...but without a failed case it is one.
        passing = [l.replace('not ok 2', 'ok 2') for l in self.KTAP]
        tally = self._judge(passing)
        self.assertEqual(tally.failed, 1)
        self.assertIn('step misuse-vim2m (cmd) exited with 1', summary(tally))
        self.assertEqual(self._judge(passing, rc=0).failed, 0)

    def test_program_that_stopped(self):
        tally = self._judge(self.KTAP[:5] + ['# q/c HANG', 'Bail out!'], rc=1)
        text = summary(tally)
        self.assertIn('misuse-vim2m case 2 (no result: the program stopped): ERROR\n'
                      '    # expect=EINVAL got=0\n    # q/c HANG\n    Bail out!', text)
        tally = self._judge(self.KTAP[:5] + ['Segmentation fault'], rc=139)
        text = summary(tally)
        self.assertIn('step misuse-vim2m (cmd) exited with 139', text)

    def test_no_ktap_no_section(self):
        tally = self._judge(['hello'], rc=0)
        self.assertEqual([s for s in tally.sections if 'KTAP' in s['title']], [])

    def test_two_runs_in_one_step(self):
        names = [n for n, _, _ in vb2check.guest_cases(self._run(self.KTAP * 2).steps[0],
                                                       vb2check.find_kunit_py())]
        self.assertEqual(len(names), 8)
        self.assertEqual(names[4], 'vim2m:out/reqbufs-bad-type #2')

    def test_against_upstream(self):
        key = 'ktap|misuse-vim2m|vim2m:out/'
        passing = [l.replace('not ok 2', 'ok 2') for l in self.KTAP]
        anchor = {key + 'reqbufs-bad-type': 'PASS', key + 'qbuf-bad-index': 'FAIL',
                  key + 'req-queue-empty': 'PASS', key + 'streamon-twice': 'PASS',
                  key + 'gone': 'PASS'}
        sec = section(self._judge(passing, rc=0, anchor=anchor),
                      "guest programs' KTAP cases")
        self.assertEqual(sec['failures'], [
            'misuse-vim2m vim2m:out/req-queue-empty: SKIP, upstream PASS',
            'misuse-vim2m vim2m:out/gone: did not run (upstream PASS)'])
        self.assertIn('1 better than upstream', sec['notes'][0])

    def test_anchor_keys(self):
        out = vb2check.anchor_results(self._run(self.KTAP), vb2check.find_kunit_py())
        self.assertEqual(out[0], ('run|misuse-vim2m', 'FAIL rc 1'))
        self.assertEqual(out[2], ('ktap|misuse-vim2m|vim2m:out/qbuf-bad-index', 'FAIL'))
        self.assertEqual(vb2check.result_group(out[2][0]), 'run|misuse-vim2m')


class Summary(unittest.TestCase):
    def test_good_run_passes(self):
        tally = judge('run-ok')
        text = summary(tally)
        self.assertEqual(tally.failed, 0, text)
        self.assertTrue(text.rstrip().endswith('%d passed, 0 failed' % tally.passed))

    def test_bad_run_fails_for_each_reason(self):
        tally = judge('run-bad')
        text = summary(tally)
        self.assertIn('did not finish its plan', text)
        self.assertIn('step rmmod (cmd) exited with 1', text)
        self.assertIn('VIDIOC_QUERYCAP: ours FAIL, upstream OK', text)
        self.assertIn('during step vivid0: WARNING', text)
        self.assertIn('kmemleak: 2 new suspected memory leaks', text)
        self.assertIn('vb2-fixture.second_case: FAIL\n    # second_case: EXPECTATION FAILED', text)
        self.assertTrue(text.rstrip().endswith('%d passed, %d failed' % (tally.passed, tally.failed)))
        self.assertGreaterEqual(tally.failed, 5)


if __name__ == '__main__':
    unittest.main()
