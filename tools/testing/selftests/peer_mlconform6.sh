#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# peer_mlconform over IPv6 (issue 18): the wire peer in mainline mode
# speaks the kernel's IPv6 layout (56 bytes of private data, port 16385)
# between fd00::1 (host 1, our module) and fd00::2 (host 2, the peer):
# rx, tx, accept and cong as in peer_mlconform.sh, and host 1 must take
# the peer for the kernel's RDS (its counts and log lines; see there).
# WIRE_PEER_NEG=1 (a plan variable): the negative run, as there.
ML6=1
. "$(dirname "$0")/peer_mlconform.sh"
