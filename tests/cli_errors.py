#!/usr/bin/python3
"""Bad input at the command line, command by command: each case must exit with its code (2: a
usage error, refused before anything is opened; 1: input that could not be used), print exactly
one line on stderr naming what was wrong, leave every input file byte-identical, leave no output
file behind where it says so, and finish within a timeout. A signal (a crash, a sanitizer abort)
fails the case. Runs under the ASan build too (tests/run).

Usage: cli_errors.py ROCELAB
"""
import hashlib
import json
import os
import struct
import subprocess
import sys
import tempfile

failures = []


def fail(msg):
    failures.append(msg)
    print("FAIL: " + msg)


def digest(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def write(path, data):
    with open(path, "wb") as f:
        f.write(data)


def ng_block(btype, body, trail=None, order="<"):
    """A pcapng block (draft-ietf-opsawg-pcapng section 4), little-endian unless order is ">"."""
    body += b"\0" * (-len(body) % 4)
    n = 12 + len(body)
    return (struct.pack(order + "II", btype, n) + body +
            struct.pack(order + "I", n if trail is None else trail))


def ng_shb(order="<"):
    return ng_block(0x0A0D0D0A, struct.pack(order + "IHHq", 0x1A2B3C4D, 1, 0, -1), order=order)


def ng_idb(linktype, snaplen=65535, order="<"):
    return ng_block(1, struct.pack(order + "HHI", linktype, 0, snaplen), order=order)


def ng_epb(ifc, data, order="<"):
    return ng_block(6, struct.pack(order + "IIIII", ifc, 0, 1, len(data), len(data)) + data,
                    order=order)


def setup(rocelab, d):
    """The inputs the cases point at: a good capture, its copies and cuts, and text files."""
    good = os.path.join(d, "good.pcap")
    p = subprocess.run([rocelab, "craft", "-o", good, "op=RC_RDMA_WRITE_ONLY len=256 psn=7",
                        "op=RC_ACKNOWLEDGE psn=7"], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True, timeout=60)
    if p.returncode != 0:
        sys.exit("craft of the good capture failed: " + p.stderr.strip())
    for name, frame in (("qp0.pcap", "op=RC_RDMA_WRITE_ONLY len=64 qp=0 rkey=1 va=0"),
                        ("bigread.pcap", "op=RC_RDMA_READ_REQUEST qp=0x11 rkey=0x1234 "
                                         "va=0x1000 dmalen=0x0fff0000")):
        subprocess.run([rocelab, "craft", "-o", os.path.join(d, name), frame], check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=60)
    raw = open(good, "rb").read()
    write(os.path.join(d, "cut.pcap"), raw[:60])		# a record header promising more
    write(os.path.join(d, "short.pcap"), raw[:10])		# not even a file header
    write(os.path.join(d, "text.pcap"), b"this is not a capture\n" * 4)
    write(os.path.join(d, "nul.txt"), b"op=RC_SEND_ONLY\x00 psn=5\n")
    write(os.path.join(d, "frames.txt"), b"op=RC_SEND_ONLY len=16\n")
    write(os.path.join(d, "typo.ini"), b"[scenario]\nname = x\nduraton = 1ms\n")
    write(os.path.join(d, "good.ini"),
          b"[scenario]\nname = x\n[topology]\nkind = custom\n[host.a]\n[host.b]\n"
          b"[link.ab]\na = a\nb = b\n[flow.w]\nsrc = a\ndst = b\nsize = 4K\n")
    write(os.path.join(d, "dangling.ini"),
          b"[scenario]\nname = x\n[topology]\nkind = custom\n[host.a]\n[host.b]\n"
          b"[link.ab]\na = a\nb = b\n[flow.w]\nsrc = a\ndst = c\nsize = 4K\n")
    os.symlink("good.pcap", os.path.join(d, "alias.pcap"))
    # a run whose capture meets a full disk (/dev/full: every write fails with ENOSPC)
    os.mkdir(os.path.join(d, "full"))
    os.symlink("/dev/full", os.path.join(d, "full", "capture.pcap"))
    os.mkdir(os.path.join(d, "demofull"))
    os.symlink("/dev/full", os.path.join(d, "demofull", "zerocopy.pcap"))
    # pcapng: no interface at all (tshark: empty), a packet without one, two link types,
    # two snapshot lengths
    eth = raw[40:40 + struct.unpack("<I", raw[32:36])[0]]
    sll = struct.pack(">HHH8sH", 0, 1, 6, eth[6:12] + b"\0\0", 0x0800) + eth[14:]
    write(os.path.join(d, "empty.pcapng"), ng_shb())
    write(os.path.join(d, "noidb.pcapng"), ng_shb() + ng_epb(0, eth))
    write(os.path.join(d, "mixed.pcapng"),
          ng_shb() + ng_idb(1) + ng_epb(0, eth) + ng_idb(113) + ng_epb(1, sll))
    write(os.path.join(d, "snaplens.pcapng"),
          ng_shb() + ng_idb(1, 1500) + ng_epb(0, eth) + ng_idb(1) + ng_epb(1, eth))
    # two sections, little- then big-endian: cat of captures from two hosts
    write(os.path.join(d, "orders.pcapng"),
          ng_shb() + ng_idb(1) + ng_epb(0, eth) +
          ng_shb(">") + ng_idb(1, order=">") + ng_epb(0, eth, ">"))


# name, argv after rocelab, exit code, words the line must hold, files that must not appear
CASES = [
    ("unknown command", ["bogus"], 2, ["'bogus'"], []),
    ("unknown global option", ["--bogus", "demo"], 2, ["--bogus"], []),
    ("bad log level", ["--log-level", "loud", "demo"], 2, ["loud"], []),
    # dissect
    ("dissect: missing file", ["dissect", "nosuch.pcap"], 1, ["nosuch.pcap"], []),
    ("dissect: cut record", ["dissect", "cut.pcap"], 1, ["cut.pcap", "frame 1"], []),
    ("dissect: no file header", ["dissect", "short.pcap"], 1, ["short.pcap"], []),
    ("dissect: not a capture", ["dissect", "text.pcap"], 1, ["text.pcap"], []),
    ("dissect: pcapng packet without an interface", ["dissect", "noidb.pcapng"], 1,
     ["noidb.pcapng", "Interface Description"], []),
    ("dissect: pcapng of two link types", ["dissect", "mixed.pcapng"], 1,
     ["mixed.pcapng", "frame 2", "link type 113 (LINUX_SLL)", "-F pcap"], []),
    ("dissect: pcapng of two snapshot lengths", ["dissect", "snaplens.pcapng"], 1,
     ["snaplens.pcapng", "frame 2", "snapshot length 65535 after one of 1500", "editcap"], []),
    ("dissect: pcapng of two byte orders", ["dissect", "orders.pcapng"], 1,
     ["orders.pcapng", "frame 2", "big-endian byte order after one in little-endian",
      "editcap -F pcapng"], []),
    ("dissect: unknown option", ["dissect", "--bogus", "good.pcap"], 2, ["--bogus"], []),
    ("dissect: bad filter", ["dissect", "-f", "udp port", "good.pcap"], 2, ["udp port"], []),
    ("dissect: bad format", ["dissect", "--format", "xml", "good.pcap"], 2, ["xml"], []),
    ("dissect: summary with -v", ["dissect", "--summary", "-v", "good.pcap"], 2,
     ["--summary", "-v"], []),
    # craft
    ("craft: unknown opcode", ["craft", "-o", "x1.pcap", "op=BOGUS"], 2, ["BOGUS"],
     ["x1.pcap"]),
    ("craft: unknown key", ["craft", "-o", "x2.pcap", "op=RC_SEND_ONLY colour=red"], 2,
     ["colour"], ["x2.pcap"]),
    ("craft: unknown opcode in a file", ["craft", "-f", "typo.ini", "-o", "x5.pcap"], 1,
     ["typo.ini:1"], ["x5.pcap"]),
    ("craft: NUL in a frame file", ["craft", "-f", "nul.txt", "-o", "x3.pcap"], 1,
     ["nul.txt:1", "NUL"], ["x3.pcap"]),
    ("craft: output is the frame file", ["craft", "-f", "frames.txt", "-o", "frames.txt"], 2,
     ["frames.txt"], []),
    ("craft: no frames", ["craft", "-o", "x6.pcap"], 2, ["no frames"], ["x6.pcap"]),
    # fixup
    ("fixup: output is the input", ["fixup", "good.pcap", "./good.pcap"], 2,
     ["same file"], []),
    ("fixup: output is a link to the input", ["fixup", "good.pcap", "alias.pcap"], 2,
     ["same file"], []),
    ("fixup: cut input", ["fixup", "cut.pcap", "x4.pcap"], 1,
     ["cut.pcap", "0 frames before it written to x4.pcap"], []),
    # replay
    ("replay: no capture", ["replay"], 2, ["capture"], []),
    ("replay: capture to its input", ["replay", "good.pcap", "--dev", "net_null0",
                                      "--capture", "good.pcap"], 2, ["good.pcap"], []),
    ("replay: responder capture to its input", ["replay", "--responder", "--pcap",
                                                "good.pcap", "good.pcap"], 2,
     ["good.pcap"], []),
    ("replay: responder for QP 0", ["replay", "--responder", "qp0.pcap"], 1,
     ["frame 1", "QP 0x0"], []),
    ("replay: responder READ too big to keep", ["replay", "--responder", "--pcap", "x7.pcap",
                                                "bigread.pcap"], 1,
     ["262080 response frames"], ["x7.pcap"]),
    ("replay: bad speed", ["replay", "good.pcap", "--dev", "net_null0", "--speed", "-3"], 2,
     ["-3"], []),
    # run
    ("run: missing scenario", ["run", "nosuch.ini", "--out", "o1"], 1, ["nosuch.ini"], ["o1"]),
    ("run: typo in a key", ["run", "typo.ini", "--out", "o2"], 1, ["typo.ini:3", "duraton"],
     ["o2"]),
    ("run: dangling host", ["run", "dangling.ini", "--out", "o3"], 1, ["dangling.ini", "'c'"],
     ["o3"]),
    ("run: unknown --set key", ["run", "good.ini", "--set", "scenario.nope=1", "--out", "o4"],
     1, ["scenario.nope"], ["o4"]),
    ("run: capture on a full disk", ["run", "good.ini", "--out", "full", "--quiet"], 1,
     ["capture.pcap", "No space left on device", "snaplen"], []),
    ("run: bad seed", ["run", "typo.ini", "--seed", "x"], 2, ["--seed", "'x'"], []),
    ("run: trace over the scenario", ["run", "typo.ini", "--trace", "typo.ini"], 2,
     ["--trace"], []),
    # perf, learn, switch, demo
    ("perf: unknown test", ["perf", "bogus_bw"], 2, ["bogus_bw"], []),
    ("perf: bad size", ["perf", "write_bw", "--size", "12q"], 2, ["12q"], []),
    ("perf: receive delay without receives", ["perf", "write_bw", "--recv-delay", "1us"], 2,
     ["send_bw"], []),
    ("perf: bad receive delay", ["perf", "send_bw", "--recv-delay", "5parsecs"], 2,
     ["--recv-delay", "5parsecs"], []),
    ("perf: RNR timer code out of range", ["perf", "send_bw", "--min-rnr-timer", "32"], 2,
     ["--min-rnr-timer", "32"], []),
    # a capture file is created only once every argument is known good
    ("perf: capture, then a bad option", ["perf", "write_bw", "--capture", "good.pcap",
                                          "--bogus"], 2, ["--bogus"], []),
    ("perf: capture without a port", ["perf", "write_bw", "--capture", "p1.pcap"], 2,
     ["--capture", "--dev"], ["p1.pcap"]),
    ("perf: snaplen below a header", ["perf", "write_bw", "--pcap", "p2.pcap", "--snaplen",
                                      "10"], 2, ["--snaplen", "'10'"], ["p2.pcap"]),
    ("perf: capture on a full disk", ["perf", "write_bw", "-n", "5", "--pcap", "/dev/full"], 1,
     ["/dev/full", "No space left on device", "--snaplen"], []),
    ("perf: capture in no directory", ["perf", "write_bw", "--pcap", "nodir/p3.pcap"], 1,
     ["nodir/p3.pcap", "No such file"], []),
    ("perf: snaplen without a capture", ["perf", "write_bw", "--snaplen", "128"], 2,
     ["--snaplen", "--pcap"], []),
    ("switch: snaplen without a capture", ["switch", "--port", "net_null0", "--port",
                                           "net_null1", "--snaplen", "128"], 2,
     ["--snaplen", "--capture"], []),
    ("run: snaplen below a header", ["run", "good.ini", "--set", "capture.snaplen=8", "--out",
                                     "o5"], 1, ["snaplen", "Ethernet header"], ["o5"]),
    ("run: payload neither place nor discard", ["run", "good.ini", "--set",
                                                 "scenario.payload=drop", "--out", "o6"], 1,
     ["scenario.payload", "place or discard", "'drop'"], ["o6"]),
    ("learn: unknown lesson", ["learn", "nosuch"], 2, ["nosuch"], []),
    ("switch: one port twice", ["switch", "--port", "net_null0", "--port", "net_null0"], 2,
     ["net_null0", "twice"], []),
    ("demo: unknown option", ["demo", "--bogus"], 2, ["--bogus"], []),
    ("demo: capture on a full disk", ["demo", "--quick", "--out", "demofull"], 1,
     ["zerocopy.pcap", "No space left on device", "--out DIR"], []),
    # a driver no bus knows: our line only, not the EAL's two before it
    ("switch: no such driver", ["switch", "--port", "net_nosuch0", "--port", "net_null1"], 2,
     ["net_nosuch0", "no driver called"], []),
    ("perf: no such driver", ["perf", "write_bw", "--dev", "net_nosuch0", "--ip", "10.0.0.1"],
     2, ["net_nosuch0", "no driver called"], []),
    # an af_packet port on an interface that is not there: our line, not the driver's ioctl one
    ("perf: no such interface", ["perf", "write_bw", "--dev", "net_af_packet0,iface=rl-nosuch0",
                                 "--ip", "10.0.0.1"], 2, ["'rl-nosuch0'", "ip link"], []),
    ("switch: no such interface", ["switch", "--port", "net_af_packet0,iface=rl-nosuch0",
                                   "--port", "net_ring1"], 2, ["'rl-nosuch0'"], []),
    ("perf: a key the driver lacks", ["perf", "write_bw", "--dev", "net_ring0,bogus=1", "--ip",
                                      "10.0.0.1"], 2, ["'bogus'", "nodeaction"], []),
    ("switch: misspelt iface", ["switch", "--port", "net_tap0,ifce=rl0", "--port", "net_ring1"],
     2, ["'ifce'", "iface"], []),
    ("perf: an empty device argument", ["perf", "write_bw", "--dev", "net_null0,size=64,",
                                        "--ip", "10.0.0.1"], 2, ["empty argument"], []),
    # perftest's flags: its rules, or rocelab's reason
    ("perf: -n below perftest's 5", ["perf", "write_bw", "-n", "1"], 2,
     ["-n '1'", "at least 5"], []),
    ("perf: -n 4 in a latency test", ["perf", "read_lat", "-n", "4"], 2, ["at least 5"], []),
    ("perf: --cpu_util", ["perf", "write_bw", "--cpu_util"], 2, ["--cpu_util", "CPU"], []),
    ("perf: --ipv6 in virtual time", ["perf", "write_bw", "--ipv6"], 2, ["--ipv6", "IPv4"], []),
    ("perf: --ipv6 with an IPv4 --ip", ["perf", "write_bw", "--ipv6", "--dev", "net_null0",
                                        "--ip", "10.0.0.1"], 2, ["--ipv6", "IPv6"], []),
    ("perf: a post list in a latency test", ["perf", "write_lat", "-l", "2"], 2,
     ["post list", "BW tests only"], []),
    ("perf: -n not a multiple of -l", ["perf", "write_bw", "-n", "10", "-l", "4"], 2,
     ["-n 10", "multiple of post list size"], []),
    ("perf: -l not a multiple of -Q", ["perf", "write_bw", "-n", "8", "-l", "4", "-Q", "3"], 2,
     ["-l 4", "-Q 3"], []),
    ("perf: -T out of range", ["perf", "write_bw", "-T", "256"], 2, ["-T", "'256'"], []),
    ("perf: -S out of range", ["perf", "write_bw", "-S", "16"], 2, ["-S", "'16'"], []),
    ("perf: --out_json_file alone", ["perf", "write_bw", "--out_json_file", "j1.json"], 2,
     ["--out_json"], ["j1.json"]),
    ("perf: --out_json into no directory", ["perf", "write_bw", "-n", "5", "-s", "64",
                                            "--out_json", "--out_json_file", "nodir/j2.json"],
     1, ["nodir/j2.json"], []),
    ("perf: bad --hello-timeout", ["perf", "write_bw", "--hello-timeout", "-1"], 2,
     ["--hello-timeout", "'-1'"], []),
    ("perf: -N is not a pingpong's", ["perf", "rc_pingpong", "-N"], 2, ["'-N'"], []),
    ("perf: --report-both is not a pingpong's", ["perf", "rc_pingpong", "--report-both"], 2,
     ["'--report-both'", "rc_pingpong"], []),
    ("replay: snaplen without a capture", ["replay", "good.pcap", "--dev", "net_ring0",
                                           "--snaplen", "128"], 2, ["--snaplen", "--capture"],
     []),
    ("replay: no such driver", ["replay", "good.pcap", "--dev", "net_nosuch0", "--capture",
                                "rcap.pcap"], 1, ["net_nosuch0", "no driver called"],
     ["rcap.pcap"]),
]

# Input that looks odd but is fine: exit 0, nothing on stderr (name, argv after rocelab)
QUIET = [
    ("dissect: pcapng without interfaces", ["dissect", "empty.pcapng"]),
    ("dissect --summary: pcapng without interfaces", ["dissect", "--summary", "empty.pcapng"]),
    ("perf -h", ["perf", "write_bw", "-h"]),
    ("perf --version", ["perf", "write_bw", "--version"]),
    ("perf rc_pingpong --help", ["perf", "rc_pingpong", "--help"]),
    ("perf: perftest's report flags", ["perf", "write_bw", "-n", "8", "-s", "64", "-N", "-T", "96",
                                       "-S", "3", "-l", "4", "--report-both", "--out_json",
                                       "--out_json_file", "j3.json"]),
]


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    rocelab = os.path.abspath(sys.argv[1])
    with tempfile.TemporaryDirectory(prefix="rocelab-cli-") as d:
        setup(rocelab, d)
        inputs = {f: digest(os.path.join(d, f)) for f in os.listdir(d)
                  if os.path.isfile(os.path.join(d, f))}
        for name, args, code, words, absent in CASES:
            try:
                p = subprocess.run([rocelab] + args, cwd=d, stdout=subprocess.PIPE,
                                   stderr=subprocess.PIPE, timeout=60)
            except subprocess.TimeoutExpired:
                fail("%s: no answer within 60 s" % name)
                continue
            err = p.stderr.decode("utf-8", "replace")
            lines = [l for l in err.splitlines() if l.strip()]
            line = lines[0] if lines else ""
            if p.returncode < 0:
                fail("%s: killed by signal %d: %s" % (name, -p.returncode, err[-500:]))
            elif p.returncode != code:
                fail("%s: exit %d, expected %d: %s" % (name, p.returncode, code, line))
            if len(lines) != 1:
                fail("%s: %d lines on stderr, expected one: %r" % (name, len(lines), err[:400]))
            for w in words:
                if w not in line:
                    fail("%s: the line does not name %r: %s" % (name, w, line))
            for f in absent:
                if os.path.exists(os.path.join(d, f)):
                    fail("%s: left %s behind" % (name, f))
            print("%-40s exit %d  %s" % (name, p.returncode, line))
        # the full disk took the capture's tail, not the run's other files
        for f in ("report.html", "flows.csv", "ports.csv", "metrics.csv", "counters.txt"):
            path = os.path.join(d, "full", f)
            if not os.path.isfile(path) or os.path.getsize(path) == 0:
                fail("run: capture on a full disk: %s not written" % f)
        # the demo's first step lost its capture; the tour went on: every step, and its page
        for f in ("report.html", "degrade.pcap"):
            path = os.path.join(d, "demofull", f)
            if not os.path.isfile(path) or os.path.getsize(path) == 0:
                fail("demo: capture on a full disk: %s not written" % f)
        for name, args in QUIET:
            try:
                p = subprocess.run([rocelab] + args, cwd=d, stdout=subprocess.PIPE,
                                   stderr=subprocess.PIPE, timeout=60)
            except subprocess.TimeoutExpired:
                fail("%s: no answer within 60 s" % name)
                continue
            err = p.stderr.decode("utf-8", "replace").strip()
            if p.returncode != 0 or err:
                fail("%s: exit %d, expected 0 and no message: %s" % (name, p.returncode, err))
            print("%-40s exit %d" % (name, p.returncode))
        # --out_json: perftest's JSON, -N's zero peak, -l's CQ moderation and post list
        try:
            with open(os.path.join(d, "j3.json")) as f:
                j = json.load(f)
            if (j["test_info"]["test"] != "RDMA_Write_Post_List_BW_Test" or
                    j["test_info"]["CQ_Moderation"] != 4 or j["test_info"]["TOS"] != 96 or
                    j["results"]["BW_peak"] != 0 or j["results"]["n_iterations"] != 8 or
                    not j["results"]["BW_average"] > 0):
                fail("perf --out_json: unexpected content %s" % j)
        except (OSError, ValueError, KeyError) as e:
            fail("perf --out_json: %s" % e)
        for f, h in inputs.items():
            if digest(os.path.join(d, f)) != h:
                fail("input %s changed" % f)
    if failures:
        print("%d failure(s)" % len(failures))
        return 1
    print("%d cases: one line each, the right exit code, inputs intact; %d quiet ones"
          % (len(CASES), len(QUIET)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
