// tools/omp/settings.cpp — the OpenMP environment variables (OpenMP 5.2,
// chapter 21), NUMAWARE_POLICY, NUMAWARE_RIP_WINDOW and NUMAWARE_REPORT, parsed
// (settings.hpp).
#include "tools/omp/settings.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <climits>
#include <iterator>
#include <limits>
#include <type_traits>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "numaware/error.hpp"
#include "numaware/task_policy.hpp"
#include "util/text.hpp"

namespace numaware::omp {

namespace {

std::string lower(std::string_view s) {
    std::string out(s);
    for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return out;
}

// NUMAWARE_TASK_THROTTLE's largest value: 2^24 unfinished tasks per
// thread (with numaware's task records of about 0.5 KiB, 8 GiB a thread).
constexpr unsigned max_task_throttle = 1u << 24;

// A non-negative decimal integer that fills `s` (after trimming).
template <class T>
bool whole_number(std::string_view s, T& out) {
    s = trim(s);
    if (s.empty()) return false;
    T v{};
    const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc{} || end != s.data() + s.size()) return false;
    out = v;
    return true;
}

// "n", "n:len" or "n:len:stride" inside a place's braces.
// The most CPU entries OMP_PLACES may give in all (places x CPUs, copies
// counted): 16 times the most CPUs Linux can be built for (NR_CPUS, up to
// 8,192 with x86's MAXSMP). More is not a machine but a typo, such as
// "{0}:4000000000", which would otherwise fill memory.
constexpr std::size_t max_place_cpus = std::size_t{1} << 17;

// A CPU number computed from a place's start and stride: in [0, UINT_MAX].
bool cpu_number(long cpu, unsigned& out) {
    if (cpu < 0 || cpu > static_cast<long>(std::numeric_limits<unsigned>::max())) return false;
    out = static_cast<unsigned>(cpu);
    return true;
}

bool place_items(std::string_view body, std::vector<unsigned>& cpus) {
    for (std::string_view item : split(body, ',')) {
        const std::vector<std::string_view> f = split(item, ':');
        unsigned first = 0, len = 1;
        long stride = 1;
        if (f.size() > 3 || !whole_number(f[0], first)) return false;
        if (f.size() >= 2 && (!whole_number(f[1], len) || len == 0)) return false;
        if (f.size() == 3) {
            std::string_view st = trim(f[2]);
            const bool negative = !st.empty() && st.front() == '-';
            unsigned magnitude = 0;
            if (!whole_number(negative ? st.substr(1) : st, magnitude)) return false;
            stride = negative ? -static_cast<long>(magnitude) : static_cast<long>(magnitude);
        }
        if (len > max_place_cpus - cpus.size()) return false;
        for (unsigned i = 0; i < len; ++i) {
            unsigned cpu = 0;
            if (!cpu_number(static_cast<long>(first) + stride * static_cast<long>(i), cpu)) return false;
            cpus.push_back(cpu);
        }
    }
    return !cpus.empty();
}

}  // namespace

bool parse_num_threads(std::string_view text, unsigned& first, std::vector<unsigned>& nested) {
    std::vector<unsigned> values;
    for (std::string_view part : split(text, ',')) {
        unsigned v = 0;
        if (!whole_number(part, v) || v == 0) return false;
        values.push_back(v);
    }
    first = values.front();
    nested.assign(values.begin() + 1, values.end());
    return true;
}

bool parse_proc_bind(std::string_view text, Bind& out, std::vector<Bind>& nested) {
    // A list gives one policy per nesting level: the first the outermost
    // region's, the last every level beyond the list.
    std::vector<Bind> values;
    for (std::string_view part : split(text, ',')) {
        const std::string v = lower(trim(part));
        Bind b;
        if (v == "false") b = Bind::false_;
        else if (v == "true") b = Bind::true_;
        else if (v == "primary" || v == "master") b = Bind::primary;
        else if (v == "close") b = Bind::close;
        else if (v == "spread") b = Bind::spread;
        else return false;
        if (!values.empty() && (b == Bind::false_ || b == Bind::true_ || values.front() == Bind::false_ ||
                                values.front() == Bind::true_))
            return false;   // false and true are only valid alone
        values.push_back(b);
    }
    if (values.empty()) return false;
    out = values.front();
    nested.assign(values.begin() + 1, values.end());
    return true;
}

