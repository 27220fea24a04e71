// sim/memory/rodinia_kernels.cpp — the Rodinia-like kernels by name: "NAME[:SIZE]".
#include "sim/memory/rodinia_kernels.hpp"

#include <fmt/core.h>

#include "sim/memory/kernel_common.hpp"

namespace numaware::sim::memory::rodinia {

std::unique_ptr<Workload> make_rodinia_kernel(std::string_view spec) {
    const std::string_view kernel = spec.substr(0, spec.find(':'));
    const bool mine = kernel == "bfs" || kernel == "hotspot" || kernel == "kmeans" || kernel == "lud" ||
                      kernel == "nw" || kernel == "pathfinder" || kernel == "streamcluster" || kernel == "cfd";
    if (!mine) return nullptr;
    const char cls = detail::class_letter(spec, "SW", 'W');
    const std::string name = fmt::format("{}:{}", kernel, cls);
    if (kernel == "bfs") return make_bfs(bfs_size(cls), name);
    if (kernel == "hotspot") return make_hotspot(hotspot_size(cls), name);
    if (kernel == "kmeans") return make_kmeans(kmeans_size(cls), name);
    if (kernel == "lud") return make_lud(lud_size(cls), name);
    if (kernel == "nw") return make_nw(nw_size(cls), name);
    if (kernel == "pathfinder") return make_pathfinder(pathfinder_size(cls), name);
    if (kernel == "streamcluster") return make_streamcluster(streamcluster_size(cls), name);
    return make_cfd(cfd_size(cls), name);
}

}  // namespace numaware::sim::memory::rodinia
