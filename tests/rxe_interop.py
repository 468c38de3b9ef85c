#!/usr/bin/env python3
"""rocelab against the Linux kernel's soft-RoCE (rdma_rxe): perftest 6.06 in a qemu guest that
shared/tools/rxe-vm boots, rocelab perf on the host side of the guest's tap, in both directions
(rxe client -> rocelab server, rocelab client -> rxe server). Each case boots the guest once.
Checks that both sides exit 0 and print one result row with the asked #bytes and #iterations.

Usage: rxe_interop.py ROCELAB RXE_VM [CASE ...]
  CASE: TEST (both directions) or TEST:DIR, DIR 'rl-srv' (rocelab serves) or 'rl-cli'.
  --known   also run the known failures (KNOWN below) and report whether they still fail.

Exit 77 (skip) only when the VM cannot be built or run here: not root, no network namespaces,
no rxe-vm script, or `rxe-vm build` fails (no qemu, no apt packages, no kernel .deb). The build
goes to /tmp/rocelab-rxe-vm-HASH (HASH: of the rxe-vm script and the files it builds in) and is
reused by later runs; RXE_INTEROP_DIR overrides it. Every run uses its own namespace and tap,
which rxe-vm deletes on every exit path (and this script again, in case rxe-vm was killed).
"""
import fcntl
import hashlib
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import netns  # noqa: E402

SKIP = 77
ITERS = 50
HOST_IP, GUEST_IP = "192.0.2.1", "192.0.2.2"	# rxe-vm's defaults (TEST-NET-1)
VM_TIMEOUT = 200	# one guest run, boot included (rxe-vm --timeout)
PEER_TIMEOUT = 90	# each side's own limit (`timeout`), below VM_TIMEOUT
BUILD_TIMEOUT = 1200	# `rxe-vm build`: apt packages and a 70 MB kernel .deb on a first run

