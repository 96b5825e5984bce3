#!/usr/bin/env bash
# The plugin boundary and the layers, checked from the tree and a build:
#   abi      gpurt/plugin/abi.h compiles as C99 (and as C++), alone.
#   symbols  every plugin in BUILD/lib exports C symbols only (gpurt_*): nothing C++ crosses.
#   names    the core (core/src, core/include/gpurt outside plugin/) names no backend in its code:
#            no string literal holds cuda, opencl, mock, nvidia, pocl or an sm_NN architecture.
# Usage: scripts/check-boundaries.sh abi|symbols|names [BUILD]   (exit 0: holds; 1: it does not, with why)
set -euo pipefail
cd "$(dirname "$0")/.."
what=${1:?abi, symbols or names}
build=${2:-build}
case "$what" in
  abi)
    cc=${CC:-cc}
    "$cc" -std=c99 -Wall -Wextra -pedantic -Werror -fsyntax-only -x c core/include/gpurt/plugin/abi.h
    "${CXX:-c++}" -std=c++17 -Wall -Wextra -pedantic -Werror -fsyntax-only -x c++ core/include/gpurt/plugin/abi.h
    echo "abi.h compiles as C99 and as C++17"
    ;;
  symbols)
    status=0
    found=0
    for lib in "$build"/lib/libgpurt_*.so; do
      [ -e "$lib" ] || continue
      found=1
      bad=$(nm -D --defined-only "$lib" | awk '{print $NF}' | grep -v '^gpurt_' || true)
      if [ -n "$bad" ]; then
        echo "$lib exports symbols other than its C entry points:"; echo "$bad" | head -20; status=1
      else
        echo "$lib: $(nm -D --defined-only "$lib" | awk '{print $NF}' | tr '\n' ' ')"
      fi
    done
    [ "$found" = 1 ] || { echo "no plugin in $build/lib"; exit 1; }
    exit $status
    ;;
  names)
    files=$(find core/src core/include/gpurt -name '*.hpp' -o -name '*.cpp' -o -name '*.h' | grep -v '^core/include/gpurt/plugin/' | sort)
    # Code only: whole-line comments and trailing // comments removed, then string literals searched.
    hits=$(for f in $files; do
      sed -E -e 's#(^|[[:space:]])//.*$##' "$f" |
        grep -nE '"[^"]*\b(cuda|opencl|mock|nvidia|pocl|sm_[0-9]+)\b[^"]*"' | sed "s#^#$f:#" || true
    done)
    if [ -n "$hits" ]; then echo "the core names a backend:"; echo "$hits"; exit 1; fi
    echo "no backend name in the core's code ($(echo "$files" | wc -l) files)"
    ;;
  *) echo "unknown check '$what'" >&2; exit 2 ;;
esac
