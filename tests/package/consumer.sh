#!/usr/bin/env bash
# Builds an application of one's own against an installed gpurt the two ways the README gives, runs
# it, and fails (printing the build's output) unless the build works and the program exits 0.
#   consumer.sh pkg-config PREFIX LIBDIR CXX WORK SOURCE [compiler flags...]
#       CXX [flags] SOURCE $(pkg-config --cflags --libs $PC), with PKG_CONFIG_PATH=PREFIX/LIBDIR/pkgconfig;
#       PC is gpurt-lib (the kernel library, which requires gpurt) unless set: the programs given use
#       gpurt::lib. With PC=gpurt the program must not need the library.
#   consumer.sh cmake PREFIX LIBDIR CXX WORK PROJECT_DIR EXECUTABLE [cmake -D args...]
#       cmake -S PROJECT_DIR -B WORK -DCMAKE_PREFIX_PATH=PREFIX -DCMAKE_CXX_COMPILER=CXX, build, run
# With EXPECT_BUILD_ERROR=TEXT the build must fail instead, with TEXT in the compiler's output.
set -euo pipefail
mode=$1 prefix=$2 libdir=$3 cxx=$4 work=$5 pc=${PC:-gpurt-lib}
shift 5
rm -rf "$work" && mkdir -p "$work"
log=$work/build.log
fail() {
  if [ -n "${EXPECT_BUILD_ERROR:-}" ] && grep -qF -- "$EXPECT_BUILD_ERROR" "$log"; then
    echo "consumer.sh: the build failed as expected, saying: $EXPECT_BUILD_ERROR"
    exit 0
  fi
  echo "consumer.sh: $*"
  cat "$log"
  exit 1
}
case $mode in
  pkg-config)
    src=$1
    shift
    # The environment must not find any other gpurt.pc (a system one, the build tree's).
    flags=$(PKG_CONFIG_LIBDIR="$prefix/$libdir/pkgconfig" PKG_CONFIG_PATH= pkg-config --cflags --libs "$pc") ||
      fail "pkg-config found no $pc in $prefix/$libdir/pkgconfig"
    echo "pkg-config --cflags --libs $pc: $flags" > "$log"
    case " $flags " in *" -std="*) fail "$pc.pc forces a language standard: $flags" ;; esac
    # shellcheck disable=SC2086  # the flags are words, as in the README's $(pkg-config ...)
    "$cxx" "$@" "$src" $flags -o "$work/app" >> "$log" 2>&1 || fail "$cxx could not build $src"
    [ -z "${EXPECT_BUILD_ERROR:-}" ] || { cat "$log"; echo "consumer.sh: $cxx built $src, which should have failed"; exit 1; }
    exe=$work/app
    ;;
  cmake)
    project=$1 name=$2
    shift 2
    cmake -S "$project" -B "$work" -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_CXX_COMPILER="$cxx" "$@" > "$log" 2>&1 ||
      fail "configuring $project failed"
    cmake --build "$work" --verbose >> "$log" 2>&1 || fail "building $project with $cxx failed"
    exe=$work/$name
    ;;
  *) echo "consumer.sh: unknown mode '$mode'"; exit 2 ;;
esac
"$exe" || fail "$exe exited with $?"
