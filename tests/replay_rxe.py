#!/usr/bin/python3
"""rocelab replay --responder against the Linux soft-RoCE (rxe) captures in shared/pcap/rxe and in
the project's own pcap/rxe: the RC requests of each capture are fed to rocelab's responder, and
its answers must match rxe's frame by frame (exit 0, "MATCH"). Captures where rocelab and rxe
genuinely differ are listed in KNOWN with the difference the tool must name and how many
responses differ (no other difference): if rocelab changes, the test says so.
Captures without RC requests (UC, UD) must be refused with one line. A crafted WRITE then READ
checks that payload bytes known from the replayed WRITE are compared (and a wrong byte caught),
a crafted resent Fetch&Add that the original value of its second answer is (one executed again
caught), and --pcap writes rocelab's answers with valid ICRCs.

Usage: replay_rxe.py ROCELAB SHARED_PCAP_DIR PROJECT_PCAP_DIR. The project's captures are always
there; when shared/pcap/rxe is missing its captures are skipped, and the test exits 77 if
nothing else failed.
"""
import json
import os
import re
import subprocess
import sys
import tempfile

SKIP = 77

# rocelab answers as rxe does (every response matched)
MATCH = [
    "ibv_rc_pingpong", "rc_atomic_fetch_add", "rc_imm_write_send", "rc_nak_inv_req_no_atomic",
    "rc_nak_inv_req_no_write", "rc_nak_rem_access_bad_rkey",
    "rc_read_bw", "rc_read_bw_loss_req", "rc_read_lat", "rc_send_bw", "rc_send_bw_loss_req",
    "rc_write_bw", "rc_write_bw_loss_ack", "rc_write_bw_loss_req", "rc_write_bw_pmtu4096",
    "rc_write_lat", "rc_write_lat_loss", "rping", "rping_ipv6", "rstream_write_imm",
    "rc_send_bw_rnr",	# receives posted as its RNR NAKs and ACKs show they were taken
]
# the other side's responder too (both hosts answer requests in these)
MATCH_OTHER = {"rc_write_lat": "192.0.2.3", "rping": "192.0.2.3", "ibv_rc_pingpong": "192.0.2.3"}
# genuine differences (reported; lib/transport is not this test's to change), and why: the
# text the tool must name, and how many responses differ (nothing missing or extra)
KNOWN = {}
KNOWN_OTHER = {}
NO_RC = ["ibv_uc_pingpong", "ibv_ud_pingpong", "uc_send_bw", "ud_send_bw"]

# the project's captures (pcap/rxe, SOURCES.md there): answers resent after losses on the
# responder's egress
PROJECT_MATCH = [
    "rc_atomic_fetch_add_loss_ack",	# resent atomics answered from the saved result, MSN now
    "rc_atomic_cmp_swap_loss_ack",
    # copies of shared ones, held for the CM MADs they carry (tests/diff_tshark_cm.py)
    "rping", "rping_ipv6", "rstream_write_imm",
]
PROJECT_KNOWN = {
    # a READ re-issued from inside a message (frames 207, 262): rocelab answers it as a READ of
    # its own, FIRST...LAST or ONLY, as hfi1 does and rxe's requester takes; rxe's responder
    # goes on with the first answer's opcodes, MIDDLE/LAST (docs/fidelity.md)
    "rc_read_bw_loss_resp": (r"differs: opcode RC_RDMA_READ_RESPONSE_MIDDLE vs "
                             r"RC_RDMA_READ_RESPONSE_FIRST(?s:.*)differs: opcode "
                             r"RC_RDMA_READ_RESPONSE_LAST vs RC_RDMA_READ_RESPONSE_ONLY", 2),
}
# resent atomics: their answers' original values are compared
PROJECT_COMPARED = ["rc_atomic_fetch_add_loss_ack", "rc_atomic_cmp_swap_loss_ack"]

SUMMARY = re.compile(r"responses: (\d+) in the capture, (\d+) from rocelab: (\d+) matched, "
                     r"(\d+) differ, (\d+) missing, (\d+) extra, (\d+) lost .*; (\d+) payload "
                     r"bytes compared: (MATCH|MISMATCH)")

failures = []


def fail(msg):
    failures.append(msg)
    print("FAIL: " + msg)


def replay(rocelab, path, *opts):
    try:
        return subprocess.run([rocelab, "replay", path, "--responder"] + list(opts),
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                              timeout=120)
    except subprocess.TimeoutExpired:
        fail("%s: timed out" % path)
        return None


