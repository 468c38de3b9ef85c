#!/usr/bin/env python3
"""Unmodified rdma-core programs under `rocelab exec`, on rocelab0 over memif.

direct_PROG: two copies of PROG, each under rocelab exec, one the memif server, the other the
client; switch_PROG: the same through `rocelab switch` with two memif ports. PROG is each of
Debian's perftest tests (ib_write_bw, ib_read_bw, ib_send_bw, ib_atomic_bw, ib_write_lat,
ib_read_lat, ib_send_lat, and ib_send_lat -e) and ibv_rc/uc/ud/srq_pingpong, with and without
-e. Both sides must exit 0 and print their result rows. Then:
- perf_peer: ib_write_bw and ib_send_lat under exec against `rocelab perf --verify` (the NIC
  emulated inside rocelab's own perftest);
- capture: --capture of both sides holds the test's RoCE frames (read back by rocelab dissect);
- rate: with --rate 1G on both sides, ib_write_bw's 64 KiB WRITEs average at most 1 Gb/s;
- threads: exec_prog's two threads post RDMA WRITEs on one QP at once; the peer checks every byte;
- fork: a fork()ed child is refused with EIO and one line; the parent goes on;
- attr: a QP attribute rocelab does not model is refused with EOPNOTSUPP and one line;
- leak: a program that exits with every object alive leaves no memif socket and no process;
- killed: a program killed by SIGKILL leaves no memif socket; rocelab exec exits 137;
- bad_device: `-d mlx5_0` gets the program's own error, a line from rocelab0, exit != 0;
- bad_port: a port that cannot start: one line naming it, the program fails cleanly.

Usage: exec_verbs.py ROCELAB EXEC_PROG [CASE ...]
Exit 77 (skip) without perftest or ibverbs-utils, or without memif in this rocelab.
With ASAN_LIB set (libasan.so), every program runs with it preloaded: for the library built
with AddressSanitizer (the build-asan tree), whose findings then fail the case.
"""
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

SKIP = 77
MEMIF = "net_memif{},role={},socket={},bsize=8192,rsize=12"
A_IP, B_IP = "10.81.0.1", "10.81.0.2"
# a figure, or what perftest prints when its clock or its statistics failed on a busy machine
NUM = r"([\d.]+|-?nan|inf)"
BW_ROW = re.compile(r"^\s*(\d+)\s+(\d+)" + r"\s+" + NUM + (r"\s+" + NUM) * 2 + r"\s*$", re.M)
LAT_ROW = re.compile(r"^\s*(\d+)\s+(\d+)" + (r"\s+" + NUM) * 7 + r"\s*$", re.M)
PP_ROW = re.compile(r"^(\d+) iters in [\d.]+ seconds", re.M)
ASAN = "ERROR: AddressSanitizer"

# perftest's -u 18: a local ACK timeout of 1 s (7 retries: 8 s) instead of 67 ms, so that a
# NIC thread kept off the CPU for half a second on a loaded machine is not a failed test
PROGS = {
    "ib_write_bw": ["ib_write_bw", "-x", "0", "-u", "18", "-n", "300"],
    "ib_read_bw": ["ib_read_bw", "-x", "0", "-u", "18", "-n", "300"],
    "ib_send_bw": ["ib_send_bw", "-x", "0", "-u", "18", "-n", "300"],
    "ib_atomic_bw": ["ib_atomic_bw", "-x", "0", "-u", "18", "-n", "300"],
    "ib_write_lat": ["ib_write_lat", "-x", "0", "-u", "18", "-n", "300"],
    "ib_read_lat": ["ib_read_lat", "-x", "0", "-u", "18", "-n", "300"],
    "ib_send_lat": ["ib_send_lat", "-x", "0", "-u", "18", "-n", "300"],
    "ib_send_lat_e": ["ib_send_lat", "-x", "0", "-u", "18", "-n", "300", "-e"],
    "rc_pingpong": ["ibv_rc_pingpong", "-g", "0", "-n", "200"],
    "rc_pingpong_e": ["ibv_rc_pingpong", "-g", "0", "-n", "200", "-e"],
    "uc_pingpong": ["ibv_uc_pingpong", "-g", "0", "-n", "200"],
    "uc_pingpong_e": ["ibv_uc_pingpong", "-g", "0", "-n", "200", "-e"],
    "ud_pingpong": ["ibv_ud_pingpong", "-g", "0", "-n", "200", "-s", "1024"],
    "ud_pingpong_e": ["ibv_ud_pingpong", "-g", "0", "-n", "200", "-s", "1024", "-e"],
    "srq_pingpong": ["ibv_srq_pingpong", "-g", "0", "-n", "200"],
    "srq_pingpong_e": ["ibv_srq_pingpong", "-g", "0", "-n", "200", "-e"],
}
OTHER = ["perf_peer", "capture", "rate", "threads", "fork", "attr", "leak", "killed", "bad_device",
         "bad_port"]
