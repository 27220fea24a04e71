// bench/apps/app_common.hpp — small helpers shared by the applications.
//
//   PageArray<T>   page-aligned, untouched array over an anonymous mapping
//   page_size(), is_page_multiple(), require_page_multiple()
//   resolve()      AppSize with 0 fields replaced by an app's defaults
//   checked_size() resolve() and the app's size checks (sim::check_app_shape)
//   block_range()  the b-th of `blocks` near-equal ranges of [0, total)
//   checked_mul()  size_t product that throws Error(field) on overflow
//   Stopwatch      wall time
//   max_abs_diff() largest |a[i] - b[i]| (NaN counts as infinity)
//   run_graph()    spawns a graph and waits; on a failed spawn it waits for
//                  the tasks already spawned before unwinding, so they never
//                  outlive the arrays they use
//   owner_node()   the node owning block b of `blocks` under a static
//                  contiguous block distribution over the runtime's nodes
//   tile_owner_node()  the same for tile (row, col) of a rows x cols grid,
//                  by the tile's row-major index
//
// Hints (the SA policy): every app spawns each task with
// rt.spawn_on(owner, ...), where `owner` is the owner node of the block the
// task writes, so that under SA the init task first-touches each block on
// its owner node and every later update of the block runs there too, as a
// careful programmer would distribute the data by hand. Other policies
// ignore hints.
#pragma once

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <limits>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "apps.hpp"
#include "numaware/error.hpp"
#include "numaware/sim.hpp"
#include "numaware/tasks.hpp"

namespace numaware::apps {

inline std::size_t page_size() {
    static const std::size_t size = [] {
        const long p = ::sysconf(_SC_PAGESIZE);
        return p > 0 ? static_cast<std::size_t>(p) : std::size_t{4096};
    }();
    return size;
}

inline bool is_page_multiple(std::size_t bytes) { return bytes != 0 && bytes % page_size() == 0; }

// Throws Error(field, ...) unless `bytes` (the size of one dependency block,
// described by `what`) is a positive whole number of pages.
inline void require_page_multiple(std::size_t bytes, std::string_view field, std::string_view what) {
    if (!is_page_multiple(bytes)) {
        throw Error(std::string(field), std::string(what) + " is " + std::to_string(bytes) +
                                            " bytes, must be a positive multiple of the page size " +
                                            std::to_string(page_size()));
    }
}

// a * b, or Error(field, ...) when it does not fit in size_t.
inline std::size_t checked_mul(std::size_t a, std::size_t b, std::string_view field) {
    if (a != 0 && b > std::numeric_limits<std::size_t>::max() / a) {
        throw Error(std::string(field), "size overflows: " + std::to_string(a) + " * " + std::to_string(b));
    }
    return a * b;
}

// An array of `count` T in its own anonymous private mapping: page-aligned,
// length rounded up to whole pages, and untouched until someone writes it,
// so the first writer decides each page's node (first touch). Move-only;
// unmaps on destruction. T must be trivial (no constructors run).
template <class T>
class PageArray {
    static_assert(std::is_trivially_copyable_v<T> && std::is_trivially_default_constructible_v<T>);

public:
    PageArray() = default;
    // Throws Error(field, ...) for count == 0, an overflowing size or a
    // failed mmap (code() is the kernel's errno).
    explicit PageArray(std::size_t count, std::string_view field = "n") : count_(count) {
        if (count == 0) throw Error(std::string(field), "array length must be at least 1, got 0");
        const std::size_t bytes = checked_mul(count, sizeof(T), field);
        if (bytes > std::numeric_limits<std::size_t>::max() - page_size()) {
            throw Error(std::string(field), "size overflows: " + std::to_string(bytes) + " bytes");
        }
        mapped_ = (bytes + page_size() - 1) / page_size() * page_size();
        void* p = ::mmap(nullptr, mapped_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED) {
            const int err = errno;
            throw Error(std::string(field), "cannot map " + std::to_string(mapped_) + " bytes", err);
        }
        // First touch places base pages. A transparent huge page would put
        // 2 MiB (several blocks) on the node of whichever task touched it
        // first, so ask for base pages; where THP is off this is a no-op.
        (void)::madvise(p, mapped_, MADV_NOHUGEPAGE);
        data_ = static_cast<T*>(p);
    }
    PageArray(PageArray&& o) noexcept
        : data_(std::exchange(o.data_, nullptr)), count_(std::exchange(o.count_, 0)),
          mapped_(std::exchange(o.mapped_, 0)) {}
    PageArray& operator=(PageArray&& o) noexcept {
        if (this != &o) {
            release();
            data_ = std::exchange(o.data_, nullptr);
            count_ = std::exchange(o.count_, 0);
            mapped_ = std::exchange(o.mapped_, 0);
        }
        return *this;
    }
    PageArray(const PageArray&) = delete;
    PageArray& operator=(const PageArray&) = delete;
    ~PageArray() { release(); }