def check_file(rocelab, rxe, name, opts=(), expect="MATCH", ndiffer=0, compared=False):
    path = os.path.join(rxe, name + ".pcap")
    p = replay(rocelab, path, *opts)
    if p is None:
        return
    m = SUMMARY.search(p.stdout)
    label = name + (" " + " ".join(opts) if opts else "")
    if m is None:
        fail("%s: exit %d, no summary line: %s" % (label, p.returncode, p.stderr.strip()))
        return
    cap, ours, matched, differ, missing, extra, lost, payload, verdict = m.groups()
    print("%-45s %3s responses: %3s matched, %s differ, %s missing, %s extra, %s lost; "
          "%s payload bytes; %s (exit %d)" % (label, cap, matched, differ, missing, extra, lost,
                                              payload, verdict, p.returncode))
    if compared and int(payload) == 0:
        fail("%s: no atomic result compared" % label)
    if expect == "MATCH":
        if verdict != "MATCH" or p.returncode != 0 or int(matched) == 0:
            fail("%s: expected every response to match rxe's:\n%s" % (label, p.stdout))
    else:
        if verdict != "MISMATCH" or p.returncode != 1:
            fail("%s: a known difference from rxe no longer shows: update KNOWN (%s)"
                 % (label, verdict))
        elif (not re.search(expect, p.stdout) or int(differ) != ndiffer or int(missing) != 0 or
              int(extra) != 0):
            fail("%s: differs, but not as known (%d differing: %s):\n%s"
                 % (label, ndiffer, expect, p.stdout))


