# SPDX-License-Identifier: GPL-2.0
#
# Top-level Makefile for the out-of-tree AF_RDS module.
#
#   make                 build rds.ko against the newest installed kernel
#   make KVER=6.1.0-57-amd64   ... or a given one (KDIR= overrides the tree)
#   make install         rds.ko into /lib/modules/KVER/updates, the modprobe
#                        configuration, the manuals rds-ib.7 and rds-stress.1
#                        (PREFIX=/usr/local: PREFIX/share/man), depmod
#                        (DESTDIR= or INSTALL_MOD_PATH= installs under another
#                        root); make uninstall
#   make dkms-install    DKMS builds it for every kernel (make dkms-uninstall)
#   make sparse          build with sparse (C=2), any report fails
#   make checkpatch      the kernel's checkpatch.pl over the sources
#   make unit            user-space unit tests under ASan/UBSan
#   make selftests       build the guest selftests
#   make check-vm        the VM selftests only
#   make check           everything: unit tests, builds, sparse, VM selftests
#   make run             the main job: two Soft-RoCE hosts, rds-stress between them
#   make bench           raw verbs vs the kernel's RDS vs ours, same link, one run
#   make faults          the fault matrix: rds-stress under NIC down, link cuts, rxe loss, netem
#   make soak            the randomized soak (SOAK_SECS, SOAK_SEED): faults in a seeded random order
#   make rdma-stress     rds-stress -D over our module, the MR pool seed scenario, a link cut (in make check)
#   make wire-peer       the user-space wire-protocol peer's conformance and hostile tests
#   make fuzz-wire       the wire fuzzer (FUZZ_SECS, FUZZ_SEED): user-space peer vs the module
#   make stress-4k       the crash shape of issue 15 for STRESS_4K_SECS (600), then pages back
#   make check-debug     the VM suites on a KASAN/lockdep/kmemleak kernel (SERIES=6.12, PLAN=all)
#   make deps            install what the tests need (Debian 12, as root)
#
# Building and installing need only the kernel's headers; every test target
# installs what it needs first (tools/testing/deps.sh --quiet: apt-get, for
# what is missing).
#
# KVER defaults to the newest kernel with both an image and headers
# installed (tools/testing/kver.sh), or the one of KDIR; it is worked out
# when a recipe runs, so that "make deps" can install the kernels first.

SHELL := /bin/bash
TOP := $(CURDIR)
T := $(TOP)/tools/testing
KVER_SH = k="$(KVER)"; \
	if [ -z "$$k" ] && [ -n "$(KDIR)" ]; then \
		k=$$(cat "$(KDIR)/include/config/kernel.release" 2> /dev/null) || { \
			echo "rds: KDIR=$(KDIR) is no kernel build tree" \
				"(no include/config/kernel.release)" >&2; exit 1; }; \
	fi; \
	[ -n "$$k" ] || k=$$($(T)/kver.sh) || exit 1
# KDIR_SH: KVER_SH, then kdir (KDIR or the kernel's headers), which must exist.
KDIR_SH = $(KVER_SH); kdir="$(KDIR)"; kdir=$${kdir:-/lib/modules/$$k/build}; \
	[ -e "$$kdir/Makefile" ] || { \
		echo "rds: no kernel headers for $$k ($$kdir): install them" \
			"(Debian: apt-get install linux-headers-$$k)" \
			"or name a kernel build tree with KDIR=" >&2; exit 1; }

.PHONY: all modules modules-all clean deps sparse checkpatch unit selftests \
	check check-vm run bench faults soak fuzz-wire rds-stress rdma-stress \
	wire-peer stress-4k check-debug install uninstall dkms-install \
	dkms-uninstall

all: modules

deps:
	@$(T)/deps.sh

# The module alone: nothing is installed (the tests' targets below run
# deps.sh first).
modules:
	@$(KDIR_SH); $(MAKE) -C $$kdir M=$(TOP) W=1 modules

# "make install" after "make" (same KVER): packaging/install.sh says what
# each does.  MODDIR=DIR installs the rds.ko built in DIR (the guest test
# installs the harness's build).
PREFIX ?= /usr/local
INSTALL_ENV = DESTDIR="$(DESTDIR)" INSTALL_MOD_PATH="$(INSTALL_MOD_PATH)" \
	MODDIR="$(MODDIR)" PREFIX="$(PREFIX)"

install:
	@$(KDIR_SH); $(INSTALL_ENV) $(TOP)/packaging/install.sh install "$$k" "$$kdir"

uninstall:
	@$(KVER_SH); $(INSTALL_ENV) $(TOP)/packaging/install.sh uninstall "$$k"

dkms-install dkms-uninstall:
	@$(INSTALL_ENV) $(TOP)/packaging/install.sh $@

# Build against every installed kernel series (6.1 and 6.12 on Debian 12),
# each in build/mod-KVER/ (where the VM harness loads it from).
modules-all:
	@$(T)/deps.sh --quiet
	@set -e; for k in $$($(T)/kver.sh --all); do $(T)/build-module.sh $$k; done

