#!/usr/bin/env bash
# Installs the build tree into a scratch prefix, then builds and runs a consumer program
# with find_package(DataParallel) and with pkg-config, and a Java one on the installed jar.
#   check_install.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build=$1 src=$2
prefix=$(mktemp -d)
work=$(mktemp -d)
trap 'rm -rf "$prefix" "$work"' EXIT
cmake --install "$build" --prefix "$prefix" >/dev/null
libdir=$(ls -d "$prefix"/lib*/ | head -n 1)
test -e "$libdir/libdataparallel.so.0" || { echo "libdataparallel.so.0 (SONAME) not installed"; exit 1; }
# A sanitizer build's library needs its runtime in the consumer too: build the consumer
# with the flags the library was built with.
cache_value() { sed -n "s/^$1:[A-Z]*=//p" "$build/CMakeCache.txt"; }
cflags=$(cache_value CMAKE_C_FLAGS)
ldflags=$(cache_value CMAKE_EXE_LINKER_FLAGS)
cmake -S "$src/consumer" -B "$work/cmake" -DCMAKE_PREFIX_PATH="$prefix" \
    -DCMAKE_C_FLAGS="$cflags" -DCMAKE_EXE_LINKER_FLAGS="$ldflags" >/dev/null
cmake --build "$work/cmake" >/dev/null
LD_LIBRARY_PATH="$libdir" "$work/cmake/consumer"
export PKG_CONFIG_PATH="$libdir/pkgconfig"
# shellcheck disable=SC2086 # the flags are lists of words
cc -std=c99 $cflags "$src/consumer/main.c" -o "$work/pc_consumer" $ldflags \
    $(pkg-config --cflags --libs dataparallel)
LD_LIBRARY_PATH="$libdir" "$work/pc_consumer"
echo "find_package(DataParallel) and pkg-config dataparallel: OK"
# The Java binding, when it was built: the installed jar and JNI library alone (its run
# path finds the installed library). Not in a sanitizer build, whose runtime the JVM lacks.
jar="$libdir/dataparallel-java/dataparallel.jar"
if [ -e "$build/bindings/java/dataparallel.jar" ] && [[ "$cflags" != *-fsanitize* ]]; then
  test -e "$jar" || { echo "the Java binding was built but $jar was not installed"; exit 1; }
  (cd "$work" && java -cp "$jar" "$src/consumer/Consumer.java")
fi
