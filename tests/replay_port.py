#!/usr/bin/python3
"""rocelab replay out of a port, into net_pcap (a DPDK vdev that writes what it is given to a
file; no root, no NIC): frames come out byte-identical; MAC/IP/QPN rewrites change exactly the
asked bytes and leave an IP checksum and ICRC that rocelab dissect and scapy (IPv4) both accept;
a wrong input ICRC stays wrong by the same XOR; capture gaps scale with --speed (loosely: the
machine is shared); --loop repeats; --capture writes what the port sent. Bad input (truncated
or foreign files, bad flags, bad rewrite specs, bad devargs) gives one line and a non-zero exit,
within a timeout.

Usage: replay_port.py ROCELAB SHARED_PCAP_DIR; exit 77 when the shared captures are missing.
"""
import json
import os
import statistics
import struct
import subprocess
import sys
import tempfile

SKIP = 77
failures = []


def fail(msg):
    failures.append(msg)
    print("FAIL: " + msg)


def read_pcap(path):
    """[(ts seconds, bytes)] of a pcap (micro- or nanosecond)."""
    b = open(path, "rb").read()
    magic = struct.unpack("<I", b[:4])[0]
    ns = magic == 0xa1b23c4d
    o, out = 24, []
    while o + 16 <= len(b):
        s, f, cl, _ = struct.unpack("<IIII", b[o:o + 16])
        o += 16
        out.append((s + f / (1e9 if ns else 1e6), b[o:o + cl]))
        o += cl
    return out


def run(args, timeout=120):
    try:
        return subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                              timeout=timeout)
    except subprocess.TimeoutExpired:
        fail("timed out: %s" % " ".join(args))
        return None


def replay(rocelab, src, out, *opts, timeout=120):
    if os.path.exists(out):
        os.unlink(out)
    p = run([rocelab, "replay", src, "--dev", "net_pcap0,tx_pcap=" + out] + list(opts), timeout)
    if p is None:
        return None
    if p.returncode != 0:
        fail("replay %s %s: exit %d: %s" % (src, " ".join(opts), p.returncode, p.stderr.strip()))
        return None
    if "replay: " not in p.stdout:
        fail("replay %s: no final line" % src)
    return p.stdout


def dissect(rocelab, path):
    p = run([rocelab, "dissect", "--format=jsonl", path])
    return [json.loads(l) for l in p.stdout.splitlines()] if p else []


def mac(s):
    return bytes(int(x, 16) for x in s.split(":"))


def check_identity(rocelab, shared, tmp):
    src = os.path.join(shared, "rxe", "rc_write_lat.pcap")
    out = os.path.join(tmp, "id.pcap")
    line = replay(rocelab, src, out, "--topspeed")
    if line is None:
        return
    a, b = read_pcap(src), read_pcap(out)
    same = sum(x[1] == y[1] for x, y in zip(a, b))
    print("identity: %d frames in, %d out, %d byte-identical; %s" % (len(a), len(b), same,
                                                                  line.strip()))
    if len(a) != len(b) or same != len(a):
        fail("identity: %d in, %d out, %d identical" % (len(a), len(b), same))
    if "%d frames, %d bytes sent" % (len(a), sum(len(x[1]) for x in a)) not in line:
        fail("identity: final line does not count %d frames: %s" % (len(a), line))