# The cases: the rocelab test and its options, the size, and the connection type (-c) both
# sides use; a case named *_uc / *_ud runs that test over UC / UD, *_pingpong runs rdma-core's
# ibv_*_pingpong in the guest. --rate 200M: the guest (TCG) reads the tap at a few MB/s; at
# af_packet's nominal 10 Gb/s rocelab's requester fills the TX ring, frames are dropped and
# perftest's retry_cnt 7 runs out (docs/live.md). UD messages fit rxe's path MTU, 1024.
RATE = ["--rate", "200M"]
BIDIR_RATE = ["--rate", "50M", "-b"]
TESTS = {
	"write_bw": {"size": 65536, "rl": RATE},
	"read_bw": {"size": 65536, "rl": RATE},
	"send_bw": {"size": 65536, "rl": RATE},
	"atomic_bw": {"size": 8, "rl": RATE},
	"write_lat": {"size": 64, "rl": RATE},
	"read_lat": {"size": 64, "rl": RATE},
	"send_lat": {"size": 64, "rl": RATE},
	"write_bw_uc": {"size": 65536, "rl": RATE, "conn": "UC"},
	"send_bw_ud": {"size": 1024, "rl": RATE, "conn": "UD"},
	"send_lat_ud": {"size": 1024, "rl": RATE, "conn": "UD"},
	"rc_pingpong": {"size": 4096, "rl": RATE},
	"uc_pingpong": {"size": 4096, "rl": RATE},
	"ud_pingpong": {"size": 1024, "rl": RATE},
	# fault injection: rocelab advertises and uses a wrong rkey; write_bw's WRITEs must be
	# answered NAK remote access error (AETH 0x62) by the responder, rxe's or rocelab's,
	# and the requester's completion must say so (checked on a capture of the tap too:
	# qdisc_bypass=0 lets the tap's tcpdump see rocelab's frames, which af_packet otherwise
	# hands to the driver past the kernel's packet taps)
	# IPv6: the guest's RoCE v2 GID of its link-local address (rxe-vm's $RXE_GID_V2_LL) and
	# an IPv6 link-local address only the emulated host owns; rxe and rocelab resolve each
	# other with neighbour discovery (the TCP exchange stays on IPv4)
	"write_bw_v6": {"size": 65536, "rl": RATE, "base": "write_bw", "ipv6": True},
	"rc_pingpong_v6": {"size": 4096, "rl": RATE, "base": "rc_pingpong", "ipv6": True},
	"bad_rkey": {"size": 65536, "rl": RATE + ["--bad-rkey"], "base": "write_bw", "fault": True,
		     "devargs": ",qdisc_bypass=0"},
	# -a (every size from 2 up, perftest's lock-step over its TCP exchange) and -b (both
	# sides send; each prints its own size and iterations with the sum of both rates).
	# "all": the sizes; perftest's -a always ends at 8 MiB (too much data for TCG at RC, so
	# fewer iterations), UD's at the path MTU; write_bw's server only waits and prints the
	# client's last row, so a rocelab client may stop earlier (--all-max).
	"write_bw_all": {"size": 2, "rl": RATE, "base": "write_bw", "all": True, "iters": 5,
			 "pt": ["-a"]},
	"send_bw_ud_all": {"size": 2, "rl": RATE, "base": "send_bw", "conn": "UD", "all": True,
			   "pt": ["-a"]},
	# latency -a: UD send_lat in its per-size lock-step both ways; read_lat with rocelab as
	# the client only (--all-max; perftest's server just serves the READs and prints no row):
	# perftest's own client would read up to 8 MiB
	"send_lat_ud_all": {"size": 2, "rl": RATE, "base": "send_lat", "conn": "UD", "all": True,
			    "pt": ["-a"]},
	"read_lat_all": {"size": 2, "rl": RATE, "base": "read_lat", "all": True, "pt": ["-a"],
			 "dirs": ["rl-cli"]},
	# -b: the guest both sends and receives, so rocelab sends at a quarter of RATE, and
	# 4 KiB messages (4 packets) keep rxe's go-back-N resends short. With 64 KiB at 200M (and
	# at 50M) the busy guest handled our ACKs late and its requester resent whole windows
	# spuriously: tens of thousands of frames for 3200, rocelab's TX ring overflowed, and
	# either side ran out of retries. Once rxe 6.1 also re-segmented a resent SEND one packet
	# off (a SEND Only where a First had been, then a First where rocelab's responder was
	# mid-message), which rocelab answered with NAK invalid request (IBA 9.7.5.1.4).
	"write_bw_bidir": {"size": 4096, "rl": BIDIR_RATE, "base": "write_bw", "pt": ["-b"]},
	"send_bw_bidir": {"size": 4096, "rl": BIDIR_RATE, "base": "send_bw", "pt": ["-b"]},
	"read_bw_bidir": {"size": 4096, "rl": BIDIR_RATE, "base": "read_bw", "pt": ["-b"]},
}
ALL_MAX_RL = 65536	# --all-max of a rocelab write_bw client (-a) facing a perftest server
ALL_MAX = 1 << 23	# perftest's -a
UD_MTU = 1024		# rxe's path MTU on the guest's 1500-byte eth0
DIRS = ["rl-srv", "rl-cli"]	# rocelab is the server (rxe the client); rocelab is the client

# Cases that do not work yet: run only with --known, never silently dropped from the report.
KNOWN = {}
PP_BYTES = re.compile(r"^(\d+) bytes in ([\d.]+) seconds = ([\d.]+) Mbit/sec$", re.M)
PP_ITERS = re.compile(r"^(\d+) iters in ([\d.]+) seconds = ([\d.]+) usec/iter$", re.M)

# A figure: perftest prints inf or -nan where it divides by a zero clock (CLOCK_FAILED below)
NUM = r"([\d.]+|-?inf|-?nan)"
BW_ROW = re.compile(r"^\s*(\d+)\s+(\d+)\s+" + NUM + r"\s+" + NUM + r"\s+" + NUM + r"\s*$")
LAT_ROW = re.compile(r"^\s*(\d+)\s+(\d+)" + (r"\s+" + NUM) * 7 + r"\s*$")
# perftest times with the TSC and converts with get_cpu_mhz() (src/get_clock.c), called when it
# prints its report: a linear regression of TSC cycles against gettimeofday() over 200 short
# busy waits. It returns 0 when r^2 < 0.9, which it reports on stderr with this line; with -F
# perftest then goes on and every figure of its row is 0 (bandwidth, message rate) or inf/nan
# (latency). Under TCG the guest's TSC and its clock drift apart whenever qemu is busy
# (emulating rxe's own work on the frames just received, e.g. right after a UD send_bw), so
# this happens at random, most often to the client side. Such a row still tells the size, the
# iterations and the exit status; its rates say nothing, so they are not checked. rocelab's
# own figures come from the host's clock and are always checked; a rocelab server of write,
# read or atomic bw prints the rxe client's report (as perftest's server does), so its rates
# follow the client's calibration.
CLOCK_FAILED = re.compile(r"Correlation coefficient r\^2: \S+ < 0\.9")

