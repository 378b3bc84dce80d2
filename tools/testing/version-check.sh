#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The packaging agrees with the module.  The release is written in two
# places: MODULE_VERSION in net/main.c (modinfo, /sys/module/rds/version)
# and PACKAGE_VERSION in dkms.conf (the DKMS package,
# /usr/src/rds-ib-VERSION).  They must be the same, and above the kernel's
# own rds.ko (4.0): DKMS installs a module over one of the kernel only when
# its version is newer.  The modprobe configuration (packaging/rds-ib.conf)
# knows ours by its MODULE_AUTHOR.
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
mod=$(sed -n 's/^MODULE_VERSION("\(.*\)");$/\1/p' "$top/net/main.c")
pkg=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"$/\1/p' "$top/dkms.conf")
kernel=4.0

author=$(sed -n 's/^MODULE_AUTHOR("\(.*\)");$/\1/p' "$top/net/main.c")
conf=$top/packaging/rds-ib.conf
echo "version-check: MODULE_AUTHOR '$author'"
n=$(grep -c 'modinfo -F author rds)" = "' "$conf" || true)
m=$(grep -cF "modinfo -F author rds)\" = \"$author\"" "$conf" || true)
if [ -z "$author" ] || [ "$n" = 0 ] || [ "$m" != "$n" ]; then
	echo "version-check: $conf does not know ours by MODULE_AUTHOR" \
		"('$author' in $m of its $n tests)" >&2
	exit 1
fi
echo "version-check: MODULE_VERSION '$mod', dkms.conf PACKAGE_VERSION '$pkg'"
if [ -z "$mod" ] || [ -z "$pkg" ]; then
	echo "version-check: a version is missing" >&2
	exit 1
fi
if [ "$mod" != "$pkg" ]; then
	echo "version-check: net/main.c and dkms.conf differ" >&2
	exit 1
fi
if [ "$(printf '%s\n' "$kernel" "$mod" | sort -V | tail -n 1)" != "$mod" ] ||
   [ "$mod" = "$kernel" ]; then
	echo "version-check: $mod is not above the kernel's rds.ko ($kernel):" \
		"DKMS would not install it" >&2
	exit 1
fi
