// tests/unit/trace_check.hpp — checks a Chrome trace-event JSON document the
// way Perfetto's JSON importer reads it: an object with a "traceEvents"
// array, every event an object with ph, ts, pid and tid, and on every
// (pid, tid) the B and E events nesting like brackets in time order.
#pragma once

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace numaware::test {

struct TraceCounts {
    std::size_t begins = 0, ends = 0, instants = 0, metadata = 0;
};

inline TraceCounts check_chrome_trace(const std::string& text) {
    TraceCounts c;
    nlohmann::json j;
    try {
        j = nlohmann::json::parse(text);
    } catch (const std::exception& e) {
        ADD_FAILURE() << "not JSON: " << e.what();
        return c;
    }
    if (!j.is_object() || !j.contains("traceEvents") || !j["traceEvents"].is_array()) {
        ADD_FAILURE() << "no traceEvents array";
        return c;
    }
    std::map<std::pair<long, long>, std::vector<std::string>> open;   // (pid, tid) -> names of open B
    std::map<std::pair<long, long>, double> last_ts;
    for (const auto& e : j["traceEvents"]) {
        if (!e.is_object() || !e.contains("ph") || !e.contains("ts") || !e.contains("pid") || !e.contains("tid")) {
            ADD_FAILURE() << "event lacks ph/ts/pid/tid: " << e.dump();
            continue;
        }
        if (!e["ph"].is_string() || !e["ts"].is_number() || !e["pid"].is_number_integer() ||
            !e["tid"].is_number_integer()) {
            ADD_FAILURE() << "event fields of the wrong type: " << e.dump();
            continue;
        }
        const std::string ph = e["ph"].get<std::string>();
        const auto key = std::make_pair(e["pid"].get<long>(), e["tid"].get<long>());
        const double ts = e["ts"].get<double>();
        if (ph == "M") {
            ++c.metadata;
            continue;
        }
        auto [it, fresh] = last_ts.emplace(key, ts);
        if (!fresh) {
            EXPECT_GE(ts, it->second) << "events of one thread out of time order: " << e.dump();
            it->second = ts;
        }
        if (ph == "B") {
            ++c.begins;
            open[key].push_back(e.value("name", ""));
        } else if (ph == "E") {
            ++c.ends;
            auto& stack = open[key];
            if (stack.empty()) {
                ADD_FAILURE() << "E without a B on pid " << key.first << " tid " << key.second;
                continue;
            }
            stack.pop_back();
        } else if (ph == "i" || ph == "I") {
            ++c.instants;
        } else {
            ADD_FAILURE() << "unexpected phase " << ph;
        }
    }
    for (const auto& [key, stack] : open)
        EXPECT_TRUE(stack.empty()) << stack.size() << " B events never ended on pid " << key.first << " tid "
                                   << key.second;
    return c;
}

}  // namespace numaware::test
