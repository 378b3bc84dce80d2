#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
#
# The module's side of the wire-peer tests (peer_*.sh): AF_RDS sockets on
# the host that runs the module, talking to the user-space peer
# (tools/testing/peer/wire_peer) on the other host.  Message i of a run
# carries peer_pattern(i, k) = (i * 31 + k * 7 + (k >> 9)) & 0xff, as in
# tools/testing/peer/peer.h.
#
#   peer_host.py send ME PEER TOS DPORT SIZES N [BARRIER]
#       send N messages (sizes cycled from the comma list SIZES) to
#       PEER:DPORT on TOS, then keep the socket until BARRIER passed
#   peer_host.py recvtx ME PORT SIZES COUNT
#       the schedule of wire_peer -t tx: bind PORT, print "# bound", read
#       every message in order and check it byte for byte, then the end
#       marker; nothing else may come in between
#   peer_host.py recvml ME PORT SIZES COUNT K
#       the same for wire_peer -t mltx (the module's side of the kernel's
#       RDS protocol): each message once, the K it sends again after a
#       reconnect (flagged RETRANSMITTED) not twice
#   peer_host.py cong ME PEER TOS PORT
#       host 1's side of wire_peer -t cong (and -t mlcong)
#   peer_host.py held TOS
#       messages queued or unacknowledged on host 1's connections of TOS
#   peer_host.py conns
#       the RDS connections, messages queued and held per TOS (diagnosis)
#   peer_host.py counter NAME...
#       the RDS counters (RDS_INFO_COUNTERS) of those names
#
# ME and PEER may be IPv6 addresses (peer_mlconform6): Python's socket
# module takes IPv4 addresses only for AF_RDS, so bind and sendto go
# through libc for them (rds_bind, rds_sendto).
import ctypes
import fcntl
import os
import socket
import struct
import subprocess
import sys
import time

SOL_RDS = 276
RDS_INFO_COUNTERS = 10000
SIOCRDSSETTOS = 0x89E0
SO_SNDBUFFORCE = 32
SO_RCVBUFFORCE = 33
V4MAPPED = bytes(10) + b"\xff\xff"     # ::ffff:0:0/96


_BASE = bytes((7 * j) & 0xff for j in range(512))
_ROT = [bytes((x + c) & 0xff for x in range(256)) for c in range(256)]


