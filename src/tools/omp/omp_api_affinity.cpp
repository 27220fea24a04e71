// tools/omp/omp_api_affinity.cpp — the omp_* routines about places and
// affinity (OpenMP 5.0, 3.2.23-3.2.35), omp_display_env and
// omp_pause_resource, in C; omp_api_fortran.cpp has their Fortran twins.
// What they report comes from affinity.hpp (the place list, the format)
// and from the kernel (the calling thread's mask), so a query answers what
// the thread's binding is, not what was planned.
#include <omp.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <string>

#include <fmt/format.h>

#include "numaware/team.hpp"
#include "os/os.hpp"
#include "tools/omp/affinity.hpp"
#include "tools/omp/team.hpp"

namespace numaware::omp {

std::vector<unsigned> calling_thread_cpus() {
    std::vector<unsigned> c;
    if (os::linux_os().get_affinity(0, c) != 0) c.clear();
    std::sort(c.begin(), c.end());
    return c;
}

namespace {

// affinity-format-var: OMP_AFFINITY_FORMAT, then omp_set_affinity_format.
std::mutex g_format_mutex;
std::string& format_var() {
    static std::string f = settings().affinity_format.empty() ? std::string(default_affinity_format)
                                                                : settings().affinity_format;
    return f;
}

std::string current_format() {
    std::lock_guard g(g_format_mutex);
    return format_var();
}

// A place number from the program: its place, or null when out of range.
const std::vector<unsigned>* place_at(long p) {
    const PlaceList& list = team_places();
    if (p < 0 || static_cast<unsigned long>(p) >= list.size()) return nullptr;
    return &list[static_cast<std::size_t>(p)];
}

// `text` into a buffer of `size` bytes, NUL-terminated and cut if it must
// be; the full length.
std::size_t copy_out(const std::string& text, char* buffer, std::size_t size) {
    if (buffer != nullptr && size > 0) {
        const std::size_t n = std::min(text.size(), size - 1);
        std::memcpy(buffer, text.data(), n);
        buffer[n] = '\0';
    }
    return text.size();
}

const char* bind_name(int b) {
    switch (b) {
    case 0: return "FALSE";
    case 1: return "TRUE";
    case 2: return "PRIMARY";
    case 3: return "CLOSE";
    default: return "SPREAD";
    }
}

const char* sched_name(int k) {
    switch (k & 0x7fffffff) {
    case 1: return "STATIC";
    case 2: return "DYNAMIC";
    case 3: return "GUIDED";
    default: return "AUTO";
    }
}

std::string places_text(const PlaceList& list) {
    std::string s;
    for (const auto& p : list) s += fmt::format("{}{{{}}}", s.empty() ? "" : ",", format_cpu_list(p));
    return s;
}

}  // namespace

// Unbound threads (OMP_PROC_BIND=false) have no place list, as under
// libgomp: no places, every thread's place -1.
// An explicit list that names no CPU the process may use gives way to the
// default, threads, as the binding does (team.cpp, plan_places).
const PlaceList& team_places() {
    static const PlaceList list = [] {
        if (settings().bind == Bind::false_) return PlaceList{};
        PlaceList l = place_list(team_machine(), initial_cpus(), settings().places);
        if (l.empty() && settings().places.kind == PlaceKind::explicit_list)
            l = place_list(team_machine(), initial_cpus(), Places{});
        return l;
    }();
    return list;
}

std::string affinity_line(std::string_view format) {
    const ThreadState& st = thread_state();
    AffinityFields f;
    f.team_num = static_cast<int>(st.league_num);
    f.num_teams = static_cast<int>(st.league_size);
    f.level = static_cast<int>(st.level);
    f.thread_num = static_cast<int>(st.num);
    f.num_threads = st.team != nullptr ? static_cast<int>(st.team->size) : 1;
    f.ancestor_thread_num = st.level >= 2 ? static_cast<int>(st.ancestors[st.level - 2]) : (st.level == 1 ? 0 : -1);
    char host[256] = {};
    if (gethostname(host, sizeof host - 1) == 0) f.host = host;
    f.process_id = static_cast<long>(getpid());
    f.native_thread_id = static_cast<long>(syscall(SYS_gettid));
    f.affinity = format_cpu_list(calling_thread_cpus());
    return format_affinity(format, f);
}

void display_affinity_on_entry() {
    if (!settings().display_affinity) return;
    // Shown on a thread's first region and whenever what it shows changes.
    thread_local std::string last;
    const std::string line = affinity_line(current_format());
    if (line == last) return;
    last = line;
    std::fprintf(stderr, "%s\n", line.c_str());
}

std::string display_env_text(bool verbose) {
    const Settings& s = settings();
    std::string out = "OPENMP DISPLAY ENVIRONMENT BEGIN\n";
    const auto line = [&](std::string_view name, const std::string& value) {
        out += fmt::format("  {} = '{}'\n", name, value);
    };
    line("_OPENMP", "201511");
    line("OMP_DYNAMIC", omp_get_dynamic() ? "TRUE" : "FALSE");
    line("OMP_NESTED", omp_get_max_active_levels() > 1 ? "TRUE" : "FALSE");
    std::string threads = std::to_string(omp_get_max_threads());
    for (unsigned n : s.nested_threads) threads += fmt::format(",{}", n);
    line("OMP_NUM_THREADS", threads);
    omp_sched_t kind;
    int chunk = 0;
    omp_get_schedule(&kind, &chunk);
    // As libgomp shows it: MONOTONIC: for a monotonic kind other than
    // static, the chunk unless it is the kind's default, none for auto.
    const int k = static_cast<int>(kind) & 0x7fffffff;
    const bool monotonic = (static_cast<unsigned>(kind) & 0x80000000u) != 0 && k != 1;
    const bool show_chunk = k == 1 ? chunk != 0 : k != 4 && chunk != 1;
    line("OMP_SCHEDULE", fmt::format("{}{}{}", monotonic ? "MONOTONIC:" : "", sched_name(k),
                                     show_chunk ? fmt::format(",{}", chunk) : std::string()));
    std::string binds = bind_name(omp_get_proc_bind());
    for (Bind b : s.nested_binds) binds += fmt::format(",{}", bind_name(static_cast<int>(b)));
    line("OMP_PROC_BIND", binds);
    line("OMP_PLACES", places_text(team_places()));
    line("OMP_STACKSIZE", s.stack_bytes ? fmt::format("{}", s.stack_bytes) : "the system's default");
    line("OMP_WAIT_POLICY", s.wait_policy == Settings::Wait::active ? "ACTIVE" : "PASSIVE");
    line("OMP_THREAD_LIMIT", std::to_string(omp_get_thread_limit()));
    line("OMP_MAX_ACTIVE_LEVELS", std::to_string(omp_get_max_active_levels()));
    line("OMP_NUM_TEAMS", std::to_string(omp_get_max_teams()));
    line("OMP_TEAMS_THREAD_LIMIT", std::to_string(omp_get_teams_thread_limit()));
    line("OMP_CANCELLATION", s.cancellation ? "TRUE" : "FALSE");
    line("OMP_DEFAULT_DEVICE", std::to_string(omp_get_default_device()));
    line("OMP_MAX_TASK_PRIORITY", std::to_string(omp_get_max_task_priority()));
    line("OMP_DISPLAY_AFFINITY", s.display_affinity ? "TRUE" : "FALSE");
    line("OMP_AFFINITY_FORMAT", current_format());
    if (verbose) {
        line("GOMP_SPINCOUNT", std::to_string(spin_count(s)));
        line("NUMAWARE_POLICY", s.policy);
        line("NUMAWARE_RIP_WINDOW", std::to_string(s.rip_window));
        line("NUMAWARE_TASK_THROTTLE", std::to_string(s.task_throttle));
        line("NUMAWARE_REPORT", s.report_path);
    }
    out += "OPENMP DISPLAY ENVIRONMENT END\n";
    return out;
}

}  // namespace numaware::omp

