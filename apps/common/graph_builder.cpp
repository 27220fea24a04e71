// apps/common/graph_builder.cpp — what the applications' graph builders share.
#include "apps/common/graph_builder.hpp"

#include <fmt/format.h>

#include "numaware/error.hpp"

namespace numaware::apps {

int GraphBuilder::owner(std::size_t block, std::size_t blocks) const {
    return static_cast<int>(nodes[band_owner_index(block, blocks, nodes.size())]);
}

void GraphBuilder::reserve(std::uint64_t tasks, std::uint64_t deps, std::uint64_t regions) {
    if (tasks > max_tasks || deps > max_deps) {
        throw Error("shape", fmt::format("the graph would have {} tasks and {} dependencies; the simulator's "
                                         "builders accept at most {} tasks and {} dependencies",
                                         tasks, deps, max_tasks, max_deps));
    }
    graph.reserve(static_cast<std::size_t>(tasks), static_cast<std::size_t>(deps), static_cast<std::size_t>(regions));
}

std::string graph_name(std::string_view app, const AppSize& size) {
    return fmt::format("{} n={} block={} iterations={}{}", app, size.n, size.block, size.iterations,
                       size.halos == Halos::rows ? "" : " halos=whole-blocks");
}

}  // namespace numaware::apps
