// machine/json.cpp — the Machine's own JSON form.
//
// The form is a plain transcription of the struct so that
// from_json(to_json()) == machine holds exactly: integers stay integers and
// doubles are printed with enough digits to read back the same value.
// Unknown keys are rejected so a misspelt field is an error, not a default.
#include <algorithm>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "numaware/error.hpp"
#include "numaware/machine.hpp"

namespace numaware {

namespace {
using nlohmann::json;

json matrix_json(const auto& m) {
    json rows = json::array();
    for (const auto& row : m) rows.push_back(json(row));
    return rows;
}

const json& member(const json& object, const char* key, const std::string& where) {
    auto it = object.find(key);
    if (it == object.end()) throw Error(where + "." + key, "missing from machine JSON");
    return *it;
}

void only_keys(const json& object, std::initializer_list<const char*> keys, const std::string& where) {
    for (auto it = object.begin(); it != object.end(); ++it) {
        bool known = false;
        std::string list;
        for (const char* k : keys) {
            known = known || it.key() == k;
            list += list.empty() ? k : std::string(", ") + k;
        }
        if (!known) throw Error(where + "." + it.key(), "unknown key in machine JSON (known: " + list + ")");
    }
}

std::uint64_t as_u64(const json& v, const std::string& field) {
    if (!v.is_number_unsigned() && !(v.is_number_integer() && v.get<std::int64_t>() >= 0))
        throw Error(field, "expected a non-negative integer, got " + v.dump());
    return v.get<std::uint64_t>();
}

unsigned as_unsigned(const json& v, const std::string& field) {
    const std::uint64_t x = as_u64(v, field);
    if (x > 0xffffffffULL) throw Error(field, v.dump() + " is out of range (limit 4294967295)");
    return static_cast<unsigned>(x);
}

std::string as_string(const json& v, const std::string& field) {
    if (!v.is_string()) throw Error(field, "expected a string, got " + v.dump());
    return v.get<std::string>();
}

const json& as_array(const json& v, const std::string& field) {
    if (!v.is_array()) throw Error(field, "expected an array, got " + v.dump());
    return v;
}

template <class T, class Get>
NodeMatrix<T> matrix_from(const json& v, const std::string& field, Get get) {
    NodeMatrix<T> m;
    const json& rows = as_array(v, field);
    m.reserve(rows.size());
    for (std::size_t i = 0; i < rows.size(); ++i) {
        const std::string row_field = field + "[" + std::to_string(i) + "]";
        const json& cells = as_array(rows[i], row_field);
        std::vector<T> row;
        row.reserve(cells.size());
        // An element's own field name is built only when it is refused: a
        // 1024-node machine has a million entries.
        for (std::size_t j = 0; j < cells.size(); ++j) {
            try {
                row.push_back(get(cells[j], row_field));
            } catch (const Error&) {
                row.push_back(get(cells[j], row_field + "[" + std::to_string(j) + "]"));
            }
        }
        m.push_back(std::move(row));
    }
    return m;
}

double as_double(const json& v, const std::string& field) {
    if (!v.is_number()) throw Error(field, "expected a number, got " + v.dump());
    return v.get<double>();
}
}  // namespace

std::string Machine::to_json() const {
    json j;
    j["name"] = name;
    json node_list = json::array();
    for (const Node& n : nodes) {
        json jn = {{"os_index", n.os_index},
                   {"memory_bytes", n.memory_bytes},
                   {"cpus", n.cpus},
                   {"tier", n.tier},
                   {"kind", n.kind}};
        if (!n.memory_allowed) jn["memory_allowed"] = false;   // absent: allowed
        node_list.push_back(std::move(jn));
    }
    j["nodes"] = node_list;
    if (!left_out.empty())
        j["left_out"] = {{"cpus", left_out.cpus},
                         {"nodes", left_out.nodes.to_vector()},
                         {"memory", left_out.memory.to_vector()},
                         {"cpuless", left_out.cpuless.to_vector()},
                         {"by", left_out.by}};
    json cache_list = json::array();
    for (const Cache& c : caches)
        cache_list.push_back({{"level", c.level},
                              {"type", c.type},
                              {"size_bytes", c.size_bytes},
                              {"line_bytes", c.line_bytes},
                              {"cpus", c.cpus}});
    j["caches"] = cache_list;
    if (!smt_cores.empty()) j["smt_cores"] = smt_cores;
    j["page_bytes"] = page_bytes;
    j["distances"] = matrix_json(distances);
    if (latency_ns) j["latency_ns"] = matrix_json(*latency_ns);
    if (bandwidth_gbps) j["bandwidth_gbps"] = matrix_json(*bandwidth_gbps);
    return j.dump(2);
}

Machine Machine::from_json(std::string_view text) {
    json j;
    try {
        j = json::parse(text);
    } catch (const json::exception& e) {
        // parse_error, and out_of_range for a number beyond a double.
        throw Error("machine JSON", std::string("is not valid JSON: ") + e.what());
    }
    if (!j.is_object()) throw Error("machine JSON", "expected an object with name, nodes and distances");
    only_keys(j,
              {"name", "nodes", "caches", "smt_cores", "page_bytes", "distances", "latency_ns", "bandwidth_gbps",
               "left_out"},
              "machine");

    Machine m;
    if (j.contains("name")) m.name = as_string(j["name"], "name");
    const json& node_list = as_array(member(j, "nodes", "machine"), "nodes");
    for (std::size_t i = 0; i < node_list.size(); ++i) {
        const std::string f = "nodes[" + std::to_string(i) + "]";
        const json& jn = node_list[i];
        if (!jn.is_object()) throw Error(f, "expected an object, got " + jn.dump());
        only_keys(jn, {"os_index", "memory_bytes", "cpus", "tier", "kind", "memory_allowed"}, f);
        Node n;
        n.os_index = as_unsigned(member(jn, "os_index", f), f + ".os_index");
        n.memory_bytes = as_u64(member(jn, "memory_bytes", f), f + ".memory_bytes");
        if (jn.contains("cpus")) {
            const json& cpus = as_array(jn["cpus"], f + ".cpus");
            for (std::size_t c = 0; c < cpus.size(); ++c)
                n.cpus.push_back(as_unsigned(cpus[c], f + ".cpus[" + std::to_string(c) + "]"));
        }
        if (jn.contains("tier")) {
            const json& t = jn["tier"];
            if (!t.is_number_integer()) throw Error(f + ".tier", "expected an integer, got " + t.dump());
            const auto tier = t.get<std::int64_t>();
            if (tier < 0 || tier > 1000000) throw Error(f + ".tier", t.dump() + " is out of range (0..1000000)");
            n.tier = static_cast<int>(tier);
        }
        if (jn.contains("kind")) n.kind = as_string(jn["kind"], f + ".kind");
        if (jn.contains("memory_allowed")) {
            if (!jn["memory_allowed"].is_boolean())
                throw Error(f + ".memory_allowed", "expected true or false, got " + jn["memory_allowed"].dump());
            n.memory_allowed = jn["memory_allowed"].get<bool>();
        }
        m.nodes.push_back(std::move(n));
    }
    if (j.contains("caches")) {
        const json& cache_list = as_array(j["caches"], "caches");
        for (std::size_t i = 0; i < cache_list.size(); ++i) {
            const std::string f = "caches[" + std::to_string(i) + "]";
            const json& jc = cache_list[i];
            if (!jc.is_object()) throw Error(f, "expected an object, got " + jc.dump());
            only_keys(jc, {"level", "type", "size_bytes", "line_bytes", "cpus"}, f);
            Cache c;
            c.level = as_unsigned(member(jc, "level", f), f + ".level");
            if (jc.contains("type")) c.type = as_string(jc["type"], f + ".type");
            c.size_bytes = as_u64(member(jc, "size_bytes", f), f + ".size_bytes");
            if (jc.contains("line_bytes")) c.line_bytes = as_unsigned(jc["line_bytes"], f + ".line_bytes");
            if (jc.contains("cpus")) {
                const json& cpus = as_array(jc["cpus"], f + ".cpus");
                for (std::size_t k = 0; k < cpus.size(); ++k)
                    c.cpus.push_back(as_unsigned(cpus[k], f + ".cpus[" + std::to_string(k) + "]"));
            }
            m.caches.push_back(std::move(c));
        }
    }
    if (j.contains("smt_cores")) {
        const json& core_list = as_array(j["smt_cores"], "smt_cores");
        for (std::size_t i = 0; i < core_list.size(); ++i) {
            const std::string f = "smt_cores[" + std::to_string(i) + "]";
            const json& cpus = as_array(core_list[i], f);
            std::vector<unsigned> core;
            for (std::size_t k = 0; k < cpus.size(); ++k)
                core.push_back(as_unsigned(cpus[k], f + "[" + std::to_string(k) + "]"));
            m.smt_cores.push_back(std::move(core));
        }
    }
    if (j.contains("left_out")) {
        const json& jl = j["left_out"];
        if (!jl.is_object()) throw Error("left_out", "expected an object, got " + jl.dump());
        only_keys(jl, {"cpus", "nodes", "memory", "cpuless", "by"}, "left_out");
        const auto indices = [&](const char* key) {
            std::vector<unsigned> out;
            if (!jl.contains(key)) return out;
            const std::string f = std::string("left_out.") + key;
            const json& a = as_array(jl[key], f);
            for (std::size_t k = 0; k < a.size(); ++k) out.push_back(as_unsigned(a[k], f + "[" + std::to_string(k) + "]"));
            return out;
        };
        const auto node_set = [&](const char* key) {
            NodeSet set;
            for (unsigned n : indices(key)) {
                if (n >= NodeSet::max_nodes)
                    throw Error(std::string("left_out.") + key, "node " + std::to_string(n) + " is out of range (limit " +
                                                                    std::to_string(NodeSet::max_nodes - 1) + ")");
                set.add(n);
            }
            return set;
        };
        m.left_out.cpus = indices("cpus");
        std::sort(m.left_out.cpus.begin(), m.left_out.cpus.end());
        m.left_out.cpus.erase(std::unique(m.left_out.cpus.begin(), m.left_out.cpus.end()), m.left_out.cpus.end());
        m.left_out.nodes = node_set("nodes");
        m.left_out.memory = node_set("memory");
        m.left_out.cpuless = node_set("cpuless");
        if (jl.contains("by")) m.left_out.by = as_string(jl["by"], "left_out.by");
    }
    // Absent in files written before the field existed: the documented default.
    if (j.contains("page_bytes")) m.page_bytes = as_u64(j["page_bytes"], "page_bytes");
    m.distances = matrix_from<unsigned>(member(j, "distances", "machine"), "distances", as_unsigned);
    if (j.contains("latency_ns") && !j["latency_ns"].is_null())
        m.latency_ns = matrix_from<double>(j["latency_ns"], "latency_ns", as_double);
    if (j.contains("bandwidth_gbps") && !j["bandwidth_gbps"].is_null())
        m.bandwidth_gbps = matrix_from<double>(j["bandwidth_gbps"], "bandwidth_gbps", as_double);
    m.validate();
    return m;
}

}  // namespace numaware
