#!/usr/bin/env python3
# Capture check: what `rocelab perf --pcap` writes under loss decodes cleanly in `rocelab dissect`
# and in tshark, every ICRC is right (recomputed here with zlib, independently of rocelab), and the
# retransmissions are visible (RC; UC and UD runs too, whose losses stay lost). perf -a writes every size into one capture, in time order;
# --snaplen cuts each frame where asked and keeps its length, and tshark reads the cut file.
#   diff_tshark_perf.py ROCELAB     exit 0 all good, 1 a check failed, 77 tshark missing
import json
import os
import shutil
import subprocess
import sys
import tempfile
import zlib

RUNS = [
    ["write_bw", "-n", "300", "-s", "16384", "--loss", "0.01", "--seed", "3"],
    ["read_bw", "-n", "300", "-s", "16384", "--loss", "0.01", "--seed", "4"],
    # unreliable: what is lost stays lost (no retransmission to see); UD's payloads travel by
    # reference, its receives fill the GRH area from the frame's headers
    ["write_bw", "-c", "UC", "-n", "300", "-s", "16384", "--loss", "0.01", "--seed", "5"],
    ["send_bw", "-c", "UD", "-n", "300", "-s", "1024", "--loss", "0.01", "--seed", "6"],
]


def icrc(frame):
    """RoCEv2 ICRC over IPv4 (IBA A17.3.3): CRC-32 of 8 bytes of 1s, then the IP header with
    TOS, TTL and checksum masked to 1s, the UDP header with its checksum masked, the BTH with
    its reserved byte (resv8a) masked, and the rest up to the ICRC."""
    ip = bytearray(frame[14:34])
    ip[1] = 0xFF
    ip[8] = 0xFF
    ip[10:12] = b"\xff\xff"
    udp = bytearray(frame[34:42])
    udp[6:8] = b"\xff\xff"
    bth = bytearray(frame[42:54])
    bth[4] = 0xFF
    data = b"\xff" * 8 + bytes(ip) + bytes(udp) + bytes(bth) + frame[54:-4]
    return zlib.crc32(data) & 0xFFFFFFFF


def pcap_frames(path):
    """Frames of a classic little-endian pcap (what rocelab writes)."""
    with open(path, "rb") as f:
        raw = f.read()
    assert raw[:4] in (b"\xd4\xc3\xb2\xa1", b"\x4d\x3c\xb2\xa1"), "not a little-endian pcap"
    off = 24
    while off < len(raw):
        incl = int.from_bytes(raw[off + 8:off + 12], "little")
        yield raw[off + 16:off + 16 + incl]
        off += 16 + incl


def fail(msg):
    print("FAIL " + msg)
    return 1


