#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# install.sh ACTION KVER KDIR: what "make install", "make uninstall",
# "make dkms-install" and "make dkms-uninstall" do (see README.md,
# "Install").  ACTION:
#
#   install        rds.ko (built by "make" for KVER) into
#                  /lib/modules/KVER/updates/ by the kernel's
#                  modules_install (compressed and signed as the kernel's
#                  own modules where its build tree KDIR says so), the
#                  modprobe configuration (rds-ib.conf) into
#                  /etc/modprobe.d/, the manuals rds-ib.7 and rds-stress.1
#                  into PREFIX/share/man/, then depmod
#   uninstall      all out again for KVER (the configuration and the
#                  manuals stay while another kernel still has our module),
#                  then depmod
#   dkms-install   the sources into /usr/src/rds-ib-VERSION, added to DKMS
#                  and installed for every kernel with headers (KVER and
#                  KDIR are not used; what DKMS held of rds-ib is removed
#                  first: an upgrade, a reinstall), the modprobe
#                  configuration and the manuals
#   dkms-uninstall the DKMS module (every version) removed from every
#                  kernel, its sources, the modprobe configuration and the
#                  manuals
#
# Environment: DESTDIR (or INSTALL_MOD_PATH) installs under that root
# instead of /; depmod runs there only when it holds an index of the
# kernel's modules (a whole system image: a package's staging directory has
# none, and its package runs depmod when installed).  MODDIR: where rds.ko
# was built (default: the top of the tree; the guest test
# tools/testing/selftests/install.sh installs the harness's build).
# PREFIX: where the manuals go, under DESTDIR (default /usr/local:
# PREFIX/share/man/man7/rds-ib.7, man1/rds-stress.1).
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
action=$1 kver=${2:-} kdir=${3:-}
root=${DESTDIR:-${INSTALL_MOD_PATH:-}}
moddir=${MODDIR:-$top}
case $moddir in /*) ;; *) moddir=$top/$moddir ;; esac
modules=$root/lib/modules/$kver
conf=$root/etc/modprobe.d/rds-ib.conf
prefix=${PREFIX:-/usr/local}
mandir=$root$prefix/share/man
# The manuals: source in the tree, section.
mans=("Documentation/man/rds-ib.7 7" "tools/rds-stress/rds-stress.1 1")
name=rds-ib
version=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"$/\1/p' "$top/dkms.conf")

die() {
	echo "rds: $*" >&2
	exit 1
}

run_depmod() {
	if [ -e "$modules/modules.dep" ]; then
		echo "  DEPMOD  $modules"
		depmod -a ${root:+-b "$root"} "$kver"
	else
		echo "rds: no modules.dep in $modules: depmod is left to the installation of the package"
	fi
}

install_conf() {
	install -D -m 644 "$top/packaging/rds-ib.conf" "$conf"
	echo "  INSTALL $conf"
}

install_man() {
	local m src sec
	for m in "${mans[@]}"; do
		read -r src sec <<< "$m"
		install -D -m 644 "$top/$src" "$mandir/man$sec/${src##*/}"
		echo "  INSTALL $mandir/man$sec/${src##*/}"
	done
}

