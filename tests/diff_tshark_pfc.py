#!/usr/bin/env python3
# Capture check of the switch: in an 8:1 incast captured on every link (tests/switch_pcap.c),
# tshark decodes the switch's PFC frames as 802.1Qbb with the configured quanta (XOFF) or 0
# (XON), as many as the switch counted; and the forwarded RoCEv2 frames (TTL 63) decode as
# InfiniBand with ICRCs that zlib recomputes (the ICRC masks the TTL the switch decremented).
#   diff_tshark_pfc.py SWITCH_PCAP     exit 0 all good, 1 a check failed, 77 tshark missing
import os
import shutil
import subprocess
import sys
import tempfile
import zlib


def icrc(frame):
    """RoCEv2 ICRC over IPv4 (IBA A17.3.3): CRC-32 of 8 bytes of 1s, the IP header with TOS,
    TTL and checksum masked to 1s, the UDP header with its checksum masked, the BTH with its
    reserved byte masked, then the rest up to the ICRC."""
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
    off = 24
    while off < len(raw):
        incl = int.from_bytes(raw[off + 8:off + 12], "little")
        yield raw[off + 16:off + 16 + incl]
        off += 16 + incl


def main():
    if len(sys.argv) != 2:
        print("usage: diff_tshark_pfc.py SWITCH_PCAP", file=sys.stderr)
        return 2
    if shutil.which("tshark") is None:
        print("SKIP: tshark not installed")
        return 77
    bad = 0
    with tempfile.TemporaryDirectory() as d:
        pcap = os.path.join(d, "incast.pcap")
        r = subprocess.run([sys.argv[1], pcap], capture_output=True, text=True)
        if r.returncode != 0:
            print("FAIL switch_pcap exited %d: %s" % (r.returncode, r.stderr.strip()))
            return 1
        w = r.stdout.split()
        want = dict(zip(w[0::2], (int(x) for x in w[1::2])))
        print(r.stdout.strip())
        t = subprocess.run(["tshark", "-r", pcap, "-Y", "macc", "-T", "fields",
                            "-e", "macc.opcode", "-e", "macc.cbfc.enbv",
                            "-e", "macc.cbfc.pause_time.c3", "-e", "eth.dst",
                            "-e", "_ws.malformed", "-e", "_ws.expert.severity"],
                           capture_output=True, text=True)
        if t.returncode != 0:
            print("FAIL tshark exited %d: %s" % (t.returncode, t.stderr.strip()))
            return 1
        xoff = xon = 0
        for row in (l.split("\t") for l in t.stdout.splitlines()):
            op, cev, q, dst, malformed, sev = (row + [""] * 6)[:6]
            if int(op, 0) != 0x0101 or int(cev, 0) != 0x08 or dst != "01:80:c2:00:00:01" or \
                    malformed or any(int(x, 0) >= 0x00600000 for x in sev.split(",") if x):
                print("FAIL PFC frame decoded as %r" % row)
                bad += 1
                break
            if int(q) == want["quanta"]:
                xoff += 1
            elif int(q) == 0:
                xon += 1
            else:
                print("FAIL PFC quanta %s, want %d or 0" % (q, want["quanta"]))
                bad += 1
                break
        print("tshark: %d XOFF, %d XON frames" % (xoff, xon))
        if xoff != want["pause_tx"] or xon != want["resume_tx"] or xoff == 0:
            print("FAIL the switch counted %d XOFF, %d XON" % (want["pause_tx"], want["resume_tx"]))
            bad += 1
        # forwarded frames: TTL 63 on the sink's link, tshark sees InfiniBand, ICRC right
        t = subprocess.run(["tshark", "-r", pcap, "-Y", "ip.ttl == 63", "-T", "fields",
                            "-e", "frame.number", "-e", "infiniband.bth.opcode"],
                           capture_output=True, text=True)
        rows = [l.split("\t") for l in t.stdout.splitlines()]
        if len(rows) != want["frames"] or any(len(r) < 2 or r[1] == "" for r in rows):
            print("FAIL tshark: %d forwarded InfiniBand frames, want %d" % (len(rows), want["frames"]))
            bad += 1
        fwd = [f for f in pcap_frames(pcap) if len(f) > 54 and f[12:14] == b"\x08\x00" and f[22] == 63]
        wrong = sum(1 for f in fwd if icrc(f) != int.from_bytes(f[-4:], "little"))
        print("forwarded: %d frames, %d with a wrong ICRC" % (len(fwd), wrong))
        if wrong or len(fwd) != want["frames"]:
            bad += 1
    print("FAIL" if bad else "OK")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
