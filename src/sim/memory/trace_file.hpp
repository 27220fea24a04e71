// sim/memory/trace_file.hpp — recorded access traces as workloads of the
// memory-hierarchy simulator.
//
// Two formats (docs/SIMULATOR.md, "Trace files"):
//  * numaware's own (.nwt), written by the Valgrind tool nwtrace
//    (src/tools/tracer/, `numaware trace record`): per-thread blocks of
//    delta-encoded records, phase marks, an end block with the totals;
//  * ChampSim's `input_instr` records (64 bytes each), xz-compressed,
//    single-threaded.
//
// Opening a numaware trace validates the header and every block's header
// and bounds, without reading the records; the records are decoded while
// the simulator replays them, a block at a time, so a trace of any size
// streams from the file. Every rejection is Error("trace", ...) naming
// the path and the byte offset.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "numaware/memory_sim.hpp"

namespace numaware::sim::memory {

enum class TraceFormat { automatic, numaware, champsim };

// "auto" | "numaware" | "champsim"; Error("--trace-format", ...) otherwise.
TraceFormat parse_trace_format(std::string_view text);
std::string_view trace_format_name(TraceFormat f);

// What the numaware format's constants are (the Valgrind tool writes the
// same numbers; docs/SIMULATOR.md lists them).
namespace trace_format {
inline constexpr char magic[8] = {'N', 'W', 'T', 'R', 'A', 'C', 'E', '\0'};
inline constexpr std::uint32_t version = 1;
inline constexpr std::uint32_t header_bytes = 32;
inline constexpr std::uint32_t block_header_bytes = 16;
inline constexpr std::uint32_t arch_x86_64 = 62;
inline constexpr std::uint8_t block_thread = 1, block_accesses = 2, block_phase = 3, block_end = 4;
inline constexpr std::uint32_t end_at_exec = 1;   // end block flag: the program exec'd another
inline constexpr std::uint32_t max_block_bytes = 16u << 20;   // a block's payload
inline constexpr std::uint32_t max_threads = 65536;
inline constexpr std::uint32_t max_phase_name = 63;
inline constexpr std::uint32_t min_record_bytes = 3;   // head, address delta, PC delta: a byte each
inline constexpr std::uint32_t max_record_bytes = 40;  // four varints of at most 10 bytes
inline constexpr std::size_t champsim_record_bytes = 64;
}  // namespace trace_format

struct TracePhase {
    std::string name;
    bool measured = true;
};

struct TraceInfo {
    std::string path;
    TraceFormat format = TraceFormat::numaware;
    std::uint64_t file_bytes = 0;
    unsigned threads = 0;
    // Totals the file states (numaware: its end block); a ChampSim trace
    // states none: 0 until it is replayed.
    std::uint64_t accesses = 0;
    std::uint64_t instructions = 0;
    std::vector<TracePhase> phases;   // at least one
    std::uint64_t blocks = 0;         // numaware: access blocks
    bool ended_at_exec = false;       // numaware: the recording stopped where the program exec'd
};

// Opens and validates a trace (format detected when `automatic`: the
// numaware magic, or a `.xz` name whose content is an xz stream holding
// plausible ChampSim records). Error("trace", ...) for a missing or
// unreadable file (naming the path), a foreign or truncated one (naming
// the byte offset).
TraceInfo inspect_trace(const std::string& path, TraceFormat format = TraceFormat::automatic);

// The trace as a workload: one phase per phase of the trace (a trace
// without phase marks is one measured phase), one stream per recorded
// thread that has accesses in the phase; trace thread k (in order of first
// appearance) runs as rank k of run_workload's thread layout. Page homes
// follow the run's page mapping (first touch by the simulated thread by
// default), as for built-in workloads. Error("threads", ...) when the run
// gives fewer ranks than the trace has threads.
class TraceWorkload final : public Workload {
public:
    explicit TraceWorkload(const std::string& path, TraceFormat format = TraceFormat::automatic);
    ~TraceWorkload() override;
    std::string name() const override;
    unsigned phases() const override;
    std::string phase_name(unsigned phase) const override;
    bool measured(unsigned phase) const override;
    std::vector<ThreadStream> streams(unsigned phase, const HierarchyPreset& p, const TeamLayout& layout) const override;
    unsigned default_threads(const HierarchyPreset& p) const override;
    const TraceInfo& info() const;

    struct Index;

private:
    std::shared_ptr<const Index> index_;
};

}  // namespace numaware::sim::memory
