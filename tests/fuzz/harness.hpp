// tests/fuzz/harness.hpp — what every parser harness shares.
//
// A parser may refuse its input only with numaware::Error (the one error
// type of the library, naming the bad field); any other exception escapes
// and libFuzzer reports it as a crash, as it does a sanitizer report.
#pragma once

#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "numaware/error.hpp"

namespace numaware::fuzz {

inline std::string_view text(const std::uint8_t* data, std::size_t size) {
    return {reinterpret_cast<const char*>(data), size};
}

// Runs f; a numaware::Error is a refusal (false), anything else escapes.
template <class F>
bool accepts(F&& f) {
    try {
        f();
        return true;
    } catch (const numaware::Error&) {
        return false;
    }
}

// An invariant the harness checks on an accepted input.
inline void require(bool ok) {
    if (!ok) std::abort();
}

// The input as a file the parser can open by path: an in-memory file
// (memfd), named through /proc/self/fd, closed when this goes.
class InputFile {
public:
    InputFile(const std::uint8_t* data, std::size_t size) : fd_(memfd_create("fuzz-input", 0)) {
        require(fd_ >= 0);
        for (std::size_t done = 0; done < size;) {
            const ssize_t n = ::write(fd_, data + done, size - done);
            require(n > 0);
            done += static_cast<std::size_t>(n);
        }
        path_ = "/proc/self/fd/" + std::to_string(fd_);
    }
    ~InputFile() { ::close(fd_); }
    InputFile(const InputFile&) = delete;
    InputFile& operator=(const InputFile&) = delete;
    const std::string& path() const { return path_; }

private:
    int fd_;
    std::string path_;
};

}  // namespace numaware::fuzz
