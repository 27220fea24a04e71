"""What a sweep covers: ``--size test`` and ``--size full``.

A size is a list of workloads (``numaware sim memory --workload`` specs; each
of their phases is a region) and a choice of configurations from a preset's
space. The lists are plain data: a new simulator workload joins a sweep by
adding its spec here.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from .space import (INTERLEAVE, LOCAL, LOCALITY, REMOTE, SCATTER, Configuration, ConfigurationSpace,
                    ThreadLayout)

# The simulator's NAS-like and Rodinia-like kernels at class W, whose
# working sets (about 2-55 MiB) straddle the 4-16 MiB of L3 a team of 1 to
# 4 thesis-4s nodes has, so that placement matters for some and not others
# (docs/SIMULATOR.md, "Memory-hierarchy simulator: workloads").
NAS_KERNELS = ("cg", "mg", "ft", "is", "lu", "bt", "sp", "ep")
RODINIA_KERNELS = ("bfs", "hotspot", "kmeans", "lud", "nw", "pathfinder", "streamcluster", "cfd")
FULL_CLASS = "W"
# The same kernels at class S (tiny inputs, a few hundred KiB to a few MiB,
# inside the L3s): regions that differ from class W's in footprint only.
SMALL_CLASS = "S"
# STREAM triad arrays (MiB each): inside and beyond the L3s.
STREAM_MIB = (2, 32)
# Random updates (HPCC RandomAccess's pattern) of tables inside, at twice
# and at eight times the 16 MiB of L3: the pattern where prefetching loses
# (docs/SIMULATOR.md, "Random updates").
GUPS_MIB = (8, 32, 128)
# A lower-triangular matrix-vector product, rows cut statically: the heavy
# last rows on one node or spread, the thread mapping's own effect
# (docs/SIMULATOR.md, "A triangular matrix-vector product").
TRMV_MIB = (32, 128)
# The integral histogram's row and column scans (the task application's
# kernel), whose pages a mapping can place for one scan or the other
# (docs/SIMULATOR.md, "The integral histogram's scans").
IHIST_MIB = (32, 128)
# The task applications' 5-point stencils (Jacobi, Gauss-Seidel, red-black),
# their arrays inside and at twice the 16 MiB of L3: owner-computes
# sweeps whose first-touch pages suit them, where interleaving or one node
# does not (docs/SIMULATOR.md, "The task applications' stencils").
STENCIL_KERNELS = ("jacobi", "gauss-seidel", "red-black")
STENCIL_MIB = (8, 32)
# The inversion application's tiled Cholesky factorisation: tile operations
# whose arithmetic outweighs their traffic, a panel and an update loop a
# step (docs/SIMULATOR.md, "A tiled Cholesky factorisation").
CHOLESKY_MIB = (8, 32)
# The qr application's tiled QR factorisation as a fork-join code: a serial
# panel, and an update by columns across the row bands that first touched
# the tiles (docs/SIMULATOR.md, "A tiled QR factorisation").
QR_MIB = (8, 32)
SMALL_WORKLOADS = tuple(f"{kernel}:{SMALL_CLASS}" for kernel in NAS_KERNELS + RODINIA_KERNELS)
FULL_WORKLOADS = (
    tuple(f"{kernel}:{FULL_CLASS}" for kernel in NAS_KERNELS + RODINIA_KERNELS)
    + tuple(f"stream:{mib}" for mib in STREAM_MIB)
    + tuple(f"gups:{mib}" for mib in GUPS_MIB)
    + tuple(f"trmv:{mib}" for mib in TRMV_MIB)
    + tuple(f"ihist:{mib}" for mib in IHIST_MIB)
    + tuple(f"{kernel}:{mib}" for kernel in STENCIL_KERNELS for mib in STENCIL_MIB)
    + tuple(f"cholesky:{mib}" for mib in CHOLESKY_MIB)
    + tuple(f"qr:{mib}" for mib in QR_MIB)
    + SMALL_WORKLOADS
)
TEST_WORKLOADS = ("stream:1", "cg:S", "is:S")
# Every workload of the full sweep but the two whose class W runs take
# several seconds of host time each (mg, ft), for a sweep of a quarter of an
# hour: every thread and page mapping, four prefetcher settings (BENCHMARKS.md,
# "Configuration advisor").
MEDIUM_WORKLOADS = tuple(w for w in FULL_WORKLOADS if w not in (f"mg:{FULL_CLASS}", f"ft:{FULL_CLASS}"))
FOUR_PREFETCHES = ("intel:1111", "intel:0000", "intel:1100", "intel:0011")
# Every configuration over the full size's workloads whose runs are short:
# the sixteen kernels at class S, the small inputs of the other families
# (GUPS in the L3s, STREAM at 2 MiB, the triangular product, the integral
# histogram, the stencils and the two tiled factorisations at their smaller
# sizes) and the three class W kernels that take under half a second a run
# (cg, ep, bt): 117 regions, a complete brute-force ground truth in about
# 11 minutes on 2 cores (BENCHMARKS.md, "A complete sweep").
SMALL_FULL_WORKLOADS = SMALL_WORKLOADS + (
    "gups:8", "stream:2", "trmv:32", "ihist:32", "jacobi:8", "gauss-seidel:8", "red-black:8",
    "cholesky:8", "qr:8", f"cg:{FULL_CLASS}", f"ep:{FULL_CLASS}", f"bt:{FULL_CLASS}")


def every_layout(space: ConfigurationSpace) -> tuple[ThreadLayout, ...]:
    return space.layouts


def one_node_and_all_nodes_scatter(space: ConfigurationSpace) -> tuple[ThreadLayout, ...]:
    """The two ends: every thread on one node, and all cores scattered over all nodes."""
    widest = max(layout.nodes for layout in space.layouts)
    return tuple(layout for layout in space.layouts
                 if layout.nodes == 1 or (layout.nodes == widest and layout.thread_mapping == SCATTER))


@dataclass(frozen=True)
class SweepSize:
    name: str
    workloads: tuple[str, ...]
    layouts: Callable[[ConfigurationSpace], tuple[ThreadLayout, ...]]
    page_mappings: tuple[str, ...] | None  # None: every one the space has
    prefetches: tuple[str, ...] | None  # None: all 16

    def configurations(self, space: ConfigurationSpace) -> tuple[Configuration, ...]:
        layouts = self.layouts(space)
        return tuple(
            c for c in space.configurations()
            if c.layout in layouts
            and (self.page_mappings is None or c.page_mapping in self.page_mappings)
            and (self.prefetches is None or c.prefetch in self.prefetches))


SIZES = {
    size.name: size
    for size in (
        # A few regions and configurations: the pipeline's shape in seconds.
        SweepSize("test", TEST_WORKLOADS, one_node_and_all_nodes_scatter,
                  page_mappings=(LOCAL, REMOTE, INTERLEAVE, LOCALITY),
                  prefetches=FOUR_PREFETCHES),
        # The full sweep's workloads but mg:W and ft:W, every NUMA
        # configuration, four prefetcher settings.
        SweepSize("medium", MEDIUM_WORKLOADS, every_layout, page_mappings=None, prefetches=FOUR_PREFETCHES),
        # Every configuration over the regions whose runs are short.
        SweepSize("small-full", SMALL_FULL_WORKLOADS, every_layout, page_mappings=None, prefetches=None),
        # Every region under every configuration: the ground truth.
        SweepSize("full", FULL_WORKLOADS, every_layout, page_mappings=None, prefetches=None),
    )
}
