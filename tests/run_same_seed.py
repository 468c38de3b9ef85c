#!/usr/bin/env python3
# `rocelab run` twice with the same seed writes the same bytes in every file (report.html,
# metrics.csv, counters.txt, flows.csv, ports.csv, capture.pcap): docs/scenarios.md promises it.
# A lossy scenario and an incast with DCQCN, so that the random draws and the reaction points
# are in play; and another seed must change the lossy run's capture. The report's queue chart
# is in KB for the lossy run's short queues and in MB for the incasts' megabytes.
#   run_same_seed.py ROCELAB     exit 0 all good, 1 a check failed
import os
import subprocess
import sys
import tempfile

CASES = [
    ("demo-lossy", ["--set", "switch.pfc=off", "--set", "topology.loss=1e-4"]),
    ("demo-incast", ["--set", "nic.cc=dcqcn"]),
]


def run(rocelab, out, name, args, seed):
    subprocess.run([rocelab, "run", name, "--out", out, "--quiet", "--seed", str(seed)] + args,
                   check=True)
    files = {}
    for n in sorted(os.listdir(out)):
        with open(os.path.join(out, n), "rb") as f:
            files[n] = f.read()
    return files


def main():
    rocelab = sys.argv[1]
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        for name, args in CASES:
            a = run(rocelab, os.path.join(tmp, name + "-a"), name, args, 7)
            b = run(rocelab, os.path.join(tmp, name + "-b"), name, args, 7)
            if sorted(a) != sorted(b) or len(a) != 6:
                failures.append(f"{name}: files {sorted(a)} and {sorted(b)}")
            for n in a:
                if a[n] != b.get(n):
                    failures.append(f"{name}: {n} differs between two runs with seed 7")
            print(f"{name}: {len(a)} files, the same bytes twice")
            if name == "demo-lossy":
                c = run(rocelab, os.path.join(tmp, name + "-c"), name, args, 8)
                if c["capture.pcap"] == a["capture.pcap"]:
                    failures.append("demo-lossy: seeds 7 and 8 gave the same capture")
            unit = b'"label">queue (KB)<' if name == "demo-lossy" else b'"label">queue (MB)<'
            if unit not in a["report.html"]:
                failures.append(f"{name}: its queue chart is not labelled {unit.decode()}")
    for f in failures:
        print("FAIL:", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
