#!/usr/bin/python3
"""The peer of bench_build: scapy 2.5 building the same RC_SEND_ONLY frames, ICRC included."""
import sys
import time

from scapy.all import Ether, IP, UDP, Raw, conf
from scapy.contrib.roce import BTH

conf.verb = 0


def rate(plen, seconds=1.0):
    payload = bytes((i * 7) & 0xff for i in range(plen))
    n = 0
    t0 = time.perf_counter()
    while True:
        for _ in range(100):
            frame = (Ether(dst="02:00:00:00:00:02", src="02:00:00:00:00:01") /
                     IP(src="10.0.0.1", dst="10.0.0.2", ttl=64, flags="DF") /
                     UDP(sport=49152, dport=4791, chksum=0) /
                     BTH(opcode=4, pkey=0xffff, dqpn=0x11, psn=n & 0xffffff) /
                     Raw(payload))
            bytes(frame)
            n += 1
        t = time.perf_counter() - t0
        if t >= seconds:
            return n / t


def main():
    sizes = [int(a) for a in sys.argv[1:]] or [64, 1024, 4096]
    print("scapy %s building Ether/IP/UDP/BTH/payload with ICRC" % __import__("scapy").VERSION)
    print("%-8s %14s" % ("payload", "scapy kfr/s"))
    for s in sizes:
        print("%-8d %14.2f" % (s, rate(s) / 1e3))


if __name__ == "__main__":
    main()
