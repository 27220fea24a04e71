// sim/memory/nas_cg.cpp — CG: the conjugate-gradient iteration of NPB's CG
// kernel.
//
// Source of the algorithm: Bailey et al., "The NAS Parallel Benchmarks"
// (RNR-91-002, 1991), kernel CG: the inverse power method whose inner
// solve is a conjugate-gradient iteration on a random sparse symmetric
// matrix; each CG iteration is one sparse matrix-vector product q = A p,
// two dot products and three vector updates (z += αp, r -= αq, p = r + βp).
// The OpenMP version (Jin, Frumkin, Yan, NAS-99-011) cuts every loop over
// rows statically across threads.
//
// Modelled: the matrix in CSR (row pointers and column indices of 4 bytes,
// values of 8), rows cut statically; per row the two row pointers, then per
// nonzero its column index, the gather p[col] (an indirect access: its
// address is the column index just loaded) and the value; q[i] stored. Then
// the vector loops, one phase each: p·q, z and r updated in one loop, r·r,
// p = r + βp. Init: each thread writes its rows of the matrix and of the
// vectors, as NPB's parallel initialisation first-touches them. The matrix:
// the diagonal plus nonzeros_per_row - 1 distinct random columns per row,
// sorted, from a seeded generator, the same for any thread count.
// Left out: NPB's matrix generator (a sum of random sparse outer products,
// whose rows are not all the same length) and its shift; the outer power
// iteration (the residual norm, x = z / ||z||); the scalar work of the
// reductions (combining per-thread sums).
// Accesses per CG iteration: rows × (3 × nonzeros_per_row + 15).
#include <algorithm>
#include <memory>
#include <vector>

#include "sim/memory/loop_kernel.hpp"
#include "sim/memory/nas_common.hpp"
#include "sim/memory/nas_kernels.hpp"

