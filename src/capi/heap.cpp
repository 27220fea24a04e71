// capi/heap.cpp — C wrappers over numaware/heap.hpp.
#include <cerrno>
#include <string>

#include "capi/capi_util.hpp"
#include "numaware/c/heap.h"
#include "numaware/heap.hpp"
#include "numaware/team.hpp"

using numaware::Error;
using numaware::HeapOwner;
using numaware::capi::guarded;
using numaware::capi::require;

namespace {

HeapOwner owner_from_c(nw_owner_t owner) {
    if (owner.kind == NW_OWNER_NODE) return HeapOwner::node(owner.id);
    if (owner.kind == NW_OWNER_RANK) return HeapOwner::rank(owner.id);
    throw Error("owner.kind", "is " + std::to_string(owner.kind) +
                                  "; expected NW_OWNER_NODE (0) or NW_OWNER_RANK (1)");
}

nw_owner_t owner_to_c(HeapOwner owner) {
    return owner.kind() == HeapOwner::Kind::node ? nw_owner_node(owner.id()) : nw_owner_rank(owner.id());
}

// guarded() speaks int; malloc-like functions return NULL on failure with
// errno and nw_error_message() set by it.
template <class Fn>
void* guarded_pointer(Fn&& fn) noexcept {
    void* result = nullptr;
    if (guarded([&] {
            result = fn();
            return 0;
        }) != 0)
        return nullptr;
    return result;
}

}  // namespace

extern "C" {

int nw_psm_register_team(const nw_team_t* team) {
    return guarded([&] {
        require(team, "team");
        // The team's layout through its public C accessors.
        const int size = nw_team_size(team);
        if (size < 0) return -1;
        numaware::TeamLayout layout;
        for (unsigned rank = 0; rank < static_cast<unsigned>(size); ++rank) {
            numaware::RankPlace place{rank, 0, 0};
            if (nw_team_rank_place(team, rank, &place.cpu, &place.node) != 0) return -1;
            layout.ranks.push_back(place);
        }
        numaware::psm_register_team(layout);
        return 0;
    });
}

void* nw_psm_alloc(size_t bytes, nw_owner_t owner) {
    return guarded_pointer([&] { return numaware::psm_alloc(bytes, owner_from_c(owner)); });
}

int nw_psm_free(void* p) {
    return guarded([&] {
        numaware::psm_free(p);
        return 0;
    });
}

void* nw_psm_calloc(size_t n, size_t size, nw_owner_t owner) {
    return guarded_pointer([&] { return numaware::psm_calloc(n, size, owner_from_c(owner)); });
}

void* nw_psm_realloc(void* p, size_t bytes) {
    return guarded_pointer([&] { return numaware::psm_realloc(p, bytes); });
}

void* nw_psm_aligned_alloc(size_t alignment, size_t bytes, nw_owner_t owner) {
    return guarded_pointer([&] { return numaware::psm_aligned_alloc(alignment, bytes, owner_from_c(owner)); });
}

size_t nw_psm_usable_size(const void* p) {
    size_t usable = 0;
    if (guarded([&] {
            usable = numaware::psm_usable_size(p);
            return 0;
        }) != 0)
        return 0;
    return usable;
}

int nw_psm_owner_of(const void* p, struct nw_psm_owner_info* out) {
    return guarded([&] {
        require(out, "out");
        const numaware::HeapBlockInfo info = numaware::psm_owner_of(p);
        out->node = info.node;
        out->owner = owner_to_c(info.owner);
        out->large = info.large ? 1 : 0;
        out->usable_size = info.usable_bytes;
        return 0;
    });
}

int nw_psm_node_stats(unsigned node, struct nw_psm_stats* out) {
    return guarded([&] {
        require(out, "out");
        const numaware::HeapNodeStats stats = numaware::psm_node_stats(node);
        out->bytes_in_use = stats.bytes_in_use;
        out->bytes_cached = stats.bytes_cached;
        out->pages_mapped = stats.pages_mapped;
        out->fragmentation = stats.fragmentation;
        return 0;
    });
}

}  // extern "C"
