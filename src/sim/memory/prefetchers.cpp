// sim/memory/prefetchers.cpp — prefetcher modules and the spec parser.
#include "sim/memory/prefetchers.hpp"

#include <algorithm>
#include <bit>
#include <charconv>
#include <string>
#include <vector>

#include <fmt/core.h>

#include "numaware/error.hpp"
#include "util/text.hpp"

namespace numaware::sim::memory {

namespace {

constexpr unsigned max_spec_degree = 256;

unsigned parse_degree(std::string_view text, std::string_view spec, const char* field, unsigned min) {
    unsigned v = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (text.empty() || ec != std::errc() || end != text.data() + text.size() || v < min || v > max_spec_degree)
        throw Error("prefetch", fmt::format("'{}': {} must be an integer in {}..{}, got '{}'", spec, field, min,
                                            max_spec_degree, text));
    return v;
}

}  // namespace

PrefetchSpec parse_prefetch(std::string_view text) {
    PrefetchSpec s;
    s.text = std::string(text);
    const std::vector<std::string_view> f = split(text, ':');
    const std::string_view kind = f[0];
    const auto arity = [&](std::size_t n, const char* form) {
        if (f.size() != n) throw Error("prefetch", fmt::format("'{}': expected {}", text, form));
    };
    if (kind == "none") {
        arity(1, "none");
    } else if (kind == "next-line") {
        arity(1, "next-line");
        s.kind = PrefetchKind::next_line;
        s.l1_degree = 1;
    } else if (kind == "stride") {
        arity(2, "stride:K");
        s.kind = PrefetchKind::stride;
        s.l1_degree = parse_degree(f[1], text, "K", 1);
    } else if (kind == "nasp" || kind == "multilevel" || kind == "na-ampm") {
        const char* far = kind == "multilevel" ? "k" : "k_rem";
        arity(3, kind == "nasp" ? "nasp:K_L1:K_REM" : (kind == "multilevel" ? "multilevel:K_L1:K" : "na-ampm:K_L1:K_REM"));
        s.kind = kind == "nasp" ? PrefetchKind::nasp : (kind == "multilevel" ? PrefetchKind::multilevel : PrefetchKind::na_ampm);
        s.l1_degree = parse_degree(f[1], text, "k^L1", 0);
        s.far_degree = parse_degree(f[2], text, far, 1);
        if (s.far_degree < s.l1_degree)
            throw Error("prefetch", fmt::format("'{}': {} must be >= k^L1 ({} < {})", text, far, s.far_degree,
                                                s.l1_degree));
    } else if (kind == "ampm") {
        arity(1, "ampm");
        s.kind = PrefetchKind::ampm;
        s.l1_degree = detail::ampm_max_degree;
    } else if (kind == "bop") {
        arity(1, "bop");
        s.kind = PrefetchKind::bop;
        s.l2_degree = 1;
    } else if (kind == "intel") {
        arity(2, "intel:MASK");
        const std::string_view m = f[1];
        if (m.size() != 4 || m.find_first_not_of("01") != std::string_view::npos)
            throw Error("prefetch", fmt::format("'{}': MASK must be four 0/1 digits (IP-stride, next-line, adjacent "
                                                "line, streamer), got '{}'",
                                                text, m));
        s.kind = PrefetchKind::intel;
        for (unsigned b = 0; b < 4; ++b)
            if (m[b] == '1') s.intel_mask |= 1u << b;
        s.l1_degree = (s.intel_mask & 1u ? 1 : 0) + (s.intel_mask & 2u ? 1 : 0);
        s.l2_degree = (s.intel_mask & 4u ? 1 : 0) + (s.intel_mask & 8u ? detail::streamer_degree : 0);
    } else {
        throw Error("prefetch",
                    fmt::format("unknown prefetcher '{}'; known: none, next-line, stride:K, nasp:K_L1:K_REM, "
                                "multilevel:K_L1:K, ampm, na-ampm:K_L1:K_REM, bop, intel:MASK",
                                text));
    }
    return s;
}

namespace detail {

namespace {

// The next line into the L1, on every access to a new line.
class NextLine final : public Prefetcher {
public:
    void on_access(const Trigger& t, std::vector<Prediction>& out) override {
        if (t.line == last_) return;
        last_ = t.line;
        out.push_back({t.line + 1, Target::l1});
    }

private:
    std::uint64_t last_ = ~std::uint64_t{0};
};



// ---- AMPM ------------------------------------------------------------------
// Access map pattern matching (Ishii, Inaba and Hiraki, ICS 2009): per hot
// zone a map of which lines were accessed or prefetched; on an access to
// line L, every stride k with L-k and L-2k accessed makes L+k a candidate
// (and L+k, L+2k accessed make L-k one), nearest k first, lines already
// accessed or prefetched excluded. Zones 2 KiB, a map table of 256 entries
// 8-way (LRU), degree from 4: the published defaults. The degree adapts
// every 256 accesses on the accuracy (prefetched lines used / predictions)
// and coverage (used / (used + misses)) it observed: doubled (at most
// ampm_max_degree) when accuracy >= 0.75 and coverage < 0.75, halved (at
// least 1) when accuracy < 0.5. That rule is ours: the paper adapts on the
// same two ratios but its thresholds are not given here.
class Ampm final : public Prefetcher {
public:
    // AMPM: `near` = 0 means the adaptive degree, all to the L1. NA-AMPM:
    // the first `near` candidates to the L1, up to `far` to the L3 if remote.
    Ampm(bool split, unsigned near, unsigned far) : split_(split), near_(near), far_(far) {}
    void on_access(const Trigger& t, std::vector<Prediction>& out) override {
        const std::uint64_t zone = t.line / zone_lines;
        const unsigned off = static_cast<unsigned>(t.line % zone_lines);
        Zone& z = zone_for(zone);
        if (t.prefetch_hit) ++useful_;
        if (!t.hit) ++misses_;
        z.state[off] = accessed;
        const unsigned limit = split_ ? far_ : degree_;
        unsigned emitted = 0;
        for (unsigned k = 1; k < zone_lines && emitted < limit; ++k) {
            for (int dir : {1, -1}) {
                if (emitted >= limit) break;
                const int target = static_cast<int>(off) + dir * static_cast<int>(k);
                const int back1 = static_cast<int>(off) - dir * static_cast<int>(k);
                const int back2 = static_cast<int>(off) - 2 * dir * static_cast<int>(k);
                if (target < 0 || target >= static_cast<int>(zone_lines)) continue;
                if (back1 < 0 || back1 >= static_cast<int>(zone_lines) || back2 < 0 ||
                    back2 >= static_cast<int>(zone_lines))
                    continue;
                if (z.state[back1] != accessed || z.state[back2] != accessed || z.state[target] != untouched) continue;
                z.state[target] = prefetched;
                const std::uint64_t line = zone * zone_lines + static_cast<std::uint64_t>(target);
                ++emitted;
                Target where = Target::l1;
                if (split_) where = emitted <= near_ ? Target::l1 : Target::l3_if_remote;
                out.push_back({line, where});
            }
        }
        issued_ += emitted;
        if (!split_ && ++triggers_ == epoch) adapt();
    }
    unsigned degree() const { return degree_; }

private:
    static constexpr unsigned zone_lines = 32;   // 2 KiB of 64 B lines
    static constexpr unsigned sets = 32, ways = 8;
    static constexpr std::uint8_t untouched = 0, accessed = 1, prefetched = 2;
    static constexpr std::uint64_t epoch = 256;
    struct Zone {
        std::uint64_t zone = 0;
        std::uint64_t used = 0;   // 0: empty
        std::array<std::uint8_t, zone_lines> state{};
    };
    Zone& zone_for(std::uint64_t zone) {
        Zone* set = &table_[(zone % sets) * ways];
        ++clock_;
        Zone* victim = set;
        for (unsigned w = 0; w < ways; ++w) {
            if (set[w].used != 0 && set[w].zone == zone) {
                set[w].used = clock_;
                return set[w];
            }
            if (set[w].used < victim->used) victim = &set[w];
        }
        *victim = Zone{zone, clock_, {}};
        return *victim;
    }
    void adapt() {
        const double accuracy = issued_ == 0 ? 1.0 : static_cast<double>(useful_) / static_cast<double>(issued_);
        const double coverage = useful_ + misses_ == 0 ? 1.0 : static_cast<double>(useful_) / static_cast<double>(useful_ + misses_);
        if (accuracy >= 0.75 && coverage < 0.75) degree_ = std::min(degree_ * 2, ampm_max_degree);
        else if (accuracy < 0.5) degree_ = std::max(degree_ / 2, 1u);
        triggers_ = useful_ = misses_ = issued_ = 0;
    }
    bool split_;
    unsigned near_, far_;
    unsigned degree_ = 4;
    std::uint64_t triggers_ = 0, useful_ = 0, misses_ = 0, issued_ = 0;
    std::array<Zone, sets * ways> table_{};
    std::uint64_t clock_ = 0;
};

// ---- best offset ---------------------------------------------------------------
// Michaud's best-offset prefetcher (HPCA 2016), at the L2: on every L2 miss
// or first hit on a prefetched line X, it tests one offset d of its list
// (round robin): if X - d is in the recent-requests table, d scores. A
// learning phase ends when a score reaches score_max (31) or after
// round_max (100) rounds over the list; the best offset becomes D, and
// prefetching turns off when its score is at most bad_score (1). It
// prefetches X + D into the L2. The recent-requests table (256 entries,
// direct-mapped) receives Y - D when the prefetch of Y completes (so an
// offset scores only if it would have been timely), or X itself while
// prefetching is off. Parameters: the paper's.
class BestOffset final : public Prefetcher {
public:
    BestOffset() : offsets_(best_offset_list()), scores_(offsets_.size(), 0) {}
    Level level() const override { return Level::l2; }
    void on_access(const Trigger& t, std::vector<Prediction>& out) override {
        while (!pending_.empty() && pending_.front().first <= t.now) {
            rr_insert(pending_.front().second);
            pending_.pop_front();
        }
        if (t.hit && !t.prefetch_hit) return;
        learn(t.line);
        if (on_) out.push_back({t.line + offset_, Target::l2});
        else rr_insert(t.line);
    }
    void on_issued(std::uint64_t line, double ready) override {
        pending_.emplace_back(ready, line - offset_);
        if (pending_.size() > 1024) pending_.pop_front();   // a bound; never reached at queue sizes used
    }

private:
    static constexpr unsigned rr_entries = 256, score_max = 31, round_max = 100, bad_score = 1;
    void rr_insert(std::uint64_t line) { rr_[line % rr_entries] = line + 1; }
    bool rr_has(std::uint64_t line) const { return rr_[line % rr_entries] == line + 1; }
    void learn(std::uint64_t x) {
        const unsigned d = offsets_[test_];
        if (x > d && rr_has(x - d) && ++scores_[test_] >= score_max) return end_phase();
        if (++test_ == offsets_.size()) {
            test_ = 0;
            if (++round_ >= round_max) end_phase();
        }
    }
    void end_phase() {
        std::size_t best = 0;
        for (std::size_t i = 1; i < scores_.size(); ++i)
            if (scores_[i] > scores_[best]) best = i;
        offset_ = offsets_[best];
        on_ = scores_[best] > bad_score;
        std::fill(scores_.begin(), scores_.end(), 0u);
        round_ = 0;
        test_ = 0;
    }
    std::vector<unsigned> offsets_;
    std::vector<unsigned> scores_;
    std::size_t test_ = 0;
    unsigned round_ = 0;
    unsigned offset_ = 1;
    bool on_ = true;
    std::array<std::uint64_t, rr_entries> rr_{};
    std::deque<std::pair<double, std::uint64_t>> pending_;
};

// ---- the Intel-like set -----------------------------------------------------------
// The four prefetchers the Intel Optimization Reference Manual describes for
// Sandy Bridge and later cores, each switchable as by MSR 0x1A4:
//   L1 IP-stride: per load PC, a confident stride predicts the next one line;
//   L1 next-line (DCU): an ascending access to a new line fetches the next line;
//   L2 adjacent line (spatial): an L2 access fetches the other line of its
//     128-byte-aligned pair;
//   L2 streamer: per 4 KiB page, after two accesses in one direction it runs
//     ahead, streamer_degree lines per access, at most streamer_distance
//     lines ahead of the access, never across the page.
class IpStride final : public Prefetcher {
public:
    void on_access(const Trigger& t, std::vector<Prediction>& out) override {
        const std::int64_t s = table_.observe(t.pc, t.line);
        if (s != 0) out.push_back({t.line + static_cast<std::uint64_t>(s), Target::l1});
    }

private:
    StrideTable table_;
};

class AscendingNextLine final : public Prefetcher {
public:
    void on_access(const Trigger& t, std::vector<Prediction>& out) override {
        if (t.line == last_) return;
        const bool ascending = t.line == last_ + 1;
        last_ = t.line;
        if (ascending) out.push_back({t.line + 1, Target::l1});
    }

private:
    std::uint64_t last_ = ~std::uint64_t{0} - 1;
};

class AdjacentLine final : public Prefetcher {
public:
    Level level() const override { return Level::l2; }
    void on_access(const Trigger& t, std::vector<Prediction>& out) override { out.push_back({t.line ^ 1u, Target::l2}); }
};

class Streamer final : public Prefetcher {
public:
    explicit Streamer(unsigned lines_per_page) : lines_per_page_(lines_per_page) {}
    Level level() const override { return Level::l2; }
    void on_access(const Trigger& t, std::vector<Prediction>& out) override {
        const std::uint64_t page = t.line / lines_per_page_;
        Stream& s = streams_[page % streams_.size()];
        if (s.page != page + 1) {
            s = Stream{page + 1, t.line, 0, t.line};
            return;
        }
        const int dir = t.line > s.last ? 1 : (t.line < s.last ? -1 : 0);
        if (dir == 0) return;
        s.dir = dir == s.dir || s.dir == 0 ? dir : 0;
        s.last = t.line;
        if (s.dir == 0) return;
        // Run ahead: from past the furthest line issued, up to the distance.
        const std::uint64_t first = page * lines_per_page_, end = first + lines_per_page_;
        std::int64_t next = static_cast<std::int64_t>(s.dir > 0 ? std::max(s.ahead, t.line) : std::min(s.ahead, t.line)) + s.dir;
        for (unsigned k = 0; k < streamer_degree; ++k, next += s.dir) {
            if (next < static_cast<std::int64_t>(first) || next >= static_cast<std::int64_t>(end)) break;
            const std::int64_t dist = s.dir * (next - static_cast<std::int64_t>(t.line));
            if (dist > static_cast<std::int64_t>(streamer_distance)) break;
            out.push_back({static_cast<std::uint64_t>(next), Target::l2});
            s.ahead = static_cast<std::uint64_t>(next);
        }
    }

private:
    struct Stream {
        std::uint64_t page = 0;   // page + 1; 0: empty
        std::uint64_t last = 0;
        int dir = 0;
        std::uint64_t ahead = 0;  // the furthest line issued
    };
    unsigned lines_per_page_;
    std::array<Stream, 32> streams_{};
};

}  // namespace

std::vector<unsigned> best_offset_list() {
    std::vector<unsigned> v;
    for (unsigned n = 1; n <= 256; ++n) {
        unsigned m = n;
        for (unsigned f : {2u, 3u, 5u})
            while (m % f == 0) m /= f;
        if (m == 1) v.push_back(n);
    }
    return v;
}

std::vector<std::unique_ptr<Prefetcher>> make_prefetchers(const PrefetchSpec& spec, unsigned lines_per_page) {
    std::vector<std::unique_ptr<Prefetcher>> v;
    switch (spec.kind) {
        case PrefetchKind::none: break;
        case PrefetchKind::next_line: v.push_back(std::make_unique<NextLine>()); break;
        case PrefetchKind::stride:
            v.push_back(std::make_unique<StridePrefetcher>(spec.l1_degree, spec.l1_degree, Target::l1));
            break;
        case PrefetchKind::nasp:
            v.push_back(std::make_unique<StridePrefetcher>(spec.l1_degree, spec.far_degree, Target::l3_if_remote));
            break;
        case PrefetchKind::multilevel:
            v.push_back(std::make_unique<StridePrefetcher>(spec.l1_degree, spec.far_degree, Target::l3));
            break;
        case PrefetchKind::ampm: v.push_back(std::make_unique<Ampm>(false, 0, 0)); break;
        case PrefetchKind::na_ampm: v.push_back(std::make_unique<Ampm>(true, spec.l1_degree, spec.far_degree)); break;
        case PrefetchKind::bop: v.push_back(std::make_unique<BestOffset>()); break;
        case PrefetchKind::intel:
            if (spec.intel_mask & 1u) v.push_back(std::make_unique<IpStride>());
            if (spec.intel_mask & 2u) v.push_back(std::make_unique<AscendingNextLine>());
            if (spec.intel_mask & 4u) v.push_back(std::make_unique<AdjacentLine>());
            if (spec.intel_mask & 8u) v.push_back(std::make_unique<Streamer>(lines_per_page));
            break;
    }
    return v;
}

}  // namespace detail
}  // namespace numaware::sim::memory
