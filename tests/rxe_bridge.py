#!/usr/bin/env python3
"""rocelab on a real RDMA device through rdma-core: the kernel's soft-RoCE (rxe0) in the qemu
guest shared/tools/rxe-vm boots, rocelab's binary copied in beside the guest's rdma-core. One
boot runs every case in order (a guest script), and each is checked here against what rdma-core's
own tool, ibv_devinfo, reports on the same device in the same boot.

Cases:
  devices          `rocelab devices` lists rxe0; exit 0
  devices_match    `rocelab devices -v rxe0` against `ibv_devinfo -v -d rxe0`: port state, link
                   layer, active and max MTU, width and speed, node GUID, firmware,
                   max_qp_rd_atom, and the GID table (index, address, type), entry for entry
  no_device        `rocelab devices nosuch`: exit 1, one line that lists rxe0
  no_library       without libibverbs ($ROCELAB_LIBIBVERBS at a missing file): exit 1, one line
                   naming the package
  port_down        eth0 taken down: rocelab and ibv_devinfo both say PORT_DOWN
  loop_*           `rocelab perf TEST --ibdev rxe0 --verify` in loopback (both ends in one
                   process on rxe0): every test over RC, UC and UD where perftest has them, -a
                   and -b; one result row, every byte checked
  pt_*             rocelab on rxe0 against real perftest on rxe0, in both roles
  emu_*            rocelab on rxe0 in the guest against rocelab emulated on the host (af_packet
                   on the guest's tap), in both roles
  cmp_*            `rocelab compare` on rxe0: write_bw, and write_lat's -a sweep with --out: one
                   table row per size with both figures and their ratio, the report written
                   with its chart, and the line that says a loopback run's frames never
                   reach eth0; write_bw against rocelab emulated on the host (PEER): frames
                   captured on eth0, device.pcap readable by tcpdump with as many, every
                   message compared, the report's pattern; and the completion script, whose
                   differences must be the known ones (COMPLETIONS_KNOWN)
  err_*            one line and exit 1: no such device, no libibverbs, a GID index with no
                   RoCE v2 GID, the port down, a QP the device refuses (its errno), a compare
                   PEER that does not answer
  Every perf case reads rxe0's hw_counters before and after: sent and received packets must
  grow, so that no case can pass without the device.

Usage: rxe_bridge.py ROCELAB RXE_VM
Exit 77 (skip) when the VM cannot be built or run here, as rxe-interop (whose VM build this
shares).
"""
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import rxe_interop  # noqa: E402
from rxe_interop import log  # noqa: E402

SKIP = 77
VM_TIMEOUT = 240
# the run's namespace and tap: RXE_VM_NS and RXE_VM_TAP if set, for runs side by side
NS = os.environ.get("RXE_VM_NS") or "rlb%d" % os.getpid()
TAP = os.environ.get("RXE_VM_TAP") or "rlbt%d" % os.getpid()

