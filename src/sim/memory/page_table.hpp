// sim/memory/page_table.hpp — a map from page numbers to small values, for
// the memory-hierarchy simulator's per-page state (the homes of
// hierarchy.cpp, the coherence directory's blocks). Open addressing with
// linear probing, at most half full; a page absent reads as the map's
// `absent` value.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace numaware::sim::memory::detail {

template <class V>
class PageTable {
public:
    explicit PageTable(V absent) : absent_(absent) {}
    V find(std::uint64_t page) const {
        if (keys_.empty()) return absent_;
        for (std::size_t i = slot(page);; i = (i + 1) & (keys_.size() - 1)) {
            if (keys_[i] == 0) return absent_;
            if (keys_[i] == page + 1) return values_[i];
        }
    }
    void set(std::uint64_t page, V value) { at(page) = value; }
    // The page's value, added as `absent` if it was not there.
    V& at(std::uint64_t page) {
        if ((count_ + 1) * 2 > keys_.size()) grow();
        std::size_t i = slot(page);
        while (keys_[i] != 0 && keys_[i] != page + 1) i = (i + 1) & (keys_.size() - 1);
        if (keys_[i] == 0) {
            keys_[i] = page + 1;
            values_[i] = absent_;
            ++count_;
        }
        return values_[i];
    }

private:
    std::size_t slot(std::uint64_t page) const {
        return static_cast<std::size_t>((page * 0x9E3779B97F4A7C15ull) >> shift_);
    }
    void grow() {
        std::vector<std::uint64_t> k;
        std::vector<V> v;
        k.swap(keys_);
        v.swap(values_);
        const std::size_t cap = k.empty() ? 1024 : k.size() * 2;
        keys_.assign(cap, 0);
        values_.assign(cap, absent_);
        shift_ = 64;
        for (std::size_t c = cap; c > 1; c /= 2) --shift_;
        count_ = 0;
        for (std::size_t i = 0; i < k.size(); ++i)
            if (k[i] != 0) set(k[i] - 1, v[i]);
    }
    V absent_;
    std::vector<std::uint64_t> keys_;   // page + 1; 0: empty
    std::vector<V> values_;
    std::size_t count_ = 0;
    unsigned shift_ = 64;
};

}  // namespace numaware::sim::memory::detail
