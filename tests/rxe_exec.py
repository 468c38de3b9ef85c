#!/usr/bin/env python3
"""Unmodified rdma-core programs under `rocelab exec` against the Linux kernel's soft-RoCE: the
real perftest 6.06 and ibv_*_pingpong on rxe0 in the qemu guest that shared/tools/rxe-vm boots,
the same programs on the host side of the guest's tap under `rocelab exec` (rocelab0 on DPDK's
net_af_packet, 192.0.2.1), each program in both roles.

Cases, each in both directions, 'rl-srv' (the program under rocelab exec serves, rxe's is the
client) and 'rl-cli' (rxe's serves):
  write_bw read_bw send_bw atomic_bw   perftest, 20 iterations (4 KiB; atomic 8 B)
  write_lat read_lat send_lat          perftest, 64 B, 20 iterations
  rc_pingpong uc_pingpong srq_pingpong ibv_*_pingpong, 4 KiB, 20 iterations (srq: 16 QPs)
  ud_pingpong                          1 KiB (rxe's path MTU)
  *_pingpong_e                         the same with -e (completion channels)
Each side must exit 0 and print its result: perftest's row with the asked #bytes and
#iterations and positive rates (unless perftest says its clock calibration failed, which TCG
provokes; perftest's read_lat server prints no row), a pingpong's 'bytes in' and 'iters in'
lines with the right counts. rxe0's hw_counters must show packets sent and received during
every case. write_bw rl-cli and ud_pingpong rl-srv also run with `rocelab exec --capture`:
`rocelab dissect` must find the test's RoCE frames both ways, the guest's with good ICRCs.

One boot runs every case in turn: the guest runs a loop that takes its steps from files the
host side writes into a 9p share (--share); the host side of each case (this script again,
--host-side, as rxe-vm's --host-cmd inside the run's namespace) starts the program under
rocelab exec, and either side's server is known to listen from /proc/net/tcp before the other
side's client is started; once one side's program has ended, the other gets GRACE s more.

Usage: rxe_exec.py ROCELAB RXE_VM [CASE ...]   CASE: NAME (both directions) or NAME:DIR
Exit 77 (skip) when the VM cannot be built or run here (as rxe-interop, whose VM build this
shares), or without rocelab's libibverbs.so.1 beside ROCELAB. The namespace and tap are
$RXE_VM_NS and $RXE_VM_TAP when set, else rlexPID and rlextPID.
"""
import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import rxe_interop  # noqa: E402  the VM build, the namespace probe, perftest's rows

SKIP = 77
HOST_IP, GUEST_IP = "192.0.2.1", "192.0.2.2"
ITERS = 20
VM_TIMEOUT = 900	# the whole boot: 30 cases take 1-2 min; each is bounded below
PROG_TIMEOUT = 60	# each program's own limit, either side
LISTEN_TIMEOUT = 30	# a server's start, to listening on its exchange port
GRACE = 20		# once one side's program has ended, how long the other may go on
PORT = 18515		# perftest's and the pingpongs' exchange port
NS = os.environ.get("RXE_VM_NS") or "rlex%d" % os.getpid()
TAP = os.environ.get("RXE_VM_TAP") or "rlext%d" % os.getpid()

# name -> (program, #bytes of its messages, options). The GID index is added per side: 0 under
# rocelab exec (rocelab0 has one GID, --ip), rxe-vm's $RXE_GID_V2_IPV4 in the guest. perftest
# gets -F (no CPU-frequency warning: the guest's TSC under TCG is anything but steady).
PERFTEST = ["write_bw", "read_bw", "send_bw", "atomic_bw", "write_lat", "read_lat", "send_lat"]
CASES = {}
for _t in PERFTEST:
	_size = 8 if _t == "atomic_bw" else 64 if _t.endswith("_lat") else 4096
	CASES[_t] = ("ib_" + _t, _size, ["-F", "-n", str(ITERS)] +
		     ([] if _t == "atomic_bw" else ["-s", str(_size)]))
