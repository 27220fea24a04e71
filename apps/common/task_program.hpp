// apps/common/task_program.hpp — what the applications' real task programs
// (apps/<name>/program.cpp) share.
//
//   AppRun         the result of one run: time, tasks, error against the
//                  serial reference
//   PageArray<T>   page-aligned, untouched array over an anonymous mapping
//   page_size()    the host's page size (a real program's memory is the
//                  host's; graph builders use the machine model's instead)
//   page_slot<T>() elements of a block's page-aligned slot
//   checked_mul()  size_t product that throws Error(field) on overflow
//   block_range()  the b-th of `blocks` near-equal ranges of [0, total)
//   owner_node()   the node owning block b of `blocks` under a static
//                  contiguous block distribution over the runtime's nodes
//   tile_owner_node()  the same for tile (row, col) of a rows x cols grid,
//                  by the tile's row-major index
//   cyclic_tile_owner_node()  tile (row, col) under the two-dimensional
//                  block-cyclic distribution (owners.hpp)
//   Stopwatch      wall time
//   max_abs_diff() largest |a[i] - b[i]| (NaN counts as infinity)
//   run_graph()    spawns a graph and waits; on a failed spawn it waits for
//                  the tasks already spawned before unwinding, so they never
//                  outlive the arrays they use
//
// Memory: a program allocates its arrays page-aligned and untouched
// (anonymous mappings), and initialises them in tasks with `out`
// dependencies, so the policy under test decides where pages land by first
// touch. Every block that is a dependency is page-aligned and a whole
// number of pages long, so its home is one node.
//
// Hints (the SA policy): every program spawns each task with
// rt.spawn_on(owner, ...), where `owner` is the owner node of the block the
// task writes, so that under SA the init task first-touches each block on
// its owner node and every later update of the block runs there too, as a
// careful programmer would distribute the data by hand: bands for the
// stencils, scans and streams, block-cyclic tiles for the dense
// factorisations (apps/common/owners.hpp says why). Other policies ignore
// hints.
#pragma once

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "apps/common/app_size.hpp"
#include "apps/common/owners.hpp"
#include "numaware/error.hpp"
#include "numaware/tasks.hpp"

namespace numaware::apps {

struct AppRun {
    double seconds = 0;          // wall time of the tasked computation (init to last taskwait)
    double max_error = 0;        // largest |tasked - serial| (or relative residual, documented per app)
    bool matches = false;        // max_error within the app's documented tolerance
    std::size_t tasks = 0;       // tasks spawned
    std::string detail;          // one line: sizes, tolerance
};

inline std::size_t page_size() {
    static const std::size_t size = [] {
        const long p = ::sysconf(_SC_PAGESIZE);
        return p > 0 ? static_cast<std::size_t>(p) : std::size_t{4096};
    }();
    return size;
}

// The number of T that fill `count` T rounded up to whole pages: the slot
// of one block, so the next block starts on a page boundary.
template <class T>
std::size_t page_slot(std::size_t count) {
    const std::size_t bytes = count * sizeof(T);
    return (bytes + page_size() - 1) / page_size() * page_size() / sizeof(T);
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
    if (nodes.empty()) return 0U;
    return nodes[band_owner_index(block, blocks, nodes.size())];
}

// The 2-D rule of the tiled stencil and scan apps: tile (row, col) of a
// rows x cols grid of tiles is block row * cols + col (row-major order) of
// rows * cols, dealt out with owner_node(). With square grids and K
// dividing the tile rows, each node owns a band of whole tile rows.
inline unsigned tile_owner_node(const tasks::Runtime& rt, std::size_t row, std::size_t col, std::size_t rows,
                                std::size_t cols) {
    return owner_node(rt, row * cols + col, rows * cols);
}

// The rule of the dense factorisations: tile (row, col) on the P x Q grid
// of the runtime's nodes, block-cyclic (block_cyclic_owner_index()).
inline unsigned cyclic_tile_owner_node(const tasks::Runtime& rt, std::size_t row, std::size_t col) {
    const std::vector<unsigned>& nodes = rt.nodes();
    if (nodes.empty()) return 0U;
    return nodes[block_cyclic_owner_index(row, col, nodes.size())];
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

// Calls spawn_all() (which spawns tasks on rt and may return how many),
// then rt.barrier(), and returns what spawn_all() returned. If spawn_all()
// throws (a rejected dependency, say), waits for the tasks it did spawn,
// dropping their errors, and rethrows: the caller's arrays are then safe to
// unmap during unwinding.
template <class SpawnAll>
auto run_graph(tasks::Runtime& rt, SpawnAll&& spawn_all) -> decltype(spawn_all()) {
    auto wait_after_failure = [&rt] {
        try {
            rt.barrier();
        } catch (...) {   // NOLINT(bugprone-empty-catch): the spawn error is the one to report
        }
    };
    if constexpr (std::is_void_v<decltype(spawn_all())>) {
        try {
            spawn_all();
        } catch (...) {
            wait_after_failure();
            throw;
        }
        rt.barrier();
    } else {
        decltype(spawn_all()) spawned{};
        try {
            spawned = spawn_all();
        } catch (...) {
            wait_after_failure();
            throw;
        }
        rt.barrier();
        return spawned;
    }
}

}  // namespace numaware::apps
