#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# gen_abi_names.sh OUT.h
#
# Read the system <linux/rds.h> (as found by $CC) and write OUT.h for
# abi_test, with two sections:
#
#   ABI_GEN_CONSTS  one table entry per object-like macro the system header
#                   itself defines (not the headers it includes), wrapped in
#                   #ifdef so that a macro missing from our header shows up
#                   as a failed test instead of a compile error;
#   ABI_GEN_NAMES   the key of every macro, function-like macro, typedef,
#                   enum, enumerator, struct, union and member the system
#                   header declares, so the test can prove that its
#                   hand-written table leaves nothing out.
#
# Also writes OUT.d, a make dependency file listing the headers read.
set -eu

out=$1
cc=${CC:-cc}
tmp=$out.tmp.$$
trap 'rm -f "$tmp" "$tmp".*' EXIT

src='#include <linux/rds.h>'

hdr=$(printf '%s\n' "$src" | $cc -E -x c - |
	sed -n 's/^# [0-9]* "\(.*\/linux\/rds\.h\)".*/\1/p' | head -n 1)
if [ -z "$hdr" ]; then
	echo "$0: system <linux/rds.h> not found (install linux-libc-dev)" >&2
	exit 1
fi

# Macros: -dD keeps the #defines in place, between line markers that say
# which file each one comes from.
printf '%s\n' "$src" | $cc -E -dD -x c - | awk -v hdr="$hdr" '
/^# [0-9]+ "/ {
	f = $3; gsub(/"/, "", f); cur = f; next
}
cur == hdr && $1 == "#define" {
	name = $2
	if (name ~ /\(/) {			# function-like
		sub(/\(.*/, "", name)
		func_[nf++] = name
		next
	}
	body = $0
	sub(/^#define[ \t]+[A-Za-z_0-9]+[ \t]*/, "", body)
	if (body == "")				# include guard
		next
	obj[no++] = name
}
END {
	print "#ifdef ABI_GEN_CONSTS"
	for (i = 0; i < no; i++) {
		printf "#ifdef %s\nABI_CONST(%s)\n#else\n", obj[i], obj[i]
		printf "ABI_MISSING(\"const %s\")\n#endif\n", obj[i]
	}
	print "#endif /* ABI_GEN_CONSTS */"
	print ""
	print "#ifdef ABI_GEN_NAMES"
	for (i = 0; i < no; i++)
		printf "\"const %s\",\n", obj[i]
	for (i = 0; i < nf; i++)
		printf "\"call %s(\",\n", func_[i]
	print "#endif /* ABI_GEN_NAMES (macros) */"
}' > "$tmp.macros"

# Declarations: tokenise the preprocessed text of the header itself and
# walk its typedefs, enums, structs and unions (nested ones included).
printf '%s\n' "$src" | $cc -E -x c - | awk -v hdr="$hdr" '
function lex(s) {
	while (s != "") {
		if (match(s, /^[ \t]+/)) {
			s = substr(s, RLENGTH + 1)
		} else if (match(s, /^[A-Za-z_][A-Za-z_0-9]*/) ||
			   match(s, /^[0-9][A-Za-z_0-9]*/)) {
			T[n++] = substr(s, 1, RLENGTH)
			s = substr(s, RLENGTH + 1)
		} else {
			T[n++] = substr(s, 1, 1)
			s = substr(s, 2)
		}
	}
}
function isident(t) {
	return t ~ /^[A-Za-z_][A-Za-z_0-9]*$/ && t != "__attribute__" &&
	       t != "struct" && t != "union" && t != "enum" &&
	       t != "const" && t != "volatile"
}
# Declarator names up to the ";" ending a declaration (i at its start).
# Skips (...) and [...] and anything after a bit-field ":".  Leaves i
# after the ";" and returns the names separated by " ".
function declnames(   depth, last, names, colon) {
	depth = 0; last = ""; names = ""; colon = 0
	for (; i < n; i++) {
		t = T[i]
		if (t == "(" || t == "[") { depth++; continue }
		if (t == ")" || t == "]") { depth--; continue }
		if (depth)
			continue
		if (t == ":") { colon = 1; continue }
		if (t == "," || t == ";") {
			if (last != "")
				names = names (names == "" ? "" : " ") last
			last = ""; colon = 0
			if (t == ";") { i++; return names }
			continue
		}
		if (!colon && isident(t))
			last = t
	}
	return names
}
# Members of a struct/union body; i is just past "{".  Returns the member
# paths separated by " " and leaves i past the closing "}".
function members(   out, sub_, names, k, m, parts, np) {
	out = ""
	while (i < n) {
		if (T[i] == "}") { i++; return out }
		if ((T[i] == "struct" || T[i] == "union") && T[i + 1] == "{") {
			i += 2
			sub_ = members()
			names = declnames()
			np = split(sub_, parts, " ")
			if (names == "") {		# anonymous member
				out = out " " sub_
				continue
			}
			m = split(names, nm, " ")
			for (k = 1; k <= m; k++) {
				out = out " " nm[k]
				for (j = 1; j <= np; j++)
					out = out " " nm[k] "." parts[j]
			}
			continue
		}
		out = out " " declnames()
	}
	return out
}
/^# [0-9]+ "/ { f = $3; gsub(/"/, "", f); cur = f; next }
cur == hdr { lex($0) }
END {
	for (i = 0; i < n; ) {
		t = T[i]
		if (t == "typedef") {
			i++
			if ((T[i] == "struct" || T[i] == "union" ||
			     T[i] == "enum") && (T[i + 1] == "{" || T[i + 2] == "{")) {
				print "gen_abi_names: typedef of an inline " \
				      "aggregate is not handled" > "/dev/stderr"
				exit 1
			}
			m = split(declnames(), nm, " ")
			for (k = 1; k <= m; k++)
				printf "\"sizeof %s\",\n", nm[k]
			continue
		}
		if ((t == "struct" || t == "union") && isident(T[i + 1]) &&
		    T[i + 2] == "{") {
			agg = t " " T[i + 1]
			i += 3
			printf "\"sizeof %s\",\n", agg
			m = split(members(), nm, " ")
			for (k = 1; k <= m; k++)
				printf "\"offsetof %s.%s\",\n", agg, nm[k]
			declnames()
			continue
		}
		if (t == "enum" && isident(T[i + 1]) && T[i + 2] == "{") {
			printf "\"sizeof enum %s\",\n", T[i + 1]
			i += 3
			first = 1
			for (; i < n && T[i] != "}"; i++) {
				if (T[i] == ",") { first = 1; continue }
				if (first && isident(T[i]))
					printf "\"const %s\",\n", T[i]
				first = 0
			}
			i++
			declnames()
			continue
		}
		if (t == "struct" || t == "union" || t == "enum") {
			# forward declaration or use outside an aggregate
			declnames()
			continue
		}
		print "gen_abi_names: unexpected declaration at \"" t "\"" > "/dev/stderr"
		exit 1
	}
}' > "$tmp.decls"

{
	echo "/* Generated by gen_abi_names.sh from $hdr; do not edit. */"
	cat "$tmp.macros"
	echo ""
	echo "#ifdef ABI_GEN_NAMES"
	cat "$tmp.decls"
	echo "#endif /* ABI_GEN_NAMES (declarations) */"
} > "$tmp"

# Dependencies, so the list is regenerated when the system header changes.
printf '%s\n' "$src" | $cc -M -MT "$out" -x c - > "$tmp.d"
printf '%s: %s\n' "$out" "$0" >> "$tmp.d"

mv "$tmp.d" "${out%.h}.d"
mv "$tmp" "$out"
