// sim/memory/rodinia_streamcluster.cpp — Streamcluster: the gain of opening
// a candidate centre in online k-median clustering, the pattern of
// Rodinia's Streamcluster.
//
// Source of the algorithm: the local-search k-median of L. O'Callaghan,
// N. Mishra, A. Meyerson, S. Guha, R. Motwani, "Streaming-data algorithms
// for high-quality clustering", ICDE 2002, as the PARSEC Streamcluster
// (C. Bienia et al., PACT 2008) and Rodinia's port of it (Che et al.,
// IISWC 2009) parallelise its inner step, pgain(x): number the open
// centres (a centre table), then for every point compare its distance to
// candidate x (times its weight) with its current cost: if x is closer the
// point is marked to switch, otherwise what it would save its centre is
// added to the thread's own row of savings (work memory); sum the threads'
// rows; if opening x pays, move the marked points to x (their cost
// recomputed) and close the centres whose savings pay for it.
//
// Modelled: coordinates of points × dims floats (a point's contiguous);
// per point a 32-byte record (weight, the pointer to its coordinates, its
// centre, its cost); the is-centre and switch flags (1 B), the centre
// table (4 B a point), per thread a row of savings (doubles, padded to
// whole lines) and the summed savings. Per pgain call, one phase each:
// centre-table (per point of the thread's block: clear its switch flag,
// load its is-centre flag, store a centre's number; the thread's savings
// row cleared first), gain (per point: the coordinate pointer, then the
// vectorised distance to x, 8 floats a load of the point (the first's
// address is the pointer just loaded: dependent) and of x; weight and
// cost; a switching point stores its flag, any other loads its centre,
// that centre's number (dependent) and its savings slot (dependent), and
// stores the slot), reduce (thread 0: every thread's savings, summed),
// switch (per point: its centre, that centre's number and summed savings
// (dependent, the close test), its switch flag; a switching point its
// distance to x again and stores its cost and centre; then per point the
// is-centre flag, and for a centre its number and summed savings; x's
// owner marks x a centre). Points are cut with static_block in every
// loop. Which points switch, and that each call opens its candidate, is
// drawn before the run from a seeded generator (a point switches with
// probability 1 / switch_one_in; centres never do), the same for any
// thread count; no centre closes.
// Left out: the streaming driver (reading chunks, the k-means++-like
// speedy initial solution, the outer local search that picks candidates
// and decides from the gain), the float arithmetic (instruction gaps).
// Accesses per call (K centres open, M points switching):
// centre-table threads × (K + 1) + 2 × points + K; gain points ×
// (3 + dims / 4) + M + 4 × (points - M); reduce (K + 1) × (threads + 1);
// switch 5 × points + M × (4 + dims / 4) + 2 × K + 1.
#include <algorithm>
#include <memory>
#include <vector>

#include "sim/memory/arrays.hpp"
#include "sim/memory/kernel_common.hpp"
#include "sim/memory/loop_kernel.hpp"
#include "sim/memory/rodinia_kernels.hpp"

