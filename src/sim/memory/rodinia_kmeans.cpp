// sim/memory/rodinia_kmeans.cpp — k-means: Lloyd's iterations over points
// of float features, the pattern of Rodinia's k-means.
//
// Source of the algorithm: S. P. Lloyd, "Least squares quantization in
// PCM", IEEE Trans. Information Theory 28(2), 1982; Rodinia's OpenMP
// version (Che et al., IISWC 2009, and the NU-MineBench k-means it comes
// from): per iteration, one parallel loop over the points finds each
// point's nearest centre (the squared distance over every feature to every
// centre), updates its membership and adds the point into the thread's
// own partial sums of that centre (a count and a feature vector); after
// the loop the master thread adds every thread's partial sums into the new
// centres and divides.
//
// Modelled: features of points × features floats (a point's features
// contiguous), memberships of 4 B, the centres, and per thread its partial
// counts and sums, the threads' rows one after the other (Rodinia
// allocates them as one block: neighbouring threads' rows share lines and
// pages). One phase for the assignment loop (points cut with static_block)
// and one for the reduction (thread 0 alone, as the serial code after the
// parallel region). The distance loop is vectorised: per centre, per 8
// features, a 32-byte load of the point and one of the centre; then the
// membership's load and store, the partial count's load and store, and per
// 8 features the point again, the partial sum's load and store. Each
// point's nearest centre is drawn per iteration from a seeded generator
// (uniform in the first iteration, the same as before with probability
// 15/16 in the later ones: points settle), the same for any thread count.
// Init: each thread writes its points and memberships and its partial
// rows; thread 0 the centres and the new centres.
// Left out: reading the input, the random choice of the first centres, the
// convergence test (the count of changed memberships is a register
// reduction here), the float arithmetic itself (instruction gaps).
// Accesses per iteration: points × (2 × clusters × features / 8 + 4 +
// 3 × features / 8) + threads × clusters × (4 + features / 2) +
// clusters × (2 + 3 × features / 8).
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

KmeansSize kmeans_size(char cls) {
    KmeansSize s;
    s.features = 32;
    s.clusters = 5;
    s.iterations = 2;
    // W: features 2^18 × 32 × 4 B = 32 MiB, memberships 1 MiB.
    s.points = std::uint64_t{1} << (cls == 'S' ? 12 : 18);
    return s;
}

