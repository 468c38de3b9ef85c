#!/usr/bin/env python3
# Differential test: the CM MADs on QP1 as `rocelab dissect --format=jsonl` decodes them, against
# tshark's dissector: the message, communication IDs, service ID (and its IP CM port), QPN,
# starting PSN, Q_Key, CA GUID, a REJ's reason and a REQ's RDMA IP CM header. Inputs: the rdma_cm
# captures in pcap/rxe (rping over IPv4 and IPv6, rstream's simultaneous disconnect) and a REJ,
# an MRA and a DREQ crafted by `rocelab craft`; then the captures cut by `editcap -s 120`, whose
# MADs must keep their local IDs and be marked short; and `dissect --summary`'s CM connections:
# one per REQ, its two IDs, QPNs, starting PSNs and service ID, and each message's first time.
#   diff_tshark_cm.py ROCELAB PCAP_DIR     exit 0 agree, 1 differ, 77 tshark or captures missing
import json
import os
import shutil
import subprocess
import sys
import tempfile

CAPTURES = ["rxe/rping.pcap", "rxe/rping_ipv6.pcap", "rxe/rstream_write_imm.pcap"]

# tshark's field for each message's local and remote communication IDs (its names, not ours)
IDS = {
    "REQ": ("infiniband.cm.req", None),
    "REP": ("infiniband.cm.rep", "infiniband.cm.rep.remotecommid"),
    "RTU": ("infiniband.cm.rtu.localcommid", "infiniband.cm.rtu.remotecommid"),
    "REJ": ("infiniband.cm.rej.localcommid", "infiniband.cm.rej.remotecommid"),
    "DREQ": ("infiniband.cm.dreq.localcommid", "infiniband.cm.dreq.remotecommid"),
    "DREP": ("infiniband.cm.drsp.localcommid", "infiniband.cm.drsp.remotecommid"),
}
ATTR = {0x10: "REQ", 0x11: "MRA", 0x12: "REJ", 0x13: "REP", 0x14: "RTU", 0x15: "DREQ", 0x16: "DREP"}
# jsonl key -> tshark field, per message
MORE = {
    "REQ": [("sid", "infiniband.cm.req.serviceid"), ("qpn", "infiniband.cm.req.localqpn"),
            ("psn", "infiniband.cm.req.startpsn")],
    "REP": [("qpn", "infiniband.cm.rep.localqpn"), ("psn", "infiniband.cm.rep.startpsn")],
    "REJ": [("reason", "infiniband.cm.rej.reason"), ("msg_rej", "infiniband.cm.rej.msgrej")],
    "DREQ": [("qpn", "infiniband.cm.req.remoteqpneecn")],
}
MAD = [("class", "infiniband.mad.mgmtclass"), ("method", "infiniband.mad.method"),
       ("status", "infiniband.mad.status"), ("tid", "infiniband.mad.transactionid"),
       ("attr", "infiniband.mad.attributeid"), ("attr_mod", "infiniband.mad.attributemodifier")]
IPCM = [("ip", "infiniband.cm.req.ip_cm.ipv"), ("sport", "infiniband.cm.req.ip_cm.sport")]
NAMES = sorted({"frame.number", "frame.time_relative", "ip.src", "ipv6.src"} | {f for pair in IDS.values() for f in pair if f} |
               {f for rows in MORE.values() for _, f in rows} | {f for _, f in MAD} |
               {f for _, f in IPCM} | {"infiniband.cm.req.serviceid.dport",
                                       "infiniband.cm.req.ip_cm.sip4", "infiniband.cm.req.ip_cm.dip4",
                                       "infiniband.cm.req.ip_cm.sip6", "infiniband.cm.req.ip_cm.dip6"})

# Crafted by hand after IBA 12.6: a REJ of a REQ (consumer reject, as rdma_cm answers a REQ to
# a port nobody listens on), an MRA of a REQ, a DREQ. 256-byte MADs, the rest zero.
HDR = "0107020300000000000000000000abcd"
CRAFTED = [
    HDR + "0012" + "0000" + "00000000" + "00000000" + "3431d239" + "0000001c",
    HDR + "0011" + "0000" + "00000000" + "5cd8cb67" + "3431d239" + "00a0",
    HDR + "0015" + "0000" + "00000000" + "5cd8cb67" + "3431d239" + "00001100",
]


def num(s):
    return int(s, 0)


