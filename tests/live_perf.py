#!/usr/bin/env python3
"""Two rocelab processes in two network namespaces joined by a veth pair (net_af_packet on
each end) run perftest's tests in real time with --verify, as perftest is used: a server and a
client that names it. Checks both exit 0, print one result row in perftest's columns with the
asked size and iteration count (and a non-zero rate), and report every byte checked. The
ibv_*_pingpong cases check the pingpong's two result lines instead. The -b cases (both sides
send) check one row on each side; the -a cases one row per size, in order (write/read's server:
the client's last; read_lat's server: none), latency tests included. UC and UD do not
resend: a server may count messages that never arrived (send_bw_uc_loss forces it with
--loss), and its row counts the rest, each checked. Then bad input: a client that runs another test than the server, a server
nobody connects to, an unreachable peer; each side must exit non-zero with one 'rocelab perf:'
line, within its timeout; options a live run refuses must exit 2 with one line.

Usage: live_perf.py ROCELAB [CASE ...]; exit 77 (skip) when not root or when namespaces or veth
pairs cannot be made. The namespaces (unique names) are deleted on every exit path.
"""
import os
import re
import signal
import subprocess
import sys
import time

import netns
from netns import sh

SKIP = 77
ITERS = 200
SIZE = 65536
# af_packet's default ring (512 frames) overflows when the kernel delivers faster than one
# process polls on a shared 2-core machine: a larger ring keeps the run free of loss.
DEVARGS = "net_af_packet0,iface={},framecnt=4096"
SERVER_IP, CLIENT_IP = "10.77.0.1", "10.77.0.2"
UNREACHABLE_IP = "10.77.0.9"	# on the subnet, nobody answers ARP or TCP there
# IPv6: the kernel's addresses (TCP, and RoCE in the _v6 cases) and two more that only the
# emulated hosts own (the _v6nd cases): rocelab's own neighbour discovery must resolve them
SERVER_IP6, CLIENT_IP6 = "2001:db8:77::1", "2001:db8:77::2"
SERVER_EMU6, CLIENT_EMU6 = "2001:db8:77::11", "2001:db8:77::12"
BAD_TIMEOUT = 3	# --timeout of the bad-input cases
ALL_MAX = 65536	# --all-max of the -a cases
ALL_ITERS = 50	# -n of the -a cases (per size)

