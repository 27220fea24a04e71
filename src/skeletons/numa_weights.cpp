// skeletons/numa_weights.cpp — NUMA-aware work weights: the remote/local
// cost ratio from the machine model (bandwidth, else latency, else SLIT),
// the weights that equalise each rank's time given its remote halo bytes,
// and weights calibrated from a measured run. Pure.
#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "numaware/error.hpp"
#include "numaware/stencil.hpp"
#include "skeletons/geometry.hpp"

namespace numaware::stencil {

using detail::for_each_read;
using detail::interior_part;
using detail::interior_slabs;
using detail::kDouble;
using detail::split_pages;

// =====================================================================
// NUMA-aware weights
// =====================================================================

CostRatio remote_cost(const Machine& machine, unsigned reader_node, unsigned home_node) {
    const std::size_t r = machine.index_of(reader_node);
    const std::size_t h = machine.index_of(home_node);
    const auto entry = [](const std::optional<NodeMatrix<double>>& m, std::size_t i, std::size_t j) {
        if (!m || i >= m->size() || j >= (*m)[i].size()) return 0.0;
        const double v = (*m)[i][j];
        return std::isfinite(v) && v > 0 ? v : 0.0;
    };
    const double bw_home = entry(machine.bandwidth_gbps, h, h);
    const double bw_reader = entry(machine.bandwidth_gbps, r, h);
    if (bw_home > 0 && bw_reader > 0)
        return {bw_home / bw_reader, fmt::format("bandwidth {:.1f}/{:.1f} GB/s", bw_home, bw_reader)};
    const double lat_reader = entry(machine.latency_ns, r, h);
    const double lat_home = entry(machine.latency_ns, h, h);
    if (lat_reader > 0 && lat_home > 0)
        return {lat_reader / lat_home, fmt::format("latency {:g}/{:g} ns", lat_reader, lat_home)};
    const unsigned d_reader = machine.distances.at(r).at(h);
    const unsigned d_home = machine.distances.at(h).at(h);
    return {static_cast<double>(d_reader) / static_cast<double>(d_home), fmt::format("SLIT {}/{}", d_reader, d_home)};
}

WeightPlan numa_weights(const Layout& layout, const Neighbourhood& nb, const std::vector<unsigned>& rank_nodes,
                        const Machine& machine, double remote_cost_override) {
    if (!std::isfinite(remote_cost_override) || remote_cost_override < 0)
        throw Error("remote_cost",
                    fmt::format("must be finite and >= 0 (0: from the machine), got {}", remote_cost_override));
    if (rank_nodes.size() > std::numeric_limits<unsigned>::max())
        throw Error("threads", fmt::format("{} ranks is too many", rank_nodes.size()));
    check_grid(layout.shape, nb);
    const auto threads = static_cast<unsigned>(rank_nodes.size());
    const unsigned halo = nb.radius_slab();
    const Partition cut = partition_equal(layout, halo, threads);

    // Synthetic placement: each owned block's pages on its rank's node, or
    // for a node without memory the nearest with memory (a page belongs to
    // the rank owning its first byte).
    std::vector<unsigned> block_node(threads);
    for (unsigned t = 0; t < threads; ++t) block_node[t] = machine.memory_node_near(rank_nodes[t]);
    const std::size_t pages = layout.pages();
    const std::size_t slab_bytes = layout.slab_stride * kDouble;
    std::vector<unsigned> owner(pages);
    std::vector<int> page_node(pages);
    {
        std::size_t r = 0;
        for (std::size_t p = 0; p < pages; ++p) {
            const std::size_t slab = p * layout.page_size / slab_bytes;
            while (r + 1 < threads && slab >= cut.owned[r].hi) ++r;
            owner[p] = static_cast<unsigned>(r);
            page_node[p] = static_cast<int>(block_node[r]);
        }
    }

    std::map<std::pair<unsigned, unsigned>, CostRatio> ratios;   // (reader, home) -> rho
    const auto rho = [&](unsigned reader, unsigned home) -> const CostRatio& {
        auto it = ratios.find({reader, home});
        if (it == ratios.end()) {
            CostRatio c = remote_cost_override > 0 ? CostRatio{remote_cost_override, "given"}
                                                   : remote_cost(machine, reader, home);
            it = ratios.emplace(std::make_pair(reader, home), std::move(c)).first;
        }
        return it->second;
    };

    WeightPlan plan;
    plan.weights.assign(threads, 1.0);
    plan.cost_ratio.assign(threads, 1.0);
    plan.halo_bytes.assign(threads, 0);
    std::vector<double> extra(threads, 0.0);   // X_t = sum (rho - 1) * halo bytes from each remote home
    std::vector<std::size_t> from_rank(threads, 0);
    for (unsigned t = 0; t < threads; ++t) {
        const unsigned me = rank_nodes[t];
        const Traffic tr = account(layout, nb, cut.work[t], cut.owned[t], me, page_node, page_node);
        plan.halo_bytes[t] = tr.remote_read_bytes;
        // The same remote bytes, split by the rank whose block they are in.
        std::fill(from_rank.begin(), from_rank.end(), 0);
        for_each_read(layout, nb, interior_part(layout, nb, cut.work[t]), [&](std::size_t b0, std::size_t b1) {
            split_pages(layout.page_size, b0, b1, [&](std::size_t page, std::size_t n) {
                if (block_node[owner[page]] != me) from_rank[owner[page]] += n;
            });
        });
        double largest = 1.0;
        for (unsigned u = 0; u < threads; ++u) {
            const bool neighbour = u + 1 == t || u == t + 1;
            if (block_node[u] == me || (from_rank[u] == 0 && !neighbour)) continue;
            const double ratio = rho(me, block_node[u]).ratio;
            largest = std::max(largest, ratio);
            extra[t] += (ratio - 1.0) * static_cast<double>(from_rank[u]);
        }
        plan.cost_ratio[t] = largest;
    }

    const std::size_t interior_slabs_n = interior_slabs(layout, halo);
    const std::size_t row_cells = layout.shape.nx - 2 * static_cast<std::size_t>(nb.radius_x());
    const std::size_t row_count =
        layout.shape.dims == 3 ? layout.shape.ny - 2 * static_cast<std::size_t>(nb.radius_y()) : 1;
    const std::size_t slab_cells = row_cells * row_count;
    const double S = 2.0 * static_cast<double>(slab_cells) * static_cast<double>(kDouble);
    const double N = static_cast<double>(interior_slabs_n);
    const double T = static_cast<double>(threads);
    double sum_extra = 0;
    for (double x : extra) sum_extra += x;

    unsigned remote_ranks = 0;
    for (unsigned t = 0; t < threads; ++t)
        if (plan.halo_bytes[t] > 0) ++remote_ranks;

    if (sum_extra != 0) {
        const double floor_weight = static_cast<double>(layout.granule) * T / N;
        double total = 0;
        for (unsigned t = 0; t < threads; ++t) {
            const double n_t = (N * S + sum_extra) / (T * S) - extra[t] / S;
            plan.weights[t] = std::max(n_t / (N / T), floor_weight);
            total += plan.weights[t];
        }
        for (double& w : plan.weights) w *= T / total;
    }

    // The rule, in one sentence with the numbers.
    if (remote_ranks == 0) {
        plan.rule = fmt::format(
            "no rank reads a remote halo under the equal cut ({} ranks, {} interior slabs), so every weight is 1",
            threads, interior_slabs_n);
        return plan;
    }
    std::string sources;
    {
        std::vector<std::string> seen;
        for (const auto& [key, c] : ratios) {
            const std::string one = fmt::format("{:.2f} ({})", c.ratio, c.source);
            if (std::find(seen.begin(), seen.end(), one) == seen.end()) seen.push_back(one);
        }
        for (std::size_t i = 0; i < seen.size(); ++i) sources += (i ? ", " : "") + seen[i];
    }
    std::size_t h_min = std::numeric_limits<std::size_t>::max();
    std::size_t h_max = 0;
    for (std::size_t h : plan.halo_bytes)
        if (h > 0) {
            h_min = std::min(h_min, h);
            h_max = std::max(h_max, h);
        }
    const auto [w_min, w_max] = std::minmax_element(plan.weights.begin(), plan.weights.end());
    plan.rule = fmt::format(
        "rho = {} for the {} of {} ranks with a remote halo ({} B/sweep under the equal cut); equalising "
        "T_t = n_t*S + sum (rho-1)*H_t with S = {:.0f} B per slab update over {} interior slabs gives weights "
        "{:.3f}..{:.3f} (each at least one granule = {} slab{}, mean 1)",
        sources, remote_ranks, threads, h_min == h_max ? fmt::format("{}", h_min) : fmt::format("{}..{}", h_min, h_max),
        S, interior_slabs_n, *w_min, *w_max, layout.granule, layout.granule == 1 ? "" : "s");
    return plan;
}

// =====================================================================
// Calibration
// =====================================================================

std::vector<double> calibrate_weights(const Report& measured) {
    if (measured.ranks.empty()) throw Error("report", "has no ranks to calibrate from");
    std::vector<double> rates;
    rates.reserve(measured.ranks.size());
    double total = 0;
    for (std::size_t i = 0; i < measured.ranks.size(); ++i) {
        const RankReport& r = measured.ranks[i];
        if (r.slabs_updated == 0)
            throw Error("report", fmt::format("rank {} updated no slabs: cannot derive its speed", r.rank));
        if (!std::isfinite(r.busy_seconds) || !(r.busy_seconds > 0))
            throw Error("report", fmt::format("rank {} has no busy time (busy_seconds = {})", r.rank, r.busy_seconds));
        rates.push_back(static_cast<double>(r.slabs_updated) / r.busy_seconds);
        total += rates.back();
    }
    const double scale = static_cast<double>(rates.size()) / total;
    for (double& w : rates) w *= scale;
    return rates;
}

}  // namespace numaware::stencil
