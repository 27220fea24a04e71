// sim/memory/trace_file.cpp — the trace readers (numaware's format and
// ChampSim's xz-compressed records) and TraceWorkload.
#include "sim/memory/trace_file.hpp"

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <span>

#include <fmt/core.h>
#include <lzma.h>

#include "numaware/error.hpp"

namespace numaware::sim::memory {

using namespace trace_format;

TraceFormat parse_trace_format(std::string_view text) {
    if (text == "auto") return TraceFormat::automatic;
    if (text == "numaware") return TraceFormat::numaware;
    if (text == "champsim") return TraceFormat::champsim;
    throw Error("--trace-format", fmt::format("unknown trace format '{}'; known: auto, numaware, champsim", text));
}

std::string_view trace_format_name(TraceFormat f) {
    switch (f) {
        case TraceFormat::automatic: return "auto";
        case TraceFormat::numaware: return "numaware";
        case TraceFormat::champsim: return "champsim";
    }
    return "?";
}

namespace {

constexpr std::array<unsigned char, 6> xz_magic = {0xFD, '7', 'z', 'X', 'Z', 0x00};

[[noreturn]] void fail(const std::string& path, const std::string& what) {
    throw Error("trace", fmt::format("'{}': {}", path, what));
}

std::uint32_t u32_at(const unsigned char* p) {
    return std::uint32_t{p[0]} | std::uint32_t{p[1]} << 8 | std::uint32_t{p[2]} << 16 | std::uint32_t{p[3]} << 24;
}

std::uint64_t u64_at(const unsigned char* p) { return std::uint64_t{u32_at(p)} | std::uint64_t{u32_at(p + 4)} << 32; }

std::string hex_bytes(const unsigned char* p, std::size_t n) {
    std::string s;
    for (std::size_t i = 0; i < n; ++i) s += fmt::format("{}{:02x}", i == 0 ? "" : " ", p[i]);
    return s;
}

// Opens `path` for reading; a missing or unreadable file names the path.
std::ifstream open_file(const std::string& path, std::uint64_t& size) {
    std::error_code ec;
    const auto st = std::filesystem::status(path, ec);
    if (ec || !std::filesystem::exists(st))
        fail(path, ec && ec != std::errc::no_such_file_or_directory ? fmt::format("cannot open: {}", ec.message())
                                                                     : std::string("cannot open: no such file"));
    if (std::filesystem::is_directory(st)) fail(path, "cannot open: is a directory");
    std::ifstream f(path, std::ios::binary);
    if (!f) fail(path, fmt::format("cannot open: {}", std::strerror(errno)));
    size = std::filesystem::file_size(path, ec);
    if (ec) fail(path, fmt::format("cannot read its size: {}", ec.message()));
    return f;
}

// Reads exactly n bytes at `offset` (the caller has checked the bounds).
void read_at(std::ifstream& f, const std::string& path, std::uint64_t offset, unsigned char* out, std::size_t n) {
    f.clear();
    f.seekg(static_cast<std::streamoff>(offset));
    f.read(reinterpret_cast<char*>(out), static_cast<std::streamsize>(n));
    if (static_cast<std::size_t>(f.gcount()) != n)
        fail(path, fmt::format("read failed at byte offset {} ({} of {} bytes; did the file change?)", offset,
                               f.gcount(), n));
}

struct Block {
    std::uint64_t offset = 0;   // of the block header
    std::uint32_t count = 0;    // records
    std::uint32_t bytes = 0;    // payload
};

}  // namespace

struct TraceWorkload::Index {
    TraceInfo info;
    std::vector<std::vector<std::vector<Block>>> blocks;   // numaware: [phase][thread]
};

namespace {

using Index = TraceWorkload::Index;

// ---- numaware's format -------------------------------------------------------

void validate_numaware(std::ifstream& f, Index& idx) {
    const std::string& path = idx.info.path;
    const std::uint64_t size = idx.info.file_bytes;
    unsigned char h[header_bytes] = {};
    const std::size_t have = static_cast<std::size_t>(std::min<std::uint64_t>(size, header_bytes));
    read_at(f, path, 0, h, have);
    const std::size_t magic_have = std::min<std::size_t>(have, sizeof magic);
    if (std::memcmp(h, magic, magic_have) != 0)
        fail(path, fmt::format("not a numaware trace: the magic at byte offset 0 is [{}], expected \"NWTRACE\\0\"",
                               hex_bytes(h, magic_have)));
    if (size < header_bytes)
        fail(path, fmt::format("truncated header: the file ends at byte offset {}, the header needs {} bytes", size,
                               header_bytes));
    if (const std::uint32_t v = u32_at(h + 8); v != version)
        fail(path, fmt::format("version {} at byte offset 8 is not supported (this reader reads version {})", v, version));
    if (const std::uint32_t v = u32_at(h + 12); v != header_bytes)
        fail(path, fmt::format("header size {} at byte offset 12, expected {}", v, header_bytes));
    if (const std::uint32_t v = u32_at(h + 16); v != arch_x86_64)
        fail(path, fmt::format("architecture {} at byte offset 16, expected {} (x86-64)", v, arch_x86_64));
    if (const std::uint32_t v = u32_at(h + 20); v != block_header_bytes)
        fail(path, fmt::format("block header size {} at byte offset 20, expected {}", v, block_header_bytes));
    for (unsigned i = 24; i < header_bytes; ++i)
        if (h[i] != 0) fail(path, fmt::format("reserved header byte at byte offset {} is not zero", i));

    TraceInfo& info = idx.info;
    std::vector<TracePhase> marked;   // phases started by marks
    std::uint64_t off = header_bytes, held = 0;
    unsigned threads = 0;
    bool ended = false;
    idx.blocks.assign(1, {});
    while (off < size) {
        if (ended) fail(path, fmt::format("data after the end block at byte offset {}", off));
        if (size - off < block_header_bytes)
            fail(path, fmt::format("truncated block header at byte offset {}: {} bytes needed, {} left", off,
                                   block_header_bytes, size - off));
        unsigned char b[block_header_bytes];
        read_at(f, path, off, b, block_header_bytes);
        const unsigned kind = b[0];
        const std::uint32_t thread = u32_at(b + 4), count = u32_at(b + 8), bytes = u32_at(b + 12);
        if (b[1] != 0 || b[2] != 0 || b[3] != 0)
            fail(path, fmt::format("block at byte offset {}: reserved bytes are not zero", off));
        if (bytes > max_block_bytes)
            fail(path, fmt::format("block at byte offset {} has {} payload bytes, more than the limit of {}", off,
                                   bytes, max_block_bytes));
        const std::uint64_t payload = off + block_header_bytes;
        if (bytes > size - payload)
            fail(path, fmt::format("truncated block at byte offset {}: {} payload bytes announced, the file ends at "
                                   "byte offset {}",
                                   off, bytes, size));
        switch (kind) {
            case block_thread:
                if (thread != threads)
                    fail(path, fmt::format("thread block at byte offset {} numbers thread {}, expected {} (threads are "
                                           "numbered in order of first appearance)",
                                           off, thread, threads));
                if (threads >= max_threads)
                    fail(path, fmt::format("thread block at byte offset {}: more than the limit of {} threads", off,
                                           max_threads));
                if (bytes != 8 || count != 0)
                    fail(path, fmt::format("thread block at byte offset {}: {} records and {} bytes, expected 0 and 8",
                                           off, count, bytes));
                ++threads;
                for (auto& ph : idx.blocks) ph.resize(threads);
                break;
            case block_accesses:
                if (thread >= threads)
                    fail(path, fmt::format("access block at byte offset {} names thread {}, but {} thread(s) have "
                                           "appeared",
                                           off, thread, threads));
                if (count == 0 || std::uint64_t{bytes} < std::uint64_t{count} * min_record_bytes ||
                    std::uint64_t{bytes} > std::uint64_t{count} * max_record_bytes)
                    fail(path, fmt::format("access block at byte offset {}: {} records cannot take {} bytes ({} to {} "
                                           "bytes each)",
                                           off, count, bytes, min_record_bytes, max_record_bytes));
                idx.blocks.back()[thread].push_back(Block{off, count, bytes});
                held += count;
                ++info.blocks;
                break;
            case block_phase: {
                const std::uint32_t expected = static_cast<std::uint32_t>(idx.blocks.size());
                if (count != expected)
                    fail(path, fmt::format("phase block at byte offset {} starts phase {}, expected {}", off, count,
                                           expected));
                if (bytes < 4 || bytes > 4 + max_phase_name)
                    fail(path, fmt::format("phase block at byte offset {}: {} bytes, expected 4 to {}", off, bytes,
                                           4 + max_phase_name));
                if (thread >= threads)
                    fail(path, fmt::format("phase block at byte offset {} names thread {}, but {} thread(s) have "
                                           "appeared",
                                           off, thread, threads));
                unsigned char p[4 + max_phase_name];
                read_at(f, path, payload, p, bytes);
                const std::uint32_t flags = u32_at(p);
                if ((flags & ~1u) != 0)
                    fail(path, fmt::format("phase block at byte offset {}: unknown flags {:#x} at byte offset {}", off,
                                           flags, payload));
                std::string name(reinterpret_cast<const char*>(p + 4), bytes - 4);
                if (name.empty()) name = fmt::format("phase {}", count);
                marked.push_back({std::move(name), (flags & 1u) != 0});
                idx.blocks.emplace_back(threads);
                break;
            }
            case block_end: {
                if (bytes != 24)
                    fail(path, fmt::format("end block at byte offset {}: {} bytes, expected 24", off, bytes));
                if (thread != threads)
                    fail(path, fmt::format("end block at byte offset {} counts {} threads, the file has {}", off, thread,
                                           threads));
                if (count != idx.blocks.size())
                    fail(path, fmt::format("end block at byte offset {} counts {} phases, the file has {}", off, count,
                                           idx.blocks.size()));
                unsigned char p[24];
                read_at(f, path, payload, p, 24);
                info.accesses = u64_at(p);
                info.instructions = u64_at(p + 8);
                const std::uint32_t flags = u32_at(p + 16);
                if ((flags & ~end_at_exec) != 0 || u32_at(p + 20) != 0)
                    fail(path, fmt::format("end block at byte offset {}: unknown flags {:#x} at byte offset {}", off,
                                           flags, payload + 16));
                info.ended_at_exec = (flags & end_at_exec) != 0;
                if (info.accesses != held)
                    fail(path, fmt::format("end block at byte offset {} states {} accesses, the access blocks hold {}",
                                           off, info.accesses, held));
                ended = true;
                break;
            }
            default:
                fail(path, fmt::format("unknown block kind {} at byte offset {}", kind, off));
        }
        off = payload + bytes;
    }
    if (!ended)
        fail(path, fmt::format("truncated: no end block; the file ends at byte offset {} (the recording did not finish)",
                               size));
    if (threads == 0) fail(path, "the trace holds no accesses");
    info.threads = threads;
    if (marked.empty()) {
        info.phases = {{"trace", true}};
    } else {
        info.phases = {{"start", false}};
        for (auto& ph : marked) info.phases.push_back(std::move(ph));
    }
}

// One thread's records of one phase, a block at a time.
class NumawareStream final : public AccessStream {
public:
    NumawareStream(std::shared_ptr<const Index> idx, const std::vector<Block>* blocks)
        : idx_(std::move(idx)), blocks_(blocks) {}