# Per-run names, so that a manual rxe-vm run (namespace rxens) or another test run can coexist.
NS = "rlx%d" % os.getpid()
TAP = "rlxt%d" % os.getpid()
child = None	# the running rxe-vm, ended (with its own clean-up) on our way out


def log(*a):
	print(*a, flush=True)


def ns_exists(name):
	out = subprocess.run(["ip", "netns", "list"], stdout=subprocess.PIPE,
			     stderr=subprocess.DEVNULL, text=True).stdout
	return any(l.split()[0] == name for l in out.splitlines() if l.strip())


def stop_vm(proc, ns):
	"""End a running rxe-vm (@proc, or None) with SIGTERM: its trap stops qemu and the host
	command by PID and deletes the namespace. Then make sure namespace @ns is gone."""
	if proc is not None and proc.poll() is None:
		proc.terminate()
		try:
			proc.wait(timeout=30)
		except subprocess.TimeoutExpired:
			proc.kill()
			proc.wait()
	if ns_exists(ns):
		subprocess.run(["ip", "netns", "del", ns], stderr=subprocess.DEVNULL)


def stop_child():
	global child
	stop_vm(child, NS)
	child = None


def on_signal(signum, _frame):
	stop_child()
	sys.exit(128 + signum)


def build_key(rxe_vm):
	h = hashlib.sha256()
	here = os.path.dirname(rxe_vm)
	for f in (rxe_vm, os.path.join(here, "rxe-verbs-cases.c")):
		if os.path.exists(f):
			with open(f, "rb") as fh:
				h.update(fh.read())
	return h.hexdigest()[:12]


def build_vm(rxe_vm):
	"""The VM's build directory, built now unless an earlier run left a complete one; None
	when it cannot be built."""
	d = os.environ.get("RXE_INTEROP_DIR") or "/tmp/rocelab-rxe-vm-" + build_key(rxe_vm)
	stamp = os.path.join(d, "rocelab-built")
	os.makedirs(d, exist_ok=True)
	with open(d + ".lock", "w") as lk:
		fcntl.flock(lk, fcntl.LOCK_EX)	# two runs at once: one builds, the other waits
		if os.path.exists(stamp):
			log("rxe-vm build: reusing %s" % d)
			return d
		log("rxe-vm build: building %s (installs qemu, perftest, rdma-core ... if missing)" % d)
		t0 = time.monotonic()
		# rxe-vm runs `ldconfig -p | awk '... exit'` under pipefail: when awk exits first,
		# ldconfig dies of SIGPIPE and the build fails with 141 (a race, lost on most fresh
		# machines). An ldconfig first on PATH that prints everything it would, ignoring a
		# closed pipe, takes the race away; a retry covers any other transient failure.
		shim = tempfile.mkdtemp(prefix="rocelab-rxe-shim-")
		with open(os.path.join(shim, "ldconfig"), "w") as fh:
			fh.write("#!/bin/sh\ntrap '' PIPE\nout=$(%s \"$@\"); rc=$?\n"
				 "printf '%%s\\n' \"$out\" 2>/dev/null\nexit $rc\n"
				 % (shutil.which("ldconfig") or "/sbin/ldconfig"))
		os.chmod(os.path.join(shim, "ldconfig"), 0o755)
		env = dict(os.environ, DEBIAN_FRONTEND="noninteractive",
			   PATH=shim + os.pathsep + os.environ.get("PATH", "/usr/sbin:/usr/bin:/sbin:/bin"))
		p = None
		try:
			for attempt in range(3):
				p = subprocess.run([rxe_vm, "build", d], stdout=subprocess.PIPE,
						   stderr=subprocess.STDOUT, text=True,
						   timeout=BUILD_TIMEOUT, env=env)
				if p.returncode == 0:
					break
				log("rxe-vm build attempt %d failed (exit %d)" % (attempt + 1, p.returncode))
		except subprocess.TimeoutExpired:
			log("rxe-vm build: timed out after %d s" % BUILD_TIMEOUT)
			return None
		finally:
			shutil.rmtree(shim, ignore_errors=True)
		if p.returncode != 0:
			log("rxe-vm build failed (exit %d):\n%s" % (p.returncode, p.stdout[-3000:]))
			return None
		with open(stamp, "w") as fh:
			fh.write("built by %s in %.0f s\n" % (os.path.basename(__file__),
							      time.monotonic() - t0))
		log("rxe-vm build: done in %.0f s" % (time.monotonic() - t0))
	return d


