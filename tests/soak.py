#!/usr/bin/env python3
"""Soak: `rocelab switch` and a `rocelab perf --serve-forever` host for minutes, under a load above
the switch's egress rate and with random loss, with clients one after another through the
switch. Outside the default suite (it takes minutes): run it by hand or from bench/.

   host A (perf write_bw -s 64K --serve-forever)                memif client of port 0
      |  memif
   rocelab switch --rate RATE --loss P                          two memif server ports
      |  memif
   host B (perf write_bw -n N --verify, one after another)     memif client of port 1

At the end it checks:
  - every client passed --verify, and the host served them all (none failed);
  - the resident memory of the switch and of the host stayed flat: after the first fifth of
    the run it grew by at most --rss-slack MiB;
  - every mbuf came back: no process said "never came back" when it closed its engine;
  - the counters add up: every frame a host put on its memif ring was received by the switch
    port at the other end (the host's `port: N frames out` summed over its runs equals the
    switch port's rx_frames), each frame the switch took in went somewhere (rx_frames =
    to_switch + flooded + filtered + drop_loss + drop_psn + what the other port bridged), and
    the --loss drops are near P of what it received;
  - the switch and the host stop on SIGTERM, with exit 0.

Usage: soak.py ROCELAB [--seconds S] [--rate R] [--loss P] [--rss-slack MIB]
  default: 600 s, 1G egress (memif offers ~10-40 Gb/s), loss 0.001, slack 8 MiB.
Exit 0 passed, 1 failed, 77 no memif here.
"""
import argparse
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

SKIP = 77
PORT = "18741"
MEMIF = "net_memif{},role={},socket={},bsize=8192,rsize=12"
IP_A, IP_B = "10.86.0.1", "10.86.0.2"
TEST, SIZE = "write_bw", 65536		# the host's and every client's (perftest: the same)
PORT_LINE = re.compile(r"^ port: (\d+) frames out, (\d+) in ", re.M)
COUNTER = re.compile(r"^\s+(\w+): (\d+)$")


def rss_kib(pid):
    try:
        with open("/proc/%d/status" % pid) as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return None


