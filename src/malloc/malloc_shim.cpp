// malloc/malloc_shim.cpp — libnumaware_malloc.so, the LD_PRELOAD drop-in.
//
// Every entry point of the malloc family and every operator new/delete
// maps onto the engine with owner = the calling thread's current node, so
// a program's blocks land on the node of the thread that allocated them and
// no page holds blocks of two nodes.
//
// Where the system refuses NUMA memory policies on a machine of several
// nodes (EPERM or ENOSYS from mbind or its check), the shim does not fail
// the allocation as the heap API does: its engine is built with
// NUMAWARE_HEAP_FIRST_TOUCH_WHEN_REFUSED, keeps the chunk unbound (the
// kernel places its pages where they are first touched), and
// binding_refused_notice below says so on stderr, once.
//
// Pointers the engine does not own: blocks handed out while the engine was
// starting up come from its static bootstrap region (free ignores them,
// realloc copies them out). Any other pointer — memory glibc's allocator
// gave out before this library took over, or to a library that calls
// __libc_malloc directly — is handed back to glibc (__libc_free,
// __libc_realloc); malloc_usable_size reports 0 for it.
//
// Only the functions below are exported (the library is built with hidden
// visibility); the engine inside is private to this library.
//
// NUMAWARE_MALLOC_PREFIXED (the sanitizer builds' stress test only): the
// same entry points named nw_shim_malloc, nw_shim_free, ..., and no C++
// operators, so that this file and the engine can be compiled into a
// program under AddressSanitizer or ThreadSanitizer, whose own malloc must
// stay in place, and be called by those names (tests/malloc/stress.c).
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <new>
#include <unistd.h>

#include "heap/engine.hpp"
#include "heap/fast_path.hpp"
#include "heap/internal.hpp"

#define NW_EXPORT extern "C" __attribute__((visibility("default")))
#ifdef NUMAWARE_MALLOC_PREFIXED
#define NW_MALLOC_NAME(name) nw_shim_##name
#else
#define NW_MALLOC_NAME(name) name
#endif

extern "C" {
void __libc_free(void* p);
void* __libc_realloc(void* p, std::size_t bytes);
}

namespace {

namespace h = numaware::heap;

void free_in_glibc(void* p) { __libc_free(p); }

// Installed at load time, before main: from then on foreign pointers go to glibc.
__attribute__((constructor)) void install_foreign_free() { h::set_foreign_free(free_in_glibc); }

// The engine sets errno (ENOMEM) on every failure path.
inline void* allocate_or_errno(std::size_t bytes) noexcept { return h::detail::fast_allocate_local(bytes); }

void* aligned_or_null(std::size_t alignment, std::size_t bytes) noexcept {
    return h::allocate_local_aligned(bytes, alignment);
}

std::size_t page_size() noexcept {
    static const std::size_t size = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
    return size;
}

#ifndef NUMAWARE_MALLOC_PREFIXED
void* new_or_throw(std::size_t bytes) {
    void* p = h::detail::fast_allocate_local(bytes);
    if (__builtin_expect(p == nullptr, 0)) {
        // The standard's loop: give the new_handler a chance, else throw.
        for (;;) {
            std::new_handler handler = std::get_new_handler();
            if (handler == nullptr) throw std::bad_alloc();
            handler();
            p = h::allocate_local(bytes);
            if (p != nullptr) break;
        }
    }
    return p;
}

void* aligned_new_or_throw(std::size_t bytes, std::align_val_t al) {
    void* p = h::allocate_local_aligned(bytes, static_cast<std::size_t>(al));
    if (p == nullptr) throw std::bad_alloc();
    return p;
}
#endif

}  // namespace

NW_EXPORT void* NW_MALLOC_NAME(malloc)(std::size_t bytes) { return allocate_or_errno(bytes); }

NW_EXPORT void NW_MALLOC_NAME(free)(void* p) { h::detail::fast_deallocate(p); }

NW_EXPORT void NW_MALLOC_NAME(cfree)(void* p) { h::deallocate(p); }

NW_EXPORT void* NW_MALLOC_NAME(calloc)(std::size_t count, std::size_t size) {
    std::size_t bytes = 0;
    if (__builtin_mul_overflow(count, size, &bytes)) {
        errno = ENOMEM;
        return nullptr;
    }
    return h::allocate_local_zeroed(bytes);
}

NW_EXPORT void* NW_MALLOC_NAME(realloc)(void* p, std::size_t bytes) {
    if (p == nullptr) return allocate_or_errno(bytes);
    if (h::detail::span_of(p) == nullptr) {
        if (h::detail::is_bootstrap(p)) {
            void* q = allocate_or_errno(bytes);
            const std::size_t old = h::detail::bootstrap_size(p);
            if (q != nullptr) std::memcpy(q, p, old < bytes ? old : bytes);
            return q;
        }
        return __libc_realloc(p, bytes);
    }
    if (bytes == 0) {
        // glibc's behaviour: realloc(p, 0) frees p and returns NULL.
        h::deallocate(p);
        return nullptr;
    }
    void* q = h::reallocate(p, bytes);
    if (q == nullptr) errno = ENOMEM;
    return q;
}

// glibc's malloc_trim: every free page goes back to the kernel now. `pad`
// (what to keep at the top of glibc's heap) has no meaning here. 1 if
// memory was released, else 0.
NW_EXPORT int NW_MALLOC_NAME(malloc_trim)(std::size_t pad) {
    (void)pad;
    return h::release_free_memory() > 0 ? 1 : 0;
}