def tshark_rows(tshark, path):
    cmd = [tshark, "-n", "-r", path, "-Y", "infiniband.mad", "-T", "fields",
           "-E", "separator=\t", "-E", "occurrence=f"]
    for f in NAMES:
        cmd += ["-e", f]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    rows = {}
    for line in out.splitlines():
        vals = line.split("\t") + [""] * len(NAMES)
        row = dict(zip(NAMES, vals))
        rows[int(row["frame.number"])] = row
    return rows


def rocelab_frames(rocelab, path):
    out = subprocess.run([rocelab, "dissect", "--format=jsonl", path], check=True,
                         capture_output=True, text=True).stdout
    return {o["n"]: o for o in map(json.loads, out.splitlines()) if "mad" in o}


def compare(name, t, r, errors):
    """Compare one MAD; return how many fields were compared."""
    n = 0

    def eq(what, want, got):
        nonlocal n
        n += 1
        if want != got:
            errors.append(f"{name}: {what}: tshark {want!r}, rocelab {got!r}")

    mad, cm = r.get("mad", {}), r.get("cm", {})
    for key, field in MAD:
        eq("mad." + key, num(t[field]), mad.get(key))
    msg = ATTR.get(num(t["infiniband.mad.attributeid"]))
    eq("cm.msg", msg, cm.get("msg"))
    lf, rf = IDS.get(msg, (None, None))
    if lf:
        eq("cm.lcid", num(t[lf]), cm.get("lcid"))
    if rf:
        eq("cm.rcid", num(t[rf]), cm.get("rcid"))
    for key, field in MORE.get(msg, []):
        if t[field]:
            eq("cm." + key, num(t[field]), cm.get(key))
    if t["infiniband.cm.req.serviceid.dport"]:
        eq("cm.port", num(t["infiniband.cm.req.serviceid.dport"]), cm.get("port"))
    if t["infiniband.cm.req.ip_cm.ipv"]:
        ipcm = cm.get("ipcm", {})
        for key, field in IPCM:
            eq("cm.ipcm." + key, num(t[field]), ipcm.get(key))
        v = "4" if t["infiniband.cm.req.ip_cm.sip4"] else "6"
        eq("cm.ipcm.src", t["infiniband.cm.req.ip_cm.sip" + v], ipcm.get("src"))
        eq("cm.ipcm.dst", t["infiniband.cm.req.ip_cm.dip" + v], ipcm.get("dst"))
    return n


def check_file(rocelab, tshark, path, label, errors):
    rows = tshark_rows(tshark, path)
    frames = rocelab_frames(rocelab, path)
    if sorted(rows) != sorted(frames):
        errors.append(f"{label}: MAD frames: tshark {sorted(rows)}, rocelab {sorted(frames)}")
    n = 0
    for k in sorted(set(rows) & set(frames)):
        n += compare(f"{label} frame {k}", rows[k], frames[k], errors)
    return len(rows), n