def netns_unusable():
	"""Why rxe-vm could not run its guest in a namespace here (it enters one with `ip netns
	exec`), or None."""
	return netns.usable(veth=False)


def vm_or_skip(rxe_vm):
	"""The VM's build directory, or None (the reason logged as a skip) when this machine
	cannot run the guest: not root, no rxe-vm tool, no namespaces, or the build fails."""
	if os.geteuid() != 0:
		log("SKIP: needs root (rxe-vm makes a network namespace and a tap, and installs packages)")
		return None
	if not os.access(rxe_vm, os.X_OK):
		log("SKIP: no rxe-vm tool at %s" % rxe_vm)
		return None
	why = netns_unusable()
	if why:
		log("SKIP: network namespaces cannot be used here: %s" % why)
		return None
	d = build_vm(rxe_vm)
	if d is None:
		log("SKIP: the rxe VM cannot be built here")
	return d


def base_test(test):
	"""The test a case runs: 'send_bw_ud' -> 'send_bw'."""
	return TESTS.get(test, {}).get("base") or re.sub(r"_(uc|ud)$", "", test)


def mirrors_peer(test, side):
	"""A rocelab server of write/read/atomic_bw prints the client's report as its row (as
	perftest's server does): rates the rxe client computed with its own clock."""
	return (side == "rocelab-server" and base_test(test) in ("write_bw", "read_bw", "atomic_bw")
		and "-b" not in TESTS.get(test, {}).get("pt", []))


def clock_failures(test, side, out, peer_out):
	"""perftest clock calibration failures (CLOCK_FAILED) behind this side's rows."""
	if side.startswith("rxe-"):
		return len(CLOCK_FAILED.findall(out))
	return len(CLOCK_FAILED.findall(peer_out)) if mirrors_peer(test, side) else 0


def is_pingpong(test):
	return base_test(test).endswith("_pingpong")


HOST_LL6 = "fe80::c000:201"	# the emulated host's IPv6 address in the ipv6 cases


def gid_var(test):
	"""The guest's GID index: IPv4-mapped (1), or its link-local IPv6 address's."""
	return "$RXE_GID_V2_LL" if TESTS[test].get("ipv6") else "$RXE_GID_V2_IPV4"


def perftest_cmd(test, size, server):
	"""The guest's command (busybox sh), bounded by its own timeout."""
	if is_pingpong(test):
		# -g: the IPv4-mapped GID (rxe-vm's $RXE_GID_V2_IPV4, 1)
		cmd = "ibv_%s -d rxe0 -g %s -s %d -n %d" % (base_test(test), gid_var(test), size, ITERS)
	else:
		cmd = "ib_%s -d rxe0 -x %s -n %d -F" % (base_test(test), gid_var(test), ITERS)
		if test != "atomic_bw":
			cmd += " -s %d" % size
		if "conn" in TESTS[test]:
			cmd += " -c " + TESTS[test]["conn"]
	pre = ""
	if TESTS[test].get("ipv6"):
		# rxe's RTR needs eth0's link-local address as the source of its route to us, and
		# fails at once without it. The address appears only once the carrier is up, which
		# can be after READY, and is tentative until DAD is over (about a second): wait for
		# one that is there and not tentative (at most 5 s), and say how long it took
		pre = ("i=0; while [ $i -lt 50 ]; do a=$(/usr/sbin/ip -6 addr show dev eth0 scope link); "
		       "echo \"$a\" | grep -q inet6 && ! echo \"$a\" | grep -q tentative && break; "
		       "sleep 0.1; i=$((i+1)); done; [ $i -lt 50 ] && "
		       "echo \"link-local address ready after $i x 0.1 s\" || "
		       "echo \"link-local address not ready after 5 s\"; ")
	if "pt" in TESTS[test]:
		cmd += " " + " ".join(TESTS[test]["pt"])
		if TESTS[test].get("all"):
			cmd = cmd.replace(" -s %d" % size, "")
		cmd = cmd.replace(" -n %d" % ITERS, " -n %d" % iters_of(test))
	if server:
		return pre + "timeout %d %s" % (PEER_TIMEOUT, cmd)
	# the rocelab server listens before the guest boots
	return pre + "timeout %d %s %s" % (PEER_TIMEOUT, cmd, HOST_IP)


