// tools/omp/lock.hpp — the one lock of the OpenMP shim: a word, taken with
// a short spin and then a sleep on the word (futex.hpp). It is exactly the 4 bytes
// of GCC's omp_lock_t, and it backs `critical` and `atomic` too.
#pragma once

#include <atomic>

#include "tools/omp/futex.hpp"

namespace numaware::omp {

// The word is 0 when free, 1 when held, 2 when held and someone may sleep
// on it (so that an unlock without sleepers makes no system call).
class Lock {
public:
    void lock() {
        int c = 0;
        if (held_.compare_exchange_strong(c, 1, std::memory_order_acquire, std::memory_order_relaxed)) return;
        for (unsigned i = 0; i < 2000; ++i) {
#if defined(__x86_64__) || defined(__i386__)
            __builtin_ia32_pause();
#endif
            c = 0;
            if (held_.load(std::memory_order_relaxed) == 0 &&
                held_.compare_exchange_strong(c, 1, std::memory_order_acquire, std::memory_order_relaxed))
                return;
        }
        // Mark the lock contended, then sleep until it is free.
        c = held_.exchange(2, std::memory_order_acquire);
        while (c != 0) {
            futex_wait(held_, 2);
            c = held_.exchange(2, std::memory_order_acquire);
        }
    }
    bool try_lock() {
        int expected = 0;
        return held_.compare_exchange_strong(expected, 1, std::memory_order_acquire, std::memory_order_relaxed);
    }
    void unlock() {
        if (held_.exchange(0, std::memory_order_release) == 2) futex_wake(held_, 1);
    }

private:
    std::atomic<int> held_{0};
};
static_assert(sizeof(Lock) == 4);

}  // namespace numaware::omp
