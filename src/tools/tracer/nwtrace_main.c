/* tools/tracer/nwtrace_main.c — nwtrace, numaware's Valgrind tool: records
 * every load and store of a program, per thread, into a trace file that
 * `numaware sim memory --trace` replays (format: docs/SIMULATOR.md,
 * "Trace files"; reader: src/sim/memory/trace_file.cpp).
 *
 * Built against Debian's valgrind package (its pub_tool_*.h headers and
 * static core libraries) by the CMake target numaware_tracer; run through
 * `numaware trace record`, or by hand:
 *     VALGRIND_LIB=build/valgrind valgrind --tool=nwtrace --nwtrace-out=t.nwt prog args
 *
 * What is recorded, per memory access of the guest program: the thread,
 * the guest instructions executed by that thread since its previous access
 * (IMarks, the accessing instruction included; 0 for the second access of
 * one instruction), the instruction address, the data address, the size
 * and whether it reads or writes. Loads (WrTmp of a Load, LoadG), stores
 * (Store, StoreG), compare-and-swap (a read then a write), load-linked /
 * store-conditional (a read / a write) and the memory effects of dirty
 * helpers (read, write, or a read then a write for "modify") are accesses.
 * Guarded loads, stores and dirty calls are recorded only when their guard
 * holds. Accesses the kernel makes for system calls are not.
 *
 * Instruction counting: within a superblock, the number of IMarks since
 * the previous access is known at instrumentation time and passed to the
 * access helper as a constant; what a superblock executes after its last
 * access (up to a side exit or its end) is added to a per-thread pending
 * count by inline IR, which the next access of that thread picks up.
 * Valgrind runs one thread at a time and switches only between superblocks,
 * so the pending count is swapped when the scheduler starts another thread.
 *
 * Output: records go to a per-thread buffer, delta- and varint-encoded;
 * a full buffer becomes one block of the file, written through one large
 * output buffer with the tool's own VG_(write).
 */
#include "pub_tool_basics.h"
#include "pub_tool_tooliface.h"
#include "pub_tool_libcassert.h"
#include "pub_tool_libcbase.h"
#include "pub_tool_libcfile.h"
#include "pub_tool_libcprint.h"
#include "pub_tool_libcproc.h"
#include "pub_tool_machine.h"
#include "pub_tool_mallocfree.h"
#include "pub_tool_options.h"
#include "pub_tool_aspacemgr.h"
#include "pub_tool_threadstate.h"
#include "pub_tool_vki.h"
#include "pub_tool_vkiscnums.h"
#include "pub_tool_clreq.h"

#include "numaware_trace.h"

/* ---- file format (docs/SIMULATOR.md, "Trace files") ---------------------- */

#define NW_VERSION 1u
#define NW_HEADER_BYTES 32u
#define NW_BLOCK_HEADER_BYTES 16u
#define NW_ARCH_X86_64 62u /* ELF e_machine of x86-64 */

enum { NW_BLOCK_THREAD = 1, NW_BLOCK_ACCESSES = 2, NW_BLOCK_PHASE = 3, NW_BLOCK_END = 4 };

#define NW_THREAD_BUF_BYTES (256u * 1024u)   /* one thread's encoded records: one block */
#define NW_RECORD_MAX_BYTES 48u              /* 4 varints of at most 10 bytes, rounded up */
#define NW_OUT_BUF_BYTES (8u * 1024u * 1024u)
#define NW_NAME_MAX 63u

/* ---- state ---------------------------------------------------------------- */

typedef struct {
    Bool live;          /* a thread occupies this Valgrind thread slot */
    Int id;             /* trace thread number, -1 until its first access */
    ULong pending;      /* saved pending instruction count while not running */
    ULong instrs;       /* instructions counted into this thread's records */
    ULong accesses;
    UInt count;         /* records in buf */
    UInt len;           /* bytes in buf */
    Addr prev_addr, prev_pc;   /* the previous record's, for the deltas */
    UChar* buf;
} NwThread;

