// tools/vm/initramfs.hpp — the busybox initramfs a guest kernel boots into.
//
// One initramfs per kernel release, cached as
//   <cache>/initramfs/<release>-<key>.cpio
// where <key> changes whenever the init script, busybox or the modules do.
// It is an uncompressed cpio "newc" archive: the kernel unpacks it without a
// decompressor, which under TCG is faster than gunzip, and it is a few MB.
//
// Modules are resolved from the kernel's own module tree: the wanted roots
// (virtio_pci, 9pnet_virtio, 9p) and their dependencies as each module's
// .modinfo "depends=" names them, minus anything in modules.builtin.
// Compressed modules (.ko.xz, .ko.zst, .ko.gz) are decompressed on the host
// because busybox insmod loads plain ELF only.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "tools/vm/kernel_cache.hpp"

namespace numaware::vm {

// The modules the guest needs for 9p over virtio-pci.
const std::vector<std::string>& wanted_modules();

// Kernel module names treat '-' and '_' alike; this is the '_' form.
std::string module_name(const std::string& file_name);

// The "depends=" list of a module's .modinfo section, from the ELF bytes.
// Throws Error naming `what` when the bytes are not a 64-bit ELF module.
std::vector<std::string> modinfo_depends(const std::string& elf, const std::string& what);

// Load order for `roots`: dependencies first, each module once, builtin
// modules skipped. `depends` maps a loadable module to its dependencies.
// Throws Error("module NAME", ...) for a module neither loadable nor builtin.
std::vector<std::string> module_load_order(const std::vector<std::string>& roots,
                                           const std::map<std::string, std::vector<std::string>>& depends,
                                           const std::set<std::string>& builtin);

// Builds a cpio newc archive in memory.
class CpioWriter {
public:
    void directory(const std::string& path, unsigned mode = 0755);
    void file(const std::string& path, const std::string& data, unsigned mode = 0644);
    void char_device(const std::string& path, unsigned major, unsigned minor, unsigned mode = 0600);
    // Appends the trailer and returns the archive.
    std::string finish();

private:
    void entry(const std::string& path, unsigned mode, const std::string& data, unsigned rmajor, unsigned rminor);
    std::string out_;
    std::uint32_t next_inode_ = 1;
};

// Returns the path of the cached initramfs for `kernel`, building it first
// if needed. `busybox` is a statically linked busybox binary.
std::string initramfs_for(const GuestKernel& kernel, const std::string& cache_root, const std::string& busybox);

// Finds a static busybox (busybox-static installs /bin/busybox). Throws
// Error naming the Debian package when there is none or it is dynamic.
std::string find_static_busybox();

}  // namespace numaware::vm
