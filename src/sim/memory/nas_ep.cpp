// sim/memory/nas_ep.cpp — EP: the embarrassingly parallel kernel of NPB,
// almost no memory traffic and long stretches of arithmetic.
//
// Source of the algorithm: Bailey et al., "The NAS Parallel Benchmarks"
// (RNR-91-002, 1991), kernel EP: generate pairs of uniform pseudorandom
// numbers, keep the pairs inside the unit circle (the Marsaglia polar
// method), turn each into two Gaussian deviates and count them in square
// annuli by max(|X|, |Y|); the work splits into independent batches, and
// NPB's parallel versions cut the batches statically across threads.
//
// Modelled: per thread a table of 2 × batch_pairs doubles (the batch's
// uniforms) and ten counters, both first-touched in init. One measured
// phase, the batches cut with static_block; per batch: store the 2B
// uniforms (about 20 instructions of generator arithmetic each), then per
// pair load both, and for a pair inside the circle (decided by a seeded
// generator per batch, so the same for any thread count) load and store
// its annulus counter after the logarithm and square root (about 60
// instructions). The working set is a few KiB per thread whatever the
// size: EP is the one kernel whose class A does not exceed the L3.
// Left out: NPB's linear congruential generator (its skip-ahead to each
// batch's seed), the sums of the deviates (registers) and the final
// reduction.
// Accesses: 4 × pairs + 2 × (pairs inside the circle, about π/4 of them).
#include <algorithm>
#include <cmath>
#include <memory>

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

EpSize ep_size(char cls) {
    EpSize s;
    s.batch_pairs = 1024;
    // Class A is NPB's 2^28 pairs cut 64-fold; class W is NPB's 2^25 cut the same way.
    s.pairs = std::uint64_t{1} << (cls == 'S' ? 15 : (cls == 'W' ? 19 : 22));
    return s;
}

namespace {

enum Array : unsigned { table, counters };
enum Pc : std::uint32_t { pc_init = 100, pc_make = 200, pc_pairs = 300 };

class Ep final : public detail::LoopKernel {
public:
    Ep(const EpSize& s, std::string name) : LoopKernel(std::move(name)) {
        const std::uint64_t b = s.batch_pairs, batches = s.pairs / b, seed = s.seed;
        const std::uint64_t stride = (2 * b * 8 + 4095) / 4096 * 4096;   // one thread's table
        const auto x_at = [stride](unsigned r, std::uint64_t i) { return base_of(table) + r * stride + i * 8; };
        const auto q_at = [](unsigned r, std::uint64_t l) { return base_of(counters) + r * 4096 + l * 8; };
        add_loop("init", false, [b, x_at, q_at](unsigned r, unsigned) {
            return each(Range{0, 2 * b + 10}, 1024, [b, r, x_at, q_at](std::uint64_t i, Emitter& e) {
                e.store(i < 2 * b ? x_at(r, i) : q_at(r, i - 2 * b), pc_init, 1);
            });
        });
        add_loop("iter1:batches", true, [b, batches, seed, x_at, q_at](unsigned r, unsigned t) {
            return each(static_block(batches, t, r), 1, [b, seed, r, x_at, q_at](std::uint64_t batch, Emitter& e) {
                for (std::uint64_t i = 0; i < 2 * b; ++i) e.store(x_at(r, i), pc_make, 20);
                std::mt19937_64 rng(seed + batch);
                for (std::uint64_t i = 0; i < b; ++i) {
                    e.load(x_at(r, 2 * i), pc_pairs, 2);
                    e.load(x_at(r, 2 * i + 1), pc_pairs + 1, 0);
                    const double x1 = 2 * draw_unit(rng) - 1, x2 = 2 * draw_unit(rng) - 1;
                    const double t2 = x1 * x1 + x2 * x2;
                    if (t2 > 1.0 || t2 == 0.0) continue;
                    const double f = std::sqrt(-2.0 * std::log(t2) / t2);
                    const auto l = static_cast<std::uint64_t>(std::max(std::fabs(x1 * f), std::fabs(x2 * f)));
                    e.load(q_at(r, std::min<std::uint64_t>(l, 9)), pc_pairs + 2, 60);
                    e.store(q_at(r, std::min<std::uint64_t>(l, 9)), pc_pairs + 3, 1);
                }
            });
        });
    }
};

}  // namespace

std::unique_ptr<Workload> make_ep(const EpSize& s, std::string name) {
    require(is_pow2(s.batch_pairs) && s.batch_pairs >= 16 && s.batch_pairs <= (1u << 16), name,
            "batch_pairs must be a power of two, 16 to 2^16");
    require(s.pairs >= s.batch_pairs && s.pairs % s.batch_pairs == 0 && s.pairs <= (std::uint64_t{1} << 32), name,
            "pairs must be a multiple of batch_pairs, at most 2^32");
    return std::make_unique<Ep>(s, std::move(name));
}

}  // namespace numaware::sim::memory::nas