using namespace numaware::omp;

#pragma GCC visibility push(default)   // the entry points: exports.map keeps only these
extern "C" {

int omp_get_num_places(void) { return static_cast<int>(team_places().size()); }

int omp_get_place_num_procs(int place) {
    const std::vector<unsigned>* p = place_at(place);
    return p != nullptr ? static_cast<int>(p->size()) : 0;
}

void omp_get_place_proc_ids(int place, int* ids) {
    const std::vector<unsigned>* p = place_at(place);
    if (p == nullptr || ids == nullptr) return;
    for (std::size_t i = 0; i < p->size(); ++i) ids[i] = static_cast<int>((*p)[i]);
}

int omp_get_place_num(void) { return place_of(team_places(), calling_thread_cpus()); }

// place-partition-var: every thread's is the whole list (numaware does not
// narrow it for `spread` as libgomp does; docs/OPENMP.md).
int omp_get_partition_num_places(void) { return omp_get_place_num() >= 0 ? omp_get_num_places() : 0; }

void omp_get_partition_place_nums(int* place_nums) {
    if (place_nums == nullptr) return;
    const int n = omp_get_partition_num_places();
    for (int i = 0; i < n; ++i) place_nums[i] = i;
}

void omp_set_affinity_format(const char* format) {
    std::lock_guard g(g_format_mutex);
    format_var() = format != nullptr ? format : "";
}

size_t omp_get_affinity_format(char* buffer, size_t size) { return copy_out(current_format(), buffer, size); }

void omp_display_affinity(const char* format) {
    const std::string line = affinity_line(format != nullptr && *format != '\0' ? std::string(format) : current_format());
    std::fprintf(stdout, "%s\n", line.c_str());
    std::fflush(stdout);
}

size_t omp_capture_affinity(char* buffer, size_t size, const char* format) {
    return copy_out(affinity_line(format != nullptr && *format != '\0' ? std::string(format) : current_format()),
                    buffer, size);
}

void omp_display_env(int verbose) {
    const std::string text = display_env_text(verbose != 0);
    std::fputs(text.c_str(), stderr);
}

// Soft and hard pauses end the calling initial thread's pool threads (a
// later region starts them again); refused (-1) inside a parallel region,
// for another device, or for an unknown kind.
int omp_pause_resource(omp_pause_resource_t kind, int device_num) {
    if (kind != omp_pause_soft && kind != omp_pause_hard) return -1;
    if (device_num != omp_get_initial_device()) return -1;
    return pause_pool() ? 0 : -1;
}

int omp_pause_resource_all(omp_pause_resource_t kind) { return omp_pause_resource(kind, omp_get_initial_device()); }

}  // extern "C"
#pragma GCC visibility pop
