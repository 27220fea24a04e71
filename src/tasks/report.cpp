// tasks/report.cpp — JSON of a recorded TaskGraph.
#include <string>

#include <nlohmann/json.hpp>

#include "numaware/error.hpp"
#include "numaware/tasks.hpp"

namespace numaware::tasks {

namespace {

using nlohmann::json;

std::string_view access_text(AccessMode a) {
    switch (a) {
        case AccessMode::in: return "in";
        case AccessMode::out: return "out";
        case AccessMode::inout: return "inout";
    }
    return "in";
}

AccessMode parse_access(const json& j, const std::string& field) {
    if (!j.is_string()) throw Error(field, "must be \"in\", \"out\" or \"inout\"");
    const std::string s = j.get<std::string>();
    if (s == "in") return AccessMode::in;
    if (s == "out") return AccessMode::out;
    if (s == "inout") return AccessMode::inout;
    throw Error(field, "is \"" + s + "\"; expected \"in\", \"out\" or \"inout\"");
}

const json& member(const json& obj, const char* key, const std::string& field) {
    auto it = obj.find(key);
    if (it == obj.end()) throw Error(field + "." + key, "is missing");
    return *it;
}

std::uint64_t unsigned_of(const json& obj, const char* key, const std::string& field) {
    const json& v = member(obj, key, field);
    if (!v.is_number_unsigned() && !(v.is_number_integer() && v.get<std::int64_t>() >= 0))
        throw Error(field + "." + key, "must be a non-negative integer");
    return v.get<std::uint64_t>();
}

}  // namespace

std::string TaskGraph::to_json() const {
    json arr = json::array();
    for (const RecordedTask& t : tasks) {
        json deps = json::array();
        for (const RecordedDep& d : t.deps)
            deps.push_back({{"region", d.region}, {"bytes", d.bytes}, {"access", access_text(d.access)}});
        json preds = json::array();
        for (const Edge& e : t.preds) preds.push_back({{"from", e.from}, {"bytes", e.bytes}});
        arr.push_back({{"id", t.id},
                       {"hint", t.hint},
                       {"deps", std::move(deps)},
                       {"preds", std::move(preds)},
                       {"seconds", t.seconds},
                       {"worker", t.worker}});
    }
    return json{{"tasks", std::move(arr)}}.dump();
}

TaskGraph TaskGraph::from_json(std::string_view text) {
    json j;
    try {
        j = json::parse(text);
    } catch (const json::exception& e) {
        throw Error("json", std::string("is not valid JSON: ") + e.what());
    }
    if (!j.is_object()) throw Error("json", "must be an object with a \"tasks\" array");
    const json& arr = member(j, "tasks", "graph");
    if (!arr.is_array()) throw Error("tasks", "must be an array");
    TaskGraph g;
    for (std::size_t i = 0; i < arr.size(); ++i) {
        const std::string f = "tasks[" + std::to_string(i) + "]";
        const json& t = arr[i];
        if (!t.is_object()) throw Error(f, "must be an object");
        RecordedTask r;
        r.id = unsigned_of(t, "id", f);
        if (auto h = t.find("hint"); h != t.end()) {
            if (!h->is_number_integer() || h->get<std::int64_t>() < -1 || h->get<std::int64_t>() > 1 << 20)
                throw Error(f + ".hint", "must be -1 or a node index");
            r.hint = h->get<int>();
        }
        const json& deps = member(t, "deps", f);
        if (!deps.is_array()) throw Error(f + ".deps", "must be an array");
        for (std::size_t k = 0; k < deps.size(); ++k) {
            const std::string fd = f + ".deps[" + std::to_string(k) + "]";
            if (!deps[k].is_object()) throw Error(fd, "must be an object");
            r.deps.push_back(RecordedDep{unsigned_of(deps[k], "region", fd), unsigned_of(deps[k], "bytes", fd),
                                         parse_access(member(deps[k], "access", fd), fd + ".access")});
        }
        const json& preds = member(t, "preds", f);
        if (!preds.is_array()) throw Error(f + ".preds", "must be an array");
        for (std::size_t k = 0; k < preds.size(); ++k) {
            const std::string fp = f + ".preds[" + std::to_string(k) + "]";
            if (!preds[k].is_object()) throw Error(fp, "must be an object");
            const std::uint64_t from = unsigned_of(preds[k], "from", fp);
            if (from >= r.id) throw Error(fp + ".from", "task " + std::to_string(from) + " is not earlier than task " + std::to_string(r.id));
            r.preds.push_back(Edge{from, unsigned_of(preds[k], "bytes", fp)});
        }
        if (auto s = t.find("seconds"); s != t.end()) {
            if (!s->is_number() || s->get<double>() < 0) throw Error(f + ".seconds", "must be a number >= 0");
            r.seconds = s->get<double>();
        }
        if (t.contains("worker")) {
            const std::uint64_t w = unsigned_of(t, "worker", f);
            if (w > 0xffffffffu) throw Error(f + ".worker", "is out of range");
            r.worker = static_cast<unsigned>(w);
        }
        g.tasks.push_back(std::move(r));
    }
    return g;
}

}  // namespace numaware::tasks