def check(rocelab, args, pcap):
    bad = 0
    r = subprocess.run([rocelab, "perf"] + args + ["--verify", "--pcap", pcap],
                       capture_output=True, text=True)
    if r.returncode != 0:
        return fail("%s: rocelab perf exited %d: %s" % (args[0], r.returncode, r.stderr.strip()))
    print(r.stdout.strip().splitlines()[-2].strip())

    # rocelab's summary: nothing undecodable, no ICRC error, retransmissions counted
    s = subprocess.run([rocelab, "dissect", "--summary", pcap], capture_output=True, text=True)
    if s.returncode != 0:
        return fail("%s: rocelab dissect --summary exited %d" % (args[0], s.returncode))
    lines = s.stdout.splitlines()
    head = lines[0].split()
    allrow = [l.split() for l in lines if l.startswith("all")][0]
    col = dict(zip(head, allrow))
    total = [l for l in lines if l.startswith("frames:")][0]
    print("%s summary: %s; retx %s, icrc errors %s" % (args[0], total, col["retx"], col["icrc"]))
    if " 0 undecodable, 0 with other faults" not in total:
        bad += fail("%s: summary reports bad frames: %s" % (args[0], total))
    if int(col["icrc"]) != 0:
        bad += fail("%s: summary counts %s ICRC errors" % (args[0], col["icrc"]))
    reliable = "-c" not in args or args[args.index("-c") + 1] == "RC"
    if reliable and int(col["retx"]) <= 0:
        bad += fail("%s: no retransmission visible in the summary" % args[0])

    # rocelab's jsonl: every frame RoCEv2 with icrc_ok; ICRCs recomputed here agree
    j = subprocess.run([rocelab, "dissect", "--format=jsonl", pcap], capture_output=True,
                       text=True, check=True)
    recs = [json.loads(l) for l in j.stdout.splitlines() if l.strip()]
    frames = list(pcap_frames(pcap))
    if len(recs) != len(frames):
        bad += fail("%s: %d jsonl records for %d frames" % (args[0], len(recs), len(frames)))
    for rec, fr in zip(recs, frames):
        want = icrc(fr)
        stored = int.from_bytes(fr[-4:], "little")
        if rec.get("kind") != "rocev2" or rec.get("icrc_ok") is not True or stored != want:
            bad += fail("%s frame %d: kind %s icrc_ok %r stored %08x computed %08x" %
                        (args[0], rec.get("n"), rec.get("kind"), rec.get("icrc_ok"), stored, want))
            break

    # tshark: every frame is InfiniBand over UDP, no malformed frame, no expert warning or error
    t = subprocess.run(["tshark", "-r", pcap, "-T", "fields", "-e", "frame.number",
                        "-e", "infiniband.bth.opcode", "-e", "infiniband.invariant.crc",
                        "-e", "_ws.malformed", "-e", "_ws.expert.severity"],
                       capture_output=True, text=True)
    if t.returncode != 0:
        return bad + fail("%s: tshark exited %d: %s" % (args[0], t.returncode, t.stderr.strip()))
    rows = [l.split("\t") for l in t.stdout.splitlines()]
    if len(rows) != len(frames):
        bad += fail("%s: tshark decoded %d of %d frames" % (args[0], len(rows), len(frames)))
    for row, fr in zip(rows, frames):
        num, op, crc, malformed, sev = (row + [""] * 5)[:5]
        if op == "" or malformed != "":
            bad += fail("%s frame %s: tshark: opcode %r malformed %r" % (args[0], num, op, malformed))
            break
        # severities: 0x00600000 warning, 0x00800000 error (epan/proto.h PI_WARN, PI_ERROR)
        if any(int(x, 0) >= 0x00600000 for x in sev.split(",") if x):
            bad += fail("%s frame %s: tshark expert severity %s" % (args[0], num, sev))
            break
        # tshark shows the stored ICRC bytes as a big-endian number
        if int(crc, 16) != int.from_bytes(fr[-4:], "big"):
            bad += fail("%s frame %s: tshark ICRC %s differs from the frame's" % (args[0], num, crc))
            break
    print("%s: %d frames, tshark and rocelab agree, ICRCs correct" % (args[0], len(frames)))
    return bad


