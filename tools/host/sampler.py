#!/usr/bin/python3
"""Sample the instruction pointer of a QEMU guest through its HMP monitor.

    sampler.py MONITOR_SOCKET RESULTS_LOG STEP OUT [--hz N]

Waits until RESULTS_LOG (the plan's output, see tools/guest/plan-lib.sh) says that step
STEP started, then asks the monitor for the registers of CPU 0 N times a second and
writes one RIP per line (hex) to OUT, until the step's RC line appears. Under
-icount shift=0 with one vCPU the samples fall evenly on executed instructions, so
their distribution over symbols is a profile of what the step runs.
"""
import argparse
import re
import socket
import time

RIP = re.compile(rb'RIP=([0-9a-f]{16})')


def read_until_prompt(sock):
    data = b''
    while not data.endswith(b'(qemu) '):
        chunk = sock.recv(65536)
        if not chunk:
            raise EOFError('monitor closed')
        data += chunk
    return data


def step_state(log, step):
    try:
        with open(log, 'rb') as f:
            text = f.read()
    except FileNotFoundError:
        return 'waiting'
    if re.search(rb'^@@VB2 RC ' + re.escape(step.encode()) + rb' ', text, re.M):
        return 'done'
    if re.search(rb'^@@VB2 STEP ' + re.escape(step.encode()) + rb' ', text, re.M):
        return 'running'
    if b'@@VB2 DONE' in text:
        return 'done'
    return 'waiting'


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('monitor')
    ap.add_argument('results')
    ap.add_argument('step')
    ap.add_argument('out')
    ap.add_argument('--hz', type=float, default=200)
    ap.add_argument('--timeout', type=float, default=3600)
    args = ap.parse_args()

    deadline = time.time() + args.timeout
    sock = None
    while sock is None and time.time() < deadline:
        try:
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            sock.connect(args.monitor)
        except OSError:
            sock = None
            time.sleep(0.2)
    if sock is None:
        raise SystemExit('sampler: no monitor at %s' % args.monitor)
    read_until_prompt(sock)

    while step_state(args.results, args.step) == 'waiting' and time.time() < deadline:
        time.sleep(0.2)

    samples = 0
    period = 1.0 / args.hz
    last_check = 0.0
    with open(args.out, 'w') as out:
        while time.time() < deadline:
            now = time.time()
            if now - last_check > 1.0:
                last_check = now
                if step_state(args.results, args.step) != 'running':
                    break
            try:
                sock.sendall(b'info registers\n')
                m = RIP.search(read_until_prompt(sock))
            except (OSError, EOFError):
                break       # the guest is gone: the step ended with it
            if m:
                out.write(m.group(1).decode() + '\n')
                samples += 1
            time.sleep(period)
    print('sampler: %d samples of step %s' % (samples, args.step))


if __name__ == '__main__':
    main()
