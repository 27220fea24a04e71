// tools/omp/launch_cpus.cpp — pthread_setaffinity_np, noting the launch mask
// at its first call (launch_cpus.hpp).
//
// The first call comes from libgomp's constructor, before this library's
// constructors and C++ static objects are ready: what it touches is
// constant-initialised, and it asks only the kernel and the dynamic linker.
#include "tools/omp/launch_cpus.hpp"

#include <dlfcn.h>
#include <pthread.h>
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <climits>
#include <cstddef>

namespace numaware::omp {
namespace {

// Room for 8,192 CPUs, the most Linux is built for (x86's MAXSMP).
constexpr std::size_t mask_words = 8192 / (sizeof(unsigned long) * CHAR_BIT);
constinit unsigned long g_mask[mask_words] = {};
constinit long g_mask_bytes = 0;   // what the kernel wrote; 0: none noted
constinit std::atomic<bool> g_taken{false};   // the first call has come
constinit std::atomic<bool> g_noted{false};   // and g_mask, g_mask_bytes are written

using SetAffinity = int (*)(pthread_t, std::size_t, const cpu_set_t*);
constinit std::atomic<SetAffinity> g_next{nullptr};

void note_launch_mask() {
    if (g_taken.exchange(true, std::memory_order_acq_rel)) return;
    // The raw call: glibc's wrapper wants a cpu_set_t of its own size.
    const long bytes = syscall(SYS_sched_getaffinity, 0, sizeof g_mask, g_mask);
    g_mask_bytes = bytes > 0 ? bytes : 0;
    g_noted.store(true, std::memory_order_release);
}

}  // namespace

bool launch_cpus(std::vector<unsigned>& out) {
    if (!g_noted.load(std::memory_order_acquire) || g_mask_bytes <= 0) return false;
    out.clear();
    const std::size_t bits = static_cast<std::size_t>(g_mask_bytes) * CHAR_BIT;
    constexpr std::size_t word_bits = sizeof(unsigned long) * CHAR_BIT;
    for (std::size_t b = 0; b < bits; ++b)
        if ((g_mask[b / word_bits] >> (b % word_bits)) & 1ul) out.push_back(static_cast<unsigned>(b));
    return !out.empty();
}

}  // namespace numaware::omp

using namespace numaware::omp;

#pragma GCC visibility push(default)   // exports.map keeps it
extern "C" int pthread_setaffinity_np(pthread_t thread, std::size_t size, const cpu_set_t* set) {
    note_launch_mask();
    SetAffinity next = g_next.load(std::memory_order_acquire);
    if (next == nullptr) {
        next = reinterpret_cast<SetAffinity>(dlsym(RTLD_NEXT, "pthread_setaffinity_np"));
        if (next == nullptr) return ENOSYS;
        g_next.store(next, std::memory_order_release);
    }
    return next(thread, size, set);
}
#pragma GCC visibility pop
