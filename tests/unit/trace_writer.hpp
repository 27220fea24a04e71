// tests/unit/trace_writer.hpp — writes numaware trace files for the tests,
// from the format as docs/SIMULATOR.md ("Trace files") specifies it (an
// encoder of the tests' own, independent of the Valgrind tool's).
#pragma once

#include <cstdint>
#include <fstream>
#include <string>
#include <vector>

namespace numaware::test {

inline void write_bytes(const std::string& path, const std::vector<std::uint8_t>& bytes) {
    std::ofstream f(path, std::ios::binary | std::ios::trunc);
    f.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
}

inline void put32(std::vector<std::uint8_t>& v, std::uint32_t x) {
    for (int i = 0; i < 4; ++i) v.push_back(static_cast<std::uint8_t>(x >> (8 * i)));
}
inline void put64(std::vector<std::uint8_t>& v, std::uint64_t x) {
    for (int i = 0; i < 8; ++i) v.push_back(static_cast<std::uint8_t>(x >> (8 * i)));
}
inline void varint(std::vector<std::uint8_t>& v, std::uint64_t x) {
    while (x >= 0x80) {
        v.push_back(static_cast<std::uint8_t>(x | 0x80));
        x >>= 7;
    }
    v.push_back(static_cast<std::uint8_t>(x));
}
inline std::uint64_t zigzag(std::int64_t x) { return (static_cast<std::uint64_t>(x) << 1) ^ static_cast<std::uint64_t>(x >> 63); }

struct Rec {
    std::uint64_t instrs;   // instructions since the thread's previous access, this one included
    std::uint64_t addr, pc;
    std::uint32_t size;
    bool write;
};

// A numaware trace, written block by block as the tool would.
class TraceWriter {
public:
    TraceWriter() {
        for (char c : std::string("NWTRACE")) bytes.push_back(static_cast<std::uint8_t>(c));
        bytes.push_back(0);
        put32(bytes, 1);
        put32(bytes, 32);
        put32(bytes, 62);
        put32(bytes, 16);
        put64(bytes, 0);
    }
    void header(std::uint8_t kind, std::uint32_t thread, std::uint32_t count, std::uint32_t len) {
        bytes.push_back(kind);
        bytes.insert(bytes.end(), 3, 0);
        put32(bytes, thread);
        put32(bytes, count);
        put32(bytes, len);
    }
    void thread(std::uint32_t id) {
        header(1, id, 0, 8);
        put32(bytes, 100 + id);
        put32(bytes, 0);
        ++threads_;
    }
    void block(std::uint32_t id, const std::vector<Rec>& recs) {
        std::vector<std::uint8_t> p;
        std::uint64_t pa = 0, pp = 0;
        for (const Rec& r : recs) {
            unsigned code = 7;
            for (unsigned c = 0; c < 7; ++c)
                if (r.size == (1u << c)) code = c;
            varint(p, (r.instrs << 4) | (r.write ? 8u : 0u) | code);
            if (code == 7) varint(p, r.size);
            varint(p, zigzag(static_cast<std::int64_t>(r.addr - pa)));
            varint(p, zigzag(static_cast<std::int64_t>(r.pc - pp)));
            pa = r.addr;
            pp = r.pc;
            accesses_ += 1;
            instrs_ += r.instrs;
        }
        header(2, id, static_cast<std::uint32_t>(recs.size()), static_cast<std::uint32_t>(p.size()));
        bytes.insert(bytes.end(), p.begin(), p.end());
    }
    void phase(std::uint32_t by, const std::string& name, bool measured) {
        header(3, by, ++phases_ - 1, static_cast<std::uint32_t>(4 + name.size()));
        put32(bytes, measured ? 1 : 0);
        bytes.insert(bytes.end(), name.begin(), name.end());
    }
    void end(std::uint64_t extra_instrs = 0) {
        header(4, threads_, phases_, 24);
        put64(bytes, accesses_);
        put64(bytes, instrs_ + extra_instrs);
        put32(bytes, 0);
        put32(bytes, 0);
    }
    std::vector<std::uint8_t> bytes;

private:
    std::uint32_t threads_ = 0, phases_ = 1;
    std::uint64_t accesses_ = 0, instrs_ = 0;
};

}  // namespace numaware::test
