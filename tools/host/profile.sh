#!/bin/bash
# make profile: where do ours and upstream's videobuf2 spend the instructions of one
# buffer ioctl? Boots each bench kernel (configs/bench.config, -icount shift=0, one
# vCPU) with vb2-testdrv, runs tools/guest/vb2-spin on one op for VB2_PROFILE_SECONDS
# of guest time and prints a profile per kernel and one side by side
# (tools/report/profreport.py), in instructions per op.
#
# By default the profile is exact: a QEMU plugin (tools/host/icount/icount.c) counts every
# instruction executed between vb2-spin's two markers, per translation block, and the
# report sums them per function. VB2_PROFILE_MODE=sample samples the instruction
# pointer through the QEMU monitor instead (tools/host/sampler.py), for a QEMU without
# plugin support.
#
#   VB2_PROFILE_OP       qbuf-dqbuf (default), querybuf, prepare-buf or alloc-N (make
#                        bench's allocation row with N buffers, N <= 32768: per buffer)
#   VB2_PROFILE_ALLOC    the test driver's allocator: 0 vmalloc (default), 1 dma-contig,
#                        2 dma-sg
#   VB2_PROFILE_DRIVER   vb2-testdrv (default) or vivid (its first instance's video
#                        capture node; buffers then complete at vivid's frame rate,
#                        and its thread's work counts too)
#   VB2_PROFILE_SECONDS  guest seconds of spinning (default 2 exact, 20 sampled)
#   VB2_PROFILE_IMPLS    the kernels (default "ours upstream")
#   VB2_PROFILE_MODE     exact (default) or sample
#   VB2_PROFILE_TOP      functions listed per kernel (default 60; twice that side by side)
#   VB2_PROFILE_ANNOTATE a function of the kernel image (exact mode): also writes
#                        annotate-FUNCTION.txt, its instructions with executions per op
export VB2_FLAVOR=bench
. "$(dirname "$0")/lib.sh"
"$VB2_ROOT/tools/host/setup-host.sh"
op=${VB2_PROFILE_OP:-qbuf-dqbuf}
mode=${VB2_PROFILE_MODE:-exact}
case $mode in
exact) secs=${VB2_PROFILE_SECONDS:-2} ;;
sample) secs=${VB2_PROFILE_SECONDS:-20} ;;
*) die "VB2_PROFILE_MODE is exact or sample, not $mode" ;;
esac
alloc=${VB2_PROFILE_ALLOC:-0}
case $alloc in 0|1|2) ;; *) die "VB2_PROFILE_ALLOC is 0, 1 or 2, not $alloc" ;; esac
out=$VB2_OUT/profile/$op
[ "$alloc" = 0 ] || out=$out-alloc$alloc
maxb=
case $op in alloc-*) maxb=max_buffers=32768 ;; esac
case ${VB2_PROFILE_DRIVER:-vb2-testdrv} in
vb2-testdrv)
	load="vb2-testdrv n_devs=1 allocators=$alloc completion=0 data=0 $maxb"
	mod=vb2_testdrv node=vb2-testdrv-0-cap ;;
vivid)
	load="vivid n_devs=1 node_types=0x1 allocators=$alloc"
	mod=vivid node=vivid-000-vid-cap out=$out-vivid ;;
*) die "VB2_PROFILE_DRIVER is vb2-testdrv or vivid, not $VB2_PROFILE_DRIVER" ;;
esac
mkdir -p "$out"
plan=$out/profile.plan
cat > "$plan" <<PLAN
# plan: profile
load load-driver $load
run kallsyms sh -c 'grep "\\[$mod\\]" /proc/kallsyms > /tmp/kallsyms; wc -l < /tmp/kallsyms'
run spin vb2-spin "\$(devnode $node)" $op $secs
run kallsyms-dump cat /tmp/kallsyms
unload rmmod-driver ${load%% *}
PLAN