def pattern(idx, n):
    """peer_pattern(idx, k) for k < n, 512 bytes (one k >> 9) at a time."""
    out = []
    for b in range((n + 511) // 512):
        out.append(_BASE.translate(_ROT[(idx * 31 + 7 * 512 * b + b) & 0xff]))
    return b"".join(out)[:n]


def say(line):
    print(line)
    sys.stdout.flush()


LIBC = ctypes.CDLL(None, use_errno=True)


def sa6(addr, port):
    """A struct sockaddr_in6 of addr (a scope after %) and port."""
    a, _, scope = addr.partition("%")
    sid = socket.if_nametoindex(scope) if scope else 0
    return (struct.pack("=H", socket.AF_INET6) + struct.pack("!HI", port, 0) +
            socket.inet_pton(socket.AF_INET6, a) + struct.pack("=I", sid))


def libc_err(what):
    e = ctypes.get_errno()
    raise OSError(e, "%s: %s" % (what, os.strerror(e)))


def rds_bind(s, me, port):
    if ":" not in me:
        s.bind((me, port))
        return
    sa = sa6(me, port)
    if LIBC.bind(s.fileno(), sa, len(sa)) < 0:
        libc_err("bind")


def rds_sendto(s, data, flags, peer, port):
    if ":" not in peer:
        return s.sendto(data, flags, (peer, port))
    sa = sa6(peer, port)
    n = LIBC.sendto(s.fileno(), data, ctypes.c_size_t(len(data)), flags, sa,
                    len(sa))
    if n < 0:
        libc_err("sendto")
    return n


def sock(me, port):
    s = socket.socket(socket.AF_RDS, socket.SOCK_SEQPACKET, 0)
    # Root: past wmem_max/rmem_max, or a 1 MiB message is EMSGSIZE.
    s.setsockopt(socket.SOL_SOCKET, SO_SNDBUFFORCE, 8 << 20)
    s.setsockopt(socket.SOL_SOCKET, SO_RCVBUFFORCE, 8 << 20)
    rds_bind(s, me, port)
    return s


def info(opt):
    """The records of getsockopt(SOL_RDS, opt) (the socket module caps
    getsockopt buffers at 1 KiB: through libc)."""
    s = socket.socket(socket.AF_RDS, socket.SOCK_SEQPACKET, 0)
    size = 1 << 18
    buf = ctypes.create_string_buffer(size)
    ln = ctypes.c_uint(size)
    r = LIBC.getsockopt(s.fileno(), SOL_RDS, opt, buf, ctypes.byref(ln))
    s.close()
    if r < 0:
        raise OSError(ctypes.get_errno(), "RDS_INFO %d" % opt)
    return buf.raw[:ln.value]


def conns():
    """RDS_INFO_CONNECTIONS, the messages queued and held, per TOS."""
    raw = info(10001)
    for off in range(0, len(raw) - 41, 42):
        tx, rx, la, fa, tr, fl, tos = struct.unpack_from("<QQ4s4s16sBB", raw, off)
        say("# conn %s -> %s tos %d %s next_tx %d next_rx %d flags %x" %
            (socket.inet_ntoa(la), socket.inet_ntoa(fa), tos,
             tr.split(b"\0")[0].decode(), tx, rx, fl))
    raw = info(10011)   # RDS6_INFO_CONNECTIONS: the IPv6 ones too
    for off in range(0, len(raw) - 64, 65):
        tx, rx, la, fa, tr, fl = struct.unpack_from("<QQ16s16s16sB", raw, off)
        if la.startswith(V4MAPPED):
            continue
        say("# conn %s -> %s %s next_tx %d next_rx %d flags %x" %
            (socket.inet_ntop(socket.AF_INET6, la),
             socket.inet_ntop(socket.AF_INET6, fa),
             tr.split(b"\0")[0].decode(), tx, rx, fl))
    for name, opt in (("queued", 10003), ("held", 10004),
                      ("on sockets", 10005)):
        raw = info(opt)
        per = {}
        for off in range(0, len(raw) - 25, 26):
            seq, ln, la, fa, lp, fp, fl, tos = struct.unpack_from(
                "<QI4s4sHHBB", raw, off)
            per[tos] = per.get(tos, 0) + 1
        say("# %s messages by tos: %s" % (name, per))
    for name, opt in (("queued", 10012), ("held", 10013)):
        per = {}
        for tos in msgs6(opt):
            per[tos] = per.get(tos, 0) + 1
        say("# %s IPv6 messages by tos: %s" % (name, per))
    c = counters()
    say("# rds counters: " + " ".join(
        "%s=%d" % (k, c.get(k, -1)) for k in
        ("send_queued", "send_drop_acked", "send_rdma_dropped",
         "send_delayed_retry", "send_queue_empty", "send_stuck_rm")))


def counters():
    out = {}
    raw = info(RDS_INFO_COUNTERS)
    for off in range(0, len(raw) - 39, 40):
        name, val = struct.unpack_from("32sQ", raw, off)
        out[name.split(b"\0")[0].decode()] = val
    return out


def barrier(name):
    subprocess.run([os.environ["RDS_TOP"] + "/tools/testing/selftests/barrier",
                    "%s.%s" % (os.environ["RDS_TEST"], name), "600"],
                   check=True)


def hold(what):
    """Keep the sender's socket open (closing it cancels what is unsent)
    until the barrier WHAT, or until the file WHAT (a path) exists: the
    test script creates it once it has looked at the queues.  A barrier
    of the script's own name would let the sender go as soon as the peer
    host reached it, before the script looked."""
    if not what.startswith("/"):
        barrier(what)
        return
    end = time.time() + 600 * int(os.environ.get("RDS_TIME_SCALE", "1"))
    while not os.path.exists(what):
        if time.time() > end:
            say("# %s never appeared" % what)
            return
        time.sleep(0.1)


def tx_schedule(sizes, count):
    """The messages wire_peer -t tx sends: (idx, len), then the marker."""
    out = [(i, n) for i, n in enumerate(sizes)]
    idx = len(sizes)
    for j in range(2, 5):
        for i in range(j):
            out.append((idx + i, 1 + (i * 97 + j * 13) % 600))
        idx += j
    # Two packed frames of a 5000- and a 2000-byte message (the second
    # copied out of the receive buffer under an injected fault).
    for j in range(2):
        out += [(idx, 5000), (idx + 1, 2000)]
        idx += 2
    for i in range(count):
        out.append((idx, 64))
        idx += 1
    out.append((idx, 8))
    return out


def ml_schedule(sizes, count, k):
    """The messages wire_peer -t mltx sends: (idx, len), then the marker."""
    out = [(i, n) for i, n in enumerate(sizes)]
    idx = len(sizes)
    out.append((idx, 64))       # the one flagged ACK_REQUIRED
    idx += 1
    for i in range(count):
        out.append((idx, 64))
        idx += 1
    for i in range(k):          # sent twice, taken once
        out.append((idx, 100))
        idx += 1
    out.append((idx, 8))
    return out


def recv_schedule(me, port, sched, tail=True):
    """Bind PORT, then read every message of sched in order, each checked
    byte for byte; 0 if all came intact, with nothing in between (and,
    with tail, nothing after the last within 3 s)."""
    s = sock(me, port)
    s.settimeout(120)
    say("# bound")
    bad = 0
    for k, (idx, n) in enumerate(sched):
        try:
            data = s.recv(1 << 21)
        except socket.timeout:
            c = counters()
            say("# timed out waiting for message %d of %d (idx %d, %d bytes); "
                "recv_queued %d drop_no_sock %d drop_old_seq %d" %
                (k, len(sched), idx, n, c.get("recv_queued", -1),
                 c.get("recv_drop_no_sock", -1),
                 c.get("recv_drop_old_seq", -1)))
            conns()
            return 1
        if data != pattern(idx, n):
            bad += 1
            if bad <= 5:
                say("# message %d: %d bytes, want %d (idx %d)" %
                    (k, len(data), n, idx))
    # Nothing more: a duplicate would come right behind the last.
    s.settimeout(3)
    try:
        if tail:
            data = s.recv(1 << 21)
            say("# one message too many: %d bytes" % len(data))
            bad += 1
    except socket.timeout:
        pass
    say("received %d bad %d" % (len(sched), bad))
    return 1 if bad else 0


def msgs6(opt):
    """The TOS of each record of RDS6_INFO_SEND_MESSAGES (opt 10012) or
    _RETRANS_MESSAGES (10013) between IPv6 addresses (the IPv4 ones are in
    the IPv4 records)."""
    raw = info(opt)
    out = []
    for off in range(0, len(raw) - 49, 50):
        seq, ln, la, fa, lp, fp, fl, tos = struct.unpack_from(
            "<QI16s16sHHBB", raw, off)
        if not la.startswith(V4MAPPED):
            out.append(tos)
    return out


def held(tos):
    """Messages of TOS queued or unacknowledged on host 1, over IPv4 and
    over IPv6."""
    n = 0
    for opt in (10003, 10004):
        raw = info(opt)
        for off in range(0, len(raw) - 25, 26):
            if struct.unpack_from("<QI4s4sHHBB", raw, off)[7] == tos:
                n += 1
    for opt in (10012, 10013):
        n += msgs6(opt).count(tos)
    return n


def main():
    cmd = sys.argv[1]
    if cmd == "conns":
        conns()
        return 0
    if cmd == "counter":
        c = counters()
        for name in sys.argv[2:]:
            say(str(c[name]))
        return 0
    if cmd == "send":
        me, peer, tos, dport = sys.argv[2], sys.argv[3], int(sys.argv[4]), \
            int(sys.argv[5])
        sizes = [int(x) for x in sys.argv[6].split(",")]
        n = int(sys.argv[7])
        s = sock(me, 0)
        fcntl.ioctl(s.fileno(), SIOCRDSSETTOS, struct.pack("B", tos))
        say("# sending %d from %s (%s)" % (n, me, time.strftime("%T")))
        for i in range(n):
            try:
                rds_sendto(s, pattern(i, sizes[i % len(sizes)]), 0, peer,
                           dport)
            except OSError as e:
                say("# message %d (%d bytes): %s" % (i, sizes[i % len(sizes)], e))
                return 1
        say("# sent %d (%s)" % (n, time.strftime("%T")))
        conns()
        if len(sys.argv) > 8:
            hold(sys.argv[8])
        s.close()
        return 0
    if cmd == "held":
        say(str(held(int(sys.argv[2]))))
        return 0
    if cmd == "recvml":
        me, port = sys.argv[2], int(sys.argv[3])
        sizes = [int(x) for x in sys.argv[4].split(",")]
        return recv_schedule(me, port, ml_schedule(sizes, int(sys.argv[5]),
                                                   int(sys.argv[6])))
    if cmd == "recvtx":
        me, port = sys.argv[2], int(sys.argv[3])
        sizes = [int(x) for x in sys.argv[4].split(",")]
        return recv_schedule(me, port, tx_schedule(sizes, int(sys.argv[5])),
                             False)
    if cmd == "cong":
        # wire_peer -t cong, host 1's side: PORT with a small receive
        # buffer, not read until the peer saw it congested; then PORT + 1
        # of the peer congested by its map: a non-blocking send fails
        # with ENOBUFS, and goes once the peer frees it.
        import errno
        me, peer, tos, port = sys.argv[2], sys.argv[3], int(sys.argv[4]), \
            int(sys.argv[5])
        r = socket.socket(socket.AF_RDS, socket.SOCK_SEQPACKET, 0)
        r.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        rds_bind(r, me, port)
        fcntl.ioctl(r.fileno(), SIOCRDSSETTOS, struct.pack("B", tos))
        say("# bound %d, SO_RCVBUF %d" %
            (port, r.getsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF)))
        barrier("cong.bound")
        barrier("cong.congested")
        r.settimeout(60)
        for i in range(8):
            data = r.recv(1 << 16)
            if data != pattern(i, 1500):
                say("# message %d: wrong bytes" % i)
                return 1
        say("# read the 8 messages")
        s = sock(me, 0)
        fcntl.ioctl(s.fileno(), SIOCRDSSETTOS, struct.pack("B", tos))
        barrier("cong.peer_congested")
        try:
            rds_sendto(s, b"early", socket.MSG_DONTWAIT, peer, port + 1)
            say("# a send to the congested port %d went" % (port + 1))
            rc = 1
        except OSError as e:
            say("# send to the congested port %d: %s" % (port + 1, e))
            rc = 0 if e.errno == errno.ENOBUFS else 1
        barrier("cong.tried")
        barrier("cong.peer_free")
        rds_sendto(s, b"after", 0, peer, port + 1)
        say("congestion: %s" % ("ok" if rc == 0 else "FAIL"))
        barrier("cong.end")
        return rc
    return 2


sys.exit(main())
