#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
#
# Numbered messages between the two hosts, each with a body derived from
# its number, read back in order and compared byte for byte: the sides of
# the tests where a fault or a restart happens between sends (ib_devloss,
# fault_reload, fault_reboot).  PORT (environment) is the receiver's port.
#
#   numbered.py ME PEER send LO HI UNTIL [GATE]
#       bind an ephemeral port (with GATE, then wait until the file GATE
#       exists), send messages [LO, HI), then keep the socket (closing it
#       cancels what is still held) until the barrier got.UNTIL
#   numbered.py ME PEER recv LO HI up|nicup
#       bind PORT (then, with nicup, bring the test NIC up: nothing reaches
#       the module before the socket is bound), pass the barrier bound.LO,
#       read [LO, HI) in order and intact and nothing more, pass got.HI
import hashlib, os, socket, subprocess, sys, time
me, peer, role = sys.argv[1], sys.argv[2], sys.argv[3]
lo, hi, flag = int(sys.argv[4]), int(sys.argv[5]), sys.argv[6]
port = int(os.environ["PORT"])
def barrier(name):
    subprocess.run([os.environ["RDS_TOP"] + "/tools/testing/selftests/barrier",
                    os.environ["RDS_TEST"] + "." + name, "180"], check=True)
def payload(i):
    body = hashlib.sha256(b"numbered %d" % i).digest() * (1 + i % 40)
    return b"%08d" % i + body
def sock(p):
    s = socket.socket(socket.AF_RDS, socket.SOCK_SEQPACKET, 0)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4 << 20)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)
    s.bind((me, p))
    return s
if role == "send":
    # send LO HI UNTIL: messages [LO, HI), then keep the socket (closing
    # it cancels what is still held) until the receiver has read UNTIL.
    s = sock(0)
    if len(sys.argv) > 7:
        print("# bound")
        sys.stdout.flush()
        while not os.path.exists(sys.argv[7]):
            time.sleep(0.1)
    for i in range(lo, hi):
        s.sendto(payload(i), (peer, port))
    print("# sent #%d..#%d" % (lo, hi - 1))
    sys.stdout.flush()
    barrier("got.%s" % flag)
    sys.exit(0)
# recv LO HI up|nicup: bind (then bring the NIC up), tell the sender, read
# [LO, HI) in order and intact, and nothing more.
s = sock(port)
t_up = None
if flag == "nicup":
    subprocess.run(["ip", "link", "set", os.environ["RDS_IFACE"], "up"], check=True)
    t_up = time.monotonic()
barrier("bound.%d" % lo)
s.settimeout(120)
for i in range(lo, hi):
    data, addr = s.recvfrom(1 << 20)
    got = int(data[:8])
    if i == lo and t_up is not None:
        print("# first held message read %.1f s after the NIC came up" %
              (time.monotonic() - t_up))
    if data != payload(got) or got != i:
        print("message %d: got #%d (%d bytes, %s)" % (i, got, len(data),
              "intact" if data == payload(got) else "corrupt"))
        sys.exit(1)
s.settimeout(3)
try:
    data, addr = s.recvfrom(1 << 20)
    print("unexpected extra message #%d" % int(data[:8]))
    sys.exit(1)
except socket.timeout:
    pass
print("# read #%d..#%d in order, intact" % (lo, hi - 1))
barrier("got.%d" % hi)