# The guest's script: each case between markers, its stdout and stderr apart.
GUEST = r"""
HW=/sys/class/infiniband/rxe0/ports/1/hw_counters
run() {
	name=$1; shift
	echo "@@CASE $name"
	s0=$(cat $HW/sent_pkts); r0=$(cat $HW/rcvd_pkts)
	"$@" >/tmp/o 2>/tmp/e
	rc=$?
	echo "@@HW $(($(cat $HW/sent_pkts) - s0)) $(($(cat $HW/rcvd_pkts) - r0))"
	cat /tmp/o
	sed 's/^/@@ERR /' /tmp/e
	echo "@@RC $rc"
}
# perftest's server in the background, then the given client command
vs_perftest() {
	name=$1; pt=$2; shift 2
	timeout 60 $pt -d rxe0 -x 1 -F -n 100 >/tmp/pt 2>&1 &
	sleep 1
	run $name "$@"
	wait
	sed 's/^/@@PEER /' /tmp/pt
}
# rocelab's server in the background, then perftest's client; the server's output and exit
# status as a case of its own, NAME_rocelab
rl_server() {
	name=$1; pt=$2; shift 2
	("$@" >/tmp/rl 2>/tmp/rle; echo $? >/tmp/rlrc) &
	sleep 1
	run $name timeout 60 $pt -d rxe0 -x 1 -F -n 100 127.0.0.1
	wait
	echo "@@CASE ${name}_rocelab"
	cat /tmp/rl
	sed 's/^/@@ERR /' /tmp/rle
	echo "@@RC $(cat /tmp/rlrc)"
}
run devices rocelab devices
run rocelab_v rocelab devices -v rxe0
run devinfo_v ibv_devinfo -v -d rxe0
run no_device rocelab devices nosuch
run no_library env ROCELAB_LIBIBVERBS=/nonexistent/libibverbs.so.1 rocelab devices
P="timeout 60 rocelab perf"
# the host's emulated rocelab: first its server (started before the boot), then its client
run emu_write_bw_client $P write_bw --ibdev rxe0 -n 100 --verify --timeout 40 192.0.2.1
run emu_write_lat_server $P write_lat --ibdev rxe0 --server -n 100 --verify --timeout 40
# compare's device half as the client of the host's third server: its frames cross eth0
run cmp_peer timeout 120 rocelab compare write_bw --ibdev rxe0 -x 1 -s 4096 -n 100 --timeout 40 --out /tmp/cmpp 192.0.2.1
run cmp_peer_files sh -c 'tcpdump -nn -r /tmp/cmpp/device.pcap 2>/dev/null | grep -c "[.]4791: UDP"; grep -c "<h2>Packet pattern</h2>" /tmp/cmpp/report.html'
run err_cmp_peer timeout 60 rocelab compare write_bw --ibdev rxe0 -x 1 -n 5 --timeout 2 -p 18599 192.0.2.1
for t in write_bw read_bw send_bw atomic_bw write_lat read_lat send_lat; do
	run loop_$t $P $t --ibdev rxe0 -n 200 --verify
done
run loop_write_bw_uc $P write_bw --ibdev rxe0 -c UC -n 200 --verify
run loop_send_bw_uc $P send_bw --ibdev rxe0 -c UC -n 200 --verify
run loop_send_lat_uc $P send_lat --ibdev rxe0 -c UC -n 200 --verify
run loop_send_bw_ud $P send_bw --ibdev rxe0 -c UD -s 1024 -n 200 --verify
run loop_send_lat_ud $P send_lat --ibdev rxe0 -c UD -s 512 -n 200 --verify
run loop_write_bw_all $P write_bw --ibdev rxe0 -a --all-max 65536 -n 20 --verify
run loop_read_bw_bidir $P read_bw --ibdev rxe0 -b -n 100 --verify
vs_perftest pt_write_bw_client ib_write_bw $P write_bw --ibdev rxe0 -n 100 127.0.0.1
vs_perftest pt_send_lat_client ib_send_lat $P send_lat --ibdev rxe0 -n 100 127.0.0.1
rl_server pt_read_bw_server ib_read_bw $P read_bw --ibdev rxe0 --server -n 100
rl_server pt_write_lat_server ib_write_lat $P write_lat --ibdev rxe0 --server -n 100
run cmp_write_bw timeout 120 rocelab compare write_bw --ibdev rxe0 -n 200
run cmp_write_lat_all timeout 120 rocelab compare write_lat --ibdev rxe0 -a --all-max 1024 -n 100 --out /tmp/cmp
run cmp_report grep -c "<svg" /tmp/cmp/report.html
run cmp_completions timeout 120 rocelab compare completions --ibdev rxe0
run err_no_device $P write_bw --ibdev nosuch
run err_no_library env ROCELAB_LIBIBVERBS=/nonexistent/libibverbs.so.1 $P write_bw --ibdev rxe0
run err_gid $P write_bw --ibdev rxe0 -x 9
run err_refused $P write_lat --ibdev rxe0 -I 1024
ip link set eth0 down
sleep 2
run down_rocelab rocelab devices rxe0
run down_devinfo ibv_devinfo -d rxe0
run err_port_down $P write_bw --ibdev rxe0
ip link set eth0 up
"""

