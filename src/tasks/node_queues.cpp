// tasks/node_queues.cpp — setting up the queues, and the sleepers' last look.
#include "tasks/node_queues.hpp"

namespace numaware::tasks::detail {

void NodeQueues::init(const std::vector<unsigned>& nodes, std::size_t workers) {
    node_slot_.assign(nodes.empty() ? 0 : nodes.back() + 1, -1);
    for (std::size_t i = 0; i < nodes.size(); ++i) {
        node_slot_[nodes[i]] = static_cast<int>(i);
        node_queues_.push_back(std::make_unique<QueueSlot>());
    }
    for (std::size_t w = 0; w < workers; ++w) worker_queues_.push_back(std::make_unique<QueueSlot>());
}

bool NodeQueues::any_queued() const {
    for (const auto& q : worker_queues_)
        if (!q->queue.empty()) return true;
    for (const auto& q : node_queues_)
        if (!q->queue.empty()) return true;
    return false;
}

}  // namespace numaware::tasks::detail
