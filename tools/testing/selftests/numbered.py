#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
#
# One flow of numbered messages between the two hosts, each with a body
# derived from its flow and number, read back in order and compared byte
# for byte: the sides of the tests where a fault or a restart happens
# between sends (ib_devloss, fault_reload, fault_reboot).  PORT (from the
# environment) is the receiver's port and names the flow.
#
#   numbered.py ME PEER send LO HI UNTIL [WAIT]
#       bind an ephemeral port; WAIT "bound:N" waits for the receiver's
#       barrier bound.PORT.N, any other WAIT until that file exists; send
#       messages [LO, HI), then keep the socket (closing it cancels what is
#       still held) until the barrier got.PORT.UNTIL
#   numbered.py ME PEER recv LO HI
#       bind PORT, print "# bound", pass the barrier bound.PORT.LO, read
#       [LO, HI) in order and intact and nothing more (printing the uptime
#       at the first message), pass got.PORT.HI
import hashlib
import os
import socket
import subprocess
import sys
import time

me, peer, role = sys.argv[1], sys.argv[2], sys.argv[3]
lo, hi = int(sys.argv[4]), int(sys.argv[5])
port = int(os.environ["PORT"])


def barrier(name):
    subprocess.run([os.environ["RDS_TOP"] + "/tools/testing/selftests/barrier",
                    "%s.%s.%d.%s" % (os.environ["RDS_TEST"], name.split(".")[0],
                                     port, name.split(".", 1)[1]), "180"],
                   check=True)


def payload(i):
    body = hashlib.sha256(b"numbered %d %d" % (port, i)).digest()
    return b"%08d" % i + body * (1 + i % 40)


def sock(p):
    s = socket.socket(socket.AF_RDS, socket.SOCK_SEQPACKET, 0)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4 << 20)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)
    s.bind((me, p))
    return s


def say(line):
    print(line)
    sys.stdout.flush()


if role == "send":
    until = int(sys.argv[6])
    wait = sys.argv[7] if len(sys.argv) > 7 else None
    s = sock(0)
    say("# bound")
    if wait and wait.startswith("bound:"):
        barrier("bound.%d" % int(wait[6:]))
    elif wait:
        while not os.path.exists(wait):
            time.sleep(0.1)
    for i in range(lo, hi):
        s.sendto(payload(i), (peer, port))
    say("# sent #%d..#%d" % (lo, hi - 1))
    barrier("got.%d" % until)
    sys.exit(0)

s = sock(port)
say("# bound")
barrier("bound.%d" % lo)
s.settimeout(120)
for i in range(lo, hi):
    data, addr = s.recvfrom(1 << 20)
    got = int(data[:8])
    if i == lo:
        with open("/proc/uptime") as f:
            say("# first message at uptime %s" % f.read().split()[0])
    if data != payload(got) or got != i:
        say("port %d, message %d: got #%d (%d bytes, %s)" % (
            port, i, got, len(data),
            "intact" if data == payload(got) else "corrupt"))
        sys.exit(1)
s.settimeout(3)
try:
    data, addr = s.recvfrom(1 << 20)
    say("port %d: unexpected extra message #%d" % (port, int(data[:8])))
    sys.exit(1)
except socket.timeout:
    pass
say("# port %d: read #%d..#%d in order, intact" % (port, lo, hi - 1))
barrier("got.%d" % hi)
