#!/usr/bin/env python3
"""The peer goes away mid-test: the process that is left says so in one line and exits 1 within
its --timeout, without crashing.

Cases, each a `rocelab perf` server and client running a test long enough to be cut:
  memif_kill_client, memif_kill_server   over memif (sockets in a temporary directory): the
                                         other process killed with SIGKILL
  afpacket_kill_client, afpacket_kill_server
                                         the same over af_packet on a veth pair between two
                                         network namespaces (root)
  afpacket_link_down                     the veth taken down mid-test: both sides are left
The survivor must exit 1 (not 0, not by a signal, not a sanitizer's abort) no later than
--timeout and a margin after the cut, with exactly one `rocelab perf:` line on stderr. DPDK's
own lines are not ours to count: the memif probe's line under --no-shconf, and the `EAL: Error:
Invalid memory` that DPDK 22.11's memif teardown may print when the peer left first
(docs/live.md); neither changes the exit or the line.

Usage: live_peer_loss.py ROCELAB [CASE ...]; exit 77 (skip) when neither memif nor namespaces
can be used here.
"""
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import live_memif  # noqa: E402
import netns  # noqa: E402
from netns import sh  # noqa: E402

SKIP = 77
TIMEOUT = 10		# --timeout of both sides
MARGIN = 15		# start-up, teardown and a busy machine on top of it
PORT = "18731"		# perftest's TCP port, away from the other live tests' 18515
MEMIF = "net_memif0,role={},socket={},bsize=8192,rsize=12"
AFP = "net_af_packet0,iface={},framecnt=4096"
SERVER_IP, CLIENT_IP = "10.83.0.1", "10.83.0.2"
# what is running: a long bandwidth test, and a latency test of many iterations
TESTS = {"write_bw": ["-D", "30", "-s", "65536"], "read_lat": ["-n", "1000000", "-s", "64"]}
CASES = ["memif_kill_client", "memif_kill_server", "afpacket_kill_client",
         "afpacket_kill_server", "afpacket_link_down"]
OURS = re.compile(r"^rocelab perf: ", re.M)
# DPDK's lines a memif port prints at its probe with --no-shconf: not ours to count
NOISE = re.compile(r"^rte_pmd_memif_probe\(\): Failed to register mp action callback.*\n", re.M)


def wait_running(proc, path, deadline):
    """Until the client's banner shows its test running (its header row), or it ended."""
    while time.monotonic() < deadline and proc.poll() is None:
        with open(path) as f:
            if "#bytes" in f.read():
                return True
        time.sleep(0.1)
    return False


def survivor_ok(name, who, proc, out_path, err_path, t_cut, failures):
    try:
        rc = proc.wait(timeout=TIMEOUT + MARGIN)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        failures.append("%s: the %s did not exit within %d s of the cut" %
                        (name, who, TIMEOUT + MARGIN))
        return
    took = time.monotonic() - t_cut
    with open(err_path) as f:
        err = NOISE.sub("", f.read())
    with open(out_path) as f:
        out = f.read()
    ours = OURS.findall(err)
    why = []
    if rc != 1:
        why.append("exit %d, not 1%s" % (rc, " (a signal)" if rc < 0 or rc > 128 else ""))
    if len(ours) != 1:
        why.append("%d 'rocelab perf:' lines on stderr, not one" % len(ours))
    if "Segmentation" in err or "AddressSanitizer" in err or "runtime error" in err:
        why.append("it crashed, or a sanitizer complained")
    if why:
        failures.append("%s: the %s: %s\n--- stderr\n%s--- stdout (tail)\n%s" %
                        (name, who, "; ".join(why), err, out[-600:]))
    line = err.strip().splitlines()[-1] if err.strip() else "-"
    print("%-22s %-6s exit %s after %4.1f s: %s" % (name, who, rc, took, line))
    sys.stdout.flush()


