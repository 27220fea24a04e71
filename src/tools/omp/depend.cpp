// tools/omp/depend.cpp — GCC's dependence arrays (depend.hpp).
#include "tools/omp/depend.hpp"

#include <fmt/format.h>

#include "tools/omp/team.hpp"

namespace numaware::omp {

void DependList::add(const void* addr, tasks::AccessMode access, std::uint16_t scope) {
    if (addr == nullptr) {
        all_memory_ = true;
        return;
    }
    for (tasks::Dep& d : list_)
        if (d.addr == addr) {
            if (d.access != access) d.access = tasks::AccessMode::inout;
            return;
        }
    // In place: a whole Dep made on the stack and copied would be read back
    // before its stores had left.
    list_.emplace_back(addr, std::size_t{1}, access, scope);
}

void read_depend(void* const* depend, std::uint16_t scope, DependList& out) {
    const auto* w = reinterpret_cast<const std::uintptr_t*>(depend);
    std::uintptr_t n, n_out, n_mutex, n_in, first;
    if (w[0] != 0) {
        n = w[0];
        n_out = w[1];
        n_mutex = 0;
        n_in = n - n_out;
        first = 2;
    } else {
        n = w[1];
        n_out = w[2];
        n_mutex = w[3];
        n_in = w[4];
        first = 5;
    }
    for (std::uintptr_t i = 0; i < n; ++i) {
        const void* addr = reinterpret_cast<const void*>(w[first + i]);
        if (i < n_out + n_mutex) {
            out.add(addr, tasks::AccessMode::inout, scope);
        } else if (i < n_out + n_mutex + n_in) {
            out.add(addr, tasks::AccessMode::in, scope);
        } else {
            // A depobj: {address, kind}.
            const auto* obj = reinterpret_cast<const std::uintptr_t*>(addr);
            const std::uintptr_t kind = obj[1];
            if (kind < 1 || kind > 5)
                fatal(fmt::format("depend(depobj): the dependence object at {} has kind {}, not one of in (1), out "
                                  "(2), inout (3), mutexinoutset (4), inoutset (5): was it initialised by a depobj "
                                  "construct and not destroyed?",
                                  addr, static_cast<std::intptr_t>(kind)));
            out.add(reinterpret_cast<const void*>(obj[0]),
                    kind == 1 ? tasks::AccessMode::in : tasks::AccessMode::inout, scope);
        }
    }
}

}  // namespace numaware::omp