def rocelab_cmd(rocelab, test, size, server):
	"""The host command (bash, inside the namespace); prints its exit status for us."""
	args = [rocelab, "perf", base_test(test), "-n", str(iters_of(test)), "--timeout", "40"]
	args += TESTS[test]["rl"]
	if not TESTS[test].get("all"):
		args += ["-s", str(size)]
	elif base_test(test) in ("write_bw", "read_lat") and not server:
		args += ["-a", "--all-max", str(ALL_MAX_RL)]
	else:
		args += ["-a"]
	if "conn" in TESTS[test]:
		args += ["-c", TESTS[test]["conn"]]
	args += ["--dev", "net_af_packet0,iface=$RXE_VM_TAP" + TESTS[test].get("devargs", ""),
		 "--ip", HOST_LL6 if TESTS[test].get("ipv6") else "$RXE_VM_HOST_IP"]
	if not server:
		args.append("$RXE_VM_GUEST_IP")
	# --foreground: timeout stays in the host command's process group, which rxe-vm ends as a
	# whole when the run stops early (timeout otherwise makes a group of its own and survives)
	return "timeout --foreground -k 5 %d %s; echo \"ROCELAB-EXIT rc=$?\"" % (
		PEER_TIMEOUT, " ".join(args))


def rows(out, lat):
	return [m for m in ((LAT_ROW if lat else BW_ROW).match(l) for l in out.splitlines()) if m]


def iters_of(test):
	return TESTS[test].get("iters", ITERS)


def all_sizes(test, side):
	"""-a: the sizes of the rows a side prints (None: not an -a case)."""
	if not TESTS[test].get("all"):
		return None
	t = base_test(test)
	if t == "read_lat" and side.endswith("server"):
		return []	# it only serves the READs, as perftest against itself
	if TESTS[test].get("conn") == "UD":
		top = UD_MTU
	elif t in ("write_bw", "read_lat") and side.startswith("rxe-"):
		top = ALL_MAX if side == "rxe-client" else ALL_MAX_RL
	else:
		top = ALL_MAX if side == "rocelab-server" else ALL_MAX_RL
	sizes = [1 << i for i in range(1, 24) if (1 << i) <= top]
	if t in ("write_bw", "read_bw") and side.endswith("server"):
		return sizes[-1:]	# the server prints the client's report: its last size
	return sizes


def expected_rows(test, side):
	"""How many result rows a side prints and with how many iterations: perftest's read_lat
	server prints none (it only serves the READs); rocelab's write_lat client, which waits for
	the server's first write, times the round trips between its own writes: one fewer."""
	t = base_test(test)
	if t == "read_lat" and side.endswith("server"):
		return 0, None
	if t == "write_lat" and side == "rocelab-client":
		return 1, iters_of(test) - 1
	if t == "send_lat" and side == "rocelab-server":
		return 1, iters_of(test) - 1	# it times its answers to the next message
	return 1, iters_of(test)


def check_pingpong(test, side, rc, out, size, failures):
	"""ibv_*_pingpong's two result lines, as both it and rocelab print them."""
	what = "%s %s" % (test, side)
	if rc != 0:
		failures.append("%s: exit %s" % (what, rc))
	b, i = PP_BYTES.findall(out), PP_ITERS.findall(out)
	if len(b) != 1 or len(i) != 1:
		failures.append("%s: expected one 'bytes in' and one 'iters in' line, found %d and %d"
				% (what, len(b), len(i)))
		return None
	if int(b[0][0]) != size * ITERS * 2:
		failures.append("%s: %s bytes, expected %d" % (what, b[0][0], size * ITERS * 2))
	if int(i[0][0]) != ITERS:
		failures.append("%s: %s iters, expected %d" % (what, i[0][0], ITERS))
	if not float(i[0][2]) > 0:
		failures.append("%s: usec/iter is not positive" % what)
	return "%s iters, %s usec/iter" % (i[0][0], i[0][2])


NAK_ACCESS = 0x62	# AETH syndrome: NAK, remote access error (IBA 9.7.5.2.4)