# case -> (rocelab test, extra options, size); a _uc/_ud suffix runs the test over UC/UD
CASES = {
    "write_bw": ("write_bw", [], SIZE),
    "read_bw": ("read_bw", [], SIZE),
    "send_bw": ("send_bw", [], SIZE),
    "atomic_bw": ("atomic_bw", [], 8),
    "write_lat": ("write_lat", [], 2),
    "read_lat": ("read_lat", [], 2),
    "send_lat": ("send_lat", [], 2),
    "write_bw_uc": ("write_bw", ["-c", "UC"], SIZE),
    "send_bw_uc": ("send_bw", ["-c", "UC"], SIZE),
    "write_lat_uc": ("write_lat", ["-c", "UC"], 64),
    "send_lat_uc": ("send_lat", ["-c", "UC"], 64),
    # UC does not resend: the client's --loss drops frames, the messages they belonged to never
    # arrive; the server counts them lost, and every message it did receive is checked
    "send_bw_uc_loss": ("send_bw", ["-c", "UC", "--loss", "0.003", "--seed", "5"], SIZE),
    # UD messages fit the path MTU (1024 on the veth's 1500); ITERS is below the server's 512
    # posted receives, so none is ever missing (UD drops a message then, it does not retry)
    "send_bw_ud": ("send_bw", ["-c", "UD"], 1024),
    "send_lat_ud": ("send_lat", ["-c", "UD"], 1024),
    "rc_pingpong": ("rc_pingpong", [], 4096),
    "uc_pingpong": ("uc_pingpong", [], 4096),
    "ud_pingpong": ("ud_pingpong", [], 1024),
    "write_bw_v6": ("write_bw", [], SIZE),
    "send_lat_ud_v6": ("send_lat", ["-c", "UD"], 1024),
    "read_bw_v6nd": ("read_bw", [], SIZE),
    "rc_pingpong_v6nd": ("rc_pingpong", [], 4096),
    # -b: both sides send at once; each prints one row (its own size and iterations, both
    # sides' rates summed) and --verify checks what the peer wrote, sent or let us read
    "write_bw_bidir": ("write_bw", ["-b"], SIZE),
    "read_bw_bidir": ("read_bw", ["-b"], SIZE),
    "send_bw_bidir": ("send_bw", ["-b"], SIZE),
    "atomic_bw_bidir": ("atomic_bw", ["-b"], 8),
    "send_bw_ud_bidir": ("send_bw", ["-b", "-c", "UD"], 1024),
    # -a: one row per size from 2 to the size given here (--all-max; UD: to the path MTU);
    # write_bw/read_bw's server prints the client's last row only, send_bw's server all its own
    "write_bw_all": ("write_bw", ["-a"], ALL_MAX),
    "read_bw_all": ("read_bw", ["-a"], ALL_MAX),
    "send_bw_all": ("send_bw", ["-a"], ALL_MAX),
    "send_bw_ud_all": ("send_bw", ["-a", "-c", "UD"], 1024),
    "write_bw_all_bidir": ("write_bw", ["-a", "-b"], ALL_MAX),
    "send_bw_all_bidir": ("send_bw", ["-a", "-b"], ALL_MAX),
    # latency -a: write_lat's sizes back to back (stamps restart in each), read_lat's client
    # alone (its server prints no row), send_lat with a sync before each size
    "write_lat_all": ("write_lat", ["-a"], ALL_MAX),
    "read_lat_all": ("read_lat", ["-a"], ALL_MAX),
    "send_lat_all": ("send_lat", ["-a"], ALL_MAX),
    "send_lat_ud_all": ("send_lat", ["-a", "-c", "UD"], 1024),
}


def addresses(name):
    """(server --ip, client --ip, the server's TCP address) of a case."""
    if name.endswith("_v6"):
        return SERVER_IP6, CLIENT_IP6, SERVER_IP6
    if name.endswith("_v6nd"):
        return SERVER_EMU6, CLIENT_EMU6, SERVER_IP6
    return SERVER_IP, CLIENT_IP, SERVER_IP
BAD = ["host", "bad-rkey", "bad-mismatch", "bad-noclient", "bad-unreachable", "bad-options"]

def setup(tag):
    a, b = netns.add("rlsrv" + tag, "rlcli" + tag)
    netns.veth(a, "va", b, "vb")
    for ns, dev, ip, ip6 in ((a, "va", SERVER_IP, SERVER_IP6), (b, "vb", CLIENT_IP, CLIENT_IP6)):
        sh("ip", "-n", ns, "addr", "add", ip + "/24", "dev", dev)
        # nodad: usable at once (duplicate address detection would hold it for a second)
        sh("ip", "-n", ns, "addr", "add", ip6 + "/64", "dev", dev, "nodad", check=False)
        sh("ip", "-n", ns, "link", "set", dev, "up")
    return a, b


BW_ROW = re.compile(r"^\s*(\d+)\s+(\d+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s*$")
LAT_ROW = re.compile(r"^\s*(\d+)\s+(\d+)" + r"\s+([\d.]+)" * 7 + r"\s*$")
PP_BYTES = re.compile(r"^(\d+) bytes in ([\d.]+) seconds = ([\d.]+) Mbit/sec$", re.M)
PP_ITERS = re.compile(r"^(\d+) iters in ([\d.]+) seconds = ([\d.]+) usec/iter$", re.M)
VERIFY_OK = "verify: every byte and every completion checked: OK"


