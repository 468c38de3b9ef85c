#!/usr/bin/env python3
# Differential test: `rocelab dissect --format=jsonl` against tshark's own dissector, field by
# field, on every Ethernet capture in ../shared/pcap/{real,vectors,rxe}; the ICRC `dissect -v`
# prints against tshark's; and the rxe captures cut by `editcap -s 100` and `-s 60`, decoded by
# both, against the whole ones.
#   diff_tshark_real.py ROCELAB [PCAP_DIR]     exit 0 agree, 1 differ, 77 tshark or captures missing
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

# tshark field -> (rocelab jsonl path, conversion); compared only where tshark shows the field.
INT = lambda s: int(s, 0)
FIELDS = [
    ("frame.number", None),
    ("frame.len", None),
    ("eth.type", None),
    ("vlan.id", None),
    ("vlan.priority", None),
    ("ip.src", None),
    ("ip.dst", None),
    ("ip.dsfield.dscp", None),
    ("ip.dsfield.ecn", None),
    ("ip.ttl", None),
    ("ipv6.src", None),
    ("ipv6.dst", None),
    ("ipv6.tclass.dscp", None),
    ("ipv6.tclass.ecn", None),
    ("ipv6.hlim", None),
    ("udp.srcport", None),
    ("udp.dstport", None),
    ("udp.length", None),
    ("infiniband.grh.paylen", None),
    ("infiniband.grh.sgid", None),
    ("infiniband.grh.dgid", None),
    ("infiniband.grh.tclass", None),
    ("infiniband.grh.hoplmt", None),
    ("infiniband.bth.opcode", None),
    ("infiniband.bth.se", None),
    ("infiniband.bth.m", None),
    ("infiniband.bth.padcnt", None),
    ("infiniband.bth.tver", None),
    ("infiniband.bth.p_key", None),
    ("infiniband.bth.destqp", None),
    ("infiniband.bth.a", None),
    ("infiniband.bth.psn", None),
    ("infiniband.reth.va", None),
    ("infiniband.reth.r_key", None),
    ("infiniband.reth.dmalen", None),
    ("infiniband.aeth.syndrome", None),
    ("infiniband.aeth.msn", None),
    ("infiniband.deth.q_key", None),
    ("infiniband.deth.srcqp", None),
    ("infiniband.atomiceth", None),
    ("infiniband.atomicacketh.origremdt", None),
    ("infiniband.immdt", None),
    ("infiniband.ieth", None),
    ("infiniband.invariant.crc", None),
]
NAMES = [f for f, _ in FIELDS]


def tshark_rows(tshark, path, decode_as):
    cmd = [tshark, "-n", "-r", path, "-T", "fields", "-E", "separator=\t", "-E", "occurrence=f"]
    for d in decode_as:
        cmd += ["-d", d]
    for f in NAMES:
        cmd += ["-e", f]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    rows = []
    for line in out.splitlines():
        vals = line.split("\t")
        vals += [""] * (len(NAMES) - len(vals))
        rows.append(dict(zip(NAMES, vals)))
    return rows


def b(v):
    return 1 if v in ("1", "True", "true") else 0


