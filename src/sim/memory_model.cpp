// sim/memory_model.cpp — the memory models by name: the one table a new
// model adds itself to.
#include "sim/memory_model.hpp"

#include <string>

#include "numaware/error.hpp"

namespace numaware::sim {

namespace {

struct Entry {
    std::string_view name;
    std::unique_ptr<MemoryModel> (*make)();
};

constexpr Entry models[] = {
    {"snapshot", make_snapshot_memory},
    {"exact", make_exact_memory},
};

std::string choices() {
    std::string out;
    for (const Entry& e : models) out += (out.empty() ? "" : " or ") + std::string(e.name);
    return out;
}

}  // namespace

std::unique_ptr<MemoryModel> make_memory_model(std::string_view name) {
    for (const Entry& e : models)
        if (e.name == name) return e.make();
    throw Error("contention", "unknown model '" + std::string(name) + "': choose " + choices());
}

std::string_view to_string(Contention c) { return c == Contention::exact ? "exact" : "snapshot"; }

Contention parse_contention(std::string_view text) {
    if (text == "snapshot") return Contention::snapshot;
    if (text == "exact") return Contention::exact;
    throw Error("contention", "unknown model '" + std::string(text) + "': choose " + choices());
}

}  // namespace numaware::sim
