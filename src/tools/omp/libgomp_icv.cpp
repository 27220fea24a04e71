// tools/omp/libgomp_icv.cpp — the program's libgomp, found by name
// (libgomp_icv.hpp).
#include "tools/omp/libgomp_icv.hpp"

#include <dlfcn.h>
#include <link.h>

#include <atomic>
#include <cstddef>
#include <cstring>

namespace numaware::omp {
namespace {

// Objects the process has loaded so far (glibc's running count, which
// dlopen raises): a failed look for libgomp is repeated only after it grew.
unsigned long long objects_loaded() {
    unsigned long long adds = 0;
    dl_iterate_phdr(
        [](dl_phdr_info* info, std::size_t size, void* out) -> int {
            if (size >= offsetof(dl_phdr_info, dlpi_subs)) *static_cast<unsigned long long*>(out) = info->dlpi_adds;
            return 1;   // the first object carries the count
        },
        &adds);
    return adds;
}

template <class Fn>
Fn routine(void* handle, const char* name) {
    void* p = dlsym(handle, name);
    Fn fn = nullptr;
    static_assert(sizeof fn == sizeof p);
    std::memcpy(&fn, &p, sizeof p);
    return fn;
}

// libgomp's own routines, once found (both, or neither: `get` is stored
// last, with release, so a thread that sees it sees `set` too).
std::atomic<int (*)()> g_get{nullptr};
std::atomic<void (*)(int)> g_set{nullptr};

bool find_libgomp() {
    if (g_get.load(std::memory_order_acquire) != nullptr) return true;
    static std::atomic<unsigned long long> looked_at{~0ull};
    const unsigned long long adds = objects_loaded();
    if (looked_at.exchange(adds, std::memory_order_relaxed) == adds) return false;
    // RTLD_NOLOAD: only a libgomp the process has; the reference it takes
    // is kept (libgomp stays as long as the program that linked it).
    void* handle = dlopen("libgomp.so.1", RTLD_LAZY | RTLD_NOLOAD);
    if (handle == nullptr) return false;
    // Through the handle: libgomp's own definitions, not the shim's.
    const auto get = routine<int (*)()>(handle, "omp_get_max_threads");
    const auto set = routine<void (*)(int)>(handle, "omp_set_num_threads");
    if (get == nullptr || set == nullptr) return false;
    g_set.store(set, std::memory_order_relaxed);
    g_get.store(get, std::memory_order_release);
    return true;
}

}  // namespace

int libgomp_max_threads() { return find_libgomp() ? g_get.load(std::memory_order_relaxed)() : 0; }

void libgomp_set_num_threads(int n) {
    if (find_libgomp()) g_set.load(std::memory_order_relaxed)(n);
}

}  // namespace numaware::omp
