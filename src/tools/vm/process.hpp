// tools/vm/process.hpp — running host helper programs (QEMU, xz) for `vm`.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace numaware::vm {

struct ProcessResult {
    int status = 0;          // exit code, or 128 + signal number
    bool timed_out = false;  // killed because the timeout passed
    double seconds = 0;      // wall time
};

// Runs argv (argv[0] looked up in PATH) with stdin from /dev/null and
// stdout/stderr appended to the given files ("" = inherit). With a timeout,
// the child gets SIGTERM when it passes and SIGKILL 3 s later. Throws Error
// naming argv[0] when it cannot be started. The child is killed if this
// process dies, so no QEMU outlives the numaware that started it.
ProcessResult run_process(const std::vector<std::string>& argv, const std::string& stdout_path,
                          const std::string& stderr_path, std::optional<double> timeout_seconds = {});

// Full path of an executable found in PATH, or "" when there is none.
std::string find_in_path(const std::string& name);

std::string read_file(const std::string& path);    // throws Error naming path
void write_file(const std::string& path, const std::string& data);   // throws Error naming path

}  // namespace numaware::vm
