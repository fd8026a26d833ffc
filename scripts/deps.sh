#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Checks for (or, with "install", installs) the Debian packages a make target needs.
#
# usage: deps.sh check|install GROUP...   (groups: build static test vm deb fuzz)
set -u

mode=$1; shift

# Each line: group, package, and the file or command that proves it is installed.
# Kept in a variable, not behind a command: the check must work however
# little is installed.
TABLE="
build clang cmd:clang
build llvm cmd:llvm-strip
build bpftool cmd:bpftool
build libbpf-dev file:/usr/include/bpf/libbpf.h
build libelf-dev file:/usr/include/libelf.h
build libdw-dev file:/usr/include/elfutils/libdwfl.h
build zlib1g-dev file:/usr/include/zlib.h
build liblzma-dev file:/usr/include/lzma.h
build libdebuginfod-dev file:/usr/include/elfutils/debuginfod.h
build libcapstone-dev file:/usr/include/capstone/capstone.h
build libiberty-dev file:/usr/include/libiberty/demangle.h
build libmicrohttpd-dev file:/usr/include/microhttpd.h
build make cmd:make
build gcc cmd:gcc
test bats cmd:bats
test bats-support file:/usr/lib/bats/bats-support/load.bash
test bats-assert file:/usr/lib/bats/bats-assert/load.bash
test jq cmd:jq
test mandoc cmd:mandoc
test libxml2-utils cmd:xmllint
test golang-go cmd:go
test util-linux cmd:setpriv
test procps cmd:pgrep
test xz-utils cmd:xz
test binutils cmd:objcopy
test dwz cmd:dwz
test time file:/usr/bin/time
test curl cmd:curl
test libssl3 file:/usr/share/doc/libssl3
test debuginfod cmd:debuginfod
test python3 cmd:python3
test python3.11 file:/usr/bin/python3.11
test python3.11-dev file:/usr/bin/python3.11-config
test libpython3.11-dev file:/usr/include/python3.11/Python.h
test libc6-dbg file:/usr/share/doc/libc6-dbg
test chromium cmd:chromium
test nodejs cmd:node
test npm cmd:npm
test prometheus cmd:promtool
test g++ cmd:g++
test lld cmd:ld.lld
test rustc cmd:rustc
test podman cmd:podman
test runc cmd:runc
test openjdk-17-jdk-headless cmd:javac
test php8.2-cli file:/usr/bin/php8.2
test php8.2-fpm file:/usr/sbin/php-fpm8.2
test ruby3.1 file:/usr/bin/ruby3.1
cross gcc-aarch64-linux-gnu cmd:aarch64-linux-gnu-gcc
cross libc6-dev-arm64-cross file:/usr/aarch64-linux-gnu/include/stdio.h
cross xz-utils cmd:xz
static xz-utils cmd:xz
vm qemu-system-x86 cmd:qemu-system-x86_64
vm qemu-system-arm cmd:qemu-system-aarch64
vm gcc-aarch64-linux-gnu cmd:aarch64-linux-gnu-gcc
vm libc6-dev-arm64-cross file:/usr/aarch64-linux-gnu/include/stdio.h
vm busybox-static file:/bin/busybox
vm cpio cmd:cpio
vm xz-utils cmd:xz
vm e2fsprogs cmd:mkfs.ext4
vm kmod cmd:depmod
vm golang-go cmd:go
deb build-essential file:/usr/share/build-essential/list
deb debhelper cmd:dh
deb dpkg-dev cmd:dpkg-buildpackage
deb fakeroot cmd:fakeroot
deb lintian cmd:lintian
deb mmdebstrap cmd:mmdebstrap
fuzz libclang-rt-14-dev file:/usr/lib/llvm-14/lib/clang/14.0.6/lib/linux/libclang_rt.fuzzer-x86_64.a
"

have() {
	case $1 in
	cmd:*) command -v "${1#cmd:}" >/dev/null 2>&1 ;;
	file:*) [ -e "${1#file:}" ] ;;
	esac
}

missing=""
for group in "$@"; do
	while read -r g pkg probe; do
		[ "$g" = "$group" ] || continue
		have "$probe" || missing="$missing $pkg"
	done <<END
$TABLE
END
done
missing=${missing# }
[ -z "$missing" ] && exit 0

case $mode in
check)
	echo "missing: $missing (Debian packages); run: sudo make deps" >&2
	exit 1
	;;
install)
	if [ "$(id -u)" != 0 ]; then
		echo "missing: $missing; installing packages needs root: sudo make deps" >&2
		exit 1
	fi
	echo "installing: $missing"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq || exit 1
	apt-get install -y -qq --no-install-recommends $missing >/dev/null || exit 1
	;;
esac
