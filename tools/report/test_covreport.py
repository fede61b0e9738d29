# SPDX-License-Identifier: GPL-2.0
"""Tests of covreport.py (make coverage's report)."""

import base64
import contextlib
import io
import json
import os
import sys
import tarfile
import tempfile
import unittest
from unittest import mock

import covreport

# Two records of one header (an inline function built into two objects) and a source
# file; branch "-": its block never ran.
KUNIT = """TN:
SF:/r/videobuf2-core.c
FN:10,vb2_core_qbuf
FN:20,vb2_core_dqbuf
FNDA:3,vb2_core_qbuf
FNDA:0,vb2_core_dqbuf
BRDA:11,0,0,2
BRDA:11,0,1,0
BRDA:21,0,0,-
BRDA:21,0,1,-
DA:10,3
DA:11,3
DA:12,0
DA:20,0
DA:21,0
end_of_record
SF:/r/include/media/videobuf2-core.h
FN:5,vb2_is_busy
FNDA:0,vb2_is_busy
DA:5,0
end_of_record
SF:/r/include/media/videobuf2-core.h
FN:5,vb2_is_busy
FNDA:2,vb2_is_busy
DA:5,2
end_of_record
"""
USERS = """SF:/r/videobuf2-core.c
FN:10,vb2_core_qbuf
FN:20,vb2_core_dqbuf
FNDA:1,vb2_core_qbuf
FNDA:1,vb2_core_dqbuf
BRDA:11,0,0,1
BRDA:11,0,1,0
BRDA:21,0,0,1
BRDA:21,0,1,0
DA:10,1
DA:11,1
DA:12,0
DA:20,1
DA:21,1
end_of_record
"""


def run(*argv):
    out = io.StringIO()
    with mock.patch.object(sys, 'argv', ['covreport.py'] + list(argv)), \
            contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        rc = covreport.main()
    return rc, out.getvalue()


class Extract(unittest.TestCase):
    def test_dumps(self):
        with tempfile.TemporaryDirectory() as tmp:
            buf = io.BytesIO()
            with tarfile.open(fileobj=buf, mode='w:gz') as t:
                data = b'\x00gcda'
                info = tarfile.TarInfo('./videobuf2-core.gcda')
                info.size = len(data)
                t.addfile(info, io.BytesIO(data))
            b64 = base64.encodebytes(buf.getvalue()).decode()
            log = os.path.join(tmp, 'results.log')
            with open(log, 'w', newline='') as f:
                f.write('@@VB2 STEP gcov-kunit cmd -\r\n@@GCOV-BEGIN kunit\r\n')
                f.write(b64.replace('\n', '\r\n'))
                f.write('@@GCOV-END kunit\r\n@@VB2 RC gcov-kunit 0 0.1\r\n')
            rc, out = run('extract', '--into', os.path.join(tmp, 'd'), log)
            self.assertEqual((rc, out), (0, 'kunit\n'))
            with open(os.path.join(tmp, 'd', 'kunit', 'videobuf2-core.gcda'), 'rb') as f:
                self.assertEqual(f.read(), b'\x00gcda')
            # A dump the guest did not finish is an error, not data.
            with open(log, 'a') as f:
                f.write('@@GCOV-BEGIN misuse\n' + b64)
            rc, out = run('extract', '--into', os.path.join(tmp, 'e'), log)
            self.assertEqual((rc, out), (1, 'kunit\n'))


