// capi/team.cpp — C wrappers over numaware::Team.
#include <limits>
#include <memory>
#include <string>

#include "capi/capi_util.hpp"
#include "capi/machine_handle.hpp"
#include "capi/team_handle.hpp"
#include "numaware/c/team.h"
#include "numaware/team.hpp"

using numaware::Error;
using numaware::capi::guarded;
using numaware::capi::machine_of;
using numaware::capi::require;
using numaware::capi::team_of;

namespace {

numaware::TeamMapping mapping_from_c(const nw_team_mapping& m) {
    numaware::TeamMapping out;
    out.threads = m.threads;
    out.nodes = m.nodes;
    if (m.kind == NW_TEAM_CONTIGUOUS)
        out.kind = numaware::MappingKind::contiguous;
    else if (m.kind == NW_TEAM_SCATTER)
        out.kind = numaware::MappingKind::scatter;
    else
        throw Error("mapping.kind", "is " + std::to_string(m.kind) +
                                        "; expected NW_TEAM_CONTIGUOUS (0) or NW_TEAM_SCATTER (1)");
    if (m.cpu_count > 0) {
        require(m.cpus, "mapping.cpus");
        out.cpus.assign(m.cpus, m.cpus + m.cpu_count);
    }
    return out;
}

}  // namespace

extern "C" {

int nw_team_create(const nw_machine_t* machine, const struct nw_team_mapping* mapping, nw_team_t** out) {
    return guarded([&] {
        const numaware::Machine& m = machine_of(machine);
        require(mapping, "mapping");
        require(out, "out");
        // Team is neither copyable nor movable: build it in place.
        std::unique_ptr<nw_team> handle(new nw_team{numaware::Team(m, mapping_from_c(*mapping))});
        *out = handle.release();
        return 0;
    });
}

int nw_team_run(nw_team_t* team, void (*fn)(const struct nw_team_ctx* ctx, void* arg), void* arg) {
    return guarded([&] {
        require(team, "team");
        if (fn == nullptr) throw Error("fn", "is NULL");
        const unsigned size = static_cast<unsigned>(team->team.size());
        team->team.run([&](numaware::TeamContext& ctx) {
            const nw_team_ctx c{ctx.rank(), ctx.cpu(), ctx.node(), size, &ctx};
            fn(&c, arg);
        });
        return 0;
    });
}

int nw_team_barrier(const struct nw_team_ctx* ctx) {
    return guarded([&] {
        require(ctx, "ctx");
        require(ctx->internal, "ctx->internal");
        static_cast<const numaware::TeamContext*>(ctx->internal)->barrier();
        return 0;
    });
}

int nw_team_size(const nw_team_t* team) {
    return guarded([&] { return static_cast<int>(team_of(team).size()); });
}

int nw_team_rank_place(const nw_team_t* team, unsigned rank, unsigned* cpu, unsigned* node) {
    return guarded([&] {
        const numaware::TeamLayout& layout = team_of(team).layout();
        if (rank >= layout.size())
            throw Error("rank", std::to_string(rank) + " is not a rank of this team (limit " +
                                    std::to_string(layout.size() - 1) + ")");
        if (cpu) *cpu = layout.ranks[rank].cpu;
        if (node) *node = layout.ranks[rank].node;
        return 0;
    });
}

void nw_team_destroy(nw_team_t* team) { delete team; }

}  // extern "C"
