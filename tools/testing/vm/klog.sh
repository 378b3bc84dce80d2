# SPDX-License-Identifier: GPL-2.0
# Sourced by guest.sh (in the guest) and klog-check.sh (on the host, with
# fixtures): the kernel log's verdict on a test.  Needs TOP and a
# bad_taint function; reads the log with dmesg (klog-check.sh replaces it).

# Patterns in the kernel log that fail the test that produced them even
# when they do not panic the guest (tools/testing/vm/klog-bad.txt).
LOG_BAD=$(grep -v '^#' "$TOP/tools/testing/vm/klog-bad.txt" | paste -sd '|')

# klog_problem MARKER TAINT0 [ALLOCFAIL]: why the kernel log from the last
# line ending in MARKER (a "rdstest: ..." line; the whole log when MARKER
# is empty), or the taint bits set since TAINT0, fail a check; empty when
# all is clean.  The offending lines go to stderr.  The ring is 8 MiB
# (log_buf_len, see run-tests): a marker that is gone means it wrapped,
# which fails the check rather than reading too little.  With ALLOCFAIL=1
# (the plan flag "allocfail" of a test that injects allocation failures)
# the stack dump of an allocation-failure report (warn_alloc: "page
# allocation failure", "vmalloc error") is expected, not a problem; any
# other report still is.
klog_problem() {
	local t why="" rc=0
	dmesg > /tmp/klog.txt 2>&1
	awk -v m="$1" -v re="$LOG_BAD" -v af="${3:-0}" '
		{ line[NR] = $0 }
		m != "" && length($0) >= length(m) &&
		substr($0, length($0) - length(m) + 1) == m { from = NR }
		END {
			if (m != "" && !from)
				exit 2
			for (i = from ? from : 1; i <= NR; i++) {
				# A lockdep report of the kernel'"'"'s own
				# rds_rdma, not ours (the mixed-pair tests
				# load it): its rds_ib_laddr_check() destroys
				# the cm_id it probed with from inside
				# rdma_cm'"'"'s request handler, another id
				# of the same lock class, and takes
				# rds_trans_sem under it (recursive and
				# circular reports, Debian 6.12).  Its lines
				# are shown, not counted.
				if (line[i] ~ /WARNING: possible (recursive locking detected|circular locking dependency detected)/) {
					for (j = i; j <= NR && j < i + 150; j++)
						if (line[j] ~ /<\/TASK>/)
							break
					foreign = 0
					for (k = i; k <= j; k++)
						if (line[k] ~ /rds_ib_laddr_check\+.*\[rds_rdma\]/)
							foreign = 1
					if (foreign) {
						print "# kernel (the kernel'"'"'s own rds_rdma, not counted; lockdep is off for the rest of this boot): " line[i]
						i = j
						continue
					}
				}
				if (line[i] ~ /page allocation failure: |vmalloc error: /)
					aw = i
				if (line[i] ~ re &&
				    !(af == 1 && aw && i - aw <= 12 && line[i] ~ /Call Trace/))
					bad[++n] = line[i]
			}
			for (i = 1; i <= n && i <= 20; i++)
				print "# kernel: " bad[i]
			exit n > 0
		}' /tmp/klog.txt >&2 || rc=$?
	case $rc in
	1) why="kernel log reports a problem" ;;
	2) why="kernel log marker '$1' lost (ring wrapped?)" ;;
	esac
	t=$(bad_taint)
	if [ $(( t & ~$2 )) != 0 ]; then
		why="${why:+$why, }kernel tainted ($t)"
	fi
	echo "$why"
}