def run_case(rocelab, tmp, name, test, nss, failures):
    kind, action = name.split("_", 1)
    tag = "%s-%s" % (name, test)
    if kind == "memif":
        sock = os.path.join(tmp, tag + ".sock")
        devs = (MEMIF.format("server", sock), MEMIF.format("client", sock))
        pre = ([], [])
        peer = "127.0.0.1"
    else:
        devs = (AFP.format("va"), AFP.format("vb"))
        pre = (["ip", "netns", "exec", nss[0]], ["ip", "netns", "exec", nss[1]])
        peer = SERVER_IP
    common = ["perf", test, "-p", PORT, "--timeout", str(TIMEOUT)] + TESTS[test]
    logs = {w: (os.path.join(tmp, tag + "-%s.out" % w), os.path.join(tmp, tag + "-%s.err" % w))
            for w in ("server", "client")}
    procs = {}
    try:
        for i, who in enumerate(("server", "client")):
            args = pre[i] + [rocelab] + common + ["--dev", devs[i], "--ip",
                                                  (SERVER_IP, CLIENT_IP)[i]]
            if who == "client":
                args.append(peer)
            with open(logs[who][0], "w") as o, open(logs[who][1], "w") as e:
                procs[who] = subprocess.Popen(args, stdout=o, stderr=e)
            if who == "server":
                time.sleep(0.5)
        if not wait_running(procs["client"], logs["client"][0], time.monotonic() + 60):
            failures.append("%s (%s): the test did not start\n%s" %
                            (name, test, open(logs["client"][1]).read()))
            return
        time.sleep(1.0)		# well into the test
        t_cut = time.monotonic()
        if action == "link_down":
            sh("ip", "-n", nss[0], "link", "set", "va", "down")
            left = ("server", "client")
        else:
            victim = action.split("_")[1]
            procs[victim].send_signal(signal.SIGKILL)
            procs[victim].wait()
            left = ("client",) if victim == "server" else ("server",)
        for who in left:
            survivor_ok("%s %s" % (name, test), who, procs[who], logs[who][0], logs[who][1],
                        t_cut, failures)
    finally:
        for p in procs.values():
            if p.poll() is None:
                p.kill()
                p.wait()
        if action == "link_down":
            sh("ip", "-n", nss[0], "link", "set", "va", "up", check=False)


def afpacket_setup():
    tag = str(os.getpid())
    a, b = netns.add("rlpla" + tag, "rlplb" + tag)
    netns.veth(a, "va", b, "vb")
    for ns, dev, ip in ((a, "va", SERVER_IP), (b, "vb", CLIENT_IP)):
        sh("ip", "-n", ns, "addr", "add", ip + "/24", "dev", dev)
        sh("ip", "-n", ns, "link", "set", dev, "up")
    return a, b


def main():
    if len(sys.argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    rocelab = os.path.abspath(sys.argv[1])
    names = sys.argv[2:] or CASES
    bad = [n for n in names if n not in CASES]
    if bad:
        print("unknown case(s) %s (known: %s)" % (bad, CASES), file=sys.stderr)
        return 2
    tmp = tempfile.mkdtemp(prefix="rocelab-peer-loss-")
    failures, ran = [], 0
    netns.trap_signals()
    try:
        have_memif = live_memif.memif_probe(rocelab, tmp) is None
        why = "not root" if os.geteuid() != 0 else netns.usable()
        nss = None
        if not why and any(n.startswith("afpacket") for n in names):
            nss = afpacket_setup()
        for n in names:
            if n.startswith("memif") and not have_memif:
                print("%-22s skipped: no memif here" % n)
                continue
            if n.startswith("afpacket") and nss is None:
                print("%-22s skipped: network namespaces cannot be used here: %s" % (n, why))
                continue
            for test in TESTS:
                run_case(rocelab, tmp, n, test, nss, failures)
                ran += 1
    finally:
        netns.cleanup()
        shutil.rmtree(tmp, ignore_errors=True)
    for f in failures:
        print("FAIL " + f)
    print("%d case(s), %d failure(s)" % (ran, len(failures)))
    if ran == 0:
        return SKIP
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