def expect(t):
    """What rocelab's jsonl must say for one tshark row, as a dict of flattened keys."""
    e = {"n": int(t["frame.number"]), "len": int(t["frame.len"])}
    if t["vlan.id"]:
        e["vlan.0.vid"] = int(t["vlan.id"])
        e["vlan.0.pcp"] = int(t["vlan.priority"])
    if t["infiniband.bth.opcode"] == "":
        return e, False
    rocev1 = t["infiniband.grh.sgid"] != "" and t["ip.src"] == "" and t["ipv6.src"] == ""
    e["kind"] = "rocev1" if rocev1 else "rocev2"
    if t["ip.src"]:
        e.update({"ip.ver": 4, "ip.src": t["ip.src"], "ip.dst": t["ip.dst"],
                  "ip.dscp": int(t["ip.dsfield.dscp"]), "ip.ecn": int(t["ip.dsfield.ecn"]),
                  "ip.ttl": int(t["ip.ttl"])})
    elif t["ipv6.src"]:
        e.update({"ip.ver": 6, "ip.src": t["ipv6.src"], "ip.dst": t["ipv6.dst"],
                  "ip.dscp": int(t["ipv6.tclass.dscp"]), "ip.ecn": int(t["ipv6.tclass.ecn"]),
                  "ip.ttl": int(t["ipv6.hlim"])})
    if rocev1:
        tc = int(t["infiniband.grh.tclass"], 0)
        e.update({"ip.ver": 6, "ip.dscp": tc >> 2, "ip.ecn": tc & 3,
                  "ip.ttl": int(t["infiniband.grh.hoplmt"])})
    else:
        e["udp.sport"] = int(t["udp.srcport"])
        e["udp.dport"] = int(t["udp.dstport"])
    op = int(t["infiniband.bth.opcode"])
    pad = int(t["infiniband.bth.padcnt"])
    e.update({"bth.opcode": op, "bth.se": b(t["infiniband.bth.se"]),
              "bth.m": b(t["infiniband.bth.m"]), "bth.pad": pad,
              "bth.tver": int(t["infiniband.bth.tver"]), "bth.pkey": int(t["infiniband.bth.p_key"]),
              "bth.dqpn": int(t["infiniband.bth.destqp"], 0),
              "bth.ackreq": b(t["infiniband.bth.a"]), "bth.psn": int(t["infiniband.bth.psn"])})
    ext = 0
    # tshark shows the AtomicETH's VA and R_Key in the reth.* fields (no dmalen then)
    if t["infiniband.reth.va"] and not t["infiniband.atomiceth"]:
        e["reth.va"] = int(t["infiniband.reth.va"], 0)
        e["reth.rkey"] = int(t["infiniband.reth.r_key"], 0)
        e["reth.dmalen"] = int(t["infiniband.reth.dmalen"], 0)
        ext += 16
    if t["infiniband.aeth.syndrome"]:
        e["aeth.syndrome"] = int(t["infiniband.aeth.syndrome"])
        e["aeth.msn"] = int(t["infiniband.aeth.msn"])
        ext += 4
    if t["infiniband.deth.q_key"]:
        e["deth.qkey"] = int(t["infiniband.deth.q_key"], 0)
        e["deth.srcqp"] = int(t["infiniband.deth.srcqp"], 0)
        ext += 8
    if t["infiniband.atomiceth"]:
        raw = bytes.fromhex(t["infiniband.atomiceth"].replace(":", ""))
        e["atomiceth.va"] = int.from_bytes(raw[0:8], "big")
        e["atomiceth.rkey"] = int.from_bytes(raw[8:12], "big")
        e["atomiceth.swap"] = int.from_bytes(raw[12:20], "big")
        e["atomiceth.cmp"] = int.from_bytes(raw[20:28], "big")
        if t["infiniband.reth.va"]:
            assert int(t["infiniband.reth.va"], 0) == e["atomiceth.va"]
        ext += 28
    if t["infiniband.atomicacketh.origremdt"]:
        e["atomicacketh.orig"] = int(t["infiniband.atomicacketh.origremdt"])
        ext += 8
    if t["infiniband.immdt"]:
        e["immdt"] = int(t["infiniband.immdt"].replace(":", ""), 16)
        ext += 4
    if t["infiniband.ieth"]:
        e["ieth"] = int(t["infiniband.ieth"].replace(":", ""), 16)
        ext += 4
    if t["infiniband.invariant.crc"]:
        # both show the 4 stored bytes in wire order
        e["icrc"] = int(t["infiniband.invariant.crc"], 16)
    if op != 0x81:  # tshark 4.0 does not know the CNP: its 16 reserved bytes show as vendor data
        if rocev1:
            body = int(t["infiniband.grh.paylen"])
        else:
            body = int(t["udp.length"]) - 8
        e["payload_len"] = body - 12 - ext - pad - 4
    return e, True