def check_payload(rocelab, tmp):
    """WRITE 2 KiB, READ 3000 B back from its middle: the 1024 written bytes are compared."""
    lines = [
        "op=RC_RDMA_WRITE_FIRST src=10.0.0.1 dst=10.0.0.2 qp=0x11 psn=100 va=0x10000 rkey=0x1234 "
        "dmalen=2048 len=1024 pattern=random seed=7",
        "op=RC_RDMA_WRITE_LAST src=10.0.0.1 dst=10.0.0.2 qp=0x11 psn=101 ackreq=1 len=1024 "
        "pattern=random seed=8",
        "op=RC_ACKNOWLEDGE src=10.0.0.2 dst=10.0.0.1 qp=0x22 psn=101 syndrome=0x1f msn=1",
        "op=RC_RDMA_READ_REQUEST src=10.0.0.1 dst=10.0.0.2 qp=0x11 psn=102 va=0x10400 rkey=0x1234 "
        "dmalen=3000",
        "op=RC_RDMA_READ_RESPONSE_FIRST src=10.0.0.2 dst=10.0.0.1 qp=0x22 psn=102 syndrome=0x1f "
        "msn=2 len=1024 pattern=random seed=%d",
        "op=RC_RDMA_READ_RESPONSE_MIDDLE src=10.0.0.2 dst=10.0.0.1 qp=0x22 psn=103 len=1024 "
        "pattern=0x5a",
        "op=RC_RDMA_READ_RESPONSE_LAST src=10.0.0.2 dst=10.0.0.1 qp=0x22 psn=104 syndrome=0x1f "
        "msn=2 len=952 pattern=0x5a",
    ]
    for seed, want in ((8, "MATCH"), (9, "MISMATCH")):
        src = os.path.join(tmp, "wr%d.pcap" % seed)
        out = os.path.join(tmp, "wr%d-out.pcap" % seed)
        text = "\n".join(lines).replace("seed=%d", "seed=%d" % seed) + "\n"
        subprocess.run([rocelab, "craft", "-o", src, "-f", "-"], input=text, text=True,
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        p = replay(rocelab, src, "--pcap", out)
        if p is None:
            continue
        m = SUMMARY.search(p.stdout)
        print("crafted WRITE then READ (READ data %s): %s" % (
            "as written" if seed == 8 else "not as written",
            m.group(0) if m else p.stdout + p.stderr))
        if m is None or m.group(9) != want or int(m.group(8)) != 1024:
            fail("crafted WRITE then READ (seed %d): expected %s with 1024 payload bytes "
                 "compared" % (seed, want))
        if want == "MISMATCH" and "known payload byte(s) differ" not in p.stdout:
            fail("a wrong READ byte is not named")
        d = subprocess.run([rocelab, "dissect", "--format=jsonl", out], stdout=subprocess.PIPE,
                           text=True).stdout.splitlines()
        frames = [json.loads(l) for l in d]
        resp = [f for f in frames if f.get("ip", {}).get("src") == "10.0.0.2"]
        if len(frames) != 7 or len(resp) != 4 or not all(f.get("icrc_ok") for f in frames):
            fail("--pcap: expected 3 requests and 4 responses with valid ICRCs, got %d/%d"
                 % (len(frames), len(resp)))


def check_resent_atomic(rocelab, tmp):
    """A Fetch&Add resent after its ACK was lost: the answers' original values are compared."""
    lines = [
        "op=RC_FETCH_ADD src=10.0.0.1 dst=10.0.0.2 qp=0x11 psn=200 va=0x20000 rkey=0x77 swap=3",
        "op=RC_ATOMIC_ACKNOWLEDGE src=10.0.0.2 dst=10.0.0.1 qp=0x22 psn=200 syndrome=0x1f msn=1 "
        "orig=5",
        "op=RC_FETCH_ADD src=10.0.0.1 dst=10.0.0.2 qp=0x11 psn=200 va=0x20000 rkey=0x77 swap=3",
        "op=RC_ATOMIC_ACKNOWLEDGE src=10.0.0.2 dst=10.0.0.1 qp=0x22 psn=200 syndrome=0x1f msn=1 "
        "orig=%d",
    ]
    # 5: answered from the saved result, as rocelab does; 8: executed again
    for orig, want in ((5, "MATCH"), (8, "MISMATCH")):
        src = os.path.join(tmp, "atomic%d.pcap" % orig)
        text = "\n".join(lines).replace("orig=%d", "orig=%d" % orig) + "\n"
        subprocess.run([rocelab, "craft", "-o", src, "-f", "-"], input=text, text=True,
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        p = replay(rocelab, src)
        if p is None:
            continue
        m = SUMMARY.search(p.stdout)
        print("crafted Fetch&Add resent (second answer %s): %s" % (
            "from the saved result" if orig == 5 else "executed again",
            m.group(0) if m else p.stdout + p.stderr))
        if m is None or m.group(9) != want or int(m.group(8)) != 8:
            fail("crafted resent Fetch&Add (orig %d): expected %s with 8 bytes compared"
                 % (orig, want))
        if want == "MISMATCH" and "original value 0x8 vs 0x5" not in p.stdout:
            fail("a resent atomic executed again is not named")


def main():
    if len(sys.argv) != 4:
        print(__doc__, file=sys.stderr)
        return 2
    rocelab, shared, project = sys.argv[1], sys.argv[2], sys.argv[3]
    own = os.path.join(project, "rxe")
    for name in PROJECT_MATCH:
        check_file(rocelab, own, name, compared=name in PROJECT_COMPARED)
    for name, (why, n) in PROJECT_KNOWN.items():
        check_file(rocelab, own, name, expect=why, ndiffer=n,
                   compared=name in PROJECT_COMPARED)
    listed = set(PROJECT_MATCH) | set(PROJECT_KNOWN)
    for f in sorted(os.listdir(own)):
        if f.endswith(".pcap") and f[:-5] not in listed:
            fail("%s: a capture of pcap/rxe this test does not list" % f)
    with tempfile.TemporaryDirectory() as tmp:
        check_payload(rocelab, tmp)
        check_resent_atomic(rocelab, tmp)
    rxe = os.path.join(shared, "rxe")
    if not os.path.isdir(rxe):
        print("replay_rxe: no %s: its captures skipped; %s" % (
            rxe, "%d failure(s)" % len(failures) if failures else "the rest OK"))
        return 1 if failures else SKIP
    for name in MATCH:
        check_file(rocelab, rxe, name)
    for name, ip in MATCH_OTHER.items():
        check_file(rocelab, rxe, name, ("--responder-ip", ip))
    for name, (why, n) in KNOWN.items():
        check_file(rocelab, rxe, name, expect=why, ndiffer=n)
    for name, (ip, why, n) in KNOWN_OTHER.items():
        check_file(rocelab, rxe, name, ("--responder-ip", ip), expect=why, ndiffer=n)
    for name in NO_RC:
        p = replay(rocelab, os.path.join(rxe, name + ".pcap"))
        if p is not None and (p.returncode != 1 or "no RC request" not in p.stderr):
            fail("%s: expected 'no RC request' and exit 1, got %d: %s"
                 % (name, p.returncode, p.stderr.strip()))
    # a responder that advertises end-to-end credits in its ACKs (0x06, rocelab 0x1f): the
    # same answer, and said so
    real = os.path.join(shared, "real", "oferby_proxy__roce.pcap")
    if os.path.exists(real):
        p = replay(rocelab, real)
        if p is not None and (p.returncode != 0 or "MATCH" not in p.stdout or
                              "1 matched ACK(s) advertise other end-to-end credits" not in p.stdout):
            fail("oferby_proxy__roce: expected a MATCH with 1 ACK's credits noted, got %d: %s"
                 % (p.returncode, p.stdout.strip()))
    listed = set(MATCH) | set(KNOWN) | set(NO_RC)
    for f in sorted(os.listdir(rxe)):
        if f.endswith(".pcap") and f[:-5] not in listed:
            fail("%s: a capture this test does not list" % f)
    print("replay_rxe: %s" % ("%d failure(s)" % len(failures) if failures else "OK"))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
