#!/usr/bin/env bash
# Installs the build into a staging prefix, then builds examples/hello
# against it twice: through find_package(numaware) and through pkg-config;
# and the installed CLI's --plot finds the installed Python package.
set -euo pipefail
src=$1 build=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cmake --install "$build" --prefix "$work/prefix" >/dev/null
export LD_LIBRARY_PATH="$work/prefix/lib:${LD_LIBRARY_PATH:-}"
for libdir in "$work/prefix"/lib*/; do export LD_LIBRARY_PATH="$libdir:$LD_LIBRARY_PATH"; done

cmake -S "$src/examples/hello" -B "$work/cmake" -G Ninja -DCMAKE_PREFIX_PATH="$work/prefix" >/dev/null
cmake --build "$work/cmake" >/dev/null
"$work/cmake/hello_cpp"
out=$("$work/cmake/hello_c")
echo "$out"
[ "$out" = "distance 0->1 = 21" ] || { echo "hello_c printed '$out', expected 'distance 0->1 = 21'"; exit 1; }

# The installed CLI plots through the installed Python package
# (<prefix>/share/numaware/python): the source tree's is not where it looks.
env -u NUMAWARE_PYTHONPATH "$work/prefix/bin/numaware" sim memory --workload chase:64K --prefetch none,next-line \
    --plot "$work/plot.png" >/dev/null
[ "$(head -c 4 "$work/plot.png" | tail -c 3)" = PNG ] || { echo "the installed numaware wrote no PNG"; exit 1; }

pc=$(ls "$work"/prefix/lib*/pkgconfig/numaware.pc)
export PKG_CONFIG_PATH=$(dirname "$pc")
g++ -std=c++20 "$src/examples/hello/hello.cpp" -o "$work/hello_pc" $(pkg-config --cflags --libs numaware)
"$work/hello_pc"
echo "install check: find_package and pkg-config builds ran; the installed CLI plotted"
