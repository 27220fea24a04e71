// tasks/sync.hpp — small synchronisation pieces of the executor: a
// spinlock for queues, a lock that spins then sleeps for the scheduler,
// a tick clock and a task queue.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <thread>
#include <vector>

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#endif

namespace numaware::tasks::detail {

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
    _mm_pause();
#elif defined(__aarch64__)
    asm volatile("yield" ::: "memory");
#endif
}

// A sequentially consistent fence, for the store-buffering handshake of
// sleepers and pushers (Executor::wake_node). On x86 it is a locked OR on
// the thread's own stack: no shared line moves. ThreadSanitizer does not
// model fences (GCC warns, -Wtsan): nothing but atomics is read across
// this one, so there is no race for it to miss.
inline void full_fence() noexcept {
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wtsan"
    std::atomic_thread_fence(std::memory_order_seq_cst);
#pragma GCC diagnostic pop
}

// Test-and-test-and-set for the short critical sections of queues and the
// task pool: unlocking is a plain store. Yields only after a long spin
// (the holder was preempted), which is rare for these few instructions.
class SpinLock {
public:
    void lock() noexcept {
        if (!flag_.exchange(true, std::memory_order_acquire)) return;
        for (unsigned spins = 0;;) {
            while (flag_.load(std::memory_order_relaxed)) {
                if (++spins < 8192)
                    cpu_relax();
                else
                    std::this_thread::yield();
            }
            if (!flag_.exchange(true, std::memory_order_acquire)) return;
        }
    }
    bool try_lock() noexcept {
        return !flag_.load(std::memory_order_relaxed) && !flag_.exchange(true, std::memory_order_acquire);
    }
    void unlock() noexcept { flag_.store(false, std::memory_order_release); }

private:
    std::atomic<bool> flag_{false};
};

// The scheduler lock, held for longer (dependency tracking, policy calls):
// spins with pause, then backs off with short sleeps instead of calling
// sched_yield in a loop (a team may share its CPUs with the thread that
// spawns, and a yield storm costs the holder's CPU time on a loaded
// machine). Unlocking stays a plain store: an atomic exchange there (as a
// futex lock needs, to see sleepers) stalls the holder until every store
// of its critical section is done, which measured as a quarter of submit.
// The price is up to one sleep period of wake-up latency for a waiter that
// found the lock held for a long time.
class SleepLock {
public:
    void lock() noexcept {
        if (!flag_.exchange(true, std::memory_order_acquire)) return;
        lock_slow();
    }
    bool try_lock() noexcept {
        return !flag_.load(std::memory_order_relaxed) && !flag_.exchange(true, std::memory_order_acquire);
    }
    void unlock() noexcept { flag_.store(false, std::memory_order_release); }

private:
    static constexpr unsigned spin_limit = 8192;
    void lock_slow() noexcept {
        for (unsigned spins = 0;;) {
            while (flag_.load(std::memory_order_relaxed)) {
                if (++spins < spin_limit)
                    cpu_relax();
                else
                    std::this_thread::sleep_for(std::chrono::microseconds(20));
            }
            if (!flag_.exchange(true, std::memory_order_acquire)) return;
        }
    }
    std::atomic<bool> flag_{false};
};

// Cheap timestamps: the TSC on x86 (calibrated once against steady_clock),
// steady_clock nanoseconds elsewhere.
struct Ticks {
    static std::uint64_t now() noexcept {
#if defined(__x86_64__) || defined(__i386__)
        return __rdtsc();
#else
        return static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                              std::chrono::steady_clock::now().time_since_epoch())
                                              .count());
#endif
    }
    static double seconds_per_tick();   // calibrated on first call
};

// A ring-buffer deque of pointers under a spinlock. The owner pops at the
// back (newest first), everyone else at the front (oldest first). `size`
// may be read without the lock to skip empty queues.
template <class T>
class alignas(64) TaskQueue {
public:
    TaskQueue() : ring_(64) {}
    void push(T* t) {
        lock_.lock();
        if (count_ == ring_.size()) grow();
        ring_[(head_ + count_) & (ring_.size() - 1)] = t;
        ++count_;
        size_.store(count_, std::memory_order_release);
        lock_.unlock();
    }
    T* pop_front() {
        if (size_.load(std::memory_order_acquire) == 0) return nullptr;
        lock_.lock();
        T* t = nullptr;
        if (count_ > 0) {
            t = ring_[head_];
            head_ = (head_ + 1) & (ring_.size() - 1);
            --count_;
            size_.store(count_, std::memory_order_release);
        }
        lock_.unlock();
        return t;
    }
    T* pop_back() {
        if (size_.load(std::memory_order_acquire) == 0) return nullptr;
        lock_.lock();
        T* t = nullptr;
        if (count_ > 0) {
            --count_;
            t = ring_[(head_ + count_) & (ring_.size() - 1)];
            size_.store(count_, std::memory_order_release);
        }
        lock_.unlock();
        return t;
    }
    // The first task, from the back (the owner's end) or the front, that
    // `ok` accepts; the ones it passes stay in order. For a worker that
    // waits inside a task and may only run its descendants (Worker::helping_within).
    // The gap is closed from the nearer end, so taking the first or the
    // last task costs O(1) however long the queue (a waiting spawner
    // helping with a million queued children took each from the front
    // and moved all the others: quadratic).
    template <class Ok>
    T* pop_first_if(bool from_back, Ok ok) {
        if (size_.load(std::memory_order_acquire) == 0) return nullptr;
        lock_.lock();
        T* t = nullptr;
        const std::size_t mask = ring_.size() - 1;
        for (std::size_t k = 0; k < count_; ++k) {
            const std::size_t i = from_back ? count_ - 1 - k : k;   // position from the head
            if (!ok(ring_[(head_ + i) & mask])) continue;
            t = ring_[(head_ + i) & mask];
            if (i < count_ - 1 - i) {
                // Fewer before it: they move one place toward the back.
                for (std::size_t j = i; j > 0; --j) ring_[(head_ + j) & mask] = ring_[(head_ + j - 1) & mask];
                head_ = (head_ + 1) & mask;
            } else {
                for (std::size_t j = i; j + 1 < count_; ++j) ring_[(head_ + j) & mask] = ring_[(head_ + j + 1) & mask];
            }
            --count_;
            size_.store(count_, std::memory_order_release);
            break;
        }
        lock_.unlock();
        return t;
    }
    // Whether there is a first (oldest) task and `f` says true of it, under
    // the lock (it may read the task's fields).
    template <class F>
    bool front_is(F f) {
        if (size_.load(std::memory_order_acquire) == 0) return false;
        lock_.lock();
        const bool yes = count_ > 0 && f(static_cast<const T*>(ring_[head_]));
        lock_.unlock();
        return yes;
    }
    bool empty() const { return size_.load(std::memory_order_acquire) == 0; }
    std::size_t size() const { return size_.load(std::memory_order_acquire); }

private:
    void grow() {
        std::vector<T*> bigger(ring_.size() * 2);
        for (std::size_t i = 0; i < count_; ++i) bigger[i] = ring_[(head_ + i) & (ring_.size() - 1)];
        ring_.swap(bigger);
        head_ = 0;
    }
    SpinLock lock_;
    std::atomic<std::size_t> size_{0};
    std::vector<T*> ring_;   // capacity: a power of two
    std::size_t head_ = 0;
    std::size_t count_ = 0;
};

}  // namespace numaware::tasks::detail
