#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# peer_mlconform6 between link-local addresses (issue 18): the wire peer
# in mainline mode on host 2 and our module on host 1 reach each other by
# their netdevs' own fe80:: addresses, with the scope id of RDS_IFACE:
# rx, tx, accept and cong as in peer_mlconform.sh, and host 1 must take the
# peer for the kernel's RDS (its counts and log lines name the peer's
# link-local address).  WIRE_PEER_NEG=1 (a plan variable): the negative
# run, as there.
ML6=1
ML6LL=1
. "$(dirname "$0")/peer_mlconform.sh"
