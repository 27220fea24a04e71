// tools/cli/self_path.hpp — where the running `numaware` executable is
// (/proc/self/exe): the files it ships with (the Python package, the OpenMP
// drop-in) are found relative to it, so no absolute path is compiled in.
#pragma once

#include <filesystem>
#include <string>

namespace numaware::cli {

// The executable's own path. Throws Error(field, ...) naming `hint` (what
// to set instead) when /proc/self/exe cannot be read.
std::filesystem::path self_executable(const std::string& field, const std::string& hint);

}  // namespace numaware::cli