class Report(unittest.TestCase):
    def test_tables(self):
        with tempfile.TemporaryDirectory() as tmp:
            paths = {}
            for name, text in (('kunit', KUNIT), ('users', USERS)):
                paths[name] = os.path.join(tmp, name + '.info')
                with open(paths[name], 'w') as f:
                    f.write(text)
            total = os.path.join(tmp, 'total.info')
            with open(total, 'w') as f:
                f.write(KUNIT + USERS)
            js = os.path.join(tmp, 'c.json')
            unr = os.path.join(tmp, 'u.txt')
            rc, out = run('report', '--total', total, '--group', 'kunit=' + paths['kunit'],
                          '--group', 'users=' + paths['users'], '--root', '/r',
                          '--json', js, '--unreached', unr)
            self.assertEqual(rc, 0)
            with open(js) as f:
                j = json.load(f)
            core = j['files']['videobuf2-core.c']
            self.assertEqual(core['lines'], [4, 5])
            self.assertEqual(core['functions'], [2, 2])
            self.assertEqual(core['branches'], [2, 4])
            self.assertEqual(core['goal'], 'below: lines, branches')
            # The header's two records are one file: its function ran.
            self.assertEqual(j['files']['include/media/videobuf2-core.h']['functions'], [1, 1])
            self.assertEqual(j['groups']['kunit']['lines'], [3, 6])
            self.assertEqual(j['groups']['kunit']['only_lines'], 1)
            self.assertEqual(j['groups']['users']['only_lines'], 2)
            self.assertEqual(j['total']['lines'], [5, 6])
            with open(unr) as f:
                self.assertEqual(f.read(), '')
            self.assertIn('videobuf2-core.c', out)
            self.assertIn('Functions no test reaches: 0', out)
            # KUnit alone misses vb2_core_dqbuf.
            rc, out = run('report', '--total', paths['kunit'], '--root', '/r',
                          '--unreached', unr)
            with open(unr) as f:
                self.assertEqual(f.read(), 'videobuf2-core.c:20 vb2_core_dqbuf\n')

    def test_branch_kinds(self):
        # Each line of SOURCE holds one branch no test took (line 6 one that it did).
        source = ('int f(int a)\n'                        # 1: entry
                  '{\n\tif (WARN_ON(!a))\n'              # 3: guard
                  '\t\treturn 1;\n'
                  '\tlockdep_assert_held(&l);\n'          # 5: assert
                  '\tif (a > 2)\n'                        # 6: taken both ways
                  '\tvb2_dbg(q, 1, "x\\n");\n'           # 7: debug
                  '\t__set_bit(a, map);\n'                # 8: macro
                  '\tif (!p)\n'                           # 9: test
                  '\t\treturn -ENOMEM;\n'
                  '\tdma_resv_assert_held(r);\n}\n')        # 11: assert
        with tempfile.TemporaryDirectory() as tmp:
            with open(os.path.join(tmp, 'videobuf2-x.c'), 'w') as f:
                f.write(source)
            info = os.path.join(tmp, 't.info')
            with open(info, 'w') as f:
                f.write('SF:%s/videobuf2-x.c\nFN:1,f\nFNDA:1,f\n' % tmp +
                        ''.join('BRDA:%d,0,0,%s\n' % (ln, '1' if ln == 6 else '0')
                                for ln in (1, 3, 5, 6, 7, 8, 9, 11)) +
                        'BRDA:6,0,1,1\nDA:1,1\nend_of_record\n')
            br, js = os.path.join(tmp, 'b.txt'), os.path.join(tmp, 'c.json')
            rc, out = run('report', '--total', info, '--root', tmp, '--branches', br,
                          '--json', js)
            self.assertEqual(rc, 0)
            with open(br) as f:
                kinds = [(ln.split()[0], ln.split()[2]) for ln in f]
            self.assertEqual(kinds, [('videobuf2-x.c:1', 'entry'), ('videobuf2-x.c:3', 'guard'),
                                     ('videobuf2-x.c:5', 'assert'), ('videobuf2-x.c:7', 'debug'),
                                     ('videobuf2-x.c:8', 'macro'), ('videobuf2-x.c:9', 'test'),
                                     ('videobuf2-x.c:11', 'assert')])
            with open(js) as f:
                self.assertEqual(json.load(f)['branch_kinds']['videobuf2-x.c'],
                                 {'guard': 1, 'assert': 2, 'debug': 1, 'macro': 1,
                                  'entry': 1, 'test': 1})
            self.assertIn('videobuf2-x.c', out.split('Branches no test takes')[1])


if __name__ == '__main__':
    unittest.main()