NW_EXPORT void* NW_MALLOC_NAME(reallocarray)(void* p, std::size_t count, std::size_t size) {
    std::size_t bytes = 0;
    if (__builtin_mul_overflow(count, size, &bytes)) {
        errno = ENOMEM;
        return nullptr;
    }
    return NW_MALLOC_NAME(realloc)(p, bytes);
}

NW_EXPORT void* NW_MALLOC_NAME(memalign)(std::size_t alignment, std::size_t bytes) {
    void* p = aligned_or_null(alignment, bytes);
    if (p == nullptr && errno != EINVAL) errno = ENOMEM;
    return p;
}

NW_EXPORT int NW_MALLOC_NAME(posix_memalign)(void** out, std::size_t alignment, std::size_t bytes) {
    if (alignment < sizeof(void*) || (alignment & (alignment - 1)) != 0) return EINVAL;
    void* p = aligned_or_null(alignment, bytes);
    if (p == nullptr) return ENOMEM;
    *out = p;
    return 0;
}

NW_EXPORT void* NW_MALLOC_NAME(aligned_alloc)(std::size_t alignment, std::size_t bytes) {
    return NW_MALLOC_NAME(memalign)(alignment, bytes);
}

NW_EXPORT void* NW_MALLOC_NAME(valloc)(std::size_t bytes) { return NW_MALLOC_NAME(memalign)(page_size(), bytes); }

NW_EXPORT void* NW_MALLOC_NAME(pvalloc)(std::size_t bytes) {
    const std::size_t page = page_size();
    std::size_t rounded = 0;
    if (__builtin_add_overflow(bytes, page - 1, &rounded)) {
        errno = ENOMEM;
        return nullptr;
    }
    rounded &= ~(page - 1);
    return NW_MALLOC_NAME(memalign)(page, rounded == 0 ? page : rounded);
}

NW_EXPORT std::size_t NW_MALLOC_NAME(malloc_usable_size)(void* p) {
    if (p == nullptr) return 0;
    if (h::detail::is_bootstrap(p)) return h::detail::bootstrap_size(p);
    return h::usable_size(p);
}

#ifndef NUMAWARE_MALLOC_PREFIXED
// ---- C++ operators: the same engine; new throws, nothrow returns null ----
#define NW_CXX_EXPORT __attribute__((visibility("default")))

NW_CXX_EXPORT void* operator new(std::size_t n) { return new_or_throw(n); }
NW_CXX_EXPORT void* operator new[](std::size_t n) { return new_or_throw(n); }
NW_CXX_EXPORT void* operator new(std::size_t n, const std::nothrow_t&) noexcept { return h::allocate_local(n); }
NW_CXX_EXPORT void* operator new[](std::size_t n, const std::nothrow_t&) noexcept { return h::allocate_local(n); }
NW_CXX_EXPORT void* operator new(std::size_t n, std::align_val_t al) { return aligned_new_or_throw(n, al); }
NW_CXX_EXPORT void* operator new[](std::size_t n, std::align_val_t al) { return aligned_new_or_throw(n, al); }
NW_CXX_EXPORT void* operator new(std::size_t n, std::align_val_t al, const std::nothrow_t&) noexcept {
    return h::allocate_local_aligned(n, static_cast<std::size_t>(al));
}
NW_CXX_EXPORT void* operator new[](std::size_t n, std::align_val_t al, const std::nothrow_t&) noexcept {
    return h::allocate_local_aligned(n, static_cast<std::size_t>(al));
}

NW_CXX_EXPORT void operator delete(void* p) noexcept { h::detail::fast_deallocate(p); }
NW_CXX_EXPORT void operator delete[](void* p) noexcept { h::deallocate(p); }
NW_CXX_EXPORT void operator delete(void* p, std::size_t) noexcept { h::detail::fast_deallocate(p); }
NW_CXX_EXPORT void operator delete[](void* p, std::size_t) noexcept { h::deallocate(p); }
NW_CXX_EXPORT void operator delete(void* p, const std::nothrow_t&) noexcept { h::deallocate(p); }
NW_CXX_EXPORT void operator delete[](void* p, const std::nothrow_t&) noexcept { h::deallocate(p); }
NW_CXX_EXPORT void operator delete(void* p, std::align_val_t) noexcept { h::deallocate(p); }
NW_CXX_EXPORT void operator delete[](void* p, std::align_val_t) noexcept { h::deallocate(p); }
NW_CXX_EXPORT void operator delete(void* p, std::size_t, std::align_val_t) noexcept { h::deallocate(p); }
NW_CXX_EXPORT void operator delete[](void* p, std::size_t, std::align_val_t) noexcept { h::deallocate(p); }
NW_CXX_EXPORT void operator delete(void* p, std::align_val_t, const std::nothrow_t&) noexcept { h::deallocate(p); }
NW_CXX_EXPORT void operator delete[](void* p, std::align_val_t, const std::nothrow_t&) noexcept { h::deallocate(p); }
#endif

// One line on stderr, once (internal.hpp): malloc goes on with memory that
// the kernel places where it is first touched. No allocation: write(2) of
// fixed text.
void numaware::heap::detail::binding_refused_notice(int err) noexcept {
    static constexpr char eperm[] =
        "numaware-malloc: binding memory to NUMA nodes is refused (EPERM: a seccomp profile without "
        "CAP_SYS_NICE, as containers have by default); memory is placed where it is first touched\n";
    static constexpr char enosys[] =
        "numaware-malloc: binding memory to NUMA nodes is not supported (ENOSYS); memory is placed where it is "
        "first touched\n";
    const bool none = err == ENOSYS;
    const int saved = errno;
    const ssize_t written = ::write(2, none ? enosys : eperm, none ? sizeof enosys - 1 : sizeof eperm - 1);
    (void)written;
    errno = saved;
}