static const HChar* clo_out = "nwtrace.%p.nwt";

static Int out_fd = -1;
static const HChar* out_path = NULL;
static UChar* out_buf = NULL;
static UInt out_len = 0;
static Bool disabled = False;   /* a forked child, or the trace already ended (exec) */

static NwThread* threads = NULL;   /* indexed by ThreadId, VG_N_THREADS slots */
static NwThread* cur = NULL;       /* the thread running client code */
static ThreadId cur_tid = VG_INVALID_THREADID;
static Int n_trace_threads = 0;
static UInt n_phases = 1;

/* The running thread's instructions since its last access that no access
   has claimed yet. Inline IR adds to it; the access helper claims it. */
static ULong nw_pending = 0;

/* The totals of threads whose slot Valgrind has since given to a new one. */
static ULong retired_accesses = 0, retired_instrs = 0;

/* ---- output ---------------------------------------------------------------- */

static void out_fail(void) {
    VG_(umsg)("nwtrace: cannot write %s; the trace is incomplete\n", out_path);
    VG_(exit)(1);
}

static void out_write_fd(const UChar* p, SizeT n) {
    while (n > 0) {
        const Int chunk = n > (1u << 30) ? (1 << 30) : (Int)n;
        const Int w = VG_(write)(out_fd, p, chunk);
        if (w <= 0) out_fail();
        p += w;
        n -= (SizeT)w;
    }
}

static void out_flush(void) {
    if (out_len > 0) out_write_fd(out_buf, out_len);
    out_len = 0;
}

static void out_put(const void* p, SizeT n) {
    if (out_len + n > NW_OUT_BUF_BYTES) out_flush();
    if (n >= NW_OUT_BUF_BYTES) {
        out_write_fd((const UChar*)p, n);
        return;
    }
    VG_(memcpy)(out_buf + out_len, p, n);
    out_len += (UInt)n;
}

static void put_u32(UChar* p, UInt v) {
    for (Int i = 0; i < 4; ++i) p[i] = (UChar)(v >> (8 * i));
}

static void put_u64(UChar* p, ULong v) {
    for (Int i = 0; i < 8; ++i) p[i] = (UChar)(v >> (8 * i));
}

static void block_header(UInt kind, UInt thread, UInt count, UInt bytes) {
    UChar h[NW_BLOCK_HEADER_BYTES];
    VG_(memset)(h, 0, sizeof h);
    h[0] = (UChar)kind;
    put_u32(h + 4, thread);
    put_u32(h + 8, count);
    put_u32(h + 12, bytes);
    out_put(h, sizeof h);
}

static void write_file_header(void) {
    UChar h[NW_HEADER_BYTES];
    VG_(memset)(h, 0, sizeof h);
    VG_(memcpy)(h, "NWTRACE", 8);   /* 7 letters and a NUL */
    put_u32(h + 8, NW_VERSION);
    put_u32(h + 12, NW_HEADER_BYTES);
    put_u32(h + 16, NW_ARCH_X86_64);
    put_u32(h + 20, NW_BLOCK_HEADER_BYTES);
    out_put(h, sizeof h);
}

/* ---- threads --------------------------------------------------------------- */

static void thread_flush(NwThread* t) {
    if (t->count == 0) return;
    block_header(NW_BLOCK_ACCESSES, (UInt)t->id, t->count, t->len);
    out_put(t->buf, t->len);
    t->count = 0;
    t->len = 0;
    t->prev_addr = 0;
    t->prev_pc = 0;
}

static void thread_appears(NwThread* t, ThreadId tid) {
    UChar payload[8];
    t->id = n_trace_threads++;
    if (t->buf == NULL) t->buf = VG_(malloc)("nwtrace.thread.buf", NW_THREAD_BUF_BYTES);
    put_u32(payload, (UInt)tid);
    put_u32(payload + 4, 0);
    block_header(NW_BLOCK_THREAD, (UInt)t->id, 0, sizeof payload);
    out_put(payload, sizeof payload);
}

