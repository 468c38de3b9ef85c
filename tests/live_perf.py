#!/usr/bin/env python3
"""Two rocelab processes in two network namespaces joined by a veth pair (net_af_packet on
each end) run perftest's tests in real time with --verify, as perftest is used: a server and a
client that names it. Checks both exit 0, print one result row in perftest's columns with the
asked size and iteration count (and a non-zero rate), and report every byte checked.

Usage: live_perf.py ROCELAB [TEST ...]; exit 77 (skip) when not root or when namespaces or veth
pairs cannot be made. The namespaces (unique names) are deleted on every exit path.
"""
import os
import re
import signal
import subprocess
import sys

SKIP = 77
ITERS = 200
SIZE = 65536
# af_packet's default ring (512 frames) overflows when the kernel delivers faster than one
# process polls on a shared 2-core machine: a larger ring keeps the run free of loss.
DEVARGS = "net_af_packet0,iface={},framecnt=4096"
SERVER_IP, CLIENT_IP = "10.77.0.1", "10.77.0.2"
TESTS = ["write_bw", "read_bw", "send_bw", "write_lat"]

ns_made = []


def sh(*args, check=True):
    return subprocess.run(args, check=check, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          text=True)


def cleanup(*_):
    while ns_made:
        sh("ip", "netns", "del", ns_made.pop(), check=False)


def on_signal(signum, _frame):
    cleanup()
    sys.exit(128 + signum)


def setup(tag):
    a, b = "rlsrv" + tag, "rlcli" + tag
    for ns in (a, b):
        sh("ip", "netns", "add", ns)
        ns_made.append(ns)
        sh("ip", "-n", ns, "link", "set", "lo", "up")
    sh("ip", "link", "add", "va", "netns", a, "type", "veth", "peer", "name", "vb", "netns", b)
    for ns, dev, ip in ((a, "va", SERVER_IP), (b, "vb", CLIENT_IP)):
        sh("ip", "-n", ns, "addr", "add", ip + "/24", "dev", dev)
        sh("ip", "-n", ns, "link", "set", dev, "up")
    return a, b


BW_ROW = re.compile(r"^\s*(\d+)\s+(\d+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s*$")
LAT_ROW = re.compile(r"^\s*(\d+)\s+(\d+)" + r"\s+([\d.]+)" * 7 + r"\s*$")


def check_output(test, side, out, iters, size, failures):
    lat = test.endswith("_lat")
    rows = [m for m in ((LAT_ROW if lat else BW_ROW).match(l) for l in out.splitlines()) if m]
    what = "%s %s" % (test, side)
    if len(rows) != 1:
        failures.append("%s: expected one result row, found %d" % (what, len(rows)))
        return
    r = rows[0]
    if int(r.group(1)) != size:
        failures.append("%s: #bytes %s, expected %d" % (what, r.group(1), size))
    # write_lat's client waits for the server's first write, then times the round trips
    # between its own writes: one fewer
    want = iters - 1 if lat and side == "client" else iters
    if int(r.group(2)) != want:
        failures.append("%s: #iterations %s, expected %d" % (what, r.group(2), want))
    rate = float(r.group(4))
    if not rate > 0:
        failures.append("%s: %s is not positive" % (what, "t_max" if lat else "BW average"))
    if "verify: every byte and every completion checked: OK" not in out:
        failures.append("%s: no verify OK line" % what)
    if "Waiting for client" not in out and side == "server":
        failures.append("%s: no 'Waiting for client' banner" % what)
    print("%-9s %-6s %s" % (test, side, r.group(0).strip()))


def run_pair(rocelab, a, b, test, failures):
    size = 2 if test.endswith("_lat") else SIZE
    common = ["perf", test, "-s", str(size), "-n", str(ITERS), "--verify", "--timeout", "20"]
    srv = subprocess.Popen(["ip", "netns", "exec", a, rocelab] + common +
                           ["--dev", DEVARGS.format("va"), "--ip", SERVER_IP],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        cli = subprocess.run(["ip", "netns", "exec", b, rocelab] + common +
                             ["--dev", DEVARGS.format("vb"), "--ip", CLIENT_IP, SERVER_IP],
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                             timeout=90)
        sout, _ = srv.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        srv.kill()
        srv.communicate()
        failures.append("%s: timed out" % test)
        return
    for side, rc, out in (("server", srv.returncode, sout), ("client", cli.returncode, cli.stdout)):
        if rc != 0:
            failures.append("%s %s: exit %d\n%s" % (test, side, rc, out))
            continue
        check_output(test, side, out, ITERS, size, failures)


def main():
    if len(sys.argv) < 2:
        print(__doc__)
        return 2
    rocelab = os.path.abspath(sys.argv[1])
    tests = sys.argv[2:] or TESTS
    if os.geteuid() != 0:
        print("SKIP: needs root (network namespaces)")
        return SKIP
    for s in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(s, on_signal)
    tag = "%d" % os.getpid()
    try:
        try:
            a, b = setup(tag)
        except (subprocess.CalledProcessError, FileNotFoundError) as e:
            print("SKIP: cannot make namespaces and a veth pair: %s" %
                  (getattr(e, "stdout", "") or e))
            return SKIP
        failures = []
        for t in tests:
            run_pair(rocelab, a, b, t, failures)
    finally:
        cleanup()
    for f in failures:
        print("FAIL:", f)
    print("%d test(s), %d failure(s)" % (len(tests), len(failures)))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
