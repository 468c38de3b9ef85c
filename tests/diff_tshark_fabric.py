#!/usr/bin/env python3
# The fabric's capture, checked by tshark: `rocelab run demo-incast` taps the sw0-sw1 link, where
# sw1 pauses sw0 with 802.1Qbb PFC frames. tshark must decode every PFC frame as a MAC Control
# class-based flow control frame for priority 3, XOFF frames with the configured quanta (65535)
# and XON frames with 0, as many XOFFs as the switch counted; and every RoCE frame of the capture
# must pass rocelab's ICRC check (and tshark must find nothing malformed).
#   diff_tshark_fabric.py ROCELAB     exit 0 all good, 1 a check failed, 77 tshark missing
import csv
import json
import os
import shutil
import subprocess
import sys
import tempfile


def main():
    rocelab = sys.argv[1]
    if shutil.which("tshark") is None:
        print("tshark not found: skipped")
        return 77
    failures = []
    with tempfile.TemporaryDirectory() as out:
        subprocess.run([rocelab, "run", "demo-incast", "--out", out, "--quiet",
                        "--set", "capture.links=sw0-sw1"], check=True)
        pcap = os.path.join(out, "capture.pcap")
        tsv = subprocess.run(
            ["tshark", "-r", pcap, "-Y", "macc.opcode == 0x0101", "-T", "fields",
             "-e", "eth.src", "-e", "eth.dst", "-e", "macc.cbfc.enbv",
             "-e", "macc.cbfc.pause_time.c3", "-e", "_ws.expert"],
            check=True, capture_output=True, text=True).stdout
        xoff = xon = 0
        for line in tsv.splitlines():
            src, dst, enbv, quanta, expert = (line.split("\t") + [""] * 5)[:5]
            if dst != "01:80:c2:00:00:01":
                failures.append(f"PFC frame to {dst}, not the MAC Control address")
            if int(enbv, 0) != 0x08:
                failures.append(f"class-enable vector {enbv}, expected priority 3 only (0x0008)")
            if int(quanta) == 65535:
                xoff += 1
            elif int(quanta) == 0:
                xon += 1
            else:
                failures.append(f"quanta {quanta}: neither XOFF (65535) nor XON (0)")
            if expert:
                failures.append(f"tshark expert info on a PFC frame: {expert}")
        counted = 0
        with open(os.path.join(out, "ports.csv")) as f:
            for row in csv.DictReader(f):
                if row["port"] == "sw1 p0":
                    counted += int(row["pause tx"])
        if xoff == 0:
            failures.append("no XOFF frame in the capture")
        if xoff != counted:
            failures.append(f"tshark decodes {xoff} XOFF frames, sw1 p0 counted {counted}")
        bad = subprocess.run(["tshark", "-r", pcap, "-Y", "_ws.malformed"],
                             capture_output=True, text=True).stdout.strip()
        if bad:
            failures.append("tshark finds malformed frames:\n" + bad[:500])
        # every RoCE frame's ICRC, checked by rocelab's own dissector
        rows = subprocess.run([rocelab, "dissect", "--format", "jsonl", pcap], check=True,
                              capture_output=True, text=True).stdout.splitlines()
        roce = [json.loads(r) for r in rows]
        roce = [r for r in roce if r.get("bth")]
        wrong = [r for r in roce if r.get("icrc_ok") is False]
        if len(roce) < 1000:
            failures.append(f"only {len(roce)} RoCE frames on the tapped link")
        if wrong:
            failures.append(f"{len(wrong)} RoCE frames with a wrong ICRC")
        print(f"PFC frames: {xoff} XOFF + {xon} XON (switch counted {counted} XOFF); "
              f"{len(roce)} RoCE frames, ICRCs checked")

    for f in failures:
        print("FAIL:", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