static void thread_reset(NwThread* t) {
    retired_accesses += t->accesses;
    retired_instrs += t->instrs;
    t->live = True;
    t->id = -1;
    t->pending = 0;
    t->instrs = 0;
    t->accesses = 0;
    t->count = 0;
    t->len = 0;
    t->prev_addr = 0;
    t->prev_pc = 0;
}

static NwThread* slot(ThreadId tid) {
    tl_assert(tid < VG_N_THREADS);
    return &threads[tid];
}

/* The scheduler starts running `tid`: swap the pending count. */
static void nw_start_client_code(ThreadId tid, ULong blocks_dispatched) {
    (void)blocks_dispatched;
    if (tid == cur_tid) return;
    if (cur != NULL) cur->pending = nw_pending;
    cur_tid = tid;
    cur = slot(tid);
    if (!cur->live) thread_reset(cur);
    nw_pending = cur->pending;
}

static void nw_thread_create(ThreadId parent, ThreadId child) {
    (void)parent;
    thread_reset(slot(child));
}

static void nw_thread_exit(ThreadId tid) {
    NwThread* t = slot(tid);
    if (tid == cur_tid) {
        t->pending = nw_pending;
        nw_pending = 0;
        cur = NULL;
        cur_tid = VG_INVALID_THREADID;
    }
    if (!disabled && t->id >= 0) {
        thread_flush(t);
        t->instrs += t->pending;
    }
    t->pending = 0;
    t->live = False;
}

/* ---- the access helper (called from instrumented code) ---------------------- */

static inline UChar* put_varint(UChar* p, ULong v) {
    while (v >= 0x80) {
        *p++ = (UChar)(v | 0x80);
        v >>= 7;
    }
    *p++ = (UChar)v;
    return p;
}

static inline ULong zigzag(Long v) { return ((ULong)v << 1) ^ (ULong)(v >> 63); }

/* info: bits 0-23 size, bit 24 write, bits 32-63 IMarks since the previous
   access within the superblock (or since its start). */
static void nw_access(Addr addr, ULong info, Addr pc) {
    NwThread* t = cur;
    if (UNLIKELY(disabled || t == NULL)) return;
    if (UNLIKELY(t->id < 0)) thread_appears(t, cur_tid);
    const ULong n = nw_pending + (info >> 32);
    nw_pending = 0;
    const UInt size = (UInt)(info & 0xffffffu);
    const UInt write = (UInt)(info >> 24) & 1u;
    UInt code;
    switch (size) {
        case 1: code = 0; break;
        case 2: code = 1; break;
        case 4: code = 2; break;
        case 8: code = 3; break;
        case 16: code = 4; break;
        case 32: code = 5; break;
        case 64: code = 6; break;
        default: code = 7; break;
    }
    if (UNLIKELY(t->len + NW_RECORD_MAX_BYTES > NW_THREAD_BUF_BYTES)) thread_flush(t);
    UChar* p = t->buf + t->len;
    p = put_varint(p, (n << 4) | ((ULong)write << 3) | code);
    if (code == 7) p = put_varint(p, size);
    p = put_varint(p, zigzag((Long)(addr - t->prev_addr)));
    p = put_varint(p, zigzag((Long)(pc - t->prev_pc)));
    t->len = (UInt)(p - t->buf);
    t->prev_addr = addr;
    t->prev_pc = pc;
    ++t->count;
    ++t->accesses;
    t->instrs += n;
}

/* ---- instrumentation ---------------------------------------------------------- */

typedef struct {
    IRSB* sb;
    Addr pc;          /* the current instruction's address */
    ULong imarks;     /* IMarks since the previous access (or the last flush) */
} Instr;

