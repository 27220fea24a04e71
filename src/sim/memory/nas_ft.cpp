// sim/memory/nas_ft.cpp — FT: time steps of a PDE solved by 3-D FFTs, the
// pattern of NPB's FT kernel.
//
// Source of the algorithm: Bailey et al., "The NAS Parallel Benchmarks"
// (RNR-91-002, 1991), kernel FT: a 3-D partial differential equation
// solved with FFTs; the initial condition is transformed once, then each
// time step multiplies every point by an exponential factor (evolve) and
// takes the inverse 3-D FFT, a 1-D FFT along every line in x, then in y,
// then in z. The OpenMP version (NAS-99-011) cuts the x and y passes by z
// plane and the z pass by y row, so the z pass reads every thread's planes
// (the all-to-all transpose of the MPI version).
//
// Modelled: complex grids u0, u1 of nx × ny × nz × 16 B (x fastest), the
// factor array (8 B per point) and a table of roots of unity. Per time
// step, one phase each: evolve (u0 *= factor, u1 = u0), then the x, y and
// z passes over u1: for each 1-D line, an in-place radix-2
// decimation-in-frequency FFT directly on the grid: log2(m) stages of m/2
// butterflies, each a root load, two point loads and two point stores, so
// the stride between butterflies is 16 B along x, nx × 16 along y and
// nx × ny × 16 along z. Init: each thread first-touches its z planes of
// the three grids; thread 0 the roots.
// Left out: the bit-reversal permutation, NPB's copy of blocks of lines
// into a contiguous scratch array before each 1-D FFT (its Stockham
// variant runs there), the initial forward FFT and the checksum.
// Accesses per time step: 4N + 2.5 N log2(N), N = nx × ny × nz.
#include <algorithm>
#include <memory>
#include <vector>

#include "sim/memory/loop_kernel.hpp"
#include "sim/memory/nas_common.hpp"
#include "sim/memory/nas_kernels.hpp"

