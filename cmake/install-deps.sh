#!/bin/sh
# Installs pegplus's build and test dependencies from Debian 12 packages, only when missing.
# Run as root (or through sudo); does nothing when everything is already installed.
set -eu
PACKAGES="build-essential cmake pkg-config libode-dev libccd-dev check libsubunit-dev \
liblapacke-dev libopenblas-dev libqhull-dev libsuitesparse-dev"
# libFuzzer harnesses (PP_FUZZ, .ci/run): clang-14 and its runtime libraries
PACKAGES="$PACKAGES clang libclang-rt-14-dev"
# trajectories (zlib, json-c) and the browser viewer with its headless test (docs/trajectory.md)
PACKAGES="$PACKAGES zlib1g-dev libjson-c-dev chromium"
# the comparison workbench: scene files (json-c), figures (gnuplot), local sweeps (GNU parallel)
PACKAGES="$PACKAGES gnuplot-nox parallel"
# node and npm: Debian's packages, unless a Node.js is already there (nodesource's nodejs
# carries its own npm and conflicts with Debian's npm package)
command -v node >/dev/null 2>&1 || PACKAGES="$PACKAGES nodejs"
command -v npm >/dev/null 2>&1 || PACKAGES="$PACKAGES npm"
missing=""
for p in $PACKAGES; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
[ -z "$missing" ] && exit 0
if [ "$(id -u)" -ne 0 ]; then
    echo "pegplus: missing Debian packages:$missing" >&2
    echo "pegplus: run this script as root, or: sudo apt-get install$missing" >&2
    exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends $missing
