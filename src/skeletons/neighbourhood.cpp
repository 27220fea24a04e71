// skeletons/neighbourhood.cpp — stencil neighbourhoods: checked offset
// lists, the star and box shapes of any radius, and their names
// (5/9/7/27-point, star:D:R, box:D:R). Pure.
#include <algorithm>
#include <charconv>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "numaware/error.hpp"
#include "numaware/stencil.hpp"
#include "skeletons/geometry.hpp"

namespace numaware::stencil {

using detail::kMaxOffset;

namespace {

unsigned magnitude(int v) { return static_cast<unsigned>(v < 0 ? -v : v); }

std::string offset_text(const Offset& o, unsigned dims) {
    return dims == 3 ? fmt::format("({},{},{})", o.dx, o.dy, o.dz) : fmt::format("({},{})", o.dx, o.dy);
}

bool parse_unsigned(std::string_view text, unsigned& out) {
    if (text.empty()) return false;
    const char* end = text.data() + text.size();
    auto [ptr, ec] = std::from_chars(text.data(), end, out);
    return ec == std::errc{} && ptr == end;
}

}  // namespace

Neighbourhood::Neighbourhood(unsigned dims, std::vector<Offset> offsets, std::string name)
    : dims_(dims), offsets_(std::move(offsets)), name_(std::move(name)) {
    if (dims_ != 2 && dims_ != 3)
        throw Error("neighbourhood", fmt::format("dims must be 2 or 3, got {}", dims_));
    if (offsets_.empty()) throw Error("neighbourhood", "needs at least one offset, got none");
    constexpr int kSide = 2 * kMaxOffset + 1;
    std::vector<bool> seen(static_cast<std::size_t>(kSide * kSide * kSide), false);
    for (const Offset& o : offsets_) {
        if (magnitude(o.dx) > kMaxOffset || magnitude(o.dy) > kMaxOffset || magnitude(o.dz) > kMaxOffset)
            throw Error("neighbourhood", fmt::format("offset {} is farther than {} cells along an axis",
                                                     offset_text(o, 3), kMaxOffset));
        if (dims_ == 2 && o.dz != 0)
            throw Error("neighbourhood",
                        fmt::format("offset {} has dz != 0 in a 2-D neighbourhood", offset_text(o, 3)));
        const auto key = static_cast<std::size_t>(((o.dz + kMaxOffset) * kSide + (o.dy + kMaxOffset)) * kSide +
                                                  (o.dx + kMaxOffset));
        if (seen[key])
            throw Error("neighbourhood", fmt::format("offset {} is listed twice", offset_text(o, dims_)));
        seen[key] = true;
        rx_ = std::max(rx_, magnitude(o.dx));
        ry_ = std::max(ry_, magnitude(o.dy));
        rz_ = std::max(rz_, magnitude(o.dz));
    }
}

namespace {
// The offsets of the cube of `radius` around a cell (a square in 2-D) in
// memory order (z, then y, then x), keeping those that `keep` accepts;
// star and box differ only in that choice.
template <class Keep>
std::vector<Offset> cube_offsets(unsigned dims, unsigned radius, Keep keep) {
    if (dims != 2 && dims != 3) throw Error("neighbourhood", fmt::format("dims must be 2 or 3, got {}", dims));
    if (radius < 1 || radius > static_cast<unsigned>(kMaxOffset))
        throw Error("neighbourhood", fmt::format("radius must be 1..{}, got {}", kMaxOffset, radius));
    const int r = static_cast<int>(radius);
    const int zr = dims == 3 ? r : 0;
    std::vector<Offset> offsets;
    for (int dz = -zr; dz <= zr; ++dz)
        for (int dy = -r; dy <= r; ++dy)
            for (int dx = -r; dx <= r; ++dx)
                if (keep(dx, dy, dz)) offsets.push_back({dx, dy, dz});
    return offsets;
}
}  // namespace

Neighbourhood Neighbourhood::star(unsigned dims, unsigned radius) {
    auto offsets = cube_offsets(dims, radius, [](int dx, int dy, int dz) { return (dx != 0) + (dy != 0) + (dz != 0) <= 1; });
    std::string name = radius == 1 ? (dims == 2 ? "5-point" : "7-point") : fmt::format("star:{}:{}", dims, radius);
    return Neighbourhood(dims, std::move(offsets), std::move(name));
}

Neighbourhood Neighbourhood::box(unsigned dims, unsigned radius) {
    auto offsets = cube_offsets(dims, radius, [](int, int, int) { return true; });
    std::string name = radius == 1 ? (dims == 2 ? "9-point" : "27-point") : fmt::format("box:{}:{}", dims, radius);
    return Neighbourhood(dims, std::move(offsets), std::move(name));
}

Neighbourhood Neighbourhood::parse(std::string_view text, std::string_view field) {
    const std::string f(field);
    if (text == "5-point") return star(2, 1);
    if (text == "7-point") return star(3, 1);
    if (text == "9-point") return box(2, 1);
    if (text == "27-point") return box(3, 1);
    const auto refuse = [&]() {
        return Error(f, fmt::format("'{}' is not a neighbourhood; accepted: 5-point, 9-point, 7-point, 27-point, "
                                    "star:D:R, box:D:R (D = 2 or 3, R = 1..{})",
                                    text, kMaxOffset));
    };
    const bool is_star = text.starts_with("star:");
    const bool is_box = text.starts_with("box:");
    if (!is_star && !is_box) throw refuse();
    const std::string_view rest = text.substr(is_star ? 5 : 4);
    const std::size_t colon = rest.find(':');
    if (colon == std::string_view::npos) throw refuse();
    unsigned dims = 0;
    unsigned radius = 0;
    if (!parse_unsigned(rest.substr(0, colon), dims) || !parse_unsigned(rest.substr(colon + 1), radius))
        throw refuse();
    if ((dims != 2 && dims != 3) || radius < 1 || radius > static_cast<unsigned>(kMaxOffset)) throw refuse();
    return is_star ? star(dims, radius) : box(dims, radius);
}

unsigned Neighbourhood::radius() const { return std::max({rx_, ry_, rz_}); }

}  // namespace numaware::stencil