for _t in ("rc", "uc", "ud", "srq"):
	_size = 1024 if _t == "ud" else 4096
	for _e in ("", "_e"):
		CASES[_t + "_pingpong" + _e] = ("ibv_%s_pingpong" % _t, _size,
						["-n", str(ITERS), "-s", str(_size)] + (["-e"] if _e else []))
DIRS = ["rl-srv", "rl-cli"]
# perftest's -u 18 under rocelab exec: its requester's local ACK timeout 1 s instead of 67 ms
# (7 retries: 8 s), so that a guest kept off the CPU on a busy host is not a failed test; rxe
# retries forever with perftest's retry_cnt 7 whatever the timeout (README of rxe-vm)
HOST_PERFTEST_OPTS = ["-u", "18"]
# the cases whose rocelab exec also writes --capture, and what must be in it
CAPTURES = {("write_bw", "rl-cli"), ("ud_pingpong", "rl-srv")}

BW_ROW = rxe_interop.BW_ROW
LAT_ROW = rxe_interop.LAT_ROW
CLOCK_FAILED = rxe_interop.CLOCK_FAILED
PP_BYTES = rxe_interop.PP_BYTES
PP_ITERS = rxe_interop.PP_ITERS


def log(*a):
	print(*a, flush=True)


def case_names(argv):
	"""[(name, direction)] for the command line's CASEs (all without any)."""
	out = []
	for name in CASES:
		for d in DIRS:
			if not argv or name in argv or "%s:%s" % (name, d) in argv:
				out.append((name, d))
	return out


def tag(name, direction):
	return "%s.%s" % (name, direction)


# ------------------------------------------------------------------------- the guest's loop --

# Busybox sh. Step N is the file steps/N of the share, sourced when it appears: `run N SRV CMD`
# starts CMD in the background (output to N.out; exit status and rxe0's packet counters before
# and after to N.rc); with SRV 1 it then waits until something listens on the exchange port,
# or CMD has ended, and says which (N.listen). `exit` ends it. Every file the other side
# waits for is written under another name and renamed into place, so it is never read half
# written.
GUEST = r"""
S=/mnt/host
HW=/sys/class/infiniband/rxe0/ports/1/hw_counters
[ -d $S/steps ] || { echo "rxe_exec: no share at $S"; exit 1; }
hw() { echo "$(cat $HW/sent_pkts) $(cat $HW/rcvd_pkts)"; }
listening() {
	grep -qs "^ *[0-9]*: [0-9A-F]*:%(port)04X [0-9A-F]*:[0-9A-F]* 0A " /proc/net/tcp /proc/net/tcp6
}
run() {
	k=$1; srv=$2; shift 2
	echo "rxe_exec: $(cut -d' ' -f1 /proc/uptime) step $k: $*"
	(h0=$(hw); "$@" >$S/$k.out 2>&1 & echo $! >$S/$k.pid; wait $!; rc=$?
	 echo "$rc $h0 $(hw)" >$S/$k.rc.tmp; mv $S/$k.rc.tmp $S/$k.rc) &
	if [ "$srv" = 1 ]; then
		until listening || [ -e $S/$k.rc ]; do sleep 0.05; done
		if listening; then echo listening >$S/$k.l.tmp; else echo ended >$S/$k.l.tmp; fi
		mv $S/$k.l.tmp $S/$k.listen
		echo "rxe_exec: $(cut -d' ' -f1 /proc/uptime) step $k: $(cat $S/$k.listen)"
	fi
}
n=1
while :; do
	until [ -e $S/steps/$n ]; do sleep 0.05; done
	. $S/steps/$n
	n=$((n+1))
done
""" % {"port": PORT}


# ---------------------------------------------------------------------- the host's side --

