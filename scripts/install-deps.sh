#!/usr/bin/env bash
# Installs what gpurt needs to build and test on Debian 12 / Ubuntu 24.04 (apt-get), when missing.
set -euo pipefail
packages=(cmake ninja-build g++ pkg-config ocl-icd-opencl-dev opencl-clhpp-headers pocl-opencl-icd clinfo
          catch2 nlohmann-json3-dev libcli11-dev libssl-dev)
missing=()
for p in "${packages[@]}"; do
  dpkg -s "$p" > /dev/null 2>&1 || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: everything is installed"
  exit 0
fi
echo "install-deps: installing ${missing[*]}"
sudo_cmd=""
[ "$(id -u)" -ne 0 ] && sudo_cmd="sudo"
export DEBIAN_FRONTEND=noninteractive
$sudo_cmd apt-get update -qq
$sudo_cmd apt-get install -y -qq --no-install-recommends "${missing[@]}"
