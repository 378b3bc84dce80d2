#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# IPv6 in the test guests, sourced after lib.sh (and stress_lib.sh, or a
# $stress of the test's own, for stress6) by ib_ipv6 and
# ib_mainline_pair6; stress6 writes under $log.

# gid_listed ADDR: rxe lists ADDR (any form) among its port's GIDs.
gid_listed() {
	grep -qix "$(python3 -c 'import ipaddress, sys
print(ipaddress.IPv6Address(sys.argv[1]).exploded)' "$1")" \
		/sys/class/infiniband/"$RDS_RXE"/ports/1/gids/* 2>/dev/null
}

# ll_addr: the netdev's link-local address once its DAD is over.
ll_addr() {
	ip -6 -o addr show dev "$RDS_IFACE" scope link |
		awk '!/tentative/ { sub("/.*", "", $4); print $4; exit }'
}
ll_ready() {
	[ -n "$(ll_addr)" ]
}

# jnum FILE KEY: a number of an rds-stress JSON summary (empty if absent).
jnum() {
	grep -o "\"$2\": [0-9]*" "$1" 2>/dev/null | head -1 | sed 's/.*: //'
}

# stress6 NAME PORT TMO LOCAL PEER ARGS...: a verified rds-stress pair
# between LOCAL and PEER (host 1 passive, ARGS for host 2's active side,
# each killed after TMO seconds).  Checks: it exits 0 here (every byte
# verified), messages flowed, and what was sent here (tx_req, tx_ack)
# arrived there (the peer's rx_req, rx_ack).  Sets stress_rc.
stress6() {
	local name=$1 port=$2 tmo=$3 a=$4 p=$5 out=$log/$1.out js=$log/$1.json
	local pjs
	shift 5
	RDS_ADDR=$a RDS_PEER=$p stress_pair "$name" "$port" "$tmo" "$out" \
		"$js" -- "$@"
	grep -E 'rds-stress:|average' "$out" | sed 's/^/#   /'
	check "$name: rds-stress $a <-> $p exits 0 (every byte verified)" \
		test "$stress_rc" = 0
	echo "# $name: tx_req $(jnum "$js" tx_req) rx_req $(jnum "$js" rx_req) tx_ack $(jnum "$js" tx_ack) rx_ack $(jnum "$js" rx_ack)"
	check "$name: messages flowed" \
		test "$(jnum "$js" rx_req)" -gt 0 -a "$(jnum "$js" rx_ack)" -gt 0
	cp "$js" "$RDS_SHARED/$RDS_TEST.$name.json.$RDS_HOST" 2>/dev/null
	barrier "$name-json" 60
	pjs=$RDS_SHARED/$RDS_TEST.$name.json.$((3 - RDS_HOST))
	check "$name: what was sent here arrived there" \
		test "$(jnum "$js" tx_req)" = "$(jnum "$pjs" rx_req)" -a \
		"$(jnum "$js" tx_ack)" = "$(jnum "$pjs" rx_ack)"
	barrier "$name-done" 120
}