def switch_counters(text):
    """{port: {counter: value}} from the switch's ethtool -S style lines."""
    ports, cur = {}, None
    for line in text.splitlines():
        m = re.match(r"^port (\d+) ", line)
        if m:
            cur = ports.setdefault(int(m.group(1)), {})
            continue
        m = COUNTER.match(line)
        if m and cur is not None:
            cur[m.group(1)] = cur.get(m.group(1), 0) + int(m.group(2))
    return ports


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("rocelab")
    ap.add_argument("--seconds", type=float, default=600)
    ap.add_argument("--rate", default="1G")
    ap.add_argument("--loss", type=float, default=0.001)
    ap.add_argument("--rss-slack", type=float, default=8, help="MiB")
    a = ap.parse_args()
    rocelab = os.path.abspath(a.rocelab)
    tmp = tempfile.mkdtemp(prefix="rocelab-soak-")
    sa, sb = os.path.join(tmp, "a.sock"), os.path.join(tmp, "b.sock")
    procs, failures = [], []
    rng = random.Random(1)

    def start(args, name):
        out = open(os.path.join(tmp, name + ".log"), "w+")
        p = subprocess.Popen(args, stdout=out, stderr=subprocess.STDOUT, text=True)
        procs.append(p)
        return p, out

    def wait_for(out, text, secs):
        end = time.monotonic() + secs
        while time.monotonic() < end:
            out.seek(0)
            if text in out.read():
                return True
            time.sleep(0.1)
        return False

    try:
        sw, sw_out = start([rocelab, "switch", "--port", MEMIF.format(0, "server", sa),
                            "--port", MEMIF.format(1, "server", sb), "--rate", a.rate,
                            "--loss", str(a.loss), "--seed", "7"], "switch")
        if not wait_for(sw_out, "forwarding", 60):
            sw_out.seek(0)
            print("soak: the switch did not start (no memif here?):\n" + sw_out.read())
            return SKIP
        test, size = TEST, SIZE
        host, host_out = start([rocelab, "perf", test, "--serve-forever", "-p", PORT,
                                "-s", str(size), "--verify",
                                "--timeout", "60", "--dev", MEMIF.format(0, "client", sa),
                                "--ip", IP_A], "host")
        if not wait_for(host_out, "Waiting for client", 60):
            host_out.seek(0)
            failures.append("the host did not start:\n" + host_out.read())
            return 1
        t0 = time.monotonic()
        samples = []		# (t, switch kib, host kib)
        clients = client_out_frames = 0
        next_sample = 0.0
        print("soak: %.0f s through a %s switch with --loss %g; RSS sampled every 10 s" %
              (a.seconds, a.rate, a.loss))
        while time.monotonic() - t0 < a.seconds:
            n = rng.choice([200, 1000, 5000])	# 13 to 328 MB a client
            r = subprocess.run(["timeout", "300", rocelab, "perf", test, "-p", PORT, "--verify",
                                "--timeout", "60", "-s", str(size), "-n", str(n),
                                "--dev", MEMIF.format(0, "client", sb), "--ip", IP_B,
                                "127.0.0.1"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               text=True)
            clients += 1
            m = PORT_LINE.search(r.stdout)
            if r.returncode != 0 or "checked: OK" not in r.stdout or m is None:
                failures.append("client %d (%s -s %d): exit %d\n%s" %
                                (clients, test, size, r.returncode, r.stdout[-1500:]))
                break
            client_out_frames += int(m.group(1))
            if "never came back" in r.stdout:
                failures.append("client %d: mbufs never came back\n%s" % (clients, r.stdout))
            now = time.monotonic() - t0
            if now >= next_sample:
                samples.append((now, rss_kib(sw.pid), rss_kib(host.pid)))
                print("  %5.0f s  %4d clients  RSS switch %6.1f MiB  host %6.1f MiB" %
                      (now, clients, samples[-1][1] / 1024, samples[-1][2] / 1024))
                sys.stdout.flush()
                next_sample = now + 10
        samples.append((time.monotonic() - t0, rss_kib(sw.pid), rss_kib(host.pid)))
        for p, name in ((host, "host"), (sw, "switch")):
            p.send_signal(signal.SIGTERM)
            try:
                rc = p.wait(timeout=60)
            except subprocess.TimeoutExpired:
                p.kill()
                rc = "killed after 60 s"
            if rc != 0:
                failures.append("the %s did not stop with exit 0 on SIGTERM: %s" % (name, rc))
        host_out.seek(0)
        sw_out.seek(0)
        htext, stext = host_out.read(), sw_out.read()
        for name, text in (("host", htext), ("switch", stext)):
            if "never came back" in text:
                failures.append("%s: mbufs never came back:\n%s" % (name, text[-2000:]))
        m = re.search(r"(\d+) client\(s\) served, (\d+) failed", htext)
        if m is None or int(m.group(1)) != clients or int(m.group(2)) != 0:
            failures.append("the host's tally is not %d served, 0 failed: %s" %
                            (clients, m.group(0) if m else htext[-1500:]))
        # memory: flat after the first fifth
        warm = [s for s in samples if s[0] >= a.seconds / 5] or samples[-1:]
        for i, name in ((1, "switch"), (2, "host")):
            base, top = warm[0][i], max(s[i] for s in warm)
            if base is None or top is None:
                failures.append("%s: no RSS samples" % name)
            elif (top - base) / 1024 > a.rss_slack:
                failures.append("%s: RSS grew %.1f MiB after warm-up (%.1f -> %.1f MiB)" %
                                (name, (top - base) / 1024, base / 1024, top / 1024))
        # the counters
        ports = switch_counters(stext)
        host_out_frames = sum(int(x) for x, _ in PORT_LINE.findall(htext))
        for port, frames, name in ((0, host_out_frames, "host A"),
                                   (1, client_out_frames, "the clients")):
            got = ports.get(port, {}).get("rx_frames")
            if got != frames:
                failures.append("switch port %d received %s frames, %s sent %d: %s" %
                                (port, got, name, frames, ports.get(port)))
        for port, c in ports.items():
            other = ports.get(1 - port, {})
            went = sum(c.get(k, 0) for k in ("to_switch", "flooded", "filtered", "drop_loss",
                                              "drop_psn")) + other.get("tx_bridged", 0)
            if c.get("rx_frames") != went:
                failures.append("switch port %d took in %s frames, %d went somewhere: %s" %
                                (port, c.get("rx_frames"), went, c))
        received = sum(p.get("rx_frames", 0) for p in ports.values())
        lost = sum(p.get("drop_loss", 0) for p in ports.values())
        if a.loss > 0 and received > 10000 and not 0.3 * a.loss < lost / received < 3 * a.loss:
            failures.append("--loss %g dropped %d of %d frames" % (a.loss, lost, received))
        print("soak: %d clients in %.0f s; switch received %d frames, dropped %d by --loss; "
              "host A sent %d, the clients %d" % (clients, samples[-1][0], received, lost,
                                                  host_out_frames, client_out_frames))
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()
        shutil.rmtree(tmp, ignore_errors=True)
    for f in failures:
        print("FAIL " + f)
    print("soak: %s" % ("%d failure(s)" % len(failures) if failures else "passed"))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