remove_man() {
	local m src sec f
	for m in "${mans[@]}"; do
		read -r src sec <<< "$m"
		f=$mandir/man$sec/${src##*/}
		if [ -e "$f" ]; then
			rm -f "$f"
			echo "  REMOVE  $f"
		fi
	done
}

# remove_conf: the modprobe configuration and the manuals go once no
# kernel under the root has our module (ours from make install or from
# DKMS).
remove_conf() {
	local left
	left=$(ls "$root"/lib/modules/*/updates/rds.ko* \
		"$root"/lib/modules/*/updates/dkms/rds.ko* 2>/dev/null || true)
	if [ -n "$left" ]; then
		echo "rds: $conf and the manuals stay for the kernels that still have rds-ib:" \
			"${left//$'\n'/ }"
		return
	fi
	if [ -e "$conf" ]; then
		rm -f "$conf"
		echo "  REMOVE  $conf"
	fi
	remove_man
}

# dkms_remove: every version of rds-ib that DKMS holds out of it, from
# every kernel, and its sources.
dkms_remove() {
	local v
	for v in $(dkms status -m "$name" |
		   sed -n "s|^$name/\([^,:]*\)[,:].*|\1|p" | sort -u); do
		dkms remove -m "$name" -v "$v" --all
		rm -rf "/usr/src/$name-$v"
	done
	rm -rf "/usr/src/$name-$version"
}

case $action in
install)
	ko=$moddir/rds.ko
	[ -e "$ko" ] || die "$ko is not built: run make KVER=$kver first"
	built=$(modinfo -F vermagic "$ko" | cut -d' ' -f1)
	[ "$built" = "$kver" ] ||
		die "$ko was built for $built, not $kver: run make KVER=$kver first"
	[ -n "$root" ] || [ -d "$modules" ] ||
		die "no $modules: kernel $kver is not installed"
	args=(M="$moddir" INSTALL_MOD_DIR=updates INSTALL_MOD_PATH="$root")
	# The kernel's key signs modules only where it built them: Debian's
	# headers have none, and sign-file's errors would say nothing more.
	if grep -q '^CONFIG_MODULE_SIG_ALL=y' "$kdir/.config" &&
	   [ ! -e "$kdir/certs/signing_key.x509" ]; then
		args+=(CONFIG_MODULE_SIG_ALL=)
		echo "rds: no signing key in $kdir: rds.ko is installed unsigned"
	fi
	# kbuild's own depmod needs System.map, which headers lack (it
	# would warn and skip): run_depmod does it.
	args+=(cmd_depmod=: quiet_cmd_depmod=)
	# An earlier install, compressed or not, would stay beside this one.
	rm -f "$modules"/updates/rds.ko*
	make -s -C "$kdir" "${args[@]}" modules_install
	# kbuild installs what modules.order names (the path of the build):
	# nothing, and no error, for a build moved since.
	ko=$(compgen -G "$modules/updates/rds.ko*") ||
		die "modules_install installed nothing from $moddir (its modules.order names another directory?)"
	echo "  INSTALL $ko"
	install_conf
	install_man
	run_depmod
	;;
uninstall)
	rm -fv "$modules"/updates/rds.ko* | sed 's/^/rds: /'
	rmdir "$modules/updates" 2>/dev/null || true
	remove_conf
	run_depmod
	;;
dkms-install)
	[ -z "$root" ] || die "DKMS installs into / only (DESTDIR=$root)"
	command -v dkms > /dev/null ||
		die "dkms is not installed (Debian: apt-get install dkms)"
	# What DKMS holds goes first: an upgrade leaves no older version for
	# autoinstall, a reinstall builds the sources anew.
	dkms_remove
	src=/usr/src/$name-$version
	mkdir -p "$src"
	cp -r "$top/dkms.conf" "$top/Kbuild" "$top/net" "$top/include" "$src/"
	dkms add -m "$name" -v "$version"
	kernels=() failed=()
	for d in /lib/modules/*/build; do
		[ -e "$d/Makefile" ] || continue
		k=${d#/lib/modules/}
		k=${k%/build}
		if dkms install -m "$name" -v "$version" -k "$k"; then
			kernels+=("$k")
		else
			failed+=("$k")
		fi
	done
	[ ${#kernels[@]} -gt 0 ] || [ ${#failed[@]} -gt 0 ] ||
		die "no kernel has headers (/lib/modules/*/build)"
	if [ ${#kernels[@]} -gt 0 ]; then
		install_conf
		install_man
	fi
	echo "rds: DKMS installed $name $version for: ${kernels[*]:-no kernel}"
	[ ${#failed[@]} = 0 ] || die "DKMS failed for: ${failed[*]}"
	;;
dkms-uninstall)
	[ -z "$root" ] || die "DKMS installs into / only (DESTDIR=$root)"
	command -v dkms > /dev/null || die "dkms is not installed"
	dkms_remove
	remove_conf
	;;
*)
	die "install.sh: no action $action"
	;;
esac
