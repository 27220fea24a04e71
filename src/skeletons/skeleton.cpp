// skeletons/skeleton.cpp — the stencil Skeleton: validation, two placed
// arrays, and the sweeps of every single-grid kind (Jacobi, variable,
// Gauss-Seidel wavefront, red-black) under every distribution.
#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "numaware/error.hpp"
#include "numaware/stencil.hpp"
#include "os/os.hpp"
#include "skeletons/engine.hpp"

namespace numaware::stencil {

namespace {

std::string num(double v) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%g", v);
    return buf;
}

constexpr std::size_t kNoLimit = std::numeric_limits<std::size_t>::max();

// t · num / den, field by field.
Traffic scaled(const Traffic& t, std::size_t n, std::size_t d) {
    auto f = [&](std::size_t v) { return d == 0 ? v : v * n / d; };
    Traffic o;
    o.read_bytes = f(t.read_bytes);
    o.remote_read_bytes = f(t.remote_read_bytes);
    o.unknown_read_bytes = f(t.unknown_read_bytes);
    o.write_bytes = f(t.write_bytes);
    o.remote_write_bytes = f(t.remote_write_bytes);
    o.halo_pages = f(t.halo_pages);
    o.remote_halo_pages = f(t.remote_halo_pages);
    o.block_pages = f(t.block_pages);
    o.block_pages_on_node = f(t.block_pages_on_node);
    return o;
}

std::size_t interior_cells(const Shape& s, const Neighbourhood& nb) {
    std::size_t c = (s.nx - 2 * nb.radius_x()) * (s.ny - 2 * nb.radius_y());
    if (s.dims == 3) c *= s.nz - 2 * nb.radius_z();
    return c;
}

// A chunk of slabs one rank ran in one part (sweep · parts + colour).
struct ChunkRecord {
    std::size_t part = 0;
    std::size_t lo = 0;
    std::size_t hi = 0;
};

}  // namespace

struct Skeleton::Impl {
    Impl(Team& t, const Neighbourhood& n, Options o) : team(t), opt(std::move(o)), nb(n) {}

    Team& team;
    Options opt;
    Neighbourhood nb;
    os::Os* os = nullptr;
    Layout layout;
    Partition part;
    std::vector<unsigned> nodes;
    std::vector<detail::PlacedArray> arrays;   // two
    unsigned cur = 0;                          // the array the last sweep wrote
    PlacementReport placement;
    std::string weight_rule;                   // numa_weighted: how the cut's weights were found

    double* array(unsigned i) const { return arrays[i].data(); }
};

