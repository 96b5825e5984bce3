#!/usr/bin/env bash
# The main job on a fresh machine: install what is missing, build, list the machine's backends and
# devices, and run the vector-add pipeline on the best device (or the selector given).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/configure.sh > /dev/null
cmake --build "${BUILD:-build}" -j "$(nproc)"
"${BUILD:-build}/bin/gpurt" info
"${BUILD:-build}/bin/01_vector_add" "$@"