CASES = ["direct_" + p for p in PROGS] + ["switch_" + p for p in PROGS] + OTHER


class Env:
    def __init__(self, rocelab, prog, tmp):
        self.rocelab, self.prog, self.tmp = rocelab, prog, tmp
        self.exec_opts = []	# more rocelab exec options for both sides (case_rate)
        self.outputs = {}	# the last pair()'s outputs by side
        self.env = dict(os.environ)
        # meson puts the library of a test's dependencies (build/lib/ibverbs) in front of every
        # process the test starts; only rocelab exec should put it in front of its program
        paths = self.env.get("LD_LIBRARY_PATH", "").split(":")
        self.env["LD_LIBRARY_PATH"] = ":".join(p for p in paths
                                               if p and not p.rstrip("/").endswith("lib/ibverbs"))
        if os.environ.get("ASAN_LIB"):
            self.env["LD_PRELOAD"] = os.environ["ASAN_LIB"]
            # DPDK's and the programs' own leaks are not the library's
            self.env["ASAN_OPTIONS"] = "detect_leaks=0:abort_on_error=1"

    def exec_cmd(self, dev, ip, argv, capture=None):
        cmd = [self.rocelab, "exec", "--dev", dev, "--ip", ip] + self.exec_opts
        if capture:
            cmd += ["--capture", capture]
        return ["timeout", "60"] + cmd + ["--"] + argv

    def start(self, argv):
        return subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                text=True, env=self.env)

    def run(self, argv, timeout=70):
        return subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              text=True, env=self.env, timeout=timeout)


def result_ok(name, argv, out):
    """'' if @out holds the program's result, else why not."""
    if ASAN in out:
        return "AddressSanitizer: " + out[out.index(ASAN):][:2000]
    prog = os.path.basename(argv[0])
    if prog == "exec_prog":
        return "" if re.search(r"^%s: " % argv[1], out, re.M) else "no '%s:' line" % argv[1]
    if prog.startswith("ibv_"):
        row = PP_ROW.findall(out)
        want = int(argv[argv.index("-n") + 1])
        return "" if row and int(row[0]) == want else "no '%d iters in' line" % want
    row = (LAT_ROW if prog.endswith("_lat") else BW_ROW).findall(out)
    return "" if row else "no result row"