bool parse_places(std::string_view text, Places& out) {
    const std::string_view t = trim(text);
    if (t.empty()) return false;
    if (t.front() != '{') {
        // An abstract name, optionally with a count of places: "cores(4)".
        std::string name = lower(t);
        const std::size_t paren = name.find('(');
        unsigned count = 0;
        if (paren != std::string::npos) {
            if (name.back() != ')' || !whole_number(std::string_view(name).substr(paren + 1, name.size() - paren - 2), count) ||
                count == 0)
                return false;
            name.resize(paren);
        }
        name = std::string(trim(name));
        Places p;
        p.count = count;
        if (name == "threads") p.kind = PlaceKind::threads;
        else if (name == "cores") p.kind = PlaceKind::cores;
        else if (name == "ll_caches") p.kind = PlaceKind::ll_caches;
        else if (name == "sockets") p.kind = PlaceKind::sockets;
        else if (name == "numa_domains") p.kind = PlaceKind::numa_domains;
        else return false;
        out = p;
        return true;
    }
    // An explicit list: "{0,1},{2:2}" or "{0:4}:4:4" (a place, then how many
    // copies and the CPU stride between them).
    Places p;
    p.kind = PlaceKind::explicit_list;
    std::string_view rest = t;
    std::size_t listed = 0;   // CPU entries so far, copies counted
    while (!rest.empty()) {
        if (rest.front() != '{') return false;
        const std::size_t close = rest.find('}');
        if (close == std::string_view::npos) return false;
        std::vector<unsigned> cpus;
        if (!place_items(rest.substr(1, close - 1), cpus)) return false;
        rest.remove_prefix(close + 1);
        unsigned copies = 1;
        long stride = static_cast<long>(cpus.size());
        if (!rest.empty() && rest.front() == ':') {
            const std::size_t end = std::min(rest.find(",{"), rest.size());
            const std::vector<std::string_view> f = split(rest.substr(1, end - 1), ':');
            if (f.size() > 2 || !whole_number(f[0], copies) || copies == 0) return false;
            if (f.size() == 2) {
                unsigned s = 0;
                if (!whole_number(f[1], s)) return false;
                stride = s;
            }
            rest.remove_prefix(end);
        }
        listed += cpus.size();
        if (copies > max_place_cpus || listed * copies > max_place_cpus) return false;
        listed += cpus.size() * (copies - 1);
        for (unsigned c = 0; c < copies; ++c) {
            std::vector<unsigned> place;
            for (unsigned cpu : cpus) {
                unsigned moved = 0;
                if (!cpu_number(static_cast<long>(cpu) + stride * static_cast<long>(c), moved)) return false;
                place.push_back(moved);
            }
            p.sets.push_back(std::move(place));
        }
        if (!rest.empty()) {
            if (rest.front() != ',') return false;
            rest.remove_prefix(1);
            rest = trim(rest);
            if (rest.empty()) return false;   // a trailing comma
        }
    }
    out = std::move(p);
    return true;
}

bool parse_stack_size(std::string_view text, std::size_t& out) {
    std::string_view t = trim(text);
    std::size_t unit = 1024;   // no suffix: kilobytes, as the standard says
    if (!t.empty() && std::isalpha(static_cast<unsigned char>(t.back()))) {
        switch (std::tolower(static_cast<unsigned char>(t.back()))) {
            case 'b': unit = 1; break;
            case 'k': unit = std::size_t{1} << 10; break;
            case 'm': unit = std::size_t{1} << 20; break;
            case 'g': unit = std::size_t{1} << 30; break;
            default: return false;
        }
        t.remove_suffix(1);
    }
    std::size_t v = 0;
    if (!whole_number(t, v) || v == 0 || v > std::numeric_limits<std::size_t>::max() / unit) return false;
    out = v * unit;
    return true;
}

