#!/bin/bash
# tests/omp/real_programs.sh SHIM BLAS_LAPACK FFTW — OpenMP code that we did not
# write or compile, on libnumaware_omp.so (SHIM):
#   ImageMagick  Debian's `convert` (imagemagick), linked to libgomp: its
#                filters run `omp parallel for` with num_threads clauses and
#                nonmonotonic dynamic schedules, named critical sections,
#                single, sections (the FFT) and locks;
#   GraphicsMagick  Debian's `gm` (graphicsmagick), ImageMagick's fork,
#                whose filters have OpenMP loops of their own (static and
#                dynamic schedules, named critical sections);
#   OpenBLAS     Debian's OpenMP build (libopenblas0-openmp), its BLAS and
#                LAPACK regions driven by BLAS_LAPACK (tests/omp/real/);
#   FFTW         Debian's libfftw3_omp (libfftw3-dev), its threaded plans
#                (3-D, 2-D real, batched 1-D, DCT) driven by FFTW
#                (tests/omp/real/);
#   scikit-learn Debian's python3-sklearn, whose Cython `prange` loops run
#                on libgomp: k-means (Lloyd and Elkan: critical sections,
#                locks) and histogram gradient boosting; and threadpoolctl's
#                limit on OpenMP threads, which it sets through libgomp's
#                own handle (tools/omp/libgomp_icv.hpp); and k-means in
#                multiprocessing's fork pool, which libgomp's children
#                cannot run;
#   Numba        Debian's python3-numba, its OpenMP threading layer running
#                the prange loops of @njit(parallel=True) functions;
#   Clustal Omega  Debian's clustalo, a multiple sequence alignment whose
#                distance and alignment stages are OpenMP loops;
#   MMseqs2      Debian's mmseqs2, whose easy-cluster workflow runs OpenMP
#                stages as child processes and refuses a bound parent.
# Every run under the shim, at 1-3 threads and every NUMAWARE_POLICY, must
# give the bytes that the same program gives under libgomp at the same
# thread count. k-means sums its threads' partial results in whatever order
# they enter a critical section, so under libgomp too its figures differ
# between runs in the last bits: they are compared within 1e-9 (relative),
# and its labels, iteration counts and the boosting's results exactly.
# MMseqs2 runs at 2 threads under two policies (its stages are loops, not
# tasks) and writes its clusters in the order its threads finish: its
# lines are compared sorted.
# A run first proves that the program's GOMP_parallel binds
# to the shim (the dynamic linker's own report), so a shim that was not
# used cannot pass. scripts/bootstrap installs the packages; without them
# the test fails and says so.
set -euo pipefail
SHIM=${1:?usage: real_programs.sh SHIM BLAS_LAPACK FFTW}
BLAS=${2:?usage: real_programs.sh SHIM BLAS_LAPACK FFTW}
FFTW=${3:?usage: real_programs.sh SHIM BLAS_LAPACK FFTW}
case $SHIM in /*) ;; *) SHIM=$(pwd)/$SHIM ;; esac
[ -f "$SHIM" ] || { echo "FAIL: no such library: $SHIM" >&2; exit 1; }
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
policies="dfifo lq dep rip-dep rip-mw"
threads="1 2 3"

command -v convert > /dev/null || fail "ImageMagick's convert is not installed (Debian package imagemagick: scripts/bootstrap installs it)"
command -v gm > /dev/null || fail "GraphicsMagick's gm is not installed (Debian package graphicsmagick: scripts/bootstrap installs it)"
multiarch=$(gcc -print-multiarch)
OPENBLAS_OMP=/usr/lib/$multiarch/openblas-openmp
[ -f "$OPENBLAS_OMP/libopenblas.so.0" ] ||
    fail "OpenBLAS's OpenMP build is not installed (Debian package libopenblas0-openmp: scripts/bootstrap installs it)"

# The program's GOMP_parallel must resolve to the shim.
bound_to_shim() {   # PROGRAM ARGS...
    LD_DEBUG=bindings LD_DEBUG_OUTPUT="$WORK/ld" LD_PRELOAD=$SHIM "$@" > /dev/null
    # Not grep -q: it would stop reading at the first match, and the first
    # grep, killed by SIGPIPE while writing the rest (a program of many
    # processes, MMseqs2's), would fail the pipeline under pipefail.
    grep -h "normal symbol \`GOMP_parallel'" "$WORK"/ld.* | grep "to $SHIM " > /dev/null ||
        fail "$1: GOMP_parallel did not bind to $SHIM"
    rm -f "$WORK"/ld.*
}

# Each operation of the array named OPS through the image tool TOOL... (its
# words) on $WORK/in.png, at every thread count: under libgomp, then under
# the shim with every policy; each image must be byte-identical to
# libgomp's. matched_runs: the shim's runs.
images_match() {   # OPS TOOL...
    local -n list=$1
    shift
    local i t p op
    matched_runs=0
    for i in "${!list[@]}"; do
        read -r -a op <<< "${list[$i]}"
        for t in $threads; do
            OMP_NUM_THREADS=$t "$@" "$WORK/in.png" "${op[@]}" -depth 16 "ppm:$WORK/ref.ppm" ||
                fail "$* ${list[$i]} failed under libgomp at $t threads"
            for p in $policies; do
                OMP_NUM_THREADS=$t NUMAWARE_POLICY=$p LD_PRELOAD=$SHIM \
                    "$@" "$WORK/in.png" "${op[@]}" -depth 16 "ppm:$WORK/out.ppm" ||
                    fail "$* ${list[$i]}: exit status $? under the shim ($p, $t threads)"
                cmp -s "$WORK/ref.ppm" "$WORK/out.ppm" ||
                    fail "$* ${list[$i]}: the image differs from libgomp's ($p, $t threads)"
                matched_runs=$((matched_runs + 1))
            done
        done
    done
}

# PROGRAM ARG at every thread count: under libgomp, whose first line must
# be FIRST_LINE (THREADS in it: the thread count; WRONG says what else it
# means), then under the shim with every policy; the output must be
# byte-identical to libgomp's. matched_runs: the shim's runs.
results_match() {   # LABEL FIRST_LINE WRONG PROGRAM ARG
    local label=$1 first=$2 wrong=$3 prog=$4 arg=$5 t p
    matched_runs=0
    for t in $threads; do
        OMP_NUM_THREADS=$t "$prog" "$arg" > "$WORK/ref.txt" || fail "$label failed under libgomp at $t threads"
        head -n 1 "$WORK/ref.txt" | grep -qx "${first//THREADS/$t}" ||
            fail "$wrong: $(head -n 1 "$WORK/ref.txt") (OMP_NUM_THREADS=$t, libgomp)"
        for p in $policies; do
            OMP_NUM_THREADS=$t NUMAWARE_POLICY=$p LD_PRELOAD=$SHIM "$prog" "$arg" > "$WORK/out.txt" ||
                fail "$label: exit status $? under the shim ($p, $t threads)"
            cmp -s "$WORK/ref.txt" "$WORK/out.txt" || {
                diff "$WORK/ref.txt" "$WORK/out.txt" >&2 || true
                fail "$label: results differ from libgomp's ($p, $t threads)"
            }
            matched_runs=$((matched_runs + 1))
        done
    done
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
images_match ops convert
echo "ImageMagick: ${#ops[@]} operations at 1-3 threads under every policy: $matched_runs runs, images byte-identical to libgomp's"

# ---- GraphicsMagick -----------------------------------------------------------
# The same input; GraphicsMagick's own filters (its OpenMP code is not
# ImageMagick's since the fork).
gm_ops=(
    "-blur 0x3"
    "-rotate 33"
    "-median 2"
    "-charcoal 2"
    "-despeckle"
    "-convolve 1,2,1,2,4,2,1,2,1"
    "-paint 3"
    "-segment 1x1.5"
    "-motion-blur 0x5+30"
    "-colors 64 -equalize"
)
bound_to_shim gm convert "$WORK/in.png" -blur 0x1 "ppm:$WORK/probe.ppm"
images_match gm_ops gm convert
echo "GraphicsMagick: ${#gm_ops[@]} operations at 1-3 threads under every policy: $matched_runs runs, images byte-identical to libgomp's"

# ---- FFTW (OpenMP build) -------------------------------------------------------
bound_to_shim "$FFTW" 16
results_match fftw_transforms "plan threads THREADS" "fftw_transforms planned for another thread count" "$FFTW" 48
echo "FFTW (OpenMP build): 3-D complex, 2-D real, batched 1-D and DCT plans at 1-3 threads under every policy: $matched_runs runs, results bit-identical to libgomp's"

# ---- OpenBLAS (OpenMP build) ----------------------------------------------
export LD_LIBRARY_PATH=$OPENBLAS_OMP${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
bound_to_shim "$BLAS" 64
results_match blas_lapack "openblas_get_parallel 2" "the loaded OpenBLAS is not its OpenMP build" "$BLAS" 320
echo "OpenBLAS (OpenMP build): dgemm, dsyrk, dpotrf, dgetrf, dgetrs, dgeqrf at 1-3 threads under every policy: $matched_runs runs, results bit-identical to libgomp's"

# ---- scikit-learn -----------------------------------------------------------
cat > "$WORK/sk.py" <<'PY'
import hashlib, json, sys
import numpy as np
from sklearn.cluster import KMeans
from sklearn.ensemble import HistGradientBoostingClassifier

rng = np.random.RandomState(0)
X = rng.rand(6000, 6)
out = {}
for algorithm in ("lloyd", "elkan"):
    km = KMeans(n_clusters=5, n_init=2, algorithm=algorithm, random_state=1).fit(X)
    out[algorithm] = {"inertia": km.inertia_, "n_iter": int(km.n_iter_),
                      "centers": km.cluster_centers_.ravel().tolist(),
                      "labels": hashlib.sha256(km.labels_.astype(np.int64).tobytes()).hexdigest()}
# threadpoolctl's limit on OpenMP reaches the runtime that runs the loops:
# scikit-learn's own count of OpenMP threads, inside the limit and after.
from threadpoolctl import threadpool_limits
from sklearn.utils._openmp_helpers import _openmp_effective_n_threads
with threadpool_limits(limits=1, user_api="openmp"):
    inside = _openmp_effective_n_threads()
    km = KMeans(n_clusters=5, n_init=1, random_state=1).fit(X)
out["threadpoolctl"] = [inside, _openmp_effective_n_threads(), hashlib.sha256(km.labels_.astype(np.int64).tobytes()).hexdigest()]
y = (X[:, 0] + X[:, 1] ** 2 > 0.8).astype(int)
clf = HistGradientBoostingClassifier(max_iter=15, random_state=0).fit(X[:4500], y[:4500])
out["hgb"] = hashlib.sha256(clf.predict_proba(X[4500:]).tobytes()).hexdigest()
if len(sys.argv) == 2:
    json.dump(out, open(sys.argv[1], "w"))
    sys.exit(0)
ref = json.load(open(sys.argv[2]))
close = lambda a, b: abs(a - b) <= 1e-9 * max(1.0, abs(b))
for algorithm in ("lloyd", "elkan"):
    o, r = out[algorithm], ref[algorithm]
    assert o["n_iter"] == r["n_iter"] and o["labels"] == r["labels"], f"k-means ({algorithm}): labels or iterations differ"
    assert close(o["inertia"], r["inertia"]), f"k-means ({algorithm}): inertia {o['inertia']!r} against {r['inertia']!r}"
    assert all(close(a, b) for a, b in zip(o["centers"], r["centers"])), f"k-means ({algorithm}): centers differ"
assert out["hgb"] == ref["hgb"], "gradient boosting: probabilities differ"
assert out["threadpoolctl"] == ref["threadpoolctl"], f"threadpool_limits(1, 'openmp'): {out['threadpoolctl'][:2]} threads inside and after, libgomp {ref['threadpoolctl'][:2]}"
PY
# Debian's interpreter, which sees Debian's python3-sklearn (another
# python3 may come first in PATH).
PY3=/usr/bin/python3
"$PY3" -c 'import sklearn' 2> /dev/null ||
    fail "scikit-learn is not installed (Debian package python3-sklearn: scripts/bootstrap installs it)"
bound_to_shim "$PY3" -c 'from sklearn.cluster import KMeans; import numpy; KMeans(n_clusters=2, n_init=1).fit(numpy.random.rand(64, 2))'
sk_runs=0
for t in $threads; do
    OMP_NUM_THREADS=$t "$PY3" "$WORK/sk.py" "$WORK/ref.json" || fail "scikit-learn failed under libgomp at $t threads"
    for p in $policies; do
        OMP_NUM_THREADS=$t NUMAWARE_POLICY=$p LD_PRELOAD=$SHIM "$PY3" "$WORK/sk.py" "$WORK/out.json" "$WORK/ref.json" ||
            fail "scikit-learn: results differ from libgomp's, or the run failed ($p, $t threads)"
        sk_runs=$((sk_runs + 1))
    done
done
echo "scikit-learn: k-means (Lloyd, Elkan), gradient boosting and threadpoolctl's OpenMP limit at 1-3 threads under every policy: $sk_runs runs, results as libgomp's"

# multiprocessing's fork pool after the parent fitted a model: under
# libgomp the children wait for ever for the parent's pool threads; under
# the shim (docs/OPENMP.md, fork()) each child's k-means must end as the
# same fits do in the parent itself.
cat > "$WORK/mp.py" <<'PY'
import multiprocessing, sys
import numpy as np
from sklearn.cluster import KMeans
X = np.random.RandomState(0).rand(3000, 4)
def fit(seed):
    m = KMeans(n_clusters=3, n_init=1, random_state=seed).fit(X)
    return int(m.n_iter_), m.labels_.tolist()
here = [fit(s) for s in (1, 2, 3)]
with multiprocessing.get_context("fork").Pool(2) as pool:
    there = pool.map(fit, [1, 2, 3])
assert [h[0] for h in here] == [t[0] for t in there], f"iterations: parent {[h[0] for h in here]}, children {[t[0] for t in there]}"
assert all(h[1] == t[1] for h, t in zip(here, there)), "labels differ between parent and children"
assert fit(4)[0] > 0
print(len(there))
PY
for p in dfifo rip-dep; do
    out=$(OMP_NUM_THREADS=2 NUMAWARE_POLICY=$p LD_PRELOAD=$SHIM timeout 120 "$PY3" "$WORK/mp.py") ||
        fail "scikit-learn in multiprocessing's fork pool ($p): status $? (124: a child still waiting)"
    [ "$out" = 3 ] || fail "scikit-learn in multiprocessing's fork pool ($p): printed '$out'"
done
echo "scikit-learn: k-means in multiprocessing's fork pool after the parent's, under dfifo and rip-dep: as in the parent"

# What the interpreter passes on after an OpenMP fit: its own CPUs, a
# Python thread's, a subprocess's and joblib's worker processes' (loky, as
# scikit-learn's n_jobs starts them) must be those it started with, as
# under libgomp, which binds nothing unless asked. Until 2026-12-07 the
# shim bound the initial thread by default, and all of these ran on its
# one CPU.
cat > "$WORK/after.py" <<'PY'
import os, subprocess, sys, threading
import numpy as np
from joblib import Parallel, delayed
from sklearn.cluster import KMeans

def cpus():
    return sorted(os.sched_getaffinity(0))

start = cpus()
KMeans(n_clusters=3, n_init=1, random_state=0).fit(np.random.RandomState(0).rand(4000, 4))
seen = {"the interpreter": cpus()}
t = threading.Thread(target=lambda: seen.update({"a Python thread": cpus()}))
t.start()
t.join()
child = subprocess.run([sys.executable, "-c", "import os; print(*sorted(os.sched_getaffinity(0)))"],
                       capture_output=True, text=True, check=True)
seen["a subprocess"] = [int(c) for c in child.stdout.split()]
for i, c in enumerate(Parallel(n_jobs=2)(delayed(cpus)() for _ in range(2))):
    seen[f"joblib worker {i}"] = c
for who, c in seen.items():
    print(f"{who}: {'as at start' if c == start else c}")
PY
want=$(OMP_NUM_THREADS=2 "$PY3" "$WORK/after.py") || fail "after.py failed under libgomp"
got=$(OMP_NUM_THREADS=2 LD_PRELOAD=$SHIM "$PY3" "$WORK/after.py") || fail "after.py failed under the shim"
[ "$got" = "$want" ] || fail "scikit-learn: what the interpreter passes on after a fit differs from libgomp's: $got"
[ "$(grep -c ': as at start$' <<< "$got")" = 5 ] || fail "scikit-learn: after a fit, not every thread and process has the start's CPUs: $got"
echo "scikit-learn: after a fit, the interpreter, a thread, a subprocess and joblib's workers keep the CPUs it started with, as under libgomp"

# ---- Numba ----------------------------------------------------------------
# Debian's python3-numba with its OpenMP threading layer
# (NUMBA_THREADING_LAYER=omp: its omppool library, linked to libgomp, runs
# the `prange` loops of @njit(parallel=True) functions): a reduction over a
# prange, a loop of uneven iterations, and numba.set_num_threads inside
# the team's limit. Its partial sums are combined in thread order, so the
# output is compared byte for byte; its first word says that the OpenMP
# layer ran, and its second the thread count.
cat > "$WORK/nb.py" <<'PY'
import hashlib, os
# Numba sizes its pool by NUMBA_NUM_THREADS (default: the CPUs), not by
# OMP_NUM_THREADS: the thread count asked for goes to both.
os.environ["NUMBA_NUM_THREADS"] = os.environ.get("OMP_NUM_THREADS", "2")
import numba
import numpy as np
from numba import njit, prange

@njit(parallel=True)
def weighted(a):
    s = 0.0
    for i in prange(a.shape[0]):
        s += np.sin(a[i]) * a[i]
    return s

@njit(parallel=True)
def uneven(a):
    out = np.empty_like(a)
    for i in prange(a.shape[0]):
        acc = 0.0
        for j in range(i % 97):
            acc += j * a[i]
        out[i] = acc
    return out

a = np.arange(100000, dtype=np.float64) / 7.0
first, second = weighted(a), uneven(a)
numba.set_num_threads(1)
alone = weighted(a)
print(numba.threading_layer(), numba.config.NUMBA_NUM_THREADS, repr(first),
      hashlib.sha256(second.tobytes()).hexdigest(), repr(alone))
PY
"$PY3" -c 'import numba' 2> /dev/null ||
    fail "Numba is not installed (Debian package python3-numba: scripts/bootstrap installs it)"
export NUMBA_THREADING_LAYER=omp
bound_to_shim "$PY3" "$WORK/nb.py"
results_match numba "omp THREADS .*" "Numba did not run its OpenMP threading layer" "$PY3" "$WORK/nb.py"
unset NUMBA_THREADING_LAYER
echo "Numba (OpenMP threading layer): prange reductions and uneven loops at 1-3 threads under every policy: $matched_runs runs, results bit-identical to libgomp's"

# ---- Clustal Omega ------------------------------------------------------------
# Debian's clustalo: its pairwise distances and alignment stages run
# OpenMP loops (--threads). 40 protein sequences of about 200 residues,
# made once from a seeded generator: the alignment and the guide tree must
# be byte-identical to libgomp's at the same thread count.
command -v clustalo > /dev/null || fail "Clustal Omega is not installed (Debian package clustalo: scripts/bootstrap installs it)"
"$PY3" - "$WORK/seqs.fa" <<'PY'
import random, sys
rng = random.Random(4)
residues = "ACDEFGHIKLMNPQRSTVWY"
base = [rng.choice(residues) for _ in range(200)]
with open(sys.argv[1], "w") as f:
    for i in range(40):
        s = list(base)
        for _ in range(40):
            j, r = rng.randrange(len(s)), rng.random()
            if r < 0.6:
                s[j] = rng.choice(residues)
            elif r < 0.8:
                del s[j]
            else:
                s.insert(j, rng.choice(residues))
        f.write(f">s{i}\n{''.join(s)}\n")
PY
bound_to_shim clustalo -i "$WORK/seqs.fa" --threads=2 --force -o "$WORK/probe.aln"
# clustalo takes its thread count from --threads: this prints the count
# asked for, then the alignment and the guide tree made with it.
cat > "$WORK/clustal.sh" <<'SH'
#!/bin/sh
echo "threads $OMP_NUM_THREADS"
clustalo -i "$1" --threads="$OMP_NUM_THREADS" --force -o "$1.aln" --guidetree-out="$1.tree" && cat "$1.aln" "$1.tree"
SH
chmod +x "$WORK/clustal.sh"
results_match clustalo "threads THREADS" "clustal.sh did not pass the thread count" "$WORK/clustal.sh" "$WORK/seqs.fa"
echo "Clustal Omega: 40 sequences aligned at 1-3 threads under every policy: $matched_runs runs, alignments and guide trees byte-identical to libgomp's"

# ---- MMseqs2 ------------------------------------------------------------------
# Debian's mmseqs2: easy-cluster runs its stages as child processes, each
# an OpenMP program, and refuses to start unless omp_get_proc_bind() is
# false (a bound parent would pass its CPU on to them): under the shim's
# default it must run. 300 protein sequences in 60 families, made once from
# a seeded generator: the clusters must be libgomp's. MMseqs2 writes them
# in the order its threads finish, under libgomp too, so the lines are
# compared sorted.
command -v mmseqs > /dev/null || fail "MMseqs2 is not installed (Debian package mmseqs2: scripts/bootstrap installs it)"
"$PY3" - "$WORK/families.fa" <<'PY'
import random, sys
rng = random.Random(9)
residues = "ACDEFGHIKLMNPQRSTVWY"
with open(sys.argv[1], "w") as f:
    for fam in range(60):
        base = [rng.choice(residues) for _ in range(rng.randint(120, 300))]
        for m in range(5):
            s = [c if rng.random() > 0.12 else rng.choice(residues) for c in base]
            f.write(f">f{fam}m{m}\n{''.join(s)}\n")
PY
bound_to_shim mmseqs easy-cluster "$WORK/families.fa" "$WORK/probe" "$WORK/probe.tmp" --threads 2 -v 1
clusters() {   # PREFIX: the sorted member lines and representatives
    sort "$1_cluster.tsv"
    grep '^>' "$1_rep_seq.fasta" | sort
}
mmseqs easy-cluster "$WORK/families.fa" "$WORK/mm_ref" "$WORK/mm_ref.tmp" --threads 2 -v 1 ||
    fail "MMseqs2 easy-cluster failed under libgomp"
for p in dep dfifo; do
    NUMAWARE_POLICY=$p LD_PRELOAD=$SHIM mmseqs easy-cluster "$WORK/families.fa" "$WORK/mm_$p" "$WORK/mm_$p.tmp" \
        --threads 2 -v 1 || fail "MMseqs2 easy-cluster under the shim ($p): status $?"
    [ "$(clusters "$WORK/mm_$p")" = "$(clusters "$WORK/mm_ref")" ] || fail "MMseqs2: clusters differ from libgomp's ($p)"
done
echo "MMseqs2: easy-cluster of 300 sequences under the shim's default binding, dep and dfifo: $(grep -c '^>' "$WORK/mm_ref_rep_seq.fasta") clusters, as libgomp's"
