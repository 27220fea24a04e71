"""The configuration space of a machine preset: what the advisor chooses from.

A configuration is a thread mapping (how many threads on how many nodes,
contiguous or scatter), a page mapping and a setting of the four Intel-like
prefetcher knobs. The space follows the published characterisation (Sánchez
Barrera thesis, ch. 4), scaled to the preset:

- thread mappings: all cores of 1 node, of 2 nodes and of all nodes, each
  contiguous or scatter where the two differ (on one node they do not). On
  ``thesis-4s`` (4 sockets x 4 cores): 4 threads on 1 node, 8 on 2 and 16
  on 4, contiguous and scatter: 5 mappings;
- page mappings: ``local`` (every page on the threads' single node),
  ``remote`` (every page on another node), ``interleave``, ``locality`` and
  ``balance``; ``local`` and ``remote`` only for single-node thread
  mappings, as published. ``first-touch`` is swept and reported too but is
  not a model output;
- prefetch: the 16 settings ``intel:XXXX`` of the knobs (docs/SIMULATOR.md:
  character i switches knob i, in the order of ``PREFETCH_KNOBS``).

A preset is described here as data (``Preset``); the simulator's own preset
is what the sweep runs, under the same name.

Errors are ``ConfigurationError`` (a ValueError), one line naming the field.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass, fields

CONTIGUOUS = "contiguous"
SCATTER = "scatter"
THREAD_MAPPINGS = (CONTIGUOUS, SCATTER)

FIRST_TOUCH = "first-touch"
LOCAL = "local"
REMOTE = "remote"
INTERLEAVE = "interleave"
LOCALITY = "locality"
BALANCE = "balance"
# Every page mapping the sweep runs, in reporting order.
PAGE_MAPPINGS = (FIRST_TOUCH, LOCAL, REMOTE, INTERLEAVE, LOCALITY, BALANCE)
# The page mappings a model may choose; first touch is measured as a
# reference only, as published.
MODEL_PAGE_MAPPINGS = tuple(m for m in PAGE_MAPPINGS if m != FIRST_TOUCH)
# Meaningful only when every thread runs on one node.
SINGLE_NODE_PAGE_MAPPINGS = (LOCAL, REMOTE)

# The knobs of an ``intel:XXXX`` setting, character by character.
PREFETCH_KNOBS = ("L1 IP-stride", "L1 next-line", "L2 adjacent line", "L2 streamer")
# All 16 settings, every knob on first (the published baseline), all off last.
PREFETCH_SETTINGS = tuple("intel:" + "".join(bits) for bits in itertools.product("10", repeat=len(PREFETCH_KNOBS)))
_PREFETCH = re.compile(r"intel:[01]{%d}" % len(PREFETCH_KNOBS))


class ConfigurationError(ValueError):
    """A configuration, a field of one, or a preset the space cannot hold.

    ``field`` names the offending field (``page_mapping``, ``preset``...).
    """

    def __init__(self, field: str, message: str):
        super().__init__(message)
        self.field = field


@dataclass(frozen=True)
class Preset:
    """A machine preset as the configuration space sees it."""

    name: str  # as the simulator's --preset takes it
    sockets: int  # one NUMA node per socket
    cores_per_socket: int
    prefetcher_control: bool  # has the four Intel-like knobs (intel:XXXX)


# The simulator's presets, read once per process from the numaware command
# (`numaware sim memory --list-presets --json`, simulator.list_presets):
# src/sim/memory/presets.cpp is their one definition. `NAME:S`, the first
# S sockets, is understood by preset().
_presets: dict[str, Preset] | None = None


def presets() -> dict[str, Preset]:
    """Every simulator preset by name (from the command ``simulator.find_cli`` finds)."""
    global _presets
    if _presets is None:
        from .simulator import find_cli, list_presets   # simulator.py imports this module
        _presets = {d["name"]: Preset(d["name"], d["sockets"], d["cores_per_socket"], d["prefetcher_control"])
                    for d in list_presets(find_cli())}
    return _presets


def preset(name: str) -> Preset:
    """The preset called ``name``, or ``NAME:S`` for its first S sockets."""
    base, _, sockets = name.partition(":")
    known = presets()
    if base not in known:
        raise ConfigurationError("preset", f"unknown preset '{name}' (known: {', '.join(known)}, or NAME:SOCKETS)")
    p = known[base]
    if not sockets:
        return p
    if not sockets.isdigit() or not 1 <= int(sockets) <= p.sockets:
        raise ConfigurationError("preset", f"preset '{name}': {base} has 1 to {p.sockets} sockets, got '{sockets}'")
    return Preset(name, int(sockets), p.cores_per_socket, p.prefetcher_control)


@dataclass(frozen=True)
class ThreadLayout:
    """A thread mapping: ``threads`` threads on ``nodes`` nodes, in an order."""

    threads: int
    nodes: int
    thread_mapping: str  # contiguous or scatter (one node: contiguous)

    @property
    def name(self) -> str:
        if self.nodes == 1:
            return f"{self.threads} threads on 1 node"
        return f"{self.threads} threads on {self.nodes} nodes, {self.thread_mapping}"


@dataclass(frozen=True)
class Configuration:
    """One point of the space; ``key`` is its stable string form.

    The fields are checked on construction (a value out of its set, or a
    page mapping the thread mapping cannot have); whether the configuration
    fits a preset is ``ConfigurationSpace.check``'s question.
    """

    threads: int
    nodes: int
    thread_mapping: str
    page_mapping: str
    prefetch: str

    def __post_init__(self):
        for name in ("threads", "nodes"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ConfigurationError(name, f"configuration field '{name}': expected an integer >= 1, got {value!r}")
        if self.nodes > self.threads:
            raise ConfigurationError(
                "nodes", f"configuration field 'nodes': {self.nodes} nodes for {self.threads} threads")
        _one_of("thread_mapping", self.thread_mapping, THREAD_MAPPINGS)
        if self.nodes == 1 and self.thread_mapping != CONTIGUOUS:
            # Contiguous and scatter are the same on one node; one name keeps keys unique.
            raise ConfigurationError(
                "thread_mapping", f"configuration field 'thread_mapping': on one node it is '{CONTIGUOUS}', "
                f"got {self.thread_mapping!r}")
        _one_of("page_mapping", self.page_mapping, PAGE_MAPPINGS)
        if self.page_mapping in SINGLE_NODE_PAGE_MAPPINGS and self.nodes != 1:
            raise ConfigurationError(
                "page_mapping", f"configuration field 'page_mapping': '{self.page_mapping}' needs the threads on "
                f"one node, got {self.nodes}")
        if not isinstance(self.prefetch, str) or not _PREFETCH.fullmatch(self.prefetch):
            raise ConfigurationError(
                "prefetch", f"configuration field 'prefetch': expected intel:XXXX with X 0 or 1, got {self.prefetch!r}")

    @property
    def key(self) -> str:
        """``threads=16,nodes=4,thread_mapping=scatter,page_mapping=interleave,prefetch=intel:1010``."""
        return ",".join(f"{f.name}={getattr(self, f.name)}" for f in fields(self))

    @property
    def layout(self) -> ThreadLayout:
        return ThreadLayout(self.threads, self.nodes, self.thread_mapping)

    @property
    def model_output(self) -> bool:
        """Whether a model may choose it (first touch is only reported)."""
        return self.page_mapping != FIRST_TOUCH

    @classmethod
    def from_fields(cls, values: dict) -> Configuration:
        """From a mapping of field names to values; names every unknown or missing field."""
        known = [f.name for f in fields(cls)]
        for name in values:
            if name not in known:
                raise ConfigurationError(
                    str(name), f"unknown configuration field '{name}' (fields: {', '.join(known)})")
        for name in known:
            if name not in values:
                raise ConfigurationError(name, f"configuration field '{name}' is missing")
        return cls(**values)

    @classmethod
    def from_key(cls, key: str) -> Configuration:
        """The inverse of ``key``."""
        values: dict = {}
        for part in key.split(","):
            name, eq, value = part.partition("=")
            if not eq or not name:
                raise ConfigurationError("key", f"configuration key {key!r}: expected NAME=VALUE, got {part!r}")
            if name in values:
                raise ConfigurationError(name, f"configuration key {key!r}: field '{name}' given twice")
            values[name] = value
        for name in ("threads", "nodes"):
            if name in values:
                if not values[name].isdigit():
                    raise ConfigurationError(
                        name, f"configuration field '{name}': expected an integer >= 1, got {values[name]!r}")
                values[name] = int(values[name])
        return cls.from_fields(values)


def _one_of(name: str, value, allowed: tuple[str, ...]) -> None:
    if value not in allowed:
        raise ConfigurationError(name, f"configuration field '{name}': {value!r} is not one of {', '.join(allowed)}")


@dataclass(frozen=True)
class ConfigurationSpace:
    """Every configuration of one preset, in a fixed order."""

    preset: Preset
    layouts: tuple[ThreadLayout, ...]
    prefetches: tuple[str, ...]

    def page_mappings(self, layout: ThreadLayout) -> tuple[str, ...]:
        """The page mappings swept under ``layout`` (first touch included)."""
        out = []
        for m in PAGE_MAPPINGS:
            if m in SINGLE_NODE_PAGE_MAPPINGS and layout.nodes != 1:
                continue
            # One socket has no other node to be remote to or to interleave over.
            if m in (REMOTE, INTERLEAVE) and self.preset.sockets == 1:
                continue
            out.append(m)
        return tuple(out)

    def configurations(self, *, model_outputs_only: bool = False) -> tuple[Configuration, ...]:
        """Thread mapping, then page mapping, then prefetch setting."""
        return tuple(
            Configuration(layout.threads, layout.nodes, layout.thread_mapping, page, prefetch)
            for layout in self.layouts
            for page in self.page_mappings(layout)
            if not (model_outputs_only and page == FIRST_TOUCH)
            for prefetch in self.prefetches)

    def check(self, configuration: Configuration) -> Configuration:
        """``configuration`` if it belongs to this space; else names the field that does not fit."""
        c = configuration
        p = self.preset
        if c.nodes > p.sockets:
            raise ConfigurationError("nodes", f"configuration field 'nodes': {p.name} has {p.sockets} nodes, got {c.nodes}")
        if c.threads != c.nodes * p.cores_per_socket:
            raise ConfigurationError(
                "threads", f"configuration field 'threads': {p.name} runs {p.cores_per_socket} threads per node "
                f"(all its cores), so {c.nodes * p.cores_per_socket} on {c.nodes} node(s), got {c.threads}")
        if c.layout not in self.layouts:
            raise ConfigurationError(
                "nodes", f"configuration field 'nodes': {p.name} maps threads on "
                f"{', '.join(sorted({str(l.nodes) for l in self.layouts}))} node(s), got {c.nodes}")
        if c.page_mapping not in self.page_mappings(c.layout):
            raise ConfigurationError(
                "page_mapping", f"configuration field 'page_mapping': '{c.page_mapping}' is not swept on {p.name}")
        if c.prefetch not in self.prefetches:
            raise ConfigurationError("prefetch", f"configuration field 'prefetch': '{c.prefetch}' is not swept")
        return c

    def __contains__(self, configuration) -> bool:
        try:
            self.check(configuration)
        except ConfigurationError:
            return False
        return True

    def __len__(self) -> int:
        return len(self.configurations())


def thread_layouts(p: Preset) -> tuple[ThreadLayout, ...]:
    """All cores of 1 node, of 2 nodes and of all nodes; contiguous and scatter where they differ."""
    out = []
    for nodes in sorted({1, min(2, p.sockets), p.sockets}):
        orders = (CONTIGUOUS,) if nodes == 1 else THREAD_MAPPINGS
        out.extend(ThreadLayout(nodes * p.cores_per_socket, nodes, order) for order in orders)
    return tuple(out)


def configuration_space(p: Preset | str) -> ConfigurationSpace:
    """The space of a preset (a ``Preset`` or its name).

    A preset without the four prefetcher knobs has no space of this shape:
    ConfigurationError("preset X has no prefetcher control").
    """
    if isinstance(p, str):
        p = preset(p)
    if not p.prefetcher_control:
        raise ConfigurationError("preset", f"preset {p.name} has no prefetcher control")
    return ConfigurationSpace(p, thread_layouts(p), PREFETCH_SETTINGS)