bool parse_spin_count(std::string_view text, std::uint64_t& out) {
    std::string_view t = trim(text);
    const std::string word = lower(std::string(t));
    if (word == "infinite" || word == "infinity") {
        out = std::numeric_limits<std::uint64_t>::max();
        return true;
    }
    std::uint64_t unit = 1;
    if (!t.empty() && std::isalpha(static_cast<unsigned char>(t.back()))) {
        switch (std::tolower(static_cast<unsigned char>(t.back()))) {
            case 'k': unit = 1000; break;
            case 'm': unit = 1000'000; break;
            case 'g': unit = 1000'000'000; break;
            case 't': unit = 1000'000'000'000; break;
            default: return false;
        }
        t.remove_suffix(1);
    }
    t = trim(t);
    if (t.empty() || t.find_first_not_of("0123456789") != std::string_view::npos) return false;
    std::uint64_t v = 0;
    const auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
    constexpr std::uint64_t most = std::numeric_limits<std::uint64_t>::max();
    if (ec == std::errc::result_out_of_range || (ec == std::errc{} && v > most / unit)) {
        out = most;   // beyond any wait: as INFINITE
        return true;
    }
    if (ec != std::errc{} || end != t.data() + t.size()) return false;
    out = v * unit;
    return true;
}

std::uint64_t spin_count(const Settings& s) {
    if (s.spin_count_set) return *s.spin_count_set;
    switch (s.wait_policy) {
        case Settings::Wait::active: return 30'000'000'000;   // libgomp's (its manual: GOMP_SPINCOUNT)
        case Settings::Wait::passive: return 0;
        case Settings::Wait::unset: break;
    }
    return 2000;
}

unsigned dynamic_threads(unsigned cpus, unsigned nthreads_var, double load15) {
    const unsigned usable = std::min(cpus, nthreads_var);
    const double busy = load15 + 0.1;
    if (!(busy >= 0)) return std::max(usable, 1u);   // NaN or negative: no load known
    if (busy >= usable) return 1;
    return usable - static_cast<unsigned>(busy);
}

bool parse_cpu_affinity(std::string_view text, Places& out) {
    Places p;
    p.kind = PlaceKind::explicit_list;
    std::size_t at = 0;
    const auto separator = [](char c) { return c == ' ' || c == ',' || c == '\t' || c == '\n'; };
    while (at < text.size()) {
        if (separator(text[at])) {
            ++at;
            continue;
        }
        std::size_t end = at;
        while (end < text.size() && !separator(text[end])) ++end;
        const std::string_view item = text.substr(at, end - at);
        at = end;
        // "M", "M-N" or "M-N:S".
        const std::size_t dash = item.find('-');
        const std::size_t colon = item.find(':');
        unsigned first = 0, last = 0, stride = 1;
        if (dash == std::string_view::npos) {
            if (colon != std::string_view::npos || !whole_number(item, first)) return false;
            last = first;
        } else {
            if (!whole_number(item.substr(0, dash), first)) return false;
            const std::string_view rest = item.substr(dash + 1, colon == std::string_view::npos ? std::string_view::npos : colon - dash - 1);
            if (!whole_number(rest, last) || last < first) return false;
            if (colon != std::string_view::npos && (colon < dash || !whole_number(item.substr(colon + 1), stride) || stride == 0))
                return false;
        }
        for (unsigned long cpu = first; cpu <= last; cpu += stride) {
            if (p.sets.size() >= max_place_cpus) return false;
            p.sets.push_back({static_cast<unsigned>(cpu)});
        }
    }
    if (p.sets.empty()) return false;
    out = std::move(p);
    return true;
}

bool parse_schedule(std::string_view text, Schedule& out) {
    std::string_view t = trim(text);
    Schedule s;
    int modifier = 0;   // 1 monotonic, -1 nonmonotonic, 0 none
    const std::size_t colon = t.find(':');
    if (colon != std::string_view::npos) {
        const std::string mod = lower(trim(t.substr(0, colon)));
        if (mod == "monotonic") modifier = 1;
        else if (mod == "nonmonotonic") modifier = -1;
        else return false;
        t.remove_prefix(colon + 1);
    }
    const std::size_t comma = t.find(',');
    const std::string kind = lower(trim(t.substr(0, comma)));
    if (kind == "static") s.kind = Sched::static_;
    else if (kind == "dynamic") s.kind = Sched::dynamic;
    else if (kind == "guided") s.kind = Sched::guided;
    else if (kind == "auto") s.kind = Sched::auto_;
    else return false;
    // As libgomp reads it: static is monotonic unless said otherwise; a
    // chunk of 0 is the kind's default; auto keeps a chunk it does not use.
    s.monotonic = modifier == 1 || (modifier == 0 && s.kind == Sched::static_);
    long chunk = 0;
    if (comma != std::string_view::npos && (!whole_number(t.substr(comma + 1), chunk) || chunk < 0)) return false;
    s.chunk = chunk == 0 && s.kind != Sched::static_ ? 1 : chunk;
    out = s;
    return true;
}

