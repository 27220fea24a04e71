// sim/models.cpp — the named machine models of the published studies.
//
// Each model is written as a synthetic machine description (nodes=,
// cpus-per-node=, mem-per-node=, distances=, latency=, bandwidth=) built
// from the figures below, parsed by Machine::from_synthetic and timed by
// the rules of timed(). Every figure is either taken from a public source
// named in the model's `source` (and in docs/SIMULATOR.md) or marked there
// as an assumption. The SLIT of each model is round(10 × latency / local).
//
// Conventions used by every model (assumptions, stated once):
//   - sustained memory bandwidth = 0.75 × the theoretical peak of the
//     memory channels (no per-platform STREAM figure was used);
//   - a QPI/UPI link moves 2 bytes per transfer in each direction
//     (9.6 GT/s -> 19.2 GB/s per direction);
//   - link_gbps of a node pair is the narrowest link on its path; a link
//     that several node pairs share is a TimedMachine::SharedLink.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "numaware/error.hpp"
#include "numaware/sim.hpp"
#include "util/text.hpp"

namespace numaware::sim {

namespace {

// Shortest text that parses back to exactly `v`.
std::string exact(double v) {
    char buf[64];
    auto [ptr, ec] = std::to_chars(buf, buf + sizeof buf, v);
    (void)ec;
    return std::string(buf, ptr);
}

// "a,b,c/d,e,f" from f(r, c) for an n x n matrix.
std::string matrix(std::size_t n, const std::function<std::string(std::size_t, std::size_t)>& f) {
    std::string out;
    for (std::size_t r = 0; r < n; ++r) {
        if (r) out += "/";
        for (std::size_t c = 0; c < n; ++c) {
            if (c) out += ",";
            out += f(r, c);
        }
    }
    return out;
}

// A model described by latency and bandwidth functions of node positions.
// latency(r, h) is in ns; bandwidth(r, h) in GB/s (diagonal = memory, 0 =
// leave it to the rules); the SLIT is derived from the latencies.
struct Shape {
    std::size_t nodes = 0;
    unsigned cpus_per_node = 1;
    std::string mem_per_node = "16G";
    std::function<double(std::size_t, std::size_t)> latency;
    std::function<double(std::size_t, std::size_t)> bandwidth;   // may be empty
    bool give_latency = true;   // false: latencies only shape the SLIT; timed() derives them
};

std::string describe(const Shape& s) {
    const auto slit = [&](std::size_t r, std::size_t c) {
        const double ratio = s.latency(r, c) / s.latency(c, c);
        return std::to_string(static_cast<unsigned>(std::lround(10.0 * ratio)));
    };
    std::string d = "nodes=" + std::to_string(s.nodes) + " cpus-per-node=" + std::to_string(s.cpus_per_node) +
                    " mem-per-node=" + s.mem_per_node + " distances=" + matrix(s.nodes, slit);
    if (s.give_latency)
        d += " latency=" + matrix(s.nodes, [&](std::size_t r, std::size_t c) { return exact(s.latency(r, c)); });
    if (s.bandwidth)
        d += " bandwidth=" + matrix(s.nodes, [&](std::size_t r, std::size_t c) { return exact(s.bandwidth(r, c)); });
    return d;
}

TimedMachine build(const Shape& shape, const std::string& name, const std::string& source,
                   const TimingDefaults& defaults) {
    Machine m = Machine::from_synthetic(describe(shape));
    m.name = name;
    TimedMachine t = timed(m, defaults);
    t.name = name;
    t.source = source;
    return t;
}

constexpr double sustained_fraction = 0.75;   // assumption, see the file comment

// ---------------------------------------------------------------------
// bullion-s16: 16 × Xeon E7 v3 (Haswell-EX, 18 cores), 4 modules of 4
// sockets joined by BCS2 node controllers.
TimedMachine bullion_s16(unsigned sockets) {
    if (sockets == 0) sockets = 16;
    if (sockets != 4 && sockets != 8 && sockets != 16)
        throw Error("sockets", "bullion-s16 has 4, 8 or 16 sockets, got " + std::to_string(sockets));
    // The one public bullion latency found: a BCS2 access across modules
    // ("2 hops") takes 250 ns. Read as the inter-module latency (local ×
    // 3.60), it gives local = 250 / 3.60 ns.
    const double local = 250.0 / 3.60;
    // Performance mode: each of the 4 SMI links runs a Jordan Creek 2 buffer
    // with two DDR4-1600 channels: 4 × 2 × 1.6 GT/s × 8 B = 102.4 GB/s peak.
    const double memory = 4 * 2 * 1.6 * 8 * sustained_fraction;
    const double qpi = 9.6 * 2;    // GB/s per direction, one QPI link at 9.6 GT/s
    const double xqpi = 14.0 * 2;  // GB/s per direction, one XQPI link at 14 GT/s
    const auto module = [](std::size_t s) { return s / 4; };
    Shape shape;
    shape.nodes = sockets;
    shape.cpus_per_node = 18;
    shape.mem_per_node = "64G";
    shape.latency = [=](std::size_t r, std::size_t h) {
        if (r == h) return local;
        return module(r) == module(h) ? local * 1.79 : local * 3.60;
    };
    shape.bandwidth = [=](std::size_t r, std::size_t h) {
        if (r == h) return memory;
        return module(r) == module(h) ? qpi : std::min(qpi, xqpi);
    };
    const std::string source =
        "Bull bullion S16 as in the published study: 16 sockets × 18 cores (Xeon E7 v3), 4 modules of 4 sockets. "
        "Latency ratios from the study: QPI hop within a module +79% (× 1.79), inter-module hop through the BCS2 "
        "node controllers +260% (× 3.60). Local latency derived, not measured: 250 ns / 3.60 = 69.4 ns, reading the "
        "BCS2 figure '2 hops, 250 ns' (blog post 'x86 4+ sockets systems, CPU interconnect, and why Bull', Oct. "
        "2017) as the inter-module access. Memory: 4 SMI links × 2 DDR4-1600 channels × 8 B = 102.4 GB/s peak per "
        "socket in performance mode (AnandTech, 'The Xeon E7-8800 v3 Review' and its Xeon E7 v2 review), × 0.75 "
        "sustained (assumption) = 76.8 GB/s. Links: QPI 9.6 GT/s = 19.2 GB/s per direction (assumption for the "
        "E7 v3 SKU; GT/s to GB/s as in Intel's forum thread 'How to saturate the QPI link'); XQPI 14 GT/s = 28 GB/s "
        "per direction (same 2017 blog post); an inter-module path is limited by its QPI hop, 19.2 GB/s, and "
        "every path from one module to another also crosses the one XQPI link between the two, which all 16 "
        "socket pairs of the two modules share. Memory per socket 64 GiB: assumption.";
    TimedMachine t = build(shape, "bullion-s16 (" + std::to_string(sockets) + " sockets)", source, {local, memory});
    const std::size_t modules = sockets / 4;
    for (std::size_t from = 0; from < modules; ++from)
        for (std::size_t to = 0; to < modules; ++to) {
            if (from == to) continue;
            TimedMachine::SharedLink l;
            l.name = "XQPI module " + std::to_string(from) + " -> module " + std::to_string(to);
            l.gbps = xqpi;
            for (std::size_t h = from * 4; h < from * 4 + 4; ++h)
                for (std::size_t r = to * 4; r < to * 4 + 4; ++r) l.paths.emplace_back(r, h);
            t.shared_links.push_back(std::move(l));
        }
    if (!t.shared_links.empty())
        t.rules.push_back("shared links: " + std::to_string(t.shared_links.size()) +
                          " XQPI links, one per ordered pair of modules, each shared by 16 socket pairs");
    t.validate();
    return t;
}

// ---------------------------------------------------------------------
// altix-uv100: 12 × Xeon X7560 (Nehalem-EX, 8 cores), 2 sockets per blade,
// 2 blades per IRU (rack unit), 3 IRUs joined in a chain by NUMAlink 5.
TimedMachine altix_uv100(unsigned sockets) {
    if (sockets == 0) sockets = 12;
    if (sockets < 2 || sockets > 12 || sockets % 2 != 0)
        throw Error("sockets", "altix-uv100 has 2, 4, 6, 8, 10 or 12 sockets (whole blades), got " +
                                   std::to_string(sockets));
    const double local = 160.0;   // Xeon X7560 memory latency, AnandTech Xeon 7500 / Dell R810 review
    const double memory = 4 * 6.4 * sustained_fraction;   // 4 SMI × 6.4 GB/s = 25.6 GB/s peak
    const double qpi_pair = 2 * 12.8;   // two 6.4 GT/s QPI links between the sockets of a blade
    const double numalink = 15.0 / 2;   // NUMAlink 5: 15 GB/s bidirectional
    const auto blade = [](std::size_t s) { return s / 2; };
    const auto iru = [](std::size_t s) { return s / 4; };
    Shape shape;
    shape.nodes = sockets;
    shape.cpus_per_node = 8;
    shape.mem_per_node = "64G";
    shape.latency = [=](std::size_t r, std::size_t h) {
        if (r == h) return local;
        if (blade(r) == blade(h)) return local * 1.17;
        const std::size_t hops = iru(r) > iru(h) ? iru(r) - iru(h) : iru(h) - iru(r);
        return hops <= 1 ? local * 3.00 : local * 3.40;
    };
    shape.bandwidth = [=](std::size_t r, std::size_t h) {
        if (r == h) return memory;
        return blade(r) == blade(h) ? qpi_pair : numalink;
    };
    const std::string source =
        "SGI Altix UV 100 as in the published study: 12 sockets × 8 cores (Xeon X7560), 2 sockets per blade. "
        "Latency ratios from the study: same blade +17%, other rack unit +200%, farthest +240%. Mapping "
        "(assumption): blades 2 per IRU ('individual rack unit', SGI Altix UV 100 System User's Guide, ch. 3), the "
        "3 IRUs in a chain; one NUMAlink hop (other blade of the same IRU, or a blade of an adjacent IRU) is +200%, "
        "two hops (first and last IRU) is +240%. Local latency 160 ns: Xeon X7560 memory latency measured by "
        "AnandTech ('Xeon 7500 / Dell R810' review). Memory: 4 SMI links × 6.4 GB/s = 25.6 GB/s peak per socket "
        "(same review), × 0.75 sustained (assumption) = 19.2 GB/s. Same blade: two QPI links at 6.4 GT/s, 12.8 GB/s "
        "per direction each (blade layout: EuroBen 'Altix UV' report; QPI rate: qdpma.com 'Intel QPI') = 25.6 GB/s. "
        "Other blade: NUMAlink 5, 15 GB/s bidirectional (SGI user's guide) = 7.5 GB/s per direction. Memory per "
        "socket 64 GiB: assumption.";
    return build(shape, "altix-uv100 (" + std::to_string(sockets) + " sockets)", source, {local, memory});
}

// ---------------------------------------------------------------------
// sim-4socket: the 4-socket "simulated" system of the published study.
TimedMachine sim_4socket(unsigned sockets) {
    if (sockets == 0) sockets = 4;
    if (sockets != 2 && sockets != 4)
        throw Error("sockets", "sim-4socket has 2 or 4 sockets, got " + std::to_string(sockets));
    const auto pair = [](std::size_t s) { return s / 2; };
    Shape shape;
    shape.nodes = sockets;
    shape.cpus_per_node = 8;
    shape.mem_per_node = "16G";
    shape.latency = [=](std::size_t r, std::size_t h) {
        if (r == h) return 80.0;
        return pair(r) == pair(h) ? 160.0 : 240.0;
    };
    // No bandwidth matrix: memory is the stated 20 GB/s per socket and the
    // links follow the SLIT rule (10 GB/s near, 6.67 GB/s far).
    const std::string source =
        "The 4-socket 'simulated' system of the published study: 80 ns local, 160 ns near (sockets 0-1 and 2-3), "
        "240 ns far. Assumptions: 8 cores and 16 GiB per socket; memory bandwidth 20 GB/s per socket; link "
        "bandwidth by the SLIT rule (memory × 10 / SLIT: 10 GB/s near, 6.67 GB/s far).";
    return build(shape, "sim-4socket (" + std::to_string(sockets) + " sockets)", source, {80.0, 20.0});
}

// ---------------------------------------------------------------------
// skylake-sp-2s: 2 × Xeon Platinum 8180 (Skylake-SP, 28 cores).
TimedMachine skylake_sp_2s(unsigned sockets) {
    if (sockets == 0) sockets = 2;
    if (sockets != 1 && sockets != 2)
        throw Error("sockets", "skylake-sp-2s has 1 or 2 sockets, got " + std::to_string(sockets));
    const double remote = 154.0;   // lat_mem_rd, socket 0 reading socket 1 memory, 2 × Platinum 8180
    const double local = remote - 60.0;
    const double memory = 6 * 2.666 * 8 * sustained_fraction;   // 6 × DDR4-2666 = 127.97 GB/s peak
    const double upi = 3 * 10.4 * 2;                            // 3 UPI links at 10.4 GT/s
    Shape shape;
    shape.nodes = sockets;
    shape.cpus_per_node = 28;
    shape.mem_per_node = "96G";
    shape.latency = [=](std::size_t r, std::size_t h) { return r == h ? local : remote; };
    shape.bandwidth = [=](std::size_t r, std::size_t h) { return r == h ? memory : upi; };
    const std::string source =
        "2-socket Skylake-SP (Xeon Platinum 8180, 28 cores). Remote latency 154 ns: lat_mem_rd across sockets on 2 "
        "× Platinum 8180 (Intel Community forum, 'An interesting issue when testing inter-socket latency on skylake "
        "processor'); local = remote - 60 ns (the study's remote ≈ local + 60 ns) = 94 ns. Memory: 6 channels of "
        "DDR4-2666 (Kingston, 'Intel Xeon Scalable Platform (Purley) Server Microarchitecture') = 127.97 GB/s peak, × "
        "0.75 sustained (assumption) = 95.98 GB/s. Link: 3 UPI links at 10.4 GT/s (amcomputers.org, 'Intel Xeon "
        "Skylake-SP ufficiali fino a 28 core'), 2 B per transfer (assumption) = 62.4 GB/s per direction. Memory "
        "per socket 96 GiB: assumption.";
    return build(shape, "skylake-sp-2s (" + std::to_string(sockets) + " sockets)", source, {local, memory});
}

// ---------------------------------------------------------------------
// sandybridge-ep-4s: 4 × Xeon E5-4650 (Sandy Bridge-EP, 8 cores) joined in
// a ring of QPI links: each E5-4600 has two, so a socket reaches two others
// directly and the opposite one in two hops.
TimedMachine sandybridge_ep_4s(unsigned sockets) {
    if (sockets == 0) sockets = 4;
    if (sockets != 2 && sockets != 4)
        throw Error("sockets", "sandybridge-ep-4s has 2 or 4 sockets, got " + std::to_string(sockets));
    const double local = 80.0, per_hop = 80.0;   // the published 4-socket evaluation: 80 / 160 / 240 ns
    const double memory = 4 * 1.6 * 8 * sustained_fraction;   // 4 × DDR3-1600 = 51.2 GB/s peak
    const double qpi = 8.0 * 2;                                // one QPI link at 8 GT/s, per direction
    const auto hops = [=](std::size_t r, std::size_t h) {
        const std::size_t d = r > h ? r - h : h - r;
        return std::min(d, sockets - d);
    };
    Shape shape;
    shape.nodes = sockets;
    shape.cpus_per_node = 8;
    shape.mem_per_node = "64G";
    shape.latency = [=](std::size_t r, std::size_t h) { return local + per_hop * static_cast<double>(hops(r, h)); };
    shape.bandwidth = [=](std::size_t r, std::size_t h) { return r == h ? memory : qpi; };
    const std::string source =
        "4-socket Sandy Bridge-EP (Xeon E5-4650: 8 cores, 2.7 GHz, 20 MB L3, 4 DDR3-1600 channels, two QPI links at "
        "8 GT/s; Intel ARK). Topology: the two QPI links of each socket join the four sockets in a ring, the "
        "opposite socket two hops away (Intel, 'Memory Latencies on Intel Xeon Processor E5-4600 and E7-4800 "
        "product families', 2014). Latency: 80 ns local and 80 ns more per hop (160 ns neighbour, 240 ns "
        "opposite): the published NASP evaluation's 4-socket figures, assumed to hold per QPI hop on this ring (no "
        "public E5-4600 latency matrix was found). Memory: 51.2 GB/s peak per socket, × 0.75 sustained "
        "(assumption) = 38.4 GB/s. Links: 16 GB/s per direction per QPI link (2 B per transfer, assumption); a "
        "two-hop path is routed through the next socket up (assumption: the firmware's routing is not public) and "
        "shares both links with the one-hop paths that use them. Memory per socket 64 GiB: assumption.";
    TimedMachine t = build(shape, "sandybridge-ep-4s (" + std::to_string(sockets) + " sockets)", source, {local, memory});
    if (sockets == 4) {
        // Each directed ring link a -> a±1 and the (reader, home) paths whose
        // data crosses it: home h to reader r in one hop, or through h + 1.
        for (std::size_t a = 0; a < sockets; ++a)
            for (const std::size_t b : {(a + 1) % sockets, (a + sockets - 1) % sockets}) {
                TimedMachine::SharedLink l;
                l.name = "QPI socket " + std::to_string(a) + " -> socket " + std::to_string(b);
                l.gbps = qpi;
                for (std::size_t h = 0; h < sockets; ++h)
                    for (std::size_t r = 0; r < sockets; ++r) {
                        if (hops(r, h) == 1 && h == a && r == b) l.paths.emplace_back(r, h);
                        const std::size_t via = (h + 1) % sockets;
                        if (hops(r, h) == 2 && ((h == a && via == b) || (via == a && r == b))) l.paths.emplace_back(r, h);
                    }
                if (l.paths.size() > 1) t.shared_links.push_back(std::move(l));
            }
        t.rules.push_back("shared links: " + std::to_string(t.shared_links.size()) +
                          " directed QPI links of the ring, each carrying its one-hop path and the two-hop paths "
                          "routed over it");
    }
    t.validate();
    return t;
}

// ---------------------------------------------------------------------
// epyc-nps4-2s: 2 × AMD EPYC 7002 (Rome) in NPS4: 4 nodes per socket.
TimedMachine epyc_nps4_2s(unsigned sockets) {
    if (sockets == 0) sockets = 2;
    if (sockets != 1 && sockets != 2)
        throw Error("sockets", "epyc-nps4-2s has 1 or 2 sockets, got " + std::to_string(sockets));
    const double local = 113.0;   // AnandTech Rome review, NPS4, 128 MB full random
    const double memory = 2 * 3.2 * 8 * sustained_fraction;   // 2 DDR4-3200 channels per quadrant
    const auto socket = [](std::size_t node) { return node / 4; };
    Shape shape;
    shape.nodes = 4 * sockets;
    shape.cpus_per_node = 16;
    shape.mem_per_node = "32G";
    // SLIT 10 / 12 / 32; timed() derives the latencies from it.
    shape.latency = [=](std::size_t r, std::size_t h) {
        if (r == h) return 1.0;
        return socket(r) == socket(h) ? 1.2 : 3.2;
    };
    shape.give_latency = false;
    // Only the diagonal is given; the links follow the SLIT rule.
    shape.bandwidth = [=](std::size_t r, std::size_t h) { return r == h ? memory : 0.0; };
    const std::string source =
        "2-socket AMD EPYC 7002 (Rome) in NPS4: 4 NUMA nodes (quadrants) per socket, 8 nodes; 16 cores per node "
        "(assumption: a 64-core part). Local latency 113 ns: AnandTech, 'AMD Rome Second Generation EPYC Review' "
        "(NPS4, 128 MB full random). SLIT 10 same node / 12 other quadrant / 32 other socket: the distances Linux "
        "commonly reports for this mode (assumption; no public table was found), so latencies follow the SLIT rule: "
        "135.6 ns other quadrant, 361.6 ns other socket (likely pessimistic for the other socket). Memory: 8 DDR4-3200 "
        "channels per socket (Dell, 'NUMA Configuration settings on AMD EPYC 2nd Generation'), 2 per quadrant = "
        "51.2 GB/s peak, × 0.75 sustained (assumption) = 38.4 GB/s per node. Links: the SLIT rule (32 GB/s other "
        "quadrant, 12 GB/s other socket): assumption, no per-path figure used. Memory per node 32 GiB: assumption.";
    return build(shape, "epyc-nps4-2s (" + std::to_string(sockets) + " sockets)", source, {local, memory});
}

struct Entry {
    const char* name;
    TimedMachine (*make)(unsigned);
};

const Entry named_models[] = {
    {"bullion-s16", bullion_s16},     {"altix-uv100", altix_uv100},   {"sim-4socket", sim_4socket},
    {"skylake-sp-2s", skylake_sp_2s}, {"epyc-nps4-2s", epyc_nps4_2s}, {"sandybridge-ep-4s", sandybridge_ep_4s},
};

const Entry* find(std::string_view name) {
    for (const Entry& e : named_models)
        if (name == e.name) return &e;
    return nullptr;
}

std::string names_joined() {
    std::string out;
    for (const Entry& e : named_models) {
        if (!out.empty()) out += ", ";
        out += e.name;
    }
    return out;
}

}  // namespace

std::vector<std::string> model_names() {
    std::vector<std::string> out;
    for (const Entry& e : named_models) out.emplace_back(e.name);
    return out;
}

TimedMachine model(std::string_view name, unsigned sockets) {
    const Entry* e = find(name);
    if (!e) throw Error("machine", "unknown model '" + std::string(name) + "'; models: " + names_joined());
    return e->make(sockets);
}

TimedMachine timed_from_spec(std::string_view spec, const TimingDefaults& defaults) {
    const auto colon = spec.find(':');
    const std::string_view head = spec.substr(0, colon);
    if (find(head)) {
        unsigned sockets = 0;
        if (colon != std::string_view::npos) {
            const std::string_view count = spec.substr(colon + 1);
            const auto [ptr, ec] = std::from_chars(count.data(), count.data() + count.size(), sockets);
            if (count.empty() || ec != std::errc() || ptr != count.data() + count.size() || sockets == 0)
                throw Error("sockets", "'" + std::string(count) + "' in '" + std::string(spec) +
                                           "' is not a positive socket count");
        }
        return model(head, sockets);
    }
    // Not a model, and no description either (Machine::from_spec's forms:
    // 'live', '@file', .xml and .json files, hwloc's syntax after 'hwloc:'
    // and key=value words): a word alone, most likely a model's name
    // misspelt.
    const std::string_view word = trim(spec);
    if (!word.empty() && word != "live" && !word.starts_with('@') && !word.starts_with("hwloc:") &&
        !word.ends_with(".xml") && !word.ends_with(".json") && word.find('=') == std::string_view::npos)
        throw Error("machine", "'" + std::string(word) + "' is not a named model (models: " + names_joined() +
                                   "), 'live', a .xml or .json file, '@file', 'hwloc:' and hwloc's synthetic syntax, "
                                   "or key=value words");
    TimedMachine t = timed(Machine::from_spec(spec), defaults);
    t.name = std::string(spec);
    t.source = "machine description '" + std::string(spec) +
               "'; figures it does not give are derived by the rules listed in `rules`";
    return t;
}

}  // namespace numaware::sim
