// tools/cli/cmd_trace.cpp — `numaware trace record`: runs an unmodified
// program under Valgrind with numaware's tool (nwtrace, src/tools/tracer/)
// and writes its memory access trace, which `numaware sim memory --trace`
// replays. The format is in docs/SIMULATOR.md, "Trace files".
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include "numaware/error.hpp"
#include "sim/memory/trace_file.hpp"
#include "tools/cli/commands.hpp"
#include "tools/vm/process.hpp"

namespace numaware::cli {

namespace {

namespace mem = sim::memory;

struct TraceRecordOptions {
    std::string out;
    bool json = false;
    std::vector<std::string> command;   // the program and its arguments
};

// The VALGRIND_LIB directory holding the core's files and nwtrace.
std::string tracer_dir() {
    if (const char* env = std::getenv("NUMAWARE_VALGRIND_LIB"); env != nullptr && *env != '\0') return env;
    return NUMAWARE_TRACER_DIR;
}

bool is_file(const std::string& path) {
    struct stat st {};
    return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

// Runs argv with `env` added to the environment, stdin/stdout/stderr
// inherited; returns the exit status (128 + signal when killed).
int run_inherited(const std::string& program, const std::vector<std::string>& argv, const std::string& env) {
    std::vector<char*> args;
    for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    const std::vector<std::string> env_strings = vm::environment_with({env});
    std::vector<char*> envp;
    for (const std::string& e : env_strings) envp.push_back(const_cast<char*>(e.c_str()));
    envp.push_back(nullptr);
    std::fflush(stdout);
    std::fflush(stderr);
    const pid_t pid = ::fork();
    if (pid < 0) throw Error("trace", fmt::format("cannot start valgrind: {}", std::strerror(errno)), errno);
    if (pid == 0) {
        ::execve(program.c_str(), args.data(), envp.data());
        _exit(127);
    }
    int wstatus = 0;
    for (;;) {
        const pid_t r = ::waitpid(pid, &wstatus, 0);
        if (r == pid) break;
        if (r < 0 && errno != EINTR) throw Error("trace", fmt::format("waitpid: {}", std::strerror(errno)), errno);
    }
    if (WIFEXITED(wstatus)) return WEXITSTATUS(wstatus);
    if (WIFSIGNALED(wstatus)) return 128 + WTERMSIG(wstatus);
    return 255;
}

void trace_record(const TraceRecordOptions& o) {
    if (o.command.empty())
        throw Error("trace", "give the program to record: numaware trace record -o FILE -- PROGRAM [ARGS...]");
    if (o.out.find('%') != std::string::npos)
        throw Error("-o", fmt::format("'{}': the file name may not contain '%' (Valgrind expands it)", o.out));
    const std::string valgrind = vm::find_in_path("valgrind");
    if (valgrind.empty()) throw Error("trace", "valgrind is not installed (apt-get install valgrind)");
    const std::string dir = tracer_dir();
    const std::string tool = dir + "/" + NUMAWARE_TRACER_TOOL;
    if (!is_file(tool))
        throw Error("trace", fmt::format("the recorder {} is missing (build target numaware_tracer: cmake --build build "
                                         "--target numaware_tracer)",
                                         tool));
    // A failed recording must not leave an older trace behind to be read.
    if (::unlink(o.out.c_str()) != 0 && errno != ENOENT)
        throw Error("-o", fmt::format("cannot replace '{}': {}", o.out, std::strerror(errno)), errno);

    std::vector<std::string> argv{valgrind, "--tool=nwtrace", "-q", "--trace-children=no",
                                  "--nwtrace-out=" + o.out};
    argv.insert(argv.end(), o.command.begin(), o.command.end());
    const auto start = std::chrono::steady_clock::now();
    const int status = run_inherited(valgrind, argv, "VALGRIND_LIB=" + dir);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (status != 0) set_exit_status(status);

    mem::TraceInfo info;
    try {
        info = mem::inspect_trace(o.out, mem::TraceFormat::numaware);
    } catch (const Error& e) {
        if (status == 0) throw;
        // The program failed and left no complete trace: its status is the answer.
        struct stat st {};
        const bool wrote = ::stat(o.out.c_str(), &st) == 0;
        std::fprintf(stderr, "numaware: trace: '%s' exited with status %d and left %s\n", o.command[0].c_str(), status,
                     wrote ? fmt::format("an incomplete trace ({})", e.what()).c_str() : "no trace");
        return;
    }
    if (o.json) {
        nlohmann::json phases = nlohmann::json::array();
        for (const auto& ph : info.phases) phases.push_back({{"name", ph.name}, {"measured", ph.measured}});
        const nlohmann::json doc = {{"trace", info.path},         {"threads", info.threads},
                                    {"accesses", info.accesses},  {"instructions", info.instructions},
                                    {"bytes", info.file_bytes},   {"blocks", info.blocks},
                                    {"phases", phases},           {"record_s", seconds},
                                    {"status", status},           {"command", o.command},
                                    {"ended_at_exec", info.ended_at_exec}};
        fmt::print("{}\n", doc.dump());
        return;
    }
    fmt::print("numaware trace: {}: {} thread(s), {} accesses, {} instructions, {} bytes, {} phase(s); recorded in "
               "{:.2f} s, exit status {}{}\n",
               info.path, info.threads, info.accesses, info.instructions, info.file_bytes, info.phases.size(), seconds,
               status,
               info.ended_at_exec ? "; the trace ends where the program exec'd another (record the real binary, not a "
                                    "wrapper script)"
                                  : "");
}

}  // namespace

void add_trace_command(CLI::App& app) {
    CLI::App* trace = app.add_subcommand("trace", "Record the memory accesses of a real program (Valgrind tool nwtrace)");
    trace->require_subcommand(1);
    trace->footer(
        "Example: numaware trace record -o py.nwt -- python3 -c 'print(sum(range(1000)))' && "
        "numaware sim memory --trace py.nwt --preset thesis-4s");
    auto o = std::make_shared<TraceRecordOptions>();
    CLI::App* rec = trace->add_subcommand(
        "record", "Run PROGRAM under Valgrind with nwtrace and write its access trace to FILE, then print one line: "
                  "threads, accesses, instructions, bytes");
    rec->add_option("-o,--output", o->out, "The trace file to write")->required();
    rec->add_flag("--json", o->json, "Print the summary as one JSON line");
    // As `numaware run`: the program and its arguments; a "--" before the
    // program is needed when its arguments look like options.
    rec->add_option("command", o->command, "The program and its arguments (after --)");
    rec->footer(
        "Exits with the program's status. Record the program's real binary: the trace ends where the program execs "
        "another (a wrapper script). A program may mark phases (src/tools/tracer/numaware_trace.h).\nExample: numaware trace record -o py.nwt -- python3 -c 'print(sum(range(1000)))'\n"
        "         numaware sim memory --trace py.nwt --prefetch none,stride:8");
    rec->callback([o] { trace_record(*o); });
}

}  // namespace numaware::cli