# The host's half of the emu_* cases, in the guest's namespace: rocelab emulated on the tap,
# at 200 Mb/s (the guest reads its tap at a few MB/s: rxe_interop.py's RATE).
HOST = r"""
R="timeout --foreground -k 5 120 %s perf"
D="--dev net_af_packet0,iface=$RXE_VM_TAP --ip $RXE_VM_HOST_IP --rate 200M --timeout 100"
$R write_bw -n 100 --verify $D; echo "EMU-SERVER rc=$?"
$R write_lat -n 100 --verify $D $RXE_VM_GUEST_IP; echo "EMU-CLIENT rc=$?"
$R write_bw -s 4096 -n 100 $D; echo "EMU-CMP-SERVER rc=$?"
"""

# Loopback cases: test, the #bytes of its row; rows of -a (2 .. 65536) and -b are checked apart.
LOOP = {"loop_write_bw": 65536, "loop_read_bw": 65536, "loop_send_bw": 65536, "loop_atomic_bw": 8,
	"loop_write_lat": 2, "loop_read_lat": 2, "loop_send_lat": 2, "loop_write_bw_uc": 65536,
	"loop_send_bw_uc": 65536, "loop_send_lat_uc": 2, "loop_send_bw_ud": 1024,
	"loop_send_lat_ud": 512, "loop_write_bw_all": 65536, "loop_read_bw_bidir": 65536}

# rocelab against a peer: perftest on rxe0, or rocelab emulated on the host (any row size).
PEERS = ["pt_write_bw_client", "pt_send_lat_client", "pt_read_bw_server",
	 "pt_read_bw_server_rocelab", "pt_write_lat_server", "pt_write_lat_server_rocelab",
	 "emu_write_bw_client", "emu_write_lat_server"]

# Errors: the exit status, and the words the one line must hold (a bad -x is a bad option).
ERRORS = {
	"err_no_device": (1, ["nosuch", "rxe0"]),
	"err_no_library": (1, ["libibverbs1"]),
	"err_gid": (2, ["GID index 9", "RoCE v2 GIDs: 0"]),
	"err_refused": (1, ["ibv_create_qp", "errno 22"]),
	"err_port_down": (1, ["PORT_DOWN"]),
	"err_cmp_peer": (1, ["cannot connect to 192.0.2.1:18599", "refused"]),
}


def cases(text):
    """{name: (rc, stdout lines, stderr lines, (sent, received) or None)} from the guest's
    output."""
    out, name, body, hw = {}, None, None, None
    for line in text.splitlines():
        line = line.rstrip("\r")
        m = re.match(r"^@@CASE (\S+)$", line)
        if m:
            name, body, hw = m.group(1), ([], []), None
            continue
        if name is None:
            continue
        m = re.match(r"^@@HW (-?\d+) (-?\d+)$", line)
        if m:
            hw = (int(m.group(1)), int(m.group(2)))
            continue
        m = re.match(r"^@@RC (\d+)$", line)
        if m:
            out[name] = (int(m.group(1)), body[0], body[1], hw)
            name = None
        elif line.startswith("@@ERR "):
            body[1].append(line[6:])
        else:
            body[0].append(line)
    return out


def devinfo(lines):
    """What ibv_devinfo -v says of port 1 and the device."""
    d = {"gids": set()}
    for l in lines:
        s = l.strip()
        m = re.match(r"^(state|max_mtu|active_mtu|link_layer|active_width|active_speed|"
                     r"node_guid|fw_ver|max_qp_rd_atom):\s+(.*)$", s)
        if m and m.group(1) not in d:
            d[m.group(1)] = m.group(2).strip()
        m = re.match(r"^GID\[\s*(\d+)\]:\s+([0-9a-fA-F:.]+), (.+)$", s)
        if m:
            addr = m.group(2)
            if addr.startswith("::ffff:") and "." in addr:
                addr = addr[len("::ffff:"):]
            d["gids"].add((int(m.group(1)), addr, m.group(3).strip()))
    return d


