#!/usr/bin/env python3
"""Frames dropped by `rocelab switch` between the Linux kernel's soft-RoCE and rocelab are
recovered by both sides. shared/tools/rxe-vm boots a guest with rxe0 (perftest 6.06); inside
the run's namespace the host command takes the address off the guest's tap, makes a veth pair,
runs `rocelab switch` between the tap and one end, and `rocelab perf` on the other end with the
host address, so every frame between rxe and rocelab (ARP, perftest's TCP exchange, RoCE)
crosses the switch. Cases:
  drop_cli    rocelab client (--psn 0x100) -> ib_write_bw server: the switch drops the
              requests with PSN 0x105 and 0x180 (--drop-psn); rxe NAKs the gap, rocelab
              retransmits, both exit 0 with their result rows, the switch counts 2 drops;
  loss_srv    ib_write_bw client -> rocelab server, --loss 0.01 on RoCE frames: rxe's requester
              recovers, rocelab's responder sees requests out of sequence, both exit 0, the
              switch counts its drops;
  read_cli    rocelab client -> ib_read_bw server, no fault: the baseline through the switch.
  read_loss_srv  ib_read_bw client -> rocelab server, --loss 0.02: rxe re-issues READs from
              inside a message for their rest, rocelab answers each as a READ of its own
              (READ Response First or Only, docs/fidelity.md; rxe's own responder would go on
              with Middle/Last), and rxe's requester takes them: both exit 0. rocelab's
              capture shows the re-issued READs and their answers.

Usage: rxe_switch.py ROCELAB RXE_VM [CASE ...]; exit 77 (skip) when the VM cannot be built or
run (not root, no namespaces, no rxe-vm, a failed build). Reuses rxe_interop.py's VM build
(/tmp/rocelab-rxe-vm-HASH) and names its namespace and tap rlswxPID / rlswtPID.
"""
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import rxe_interop  # noqa: E402  the VM build and the namespace probe

SKIP = 77
HOST_IP, GUEST_IP = "192.0.2.1", "192.0.2.2"
ITERS = 50
SIZE = 65536
VM_TIMEOUT = 200
PEER_TIMEOUT = 90
NS = "rlswx%d" % os.getpid()
TAP = "rlswt%d" % os.getpid()

# case -> (test, rocelab serves?, switch options, rocelab options)
CASES = {
    "drop_cli": ("write_bw", False, ["--drop-psn", "0x105", "--drop-psn", "0x180"],
                 ["--psn", "0x100"]),
    "loss_srv": ("write_bw", True, ["--loss", "0.01", "--seed", "3"], []),
    "read_cli": ("read_bw", False, [], []),
    "read_loss_srv": ("read_bw", True, ["--loss", "0.02", "--seed", "3"], []),
}
RETRANS = re.compile(r"transport: (\d+) retransmitted, (\d+) received out of sequence")
BW_ROW = re.compile(r"^\s*(\d+)\s+(\d+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s*$", re.M)
child = None


def log(*a):
    print(*a, flush=True)


def stop_child():
    global child
    rxe_interop.stop_vm(child, NS)
    child = None


def on_signal(signum, _frame):
    stop_child()
    sys.exit(128 + signum)


def host_cmd(rocelab, test, server, sw_opts, rl_opts):
    """Bash inside the namespace: the switch between the tap and a veth, rocelab perf behind it."""
    # deep rings (docs/live.md): with af_packet's default 512 frames, 16 outstanding 64 KiB
    # READ responses from the guest overflowed the tap side's ring while the switch was off
    # its core (1097 frames lost, the client out of retries)
    sw = [rocelab, "switch", "--port", "net_af_packet0,iface=$RXE_VM_TAP,framecnt=16384",
          "--port", "net_af_packet1,iface=rlswh1,framecnt=16384", "--rate", "200M"] + sw_opts
    perf = [rocelab, "perf", test, "-s", str(SIZE), "-n", str(ITERS), "--timeout", "40",
            "--rate", "200M"] + rl_opts + ["--dev", "net_af_packet0,iface=rlswh0",
                                           "--ip", "$RXE_VM_HOST_IP"]
    if not server:
        perf.append("$RXE_VM_GUEST_IP")
    return "; ".join([
        # the tap belongs to the switch now: the host's address moves behind it, and the
        # namespace's kernel must not answer the guest's ARP on the tap for an address it
        # holds on another interface (Linux's default, arp_ignore=0): the guest would send
        # to the tap's MAC, which the switch has learned on the tap's own side
        "ip addr flush dev $RXE_VM_TAP", "ip link set dev $RXE_VM_TAP arp off",
        "ip link add rlswh0 type veth peer name rlswh1",
        "ip addr add $RXE_VM_HOST_IP/24 dev rlswh0",
        "ip link set rlswh0 up", "ip link set rlswh1 up",
        "(%s > $RXE_VM_LOG.switch 2>&1 & echo $! > $RXE_VM_LOG.switch.pid)" % " ".join(sw),
        "sleep 1",
        "timeout --foreground -k 5 %d %s; echo \"ROCELAB-EXIT rc=$?\"" % (PEER_TIMEOUT,
                                                                        " ".join(perf)),
        "kill -TERM $(cat $RXE_VM_LOG.switch.pid)",
        "sleep 2",
        "cat $RXE_VM_LOG.switch",
    ])


