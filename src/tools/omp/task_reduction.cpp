// tools/omp/task_reduction.cpp — task reduction descriptors: copies,
// chains and lookups (task_reduction.hpp).
#include "tools/omp/task_reduction.hpp"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <unordered_map>
#include <vector>

#include <fmt/format.h>

#include "numaware/error.hpp"

namespace numaware::omp {
namespace {

// Word positions in a descriptor and in its items.
enum Word : std::size_t { count = 0, size = 1, copies = 2, next = 4, lookup = 5, copies_end = 6, first_item = 7 };
constexpr std::size_t item_words = 3;   // address, offset, owning descriptor (ours)

// What word 5 of a chain's first descriptor points to: every item this
// registration knows, its own and the enclosing registrations', by the
// original's address.
struct Lookup {
    std::unordered_map<std::uintptr_t, const std::uintptr_t*> items;
};

const std::uintptr_t* item(const std::uintptr_t* d, std::size_t k) { return d + first_item + k * item_words; }

std::uintptr_t* next_of(const std::uintptr_t* d) { return reinterpret_cast<std::uintptr_t*>(d[next]); }

}  // namespace

void register_task_reductions(std::uintptr_t* data, std::uintptr_t* outer, const std::uintptr_t* orig,
                              unsigned threads) {
    if (data == nullptr) throw Error("task reductions", "the descriptor is null");
    if (threads == 0) throw Error("threads", "is 0; a team has at least one thread");
    // What the first pass changes, to put back if a later descriptor fails.
    struct Saved {
        std::uintptr_t* d;
        std::uintptr_t copies, end;
        bool allocated;
    };
    std::vector<Saved> saved;
    const auto undo = [&saved] {
        for (const Saved& s : saved) {
            if (s.allocated) std::free(reinterpret_cast<void*>(s.d[copies]));
            s.d[copies] = s.copies;
            s.d[copies_end] = s.end;
        }
    };
    std::size_t items = 0;
    std::uintptr_t* d = data;
    for (;;) {
        saved.push_back(Saved{d, d[copies], d[copies_end], false});
        if (orig != nullptr) {
            // A worksharing construct: the first thread's copies.
            d[copies] = orig[copies];
            d[copies_end] = orig[copies_end];
            orig = next_of(orig);
        } else {
            const std::uintptr_t align = d[copies], bytes = d[size];
            if (align == 0 || (align & (align - 1)) != 0) {
                undo();
                throw Error("task reductions", fmt::format("alignment {} (word 2) is not a power of two", align));
            }
            if (bytes != 0 && threads > std::numeric_limits<std::size_t>::max() / bytes) {
                undo();
                throw Error("task reductions",
                            fmt::format("{} threads x {} bytes (word 1) overflow the address space", threads, bytes));
            }
            const std::size_t total = bytes * threads;
            const std::size_t a = align < sizeof(void*) ? sizeof(void*) : align;
            void* p = nullptr;
            if (posix_memalign(&p, a, total == 0 ? 1 : total) != 0) {
                undo();
                throw Error("task reductions", fmt::format("out of memory for {} bytes of private copies", total),
                            ENOMEM);
            }
            std::memset(p, 0, total);
            d[copies] = reinterpret_cast<std::uintptr_t>(p);
            d[copies_end] = d[copies] + total;
            saved.back().allocated = true;
        }
        items += d[count];
        if (d[next] == 0) break;
        d = next_of(d);
    }
    auto* look = new Lookup;
    const Lookup* outer_look = outer != nullptr ? reinterpret_cast<const Lookup*>(outer[lookup]) : nullptr;
    look->items.reserve(items + (outer_look != nullptr ? outer_look->items.size() : 0));
    if (outer_look != nullptr) look->items = outer_look->items;
    for (d = data;; d = next_of(d)) {
        for (std::size_t k = 0; k < d[count]; ++k) {
            auto* it = const_cast<std::uintptr_t*>(item(d, k));
            it[2] = reinterpret_cast<std::uintptr_t>(d);
            look->items[it[0]] = it;   // an inner item hides the outer one of the same address
        }
        d[lookup] = 0;
        if (d[next] == 0) {
            d[next] = reinterpret_cast<std::uintptr_t>(outer);
            break;
        }
    }
    data[lookup] = reinterpret_cast<std::uintptr_t>(look);
}

void unregister_task_reductions(std::uintptr_t* data, bool free_copies) {
    if (data == nullptr) return;
    delete reinterpret_cast<Lookup*>(data[lookup]);
    data[lookup] = 0;
    if (!free_copies) return;
    // This chain's own descriptors end where an enclosing registration's
    // first descriptor (its lookup set) begins.
    std::uintptr_t* d = data;
    do {
        std::free(reinterpret_cast<void*>(d[copies]));
        d[copies] = 0;
        d = next_of(d);
    } while (d != nullptr && d[lookup] == 0);
}

void remap_task_reductions(const std::uintptr_t* data, unsigned thread, std::size_t cnt, std::size_t cntorig,
                           void** ptrs) {
    if (data == nullptr || data[lookup] == 0)
        throw Error("task reductions", "no task_reduction or reduction with the task modifier encloses this task");
    const auto& items = reinterpret_cast<const Lookup*>(data[lookup])->items;
    for (std::size_t i = 0; i < cnt; ++i) {
        const auto addr = reinterpret_cast<std::uintptr_t>(ptrs[i]);
        if (const auto found = items.find(addr); found != items.end()) {
            const std::uintptr_t* it = found->second;
            const auto* d = reinterpret_cast<const std::uintptr_t*>(it[2]);
            ptrs[i] = reinterpret_cast<void*>(d[copies] + thread * d[size] + it[1]);
            if (i < cntorig) ptrs[cnt + i] = reinterpret_cast<void*>(it[0]);
            continue;
        }
        // An address inside some thread's copies (a task made by a thread
        // that had remapped the item already).
        const std::uintptr_t* d = data;
        while (d != nullptr && !(addr >= d[copies] && addr < d[copies_end])) d = next_of(d);
        if (d == nullptr || d[size] == 0)
            throw Error("task reductions",
                        fmt::format("{:#x} is no list item of an enclosing task_reduction or reduction with the "
                                    "task modifier",
                                    addr));
        const std::uintptr_t off = (addr - d[copies]) % d[size];
        ptrs[i] = reinterpret_cast<void*>(d[copies] + thread * d[size] + off);
        if (i < cntorig) {
            // Items are sorted by offset.
            std::size_t lo = 0, hi = d[count];
            while (lo < hi) {
                const std::size_t mid = (lo + hi) / 2;
                if (item(d, mid)[1] < off) lo = mid + 1;
                else hi = mid;
            }
            if (lo == d[count] || item(d, lo)[1] != off)
                throw Error("task reductions", fmt::format("{:#x} is not at the start of a list item's copy", addr));
            ptrs[cnt + i] = reinterpret_cast<void*>(item(d, lo)[0]);
        }
    }
}

}  // namespace numaware::omp
