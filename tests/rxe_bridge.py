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
NS, TAP = "rlb%d" % os.getpid(), "rlbt%d" % os.getpid()

# The guest's script: each case between markers, its stdout and stderr apart.
GUEST = r"""
run() {
	name=$1; shift
	echo "@@CASE $name"
	"$@" >/tmp/o 2>/tmp/e
	rc=$?
	cat /tmp/o
	sed 's/^/@@ERR /' /tmp/e
	echo "@@RC $rc"
}
run devices rocelab devices
run rocelab_v rocelab devices -v rxe0
run devinfo_v ibv_devinfo -v -d rxe0
run no_device rocelab devices nosuch
run no_library env ROCELAB_LIBIBVERBS=/nonexistent/libibverbs.so.1 rocelab devices
ip link set eth0 down
sleep 2
run down_rocelab rocelab devices rxe0
run down_devinfo ibv_devinfo -d rxe0
ip link set eth0 up
"""


def cases(text):
    """{name: (rc, stdout lines, stderr lines)} from the guest's output."""
    out, name, body = {}, None, None
    for line in text.splitlines():
        line = line.rstrip("\r")
        m = re.match(r"^@@CASE (\S+)$", line)
        if m:
            name, body = m.group(1), ([], [])
            continue
        if name is None:
            continue
        m = re.match(r"^@@RC (\d+)$", line)
        if m:
            out[name] = (int(m.group(1)), body[0], body[1])
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
                          "--script", script], stdout=subprocess.PIPE,
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
        check(cases(out), failures)
    for f in failures:
        print("FAIL " + f)
    print("%d failure(s)" % len(failures))
    if not failures:
        shutil.rmtree(tmp, ignore_errors=True)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
