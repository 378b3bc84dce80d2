#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The main job ("make run"): rds-stress between the two hosts with
# verification, host 1 passive, host 2 active, 10 seconds, printing the
# per-second lines and the average, over our module's IB transport (also
# part of the two-host suite of make check).  It runs over our module or
# fails: should the test address not be on an RDMA device our module uses
# (a bind to it fails with EADDRNOTAVAIL), the test fails
# at once; it never falls back to the kernel's own rds_rdma.
. "$(dirname "$0")/lib.sh"

# ours_transport: SO_RDS_TRANSPORT of a socket of our module bound to
# RDS_ADDR (0: IB), or what went wrong.
ours_transport() {
	python3 -c '
import socket, sys
s = socket.socket(socket.AF_RDS, socket.SOCK_SEQPACKET, 0)
s.bind((sys.argv[1], 0))
print(s.getsockopt(276, 8))' "$RDS_ADDR" 2>&1 | tail -n 1
}

# The kernel's own rds has no ib_counters.
[ -e /sys/module/rds/parameters/ib_counters ] ||
	{ ksft_fail "our rds module loaded (not the kernel's own)"; ksft_exit; }
trans=$(ours_transport)
if [ "$trans" != 0 ]; then
	ksft_fail "our module takes $RDS_ADDR over IB" \
		"SO_RDS_TRANSPORT $trans, not 0 (IB): no fallback to another RDS"
	ksft_exit
fi
ksft_ok "our module takes $RDS_ADDR over IB"
stress=$RDS_BUILD/rds-stress/rds-stress
[ -x "$stress" ] || { ksft_fail "rds-stress built" "make rds-stress"; ksft_exit; }
barrier loaded 60 || { ksft_fail "barrier loaded"; ksft_exit; }

if [ "$RDS_HOST" = 1 ]; then
	timeout 300 "$stress" -r "$RDS_ADDR" -p 4000 > /tmp/passive.log 2>&1 &
	pid=$!
	stress_passive_up passive 4000
	wait $pid
	rc=$?
	sed 's/^/# passive: /' /tmp/passive.log
	check "passive side (ours) exits 0" test $rc = 0
else
	barrier passive-up 60
	echo "# rds-stress -r $RDS_ADDR -s $RDS_PEER -p 4000 -t 4 -d 8 -T 10 (over ours)"
	"$stress" -r "$RDS_ADDR" -s "$RDS_PEER" -p 4000 -t 4 -d 8 -T 10
	check "active side (ours), verified, exits 0" test $? = 0
fi
barrier ran 400 || ksft_fail "barrier ran"
ksft_exit
