#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# A queue pair event from hard interrupt context (issue 15, lead 8): a
# hardware driver may call the QP's event handler from its interrupt
# handler, where a BH lock must not be taken.  rxe never does, so host 1
# delivers a fatal event of its connection's QP from an irq_work (the
# test-only switch ib_qp_event_irq).  The handler must take it without a
# warning or lockdep report (the kernel-log check), the connection must be
# reset and come back (ib_counters' resets and the core's conn_reset
# count it), and a message sent after it must arrive.
#
# Host 1's sender waits for its shell to have seen the reset (a file: a
# barrier counts hosts, not processes, so the shell's own barrier let the
# sender go at once, before or during the reset), and keeps its socket
# until host 2 has the message: closing it cancels a message that still
# waits for the connection to come back.
. "$(dirname "$0")/lib.sh"

P=/sys/module/rds/parameters
rds_loaded || { ksft_fail "rds loaded"; ksft_exit; }
if [ ! -e $P/ib_qp_event_irq ]; then
	ksft_skip "QP event from hard IRQ" "module built without RDS_TEST_HOOKS"
	ksft_exit
fi
py=$(cat <<'PY'
import os, socket, subprocess, sys, time
me, peer, role, fired = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]
scale = int(os.environ.get("RDS_TIME_SCALE", "1"))
def bar(name):
    subprocess.run([os.environ["RDS_TOP"] + "/tools/testing/selftests/barrier",
                    os.environ["RDS_TEST"] + "." + name, str(120 * scale)],
                   check=True)
s = socket.socket(socket.AF_RDS, socket.SOCK_SEQPACKET, 0)
s.bind((me, 4800))
s.settimeout(120 * scale)
bar("bound")
for i in range(2):
    if role == "send":
        if i == 1:
            deadline = time.time() + 120 * scale
            while not os.path.exists(fired):
                if time.time() > deadline:
                    sys.exit("no word of the reset from the shell")
                time.sleep(0.05)
        s.sendto(b"message %d" % i, (peer, 4800))
    else:
        data, addr = s.recvfrom(100)
        assert data == b"message %d" % i, data
        print("# got", data.decode(), "from", addr)
    sys.stdout.flush()
    if i == 0:
        bar("first")
bar("got1")
PY
)
if [ "$RDS_HOST" = 1 ]; then
	fired=/tmp/ib_qp_irq.fired
	rm -f $fired
	timeout "$(scaled 300)" python3 -c "$py" "$RDS_ADDR" "$RDS_PEER" send \
		$fired &
	pid=$!
	barrier first 180 || ksft_fail "barrier first"
	resets=$(ib_counter resets)
	conn_reset=$(rds_counter conn_reset)
	echo 1 > $P/ib_qp_event_irq
	n=$(cat $P/ib_qp_event_irq)
	check "a fatal QP event delivered from hard IRQ context ($n)" \
		test "$n" -ge 1
	check "host 1 reset the connection" \
		wait_for 60 bash -c "[ \$(tr ' ' '\n' < $P/ib_counters | sed -n 's/^resets=//p') -gt $resets ]"
	check "conn_reset of RDS_INFO_COUNTERS counted it (was $conn_reset)" \
		wait_for 10 rds_counter_above conn_reset "$conn_reset"
	# The sender goes on (and fails on its own if the reset never came).
	: > $fired
	wait $pid
	rc=$?
	check "the message after the event sent (exit $rc)" test $rc = 0
	test_klog | grep -q 'queue pair error'
	check "the handler logged the event" test $? = 0
else
	check "both messages arrived, in order" \
		timeout "$(scaled 300)" python3 -c "$py" "$RDS_ADDR" "$RDS_PEER" recv -
fi
barrier done 240
echo "# ib_counters: $(cat $P/ib_counters)"
ksft_exit
