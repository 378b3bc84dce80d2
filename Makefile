# SPDX-License-Identifier: GPL-2.0
#
# Top-level Makefile for the out-of-tree AF_RDS module.
#
#   make                 build rds.ko against the newest installed kernel
#   make KVER=6.1.0-57-amd64   ... or a given one (KDIR= overrides the tree)
#   make sparse          build with sparse (C=2)
#   make unit            user-space unit tests under ASan/UBSan
#   make check           everything: unit tests, builds, sparse, VM selftests
#   make run             the main job: two Soft-RoCE hosts, rds-stress between them
#   make deps            install what the above need (Debian 12, as root)

SHELL := /bin/bash
TOP := $(CURDIR)

# Newest kernel that has both an image to boot and headers to build against.
KVER ?= $(shell $(TOP)/tools/testing/kver.sh 2>/dev/null)
KDIR ?= /lib/modules/$(KVER)/build
BUILD := $(TOP)/build

.PHONY: all modules clean deps sparse unit selftests check run check-vm \
	modules-all

all: modules

deps:
	@$(TOP)/tools/testing/deps.sh

modules:
	@$(TOP)/tools/testing/deps.sh --quiet
	$(MAKE) -C $(KDIR) M=$(TOP) W=1 modules

# Build against every installed kernel series (6.1 and 6.12 on Debian 12).
modules-all:
	@$(TOP)/tools/testing/deps.sh --quiet
	@set -e; for k in $$($(TOP)/tools/testing/kver.sh --all); do \
		echo "== building against $$k"; \
		rm -rf $(BUILD)/mod-$$k; mkdir -p $(BUILD)/mod-$$k; \
		cp -r Kbuild net include $(BUILD)/mod-$$k/; \
		$(MAKE) -C /lib/modules/$$k/build M=$(BUILD)/mod-$$k W=1 modules; \
	done

sparse:
	@$(TOP)/tools/testing/deps.sh --quiet
	$(MAKE) -C $(KDIR) M=$(TOP) W=1 C=2 modules

unit:
	@$(TOP)/tools/testing/deps.sh --quiet
	$(MAKE) -C tools/testing/unit run

selftests:
	@$(TOP)/tools/testing/deps.sh --quiet
	$(MAKE) -C tools/testing/selftests KVER=$(KVER)

# VM selftests only (expects the module and selftests to be built).
check-vm:
	$(TOP)/tools/testing/vm/run-tests --kver $(KVER)

check:
	@$(TOP)/tools/testing/check.sh --kver $(KVER)

run:
	@$(TOP)/tools/testing/deps.sh --quiet
	$(MAKE) modules selftests
	$(TOP)/tools/testing/vm/run-stress --kver $(KVER)

clean:
	-$(MAKE) -C $(KDIR) M=$(TOP) clean
	-$(MAKE) -C tools/testing/unit clean
	-$(MAKE) -C tools/testing/selftests clean
	rm -rf $(BUILD)
