#!/usr/bin/env python3
"""Two rocelab processes over memif (shared memory, one process the memif server, the other
the client, sockets in a temporary directory) run every perftest test with --verify: directly
(direct_TEST) and through `rocelab switch` with two memif ports (switch_TEST: each host is the
memif client of one of the switch's ports). perftest's TCP exchange runs over loopback; ARP and
RoCE cross memif (and the switch). memif has no wire MTU: rocelab takes it as 9000, so the IB
MTU is 4096 (bsize=8192: one buffer per frame), which the test checks in the banner. Checks as
live_switch.py: exit codes, result rows, the verify line, and through the switch that it
forwarded at least the frames the test needs and dropped nothing.

Usage: live_memif.py ROCELAB [CASE ...]; exit 77 (skip) when this rocelab has no memif driver.
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
from live_switch import (BW_ROW, LAT_ROW, VERIFY_OK, parse_counters,  # noqa: E402
                         total)

SKIP = 77
SIZE = 65536
ITERS = 200
IB_MTU = 4096
SERVER_IP, CLIENT_IP = "10.79.0.1", "10.79.0.2"
# rsize=12: 4096 descriptors; memif's default 1024 fills while the peer is off its core, and
# the sender's port then drops what does not fit (retransmitted, but slow)
MEMIF = "net_memif{},role={},socket={},bsize=8192,rsize=12"
TESTS = {"write_bw": SIZE, "read_bw": SIZE, "send_bw": SIZE, "atomic_bw": 8,
         "write_lat": 64, "read_lat": 64, "send_lat": 64}
CASES = ["direct_" + t for t in TESTS] + ["switch_" + t for t in TESTS]


def run_case(rocelab, tmp, name, failures):
    via_switch, test = name.startswith("switch_"), name.split("_", 1)[1]
    size = TESTS[test]
    sa, sb = os.path.join(tmp, name + "-a.sock"), os.path.join(tmp, name + "-b.sock")
    sw, sw_out = None, ""
    if via_switch:
        sw = subprocess.Popen([rocelab, "switch", "--port", MEMIF.format(0, "server", sa),
                               "--port", MEMIF.format(1, "server", sb)],
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        first = ""
        for _ in range(20):	# drivers may log a line or two before it is up
            first += sw.stdout.readline()
            if "forwarding" in first or sw.poll() is not None:
                break
        if "forwarding" not in first:
            sw.kill()
            sw.wait()
            failures.append("%s: the switch did not start: %s%s" % (name, first,
                                                                    sw.stdout.read()))
            return
        srv_dev, cli_dev = MEMIF.format(0, "client", sa), MEMIF.format(0, "client", sb)
    else:
        srv_dev, cli_dev = MEMIF.format(0, "server", sa), MEMIF.format(0, "client", sa)
    common = [rocelab, "perf", test, "--verify", "-s", str(size), "-n", str(ITERS),
              "--timeout", "30"]
    srv = subprocess.Popen(["timeout", "60"] + common + ["--dev", srv_dev, "--ip", SERVER_IP],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    time.sleep(0.5)
    t0 = time.time()
    cli = subprocess.run(["timeout", "60"] + common + ["--dev", cli_dev, "--ip", CLIENT_IP,
                                                       "127.0.0.1"],
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    srv_out = srv.communicate(timeout=70)[0]
    elapsed = time.time() - t0
    if sw is not None:
        sw.send_signal(signal.SIGTERM)
        try:
            sw_out = first + sw.communicate(timeout=20)[0]
        except subprocess.TimeoutExpired:
            sw.kill()
            sw_out = sw.communicate()[0]
            failures.append("%s: the switch did not stop on SIGTERM" % name)
    before = len(failures)
    for side, rc, out in (("server", srv.returncode, srv_out), ("client", cli.returncode,
                                                               cli.stdout)):
        if rc != 0:
            failures.append("%s %s: exit %d\n%s" % (name, side, rc, out))
        elif VERIFY_OK not in out:
            failures.append("%s %s: no '%s'\n%s" % (name, side, VERIFY_OK, out))
        elif "Mtu             : %d[B]" % IB_MTU not in out:
            failures.append("%s %s: the IB MTU is not %d\n%s" % (name, side, IB_MTU, out))
    row = (LAT_ROW if test.endswith("_lat") else BW_ROW).findall(cli.stdout)
    want = (ITERS - 1, ITERS) if test == "write_lat" else (ITERS,)
    if not row or int(row[0][0]) != size or int(row[0][1]) not in want:
        failures.append("%s: the client's result row is not %d bytes x %d\n%s" %
                        (name, size, ITERS, cli.stdout))
    note = ""
    if sw is not None:
        ports = parse_counters(sw_out)
        if sw.returncode != 0 or sorted(ports) != [0, 1]:
            failures.append("%s: the switch exited %s without both ports' counters\n%s" %
                            (name, sw.returncode, sw_out))
        else:
            per_msg = max(1, -(-size // IB_MTU))
            data_port = 1 if test == "read_bw" else 0
            need = ITERS * (per_msg if test.endswith("_bw") else 1)
            # through the queues, or flooded before the destination was learned, or bridged
            fwd = sum(ports[data_port].get(k, 0)
                      for k in ("tx_prio0_frames", "tx_flood", "tx_bridged"))
            if fwd < need:
                failures.append("%s: the switch forwarded %d frames, the test needs %d" %
                                (name, fwd, need))
            drops = {k: total(ports, k) for k in ("rx_drop_no_route", "rx_drop_malformed",
                                                  "tx_dropped", "rx_queue_full", "drop_nombuf")}
            if any(drops.values()):
                failures.append("%s: the switch dropped frames: %s" % (name, drops))
            note = "switch forwarded %d, flooded %d" % (fwd, total(ports, "flooded"))
    print("%-16s %s %.1f s %s %s" % (name, "ok" if len(failures) == before else "FAILED",
                                     elapsed, row[0][:4] if row else "-", note))
    sys.stdout.flush()


def memif_probe(rocelab, tmp):
    """None if this rocelab can open memif ports (a switch with two, for 10 ms), else why not."""
    probe = subprocess.run([rocelab, "switch", "--port", MEMIF.format(0, "server",
                                                                     tmp + "/probe.sock"),
                            "--port", MEMIF.format(1, "server", tmp + "/probe2.sock"),
                            "--duration", "0.01"], stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True, timeout=60)
    if probe.returncode == 0:
        return None
    return "no memif here: %s" % probe.stdout.strip().splitlines()[-1:]


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
    tmp = tempfile.mkdtemp(prefix="rocelab-live-memif-")
    try:
        why = memif_probe(rocelab, tmp)
        if why:
            print("skip: %s" % why)
            return SKIP
        failures = []
        for n in names:
            run_case(rocelab, tmp, n, failures)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    for f in failures:
        print("FAIL " + f)
    print("%d case(s), %d failure(s)" % (len(names), len(failures)))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
