// apps/qr/program.cpp — tiled QR factorisation (PLASMA-style).
//
// A is n x n, cut into nt x nt tiles of b x b (column-major inside, each
// tile contiguous and page-aligned). Each tile (m, k) has a T-factor tile
// of ib x b (ib = min(b, 32)) in its own page-aligned slot. For k = 0..nt-1:
//   GEQRT(k)      inout A(k,k); out T(k,k)            LAPACKE dgeqrt
//   UNMQR(k,n)    in A(k,k), T(k,k); inout A(k,n)      LAPACKE dgemqrt (Q^T from the left)
//   TSQRT(m,k)    inout A(k,k), A(m,k); out T(m,k)     LAPACKE dtpqrt, l = 0
//   TSMQR(m,n,k)  in A(m,k), T(m,k); inout A(k,n), A(m,n)   LAPACKE dtpmqrt, l = 0
// for n, m = k+1..nt-1. Initialisation tasks (out A(m,k)) first-touch the
// matrix; T tiles are first touched by the GEQRT/TSQRT that writes them.
//
// Hints (SA): a task goes to the owner of the tile it updates that is its
// own — GEQRT(k) to A(k,k), UNMQR(k,n) to A(k,n), TSQRT(m,k) to A(m,k),
// TSMQR(m,n,k) to A(m,n), init(m,k) to A(m,k) — where tile (m,k) belongs to
// cyclic_tile_owner_node(rt, m, k): the two-dimensional block-cyclic
// distribution over a P x Q grid of the nodes (apps/common/owners.hpp), so
// that every node keeps a share of the shrinking trailing matrix. T(m,k) is
// first touched by the task that writes it, so it lands with A(m,k).
//
// Check: LAPACKE_dgeqrf of the same matrix (column-major, serial). The R
// factor of a full-rank matrix is unique up to the sign of each row, so the
// check compares absolute values on and above the diagonal:
//   max | |R_tiled(i,j)| - |R_ref(i,j)| | / max |R_ref|  <=  1e-9.
// The matrix has uniform entries in [-0.5, 0.5) (full rank with
// probability 1; the observed error is ~1e-14 at n = 2048).
//
// Size: n = matrix order (1..8192), block = tile side b (must divide n);
// iterations is unused.
#include <lapacke.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "apps/common/task_program.hpp"
#include "apps/common/tiled_matrix.hpp"
#include "apps/qr/qr.hpp"
#include "apps/qr/reference.hpp"
#include "numaware/error.hpp"

namespace numaware::apps::qr {
namespace {

using tasks::in;
using tasks::inout;
using tasks::out;

constexpr double tolerance = 1e-9;

void check_info(int info, const char* routine) { check_lapack(info, routine, "qr"); }

struct Qr {
    TileLayout l;
    std::size_t ib = 0;
    std::size_t t_slot = 0;   // doubles per T tile slot
    double* a = nullptr;
    double* t = nullptr;

    double* A(std::size_t m, std::size_t k) const { return a + l.offset(m, k); }
    double* T(std::size_t m, std::size_t k) const { return t + (m * l.nt + k) * t_slot; }
    std::size_t t_bytes() const { return ib * l.b * sizeof(double); }

