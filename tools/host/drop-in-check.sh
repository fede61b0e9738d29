#!/bin/bash
# make drop-in-check: compile every .c file of Linux 6.12 that includes a videobuf2 header
# (../shared/reference/vb2-users-6.12.txt, 683 files) against our videobuf2, on x86_64
# allmodconfig + COMPILE_TEST, and against upstream's for comparison. Reports files that
# do not compile with ours, and warnings in those files that upstream does not also give.
#
# Long: two allmodconfig preparations and ~700 objects each (ccache makes reruns quick).
. "$(dirname "$0")/lib.sh"
"$VB2_ROOT/tools/host/setup-host.sh"
list=${VB2_USERS_LIST:-$VB2_ROOT/../shared/reference/vb2-users-6.12.txt}
[ -f "$list" ] || list=$VB2_ROOT/baseline/vb2-users-6.12.txt
[ -f "$list" ] || die "no list of videobuf2 users ($list)"
mapfile -t files < <(grep -v '^#' "$list" | grep '\.c$')
objs=("${files[@]/%.c/.o}")
out=$VB2_OUT/drop-in
mkdir -p "$out"

allcfg=$out/allconfig
cat > "$allcfg" <<'CFG'
CONFIG_COMPILE_TEST=y
CONFIG_WERROR=n
CONFIG_KASAN=n
CONFIG_KCSAN=n
CONFIG_UBSAN=n
CONFIG_KCOV=n
CONFIG_GCOV_KERNEL=n
CONFIG_GCC_PLUGINS=n
CONFIG_DEBUG_INFO_NONE=y
CONFIG_RUST=n
CFG

build() { # impl
	local impl=$1 src bdir
	if [ "$impl" = upstream ]; then
		src=$KSRC_PRISTINE
	else
		src=$VB2_CACHE/src/linux-6.12-dropin
		VB2_IMPL=ours VB2_TREE=dropin "$VB2_ROOT/tools/host/kernel-tree.sh" > /dev/null
	fi
	bdir=$VB2_CACHE/build/dropin-$impl
	mkdir -p "$bdir"
	local mk=(make -C "$src" O="$bdir" ARCH=x86_64 "CC=ccache gcc" "HOSTCC=ccache gcc" -j"$VB2_JOBS")
	if [ ! -f "$bdir/.config" ] || ! cmp -s "$allcfg" "$bdir/.vb2-allconfig"; then
		log "drop-in: allmodconfig for $impl"
		KCONFIG_ALLCONFIG=$allcfg "${mk[@]}" -s allmodconfig > /dev/null
		cp "$allcfg" "$bdir/.vb2-allconfig"
	fi
	log "drop-in: preparing $impl"
	"${mk[@]}" -s prepare > "$out/prepare-$impl.log" 2>&1 || { tail -20 "$out/prepare-$impl.log"; die "prepare failed"; }
	# Compile from scratch so that every warning is printed again.
	(cd "$bdir" && rm -f "${objs[@]}")
	log "drop-in: compiling ${#objs[@]} objects against $impl videobuf2"
	"${mk[@]}" -k "${objs[@]}" > "$out/compile-$impl.log" 2>&1 || true
	local ok=0 f
	: > "$out/missing-$impl.txt"
	for f in "${objs[@]}"; do
		if [ -f "$bdir/$f" ]; then ok=$((ok + 1)); else echo "${f%.o}.c" >> "$out/missing-$impl.txt"; fi
	done
	echo "$ok" > "$out/compiled-$impl"
}

build upstream
build ours
python3 - "$out" "${files[@]}" <<'PY'
import re, sys
out, files = sys.argv[1], sys.argv[2:]
users = set(files)
def diags(impl):
    d = {}
    pat = re.compile(r'^(?:\.\./)*(?:.*/src/linux-6\.12[^/]*/)?([^:\s]+\.[ch]):(\d+):(?:\d+:)? (warning|error): (.*)$')
    for line in open('%s/compile-%s.log' % (out, impl), errors='replace'):
        m = pat.match(line.strip())
        if m and m.group(1) in users:
            d.setdefault(m.group(1), set()).add((m.group(3), m.group(4)))
    return d
def header_diags(impl):
    """Warnings and errors located in the videobuf2 headers themselves."""
    d = set()
    pat = re.compile(r'(include/media/videobuf2-[^:\s]+\.h):(\d+):(?:\d+:)? (warning|error): (.*)$')
    for line in open('%s/compile-%s.log' % (out, impl), errors='replace'):
        m = pat.search(line.strip())
        if m:
            d.add((m.group(1), m.group(3), m.group(4)))
    return d
up, ours = diags('upstream'), diags('ours')
new = {f: sorted(w - up.get(f, set())) for f, w in ours.items() if w - up.get(f, set())}
for h, kind, msg in sorted(header_diags('ours')):
    new.setdefault(h, []).append((kind, msg))
errs = sum(1 for f, w in ours.items() for k, _ in w if k == 'error')
ok_up = int(open(out + '/compiled-upstream').read())
ok_ours = int(open(out + '/compiled-ours').read())
with open(out + '/report.txt', 'w') as r:
    r.write('drop-in check: %d/%d compiled against our videobuf2 (upstream: %d/%d)\n'
            % (ok_ours, len(files), ok_up, len(files)))
    r.write('errors in those files: %d; files with warnings upstream does not give: %d\n'
            % (errs, len(new)))
    for f in sorted(new):
        for kind, msg in new[f]:
            r.write('  %s: %s: %s\n' % (f, kind, msg))
    missing = open(out + '/missing-ours.txt').read().split()
    for f in missing:
        r.write('  not compiled: %s\n' % f)
print(open(out + '/report.txt').read(), end='')
sys.exit(0 if ok_ours == len(files) and not new and not errs else 1)
PY