def guest_cmd(test, server):
    cmd = "ib_%s -d rxe0 -x $RXE_GID_V2_IPV4 -n %d -F -s %d" % (test, ITERS, SIZE)
    if server:
        return "timeout %d %s" % (PEER_TIMEOUT, cmd)
    return "timeout %d %s %s" % (PEER_TIMEOUT, cmd, HOST_IP)


def reissued_reads(rocelab, path):
    """READs re-issued from inside a message in rocelab's capture, and rocelab's first answers
    to them: (count, opcodes of those answers)."""
    d = subprocess.run([rocelab, "dissect", "--format=jsonl", path], stdout=subprocess.PIPE,
                       stderr=subprocess.DEVNULL, text=True)
    first = {}	# PSN of a READ asked for the first time -> packets of its answer
    pending = set()
    count, ops = 0, set()
    for line in d.stdout.splitlines():
        f = json.loads(line)
        bth = f.get("bth")
        if bth is None:
            continue
        psn, op = bth["psn"], bth["op"]
        if op == "RC_RDMA_READ_REQUEST":
            npkts = max(1, (f["reth"]["dmalen"] + 1023) // 1024)
            if any(p < psn < p + n for p, n in first.items()):
                count += 1
                pending.add(psn)
            elif psn not in first:
                first[psn] = npkts
        elif op.startswith("RC_RDMA_READ_RESPONSE") and psn in pending:
            pending.discard(psn)
            ops.add(op)
    return count, ops


def counters(text):
    """Totals over ports of the switch's 'name: value' lines."""
    tot = {}
    for m in re.finditer(r"^\s+(\w+): (\d+)$", text, re.M):
        tot[m.group(1)] = tot.get(m.group(1), 0) + int(m.group(2))
    return tot


def run_case(rocelab, rxe_vm, d, logdir, name):
    global child
    test, rl_server, sw_opts, rl_opts = CASES[name]
    console = os.path.join(logdir, name + ".log")
    capture = os.path.join(logdir, name + ".pcap")
    if name == "read_loss_srv":
        rl_opts = rl_opts + ["--capture", capture]
    args = [rxe_vm, "start", d, "--log", console, "--timeout", str(VM_TIMEOUT),
            "--cmd", guest_cmd(test, not rl_server),
            "--host-cmd", host_cmd(rocelab, test, rl_server, sw_opts, rl_opts)]
    if rl_server:
        args.append("--host-early")
    else:
        args += ["--host-wait", "Waiting for client"]
    env = dict(os.environ, RXE_VM_NS=NS, RXE_VM_TAP=TAP, RXE_VM_IPV6="0",
               RXE_VM_HOST_IP=HOST_IP, RXE_VM_GUEST_IP=GUEST_IP)
    t0 = time.monotonic()
    with open(os.path.join(logdir, name + ".out"), "w+") as out:
        child = subprocess.Popen(args, stdout=out, stderr=subprocess.STDOUT, env=env,
                                 stdin=subprocess.DEVNULL)
        try:
            vm_rc = child.wait(timeout=VM_TIMEOUT + 60)
        except subprocess.TimeoutExpired:
            vm_rc = None
        stop_child()
        out.seek(0)
        whole = out.read()
    secs = time.monotonic() - t0
    failures = []
    host = ""
    if os.path.exists(console + ".host"):
        with open(console + ".host") as fh:
            host = fh.read()
    guest = rxe_interop.section(whole, "RXE-VM: CMD-START", "RXE-VM: CMD-EXIT")
    m = re.search(r"ROCELAB-EXIT rc=(\d+)", host)
    if vm_rc is None or vm_rc == 124:
        failures.append("%s: the VM run timed out" % name)
    if "RXE-VM: READY" not in whole:
        failures.append("%s: the guest never got rxe0 up" % name)
    if m is None or m.group(1) != "0":
        failures.append("%s: rocelab perf exit %s" % (name, m.group(1) if m else "none"))
    if vm_rc != 0:
        failures.append("%s: the guest's perftest (rxe-vm) exit %s" % (name, vm_rc))
    rows = {"rxe": BW_ROW.findall(guest), "rocelab": BW_ROW.findall(host)}
    for side, r in rows.items():
        if not r or int(r[0][0]) != SIZE or int(r[0][1]) != ITERS:
            failures.append("%s: %s printed no %d x %d result row" % (name, side, SIZE, ITERS))
    if "rocelab switch: stopped (signal)" not in host:
        failures.append("%s: the switch did not stop on SIGTERM with its counters" % name)
    c = counters(host[host.find("rocelab switch: stopped"):])
    rt = RETRANS.findall(host)
    if c.get("tx_prio0_frames", 0) < ITERS * (SIZE // 1024):
        failures.append("%s: the switch forwarded %d frames, the test needs %d" %
                        (name, c.get("tx_prio0_frames", 0), ITERS * (SIZE // 1024)))
    if name == "drop_cli":
        if c.get("drop_psn") != 2:
            failures.append("%s: the switch counts %s --drop-psn drops, expected 2" %
                            (name, c.get("drop_psn")))
        if not rt or int(rt[0][0]) < 1:
            failures.append("%s: rocelab counts no retransmit" % name)
    elif name == "loss_srv":
        if c.get("drop_loss", 0) < 1:
            failures.append("%s: the switch dropped nothing at --loss 0.01" % name)
        if not rt or int(rt[0][1]) < 1:
            failures.append("%s: rocelab's responder saw nothing out of sequence" % name)
    elif name == "read_loss_srv":
        if c.get("drop_loss", 0) < 1:
            failures.append("%s: the switch dropped nothing at --loss 0.02" % name)
        n, ops = reissued_reads(rocelab, capture)
        note_reads = "%d READs re-issued inside a message, answered %s" % (n, sorted(ops))
        if n < 1 or not ops <= {"RC_RDMA_READ_RESPONSE_FIRST", "RC_RDMA_READ_RESPONSE_ONLY"}:
            failures.append("%s: expected READs re-issued from inside a message, answered "
                            "First or Only: %s" % (name, note_reads))
    elif c.get("drop_psn", 0) or c.get("drop_loss", 0):
        failures.append("%s: the switch dropped frames without a fault asked" % name)
    note = "switch drop_psn %s drop_loss %s csum %s, rocelab %s, rows rxe %s rocelab %s" % (
        c.get("drop_psn"), c.get("drop_loss"), c.get("csum_completed"), rt,
        rows["rxe"][0][3] if rows["rxe"] else "-", rows["rocelab"][0][3] if rows["rocelab"] else "-")
    if name == "read_loss_srv":
        note += "; " + note_reads
        if not failures:
            os.unlink(capture)	# 12 MB: kept only to look into a failure
    if failures:
        failures.append("%s: logs in %s/%s.*; host:\n%s\nlast lines:\n%s" %
                        (name, logdir, name, host[-3000:], "\n".join(whole.splitlines()[-40:])))
    return failures, note, secs


def main():
    if len(sys.argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    rocelab, rxe_vm = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    names = sys.argv[3:] or list(CASES)
    bad = [n for n in names if n not in CASES]
    if bad:
        print("unknown case(s) %s (known: %s)" % (bad, list(CASES)), file=sys.stderr)
        return 2
    d = rxe_interop.vm_or_skip(rxe_vm)
    if d is None:
        return SKIP
    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    logdir = tempfile.mkdtemp(prefix="rocelab-rxe-switch-")
    failures = []
    try:
        for n in names:
            f, note, secs = run_case(rocelab, rxe_vm, d, logdir, n)
            log("%-9s %s %.1f s | %s" % (n, "FAILED" if f else "ok", secs, note))
            failures += f
    finally:
        stop_child()
    for f in failures:
        log("FAIL " + f)
    log("%d case(s), %d failure(s)" % (len(names), len(failures)))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
