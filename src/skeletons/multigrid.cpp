// skeletons/multigrid.cpp — the multigrid V-cycle on placed, per-rank slab
// blocks.
//
// The equation on every level is L(u) = f with the unscaled operator
// L(u) = 2d·u − Σ(axis neighbours) (that is −Laplace with h = 1). A coarse
// level has twice the spacing, so its operator is L/4 in the fine level's
// units: the coarse right-hand side is 4 × the full-weighted residual,
// which lets every level use the same L. Boundary cells are 0 on every
// level and are never written after placement.
//
// Floating point, per cell, in this order (the unit test's serial
// reference does the same operations in the same order, bit for bit):
//   s   = u(x−1) + u(x+1) + u(y−1) + u(y+1) [+ u(z−1) + u(z+1)]
//   res = (f + s) − 2d·u
//   Jacobi:       u' = u + (omega / 2d)·res   (omega / 2d computed once)
//   residual:     r  = res
//   restriction:  sums S_j of the 3^d fine residuals at Manhattan distance
//                 j from the fine cell 2·C, each accumulated in (dz, dy, dx)
//                 order from −1 to 1; f_c = S_0·w0 + S_1·w1 + S_2·w2 [+ S_3·w3]
//                 with w = 4 × full weighting: 2-D {1, 1/2, 1/4},
//                 3-D {1/2, 1/4, 1/8, 1/16}
//   prolongation: per axis a = ⌊X/2⌋, b = ⌈X/2⌉ (equal for even X);
//                 v = ½(P(az) + P(bz)), P(z) = ½(Q(ay) + Q(by)),
//                 Q(y) = ½(c(ax) + c(bx)); u += v   (2-D: no z step)
//   coarsest:     (m+1)² Jacobi sweeps, m = its largest interior extent
//                 (for the usual 3 interior cells: 16 sweeps, which damp
//                 the smoothest error mode by about 30×).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <string>
#include <utility>

#include "numaware/error.hpp"
#include "os/os.hpp"
#include "skeletons/engine.hpp"

namespace numaware::stencil {

using detail::PlacedArray;

namespace {

// One grid level: its layout, its cut and its four arrays.
struct Level {
    Layout layout;
    std::vector<Block> work;    // interior slabs per rank (may be empty)
    std::vector<Block> owned;   // page-aligned slabs per rank, covering the array
    PlacedArray u[2];           // the solution and its Jacobi partner
    PlacedArray f;
    PlacedArray r;
    std::ptrdiff_t sy = 0, sz = 0;   // element strides to the next row / plane (sz = 0 in 2-D)

    explicit Level(const Layout& l)
        : layout(l), u{PlacedArray(l.bytes), PlacedArray(l.bytes)}, f(l.bytes), r(l.bytes) {
        sy = static_cast<std::ptrdiff_t>(l.index(0, 1, 0));
        sz = l.shape.dims == 3 ? static_cast<std::ptrdiff_t>(l.index(0, 0, 1)) : 0;
    }
    std::size_t interior() const {
        const Shape& s = layout.shape;
        return (s.nx - 2) * (s.ny - 2) * (s.dims == 3 ? s.nz - 2 : 1);
    }
};

// Calls fn(index of the row's x = 0 cell, y, z) for every interior row of
// the slabs of `b`.
template <class Fn>
void for_rows(const Layout& L, Block b, Fn&& fn) {
    const bool d3 = L.shape.dims == 3;
    for (std::size_t slab = b.lo; slab < b.hi; ++slab) {
        if (d3) {
            for (std::size_t y = 1; y + 1 < L.shape.ny; ++y) fn(L.index(0, y, slab), y, slab);
        } else {
            fn(L.index(0, slab, 0), slab, std::size_t{0});
        }
    }
}

// (f + Σ axis neighbours) − 2d·u at index i.
inline double local_residual(const double* u, const double* f, std::size_t i, std::ptrdiff_t sy, std::ptrdiff_t sz,
                             double centre_weight) {
    const auto k = static_cast<std::ptrdiff_t>(i);
    double s = u[k - 1] + u[k + 1] + u[k - sy] + u[k + sy];
    if (sz != 0) s = s + u[k - sz] + u[k + sz];
    return (f[k] + s) - centre_weight * u[k];
}

bool is_two_power_plus_one(std::size_t n, unsigned& k) {
    if (n < 3) return false;
    const std::size_t m = n - 1;
    if ((m & (m - 1)) != 0) return false;
    k = 0;
    while ((std::size_t{1} << k) < m) ++k;
    return true;
}

std::string axis_name(unsigned axis) { return axis == 0 ? "nx" : axis == 1 ? "ny" : "nz"; }

}  // namespace

struct Multigrid::Impl {
    Team& team;
    Options options;
    MultigridOptions mg;
    os::Os& os;
    unsigned dims = 2;
    std::vector<std::unique_ptr<Level>> levels;
    std::vector<unsigned> current;   // per level: which u buffer holds the values
    unsigned coarse_sweeps = 0;
    PlacementReport placement;
    Partition finest_partition;

