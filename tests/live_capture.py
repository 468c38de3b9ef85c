#!/usr/bin/python3
"""Live capture and replay on a veth pair between two network namespaces (net_af_packet):

1. rocelab replay sends rc_write_lat.pcap out of one end, 10x faster, with --capture; tcpdump
   on the other end must receive the same frames, byte for byte and in order, and --capture
   must hold exactly what was sent.
2. rocelab perf write_bw --verify between the namespaces, each side with --capture: every RoCE
   frame one side's capture shows sent reaches the other side's capture, and all their ICRCs
   are right (rocelab dissect).

Usage: live_capture.py ROCELAB SHARED_PCAP_DIR; exit 77 when not root, without namespaces or
tcpdump, or without the shared captures. The namespaces are deleted on every exit path.
"""
import json
import os
import signal
import struct
import subprocess
import sys
import tempfile
import time

import netns
from netns import sh

SKIP = 77
failures = []


def fail(msg):
    failures.append(msg)
    print("FAIL: " + msg)


def frames(path):
    b = open(path, "rb").read()
    o, out = 24, []
    while o + 16 <= len(b):
        _, _, cl, _ = struct.unpack("<IIII", b[o:o + 16])
        out.append(b[o + 16:o + 16 + cl])
        o += 16 + cl
    return out


def roce(rocelab, path):
    p = subprocess.run([rocelab, "dissect", "--format=jsonl", path], stdout=subprocess.PIPE,
                       text=True)
    return [json.loads(l) for l in p.stdout.splitlines()]


def replay_case(rocelab, shared, a, b, tmp):
    src = os.path.join(shared, "rxe", "rc_write_lat.pcap")
    seen = os.path.join(tmp, "seen.pcap")
    sent = os.path.join(tmp, "sent.pcap")
    td = subprocess.Popen(["ip", "netns", "exec", b, "tcpdump", "-i", "vb", "-Q", "in", "-s", "0",
                           "-U", "-w", seen], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    time.sleep(1.5)
    p = subprocess.run(["ip", "netns", "exec", a, rocelab, "replay", src, "--speed", "10",
                        "--capture", sent, "--dev", "net_af_packet0,iface=va,framecnt=4096"],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=120)
    time.sleep(1)
    td.send_signal(signal.SIGINT)
    td.wait(timeout=10)
    print("replay: " + p.stdout.strip().replace("\n", " | "))
    if p.returncode != 0:
        fail("replay exit %d: %s" % (p.returncode, p.stderr))
        return
    want, got, cap = frames(src), frames(seen), frames(sent)
    # the sending namespace's own kernel adds a few frames (IPv6 router solicitations, MLD)
    ours = [f for f in got if f in want]
    same = sum(x == y for x, y in zip(want, ours))
    print("replay: %d frames in the file, %d received on the peer (%d of them identical to the "
          "file's, in order; %d from the kernel), %d in --capture"
          % (len(want), len(got), same, len(got) - len(ours), len(cap)))
    if len(ours) != len(want) or same != len(want):
        fail("the peer received %d frames, %d identical to the %d sent" % (len(got), same,
                                                                           len(want)))
    if [f for f in cap if f in want] != want:
        fail("--capture does not hold the %d frames sent, in order" % len(want))


def perf_case(rocelab, a, b, tmp):
    caps = {a: os.path.join(tmp, "a.pcap"), b: os.path.join(tmp, "b.pcap")}
    dev = "net_af_packet0,iface={},framecnt=4096"
    srv = subprocess.Popen(["ip", "netns", "exec", a, rocelab, "perf", "write_bw", "--verify",
                            "-n", "50", "-s", "16384", "--capture", caps[a], "--dev",
                            dev.format("va"), "--ip", "10.78.0.1"],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    time.sleep(2)
    cli = subprocess.run(["ip", "netns", "exec", b, rocelab, "perf", "write_bw", "--verify",
                          "-n", "50", "-s", "16384", "--capture", caps[b], "--dev",
                          dev.format("vb"), "--ip", "10.78.0.2", "10.78.0.1"],
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=120)
    try:
        out, _ = srv.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        srv.kill()
        out, _ = srv.communicate()
    if srv.returncode != 0 or cli.returncode != 0:
        fail("perf write_bw: server exit %s, client exit %d:\n%s\n%s"
             % (srv.returncode, cli.returncode, out, cli.stdout))
        return
    fa, fb = roce(rocelab, caps[a]), roce(rocelab, caps[b])
    ra = [f for f in fa if f["kind"] == "rocev2"]
    rb = [f for f in fb if f["kind"] == "rocev2"]
    bad = [f for f in ra + rb if not f.get("icrc_ok")]
    a_sent = [f for f in ra if f["ip"]["src"] == "10.78.0.1"]
    b_sent = [f for f in rb if f["ip"]["src"] == "10.78.0.2"]
    b_got = [f for f in rb if f["ip"]["src"] == "10.78.0.1"]
    a_got = [f for f in ra if f["ip"]["src"] == "10.78.0.2"]
    key = lambda f: (f["bth"]["opcode"], f["bth"]["psn"], f["len"])
    print("perf --capture: server file %d frames (%d RoCE: %d sent, %d received), client file %d "
          "frames (%d RoCE: %d sent, %d received), %d ICRC errors"
          % (len(fa), len(ra), len(a_sent), len(a_got), len(fb), len(rb), len(b_sent), len(b_got),
             len(bad)))
    if not a_sent or not b_sent or bad:
        fail("perf --capture: RoCE frames missing in a direction, or ICRC errors")
    if sorted(map(key, a_sent)) != sorted(map(key, b_got)) or \
       sorted(map(key, b_sent)) != sorted(map(key, a_got)):
        fail("perf --capture: what one side sent is not what the other received")


def main():
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    rocelab, shared = sys.argv[1], sys.argv[2]
    if os.geteuid() != 0:
        print("live_capture: not root: skipped")
        return SKIP
    if not os.path.isdir(os.path.join(shared, "rxe")):
        print("live_capture: no shared captures: skipped")
        return SKIP
    if sh("sh", "-c", "command -v tcpdump", check=False).returncode:
        print("live_capture: no tcpdump: skipped")
        return SKIP
    why = netns.usable()
    if why:
        print("live_capture: network namespaces cannot be used here (%s): skipped" % why)
        return SKIP
    netns.trap_signals()
    tag = str(os.getpid())
    a, b = "rlcapa" + tag, "rlcapb" + tag
    try:
        try:
            netns.add(a, b)
            netns.veth(a, "va", b, "vb")
            for ns, dev, ip in ((a, "va", "10.78.0.1"), (b, "vb", "10.78.0.2")):
                sh("ip", "-n", ns, "addr", "add", ip + "/24", "dev", dev)
                sh("ip", "-n", ns, "link", "set", dev, "up")
        except subprocess.CalledProcessError as e:
            print("live_capture: cannot make namespaces or a veth (%s): skipped" % e.output)
            return SKIP
        with tempfile.TemporaryDirectory() as tmp:
            replay_case(rocelab, shared, a, b, tmp)
            perf_case(rocelab, a, b, tmp)
    finally:
        netns.cleanup()
    print("live_capture: %s" % ("%d failure(s)" % len(failures) if failures else "OK"))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