def check_pingpong(name, side, out, iters, size, failures):
    what = "%s %s" % (name, side)
    b, i = PP_BYTES.findall(out), PP_ITERS.findall(out)
    if len(b) != 1 or len(i) != 1:
        failures.append("%s: expected one 'bytes in' and one 'iters in' line\n%s" % (what, out))
        return
    if int(b[0][0]) != size * iters * 2 or int(i[0][0]) != iters:
        failures.append("%s: %s bytes and %s iters, expected %d and %d" %
                        (what, b[0][0], i[0][0], size * iters * 2, iters))
    if not float(i[0][2]) > 0:
        failures.append("%s: usec/iter is not positive" % what)
    if VERIFY_OK not in out:
        failures.append("%s: no verify OK line" % what)
    print("%-16s %-6s %s" % (name, side, PP_ITERS.search(out).group(0)))


LOST = re.compile(r"(?:UC|UD): (\d+) message\(s\) never arrived")


def check_output(name, test, side, out, iters, size, failures):
    if test.endswith("_pingpong"):
        check_pingpong(name, side, out, iters, size, failures)
        return
    lat = test.endswith("_lat")
    rows = [m for m in ((LAT_ROW if lat else BW_ROW).match(l) for l in out.splitlines()) if m]
    what = "%s %s" % (name, side)
    if VERIFY_OK not in out:
        failures.append("%s: no verify OK line" % what)
    if "Waiting for client" not in out and side == "server":
        failures.append("%s: no 'Waiting for client' banner" % what)
    # read_lat's server only serves the READs: no row (perftest's neither)
    if test == "read_lat" and side == "server":
        if rows:
            failures.append("%s: a result row, expected none" % what)
        print("%-16s %-6s (no row, as perftest's)" % (name, side))
        return
    if len(rows) != 1:
        failures.append("%s: expected one result row, found %d" % (what, len(rows)))
        return
    r = rows[0]
    if int(r.group(1)) != size:
        failures.append("%s: #bytes %s, expected %d" % (what, r.group(1), size))
    # write_lat's client waits for the server's first write, then times the round trips
    # between its own writes; send_lat's server times its answers to the next message: one
    # fewer each
    want = iters
    if (test == "write_lat" and side == "client") or (test == "send_lat" and side == "server"):
        want = iters - 1
    # UC and UD lose a message a frame of which was lost (a ring overrun on a loaded machine,
    # or --loss): the receiving server counts it, and its row counts what arrived
    lost = LOST.search(out)
    if lost and side == "server":
        want -= int(lost.group(1))
    if name.endswith("_loss") and side == "server" and not (lost and int(lost.group(1)) > 0):
        failures.append("%s: --loss on UC, but no message counted lost\n%s" % (what, out))
    if int(r.group(2)) != want:
        failures.append("%s: #iterations %s, expected %d" % (what, r.group(2), want))
    # lat: t_max; bw: the message rate (atomic_bw's 8 B can round to 0.00 MB/s)
    val = float(r.group(4) if lat else r.group(5))
    if not val > 0:
        failures.append("%s: %s is not positive" % (what, "t_max" if lat else "MsgRate"))
    print("%-16s %-6s %s" % (name, side, " ".join(r.group(0).split())))


def check_all(name, test, side, out, iters, sizes, failures):
    """-a: one row per expected size, in order, each with all its iterations."""
    what = "%s %s" % (name, side)
    lat = test.endswith("_lat")
    rows = [m for m in ((LAT_ROW if lat else BW_ROW).match(l) for l in out.splitlines()) if m]
    if (test == "write_lat" and side == "client") or (test == "send_lat" and side == "server"):
        iters -= 1	# as without -a: one round trip fewer timed
    if test == "read_lat" and side == "server":
        sizes = []	# it only serves the READs
    got = [int(r.group(1)) for r in rows]
    if VERIFY_OK not in out:
        failures.append("%s: no verify OK line" % what)
    if got != sizes:
        failures.append("%s: row sizes %s, expected %s" % (what, got, sizes))
        return
    for r in rows:
        # small sizes round MB/s to 0.00, large ones Mpps to 0.000000: one must be positive
        # (latency: t_max)
        if int(r.group(2)) != iters or not (float(r.group(4)) > 0 or float(r.group(5)) > 0):
            failures.append("%s: size %s: %s iterations (expected %d), %s MB/s, %s Mpps" %
                            (what, r.group(1), r.group(2), iters, r.group(4), r.group(5)))
    if not sizes:
        print("%-16s %-6s no row (it serves the READs), verified" % (name, side))
        return
    print("%-16s %-6s %d row(s), %d..%d B x %d, verified" % (name, side, len(rows), sizes[0],
                                                           sizes[-1], iters))


