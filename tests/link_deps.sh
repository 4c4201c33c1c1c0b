#!/usr/bin/env bash
# link_deps.sh - each program links what its own code calls. The agent runs
# on every machine (and its package and image carry its libraries), so its
# ELF NEEDED entries may name only libc, libm, libpthread, libcurl and libz
# (and the sanitizer runtimes in a sanitizer build), and it holds none of the
# server's sample parser (common/ is an archive the linker takes members
# from). vmscope-replay reads recordings offline: no PostgreSQL, HTTP server
# or HTTP client library. Checks the release build (what the packages and
# the image ship) and the build under test ($BIN), whichever exist.
set -uo pipefail
cd "$(dirname "$0")/.."
passed=0 failed=0

check() {	# name, command...
	local name=$1; shift
	if "$@"; then passed=$((passed + 1)); echo "ok   $name"
	else failed=$((failed + 1)); echo "FAIL $name"; fi
}

needed() { readelf -d "$1" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'; }

# only_these BINARY SONAME-PATTERN... : every NEEDED entry matches a pattern
only_these() {
	local bin=$1 lib ok p rc=0; shift
	for lib in $(needed "$bin"); do
		ok=
		for p in "$@"; do
			case "$lib" in $p) ok=1 ;; esac
		done
		case "$lib" in libasan.so.* | libubsan.so.*)
			# sanitizer runtimes, only in a sanitizer build
			readelf -d "$bin" | grep -q 'libasan\.so' && ok=1 ;;
		esac
		[ -n "$ok" ] || { echo "  $bin needs $lib"; rc=1; }
	done
	return $rc
}

# none_of BINARY SONAME-PATTERN... : no NEEDED entry matches a pattern
none_of() {
	local bin=$1 lib p rc=0; shift
	for lib in $(needed "$bin"); do
		for p in "$@"; do
			case "$lib" in $p) echo "  $bin needs $lib"; rc=1 ;; esac
		done
	done
	return $rc
}

# defines_none BINARY SYMBOL... : the program holds none of these functions
defines_none() {
	local bin=$1 s rc=0; shift
	local syms
	syms=$(nm --defined-only "$bin" | awk '{print $3}')
	for s in "$@"; do
		grep -qx "$s" <<<"$syms" && { echo "  $bin defines $s"; rc=1; }
	done
	return $rc
}

dirs=(bin)
[ "${BIN:-bin}" != bin ] && dirs+=("$BIN")
for d in "${dirs[@]}"; do
	a=$d/vmscope-agent r=$d/vmscope-replay s=$d/vmscope-server
	for b in "$a" "$r" "$s"; do
		check "$b exists" test -x "$b"
	done
	check "$a links libc, libm, libpthread, libcurl, libz only" \
		only_these "$a" 'libc.so.*' 'libm.so.*' 'libpthread.so.*' 'libcurl.so.*' 'libz.so.*'
	check "$a links libcurl and libz" bash -c "readelf -d '$a' | grep -q 'libcurl\.so' && readelf -d '$a' | grep -q 'libz\.so'"
	check "$a holds no sample parser, dictionary or JSON reader" \
		defines_none "$a" sample_body_parse sample_body_parse_jansson sample_from_json dict_intern
	check "$r links no PostgreSQL, HTTP server, HTTP client, nettle or yajl" \
		none_of "$r" 'libpq.so.*' 'libmicrohttpd.so.*' 'libcurl.so.*' 'libnettle.so.*' 'libyajl.so.*'
	check "$s links the server's libraries" bash -c "readelf -d '$s' | grep -q 'libpq\.so' && readelf -d '$s' | grep -q 'libmicrohttpd\.so'"
done

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
