// tools/omp/workshare.cpp — the schedules' chunking rules and the ring of
// worksharing slots (workshare.hpp).
#include "tools/omp/workshare.hpp"

#include "tools/omp/set_if_changed.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <new>
#include <thread>

#include <fmt/format.h>

#include "numaware/error.hpp"

namespace numaware::omp {

bool static_chunk(const LoopSpace& loop, unsigned num, unsigned threads, std::uint64_t trip, Chunk& out) {
    const std::uint64_t n = loop.count, t = threads;
    if (loop.chunk == 0) {
        // One contiguous block a thread, the first n mod t one longer (as
        // libgomp and GCC's inlined schedule(static) cut it).
        if (trip > 0) return false;
        const std::uint64_t q = n / t, r = n % t;
        const std::uint64_t begin = num < r ? num * (q + 1) : r * (q + 1) + (num - r) * q;
        const std::uint64_t len = num < r ? q + 1 : q;
        if (len == 0) return false;
        out = {begin, begin + len};
        return true;
    }
    // Chunks dealt round-robin: thread num's trip-th is chunk trip*t + num.
    const std::uint64_t c = loop.chunk;
    const std::uint64_t index = trip * t + num;
    if (index > n / c) return false;   // also keeps index * c from overflowing
    const std::uint64_t begin = index * c;
    if (begin >= n) return false;
    out = {begin, std::min(n, begin + c)};
    return true;
}

bool shared_chunk(const LoopSpace& loop, unsigned threads, std::atomic<std::uint64_t>& next, Chunk& out) {
    const std::uint64_t n = loop.count, c = std::max<std::uint64_t>(loop.chunk, 1);
    if (loop.kind == Sched::dynamic) {
        std::uint64_t begin = next.load(std::memory_order_relaxed);
        do {
            if (begin >= n) return false;
        } while (!next.compare_exchange_weak(begin, begin + std::min(c, n - begin), std::memory_order_relaxed));
        out = {begin, begin + std::min(c, n - begin)};
        return true;
    }
    // Guided: a share of what is left, never below the chunk.
    std::uint64_t begin = next.load(std::memory_order_relaxed);
    std::uint64_t len = 0;
    do {
        if (begin >= n) return false;
        const std::uint64_t left = n - begin;
        len = std::min(left, std::max(c, (left + threads - 1) / threads));
    } while (!next.compare_exchange_weak(begin, begin + len, std::memory_order_relaxed));
    out = {begin, begin + len};
    return true;
}

WorkShares::WorkShares() : slots_(new WorkShare[ring_size]) { reset(); }

WorkShares::~WorkShares() {
    for (unsigned i = 0; i < ring_size; ++i) std::free(slots_[i].mem);
}

void WorkShares::reset() {
    for (unsigned i = 0; i < ring_size; ++i) {
        WorkShare& s = slots_[i];
        set_if_changed(s.serves, i);
        set_if_changed(s.state, 0);
        set_if_changed(s.left, 0u);
        if (s.mem != nullptr) {
            std::free(s.mem);
            s.mem = nullptr;
        }
    }
}

namespace {

template <class Pred>
void spin_until(Pred done) {
    for (unsigned i = 0; !done(); ++i) {
        if (i < 64) {
#if defined(__x86_64__) || defined(__i386__)
            __builtin_ia32_pause();
#endif
        } else {
            std::this_thread::yield();
        }
    }
}

}  // namespace

void wait_until_equal(const std::atomic<std::uint64_t>& word, std::uint64_t value) {
    spin_until([&] { return word.load(std::memory_order_acquire) == value; });
}

void Doacross::start(unsigned dims, const std::uint64_t* counts) {
    if (dims == 0) throw Error("ordered", "a doacross loop has at least one dimension");
    std::vector<std::uint64_t> inner(counts + 1, counts + dims), strides(inner.size());
    std::uint64_t span = 1;
    for (std::size_t k = inner.size(); k-- > 0;) {
        strides[k] = span;
        if (inner[k] != 0 && span > (UINT64_MAX - 1) / inner[k])
            throw Error("ordered", fmt::format("the iterations of dimensions 2 to {} overflow a 64-bit index", dims));
        span *= inner[k];
    }
    std::unique_ptr<std::atomic<std::uint64_t>[]> posted(
        new (std::nothrow) std::atomic<std::uint64_t>[counts[0] == 0 ? 1 : counts[0]]);
    if (!posted)
        throw Error("ordered", fmt::format("out of memory for the progress of {} iterations", counts[0]), ENOMEM);
    for (std::uint64_t i = 0; i < counts[0]; ++i) posted[i].store(0, std::memory_order_relaxed);
    dims_ = dims;
    outer_ = counts[0];
    inner_counts_ = std::move(inner);
    strides_ = std::move(strides);
    posted_ = std::move(posted);
}

void Doacross::clear() {
    dims_ = 0;
    outer_ = 0;
    posted_.reset();
}

void Doacross::post(const std::uint64_t* iter) {
    if (iter[0] >= outer_) return;
    std::uint64_t flat = 0;
    for (std::size_t k = 0; k < strides_.size(); ++k) flat += iter[k + 1] * strides_[k];
    // Its thread runs the inner iterations in order: the word only grows.
    posted_[iter[0]].store(flat + 1, std::memory_order_release);
}

void Doacross::wait(const std::uint64_t* iter) const {
    if (iter[0] >= outer_) return;
    std::uint64_t flat = 0;
    for (std::size_t k = 0; k < strides_.size(); ++k) {
        if (iter[k + 1] >= inner_counts_[k]) return;
        flat += iter[k + 1] * strides_[k];
    }
    const std::atomic<std::uint64_t>& word = posted_[iter[0]];
    spin_until([&] { return word.load(std::memory_order_acquire) > flat; });
}

bool WorkShares::enter(std::uint64_t g, WorkShare*& out) {
    WorkShare& s = slot(g);
    out = &s;
    // The slot serves construct g once every thread has left g - ring_size.
    spin_until([&] { return s.serves.load(std::memory_order_acquire) == g; });
    int expected = 0;
    if (s.state.compare_exchange_strong(expected, 1, std::memory_order_acq_rel)) {
        s.left.store(0, std::memory_order_relaxed);
        s.next.store(0, std::memory_order_relaxed);
        s.copyprivate = nullptr;
        s.task_reductions = nullptr;
        s.doacross.clear();
        s.ordered = false;
        s.ordered_next.store(0, std::memory_order_relaxed);
        s.cancelled.store(false, std::memory_order_relaxed);
        std::free(s.mem);
        s.mem = nullptr;
        return true;
    }
    spin_until([&] { return s.state.load(std::memory_order_acquire) == 2; });
    return false;
}

void WorkShares::leave(std::uint64_t g, WorkShare& s, unsigned threads) {
    if (s.left.fetch_add(1, std::memory_order_acq_rel) + 1 == threads) {
        s.state.store(0, std::memory_order_relaxed);
        s.serves.store(g + ring_size, std::memory_order_release);
    }
}

}  // namespace numaware::omp