def rocelab_dev(lines):
    """What `rocelab devices -v` says of port 1 and the device."""
    d = {"gids": set()}
    for l in lines:
        s = l.strip()
        m = re.match(r"^\S+: node GUID (\S+),", s)
        if m:
            d["node_guid"] = m.group(1)
        m = re.match(r"^firmware (\S+); .*max_qp_rd_atom (\d+),", s)
        if m:
            d["fw_ver"], d["max_qp_rd_atom"] = m.group(1), m.group(2)
        m = re.match(r"^port 1: (\S+), (\S+), MTU (\d+) \(max (\d+)\), (\d+)x ([\d.]+) Gb/s", s)
        if m:
            d.update(state=m.group(1), link_layer=m.group(2), active_mtu=m.group(3),
                     max_mtu=m.group(4), lanes=m.group(5), lane_gbps=m.group(6))
        m = re.match(r"^GID (\d+)\s+(RoCE v[12]|IB)\s+(\S+)", s)
        if m:
            d["gids"].add((int(m.group(1)), m.group(3), m.group(2)))
    return d


ROW = re.compile(r"^\s*(\d+)\s+(\d+)\s+[\d.]+\s+[\d.]+")
# The cases whose output is perftest's own (its client against rocelab's server): perftest
# times with the TSC at a CPU frequency it measures as it starts, and on a busy host its guest
# may measure none, so that it prints inf and -nan for every time; its row still counts the
# bytes and iterations the two sides moved (rocelab's figures are its NAME_rocelab case's)
PERFTEST_OUT = {"pt_read_bw_server", "pt_write_lat_server"}
PERFTEST_ROW = re.compile(r"^\s*(\d+)\s+(\d+)\s+(?:[\d.]+|inf)\s+(?:[\d.]+|inf)")


def result_rows(lines, row=ROW):
    """(#bytes, #iterations) of perftest's result rows."""
    return [(int(m.group(1)), int(m.group(2))) for m in map(row.match, lines) if m]


def check_perf(res, failures):
    """The loop_, pt_ and emu_ cases: exit 0, their rows, the device's counters grown."""
    cases = dict(LOOP)
    cases.update({n: 0 for n in PEERS})
    for name, size in sorted(cases.items()):
        if name not in res:
            failures.append("%s: no result from the guest" % name)
            continue
        rc, out, err, hw = res[name]
        row_re = PERFTEST_ROW if name in PERFTEST_OUT else ROW
        rows = result_rows(out, row_re)
        if rc != 0:
            failures.append("%s: exit %d: %s" % (name, rc, " | ".join((out + err)[-8:])))
            continue
        if name.endswith("_rocelab"):
            hw = (0, 0)	# the counters of its case, perftest's client, include its run
        elif hw is None or hw[0] <= 0 or hw[1] <= 0:
            failures.append("%s: rxe0's hw_counters did not grow (sent, received %s): it did "
                            "not run on the device" % (name, hw))
        if not rows:
            failures.append("%s: no result row: %s" % (name, " | ".join(out[-8:])))
        elif name == "loop_write_bw_all" and [r[0] for r in rows] != [2 << i for i in range(16)]:
            failures.append("%s: -a rows of %s bytes, expected 2 to 65536" %
                            (name, [r[0] for r in rows]))
        elif size and rows[-1][0] != size:
            failures.append("%s: a row of %d bytes, expected %d" % (name, rows[-1][0], size))
        elif name.startswith("loop_") and not any("verify: every byte" in l for l in out):
            failures.append("%s: --verify did not report every byte checked" % name)
        else:
            row = [l for l in out if row_re.match(l)][-1]
            log("%s: %s; rxe0 sent %d, received %d packets" % (name, " ".join(row.split()),
                                                               hw[0], hw[1]))


# Cases of `compare completions` where rxe0 and the emulator differ, and how (docs/fidelity.md):
# a known one that stops differing, or a new one, fails the test until this is updated.
COMPLETIONS_KNOWN = {
    "send_imm": ("A:SEND/imm B:RECV/64/imm", "A:SEND B:RECV/64/imm"),
    "write_imm": ("A:RDMA_WRITE/imm B:RECV_RDMA_WITH_IMM/64/imm",
                  "A:RDMA_WRITE B:RECV_RDMA_WITH_IMM/64/imm"),
    "send_too_long": ("A:REM_OP_ERR B:LOC_QP_OP_ERR", "A:REM_INV_REQ_ERR B:LOC_LEN_ERR"),
}
WCS_ROW = re.compile(r"^ (\w+)\s{2,}(.+?)\s{2,}(.+?)\s{2,}(same|DIFFERS)$")

