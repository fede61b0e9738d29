# SPDX-License-Identifier: GPL-2.0
"""Tests of the result parsers in vb2check.py, on the runs under tools/fixtures/."""

import io
import tempfile
import os
import unittest

import vb2check

HERE = os.path.dirname(os.path.abspath(__file__))
FIX = os.path.join(HERE, 'fixtures')


def judge(run_name, kunit=True):
    tally = vb2check.Tally()
    baseline = vb2check.read_baseline(os.path.join(FIX, 'baseline.txt'))
    kunit_py = vb2check.find_kunit_py() if kunit else None
    vb2check.judge_run(tally, vb2check.Run(os.path.join(FIX, run_name)), baseline, kunit_py)
    return tally


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


class Compliance(unittest.TestCase):
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

    def test_compare_with_baseline(self):
        baseline = vb2check.read_baseline(os.path.join(FIX, 'baseline.txt'))
        run = vb2check.Run(os.path.join(FIX, 'run-bad'))
        tests = vb2check.compliance_tests(run.steps[0])
        verdicts = {k: s for s, k, _, _, _ in vb2check.compare_compliance(tests, baseline, {'vivid0'})}
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
        verdicts = [s for s, _, _, _, _ in vb2check.compare_compliance(tests, baseline, {'vivid0'})]
        self.assertEqual(verdicts.count('known'), 1)
        self.assertEqual(verdicts.count('flaky'), 1)
        self.assertEqual(verdicts.count('fail'), 0)


    def test_flaky_list_overrides_the_baseline(self):
        with tempfile.TemporaryDirectory() as d:
            with open(os.path.join(FIX, 'baseline.txt')) as f, \
                    open(os.path.join(d, 'baseline.txt'), 'w') as g:
                g.write(f.read())
            with open(os.path.join(d, 'flaky.txt'), 'w') as g:
                g.write('# comment\n*|/dev/video0|Required ioctls|VIDIOC_QUERYCAP\t3 of 150 runs\n')
            baseline = vb2check.read_baseline(os.path.join(d, 'baseline.txt'))
            self.assertEqual(baseline['vivid0|/dev/video0|Required ioctls|VIDIOC_QUERYCAP'], 'FLAKY')
            run = vb2check.Run(os.path.join(FIX, 'run-bad'))
            tests = vb2check.compliance_tests(run.steps[0])
            verdicts = {k: s for s, k, _, _, _ in
                        vb2check.compare_compliance(tests, baseline, {'vivid0'})}
            self.assertEqual(verdicts['vivid0|/dev/video0|Required ioctls|VIDIOC_QUERYCAP'], 'flaky')
            # Only what the pattern names: the other regressions stay failures.
            self.assertEqual(
                verdicts['vivid0|/dev/video0|Control ioctls (Input 1)|VIDIOC_G/S_JPEGCOMP'], 'fail')
            # An entry must say what was measured.
            with open(os.path.join(d, 'flaky.txt'), 'w') as g:
                g.write('vivid0|*\t \n')
            self.assertRaises(ValueError, vb2check.read_baseline, os.path.join(d, 'baseline.txt'))


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
                     'INFO: task v4l2-ctl:99 blocked for more than 60 seconds.'):
            self.assertEqual(len(vb2check.kernel_splats([('s', '[    1.0] ' + line)])), 1, line)
        self.assertEqual(vb2check.kernel_splats([('s', '[    1.0] vivid-000: disconnect')]), [])

    @staticmethod
    def _taint_run(d, records):
        """A run of two steps; records: the lines after the PLAN record."""
        with open(os.path.join(d, 'results.log'), 'w') as f:
            f.write('@@VB2 PLAN taint\n' + '\n'.join(records) + '\n@@VB2 DONE\n')
        return vb2check.Run(d)

    def test_taint_without_a_splat_is_a_finding(self):
        with tempfile.TemporaryDirectory() as d:
            run = self._taint_run(d, [
                '@@VB2 DMESG boot', '@@VB2 ENDDMESG boot', '@@VB2 TAINT boot 8192',
                '@@VB2 STEP load cmd -', '@@VB2 RC load 0 1.0',
                '@@VB2 DMESG load', '[    1.0] vivid-000: loaded', '@@VB2 ENDDMESG load',
                '@@VB2 TAINT load 8192',
                '@@VB2 STEP fuzz cmd -', '@@VB2 RC fuzz 0 9.0',
                '@@VB2 DMESG fuzz', '[    9.0] vivid-000: disconnect', '@@VB2 ENDDMESG fuzz',
                '@@VB2 TAINT fuzz 8704'])
            self.assertEqual(run.taints, [('boot', 8192), ('load', 8192), ('fuzz', 8704)])
            # 8192 (E, an unsigned module) is no finding; 512 (W) came with no WARNING.
            self.assertEqual(vb2check.silent_taints(run), [('fuzz', 'W (warning)')])
            tally = vb2check.Tally()
            vb2check.judge_run(tally, run, {}, None)
            out = io.StringIO()
            vb2check.print_summary(tally, out)
            self.assertEqual(tally.failed, 1, out.getvalue())
            self.assertIn('during step fuzz: kernel tainted W (warning) with no splat',
                          out.getvalue())

    def test_taint_with_its_splat_is_not_counted_twice(self):
        with tempfile.TemporaryDirectory() as d:
            run = self._taint_run(d, [
                '@@VB2 STEP fuzz cmd -', '@@VB2 RC fuzz 0 9.0',
                '@@VB2 DMESG fuzz',
                '[    9.0] WARNING: CPU: 1 PID: 9 at videobuf2-core.c:10 vb2_foo+0x1/0x2',
                '@@VB2 ENDDMESG fuzz', '@@VB2 TAINT fuzz 512',
                '@@VB2 STEP more cmd -', '@@VB2 RC more 0 9.0',
                '@@VB2 DMESG more', '@@VB2 ENDDMESG more', '@@VB2 TAINT more 544'])
            # W came with its WARNING; B (32) came later, but after a splat of the run,
            # which fails the run anyway.
            self.assertEqual(vb2check.silent_taints(run), [])
            self.assertEqual(len(vb2check.kernel_splats(run.all_dmesg())), 1)

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
        known = []
        splats = vb2check.kernel_splats(report('pickup_urb_and_free_priv'), known=known)
        # Only the vhci report is known; the one after it, in videobuf2, is a finding.
        self.assertEqual([s[1] for s in splats],
                         ['BUG: KASAN: slab-use-after-free in vb2_core_dqbuf+0x1/0x2'])
        self.assertEqual(len(known), 1)
        self.assertIn('vhci_hcd', known[0][1])
        known = []
        # Freed somewhere else: not the known bug, a finding.
        splats = vb2check.kernel_splats(report('vb2_buffer_done'), known=known)
        self.assertIn('vhci_urb_dequeue', splats[0][1])
        self.assertEqual(known, [])
        # A splat another CPU prints inside the known report is still found.
        lines = report('pickup_urb_and_free_priv')
        lines.insert(4, ('uvc', '[    5.1] WARNING: CPU: 0 PID: 9 at videobuf2-core.c:1 x'))
        known = []
        splats = vb2check.kernel_splats(lines[:10], known=known)
        self.assertEqual(len(known), 1)
        self.assertEqual([s[1][:8] for s in splats], ['WARNING:'])
        known = []
        # A report cut short (no closing line) is never set aside.
        splats = vb2check.kernel_splats(report('pickup_urb_and_free_priv')[:8], known=known)
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
        with tempfile.TemporaryDirectory() as tmp:
            with open(os.path.join(tmp, 'results.log'), 'w') as f:
                f.write('\n'.join(['@@VB2 PLAN leaks', '@@VB2 STEP leaks kmemleak -'] + report +
                                  ['@@VB2 RC leaks 0 1.0', '@@VB2 DMESG leaks',
                                   '[   12.7] kmemleak: %d new suspected memory leaks' %
                                   len(vb2check.kmemleak_objects(report)),
                                   '@@VB2 ENDDMESG leaks', '@@VB2 DONE']) + '\n')
            tally = vb2check.Tally()
            vb2check.judge_run(tally, vb2check.Run(tmp), {}, None)
            return [sec for sec in tally.sections if sec['title'].startswith('kernel log')][0]

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


class Summary(unittest.TestCase):
    def test_good_run_passes(self):
        tally = judge('run-ok')
        out = io.StringIO()
        vb2check.print_summary(tally, out)
        self.assertEqual(tally.failed, 0, out.getvalue())
        self.assertTrue(out.getvalue().rstrip().endswith('%d passed, 0 failed' % tally.passed))

    def test_bad_run_fails_for_each_reason(self):
        tally = judge('run-bad')
        out = io.StringIO()
        vb2check.print_summary(tally, out)
        text = out.getvalue()
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
