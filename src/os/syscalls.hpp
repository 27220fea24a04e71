// os/syscalls.hpp — the system-call core: the one door numaware opens to
// the kernel.
//
// Thin wrappers over the raw calls, with one convention: 0 on success or a
// positive errno value, never -1 + errno, never an exception, never a print.
// Nothing here allocates, so the heap engine (which runs inside malloc, and
// inside libnumaware_malloc.so before the C++ runtime is up) and LinuxOs
// (os/linux_os.cpp, the Os interface the layers above use) share them.
// NUMA policy calls take the kernel's raw arguments (mode word, nodemask,
// maxnode); LinuxOs turns NodeSet and PolicyMode into those.
#pragma once

#include <sched.h>
#include <sys/types.h>

#include <cstddef>

namespace numaware::os::sys {

// ---- memory ----------------------------------------------------------------
std::size_t page_size() noexcept;   // the base page size (sysconf)
// Private anonymous read-write memory. `extra_flags` is ORed into the mmap
// flags (MAP_NORESERVE, ...).
int map_anonymous(std::size_t bytes, void*& out, int extra_flags = 0) noexcept;
// The same, with the start aligned to `alignment` (a power of two): maps
// bytes + alignment and unmaps both overhangs.
int map_anonymous_aligned(std::size_t bytes, std::size_t alignment, void*& out) noexcept;
// Memory for a range that placement will place page by page: its start and
// its end on 2 MiB boundaries (`mapped`, what to unmap, is `bytes` rounded
// up to 2 MiB). The kernel merges adjacent anonymous mappings, so without
// that a transparent huge page made by a fault in a neighbour (malloc's
// own mmap'd blocks) can reach into the range's first or last pages, which
// then sit on one node and move only as a whole (seen in `numaware place`
// in emulated guests: about 470 pages of an interleaved 256 MiB range).
inline constexpr std::size_t huge_block = std::size_t{2} << 20;
int map_for_placement(std::size_t bytes, void*& out, std::size_t& mapped) noexcept;
int unmap(void* addr, std::size_t bytes) noexcept;
int madvise(void* addr, std::size_t bytes, int advice) noexcept;
int mincore(void* addr, std::size_t bytes, unsigned char* vec) noexcept;

// ---- NUMA memory policy (raw syscalls: libnuma would print and retry) ------
int mbind(void* addr, std::size_t bytes, int mode, const unsigned long* mask, unsigned long maxnode,
          unsigned flags) noexcept;
int set_mempolicy(int mode, const unsigned long* mask, unsigned long maxnode) noexcept;
int get_mempolicy(int& mode, unsigned long* mask, unsigned long maxnode, const void* addr,
                  unsigned long flags) noexcept;
// move_pages(2). The kernel returns a positive count when it gave up on
// some pages part way; the status of the rest is then stale, so that case
// is EAGAIN (query again).
int move_pages(pid_t pid, std::size_t count, void* const* pages, const int* nodes, int* status,
               int flags) noexcept;

// ---- CPUs --------------------------------------------------------------------
// The CPU and node the calling thread runs on (getcpu(2)); either may be null.
int getcpu(unsigned* cpu, unsigned* node) noexcept;
// sched_getcpu(3): the C library's fastest way (rseq where registered).
int current_cpu(unsigned& cpu) noexcept;
int set_affinity(pid_t tid, std::size_t set_bytes, const cpu_set_t* set) noexcept;
int get_affinity(pid_t tid, std::size_t set_bytes, cpu_set_t* set) noexcept;

// ---- files (procfs, sysfs) ---------------------------------------------------
int open_read(const char* path, int& fd) noexcept;    // O_RDONLY | O_CLOEXEC
int open_write(const char* path, int& fd) noexcept;   // O_WRONLY | O_CLOEXEC
// Reads what is there, up to `cap` bytes (EINTR retried); `got` 0 is the end.
int read_some(int fd, void* buf, std::size_t cap, std::size_t& got) noexcept;
int read_at(int fd, void* buf, std::size_t cap, off_t offset, std::size_t& got) noexcept;
// Writes all of it in one write(2) (EINTR retried); a short write is EIO.
int write_all(int fd, const void* buf, std::size_t bytes) noexcept;
int close_fd(int fd) noexcept;
// A whole small file (sysfs: a line or two) into buf, NUL-terminated, at
// most cap - 1 bytes of it; `len` is the bytes read.
int read_small_file(const char* path, char* buf, std::size_t cap, std::size_t& len) noexcept;
bool is_directory(const char* path) noexcept;

}  // namespace numaware::os::sys