Settings read_settings(const GetEnv& getenv, const Warn& warn) {
    Settings s;
    const auto invalid = [&](const char* name, const char* value, std::string_view expected) {
        warn(fmt::format("numaware-omp: invalid value for environment variable {}: '{}' (expected {}); "
                         "the default is used",
                         name, value, expected));
    };
    if (const char* v = getenv("OMP_NUM_THREADS"))
        if (!parse_num_threads(v, s.num_threads, s.nested_threads))
            invalid("OMP_NUM_THREADS", v, "a list of positive integers");
    if (const char* v = getenv("OMP_PROC_BIND")) {
        if (parse_proc_bind(v, s.bind, s.nested_binds)) s.bind_set = true;
        else invalid("OMP_PROC_BIND", v, "false, true, or a list of primary, close, spread");
    }
    if (const char* v = getenv("OMP_PLACES")) {
        if (parse_places(v, s.places)) s.places_set = true;
        else invalid("OMP_PLACES", v, "threads, cores, ll_caches, sockets, numa_domains (each optionally with a "
                                      "count, e.g. cores(4)) or a list of {CPU,...} places");
    }
    // libgomp's own variables, read as libgomp reads them: GOMP_CPU_AFFINITY
    // gives the places when OMP_PLACES gives none and OMP_PROC_BIND is not
    // false; GOMP_STACKSIZE the stack size when OMP_STACKSIZE gives none.
    if (const char* v = getenv("GOMP_CPU_AFFINITY"); v != nullptr && !s.places_set && !(s.bind_set && s.bind == Bind::false_)) {
        if (parse_cpu_affinity(v, s.places)) s.places_set = true;
        else invalid("GOMP_CPU_AFFINITY", v, "CPUs N, ranges M-N and strided ranges M-N:S, separated by spaces or commas");
    }
    if (!s.bind_set && !s.places_set) {
        s.bind = Bind::false_;
        s.pin_pool_threads = true;
    }
    bool stack_set = false;
    if (const char* v = getenv("OMP_STACKSIZE")) {
        if (parse_stack_size(v, s.stack_bytes)) stack_set = true;
        else invalid("OMP_STACKSIZE", v, "a positive size with B, K, M or G");
    }
    if (const char* v = getenv("GOMP_STACKSIZE"); v != nullptr && !stack_set)
        if (!parse_stack_size(v, s.stack_bytes)) invalid("GOMP_STACKSIZE", v, "a positive size with B, K, M or G");
    if (const char* v = getenv("OMP_SCHEDULE"))
        if (!parse_schedule(v, s.schedule))
            invalid("OMP_SCHEDULE", v, "[monotonic:|nonmonotonic:]static|dynamic|guided|auto[,CHUNK]");
    // A true/false variable: `out` set for true, kept for false, warned about otherwise.
    const auto boolean = [&](const char* name, bool& out) {
        const char* v = getenv(name);
        if (v == nullptr) return;
        const std::string d = lower(trim(v));
        if (d == "true") out = true;
        else if (d != "false") invalid(name, v, "true or false");
    };
    boolean("OMP_DYNAMIC", s.dynamic);
    // A whole-number variable: `out` set when it is at least `lowest` (0 or
    // 1) and at most INT_MAX, warned about otherwise.
    const auto number = [&](const char* name, unsigned lowest, auto& out) {
        const char* v = getenv(name);
        if (v == nullptr) return;
        unsigned n = 0;
        if (whole_number(std::string_view(v), n) && n >= lowest && n <= static_cast<unsigned>(INT_MAX))
            out = static_cast<std::remove_reference_t<decltype(out)>>(n);
        else invalid(name, v, lowest == 0 ? "a non-negative integer" : "a positive integer");
    };
    // Lists of more than one level ask for nested teams.
    if (!s.nested_threads.empty() || !s.nested_binds.empty()) s.max_active_levels = supported_active_levels;
    if (const char* v = getenv("OMP_NESTED")) {
        const std::string d = lower(trim(v));
        if (d == "true") s.max_active_levels = supported_active_levels;
        else if (d == "false") s.max_active_levels = 1;
        else invalid("OMP_NESTED", v, "true or false");
    }
    if (const char* v = getenv("OMP_MAX_ACTIVE_LEVELS")) {
        unsigned levels = 0;
        if (whole_number(std::string_view(v), levels)) s.max_active_levels = std::min(levels, supported_active_levels);
        else invalid("OMP_MAX_ACTIVE_LEVELS", v, "a non-negative integer");
    }
    number("OMP_THREAD_LIMIT", 1, s.thread_limit);
    number("OMP_NUM_TEAMS", 1, s.num_teams);
    number("OMP_TEAMS_THREAD_LIMIT", 1, s.teams_thread_limit);
    number("OMP_MAX_TASK_PRIORITY", 0, s.max_task_priority);
    number("OMP_DEFAULT_DEVICE", 0, s.default_device);
    if (const char* v = getenv("OMP_WAIT_POLICY")) {
        const std::string d = lower(trim(v));
        if (d == "active") s.wait_policy = Settings::Wait::active;
        else if (d == "passive") s.wait_policy = Settings::Wait::passive;
        else invalid("OMP_WAIT_POLICY", v, "active or passive");
    }
    if (const char* v = getenv("GOMP_SPINCOUNT")) {
        std::uint64_t n = 0;
        if (parse_spin_count(v, n)) s.spin_count_set = n;
        else invalid("GOMP_SPINCOUNT", v, "INFINITE, INFINITY or a non-negative count, optionally with k, M, G or T");
    }
    boolean("OMP_CANCELLATION", s.cancellation);
    if (const char* v = getenv("OMP_AFFINITY_FORMAT")) s.affinity_format = v;
    boolean("OMP_DISPLAY_AFFINITY", s.display_affinity);
    if (const char* v = getenv("OMP_DISPLAY_ENV")) {
        const std::string d = lower(trim(v));
        if (d == "true") s.display_env = Settings::Display::yes;
        else if (d == "verbose") s.display_env = Settings::Display::verbose;
        else if (d != "false") invalid("OMP_DISPLAY_ENV", v, "true, false or verbose");
    }
    if (const char* v = getenv("OMP_ALLOCATOR")) {
        static constexpr const char* names[] = {"omp_default_mem_alloc", "omp_large_cap_mem_alloc",
                                                "omp_const_mem_alloc",   "omp_high_bw_mem_alloc",
                                                "omp_low_lat_mem_alloc", "omp_cgroup_mem_alloc",
                                                "omp_pteam_mem_alloc",   "omp_thread_mem_alloc"};
        const std::string d = lower(trim(v));
        const auto* it = std::find(std::begin(names), std::end(names), d);
        if (it != std::end(names)) s.default_allocator = static_cast<std::uintptr_t>(it - std::begin(names)) + 1;
        else invalid("OMP_ALLOCATOR", v, "a predefined allocator, omp_default_mem_alloc to omp_thread_mem_alloc");
    }
    if (const char* v = getenv("NUMAWARE_POLICY")) {
        const std::string p = lower(trim(v));
        tasks::check_policy_name(p, "NUMAWARE_POLICY");
        s.policy = p;
    }
    // numaware's own variable: a bad value is an error, not a warning.
    if (const char* v = getenv("NUMAWARE_RIP_WINDOW")) {
        unsigned window = 0;
        if (!whole_number(std::string_view(v), window) || window == 0)
            throw Error("NUMAWARE_RIP_WINDOW", fmt::format("'{}' is not a positive integer (tasks per RIP-DEP and "
                                                           "RIP-MW partition window, default 256)",
                                                           v));
        s.rip_window = window;
    }
    if (const char* v = getenv("NUMAWARE_TASK_THROTTLE")) {
        unsigned per_thread = 0;
        if (!whole_number(std::string_view(v), per_thread) || per_thread > max_task_throttle)
            throw Error("NUMAWARE_TASK_THROTTLE",
                        fmt::format("'{}' is not an integer from 0 to {} (unfinished tasks per thread beyond which "
                                    "a task without depend runs at once; 0: never; default 64)",
                                    v, max_task_throttle));
        s.task_throttle = per_thread;
    }
    if (const char* v = getenv("NUMAWARE_REPORT")) {
        if (trim(v).empty())
            throw Error("NUMAWARE_REPORT", "is empty; give the file the run report is written to");
        s.report_path = v;
    }
    return s;
}

}  // namespace numaware::omp