    std::size_t next(std::span<Access> out) override {
        std::size_t n = 0;
        while (n < out.size()) {
            if (left_ == 0) {
                if (!load_block()) break;
            }
            out[n++] = decode();
            if (--left_ == 0) finish_block();
        }
        return n;
    }

private:
    const std::string& path() const { return idx_->info.path; }

    bool load_block() {
        if (next_block_ == blocks_->size()) return false;
        if (!file_.is_open()) {
            file_.open(path(), std::ios::binary);
            if (!file_) fail(path(), fmt::format("cannot open: {}", std::strerror(errno)));
        }
        block_ = (*blocks_)[next_block_++];
        buf_.resize(block_.bytes);
        read_at(file_, path(), block_.offset + block_header_bytes, buf_.data(), block_.bytes);
        pos_ = 0;
        left_ = block_.count;
        record_ = 0;
        prev_addr_ = prev_pc_ = 0;
        return true;
    }

    std::uint64_t at(std::size_t pos) const { return block_.offset + block_header_bytes + pos; }

    std::uint64_t varint() {
        std::uint64_t v = 0;
        for (unsigned shift = 0;; shift += 7) {
            if (pos_ == buf_.size())
                fail(path(), fmt::format("record {} of the access block at byte offset {} runs past the block's end at "
                                         "byte offset {}",
                                         record_, block_.offset, at(pos_)));
            const unsigned char c = buf_[pos_++];
            if (shift == 63 && c > 1)
                fail(path(), fmt::format("over-long number at byte offset {} (record {} of the access block at byte "
                                         "offset {})",
                                         at(pos_ - 1), record_, block_.offset));
            v |= std::uint64_t{c & 0x7fu} << shift;
            if ((c & 0x80u) == 0) return v;
        }
    }

