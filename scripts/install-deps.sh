#!/usr/bin/env bash
# Installs what gpurt needs to build and test on Debian 12 / Ubuntu 24.04 (apt-get), when missing.
#   scripts/install-deps.sh               # build and test (clang: the package tests build consumers with
#                                         # clang++ as well as g++; Open MPI: examples/10_mpi; CLBlast:
#                                         # the CLBlast interop example; libc++: scripts/check-libcxx.sh)
#   scripts/install-deps.sh --sanitizers  # also clang's libFuzzer runtime (scripts/sanitize.sh fuzz)
set -euo pipefail
packages=(cmake ninja-build g++ clang pkg-config ocl-icd-opencl-dev opencl-clhpp-headers pocl-opencl-icd clinfo
          catch2 nlohmann-json3-dev libcli11-dev libssl-dev python3 libopenmpi-dev openmpi-bin libclblast-dev
          libc++-dev libc++abi-dev)
sudo_cmd=""
[ "$(id -u)" -ne 0 ] && sudo_cmd="sudo"
export DEBIAN_FRONTEND=noninteractive
updated=0
# A package counts as present when dpkg has it or, for tools, when its command is on PATH (a
# machine may have cmake, ninja or clang from elsewhere).
present() {
  dpkg -s "$1" > /dev/null 2>&1 && return 0
  case "$1" in
    cmake) command -v cmake ;; ninja-build) command -v ninja ;; g++) command -v g++ ;;
    clang) command -v clang++ ;; pkg-config) command -v pkg-config ;; python3) command -v python3 ;;
    clinfo) command -v clinfo ;; openmpi-bin) command -v mpirun ;; *) false ;;
  esac > /dev/null 2>&1
}
install() {
  local missing=()
  for p in "$@"; do present "$p" || missing+=("$p"); done
  [ ${#missing[@]} -eq 0 ] && return 0
  echo "install-deps: installing ${missing[*]}"
  # Without a reachable package archive (an offline machine), carry on with what is there: the
  # build says what is really missing.
  [ $updated -eq 1 ] || { $sudo_cmd apt-get update -qq || true; updated=1; }
  $sudo_cmd apt-get install -y -qq --no-install-recommends "${missing[@]}" ||
    echo "install-deps: could not install ${missing[*]}; continuing with what is installed" >&2
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