CMP_ROW = re.compile(r"^\s*(\d+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s+"
                     r"([\d.]+)\s*$")


def check_compare(res, failures):
    """compare's table: a row per size, both figures non-zero, their ratio; the report."""
    for name, sizes in (("cmp_write_bw", [65536]), ("cmp_write_lat_all", [2 << i for i in range(10)])):
        r = res.get(name)
        if r is None:
            failures.append("%s: no result from the guest" % name)
            continue
        rc, out, err, hw = r
        rows = [m for m in map(CMP_ROW.match, out) if m]
        if rc != 0:
            failures.append("%s: exit %d: %s" % (name, rc, " | ".join((out + err)[-6:])))
        elif hw is None or hw[0] <= 0:
            failures.append("%s: rxe0's hw_counters did not grow: %s" % (name, hw))
        elif [int(m.group(1)) for m in rows] != sizes:
            failures.append("%s: rows of %s bytes, expected %s: %s" %
                            (name, [int(m.group(1)) for m in rows], sizes, out[-6:]))
        elif any(float(m.group(2)) <= 0 or float(m.group(3)) <= 0 or
                 abs(float(m.group(4)) - float(m.group(3)) / float(m.group(2))) > 0.01 *
                 float(m.group(4)) + 0.002 for m in rows):
            failures.append("%s: a figure is zero or a ratio is not emulator/device: %s" %
                            (name, [m.group(0) for m in rows]))
        else:
            log("%s: %d row(s); %s" % (name, len(rows), " ".join(rows[-1].group(0).split())))
    r = res.get("cmp_write_bw")
    if r is not None and not any("frames: none reached eth0: rxe0 loops its own traffic back "
                                 "inside the driver; give PEER" in l for l in r[1]):
        failures.append("cmp_write_bw: no line saying a loopback run's frames never reach "
                        "eth0: %s" % r[1][-12:])
    check_compare_peer(res, failures)
    r = res.get("cmp_completions")
    if r is None or r[0] != 0:
        failures.append("cmp_completions: %s" % (r,))
    else:
        rows = {m.group(1): m for m in map(WCS_ROW.match, r[1]) if m}
        if len(rows) != 15 or r[3] is None or r[3][0] <= 0:
            failures.append("cmp_completions: %d case rows, counters %s: %s" %
                            (len(rows), r[3], r[1][-20:]))
        for name, m in sorted(rows.items()):
            dev, emu, verdict = m.group(2).strip(), m.group(3).strip(), m.group(4)
            known = COMPLETIONS_KNOWN.get(name)
            if verdict == "same" and known:
                failures.append("cmp_completions: %s: rxe0 and the emulator now agree (%s): "
                                "update COMPLETIONS_KNOWN and docs/fidelity.md" % (name, dev))
            elif verdict == "DIFFERS" and (known is None or (dev, emu) != known):
                failures.append("cmp_completions: %s: rxe0 %s, the emulator %s: not a known "
                                "difference" % (name, dev, emu))
        if len(rows) == 15:
            log("cmp_completions: 15 cases, the known %d differences only" %
                len(COMPLETIONS_KNOWN))
    r = res.get("cmp_report")
    if r is None or r[0] != 0 or not r[1] or r[1][0].strip() != "1":
        failures.append("cmp_report: the report has no chart: %s" % (r,))