    static std::int64_t unzigzag(std::uint64_t v) {
        return static_cast<std::int64_t>(v >> 1) ^ -static_cast<std::int64_t>(v & 1);
    }

    Access decode() {
        const std::size_t start = pos_;
        const std::uint64_t head = varint();
        const unsigned code = static_cast<unsigned>(head & 7);
        std::uint64_t size = code < 7 ? std::uint64_t{1} << code : varint();
        if (size == 0 || size > (1u << 24))
            fail(path(), fmt::format("record {} at byte offset {}: access size {} (1 to {} bytes)", record_, at(start),
                                     size, 1u << 24));
        prev_addr_ += static_cast<std::uint64_t>(unzigzag(varint()));
        prev_pc_ += static_cast<std::uint64_t>(unzigzag(varint()));
        ++record_;
        const std::uint64_t instrs = head >> 4;
        Access a;
        a.addr = prev_addr_;
        // The file counts the accessing instruction itself; the simulator's
        // gap counts the instructions before it.
        a.gap = static_cast<std::uint32_t>(
            std::min<std::uint64_t>(instrs == 0 ? 0 : instrs - 1, std::numeric_limits<std::uint32_t>::max()));
        a.pc = prev_pc_;
        a.size = static_cast<std::uint32_t>(size);
        a.same_instruction = instrs == 0;
        a.write = ((head >> 3) & 1) != 0;
        a.dependent = false;
        return a;
    }