def flatten(obj, prefix=""):
    out = {}
    for k, v in obj.items():
        key = prefix + k
        if isinstance(v, dict):
            out.update(flatten(v, key + "."))
        elif isinstance(v, list):
            for i, x in enumerate(v):
                if isinstance(x, dict):
                    out.update(flatten(x, "%s.%d." % (key, i)))
                else:
                    out["%s.%d" % (key, i)] = x
        else:
            out[key] = v
    return out


def verbose_icrcs(rocelab, path):
    """Frame number -> the ICRC `dissect -v` prints (its 4 bytes in wire order), as text."""
    r = subprocess.run([rocelab, "dissect", "-v", path], capture_output=True, text=True)
    icrc, n = {}, None
    for line in r.stdout.splitlines():
        m = re.match(r"frame (\d+):", line)
        if m:
            n = int(m.group(1))
        m = re.match(r"  icrc: (0x[0-9a-f]{8})", line)
        if m:
            icrc[n] = m.group(1)
    return icrc


def snaplen_check(rocelab, tshark, editcap, path, name, snap):
    """
    The capture cut at @snap bytes a frame: rocelab decodes the BTH of every RoCE frame whose BTH
    was captured as tshark does, the extended headers and payload length as in the whole file
    when they were captured, and claims no ICRC for a frame cut short. Returns the failures.
    """
    whole = [json.loads(l) for l in subprocess.run(
        [rocelab, "dissect", "--format=jsonl", path], capture_output=True, text=True,
        check=True).stdout.splitlines()]
    with tempfile.TemporaryDirectory() as tmp:
        cut = os.path.join(tmp, "cut.pcap")
        subprocess.run([editcap, "-s", str(snap), path, cut], check=True)
        ours = [json.loads(l) for l in subprocess.run(
            [rocelab, "dissect", "--format=jsonl", cut], capture_output=True, text=True,
            check=True).stdout.splitlines()]
        theirs = tshark_rows(tshark, cut, [])
    bad = 0
    for w, o, t in zip(whole, ours, theirs):
        if "bth" not in w:
            continue
        if t["infiniband.bth.psn"] and ("bth" not in o or
                (o["bth"]["opcode"], o["bth"]["dqpn"], o["bth"]["psn"]) !=
                (int(t["infiniband.bth.opcode"]), int(t["infiniband.bth.destqp"], 0),
                 int(t["infiniband.bth.psn"]))):
            print("FAIL %s -s %d frame %d: rocelab %r, tshark opcode %s qp %s psn %s" %
                  (name, snap, w["n"], o.get("bth"), t["infiniband.bth.opcode"],
                   t["infiniband.bth.destqp"], t["infiniband.bth.psn"]))
            bad += 1
        if "payload_len" in o and (o["payload_len"] != w["payload_len"] or
                                   any(o.get(h) != w.get(h) for h in ("reth", "aeth", "deth"))):
            print("FAIL %s -s %d frame %d: %r, whole %r" % (name, snap, w["n"], o, w))
            bad += 1
        if w["len"] > snap and ("icrc" in o or "icrc_ok" in o):
            print("FAIL %s -s %d frame %d: an ICRC claimed: %r" % (name, snap, w["n"], o))
            bad += 1
    return bad


