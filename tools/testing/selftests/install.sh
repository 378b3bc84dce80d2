#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Installed like a kernel module: "make install" puts rds.ko in updates/,
# the modprobe configuration in /etc/modprobe.d and the manuals rds-ib.7
# and rds-stress.1 in /usr/local/share/man (man finds them, man -l renders
# them); then "modprobe rds_rdma" and "modprobe rds" load ours (its
# version, a parameter only ours has), "modprobe -r rds_rdma" unloads it,
# "modprobe rds_tcp" fails saying that ours has no TCP transport, and
# "make uninstall" gives the kernel's RDS back and takes the manuals out.
# With the configuration left for another kernel that has ours, "modprobe
# rds_rdma" loads the kernel's RDS where ours is not.
#
# The guest's root is the host's, read-only: the test runs in a mount
# namespace of its own (gone with it), with a tmpfs overlay on
# /etc/modprobe.d and on /usr/local/share/man (or, where the host has no
# such directory, PREFIX in the tmpfs) and, on /lib/modules/KVER, a tmpfs
# view of the kernel's module tree: the sources of its indexes (modules.order,
# modules.builtin*), its build link and the modules that RDS takes (those
# modprobe names for rds, rds_rdma and rds_tcp: kernel/net/rds among them,
# which updates/ must win over).  depmod over the whole tree takes minutes
# under TCG (3 to 4 for 6.12's compressed modules, each time).
#
# It installs the harness's build of rds.ko (build/mod-KVER; make install
# MODDIR=, the tree being read-only) from a copy beside a modules.order
# that names it: kbuild installs what modules.order names, and the build's
# names the tree's path on the host.  It loads and unloads the module
# itself: one-host.tests runs it after unload.
if [ -z "${RDS_INSTALL_NS:-}" ]; then
	RDS_INSTALL_NS=1 exec unshare -m --propagation private "$0" "$@"
fi
. "$(dirname "$0")/lib.sh"

kver=$(uname -r)
lib=/lib/modules/$kver
version=$(sed -n 's/^MODULE_VERSION("\(.*\)");$/\1/p' "$RDS_TOP/net/main.c")
if rds_loaded; then
	ksft_fail "no rds module before the test" "an rds module is loaded"
	ksft_exit
fi

