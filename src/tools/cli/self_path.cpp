// tools/cli/self_path.cpp — the running executable's path (self_path.hpp).
#include "tools/cli/self_path.hpp"

#include <system_error>

#include <fmt/format.h>

#include "numaware/error.hpp"

namespace numaware::cli {

std::filesystem::path self_executable(const std::string& field, const std::string& hint) {
    std::error_code ec;
    std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", ec);
    if (ec)
        throw Error(field, hint.empty() ? fmt::format("cannot read /proc/self/exe: {}", ec.message())
                                        : fmt::format("cannot read /proc/self/exe ({}); {}", ec.message(), hint));
    return exe;
}

}  // namespace numaware::cli
