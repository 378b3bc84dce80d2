#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The wire fuzzer (wire_peer -t fuzz): for FUZZ_SECS seconds (default 30;
# `make fuzz-wire` runs longer, build/fuzz-wire.env) the user-space peer
# sends host 1's module valid traffic (messages, packed frames, control
# frames, heartbeats) with random mutations of headers, lengths, sequence
# numbers, ACKs, credits and flags, from a printed seed (FUZZ_SEED,
# default the time; FUZZ_SEED=N replays it: `make fuzz-wire` passes both
# to peer_fuzz_long, which is this test), reconnecting whenever the
# module resets.  A witness connection (another TOS) must answer a ping
# every 64 frames and at the end; host 1 must count bad frames, keep no
# receive page, and log no splat (the harness fails the test on any).
. "$(dirname "$0")/peer_lib.sh"

[ "$RDS_TEST" = peer_fuzz_long ] && [ -r "$RDS_BUILD/fuzz-wire.env" ] &&
	. "$RDS_BUILD/fuzz-wire.env"
secs=${FUZZ_SECS:-30}
seed=${FUZZ_SEED:-$(date +%s)}
if [ "$RDS_HOST" = 1 ]; then
	snap
	pages0=$(cat $P/ib_rx_pages)
fi
peer_begin
if [ "$RDS_HOST" = 2 ]; then
	echo "# fuzz: seed $seed, $secs s (FUZZ_SEED=$seed replays it)"
	timeout $((secs + 300)) "$peer" -s "$RDS_ADDR" -d "$RDS_PEER" -t fuzz \
		-q 109 -w 110 -c 16 -P 7010 -S "$seed" -T "$secs" \
		> /tmp/peer.fuzz 2>&1 &
	peer_result /tmp/peer.fuzz $! fuzz
	grep '^fuzz: seed .* runs' /tmp/peer.fuzz > "$RDS_SHARED/peer_fuzz.out"
	barrier done $((secs + 400))
else
	barrier done $((secs + 400))
	cat "$RDS_SHARED/peer_fuzz.out"
	echo "# fuzz: host 1 bad_frames +$(delta bad_frames), resets +$(delta resets), connects +$(delta connects), rx_frames +$(delta rx_frames)"
	check "fuzz: host 1 counted bad frames (+$(delta bad_frames))" \
		test "$(delta bad_frames)" -gt 0
	check "fuzz: receive pages back to $pages0" \
		wait_for 30 file_is $P/ib_rx_pages "$pages0"
	check "fuzz: no RNR" test "$(delta rnr)" = 0
fi
peer_end