def check_fault(test, side, rc, out, failures, pcap, src_ip):
	"""--bad-rkey: the requester's completion and the responder's NAK, on the capture."""
	what = "%s %s" % (test, side)
	if side == "rocelab-client":	# requester: a failed completion, exit 1
		if rc == 0 or "first: REM_ACCESS_ERR" not in out:
			failures.append("%s: expected exit 1 and a REM_ACCESS_ERR completion (exit %s)"
					% (what, rc))
		m = re.search(r"rocelab perf: .*REM_ACCESS_ERR.*", out)
		return m.group(0) if m else None
	if side == "rxe-client":	# perftest reports its failed completion and exits non-zero
		# perftest: "Failed status 10: wr_id ..." (10: IBV_WC_REM_ACCESS_ERR)
		m = re.search(r".*Failed status 10:.*", out)
		if rc == 0 or m is None:
			failures.append("%s: expected perftest to report a failed completion (exit %s)"
					% (what, rc))
		return m.group(0).strip() if m else None
	if side == "rocelab-server":	# responder: counts the NAK it sent
		m = re.search(r"NIC: (\d+) NAK\(s\) remote access error sent", out)
		if m is None or int(m.group(1)) < 1:
			failures.append("%s: no 'NAK remote access error sent' in its report" % what)
		return m.group(0) if m else None
	return "exit %s (the responder: no completion for a WRITE)" % rc


