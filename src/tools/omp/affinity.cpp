// tools/omp/affinity.cpp — place lists and the affinity format (affinity.hpp).
#include "tools/omp/affinity.hpp"

#include <algorithm>
#include <array>
#include <map>

namespace numaware::omp {

namespace {

bool allowed_cpu(const std::vector<unsigned>& allowed, unsigned cpu) {
    return allowed.empty() || std::binary_search(allowed.begin(), allowed.end(), cpu);
}

std::vector<unsigned> only_allowed(std::vector<unsigned> cpus, const std::vector<unsigned>& allowed) {
    std::erase_if(cpus, [&](unsigned c) { return !allowed_cpu(allowed, c); });
    std::sort(cpus.begin(), cpus.end());
    cpus.erase(std::unique(cpus.begin(), cpus.end()), cpus.end());
    return cpus;
}

// The machine's CPUs in node order, each node's ascending.
std::vector<unsigned> machine_cpus(const Machine& m) {
    std::vector<unsigned> cpus;
    for (const Node& n : m.nodes) cpus.insert(cpus.end(), n.cpus.begin(), n.cpus.end());
    return cpus;
}

struct Field {
    char letter;
    std::string_view name;
};
constexpr std::array<Field, 10> fields{{{'t', "team_num"},
                                         {'T', "num_teams"},
                                         {'L', "nesting_level"},
                                         {'n', "thread_num"},
                                         {'N', "num_threads"},
                                         {'a', "ancestor_tnum"},
                                         {'H', "host"},
                                         {'P', "process_id"},
                                         {'i', "native_thread_id"},
                                         {'A', "thread_affinity"}}};

std::string field_value(char letter, const AffinityFields& f) {
    switch (letter) {
    case 't': return std::to_string(f.team_num);
    case 'T': return std::to_string(f.num_teams);
    case 'L': return std::to_string(f.level);
    case 'n': return std::to_string(f.thread_num);
    case 'N': return std::to_string(f.num_threads);
    case 'a': return std::to_string(f.ancestor_thread_num);
    case 'H': return f.host;
    case 'P': return std::to_string(f.process_id);
    case 'i': return std::to_string(f.native_thread_id);
    default: return f.affinity;   // 'A'
    }
}

}  // namespace

std::vector<unsigned> allowed_cpus(const Machine& machine, const std::vector<unsigned>& allowed) {
    return only_allowed(machine_cpus(machine), allowed);
}

PlaceList usable_listed_places(const Places& places, const std::vector<unsigned>& allowed) {
    PlaceList list;
    for (const auto& set : places.sets)
        if (std::vector<unsigned> cpus = only_allowed(set, allowed); !cpus.empty()) list.push_back(std::move(cpus));
    return list;
}

PlaceList place_list(const Machine& machine, const std::vector<unsigned>& allowed, const Places& places) {
    PlaceList list;
    const auto add = [&](std::vector<unsigned> cpus) {
        cpus = only_allowed(std::move(cpus), allowed);
        if (!cpus.empty() && std::find(list.begin(), list.end(), cpus) == list.end()) list.push_back(std::move(cpus));
    };
    switch (places.kind) {
    case PlaceKind::threads:
        for (unsigned c : machine_cpus(machine)) add({c});
        break;
    case PlaceKind::cores: {
        // Node by node, as the CPUs are listed: each CPU's core once.
        const std::vector<std::vector<unsigned>> cores = machine.cores();
        std::map<unsigned, std::size_t> core_of;
        for (std::size_t k = 0; k < cores.size(); ++k)
            for (unsigned c : cores[k]) core_of[c] = k;
        for (unsigned c : machine_cpus(machine)) add(cores[core_of.at(c)]);
        break;
    }
    case PlaceKind::ll_caches:
        // The CPUs that share the CPU's last-level cache (its highest
        // data or unified level); without caches in the model, its node's.
        for (const Node& n : machine.nodes)
            for (unsigned c : n.cpus) {
                const Cache* last = nullptr;
                for (const Cache& k : machine.caches)
                    if (k.type != "instruction" && (last == nullptr || k.level > last->level) &&
                        std::find(k.cpus.begin(), k.cpus.end(), c) != k.cpus.end())
                        last = &k;
                add(last != nullptr ? last->cpus : n.cpus);
            }
        break;
    case PlaceKind::sockets:
    case PlaceKind::numa_domains:
        for (const Node& n : machine.nodes) add(n.cpus);
        break;
    case PlaceKind::explicit_list:
        for (const auto& set : places.sets) add(set);
        break;
    }
    // "cores(4)": the first places, as libgomp takes them.
    if (places.kind != PlaceKind::explicit_list && places.count != 0 && list.size() > places.count)
        list.resize(places.count);
    return list;
}

int place_of(const PlaceList& list, const std::vector<unsigned>& cpus) {
    if (cpus.empty()) return -1;
    for (std::size_t p = 0; p < list.size(); ++p)
        if (std::all_of(cpus.begin(), cpus.end(), [&](unsigned c) {
                return std::binary_search(list[p].begin(), list[p].end(), c);
            }))
            return static_cast<int>(p);
    return -1;
}

std::string format_affinity(std::string_view format, const AffinityFields& f) {
    std::string out;
    for (std::size_t i = 0; i < format.size();) {
        if (format[i] != '%') {
            out += format[i++];
            continue;
        }
        if (i + 1 < format.size() && format[i + 1] == '%') {
            out += '%';
            i += 2;
            continue;
        }
        // %[0][.][width](letter|{name})
        std::size_t k = i + 1;
        bool zero = false, right = false;
        if (k < format.size() && format[k] == '0') {
            zero = true;
            ++k;
        }
        if (k < format.size() && format[k] == '.') {
            right = true;
            ++k;
        }
        std::size_t width = 0;
        while (k < format.size() && format[k] >= '0' && format[k] <= '9' && width < 4096)
            width = width * 10 + static_cast<std::size_t>(format[k++] - '0');
        char letter = 0;
        std::size_t end = k;
        if (k < format.size() && format[k] == '{') {
            const std::size_t close = format.find('}', k);
            if (close != std::string_view::npos) {
                const std::string_view name = format.substr(k + 1, close - k - 1);
                for (const Field& fd : fields)
                    if (fd.name == name) letter = fd.letter;
                end = close + 1;
            }
        } else if (k < format.size()) {
            for (const Field& fd : fields)
                if (fd.letter == format[k]) letter = fd.letter;
            end = k + 1;
        }
        if (letter == 0) {   // not a field: as written
            out += format.substr(i, std::max(end, i + 1) - i);
            i = std::max(end, i + 1);
            continue;
        }
        std::string v = field_value(letter, f);
        if (v.size() < width) {
            const std::size_t pad = width - v.size();
            if (!right) v.append(pad, ' ');
            else if (zero && !v.empty() && v[0] == '-') v.insert(1, pad, '0');
            else v.insert(0, pad, zero ? '0' : ' ');
        }
        out += v;
        i = end;
    }
    return out;
}

}  // namespace numaware::omp
