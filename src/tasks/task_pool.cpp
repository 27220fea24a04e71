// tasks/task_pool.cpp — the pool's slow paths: refilling and spilling a
// worker's cache, and tasks for threads that are no worker.
#include <mutex>

#include "tasks/task_pool.hpp"

namespace numaware::tasks::detail {

void TaskPool::refill(PoolCache& cache) {
    std::lock_guard lk(lock_);
    if (batches_ != nullptr) {
        Task* chain = batches_;
        batches_ = chain->next_batch;
        chain->next_batch = nullptr;
        cache.free = chain;
        cache.count = chain->batch_count;
        return;
    }
    for (std::size_t i = 0; i < refill_singles && free_ != nullptr; ++i) {
        Task* t = free_;
        free_ = t->next_free;
        t->next_free = cache.free;
        cache.free = t;
        ++cache.count;
    }
}

void TaskPool::spill(PoolCache& cache) {
    Task* chain = cache.free;
    chain->batch_count = cache.count;
    cache.free = nullptr;
    cache.count = 0;
    std::lock_guard lk(lock_);
    chain->next_batch = batches_;
    batches_ = chain;
}

Task* TaskPool::alloc_shared() {
    {
        std::lock_guard lk(lock_);
        if (free_ != nullptr) {
            Task* t = free_;
            free_ = t->next_free;
            return t;
        }
        if (batches_ != nullptr) {
            Task* t = batches_;
            batches_ = t->next_batch;
            t->next_batch = nullptr;
            if (Task* rest = t->next_free) {
                rest->batch_count = t->batch_count - 1;
                rest->next_batch = batches_;
                batches_ = rest;
            }
            return t;
        }
    }
    // Tasks are made in chunks, not one allocation each.
    auto made = std::make_unique<Task[]>(chunk);
    Task* c = made.get();
    std::lock_guard lk(lock_);
    chunks_.push_back(std::move(made));
    for (std::size_t i = 1; i < chunk; ++i) {
        c[i].next_free = free_;
        free_ = &c[i];
    }
    return &c[0];
}

void TaskPool::give_back(Task* t) {
    std::lock_guard lk(lock_);
    t->next_free = free_;
    free_ = t;
}

}  // namespace numaware::tasks::detail