tmp=$(mktemp -d)
prefix=/usr/local
mandir=$prefix/share/man
setup() {
	local f rel
	mount -t tmpfs tmpfs "$tmp" || return 1
	mkdir -p "$tmp/view" "$tmp/conf" "$tmp/work" "$tmp/mod" \
		"$tmp/man" "$tmp/manwork"
	if [ -d "$mandir" ]; then
		mount -t overlay overlay \
			-o "lowerdir=$mandir,upperdir=$tmp/man,workdir=$tmp/manwork" \
			"$mandir" || return 1
	else
		prefix=$tmp/prefix
		mandir=$prefix/share/man
	fi
	cp -a "$lib/build" "$lib"/modules.builtin* "$lib/modules.order" \
		"$tmp/view/" || return 1
	for f in $(for m in rds rds_rdma rds_tcp; do
			modprobe --show-depends "$m"
		done | awk '$1 == "insmod" { print $2 }' | sort -u); do
		rel=${f#"$lib"/}
		mkdir -p "$tmp/view/$(dirname "$rel")"
		cp "$f" "$tmp/view/$rel" || return 1
	done
	cp "$RDS_KO" "$tmp/mod/" || return 1
	sed "s|^.*/|$tmp/mod/|" "$RDS_MODDIR/modules.order" \
		> "$tmp/mod/modules.order"
	mount --bind "$tmp/view" "$lib" &&
		depmod -a "$kver" &&
		mount -t overlay overlay \
			-o "lowerdir=/etc/modprobe.d,upperdir=$tmp/conf,workdir=$tmp/work" \
			/etc/modprobe.d
}
if ! setup; then
	ksft_fail "a view of $lib, an overlay on /etc/modprobe.d and $mandir"
	ksft_exit
fi
find "$lib" -name '*.ko*' | sed 's/^/# in the view: /'

# resolves NAME WHERE: modprobe NAME would load the rds.ko under WHERE
# (the last module it names).
resolves() {
	local last
	last=$(modprobe --show-depends "$1" | tail -n 1)
	echo "# modprobe $1: $last"
	[[ $last == "insmod $lib/$2"* ]]
}

# ours_loaded: the rds loaded is ours (its version, its IB counters), not
# the kernel's (which comes with rds_rdma).
ours_loaded() {
	[ "$(cat /sys/module/rds/version 2> /dev/null)" = "$version" ] &&
		[ -e /sys/module/rds/parameters/ib_counters ] &&
		[ ! -d /sys/module/rds_rdma ]
}

# kernels_loaded: the kernel's rds and rds_rdma are loaded.
kernels_loaded() {
	[ -d /sys/module/rds_rdma ] &&
		[ ! -e /sys/module/rds/parameters/ib_counters ]
}

# tcp_refused: modprobe rds_tcp fails with the configuration's message and
# loads nothing.
tcp_refused() {
	local out
	if out=$(modprobe rds_tcp 2>&1); then
		echo "# modprobe rds_tcp succeeded"
		return 1
	fi
	echo "$out" | sed 's/^/# /'
	[[ $out == *"has no TCP transport"* ]] && [ ! -d /sys/module/rds_tcp ] &&
		! rds_loaded
}

installed() {
	compgen -G "$lib/updates/rds.ko*"
}
not_installed() {
	! installed
}

# manuals_installed: both pages in mandir, as they are in the tree.
manuals_installed() {
	cmp "$RDS_TOP/Documentation/man/rds-ib.7" "$mandir/man7/rds-ib.7" &&
		cmp "$RDS_TOP/tools/rds-stress/rds-stress.1" \
			"$mandir/man1/rds-stress.1"
}
manuals_gone() {
	[ ! -e "$mandir/man7/rds-ib.7" ] && [ ! -e "$mandir/man1/rds-stress.1" ]
}

# man_finds SECTION PAGE: man's own search (its default path, which has
# /usr/local/share/man) gives the installed page.
man_finds() {
	local got mflag=()
	[ "$prefix" = /usr/local ] || mflag=(-M "$mandir")
	got=$(man "${mflag[@]}" -w "$1" "$2" 2>&1)
	echo "# man -w $1 $2: $got"
	# (Debian's /usr/local/man is a link to share/man)
	[ -e "$got" ] &&
		[ "$(realpath "$got")" = "$(realpath "$mandir/man$1/$2.$1")" ]
}

# man_renders FILE TITLE WORD: man -l FILE prints the page, without a
# warning: its title line, and WORD (a heading or a name) in its text.
man_renders() {
	local out
	out=$(man -l "$1" 2> "$tmp/man.err") || return 1
	sed 's/^/# man: /' "$tmp/man.err"
	! grep -qiE 'warning|error' "$tmp/man.err" || return 1
	echo "# man -l $1: $(echo "$out" | wc -l) lines"
	[[ $(echo "$out" | head -n 1) == "$2"* ]] && grep -qw -- "$3" <<< "$out"
}

t0=$SECONDS
check "make install (rds.ko of $RDS_MODDIR, version $version)" \
	make -C "$RDS_TOP" install KVER="$kver" MODDIR="$tmp/mod" \
	PREFIX="$prefix"
echo "# make install took $((SECONDS - t0)) s"
check "rds.ko in $lib/updates" installed
check "rds-ib.conf in /etc/modprobe.d" test -e /etc/modprobe.d/rds-ib.conf
check "manuals in $mandir (man7/rds-ib.7, man1/rds-stress.1)" manuals_installed
check "man -w 7 rds-ib finds it" man_finds 7 rds-ib
check "man -w 1 rds-stress finds it" man_finds 1 rds-stress
check "man -l renders rds-ib.7" \
	man_renders "$mandir/man7/rds-ib.7" "RDS-IB(7)" ib_srq_size
check "man -l renders rds-stress.1" \
	man_renders "$mandir/man1/rds-stress.1" "RDS-STRESS(1)" --slow-reader
check "modprobe rds resolves to updates/rds.ko" resolves rds updates/rds.ko
check "modprobe rds_rdma" modprobe rds_rdma
check "rds_rdma loaded ours (version $version, ib_counters)" ours_loaded
check "modprobe -r rds_rdma" modprobe -r rds_rdma
check "module gone" wait_for 10 test ! -d /sys/module/rds
check "modprobe rds" modprobe rds
check "rds loaded ours" ours_loaded
check "rmmod rds" rmmod rds
check "modprobe rds_tcp fails: no TCP transport, nothing loaded" tcp_refused
t0=$SECONDS
check "make uninstall" make -C "$RDS_TOP" uninstall KVER="$kver" \
	PREFIX="$prefix"
echo "# make uninstall took $((SECONDS - t0)) s"
check "rds.ko gone from updates" not_installed
check "rds-ib.conf gone" test ! -e /etc/modprobe.d/rds-ib.conf
check "manuals gone from $mandir" manuals_gone
check "modprobe rds resolves to the kernel's again" \
	resolves rds kernel/net/rds/rds.ko
# The configuration stays while another kernel has ours: this one keeps
# the kernel's RDS.
cp "$RDS_TOP/packaging/rds-ib.conf" /etc/modprobe.d/
check "without ours, modprobe rds_rdma (configuration kept)" modprobe rds_rdma
check "it loaded the kernel's rds and rds_rdma" kernels_loaded
check "modprobe -r rds_rdma" modprobe -r rds_rdma
check "the kernel's modules gone" \
	wait_for 10 test ! -d /sys/module/rds -a ! -d /sys/module/rds_rdma
rm /etc/modprobe.d/rds-ib.conf

rmmod rds_rdma 2> /dev/null
rds_loaded && rmmod rds
[ "$prefix" = /usr/local ] && umount "$mandir"
umount /etc/modprobe.d "$lib" "$tmp"
ksft_exit