class HostSide:
	"""Runs in the run's namespace (rxe-vm's --host-cmd): each case's program under rocelab
	exec, and the guest's steps through the share. Writes SHARE/TAG.json per case."""

	def __init__(self, share, rocelab):
		self.share, self.rocelab = share, rocelab
		self.step = 0
		self.t0 = time.monotonic()
		self.proc = None
		self.guest_alive = True

	def post(self, line):
		"""The guest's next step; its number."""
		self.step += 1
		tmp = os.path.join(self.share, "steps", ".%d" % self.step)
		with open(tmp, "w") as f:
			f.write(line + "\n")
		os.rename(tmp, os.path.join(self.share, "steps", str(self.step)))
		self.say("step %d posted: %s" % (self.step, line))
		return self.step

	def say(self, what):
		log("%7.2f %s" % (time.monotonic() - self.t0, what))

	def path(self, name):
		return os.path.join(self.share, name)

	def wait_file(self, name, timeout):
		"""The contents of SHARE/NAME once it exists, or None after @timeout s."""
		t0 = time.monotonic()
		while time.monotonic() - t0 < timeout:
			if os.path.exists(self.path(name)):
				with open(self.path(name)) as f:
					return f.read()
			time.sleep(0.05)
		return None

	def listening(self):
		for name in ("/proc/net/tcp", "/proc/net/tcp6"):
			with open(name) as f:
				for line in f.readlines()[1:]:
					local, state = line.split()[1], line.split()[3]
					if state == "0A" and int(local.split(":")[1], 16) == PORT:
						return True
		return False

	def start(self, argv, out):
		"""The program under rocelab exec, in a session of its own (ended as a group)."""
		self.say("started: %s" % " ".join(argv))
		self.proc = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT,
					     stdin=subprocess.DEVNULL, start_new_session=True)
		return self.proc

	def stop(self):
		"""End the running program's group: TERM (rocelab exec passes it on), then KILL."""
		p, self.proc = self.proc, None
		if p is None or p.poll() is not None:
			return
		for sig, grace in ((signal.SIGTERM, 5), (signal.SIGKILL, 5)):
			try:
				os.killpg(p.pid, sig)
			except ProcessLookupError:
				return
			try:
				p.wait(timeout=grace)
				return
			except subprocess.TimeoutExpired:
				pass

	def host_argv(self, name, direction):
		prog, _size, opts = CASES[name]
		# timeout(1): a backstop behind wait_both(), should this script itself be killed
		argv = ["timeout", "-k", "5", str(PROG_TIMEOUT + 30), self.rocelab, "exec",
			"--dev", "net_af_packet0,iface=" + os.environ["RXE_VM_TAP"],
			"--ip", os.environ["RXE_VM_HOST_IP"]]
		if (name, direction) in CAPTURES:
			argv += ["--capture", self.path(tag(name, direction) + ".pcap")]
		argv += ["--", prog] + opts
		argv += ["-g", "0"] if prog.startswith("ibv_") else ["-x", "0"] + HOST_PERFTEST_OPTS
		if direction == "rl-cli":
			argv.append(os.environ["RXE_VM_GUEST_IP"])
		return argv

	def guest_cmd(self, name, direction):
		prog, _size, opts = CASES[name]
		gid = ["-g" if prog.startswith("ibv_") else "-x", "$RXE_GID_V2_IPV4"]
		cmd = ["timeout", str(PROG_TIMEOUT), prog, "-d", "rxe0"] + gid + opts
		if direction == "rl-srv":
			cmd.append(os.environ["RXE_VM_HOST_IP"])
		return " ".join(cmd)

	def wait_both(self, n, res):
		"""Wait for the host's program (if started) and the guest's step @n to end. Once one
		has ended, the other gets GRACE s more before it is stopped (a side that failed would
		leave the other waiting for it to its timeout); neither gets more than PROG_TIMEOUT +
		15 s in all."""
		t0, first, rc, killed = time.monotonic(), None, None, False
		while True:
			now = time.monotonic()
			host_done = self.proc is None or self.proc.poll() is not None
			if rc is None and os.path.exists(self.path("%d.rc" % n)):
				with open(self.path("%d.rc" % n)) as f:
					rc = f.read()
			if host_done and rc is not None:
				break
			if first is None and (host_done or rc is not None):
				first = now
			due = first + GRACE if first is not None else t0 + PROG_TIMEOUT + 15
			if now > due and not host_done:
				res["notes"].append("the program under rocelab exec was still running after "
						    "%.0f s: stopped" % (now - t0))
				self.stop()
				continue
			if now > due and not killed:
				res["notes"].append("the guest's program was still running after %.0f s: "
						    "stopped" % (now - t0))
				self.post("kill $(cat $S/%d.pid)" % n)
				killed = True
			if now > due + 20:
				res["notes"].append("no exit status from the guest after %.0f s" % (now - t0))
				self.guest_alive = False
				break
			time.sleep(0.05)
		if self.proc is not None:
			res["host_rc"] = self.proc.returncode
			self.proc = None
		if rc is not None:
			v = [int(x) for x in rc.split()]
			res["guest_rc"], res["hw"] = v[0], v[1:]

	def run_case(self, name, direction):
		t = tag(name, direction)
		res = {"case": t, "notes": []}
		t0 = time.monotonic()
		host_out = open(self.path(t + ".host"), "w")
		try:
			if direction == "rl-srv":
				self.start(self.host_argv(name, direction), host_out)
				t1 = time.monotonic()
				while (not self.listening() and self.proc.poll() is None and
				       time.monotonic() - t1 < LISTEN_TIMEOUT):
					time.sleep(0.05)
				if not self.listening():
					res["notes"].append("the server under rocelab exec did not listen "
							    "on port %d (exit %s)" % (PORT, self.proc.poll()))
					self.stop()
					return res
				n = self.post("run %d 0 %s" % (self.step + 1, self.guest_cmd(name, direction)))
			else:
				n = self.post("run %d 1 %s" % (self.step + 1, self.guest_cmd(name, direction)))
				said = self.wait_file("%d.listen" % n, LISTEN_TIMEOUT + 5)
				if said is None or said.strip() != "listening":
					res["notes"].append("the guest's server did not listen on port %d (%s)" %
							    (PORT, "no word in %d s" % (LISTEN_TIMEOUT + 5)
							     if said is None else "it " + said.strip()))
				else:
					self.start(self.host_argv(name, direction), host_out)
			res["step"] = n
			self.wait_both(n, res)
			return res
		finally:
			self.stop()
			host_out.close()
			res["secs"] = time.monotonic() - t0
			with open(self.path(t + ".json"), "w") as f:
				json.dump(res, f)

	def main(self, cases):
		def on_term(signum, _frame):
			self.stop()
			sys.exit(128 + signum)
		signal.signal(signal.SIGTERM, on_term)
		signal.signal(signal.SIGHUP, on_term)
		try:
			for name, direction in cases:
				if not self.guest_alive:
					break
				r = self.run_case(name, direction)
				log("%-22s %5.1f s host %s guest %s %s" % (r["case"], r["secs"],
									  r.get("host_rc"), r.get("guest_rc"),
									  "; ".join(r["notes"])))
		finally:
			self.post("exit 0")
		return 0