def switch_start(env, name, sa, sb):
    sw = subprocess.Popen([env.rocelab, "switch", "--port", MEMIF.format(0, "server", sa),
                           "--port", MEMIF.format(1, "server", sb)],
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    first = ""
    for _ in range(20):
        first += sw.stdout.readline()
        if "forwarding" in first or sw.poll() is not None:
            break
    if "forwarding" not in first:
        sw.kill()
        return None, "%s: the switch did not start: %s" % (name, first)
    return sw, ""


def switch_stop(sw):
    sw.send_signal(signal.SIGTERM)
    try:
        return sw.communicate(timeout=20)[0]
    except subprocess.TimeoutExpired:
        sw.kill()
        return sw.communicate()[0] + "\n(the switch did not stop on SIGTERM)"


def pair(env, name, argv_a, argv_b, via_switch=False, capture=False):
    """Program A (server) and B (client, given A's host) under exec. @return failures."""
    sa = os.path.join(env.tmp, name + "-a.sock")
    sb = os.path.join(env.tmp, name + "-b.sock")
    sw = None
    if via_switch:
        sw, why = switch_start(env, name, sa, sb)
        if sw is None:
            return [why], [None, None]
        dev_a, dev_b = MEMIF.format(0, "client", sa), MEMIF.format(0, "client", sb)
    else:
        dev_a, dev_b = MEMIF.format(0, "server", sa), MEMIF.format(0, "client", sa)
    caps = [os.path.join(env.tmp, name + s + ".pcap") for s in ("-a", "-b")] if capture \
        else [None, None]
    a = env.start(env.exec_cmd(dev_a, A_IP, argv_a, caps[0]))
    wait_listen(a)
    b = env.run(env.exec_cmd(dev_b, B_IP, argv_b, caps[1]))
    try:
        a_out = a.communicate(timeout=70)[0]
    except subprocess.TimeoutExpired:
        a.kill()
        a_out = a.communicate()[0] + "\n(killed: no exit within 70 s)"
    sw_out = switch_stop(sw) if sw is not None else ""
    env.outputs = {"A": a_out, "B": b.stdout}
    fails = []
    for side, rc, out, argv in (("A", a.returncode, a_out, argv_a),
                                ("B", b.returncode, b.stdout, argv_b)):
        why = "exit %d" % rc if rc != 0 else result_ok(name, argv, out)
        if side == "A" and argv[0] == "ib_read_lat" and why.startswith("no result"):
            why = ""	# ib_read_lat's server prints no result
        if why:
            fails.append("%s side %s: %s\n%s" % (name, side, why, out[-3000:]))
    if sw is not None and sw.returncode not in (0, None):
        fails.append("%s: the switch exited %s\n%s" % (name, sw.returncode, sw_out))
    if sockets_left(env):
        fails.append("%s: memif sockets left behind: %s" % (name, sockets_left(env)))
    return fails, caps


def case_prog(env, name):
    via_switch, prog = name.startswith("switch_"), name.split("_", 1)[1]
    argv = PROGS[prog]
    fails, _ = pair(env, name, argv, argv + ["localhost"], via_switch)
    return fails


def case_perf_peer(env, name):
    """rocelab exec's perftest (server) against rocelab perf's (client)."""
    fails = []
    for test, argv in (("write_bw", PROGS["ib_write_bw"]), ("send_lat", PROGS["ib_send_lat"])):
        s = os.path.join(env.tmp, "%s-%s.sock" % (name, test))
        srv = env.start(env.exec_cmd(MEMIF.format(0, "server", s), A_IP, argv))
        wait_listen(srv)
        # no --verify: it checks rocelab's own data pattern, which perftest does not write
        cli = env.run([env.rocelab, "perf", test, "-n", argv[argv.index("-n") + 1],
                       "--timeout", "30", "--dev", MEMIF.format(0, "client", s), "--ip", B_IP,
                       "127.0.0.1"])
        try:
            srv_out = srv.communicate(timeout=70)[0]
        except subprocess.TimeoutExpired:
            srv.kill()
            srv_out = srv.communicate()[0] + "\n(killed)"
        if srv.returncode != 0 or result_ok(name, argv, srv_out):
            fails.append("%s %s: exec side exit %d %s\n%s" % (name, test, srv.returncode,
                                                            result_ok(name, argv, srv_out),
                                                            srv_out[-3000:]))
        if cli.returncode != 0 or result_ok(name, ["ib_" + test], cli.stdout):
            fails.append("%s %s: rocelab perf exit %d\n%s" % (name, test, cli.returncode,
                                                            cli.stdout[-3000:]))
    return fails


def case_capture(env, name):
    argv = ["ib_write_bw", "-x", "0", "-n", "100", "-s", "4096"]
    fails, caps = pair(env, name, argv, argv + ["localhost"], capture=True)
    if fails:
        return fails
    for cap in caps:
        out = env.run([env.rocelab, "dissect", "--summary", cap])
        roce = re.search(r"frames: \d+ total, (\d+) RoCE", out.stdout)
        # 100 WRITEs of one frame each and their ACKs (or fewer, coalesced)
        if out.returncode != 0 or roce is None or int(roce.group(1)) < 101:
            fails.append("%s: %s does not hold the test's frames\n%s" %
                         (name, cap, out.stdout[-2000:]))
    return fails


def case_rate(env, name):
    """--rate 1G on both sides: 64 KiB WRITEs reach at most the link's 1 Gb/s."""
    argv = ["ib_write_bw", "-x", "0", "-u", "18", "-n", "300", "-s", "65536", "--report_gbits"]
    env.exec_opts = ["--rate", "1G"]
    try:
        fails, _ = pair(env, name, argv, argv + ["localhost"])
    finally:
        env.exec_opts = []
    if fails:
        return fails
    row = BW_ROW.findall(env.outputs["B"])
    avg = float(row[0][3]) if row and row[0][3].replace(".", "", 1).isdigit() else None
    if avg is None or not 0 < avg <= 1.0:
        return ["%s: BW average %s Gb/s, not within the 1 Gb/s link\n%s" %
                (name, avg, env.outputs["B"][-2000:])]
    return []


def case_threads(env, name):
    d = tempfile.mkdtemp(dir=env.tmp)
    fails, _ = pair(env, name, [env.prog, "threads", d, "b"], [env.prog, "threads", d, "a"])
    return fails


def one(env, name, argv, want_rc, want_err, want_out="", dev=None):
    s = os.path.join(env.tmp, name + ".sock")
    r = env.run(env.exec_cmd(dev or MEMIF.format(0, "server", s), A_IP, argv))
    fails = []
    if (want_rc == 0) != (r.returncode == 0) or (want_rc not in (0, None) and
                                                 r.returncode != want_rc):
        fails.append("%s: exit %d, wanted %s\n%s" % (name, r.returncode, want_rc, r.stdout))
    lines = [l for l in r.stdout.splitlines() if l.startswith("rocelab0: ")]
    if want_err and (len(lines) != 1 or want_err not in lines[0]):
        fails.append("%s: wanted one 'rocelab0: ...%s...' line, got %s\n%s" %
                     (name, want_err, lines, r.stdout))
    if want_out and want_out not in r.stdout:
        fails.append("%s: no '%s'\n%s" % (name, want_out, r.stdout))
    if ASAN in r.stdout:
        fails.append("%s: AddressSanitizer\n%s" % (name, r.stdout))
    if sockets_left(env):
        fails.append("%s: memif sockets left behind: %s" % (name, sockets_left(env)))
    return fails


def case_fork(env, name):
    return one(env, name, [env.prog, "fork"], 0, "fork() of pid", "the child was refused")


def case_attr(env, name):
    return one(env, name, [env.prog, "attr"], 0, "not modelled", "EOPNOTSUPP for")


def case_leak(env, name):
    t0 = time.time()
    fails = one(env, name, [env.prog, "leak"], 0, None, "every object alive")
    if time.time() - t0 > 20:
        fails.append("%s: exit took %.1f s" % (name, time.time() - t0))
    return fails


def listening(port):
    for name in ("/proc/net/tcp", "/proc/net/tcp6"):
        with open(name) as f:
            for line in f.readlines()[1:]:
                local, state = line.split()[1], line.split()[3]
                if state == "0A" and int(local.split(":")[1], 16) == port:
                    return True
    return False


def wait_listen(proc, port=18515):
    """Wait (up to 30 s) for the server's exchange port (perftest's and the pingpongs'): its
    NIC is up by then."""
    t0 = time.time()
    while not listening(port) and time.time() - t0 < 30 and proc.poll() is None:
        time.sleep(0.05)


def sockets_left(env):
    """memif sockets of this test still bound: files, or abstract ones (DPDK's default)."""
    with open("/proc/net/unix") as f:
        return sorted({l.split()[-1] for l in f if env.tmp in l})


def case_killed(env, name):
    s = os.path.join(env.tmp, name + ".sock")
    p = env.start(env.exec_cmd(MEMIF.format(0, "server", s), A_IP, PROGS["ib_write_bw"])[2:])
    out, t0 = "", time.time()
    while not sockets_left(env) and time.time() - t0 < 30 and p.poll() is None:
        time.sleep(0.1)	# until the server's NIC is up (its output is buffered in a pipe)
    kids = subprocess.run(["pgrep", "-P", str(p.pid)], stdout=subprocess.PIPE,
                          text=True).stdout.split()
    if not sockets_left(env) or len(kids) != 1:
        for k in kids:
            os.kill(int(k), signal.SIGKILL)
        p.kill()
        return ["%s: the server did not start under rocelab exec (%s)\n%s%s" %
                (name, kids, out, p.communicate()[0])]
    fails = []
    os.kill(int(kids[0]), signal.SIGKILL)	# the program, not rocelab exec
    try:
        out += p.communicate(timeout=30)[0]
    except subprocess.TimeoutExpired:
        p.kill()
        return ["%s: rocelab exec did not return after its program was killed" % name]
    if p.returncode != 137:
        fails.append("%s: rocelab exec exit %d, wanted 137\n%s" % (name, p.returncode, out))
    if sockets_left(env):
        fails.append("%s: memif sockets left behind: %s" % (name, sockets_left(env)))
    return fails


def case_bad_device(env, name):
    return one(env, name, ["ib_write_bw", "-d", "mlx5_0", "-x", "0"], None,
               "the only device is rocelab0")


def case_bad_port(env, name):
    return one(env, name, ["ibv_rc_pingpong", "-g", "0", "-n", "5"], None, "port net_nosuch0",
               dev="net_nosuch0")


def main():
    if len(sys.argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    rocelab, prog = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    names = sys.argv[3:] or CASES
    bad = [n for n in names if n not in CASES]
    if bad:
        print("exec_verbs: no case %s (cases: %s)" % (bad, " ".join(CASES)), file=sys.stderr)
        return 2
    for tool in ("ib_write_bw", "ibv_rc_pingpong"):
        if shutil.which(tool) is None:
            print("SKIP: %s is not installed (apt-get install perftest ibverbs-utils)" % tool)
            return SKIP
    tmp = tempfile.mkdtemp(prefix="rocelab-exec-")
    try:
        env = Env(rocelab, prog, tmp)
        probe = env.run([rocelab, "switch", "--port", MEMIF.format(0, "server",
                                                                   tmp + "/probe.sock"),
                         "--port", MEMIF.format(1, "server", tmp + "/probe2.sock"),
                         "--duration", "0.01"])
        if probe.returncode != 0:
            print("SKIP: no memif here: %s" % probe.stdout.strip().splitlines()[-1:])
            return SKIP
        failures = []
        shm_before = set(os.listdir("/dev/shm"))
        for name in names:
            t0 = time.time()
            if name in OTHER:
                fails = globals()["case_" + name](env, name)
            else:
                fails = case_prog(env, name)
            failures += fails
            print("%-22s %s %.1f s" % (name, "FAILED" if fails else "ok", time.time() - t0))
            sys.stdout.flush()
        shm = set(os.listdir("/dev/shm")) - shm_before
        if shm:
            failures.append("files left in /dev/shm: %s" % sorted(shm))
        for f in failures:
            print("\nFAIL " + f)
        print("\n%d of %d cases passed" % (len(names) - len({f.split(":")[0].split(" ")[0]
                                                              for f in failures}), len(names)))
        return 1 if failures else 0
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
