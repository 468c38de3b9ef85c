#!/usr/bin/env python3
# `rocelab run` stopped by SIGINT (Ctrl-C) or SIGTERM mid-run: it exits 128+N with one line on
# stderr naming the signal and the virtual time reached, writes every file, the capture whole,
# and the findings say the run was cut. What it wrote is what a run whose scenario.duration is
# that time writes (virtual-time runs tile): capture, metrics, counters and tables byte for
# byte. A second signal kills a run that will not stop.
# A SIGINT once the run is over, while the files are written: they are finished, whole, the
# same bytes as a run left alone, with a line saying so, and exit 130. A second one stops at
# once, exit 130, with a line naming the file it removed unfinished, those it left out and
# those whole: no cut file is left. The process is caught writing with SIGSTOP, so a busy
# machine cannot make the signal land before or after the writing.
#   run_interrupt.py ROCELAB     exit 0 all good, 1 a check failed
import os
import re
import signal
import subprocess
import sys
import tempfile
import threading
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


# A run whose writing takes a while: its metrics.csv is tens of megabytes (a sample every
# 200 ns), its capture only headers.
WRITE_RUN = ["demo-incast", "--set", "scenario.sample=200ns", "--set", "capture.snaplen=64",
             "--quiet"]
WRITE_FILES = ["report.html", "flows.csv", "ports.csv", "metrics.csv", "counters.txt"]


def read_lines(stream, lines):
    """Collect a pipe's lines as they come (a thread: the test must not block on them)."""
    for line in stream:
        lines.append(line.rstrip("\n"))


def caught_writing(rocelab, out):
    """Start a run and stop it (SIGSTOP) once it writes its files; None if it never did."""
    p = subprocess.Popen([rocelab, "run"] + WRITE_RUN + ["--out", out], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    lines = []
    t = threading.Thread(target=read_lines, args=(p.stderr, lines), daemon=True)
    t.start()
    for _ in range(60000):		# 5 minutes at most, 5 ms a look
        # any file but the capture (written during the run, beside its name until the end:
        # capture.pcap.PID.N.partial): the writing has begun
        if os.path.isdir(out) and [f for f in os.listdir(out)
                                   if not f.startswith("capture.pcap")]:
            p.send_signal(signal.SIGSTOP)
            if p.poll() is None:
                return p, lines, t
            break
        if p.poll() is not None:
            break
        time.sleep(0.005)
    p.kill()
    p.wait()
    fail(f"writing: the run ended before it was caught writing (exit {p.returncode}): {lines}")
    return None


def wait_line(p, lines, pattern, timeout=120):
    for _ in range(int(timeout / 0.005)):
        for line in lines:
            if re.search(pattern, line):
                return True
        if p.poll() is not None:
            return any(re.search(pattern, line) for line in lines)
        time.sleep(0.005)
    return False


def same_as(out, ref, files, what):
    for f in files:
        with open(os.path.join(out, f), "rb") as a, open(os.path.join(ref, f), "rb") as b:
            if a.read() != b.read():
                fail(f"{what}: {f} differs from the same run left alone")


def interrupted_writing(rocelab, tmp):
    """Once while writing: every file finished, the same bytes as a run left alone; exit 130."""
    ref = os.path.join(tmp, "write-ref")
    subprocess.run([rocelab, "run"] + WRITE_RUN + ["--out", ref], check=True)
    out = os.path.join(tmp, "write-once")
    c = caught_writing(rocelab, out)
    if c is None:
        return ref
    p, lines, t = c
    p.send_signal(signal.SIGINT)
    p.send_signal(signal.SIGCONT)
    try:
        p.wait(timeout=300)
    except subprocess.TimeoutExpired:
        p.kill()
        fail("writing once: still running 300 s after the signal")
        return ref
    t.join()
    if p.returncode != 128 + signal.SIGINT:
        fail(f"writing once: exit {p.returncode}, expected 130: {lines}")
    want = ["rocelab run: interrupted while writing %s: finishing the files (interrupt again "
            "to stop now)" % out,
            "rocelab run: %s: every file written whole after the interrupt" % out]
    if lines != want:
        fail(f"writing once: stderr {lines!r}, expected {want!r}")
    missing = [f for f in FILES if not os.path.exists(os.path.join(out, f))]
    if missing:
        fail(f"writing once: not written: {missing}")
        return ref
    same_as(out, ref, FILES, "writing once")
    return ref


def interrupted_writing_twice(rocelab, tmp, ref):
    """Twice while writing: stopped at once; only whole files are left, and the line names them."""
    out = os.path.join(tmp, "write-twice")
    c = caught_writing(rocelab, out)
    if c is None:
        return
    p, lines, t = c
    p.send_signal(signal.SIGINT)
    p.send_signal(signal.SIGCONT)
    # the second once the first was taken (two pending signals would be one)
    if not wait_line(p, lines, r"interrupted while writing"):
        fail(f"writing twice: no line for the first signal: {lines}")
    p.send_signal(signal.SIGINT)
    try:
        p.wait(timeout=60)
    except subprocess.TimeoutExpired:
        p.kill()
        fail("writing twice: still running 60 s after the second signal")
        return
    t.join()
    if p.returncode != 128 + signal.SIGINT:
        fail(f"writing twice: exit {p.returncode}, expected 130: {lines}")
    m = re.fullmatch(r"rocelab run: stopped by (?:a second SIGINT while writing %s: removed "
                     r"the unfinished (\S+) and left out (.*); whole: (.*)|"
                     r"(SIGINT: every file in %s is whole))" % (re.escape(out), re.escape(out)),
                     lines[-1] if lines else "")
    if len(lines) != 2 or m is None:
        fail(f"writing twice: expected the first signal's line and one naming what is left, "
             f"got {lines!r}")
        return
    print("writing twice: " + lines[-1])
    if m.group(4):
        # the second signal came after the last file: nothing was cut; so it must be
        print("writing twice: the second signal came once every file was written")
        whole, gone = FILES, []
    else:
        whole = m.group(3).split(", ")
        gone = [m.group(1)] + ([] if m.group(2) == "nothing else" else m.group(2).split())
    if sorted(whole + gone) != sorted(FILES):
        fail(f"writing twice: the line names {whole} whole and {gone} not, not the six files")
    left = sorted(os.listdir(out))
    if left != sorted(whole):
        fail(f"writing twice: {out} holds {left}, the line says {sorted(whole)}")
    same_as(out, ref, [f for f in whole if f in left], "writing twice")


def main():
    rocelab = sys.argv[1]
    with tempfile.TemporaryDirectory() as tmp:
        interrupted(rocelab, tmp, signal.SIGINT)
        interrupted(rocelab, tmp, signal.SIGTERM)
        killed_twice(rocelab, tmp)
        ref = interrupted_writing(rocelab, tmp)
        interrupted_writing_twice(rocelab, tmp, ref)
    print("%d failure(s)" % len(failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