plugin=$out/icount.so
if [ "$mode" = exact ]; then
	gcc -O2 -Wall -Wextra -Werror -shared -fPIC -fvisibility=hidden \
		-o "$plugin" "$VB2_ROOT/tools/host/icount/icount.c" ||
		die "the QEMU plugin did not build (VB2_PROFILE_MODE=sample does without)"
fi

for impl in ${VB2_PROFILE_IMPLS:-ours upstream}; do
	export VB2_IMPL=$impl
	# shellcheck source=lib.sh
	. "$VB2_ROOT/tools/host/lib.sh"
	"$VB2_ROOT/tools/host/build-kernel.sh" > "$out/build-$impl.log" 2>&1 ||
		{ tail -n 30 "$out/build-$impl.log"; die "the $impl bench kernel did not build"; }
	rm -rf "${out:?}/$impl" "$out/$impl".*
	if [ "$mode" = exact ]; then
		VB2_QEMU_PLUGIN="$plugin,out=$out/$impl.counts" VB2_ICOUNT=0 VB2_GUEST_CPUS=1 \
			"$VB2_ROOT/tools/host/run-guest.sh" "$plan" "$out/$impl" 3600 ||
			log "the $impl guest exited with $?"
		grep -q '^# end' "$out/$impl.counts" 2>/dev/null ||
			die "no instruction count from $impl (see $out/$impl/qemu.log)"
	else
		sock=$out/$impl.monitor
		/usr/bin/python3 "$VB2_ROOT/tools/host/sampler.py" "$sock" \
			"$out/$impl/results.log" spin "$out/$impl.samples" &
		sampler=$!
		VB2_MONITOR=$sock VB2_ICOUNT=0 VB2_GUEST_CPUS=1 \
			"$VB2_ROOT/tools/host/run-guest.sh" "$plan" "$out/$impl" 3600 ||
			log "the $impl guest exited with $?"
		wait $sampler || die "the sampler of $impl failed"
	fi
	grep -a "vb2-spin:" "$out/$impl/results.log" || die "vb2-spin did not finish on $impl"
	echo "$secs" > "$out/$impl.seconds"
	sed -n '/^@@VB2 STEP kallsyms-dump/,/^@@VB2 RC kallsyms-dump/p' "$out/$impl/results.log" |
		grep -v '^@@VB2' > "$out/$impl.kallsyms"
done
# Every kernel profiled so far with this op and mode, this run's and earlier ones.
runs=()
for impl in ours upstream; do
	ops=$(sed -n 's/^vb2-spin: [^ ]* \([0-9]*\) ops.*/\1/p' "$out/$impl/results.log" 2>/dev/null)
	[ -n "$ops" ] || continue
	map=$VB2_CACHE/build/$impl-bench/System.map:$out/$impl.kallsyms
	if [ "$mode" = exact ]; then
		[ -s "$out/$impl.counts" ] || continue
		runs+=("--run=$impl:$out/$impl.counts:$map" "--ops=$impl=$ops")
	else
		[ -s "$out/$impl.samples" ] || continue
		runs+=("--run=$impl:$out/$impl.samples:$map")
		# vb2-spin ran for that many guest seconds, one instruction per guest nanosecond.
		s=$(cat "$out/$impl.seconds")
		runs+=("--per-op=$impl=$(( s * 1000000000 / ops ))")
	fi
done
[ "$mode" = exact ] && runs+=(--exact)
runs+=(--top "${VB2_PROFILE_TOP:-60}")
/usr/bin/python3 "$VB2_ROOT/tools/report/profreport.py" "${runs[@]}" | tee "$out/report.txt"
fn=${VB2_PROFILE_ANNOTATE:-}
if [ -n "$fn" ]; then
	[ "$mode" = exact ] || die "VB2_PROFILE_ANNOTATE needs the exact mode"
	/usr/bin/python3 "$VB2_ROOT/tools/report/profreport.py" "${runs[@]}" --annotate "$fn" \
		> "$out/annotate-$fn.txt" || die "no annotation of $fn"
	log "annotated $fn: $out/annotate-$fn.txt"
fi
