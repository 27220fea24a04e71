// heap/latency_database.cpp — the latency database (checks, JSON file
// form) and the pure decisions made from it (rankings, non-uniformity,
// fast-list assignment).
#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>
#include <numeric>
#include <set>
#include <sstream>

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include "numaware/error.hpp"
#include "numaware/latency_blocks.hpp"

namespace numaware {

namespace {

constexpr const char* format_name = "numaware-latency";

bool usable_latency(double v) { return std::isfinite(v) && v > 0; }

std::string at(std::string_view source, const std::string& field) {
    return std::string(source) + ": " + field;
}

}  // namespace

void validate_latency_database(const LatencyDatabase& db, std::string_view source) {
    if (db.line_bytes == 0 || (db.line_bytes & (db.line_bytes - 1)) != 0)
        throw Error(at(source, "line_bytes"), fmt::format("{} is not a power of two", db.line_bytes));
    if (db.page_bytes < db.line_bytes || db.page_bytes % db.line_bytes != 0)
        throw Error(at(source, "page_bytes"),
                    fmt::format("{} is not a multiple of line_bytes {}", db.page_bytes, db.line_bytes));
    if (db.region_bytes == 0 || db.region_bytes % db.page_bytes != 0)
        throw Error(at(source, "region_bytes"),
                    fmt::format("{} is not a positive multiple of page_bytes {}", db.region_bytes, db.page_bytes));
    if (db.blocks() > std::size_t{UINT32_MAX})
        throw Error(at(source, "region_bytes"), "more blocks than 2^32 - 1");
    if (db.cpus.empty()) throw Error(at(source, "cpus"), "no CPU measured");
    std::set<unsigned> seen;
    for (std::size_t c = 0; c < db.cpus.size(); ++c)
        if (!seen.insert(db.cpus[c]).second)
            throw Error(at(source, fmt::format("cpus[{}]", c)), fmt::format("CPU {} listed twice", db.cpus[c]));
    if (db.latency_ns.size() != db.cpus.size())
        throw Error(at(source, "latency_ns"),
                    fmt::format("{} rows, expected one per CPU ({})", db.latency_ns.size(), db.cpus.size()));
    const std::size_t blocks = db.blocks();
    for (std::size_t c = 0; c < db.latency_ns.size(); ++c) {
        const auto& row = db.latency_ns[c];
        if (row.size() != blocks)
            throw Error(at(source, fmt::format("latency_ns[{}]", c)),
                        fmt::format("{} entries, expected one per block ({})", row.size(), blocks));
        for (std::size_t b = 0; b < row.size(); ++b)
            if (!usable_latency(row[b]))
                throw Error(at(source, fmt::format("latency_ns[{}][{}]", c, b)),
                            fmt::format("{} is not a finite latency > 0", row[b]));
    }
    if (db.noise_ns.size() != db.cpus.size())
        throw Error(at(source, "noise_ns"),
                    fmt::format("{} entries, expected one per CPU ({})", db.noise_ns.size(), db.cpus.size()));
    for (std::size_t c = 0; c < db.noise_ns.size(); ++c)
        if (!std::isfinite(db.noise_ns[c]) || db.noise_ns[c] < 0)
            throw Error(at(source, fmt::format("noise_ns[{}]", c)),
                        fmt::format("{} is not a finite value >= 0", db.noise_ns[c]));
    const std::size_t pages = db.region_bytes / db.page_bytes;
    if (!db.frames.empty() && db.frames.size() != pages)
        throw Error(at(source, "frames"),
                    fmt::format("{} entries, expected none or one per page ({})", db.frames.size(), pages));
}

// ---- JSON ----

std::string latency_database_to_json(const LatencyDatabase& db) {
    nlohmann::json j;
    j["format"] = format_name;
    j["version"] = latency_database_version;
    j["region_bytes"] = db.region_bytes;
    j["line_bytes"] = db.line_bytes;
    j["page_bytes"] = db.page_bytes;
    j["repetitions"] = db.repetitions;
    j["loads_per_sample"] = db.loads_per_sample;
    j["cpus"] = db.cpus;
    j["latency_ns"] = db.latency_ns;
    j["noise_ns"] = db.noise_ns;
    j["frames"] = db.frames;
    j["frames_note"] = db.frames_note;
    return j.dump() + "\n";
}

namespace {

const nlohmann::json& member(const nlohmann::json& j, const char* name, std::string_view source) {
    auto it = j.find(name);
    if (it == j.end()) throw Error(at(source, name), "missing");
    return *it;
}

template <class T>
T unsigned_field(const nlohmann::json& j, const char* name, std::string_view source) {
    const auto& v = member(j, name, source);
    if (!v.is_number_unsigned())
        throw Error(at(source, name), "expected a non-negative integer, got " + v.dump());
    const auto raw = v.get<std::uint64_t>();
    if (raw > static_cast<std::uint64_t>(std::numeric_limits<T>::max()))
        throw Error(at(source, name), fmt::format("{} is too large", raw));
    return static_cast<T>(raw);
}

double number_at(const nlohmann::json& v, std::string_view source, const std::string& field) {
    if (!v.is_number()) throw Error(at(source, field), "expected a number, got " + v.dump());
    return v.get<double>();
}

const nlohmann::json& array_field(const nlohmann::json& j, const char* name, std::string_view source) {
    const auto& v = member(j, name, source);
    if (!v.is_array()) throw Error(at(source, name), "expected an array, got " + v.dump());
    return v;
}

}  // namespace

LatencyDatabase latency_database_from_json(std::string_view text, std::string_view source) {
    nlohmann::json j;
    try {
        j = nlohmann::json::parse(text);
    } catch (const nlohmann::json::parse_error& e) {
        throw Error(at(source, "json"), fmt::format("not valid JSON (byte {}): {}", e.byte, e.what()));
    } catch (const nlohmann::json::exception& e) {
        // out_of_range: a number beyond a double.
        throw Error(at(source, "json"), fmt::format("not valid JSON: {}", e.what()));
    }
    if (!j.is_object()) throw Error(at(source, "json"), "expected a JSON object");
    const auto& format = member(j, "format", source);
    if (!format.is_string() || format.get<std::string>() != format_name)
        throw Error(at(source, "format"), fmt::format("expected \"{}\", got {}", format_name, format.dump()));
    const auto version = unsigned_field<unsigned>(j, "version", source);
    if (version != latency_database_version)
        throw Error(at(source, "version"),
                    fmt::format("version {} is not supported (this build reads {})", version, latency_database_version));

    LatencyDatabase db;
    db.region_bytes = unsigned_field<std::size_t>(j, "region_bytes", source);
    db.line_bytes = unsigned_field<std::size_t>(j, "line_bytes", source);
    db.page_bytes = unsigned_field<std::size_t>(j, "page_bytes", source);
    db.repetitions = unsigned_field<unsigned>(j, "repetitions", source);
    db.loads_per_sample = unsigned_field<unsigned>(j, "loads_per_sample", source);

    const auto& cpus = array_field(j, "cpus", source);
    for (std::size_t c = 0; c < cpus.size(); ++c) {
        if (!cpus[c].is_number_unsigned() || cpus[c].get<std::uint64_t>() > UINT32_MAX)
            throw Error(at(source, fmt::format("cpus[{}]", c)), "expected a CPU index, got " + cpus[c].dump());
        db.cpus.push_back(cpus[c].get<unsigned>());
    }
    const auto& rows = array_field(j, "latency_ns", source);
    for (std::size_t c = 0; c < rows.size(); ++c) {
        const std::string row_field = fmt::format("latency_ns[{}]", c);
        if (!rows[c].is_array()) throw Error(at(source, row_field), "expected an array, got " + rows[c].dump());
        std::vector<double> row;
        row.reserve(rows[c].size());
        for (std::size_t b = 0; b < rows[c].size(); ++b)
            row.push_back(number_at(rows[c][b], source, fmt::format("latency_ns[{}][{}]", c, b)));
        db.latency_ns.push_back(std::move(row));
    }
    const auto& noise = array_field(j, "noise_ns", source);
    for (std::size_t c = 0; c < noise.size(); ++c)
        db.noise_ns.push_back(number_at(noise[c], source, fmt::format("noise_ns[{}]", c)));
    const auto& frames = array_field(j, "frames", source);
    for (std::size_t p = 0; p < frames.size(); ++p) {
        if (!frames[p].is_number_unsigned())
            throw Error(at(source, fmt::format("frames[{}]", p)), "expected a frame number, got " + frames[p].dump());
        db.frames.push_back(frames[p].get<std::uint64_t>());
    }
    const auto& note = member(j, "frames_note", source);
    if (!note.is_string()) throw Error(at(source, "frames_note"), "expected a string, got " + note.dump());
    db.frames_note = note.get<std::string>();

    validate_latency_database(db, source);
    return db;
}

void save_latency_database(const LatencyDatabase& db, const std::string& path) {
    validate_latency_database(db, path);
    const std::string text = latency_database_to_json(db);
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    if (!out) throw Error(path, std::string("cannot open for writing: ") + std::strerror(errno), errno ? errno : EIO);
    out << text;
    out.flush();
    if (!out) throw Error(path, "write failed", EIO);
}

LatencyDatabase load_latency_database(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw Error(path, std::string("cannot open for reading: ") + std::strerror(errno), errno ? errno : EIO);
    std::ostringstream text;
    text << in.rdbuf();
    if (in.bad()) throw Error(path, "read failed", EIO);
    return latency_database_from_json(text.str(), path);
}

// ---- decisions ----

LatencyPlan plan_latency_blocks(const LatencyDatabase& db, double noise_factor) {
    if (!std::isfinite(noise_factor) || noise_factor <= 0)
        throw Error("noise_factor", fmt::format("{} is not a finite value > 0", noise_factor));
    validate_latency_database(db);
    LatencyPlan plan;
    plan.noise_factor = noise_factor;
    const std::size_t blocks = db.blocks();
    // A quartile of at least one block, so tiny regions still compare ends.
    const std::size_t quarter = std::max<std::size_t>(1, blocks / 4);
    std::size_t non_uniform_cpus = 0;
    double widest_ratio = 0;
    for (std::size_t c = 0; c < db.cpus.size(); ++c) {
        const auto& lat = db.latency_ns[c];
        CpuBlockRanking r;
        r.cpu = db.cpus[c];
        r.fastest_first.resize(blocks);
        std::iota(r.fastest_first.begin(), r.fastest_first.end(), std::uint32_t{0});
        // Stable on the index so equal latencies keep address order: the
        // ranking is then a function of the data alone.
        std::stable_sort(r.fastest_first.begin(), r.fastest_first.end(),
                         [&](std::uint32_t a, std::uint32_t b) { return lat[a] < lat[b]; });
        r.min_ns = lat[r.fastest_first.front()];
        r.max_ns = lat[r.fastest_first.back()];
        r.median_ns = blocks % 2 == 1 ? lat[r.fastest_first[blocks / 2]]
                                      : (lat[r.fastest_first[blocks / 2 - 1]] + lat[r.fastest_first[blocks / 2]]) / 2;
        double fast = 0, slow = 0;
        for (std::size_t i = 0; i < quarter; ++i) {
            fast += lat[r.fastest_first[i]];
            slow += lat[r.fastest_first[blocks - 1 - i]];
        }
        r.fast_quartile_ns = fast / static_cast<double>(quarter);
        r.slow_quartile_ns = slow / static_cast<double>(quarter);
        r.spread_ns = r.slow_quartile_ns - r.fast_quartile_ns;
        r.noise_ns = db.noise_ns[c];
        r.non_uniform = r.spread_ns > noise_factor * r.noise_ns;
        if (r.non_uniform) ++non_uniform_cpus;
        const double ratio = r.noise_ns > 0 ? r.spread_ns / r.noise_ns : (r.spread_ns > 0 ? INFINITY : 0);
        widest_ratio = std::max(widest_ratio, ratio);
        plan.per_cpu.push_back(std::move(r));
    }
    plan.non_uniform = non_uniform_cpus > 0;
    const std::size_t cpus = plan.per_cpu.size();
    plan.fast_overlap.assign(cpus, std::vector<double>(cpus, 1.0));
    double max_overlap = 0;
    for (std::size_t a = 0; a < cpus; ++a) {
        // Membership of a's fastest quarter, to test b's against it.
        std::vector<bool> in_a(blocks, false);
        for (std::size_t i = 0; i < quarter; ++i) in_a[plan.per_cpu[a].fastest_first[i]] = true;
        for (std::size_t b = 0; b < cpus; ++b) {
            if (a == b) continue;
            std::size_t both = 0;
            for (std::size_t i = 0; i < quarter; ++i) both += in_a[plan.per_cpu[b].fastest_first[i]] ? 1 : 0;
            plan.fast_overlap[a][b] = static_cast<double>(both) / static_cast<double>(quarter);
            max_overlap = std::max(max_overlap, plan.fast_overlap[a][b]);
        }
    }
    const std::string sharing =
        cpus < 2 ? std::string()
                 : fmt::format("; fastest quarters overlap up to {:.2f} between CPUs (0.25 = unrelated{})", max_overlap,
                               max_overlap >= 0.75 ? ", here largely the same blocks: memory-side" : "");
    if (plan.non_uniform)
        plan.diagnostic = fmt::format(
            "measurable non-uniformity on {} of {} CPUs (quartile spread up to {:.2f} x noise, threshold {:.2f} x): "
            "serving per-CPU fastest blocks{}",
            non_uniform_cpus, db.cpus.size(), widest_ratio, noise_factor, sharing);
    else
        plan.diagnostic = fmt::format(
            "no measurable non-uniformity on {} CPUs (quartile spread at most {:.2f} x noise, threshold {:.2f} x): "
            "serving ordinary blocks{}",
            db.cpus.size(), widest_ratio, noise_factor, sharing);
    return plan;
}

std::vector<int> assign_fast_blocks(const LatencyPlan& plan, std::size_t blocks_per_cpu) {
    if (plan.per_cpu.empty()) return {};
    const std::size_t blocks = plan.per_cpu.front().fastest_first.size();
    for (std::size_t c = 0; c < plan.per_cpu.size(); ++c)
        if (plan.per_cpu[c].fastest_first.size() != blocks)
            throw Error(fmt::format("plan.per_cpu[{}]", c),
                        fmt::format("ranks {} blocks, CPU 0 ranks {}", plan.per_cpu[c].fastest_first.size(), blocks));
    std::vector<int> owner(blocks, -1);
    std::vector<std::size_t> next(plan.per_cpu.size(), 0);    // cursor into each ranking
    std::vector<std::size_t> taken(plan.per_cpu.size(), 0);
    std::size_t free_blocks = blocks;
    bool progress = true;
    // Turns, one block per CPU per round, so no CPU grabs all the blocks
    // that are fast for everybody before the others choose.
    while (progress && free_blocks > 0) {
        progress = false;
        for (std::size_t c = 0; c < plan.per_cpu.size() && free_blocks > 0; ++c) {
            if (taken[c] >= blocks_per_cpu) continue;
            const auto& order = plan.per_cpu[c].fastest_first;
            while (next[c] < order.size() && owner[order[next[c]]] != -1) ++next[c];
            if (next[c] == order.size()) continue;
            owner[order[next[c]]] = static_cast<int>(c);
            ++taken[c];
            --free_blocks;
            progress = true;
        }
    }
    return owner;
}

}  // namespace numaware
