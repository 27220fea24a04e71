// tools/omp/libgomp_icv.cpp — the program's libgomp, found by name
// (libgomp_icv.hpp).
#include "tools/omp/libgomp_icv.hpp"

#include <dlfcn.h>
#include <link.h>

#include <atomic>
#include <cstddef>
#include <cstring>
#include <mutex>

namespace numaware::omp {
namespace {

struct Routines {
    int (*get_max_threads)() = nullptr;
    void (*set_num_threads)(int) = nullptr;
};

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

const Routines* libgomp() {
    static std::atomic<const Routines*> found{nullptr};
    static std::atomic<unsigned long long> looked_at{~0ull};
    static Routines routines;
    static std::once_flag once;
    if (const Routines* r = found.load(std::memory_order_acquire)) return r;
    const unsigned long long adds = objects_loaded();
    if (looked_at.exchange(adds, std::memory_order_relaxed) == adds) return nullptr;
    // RTLD_NOLOAD: only a libgomp the process has; the reference it takes
    // is kept (libgomp stays as long as the program that linked it).
    void* handle = dlopen("libgomp.so.1", RTLD_LAZY | RTLD_NOLOAD);
    if (handle == nullptr) return nullptr;
    // Through the handle: libgomp's own definitions, not the shim's.
    const Routines r{routine<int (*)()>(handle, "omp_get_max_threads"),
                     routine<void (*)(int)>(handle, "omp_set_num_threads")};
    if (r.get_max_threads == nullptr || r.set_num_threads == nullptr) return nullptr;
    std::call_once(once, [&] {
        routines = r;
        found.store(&routines, std::memory_order_release);
    });
    return found.load(std::memory_order_acquire);
}

}  // namespace

int libgomp_max_threads() {
    const Routines* r = libgomp();
    return r != nullptr ? r->get_max_threads() : 0;
}

void libgomp_set_num_threads(int n) {
    if (const Routines* r = libgomp()) r->set_num_threads(n);
}

}  // namespace numaware::omp
