#!/usr/bin/python3
"""Bad input at the command line, command by command: each case must exit with its code (2: a
usage error, refused before anything is opened; 1: input that could not be used), print exactly
one line on stderr naming what was wrong, leave every input file byte-identical, leave no output
file behind where it says so, and finish within a timeout. A signal (a crash, a sanitizer abort)
fails the case. Runs under the ASan build too (tests/run).

Every command that writes a file is also pointed at what it must not replace (a symbolic link,
a FIFO, a device node, a read-only file, a directory, a text file where a capture goes): one
line, exit 1, the target byte-identical with the same inode and mode, nothing left beside it.

Usage: cli_errors.py ROCELAB [FULL_DISK_SHIM]
  FULL_DISK_SHIM  tests/full_disk.c built: an LD_PRELOAD library that fills the disk for the
                  "full disk" cases (skipped without it)
"""
import hashlib
import json
import os
import shutil
import stat
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


def pcap(linktype, frames=()):
    """A classic pcap (microseconds) of @linktype holding @frames."""
    out = struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, linktype)
    for i, f in enumerate(frames):
        out += struct.pack("<IIII", 1, i, len(f), len(f)) + f
    return out


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
    # RC requests a responder can be set up from (replay --responder)
    subprocess.run([rocelab, "craft", "-o", os.path.join(d, "resp.pcap"),
                    "op=RC_SEND_ONLY qp=0x11 psn=7 len=16",
                    "op=RC_ACKNOWLEDGE qp=0x12 psn=7 src=10.0.0.2 dst=10.0.0.1"], check=True,
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
    os.link(os.path.join(d, "good.pcap"), os.path.join(d, "hardlink.pcap"))
    # pcapng: no interface at all (tshark: empty), a packet without one, two link types,
    # two snapshot lengths
    eth = raw[40:40 + struct.unpack("<I", raw[32:36])[0]]
    sll = struct.pack(">HHH8sH", 0, 1, 6, eth[6:12] + b"\0\0", 0x0800) + eth[14:]
    # link types dissect cannot decode (raw IP: 101), with frames and without; Ethernet that is
    # not RoCE (an ARP request); an empty Ethernet capture; Linux cooked (read as Ethernet)
    ip = eth[14:]
    write(os.path.join(d, "raw.pcap"), pcap(101, [ip, ip]))
    write(os.path.join(d, "raw0.pcap"), pcap(101))
    arp = (b"\xff" * 6 + b"\x02\0\0\0\0\x01" + b"\x08\x06" +
           struct.pack(">HHBBH", 1, 0x0800, 6, 4, 1) + b"\x02\0\0\0\0\x01" +
           bytes([10, 0, 0, 1]) + b"\0" * 6 + bytes([10, 0, 0, 2]))
    write(os.path.join(d, "arp.pcap"), pcap(1, [arp]))
    write(os.path.join(d, "empty.pcap"), pcap(1))
    write(os.path.join(d, "sll.pcap"), pcap(113, [sll]))
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
    # nothing decoded: a link type that is not Ethernet is a failure, in every output format
    ("dissect: raw IP", ["dissect", "raw.pcap"], 1,
     ["raw.pcap", "(RAW)", "not Ethernet", "nothing decoded"], []),
    ("dissect -v: raw IP", ["dissect", "-v", "raw.pcap"], 1, ["raw.pcap", "nothing decoded"],
     []),
    ("dissect jsonl: raw IP", ["dissect", "--format=jsonl", "raw.pcap"], 1,
     ["raw.pcap", "nothing decoded"], []),
    ("dissect --summary: raw IP", ["dissect", "--summary", "raw.pcap"], 1,
     ["raw.pcap", "nothing decoded"], []),
    ("dissect: raw IP without frames", ["dissect", "raw0.pcap"], 1,
     ["raw0.pcap", "not Ethernet"], []),
    ("dissect: Ethernet, then raw IP", ["dissect", "good.pcap", "raw.pcap"], 1,
     ["raw.pcap", "nothing decoded"], []),
    ("dissect --summary: raw IP, then Ethernet", ["dissect", "--summary", "raw.pcap",
                                                  "good.pcap"], 1,
     ["raw.pcap", "nothing decoded"], []),
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
    ("fixup: IN IN", ["fixup", "good.pcap", "good.pcap"], 2, ["same file"], []),
    ("devices: unknown option", ["devices", "-x", "1"], 2, ["'-x'"], []),
    ("perf: --ibdev and --dev", ["perf", "write_bw", "--ibdev", "rxe0", "--dev",
                                 "net_null0"], 2, ["--ibdev and --dev"], []),
    ("perf: -x without --ibdev", ["perf", "write_bw", "-x", "1"], 2, ["-x", "--ibdev"], []),
    ("perf: --server without --ibdev", ["perf", "write_bw", "--server"], 2, ["--server"], []),
    ("perf: --ibdev with --pcap", ["perf", "write_bw", "--ibdev", "rxe0", "--pcap", "p.pcap"],
     2, ["--pcap", "--ibdev"], ["p.pcap"]),
    ("compare: no device", ["compare", "write_bw"], 2, ["--ibdev"], []),
    ("compare: not a test", ["compare", "bogus_bw", "--ibdev", "rxe0"], 2, ["bogus_bw"], []),
    ("compare: --all-max without -a", ["compare", "write_bw", "--ibdev", "rxe0", "--all-max",
                                       "64"], 2, ["--all-max"], []),
    ("compare: -p without PEER", ["compare", "write_bw", "--ibdev", "rxe0", "-p", "18515"], 2,
     ["-p is PEER's port"], []),
    ("compare: -p out of range", ["compare", "write_bw", "--ibdev", "rxe0", "-p", "70000",
                                  "10.0.0.1"], 2, ["-p '70000'", "1 to 65535"], []),
    ("compare: two PEERs", ["compare", "write_bw", "--ibdev", "rxe0", "10.0.0.1", "10.0.0.2"],
     2, ["'10.0.0.2'", "one PEER"], []),
    ("compare: bad --timeout", ["compare", "write_bw", "--ibdev", "rxe0", "--timeout", "soon",
                                "10.0.0.1"], 2, ["--timeout 'soon'"], []),
    ("compare completions: PEER", ["compare", "completions", "--ibdev", "rxe0", "10.0.0.1"], 2,
     ["no PEER ('10.0.0.1')"], []),
    ("perf: --ip with --ibdev", ["perf", "write_bw", "--ibdev", "rxe0", "--ip", "10.0.0.1"], 2,
     ["--ip", "GID"], []),
    ("fixup: output is a hard link to the input", ["fixup", "good.pcap", "hardlink.pcap"], 2,
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
    # exec
    ("exec: no program", ["exec", "--dev", "net_null0", "--ip", "10.0.0.1"], 2,
     ["no program given"], []),
    ("exec: no port", ["exec", "--ip", "10.0.0.1", "--", "true"], 2, ["--dev"], []),
    ("exec: a bad address", ["exec", "--dev", "net_null0", "--ip", "10.0.0.256", "--",
                             "true"], 2, ["'10.0.0.256'", "IPv4 or IPv6"], []),
    ("exec: no such program", ["exec", "--dev", "net_null0", "--ip", "10.0.0.1", "--",
                               "rl-nosuch-prog"], 127, ["rl-nosuch-prog", "No such file"], []),
    ("exec: a bad rate", ["exec", "--rate", "fast", "--dev", "net_null0", "--ip", "10.0.0.1",
                          "--", "true"], 2, ["--rate 'fast'", "1M to 1.6T"], []),
]

# A full disk (FULL_DISK_SHIM: writes to files matching the pattern fail with ENOSPC): name,
# pattern, argv after rocelab, exit code, words the line must hold
FULL = [
    ("run: capture on a full disk", "capture.pcap.*",
     ["run", "good.ini", "--out", "full", "--quiet"], 1,
     ["capture.pcap", "No space left on device", "snaplen"]),
    ("perf: capture on a full disk", "full.pcap.*",
     ["perf", "write_bw", "-n", "5", "--pcap", "full.pcap"], 1,
     ["full.pcap", "No space left on device", "--snaplen"]),
    ("demo: capture on a full disk", "zerocopy.pcap.*",
     ["demo", "--quick", "--out", "demofull"], 1,
     ["zerocopy.pcap", "No space left on device", "--out DIR"]),
]

# Input that looks odd but is fine: exit 0, nothing on stderr (name, argv after rocelab)
QUIET = [
    ("dissect: pcapng without interfaces", ["dissect", "empty.pcapng"]),
    ("dissect --summary: pcapng without interfaces", ["dissect", "--summary", "empty.pcapng"]),
    # decoded, though there is no RoCE (or nothing at all) in them: exit 0
    ("dissect: an empty pcap", ["dissect", "empty.pcap"]),
    ("dissect jsonl: an empty pcap", ["dissect", "--format=jsonl", "empty.pcap"]),
    ("dissect: Ethernet, no RoCE (ARP)", ["dissect", "arp.pcap"]),
    ("dissect --summary: Ethernet, no RoCE", ["dissect", "--summary", "arp.pcap"]),
    ("dissect -v: Ethernet, no RoCE", ["dissect", "-v", "arp.pcap"]),
    ("dissect: Linux cooked", ["dissect", "sll.pcap"]),
    ("dissect: a filter that keeps nothing", ["dissect", "--qp", "0x999", "good.pcap"]),
    ("perf -h", ["perf", "write_bw", "-h"]),
    ("perf --version", ["perf", "write_bw", "--version"]),
    ("perf rc_pingpong --help", ["perf", "rc_pingpong", "--help"]),
    ("perf: perftest's report flags", ["perf", "write_bw", "-n", "8", "-s", "64", "-N", "-T", "96",
                                       "-S", "3", "-l", "4", "--report-both", "--out_json",
                                       "--out_json_file", "j3.json"]),
]


def run1(rocelab, d, args, env=None, timeout=60):
    """Run rocelab in @d; (exit code, the lines on stderr), or None on a timeout."""
    try:
        p = subprocess.run([rocelab] + args, cwd=d, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, timeout=timeout, env=env,
                           stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        return None
    err = p.stderr.decode("utf-8", "replace")
    return p.returncode, [l for l in err.splitlines() if l.strip()]


def check_one(name, res, code, words):
    """One line naming @words, exit @code; the line, or None."""
    if res is None:
        fail("%s: no answer within 60 s" % name)
        return None
    rc, lines = res
    line = lines[0] if lines else ""
    if rc < 0:
        fail("%s: killed by signal %d: %s" % (name, -rc, line))
    elif rc != code:
        fail("%s: exit %d, expected %d: %s" % (name, rc, code, lines))
    if len(lines) != 1:
        fail("%s: %d lines on stderr, expected one: %r" % (name, len(lines), lines[:4]))
    for w in words:
        if w not in line:
            fail("%s: the line does not name %r: %s" % (name, w, line))
    print("%-50s exit %d  %s" % (name, rc, line))
    return line


def full_disk(rocelab, d, shim):
    """FULL, with the shim preloaded; the cases other files must survive."""
    if shim is None:
        print("full disk cases: no FULL_DISK_SHIM given: skipped")
        return
    for name, pattern, args, code, words in FULL:
        env = dict(os.environ, LD_PRELOAD=shim, ROCELAB_FULL_DISK=pattern,
                   ASAN_OPTIONS=os.environ.get("ASAN_OPTIONS", "") +
                   ":verify_asan_link_order=0")
        check_one(name, run1(rocelab, d, args, env=env, timeout=300), code, words)
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


# ---- outputs: what a command that writes a file must not replace ----

# The commands that write a file the user names (OUT stands for it): name, argv, whether OUT
# is a capture (a text file there is refused; --force replaces it), the option giving --force
WRITERS = [
    ("craft -o", ["craft", "-o", "OUT", "op=RC_SEND_ONLY len=16"], True, True),
    ("fixup", ["fixup", "../good.pcap", "OUT"], True, True),
    ("perf --pcap", ["perf", "write_bw", "-n", "5", "--pcap", "OUT"], True, True),
    ("perf --dev --capture", ["perf", "write_bw", "--dev", "net_null0", "--ip", "10.0.0.1",
                              "--capture", "OUT"], True, False),
    ("replay --capture", ["replay", "../good.pcap", "--dev", "net_null0", "--capture", "OUT"],
     True, False),
    ("replay --responder --pcap", ["replay", "--responder", "--pcap", "OUT", "../resp.pcap"],
     True, True),
    ("switch --capture", ["switch", "--port", "net_null0", "--port", "net_null1", "--capture",
                          "OUT", "--duration", "0.1"], True, False),
    ("run --trace", ["run", "../good.ini", "--quiet", "--out", "runout", "--trace", "OUT"],
     False, True),
    ("run --out DIR (capture.pcap)", ["run", "../good.ini", "--quiet", "--out", "rdir"], True,
     False),
    ("run --out DIR (report.html)", ["run", "../good.ini", "--quiet", "--out", "rdir"], False,
     False),
    ("learn --out DIR (encap.html)", ["learn", "encap", "--quick", "--out", "ldir"], False,
     False),
]

# where OUT is for the commands that write into a directory of theirs
IN_DIR = {"run --out DIR (capture.pcap)": "rdir/capture.pcap",
          "run --out DIR (report.html)": "rdir/report.html",
          "learn --out DIR (encap.html)": "ldir/encap.html"}


def snapshot(path):
    """What must not change: type, inode, mode, and the bytes or the link's text."""
    st = os.lstat(path)
    if stat.S_ISLNK(st.st_mode):
        what = os.readlink(path)
    elif stat.S_ISREG(st.st_mode):
        what = digest(path)
    elif stat.S_ISDIR(st.st_mode):
        what = sorted(os.listdir(path))
    else:
        what = None
    return (st.st_ino, st.st_mode, what)


def make_target(kind, path, good):
    """Put a @kind where @path is; False if this machine cannot (mknod without root)."""
    if kind == "symlink":
        write(path + ".victim", b"the file a link points to\n")
        os.symlink(os.path.basename(path) + ".victim", path)
    elif kind == "dangling symlink":
        os.symlink("nowhere", path)
    elif kind == "fifo":
        os.mkfifo(path)
    elif kind == "device":
        try:    # /dev/null's numbers, in our own directory: /dev/null itself is never touched
            os.mknod(path, stat.S_IFCHR | 0o666, os.makedev(1, 3))
        except OSError:
            return False
    elif kind == "read-only":
        shutil.copyfile(good, path)
        os.chmod(path, 0o444)
    elif kind == "directory":
        os.mkdir(path)
        write(os.path.join(path, "keep"), b"x")
    elif kind == "text":
        write(path, b"notes I typed, not a capture\n")
    return True


# kind: words the refusal names
REFUSED = {
    "symlink": ["symbolic link"],
    "dangling symlink": ["symbolic link"],
    "fifo": ["FIFO"],
    "device": ["device"],
    "read-only": ["read-only"],
    "directory": ["directory"],
    "text": ["not a pcap or pcapng capture"],
}


def fresh(d, sub):
    path = os.path.join(d, sub)
    shutil.rmtree(path, ignore_errors=True)
    os.mkdir(path)
    return path


def leftovers(dirpath):
    return [f for f in os.listdir(dirpath) if f.endswith(".partial")]


def devices(rocelab, d):
    """`rocelab devices` without rdma-core, with a libibverbs too old, and as it is here: one
    line and exit 1 when there is nothing to list. And the executable itself must not need
    libibverbs to start: no libibverbs in its NEEDED entries, no ibv_ symbol left undefined."""
    cases = [
        ("devices: no libibverbs", "/nonexistent/libibverbs.so.1", ["not installed", "libibverbs1"]),
        ("devices: not libibverbs", "libm.so.6", ["libm.so.6", "rdma-core v32"]),
        ("devices: as installed here", None, []),
    ]
    perf = [
        ("perf --ibdev: no libibverbs", "/nonexistent/libibverbs.so.1",
         ["not installed", "libibverbs1"]),
        ("perf --ibdev: as installed here", None, []),
        ("compare completions: no libibverbs", "/nonexistent/libibverbs.so.1",
         ["not installed", "libibverbs1"]),
        ("compare completions: as installed here", None, []),
        ("compare PEER: as installed here", None, []),
    ]
    for name, lib, words in perf:
        env = dict(os.environ)
        env.pop("ROCELAB_LIBIBVERBS", None)
        if lib is not None:
            env["ROCELAB_LIBIBVERBS"] = lib
        cmd = ["perf", "write_bw", "--ibdev", "nosuch0", "-n", "10"]
        if name.startswith("compare completions"):
            cmd = ["compare", "completions", "--ibdev", "nosuch0"]
        elif name.startswith("compare PEER"):
            # PEER taken, the device looked for before anything is sent to it
            cmd = ["compare", "write_bw", "--ibdev", "nosuch0", "-p", "18599", "--out", "cmpo",
                   "127.0.0.1"]
        p = subprocess.run([rocelab] + cmd, cwd=d, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, timeout=60, env=env,
                           stdin=subprocess.DEVNULL)
        lines = [l for l in p.stderr.decode("utf-8", "replace").splitlines() if l.strip()]
        # here: no RDMA in the kernel, or no device of that name; either way one line, exit 1
        check_one(name, (p.returncode, lines), 1, words or ["nosuch0" if "no RDMA device"
                                                            in " ".join(lines) else "RDMA"])
    for name, lib, words in cases:
        env = dict(os.environ)
        env.pop("ROCELAB_LIBIBVERBS", None)
        if lib is not None:
            env["ROCELAB_LIBIBVERBS"] = lib
        p = subprocess.run([rocelab, "devices"], cwd=d, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, timeout=60, env=env, stdin=subprocess.DEVNULL)
        err = p.stderr.decode("utf-8", "replace")
        lines = [l for l in err.splitlines() if l.strip()]
        if lib is None and p.returncode == 0 and p.stdout.strip():
            print("%-40s exit 0  (this machine has RDMA devices)" % name)
            continue
        check_one(name, (p.returncode, lines), 1, words)
    for tool, args in (("readelf", ["-d"]), ("nm", ["-D", "--undefined-only"])):
        if shutil.which(tool) is None:
            continue
        out = subprocess.run([tool] + args + [rocelab], stdout=subprocess.PIPE,
                             stderr=subprocess.DEVNULL, text=True).stdout
        bad = [l for l in out.splitlines() if "libibverbs" in l or " ibv_" in l or " _ibv_" in l]
        if bad:
            fail("%s: rocelab would need libibverbs to start: %s" % (tool, bad[:3]))


def outputs(rocelab, d):
    """Each writer against each kind of target it must refuse, then the happy paths."""
    good = os.path.join(d, "good.pcap")
    for wname, args, capture, _ in WRITERS:
        for kind, words in REFUSED.items():
            if kind == "text" and not capture:
                continue    # a text output replaces a text file: below
            w = fresh(d, "w")
            rel = IN_DIR.get(wname, "OUT")
            if "/" in rel:
                os.mkdir(os.path.join(w, rel.split("/")[0]))
            target = os.path.join(w, rel)
            if not make_target(kind, target, good):
                print("%s: %s: cannot make one here: skipped" % (wname, kind))
                continue
            victim = target + ".victim"
            before = snapshot(target)
            vbefore = snapshot(victim) if os.path.lexists(victim) else None
            name = "%s over a %s" % (wname, kind)
            line = check_one(name, run1(rocelab, w, [a if a != "OUT" else rel for a in args]),
                             1, [rel] + words + (["--force"] if kind == "text" and _ else []))
            if snapshot(target) != before:
                fail("%s: %s changed" % (name, rel))
            if vbefore is not None and snapshot(victim) != vbefore:
                fail("%s: the file the link points to changed" % name)
            where = os.path.dirname(target)
            if leftovers(where):
                fail("%s: left %s behind" % (name, leftovers(where)))
            if line is not None and "(see 'rocelab help" in line:
                fail("%s: a refusal is not a usage error: %s" % (name, line))
    # --out DIR that is not a directory: refused, the file as it was
    for cmd in (["run", "../good.ini", "--quiet"], ["demo", "--quick"], ["learn", "encap"]):
        w = fresh(d, "w")
        write(os.path.join(w, "notdir"), b"a file, not a directory\n")
        before = snapshot(os.path.join(w, "notdir"))
        check_one("%s --out FILE" % cmd[0], run1(rocelab, w, cmd + ["--out", "notdir"]), 1,
                  ["notdir", "Not a directory"])
        if snapshot(os.path.join(w, "notdir")) != before:
            fail("%s --out FILE: the file changed" % cmd[0])
    happy(rocelab, d)


def happy(rocelab, d):
    """What a command may replace, and how it leaves it."""
    w = fresh(d, "w")
    craft = ["craft", "-o", "c.pcap"]
    # a new file, then the same name again: a capture replaces a capture
    for i, frame in enumerate(("op=RC_SEND_ONLY psn=1", "op=RC_SEND_ONLY psn=2")):
        res = run1(rocelab, w, craft + [frame])
        if res is None or res[0] != 0:
            fail("craft: %s c.pcap: %r" % ("a new" if i == 0 else "over its own", res))
    os.chmod(os.path.join(w, "c.pcap"), 0o640)
    res = run1(rocelab, w, craft + ["op=RC_SEND_ONLY psn=3"])
    if res is None or res[0] != 0:
        fail("craft over a pcap: %r" % (res,))
    elif stat.S_IMODE(os.stat(os.path.join(w, "c.pcap")).st_mode) != 0o640:
        fail("craft over a pcap: its mode 0640 was not kept")
    # an empty file is no one's data: a capture goes there
    write(os.path.join(w, "empty.pcap"), b"")
    res = run1(rocelab, w, ["craft", "-o", "empty.pcap", "op=RC_SEND_ONLY"])
    if res is None or res[0] != 0 or os.path.getsize(os.path.join(w, "empty.pcap")) == 0:
        fail("craft over an empty file: %r" % (res,))
    # a pcapng is a capture too
    write(os.path.join(w, "ng.pcapng"), ng_shb())
    res = run1(rocelab, w, ["fixup", "../good.pcap", "ng.pcapng"])
    if res is None or res[0] != 0:
        fail("fixup over a pcapng: %r" % (res,))
    # --force: a text file replaced
    write(os.path.join(w, "notes.txt"), b"notes\n")
    res = run1(rocelab, w, ["craft", "--force", "-o", "notes.txt", "op=RC_SEND_ONLY"])
    if res is None or res[0] != 0 or open(os.path.join(w, "notes.txt"), "rb").read(4) != \
            b"\x4d\x3c\xb2\xa1":
        fail("craft --force over a text file: %r" % (res,))
    # --force does not reach what is not a regular file
    os.mkfifo(os.path.join(w, "fifo"))
    check_one("craft --force over a FIFO", run1(rocelab, w, ["craft", "--force", "-o", "fifo",
                                                              "op=RC_SEND_ONLY"]), 1, ["FIFO"])
    # a text output replaces a text file (the trace of an earlier run, say)
    write(os.path.join(w, "trace.txt"), b"an old trace\n")
    res = run1(rocelab, w, ["run", "../good.ini", "--quiet", "--out", "r", "--trace",
                            "trace.txt"])
    if res is None or res[0] != 0 or open(os.path.join(w, "trace.txt"), "rb").read() == \
            b"an old trace\n":
        fail("run --trace over a text file: %r" % (res,))
    # a run into its own directory again: every file replaced
    res = run1(rocelab, w, ["run", "../good.ini", "--quiet", "--out", "r"])
    if res is None or res[0] != 0:
        fail("run --out into an earlier run's directory: %r" % (res,))
    # a symlink to a directory is a directory to write into: not replaced, written through
    os.symlink("r", os.path.join(w, "rlink"))
    res = run1(rocelab, w, ["run", "../good.ini", "--quiet", "--out", "rlink"])
    if res is None or res[0] != 0 or not os.path.islink(os.path.join(w, "rlink")):
        fail("run --out through a link to a directory: %r" % (res,))
    if leftovers(w) or leftovers(os.path.join(w, "r")):
        fail("happy paths: left %s behind" % (leftovers(w) + leftovers(os.path.join(w, "r"))))
    print("%-50s ok" % "outputs: new, own kind, empty, --force, text over text")


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__)
    rocelab = os.path.abspath(sys.argv[1])
    shim = os.path.abspath(sys.argv[2]) if len(sys.argv) == 3 else None
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
        # the good file's frames are printed before the bad one is refused
        res = subprocess.run([rocelab, "dissect", "good.pcap", "raw.pcap"], cwd=d,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60)
        if "==> good.pcap <==" not in res.stdout.decode() or \
                "RC_RDMA_WRITE_ONLY" not in res.stdout.decode():
            fail("dissect good.pcap raw.pcap: good.pcap's frames not printed: %r"
                 % res.stdout[:300])
        full_disk(rocelab, d, shim)
        devices(rocelab, d)
        outputs(rocelab, d)
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