namespace numaware::sim::memory::nas {

using detail::base_of;
using detail::concat;
using detail::each;
using detail::Emitter;
using detail::Range;
using detail::Share;
using detail::static_block;

FtSize ft_size(char cls) {
    FtSize s;
    if (cls == 'S') {
        s.nx = 32;
        s.ny = 32;
        s.nz = 16;
        s.iterations = 1;
    } else if (cls == 'W') {
        // NPB class W: 128 × 128 × 32 (NPB's 6 steps cut to 1): u0, u1
        // 2 × 8 MiB, the factors 4 MiB.
        s.nx = 128;
        s.ny = 128;
        s.nz = 32;
        s.iterations = 1;
    } else {
        // u0, u1: 2 × 8 MiB, the factors 4 MiB.
        s.nx = 128;
        s.ny = 64;
        s.nz = 64;
        s.iterations = 1;
    }
    return s;
}

namespace {

enum Array : unsigned { grid_u0, grid_u1, factors, roots };
enum Pc : std::uint32_t { pc_init = 100, pc_evolve = 200, pc_fft = 300 };

struct Dims {
    std::uint64_t nx, ny, nz;
    std::uint64_t points() const { return nx * ny * nz; }
    std::uint64_t at(Array a, std::uint64_t i, std::uint64_t j, std::uint64_t k) const {
        return base_of(a) + ((k * ny + j) * nx + i) * 16;
    }
    std::uint64_t factor(std::uint64_t i, std::uint64_t j, std::uint64_t k) const {
        return base_of(factors) + ((k * ny + j) * nx + i) * 8;
    }
};

// In-place radix-2 DIF FFT of the line of m points at `first`, `stride`
// bytes apart; the roots table holds `rmax` roots of order 2 × rmax.
void fft_line(Emitter& e, std::uint64_t first, std::uint64_t stride, std::uint64_t m, std::uint64_t rmax,
              std::uint32_t pc) {
    for (std::uint64_t h = m / 2; h >= 1; h /= 2) {
        for (std::uint64_t blk = 0; blk < m; blk += 2 * h)
            for (std::uint64_t q = 0; q < h; ++q) {
                const std::uint64_t a = first + (blk + q) * stride, b = a + h * stride;
                e.load(base_of(roots) + q * (rmax / h) * 16, pc, 2, 16);
                e.load(a, pc + 1, 1, 16);
                e.load(b, pc + 2, 0, 16);
                e.store(a, pc + 3, 6, 16);
                e.store(b, pc + 4, 0, 16);
            }
    }
}

class Ft final : public detail::LoopKernel {
public:
    Ft(const FtSize& s, std::string name) : LoopKernel(std::move(name)) {
        const Dims d{s.nx, s.ny, s.nz};
        const std::uint64_t rmax = std::max({d.nx, d.ny, d.nz}) / 2;
        // A share over whole z planes `planes`: body(i, j, k) for each point, one row a segment.
        const auto by_plane = [d](Range planes, auto body) {
            return each(Range{planes.begin * d.ny, planes.end * d.ny}, 1, [d, body](std::uint64_t row, Emitter& e) {
                for (std::uint64_t i = 0; i < d.nx; ++i) body(i, row % d.ny, row / d.ny, e);
            });
        };
        add_loop("init", false, [d, rmax, by_plane](unsigned r, unsigned t) {
            Share roots_share = r != 0 ? Share{} : each(Range{0, rmax}, 4096, [](std::uint64_t q, Emitter& e) {
                e.store(base_of(roots) + q * 16, pc_init, 1, 16);
            });
            Share grids = by_plane(static_block(d.nz, t, r), [d](auto i, auto j, auto k, Emitter& e) {
                e.store(d.at(grid_u0, i, j, k), pc_init + 1, 1, 16);
                e.store(d.at(grid_u1, i, j, k), pc_init + 2, 1, 16);
                e.store(d.factor(i, j, k), pc_init + 3, 1);
            });
            std::vector<Share> parts;
            parts.push_back(std::move(roots_share));
            parts.push_back(std::move(grids));
            return concat(std::move(parts));
        });
        for (unsigned it = 1; it <= s.iterations; ++it) {
            const std::string pre = fmt::format("iter{}:", it);
            add_loop(pre + "evolve", true, [d, by_plane](unsigned r, unsigned t) {
                return by_plane(static_block(d.nz, t, r), [d](auto i, auto j, auto k, Emitter& e) {
                    e.load(d.at(grid_u0, i, j, k), pc_evolve, 2, 16);
                    e.load(d.factor(i, j, k), pc_evolve + 1, 0);
                    e.store(d.at(grid_u0, i, j, k), pc_evolve + 2, 2, 16);
                    e.store(d.at(grid_u1, i, j, k), pc_evolve + 3, 0, 16);
                });
            });
            // x: lines (j, k) by z plane.
            add_loop(pre + "fft-x", true, [d, rmax](unsigned r, unsigned t) {
                const Range planes = static_block(d.nz, t, r);
                return each(Range{planes.begin * d.ny, planes.end * d.ny}, 1, [d, rmax](std::uint64_t line, Emitter& e) {
                    fft_line(e, d.at(grid_u1, 0, line % d.ny, line / d.ny), 16, d.nx, rmax, pc_fft);
                });
            });
            // y: lines (i, k) by z plane.
            add_loop(pre + "fft-y", true, [d, rmax](unsigned r, unsigned t) {
                const Range planes = static_block(d.nz, t, r);
                return each(Range{planes.begin * d.nx, planes.end * d.nx}, 1, [d, rmax](std::uint64_t line, Emitter& e) {
                    fft_line(e, d.at(grid_u1, line % d.nx, 0, line / d.nx), d.nx * 16, d.ny, rmax, pc_fft);
                });
            });
            // z: lines (i, j) by y row: every thread reads every plane.
            add_loop(pre + "fft-z", true, [d, rmax](unsigned r, unsigned t) {
                const Range rows = static_block(d.ny, t, r);
                return each(Range{rows.begin * d.nx, rows.end * d.nx}, 1, [d, rmax](std::uint64_t line, Emitter& e) {
                    fft_line(e, d.at(grid_u1, line % d.nx, line / d.nx, 0), d.nx * d.ny * 16, d.nz, rmax, pc_fft);
                });
            });
        }
    }
};

}  // namespace

std::unique_ptr<Workload> make_ft(const FtSize& s, std::string name) {
    for (unsigned n : {s.nx, s.ny, s.nz})
        require(is_pow2(n) && n >= 2 && n <= 1024, name, "nx, ny and nz must be powers of two, 2 to 1024");
    require(std::uint64_t{s.nx} * s.ny * s.nz <= (std::uint64_t{1} << 25), name, "nx × ny × nz must be at most 2^25");
    require(s.iterations >= 1 && s.iterations <= 100, name, "iterations must be 1 to 100");
    return std::make_unique<Ft>(s, std::move(name));
}

}  // namespace numaware::sim::memory::nas