def check_compare_peer(res, failures):
    """compare against the host's emulated server: a row, frames captured on eth0 and in
    device.pcap (as tcpdump reads it), every message of the run compared, the report's
    pattern section."""
    r = res.get("cmp_peer")
    if r is None:
        failures.append("cmp_peer: no result from the guest")
        return
    rc, out, err, hw = r
    text = "\n".join(out)
    frames = re.search(r"frames: (\d+) RoCE frames captured on eth0 during rxe0's run", text)
    msgs = re.search(r"^ messages: (\d+) compared, (\d+) same", text, re.M)
    rows = [m for m in map(CMP_ROW.match, out) if m]
    if rc != 0:
        failures.append("cmp_peer: exit %d: %s" % (rc, " | ".join((out + err)[-8:])))
    elif hw is None or hw[0] <= 0 or hw[1] <= 0:
        failures.append("cmp_peer: rxe0's hw_counters did not grow: %s" % (hw,))
    elif [int(m.group(1)) for m in rows] != [4096]:
        failures.append("cmp_peer: rows %s, expected one of 4096 bytes" % [m.group(0) for m in rows])
    elif frames is None or int(frames.group(1)) < 400:
        failures.append("cmp_peer: no count of frames captured on eth0 (or under the 400 "
                        "requests of 100 4 KiB WRITEs at MTU 1024): %s" % out[-30:])
    elif msgs is None or int(msgs.group(1)) != 100:
        failures.append("cmp_peer: the pattern did not compare the 100 messages: %s" % out[-14:])
    else:
        log("cmp_peer: %s frames on eth0; %s; rxe0 sent %d, received %d packets" %
            (frames.group(1), msgs.group(0).strip(), hw[0], hw[1]))
    f = res.get("cmp_peer_files")
    counts = [l.strip() for l in f[1]] if f else []
    if frames is not None and counts[:2] != [frames.group(1), "1"]:
        failures.append("cmp_peer_files: tcpdump read %s RoCE frames from device.pcap, compare "
                        "said %s; report.html's pattern sections: %s" %
                        (counts[:1], frames.group(1), counts[1:2]))
    elif frames is not None:
        log("cmp_peer_files: tcpdump reads the %s frames of device.pcap; report.html has the "
            "pattern" % counts[0])


def check_errors(res, failures):
    for name, (code, words) in ERRORS.items():
        r = res.get(name)
        # DPDK's EAL, once started, says the guest has no /var/run: its line, not rocelab's
        err = [l for l in r[2] if not l.startswith("EAL: ")] if r else []
        if r is None:
            failures.append("%s: no result from the guest" % name)
        elif r[0] != code or len(err) != 1 or any(w not in err[0] for w in words):
            failures.append("%s: exit %d, stderr %r: expected %d and one line naming %s" %
                            (name, r[0], r[2], code, words))
        else:
            log("%s: %s" % (name, err[0]))