Skeleton::Skeleton(Team& team, const Shape& shape, const Neighbourhood& nb, const InitFn& init, Options options) {
    check_grid(shape, nb);
    if (!init) throw Error("init", "no initial-value function given");
    detail::check_options(options);
    if (!options.weights.empty()) {
        if (options.weights.size() != team.size())
            throw Error("weights", std::to_string(options.weights.size()) + " weights for a team of " +
                                       std::to_string(team.size()) + " ranks (one per rank)");
        for (std::size_t i = 0; i < options.weights.size(); ++i) {
            const double w = options.weights[i];
            if (!(w > 0) || !std::isfinite(w))
                throw Error("weights[" + std::to_string(i) + "]", "must be positive and finite, got " + num(w));
        }
    }
    if (!(options.remote_cost >= 0) || !std::isfinite(options.remote_cost))
        throw Error("remote_cost", "must be finite and at least 0 (0: from the machine), got " +
                                       num(options.remote_cost));

    auto impl = std::make_unique<Impl>(team, nb, std::move(options));
    Impl& I = *impl;
    I.os = &detail::os_of(I.opt);
    I.layout = Layout::make(shape, I.os->page_size());
    const unsigned halo = nb.radius_slab();
    I.part = partition_equal(I.layout, halo, static_cast<unsigned>(team.size()));
    I.nodes = detail::rank_nodes(team);
    // NUMA-weighted: the weighted cut decides both the work and the pages, so
    // every block still lives on its rank's node.
    if (I.opt.distribution == Distribution::numa_weighted) {
        std::vector<double> weights = I.opt.weights;
        if (weights.empty()) {
            WeightPlan wp = numa_weights(I.layout, nb, I.nodes, team.machine(), I.opt.remote_cost);
            weights = std::move(wp.weights);
            I.weight_rule = std::move(wp.rule);
        } else {
            I.weight_rule = "given";
        }
        I.part = partition_weighted(I.layout, halo, weights);
    }
    const std::size_t interior = I.layout.slabs - 2 * halo;
    if (I.opt.chunk > interior)
        throw Error("chunk", "a chunk of " + std::to_string(I.opt.chunk) + " slabs but the grid has only " +
                                 std::to_string(interior) + " interior slabs");

    const Layout& L = I.layout;
    const std::size_t slab_bytes = L.slab_stride * sizeof(double);
    std::vector<detail::ByteRange> owned;
    for (std::size_t r = 0; r < I.part.owned.size(); ++r) {
        const Block b = I.part.owned[r];
        std::size_t lo = b.lo * slab_bytes;
        std::size_t hi = b.hi * slab_bytes;
        if (r + 1 == I.part.owned.size()) hi = L.bytes;
        if (b.lo == b.hi) hi = lo;
        owned.emplace_back(std::min(lo, L.bytes), std::min(hi, L.bytes));
    }

    for (int k = 0; k < 2; ++k) I.arrays.emplace_back(L.bytes);
    for (unsigned k = 0; k < 2; ++k) {
        double* base = I.array(k);
        auto fill = [&, base](unsigned, std::size_t lo, std::size_t hi) {
            const std::size_t s_lo = lo / slab_bytes;
            const std::size_t s_hi = std::min(L.slabs, (hi + slab_bytes - 1) / slab_bytes);
            for (std::size_t s = s_lo; s < s_hi; ++s) {
                if (L.shape.dims == 3) {
                    for (std::size_t y = 0; y < L.shape.ny; ++y)
                        for (std::size_t x = 0; x < L.shape.nx; ++x) base[L.index(x, y, s)] = init(x, y, s);
                } else {
                    for (std::size_t x = 0; x < L.shape.nx; ++x) base[L.index(x, s)] = init(x, s, 0);
                }
            }
        };
        PlacementReport r = detail::place(team, I.arrays[k], I.opt.placement, I.opt.explicit_policy, owned, fill,
                                          I.opt.verify_placement, *I.os);
        detail::merge(I.placement, r);
    }
    impl_ = std::move(impl);
}

Skeleton::~Skeleton() = default;

double Skeleton::at(std::size_t x, std::size_t y, std::size_t z) const {
    const Shape& s = impl_->layout.shape;
    if (x >= s.nx) throw Error("x", std::to_string(x) + " is outside the grid (nx=" + std::to_string(s.nx) + ")");
    if (y >= s.ny) throw Error("y", std::to_string(y) + " is outside the grid (ny=" + std::to_string(s.ny) + ")");
    if (z >= s.nz) throw Error("z", std::to_string(z) + " is outside the grid (nz=" + std::to_string(s.nz) + ")");
    return impl_->array(impl_->cur)[impl_->layout.index(x, y, z)];
}

const Layout& Skeleton::layout() const { return impl_->layout; }
const Neighbourhood& Skeleton::neighbourhood() const { return impl_->nb; }
const Partition& Skeleton::partition() const { return impl_->part; }
const PlacementReport& Skeleton::placement() const { return impl_->placement; }
std::vector<int> Skeleton::page_nodes() const { return impl_->arrays[impl_->cur].page_nodes(*impl_->os); }