static void emit_access(Instr* in, IRExpr* addr, Int size, Bool write, IRExpr* guard) {
    tl_assert(size > 0 && size < (1 << 24));
    const ULong info = (ULong)size | ((ULong)(write ? 1 : 0) << 24) | (in->imarks << 32);
    IRDirty* d = unsafeIRDirty_0_N(0, "nw_access", VG_(fnptr_to_fnentry)(&nw_access),
                                   mkIRExprVec_3(addr, IRExpr_Const(IRConst_U64(info)), mkIRExpr_HWord(in->pc)));
    if (guard != NULL) d->guard = guard;
    addStmtToIRSB(in->sb, IRStmt_Dirty(d));
    in->imarks = 0;
}

/* Adds the IMarks not yet claimed to the pending count (inline IR). */
static void emit_pending(Instr* in) {
    if (in->imarks == 0) return;
    IRTemp old = newIRTemp(in->sb->tyenv, Ity_I64);
    IRTemp sum = newIRTemp(in->sb->tyenv, Ity_I64);
    IRExpr* where = mkIRExpr_HWord((HWord)&nw_pending);
    addStmtToIRSB(in->sb, IRStmt_WrTmp(old, IRExpr_Load(Iend_LE, Ity_I64, where)));
    addStmtToIRSB(in->sb, IRStmt_WrTmp(sum, IRExpr_Binop(Iop_Add64, IRExpr_RdTmp(old),
                                                           IRExpr_Const(IRConst_U64(in->imarks)))));
    addStmtToIRSB(in->sb, IRStmt_Store(Iend_LE, mkIRExpr_HWord((HWord)&nw_pending), IRExpr_RdTmp(sum)));
    in->imarks = 0;
}

static IRSB* nw_instrument(VgCallbackClosure* closure, IRSB* sb_in, const VexGuestLayout* layout,
                           const VexGuestExtents* vge, const VexArchInfo* archinfo_host, IRType gWordTy,
                           IRType hWordTy) {
    (void)closure;
    (void)layout;
    (void)vge;
    (void)archinfo_host;
    if (gWordTy != hWordTy) VG_(tool_panic)("host/guest word size mismatch");
    Instr in;
    in.sb = deepCopyIRSBExceptStmts(sb_in);
    in.pc = 0;
    in.imarks = 0;
    Int i = 0;
    /* The preamble before the first IMark is copied as it is. */
    while (i < sb_in->stmts_used && sb_in->stmts[i]->tag != Ist_IMark) addStmtToIRSB(in.sb, sb_in->stmts[i++]);
    for (; i < sb_in->stmts_used; ++i) {
        IRStmt* st = sb_in->stmts[i];
        if (st == NULL) continue;
        switch (st->tag) {
            case Ist_IMark:
                in.pc = st->Ist.IMark.addr;
                ++in.imarks;
                break;
            case Ist_WrTmp: {
                IRExpr* data = st->Ist.WrTmp.data;
                if (data->tag == Iex_Load)
                    emit_access(&in, data->Iex.Load.addr, sizeofIRType(data->Iex.Load.ty), False, NULL);
                break;
            }
            case Ist_Store:
                emit_access(&in, st->Ist.Store.addr, sizeofIRType(typeOfIRExpr(sb_in->tyenv, st->Ist.Store.data)),
                            True, NULL);
                break;
            case Ist_StoreG: {
                IRStoreG* g = st->Ist.StoreG.details;
                emit_access(&in, g->addr, sizeofIRType(typeOfIRExpr(sb_in->tyenv, g->data)), True, g->guard);
                break;
            }
            case Ist_LoadG: {
                IRLoadG* g = st->Ist.LoadG.details;
                IRType loaded = Ity_INVALID, widened = Ity_INVALID;
                typeOfIRLoadGOp(g->cvt, &widened, &loaded);
                emit_access(&in, g->addr, sizeofIRType(loaded), False, g->guard);
                break;
            }
            case Ist_CAS: {
                IRCAS* cas = st->Ist.CAS.details;
                Int size = sizeofIRType(typeOfIRExpr(sb_in->tyenv, cas->dataLo));
                if (cas->dataHi != NULL) size *= 2;
                emit_access(&in, cas->addr, size, False, NULL);
                emit_access(&in, cas->addr, size, True, NULL);
                break;
            }
            case Ist_LLSC:
                if (st->Ist.LLSC.storedata == NULL)
                    emit_access(&in, st->Ist.LLSC.addr, sizeofIRType(typeOfIRTemp(sb_in->tyenv, st->Ist.LLSC.result)),
                                False, NULL);
                else
                    emit_access(&in, st->Ist.LLSC.addr,
                                sizeofIRType(typeOfIRExpr(sb_in->tyenv, st->Ist.LLSC.storedata)), True, NULL);
                break;
            case Ist_Dirty: {
                IRDirty* d = st->Ist.Dirty.details;
                if (d->mFx != Ifx_None && d->mAddr != NULL && d->mSize > 0) {
                    const Bool reads = d->mFx == Ifx_Read || d->mFx == Ifx_Modify;
                    const Bool writes = d->mFx == Ifx_Write || d->mFx == Ifx_Modify;
                    IRExpr* guard = d->guard;
                    if (guard != NULL && guard->tag == Iex_Const && guard->Iex.Const.con->Ico.U1) guard = NULL;
                    if (reads) emit_access(&in, d->mAddr, d->mSize, False, guard);
                    if (writes) emit_access(&in, d->mAddr, d->mSize, True, guard);
                }
                break;
            }
            case Ist_Exit:
                /* Whether or not the exit is taken, the instructions up to
                   it have run. */
                emit_pending(&in);
                break;
            default:
                break;
        }
        addStmtToIRSB(in.sb, st);
    }
    emit_pending(&in);
    return in.sb;
}

