// tools/omp/futex.hpp — sleeping on a 32-bit word and waking its sleepers,
// straight through the futex system call. std::atomic::wait (GCC 12's
// libstdc++) yields a dozen times before it sleeps; with more threads than
// CPUs those yields cost a region 20 times libgomp's fork (BENCHMARKS.md),
// so the shim's waiters spin as they choose and then sleep here.
#pragma once

#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <climits>

namespace numaware::omp {

template <class T>
void futex_wait(std::atomic<T>& word, T expected) {
    static_assert(sizeof(T) == 4 && sizeof(std::atomic<T>) == 4);
    // Returns at once if the word no longer holds `expected` (EAGAIN), on a
    // wake, or spuriously: callers re-check the word.
    (void)syscall(SYS_futex, reinterpret_cast<T*>(&word), FUTEX_WAIT_PRIVATE, expected, nullptr, nullptr, 0);
}

template <class T>
void futex_wake(std::atomic<T>& word, int waiters) {
    static_assert(sizeof(T) == 4 && sizeof(std::atomic<T>) == 4);
    (void)syscall(SYS_futex, reinterpret_cast<T*>(&word), FUTEX_WAKE_PRIVATE, waiters, nullptr, nullptr, 0);
}

template <class T>
void futex_wake_all(std::atomic<T>& word) {
    futex_wake(word, INT_MAX);
}

}  // namespace numaware::omp
