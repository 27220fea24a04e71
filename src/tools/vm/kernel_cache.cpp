// tools/vm/kernel_cache.cpp — locating cached guest kernels.
#include "tools/vm/kernel_cache.hpp"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <system_error>

#include <fmt/format.h>

#include "numaware/error.hpp"

namespace numaware::vm {
namespace fs = std::filesystem;
namespace {

const char* const fetch_hint = "run scripts/fetch-guest-kernel (it caches Debian's 6.1 and 6.12 kernels)";

bool is_file(const fs::path& p) {
    std::error_code ec;
    return fs::is_regular_file(p, ec);
}

// A cache entry is usable when it has an image and a module tree whose
// directory name is its release.
bool load_entry(const fs::path& dir, GuestKernel& out) {
    std::error_code ec;
    const fs::path image = dir / "vmlinuz";
    if (!is_file(image)) return false;
    const fs::path modules = dir / "lib" / "modules";
    if (!fs::is_directory(modules, ec)) return false;
    std::vector<std::string> releases;
    for (const auto& entry : fs::directory_iterator(modules, ec))
        if (entry.is_directory(ec)) releases.push_back(entry.path().filename().string());
    if (releases.size() != 1) return false;
    out.release = releases.front();
    out.image = image.string();
    const fs::path pvh = dir / "vmlinux";
    out.pvh_image = is_file(pvh) ? pvh.string() : std::string();
    out.modules_dir = (modules / releases.front()).string();
    return true;
}

std::string known_list(const std::vector<GuestKernel>& kernels) {
    if (kernels.empty()) return "none";
    std::string out;
    for (const auto& k : kernels) out += (out.empty() ? "" : ", ") + k.release;
    return out;
}

}  // namespace

std::string cache_root() {
    if (const char* v = std::getenv("NUMAWARE_CACHE"); v && *v) return v;
    if (const char* v = std::getenv("XDG_CACHE_HOME"); v && *v) return std::string(v) + "/numaware";
    if (const char* v = std::getenv("HOME"); v && *v) return std::string(v) + "/.cache/numaware";
    throw Error("NUMAWARE_CACHE", "is unset and so are XDG_CACHE_HOME and HOME; set one to locate guest kernels");
}

int compare_releases(const std::string& a, const std::string& b) {
    std::size_t i = 0, j = 0;
    while (i < a.size() && j < b.size()) {
        if (std::isdigit(static_cast<unsigned char>(a[i])) && std::isdigit(static_cast<unsigned char>(b[j]))) {
            std::size_t ie = i, je = j;
            while (ie < a.size() && std::isdigit(static_cast<unsigned char>(a[ie]))) ++ie;
            while (je < b.size() && std::isdigit(static_cast<unsigned char>(b[je]))) ++je;
            // Compare digit runs as numbers without overflow: strip leading
            // zeros, then longer is larger, then lexicographic.
            std::string_view na(a.data() + i, ie - i), nb(b.data() + j, je - j);
            while (na.size() > 1 && na.front() == '0') na.remove_prefix(1);
            while (nb.size() > 1 && nb.front() == '0') nb.remove_prefix(1);
            if (na.size() != nb.size()) return na.size() < nb.size() ? -1 : 1;
            if (int c = na.compare(nb); c != 0) return c < 0 ? -1 : 1;
            i = ie;
            j = je;
        } else {
            if (a[i] != b[j]) return a[i] < b[j] ? -1 : 1;
            ++i;
            ++j;
        }
    }
    if (i < a.size()) return 1;
    if (j < b.size()) return -1;
    return 0;
}

bool release_in_series(const std::string& release, const std::string& series) {
    if (release.size() <= series.size() || release.compare(0, series.size(), series) != 0) return false;
    const char next = release[series.size()];
    return !std::isdigit(static_cast<unsigned char>(next));
}

std::vector<GuestKernel> cached_kernels(const std::string& root) {
    std::vector<GuestKernel> out;
    std::error_code ec;
    const fs::path dir = fs::path(root) / "kernels";
    for (const auto& entry : fs::directory_iterator(dir, ec)) {
        GuestKernel k;
        if (entry.is_directory(ec) && entry.path().filename().string().front() != '.' &&
            load_entry(entry.path(), k))
            out.push_back(std::move(k));
    }
    std::sort(out.begin(), out.end(), [](const GuestKernel& a, const GuestKernel& b) {
        return compare_releases(a.release, b.release) < 0;
    });
    return out;
}

GuestKernel find_kernel(const std::string& request, const std::string& root) {
    // A path: used as given, nothing else is consulted.
    if (request.find('/') != std::string::npos) {
        fs::path p(request);
        const bool file = is_file(p);
        if (file) p = p.parent_path();
        GuestKernel k;
        if (!load_entry(p, k))
            throw Error("--kernel", fmt::format("{} is not a kernel directory (expected vmlinuz and "
                                                "lib/modules/<release>/ inside it)", request));
        // A named image is the one booted.
        if (file) k.pvh_image = fs::path(request).filename() == "vmlinux" ? request : std::string();
        return k;
    }
    const std::vector<GuestKernel> kernels = cached_kernels(root);
    if (kernels.empty())
        throw Error("--kernel", fmt::format("no guest kernel cached in {}/kernels; {}", root, fetch_hint));
    if (request.empty()) return kernels.back();
    for (const auto& k : kernels)
        if (k.release == request) return k;
    for (auto it = kernels.rbegin(); it != kernels.rend(); ++it)
        if (release_in_series(it->release, request)) return *it;
    throw Error("--kernel", fmt::format("no cached kernel matches '{}' (cached: {}); {}", request,
                                        known_list(kernels), fetch_hint));
}

}  // namespace numaware::vm