/* ---- client requests: phase marks -------------------------------------------- */

static void flush_all_threads(void) {
    for (UInt k = 0; k < VG_N_THREADS; ++k)
        if (threads[k].live && threads[k].id >= 0) thread_flush(&threads[k]);
}

static UInt client_string(Addr s, HChar* out, UInt cap) {
    UInt n = 0;
    if (s == 0) return 0;
    while (n < cap) {
        const Addr a = s + n;
        if ((n == 0 || (a & 4095) == 0) && !VG_(am_is_valid_for_client)(a, 1, VKI_PROT_READ)) break;
        const HChar c = *(const HChar*)a;
        if (c == 0) break;
        out[n++] = c;
    }
    return n;
}

static Bool nw_client_request(ThreadId tid, UWord* args, UWord* ret) {
    if (!VG_IS_TOOL_USERREQ('N', 'W', args[0])) return False;
    if (args[0] != NUMAWARE_TRACE_REQ_PHASE) return False;
    *ret = 0;
    if (disabled) return True;
    NwThread* t = slot(tid);
    if (!t->live) thread_reset(t);
    if (t->id < 0) thread_appears(t, tid);
    flush_all_threads();
    HChar name[NW_NAME_MAX];
    const UInt len = client_string(args[2], name, NW_NAME_MAX);
    UChar payload[4 + NW_NAME_MAX];
    put_u32(payload, args[1] != 0 ? 1u : 0u);
    VG_(memcpy)(payload + 4, name, len);
    block_header(NW_BLOCK_PHASE, (UInt)t->id, n_phases, 4 + len);
    out_put(payload, 4 + len);
    *ret = n_phases;
    ++n_phases;
    return True;
}

/* ---- the end of the trace ------------------------------------------------------ */

/* END flags */
#define NW_END_AT_EXEC 1u

static void finish_trace(UInt flags) {
    if (disabled) return;
    if (cur != NULL) {
        cur->pending = nw_pending;
        nw_pending = 0;
    }
    ULong accesses = retired_accesses, instrs = retired_instrs;
    flush_all_threads();
    for (UInt k = 0; k < VG_N_THREADS; ++k) {
        NwThread* t = &threads[k];
        if (t->live && t->id >= 0) {
            t->instrs += t->pending;
            t->pending = 0;
        }
    }
    /* Exited threads' totals stay in their slot until it is reused. */
    for (UInt k = 0; k < VG_N_THREADS; ++k) {
        accesses += threads[k].accesses;
        instrs += threads[k].instrs;
    }
    UChar payload[24];
    put_u64(payload, accesses);
    put_u64(payload + 8, instrs);
    put_u32(payload + 16, flags);
    put_u32(payload + 20, 0);
    block_header(NW_BLOCK_END, (UInt)n_trace_threads, n_phases, sizeof payload);
    out_put(payload, sizeof payload);
    out_flush();
    VG_(close)(out_fd);
    out_fd = -1;
    disabled = True;
}