# ------------------------------------------------------------------------------- checks --

def mirrors_peer(name, side):
	"""perftest's write/read/atomic_bw server prints the client's report: its rates come from
	the other side's clock."""
	return side.endswith("server") and name in ("write_bw", "read_bw", "atomic_bw")


def check_perftest(name, side, rc, out, peer_out, failures):
	what = "%s %s" % (name, side)
	if rc != 0:
		failures.append("%s: exit %s" % (what, rc))
	lat = name.endswith("_lat")
	rows = [m for m in ((LAT_ROW if lat else BW_ROW).match(l) for l in out.splitlines()) if m]
	want = 0 if name == "read_lat" and side.endswith("server") else 1
	if len(rows) != want:
		failures.append("%s: %d result row(s), expected %d" % (what, len(rows), want))
		return None
	if not rows:
		return "no row (perftest's read_lat server prints none)"
	r = rows[0]
	size = CASES[name][1]
	if int(r.group(1)) != size or int(r.group(2)) != ITERS:
		failures.append("%s: row of %s B x %s, expected %d x %d" % (what, r.group(1),
									    r.group(2), size, ITERS))
	row = " ".join(r.group(0).split())
	clock = CLOCK_FAILED.search(peer_out if mirrors_peer(name, side) else out)
	if clock:
		return row + "  (perftest's clock calibration failed: rates not checked)"
	col = 4 if lat else 5	# t_max, MsgRate (atomic_bw's MB/s rounds to 0.00)
	try:
		ok = 0 < float(r.group(col)) < float("inf")
	except ValueError:
		ok = False
	if not ok:
		failures.append("%s: %s in its row is not a positive figure: %s" %
				(what, "t_max" if lat else "MsgRate", row))
	return row


