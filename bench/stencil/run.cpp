// bench/stencil/run.cpp — `numaware_bench_stencil run`: every requested
// (kind, placement) pair through the skeleton, each checked against a
// plain serial implementation written here.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "common.hpp"
#include "numaware/error.hpp"
#include "numaware/machine.hpp"
#include "numaware/placement.hpp"
#include "numaware/stencil.hpp"
#include "numaware/team.hpp"

namespace nwbench {
namespace {

using namespace numaware;
using namespace numaware::stencil;

// ---- the serial references -------------------------------------------

// A dense grid (no padding), boundary included, initialised like the
// skeleton's.
struct Grid {
    Shape shape;
    std::size_t sx = 0, sp = 0;
    std::vector<double> v;

    explicit Grid(const Shape& s) : shape(s), sx(s.nx), sp(s.nx * s.ny), v(s.cells()) {
        for (std::size_t z = 0; z < s.nz; ++z)
            for (std::size_t y = 0; y < s.ny; ++y)
                for (std::size_t x = 0; x < s.nx; ++x) v[index(x, y, z)] = init_value(x, y, z);
    }
    std::size_t index(std::size_t x, std::size_t y, std::size_t z) const { return z * sp + y * sx + x; }
    Access access(std::size_t x, std::size_t y, std::size_t z) const {
        return Access{v.data() + index(x, y, z), static_cast<std::ptrdiff_t>(sx), static_cast<std::ptrdiff_t>(sp),
                      x,
                      y,
                      z};
    }
};

// Interior bounds: cells within the radius of an edge are fixed.
struct Interior {
    std::size_t x0, x1, y0, y1, z0, z1;
};
Interior interior(const Shape& s, const Neighbourhood& nb) {
    const bool d3 = s.dims == 3;
    return {nb.radius_x(),          s.nx - nb.radius_x(),           nb.radius_y(), s.ny - nb.radius_y(),
            d3 ? nb.radius_z() : 0, d3 ? s.nz - nb.radius_z() : 1};
}

// Double-buffered (Jacobi, variable).
template <class F>
void reference_jacobi(Grid& g, const Neighbourhood& nb, std::size_t sweeps, const F& f) {
    const Interior in = interior(g.shape, nb);
    Grid next = g;
    for (std::size_t s = 0; s < sweeps; ++s) {
        for (std::size_t z = in.z0; z < in.z1; ++z)
            for (std::size_t y = in.y0; y < in.y1; ++y)
                for (std::size_t x = in.x0; x < in.x1; ++x) next.v[g.index(x, y, z)] = f(g.access(x, y, z));
        std::swap(g.v, next.v);
    }
}

// In place, lexicographic (x fastest, then y, then z); colour -1 = every
// cell, 0 = (x+y+z) even, 1 = odd.
template <class F>
void reference_in_place(Grid& g, const Neighbourhood& nb, int colour, const F& f) {
    const Interior in = interior(g.shape, nb);
    for (std::size_t z = in.z0; z < in.z1; ++z)
        for (std::size_t y = in.y0; y < in.y1; ++y)
            for (std::size_t x = in.x0; x < in.x1; ++x) {
                if (colour >= 0 && static_cast<int>((x + y + z) & 1U) != colour) continue;
                g.v[g.index(x, y, z)] = f(g.access(x, y, z));
            }
}

struct Comparison {
    bool exact = true;
    double max_error = 0;
    std::size_t differing = 0;
};

template <class At>
Comparison compare(const Grid& g, const At& at) {
    Comparison c;
    for (std::size_t z = 0; z < g.shape.nz; ++z)
        for (std::size_t y = 0; y < g.shape.ny; ++y)
            for (std::size_t x = 0; x < g.shape.nx; ++x) {
                const double got = at(x, y, z);
                const double want = g.v[g.index(x, y, z)];
                if (got == want) continue;   // NaN never equals: counted below
                c.exact = false;
                ++c.differing;
                const double e = std::fabs(got - want);
                c.max_error = std::isnan(e) ? std::numeric_limits<double>::infinity() : std::max(c.max_error, e);
            }
    return c;
}

// ---- one run ---------------------------------------------------------

struct Outcome {
    std::string kind, placement, distribution, points, size;
    bool matches = false;
    double max_error = 0;
    std::string detail;
    Report report;
    std::vector<int> balancing_during;
    int balancing_after = -1;
};

struct Setup {
    Team* team;
    Options options;   // placement, distribution, streaming, balancing; on_sweep set per run
    bool probe = false;
};

// Sets on_sweep for --probe-balancing.
Options with_probe(const Setup& s, Outcome& out) {
    Options o = s.options;
    if (s.probe) o.on_sweep = [&out](std::size_t) { out.balancing_during.push_back(read_numa_balancing()); };
    return o;
}

template <class F>
void run_grid(const Setup& s, Kind kind, const Shape& shape, const Neighbourhood& nb, std::size_t sweeps, const F& f,
              Outcome& out) {
    Grid g(shape);
    {
        Skeleton sk{*s.team, shape, nb, init_value, with_probe(s, out)};
        switch (kind) {
            case Kind::jacobi: out.report = sk.jacobi(sweeps, f); break;
            case Kind::variable: out.report = sk.variable(sweeps, f); break;
            case Kind::gauss_seidel: out.report = sk.gauss_seidel(sweeps, f); break;
            case Kind::red_black: out.report = sk.red_black(sweeps, f); break;
            default: throw Error("kind", "not a grid kind");
        }
        if (s.probe) out.balancing_after = read_numa_balancing();
        switch (kind) {
            case Kind::jacobi:
            case Kind::variable: reference_jacobi(g, nb, sweeps, f); break;
            case Kind::gauss_seidel:
                for (std::size_t i = 0; i < sweeps; ++i) reference_in_place(g, nb, -1, f);
                break;
            default:
                for (std::size_t i = 0; i < sweeps; ++i) {
                    reference_in_place(g, nb, 0, f);
                    reference_in_place(g, nb, 1, f);
                }
                break;
        }
        const Comparison c = compare(g, [&sk](std::size_t x, std::size_t y, std::size_t z) { return sk.at(x, y, z); });
        out.matches = c.exact;
        out.max_error = c.max_error;
        out.detail = c.exact ? fmt::format("bit-exact against the serial {} over all {} cells", to_string(kind),
                                           shape.cells())
                             : fmt::format("{} of {} cells differ from the serial {}", c.differing, shape.cells(),
                                           to_string(kind));
        if (!c.exact && kind == Kind::red_black && nb.offsets().size() > 2U * nb.dims() + 1U)
            out.detail += " (with a box neighbourhood a colour reads its own colour, so in-place order matters)";
    }
}

// The right-hand side of the multigrid problem: a hash in [-0.5, 0.5).
double mg_rhs(std::size_t x, std::size_t y, std::size_t z) {
    return static_cast<double>(cell_hash(x, y, z) & 0xFFFFU) / 65536.0 - 0.5;
}

// A serial multigrid V-cycle on dense arrays, written from the algorithm
// stencil.hpp and the Multigrid documentation give: -Laplace(u) = f with
// the unscaled operator L(u) = 2d·u - sum(axis neighbours) on every level
// (so the coarse right-hand side is 4 x the full-weighted residual), u = 0
// on every boundary, per cycle and level: zero u (coarser levels), damped
// Jacobi pre-smoothing, residual, full-weighting restriction; on the
// coarsest level (m+1)^2 Jacobi sweeps (m = its largest interior extent);
// then bilinear/trilinear prolongation added to u and post-smoothing.
struct MgLevel {
    Shape s;
    std::size_t sy = 0, sz = 0;
    std::vector<double> u, next, f, r;
    explicit MgLevel(const Shape& shape)
        : s(shape), sy(shape.nx), sz(shape.dims == 3 ? shape.nx * shape.ny : 0), u(shape.cells()),
          next(shape.cells()), f(shape.cells()), r(shape.cells()) {}
    std::size_t index(std::size_t x, std::size_t y, std::size_t z) const { return z * sz + y * sy + x; }
    template <class Fn>
    void interior(Fn&& fn) const {
        const bool d3 = s.dims == 3;
        for (std::size_t z = d3 ? 1 : 0; z < (d3 ? s.nz - 1 : 1); ++z)
            for (std::size_t y = 1; y + 1 < s.ny; ++y)
                for (std::size_t x = 1; x + 1 < s.nx; ++x) fn(x, y, z, index(x, y, z));
    }
    // (f + sum of axis neighbours) - 2d·u
    double res(const std::vector<double>& v, std::size_t i) const {
        double sum = v[i - 1] + v[i + 1] + v[i - sy] + v[i + sy];
        if (sz != 0) sum = sum + v[i - sz] + v[i + sz];
        return (f[i] + sum) - 2.0 * s.dims * v[i];
    }
};

std::vector<MgLevel> serial_multigrid(const Shape& finest, unsigned levels, std::size_t cycles,
                                      const MultigridOptions& mg) {
    std::vector<MgLevel> lv;
    lv.emplace_back(finest);
    for (unsigned l = 1; l < levels; ++l) {
        const Shape& s = lv.back().s;
        lv.emplace_back(s.dims == 3 ? Shape::d3((s.nx - 1) / 2 + 1, (s.ny - 1) / 2 + 1, (s.nz - 1) / 2 + 1)
                                    : Shape::d2((s.nx - 1) / 2 + 1, (s.ny - 1) / 2 + 1));
    }
    lv[0].interior([&](std::size_t x, std::size_t y, std::size_t z, std::size_t i) { lv[0].f[i] = mg_rhs(x, y, z); });
    const bool d3 = finest.dims == 3;
    const double w = mg.omega / (2.0 * finest.dims);
    const Shape& cs = lv.back().s;
    const std::size_t m = std::max({cs.nx, cs.ny, d3 ? cs.nz : std::size_t{0}}) - 2;
    const std::size_t coarse_sweeps = (m + 1) * (m + 1);
    const std::size_t n = lv.size();
    auto jacobi = [&](MgLevel& L) {
        L.interior([&](std::size_t, std::size_t, std::size_t, std::size_t i) {
            L.next[i] = L.u[i] + w * L.res(L.u, i);
        });
        std::swap(L.u, L.next);
    };
    auto zero = [](MgLevel& L) {
        L.interior([&](std::size_t, std::size_t, std::size_t, std::size_t i) { L.u[i] = 0.0; });
    };
    for (std::size_t c = 0; c < cycles; ++c) {
        for (std::size_t l = 0; l + 1 < n; ++l) {
            MgLevel& F = lv[l];
            MgLevel& C = lv[l + 1];
            if (l > 0) zero(F);
            for (unsigned k = 0; k < mg.pre_smooth; ++k) jacobi(F);
            F.interior([&](std::size_t, std::size_t, std::size_t, std::size_t i) { F.r[i] = F.res(F.u, i); });
            C.interior([&](std::size_t x, std::size_t y, std::size_t z, std::size_t i) {
                const std::size_t centre = F.index(2 * x, 2 * y, 2 * z);
                double s[4] = {0, 0, 0, 0};
                const int zr = d3 ? 1 : 0;
                for (int dz = -zr; dz <= zr; ++dz)
                    for (int dy = -1; dy <= 1; ++dy)
                        for (int dx = -1; dx <= 1; ++dx) {
                            const auto off = static_cast<std::ptrdiff_t>(dx) +
                                             static_cast<std::ptrdiff_t>(dy) * static_cast<std::ptrdiff_t>(F.sy) +
                                             static_cast<std::ptrdiff_t>(dz) * static_cast<std::ptrdiff_t>(F.sz);
                            s[std::abs(dx) + std::abs(dy) + std::abs(dz)] +=
                                F.r[static_cast<std::size_t>(static_cast<std::ptrdiff_t>(centre) + off)];
                        }
                C.f[i] = d3 ? s[0] * 0.5 + s[1] * 0.25 + s[2] * 0.125 + s[3] * 0.0625
                            : s[0] * 1.0 + s[1] * 0.5 + s[2] * 0.25;
            });
        }
        if (n > 1) zero(lv.back());
        for (std::size_t k = 0; k < coarse_sweeps; ++k) jacobi(lv.back());
        for (std::size_t l = n - 1; l-- > 0;) {
            MgLevel& F = lv[l];
            const MgLevel& C = lv[l + 1];
            F.interior([&](std::size_t x, std::size_t y, std::size_t z, std::size_t i) {
                const std::size_t ax = x / 2, bx = (x + 1) / 2, ay = y / 2, by = (y + 1) / 2;
                const std::size_t az = z / 2, bz = (z + 1) / 2;
                auto q = [&](std::size_t cy, std::size_t cz) {
                    return 0.5 * (C.u[C.index(ax, cy, cz)] + C.u[C.index(bx, cy, cz)]);
                };
                auto p = [&](std::size_t cz) { return 0.5 * (q(ay, cz) + q(by, cz)); };
                F.u[i] += d3 ? 0.5 * (p(az) + p(bz)) : p(0);
            });
            for (unsigned k = 0; k < mg.post_smooth; ++k) jacobi(F);
        }
    }
    return lv;
}

// Multigrid: the skeleton's finest u against the serial V-cycle above
// (<= 1e-12 relative to max |u|), plus the residual: recomputed serially
// from the skeleton's u it must equal Multigrid::residual_norm() (1e-12
// relative) and be below the initial residual max |f|.
void run_multigrid(const Setup& s, const Shape& shape, std::size_t cycles, Outcome& out) {
    Multigrid mg{*s.team, shape, mg_rhs, with_probe(s, out)};
    out.report = mg.vcycles(cycles);
    if (s.probe) out.balancing_after = read_numa_balancing();
    const std::vector<MgLevel> ref = serial_multigrid(shape, mg.levels(), cycles, MultigridOptions{});
    const MgLevel& R = ref[0];
    const bool d3 = shape.dims == 3;
    double r0 = 0, r = 0, diff = 0, umax = 0;
    for (std::size_t z = 0; z < shape.nz; ++z)
        for (std::size_t y = 0; y < shape.ny; ++y)
            for (std::size_t x = 0; x < shape.nx; ++x) {
                const double u = mg.at(x, y, z);
                const double want = R.u[R.index(x, y, z)];
                diff = std::isnan(u) ? std::numeric_limits<double>::infinity() : std::max(diff, std::fabs(u - want));
                umax = std::max(umax, std::fabs(want));
                const bool edge = x == 0 || y == 0 || x == shape.nx - 1 || y == shape.ny - 1 ||
                                  (d3 && (z == 0 || z == shape.nz - 1));
                if (edge) continue;
                const double f = mg_rhs(x, y, z);
                double lap = mg.at(x - 1, y, z) + mg.at(x + 1, y, z) + mg.at(x, y - 1, z) + mg.at(x, y + 1, z);
                if (d3) lap += mg.at(x, y, z - 1) + mg.at(x, y, z + 1);
                lap -= (d3 ? 6.0 : 4.0) * u;
                r0 = std::max(r0, std::fabs(f));
                r = std::max(r, std::fabs(f + lap));
            }
    const double lib = mg.residual_norm();
    const double rel_res = std::fabs(lib - r) / std::max(r, std::numeric_limits<double>::min());
    const double rel = diff / std::max(umax, std::numeric_limits<double>::min());
    const double per_cycle = cycles > 0 && r0 > 0 ? std::pow(r / r0, 1.0 / static_cast<double>(cycles)) : 1.0;
    out.max_error = rel;
    out.matches = rel <= 1e-12 && rel_res <= 1e-12 && r < r0;
    out.detail = fmt::format(
        "serial V-cycle reference: max |u - u_ref| / max |u_ref| = {:.1e} ({}; need <= 1e-12); residual {:.3e} -> "
        "{:.3e} after {} V-cycles, {} levels ({:.3f} per cycle); residual_norm() vs serial recomputation {:.1e} "
        "relative",
        rel, diff == 0 ? "bit-exact" : "not bit-exact", r0, r, cycles, mg.levels(), per_cycle, rel_res);
}

double bf_init(std::size_t i) { return static_cast<double>(cell_hash(i, 7, 11) & 0xFFU) / 256.0; }

void run_butterfly(const Setup& s, std::size_t n, Outcome& out) {
    Butterfly bf{*s.team, n, bf_init, with_probe(s, out)};
    out.report = bf.run(walsh_hadamard);
    if (s.probe) out.balancing_after = read_numa_balancing();
    std::vector<double> v(n), w(n);
    for (std::size_t i = 0; i < n; ++i) v[i] = bf_init(i);
    unsigned phases = 0;
    while ((std::size_t{1} << phases) < n) ++phases;
    for (unsigned p = 0; p < phases; ++p) {
        for (std::size_t i = 0; i < n; ++i) w[i] = walsh_hadamard(v[i], v[i ^ (std::size_t{1} << p)], i, p);
        std::swap(v, w);
    }
    Comparison c;
    for (std::size_t i = 0; i < n; ++i) {
        const double got = bf.at(i);
        if (got == v[i]) continue;
        c.exact = false;
        ++c.differing;
        const double e = std::fabs(got - v[i]);
        c.max_error = std::isnan(e) ? std::numeric_limits<double>::infinity() : std::max(c.max_error, e);
    }
    out.matches = c.exact;
    out.max_error = c.max_error;
    out.detail = c.exact ? fmt::format("bit-exact against a serial Walsh-Hadamard transform, {} phases", phases)
                         : fmt::format("{} of {} elements differ from the serial Walsh-Hadamard transform",
                                       c.differing, n);
}

// ---- input -----------------------------------------------------------

std::vector<std::size_t> parse_extents(const std::string& text) {
    std::vector<std::size_t> out;
    std::string cur;
    auto flush = [&]() {
        std::size_t used = 0;
        unsigned long long v = 0;
        try {
            v = std::stoull(cur, &used);
        } catch (const std::exception&) {
            used = 0;
        }
        if (cur.empty() || used != cur.size() || cur[0] == '-' || cur[0] == '+' || v == 0)
            throw Error("--size", fmt::format("expected N[,N[,N]] with positive integers, got '{}'", text));
        out.push_back(static_cast<std::size_t>(v));
        cur.clear();
    };
    for (char ch : text) {
        if (ch == ',')
            flush();
        else
            cur += ch;
    }
    flush();
    if (out.size() > 3) throw Error("--size", fmt::format("at most three extents, got '{}'", text));
    return out;
}

Shape shape_of(const std::vector<std::size_t>& e, unsigned dims, std::size_t fallback) {
    if (e.empty()) return dims == 3 ? Shape::d3(fallback, fallback, fallback) : Shape::d2(fallback, fallback);
    if (e.size() == 1) return dims == 3 ? Shape::d3(e[0], e[0], e[0]) : Shape::d2(e[0], e[0]);
    if (e.size() != dims)
        throw Error("--size", fmt::format("{} extents given for a {}-D grid (give 1 or {})", e.size(), dims, dims));
    return dims == 3 ? Shape::d3(e[0], e[1], e[2]) : Shape::d2(e[0], e[1]);
}

// Largest 2^k + 1 <= n (n itself below 3).
std::size_t down_to_pow2_plus_1(std::size_t n) {
    if (n < 3) return n;
    std::size_t p = 1;
    while (2 * p + 1 <= n) p *= 2;
    return p + 1;
}

std::size_t pow2_at_least(std::size_t n) {
    std::size_t p = 1;
    while (p < n) p *= 2;
    return p;
}

std::size_t pow2_at_most(std::size_t n) {
    std::size_t p = 1;
    while (2 * p <= n) p *= 2;
    return p;
}

const std::vector<Kind> kAllKinds{Kind::jacobi,   Kind::gauss_seidel, Kind::red_black,
                                  Kind::variable, Kind::multigrid,    Kind::butterfly};

struct PlacementChoice {
    PagePlacement placement;
    std::optional<PlacementPolicy> policy;
    std::string name;
};

std::vector<PlacementChoice> parse_placements(const std::string& text, const Machine& machine) {
    std::vector<PlacementChoice> out;
    if (text == "all") {
        for (PagePlacement p : {PagePlacement::serial_first_touch, PagePlacement::parallel_first_touch, PagePlacement::interleave,
                            PagePlacement::stencil_aware})
            out.push_back({p, std::nullopt, std::string(to_string(p))});
        return out;
    }
    if (text.rfind("explicit", 0) == 0) {
        if (text.size() <= 9 || text[8] != ':')
            throw Error("--placement", "explicit needs a policy: explicit:SPEC (e.g. explicit:interleave:all)");
        const std::string spec = text.substr(9);
        out.push_back({PagePlacement::explicit_plan, parse_policy(spec, machine), "explicit:" + spec});
        return out;
    }
    const PagePlacement p = parse_placement(text, "--placement");
    if (p == PagePlacement::explicit_plan)
        throw Error("--placement", "explicit needs a policy: explicit:SPEC (e.g. explicit:interleave:all)");
    out.push_back({p, std::nullopt, std::string(to_string(p))});
    return out;
}

std::string fmt_bytes(double b) {
    if (b >= 1e9) return fmt::format("{:.2f} GB", b / 1e9);
    if (b >= 1e6) return fmt::format("{:.2f} MB", b / 1e6);
    if (b >= 1e3) return fmt::format("{:.1f} kB", b / 1e3);
    return fmt::format("{:.0f} B", b);
}

}  // namespace

int run_command(const RunArgs& a) {
    const Machine machine = Machine::from_spec(a.machine);
    TeamMapping mapping;
    mapping.kind = parse_mapping_kind(a.mapping, "--mapping");
    mapping.threads = a.threads != 0 ? a.threads : static_cast<unsigned>(machine.cpu_count());
    if (a.sweeps == 0) throw Error("--sweeps", "must be at least 1, got 0");

    std::vector<Kind> kinds;
    const bool all_kinds = a.kind == "all";
    if (all_kinds)
        kinds = kAllKinds;
    else {
        try {
            kinds.push_back(parse_kind(a.kind, "--kind"));
        } catch (const Error&) {
            std::string names;
            for (Kind k : kAllKinds) names += std::string(to_string(k)) + ", ";
            throw Error("--kind", fmt::format("'{}' is not a stencil kind; accepted: {}all", a.kind, names));
        }
    }
    const Neighbourhood points = Neighbourhood::parse(a.points, "--points");
    const unsigned dims = points.dims();
    const std::vector<std::size_t> extents = a.size.empty() ? std::vector<std::size_t>{} : parse_extents(a.size);
    const std::vector<PlacementChoice> placements = parse_placements(a.placement, machine);
    const Distribution distribution = parse_distribution(a.distribution, "--distribution");

    Team team{machine, mapping};
    const int balancing_at_start = read_numa_balancing();
    std::vector<Outcome> outcomes;
    nlohmann::json skipped = nlohmann::json::array();
    bool all_match = true;

    // The header is printed with the first result, so that input the
    // library refuses on the first run leaves stdout empty.
    bool header_done = a.json;
    auto header = [&]() {
        if (header_done) return;
        header_done = true;
        fmt::print("machine: {}; {} threads ({}); balancing at start: {}\n", machine.name, mapping.threads,
                   a.mapping, balancing_at_start);
        fmt::print("{:<12} {:<20} {:<13} {:<9} {:<12} {:>6} {:>10} {:>9} {:>7} {:>12} {:>6}  {}\n", "kind",
                   "placement", "distribution", "points", "size", "sweeps", "s/sweep", "Mupd/s", "GB/s",
                   "remote/sweep", "halo", "matches");
    };
    for (Kind kind : kinds) {
        for (const PlacementChoice& pc : placements) {
            Setup s{&team, {}, a.probe_balancing};
            s.options.placement = pc.placement;
            s.options.explicit_policy = pc.policy;
            s.options.distribution = distribution;
            s.options.balancing_off = !a.no_balancing_off;
            s.options.streaming_stores = a.streaming;
            Outcome out;
            out.kind = std::string(to_string(kind));
            out.placement = pc.name;
            out.distribution = std::string(to_string(distribution));
            // With --kind all, a combination the kind refuses (red-black with
            // a box neighbourhood, Gauss-Seidel or multigrid with a
            // non-static distribution) is skipped and listed; a single kind
            // reports the refusal and exits 2.
            try {
                switch (kind) {
                    case Kind::multigrid: {
                        Shape shape = shape_of(extents, dims, dims == 3 ? 65 : 513);
                        std::string note;
                        if (all_kinds && !extents.empty()) {
                            const Shape given = shape;
                            shape.nx = down_to_pow2_plus_1(shape.nx);
                            shape.ny = down_to_pow2_plus_1(shape.ny);
                            if (dims == 3) shape.nz = down_to_pow2_plus_1(shape.nz);
                            if (!(shape == given))
                                note = fmt::format("; --size {} rounded down to 2^k+1: {}", given.to_string(),
                                                   shape.to_string());
                        }
                        out.points = dims == 3 ? "7-point" : "5-point";
                        out.size = shape.to_string();
                        run_multigrid(s, shape, a.sweeps, out);
                        out.detail += note;
                        break;
                    }
                    case Kind::butterfly: {
                        std::size_t n = std::size_t{1} << 18;
                        if (!extents.empty()) {
                            if (all_kinds) {
                                const Shape g = shape_of(extents, dims, 0);
                                n = std::max(pow2_at_most(g.cells()), pow2_at_least(512U * mapping.threads));
                            } else {
                                if (extents.size() != 1)
                                    throw Error("--size",
                                                fmt::format("butterfly takes one extent n, got '{}'", a.size));
                                n = extents[0];
                            }
                        }
                        out.points = "butterfly";
                        out.size = std::to_string(n);
                        run_butterfly(s, n, out);
                        break;
                    }
                    case Kind::variable: {
                        const Shape shape = shape_of(extents, dims, dims == 3 ? 66 : 514);
                        const Neighbourhood nb = Neighbourhood::box(dims, 2);
                        out.points = nb.name();
                        out.size = shape.to_string();
                        run_grid(s, kind, shape, nb, a.sweeps, UpdateVariable{dims}, out);
                        break;
                    }
                    default: {
                        const Shape shape = shape_of(extents, dims, dims == 3 ? 66 : 514);
                        out.points = points.name();
                        out.size = shape.to_string();
                        const std::string& p = points.name();
                        if (p == "5-point")
                            run_grid(s, kind, shape, points, a.sweeps, Update5{}, out);
                        else if (p == "9-point")
                            run_grid(s, kind, shape, points, a.sweeps, Update9{}, out);
                        else if (p == "7-point")
                            run_grid(s, kind, shape, points, a.sweeps, Update7{}, out);
                        else if (p == "27-point")
                            run_grid(s, kind, shape, points, a.sweeps, Update27{}, out);
                        else
                            throw Error("--points",
                                        fmt::format("must be 5-point, 9-point, 7-point or 27-point, got '{}'",
                                                    a.points));
                        break;
                    }
                }
            } catch (const Error& e) {
                if (!all_kinds || (e.field() != "neighbourhood" && e.field() != "distribution")) throw;
                skipped.push_back({{"kind", out.kind}, {"placement", out.placement}, {"reason", e.what()}});
                if (!a.json) {
                    header();
                    fmt::print("{:<12} {:<20} skipped: {}\n", out.kind, out.placement, e.what());
                }
                continue;
            }
            all_match = all_match && out.matches;
            if (!a.json) {
                header();
                const Report& r = out.report;
                fmt::print("{:<12} {:<20} {:<13} {:<9} {:<12} {:>6} {:>10.3e} {:>9.1f} {:>7.2f} {:>12} {:>6}  {}\n",
                           out.kind, out.placement, out.distribution, out.points, out.size, r.sweeps,
                           r.seconds_per_sweep, r.updates_per_second / 1e6, r.bandwidth_gbs,
                           fmt_bytes(static_cast<double>(r.remote_read_bytes_per_sweep +
                                                         r.remote_write_bytes_per_sweep)),
                           r.halo_pages, out.matches ? "yes" : "NO");
                if (!out.matches || kind == Kind::multigrid) fmt::print("    {}\n", out.detail);
                std::fflush(stdout);
            }
            outcomes.push_back(std::move(out));
        }
    }

    if (a.json) {
        nlohmann::json runs = nlohmann::json::array();
        for (const Outcome& o : outcomes) {
            nlohmann::json j{{"kind", o.kind},
                             {"placement", o.placement},
                             {"distribution", o.distribution},
                             {"points", o.points},
                             {"size", o.size},
                             {"matches", o.matches},
                             {"max_error", o.max_error},
                             {"detail", o.detail},
                             {"report", nlohmann::json::parse(o.report.to_json())}};
            if (a.probe_balancing) {
                j["balancing_during"] = o.balancing_during;
                j["balancing_after"] = o.balancing_after;
            }
            runs.push_back(std::move(j));
        }
        nlohmann::json doc{{"machine", machine.name},
                           {"threads", mapping.threads},
                           {"mapping", a.mapping},
                           {"sweeps", a.sweeps},
                           {"date", utc_now()},
                           {"load", read_loadavg()},
                           {"balancing_at_start", balancing_at_start},
                           {"all_match", all_match},
                           {"runs", std::move(runs)},
                           {"skipped", std::move(skipped)}};
        fmt::print("{}\n", doc.dump(2));
    } else {
        header();
        fmt::print("{}\n", all_match ? "all runs match their serial references"
                                     : "SOME RUNS DO NOT MATCH their serial references");
    }
    return all_match ? 0 : 1;
}

}  // namespace nwbench
