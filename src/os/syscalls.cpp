// os/syscalls.cpp — the system-call core (see syscalls.hpp).
#include "os/syscalls.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>

namespace numaware::os::sys {

namespace {
// errno of the call that just failed; EIO should a C library leave it unset.
int last_errno() noexcept { return errno != 0 ? errno : EIO; }
int result_of(long rc) noexcept { return rc == 0 ? 0 : last_errno(); }
}  // namespace

std::size_t page_size() noexcept { return static_cast<std::size_t>(::sysconf(_SC_PAGESIZE)); }

int map_anonymous(std::size_t bytes, void*& out, int extra_flags) noexcept {
    void* m = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | extra_flags, -1, 0);
    if (m == MAP_FAILED) return last_errno();
    out = m;
    return 0;
}

int map_anonymous_aligned(std::size_t bytes, std::size_t alignment, void*& out) noexcept {
    const std::size_t span = bytes + alignment;
    if (span < bytes) return ENOMEM;
    void* raw = nullptr;
    if (int err = map_anonymous(span, raw)) return err;
    const auto r = reinterpret_cast<std::uintptr_t>(raw);
    const std::uintptr_t a = (r + alignment - 1) & ~(alignment - 1);
    if (a > r) ::munmap(raw, a - r);
    const std::uintptr_t end = r + span;
    if (end > a + bytes) ::munmap(reinterpret_cast<void*>(a + bytes), end - (a + bytes));
    out = reinterpret_cast<void*>(a);
    return 0;
}

int map_for_placement(std::size_t bytes, void*& out, std::size_t& mapped) noexcept {
    if (bytes > SIZE_MAX - huge_block) return ENOMEM;
    const std::size_t span = (bytes + huge_block - 1) & ~(huge_block - 1);
    if (int err = map_anonymous_aligned(span, huge_block, out)) return err;
    mapped = span;
    return 0;
}

int unmap(void* addr, std::size_t bytes) noexcept { return result_of(::munmap(addr, bytes)); }

int madvise(void* addr, std::size_t bytes, int advice) noexcept { return result_of(::madvise(addr, bytes, advice)); }

int mincore(void* addr, std::size_t bytes, unsigned char* vec) noexcept { return result_of(::mincore(addr, bytes, vec)); }

int mbind(void* addr, std::size_t bytes, int mode, const unsigned long* mask, unsigned long maxnode,
          unsigned flags) noexcept {
    return result_of(::syscall(SYS_mbind, addr, bytes, static_cast<unsigned long>(mode), mask, maxnode, flags));
}

int set_mempolicy(int mode, const unsigned long* mask, unsigned long maxnode) noexcept {
    return result_of(::syscall(SYS_set_mempolicy, mode, mask, maxnode));
}

int get_mempolicy(int& mode, unsigned long* mask, unsigned long maxnode, const void* addr,
                  unsigned long flags) noexcept {
    return result_of(::syscall(SYS_get_mempolicy, &mode, mask, maxnode, addr, flags));
}

int move_pages(pid_t pid, std::size_t count, void* const* pages, const int* nodes, int* status,
               int flags) noexcept {
    const long rc = ::syscall(SYS_move_pages, pid, count, pages, nodes, status, flags);
    if (rc < 0) return last_errno();
    return rc == 0 ? 0 : EAGAIN;
}

int getcpu(unsigned* cpu, unsigned* node) noexcept { return result_of(::getcpu(cpu, node)); }

int current_cpu(unsigned& cpu) noexcept {
    const int c = ::sched_getcpu();
    if (c < 0) return last_errno();
    cpu = static_cast<unsigned>(c);
    return 0;
}

int set_affinity(pid_t tid, std::size_t set_bytes, const cpu_set_t* set) noexcept {
    return result_of(::sched_setaffinity(tid, set_bytes, set));
}

int get_affinity(pid_t tid, std::size_t set_bytes, cpu_set_t* set) noexcept {
    return result_of(::sched_getaffinity(tid, set_bytes, set));
}

int open_read(const char* path, int& fd) noexcept {
    const int f = ::open(path, O_RDONLY | O_CLOEXEC);
    if (f < 0) return last_errno();
    fd = f;
    return 0;
}

int open_write(const char* path, int& fd) noexcept {
    const int f = ::open(path, O_WRONLY | O_CLOEXEC);
    if (f < 0) return last_errno();
    fd = f;
    return 0;
}

int read_some(int fd, void* buf, std::size_t cap, std::size_t& got) noexcept {
    for (;;) {
        const ssize_t n = ::read(fd, buf, cap);
        if (n >= 0) {
            got = static_cast<std::size_t>(n);
            return 0;
        }
        if (errno != EINTR) return last_errno();
    }
}

int read_at(int fd, void* buf, std::size_t cap, off_t offset, std::size_t& got) noexcept {
    for (;;) {
        const ssize_t n = ::pread(fd, buf, cap, offset);
        if (n >= 0) {
            got = static_cast<std::size_t>(n);
            return 0;
        }
        if (errno != EINTR) return last_errno();
    }
}

int write_all(int fd, const void* buf, std::size_t bytes) noexcept {
    ssize_t n;
    do {
        n = ::write(fd, buf, bytes);
    } while (n < 0 && errno == EINTR);
    if (n < 0) return last_errno();
    return static_cast<std::size_t>(n) == bytes ? 0 : EIO;
}

int close_fd(int fd) noexcept { return result_of(::close(fd)); }

int read_small_file(const char* path, char* buf, std::size_t cap, std::size_t& len) noexcept {
    len = 0;
    if (cap == 0) return EINVAL;
    int fd = -1;
    if (int err = open_read(path, fd)) return err;
    int err = 0;
    while (len + 1 < cap) {
        std::size_t got = 0;
        if ((err = read_some(fd, buf + len, cap - 1 - len, got)) != 0 || got == 0) break;
        len += got;
    }
    buf[len] = '\0';
    (void)close_fd(fd);
    return err;
}

bool is_directory(const char* path) noexcept {
    struct stat st{};
    return ::stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

}  // namespace numaware::os::sys
