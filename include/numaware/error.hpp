// numaware/error.hpp — the one exception type of the C++ API.
//
// Every C++ entry point that rejects input or fails in the kernel throws
// numaware::Error. what() names the offending input and the limit; field()
// gives the input's name alone (e.g. "distances[1][0]") so tests and tools
// can check it; code() is the errno value the C API reports for the same
// failure (EINVAL for bad input, the kernel's errno for a failed call).
#pragma once

#include <cerrno>
#include <stdexcept>
#include <string>

namespace numaware {

class Error : public std::runtime_error {
public:
    Error(std::string field, const std::string& message, int code = EINVAL)
        : std::runtime_error(field.empty() ? message : field + ": " + message),
          field_(std::move(field)), code_(code) {}

    const std::string& field() const noexcept { return field_; }
    int code() const noexcept { return code_; }

private:
    std::string field_;
    int code_;
};

}  // namespace numaware