    Impl(Team& t, Options o, MultigridOptions m, os::Os& the_os)
        : team(t), options(std::move(o)), mg(m), os(the_os) {}

    // Jacobi flips per level per cycle.
    unsigned flips(std::size_t l) const {
        return l + 1 == levels.size() ? coarse_sweeps : mg.pre_smooth + mg.post_smooth;
    }
};

namespace {

void check_options(const Team& team, const Shape& finest, const Options& o, const MultigridOptions& mg,
                   unsigned& max_levels) {
    if (finest.dims != 2 && finest.dims != 3)
        throw Error("grid", "multigrid needs 2 or 3 dimensions, got " + std::to_string(finest.dims));
    if (finest.dims == 2 && finest.nz != 1)
        throw Error("grid", "a 2-D grid has nz=1, got nz=" + std::to_string(finest.nz));
    const std::size_t ext[3] = {finest.nx, finest.ny, finest.nz};
    unsigned min_k = 64;
    for (unsigned a = 0; a < finest.dims; ++a) {
        unsigned k = 0;
        if (!is_two_power_plus_one(ext[a], k) || k < 2)
            throw Error("grid", axis_name(a) + "=" + std::to_string(ext[a]) +
                                    " is not 2^k+1 with k >= 2 (multigrid needs 5, 9, 17, 33, ... cells per axis)");
        min_k = std::min(min_k, k);
    }
    // Halving stops at 3 interior cells (5 cells) on the smallest axis.
    max_levels = min_k - 1;
    if (mg.levels > max_levels)
        throw Error("levels", std::to_string(mg.levels) + " levels asked but a " + finest.to_string() +
                                  " grid allows at most " + std::to_string(max_levels) +
                                  " (halving down to 3 interior cells per axis)");
    if (!(mg.omega > 0 && mg.omega <= 1))
        throw Error("omega", "damped Jacobi needs 0 < omega <= 1, got " + std::to_string(mg.omega));
    if (mg.pre_smooth + mg.post_smooth == 0)
        throw Error("pre_smooth", "pre_smooth + post_smooth must be at least 1 (no smoothing, no multigrid)");
    if (mg.pre_smooth > 64 || mg.post_smooth > 64)
        throw Error("pre_smooth", "at most 64 smoothing sweeps each, got " + std::to_string(mg.pre_smooth) + " and " +
                                      std::to_string(mg.post_smooth));
    // Each level's cut follows the finest level's.
    detail::check_options(o, "multigrid");
    (void)team;
}

// The next coarser level's cut: coarse slab c belongs to the rank whose
// fine work block holds slab 2c; owned pages follow the work cut rounded to
// the coarse layout's granule (a page may then hold a neighbour's first or
// last slabs, which is unavoidable once a block is smaller than a page).
void cut_coarse(const Level& fine, Level& coarse) {
    const std::size_t nc = coarse.layout.slabs;
    const std::size_t g = coarse.layout.granule;
    const std::size_t ranks = fine.work.size();
    auto map = [&](std::size_t fine_slab) {
        return std::clamp<std::size_t>((fine_slab + 1) / 2, 1, nc - 1);
    };
    std::vector<std::size_t> cut(ranks + 1);
    for (std::size_t r = 0; r < ranks; ++r) {
        const Block b{map(fine.work[r].lo), std::max(map(fine.work[r].lo), map(fine.work[r].hi))};
        coarse.work.push_back(b);
    }
    cut[0] = 0;
    cut[ranks] = nc;
    for (std::size_t r = 1; r < ranks; ++r) {
        const std::size_t rounded = (coarse.work[r].lo + g / 2) / g * g;
        cut[r] = std::clamp(rounded, cut[r - 1], nc);
    }
    for (std::size_t r = 0; r < ranks; ++r) coarse.owned.push_back({cut[r], std::max(cut[r], cut[r + 1])});
}

std::vector<detail::ByteRange> byte_ranges(const Level& l) {
    std::vector<detail::ByteRange> out;
    const std::size_t slab_bytes = l.layout.slab_stride * sizeof(double);
    for (std::size_t r = 0; r < l.owned.size(); ++r) {
        const std::size_t lo = l.owned[r].lo * slab_bytes;
        const std::size_t hi = r + 1 == l.owned.size() ? l.layout.bytes : l.owned[r].hi * slab_bytes;
        out.emplace_back(std::min(lo, l.layout.bytes), std::min(std::max(hi, lo), l.layout.bytes));
    }
    return out;
}

}  // namespace

Multigrid::Multigrid(Team& team, const Shape& finest, const InitFn& rhs, Options options, MultigridOptions mg) {
    os::Os& the_os = detail::os_of(options);
    unsigned max_levels = 0;
    check_options(team, finest, options, mg, max_levels);
    const std::size_t page_size = the_os.page_size();
    const Layout fine_layout = Layout::make(finest, page_size);
    // Throws Error("threads", ...) when the team exceeds the interior slabs.
    Partition part = partition_equal(fine_layout, 1, static_cast<unsigned>(team.size()));

    auto impl = std::make_unique<Impl>(team, std::move(options), mg, the_os);
    Impl& m = *impl;
    m.dims = finest.dims;
    m.finest_partition = part;
    const unsigned count = mg.levels == 0 ? max_levels : mg.levels;

    auto first = std::make_unique<Level>(fine_layout);
    first->work = part.work;
    first->owned = part.owned;
    m.levels.push_back(std::move(first));
    for (unsigned l = 1; l < count; ++l) {
        const Shape& s = m.levels.back()->layout.shape;
        const Shape c = finest.dims == 3 ? Shape::d3((s.nx - 1) / 2 + 1, (s.ny - 1) / 2 + 1, (s.nz - 1) / 2 + 1)
                                         : Shape::d2((s.nx - 1) / 2 + 1, (s.ny - 1) / 2 + 1);
        auto level = std::make_unique<Level>(Layout::make(c, page_size));
        cut_coarse(*m.levels.back(), *level);
        m.levels.push_back(std::move(level));
    }
    m.current.assign(m.levels.size(), 0);
    {
        const Shape& s = m.levels.back()->layout.shape;
        const std::size_t largest = std::max({s.nx, s.ny, s.dims == 3 ? s.nz : std::size_t{0}}) - 2;
        m.coarse_sweeps = static_cast<unsigned>((largest + 1) * (largest + 1));
    }

    // Place every array of every level with the one mode; the finest
    // right-hand side gets rhs on the interior, everything else zeros.
    bool first_report = true;
    for (std::size_t l = 0; l < m.levels.size(); ++l) {
        Level& lv = *m.levels[l];
        const std::vector<detail::ByteRange> owned = byte_ranges(lv);
        const auto zero = [](PlacedArray& a) {
            return [&a](unsigned, std::size_t lo, std::size_t hi) {
                std::fill(a.data() + lo / sizeof(double), a.data() + hi / sizeof(double), 0.0);
            };
        };
        PlacedArray* arrays[4] = {&lv.u[0], &lv.u[1], &lv.f, &lv.r};
        for (PlacedArray* a : arrays) {
            std::function<void(unsigned, std::size_t, std::size_t)> init = zero(*a);
            if (l == 0 && a == &lv.f) {
                init = [&lv, &rhs](unsigned, std::size_t lo, std::size_t hi) {
                    double* p = lv.f.data();
                    std::fill(p + lo / sizeof(double), p + hi / sizeof(double), 0.0);
                    const Layout& L = lv.layout;
                    const std::size_t slab_bytes = L.slab_stride * sizeof(double);
                    const std::size_t s_lo = lo / slab_bytes;
                    const std::size_t s_hi = std::min(L.slabs, (hi + slab_bytes - 1) / slab_bytes);
                    for_rows(L, Block{std::max<std::size_t>(s_lo, 1), std::min(s_hi, L.slabs - 1)},
                             [&](std::size_t row, std::size_t y, std::size_t z) {
                                 for (std::size_t x = 1; x + 1 < L.shape.nx; ++x) {
                                     const std::size_t i = row + x;
                                     if (i * sizeof(double) >= lo && i * sizeof(double) < hi) p[i] = rhs(x, y, z);
                                 }
                             });
                };
            }
            PlacementReport rep = detail::place(team, *a, m.options.placement, m.options.explicit_policy, owned, init,
                                                m.options.verify_placement, m.os);
            if (first_report) {
                m.placement = std::move(rep);
                first_report = false;
            } else {
                detail::merge(m.placement, rep);
            }
        }
    }
    impl_ = std::move(impl);
}

Multigrid::~Multigrid() = default;

unsigned Multigrid::levels() const { return static_cast<unsigned>(impl_->levels.size()); }

double Multigrid::at(std::size_t x, std::size_t y, std::size_t z) const {
    const Level& l = *impl_->levels[0];
    const Shape& s = l.layout.shape;
    if (x >= s.nx || y >= s.ny || z >= s.nz)
        throw Error("cell", "(" + std::to_string(x) + ", " + std::to_string(y) + ", " + std::to_string(z) +
                                ") is outside the " + s.to_string() + " grid");
    return l.u[impl_->current[0]].data()[l.layout.index(x, y, z)];
}

double Multigrid::residual_norm() const {
    const Level& l = *impl_->levels[0];
    const double* u = l.u[impl_->current[0]].data();
    const double* f = l.f.data();
    const double c = 2.0 * impl_->dims;
    double norm = 0;
    for_rows(l.layout, Block{1, l.layout.slabs - 1}, [&](std::size_t row, std::size_t, std::size_t) {
        for (std::size_t x = 1; x + 1 < l.layout.shape.nx; ++x)
            norm = std::max(norm, std::abs(local_residual(u, f, row + x, l.sy, l.sz, c)));
    });
    return norm;
}

Report Multigrid::vcycles(std::size_t cycles) {
    Impl& m = *impl_;
    const std::size_t nlev = m.levels.size();
    const std::size_t threads = m.team.size();
    const double c = 2.0 * m.dims;
    const double w = m.mg.omega / c;
    const bool d3 = m.dims == 3;
    const std::vector<unsigned> start = m.current;

    struct RankStats {
        double busy = 0;
        std::size_t slabs = 0;
    };
    std::vector<RankStats> stats(threads);

    using clock = std::chrono::steady_clock;

    detail::BalancingScope balancing(m.options.balancing_off, m.os);
    for (const auto& lv : m.levels)
        for (const PlacedArray* a : {&lv->u[0], &lv->u[1], &lv->f, &lv->r}) balancing.hold_still(*a);
    const detail::Timing timing = detail::run_phases(
        m.team, cycles,
        [&](TeamContext& ctx, std::size_t cycle) {
            const unsigned rank = ctx.rank();
            RankStats& st = stats[rank];
            // Which u buffer is current on each level: every rank follows
            // the same deterministic sequence, so no shared state changes.
            std::vector<unsigned> cur(nlev);
            for (std::size_t l = 0; l < nlev; ++l)
                cur[l] = static_cast<unsigned>((start[l] + cycle * m.flips(l)) % 2);

            // Each operation: this rank's slabs of one level, then a barrier.
            const auto timed = [&](const Level& lv, auto&& op) {
                const auto t0 = clock::now();
                op(lv.work[rank]);
                st.busy += std::chrono::duration<double>(clock::now() - t0).count();
                st.slabs += lv.work[rank].size();
                ctx.barrier();
            };
            const auto jacobi = [&](std::size_t l) {
                Level& lv = *m.levels[l];
                const double* u = lv.u[cur[l]].data();
                double* out = lv.u[1 - cur[l]].data();
                const double* f = lv.f.data();
                const std::size_t nx = lv.layout.shape.nx;
                timed(lv, [&](Block b) {
                    for_rows(lv.layout, b, [&](std::size_t row, std::size_t, std::size_t) {
                        for (std::size_t x = 1; x + 1 < nx; ++x) {
                            const std::size_t i = row + x;
                            out[i] = u[i] + w * local_residual(u, f, i, lv.sy, lv.sz, c);
                        }
                    });
                });
                cur[l] = 1 - cur[l];
            };
            const auto zero_u = [&](std::size_t l) {
                Level& lv = *m.levels[l];
                double* u = lv.u[cur[l]].data();
                const std::size_t nx = lv.layout.shape.nx;
                timed(lv, [&](Block b) {
                    for_rows(lv.layout, b, [&](std::size_t row, std::size_t, std::size_t) {
                        std::fill(u + row + 1, u + row + nx - 1, 0.0);
                    });
                });
            };
            const auto residual = [&](std::size_t l) {
                Level& lv = *m.levels[l];
                const double* u = lv.u[cur[l]].data();
                const double* f = lv.f.data();
                double* r = lv.r.data();
                const std::size_t nx = lv.layout.shape.nx;
                timed(lv, [&](Block b) {
                    for_rows(lv.layout, b, [&](std::size_t row, std::size_t, std::size_t) {
                        for (std::size_t x = 1; x + 1 < nx; ++x)
                            r[row + x] = local_residual(u, f, row + x, lv.sy, lv.sz, c);
                    });
                });
            };
            const auto restrict_to = [&](std::size_t l) {   // r_l -> f_{l+1}
                const Level& fine = *m.levels[l];
                Level& coarse = *m.levels[l + 1];
                const double* r = fine.r.data();
                double* fc = coarse.f.data();
                const std::size_t ncx = coarse.layout.shape.nx;
                const int zr = d3 ? 1 : 0;
                timed(coarse, [&](Block b) {
                    for_rows(coarse.layout, b, [&](std::size_t row, std::size_t y, std::size_t z) {
                        for (std::size_t x = 1; x + 1 < ncx; ++x) {
                            const std::size_t centre = d3 ? fine.layout.index(2 * x, 2 * y, 2 * z)
                                                          : fine.layout.index(2 * x, 2 * y, 0);
                            double s[4] = {0, 0, 0, 0};
                            for (int dz = -zr; dz <= zr; ++dz)
                                for (int dy = -1; dy <= 1; ++dy)
                                    for (int dx = -1; dx <= 1; ++dx) {
                                        const std::ptrdiff_t off = dx + dy * fine.sy + dz * fine.sz;
                                        s[std::abs(dx) + std::abs(dy) + std::abs(dz)] +=
                                            r[static_cast<std::ptrdiff_t>(centre) + off];
                                    }
                            fc[row + x] = d3 ? s[0] * 0.5 + s[1] * 0.25 + s[2] * 0.125 + s[3] * 0.0625
                                             : s[0] * 1.0 + s[1] * 0.5 + s[2] * 0.25;
                        }
                    });
                });
            };
            const auto prolong = [&](std::size_t l) {   // u_l += P u_{l+1}
                Level& fine = *m.levels[l];
                const Level& coarse = *m.levels[l + 1];
                double* u = fine.u[cur[l]].data();
                const double* uc = coarse.u[cur[l + 1]].data();
                const std::size_t nx = fine.layout.shape.nx;
                const Layout& CL = coarse.layout;
                timed(fine, [&](Block b) {
                    for_rows(fine.layout, b, [&](std::size_t row, std::size_t y, std::size_t z) {
                        const std::size_t ay = y / 2, by = (y + 1) / 2;
                        const std::size_t az = z / 2, bz = (z + 1) / 2;
                        for (std::size_t x = 1; x + 1 < nx; ++x) {
                            const std::size_t ax = x / 2, bx = (x + 1) / 2;
                            const auto q = [&](std::size_t cy, std::size_t cz) {
                                const double* p = uc + CL.index(0, cy, cz);
                                return 0.5 * (p[ax] + p[bx]);
                            };
                            const auto pl = [&](std::size_t cz) { return 0.5 * (q(ay, cz) + q(by, cz)); };
                            const double v = d3 ? 0.5 * (pl(az) + pl(bz)) : pl(0);
                            u[row + x] += v;
                        }
                    });
                });
            };

            for (std::size_t l = 0; l + 1 < nlev; ++l) {
                if (l > 0) zero_u(l);
                for (unsigned s = 0; s < m.mg.pre_smooth; ++s) jacobi(l);
                residual(l);
                restrict_to(l);
            }
            if (nlev > 1) zero_u(nlev - 1);
            for (unsigned s = 0; s < m.coarse_sweeps; ++s) jacobi(nlev - 1);
            for (std::size_t l = nlev - 1; l-- > 0;) {
                prolong(l);
                for (unsigned s = 0; s < m.mg.post_smooth; ++s) jacobi(l);
            }
        },
        [&](std::size_t cycle) {
            if (m.options.on_sweep) m.options.on_sweep(cycle);
        });
    for (std::size_t l = 0; l < nlev; ++l) m.current[l] = static_cast<unsigned>((start[l] + cycles * m.flips(l)) % 2);

    Report r;
    r.kind = std::string(to_string(Kind::multigrid));
    r.neighbourhood = d3 ? "7-point" : "5-point";
    r.placement = std::string(to_string(m.options.placement));
    r.distribution = std::string(to_string(m.options.distribution));
    r.shape = m.levels[0]->layout.shape;
    r.threads = static_cast<unsigned>(threads);
    r.sweeps = cycles;
    r.seconds = timing.seconds;
    r.seconds_per_sweep = cycles > 0 ? timing.seconds / static_cast<double>(cycles) : 0;

    // Cell updates per cycle (zeroing the coarse guesses is not counted)
    // and the byte model: each operation streams its arrays once over the
    // cells it touches — Jacobi and residual read u and f and write one
    // array (3), restriction reads the fine r and writes the coarse f,
    // prolongation reads the coarse u and reads and writes the fine u.
    std::size_t updates = 0, bytes = 0;
    const std::size_t pre_post = m.mg.pre_smooth + m.mg.post_smooth;
    for (std::size_t l = 0; l < nlev; ++l) {
        const std::size_t cells = m.levels[l]->interior();
        if (l + 1 < nlev) {
            const std::size_t coarse = m.levels[l + 1]->interior();
            updates += cells * (pre_post + 2) + coarse;   // smoothing, residual, prolongation; restriction
            bytes += cells * (3 * pre_post + 3) + (cells + coarse) + (2 * cells + coarse);
        } else {
            updates += cells * m.coarse_sweeps;
            bytes += cells * 3 * m.coarse_sweeps;
        }
        if (l > 0) bytes += cells;   // zeroing
    }
    r.updates_per_sweep = updates;
    r.updates_per_second = timing.seconds > 0 ? static_cast<double>(updates * cycles) / timing.seconds : 0;
    r.arrays_counted = 3;
    r.bytes_per_sweep = bytes * sizeof(double);
    r.bandwidth_gbs =
        r.seconds_per_sweep > 0 ? static_cast<double>(r.bytes_per_sweep) / r.seconds_per_sweep / 1e9 : 0;

    // Per-rank traffic: the finest level's smoothing sweeps (the bulk of a
    // cycle's bytes), as account() counts them from the kernel's page
    // locations — u read through the star, the partner written. Bytes are
    // per cycle (times pre + post sweeps); page counts are those of one sweep.
    const Level& fine = *m.levels[0];
    const std::vector<int> read_nodes = fine.u[m.current[0]].page_nodes(m.os);
    const std::vector<int> write_nodes = fine.u[1 - m.current[0]].page_nodes(m.os);
    const Neighbourhood star = Neighbourhood::star(m.dims);
    const std::vector<unsigned> rank_node = detail::rank_nodes(m.team);
    const auto& places = m.team.layout().ranks;
    for (std::size_t rank = 0; rank < threads; ++rank) {
        Traffic t = account(fine.layout, star, fine.work[rank], fine.owned[rank], rank_node[rank], read_nodes,
                            write_nodes);
        t.read_bytes *= pre_post;
        t.remote_read_bytes *= pre_post;
        t.unknown_read_bytes *= pre_post;
        t.write_bytes *= pre_post;
        t.remote_write_bytes *= pre_post;
        RankReport rr;
        rr.rank = static_cast<unsigned>(rank);
        rr.cpu = places[rank].cpu;
        rr.node = rank_node[rank];
        rr.work = fine.work[rank];
        rr.owned = fine.owned[rank];
        rr.weight = 1.0;
        rr.busy_seconds = stats[rank].busy;
        rr.slabs_updated = stats[rank].slabs;
        rr.traffic = t;
        r.read_bytes_per_sweep += t.read_bytes;
        r.remote_read_bytes_per_sweep += t.remote_read_bytes;
        r.remote_write_bytes_per_sweep += t.remote_write_bytes;
        r.halo_pages += t.halo_pages;
        r.remote_halo_pages += t.remote_halo_pages;
        r.ranks.push_back(rr);
    }
    r.placement_report = m.placement;
    r.balancing = balancing.finish();
    return r;
}

}  // namespace numaware::stencil
