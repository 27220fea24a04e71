// tasks/partition_service.hpp — runs a policy's partition jobs (RIP-DEP,
// RIP-MW) one at a time on a background thread of its own, started at the
// first job, so partitioning overlaps the tasks that execute meanwhile.
//
// The service only runs jobs. What a finished job releases is the
// executor's business: it gets each job back through `JobDone`, on the
// service's thread, and routes the released tasks like any ready task.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>

#include "numaware/task_policy.hpp"

#pragma GCC visibility push(hidden)   // library-internal: see executor.hpp

namespace numaware::tasks::detail {

class PartitionService {
public:
    // After a job ran: the job, what its run() threw (or null), and its
    // start and end ticks. Must call settled() once it has taken the job's
    // results.
    using JobDone = std::function<void(std::unique_ptr<PartitionJob> job, std::exception_ptr error,
                                       std::uint64_t start, std::uint64_t end)>;

    explicit PartitionService(JobDone done) : done_(std::move(done)) {}
    ~PartitionService() { stop(); }
    PartitionService(const PartitionService&) = delete;
    PartitionService& operator=(const PartitionService&) = delete;

    // Queues a job; it counts as outstanding until settled().
    void submit(std::unique_ptr<PartitionJob> job);
    // A job's results are taken (called from JobDone, under the lock that
    // guards the policy, so waiters that see no job out also see them).
    void settled() { out_.fetch_sub(1, std::memory_order_release); }
    // Jobs submitted and not yet settled.
    std::uint64_t outstanding(std::memory_order order = std::memory_order_acquire) const { return out_.load(order); }
    // Stops the thread once the queue is empty (queued jobs still run)
    // and joins it. Idempotent.
    void stop();

private:
    void main();

    JobDone done_;
    std::atomic<std::uint64_t> out_{0};   // taken and not yet finished
    std::mutex mutex_;
    std::condition_variable cv_;
    std::deque<std::unique_ptr<PartitionJob>> jobs_;
    bool stop_ = false;
    std::thread thread_;
};

}  // namespace numaware::tasks::detail

#pragma GCC visibility pop