    void finish_block() {
        if (pos_ != buf_.size())
            fail(path(), fmt::format("the access block at byte offset {} has {} bytes left after its {} records, at "
                                     "byte offset {}",
                                     block_.offset, buf_.size() - pos_, block_.count, at(pos_)));
    }

    std::shared_ptr<const Index> idx_;
    const std::vector<Block>* blocks_;
    std::size_t next_block_ = 0;
    std::ifstream file_;
    Block block_;
    std::vector<unsigned char> buf_;
    std::size_t pos_ = 0;
    std::uint32_t left_ = 0, record_ = 0;
    std::uint64_t prev_addr_ = 0, prev_pc_ = 0;
};

// ---- ChampSim's format ------------------------------------------------------------

// ChampSim's input_instr, as stored (little-endian, 64 bytes).
struct ChampSimRecord {
    std::uint64_t ip = 0;
    std::uint8_t is_branch = 0, branch_taken = 0;
    std::array<std::uint64_t, 2> dst{};
    std::array<std::uint64_t, 4> src{};
};

ChampSimRecord parse_champsim(const unsigned char* p) {
    ChampSimRecord r;
    r.ip = u64_at(p);
    r.is_branch = p[8];
    r.branch_taken = p[9];
    // p[10..11]: destination registers, p[12..15]: source registers.
    for (unsigned k = 0; k < 2; ++k) r.dst[k] = u64_at(p + 16 + 8 * k);
    for (unsigned k = 0; k < 4; ++k) r.src[k] = u64_at(p + 32 + 8 * k);
    return r;
}

// The records of an xz-compressed ChampSim trace, decompressed as they are
// asked for.
class XzRecords {
public:
    explicit XzRecords(const std::string& path) : path_(path) {
        std::uint64_t size = 0;
        file_ = open_file(path, size);
        unsigned char m[xz_magic.size()] = {};
        const std::size_t have = static_cast<std::size_t>(std::min<std::uint64_t>(size, xz_magic.size()));
        read_at(file_, path, 0, m, have);
        if (have < xz_magic.size() || !std::equal(xz_magic.begin(), xz_magic.end(), m))
            fail(path, fmt::format("not an xz file: the magic at byte offset 0 is [{}], expected [{}]", hex_bytes(m, have),
                                   hex_bytes(xz_magic.data(), xz_magic.size())));
        file_.clear();
        file_.seekg(0);
        if (lzma_stream_decoder(&z_, std::numeric_limits<std::uint64_t>::max(), LZMA_CONCATENATED) != LZMA_OK)
            fail(path, "cannot start the xz decoder");
        in_.resize(1 << 16);
        out_.resize(champsim_record_bytes * 4096);
    }
    ~XzRecords() { lzma_end(&z_); }
    XzRecords(const XzRecords&) = delete;
    XzRecords& operator=(const XzRecords&) = delete;

