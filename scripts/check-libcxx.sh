#!/usr/bin/env bash
# Every C++ translation unit of gpurt's own code (core, backends, kernels, tests, tools, bench,
# examples) compiles with clang++ -std=c++17 -stdlib=libc++ -Werror and the project's warning set,
# syntax only. libc++ includes far less transitively than libstdc++, so a missing standard include
# (the <cstdint> that g++ 12 forgave and g++ 13 did not) fails here; so does code g++ takes but the
# standard does not (a lambda capturing a structured binding in C++17), and every clang warning.
# Reads the compile commands of a configured build directory (default: build/, configured by
# scripts/configure.sh, which exports them). Usage: scripts/check-libcxx.sh [BUILD]
set -uo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-${BUILD:-build}}
db="$BUILD/compile_commands.json"
[ -f "$db" ] || { echo "check-libcxx: no $db (run scripts/configure.sh first)" >&2; exit 2; }
cxx=${CLANGXX:-clang++}
command -v "$cxx" > /dev/null || { echo "check-libcxx: $cxx not found" >&2; exit 2; }
# libc++'s headers come with libc++-dev (Debian), which scripts/install-deps.sh installs.
echo '#include <vector>' | "$cxx" -std=c++17 -stdlib=libc++ -x c++ -fsyntax-only - 2> /dev/null ||
  { echo "check-libcxx: $cxx cannot find libc++'s headers (install libc++-dev)" >&2; exit 2; }
python3 - "$db" "$cxx" "$(nproc)" <<'EOF'
import concurrent.futures, json, os, shlex, subprocess, sys
db, cxx, jobs = sys.argv[1], sys.argv[2], int(sys.argv[3])
root = os.getcwd()
own = ("core/", "backends/", "kernels/", "tests/", "tools/", "bench/", "examples/")
units = []
for c in json.load(open(db)):
    f = os.path.relpath(os.path.join(c["directory"], c["file"]), root)
    if not f.startswith(own) or not f.endswith((".cpp", ".cc", ".cxx")):
        continue
    args = c.get("arguments") or shlex.split(c["command"])
    keep, skip, include_next = [], False, False
    for a in args[1:]:
        if skip:
            skip = False
            continue
        if include_next:  # "-I DIR"
            include_next = False
            a = "-I" + a
        if a == "-I":
            include_next = True
            continue
        # Headers from outside the tree (the CUDA toolkit's, say) are the vendor's: their warnings
        # are not ours to fix, as for the system headers the compiler already spares.
        if a.startswith("-I") and not os.path.abspath(os.path.join(c["directory"], a[2:])).startswith(root + os.sep):
            keep += ["-isystem", a[2:]]
            continue
        if a in ("-o", "-MF", "-MT", "-MQ"):
            skip = True
            continue
        if a in ("-c", "-MD", "-MMD") or a == c["file"] or a.startswith("-std=") or a.startswith("-O"):
            continue
        keep.append(a)
    units.append((f, c["directory"], [cxx, "-std=c++17", "-stdlib=libc++", "-fsyntax-only", "-Werror",
                                      "-Wall", "-Wextra", "-Wpedantic", "-Wshadow", "-Wnon-virtual-dtor"]
                  + keep + [c["file"]]))
def check(u):
    f, d, cmd = u
    p = subprocess.run(cmd, cwd=d, capture_output=True, text=True)
    return f, p.returncode, p.stderr
bad = 0
with concurrent.futures.ThreadPoolExecutor(jobs) as pool:
    for f, rc, err in pool.map(check, sorted({tuple(u[2]): u for u in units}.values(), key=lambda u: u[0])):
        if rc != 0:
            bad += 1
            print(f"FAILED {f}\n" + "\n".join(err.splitlines()[:30]))
print(f"check-libcxx: {len(set(tuple(u[2]) for u in units)) - bad} of {len(set(tuple(u[2]) for u in units))} translation units compile with {cxx} -stdlib=libc++ -Werror")
sys.exit(1 if bad else 0)
EOF
