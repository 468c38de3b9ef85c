#!/usr/bin/python3
"""dpdk-dumpcap attaches to a running rocelab started with --eal --pdump: rocelab replays a
capture out of net_pcap in a loop, dpdk-dumpcap (a DPDK secondary process) captures 20 (or a burst more) of its
frames, and they must be frames of that capture.

pdump needs hugepages (docs/live.md). Where none are free, the test reserves 128 x 2 MiB and
mounts a hugetlbfs for the run, and puts both back after; it skips (77) where it cannot (not
root, no dpdk-dumpcap, the kernel refuses the pages). No other test needs hugepages.

Usage: pdump.py ROCELAB SHARED_PCAP_DIR
"""
import os
import re
import signal
import subprocess
import sys
import tempfile
import time

SKIP = 77
NR = "/proc/sys/vm/nr_hugepages"


def meminfo(key):
    for line in open("/proc/meminfo"):
        if line.startswith(key + ":"):
            return int(line.split()[1])
    return 0


def hugetlbfs_mounted():
    return any(l.split()[2] == "hugetlbfs" for l in open("/proc/mounts") if len(l.split()) > 2)


def main():
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    rocelab, shared = sys.argv[1], sys.argv[2]
    src = os.path.join(shared, "rxe", "rc_write_bw.pcap")
    if os.geteuid() != 0:
        print("pdump: not root: skipped")
        return SKIP
    if subprocess.run(["sh", "-c", "command -v dpdk-dumpcap"], stdout=subprocess.DEVNULL).returncode:
        print("pdump: no dpdk-dumpcap (Debian package dpdk): skipped")
        return SKIP
    if not os.path.exists(src):
        print("pdump: no %s: skipped" % src)
        return SKIP
    old_nr = int(open(NR).read())
    mnt = None
    with tempfile.TemporaryDirectory() as tmp:
        try:
            if meminfo("HugePages_Free") < 64:
                try:
                    open(NR, "w").write(str(old_nr + 128))
                except OSError as e:
                    print("pdump: cannot reserve hugepages (%s): skipped" % e)
                    return SKIP
                if meminfo("HugePages_Free") < 64:
                    print("pdump: the kernel gave no hugepages: skipped")
                    return SKIP
            if not hugetlbfs_mounted():
                mnt = os.path.join(tmp, "huge")
                os.mkdir(mnt)
                if subprocess.run(["mount", "-t", "hugetlbfs", "nodev", mnt]).returncode:
                    mnt = None
                    print("pdump: cannot mount hugetlbfs: skipped")
                    return SKIP
            return run(rocelab, src, tmp)
        finally:
            if mnt is not None:
                subprocess.run(["umount", mnt])
            if int(open(NR).read()) != old_nr:
                open(NR, "w").write(str(old_nr))


def run(rocelab, src, tmp):
    out = os.path.join(tmp, "d.pcapng")
    log = open(os.path.join(tmp, "rocelab.log"), "w+")
    prim = subprocess.Popen([rocelab, "--eal", "--pdump", "replay", src, "--dev",
                             "net_pcap0,tx_pcap=/dev/null", "--loop", "0", "--speed", "20"],
                            stdout=log, stderr=subprocess.STDOUT)
    try:
        prefix = None
        for _ in range(100):
            log.seek(0)
            m = re.search(r"pdump on: dpdk-dumpcap --file-prefix=(\S+)", log.read())
            if m or prim.poll() is not None:
                prefix = m.group(1) if m else None
                break
            time.sleep(0.1)
        if prefix is None:
            log.seek(0)
            print("FAIL: rocelab --eal --pdump did not start pdump:\n" + log.read())
            return 1
        time.sleep(1)
        d = subprocess.run(["dpdk-dumpcap", "--file-prefix=" + prefix, "-i", "net_pcap0", "-w",
                            out, "-c", "20"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           text=True, timeout=60)
    finally:
        prim.send_signal(signal.SIGINT)
        try:
            prim.wait(timeout=30)
        except subprocess.TimeoutExpired:
            prim.kill()
            prim.wait()
    log.seek(0)
    text = log.read()
    print("pdump: dpdk-dumpcap exit %d: %s" % (d.returncode, d.stdout.strip().splitlines()[-1:]))
    t = subprocess.run(["tshark", "-r", out, "-T", "fields", "-e", "frame.len"],
                       stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    n = len(t.stdout.split())
    print("pdump: %d frames in dpdk-dumpcap's file; rocelab: %s" % (n, text.strip().splitlines()[-1:]))
    if d.returncode != 0 or n < 20:  # -c counts whole bursts: 20 or a few more
        print("FAIL: expected dpdk-dumpcap to capture at least 20 frames:\n" + d.stdout)
        return 1
    if prim.returncode != 0:
        print("FAIL: rocelab exit %d:\n%s" % (prim.returncode, text))
        return 1
    print("pdump: OK")
    return 0


if __name__ == "__main__":
    sys.exit(main())
