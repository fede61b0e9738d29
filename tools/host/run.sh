#!/bin/bash
# make run: build the kernel of VB2_IMPL, boot it, load vivid and stream 300 frames with
# MMAP buffers. Prints frames, fps, dropped frames and the elapsed time, and saves the last
# frame as $VB2_OUT/run/last-frame.png.
. "$(dirname "$0")/lib.sh"
"$VB2_ROOT/tools/host/setup-host.sh"
"$VB2_ROOT/tools/host/build-kernel.sh"
dir=$VB2_OUT/run
rm -rf "$dir"; mkdir -p "$dir"
t0=$(date +%s)
rc=0
"$VB2_ROOT/tools/host/run-guest.sh" "$VB2_ROOT/tools/plans/run.plan" "$dir" 900 || rc=$?
res=$dir/results.log
stats=$(awk '/^@@VB2 STEP capture /{on=1; next} /^@@VB2 RC capture /{on=0} on && /^frames=/' "$res")
tr -d '\r' < "$res" | sed -n '/^@@FRAME-BEGIN/,/^@@FRAME-END/p' | sed '1d;$d' | base64 -d > "$dir/last-frame.ppm" 2>/dev/null || true
if [ -s "$dir/last-frame.ppm" ]; then
	python3 "$VB2_ROOT/tools/report/ppm2png.py" "$dir/last-frame.ppm" "$dir/last-frame.png"
	rm -f "$dir/last-frame.ppm"
fi
echo
echo "videobuf2: $VB2_IMPL, kernel $VB2_FLAVOR, guest $(cat "$dir/seconds" 2>/dev/null)s, all in $(( $(date +%s) - t0 ))s"
if [ -n "$stats" ]; then
	eval "$stats"
	# shellcheck disable=SC2154
	printf 'streamed %s frames (%sx%s RGB24 at %s fps asked, MMAP) in %ss: %s fps, %s dropped\n' \
		"$frames" "$width" "$height" "$rate" "$elapsed" "$fps" "$dropped"
else
	echo "streaming failed; the capture step printed:"
	awk '/^@@VB2 STEP capture /{on=1; next} /^@@VB2 RC capture /{on=0} on' "$res" | sed 's/^/    /'
	rc=1
fi
[ -f "$dir/last-frame.png" ] && echo "last frame: $dir/last-frame.png"
echo
python3 "$VB2_ROOT/tools/report/vb2check.py" summary --run "$dir" || rc=1
exit $rc
