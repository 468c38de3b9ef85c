#!/usr/bin/env python3
# `rocelab run` stopped by SIGINT (Ctrl-C) or SIGTERM mid-run: it exits 128+N with one line on
# stderr naming the signal and the virtual time reached, writes every file, the capture whole,
# and the findings say the run was cut. What it wrote is what a run whose scenario.duration is
# that time writes (virtual-time runs tile): capture, metrics, counters and tables byte for
# byte. A second signal kills a run that will not stop.
#   run_interrupt.py ROCELAB     exit 0 all good, 1 a check failed
import os
import re
import signal
import subprocess
import sys
import tempfile
import time

FILES = ["capture.pcap", "counters.txt", "flows.csv", "metrics.csv", "ports.csv", "report.html"]
SCENARIO = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "scenarios",
                        "leafspine-alltoall.ini")
# flows that never finish, in a run long enough that no machine ends it before the signal
ENDLESS = ["--set", "pattern.a2a.count=0"]

failures = []


def fail(msg):
    failures.append(msg)
    print("FAIL: " + msg)


def start(rocelab, out):
    return subprocess.Popen([rocelab, "run", SCENARIO, "--set", "scenario.duration=2s", "--out",
                             out, "--quiet"] + ENDLESS,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def wait_running(p, out):
    """Until the run writes frames (it is past parsing and set-up), at most 60 s. The capture
    is written beside its name (capture.pcap.PID.N.partial) and renamed at the end."""
    for _ in range(600):
        if p.poll() is not None:
            return False
        try:
            if any(os.path.getsize(os.path.join(out, f)) > (1 << 20)
                   for f in os.listdir(out) if f.startswith("capture.pcap")):
                return True
        except OSError:     # not made yet, or renamed while we looked
            pass
        time.sleep(0.1)
    return False


def interrupted(rocelab, tmp, sig):
    name = signal.Signals(sig).name
    out = os.path.join(tmp, name)
    p = start(rocelab, out)
    if not wait_running(p, out):
        p.kill()
        fail(f"{name}: the run ended or never started writing frames: {p.communicate()}")
        return
    p.send_signal(sig)
    try:
        stdout, stderr = p.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        p.kill()
        fail(f"{name}: still running 60 s after the signal")
        return
    if p.returncode != 128 + sig:
        fail(f"{name}: exit {p.returncode}, expected {128 + sig}: {stderr}")
    lines = stderr.strip().splitlines()
    m = re.fullmatch(r"rocelab run: stopped by %s at ([0-9.]+) us of the scenario's "
                     r"2000000\.0 us" % name, lines[-1] if lines else "")
    if len(lines) != 1 or m is None:
        fail(f"{name}: expected one line naming the signal and the time, got {stderr!r}")
        return
    at = m.group(1)
    missing = [f for f in FILES if not os.path.exists(os.path.join(out, f))]
    if missing:
        fail(f"{name}: not written: {missing}")
        return
    with open(os.path.join(out, "report.html")) as f:
        if "the run was stopped at %s us, before its end" % at not in f.read():
            fail(f"{name}: report.html does not say the run was stopped at {at} us")
    d = subprocess.run([rocelab, "dissect", "--summary", os.path.join(out, "capture.pcap")],
                       capture_output=True, text=True)
    if d.returncode != 0 or "RoCE in" not in d.stdout:
        fail(f"{name}: the capture does not read whole: exit {d.returncode} {d.stderr}")
    if sig != signal.SIGINT:
        return
    # the same run to that time, in one go: the same bytes (but the finding of the cut)
    ref = os.path.join(tmp, "ref")
    subprocess.run([rocelab, "run", SCENARIO, "--set", "scenario.duration=%sus" % at, "--out",
                    ref, "--quiet"] + ENDLESS, check=True)
    for f in FILES[:-1]:
        with open(os.path.join(out, f), "rb") as a, open(os.path.join(ref, f), "rb") as b:
            if a.read() != b.read():
                fail(f"{name}: {f} differs from a run with scenario.duration = {at} us")


def killed_twice(rocelab, tmp):
    """The handler is reset once it fired: a second SIGINT ends the process by the signal."""
    out = os.path.join(tmp, "twice")
    p = start(rocelab, out)
    if not wait_running(p, out):
        p.kill()
        fail("twice: the run ended or never started writing frames")
        return
    p.send_signal(signal.SIGINT)
    p.send_signal(signal.SIGINT)
    p.communicate(timeout=60)
    if p.returncode not in (-signal.SIGINT, 128 + signal.SIGINT):
        fail(f"twice: exit {p.returncode}")


def main():
    rocelab = sys.argv[1]
    with tempfile.TemporaryDirectory() as tmp:
        interrupted(rocelab, tmp, signal.SIGINT)
        interrupted(rocelab, tmp, signal.SIGTERM)
        killed_twice(rocelab, tmp)
    print("%d failure(s)" % len(failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
