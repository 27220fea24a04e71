// machine/size.cpp — memory sizes as people write them ("512M", "1.5G").
//
// Suffixes are binary (K = 1024), as in QEMU's and numactl's size options,
// so a spec that says 512M gives a guest node of exactly 512 MiB.
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>

#include "numaware/error.hpp"
#include "numaware/machine.hpp"

namespace numaware {

namespace {
constexpr const char* size_help = "expected a byte count with an optional K, M, G or T suffix, e.g. 512M or 1.5G";

// Returns the multiplier for a suffix, or 0 when it is not one.
std::uint64_t suffix_multiplier(std::string_view suffix) {
    std::string s;
    for (char c : suffix) s += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    // Accept the common spellings: "M", "MB", "MiB".
    if (s.size() == 3 && s[1] == 'I' && s[2] == 'B') s = s.substr(0, 1);
    else if (s.size() == 2 && s[1] == 'B') s = s.substr(0, 1);
    if (s.empty() || s == "B") return 1;
    if (s == "K") return 1ULL << 10;
    if (s == "M") return 1ULL << 20;
    if (s == "G") return 1ULL << 30;
    if (s == "T") return 1ULL << 40;
    return 0;
}
}  // namespace

std::uint64_t parse_size(std::string_view text, std::string_view field) {
    const std::string f(field);
    // Built with append: GCC 12 at -O3 reports a false -Wrestrict on the
    // operator+ chain of a literal and a temporary.
    std::string quoted = "'";
    quoted.append(text).append("'");
    std::size_t digits_end = 0;
    bool seen_dot = false;
    while (digits_end < text.size() &&
           (std::isdigit(static_cast<unsigned char>(text[digits_end])) || (text[digits_end] == '.' && !seen_dot))) {
        if (text[digits_end] == '.') seen_dot = true;
        ++digits_end;
    }
    const std::string_view number = text.substr(0, digits_end);
    const std::string_view suffix = text.substr(digits_end);
    if (number.empty() || number == ".")
        throw Error(f, quoted + " is not a size: " + size_help);
    const std::uint64_t multiplier = suffix_multiplier(suffix);
    if (multiplier == 0)
        throw Error(f, quoted + " has an unknown size suffix '" + std::string(suffix) + "': " + size_help);

    if (!seen_dot) {
        std::uint64_t value = 0;
        auto [ptr, ec] = std::from_chars(number.data(), number.data() + number.size(), value);
        if (ec != std::errc{} || ptr != number.data() + number.size() ||
            value > std::numeric_limits<std::uint64_t>::max() / multiplier)
            throw Error(f, quoted + " is too large (limit 2^64-1 bytes)");
        return value * multiplier;
    }
    // Fractions ("1.5G") must come out as a whole number of bytes. A number
    // beyond a double (found by the fuzzer: stod threw std::out_of_range)
    // is too large as well.
    double parsed = 0;
    const auto [end, ec] = std::from_chars(number.data(), number.data() + number.size(), parsed);
    if (ec == std::errc::result_out_of_range) throw Error(f, quoted + " is too large (limit 2^64-1 bytes)");
    if (ec != std::errc{} || end != number.data() + number.size()) throw Error(f, quoted + " is not a size: " + size_help);
    const double value = parsed * static_cast<double>(multiplier);
    if (!(value < 18446744073709551616.0))
        throw Error(f, quoted + " is too large (limit 2^64-1 bytes)");
    if (value != std::floor(value))
        throw Error(f, quoted + " is not a whole number of bytes");
    return static_cast<std::uint64_t>(value);
}

std::string format_size(std::uint64_t bytes) {
    // Largest binary unit that represents the size exactly, so parse_size
    // gives the same number back.
    static constexpr struct { std::uint64_t mult; char suffix; } units[] = {
        {1ULL << 40, 'T'}, {1ULL << 30, 'G'}, {1ULL << 20, 'M'}, {1ULL << 10, 'K'}};
    if (bytes != 0)
        for (const auto& u : units)
            if (bytes % u.mult == 0) return std::to_string(bytes / u.mult) + u.suffix;
    return std::to_string(bytes);
}

}  // namespace numaware
