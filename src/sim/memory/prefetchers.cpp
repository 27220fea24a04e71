// sim/memory/prefetchers.cpp — prefetcher modules and the spec parser.
#include "sim/memory/prefetchers.hpp"

#include <charconv>
#include <string>
#include <vector>

#include <fmt/core.h>

#include "numaware/error.hpp"

namespace numaware::sim::memory {

namespace {

constexpr unsigned max_spec_degree = 256;

std::vector<std::string_view> split(std::string_view s, char sep) {
    std::vector<std::string_view> out;
    for (;;) {
        const std::size_t i = s.find(sep);
        out.push_back(s.substr(0, i));
        if (i == std::string_view::npos) return out;
        s.remove_prefix(i + 1);
    }
}

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
    } else if (kind == "nasp" || kind == "multilevel") {
        arity(3, kind == "nasp" ? "nasp:K_L1:K_REM" : "multilevel:K_L1:K");
        s.kind = kind == "nasp" ? PrefetchKind::nasp : PrefetchKind::multilevel;
        s.l1_degree = parse_degree(f[1], text, "k^L1", 0);
        s.far_degree = parse_degree(f[2], text, kind == "nasp" ? "k_rem" : "k", 1);
        if (s.far_degree < s.l1_degree)
            throw Error("prefetch", fmt::format("'{}': {} must be >= k^L1 ({} < {})", text,
                                                kind == "nasp" ? "k_rem" : "k", s.far_degree, s.l1_degree));
    } else {
        throw Error("prefetch",
                    fmt::format("unknown prefetcher '{}'; known: none, next-line, stride:K, nasp:K_L1:K_REM, "
                                "multilevel:K_L1:K",
                                text));
    }
    return s;
}

namespace detail {

std::int64_t StrideTable::observe(std::uint64_t pc, std::uint64_t line) {
    Entry* set = &table_[(pc * 0x9E3779B97F4A7C15ull >> 60) * ways];
    ++clock_;
    Entry* e = nullptr;
    Entry* victim = set;
    for (unsigned w = 0; w < ways; ++w) {
        if (set[w].used != 0 && set[w].pc == pc) e = &set[w];
        if (set[w].used < victim->used) victim = &set[w];
    }
    if (e == nullptr) {
        *victim = Entry{pc, line, 0, conf_start, clock_};
        return 0;
    }
    e->used = clock_;
    const std::int64_t d = static_cast<std::int64_t>(line - e->last_line);
    if (d == 0) return 0;   // the same line again: nothing new to predict
    if (d == e->stride) {
        if (e->conf < conf_max) ++e->conf;
    } else {
        if (e->conf > 0) --e->conf;
        if (e->conf < conf_threshold) e->stride = d;
    }
    e->last_line = line;
    return e->conf >= conf_threshold && e->stride != 0 ? e->stride : 0;
}

namespace {

class NoPrefetch final : public Prefetcher {
public:
    void on_access(const Trigger&, std::vector<Prediction>&) override {}
};

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

// Stride predictions of orders 1..far: order <= near goes to the L1; the
// rest to `far_target` (none: stride k, where far == near).
class StridePrefetcher final : public Prefetcher {
public:
    StridePrefetcher(unsigned near, unsigned far, Target far_target) : near_(near), far_(far), far_target_(far_target) {}
    void on_access(const Trigger& t, std::vector<Prediction>& out) override {
        const std::int64_t s = table_.observe(t.pc, t.line);
        if (s == 0) return;
        for (unsigned i = 1; i <= far_; ++i)
            out.push_back({t.line + static_cast<std::uint64_t>(s * static_cast<std::int64_t>(i)),
                           i <= near_ ? Target::l1 : far_target_});
    }

private:
    StrideTable table_;
    unsigned near_, far_;
    Target far_target_;
};

}  // namespace

std::unique_ptr<Prefetcher> make_prefetcher(const PrefetchSpec& spec) {
    switch (spec.kind) {
        case PrefetchKind::none: return std::make_unique<NoPrefetch>();
        case PrefetchKind::next_line: return std::make_unique<NextLine>();
        case PrefetchKind::stride:
            return std::make_unique<StridePrefetcher>(spec.l1_degree, spec.l1_degree, Target::l1);
        case PrefetchKind::nasp:
            return std::make_unique<StridePrefetcher>(spec.l1_degree, spec.far_degree, Target::l3_if_remote);
        case PrefetchKind::multilevel:
            return std::make_unique<StridePrefetcher>(spec.l1_degree, spec.far_degree, Target::l3);
    }
    return std::make_unique<NoPrefetch>();
}

}  // namespace detail
}  // namespace numaware::sim::memory