    // The next record's 64 bytes, or nullptr at the end of the stream.
    const unsigned char* next() {
        while (len_ - pos_ < champsim_record_bytes) {
            if (ended_) {
                if (len_ == pos_) return nullptr;
                fail(path_, fmt::format("the decompressed stream ends inside record {}, at decompressed byte offset {} "
                                        "(records are {} bytes)",
                                        records_, delivered_ + (len_ - pos_), champsim_record_bytes));
            }
            decompress();
        }
        const unsigned char* r = out_.data() + pos_;
        pos_ += champsim_record_bytes;
        delivered_ += champsim_record_bytes;
        ++records_;
        return r;
    }
    std::uint64_t records() const { return records_; }
    std::uint64_t offset() const { return delivered_; }

private:
    // Moves what is left to the front and decompresses until the buffer is
    // full or the stream ends; liblzma reports a stream cut short as
    // LZMA_BUF_ERROR once no progress is possible.
    void decompress() {
        std::memmove(out_.data(), out_.data() + pos_, len_ - pos_);
        len_ -= pos_;
        pos_ = 0;
        z_.next_out = out_.data() + len_;
        z_.avail_out = out_.size() - len_;
        while (z_.avail_out > 0) {
            if (z_.avail_in == 0 && !input_done_) {
                file_.read(reinterpret_cast<char*>(in_.data()), static_cast<std::streamsize>(in_.size()));
                const std::size_t got = static_cast<std::size_t>(file_.gcount());
                if (got == 0) input_done_ = true;
                z_.next_in = in_.data();
                z_.avail_in = got;
            }
            const lzma_ret ret = lzma_code(&z_, input_done_ ? LZMA_FINISH : LZMA_RUN);
            if (ret == LZMA_STREAM_END) {
                ended_ = true;
                break;
            }
            if (ret == LZMA_OK) continue;
            const std::uint64_t at = z_.total_in;
            switch (ret) {
                case LZMA_BUF_ERROR:
                    fail(path_, fmt::format("the xz stream is truncated at compressed byte offset {}", at));
                case LZMA_DATA_ERROR:
                    fail(path_, fmt::format("corrupt xz data at compressed byte offset {}", at));
                case LZMA_FORMAT_ERROR:
                    fail(path_, fmt::format("not an xz stream at compressed byte offset {}", at));
                case LZMA_OPTIONS_ERROR:
                    fail(path_, fmt::format("unsupported xz options at compressed byte offset {}", at));
                case LZMA_MEM_ERROR:
                    fail(path_, "the xz decoder ran out of memory");
                default:
                    fail(path_, fmt::format("xz decoder error {} at compressed byte offset {}", static_cast<int>(ret), at));
            }
        }
        len_ = out_.size() - z_.avail_out;
    }

    std::string path_;
    std::ifstream file_;
    lzma_stream z_ = LZMA_STREAM_INIT;
    std::vector<unsigned char> in_, out_;
    std::size_t pos_ = 0, len_ = 0;
    std::uint64_t delivered_ = 0, records_ = 0;
    bool input_done_ = false, ended_ = false;
};

void check_champsim_record(const std::string& path, const ChampSimRecord& r, std::uint64_t index, std::uint64_t at) {
    if (r.is_branch > 1 || r.branch_taken > 1)
        fail(path, fmt::format("not a ChampSim trace: record {} (decompressed byte offset {}) has is_branch {} and "
                               "branch_taken {}, expected 0 or 1",
                               index, at, r.is_branch, r.branch_taken));
}

// Every nonzero source address is a read, every nonzero destination a
// write; the gap counts the instructions without memory operands between.
class ChampSimStream final : public AccessStream {
public:
    explicit ChampSimStream(const std::string& path) : path_(path), xz_(path) {}