    void init(std::size_t m, std::size_t k) const {
        double* tile = A(m, k);
        for (std::size_t j = 0; j < l.b; ++j) {
            for (std::size_t i = 0; i < l.b; ++i) tile[j * l.b + i] = entry(m * l.b + i, k * l.b + j);
        }
    }
    void geqrt(std::size_t k) const {
        const int b = li(l.b), nb = li(ib);
        check_info(LAPACKE_dgeqrt_work(LAPACK_COL_MAJOR, b, b, nb, A(k, k), b, T(k, k), nb,
                                       scratch(ib * l.b)),
                   "dgeqrt");
    }
    void unmqr(std::size_t k, std::size_t n) const {
        const int b = li(l.b), nb = li(ib);
        check_info(LAPACKE_dgemqrt_work(LAPACK_COL_MAJOR, 'L', 'T', b, b, b, nb, A(k, k), b, T(k, k), nb, A(k, n),
                                        b, scratch(ib * l.b)),
                   "dgemqrt");
    }
    void tsqrt(std::size_t m, std::size_t k) const {
        const int b = li(l.b), nb = li(ib);
        check_info(LAPACKE_dtpqrt_work(LAPACK_COL_MAJOR, b, b, 0, nb, A(k, k), b, A(m, k), b, T(m, k), nb,
                                       scratch(ib * l.b)),
                   "dtpqrt");
    }
    void tsmqr(std::size_t m, std::size_t n, std::size_t k) const {
        const int b = li(l.b), nb = li(ib);
        check_info(LAPACKE_dtpmqrt_work(LAPACK_COL_MAJOR, 'L', 'T', b, b, b, 0, nb, A(m, k), b, T(m, k), nb,
                                        A(k, n), b, A(m, n), b, scratch(ib * l.b)),
                   "dtpmqrt");
    }
};

// Spawns the whole graph (no wait); returns the number of tasks.
std::size_t spawn_graph(tasks::Runtime& rt, const Qr& q) {
    const std::size_t nt = q.l.nt, ab = q.l.tile_bytes(), tb = q.t_bytes();
    auto owner = [&rt](std::size_t m, std::size_t k) { return cyclic_tile_owner_node(rt, m, k); };
    std::size_t spawned = 0;
    for (std::size_t m = 0; m < nt; ++m) {
        for (std::size_t k = 0; k < nt; ++k) {
            rt.spawn_on(owner(m, k), [&q, m, k] { q.init(m, k); }, {out(q.A(m, k), ab)});
            ++spawned;
        }
    }
    for (std::size_t k = 0; k < nt; ++k) {
        rt.spawn_on(owner(k, k), [&q, k] { q.geqrt(k); }, {inout(q.A(k, k), ab), out(q.T(k, k), tb)});
        ++spawned;
        for (std::size_t n = k + 1; n < nt; ++n) {
            rt.spawn_on(owner(k, n), [&q, k, n] { q.unmqr(k, n); },
                        {in(q.A(k, k), ab), in(q.T(k, k), tb), inout(q.A(k, n), ab)});
            ++spawned;
        }
        for (std::size_t m = k + 1; m < nt; ++m) {
            rt.spawn_on(owner(m, k), [&q, m, k] { q.tsqrt(m, k); },
                        {inout(q.A(k, k), ab), inout(q.A(m, k), ab), out(q.T(m, k), tb)});
            ++spawned;
            for (std::size_t n = k + 1; n < nt; ++n) {
                rt.spawn_on(owner(m, n), [&q, m, n, k] { q.tsmqr(m, n, k); },
                            {in(q.A(m, k), ab), in(q.T(m, k), tb), inout(q.A(k, n), ab), inout(q.A(m, n), ab)});
                ++spawned;
            }
        }
    }
    return spawned;
}

}  // namespace

AppRun run(tasks::Runtime& rt, const AppSize& given) {
    const AppSize size = checked_size(given, page_size());
    single_threaded_blas();

    Qr q;
    q.l = TileLayout(size.n, size.block);
    q.ib = std::min(q.l.b, max_inner_block);
    q.t_slot = page_slot<double>(q.ib * q.l.b);
    PageArray<double> a(q.l.total()), t(q.l.tiles() * q.t_slot);
    q.a = a.data();
    q.t = t.data();

    AppRun run;
    Stopwatch clock;
    run.tasks = run_graph(rt, [&] { return spawn_graph(rt, q); });
    run.seconds = clock.seconds();

    const std::size_t n = q.l.n;
    const std::vector<double> ref = reference(n);
    double scale = 0, diff = 0;
    for (std::size_t j = 0; j < n; ++j) {
        for (std::size_t i = 0; i <= j; ++i) {
            const double want = std::fabs(ref[j * n + i]);
            const double got = std::fabs(a[q.l.index(i, j)]);
            scale = std::max(scale, want);
            const double d = std::fabs(got - want);
            diff = std::isnan(d) ? HUGE_VAL : std::max(diff, d);
        }
    }
    run.max_error = scale > 0 ? diff / scale : diff;
    run.matches = run.max_error <= tolerance;
    run.detail = fmt::format(
        "matrix {0}x{0}, {1}x{1} tiles of {2}x{2}, inner block {3}; "
        "max ||R| - |R_dgeqrf|| / max|R_dgeqrf| tolerance {4:g}",
        n, q.l.nt, q.l.b, q.ib, tolerance);
    return run;
}

}  // namespace numaware::apps::qr
