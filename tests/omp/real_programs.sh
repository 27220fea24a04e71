#!/bin/bash
# tests/omp/real_programs.sh SHIM BLAS_LAPACK — OpenMP code that we did not
# write or compile, on libnumaware_omp.so (SHIM):
#   ImageMagick  Debian's `convert` (imagemagick), linked to libgomp: its
#                filters run `omp parallel for` with num_threads clauses and
#                nonmonotonic dynamic schedules, named critical sections,
#                single, sections (the FFT) and locks;
#   OpenBLAS     Debian's OpenMP build (libopenblas0-openmp), its BLAS and
#                LAPACK regions driven by BLAS_LAPACK (tests/omp/real/).
# Every run under the shim, at 1-3 threads and every NUMAWARE_POLICY, must
# give the bytes that the same program gives under libgomp at the same
# thread count. A run first proves that the program's GOMP_parallel binds
# to the shim (the dynamic linker's own report), so a shim that was not
# used cannot pass. scripts/bootstrap installs both packages; without them
# the test fails and says so.
set -euo pipefail
SHIM=${1:?usage: real_programs.sh SHIM BLAS_LAPACK}
BLAS=${2:?usage: real_programs.sh SHIM BLAS_LAPACK}
case $SHIM in /*) ;; *) SHIM=$(pwd)/$SHIM ;; esac
[ -f "$SHIM" ] || { echo "FAIL: no such library: $SHIM" >&2; exit 1; }
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
policies="dfifo lq dep rip-dep rip-mw"
threads="1 2 3"
runs=0

command -v convert > /dev/null || fail "ImageMagick's convert is not installed (Debian package imagemagick: scripts/bootstrap installs it)"
multiarch=$(gcc -print-multiarch)
OPENBLAS_OMP=/usr/lib/$multiarch/openblas-openmp
[ -f "$OPENBLAS_OMP/libopenblas.so.0" ] ||
    fail "OpenBLAS's OpenMP build is not installed (Debian package libopenblas0-openmp: scripts/bootstrap installs it)"

# The program's GOMP_parallel must resolve to the shim.
bound_to_shim() {   # PROGRAM ARGS...
    LD_DEBUG=bindings LD_DEBUG_OUTPUT="$WORK/ld" LD_PRELOAD=$SHIM "$@" > /dev/null
    grep -h "normal symbol \`GOMP_parallel'" "$WORK"/ld.* | grep -q "to $SHIM " ||
        fail "$1: GOMP_parallel did not bind to $SHIM"
    rm -f "$WORK"/ld.*
}

# ---- ImageMagick ----------------------------------------------------------
# A 192 x 160 input made once under libgomp (plasma, seeded); outputs as
# binary PPM/PGM, which carries no date.
convert -size 192x160 -seed 7 plasma:fractal "$WORK/in.png"
ops=(
    "-blur 0x3"
    "-resize 61%"
    "-morphology Convolve Gaussian:0x2"
    "-distort SRT 0.8,20"
    "-statistic Median 3x3"
    "-equalize"
    "-colorspace Lab -separate -append"
    "-auto-level -modulate 110,120,90"
    "-kuwahara 2"
    "-canny 0x1+10%+30%"
    "-fx u*0.5+0.2"
    "-sharpen 0x1 -rotate 17 -unsharp 0x2"
    "-fft -append"
)
bound_to_shim convert "$WORK/in.png" -blur 0x1 "ppm:$WORK/probe.ppm"
for i in "${!ops[@]}"; do
    read -r -a op <<< "${ops[$i]}"
    for t in $threads; do
        OMP_NUM_THREADS=$t convert "$WORK/in.png" "${op[@]}" -depth 16 "ppm:$WORK/ref.ppm" ||
            fail "convert ${ops[$i]} failed under libgomp at $t threads"
        for p in $policies; do
            OMP_NUM_THREADS=$t NUMAWARE_POLICY=$p LD_PRELOAD=$SHIM \
                convert "$WORK/in.png" "${op[@]}" -depth 16 "ppm:$WORK/out.ppm" ||
                fail "convert ${ops[$i]}: exit status $? under the shim ($p, $t threads)"
            cmp -s "$WORK/ref.ppm" "$WORK/out.ppm" ||
                fail "convert ${ops[$i]}: the image differs from libgomp's ($p, $t threads)"
            runs=$((runs + 1))
        done
    done
done
echo "ImageMagick: ${#ops[@]} operations at 1-3 threads under every policy: $runs runs, images byte-identical to libgomp's"

# ---- OpenBLAS (OpenMP build) ----------------------------------------------
blas_runs=0
export LD_LIBRARY_PATH=$OPENBLAS_OMP${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
bound_to_shim "$BLAS" 64
for t in $threads; do
    OMP_NUM_THREADS=$t "$BLAS" 320 > "$WORK/ref.txt" || fail "blas_lapack failed under libgomp at $t threads"
    head -n 1 "$WORK/ref.txt" | grep -qx 'openblas_get_parallel 2' ||
        fail "the loaded OpenBLAS is not its OpenMP build: $(head -n 1 "$WORK/ref.txt")"
    for p in $policies; do
        OMP_NUM_THREADS=$t NUMAWARE_POLICY=$p LD_PRELOAD=$SHIM "$BLAS" 320 > "$WORK/out.txt" ||
            fail "blas_lapack: exit status $? under the shim ($p, $t threads)"
        cmp -s "$WORK/ref.txt" "$WORK/out.txt" || {
            diff "$WORK/ref.txt" "$WORK/out.txt" >&2 || true
            fail "blas_lapack: results differ from libgomp's ($p, $t threads)"
        }
        blas_runs=$((blas_runs + 1))
    done
done
echo "OpenBLAS (OpenMP build): dgemm, dsyrk, dpotrf, dgetrf, dgetrs, dgeqrf at 1-3 threads under every policy: $blas_runs runs, results bit-identical to libgomp's"
