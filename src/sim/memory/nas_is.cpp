// sim/memory/nas_is.cpp — IS: the parallel bucket/counting sort of NPB's
// IS kernel.
//
// Source of the algorithm: Bailey et al., "The NAS Parallel Benchmarks"
// (RNR-91-002, 1991), kernel IS: rank N integer keys in [0, max_key), each
// key the scaled average of four uniform random numbers (a bell-shaped
// distribution); the ranking is a counting sort. The bucketed parallel
// form follows the OpenMP description (Jin, Frumkin, Yan, NAS-99-011):
// each thread counts its keys into its own bucket counters, computes where
// its keys of each bucket go, scatters them into a bucket-ordered buffer,
// and then ranks a contiguous range of buckets (a range of key values) by
// counting and prefix-summing the key values.
//
// Modelled, one phase each per iteration:
//  count:        zero the thread's bucket counters, then per key of its
//                static block: load the key, load and store its bucket's
//                counter (random increments of a small array);
//  bucket-ptrs:  per bucket, read every thread's count of it, store the
//                thread's start pointer for it;
//  scatter:      per key: load it, load its bucket pointer, store the key
//                at that position of the bucket-ordered buffer (a scatter
//                across every thread's range), store the pointer + 1;
//  rank:         each thread owns a contiguous range of buckets holding
//                about N / threads keys: zero the counts of its key values,
//                count each key of its buffer range, prefix-sum its counts.
// Init: each thread writes its keys, its counter rows and the buffer and
// count ranges its rank phase works on. Keys come from a seeded generator,
// the same for any thread count.
// Left out: NPB's random number generator (the same distribution from
// another generator), the partial and full verification, the two keys
// changed every iteration.
// Accesses per iteration: 10 N + 3 max_key + threads × buckets × (threads + 2).
#include <algorithm>
#include <map>
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

IsSize is_size(char cls) {
    IsSize s;
    if (cls == 'S') {
        s.keys = std::uint64_t{1} << 15;
        s.max_key = std::uint64_t{1} << 14;
        s.buckets = 1u << 9;
        s.iterations = 1;
    } else if (cls == 'W') {
        // NPB class W: 2^20 keys below 2^16, 2^10 buckets (NPB's 10
        // iterations cut to 1): keys and the buffer 2 × 4 MiB.
        s.keys = std::uint64_t{1} << 20;
        s.max_key = std::uint64_t{1} << 16;
        s.buckets = 1u << 10;
        s.iterations = 1;
    } else {
        // keys and the bucket-ordered buffer 2 × 16 MiB, the counts 4 MiB.
        s.keys = std::uint64_t{1} << 22;
        s.max_key = std::uint64_t{1} << 20;
        s.buckets = 1u << 10;
        s.iterations = 1;
    }
    return s;
}

namespace {

enum Array : unsigned { key_array, key_buff2, key_buff1, bucket_size, bucket_ptrs };
enum Pc : std::uint32_t { pc_init = 100, pc_count = 200, pc_ptrs = 300, pc_scatter = 400, pc_rank = 500 };

std::uint64_t u32_at(Array a, std::uint64_t i) { return base_of(a) + i * 4; }

// Where everything goes for one thread count.
struct Plan {
    unsigned threads = 0;
    std::vector<std::uint64_t> first;          // [t × buckets + b]: thread t's first position in bucket b
    std::vector<std::uint64_t> bucket_begin;   // buckets + 1: bucket b's first position in key_buff2
    std::vector<std::uint64_t> owned;          // threads + 1: the first bucket of each thread's rank range
    std::shared_ptr<const std::vector<std::uint32_t>> sorted;   // key_buff2's contents after the scatter
};

// The keys and, per thread count, where everything goes (made once per
// thread count, shared by the phases' streams).
class Sort {
public:
    explicit Sort(const IsSize& s) : s_(s), keys_(s.keys), shift_(log2_of(s.max_key) - log2_of(s.buckets)) {
        std::mt19937_64 rng(s.seed);
        for (std::uint32_t& k : keys_) {
            const double avg = (draw_unit(rng) + draw_unit(rng) + draw_unit(rng) + draw_unit(rng)) / 4;
            k = static_cast<std::uint32_t>(avg * static_cast<double>(s.max_key));
        }
    }
    std::uint32_t key(std::uint64_t i) const { return keys_[i]; }
    std::uint64_t bucket(std::uint64_t i) const { return keys_[i] >> shift_; }