static void nw_pre_syscall(ThreadId tid, UInt syscallno, UWord* args, UInt nArgs) {
    (void)tid;
    (void)args;
    (void)nArgs;
    /* The trace ends where the program replaces itself (Valgrind runs the
       new program natively unless told to trace children). */
    if (syscallno == __NR_execve || syscallno == __NR_execveat) finish_trace(NW_END_AT_EXEC);
}

static void nw_post_syscall(ThreadId tid, UInt syscallno, UWord* args, UInt nArgs, SysRes res) {
    (void)tid;
    (void)syscallno;
    (void)args;
    (void)nArgs;
    (void)res;
}

static void nw_fork_child(ThreadId tid) {
    (void)tid;
    /* A forked child shares the parent's file: it must not write to it. */
    if (out_fd >= 0) VG_(close)(out_fd);
    out_fd = -1;
    out_len = 0;
    disabled = True;
}

static void nw_fini(Int exitcode) {
    (void)exitcode;
    finish_trace(0);
}

/* ---- options and start-up ------------------------------------------------------ */

static Bool nw_process_cmd_line_option(const HChar* arg) {
    if VG_STR_CLO (arg, "--nwtrace-out", clo_out) {
    } else {
        return False;
    }
    return True;
}

static void nw_print_usage(void) {
    VG_(printf)("    --nwtrace-out=FILE     the trace file [nwtrace.%%p.nwt] (%%p: the pid)\n");
}

static void nw_print_debug_usage(void) { VG_(printf)("    (none)\n"); }

static void nw_post_clo_init(void) {
    out_path = VG_(expand_file_name)("--nwtrace-out", clo_out);
    const SysRes sr = VG_(open)(out_path, VKI_O_CREAT | VKI_O_TRUNC | VKI_O_WRONLY, VKI_S_IRUSR | VKI_S_IWUSR | VKI_S_IRGRP | VKI_S_IROTH);
    if (sr_isError(sr)) {
        VG_(umsg)("nwtrace: cannot create %s\n", out_path);
        VG_(exit)(1);
    }
    out_fd = (Int)sr_Res(sr);
    out_buf = VG_(malloc)("nwtrace.out.buf", NW_OUT_BUF_BYTES);
    threads = VG_(calloc)("nwtrace.threads", VG_N_THREADS, sizeof(NwThread));
    write_file_header();
}

static void nw_pre_clo_init(void) {
    VG_(details_name)("nwtrace");
    VG_(details_version)("0.1");
    VG_(details_description)("numaware's memory access tracer");
    VG_(details_copyright_author)("numaware authors");
    VG_(details_bug_reports_to)("the numaware repository");
    VG_(details_avg_translation_sizeB)(400);
    VG_(basic_tool_funcs)(nw_post_clo_init, nw_instrument, nw_fini);
    VG_(needs_command_line_options)(nw_process_cmd_line_option, nw_print_usage, nw_print_debug_usage);
    VG_(needs_client_requests)(nw_client_request);
    VG_(needs_syscall_wrapper)(nw_pre_syscall, nw_post_syscall);
    VG_(track_start_client_code)(nw_start_client_code);
    VG_(track_pre_thread_ll_create)(nw_thread_create);
    VG_(track_pre_thread_ll_exit)(nw_thread_exit);
    VG_(atfork)(NULL, NULL, nw_fork_child);
}

VG_DETERMINE_INTERFACE_VERSION(nw_pre_clo_init)
