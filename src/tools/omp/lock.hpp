// tools/omp/lock.hpp — the one lock of the OpenMP shim: a word that is 0
// when free and 1 when held, taken with a short spin and then a sleep on
// the word (a futex, through std::atomic::wait). It is exactly the 4 bytes
// of GCC's omp_lock_t, and it backs `critical` and `atomic` too.
#pragma once

#include <atomic>

namespace numaware::omp {

class Lock {
public:
    void lock() {
        for (unsigned i = 0;; ++i) {
            int expected = 0;
            if (held_.compare_exchange_weak(expected, 1, std::memory_order_acquire, std::memory_order_relaxed)) return;
            if (i < 200) {
#if defined(__x86_64__) || defined(__i386__)
                __builtin_ia32_pause();
#endif
            } else {
                held_.wait(1, std::memory_order_relaxed);
            }
        }
    }
    bool try_lock() {
        int expected = 0;
        return held_.compare_exchange_strong(expected, 1, std::memory_order_acquire, std::memory_order_relaxed);
    }
    void unlock() {
        held_.store(0, std::memory_order_release);
        held_.notify_one();
    }

private:
    std::atomic<int> held_{0};
};
static_assert(sizeof(Lock) == 4);

}  // namespace numaware::omp
