"""Network namespaces for the live tests: made with the caller's names (each test puts its PID
in them), loopback up, and all deleted by cleanup() on every exit path once trap_signals() has
run (a normal return or an exception through the caller's finally, SIGINT, SIGTERM, SIGHUP)."""
import os
import signal
import subprocess
import sys

_made = []


def sh(*args, check=True):
    """Run a command; stdout and stderr together as text. CalledProcessError if it fails and
    @check."""
    return subprocess.run(args, check=check, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          text=True)


def add(*names):
    """Make namespaces @names with their loopback up; cleanup() deletes them."""
    for ns in names:
        sh("ip", "netns", "add", ns)
        _made.append(ns)
        sh("ip", "-n", ns, "link", "set", "lo", "up")
    return names


def veth(ns_a, dev_a, ns_b, dev_b):
    """A veth pair: @dev_a in @ns_a, @dev_b in @ns_b (both down, no address)."""
    sh("ip", "link", "add", dev_a, "netns", ns_a, "type", "veth", "peer", "name", dev_b,
       "netns", ns_b)


def usable(veth=True):
    """None if namespaces work here as the live tests use them (made, entered with `ip netns
    exec`, joined by a veth pair if @veth), else why not, in one line. `ip netns add` alone is not enough:
    in a plain chroot, whose root is no mount point of its own, `ip netns exec` fails ("mount
    --make-rslave / failed")."""
    probe = "rlprobe%d" % os.getpid()
    try:
        cmds = [["ip", "netns", "add", probe], ["ip", "netns", "exec", probe, "true"]]
        if veth:
            cmds.append(["ip", "-n", probe, "link", "add", "rlprobe0", "type", "veth",
                         "peer", "name", "rlprobe1"])
        for cmd in cmds:
            r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
            if r.returncode != 0:
                said = r.stdout.strip().splitlines()
                return "`%s` failed: %s" % (" ".join(cmd),
                                            said[-1] if said else "exit %d" % r.returncode)
    except FileNotFoundError as e:
        return "no %s" % e.filename
    finally:
        subprocess.run(["ip", "netns", "del", probe], stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)
    return None


def cleanup(*_):
    while _made:
        sh("ip", "netns", "del", _made.pop(), check=False)


def _on_signal(signum, _frame):
    cleanup()
    sys.exit(128 + signum)


def trap_signals():
    for s in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(s, _on_signal)
