# SPDX-License-Identifier: GPL-2.0
#
# Sphinx configuration for this repository's Documentation/. The kernel-doc
# directives need a Linux 6.12 tree for the kerneldoc extension and the
# kernel-doc script: set VB2_KSRC to it ("make docs" does). File names in the
# directives are relative to the root of this repository.

import os
import sys

_ksrc = os.environ.get('VB2_KSRC')
if not _ksrc:
    sys.exit('VB2_KSRC must name a Linux 6.12 tree (make docs sets it)')

sys.path.insert(0, os.path.join(_ksrc, 'Documentation', 'sphinx'))

project = 'videobuf2'
master_doc = 'index'
extensions = ['kerneldoc']
kerneldoc_bin = os.path.join(_ksrc, 'scripts', 'kernel-doc')
kerneldoc_srctree = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
primary_domain = 'c'
highlight_language = 'none'
# Kernel annotations that may appear in the prototypes kernel-doc emits.
c_id_attributes = ['__user', '__iomem', '__must_check', '__init', '__exit',
                   '__always_inline', 'noinline', '__rcu']
exclude_patterns = ['_build']
