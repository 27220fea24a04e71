// tasks/node_queues.cpp — the sleepers' last look at the queues.
#include "tasks/node_queues.hpp"

namespace numaware::tasks::detail {

bool NodeQueues::any_queued() const {
    for (const auto& q : worker_queues_)
        if (!q->queue.empty()) return true;
    for (const auto& q : node_queues_)
        if (!q->queue.empty()) return true;
    for (const auto& q : kept_queues_)
        if (!q->queue.empty()) return true;
    return false;
}

}  // namespace numaware::tasks::detail
