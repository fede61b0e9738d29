# SPDX-License-Identifier: GPL-2.0
#
# The user's entry points. Kbuild, not this file, is what a kernel build reads.
# Every target installs what it needs (Debian 12) and keeps kernel trees, builds and ccache
# in $(VB2_CACHE) (default ~/.cache/videobuf2). See README.md.

SHELL := /bin/bash
export VB2_IMPL VB2_FLAVOR VB2_CACHE VB2_OUT

.PHONY: help run check check-kasan baseline bench profile stress coverage install-tree kernel docs selftest clean

help:
	@sed -n 's/^## //p' $(firstword $(MAKEFILE_LIST))
	@echo "targets: run check check-kasan baseline bench profile stress coverage install-tree KDIR=... kernel docs selftest drop-in-check clean"

## make run          build, boot, stream 300 frames from vivid with MMAP; last frame in out/run/
run:
	tools/host/run.sh

## make check        static checks, build, KUnit and v4l2-compliance vs the upstream baseline
check:
	tools/host/check.sh

## make check-kasan  only the KASAN kernel of make check
check-kasan:
	VB2_CHECK_FLAVORS=kasan tools/host/check.sh

## make baseline     run compliance on upstream videobuf2 and write baseline/compliance.txt
baseline:
	tools/host/baseline.sh

## make stress      10^6 fuzz operations under KASAN, ours then upstream, side by side
stress:
	tools/host/stress.sh

## make bench        ours vs upstream's videobuf2, instruction counts (QEMU -icount)
bench:
	tools/host/bench.sh

## make coverage     the lines of videobuf2 make check's tests reach, per group: out/coverage/
coverage:
	tools/host/coverage.sh

## make profile      where one buffer ioctl spends its instructions, ours vs upstream (VB2_PROFILE_OP)
profile:
	tools/host/profile.sh

## make install-tree KDIR=<linux-6.12>   make that tree use this videobuf2
install-tree:
	@test -n "$(KDIR)" || { echo "usage: make install-tree KDIR=<a Linux 6.12 tree>"; exit 2; }
	tools/host/install-tree.sh "$(KDIR)"

## make kernel       only build the guest kernel (VB2_IMPL=ours|upstream)
kernel:
	tools/host/setup-host.sh && tools/host/build-kernel.sh

## make docs         build Documentation/ as HTML into out/docs/html (warnings are errors)
docs:
	tools/host/docs.sh

## make selftest     the harness's parser tests
selftest:
	tools/host/setup-host.sh && tools/host/kernel-tree.sh >/dev/null && python3 tools/report/vb2check.py selftest

clean:
	rm -rf out

## make drop-in-check  compile all 683 in-tree users of videobuf2 against ours (allmodconfig)
.PHONY: drop-in-check
drop-in-check:
	tools/host/drop-in-check.sh
