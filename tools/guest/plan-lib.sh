# Functions a plan may call. The guest init sources this file, then the plan.
#
# The results stream (serial port 2) is a sequence of records the host parses
# (tools/vb2check.py):
#   @@VB2 PLAN <name>                  the plan starts
#   @@VB2 STEP <id> <kind> [<label>]   a step starts; its output follows
#   @@VB2 RC <id> <exit code> <secs>   the step ended, after that many seconds
#   @@VB2 DMESG <id>                   the kernel log written during the step follows
#   @@VB2 ENDDMESG <id>
#   @@VB2 TAINT <id> <n>               /proc/sys/kernel/tainted after that log
#   @@VB2 DONE                         the plan ran to its end
# kind is one of: cmd, compliance, kunit, kmemleak, run.

VB2_OUT=/dev/ttyS1
VB2_STEP_TIMEOUT=${VB2_STEP_TIMEOUT:-900}

vb2_mark() { echo "@@VB2 $*" > $VB2_OUT; }

# Flush the kernel log into the results stream and clear it, so that every message is
# attributed to the step during which it was printed. The taint flags follow: a WARN
# whose splat the log buffer lost still shows there.
vb2_dmesg() {
	vb2_mark DMESG "$1"
	dmesg -c > $VB2_OUT 2>&1
	vb2_mark ENDDMESG "$1"
	# Not the shell's read: it reads a byte at a time, and a sysctl file read at an
	# offset other than 0 ends there (512 came out as 5).
	vb2_mark TAINT "$1" "$(cat /proc/sys/kernel/tainted)"
}

# vb2_step ID KIND LABEL COMMAND...: run COMMAND with a timeout, its output to the stream.
vb2_uptime() { read -r up _ < /proc/uptime; echo "$up"; }

# Step ids are unique in a run: a plan made of several may load the same driver in each
# part, so the second "load-vivid" becomes "load-vivid-2", and so on.
VB2_SEEN_IDS=" "
vb2_unique_id() {
	local n=1
	VB2_ID=$1
	while case $VB2_SEEN_IDS in *" $VB2_ID "*) true;; *) false;; esac; do
		n=$((n + 1)); VB2_ID=$1-$n
	done
	VB2_SEEN_IDS="$VB2_SEEN_IDS$VB2_ID "
}

vb2_step() {
	local id kind=$2 label=$3 rc t0 t1
	vb2_unique_id "$1"
	id=$VB2_ID
	shift 3
	vb2_mark STEP "$id" "$kind" "$label"
	t0=$(vb2_uptime)
	timeout "$VB2_STEP_TIMEOUT" "$@" > $VB2_OUT 2>&1 < /dev/null
	rc=$?
	t1=$(vb2_uptime)
	vb2_mark RC "$id" "$rc" "$(awk "BEGIN { printf \"%.1f\", $t1 - $t0 }")"
	vb2_dmesg "$id"
	return $rc
}

# The plan's verbs.
run()        { local id=$1; shift; vb2_step "$id" cmd - "$@"; }
compliance() { local id=$1; shift; vb2_step "$id" compliance "$id" v4l2-compliance -C never "$@"; }
# The same with Debian's i386 v4l2-compliance: a 32-bit process on the 64-bit kernel.
compliance32() { local id=$1; shift; vb2_step "$id" compliance "$id" v4l2-compliance-32 -C never "$@"; }
kunit()      { local id=$1; shift; vb2_step "$id" kunit "$1" modprobe "$@"; }
load()       { local id=$1; shift; vb2_step "$id" cmd - modprobe "$@"; devlinks; }
unload()     { local id=$1; shift; vb2_dma_mappings "$id"; vb2_step "$id" cmd - rmmod "$@"; }

