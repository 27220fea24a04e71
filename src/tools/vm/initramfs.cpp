// tools/vm/initramfs.cpp — module resolution, cpio writing, the cache.
#include "tools/vm/initramfs.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <string_view>
#include <filesystem>
#include <functional>
#include <sstream>
#include <system_error>

#include <fmt/format.h>

#include "numaware/error.hpp"
#include "tools/vm/guest_init.hpp"
#include "tools/vm/process.hpp"

namespace numaware::vm {
namespace fs = std::filesystem;
namespace {

// Compressed module suffixes and the host tool that decompresses each.
struct Compression {
    const char* suffix;
    const char* tool;
};
constexpr Compression compressions[] = {{".ko.xz", "xz"}, {".ko.zst", "zstd"}, {".ko.gz", "gzip"}, {".ko", nullptr}};

template <class T>
T read_le(const std::string& bytes, std::size_t offset, const std::string& what) {
    if (offset + sizeof(T) > bytes.size()) throw Error(what, "truncated ELF header");
    T v;
    std::memcpy(&v, bytes.data() + offset, sizeof(T));   // x86-64 hosts and modules are little-endian
    return v;
}

struct ModuleFile {
    fs::path path;
    const Compression* compression = nullptr;
};

// name -> file for every module under <modules_dir>/kernel.
std::map<std::string, ModuleFile> index_modules(const std::string& modules_dir) {
    std::map<std::string, ModuleFile> out;
    std::error_code ec;
    for (auto it = fs::recursive_directory_iterator(fs::path(modules_dir) / "kernel", ec);
         it != fs::recursive_directory_iterator(); it.increment(ec)) {
        if (ec) break;
        if (!it->is_regular_file(ec)) continue;
        const std::string file = it->path().filename().string();
        for (const auto& c : compressions) {
            const std::string suffix = c.suffix;
            if (file.size() > suffix.size() && file.compare(file.size() - suffix.size(), suffix.size(), suffix) == 0) {
                out[module_name(file.substr(0, file.size() - suffix.size()))] = {it->path(), &c};
                break;
            }
        }
    }
    return out;
}

std::set<std::string> builtin_modules(const std::string& modules_dir) {
    std::set<std::string> out;
    std::istringstream lines(read_file(modules_dir + "/modules.builtin"));
    std::string line;
    while (std::getline(lines, line)) {
        const std::string file = fs::path(line).filename().string();
        if (file.size() > 3 && file.compare(file.size() - 3, 3, ".ko") == 0)
            out.insert(module_name(file.substr(0, file.size() - 3)));
    }
    return out;
}

std::string module_bytes(const ModuleFile& m, const std::string& scratch) {
    if (m.compression->tool == nullptr) return read_file(m.path.string());
    const std::string tool = find_in_path(m.compression->tool);
    if (tool.empty())
        throw Error(m.path.string(), fmt::format("is compressed and {} is not installed to decompress it",
                                                 m.compression->tool));
    const std::string out = scratch + "/module";
    fs::remove(out);
    const ProcessResult r = run_process({tool, "-dc", m.path.string()}, out, "");
    if (r.status != 0) throw Error(m.path.string(), fmt::format("{} -dc failed with status {}", tool, r.status));
    return read_file(out);
}

// FNV-1a: a cache key, not a security boundary.
std::uint64_t fnv1a(std::uint64_t h, const std::string& data) {
    for (unsigned char c : data) {
        h ^= c;
        h *= 1099511628211ull;
    }
    return h;
}

std::string file_stamp(const fs::path& p) {
    std::error_code ec;
    const auto size = fs::file_size(p, ec);
    const auto mtime = fs::last_write_time(p, ec).time_since_epoch().count();
    return fmt::format("{}:{}:{};", p.string(), size, mtime);
}

// True when the ELF has a PT_INTERP program header, i.e. needs a dynamic loader.
bool elf_is_dynamic(const std::string& elf, const std::string& what) {
    const auto phoff = read_le<std::uint64_t>(elf, 0x20, what);
    const auto phentsize = read_le<std::uint16_t>(elf, 0x36, what);
    const auto phnum = read_le<std::uint16_t>(elf, 0x38, what);
    for (std::size_t i = 0; i < phnum; ++i)
        if (read_le<std::uint32_t>(elf, phoff + i * phentsize, what) == 3 /* PT_INTERP */) return true;
    return false;
}

}  // namespace

const std::vector<std::string>& wanted_modules() {
    static const std::vector<std::string> roots{"virtio_pci", "9pnet_virtio", "9p"};
    return roots;
}

std::string module_name(const std::string& file_name) {
    std::string out = file_name;
    for (char& c : out)
        if (c == '-') c = '_';
    return out;
}

std::vector<std::string> modinfo_depends(const std::string& elf, const std::string& what) {
    if (elf.size() < 64 || elf.compare(0, 4, "\x7f" "ELF") != 0 || elf[4] != 2)
        throw Error(what, "is not a 64-bit ELF kernel module");
    const auto shoff = read_le<std::uint64_t>(elf, 0x28, what);
    const auto shentsize = read_le<std::uint16_t>(elf, 0x3A, what);
    const auto shnum = read_le<std::uint16_t>(elf, 0x3C, what);
    const auto shstrndx = read_le<std::uint16_t>(elf, 0x3E, what);
    auto section = [&](std::size_t i, std::size_t field_offset) {
        return shoff + i * shentsize + field_offset;
    };
    if (shstrndx >= shnum) throw Error(what, "has no section name table");
    const auto names_offset = read_le<std::uint64_t>(elf, section(shstrndx, 24), what);
    for (std::size_t i = 0; i < shnum; ++i) {
        const auto name = read_le<std::uint32_t>(elf, section(i, 0), what);
        const std::size_t name_at = names_offset + name;
        if (name_at >= elf.size() || std::strcmp(elf.c_str() + name_at, ".modinfo") != 0) continue;
        const auto offset = read_le<std::uint64_t>(elf, section(i, 24), what);
        const auto size = read_le<std::uint64_t>(elf, section(i, 32), what);
        if (offset + size > elf.size()) throw Error(what, ".modinfo runs past the end of the file");
        // .modinfo is a run of NUL-terminated "key=value" strings.
        const std::string_view info(elf.data() + offset, size);
        for (std::size_t at = 0; at < info.size();) {
            const std::size_t end = std::min(info.find('\0', at), info.size());
            const std::string entry(info.substr(at, end - at));
            at = end + 1;
            if (entry.rfind("depends=", 0) != 0) continue;
            std::vector<std::string> deps;
            std::istringstream list(entry.substr(8));
            std::string dep;
            while (std::getline(list, dep, ','))
                if (!dep.empty()) deps.push_back(module_name(dep));
            return deps;
        }
        return {};
    }
    throw Error(what, "has no .modinfo section; is it a kernel module?");
}

std::vector<std::string> module_load_order(const std::vector<std::string>& roots,
                                           const std::map<std::string, std::vector<std::string>>& depends,
                                           const std::set<std::string>& builtin) {
    std::vector<std::string> order;
    std::set<std::string> done, visiting;
    std::function<void(const std::string&)> visit = [&](const std::string& name) {
        if (done.count(name) || builtin.count(name)) return;
        if (visiting.count(name)) throw Error("module " + name, "has a dependency cycle");
        const auto it = depends.find(name);
        if (it == depends.end())
            throw Error("module " + name, "is neither built into the guest kernel nor present as a module");
        visiting.insert(name);
        for (const auto& dep : it->second) visit(dep);
        visiting.erase(name);
        done.insert(name);
        order.push_back(name);
    };
    for (const auto& root : roots) visit(module_name(root));
    return order;
}

void CpioWriter::entry(const std::string& path, unsigned mode, const std::string& data, unsigned rmajor,
                       unsigned rminor) {
    const std::string name = path.front() == '/' ? path.substr(1) : path;
    // newc: "070701" then 13 eight-digit hex fields; name and data are each
    // padded to a multiple of 4 bytes counted from the start of the header.
    out_ += fmt::format("070701{:08X}{:08X}{:08X}{:08X}{:08X}{:08X}{:08X}{:08X}{:08X}{:08X}{:08X}{:08X}{:08X}",
                        next_inode_++, mode, 0, 0, (mode & 0170000) == 0040000 ? 2 : 1, 0, data.size(), 0, 0,
                        rmajor, rminor, name.size() + 1, 0);
    out_ += name;
    out_ += '\0';
    out_.append((4 - out_.size() % 4) % 4, '\0');
    out_ += data;
    out_.append((4 - out_.size() % 4) % 4, '\0');
}

void CpioWriter::directory(const std::string& path, unsigned mode) { entry(path, 0040000 | mode, "", 0, 0); }
void CpioWriter::file(const std::string& path, const std::string& data, unsigned mode) {
    entry(path, 0100000 | mode, data, 0, 0);
}
void CpioWriter::char_device(const std::string& path, unsigned major, unsigned minor, unsigned mode) {
    entry(path, 0020000 | mode, "", major, minor);
}
std::string CpioWriter::finish() {
    next_inode_ = 0;
    entry("TRAILER!!!", 0, "", 0, 0);
    return std::move(out_);
}

std::string find_static_busybox() {
    for (const char* candidate : {"/bin/busybox", "/usr/bin/busybox"}) {
        if (access(candidate, X_OK) != 0) continue;
        if (elf_is_dynamic(read_file(candidate), candidate))
            throw Error(candidate, "is dynamically linked and cannot run in the guest initramfs; "
                                   "install Debian package busybox-static (scripts/bootstrap does)");
        return candidate;
    }
    throw Error("busybox", "not found: install Debian package busybox-static (scripts/bootstrap does)");
}

std::string initramfs_for(const GuestKernel& kernel, const std::string& cache_root, const std::string& busybox) {
    const auto files = index_modules(kernel.modules_dir);
    const auto builtin = builtin_modules(kernel.modules_dir);

    // The key covers everything the archive is made of, by stamp rather
    // than content so a cache hit reads no module.
    std::uint64_t key = fnv1a(14695981039346656037ull, guest_init_script(wanted_modules()));
    key = fnv1a(key, file_stamp(busybox));
    for (const auto& root : wanted_modules())
        if (auto it = files.find(root); it != files.end()) key = fnv1a(key, file_stamp(it->second.path));
    const fs::path dir = fs::path(cache_root) / "initramfs";
    const fs::path archive = dir / fmt::format("{}-{:016x}.cpio", kernel.release, key);
    std::error_code ec;
    if (fs::is_regular_file(archive, ec)) return archive.string();

    fs::create_directories(dir, ec);
    if (ec) throw Error(dir.string(), fmt::format("cannot create the initramfs cache: {}", ec.message()));
    const std::string scratch = fmt::format("{}/.build-{}", dir.string(), getpid());
    fs::create_directories(scratch, ec);

    // Read each module once, following depends= from the roots.
    std::map<std::string, std::vector<std::string>> depends;
    std::map<std::string, std::string> bytes;
    std::vector<std::string> pending(wanted_modules().begin(), wanted_modules().end());
    while (!pending.empty()) {
        const std::string name = module_name(pending.back());
        pending.pop_back();
        if (depends.count(name) || builtin.count(name)) continue;
        const auto it = files.find(name);
        if (it == files.end()) continue;   // module_load_order reports it
        bytes[name] = module_bytes(it->second, scratch);
        depends[name] = modinfo_depends(bytes[name], it->second.path.string());
        for (const auto& dep : depends[name]) pending.push_back(dep);
    }
    const std::vector<std::string> order = module_load_order(wanted_modules(), depends, builtin);

    CpioWriter cpio;
    for (const char* d : {"/bin", "/dev", "/proc", "/sys", "/host", "/out", "/tmp", "/lib", "/lib/modules"})
        cpio.directory(d);
    // The kernel opens /dev/console for init before devtmpfs is mounted.
    cpio.char_device("/dev/console", 5, 1);
    cpio.file("/bin/busybox", read_file(busybox), 0755);
    cpio.file("/init", guest_init_script(order), 0755);
    for (const auto& name : order) cpio.file("/lib/modules/" + name + ".ko", bytes[name]);

    // Write then rename: concurrent runs never see a half-written archive.
    const std::string tmp = scratch + "/initramfs.cpio";
    write_file(tmp, cpio.finish());
    fs::rename(tmp, archive, ec);
    if (ec) throw Error(archive.string(), fmt::format("cannot store the initramfs: {}", ec.message()));
    fs::remove_all(scratch, ec);
    return archive.string();
}

}  // namespace numaware::vm
