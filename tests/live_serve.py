#!/usr/bin/env python3
"""A --serve-forever host against what a server on perftest's port meets on a network: a port
scan (connect and close), garbage, a message that never ends, a half-open connection that sends
part of the opening and stalls (cut off by --hello-timeout), and a flood of connections. After
each, a real rocelab client runs write_bw with --verify and must be served correctly, and the
server must still run; each bad client must leave one printable line on the server's stderr;
the server's RSS must not grow with the number of bad clients. Then SIGTERM must end it with 0.

The host's port is memif (sockets in a temporary directory; the server is the memif server,
each client process the memif client); the TCP exchange runs over loopback on a free port.

Usage: live_serve.py ROCELAB; exit 77 (skip) when not root or this rocelab has no memif driver.
"""
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

SKIP = 77
SIZE, ITERS = 65536, 200
SERVER_IP, CLIENT_IP = "10.79.1.1", "10.79.1.2"
MEMIF = "net_memif0,role={},socket={},bsize=8192,rsize=12"
HELLO_TIMEOUT = 2		# seconds; the server's --hello-timeout
FLOOD = 60			# connections of the flood
RSS_SCANS = 100			# bad clients between the two RSS readings
RSS_GROWTH_KB = 24 * 1024	# allowed growth over those (the EAL heap settles first)
VERIFY_OK = "verify: every byte and every completion checked: OK"
BANNER = "Waiting for client to connect"


class Server:
    """The --serve-forever process, its stdout and stderr read into lists by two threads."""

    def __init__(self, cmd):
        self.p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                  errors="replace")
        self.out, self.err = [], []
        self.lock = threading.Lock()
        for stream, lines in ((self.p.stdout, self.out), (self.p.stderr, self.err)):
            threading.Thread(target=self._read, args=(stream, lines), daemon=True).start()

    def _read(self, stream, lines):
        for line in stream:
            with self.lock:
                lines.append(line.rstrip("\n"))

    def count(self, what, lines=None):
        with self.lock:
            return sum(what in l for l in (self.out if lines is None else lines))

    def wait(self, what, n, secs, lines=None):
        """True once @what appears in @n lines (stdout by default) within @secs."""
        end = time.time() + secs
        while time.time() < end:
            if self.count(what, lines) >= n or self.p.poll() is not None:
                break
            time.sleep(0.05)
        return self.count(what, lines) >= n

    def waiting(self):
        """It listens for a client: a banner for every client it finished, and one more."""
        return self.count(BANNER) > self.count("host: client")

    def wait_waiting(self, secs):
        end = time.time() + secs
        while time.time() < end and not self.waiting() and self.p.poll() is None:
            time.sleep(0.05)
        return self.waiting()

    def rss_kb(self):
        with open("/proc/%d/status" % self.p.pid) as f:
            return int(re.search(r"VmRSS:\s+(\d+)", f.read()).group(1))


def connect(port):
    return socket.create_connection(("127.0.0.1", port), timeout=5)


def scan(port):
    connect(port).close()


def garbage(port):
    s = connect(port)
    s.sendall(b"GET / HTTP/1.1\r\nHost: rocelab\r\n\r\n\x00\xff\x1b[2J" + os.urandom(64))
    s.close()


def endless(port):
    """A version that passes, then bytes without end: the server must stop reading and close."""
    s = connect(port)
    s.settimeout(20)
    s.sendall(b"6.06".ljust(16, b"\0"))
    sent, end = 0, time.time() + 20
    try:
        while time.time() < end:
            sent += s.send(b"A" * 65536)
    except OSError:
        pass	# the server closed: what it should do
    s.close()
    return sent


def half_open(port):
    """Part of the version, then nothing; returns the socket to hold open."""
    s = connect(port)
    s.sendall(b"6.0")
    return s


