// tools/vm/kernel_cache.hpp — where guest kernels live and which one to boot.
//
// scripts/fetch-guest-kernel unpacks Debian kernel packages into
//   <cache>/kernels/<release>/vmlinuz
//   <cache>/kernels/<release>/vmlinux      (optional: the same kernel, decompressed)
//   <cache>/kernels/<release>/lib/modules/<release>/...
// with <cache> = $NUMAWARE_CACHE, else $XDG_CACHE_HOME/numaware, else
// $HOME/.cache/numaware. Nothing here downloads.
#pragma once

#include <string>
#include <vector>

namespace numaware::vm {

struct GuestKernel {
    std::string release;      // "6.1.0-56-amd64"
    std::string image;        // .../vmlinuz
    // .../vmlinux when the entry has one: the kernel as an ELF image with a
    // PVH entry point, which the fetch script keeps only then. QEMU boots it
    // directly, skipping the bzImage's decompressor, which runs emulated
    // under TCG (7-21 s a boot; BENCHMARKS.md). Empty: boot `image`.
    std::string pvh_image;
    const std::string& boot_image() const { return pvh_image.empty() ? image : pvh_image; }
    std::string modules_dir;  // .../lib/modules/<release>
};

// The numaware cache directory (not created).
std::string cache_root();

// Orders kernel releases by their numeric parts: "6.1.0-9" < "6.1.0-56" <
// "6.12.95+deb12". Returns <0, 0, >0.
int compare_releases(const std::string& a, const std::string& b);

// True when `release` belongs to the series "6.1" (so "6.1.0-56-amd64"
// matches "6.1" but "6.12.95" does not).
bool release_in_series(const std::string& release, const std::string& series);

// Every usable kernel under <root>/kernels, oldest first.
std::vector<GuestKernel> cached_kernels(const std::string& root);

// Resolves --kernel: "" = newest cached; a series like "6.1" or "6.12" =
// newest cached of that series; an exact cached release; or a PATH to a
// directory laid out like a cache entry (or the vmlinuz or vmlinux inside
// one, which is then the image booted).
// Throws Error("--kernel", ...) naming scripts/fetch-guest-kernel when
// nothing matches.
GuestKernel find_kernel(const std::string& request, const std::string& root);

}  // namespace numaware::vm