namespace {

enum Array : unsigned { features, membership, centres, partial_len, partial_sums, new_len, new_centres };
enum Pc : std::uint32_t { pc_init = 100, pc_assign = 200, pc_reduce = 300 };
constexpr unsigned lanes = 8;   // floats a vector load

struct Layout {
    std::uint64_t nf, k;
    std::uint64_t feature(std::uint64_t i, std::uint64_t v) const { return base_of(features) + (i * nf + v * lanes) * 4; }
    std::uint64_t centre(Array a, std::uint64_t c, std::uint64_t v) const { return base_of(a) + (c * nf + v * lanes) * 4; }
    std::uint64_t count(Array a, std::uint64_t row, std::uint64_t c) const { return base_of(a) + (row * k + c) * 4; }
    std::uint64_t partial(std::uint64_t rank, std::uint64_t c, std::uint64_t v) const {
        return base_of(partial_sums) + ((rank * k + c) * nf + v * lanes) * 4;
    }
};

// Each point's nearest centre in each iteration: [iteration × points + i].
std::shared_ptr<const std::vector<std::uint8_t>> nearest(const KmeansSize& s) {
    auto v = std::make_shared<std::vector<std::uint8_t>>(s.iterations * s.points);
    std::mt19937_64 rng(s.seed);
    for (unsigned it = 0; it < s.iterations; ++it)
        for (std::uint64_t i = 0; i < s.points; ++i) {
            std::uint8_t& c = (*v)[it * s.points + i];
            if (it == 0 || detail::draw_below(rng, 16) == 0)
                c = static_cast<std::uint8_t>(detail::draw_below(rng, s.clusters));
            else
                c = (*v)[(it - 1) * s.points + i];
        }
    return v;
}

class Kmeans final : public detail::LoopKernel {
public:
    Kmeans(const KmeansSize& s, std::string name) : LoopKernel(std::move(name)) {
        const Layout l{s.features, s.clusters};
        const std::uint64_t n = s.points, vectors = s.features / lanes;
        const auto near = nearest(s);
        add_loop("init", false, [l, n](unsigned r, unsigned t) {
            const Range mine = static_block(n, t, r);
            std::vector<Share> parts;
            parts.push_back(fill_bytes(l.feature(mine.begin, 0), l.feature(mine.end, 0), pc_init));
            parts.push_back(fill_bytes(base_of(membership) + mine.begin * 4, base_of(membership) + mine.end * 4, pc_init + 1));
            parts.push_back(fill_bytes(l.count(partial_len, r, 0), l.count(partial_len, r + 1, 0), pc_init + 2));
            parts.push_back(fill_bytes(l.partial(r, 0, 0), l.partial(r + 1, 0, 0), pc_init + 3));
            if (r == 0) {
                parts.push_back(fill_bytes(l.centre(centres, 0, 0), l.centre(centres, l.k, 0), pc_init + 4));
                parts.push_back(fill_bytes(l.centre(new_centres, 0, 0), l.centre(new_centres, l.k, 0), pc_init + 5));
                parts.push_back(fill_bytes(l.count(new_len, 0, 0), l.count(new_len, 1, 0), pc_init + 6));
            }
            return concat(std::move(parts));
        });
        for (unsigned it = 1; it <= s.iterations; ++it) {
            const std::string pre = fmt::format("iter{}:", it);
            const std::uint8_t* nearest_now = near->data() + (it - 1) * n;
            add_loop(pre + "assign", true, [l, n, vectors, near, nearest_now](unsigned r, unsigned t) {
                return each(static_block(n, t, r), 256, [l, vectors, near, nearest_now, r](std::uint64_t i, Emitter& e) {
                    for (std::uint64_t c = 0; c < l.k; ++c)
                        for (std::uint64_t v = 0; v < vectors; ++v) {
                            e.load(l.feature(i, v), pc_assign, 2, 32);
                            e.load(l.centre(centres, c, v), pc_assign + 1, 0, 32);
                        }
                    const std::uint64_t c = nearest_now[i];
                    e.load(base_of(membership) + i * 4, pc_assign + 2, 4, 4);
                    e.store(base_of(membership) + i * 4, pc_assign + 3, 1, 4);
                    e.load(l.count(partial_len, r, c), pc_assign + 4, 1, 4);
                    e.store(l.count(partial_len, r, c), pc_assign + 5, 1, 4);
                    for (std::uint64_t v = 0; v < vectors; ++v) {
                        e.load(l.feature(i, v), pc_assign + 6, 1, 32);
                        e.load(l.partial(r, c, v), pc_assign + 7, 0, 32);
                        e.store(l.partial(r, c, v), pc_assign + 8, 1, 32);
                    }
                });
            });
            // The master adds every thread's partial sums into the new
            // centres (zeroing them), then divides.
            add_loop(pre + "reduce", true, [l, vectors](unsigned r, unsigned t) {
                if (r != 0) return Share{};
                return each(Range{0, t + 1}, 1, [l, vectors, t](std::uint64_t row, Emitter& e) {
                    for (std::uint64_t c = 0; c < l.k; ++c) {
                        if (row == t) {   // new centres = sums / counts
                            e.load(l.count(new_len, 0, c), pc_reduce + 10, 2, 4);
                            for (std::uint64_t v = 0; v < vectors; ++v) {
                                e.load(l.centre(new_centres, c, v), pc_reduce + 11, 1, 32);
                                e.store(l.centre(centres, c, v), pc_reduce + 12, 2, 32);
                                e.store(l.centre(new_centres, c, v), pc_reduce + 13, 0, 32);
                            }
                            e.store(l.count(new_len, 0, c), pc_reduce + 14, 1, 4);
                            continue;
                        }
                        e.load(l.count(partial_len, row, c), pc_reduce, 2, 4);
                        e.load(l.count(new_len, 0, c), pc_reduce + 1, 0, 4);
                        e.store(l.count(new_len, 0, c), pc_reduce + 2, 1, 4);
                        e.store(l.count(partial_len, row, c), pc_reduce + 3, 0, 4);
                        for (std::uint64_t v = 0; v < vectors; ++v) {
                            e.load(l.partial(row, c, v), pc_reduce + 4, 1, 32);
                            e.load(l.centre(new_centres, c, v), pc_reduce + 5, 0, 32);
                            e.store(l.centre(new_centres, c, v), pc_reduce + 6, 1, 32);
                            e.store(l.partial(row, c, v), pc_reduce + 7, 0, 32);
                        }
                    }
                });
            });
        }
    }
};

}  // namespace

std::unique_ptr<Workload> make_kmeans(const KmeansSize& s, std::string name) {
    require(s.points >= 1 && s.points <= (std::uint64_t{1} << 26), name, "points must be 1 to 2^26");
    require(s.features % lanes == 0 && s.features >= lanes && s.features <= 1024, name,
            "features must be a multiple of 8, 8 to 1024");
    require(s.clusters >= 1 && s.clusters <= 256, name, "clusters must be 1 to 256");
    require(s.iterations >= 1 && s.iterations <= 100, name, "iterations must be 1 to 100");
    return std::make_unique<Kmeans>(s, std::move(name));
}

}  // namespace numaware::sim::memory::rodinia