def check(res, failures):
    def need(name):
        if name not in res:
            failures.append("%s: no result from the guest" % name)
            return None
        return res[name]

    r = need("devices")
    if r and (r[0] != 0 or not any(l.startswith("rxe0:") for l in r[1])):
        failures.append("devices: exit %d, rxe0 not listed: %s %s" % (r[0], r[1], r[2]))
    a, b = need("rocelab_v"), need("devinfo_v")
    if a and b:
        if a[0] != 0 or b[0] != 0:
            failures.append("devices_match: exit %d (rocelab), %d (ibv_devinfo): %s" %
                            (a[0], b[0], a[2] + b[2]))
        mine, theirs = rocelab_dev(a[1]), devinfo(b[1])
        pairs = [
            ("state", mine.get("state"), theirs.get("state", "").split(" ")[0]),
            ("link_layer", mine.get("link_layer"), theirs.get("link_layer")),
            ("active_mtu", mine.get("active_mtu"), theirs.get("active_mtu", "").split(" ")[0]),
            ("max_mtu", mine.get("max_mtu"), theirs.get("max_mtu", "").split(" ")[0]),
            ("active_width", (mine.get("lanes") or "") + "X",
             theirs.get("active_width", "").split(" ")[0]),
            ("active_speed", mine.get("lane_gbps"),
             theirs.get("active_speed", "").split(" ")[0]),
            ("node_guid", mine.get("node_guid"), theirs.get("node_guid")),
            ("fw_ver", mine.get("fw_ver"), theirs.get("fw_ver")),
            ("max_qp_rd_atom", mine.get("max_qp_rd_atom"), theirs.get("max_qp_rd_atom")),
        ]
        for what, x, y in pairs:
            if what == "active_speed" and x is not None and y:
                x, y = float(x), float(y)	# ibv_devinfo: "25.0 Gbps"
            if x is None or x != y:
                failures.append("devices_match: %s: rocelab %r, ibv_devinfo %r" % (what, x, y))
        if not theirs["gids"]:
            failures.append("devices_match: ibv_devinfo listed no GID:\n%s" % "\n".join(b[1]))
        elif mine["gids"] != theirs["gids"]:
            failures.append("devices_match: GID tables differ: rocelab %s, ibv_devinfo %s" %
                            (sorted(mine["gids"]), sorted(theirs["gids"])))
        else:
            log("devices_match: %d field(s) and %d GID(s) as ibv_devinfo says" %
                (len(pairs), len(mine["gids"])))
    for name, words in (("no_device", ["nosuch", "rxe0"]), ("no_library", ["libibverbs1"])):
        r = need(name)
        if r is None:
            continue
        if r[0] != 1 or len(r[2]) != 1 or any(w not in r[2][0] for w in words):
            failures.append("%s: exit %d, stderr %r: expected 1 and one line naming %s" %
                            (name, r[0], r[2], words))
        else:
            log("%s: %s" % (name, r[2][0]))
    a, b = need("down_rocelab"), need("down_devinfo")
    if a and b:
        said = " ".join(a[1])
        if a[0] != 0 or "port 1: PORT_DOWN" not in said:
            failures.append("port_down: rocelab exit %d: %s %s" % (a[0], a[1], a[2]))
        if "PORT_DOWN" not in " ".join(b[1]):
            failures.append("port_down: ibv_devinfo does not say PORT_DOWN either: %s" % b[1])


def main():
    if len(sys.argv) < 3:
        print(__doc__)
        return 2
    rocelab = os.path.abspath(sys.argv[1])
    rxe_vm = os.path.abspath(sys.argv[2])
    d = rxe_interop.vm_or_skip(rxe_vm)
    if d is None:
        return SKIP
    tmp = tempfile.mkdtemp(prefix="rocelab-rxe-bridge-")
    script = os.path.join(tmp, "cases.sh")
    with open(script, "w") as f:
        f.write(GUEST)
    env = dict(os.environ, RXE_VM_NS=NS, RXE_VM_TAP=TAP)
    t0 = time.monotonic()
    p = subprocess.Popen([rxe_vm, "start", d, "--timeout", str(VM_TIMEOUT), "--log",
                          os.path.join(tmp, "vm.log"), "--file", rocelab + ":/usr/bin/rocelab",
                          "--script", script, "--host-early", "--host-cmd", HOST % rocelab],
                         stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, text=True, env=env)

    def stop(signum, _frame):
        p.terminate()
        sys.exit(128 + signum)
    for s in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(s, stop)
    out, _ = p.communicate()
    log("guest run: exit %d in %.0f s (log %s)" % (p.returncode, time.monotonic() - t0, tmp))
    failures = []
    if "RXE-VM: CMD-START" not in out:
        failures.append("the guest never ran the cases (rxe-vm exit %d):\n%s" %
                        (p.returncode, out[-3000:]))
    else:
        res = cases(out)
        check(res, failures)
        check_perf(res, failures)
        check_errors(res, failures)
        check_compare(res, failures)
        host = ""
        if os.path.exists(os.path.join(tmp, "vm.log.host")):
            with open(os.path.join(tmp, "vm.log.host")) as fh:
                host = fh.read()
        for side in ("EMU-SERVER", "EMU-CLIENT", "EMU-CMP-SERVER"):
            m = re.search(side + r" rc=(\d+)", host)
            if m is None or m.group(1) != "0":
                failures.append("the host's emulated rocelab (%s): exit %s:\n%s" %
                                (side, m.group(1) if m else "none", host[-2000:]))
    for f in failures:
        print("FAIL " + f)
    print("%d failure(s)" % len(failures))
    if not failures:
        shutil.rmtree(tmp, ignore_errors=True)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
