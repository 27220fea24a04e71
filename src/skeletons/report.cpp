// skeletons/report.cpp — a stencil run's Report as JSON and as words.
#include <cstdio>
#include <string>

#include <nlohmann/json.hpp>

#include "numaware/stencil.hpp"

namespace numaware::stencil {

namespace {

nlohmann::json block_json(const Block& b) { return nlohmann::json::array({b.lo, b.hi}); }

nlohmann::json traffic_json(const Traffic& t) {
    return {
        {"read_bytes", t.read_bytes},
        {"remote_read_bytes", t.remote_read_bytes},
        {"unknown_read_bytes", t.unknown_read_bytes},
        {"write_bytes", t.write_bytes},
        {"remote_write_bytes", t.remote_write_bytes},
        {"halo_pages", t.halo_pages},
        {"remote_halo_pages", t.remote_halo_pages},
        {"block_pages", t.block_pages},
        {"block_pages_on_node", t.block_pages_on_node},
    };
}

std::string fmt(const char* format, double v) {
    char buf[64];
    std::snprintf(buf, sizeof buf, format, v);
    return buf;
}

// 1234567 -> "1.23 MB"
std::string bytes_text(std::size_t b) {
    const double v = static_cast<double>(b);
    if (v >= 1e9) return fmt("%.2f GB", v / 1e9);
    if (v >= 1e6) return fmt("%.2f MB", v / 1e6);
    if (v >= 1e3) return fmt("%.2f kB", v / 1e3);
    return std::to_string(b) + " B";
}

}  // namespace

std::string Report::to_json() const {
    nlohmann::json ranks_json = nlohmann::json::array();
    for (const RankReport& r : ranks) {
        ranks_json.push_back({
            {"rank", r.rank},
            {"cpu", r.cpu},
            {"node", r.node},
            {"work", block_json(r.work)},
            {"owned", block_json(r.owned)},
            {"weight", r.weight},
            {"busy_seconds", r.busy_seconds},
            {"slabs_updated", r.slabs_updated},
            {"traffic", traffic_json(r.traffic)},
        });
    }
    nlohmann::json per_node = nlohmann::json::object();
    for (const auto& [node, n] : placement_report.pages_per_node) per_node[std::to_string(node)] = n;
    nlohmann::json j = {
        {"kind", kind},
        {"neighbourhood", neighbourhood},
        {"placement", placement},
        {"distribution", distribution},
        {"shape", {{"dims", shape.dims}, {"nx", shape.nx}, {"ny", shape.ny}, {"nz", shape.nz}}},
        {"threads", threads},
        {"sweeps", sweeps},
        {"seconds", seconds},
        {"seconds_per_sweep", seconds_per_sweep},
        {"updates_per_sweep", updates_per_sweep},
        {"updates_per_second", updates_per_second},
        {"arrays_counted", arrays_counted},
        {"bytes_per_sweep", bytes_per_sweep},
        {"bandwidth_gbs", bandwidth_gbs},
        {"read_bytes_per_sweep", read_bytes_per_sweep},
        {"remote_read_bytes_per_sweep", remote_read_bytes_per_sweep},
        {"remote_write_bytes_per_sweep", remote_write_bytes_per_sweep},
        {"halo_pages", halo_pages},
        {"remote_halo_pages", remote_halo_pages},
        {"weight_rule", weight_rule},
        {"ranks", ranks_json},
        {"placement_report",
         {
             {"mode", placement_report.mode},
             {"realisation", placement_report.realisation},
             {"pages", placement_report.pages},
             {"pages_as_intended", placement_report.pages_as_intended},
             {"pages_per_node", per_node},
             {"pages_unknown", placement_report.pages_unknown},
             {"verified", placement_report.verified},
             {"summary", placement_report.summary},
         }},
        {"balancing",
         {
             {"available", balancing.available},
             {"before", balancing.before},
             {"switched_off", balancing.switched_off},
             {"restored", balancing.restored},
             {"note", balancing.note},
         }},
    };
    return j.dump();
}

std::string Report::summary() const {
    std::string s = kind + " " + neighbourhood + " " + shape.to_string() + ", " + placement + ", " + distribution +
                    ", " + std::to_string(threads) + (threads == 1 ? " thread: " : " threads: ") +
                    std::to_string(sweeps) + " sweeps in " + fmt("%.3f s", seconds) + " (" +
                    fmt("%.3f ms/sweep", seconds_per_sweep * 1e3) + ", " +
                    fmt("%.3f Gupdates/s", updates_per_second / 1e9) + ", " + fmt("%.2f GB/s", bandwidth_gbs) +
                    " modelled over " + std::to_string(arrays_counted) + " arrays)\n";
    const double remote_share = read_bytes_per_sweep
                                    ? 100.0 * static_cast<double>(remote_read_bytes_per_sweep) /
                                          static_cast<double>(read_bytes_per_sweep)
                                    : 0.0;
    s += "per sweep: reads " + bytes_text(read_bytes_per_sweep) + ", " + fmt("%.1f%%", remote_share) +
         " remote; remote writes " + bytes_text(remote_write_bytes_per_sweep) + "; halo pages " +
         std::to_string(halo_pages) + " (" + std::to_string(remote_halo_pages) + " remote)";
    if (!weight_rule.empty()) s += "; weights: " + weight_rule;
    s += "\nplacement: " + placement_report.summary;
    if (!balancing.note.empty())
        s += "; balancing: " + balancing.note;
    else if (balancing.switched_off)
        s += "; balancing " + balancing.before + " switched off for the run" +
             (balancing.restored ? " and restored" : " (not restored)");
    else if (balancing.available)
        s += "; balancing " + balancing.before;
    return s;
}

}  // namespace numaware::stencil