def check_capture(name, pcap, src_ip, failures):
	"""At least one NAK remote access error from the responder at @src_ip on the tap."""
	p = subprocess.run(["tshark", "-r", pcap, "-Y", "ip.src == %s && infiniband.aeth.syndrome == %d"
			    % (src_ip, NAK_ACCESS), "-T", "fields", "-e", "infiniband.bth.psn"],
			   stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
	naks = [l for l in p.stdout.splitlines() if l.strip().isdigit()]
	if p.returncode != 0 or not naks:
		failures.append("%s: no NAK remote access error (AETH 0x%02x) from %s in %s (tshark: %s)"
				% (name, NAK_ACCESS, src_ip, pcap, p.stdout.strip()[-200:]))
		return None
	return "capture: %d NAK remote access error from %s, PSN %s" % (len(naks), src_ip, naks[0])


def check_side(test, side, rc, out, peer_out, size, failures):
	if is_pingpong(test):
		return check_pingpong(test, side, rc, out, size, failures)
	what = "%s %s" % (test, side)
	if rc != 0:
		failures.append("%s: exit %s" % (what, rc))
	sizes = all_sizes(test, side)
	if sizes is not None:
		return check_all(test, side, out, peer_out, sizes, failures)
	want_rows, want_iters = expected_rows(test, side)
	found = rows(out, base_test(test).endswith("_lat"))
	if len(found) != want_rows:
		failures.append("%s: expected %d result row(s), found %d" % (what, want_rows, len(found)))
		return None
	if not found:
		return "(no result row, as perftest's)"
	r = found[0]
	if int(r.group(1)) != size:
		failures.append("%s: #bytes %s, expected %d" % (what, r.group(1), size))
	if want_iters is not None and int(r.group(2)) != want_iters:
		failures.append("%s: #iterations %s, expected %d" % (what, r.group(2), want_iters))
	# lat: t_max; bw: the message rate (atomic_bw's 8 B make 0.00 MB/s under TCG)
	col, label = (4, "t_max") if base_test(test).endswith("_lat") else (5, "MsgRate")
	row = " ".join(r.group(0).split())
	if clock_failures(test, side, out, peer_out):
		# perftest could not calibrate its clock (CLOCK_FAILED): its rates, or the report a
		# rocelab server prints, are 0 by construction; size, iterations and exit status
		# were checked above
		return row + "  (perftest's clock calibration failed: rates not checked)"
	try:
		ok = float(r.group(col)) > 0 and float(r.group(col)) != float("inf")
	except ValueError:
		ok = False
	if not ok:
		failures.append("%s: %s is not positive" % (what, label))
	return row


def check_all(test, side, out, peer_out, sizes, failures):
	"""-a: one row per size, in order, each with all its iterations."""
	what = "%s %s" % (test, side)
	lat = base_test(test).endswith("_lat")
	found = rows(out, lat)
	want_iters = expected_rows(test, side)[1] or iters_of(test)
	got = [int(r.group(1)) for r in found]
	if got != sizes:
		failures.append("%s: row sizes %s, expected %s" % (what, got, sizes))
		return None
	# perftest calibrates its clock for every row it prints: each failure (CLOCK_FAILED)
	# zeroes one row's rates
	clock_failed = clock_failures(test, side, out, peer_out)
	zero = []
	for r in found:
		if int(r.group(2)) != want_iters:
			failures.append("%s: size %s: #iterations %s, expected %d" %
					(what, r.group(1), r.group(2), want_iters))
		# 2 B rows round their MB/s to 0.00 under TCG, 8 MiB rows their Mpps to 0.000000:
		# one of the two must be positive
		if not any(v[0].isdigit() and float(v) > 0 for v in (r.group(4), r.group(5))):
			zero.append(r.group(1))
	if len(zero) > clock_failed:
		failures.append("%s: sizes %s: neither BW average nor MsgRate is positive (%d clock "
				"calibration failure(s) reported)" % (what, zero, clock_failed))
	if not sizes:
		return "(no result row, as perftest's)"
	return "%d row(s), %s..%s B x %d%s" % (len(found), sizes[0], sizes[-1], want_iters,
					     ", %d row(s) zeroed by perftest's clock calibration"
					     % len(zero) if zero else "")


def section(text, start, end):
	i = text.find(start)
	if i < 0:
		return ""
	j = text.find(end, i)
	return text[i:j if j >= 0 else len(text)]


def run_case(rocelab, rxe_vm, d, logdir, test, direction):
	"""Boot the guest once for one test in one direction; return (failures, rows, seconds)."""
	global child
	size = TESTS[test]["size"]
	rl_server = direction == "rl-srv"
	name = "%s-%s" % (test, direction)
	console = os.path.join(logdir, name + ".log")
	pcap = os.path.join(logdir, name + ".pcap")
	args = [rxe_vm, "start", d, "--log", console, "--timeout", str(VM_TIMEOUT),
		"--cmd", perftest_cmd(test, size, not rl_server),
		"--host-cmd", rocelab_cmd(rocelab, test, size, rl_server)]
	if TESTS[test].get("fault"):
		args += ["--pcap", pcap]
	if rl_server:
		args.append("--host-early")
	else:
		# perftest servers print this, ibv_rc_pingpong prints its local address first
		args += ["--host-wait", "Waiting for client|local address: "]
	env = dict(os.environ, RXE_VM_NS=NS, RXE_VM_TAP=TAP,
		   RXE_VM_IPV6="1" if TESTS[test].get("ipv6") else "0",
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
	if vm_rc is None or vm_rc == 124:
		failures.append("%s: the VM run timed out" % name)
	guest = section(whole, "RXE-VM: CMD-START", "RXE-VM: CMD-EXIT")
	host = ""
	if os.path.exists(console + ".host"):
		with open(console + ".host") as fh:
			host = fh.read()
	m = re.search(r"ROCELAB-EXIT rc=(\d+)", host)
	host_rc = int(m.group(1)) if m else "none (did not finish)"
	if "RXE-VM: READY" not in whole:
		failures.append("%s: the guest never got rxe0 up" % name)
	res = {}
	if not failures:
		rl_side = "rocelab-" + ("server" if rl_server else "client")
		rxe_side = "rxe-" + ("client" if rl_server else "server")
		if TESTS[test].get("fault"):
			res[rxe_side] = check_fault(test, rxe_side, vm_rc, guest, failures, pcap, None)
			res[rl_side] = check_fault(test, rl_side, host_rc, host, failures, pcap, None)
			res["wire"] = check_capture(name, pcap, HOST_IP if rl_server else GUEST_IP,
						    failures)
		else:
			res[rxe_side] = check_side(test, rxe_side, vm_rc, guest, host, size, failures)
			res[rl_side] = check_side(test, rl_side, host_rc, host, guest, size, failures)
		if TESTS[test].get("ipv6"):
			# the GIDs both sides used: ours, and the guest's link-local one
			m = re.search(r"remote address:.*GID (fe80::\S+)", host)
			if ("GID " + HOST_LL6) not in host or m is None:
				failures.append("%s: rocelab's address lines do not show the GIDs %s and "
						"fe80::..." % (name, HOST_LL6))
			else:
				res["gids"] = "%s <-> %s" % (HOST_LL6, m.group(1))
	if failures:
		failures.append("%s: logs in %s/%s.*; last lines:\n%s" %
				(name, logdir, name, "\n".join(whole.splitlines()[-60:])))
	return failures, res, secs


RTR_FAILED = re.compile(r"Failed to modify QP.* to RTR")


def rtr_unresolved(logdir, test, direction):
	"""Whether the guest failed at its RTR transition, before it sent a RoCE frame: the
	only step that depends on resolving our address in its kernel in time."""
	name = "%s-%s" % (test, direction)
	try:
		with open(os.path.join(logdir, name + ".out")) as fh:
			guest = section(fh.read(), "RXE-VM: CMD-START", "RXE-VM: CMD-EXIT")
	except OSError:
		return False
	return RTR_FAILED.search(guest) is not None


def keep_logs(logdir, test, direction):
	"""Rename a case's logs to *.first-try.* before it runs again."""
	name = "%s-%s" % (test, direction)
	for f in os.listdir(logdir):
		if f.startswith(name + "."):
			os.rename(os.path.join(logdir, f),
				  os.path.join(logdir, name + ".first-try" + f[len(name):]))


def parse_cases(argv):
	known = "--known" in argv
	names = [a for a in argv if a != "--known"]
	cases = []
	for t in TESTS:
		for dr in TESTS[t].get("dirs", DIRS):
			if names and t not in names and "%s:%s" % (t, dr) not in names:
				continue
			cases.append((t, dr))
	return cases, known


def main():
	if len(sys.argv) < 3:
		print(__doc__)
		return 2
	rocelab = os.path.abspath(sys.argv[1])
	rxe_vm = os.path.abspath(sys.argv[2])
	cases, run_known = parse_cases(sys.argv[3:])
	for s in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
		signal.signal(s, on_signal)
	t_all = time.monotonic()
	d = vm_or_skip(rxe_vm)
	if d is None:
		return SKIP
	logdir = tempfile.mkdtemp(prefix="rocelab-rxe-interop-")
	failures, summary, known_seen = [], [], []
	retries = 0
	try:
		for test, direction in cases:
			why = KNOWN.get((test, direction))
			if why is not None and not run_known:
				summary.append("%-12s %-6s KNOWN FAILURE (not run): %s" % (test, direction, why))
				continue
			f, res, secs = run_case(rocelab, rxe_vm, d, logdir, test, direction)
			retried = False
			if f and rtr_unresolved(logdir, test, direction):
				# before any RoCE frame: the guest's kernel gave up resolving our
				# address (rdma_resolve_ip allows 1 s, one neighbour solicitation),
				# which a loaded host can miss; once more, the first logs kept
				keep_logs(logdir, test, direction)
				log("%s %s: the guest failed at RTR (address resolution?); "
				    "running it once more" % (test, direction))
				f, res, secs = run_case(rocelab, rxe_vm, d, logdir, test, direction)
				retried = True
				retries += 1
			if why is not None:
				state = "still fails" if f else "PASSES NOW: remove it from KNOWN"
				known_seen.append("%s %s: known failure %s" % (test, direction, state))
				summary.append("%-12s %-6s %5.1f s  known failure, %s" %
					       (test, direction, secs, state))
				log(summary[-1])
				continue
			failures += f
			line = "%-12s %-6s %5.1f s  %s" % (test, direction, secs, "FAIL" if f else "ok")
			if retried:
				line += " (second try: the first failed at RTR, logs in %s)" % logdir
			for side, row in sorted(res.items()):
				line += "\n    %-15s %s" % (side, row)
			summary.append(line)
			log(line)
	finally:
		stop_child()
	log("---- summary (%s) ----" % os.path.basename(d))
	for s in summary:
		log(s)
	for f in failures:
		log("FAIL:", f)
	ran = sum(1 for s in summary if "not run" not in s)
	log("%d case(s) run, %d failure(s), %d known failure(s) listed, %d run twice; %.0f s in all" %
	    (ran, len([f for f in failures if "logs in" not in f]),
	     sum(1 for c in cases if c in KNOWN), retries, time.monotonic() - t_all))
	if failures or retries:
		log("logs kept in %s" % logdir)
	else:
		subprocess.run(["rm", "-rf", logdir])
	return 1 if failures else 0


if __name__ == "__main__":
	sys.exit(main())
