#!/usr/bin/env bash
# Installs what gpurt needs to build and test on Debian 12 / Ubuntu 24.04 (apt-get), when missing.
#   scripts/install-deps.sh               # build and test (clang: the package tests build consumers with
#                                         # clang++ as well as g++)
#   scripts/install-deps.sh --sanitizers  # also clang's libFuzzer runtime (scripts/sanitize.sh fuzz)
set -euo pipefail
packages=(cmake ninja-build g++ clang pkg-config ocl-icd-opencl-dev opencl-clhpp-headers pocl-opencl-icd clinfo
          catch2 nlohmann-json3-dev libcli11-dev libssl-dev python3)
sudo_cmd=""
[ "$(id -u)" -ne 0 ] && sudo_cmd="sudo"
export DEBIAN_FRONTEND=noninteractive
updated=0
install() {
  local missing=()
  for p in "$@"; do dpkg -s "$p" > /dev/null 2>&1 || missing+=("$p"); done
  [ ${#missing[@]} -eq 0 ] && return 0
  echo "install-deps: installing ${missing[*]}"
  [ $updated -eq 1 ] || { $sudo_cmd apt-get update -qq; updated=1; }
  $sudo_cmd apt-get install -y -qq --no-install-recommends "${missing[@]}"
}
install "${packages[@]}"
if [ "${1:-}" = "--sanitizers" ]; then
  # libFuzzer ships apart from clang on Debian 12 (libclang-rt-N-dev) and Ubuntu 24.04.
  major=$(clang --version | sed -nE 's/.*clang version ([0-9]+).*/\1/p' | head -1)
  if ! find /usr/lib/llvm-"$major" -name 'libclang_rt.fuzzer*.a' 2>/dev/null | grep -q .; then
    install "libclang-rt-$major-dev"
  fi
fi
echo "install-deps: everything is installed"
