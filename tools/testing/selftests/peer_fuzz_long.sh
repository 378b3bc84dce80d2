#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The long wire fuzzer of `make fuzz-wire`: peer_fuzz with FUZZ_SECS and
# FUZZ_SEED from build/fuzz-wire.env.
exec "$(dirname "$0")/peer_fuzz.sh" "$@"
