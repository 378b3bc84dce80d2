#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The receive path for devices without a shared receive queue: both hosts
# reload the module with ib_no_srq=1 (a ring of receive buffers per
# connection, chosen once per device) and run the data tests again: every
# fragment boundary both ways, 64 sockets x 4 threads on one connection,
# and what RDS_INFO_IB_CONNECTIONS shows of a ring.  Then the module is
# reloaded as usual.
. "$(dirname "$0")/lib.sh"

P=/sys/module/rds/parameters
barrier start 120 || { ksft_fail "barrier start"; ksft_exit; }
check "reload with ib_no_srq=1" rds_reload ib_no_srq=1
check "$RDS_RXE receives through per-connection rings" \
	bash -c "dmesg | tail -20 | grep -q '$RDS_RXE: added: per-connection-ring receive'"
check "no receive pages before a connection" test "$(cat $P/ib_rx_pages)" = 0
barrier loaded 120 || ksft_fail "barrier loaded"

run() {
	RDS_TEST=$RDS_TEST.$1 timeout 590 "$RDS_BUILD/selftests/$1" \
		> /tmp/ring.$1 2>&1
	rc=$?
	grep -E '^# (sent|host|ib_counters)|^not ok' /tmp/ring.$1
	check "$1 with per-connection rings" test $rc = 0
}
run ib_sizes_test
run ib_mux_test
# One connection's ring: its credits plus the control buffer, each of the
# pages its data takes ("buffers of N bytes": a 48-byte header and the data).
bytes=$(dmesg | grep "$RDS_RXE: added: per-connection-ring" | tail -1 |
	sed -n 's/.*buffers of \([0-9]*\) bytes.*/\1/p')
per=$(( (${bytes:-0} - 48 + 4095) / 4096 ))
check "receive pages held by the connection ($per per buffer)" \
	test "$(cat $P/ib_rx_pages)" = "$(( ($(cat $P/ib_credits) + 1) * per ))"
# after that count: it adds a connection (TOS 5)
run ib_info_test
barrier tested 600 || ksft_fail "barrier tested"
check "reload as usual" rds_reload
check "receive pages back to the SRQ's" \
	test "$(cat $P/ib_rx_pages)" -gt 0
barrier end 120 || ksft_fail "barrier end"
ksft_exit