namespace numaware::sim::memory::nas {

using detail::base_of;
using detail::each;
using detail::Emitter;
using detail::Range;
using detail::Share;
using detail::static_block;

CgSize cg_size(char cls) {
    CgSize s;
    if (cls == 'S') {
        s.rows = 4096;
        s.nonzeros_per_row = 8;
        s.iterations = 2;
    } else if (cls == 'W') {
        // NPB class W: na 7000, nonzer 8. NPB's matrix is a sum of outer
        // products of sparse vectors of nonzer + 1 entries, at most
        // (nonzer + 1)² = 81 a row (duplicates merge, so its rows are a
        // little shorter). Matrix 7000 × 81 × 12 B = 6.5 MiB.
        s.rows = 7000;
        s.nonzeros_per_row = 81;
        s.iterations = 2;
    } else {
        // Matrix 2^17 × 16 × 12 B = 24 MiB, vectors 4 × 1 MiB: above the 16 MiB of L3.
        s.rows = std::uint64_t{1} << 17;
        s.nonzeros_per_row = 16;
        s.iterations = 2;
    }
    return s;
}

namespace {

enum Array : unsigned { rowstr, colidx, values, vec_p, vec_q, vec_r, vec_z };

std::uint64_t u32_at(Array a, std::uint64_t i) { return base_of(a) + i * 4; }
std::uint64_t f64_at(Array a, std::uint64_t i) { return base_of(a) + i * 8; }

// The column indices, row after row: the diagonal and nonzeros - 1 other
// distinct columns drawn uniformly, sorted within the row.
std::vector<std::uint32_t> random_columns(const CgSize& s) {
    std::vector<std::uint32_t> cols(s.rows * s.nonzeros_per_row);
    std::mt19937_64 rng(s.seed);
    std::vector<std::uint32_t> row;
    for (std::uint64_t i = 0; i < s.rows; ++i) {
        row.assign(1, static_cast<std::uint32_t>(i));
        while (row.size() < s.nonzeros_per_row) {
            const auto c = static_cast<std::uint32_t>(draw_below(rng, s.rows));
            if (std::find(row.begin(), row.end(), c) == row.end()) row.push_back(c);
        }
        std::sort(row.begin(), row.end());
        std::copy(row.begin(), row.end(), cols.begin() + static_cast<std::ptrdiff_t>(i * s.nonzeros_per_row));
    }
    return cols;
}

class Cg final : public detail::LoopKernel {
public:
    Cg(const CgSize& s, std::string name) : LoopKernel(std::move(name)) {
        const std::uint64_t n = s.rows;
        const std::uint64_t k = s.nonzeros_per_row;
        const auto cols = std::make_shared<const std::vector<std::uint32_t>>(random_columns(s));
        // A segment is emitted whole and then replayed a batch at a time:
        // 8 rows of class A are about 500 accesses (16 KB) a thread, so 16
        // threads' segments stay in the host's L2 (64 rows did not).
        constexpr std::uint64_t rows_per_segment = 8;
        // Init: each thread writes its rows of everything.
        add_loop("init", false, [n, k](unsigned r, unsigned t) {
            return each(static_block(n, t, r), rows_per_segment, [n, k](std::uint64_t i, Emitter& e) {
                e.store(u32_at(rowstr, i), 1, 1, 4);
                if (i + 1 == n) e.store(u32_at(rowstr, n), 1, 1, 4);
                for (std::uint64_t j = i * k; j < (i + 1) * k; ++j) {
                    e.store(u32_at(colidx, j), 2, 1, 4);
                    e.store(f64_at(values, j), 3, 1);
                }
                for (Array v : {vec_p, vec_q, vec_r, vec_z}) e.store(f64_at(v, i), 4 + v, 1);
            });
        });
        for (unsigned it = 1; it <= s.iterations; ++it) {
            const std::string pre = fmt::format("iter{}:", it);
            // q = A p.
            add_loop(pre + "spmv", true, [n, k, cols](unsigned r, unsigned t) {
                return each(static_block(n, t, r), rows_per_segment, [k, cols](std::uint64_t i, Emitter& e) {
                    e.load(u32_at(rowstr, i), 20, 2, 4);
                    e.load(u32_at(rowstr, i + 1), 21, 0, 4);
                    for (std::uint64_t j = i * k; j < (i + 1) * k; ++j) {
                        e.load(u32_at(colidx, j), 22, 2, 4);
                        e.load_indirect(f64_at(vec_p, (*cols)[j]), 23, 0);
                        e.load(f64_at(values, j), 24, 0);
                    }
                    e.store(f64_at(vec_q, i), 25, 1);
                });
            });
            // d = p·q.
            add_loop(pre + "dot-pq", true, [n](unsigned r, unsigned t) {
                return each(static_block(n, t, r), rows_per_segment, [](std::uint64_t i, Emitter& e) {
                    e.load(f64_at(vec_p, i), 30, 2);
                    e.load(f64_at(vec_q, i), 31, 0);
                });
            });
            // z += αp; r -= αq (one loop).
            add_loop(pre + "axpy-zr", true, [n](unsigned r, unsigned t) {
                return each(static_block(n, t, r), rows_per_segment, [](std::uint64_t i, Emitter& e) {
                    e.load(f64_at(vec_z, i), 40, 2);
                    e.load(f64_at(vec_p, i), 41, 0);
                    e.store(f64_at(vec_z, i), 42, 1);
                    e.load(f64_at(vec_r, i), 43, 0);
                    e.load(f64_at(vec_q, i), 44, 0);
                    e.store(f64_at(vec_r, i), 45, 1);
                });
            });
            // ρ = r·r.
            add_loop(pre + "dot-rr", true, [n](unsigned r, unsigned t) {
                return each(static_block(n, t, r), rows_per_segment,
                            [](std::uint64_t i, Emitter& e) { e.load(f64_at(vec_r, i), 50, 2); });
            });
            // p = r + βp.
            add_loop(pre + "update-p", true, [n](unsigned r, unsigned t) {
                return each(static_block(n, t, r), rows_per_segment, [](std::uint64_t i, Emitter& e) {
                    e.load(f64_at(vec_r, i), 60, 2);
                    e.load(f64_at(vec_p, i), 61, 0);
                    e.store(f64_at(vec_p, i), 62, 1);
                });
            });
        }
    }
};

}  // namespace

std::unique_ptr<Workload> make_cg(const CgSize& s, std::string name) {
    require(s.rows >= 2 && s.rows <= (std::uint64_t{1} << 24), name, "rows must be 2 to 2^24");
    require(s.nonzeros_per_row >= 1 && s.nonzeros_per_row <= s.rows && s.nonzeros_per_row <= 1024, name,
            "nonzeros per row must be 1 to min(rows, 1024)");
    require(s.iterations >= 1 && s.iterations <= 100, name, "iterations must be 1 to 100");
    return std::make_unique<Cg>(s, std::move(name));
}

}  // namespace numaware::sim::memory::nas