def check_rewrite(rocelab, shared, tmp):
    """Every rule kind on an IPv4 and an IPv6 capture; expected bytes computed here."""
    try:
        from scapy.config import conf
        from scapy.compat import raw
        from scapy.layers.l2 import Ether
        from scapy.layers.inet import IP
        from scapy.contrib.roce import BTH
        conf.verb = 0
        have_scapy = True
    except ImportError:
        have_scapy = False
    cases = [
        ("rc_write_bw.pcap", 4, ["--src-mac", "52:54:00:c0:00:03=02:00:00:00:00:aa",
                                 "--dst-mac", "02:00:00:00:00:bb",
                                 "--src-ip", "192.0.2.3=10.9.0.3", "--dst-ip", "192.0.2.2=10.9.0.2",
                                 "--qpn", "0x11=0x1234"]),
        ("rping_ipv6.pcap", 6, ["--src-ip", "2001:db8::3=2001:db8:77::3",
                                "--dst-ip", "2001:db8::2=2001:db8:77::2", "--qpn", "0x11=0xabcde"]),
    ]
    for name, ver, opts in cases:
        src = os.path.join(shared, "rxe", name)
        out = os.path.join(tmp, "rw-" + name)
        line = replay(rocelab, src, out, "--topspeed", *opts)
        if line is None:
            continue
        a, b = read_pcap(src), read_pcap(out)
        ja, jb = dissect(rocelab, src), dissect(rocelab, out)
        if len(a) != len(b) or len(ja) != len(jb):
            fail("%s: %d frames in, %d out" % (name, len(a), len(b)))
            continue
        rules = dict(zip(opts[0::2], opts[1::2]))
        checked = icrc_ok = scapy_ok = 0
        for (_, fa), (_, fb), da, db in zip(a, b, ja, jb):
            exp = bytearray(fa)
            if "--src-mac" in rules:
                old, new = rules["--src-mac"].split("=")
                if exp[6:12] == mac(old):
                    exp[6:12] = mac(new)
            if "--dst-mac" in rules:
                exp[0:6] = mac(rules["--dst-mac"])
            if da.get("kind") == "rocev2" and "error" not in da:
                import ipaddress
                l3 = 14
                soff, doff, alen = (l3 + 12, l3 + 16, 4) if ver == 4 else (l3 + 8, l3 + 24, 16)
                for opt, off in (("--src-ip", soff), ("--dst-ip", doff)):
                    if opt in rules:
                        old, new = rules[opt].split("=")
                        if exp[off:off + alen] == ipaddress.ip_address(old).packed:
                            exp[off:off + alen] = ipaddress.ip_address(new).packed
                old, new = (int(x, 0) for x in rules["--qpn"].split("="))
                bth = l3 + (20 if ver == 4 else 40) + 8
                if int.from_bytes(exp[bth + 5:bth + 8], "big") == old:
                    exp[bth + 5:bth + 8] = new.to_bytes(3, "big")
                # checksum and ICRC: taken from the output, checked independently below
                if ver == 4:
                    exp[l3 + 10:l3 + 12] = fb[l3 + 10:l3 + 12]
                exp[-4:] = fb[-4:]
                checked += 1
                icrc_ok += db.get("icrc_ok") is True
                if have_scapy and ver == 4:
                    pkt = Ether(fb)
                    again = pkt.copy()
                    again[BTH].icrc = None
                    del again[IP].chksum
                    scapy_ok += raw(again) == fb
            if bytes(exp) != fb:
                diff = next(i for i in range(len(fb)) if exp[i] != fb[i])
                fail("%s frame: differs from the expected rewrite at byte %d" % (name, diff))
                break
        print("rewrite %s: %d RoCEv2 frames rewritten as asked, %d with a valid ICRC (rocelab), "
              "%s" % (name, checked, icrc_ok, "%d valid IP checksum + ICRC (scapy)" % scapy_ok
                      if have_scapy and ver == 4 else "scapy not used"))
        if icrc_ok != checked or checked == 0:
            fail("%s: %d of %d rewritten frames have a valid ICRC" % (name, icrc_ok, checked))
        if have_scapy and ver == 4 and scapy_ok != checked:
            fail("%s: scapy accepts %d of %d rewritten frames" % (name, scapy_ok, checked))