Report Skeleton::run(Kind kind, std::size_t sweeps, const void* update, detail::PieceFn piece) {
    Impl& I = *impl_;
    const Options& o = I.opt;
    const Layout& L = I.layout;
    const Neighbourhood& nb = I.nb;
    Team& team = I.team;
    const unsigned T = static_cast<unsigned>(team.size());
    const unsigned halo = nb.radius_slab();
    const bool d3 = L.shape.dims == 3;
    const bool in_place = kind == Kind::gauss_seidel || kind == Kind::red_black;
    const bool dyn = o.distribution == Distribution::dynamic || o.distribution == Distribution::guided;
    const bool guided = o.distribution == Distribution::guided;
    const bool stream = o.streaming_stores && !in_place;

    if (kind != Kind::jacobi && kind != Kind::variable && !in_place)
        throw Error("kind", std::string(to_string(kind)) + " is not a single-grid sweep (use Multigrid or Butterfly)");
    if (kind == Kind::gauss_seidel && dyn)
        throw Error("distribution", "gauss-seidel updates in lexicographic order and needs a static cut "
                                    "(static or numa-weighted), not " +
                                        std::string(to_string(o.distribution)));
    if (kind == Kind::red_black) {
        for (const Offset& d : nb.offsets()) {
            if (d == Offset{}) continue;
            if (((std::abs(d.dx) + std::abs(d.dy) + std::abs(d.dz)) & 1) == 0)
                throw Error("neighbourhood", "red-black needs every neighbour to have the other colour, but " +
                                                 nb.name() + " reads (" + std::to_string(d.dx) + "," +
                                                 std::to_string(d.dy) + "," + std::to_string(d.dz) +
                                                 "), of the cell's own colour");
        }
    }

    Report rep;
    rep.kind = std::string(to_string(kind));
    rep.neighbourhood = nb.name();
    rep.placement = std::string(to_string(o.placement));
    rep.distribution = std::string(to_string(o.distribution));
    rep.shape = L.shape;
    rep.threads = T;
    rep.sweeps = sweeps;

    // ---- the distribution's cut
    // (the constructor made the weighted cut for numa_weighted, and placed by it)
    const std::vector<Block>& work = I.part.work;
    std::vector<double> weights = I.part.weights;
    rep.weight_rule = I.weight_rule;
    if (dyn) weights.assign(T, 1.0);

    const std::size_t parts = kind == Kind::red_black ? 2 : 1;
    const std::size_t slab_end = L.slabs - halo;
    const std::size_t G = std::max<std::size_t>(L.granule, 1);
    const std::size_t chunk_slabs = std::max<std::size_t>(1, (o.chunk + G - 1) / G) * G;

    // Dynamic / guided: one shared slab counter per part.
    std::unique_ptr<std::atomic<std::size_t>[]> counters;
    std::vector<std::vector<ChunkRecord>> chunks(T);
    if (dyn) {
        counters = std::make_unique<std::atomic<std::size_t>[]>(std::max<std::size_t>(1, sweeps * parts));
        for (std::size_t i = 0; i < sweeps * parts; ++i) counters[i].store(halo, std::memory_order_relaxed);
    }
    auto grab = [&](std::size_t part_index, Block& out) {
        std::atomic<std::size_t>& ctr = counters[part_index];
        std::size_t lo = ctr.load(std::memory_order_relaxed);
        for (;;) {
            if (lo >= slab_end) return false;
            std::size_t want = chunk_slabs;
            if (guided) {
                const std::size_t share = (slab_end - lo + 2 * T - 1) / (2 * T);
                want = std::max(want, (share + G - 1) / G * G);
            }
            std::size_t hi = (lo + want) / G * G;   // end on a granule boundary
            if (hi <= lo) hi = lo + want;
            hi = std::min(hi, slab_end);
            if (ctr.compare_exchange_weak(lo, hi, std::memory_order_relaxed)) {
                out = {lo, hi};
                return true;
            }
        }
    };

    auto make_piece = [&](const double* in, double* out, std::size_t lo, std::size_t hi, int colour) {
        detail::Piece p;
        p.layout = &L;
        p.in = in;
        p.out = out;
        p.slab_lo = lo;
        p.slab_hi = hi;
        p.tile_lo = 0;
        p.tile_hi = kNoLimit;
        p.rx = nb.radius_x();
        p.ry = nb.radius_y();
        p.rz = nb.radius_z();
        p.colour = colour;
        p.stream = stream && in != out;
        return p;
    };

    // ---- Gauss-Seidel wavefront: skewed tiles along the tile axis.
    // A cell (a along the tile axis, slab s) belongs to tile (a + s·q) / W.
    // The skew q is the least that puts every neighbour in an earlier slab
    // in the same or an earlier tile and every neighbour in a later slab in
    // the same or a later one (0 for star neighbourhoods, r for a box of
    // radius r). Running a rank's block tile by tile (slabs in order within
    // a tile, cells in order within a slab) is then exactly the serial
    // lexicographic order, and ranks can pipeline over tiles: rank t starts
    // tile j once its predecessor has finished tile j + 1.
    const std::size_t tile_extent = d3 ? L.shape.ny : L.shape.nx;
    const std::size_t tile_r = d3 ? nb.radius_y() : nb.radius_x();
    std::size_t tile_r_skew = 0;
    for (const Offset& d : nb.offsets()) {
        const int ds = d3 ? d.dz : d.dy;
        const int da = d3 ? d.dy : d.dx;
        int need = 0;
        if (ds < 0 && da > 0) need = (da + (-ds) - 1) / (-ds);
        if (ds > 0 && da < 0) need = (-da + ds - 1) / ds;
        tile_r_skew = std::max(tile_r_skew, static_cast<std::size_t>(need));
    }
    const std::size_t keys = tile_extent + (L.slabs - 1) * tile_r_skew;
    std::size_t W = o.tile;
    if (W == 0) {
        // Auto: about 64 cells, narrower when that leaves fewer than four
        // tiles per rank (the pipeline fills in two tiles per rank), never
        // below 8.
        W = std::min<std::size_t>(64, std::max<std::size_t>(8, keys / (4 * std::size_t{T})));
    }
    W = std::max<std::size_t>({W, tile_r, 1});
    const std::size_t ntiles = (keys - 1) / W + 1;
    std::unique_ptr<std::atomic<std::size_t>[]> progress;
    std::vector<int> pred(T, -1);
    std::atomic<bool> aborted{false};
    if (kind == Kind::gauss_seidel) {
        progress = std::make_unique<std::atomic<std::size_t>[]>(T);
        for (unsigned t = 0; t < T; ++t) progress[t].store(0, std::memory_order_relaxed);
        int last = -1;
        for (unsigned t = 0; t < T; ++t) {
            pred[t] = last;
            if (work[t].size() > 0) last = static_cast<int>(t);
        }
    }

    std::vector<double> waited(T, 0.0);   // per rank, waits inside sweeps
    const unsigned cur0 = I.cur;
    auto body = [&](TeamContext& ctx, std::size_t s) {
        const unsigned r = ctx.rank();
        if (!in_place) {
            const double* in = I.array((cur0 + s) & 1U);
            double* out = I.array((cur0 + s + 1) & 1U);
            if (!dyn) {
                if (work[r].size() > 0) piece(update, make_piece(in, out, work[r].lo, work[r].hi, -1));
            } else {
                Block b;
                while (grab(s, b)) {
                    piece(update, make_piece(in, out, b.lo, b.hi, -1));
                    chunks[r].push_back({s, b.lo, b.hi});
                }
            }
            if (stream) detail::stream_fence();
            return;
        }
        double* a = I.array(cur0);
        if (kind == Kind::red_black) {
            for (int colour = 0; colour < 2; ++colour) {
                if (colour == 1) {
                    // The colours' barrier is not busy time.
                    const auto w0 = std::chrono::steady_clock::now();
                    ctx.barrier();
                    waited[r] += std::chrono::duration<double>(std::chrono::steady_clock::now() - w0).count();
                }
                if (!dyn) {
                    if (work[r].size() > 0) piece(update, make_piece(a, a, work[r].lo, work[r].hi, colour));
                } else {
                    const std::size_t pi = s * parts + static_cast<std::size_t>(colour);
                    Block b;
                    while (grab(pi, b)) {
                        piece(update, make_piece(a, a, b.lo, b.hi, colour));
                        chunks[r].push_back({pi, b.lo, b.hi});
                    }
                }
            }
            return;
        }
        // Gauss-Seidel.
        const std::size_t base = s * ntiles;
        if (work[r].size() == 0) {
            progress[r].store(base + ntiles, std::memory_order_release);
            return;
        }
        try {
            for (std::size_t j = 0; j < ntiles; ++j) {
                if (pred[r] >= 0) {
                    const std::size_t need = base + std::min(j + 2, ntiles);
                    const std::atomic<std::size_t>& before = progress[static_cast<unsigned>(pred[r])];
                    if (before.load(std::memory_order_acquire) < need) {
                        // Waiting for the wavefront is not busy time either.
                        const auto w0 = std::chrono::steady_clock::now();
                        while (before.load(std::memory_order_acquire) < need) {
                            // Another rank failed: give up the sweep quietly; the
                            // team's barrier then unwinds this rank and run()
                            // reports the failing rank's own exception.
                            if (aborted.load(std::memory_order_relaxed)) return;
                            std::this_thread::yield();
                        }
                        waited[r] +=
                            std::chrono::duration<double>(std::chrono::steady_clock::now() - w0).count();
                    }
                }
                for (std::size_t sl = work[r].lo; sl < work[r].hi; ++sl) {
                    const std::size_t skew = sl * tile_r_skew;
                    const std::size_t k_lo = j * W;
                    const std::size_t k_hi = (j + 1) * W;
                    if (k_hi <= skew) continue;
                    detail::Piece p = make_piece(a, a, sl, sl + 1, -1);
                    p.tile_lo = k_lo > skew ? k_lo - skew : 0;
                    p.tile_hi = std::min(k_hi - skew, tile_extent);
                    if (p.tile_lo >= p.tile_hi) continue;
                    piece(update, p);
                }
                progress[r].store(base + j + 1, std::memory_order_release);
            }
        } catch (...) {
            aborted.store(true, std::memory_order_relaxed);
            throw;
        }
    };

    std::function<void(std::size_t)> on_phase;
    if (o.on_sweep) {
        on_phase = [&](std::size_t s) {
            I.cur = in_place ? cur0 : ((cur0 + s + 1) & 1U);
            o.on_sweep(s);
        };
    }

    detail::BalancingScope scope(o.balancing_off, *I.os);
    for (const detail::PlacedArray& a : I.arrays) scope.hold_still(a);
    detail::Timing timing;
    try {
        timing = detail::run_phases(team, sweeps, body, on_phase);
    } catch (...) {
        I.cur = in_place ? cur0 : ((cur0 + sweeps) & 1U);
        throw;
    }
    rep.balancing = scope.finish();
    I.cur = in_place ? cur0 : ((cur0 + sweeps) & 1U);

    // ---- timing and the traffic model
    rep.seconds = timing.seconds;
    rep.seconds_per_sweep = sweeps ? timing.seconds / static_cast<double>(sweeps) : 0.0;
    rep.updates_per_sweep = interior_cells(L.shape, nb);
    rep.updates_per_second = timing.seconds > 0
                                 ? static_cast<double>(rep.updates_per_sweep) * static_cast<double>(sweeps) /
                                       timing.seconds
                                 : 0.0;
    rep.arrays_counted = in_place ? 2 : (stream ? 2 : 3);
    rep.bytes_per_sweep = rep.arrays_counted * rep.updates_per_sweep * sizeof(double);
    rep.bandwidth_gbs = rep.seconds_per_sweep > 0
                            ? static_cast<double>(rep.bytes_per_sweep) / rep.seconds_per_sweep / 1e9
                            : 0.0;

    // ---- where the pages are now: one query per array
    std::array<std::vector<int>, 2> pn;
    if (in_place) {
        pn[cur0] = I.arrays[cur0].page_nodes(*I.os);
    } else {
        pn[0] = I.arrays[0].page_nodes(*I.os);
        pn[1] = I.arrays[1].page_nodes(*I.os);
    }
    // Direction d: read array d, write array 1 - d (in place: both cur0).
    auto account_dir = [&](Block w, unsigned r, unsigned d) {
        const std::vector<int>& rd = in_place ? pn[cur0] : pn[d];
        const std::vector<int>& wr = in_place ? pn[cur0] : pn[1 - d];
        return account(L, nb, w, I.part.owned[r], I.nodes[r], rd, wr);
    };
    std::array<std::size_t, 2> from{0, 0};   // sweeps reading array 0 / 1
    for (std::size_t s = 0; s < sweeps; ++s) ++from[in_place ? cur0 : ((cur0 + s) & 1U)];

    for (unsigned r = 0; r < T; ++r) {
        RankReport rr;
        rr.rank = r;
        rr.cpu = team.layout().ranks[r].cpu;
        rr.node = I.nodes[r];
        rr.owned = I.part.owned[r];
        rr.weight = weights[r];
        rr.busy_seconds = std::max(0.0, timing.busy_seconds[r] - waited[r]);
        if (!dyn) {
            rr.work = work[r];
            rr.slabs_updated = work[r].size() * sweeps;
            if (sweeps == 0) {
                rr.traffic = account_dir(work[r], r, cur0);
            } else {
                Traffic sum;
                for (unsigned d = 0; d < 2; ++d)
                    if (from[d] > 0) sum += scaled(account_dir(work[r], r, d), from[d], 1);
                rr.traffic = scaled(sum, 1, sweeps);
            }
        } else {
            // Per chunk, each distinct (chunk, direction) accounted once.
            std::map<std::tuple<std::size_t, std::size_t, unsigned>, std::size_t> seen;
            std::size_t slabs = 0;
            for (const ChunkRecord& c : chunks[r]) {
                const std::size_t s = c.part / parts;
                const unsigned d = in_place ? cur0 : static_cast<unsigned>((cur0 + s) & 1U);
                ++seen[{c.lo, c.hi, d}];
                slabs += c.hi - c.lo;
            }
            rr.slabs_updated = slabs / parts;
            Traffic sum;
            for (const auto& [key, n] : seen) {
                const auto [lo, hi, d] = key;
                sum += scaled(account_dir(Block{lo, hi}, r, d), n, 1);
            }
            Traffic t = scaled(sum, 1, std::max<std::size_t>(1, sweeps * parts));
            // The owned block's pages do not depend on the chunks.
            const Traffic block = account_dir(I.part.work[r], r, cur0);
            t.block_pages = block.block_pages;
            t.block_pages_on_node = block.block_pages_on_node;
            rr.traffic = t;
        }
        rep.read_bytes_per_sweep += rr.traffic.read_bytes;
        rep.remote_read_bytes_per_sweep += rr.traffic.remote_read_bytes;
        rep.remote_write_bytes_per_sweep += rr.traffic.remote_write_bytes;
        rep.halo_pages += rr.traffic.halo_pages;
        rep.remote_halo_pages += rr.traffic.remote_halo_pages;
        rep.ranks.push_back(rr);
    }
    rep.placement_report = I.placement;
    return rep;
}

}  // namespace numaware::stencil
