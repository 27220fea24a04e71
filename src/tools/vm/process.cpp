// tools/vm/process.cpp — spawn, wait with a timeout, small file helpers.
#include "tools/vm/process.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include <fmt/format.h>

#include "numaware/error.hpp"

extern char** environ;

namespace numaware::vm {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
    return std::chrono::duration<double>(Clock::now() - start).count();
}

int decode_status(int wstatus) {
    if (WIFEXITED(wstatus)) return WEXITSTATUS(wstatus);
    if (WIFSIGNALED(wstatus)) return 128 + WTERMSIG(wstatus);
    return 255;
}

enum class Waited { exited, deadline, given_up };

// Polls rather than blocking in waitpid so the timeout needs no signals or
// threads; 20 ms is far below QEMU's boot time.
Waited wait_until(pid_t pid, int& wstatus, Clock::time_point deadline, bool has_deadline,
                  const std::function<bool(double)>& give_up = {}, Clock::time_point start = {}) {
    for (;;) {
        const pid_t r = waitpid(pid, &wstatus, WNOHANG);
        if (r == pid) return Waited::exited;
        if (r < 0 && errno != EINTR) throw Error("waitpid", std::strerror(errno), errno);
        if (has_deadline && Clock::now() >= deadline) return Waited::deadline;
        if (give_up && give_up(seconds_since(start))) return Waited::given_up;
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
}

}  // namespace

ProcessResult run_process(const std::vector<std::string>& argv, const std::string& stdout_path,
                          const std::string& stderr_path, std::optional<double> timeout_seconds,
                          const std::vector<std::string>& env, const std::function<bool(double)>& give_up) {
    if (argv.empty()) throw Error("command", "is empty");
    // Resolve before fork: the child may only make async-signal-safe calls.
    const std::string program = find_in_path(argv[0]);
    if (program.empty()) throw Error(argv[0], "cannot start: not found in PATH", ENOENT);
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    const std::vector<std::string> env_strings = environment_with(env);
    std::vector<char*> envp;
    for (const auto& e : env_strings) envp.push_back(const_cast<char*>(e.c_str()));
    envp.push_back(nullptr);

    const auto start = Clock::now();
    const pid_t parent = getpid();
    const pid_t pid = fork();
    if (pid < 0) throw Error(argv[0], fmt::format("cannot start: {}", std::strerror(errno)), errno);
    if (pid == 0) {
        // If numaware dies (ctest timeout, Ctrl-C, SIGKILL), QEMU dies with
        // it instead of running on unattended.
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != parent) _exit(127);
        const int in = open("/dev/null", O_RDONLY);
        if (in >= 0) dup2(in, 0);
        if (!stdout_path.empty()) {
            const int fd = open(stdout_path.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
            if (fd < 0) _exit(127);
            dup2(fd, 1);
        }
        if (!stderr_path.empty()) {
            const int fd = open(stderr_path.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
            if (fd < 0) _exit(127);
            dup2(fd, 2);
        }
        execve(program.c_str(), args.data(), envp.data());
        _exit(127);
    }

    ProcessResult result;
    int wstatus = 0;
    const bool limited = timeout_seconds.has_value();
    const auto deadline = start + std::chrono::duration_cast<Clock::duration>(
                                      std::chrono::duration<double>(timeout_seconds.value_or(0)));
    const Waited waited = wait_until(pid, wstatus, deadline, limited, give_up, start);
    if (waited != Waited::exited) {
        result.timed_out = waited == Waited::deadline;
        result.given_up = waited == Waited::given_up;
        kill(pid, SIGTERM);
        if (wait_until(pid, wstatus, Clock::now() + std::chrono::seconds(3), true) != Waited::exited) {
            kill(pid, SIGKILL);
            wait_until(pid, wstatus, Clock::now(), false);
        }
    }
    result.status = decode_status(wstatus);
    result.seconds = seconds_since(start);
    return result;
}

std::vector<std::string> environment_with(const std::vector<std::string>& assignments) {
    std::vector<std::string> env = assignments;
    const auto assigned = [&](const char* entry) {
        for (const std::string& a : assignments) {
            const std::size_t eq = a.find('=');
            if (eq != std::string::npos && std::strncmp(entry, a.c_str(), eq + 1) == 0) return true;
        }
        return false;
    };
    for (char** e = environ; *e != nullptr; ++e)
        if (!assigned(*e)) env.emplace_back(*e);
    return env;
}

std::string find_in_path(const std::string& name) {
    if (name.find('/') != std::string::npos) return access(name.c_str(), X_OK) == 0 ? name : "";
    const char* path = std::getenv("PATH");
    std::stringstream dirs(path ? path : "/usr/local/bin:/usr/bin:/bin");
    std::string dir;
    while (std::getline(dirs, dir, ':')) {
        if (dir.empty()) continue;
        const std::string candidate = dir + "/" + name;
        struct stat st {};
        if (stat(candidate.c_str(), &st) == 0 && S_ISREG(st.st_mode) && access(candidate.c_str(), X_OK) == 0)
            return candidate;
    }
    return "";
}

TempDir::TempDir(const std::string& prefix) {
    const char* tmpdir = std::getenv("TMPDIR");
    std::string pattern = std::string(tmpdir && *tmpdir ? tmpdir : "/tmp") + "/" + prefix + ".XXXXXX";
    if (mkdtemp(pattern.data()) == nullptr)
        throw Error(pattern, fmt::format("cannot create a temporary directory: {}", std::strerror(errno)), errno);
    path_ = pattern;
}

TempDir::~TempDir() {
    std::error_code ec;   // a destructor must not throw; a leftover in /tmp is harmless
    std::filesystem::remove_all(path_, ec);
}

std::string read_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw Error(path, fmt::format("cannot read: {}", std::strerror(errno)), errno ? errno : EIO);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

void write_file(const std::string& path, const std::string& data) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    if (!out) throw Error(path, fmt::format("cannot write: {}", std::strerror(errno)), errno ? errno : EIO);
    out.write(data.data(), static_cast<std::streamsize>(data.size()));
    if (!out) throw Error(path, "write failed", EIO);
}

}  // namespace numaware::vm
