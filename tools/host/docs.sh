#!/bin/bash
# make docs: build Documentation/ as HTML into $VB2_OUT/docs with the kernel's kerneldoc
# Sphinx extension, warnings as errors. Exits non-zero on any warning.
. "$(dirname "$0")/lib.sh"
"$VB2_ROOT/tools/host/setup-host.sh"
"$VB2_ROOT/tools/host/kernel-tree.sh" > /dev/null
out=$VB2_OUT/docs
rm -rf "$out"; mkdir -p "$out"
VB2_KSRC=$KSRC_PRISTINE /usr/bin/sphinx-build -q -W --keep-going -b html \
	-d "$out/doctrees" "$VB2_ROOT/Documentation" "$out/html"