def side_cmd(rocelab, ns, args, dev, ip, peer=None):
    cmd = ["ip", "netns", "exec", ns, rocelab] + args + ["--dev", DEVARGS.format(dev), "--ip", ip]
    return cmd + ([peer] if peer else [])


def run_pair(rocelab, a, b, name, failures):
    test, extra, size = CASES[name]
    all_ = "-a" in extra
    iters = ALL_ITERS if all_ else ITERS
    common = ["perf", test, "-n", str(iters), "--verify", "--timeout", "20"] + extra
    common += ["--all-max", str(size)] if all_ else ["-s", str(size)]
    sip, cip, peer = addresses(name)
    srv = subprocess.Popen(side_cmd(rocelab, a, common, "va", sip),
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        cli = subprocess.run(side_cmd(rocelab, b, common, "vb", cip, peer),
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                             timeout=90)
        sout, _ = srv.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        srv.kill()
        srv.communicate()
        failures.append("%s: timed out" % name)
        return
    for side, rc, out in (("server", srv.returncode, sout), ("client", cli.returncode, cli.stdout)):
        if rc != 0:
            failures.append("%s %s: exit %d\n%s" % (name, side, rc, out))
            continue
        if all_:
            sizes = [1 << i for i in range(1, 24) if (1 << i) <= size]
            if side == "server" and test in ("write_bw", "read_bw") and "-b" not in extra:
                sizes = sizes[-1:]	# the client's report: its last size
            check_all(name, test, side, out, iters, sizes, failures)
        else:
            check_output(name, test, side, out, iters, size, failures)
        if ":" in sip and "GID " + (sip if side == "server" else cip) not in out:
            failures.append("%s %s: its local address line does not carry the GID %s" %
                            (name, side, sip if side == "server" else cip))


def check_bad(what, rc, out, secs, failures):
    """Non-zero exit, one 'rocelab perf:' error line, no longer than the timeout allows."""
    errs = [l for l in out.splitlines() if l.startswith("rocelab perf:")]
    if rc in (0, None):
        failures.append("%s: exit %s, expected a failure" % (what, rc))
    if len(errs) != 1:
        failures.append("%s: %d 'rocelab perf:' lines, expected one\n%s" % (what, len(errs), out))
    if secs > BAD_TIMEOUT + 15:
        failures.append("%s: took %.0f s with --timeout %d" % (what, secs, BAD_TIMEOUT))
    print("%-24s exit %s in %4.1f s: %s" % (what, rc, secs, errs[0] if errs else "?"))


def run_bad_rkey(rocelab, a, b, failures):
    """The client's WRITEs carry a wrong rkey (--bad-rkey): the server's responder answers
    NAK remote access error (on the wire: its --pcap), the client's completion says
    REM_ACCESS_ERR and it exits 1; the server counts the NAK it sent."""
    pcap = "/tmp/rocelab-live-badrkey-%d.pcap" % os.getpid()
    opts = ["perf", "write_bw", "-n", "20", "--timeout", "10"]
    srv = subprocess.Popen(side_cmd(rocelab, a, opts + ["--pcap", pcap], "va", SERVER_IP),
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    cli = subprocess.run(side_cmd(rocelab, b, opts + ["--bad-rkey"], "vb", CLIENT_IP, SERVER_IP),
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=60)
    try:
        sout, _ = srv.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        srv.kill()
        sout, _ = srv.communicate()
    if cli.returncode != 1 or "first: REM_ACCESS_ERR" not in cli.stdout:
        failures.append("bad-rkey client: exit %d, expected 1 with a REM_ACCESS_ERR completion\n%s"
                        % (cli.returncode, cli.stdout))
    m = re.search(r"NIC: (\d+) NAK\(s\) remote access error sent", sout)
    if m is None or int(m.group(1)) < 1:
        failures.append("bad-rkey server: no NAK remote access error counted\n%s" % sout)
    t = subprocess.run(["tshark", "-r", pcap, "-Y", "ip.src == %s && infiniband.aeth.syndrome == "
                        "0x62" % SERVER_IP, "-T", "fields", "-e", "infiniband.bth.psn"],
                       stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    naks = [l for l in t.stdout.splitlines() if l.strip()]
    if not naks:
        failures.append("bad-rkey: no NAK remote access error (AETH 0x62) from the server in "
                        "its capture %s" % pcap)
    else:
        os.unlink(pcap)
    print("%-24s client exit %d (%s); server: %s; wire: %d NAK 0x62" %
          ("bad rkey", cli.returncode, "REM_ACCESS_ERR" if "REM_ACCESS_ERR" in cli.stdout else "?",
           m.group(0) if m else "?", len(naks)))


def run_host(rocelab, a, b, failures):
    """Host mode: one server (--serve-forever) serves write_bw clients one after another, a
    client of another test in between fails alone, and SIGTERM ends the host with exit 0."""
    opts = ["perf", "write_bw", "-n", "50", "--verify", "--timeout", "10"]
    srv = subprocess.Popen(side_cmd(rocelab, a, opts + ["--serve-forever"], "va", SERVER_IP),
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    plan = ["write_bw", "write_bw", "rc_pingpong", "write_bw"]
    try:
        for i, test in enumerate(plan):
            o = opts if test == "write_bw" else ["perf", test, "--timeout", str(BAD_TIMEOUT)]
            c = subprocess.run(side_cmd(rocelab, b, o, "vb", CLIENT_IP, SERVER_IP),
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                               timeout=60)
            ok = c.returncode == 0 and VERIFY_OK in c.stdout
            if ok != (test == "write_bw"):
                failures.append("host: client %d (%s) exit %d\n%s" % (i + 1, test, c.returncode,
                                                                       c.stdout))
        time.sleep(0.2)
        t0 = time.monotonic()
        srv.send_signal(signal.SIGTERM)
        out, _ = srv.communicate(timeout=30)
        secs = time.monotonic() - t0
    except subprocess.TimeoutExpired:
        srv.kill()
        srv.communicate()
        failures.append("host: timed out")
        return
    want = "host: stopped by a signal; 4 client(s) served, 1 failed"
    if srv.returncode != 0 or want not in out or secs > 5:
        failures.append("host: exit %d after %.1f s, expected 0 and '%s'\n%s" %
                        (srv.returncode, secs, want, out))
    if out.count(VERIFY_OK) != 3:
        failures.append("host: %d verified runs, expected 3" % out.count(VERIFY_OK))
    print("%-24s %d clients, SIGTERM -> exit %d in %.1f s: %s" %
          ("host mode", len(plan), srv.returncode, secs,
           want if want in out else "?"))


# Options a live run refuses before it opens anything: exit 2 with one line naming the value.
BAD_OPTIONS = [
    (["rc_pingpong", "-a"], "unknown option '-a'"),
    (["send_lat", "-b"], "-b is for the bandwidth tests"),
    (["atomic_bw", "-a"], "-a: atomic_bw has one size"),
    (["write_bw", "-a", "--all-max", "3000"], "--all-max '3000': expected a power of two"),
    (["write_bw", "-a", "--all-max", "16777216"], "--all-max"),
    (["write_bw", "--all-max", "4096"], "--all-max goes with -a"),
    (["write_bw", "-a", "-D", "2"], "-a runs -n iterations per size: not with -D"),
    (["rc_pingpong", "-b"], "unknown option '-b'"),
    (["write_bw", "-R"], "-R/--rdma_cm (connecting through rdma_cm) is not supported yet"),
    (["write_bw", "--rdma_cm"], "--report_gbits"),
]


def run_bad_options(rocelab, a, failures):
    for args, want in BAD_OPTIONS:
        p = subprocess.run(side_cmd(rocelab, a, ["perf"] + args, "va", SERVER_IP),
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                           timeout=30)
        lines = [l for l in p.stdout.splitlines() if l.strip()]
        if p.returncode != 2 or len(lines) != 1 or want not in lines[0]:
            failures.append("bad options %s: exit %d, expected 2 and one line with '%s'\n%s" %
                            (" ".join(args), p.returncode, want, p.stdout))
    # -b without a port: virtual time has no bidirectional run
    p = subprocess.run([rocelab, "perf", "write_bw", "-b"], stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, text=True, timeout=30)
    if p.returncode != 2 or "-b runs in real time only" not in p.stdout:
        failures.append("bad options write_bw -b (no --dev): exit %d\n%s" % (p.returncode,
                                                                           p.stdout))
    print("%-24s %d refused with exit 2 and one line each" % ("bad options",
                                                              len(BAD_OPTIONS) + 1))


def run_bad(rocelab, a, b, name, failures):
    opts = ["--timeout", str(BAD_TIMEOUT)]
    t0 = time.monotonic()
    if name == "host":
        run_host(rocelab, a, b, failures)
    elif name == "bad-rkey":
        run_bad_rkey(rocelab, a, b, failures)
    elif name == "bad-mismatch":
        # the server runs ibv_rc_pingpong, the client perftest's write_bw: neither understands
        # the other's first message
        srv = subprocess.Popen(side_cmd(rocelab, a, ["perf", "rc_pingpong"] + opts, "va",
                                        SERVER_IP), stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True)
        cli = subprocess.run(side_cmd(rocelab, b, ["perf", "write_bw"] + opts, "vb", CLIENT_IP,
                                      SERVER_IP), stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT, text=True, timeout=60)
        check_bad("mismatch: client", cli.returncode, cli.stdout, time.monotonic() - t0,
                  failures)
        try:
            sout, _ = srv.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            srv.kill()
            sout, _ = srv.communicate()
        check_bad("mismatch: server", srv.returncode, sout, time.monotonic() - t0, failures)
    elif name == "bad-noclient":
        p = subprocess.run(side_cmd(rocelab, a, ["perf", "send_lat"] + opts, "va", SERVER_IP),
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                           timeout=60)
        check_bad("no client: server", p.returncode, p.stdout, time.monotonic() - t0, failures)
    elif name == "bad-options":
        run_bad_options(rocelab, a, failures)
    else:
        p = subprocess.run(side_cmd(rocelab, b, ["perf", "rc_pingpong"] + opts, "vb", CLIENT_IP,
                                    UNREACHABLE_IP), stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True, timeout=60)
        check_bad("unreachable peer: client", p.returncode, p.stdout, time.monotonic() - t0,
                  failures)


def main():
    if len(sys.argv) < 2:
        print(__doc__)
        return 2
    rocelab = os.path.abspath(sys.argv[1])
    names = sys.argv[2:] or list(CASES) + BAD
    unknown = [n for n in names if n not in CASES and n not in BAD]
    if unknown:
        print("unknown case(s): %s (known: %s)" % (" ".join(unknown), " ".join(list(CASES) + BAD)))
        return 2
    if os.geteuid() != 0:
        print("SKIP: needs root (network namespaces)")
        return SKIP
    why = netns.usable()
    if why:
        print("SKIP: network namespaces cannot be used here: %s" % why)
        return SKIP
    netns.trap_signals()
    tag = "%d" % os.getpid()
    t0 = time.monotonic()
    try:
        try:
            a, b = setup(tag)
        except (subprocess.CalledProcessError, FileNotFoundError) as e:
            print("SKIP: cannot make namespaces and a veth pair: %s" %
                  (getattr(e, "stdout", "") or e))
            return SKIP
        failures = []
        for n in names:
            if n in CASES:
                run_pair(rocelab, a, b, n, failures)
            else:
                run_bad(rocelab, a, b, n, failures)
    finally:
        netns.cleanup()
    for f in failures:
        print("FAIL:", f)
    print("%d case(s), %d failure(s), %.0f s" % (len(names), len(failures), time.monotonic() - t0))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
