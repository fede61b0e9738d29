# SPDX-License-Identifier: GPL-2.0
"""Tests of benchreport.py (make bench's report), on the runs in tools/report/fixtures/bench-*."""

import contextlib
import io
import json
import os
import sys
import tempfile
import unittest
from unittest import mock

import benchreport

HERE = os.path.dirname(os.path.abspath(__file__))
FIX = os.path.join(HERE, 'fixtures')


def report(*args):
    """(exit status, printed text, json) of benchreport.py with ARGS."""
    with tempfile.TemporaryDirectory() as tmp:
        js = os.path.join(tmp, 'bench.json')
        out = io.StringIO()
        argv = ['benchreport.py', '--run=ours:' + os.path.join(FIX, 'bench-ours'),
                '--run=upstream:' + os.path.join(FIX, 'bench-upstream'), '--json', js]
        with mock.patch.object(sys, 'argv', argv + list(args)), \
                contextlib.redirect_stdout(out):
            rc = benchreport.main()
        with open(js) as f:
            return rc, out.getvalue(), json.load(f)


def ratio(table, row, measure):
    return [r['ratio'] for r in table['rows'] if r['row'] == row and r['measure'] == measure][0]


class Limits(unittest.TestCase):
    def test_rows_at_both_buffer_limits(self):
        rc, _, table = report()
        self.assertEqual(rc, 0)
        hot = 'group=hot op=poll@%s alloc=vmalloc mem=MMAP planes=1'
        self.assertAlmostEqual(ratio(table, hot % 32768, 'ns'), 1433 / 17342)
        self.assertAlmostEqual(ratio(table, hot % 32, 'ns'), 1433 / 1500)
        alloc = 'group=alloc op=CREATE_BUFS@%s alloc=vmalloc n=32'
        self.assertAlmostEqual(ratio(table, alloc % 32768, 'ns'), 0.1)
        self.assertAlmostEqual(ratio(table, alloc % 32, 'ns'), 1.0)
        read = 'group=read op=read@%s alloc=vmalloc read_size=614400'
        self.assertAlmostEqual(ratio(table, read % 32768, 'bytes_per_s'), 5.58 / 7.86)
        self.assertAlmostEqual(ratio(table, read % 32, 'bytes_per_s'), 1.0)
        # A median line is not a row of its own; the limit is in the row's name only.
        self.assertFalse([r for r in table['rows'] if 'median' in r['row']])


class OtherGuests(unittest.TestCase):
    """ours@iommu: the rows of the IOMMU guest join those of the same kernel's run."""
    ROW = ('group=iommu op=QBUF+DQBUF alloc=%s mem=DMABUF planes=1 pattern=%s n=4 '
           'frame=640x480 domain=DMA-FQ')

    def test_rows_join_their_kernel(self):
        rc, text, table = report('--run=ours@iommu:' + os.path.join(FIX, 'bench-ours-iommu'),
                                 '--run=upstream@iommu:' +
                                 os.path.join(FIX, 'bench-upstream-iommu'))
        self.assertEqual(rc, 0)
        self.assertAlmostEqual(ratio(table, self.ROW % ('dma-contig', 'same'), 'ns'), 0.9)
        self.assertAlmostEqual(ratio(table, self.ROW % ('dma-sg', 'rotate'), 'ns'), 1.2)
        # Their own goal, after the main guest's rows; not a repeat of the main run.
        self.assertIn(self.ROW % ('dma-sg', 'rotate') + ' ns', ' '.join(text.split()))
        self.assertEqual([r['goal'] for r in table['rows'] if 'group=iommu' in r['row']],
                         ['<= 1.0', '<= 1.0'])
        self.assertEqual(table['rows'][-1]['row'], self.ROW % ('dma-sg', 'rotate'))
        self.assertNotIn('repeatability', text)
        self.assertIn(('group=floor op=ENOTTY', 'ns'),
                      [(r['row'], r['measure']) for r in table['rows']])

    def test_a_guest_without_rows_still_reports(self):
        rc, _, table = report('--run=ours@iommu:' + os.path.join(FIX, 'bench-empty'))
        self.assertEqual(rc, 1)
        self.assertTrue(table['rows'])
        self.assertFalse([r for r in table['rows'] if 'group=iommu' in r['row']])


class Config(unittest.TestCase):
    def test_both_kernels(self):
        _, text, table = report('--config=ours:' + os.path.join(FIX, 'bench-config-ours'),
                                '--config=upstream:' + os.path.join(FIX, 'bench-config-upstream'))
        lines = text.splitlines()
        self.assertTrue(lines[0].startswith('config (ours): HZ=250; not set: PROVE_LOCKING'),
                        lines[0])
        self.assertEqual(lines[1], 'config (upstream): as ours but for 1 option '
                         '(ours/upstream, - not set): VIDEOBUF2_DEBUGFS y/-')
        self.assertEqual(table['config'], lines[:2])

    def test_the_same_options(self):
        cfg = os.path.join(FIX, 'bench-config-upstream')
        _, text, _ = report('--config=ours:' + cfg, '--config=upstream:' + cfg)
        self.assertEqual(text.splitlines()[1], 'config (upstream): the same options as ours')

    def test_file_without_label_is_ours_and_a_missing_one_is_unknown(self):
        _, text, _ = report('--config=' + os.path.join(FIX, 'bench-config-ours'),
                            '--config=upstream:/nonexistent/.config')
        lines = text.splitlines()
        self.assertTrue(lines[0].startswith('config (ours): HZ=250'), lines[0])
        self.assertEqual(lines[1], 'config (upstream): unknown (no /nonexistent/.config)')

    def test_no_config(self):
        _, text, _ = report()
        self.assertEqual(text.splitlines()[0], 'config: unknown')


if __name__ == '__main__':
    unittest.main()