namespace numaware::sim::memory::rodinia {

using detail::base_of;
using detail::concat;
using detail::each;
using detail::Emitter;
using detail::fill_bytes;
using detail::Range;
using detail::require;
using detail::Share;
using detail::static_block;

StreamclusterSize streamcluster_size(char cls) {
    StreamclusterSize s;
    s.centres = 10;
    s.candidates = 2;
    if (cls == 'S') {
        s.points = 4096;
        s.dims = 64;
    } else {
        // Coordinates 49152 × 256 × 4 B = 48 MiB, the point records 1.5 MiB.
        s.points = 49152;
        s.dims = 256;
    }
    return s;
}

std::vector<StreamclusterCall> streamcluster_plan(const StreamclusterSize& s) {
    std::mt19937_64 rng(s.seed);
    std::vector<std::uint64_t> centres;
    while (centres.size() < s.centres) {
        const std::uint64_t c = detail::draw_below(rng, s.points);
        if (std::find(centres.begin(), centres.end(), c) == centres.end()) centres.push_back(c);
    }
    std::sort(centres.begin(), centres.end());
    const auto is_centre = [&centres](std::uint64_t i) { return std::binary_search(centres.begin(), centres.end(), i); };
    std::vector<std::uint32_t> assign(s.points);
    for (std::uint64_t i = 0; i < s.points; ++i)
        assign[i] = static_cast<std::uint32_t>(is_centre(i) ? i : centres[detail::draw_below(rng, centres.size())]);
    std::vector<StreamclusterCall> calls;
    for (unsigned c = 0; c < s.candidates; ++c) {
        StreamclusterCall call;
        do call.candidate = detail::draw_below(rng, s.points);
        while (is_centre(call.candidate));
        call.centres = centres;
        call.assign = assign;
        call.moves.assign(s.points, false);
        for (std::uint64_t i = 0; i < s.points; ++i)
            call.moves[i] = i == call.candidate || (!is_centre(i) && detail::draw_below(rng, s.switch_one_in) == 0);
        // The candidate opens; the switching points move to it.
        centres.insert(std::upper_bound(centres.begin(), centres.end(), call.candidate), call.candidate);
        for (std::uint64_t i = 0; i < s.points; ++i)
            if (call.moves[i]) assign[i] = static_cast<std::uint32_t>(call.candidate);
        calls.push_back(std::move(call));
    }
    return calls;
}

namespace {

enum Array : unsigned { coords, records, is_center, center_table, switch_flags, savings, summed };
enum Pc : std::uint32_t { pc_init = 100, pc_table = 200, pc_gain = 300, pc_reduce = 400, pc_switch = 500 };
constexpr unsigned lanes = 8;   // floats a vector load
// A point's record: weight at +0, its coordinates' pointer at +8, its centre at +16, its cost at +24.
constexpr std::uint64_t record_bytes = 32, weight_at = 0, coord_ptr_at = 8, assign_at = 16, cost_at = 24;

struct Layout {
    std::uint64_t dims;
    std::uint64_t row_bytes;   // a thread's savings row, whole lines
    std::uint64_t coord(std::uint64_t i, std::uint64_t v) const { return base_of(coords) + (i * dims + v * lanes) * 4; }
    std::uint64_t record(std::uint64_t i, std::uint64_t field) const { return base_of(records) + i * record_bytes + field; }
    std::uint64_t flag(Array a, std::uint64_t i) const { return base_of(a) + i; }
    std::uint64_t table(std::uint64_t i) const { return base_of(center_table) + i * 4; }
    std::uint64_t saving(std::uint64_t rank, std::uint64_t j) const { return base_of(savings) + rank * row_bytes + j * 8; }
    std::uint64_t sum(std::uint64_t j) const { return base_of(summed) + j * 8; }
};

// The distance of point i to x, 8 floats a load of each; the first load of
// i's coordinates follows the load of its pointer.
void distance(Emitter& e, const Layout& l, std::uint64_t i, std::uint64_t x, std::uint32_t pc) {
    for (std::uint64_t v = 0; v < l.dims / lanes; ++v) {
        if (v == 0) e.load_indirect(l.coord(i, v), pc, 2, 32);
        else e.load(l.coord(i, v), pc, 2, 32);
        e.load(l.coord(x, v), pc + 1, 0, 32);
    }
}

struct Call {
    StreamclusterCall plan;
    std::vector<std::uint32_t> number;   // a centre's number in the centre table, by point (centres only)
    bool centre(std::uint64_t i) const { return std::binary_search(plan.centres.begin(), plan.centres.end(), i); }
};

class Streamcluster final : public detail::LoopKernel {
public:
    Streamcluster(const StreamclusterSize& s, std::string name) : LoopKernel(std::move(name)) {
        const std::uint64_t n = s.points;
        const std::uint64_t max_centres = std::uint64_t{s.centres} + s.candidates;
        const Layout l{s.dims, (max_centres + 1 + 7) / 8 * 64};
        add_loop("init", false, [l, n, max_centres](unsigned r, unsigned t) {
            const Range mine = static_block(n, t, r);
            std::vector<Share> parts;
            parts.push_back(fill_bytes(l.coord(mine.begin, 0), l.coord(mine.end, 0), pc_init));
            parts.push_back(fill_bytes(l.record(mine.begin, 0), l.record(mine.end, 0), pc_init + 1));
            for (Array a : {is_center, switch_flags})
                parts.push_back(fill_bytes(l.flag(a, mine.begin), l.flag(a, mine.end), pc_init + unsigned{a}));
            parts.push_back(fill_bytes(l.table(mine.begin), l.table(mine.end), pc_init + 3));
            parts.push_back(fill_bytes(l.saving(r, 0), l.saving(r + 1, 0), pc_init + 5));
            if (r == 0) parts.push_back(fill_bytes(l.sum(0), l.sum(max_centres + 1), pc_init + 6));
            return concat(std::move(parts));
        });
        const std::vector<StreamclusterCall> plan = streamcluster_plan(s);
        for (unsigned c = 0; c < s.candidates; ++c) {
            auto call = std::make_shared<Call>();
            call->plan = plan[c];
            call->number.assign(n, 0);
            for (std::uint64_t k = 0; k < call->plan.centres.size(); ++k)
                call->number[call->plan.centres[k]] = static_cast<std::uint32_t>(k);
            const std::uint64_t centres = call->plan.centres.size(), x = call->plan.candidate;
            const std::string pre = fmt::format("iter{}:", c + 1);
            add_loop(pre + "centre-table", true, [l, n, call, centres](unsigned r, unsigned t) {
                std::vector<Share> parts;
                parts.push_back(each(Range{0, centres + 1}, 64, [l, r](std::uint64_t j, Emitter& e) {
                    e.store(l.saving(r, j), pc_table, 1);
                }));
                parts.push_back(each(static_block(n, t, r), 1024, [l, call](std::uint64_t i, Emitter& e) {
                    e.store(l.flag(switch_flags, i), pc_table + 1, 1, 1);
                    e.load(l.flag(is_center, i), pc_table + 2, 1, 1);
                    if (call->centre(i)) e.store(l.table(i), pc_table + 3, 1, 4);
                }));
                return concat(std::move(parts));
            });
            add_loop(pre + "gain", true, [l, n, call, x](unsigned r, unsigned t) {
                return each(static_block(n, t, r), 256, [l, call, x, r](std::uint64_t i, Emitter& e) {
                    e.load(l.record(i, coord_ptr_at), pc_gain, 2, 8);
                    distance(e, l, i, x, pc_gain + 1);
                    e.load(l.record(i, weight_at), pc_gain + 3, 2, 4);
                    e.load(l.record(i, cost_at), pc_gain + 4, 1, 4);
                    if (call->plan.moves[i]) {
                        e.store(l.flag(switch_flags, i), pc_gain + 5, 2, 1);
                        return;
                    }
                    const std::uint64_t slot = call->number[call->plan.assign[i]];
                    e.load(l.record(i, assign_at), pc_gain + 6, 2, 8);
                    e.load_indirect(l.table(call->plan.assign[i]), pc_gain + 7, 0, 4);
                    e.load_indirect(l.saving(r, slot), pc_gain + 8, 0);
                    e.store(l.saving(r, slot), pc_gain + 9, 1);
                });
            });
            add_loop(pre + "reduce", true, [l, centres](unsigned r, unsigned t) {
                if (r != 0) return Share{};
                return each(Range{0, centres + 1}, 64, [l, t](std::uint64_t j, Emitter& e) {
                    for (unsigned o = 0; o < t; ++o) e.load(l.saving(o, j), pc_reduce, 1);
                    e.store(l.sum(j), pc_reduce + 1, 1);
                });
            });
            add_loop(pre + "switch", true, [l, n, call, x](unsigned r, unsigned t) {
                const Range mine = static_block(n, t, r);
                std::vector<Share> parts;
                parts.push_back(each(mine, 256, [l, call, x](std::uint64_t i, Emitter& e) {
                    const std::uint64_t centre = call->plan.assign[i];
                    e.load(l.record(i, assign_at), pc_switch, 2, 8);
                    e.load_indirect(l.table(centre), pc_switch + 1, 0, 4);
                    e.load_indirect(l.sum(call->number[centre]), pc_switch + 2, 0);
                    e.load(l.flag(switch_flags, i), pc_switch + 3, 1, 1);
                    if (!call->plan.moves[i]) return;
                    e.load(l.record(i, coord_ptr_at), pc_switch + 4, 1, 8);
                    distance(e, l, i, x, pc_switch + 5);
                    e.load(l.record(i, weight_at), pc_switch + 7, 2, 4);
                    e.store(l.record(i, cost_at), pc_switch + 8, 2, 4);
                    e.store(l.record(i, assign_at), pc_switch + 9, 0, 8);
                }));
                parts.push_back(each(mine, 1024, [l, call](std::uint64_t i, Emitter& e) {
                    e.load(l.flag(is_center, i), pc_switch + 10, 1, 1);
                    if (!call->centre(i)) return;
                    e.load(l.table(i), pc_switch + 11, 1, 4);
                    e.load_indirect(l.sum(call->number[i]), pc_switch + 12, 0);
                }));
                if (mine.begin <= x && x < mine.end)
                    parts.push_back(each(Range{x, x + 1}, 1, [l](std::uint64_t i, Emitter& e) {
                        e.store(l.flag(is_center, i), pc_switch + 13, 1, 1);
                    }));
                return concat(std::move(parts));
            });
        }
    }
};

}  // namespace

std::unique_ptr<Workload> make_streamcluster(const StreamclusterSize& s, std::string name) {
    require(s.points >= 2 && s.points <= (std::uint64_t{1} << 24), name, "points must be 2 to 2^24");
    require(s.dims % lanes == 0 && s.dims >= lanes && s.dims <= 4096, name, "dims must be a multiple of 8, 8 to 4096");
    require(s.candidates >= 1 && s.candidates <= 64, name, "candidates must be 1 to 64");
    require(s.centres >= 1 && std::uint64_t{s.centres} + s.candidates <= s.points, name,
            "centres must be at least 1, and centres + candidates at most points");
    require(s.switch_one_in >= 1, name, "switch_one_in must be at least 1");
    return std::make_unique<Streamcluster>(s, std::move(name));
}

}  // namespace numaware::sim::memory::rodinia