def check_pingpong(name, side, rc, out, failures):
	what = "%s %s" % (name, side)
	if rc != 0:
		failures.append("%s: exit %s" % (what, rc))
	b, i = PP_BYTES.findall(out), PP_ITERS.findall(out)
	if len(b) != 1 or len(i) != 1:
		failures.append("%s: %d 'bytes in' and %d 'iters in' line(s), expected one each" %
				(what, len(b), len(i)))
		return None
	size = CASES[name][1]
	if int(b[0][0]) != size * ITERS * 2 or int(i[0][0]) != ITERS:
		failures.append("%s: %s bytes and %s iters, expected %d and %d" %
				(what, b[0][0], i[0][0], size * ITERS * 2, ITERS))
	if not 0 < float(i[0][2]) < float("inf"):
		failures.append("%s: usec/iter is not a positive figure" % what)
	return "%s iters, %s usec/iter" % (i[0][0], i[0][2])


def check_capture(rocelab, name, direction, pcap, failures):
	"""The capture of rocelab exec's port: RoCE frames both ways, rxe's ICRCs good, and for
	write_bw the client's WRITEs (every packet of every message)."""
	what = "%s %s capture" % (name, direction)
	if not os.path.exists(pcap):
		failures.append("%s: no file %s" % (what, pcap))
		return None
	d = subprocess.run([rocelab, "dissect", "--format=jsonl", pcap], stdout=subprocess.PIPE,
			   stderr=subprocess.STDOUT, text=True)
	frames = []
	for line in d.stdout.splitlines():
		try:
			f = json.loads(line)
		except ValueError:
			continue
		if f.get("kind") == "rocev2":
			frames.append(f)
	sent = [f for f in frames if f["ip"]["src"] == HOST_IP and f["ip"]["dst"] == GUEST_IP]
	got = [f for f in frames if f["ip"]["src"] == GUEST_IP and f["ip"]["dst"] == HOST_IP]
	bad = [f["n"] for f in got if not f.get("icrc_ok")]
	if d.returncode != 0 or not sent or not got or bad:
		failures.append("%s: rocelab dissect exit %d, %d RoCE frame(s) to rxe, %d from it, "
				"ICRC not good in frame(s) %s" % (what, d.returncode, len(sent), len(got),
								  bad[:10]))
		return None
	ops = {}
	for f in sent + got:
		op = f["bth"]["op"]
		ops[op] = ops.get(op, 0) + 1
	if name == "write_bw":
		size = CASES[name][1]
		writes = sum(1 for f in sent if "RDMA_WRITE" in f["bth"]["op"])
		want = ITERS * (size // 1024)
		if writes < want:
			failures.append("%s: %d RDMA WRITE packets from rocelab0, expected at least %d "
					"(%d x %d B at MTU 1024): %s" % (what, writes, want, ITERS, size, ops))
	else:	# ud_pingpong: SEND Only both ways, each side's 20 messages (and a first post)
		for lst, who in ((sent, "rocelab0"), (got, "rxe0")):
			n = sum(1 for f in lst if f["bth"]["op"] == "UD_SEND_ONLY")
			if n < ITERS:
				failures.append("%s: %d UD SEND Only from %s, expected at least %d: %s" %
						(what, n, who, ITERS, ops))
	return "%d frames to rxe, %d from it (ICRC good): %s" % (
		len(sent), len(got), ", ".join("%s %d" % kv for kv in sorted(ops.items())))


def check_case(rocelab, share, name, direction, failures):
	t = tag(name, direction)
	try:
		with open(os.path.join(share, t + ".json")) as f:
			res = json.load(f)
	except (OSError, ValueError):
		failures.append("%s: the host side left no result (its log: %s)" %
				(t, os.path.join(share, "vm.log.host")))
		return None, {}
	fails = ["%s: %s" % (t, n) for n in res["notes"]]
	host = ""
	if os.path.exists(os.path.join(share, t + ".host")):
		with open(os.path.join(share, t + ".host"), errors="replace") as f:
			host = f.read()
	guest = ""
	if "step" in res and os.path.exists(os.path.join(share, "%d.out" % res["step"])):
		with open(os.path.join(share, "%d.out" % res["step"]), errors="replace") as f:
			guest = f.read()
	out = {}
	if not fails:
		rl_side = "exec-" + ("server" if direction == "rl-srv" else "client")
		rxe_side = "rxe-" + ("client" if direction == "rl-srv" else "server")
		for side, rc, text, peer in ((rl_side, res.get("host_rc"), host, guest),
					     (rxe_side, res.get("guest_rc"), guest, host)):
			if name.endswith("_pingpong") or name.endswith("_pingpong_e"):
				out[side] = check_pingpong(name, side, rc, text, fails)
			else:
				out[side] = check_perftest(name, side, rc, text, peer, fails)
		hw = res.get("hw", [])
		if len(hw) == 4:
			sent, rcvd = hw[2] - hw[0], hw[3] - hw[1]
			out["rxe0"] = "sent %d, received %d packets" % (sent, rcvd)
			if sent <= 0 or rcvd <= 0 or max(sent, rcvd) < ITERS:
				fails.append("%s: rxe0's hw_counters: %s (expected both ways, at least %d "
					     "one way)" % (t, out["rxe0"], ITERS))
		else:
			fails.append("%s: no hw_counters from the guest" % t)
		if (name, direction) in CAPTURES:
			out["capture"] = check_capture(rocelab, name, direction,
						       os.path.join(share, t + ".pcap"), fails)
	if fails:
		fails.append("%s: under rocelab exec:\n%s\n-- rxe0 (guest):\n%s" %
			     (t, host[-2500:], guest[-2500:]))
	failures += fails
	return res.get("secs"), out


# --------------------------------------------------------------------------------- main --

child = None


def stop_child():
	global child
	rxe_interop.stop_vm(child, NS)
	child = None


def on_signal(signum, _frame):
	stop_child()
	sys.exit(128 + signum)


def main():
	if len(sys.argv) >= 4 and sys.argv[1] == "--host-side":
		share, rocelab = sys.argv[2], sys.argv[3]
		names = json.loads(sys.argv[4])
		return HostSide(share, rocelab).main([tuple(c) for c in names])
	if len(sys.argv) < 3:
		print(__doc__, file=sys.stderr)
		return 2
	rocelab, rxe_vm = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
	cases = case_names(sys.argv[3:])
	bad = [a for a in sys.argv[3:] if a not in CASES and
	       a not in ["%s:%s" % (n, d) for n in CASES for d in DIRS]]
	if bad:
		print("rxe_exec: no case %s (cases: %s; NAME:DIR with DIR %s)" %
		      (" ".join(bad), " ".join(CASES), " or ".join(DIRS)), file=sys.stderr)
		return 2
	lib = os.path.join(os.path.dirname(rocelab), "..", "..", "lib", "ibverbs", "libibverbs.so.1")
	if not os.environ.get("ROCELAB_VERBS_DIR") and not os.path.exists(lib):
		log("SKIP: no rocelab libibverbs.so.1 at %s (a build without lib/ibverbs)" % lib)
		return SKIP
	for s in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
		signal.signal(s, on_signal)
	t_all = time.monotonic()
	d = rxe_interop.vm_or_skip(rxe_vm)
	if d is None:
		return SKIP
	share = tempfile.mkdtemp(prefix="rocelab-rxe-exec-")
	os.makedirs(os.path.join(share, "steps"))
	script = os.path.join(share, "guest.sh")
	with open(script, "w") as f:
		f.write(GUEST)
	# meson puts build/lib/ibverbs in front of every process a test starts: only rocelab exec
	# may put it in front of its program (qemu links rdma-core's libibverbs)
	env = dict(os.environ, RXE_VM_NS=NS, RXE_VM_TAP=TAP, RXE_VM_IPV6="0",
		   RXE_VM_HOST_IP=HOST_IP, RXE_VM_GUEST_IP=GUEST_IP)
	paths = env.get("LD_LIBRARY_PATH", "").split(":")
	env["LD_LIBRARY_PATH"] = ":".join(p for p in paths
					  if p and not p.rstrip("/").endswith("lib/ibverbs"))
	host_cmd = "exec %s %s --host-side %s %s %s" % (
		shlex.quote(sys.executable), shlex.quote(os.path.abspath(__file__)),
		shlex.quote(share), shlex.quote(rocelab), shlex.quote(json.dumps(cases)))
	console = os.path.join(share, "vm.log")
	global child
	t0 = time.monotonic()
	with open(os.path.join(share, "vm.out"), "w+") as out:
		child = subprocess.Popen([rxe_vm, "start", d, "--timeout", str(VM_TIMEOUT), "--log",
					  console, "--share", share, "--script", script,
					  "--host-cmd", host_cmd], stdout=out, stderr=subprocess.STDOUT,
					 stdin=subprocess.DEVNULL, env=env)
		try:
			vm_rc = child.wait(timeout=VM_TIMEOUT + 60)
		except subprocess.TimeoutExpired:
			vm_rc = None
		stop_child()
		out.seek(0)
		whole = out.read()
	boot = re.search(r"qemu start -> READY ([\d.]+) s", whole)
	log("guest run: rxe-vm exit %s in %.0f s (READY after %s s); logs in %s" %
	    (vm_rc, time.monotonic() - t0, boot.group(1) if boot else "?", share))
	failures = []
	if "RXE-VM: READY" not in whole:
		failures.append("the guest never got rxe0 up (rxe-vm exit %s):\n%s" %
				(vm_rc, "\n".join(whole.splitlines()[-60:])))
	elif vm_rc != 0:
		failures.append("rxe-vm exit %s (124: its %d s timeout; else the guest loop's "
				"status)" % (vm_rc, VM_TIMEOUT))
	if "RXE-VM: READY" in whole:
		for name, direction in cases:
			n = len(failures)
			secs, out = check_case(rocelab, share, name, direction, failures)
			line = "%-16s %-6s %s %s" % (name, direction, "%5.1f s" % secs if secs else "  -  ",
						     "FAIL" if len(failures) > n else "ok")
			for side, what in sorted(out.items()):
				line += "\n    %-12s %s" % (side, what)
			log(line)
	for f in failures:
		log("FAIL " + f)
	log("%d case(s), %d failure(s); %.0f s in all" % (len(cases), len(failures),
							    time.monotonic() - t_all))
	if failures:
		log("logs kept in %s (vm.log: the console, vm.log.host: the host side's; NAME.DIR.host "
		    "and N.out: each case's programs, host and guest)" % share)
	else:
		shutil.rmtree(share, ignore_errors=True)
	return 1 if failures else 0


if __name__ == "__main__":
	sys.exit(main())
