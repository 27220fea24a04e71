// sim/memory/nas_kernels.cpp — the NAS kernels by name: "NAME[:SIZE]".
#include "sim/memory/nas_kernels.hpp"

#include <fmt/core.h>

#include "sim/memory/kernel_common.hpp"

namespace numaware::sim::memory::nas {

std::unique_ptr<Workload> make_nas_kernel(std::string_view spec) {
    const std::size_t colon = spec.find(':');
    const std::string_view kernel = spec.substr(0, colon);
    const bool mine = kernel == "cg" || kernel == "mg" || kernel == "ft" || kernel == "is" || kernel == "lu" ||
                      kernel == "bt" || kernel == "sp" || kernel == "ep";
    if (!mine) return nullptr;
    const char cls = detail::class_letter(spec, "SWA", 'A');
    const std::string name = fmt::format("{}:{}", kernel, cls);
    if (kernel == "cg") return make_cg(cg_size(cls), name);
    if (kernel == "mg") return make_mg(mg_size(cls), name);
    if (kernel == "ft") return make_ft(ft_size(cls), name);
    if (kernel == "is") return make_is(is_size(cls), name);
    if (kernel == "lu") return make_lu(lu_size(cls), name);
    if (kernel == "bt") return make_adi(AdiSolver::bt, bt_size(cls), name);
    if (kernel == "sp") return make_adi(AdiSolver::sp, sp_size(cls), name);
    return make_ep(ep_size(cls), name);
}

}  // namespace numaware::sim::memory::nas
