// tasks/partition_service.cpp — the partition jobs' background thread.
#include "tasks/partition_service.hpp"

#include "tasks/sync.hpp"

namespace numaware::tasks::detail {

void PartitionService::submit(std::unique_ptr<PartitionJob> job) {
    out_.fetch_add(1, std::memory_order_release);
    {
        std::lock_guard lk(mutex_);
        jobs_.push_back(std::move(job));
        if (!thread_.joinable()) thread_ = std::thread([this] { main(); });
    }
    cv_.notify_one();
}

void PartitionService::stop() {
    {
        std::lock_guard lk(mutex_);
        stop_ = true;
    }
    cv_.notify_all();
    if (thread_.joinable()) thread_.join();
}

void PartitionService::main() {
    std::unique_lock lk(mutex_);
    for (;;) {
        cv_.wait(lk, [&] { return stop_ || !jobs_.empty(); });
        if (jobs_.empty()) return;
        std::unique_ptr<PartitionJob> job = std::move(jobs_.front());
        jobs_.pop_front();
        lk.unlock();
        const std::uint64_t t0 = Ticks::now();
        std::exception_ptr error;
        try {
            job->run();
        } catch (...) {
            error = std::current_exception();
        }
        const std::uint64_t t1 = Ticks::now();
        done_(std::move(job), std::move(error), t0, t1);
        lk.lock();
    }
}

}  // namespace numaware::tasks::detail
