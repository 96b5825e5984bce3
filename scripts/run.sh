#!/usr/bin/env bash
# The main job on a fresh machine: install what is missing, build what it runs (the gpurt tool, the
# backend plugins and the vector-add example, not the tests), list the machine's backends and
# devices, and run the vector-add pipeline on the best device (or the selector given). Everything
# `cmake --install` installs but the conformance suite is built, so the README's install step can follow.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/configure.sh > /dev/null
cmake --build "${BUILD:-build}" -j "$(nproc)" --target gpurt_tool gpurt_plugins 01_vector_add
"${BUILD:-build}/bin/gpurt" info
"${BUILD:-build}/bin/01_vector_add" "$@"