def check_bad_icrc_kept(rocelab, tmp):
    src = os.path.join(tmp, "badicrc.pcap")
    subprocess.run([rocelab, "craft", "-o", src,
                    "op=RC_SEND_ONLY qp=0x11 psn=5 len=100 icrc=0x12345678",
                    "op=RC_SEND_ONLY qp=0x11 psn=6 len=100"], check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    out = os.path.join(tmp, "badicrc-out.pcap")
    line = replay(rocelab, src, out, "-t", "--qpn", "0x11=0x99", "--dst-ip", "10.0.0.7")
    if line is None:
        return
    ja, jb = dissect(rocelab, src), dissect(rocelab, out)
    # the output's stored ICRC must differ from its right ICRC by what the input's did
    wrong_in = [d["icrc_ok"] for d in ja]
    wrong_out = [d["icrc_ok"] for d in jb]
    print("bad ICRC: input ok=%s, output ok=%s, qpn %s; %s" % (wrong_in, wrong_out,
          [d["bth"]["dqpn"] for d in jb], line.strip()))
    if wrong_in != [False, True] or wrong_out != [False, True]:
        fail("a wrong ICRC must stay wrong and a right one right: in %s, out %s"
             % (wrong_in, wrong_out))
    if "1 with a wrong ICRC kept wrong" not in line:
        fail("final line does not count the frame with a wrong ICRC: " + line)


def check_timing(rocelab, tmp):
    src = os.path.join(tmp, "gaps.pcap")
    step_ms = 40
    subprocess.run([rocelab, "craft", "-o", src, "--count", "8", "--psn-step",
                    "--ts-step", str(step_ms * 1000000), "op=RC_SEND_ONLY len=64"], check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for speed in ("2", "0.5"):
        out = os.path.join(tmp, "gaps-%s.pcap" % speed)
        cap = os.path.join(tmp, "gaps-cap-%s.pcap" % speed)
        line = replay(rocelab, src, out, "--speed", speed, "--capture", cap)
        if line is None:
            continue
        for what, path in (("net_pcap", out), ("--capture", cap)):
            b = read_pcap(path)
            gaps = [(b[i][0] - b[i - 1][0]) * 1e3 for i in range(1, len(b))]
            want = step_ms / float(speed)
            med = statistics.median(gaps) if gaps else 0
            print("timing --speed %s (%s): gaps median %.1f ms (asked %.1f), min %.1f, max %.1f"
                  % (speed, what, med, want, min(gaps or [0]), max(gaps or [0])))
            # loosely: a shared 2-core machine delays wake-ups by milliseconds
            if len(b) != 8 or not 0.5 * want <= med <= 1.5 * want:
                fail("--speed %s (%s): %d frames, median gap %.1f ms, asked %.1f"
                     % (speed, what, len(b), med, want))
        if "capture: %s: 8 frames sent" % cap not in line:
            fail("--capture did not count 8 frames sent: " + line)
    # --snaplen: every captured frame cut to 20 bytes, the output whole
    out, cap = os.path.join(tmp, "snap.pcap"), os.path.join(tmp, "snap-cap.pcap")
    line = replay(rocelab, src, out, "-t", "--capture", cap, "--snaplen", "20")
    if line is not None:
        whole, cut = read_pcap(out), read_pcap(cap)
        print("--snaplen 20: %d frames out of %d bytes, %d captured of %s bytes"
              % (len(whole), len(whole[0][1]) if whole else 0, len(cut),
                 sorted({len(f) for _, f in cut})))
        if len(cut) != 8 or any(len(f) != 20 for _, f in cut) or \
                [f[:20] for _, f in whole] != [f for _, f in cut]:
            fail("--snaplen 20: the capture is not the output's first 20 bytes")
    out = os.path.join(tmp, "loop.pcap")
    line = replay(rocelab, src, out, "-t", "--loop", "3")
    if line is not None:
        n = len(read_pcap(out))
        print("--loop 3: %d frames out" % n)
        if n != 24 or "(3 passes)" not in line:
            fail("--loop 3: %d frames out, line %s" % (n, line))


def check_bad_input(rocelab, shared, tmp):
    good = os.path.join(shared, "rxe", "rc_write_lat.pcap")
    data = open(good, "rb").read()
    trunc = os.path.join(tmp, "trunc.pcap")
    open(trunc, "wb").write(data[:len(data) // 2 + 7])
    junk = os.path.join(tmp, "junk.pcap")
    open(junk, "wb").write(b"this is not a capture\n" * 10)
    out = os.path.join(tmp, "bad-out.pcap")
    dev = ["--dev", "net_pcap0,tx_pcap=" + out]
    cases = [
        ("truncated capture", [trunc] + dev + ["-t"], 1),
        ("not a capture", [junk] + dev, 1),
        ("missing file", [os.path.join(tmp, "nope.pcap")] + dev, 1),
        ("unknown flag", [good] + dev + ["--bogus"], 2),
        ("missing value", [good] + dev + ["--speed"], 2),
        ("bad speed", [good] + dev + ["--speed", "-3"], 2),
        ("bad qpn spec", [good] + dev + ["--qpn", "0x11"], 2),
        ("qpn too big", [good] + dev + ["--qpn", "1=0x1000000"], 2),
        ("mixed IP versions", [good] + dev + ["--src-ip", "10.0.0.1=::1"], 2),
        ("bad MAC", [good] + dev + ["--dst-mac", "zz:00:00:00:00:00"], 2),
        ("no port", [good], 2),
        ("bad devargs", [good, "--dev", "net_nosuchdriver0"], 1),
        ("responder with --dev", [good, "--responder"] + dev, 2),
        ("responder on UD", [os.path.join(shared, "rxe", "ud_send_bw.pcap"), "--responder"], 1),
        ("responder truncated", [trunc, "--responder"], 1),
        ("responder not a capture", [junk, "--responder"], 1),
    ]
    for what, args, want in cases:
        p = run([rocelab, "replay"] + args, timeout=60)
        if p is None:
            continue
        lines = [l for l in p.stderr.splitlines() if l.strip() and not l.startswith("EAL")]
        print("bad input, %s: exit %d: %s" % (what, p.returncode, lines[0] if lines else ""))
        if p.returncode != want:
            fail("%s: exit %d, expected %d" % (what, p.returncode, want))
        if len(lines) != 1 or not lines[0].startswith("rocelab"):
            fail("%s: expected one line on stderr, got %r" % (what, p.stderr))
    # a truncated capture still sends the frames before the break
    if os.path.exists(out):
        os.unlink(out)
    run([rocelab, "replay", trunc, "-t"] + dev)
    n = len(read_pcap(out)) if os.path.exists(out) else 0
    print("truncated capture: %d frames sent before the break" % n)
    if n == 0:
        fail("truncated capture: nothing sent before the break")


def main():
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    rocelab, shared = sys.argv[1], sys.argv[2]
    if not os.path.isdir(os.path.join(shared, "rxe")):
        print("replay_port: no %s/rxe: skipped" % shared)
        return SKIP
    with tempfile.TemporaryDirectory() as tmp:
        check_identity(rocelab, shared, tmp)
        check_rewrite(rocelab, shared, tmp)
        check_bad_icrc_kept(rocelab, tmp)
        check_timing(rocelab, tmp)
        check_bad_input(rocelab, shared, tmp)
    print("replay_port: %s" % ("%d failure(s)" % len(failures) if failures else "OK"))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
