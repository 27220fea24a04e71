// capi/machine.cpp — C wrappers over numaware::Machine.
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>

#include "capi/capi_util.hpp"
#include "capi/machine_handle.hpp"
#include "numaware/c/machine.h"

using numaware::Error;
using numaware::Machine;
using numaware::capi::guarded;
using numaware::capi::machine_of;
using numaware::capi::require;

namespace {
int as_int(std::size_t value, const char* what) {
    if (value > static_cast<std::size_t>(std::numeric_limits<int>::max()))
        throw Error(what, std::to_string(value) + " does not fit the C API's int return (limit " +
                              std::to_string(std::numeric_limits<int>::max()) + ")", EOVERFLOW);
    return static_cast<int>(value);
}
}  // namespace

extern "C" {

int nw_machine_load(const char* spec, nw_machine_t** out) {
    return guarded([&] {
        require(spec, "spec");
        require(out, "out");
        auto handle = std::make_unique<nw_machine>(nw_machine{Machine::from_spec(spec)});
        *out = handle.release();
        return 0;
    });
}

void nw_machine_destroy(nw_machine_t* machine) { delete machine; }

int nw_machine_node_count(const nw_machine_t* machine) {
    return guarded([&] { return as_int(machine_of(machine).node_count(), "node count"); });
}

int nw_machine_node_os_index(const nw_machine_t* machine, unsigned position) {
    return guarded([&] {
        const Machine& m = machine_of(machine);
        if (position >= m.node_count())
            throw Error("position", std::to_string(position) + " is out of range (the machine has " +
                                        std::to_string(m.node_count()) + " nodes: 0.." +
                                        std::to_string(m.node_count() - 1) + ")");
        return as_int(m.nodes[position].os_index, "node");
    });
}

int nw_machine_node_memory(const nw_machine_t* machine, unsigned node, uint64_t* bytes) {
    return guarded([&] {
        const Machine& m = machine_of(machine);
        require(bytes, "bytes");
        *bytes = m.node(node).memory_bytes;
        return 0;
    });
}

int nw_machine_node_memory_allowed(const nw_machine_t* machine, unsigned node) {
    return guarded([&] { return machine_of(machine).node(node).memory_allowed ? 1 : 0; });
}

int nw_machine_node_cpu_count(const nw_machine_t* machine, unsigned node) {
    return guarded([&] { return as_int(machine_of(machine).node(node).cpus.size(), "cpu count"); });
}

int nw_machine_node_cpus(const nw_machine_t* machine, unsigned node, unsigned* cpus, size_t capacity) {
    return guarded([&] {
        const auto& list = machine_of(machine).node(node).cpus;
        if (capacity > 0) require(cpus, "cpus");
        for (std::size_t i = 0; i < list.size() && i < capacity; ++i) cpus[i] = list[i];
        return as_int(list.size(), "cpu count");
    });
}

int nw_machine_distance(const nw_machine_t* machine, unsigned from, unsigned to) {
    return guarded([&] { return as_int(machine_of(machine).distance(from, to), "distance"); });
}

int nw_machine_to_json(const nw_machine_t* machine, char** json) {
    return guarded([&] {
        const Machine& m = machine_of(machine);
        require(json, "json");
        const std::string text = m.to_json();
        char* copy = static_cast<char*>(std::malloc(text.size() + 1));
        if (copy == nullptr) throw std::bad_alloc();
        std::memcpy(copy, text.c_str(), text.size() + 1);
        *json = copy;
        return 0;
    });
}

}  // extern "C"