    T* data() { return data_; }
    const T* data() const { return data_; }
    std::size_t size() const { return count_; }
    std::size_t bytes() const { return count_ * sizeof(T); }
    std::size_t mapped_bytes() const { return mapped_; }
    T& operator[](std::size_t i) { return data_[i]; }
    const T& operator[](std::size_t i) const { return data_[i]; }
    std::span<T> span() { return {data_, count_}; }
    std::span<const T> span() const { return {data_, count_}; }

private:
    void release() {
        if (data_) ::munmap(data_, mapped_);
        data_ = nullptr;
    }
    T* data_ = nullptr;
    std::size_t count_ = 0;
    std::size_t mapped_ = 0;
};

// `given` with each 0 field replaced by the field of `defaults`.
inline AppSize resolve(const AppSize& given, const AppSize& defaults) {
    AppSize s = given;
    if (s.n == 0) s.n = defaults.n;
    if (s.block == 0) s.block = defaults.block;
    if (s.iterations == 0) s.iterations = defaults.iterations;
    return s;
}

// [begin, end) of the b-th of `blocks` ranges splitting [0, total) as
// evenly as possible (the first total % blocks ranges are one longer).
struct Range {
    std::size_t begin = 0;
    std::size_t end = 0;
    std::size_t size() const { return end - begin; }
};
inline Range block_range(std::size_t total, std::size_t blocks, std::size_t b) {
    const std::size_t base = total / blocks, extra = total % blocks;
    const std::size_t begin = b * base + std::min(b, extra);
    return {begin, begin + base + (b < extra ? 1 : 0)};
}

// The node that owns block `block` of `blocks` when the blocks are dealt
// out contiguously and as evenly as possible over the K = rt.nodes().size()
// nodes with workers: rt.nodes()[block * K / blocks]. With 8 blocks on 2
// nodes, blocks 0-3 go to the first node and 4-7 to the second. A block
// index past the end counts as the last block; blocks == 0 gives the first
// node.
inline unsigned owner_node(const tasks::Runtime& rt, std::size_t block, std::size_t blocks) {
    const std::vector<unsigned>& nodes = rt.nodes();
    if (blocks == 0 || nodes.empty()) return nodes.empty() ? 0U : nodes.front();
    const std::size_t b = std::min(block, blocks - 1);
    return nodes[b * nodes.size() / blocks];
}

// The 2-D rule of the tiled apps: tile (row, col) of a rows x cols grid of
// tiles is block row * cols + col (row-major order) of rows * cols, dealt
// out with owner_node(). With square grids and K dividing the tile rows,
// each node owns a band of whole tile rows.
inline unsigned tile_owner_node(const tasks::Runtime& rt, std::size_t row, std::size_t col, std::size_t rows,
                                std::size_t cols) {
    return owner_node(rt, row * cols + col, rows * cols);
}

// `given` with 0 fields replaced by `defaults`, then checked by the app's
// size rules, which live with its graph builder in the library
// (sim::check_app_shape): the same Error fields and messages either way.
inline AppSize checked_size(std::string_view app, const AppSize& given, const AppSize& defaults) {
    const AppSize s = resolve(given, defaults);
    const sim::AppShape c = sim::check_app_shape(app, sim::AppShape{s.n, s.block, s.iterations});
    return AppSize{c.n, c.block, c.iterations};
}

class Stopwatch {
public:
    Stopwatch() : start_(std::chrono::steady_clock::now()) {}
    void restart() { start_ = std::chrono::steady_clock::now(); }
    double seconds() const {
        return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    }

private:
    std::chrono::steady_clock::time_point start_;
};

// Largest |a[i] - b[i]| over the common length; infinity when a NaN shows
// up or the lengths differ.
inline double max_abs_diff(std::span<const double> a, std::span<const double> b) {
    if (a.size() != b.size()) return std::numeric_limits<double>::infinity();
    double worst = 0;
    for (std::size_t i = 0; i < a.size(); ++i) {
        const double d = std::fabs(a[i] - b[i]);
        if (std::isnan(d)) return std::numeric_limits<double>::infinity();
        worst = std::max(worst, d);
    }
    return worst;
}

// Calls spawn_all() (which spawns tasks on rt), then rt.barrier(). If
// spawn_all() throws (a rejected dependency, say), waits for the tasks it
// did spawn, dropping their errors, and rethrows: the caller's arrays are
// then safe to unmap during unwinding.
template <class SpawnAll>
void run_graph(tasks::Runtime& rt, SpawnAll&& spawn_all) {
    try {
        spawn_all();
    } catch (...) {
        try {
            rt.barrier();
        } catch (...) {   // NOLINT(bugprone-empty-catch): the spawn error is the one to report
        }
        throw;
    }
    rt.barrier();
}

}  // namespace numaware::apps
