#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# IPv6 over IB between the two hosts (rxe), over our module (loaded by
# the plan's `load`).  Each host adds fd00::H/64 to the rxe netdev and
# fd01::H/64 to one end of a veth pair (an address no RDMA device serves;
# veth, not dummy: the debug kernels have no dummy netdev), waits
# until rxe lists its global and link-local addresses as GIDs, and hands
# its link-local address to the peer.  Then:
#   ib_ipv6_test   bind() of every IPv6 address class (mainline's errno),
#                  data both ways between global and between link-local
#                  addresses (content, source, scope id), the IPv6 and
#                  IPv4 forms of RDS_INFO_(IB_)CONNECTIONS and
#                  /proc/net/rds/connections (ib_ipv6_test.c)
#   ib_sizes_test  the two-host sizes test over the global and over the
#                  link-local addresses (RDS_SIZES_MAXK=16)
#   global         a verified rds-stress run between fd00::1 and fd00::2
#   linklocal      the same between the link-local addresses (%eth0)
# Each rds-stress run must exit 0 on both sides (every byte verified),
# move messages, and deliver there what was sent here.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/ipv6_lib.sh"

stress=$RDS_BUILD/rds-stress/rds-stress
log=$RDS_OUT/$RDS_TEST.d
secs=${IPV6_SECS:-6}
peer_host=$((3 - RDS_HOST))
me=fd00::$RDS_HOST
peer=fd00::$peer_host
other=fd01::$RDS_HOST
mkdir -p "$log"
[ -x "$stress" ] || { ksft_fail "rds-stress built" "make rds-stress"; ksft_exit; }
rds_loaded || { ksft_fail "our rds loaded"; ksft_exit; }

# What this test adds goes away with it, however it ends: the tests after
# it in the same boot (ib_mainline_pair6, adding fd00::H itself) must
# find the host as the suite's setup left it.
cleanup() {
	ip -6 addr del "$me/64" dev "$RDS_IFACE" 2> /dev/null
	ip link del rdsv6veth 2> /dev/null
}
trap cleanup EXIT
ip link add rdsv6veth type veth peer name rdsv6peer &&
	ip link set rdsv6peer up && ip link set rdsv6veth up &&
	ip -6 addr add "$other/64" dev rdsv6veth nodad
# has_addr DEV ADDR: ADDR is an IPv6 address of DEV.
has_addr() {
	ip -6 -o addr show dev "$1" | grep -q " $2/"
}
check "$other on a veth netdev" has_addr rdsv6veth "$other"
check "$me on $RDS_IFACE" ip -6 addr add "$me/64" dev "$RDS_IFACE" nodad
check "$RDS_IFACE has a link-local address" wait_for 30 ll_ready
ll=$(ll_addr)
ifindex=$(cat "/sys/class/net/$RDS_IFACE/ifindex")
echo "# $RDS_IFACE (index $ifindex): $me, $ll"
check "rxe lists $me as a GID" wait_for 30 gid_listed "$me"
check "rxe lists $ll as a GID" wait_for 30 gid_listed "$ll"
echo "$ll" > "$RDS_SHARED/$RDS_TEST.ll.$RDS_HOST"
barrier addrs 60 || { ksft_fail "barrier addrs"; ksft_exit; }
peer_ll=$(cat "$RDS_SHARED/$RDS_TEST.ll.$peer_host")
echo "# peer: $peer, $peer_ll"

# The C test's own TAP goes in as comments; its exit status is the result.
RDS6_ADDR=$me RDS6_PEER=$peer RDS6_LL=$ll RDS6_PEER_LL=$peer_ll \
	RDS6_IFINDEX=$ifindex RDS6_OTHER=$other RDS_TEST=$RDS_TEST.c \
	timeout "$(scaled 400)" "$RDS_BUILD/selftests/ib_ipv6_test" \
	> "$log/ib_ipv6_test.out" 2>&1
rc=$?
sed 's/^/# /' "$log/ib_ipv6_test.out"
check "ib_ipv6_test: bind classes, global and link-local data, info" \
	test "$rc" = 0

# A socket-layer test that takes an address, over both kinds: ib_sizes_test
# (fragment boundaries to 64 KiB and 24 random sizes to 1 MiB, both ways
# at once, content and source checked) with IPv6 RDS_ADDR and RDS_PEER.
for kind in global linklocal; do
	if [ $kind = global ]; then
		a=$me p=$peer
	else
		a=$ll%$RDS_IFACE p=$peer_ll%$RDS_IFACE
	fi
	RDS_ADDR=$a RDS_PEER=$p RDS_SIZES_MAXK=16 RDS_TEST=$RDS_TEST.sizes.$kind \
		timeout "$(scaled 400)" "$RDS_BUILD/selftests/ib_sizes_test" \
		> "$log/sizes.$kind.out" 2>&1
	rc=$?
	sed 's/^/# /' "$log/sizes.$kind.out"
	check "ib_sizes_test over $a <-> $p" test "$rc" = 0
done

# run6 NAME PORT LOCAL PEER: one verified rds-stress pair, the checks.
run6() {
	stress6 "$1" "$2" "$(scaled 240)" "$3" "$4" -t 2 -d 4 -T "$secs" \
		--sizes 1,4096,4097,64K --drain-timeout "$(scaled 30)"
}

run6 global 6100 "$me" "$peer"
run6 linklocal 6110 "$ll%$RDS_IFACE" "$peer_ll%$RDS_IFACE"
cat /proc/net/rds/connections | sed 's/^/# /'

ib_test_end