    std::shared_ptr<const Plan> plan(unsigned t) {
        const auto found = plans_.find(t);
        if (found != plans_.end()) return found->second;
        const std::uint64_t nb = s_.buckets;
        auto p = std::make_shared<Plan>();
        p->threads = t;
        std::vector<std::uint64_t> size(t * nb, 0);
        for (unsigned r = 0; r < t; ++r) {
            const Range mine = static_block(s_.keys, t, r);
            for (std::uint64_t i = mine.begin; i < mine.end; ++i) ++size[r * nb + bucket(i)];
        }
        p->bucket_begin.assign(nb + 1, 0);
        p->first.assign(t * nb, 0);
        for (std::uint64_t b = 0; b < nb; ++b) {
            std::uint64_t at = p->bucket_begin[b];
            for (unsigned r = 0; r < t; ++r) {
                p->first[r * nb + b] = at;
                at += size[r * nb + b];
            }
            p->bucket_begin[b + 1] = at;
        }
        // Rank ranges: thread r starts at the first bucket that begins at or
        // after key r × N / threads (contiguous, about N / threads keys each).
        p->owned.assign(t + 1, nb);
        p->owned[0] = 0;
        for (unsigned r = 1; r < t; ++r) {
            const std::uint64_t want = s_.keys * r / t;
            const auto b = std::lower_bound(p->bucket_begin.begin(), p->bucket_begin.end() - 1, want);
            p->owned[r] = std::max(p->owned[r - 1], static_cast<std::uint64_t>(b - p->bucket_begin.begin()));
        }
        // The keys in the order the scatter stores them.
        auto sorted = std::make_shared<std::vector<std::uint32_t>>(s_.keys);
        std::vector<std::uint64_t> next = p->first;
        for (unsigned r = 0; r < t; ++r) {
            const Range mine = static_block(s_.keys, t, r);
            for (std::uint64_t i = mine.begin; i < mine.end; ++i) (*sorted)[next[r * nb + bucket(i)]++] = keys_[i];
        }
        p->sorted = std::move(sorted);
        plans_.emplace(t, p);
        return p;
    }

private:
    IsSize s_;
    std::vector<std::uint32_t> keys_;
    unsigned shift_;
    std::map<unsigned, std::shared_ptr<const Plan>> plans_;
};

class Is final : public detail::LoopKernel {
public:
    Is(const IsSize& s, std::string name) : LoopKernel(std::move(name)) {
        const auto sort = std::make_shared<Sort>(s);
        const std::uint64_t n = s.keys, nb = s.buckets;
        const std::uint64_t width = s.max_key / nb;   // key values per bucket

        add_loop("init", false, [sort, n, nb, width](unsigned r, unsigned t) {
            const auto p = sort->plan(t);
            std::vector<Share> parts;
            parts.push_back(each(static_block(n, t, r), 1024,
                                 [](std::uint64_t i, Emitter& e) { e.store(u32_at(key_array, i), pc_init, 1, 4); }));
            parts.push_back(each(Range{r * nb, (r + 1) * nb}, 1024, [](std::uint64_t i, Emitter& e) {
                e.store(u32_at(bucket_size, i), pc_init + 1, 1, 4);
                e.store(u32_at(bucket_ptrs, i), pc_init + 2, 1, 4);
            }));
            parts.push_back(each(Range{p->bucket_begin[p->owned[r]], p->bucket_begin[p->owned[r + 1]]}, 1024,
                                 [](std::uint64_t i, Emitter& e) { e.store(u32_at(key_buff2, i), pc_init + 3, 1, 4); }));
            parts.push_back(each(Range{p->owned[r] * width, p->owned[r + 1] * width}, 1024,
                                 [](std::uint64_t v, Emitter& e) { e.store(u32_at(key_buff1, v), pc_init + 4, 1, 4); }));
            return concat(std::move(parts));
        });
        for (unsigned it = 1; it <= s.iterations; ++it) {
            const std::string pre = fmt::format("iter{}:", it);
            add_loop(pre + "count", true, [sort, n, nb](unsigned r, unsigned t) {
                std::vector<Share> parts;
                parts.push_back(each(Range{r * nb, (r + 1) * nb}, 1024,
                                     [](std::uint64_t i, Emitter& e) { e.store(u32_at(bucket_size, i), pc_count, 1, 4); }));
                parts.push_back(each(static_block(n, t, r), 1024, [sort, r, nb](std::uint64_t i, Emitter& e) {
                    const std::uint64_t counter = r * nb + sort->bucket(i);
                    e.load(u32_at(key_array, i), pc_count + 1, 1, 4);
                    e.load_indirect(u32_at(bucket_size, counter), pc_count + 2, 1, 4);
                    e.store(u32_at(bucket_size, counter), pc_count + 3, 1, 4);
                }));
                return concat(std::move(parts));
            });
            add_loop(pre + "bucket-ptrs", true, [nb](unsigned r, unsigned t) {
                return each(Range{0, nb}, 64, [r, t, nb](std::uint64_t b, Emitter& e) {
                    for (unsigned o = 0; o < t; ++o) e.load(u32_at(bucket_size, o * nb + b), pc_ptrs, 1, 4);
                    e.store(u32_at(bucket_ptrs, r * nb + b), pc_ptrs + 1, 1, 4);
                });
            });
            add_loop(pre + "scatter", true, [sort, n, nb](unsigned r, unsigned t) {
                const auto p = sort->plan(t);
                // The thread's running pointers, advanced as its segments are emitted (in order).
                auto next = std::make_shared<std::vector<std::uint64_t>>(p->first.begin() + r * nb,
                                                                         p->first.begin() + (r + 1) * nb);
                return each(static_block(n, t, r), 1024, [sort, next, r, nb](std::uint64_t i, Emitter& e) {
                    const std::uint64_t b = sort->bucket(i);
                    e.load(u32_at(key_array, i), pc_scatter, 1, 4);
                    e.load_indirect(u32_at(bucket_ptrs, r * nb + b), pc_scatter + 1, 1, 4);
                    e.store_indirect(u32_at(key_buff2, (*next)[b]++), pc_scatter + 2, 0, 4);
                    e.store(u32_at(bucket_ptrs, r * nb + b), pc_scatter + 3, 1, 4);
                });
            });
            add_loop(pre + "rank", true, [sort, width](unsigned r, unsigned t) {
                const auto p = sort->plan(t);
                const Range values{p->owned[r] * width, p->owned[r + 1] * width};
                const Range positions{p->bucket_begin[p->owned[r]], p->bucket_begin[p->owned[r + 1]]};
                std::vector<Share> parts;
                parts.push_back(each(values, 1024, [](std::uint64_t v, Emitter& e) { e.store(u32_at(key_buff1, v), pc_rank, 1, 4); }));
                parts.push_back(each(positions, 1024, [p](std::uint64_t j, Emitter& e) {
                    e.load(u32_at(key_buff2, j), pc_rank + 1, 1, 4);
                    e.load_indirect(u32_at(key_buff1, (*p->sorted)[j]), pc_rank + 2, 0, 4);
                    e.store(u32_at(key_buff1, (*p->sorted)[j]), pc_rank + 3, 1, 4);
                }));
                parts.push_back(each(values, 1024, [](std::uint64_t v, Emitter& e) {
                    e.load(u32_at(key_buff1, v), pc_rank + 4, 1, 4);
                    e.store(u32_at(key_buff1, v), pc_rank + 5, 1, 4);
                }));
                return concat(std::move(parts));
            });
        }
    }
};

}  // namespace

std::unique_ptr<Workload> make_is(const IsSize& s, std::string name) {
    require(is_pow2(s.keys) && s.keys >= 1024 && s.keys <= (std::uint64_t{1} << 26), name,
            "keys must be a power of two, 2^10 to 2^26");
    require(is_pow2(s.max_key) && s.max_key <= (std::uint64_t{1} << 28), name, "max_key must be a power of two up to 2^28");
    require(is_pow2(s.buckets) && s.buckets <= s.max_key && s.buckets <= (1u << 16), name,
            "buckets must be a power of two, at most max_key and 2^16");
    require(s.iterations >= 1 && s.iterations <= 100, name, "iterations must be 1 to 100");
    return std::make_unique<Is>(s, std::move(name));
}

}  // namespace numaware::sim::memory::nas
