#!/bin/sh
# Installs the built pegplus into a scratch prefix, then builds and runs a consumer program
# two ways, as a user would: a CMake project with find_package(pegplus) (shared and static
# targets) and a plain compiler line with `pkg-config --cflags --libs pegplus`.
# Usage: run.sh <pegplus build dir> <this source dir> <scratch dir>
set -eu
build=$1; src=$2; scratch=$3
rm -rf "$scratch"; mkdir -p "$scratch"
prefix="$scratch/prefix"
cmake --install "$build" --prefix "$prefix" >/dev/null
pcdir=$(dirname "$(find "$prefix" -name pegplus.pc | head -n 1)")
cfgdir=$(dirname "$(find "$prefix" -name pegplus-config.cmake | head -n 1)")
shlibdir=$(dirname "$(find "$prefix" -name 'libpegplus.so' | head -n 1)")

cmake -S "$src" -B "$scratch/cmake-consumer" -DCMAKE_PREFIX_PATH="$prefix" -Dpegplus_DIR="$cfgdir" >/dev/null
cmake --build "$scratch/cmake-consumer" >/dev/null
LD_LIBRARY_PATH="$shlibdir" "$scratch/cmake-consumer/consumer"
"$scratch/cmake-consumer/consumer_static"

PKG_CONFIG_PATH="$pcdir" pkg-config --libs pegplus
# shellcheck disable=SC2046
cc -o "$scratch/pkgconfig-consumer" "$src/consumer.c" $(PKG_CONFIG_PATH="$pcdir" pkg-config --cflags --libs pegplus) -lm
LD_LIBRARY_PATH="$shlibdir" "$scratch/pkgconfig-consumer"

# the installed pegplus-run (built without sanitizers only) on an unchanged ODE program
if [ -x "$prefix/bin/pegplus-run" ]; then
    "$prefix/bin/pegplus-run" --model peg -- "$build/examples/ode-convex" 40 > /dev/null 2> "$scratch/run.err"
    grep -q 'pegplus-run: model=peg steps=40 refused=0' "$scratch/run.err" || {
        cat "$scratch/run.err" >&2; echo "installed pegplus-run failed" >&2; exit 1; }
    echo "installed pegplus-run: ran ode-convex under peg"
fi
echo "install consumers: 3 passed, 0 failed"
