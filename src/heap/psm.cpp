// heap/psm.cpp — the public heap API (numaware/heap.hpp) over the engine.
//
// The engine is noexcept and speaks arena ids; this file turns owners into
// arenas, checks every input before the engine sees it, and turns the
// engine's errno into an Error that names the input and the limit. Inputs are
// checked first so a failed call never changes the heap.
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory_resource>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "heap/engine.hpp"
#include "numaware/error.hpp"
#include "numaware/heap.hpp"
#include "util/bits.hpp"

namespace numaware {
namespace {

// Ranks are dense team indices; one rank per arena at most.
constexpr unsigned rank_limit = heap::max_arenas;

// rank -> arena + 1 (0 = not registered, so the table is valid from static
// zero-initialisation on, before any constructor runs). Read lock-free on
// every allocation for a rank; written only under `registry_mutex`, after
// the arena exists, so a reader sees either 0 or a ready arena.
std::atomic<std::uint32_t> rank_arenas[rank_limit];
std::mutex registry_mutex;
// (node, rank) -> arena already created: re-registering (or retrying after a
// failed registration) reuses arenas instead of using up the engine's
// limited supply.
std::map<std::pair<unsigned, unsigned>, heap::ArenaId>& created_arenas() {
    static std::map<std::pair<unsigned, unsigned>, heap::ArenaId> arenas;
    return arenas;
}

std::string pointer_text(const void* p) {
    char text[32];
    std::snprintf(text, sizeof text, "%p", p);
    return text;
}

std::string node_limit_text() {
    return "nodes with memory are among 0.." + std::to_string(heap::node_count() - 1);
}

heap::ArenaId node_arena_or_throw(unsigned node, const std::string& field) {
    const heap::ArenaId arena = heap::node_arena(node);
    if (arena == heap::no_arena && heap::memory_disallowed(node))
        throw Error(field, "node " + std::to_string(node) +
                               "'s memory is not allowed: it is not in this process's cpuset (Mems_allowed_list "
                               "of /proc/self/status)");
    if (arena == heap::no_arena)
        throw Error(field, "node " + std::to_string(node) + " has no heap: it does not exist or has no memory (" +
                               node_limit_text() + ")");
    return arena;
}

heap::ArenaId arena_of(HeapOwner owner) {
    if (owner.kind() == HeapOwner::Kind::node) return node_arena_or_throw(owner.id(), "owner");
    const std::uint32_t entry = owner.id() < rank_limit ? rank_arenas[owner.id()].load(std::memory_order_acquire) : 0;
    if (entry == 0)
        throw Error("owner", "rank " + std::to_string(owner.id()) +
                                 " is not registered; call psm_register_team() with a layout that has it first");
    return static_cast<heap::ArenaId>(entry - 1);
}

[[noreturn]] void throw_allocation_failure(int error, std::size_t bytes, std::size_t alignment, HeapOwner owner) {
    if (error == EINVAL)
        throw Error("alignment", "the heap refused alignment " + std::to_string(alignment) + " for " +
                                     std::to_string(bytes) + " bytes of " + owner.to_string());
    const std::string aligned = alignment == 0 ? "" : " aligned to " + std::to_string(alignment);
    throw Error("bytes",
                "cannot allocate " + std::to_string(bytes) + " bytes" + aligned + " for " + owner.to_string() +
                    ": out of memory",
                ENOMEM);
}

heap::BlockInfo live_block(const void* p, const char* field) {
    if (p == nullptr) throw Error(field, "is NULL");
    heap::BlockInfo info;
    if (!heap::block_info(p, info))
        throw Error(field, pointer_text(p) + " is not a live block of the numaware heap");
    return info;
}

HeapOwner owner_of_block(const heap::BlockInfo& info) {
    // Node arenas are tagged with their node; every other arena with a rank.
    if (heap::node_arena(info.node) == info.arena) return HeapOwner::node(info.node);
    return HeapOwner::rank(info.owner_tag);
}

// alignment 0: natural; zeroed: calloc (the engine clears only what is
// not fresh from the kernel).
void* allocate_checked(std::size_t bytes, std::size_t alignment, HeapOwner owner, bool zeroed = false) {
    const heap::ArenaId arena = arena_of(owner);
    const std::size_t asked = bytes == 0 ? 1 : bytes;
    errno = 0;
    void* p = zeroed           ? heap::allocate_zeroed(asked, arena)
              : alignment == 0 ? heap::allocate(asked, arena)
                               : heap::allocate_aligned(asked, alignment, arena);
    if (p == nullptr) throw_allocation_failure(errno == EINVAL ? EINVAL : ENOMEM, bytes, alignment, owner);
    return p;
}

}  // namespace

std::string HeapOwner::to_string() const {
    return (kind_ == Kind::node ? "node " : "rank ") + std::to_string(id_);
}

void psm_register_team(const TeamLayout& layout) {
    if (layout.ranks.empty()) throw Error("layout", "has no ranks");
    // Check everything before creating anything, so a bad layout changes nothing.
    // A rank's arena is on the node whose memory serves its CPU: its own,
    // or for a node without memory (or whose memory the cpuset excludes)
    // the nearest that may hold pages, where the kernel would put the
    // rank's own first touches.
    std::vector<bool> seen(rank_limit, false);
    std::vector<unsigned> serving(layout.ranks.size());
    for (std::size_t i = 0; i < layout.ranks.size(); ++i) {
        const RankPlace& place = layout.ranks[i];
        const std::string field = "layout.ranks[" + std::to_string(i) + "]";
        if (place.rank >= rank_limit)
            throw Error(field + ".rank",
                        "is " + std::to_string(place.rank) + "; limit " + std::to_string(rank_limit - 1));
        if (seen[place.rank]) throw Error(field + ".rank", "rank " + std::to_string(place.rank) + " is listed twice");
        seen[place.rank] = true;
        serving[i] = heap::serving_node(place.node);
        if (serving[i] >= heap::max_nodes)
            throw Error(field + ".node", "node " + std::to_string(place.node) +
                                             " is not an online node of this machine (nodes are among 0.." +
                                             std::to_string(heap::node_count() - 1) + ")");
        node_arena_or_throw(serving[i], field + ".node");
    }

    const std::lock_guard lock(registry_mutex);
    auto& created = created_arenas();
    std::vector<heap::ArenaId> arenas(layout.ranks.size());
    for (std::size_t i = 0; i < layout.ranks.size(); ++i) {
        const RankPlace& place = layout.ranks[i];
        const auto key = std::make_pair(serving[i], place.rank);
        auto found = created.find(key);
        if (found == created.end()) {
            errno = 0;
            const heap::ArenaId arena = heap::create_arena(serving[i], place.rank);
            if (arena == heap::no_arena) {
                const int error = errno == ENOSPC ? ENOSPC : (errno == 0 ? EINVAL : errno);
                // Arenas created so far stay in `created` for a later retry;
                // no rank mapping has changed yet.
                throw Error("layout.ranks[" + std::to_string(i) + "]",
                            "cannot create an arena for rank " + std::to_string(place.rank) + " on node " +
                                std::to_string(serving[i]) + " (the heap has at most " +
                                std::to_string(heap::max_arenas) + " arenas): " + std::strerror(error),
                            error);
            }
            found = created.emplace(key, arena).first;
        }
        arenas[i] = found->second;
    }
    for (std::size_t i = 0; i < layout.ranks.size(); ++i)
        rank_arenas[layout.ranks[i].rank].store(std::uint32_t{arenas[i]} + 1, std::memory_order_release);
}

void* psm_alloc(std::size_t bytes, HeapOwner owner) { return allocate_checked(bytes, 0, owner); }

void psm_free(void* p) {
    if (p == nullptr) return;
    live_block(p, "p");
    heap::deallocate(p);
}

void* psm_calloc(std::size_t n, std::size_t size, HeapOwner owner) {
    if (size != 0 && n > std::numeric_limits<std::size_t>::max() / size)
        throw Error("n * size", std::to_string(n) + " * " + std::to_string(size) + " overflows the limit " +
                                    std::to_string(std::numeric_limits<std::size_t>::max()));
    const std::size_t bytes = n * size;
    return allocate_checked(bytes, 0, owner, true);
}

void* psm_realloc(void* p, std::size_t bytes) {
    if (p == nullptr) throw Error("p", "is NULL; a NULL block has no owner to keep (use psm_alloc)");
    const heap::BlockInfo info = live_block(p, "p");
    errno = 0;
    void* q = heap::reallocate(p, bytes == 0 ? 1 : bytes);
    if (q == nullptr) throw_allocation_failure(ENOMEM, bytes, 0, owner_of_block(info));
    return q;
}

void* psm_aligned_alloc(std::size_t alignment, std::size_t bytes, HeapOwner owner) {
    if (!is_power_of_two(alignment))
        throw Error("alignment", "is " + std::to_string(alignment) + "; it must be a power of two (1, 2, 4, ...)");
    return allocate_checked(bytes, alignment, owner);
}

std::size_t psm_usable_size(const void* p) { return live_block(p, "p").usable; }

HeapBlockInfo psm_owner_of(const void* p) {
    const heap::BlockInfo info = live_block(p, "p");
    return HeapBlockInfo{info.node, owner_of_block(info), info.large, info.usable};
}

HeapNodeStats psm_node_stats(unsigned node) {
    heap::NodeStats stats;
    if (heap::node_arena(node) == heap::no_arena || !heap::node_stats(node, stats))
        throw Error("node", "node " + std::to_string(node) + " has no heap: it does not exist or has no memory (" +
                                node_limit_text() + ")");
    return HeapNodeStats{stats.bytes_in_use, stats.bytes_cached, stats.pages_mapped, stats.fragmentation};
}

namespace detail {
void* psm_allocate_array(std::size_t count, std::size_t size, std::size_t alignment, HeapOwner owner) {
    if (size != 0 && count > std::numeric_limits<std::size_t>::max() / size)
        throw Error("n", std::to_string(count) + " elements of " + std::to_string(size) +
                             " bytes overflow the limit " + std::to_string(std::numeric_limits<std::size_t>::max()));
    if (alignment <= alignof(std::max_align_t)) return psm_alloc(count * size, owner);
    return psm_aligned_alloc(alignment, count * size, owner);
}
}  // namespace detail

PsmResource::PsmResource(HeapOwner owner) : owner_(owner) { arena_of(owner); }

void* PsmResource::do_allocate(std::size_t bytes, std::size_t alignment) {
    if (alignment <= alignof(std::max_align_t)) return psm_alloc(bytes, owner_);
    return psm_aligned_alloc(alignment, bytes, owner_);
}

void PsmResource::do_deallocate(void* p, std::size_t, std::size_t) { psm_free(p); }

bool PsmResource::do_is_equal(const std::pmr::memory_resource& other) const noexcept {
    const auto* psm = dynamic_cast<const PsmResource*>(&other);
    return psm != nullptr && psm->owner_ == owner_;
}

}  // namespace numaware
