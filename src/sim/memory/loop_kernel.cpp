// sim/memory/loop_kernel.cpp — static partitioning, segment streams and
// the phases of a LoopKernel.
#include "sim/memory/loop_kernel.hpp"

#include <algorithm>
#include <memory>

namespace numaware::sim::memory::detail {

void AccessBuffer::grow() {
    const std::size_t capacity = std::max<std::size_t>(256, 2 * capacity_);
    auto data = std::make_unique_for_overwrite<Access[]>(capacity);
    std::copy_n(data_.get(), size_, data.get());
    data_ = std::move(data);
    capacity_ = capacity;
}

Range static_block(std::uint64_t n, unsigned threads, unsigned rank) {
    const std::uint64_t q = n / threads, rem = n % threads;
    const std::uint64_t begin = rank * q + std::min<std::uint64_t>(rank, rem);
    return {begin, begin + q + (rank < rem ? 1 : 0)};
}

Range interior_block(std::uint64_t planes, unsigned threads, unsigned rank) {
    const Range r = static_block(planes < 2 ? 0 : planes - 2, threads, rank);
    return {r.begin + 1, r.end + 1};
}

Range owner_block(std::uint64_t planes, unsigned threads, unsigned rank) {
    Range r = interior_block(planes, threads, rank);
    if (r.empty()) return {0, 0};
    if (r.begin == 1) r.begin = 0;
    if (r.end == planes - 1) r.end = planes;
    return r;
}

Share fill_bytes(std::uint64_t begin, std::uint64_t end, std::uint32_t pc) {
    if (end <= begin) return {};
    const std::uint64_t first = begin / fill_line_bytes, last = (end - 1) / fill_line_bytes;
    return each(Range{first, last + 1}, 256, [begin, end, pc](std::uint64_t line, Emitter& e) {
        fill_range(e, std::max(begin, line * fill_line_bytes), std::min(end, (line + 1) * fill_line_bytes), pc);
    });
}

void fill_range(Emitter& e, std::uint64_t begin, std::uint64_t end, std::uint32_t pc) {
    for (std::uint64_t b = begin; b < end;) {
        const std::uint64_t f = std::min(end, (b / fill_line_bytes + 1) * fill_line_bytes);
        e.store(b, pc, 1, static_cast<std::uint8_t>(f - b));
        b = f;
    }
}

Share concat(std::vector<Share> parts) {
    auto kept = std::make_shared<std::vector<Share>>();
    std::vector<std::uint64_t> starts;   // the first segment of each kept part
    std::uint64_t total = 0;
    for (Share& s : parts)
        if (s.segments != 0) {
            starts.push_back(total);
            total += s.segments;
            kept->push_back(std::move(s));
        }
    if (total == 0) return {};
    return {total, [kept, starts](std::uint64_t seg, Emitter& e) {
                const std::size_t at =
                    static_cast<std::size_t>(std::upper_bound(starts.begin(), starts.end(), seg) - starts.begin()) - 1;
                (*kept)[at].emit(seg - starts[at], e);
            }};
}

namespace {

// Serves a share's accesses, filling its buffer one segment at a time.
class ShareStream final : public AccessStream {
public:
    explicit ShareStream(Share s) : share_(std::move(s)) {}
    std::size_t next(std::span<Access> out) override {
        std::size_t n = 0;
        while (n < out.size()) {
            const std::span<const Access> part = next_in_place(out.subspan(n));
            if (part.empty()) break;
            std::copy(part.begin(), part.end(), out.begin() + static_cast<std::ptrdiff_t>(n));
            n += part.size();
        }
        return n;
    }
    // The rest of the segment emitted last (the next one's when that is
    // used up), from the buffer itself.
    std::span<const Access> next_in_place(std::span<Access> scratch) override {
        while (pos_ == buf_.size()) {
            if (segment_ == share_.segments || scratch.empty()) return {};
            buf_.clear();
            pos_ = 0;
            Emitter e(buf_);
            share_.emit(segment_++, e);   // a segment may emit nothing
        }
        const std::size_t k = std::min(scratch.size(), buf_.size() - pos_);
        const std::span<const Access> part(buf_.data() + pos_, k);
        pos_ += k;
        return part;
    }

private:
    Share share_;
    std::uint64_t segment_ = 0;
    AccessBuffer buf_;
    std::size_t pos_ = 0;
};

}  // namespace

std::unique_ptr<AccessStream> share_stream(Share share) { return std::make_unique<ShareStream>(std::move(share)); }

std::vector<ThreadStream> LoopKernel::streams(unsigned phase, const HierarchyPreset&, const TeamLayout& layout) const {
    const Loop& loop = loops_.at(phase);
    const unsigned threads = static_cast<unsigned>(layout.size());
    std::vector<ThreadStream> v;
    v.reserve(threads);
    for (unsigned r = 0; r < threads; ++r) v.push_back({layout.ranks[r].cpu, share_stream(loop.share(r, threads))});
    return v;
}

void LoopKernel::add_loop(std::string name, bool measured, ShareOf share) {
    loops_.push_back({std::move(name), measured, std::move(share)});
}

}  // namespace numaware::sim::memory::detail