def flood(port):
    refused = 0
    for _ in range(FLOOD):
        try:
            connect(port).close()
        except OSError:
            refused += 1	# the server serves one at a time: a refusal is fine
    return refused


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main():
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    rocelab = os.path.abspath(sys.argv[1])
    if os.geteuid() != 0:
        print("skip: not root (DPDK's memif needs it here)")
        return SKIP
    tmp = tempfile.mkdtemp(prefix="rocelab-live-serve-")
    failures = []
    srv = None
    try:
        sock = os.path.join(tmp, "host.sock")
        probe = subprocess.run([rocelab, "switch", "--port", MEMIF.format("server", sock + "1"),
                                "--port", MEMIF.replace("memif0", "memif1").format(
                                    "server", sock + "2"),
                                "--duration", "0.01"], stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True, timeout=60)
        if probe.returncode != 0:
            print("skip: no memif here: %s" % probe.stdout.strip().splitlines()[-1:])
            return SKIP
        port = free_port()
        common = ["perf", "write_bw", "--verify", "-s", str(SIZE), "-n", str(ITERS),
                  "--timeout", "30", "-p", str(port)]
        srv = Server([rocelab] + common + ["--serve-forever", "--hello-timeout",
                                           str(HELLO_TIMEOUT), "--dev",
                                           MEMIF.format("server", sock), "--ip", SERVER_IP])
        served = [0]

        def real_client(name):
            """A real client, once the server waits again; it must be served and verified."""
            # memif: a client whose port attaches before the host waits again is dropped
            # when the host recycles its port (docs/live.md), so wait for the banner
            if not srv.wait_waiting(30):
                failures.append("%s: the server does not wait for a client" % name)
                return
            done = srv.count("host: client")
            cli = subprocess.run(["timeout", "90", rocelab] + common +
                                 ["--dev", MEMIF.format("client", sock), "--ip", CLIENT_IP,
                                  "127.0.0.1"], stdout=subprocess.PIPE,
                                 stderr=subprocess.STDOUT, text=True)
            served[0] += 1
            if cli.returncode != 0 or VERIFY_OK not in cli.stdout:
                failures.append("%s: the real client after it failed (exit %d)\n%s" %
                                (name, cli.returncode, cli.stdout))
            elif not srv.wait("host: client", done + 1, 30):
                failures.append("%s: the server did not finish the client" % name)
            if srv.p.poll() is not None:
                failures.append("%s: the server exited %s" % (name, srv.p.returncode))

        def bad_client(name, fn, expect, secs=15):
            """@fn at the server; its stderr must say @expect in one line within @secs."""
            n = srv.count(expect, srv.err)
            if not srv.wait_waiting(30):
                failures.append("%s: the server does not wait for a client" % name)
            done = srv.count("host: client")
            t0 = time.time()
            extra = fn(port)
            ok = srv.wait(expect, n + 1, secs, srv.err)
            took = time.time() - t0
            if not ok:
                failures.append("%s: no '%s' on the server's stderr within %d s:\n%s" %
                                (name, expect, secs, "\n".join(srv.err[-5:])))
            # counted as a failed client, then it waits for the next one
            if not srv.wait("host: client", done + 1, 30) or not srv.wait_waiting(30):
                failures.append("%s: the server does not wait again" % name)
            print("%-10s %s in %.1f s%s" % (name, "ok" if ok else "FAILED", took,
                                           "" if extra is None else " (%s)" % extra))
            sys.stdout.flush()
            return extra

        if not srv.wait(BANNER, 1, 60):
            failures.append("the server did not start:\n%s\n%s" % ("\n".join(srv.out),
                                                                    "\n".join(srv.err)))
            return 1
        real_client("first")
        rss0 = srv.rss_kb()
        bad_client("scan", scan, "closed the TCP connection")
        real_client("scan")
        bad_client("garbage", garbage, "is not a perftest version")
        real_client("garbage")
        n = bad_client("endless", endless, "is not an ibv_mtu value")
        real_client("endless")
        # half-open: it holds the server until --hello-timeout, then the server goes on
        held = []
        t0 = time.time()
        bad_client("half-open", lambda p: held.append(half_open(p)),
                   "stalled in the exchange's opening", secs=HELLO_TIMEOUT + 10)
        cut = time.time() - t0
        if cut > HELLO_TIMEOUT + 5:
            failures.append("half-open: cut after %.1f s, --hello-timeout is %d" %
                            (cut, HELLO_TIMEOUT))
        for s in held:
            s.close()
        real_client("half-open")
        refused = flood(port)
        print("flood      %d connections, %d refused while the server was busy" %
              (FLOOD, refused))
        real_client("flood")
        rss1 = srv.rss_kb()
        for i in range(RSS_SCANS):
            try:
                (scan if i % 2 else garbage)(port)
            except OSError:
                pass
            srv.wait("host: client", srv.count("host: client") + 1, 10)
            srv.wait_waiting(10)
        real_client("rss")
        rss2 = srv.rss_kb()
        print("rss        %d KiB after the first client, %d after the attacks, %d after %d more "
              "bad clients" % (rss0, rss1, rss2, RSS_SCANS))
        if rss2 - rss1 > RSS_GROWTH_KB:
            failures.append("the server's RSS grew %d KiB over %d bad clients" %
                            (rss2 - rss1, RSS_SCANS))
        # every line on stderr: one printable line each
        for line in srv.err:
            if any(ord(ch) < 0x20 and ch != "\t" or ord(ch) == 0x7f for ch in line):
                failures.append("an unprintable stderr line: %r" % line)
                break
        print("served     %d real client(s); %d stderr line(s) from the bad ones, such as:" %
              (served[0], sum(l.startswith("rocelab perf:") for l in srv.err)))
        seen = set()
        for line in srv.err:
            key = re.sub(r"port \d+", "port N", line)
            if line.startswith("rocelab perf:") and key not in seen:
                seen.add(key)
                print("           " + line)
    finally:
        if srv is not None:
            srv.p.send_signal(signal.SIGTERM)
            try:
                srv.p.wait(timeout=30)
            except subprocess.TimeoutExpired:
                srv.p.kill()
                srv.p.wait()
                failures.append("the server did not stop on SIGTERM")
            time.sleep(0.2)
            if srv.p.returncode != 0 or not srv.count("stopped by a signal"):
                failures.append("the server exited %s without 'stopped by a signal'\n%s" %
                                (srv.p.returncode, "\n".join(srv.out[-5:] + srv.err[-5:])))
        shutil.rmtree(tmp, ignore_errors=True)
    for f in failures:
        print("FAIL " + f)
    print("%d failure(s)" % len(failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
