// sim/ring.hpp — a double-ended queue in one growable power-of-two ring:
// the simulator's task queues and its lanes of first wake-ups. std::deque
// allocates in blocks and indexes through a map; this is one vector and a
// mask, which is what the event loop can afford per task.
#pragma once

#include <cstdint>
#include <vector>

namespace numaware::sim {

template <class T>
class Ring {
public:
    bool empty() const { return head_ == tail_; }
    std::size_t size() const { return static_cast<std::size_t>(tail_ - head_); }
    const T& front() const { return buf_[head_ & (buf_.size() - 1)]; }
    void push_back(const T& v) {
        if (tail_ - head_ == buf_.size()) grow();
        buf_[tail_++ & (buf_.size() - 1)] = v;
    }
    T pop_back() { return buf_[--tail_ & (buf_.size() - 1)]; }
    T pop_front() { return buf_[head_++ & (buf_.size() - 1)]; }

private:
    void grow() {
        std::vector<T> bigger(buf_.empty() ? 16 : buf_.size() * 2);
        for (std::uint64_t i = head_; i != tail_; ++i) bigger[i - head_] = buf_[i & (buf_.size() - 1)];
        tail_ -= head_;
        head_ = 0;
        buf_.swap(bigger);
    }
    std::vector<T> buf_;
    std::uint64_t head_ = 0, tail_ = 0;
};

}  // namespace numaware::sim