def main():
    if len(sys.argv) < 2:
        print("usage: diff_tshark_real.py ROCELAB [PCAP_DIR]", file=sys.stderr)
        return 2
    rocelab = sys.argv[1]
    base = sys.argv[2] if len(sys.argv) > 2 else os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "..", "..", "shared", "pcap")
    tshark = shutil.which("tshark")
    if tshark is None:
        print("SKIP: tshark not installed")
        return 77
    files = sorted(glob.glob(os.path.join(base, "real", "*.pcap")) +
                   glob.glob(os.path.join(base, "vectors", "*.pcap")) +
                   glob.glob(os.path.join(base, "rxe", "*.pcap")))
    if not files:
        print("SKIP: no captures under %s" % base)
        return 77
    bad = 0
    checked_frames = checked_fields = 0
    for path in files:
        name = os.path.basename(path)
        r = subprocess.run([rocelab, "--log-level", "error", "dissect", "--format=jsonl", path],
                           capture_output=True, text=True)
        if r.returncode == 1 and "not Ethernet" in r.stderr:    # nothing decoded: exit 1
            print("skip %s (%s)" % (name, r.stderr.strip().split(": ", 1)[-1]))
            continue
        if r.returncode != 0:
            print("FAIL %s: rocelab exit %d: %s" % (name, r.returncode, r.stderr.strip()))
            bad += 1
            continue
        ours = [flatten(json.loads(line)) for line in r.stdout.splitlines()]
        # oferby_proxy: RoCE frames with UDP source port 69 are TFTP to tshark (SOURCES.md)
        decode_as = ["udp.port==69,infiniband"] if "oferby_proxy" in name else []
        theirs = tshark_rows(tshark, path, decode_as)
        if len(ours) != len(theirs):
            print("FAIL %s: rocelab %d frames, tshark %d" % (name, len(ours), len(theirs)))
            bad += 1
            continue
        file_bad = 0
        for o, t in zip(ours, theirs):
            try:
                e, roce = expect(t)
            except ValueError as x:
                print("FAIL %s frame %s: tshark fields not understood (%s): %r" %
                      (name, t["frame.number"], x, t))
                file_bad += 1
                continue
            checked_frames += 1
            if roce and o.get("kind") not in ("rocev2", "rocev1"):
                print("FAIL %s frame %d: tshark sees RoCE, rocelab says %s" %
                      (name, e["n"], o.get("kind")))
                file_bad += 1
                continue
            if not roce and o.get("kind") in ("rocev2", "rocev1") and "error" not in o:
                print("FAIL %s frame %d: rocelab sees RoCE, tshark does not" % (name, e["n"]))
                file_bad += 1
                continue
            for k, v in e.items():
                checked_fields += 1
                if o.get(k) != v:
                    print("FAIL %s frame %d: %s rocelab %r tshark %r" % (name, e["n"], k,
                                                                          o.get(k), v))
                    file_bad += 1
            # every header rocelab shows, tshark shows too
            for h in ("reth", "aeth", "deth", "atomiceth", "atomicacketh"):
                if roce and any(k.startswith(h + ".") for k in o) and \
                        not any(k.startswith(h + ".") for k in e):
                    print("FAIL %s frame %d: rocelab has %s, tshark not" % (name, e["n"], h))
                    file_bad += 1
            if roce and o.get("icrc_ok") is not True:
                print("FAIL %s frame %d: icrc_ok %r" % (name, e["n"], o.get("icrc_ok")))
                file_bad += 1
        # -v prints an ICRC as tshark does: its 4 bytes in wire order
        icrcs = verbose_icrcs(rocelab, path)
        for t in theirs:
            want = t["infiniband.invariant.crc"]
            if want and icrcs.get(int(t["frame.number"])) != want:
                print("FAIL %s frame %s: -v icrc %s, tshark %s" %
                      (name, t["frame.number"], icrcs.get(int(t["frame.number"])), want))
                file_bad += 1
        editcap = shutil.which("editcap")
        if editcap is not None and os.path.basename(os.path.dirname(path)) == "rxe":
            for snap in (100, 60):
                file_bad += snaplen_check(rocelab, tshark, editcap, path, name, snap)
        print("%s %s (%d frames)" % ("FAIL" if file_bad else "ok  ", name, len(ours)))
        bad += file_bad != 0
    print("%d files, %d frames, %d fields compared, %d files differ" %
          (len(files), checked_frames, checked_fields, bad))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
