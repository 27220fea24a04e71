// util/small_vec.hpp — a vector of trivially copyable values with room for
// a few inline (header-only; every layer may use it).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <new>
#include <span>
#include <type_traits>
#include <utility>

namespace numaware {

// A vector of trivially copyable values with room for N inline, which are
// not initialised until used: a task's few dependencies, edges and
// successors (the task runtime) or an OpenMP task's dependences (the shim)
// need no allocation of their own.
// Capacity is kept by clear(), so pooled tasks reach a steady state.
template <class T, std::size_t N>
class SmallVec {
    static_assert(std::is_trivially_copyable_v<T>);

public:
    SmallVec() = default;
    SmallVec(const SmallVec&) = delete;
    SmallVec& operator=(const SmallVec&) = delete;
    ~SmallVec() {
        if (data_ != inline_data()) std::free(data_);
    }

    std::size_t size() const { return size_; }
    bool empty() const { return size_ == 0; }
    void clear() { size_ = 0; }
    T* data() { return data_; }
    const T* data() const { return data_; }
    T* begin() { return data_; }
    T* end() { return data_ + size_; }
    const T* begin() const { return data_; }
    const T* end() const { return data_ + size_; }
    T& operator[](std::size_t i) { return data_[i]; }
    const T& operator[](std::size_t i) const { return data_[i]; }
    T& back() { return data_[size_ - 1]; }
    const T& back() const { return data_[size_ - 1]; }
    void pop_back() { --size_; }
    void push_back(const T& v) {
        if (size_ == capacity_) grow(std::size_t{capacity_} * 2);
        data_[size_++] = v;
    }
    // Made in place, from T's members in order (an aggregate's braces):
    // no copy of it is made first and read back.
    template <class... A>
    T& emplace_back(A&&... a) {
        if (size_ == capacity_) grow(std::size_t{capacity_} * 2);
        return *::new (static_cast<void*>(data_ + size_++)) T{std::forward<A>(a)...};
    }
    void resize(std::size_t n) {
        if (n > capacity_) grow(n);
        for (std::size_t i = size_; i < n; ++i) ::new (static_cast<void*>(data_ + i)) T();
        size_ = static_cast<std::uint32_t>(n);
    }
    operator std::span<const T>() const { return {data_, size_}; }   // NOLINT: implicit by design

private:
    T* inline_data() { return std::launder(reinterpret_cast<T*>(inline_)); }
    void grow(std::size_t cap) {
        T* bigger = static_cast<T*>(std::malloc(cap * sizeof(T)));
        if (bigger == nullptr) throw std::bad_alloc();
        if (size_ > 0) std::memcpy(static_cast<void*>(bigger), static_cast<const void*>(data_), size_ * sizeof(T));
        if (data_ != inline_data()) std::free(data_);
        data_ = bigger;
        capacity_ = static_cast<std::uint32_t>(cap);
    }
    // The header first: a task's vectors' sizes share its first cache lines.
    T* data_ = inline_data();
    std::uint32_t size_ = 0;
    std::uint32_t capacity_ = N;
    alignas(T) unsigned char inline_[N * sizeof(T)];
};

}  // namespace numaware