def check_summary(rocelab, tshark, path, label, errors):
    """The summary's connections against the REQs, REPs and message times tshark shows."""
    rows = tshark_rows(tshark, path)
    out = subprocess.run([rocelab, "dissect", "--summary", path], check=True,
                         capture_output=True, text=True).stdout.splitlines()
    got = []
    if "cm connections: " in "\n".join(out):
        i = next(k for k, line in enumerate(out) if line.startswith("cm connections: "))
        got = [(out[i + 1 + 2 * k], out[i + 2 + 2 * k]) for k in range(int(out[i].split()[2]))]
    want = []
    for t in rows.values():
        if ATTR.get(num(t["infiniband.mad.attributeid"])) != "REQ":
            continue
        lcid = num(t["infiniband.cm.req"])
        rep = [r for r in rows.values() if r["infiniband.cm.rep.remotecommid"] and
               num(r["infiniband.cm.rep.remotecommid"]) == lcid]
        src = t["ip.src"] or t["ipv6.src"]
        head = (f"  {src} id 0x{lcid:08x} qpn 0x{num(t['infiniband.cm.req.localqpn']):06x} "
                f"psn {num(t['infiniband.cm.req.startpsn'])} > ")
        if rep:
            r = rep[0]
            head += (f"{r['ip.src'] or r['ipv6.src']} id 0x{num(r['infiniband.cm.rep']):08x} "
                     f"qpn 0x{num(r['infiniband.cm.rep.localqpn']):06x} "
                     f"psn {num(r['infiniband.cm.rep.startpsn'])} ")
        head += f"sid 0x{num(t['infiniband.cm.req.serviceid']):016x}"
        ids = {lcid} | ({num(rep[0]["infiniband.cm.rep"])} if rep else set())
        first = {}
        for k in sorted(rows):
            r = rows[k]
            msg = ATTR.get(num(r["infiniband.mad.attributeid"]))
            lf, rf = IDS.get(msg, (None, None))
            if lf and num(r[lf]) in ids or rf and r[rf] and num(r[rf]) in ids:
                first.setdefault(msg, float(r["frame.time_relative"]))
        want.append((head, first))
    # a connection whose REQ the capture lacks is told by its IDs alone (side 0 - side 1)
    noreq = [line for line, _ in got if " > " not in line]
    got = [g for g in got if " > " in g[0]]
    if len(noreq) != (0 if want else 1 if rows else 0):
        errors.append(f"{label} summary: connections without a REQ: {noreq}")
    if len(got) != len(want):
        errors.append(f"{label} summary: {len(got)} connections, tshark shows {len(want)} REQs")
    for (line, times), (head, first) in zip(got, want):
        if not line.startswith(head):
            errors.append(f"{label} summary: {line!r} does not start {head!r}")
        words = times.split()
        seen = {words[k]: float(words[k + 1]) for k in range(len(words) - 1)
                if words[k] in ATTR.values()}
        if sorted(seen) != sorted(first) or \
                any(abs(seen[m] - first[m]) > 1.5e-6 for m in first):
            errors.append(f"{label} summary: times {seen}, tshark {first}")
    return len(got) + len(noreq)


def check_cut(rocelab, editcap, path, tmp, label, errors):
    """Cut at 120 bytes (38 bytes of an IPv6 frame's MAD): each MAD keeps its local ID and is marked short."""
    cut = os.path.join(tmp, "cut.pcap")
    subprocess.run([editcap, "-s", "120", path, cut], check=True, capture_output=True)
    whole, short = rocelab_frames(rocelab, path), rocelab_frames(rocelab, cut)
    if sorted(whole) != sorted(short):
        errors.append(f"{label} cut: MAD frames {sorted(short)}, whole {sorted(whole)}")
    for k in sorted(set(whole) & set(short)):
        w, s = whole[k], short[k]
        sc, wc = s.get("cm", {}), w.get("cm", {})
        if not s["mad"].get("short") or sc.get("msg") != wc.get("msg") or \
                sc.get("lcid") != wc.get("lcid"):
            errors.append(f"{label} cut frame {k}: {s.get('mad')} {s.get('cm')}")
    return len(short)


def main():
    if len(sys.argv) != 3:
        print("usage: diff_tshark_cm.py ROCELAB PCAP_DIR", file=sys.stderr)
        return 2
    rocelab, pdir = sys.argv[1], sys.argv[2]
    tshark, editcap = shutil.which("tshark"), shutil.which("editcap")
    if tshark is None or editcap is None:
        print("SKIP: tshark or editcap not installed")
        return 77
    paths = [os.path.join(pdir, c) for c in CAPTURES]
    if not all(os.path.exists(p) for p in paths):
        print(f"SKIP: captures missing in {pdir}")
        return 77
    errors = []
    mads = fields = cut = conns = 0
    with tempfile.TemporaryDirectory() as tmp:
        crafted = os.path.join(tmp, "crafted.pcap")
        frames = ["op=UD_SEND_ONLY src=192.0.2.3 dst=192.0.2.2 qp=1 qkey=0x80010000 srcqp=1 "
                  "payload=" + (h + "00" * 256)[:512] for h in CRAFTED]
        subprocess.run([rocelab, "craft", "-o", crafted] + [f + ";" for f in frames],
                       check=True, capture_output=True)
        for path, label in [(p, os.path.basename(p)) for p in paths] + [(crafted, "crafted")]:
            m, f = check_file(rocelab, tshark, path, label, errors)
            mads += m
            fields += f
            cut += check_cut(rocelab, editcap, path, tmp, label, errors)
            conns += check_summary(rocelab, tshark, path, label, errors)
    for e in errors[:40]:
        print(e)
    print(f"{mads} CM MADs, {fields} fields compared with tshark; {cut} cut MADs marked short; "
          f"{conns} connections in the summaries; {len(errors)} differences")
    return 1 if errors or mads == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