    std::size_t next(std::span<Access> out) override {
        std::size_t n = 0;
        while (n < out.size()) {
            if (qi_ < qn_) {
                out[n++] = q_[qi_++];
                continue;
            }
            const std::uint64_t at = xz_.offset();
            const unsigned char* raw = xz_.next();
            if (raw == nullptr) break;
            const ChampSimRecord r = parse_champsim(raw);
            check_champsim_record(path_, r, xz_.records() - 1, at);
            qi_ = qn_ = 0;
            const auto add = [&](std::uint64_t addr, bool write) {
                Access a;
                a.addr = addr;
                a.gap = qn_ == 0 ? gap_ : 0;
                a.pc = r.ip;
                a.same_instruction = qn_ != 0;
                a.size = 8;   // ChampSim records no size
                a.write = write;
                q_[qn_++] = a;
            };
            for (std::uint64_t s : r.src)
                if (s != 0) add(s, false);
            for (std::uint64_t d : r.dst)
                if (d != 0) add(d, true);
            if (qn_ == 0) {
                if (gap_ < std::numeric_limits<std::uint32_t>::max()) ++gap_;
            } else {
                gap_ = 0;
            }
        }
        return n;
    }

private:
    std::string path_;
    XzRecords xz_;
    std::array<Access, 6> q_{};
    std::size_t qi_ = 0, qn_ = 0;
    std::uint32_t gap_ = 0;
};

void validate_champsim(Index& idx) {
    const std::string& path = idx.info.path;
    XzRecords xz(path);
    const unsigned char* raw = xz.next();
    if (raw == nullptr) fail(path, "not a ChampSim trace: the xz stream holds no record");
    check_champsim_record(path, parse_champsim(raw), 0, 0);
    idx.info.threads = 1;
    idx.info.phases = {{"trace", true}};
}

bool ends_with(const std::string& s, std::string_view suffix) {
    return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

std::shared_ptr<Index> open_index(const std::string& path, TraceFormat format) {
    auto idx = std::make_shared<Index>();
    idx->info.path = path;
    std::uint64_t size = 0;
    std::ifstream f = open_file(path, size);
    idx->info.file_bytes = size;
    if (size == 0) fail(path, "empty file: no header at byte offset 0");
    if (format == TraceFormat::automatic) {
        unsigned char head[8] = {};
        const std::size_t have = static_cast<std::size_t>(std::min<std::uint64_t>(size, sizeof head));
        read_at(f, path, 0, head, have);
        const bool numaware_magic = have > 0 && std::memcmp(head, magic, have) == 0;
        const bool xz = have >= xz_magic.size() && std::equal(xz_magic.begin(), xz_magic.end(), head);
        if (numaware_magic) format = TraceFormat::numaware;
        else if (xz && ends_with(path, ".xz")) format = TraceFormat::champsim;
        else
            fail(path, fmt::format("neither a numaware trace (magic \"NWTRACE\\0\") nor an xz-compressed ChampSim trace "
                                   "(a .xz file): the bytes at byte offset 0 are [{}]",
                                   hex_bytes(head, have)));
    }
    idx->info.format = format;
    if (format == TraceFormat::numaware) validate_numaware(f, *idx);
    else validate_champsim(*idx);
    return idx;
}

}  // namespace

TraceInfo inspect_trace(const std::string& path, TraceFormat format) { return open_index(path, format)->info; }

TraceWorkload::TraceWorkload(const std::string& path, TraceFormat format) : index_(open_index(path, format)) {}
TraceWorkload::~TraceWorkload() = default;

std::string TraceWorkload::name() const { return fmt::format("trace:{}", index_->info.path); }
unsigned TraceWorkload::phases() const { return static_cast<unsigned>(index_->info.phases.size()); }
std::string TraceWorkload::phase_name(unsigned phase) const { return index_->info.phases.at(phase).name; }
bool TraceWorkload::measured(unsigned phase) const { return index_->info.phases.at(phase).measured; }
unsigned TraceWorkload::default_threads(const HierarchyPreset&) const { return index_->info.threads; }
const TraceInfo& TraceWorkload::info() const { return index_->info; }

std::vector<ThreadStream> TraceWorkload::streams(unsigned phase, const HierarchyPreset&, const TeamLayout& layout) const {
    const TraceInfo& info = index_->info;
    if (layout.size() < info.threads)
        throw Error("threads", fmt::format("the trace '{}' has {} threads; the run places {} (give --threads 0 or at "
                                           "least {})",
                                           info.path, info.threads, layout.size(), info.threads));
    std::vector<ThreadStream> v;
    if (info.format == TraceFormat::champsim) {
        v.push_back({layout.ranks[0].cpu, std::make_unique<ChampSimStream>(info.path)});
        return v;
    }
    const auto& per_thread = index_->blocks.at(phase);
    for (std::size_t k = 0; k < per_thread.size(); ++k)
        if (!per_thread[k].empty())
            v.push_back({layout.ranks[k].cpu, std::make_unique<NumawareStream>(index_, &per_thread[k])});
    return v;
}

}  // namespace numaware::sim::memory