# sparse over every file (C=2), endian checks on; any report fails.
sparse:
	@$(T)/deps.sh --quiet
	@$(KVER_SH); BUILD_CLEAN=1 $(T)/build-module.sh $$k C=2

checkpatch:
	@$(T)/deps.sh --quiet
	@$(T)/checkpatch.sh

unit:
	@$(T)/deps.sh --quiet
	$(MAKE) -C tools/testing/unit run

selftests:
	@$(T)/deps.sh --quiet
	$(MAKE) -C tools/testing/selftests
	$(MAKE) -C tools/testing/peer

check-vm:
	@$(T)/deps.sh --quiet
	@$(KVER_SH); $(T)/vm/run-tests --kver $$k

check:
	@$(T)/deps.sh --quiet
	@$(T)/check.sh

rds-stress:
	@$(T)/deps.sh --quiet
	$(MAKE) -C tools/rds-stress

run: rds-stress
	@$(KVER_SH); $(T)/vm/run-stress --kver $$k

# Benchmarks: raw verbs vs mainline RDS vs ours on one link, one run.
bench:
	@$(T)/deps.sh --quiet
	@$(KVER_SH); $(T)/vm/run-bench --kver $$k

# The fault matrix: a verifying rds-stress load with one fault per test
# (NIC down, link cut, long link cut, rxe removal, netem), two hosts.
faults: rds-stress
	@$(KVER_SH); $(T)/vm/run-tests --kver $$k --topology two \
		--plan $(T)/vm/faults.tests

# The randomized soak: SOAK_SECS (default 600) of load with faults in the
# order SOAK_SEED (default: the time) draws; the guests read build/soak.env.
soak: rds-stress
	@$(KVER_SH); mkdir -p build; \
	printf 'SOAK_SECS=%s\nSOAK_SEED=%s\n' "$${SOAK_SECS:-600}" \
		"$${SOAK_SEED:-$$(date +%s)}" > build/soak.env; \
	cat build/soak.env; \
	$(T)/vm/run-tests --kver $$k --topology two --plan $(T)/vm/soak.tests

# rds-stress with RDMA over our module (make check runs it on the default kernel).
rdma-stress: rds-stress
	@$(KVER_SH); $(T)/vm/run-tests --kver $$k --topology two \
		--plan $(T)/vm/rdma-stress.tests

# The wire peer's conformance, hostile-input and short fuzz tests (make
# check runs them on the default kernel series; about 6 min under TCG;
# KVER=... picks another).
wire-peer:
	@$(T)/deps.sh --quiet
	$(MAKE) -C tools/testing/peer
	@$(KVER_SH); $(T)/vm/run-tests --kver $$k --topology two \
		--plan $(T)/vm/wire-peer.tests

# The wire fuzzer for FUZZ_SECS (default 600; make check runs it for 30 s):
# the user-space peer mutates valid traffic from the seed FUZZ_SEED
# (default: the time, printed); the guests read build/fuzz-wire.env.
fuzz-wire:
	@$(KVER_SH); mkdir -p build; \
	printf 'FUZZ_SECS=%s\nFUZZ_SEED=%s\n' "$${FUZZ_SECS:-600}" \
		"$${FUZZ_SEED:-$$(date +%s)}" > build/fuzz-wire.env; \
	cat build/fuzz-wire.env; \
	$(T)/vm/run-tests --kver $$k --topology two --plan $(T)/vm/fuzz-wire.tests

# The crash shape of issue 15 (rds-stress -t 4 -d 8 -q 4096 -a 256) for
# STRESS_4K_SECS; the guests read build/stress-4k.env.
stress-4k: rds-stress
	@$(KVER_SH); mkdir -p build; \
	printf 'STRESS_4K_SECS=%s\n' "$${STRESS_4K_SECS:-600}" > build/stress-4k.env; \
	cat build/stress-4k.env; \
	$(T)/vm/run-tests --kver $$k --topology two --plan $(T)/vm/stress-4k.tests; \
	rc=$$?; rm -f build/stress-4k.env; exit $$rc

# The VM suites on a debug kernel built from Debian's sources (KASAN,
# lockdep, kmemleak, UBSAN, DEBUG_OBJECTS, fault injection): SERIES=6.1 or
# 6.12 (default), PLAN=all (default), quick, rdma, faults or TOPO:FILE; NONEG=1
# leaves out the oracles' negative controls.  Builds the kernel once.
check-debug:
	@$(T)/deps.sh --quiet
	@$(T)/check-debug.sh --series "$${SERIES:-6.12}" --plan "$${PLAN:-all}" \
		$$([ "$${NONEG:-0}" = 1 ] && echo --no-neg)

clean:
	-@$(KVER_SH); $(MAKE) -C /lib/modules/$$k/build M=$(TOP) clean
	-$(MAKE) -C tools/testing/unit clean
	-$(MAKE) -C tools/testing/selftests clean
	-$(MAKE) -C tools/testing/peer clean
	-$(MAKE) -C tools/rds-stress clean
	rm -rf build