def check_all_and_snaplen(rocelab, d):
    bad = 0
    pcap = os.path.join(d, "all.pcap")
    r = subprocess.run([rocelab, "perf", "write_bw", "-a", "-n", "5", "--pcap", pcap],
                       capture_output=True, text=True)
    if r.returncode != 0:
        return fail("write_bw -a: rocelab perf exited %d: %s" % (r.returncode, r.stderr.strip()))
    j = subprocess.run([rocelab, "dissect", "--format=jsonl", pcap], capture_output=True,
                       text=True, check=True)
    recs = [json.loads(l) for l in j.stdout.splitlines() if l.strip()]
    sizes = sorted({rec["reth"]["dmalen"] for rec in recs if "reth" in rec})
    times = [rec["ts_ns"] for rec in recs]
    print("write_bw -a --pcap: %d frames, message sizes %s..%s (%d sizes)"
          % (len(recs), sizes[0] if sizes else "-", sizes[-1] if sizes else "-", len(sizes)))
    if sizes != [2 << k for k in range(23)]:
        bad += fail("write_bw -a: the capture holds message sizes %s, not 2 B to 8 MiB" % sizes)
    if any(b < a for a, b in zip(times, times[1:])):
        bad += fail("write_bw -a: the capture's times go backwards")
    # perftest keeps one QP pair for every size: its PSNs go on, nothing reads as resent
    s = subprocess.run([rocelab, "dissect", "--summary", pcap], capture_output=True, text=True,
                       check=True).stdout.splitlines()
    col = dict(zip(s[0].split(), [l.split() for l in s if l.startswith("all")][0]))
    flows = [l for l in s if l.startswith("RC")]
    print("write_bw -a --pcap: %d flows, %s retransmissions, %s gaps, %s open"
          % (len(flows), col["retx"], col["gaps"], col["open"]))
    if len(flows) != 2 or (col["retx"], col["gaps"], col["open"]) != ("0", "0", "0"):
        bad += fail("write_bw -a: the summary reads %d flows, %s retransmissions, %s gaps, %s "
                    "open: the sizes did not share one QP pair" % (len(flows), col["retx"],
                                                                   col["gaps"], col["open"]))
    small = os.path.join(d, "all64.pcap")
    r = subprocess.run([rocelab, "perf", "write_bw", "-a", "--all-max", "64", "-n", "5",
                        "--pcap", small], capture_output=True, text=True)
    rows = [l.split()[0] for l in r.stdout.splitlines() if l.split() and l.split()[0].isdigit()]
    print("write_bw -a --all-max 64: sizes %s" % rows)
    if r.returncode != 0 or rows != [str(2 << k) for k in range(6)]:
        bad += fail("write_bw -a --all-max 64: exit %d, sizes %s" % (r.returncode, rows))

    cut = os.path.join(d, "cut.pcap")
    r = subprocess.run([rocelab, "perf", "write_bw", "-n", "20", "-s", "8192", "--snaplen", "100",
                        "--pcap", cut], capture_output=True, text=True)
    if r.returncode != 0:
        return bad + fail("--snaplen: rocelab perf exited %d: %s" % (r.returncode, r.stderr.strip()))
    with open(cut, "rb") as f:
        raw = f.read()
    off, recs, short = 24, 0, 0
    if int.from_bytes(raw[16:20], "little") != 100:
        bad += fail("--snaplen: the file header's snapshot length is not 100")
    while off < len(raw):
        incl = int.from_bytes(raw[off + 8:off + 12], "little")
        orig = int.from_bytes(raw[off + 12:off + 16], "little")
        recs += 1
        short += incl < orig
        if incl != min(orig, 100):
            bad += fail("--snaplen 100: a record of %d bytes for a frame of %d" % (incl, orig))
            break
        off += 16 + incl
    t = subprocess.run(["tshark", "-r", cut, "-T", "fields", "-e", "infiniband.bth.psn"],
                       capture_output=True, text=True)
    psns = [l for l in t.stdout.splitlines() if l.strip()]
    print("--snaplen 100: %d frames, %d cut, tshark reads the PSN of %d" % (recs, short, len(psns)))
    if short < 40 or len(psns) != recs:
        bad += fail("--snaplen: %d of %d frames cut, tshark read %d PSNs" % (short, recs, len(psns)))
    return bad


def main():
    if len(sys.argv) != 2:
        print(__doc__ or "usage: diff_tshark_perf.py ROCELAB", file=sys.stderr)
        return 2
    if shutil.which("tshark") is None:
        print("SKIP: tshark not installed")
        return 77
    bad = 0
    with tempfile.TemporaryDirectory() as d:
        for args in RUNS:
            bad += check(sys.argv[1], args, os.path.join(d, args[0] + ".pcap"))
        bad += check_all_and_snaplen(sys.argv[1], d)
    print("FAIL" if bad else "OK")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
