// tools/vm/process.hpp — running host helper programs (QEMU, xz; valgrind and
// python3 for the CLI), temporary directories and small file helpers.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace numaware::vm {

struct ProcessResult {
    int status = 0;          // exit code, or 128 + signal number
    bool timed_out = false;  // killed because the timeout passed
    bool given_up = false;   // killed because `give_up` said so
    double seconds = 0;      // wall time
};

// Runs argv (argv[0] looked up in PATH) with stdin from /dev/null and
// stdout/stderr appended to the given files ("" = inherit). With a timeout,
// the child gets SIGTERM when it passes and SIGKILL 3 s later. `env` holds
// "NAME=VALUE" assignments added to (or replacing in) this process's
// environment for the child. Throws Error naming argv[0] when it cannot be
// started. The child is killed if this process dies, so no QEMU outlives
// the numaware that started it. `give_up`, when given, is asked with the
// seconds since the start on every poll (every 20 ms); when it says true,
// the child is killed as on a timeout and `given_up` is set instead.
ProcessResult run_process(const std::vector<std::string>& argv, const std::string& stdout_path,
                          const std::string& stderr_path, std::optional<double> timeout_seconds = {},
                          const std::vector<std::string>& env = {},
                          const std::function<bool(double)>& give_up = {});

// This process's environment with the "NAME=VALUE" assignments in front,
// each replacing any variable of its name: what a child is given.
std::vector<std::string> environment_with(const std::vector<std::string>& assignments);

// Full path of an executable found in PATH, or "" when there is none.
std::string find_in_path(const std::string& name);

// A fresh directory under $TMPDIR (else /tmp), named PREFIX.XXXXXX, removed
// with everything in it when this goes out of scope.
class TempDir {
public:
    explicit TempDir(const std::string& prefix);   // throws Error when it cannot be made
    ~TempDir();
    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;
    const std::string& path() const { return path_; }

private:
    std::string path_;
};

std::string read_file(const std::string& path);    // throws Error naming path
void write_file(const std::string& path, const std::string& data);   // throws Error naming path

}  // namespace numaware::vm