# DMA-API debugging keeps every DMA mapping in a table, but it reports a mapping that
# nobody unmapped only when a PCI device goes away, and the devices here are platform
# devices. A mapping left behind stays in the table after its pages were freed; when
# the pages serve a new mapping, the warning ("overlapping mappings") blames whoever
# maps them next, long after the leak. So, before a module goes and with every test
# program of the plan gone, the table must be empty. A file whose last reference a
# kernel thread dropped is released by a worker a little later: the table gets 10 s.
# The table is read only while it means something and lists no freed device:
# - not once dma-debug has turned itself off (an allocation of its own failed, which
#   the fuzzer's fault injection can cause): it then forgets unmaps but keeps listing;
# - not after a step found mappings left: rmmod runs anyway and frees their devices.
# /tmp/vb2-dma-unchecked says why, and every later step prints it.
vb2_dma_mappings() {
	[ -r /sys/kernel/debug/dma-api/dump ] || return 0
	vb2_step "dma-mappings-$1" cmd - sh -c '
		d=/sys/kernel/debug/dma-api
		off=/tmp/vb2-dma-unchecked
		[ -e $off ] && { cat $off; exit 0; }
		n=0
		while :; do
			if [ "$(cat $d/disabled)" = Y ]; then
				echo "not checked: DMA-API debugging turned itself off" \
					"(its own allocation failed, see the kernel log)" | tee $off
				exit 0
			fi
			grep -q . $d/dump || break
			if [ $n = 10 ]; then
				echo "DMA mappings left after 10 s: $(grep -c . $d/dump), by device:"
				cut -d" " -f1-3 $d/dump | sort | uniq -c
				echo "processes with media files open or mapped:"
				for p in /proc/[0-9]*; do
					f=$(ls -l $p/fd 2>/dev/null |
						grep -cE "video|media|dvb|v4l-|dmabuf|request")
					m=$(grep -cE "/dev/(video|dvb|v4l)|dmabuf" $p/maps 2>/dev/null)
					[ "${f:-0}${m:-0}" = 00 ] ||
						echo "  ${p#/proc/} $(cat $p/comm): $f files, $m mappings"
				done
				head -n 40 $d/dump
				echo "not checked: an earlier step found DMA mappings left" > $off
				exit 1
			fi
			sleep 1
			n=$((n + 1))
		done
		[ $n = 0 ] || echo "DMA mappings all gone after $n s"'
}

# /dev/char/MAJ:MIN links, which v4l2-ctl and v4l2-compliance use to find entities
# (udev makes them on a real system).
devlinks() {
	local d k v name
	mkdir -p /dev/char
	for d in /sys/dev/char/*; do
		name=
		while IFS='=' read -r k v; do
			[ "$k" = DEVNAME ] && name=$v
		done < "$d/uevent"
		# Only media nodes: forking is slow under TCG, and there are many tty nodes.
		case $name in
		video*|vbi*|radio*|swradio*|v4l-*|media*) ln -sfn "../$name" "/dev/char/${d##*/}";;
		esac
	done
}

# kmemleak: scan twice (an object must be seen unreferenced in two scans to be reported),
# then print what it found. Only meaningful after the modules under test are unloaded.
# A plan made of several (make check) sets VB2_KMEMLEAK_AT_END: the steps of the parts
# are skipped, and one scan at the end (kmemleak_final) reports every leak of the run
# (each with the backtrace of its allocation). Under TCG a scan of a KASAN guest's
# memory takes more than a minute.
kmemleak() {
	local id=$1
	[ -n "${VB2_KMEMLEAK_AT_END:-}" ] && return 0
	[ -e /sys/kernel/debug/kmemleak ] || { vb2_step "$id" kmemleak - echo "kmemleak: not available"; return; }
	vb2_step "$id" kmemleak - sh -c 'echo scan > /sys/kernel/debug/kmemleak; sleep 1;
		echo scan > /sys/kernel/debug/kmemleak; cat /sys/kernel/debug/kmemleak'
}

# Find a /dev node by the name the driver gave it: a video4linux node by its "name"
# attribute, a media device by its "model".
devnode() {
	local f
	for f in /sys/class/video4linux/*/name /sys/bus/media/devices/*/model; do
		[ -e "$f" ] || continue
		if [ "$(cat "$f")" = "$1" ]; then
			f=${f%/*}; echo "/dev/${f##*/}"; return 0
		fi
	done
	return 1
}

vb2_run_plan() {
	vb2_mark PLAN "$(sed -n 's/^# plan: *//p' "$1" | head -n1)"
	vb2_dmesg boot
	. "$1"
	vb2_dmesg end
	vb2_mark DONE
}

kmemleak_final() {
	VB2_KMEMLEAK_AT_END=
	kmemleak "$@"
}
