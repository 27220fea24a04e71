// util/text.hpp — splitting and trimming the short texts that specs,
// environment variables and machine descriptions are written in
// (header-only, no dependencies).
#pragma once

#include <cctype>
#include <string>
#include <string_view>
#include <vector>

namespace numaware {

// The pieces of `text` between each `sep`, empty ones included: "a,,b"
// gives "a", "", "b"; "" gives one empty piece.
inline std::vector<std::string_view> split(std::string_view text, char sep) {
    std::vector<std::string_view> out;
    for (;;) {
        const std::size_t i = text.find(sep);
        out.push_back(text.substr(0, i));
        if (i == std::string_view::npos) return out;
        text.remove_prefix(i + 1);
    }
}

// `text` without leading and trailing white space.
inline std::string_view trim(std::string_view text) {
    while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front()))) text.remove_prefix(1);
    while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) text.remove_suffix(1);
    return text;
}

// `text` with every byte outside printable ASCII (0x20-0x7e) as '?': for
// names made from user input (a synthetic description, a file path) that
// must stay valid UTF-8 in JSON and printable in messages.
inline std::string printable_ascii(std::string_view text) {
    std::string out(text);
    for (char& c : out)
        if (c < 0x20 || c > 0x7e) c = '?';
    return out;
}

}  // namespace numaware
