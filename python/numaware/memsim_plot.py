"""The plot of a ``numaware sim memory --json`` document.

Two panels, one bar (group) per prefetcher run: the speedup against the
document's baseline (the first prefetcher listed), and the bytes each level
moved (L1, L2 and L3 fills, DRAM reads from the local and from remote
sockets, writebacks). The title says the figures are simulated by the
throughput model and names the preset and the workload.

It reads only the JSON document the command prints, and checks it first: a
missing or ill-typed field, or ``simulated`` not true, raises
``DocumentError`` naming the field (``runs[1].bytes.dram_remote``).

Command line (``numaware sim memory --plot FILE`` runs it the same way)::

    python3 -m numaware.memsim_plot IN.json OUT.png    # IN '-': standard input
    python3 -m numaware.memsim_plot --check OUT.png    # matplotlib present, OUT writable

A failure prints one line on standard error and exits non-zero (2 for
wrong arguments).
"""

from __future__ import annotations

import contextlib
import importlib.util
import json
import math
import os
import sys
import tempfile
from dataclasses import dataclass

PROGRAM = "numaware.memsim_plot"
INSTALL_HINT = "scripts/bootstrap, or apt-get install python3-matplotlib"

# The byte counters of a run, in plotting order, with their legend labels.
BYTE_FIELDS = (
    ("l1", "L1 fills"),
    ("l2", "L2 fills"),
    ("l3", "L3 fills"),
    ("dram_local", "DRAM reads, local"),
    ("dram_remote", "DRAM reads, remote"),
    ("writeback", "writebacks to DRAM"),
)


class PlotError(Exception):
    """A failure the command line reports as one line."""


class DocumentError(PlotError, ValueError):
    """The document lacks a field or has one of the wrong type or value.

    ``field`` is the field's path in the document, e.g. ``runs[1].speedup``.
    """

    def __init__(self, field: str, problem: str):
        super().__init__(f"{field}: {problem}")
        self.field = field


class OutputError(PlotError):
    """The PNG cannot be written where it was asked for."""


class MissingDependency(PlotError):
    """matplotlib cannot be imported by this interpreter."""


@dataclass(frozen=True)
class Run:
    prefetch: str
    simulated_s: float
    speedup: float
    prefetches_issued: int
    bytes: dict[str, int]  # every key of BYTE_FIELDS


@dataclass(frozen=True)
class MemsimDocument:
    preset: str
    workload: str
    baseline: str
    mapping: str | None
    runs: tuple[Run, ...]


def _show(value) -> str:
    """A value as it appears in JSON, short and on one line."""
    text = json.dumps(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _kind(value) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "a list"
    return "an object"


def _get(obj: dict, key: str, path: str):
    if key not in obj:
        raise DocumentError(path, "missing")
    return obj[key]


def _string(obj: dict, key: str, path: str) -> str:
    value = _get(obj, key, path)
    if not isinstance(value, str) or not value:
        raise DocumentError(path, f"expected a non-empty string, got {_show(value)}")
    return value


def _number(obj: dict, key: str, path: str, *, integer: bool = False) -> float:
    value = _get(obj, key, path)
    # JSON's true and false are bools, which Python counts as ints.
    ok = isinstance(value, int) if integer else isinstance(value, (int, float))
    if isinstance(value, bool) or not ok:
        wanted = "an integer" if integer else "a number"
        raise DocumentError(path, f"expected {wanted}, got {_kind(value)} ({_show(value)})")
    if not math.isfinite(value) or value < 0:
        raise DocumentError(path, f"expected a finite number >= 0, got {_show(value)}")
    return value


def _object(obj: dict, key: str, path: str) -> dict:
    value = _get(obj, key, path)
    if not isinstance(value, dict):
        raise DocumentError(path, f"expected an object, got {_kind(value)}")
    return value


def _simulated(obj: dict, path: str) -> None:
    value = _get(obj, "simulated", path)
    if value is not True:
        raise DocumentError(
            path, f"must be true (a numaware sim memory --json document), got {_show(value)}")


def _run(obj, path: str) -> Run:
    if not isinstance(obj, dict):
        raise DocumentError(path, f"expected an object, got {_kind(obj)}")
    _simulated(obj, f"{path}.simulated")
    counts = _object(obj, "bytes", f"{path}.bytes")
    return Run(
        prefetch=_string(obj, "prefetch", f"{path}.prefetch"),
        simulated_s=_number(obj, "simulated_s", f"{path}.simulated_s"),
        speedup=_number(obj, "speedup", f"{path}.speedup"),
        prefetches_issued=int(_number(obj, "prefetches_issued", f"{path}.prefetches_issued", integer=True)),
        bytes={key: int(_number(counts, key, f"{path}.bytes.{key}", integer=True)) for key, _ in BYTE_FIELDS},
    )


def parse_document(doc) -> MemsimDocument:
    """Checks a decoded ``numaware sim memory --json`` document.

    Raises DocumentError naming the first field that is missing, of the
    wrong type, or out of range.
    """
    if not isinstance(doc, dict):
        raise DocumentError("document", f"expected a JSON object, got {_kind(doc)}")
    _simulated(doc, "simulated")
    runs = _get(doc, "runs", "runs")
    if not isinstance(runs, list) or not runs:
        raise DocumentError("runs", f"expected a non-empty list of runs, got {_show(runs)}")
    mapping = doc.get("mapping")
    if mapping is not None and not isinstance(mapping, str):
        raise DocumentError("mapping", f"expected a string, got {_show(mapping)}")
    return MemsimDocument(
        preset=_string(doc, "preset", "preset"),
        workload=_string(doc, "workload", "workload"),
        baseline=_string(doc, "baseline", "baseline"),
        mapping=mapping,
        runs=tuple(_run(run, f"runs[{i}]") for i, run in enumerate(runs)),
    )


def load_document(path: str) -> MemsimDocument:
    """Reads and checks a document from a file, or standard input for '-'."""
    try:
        if path == "-":
            text = sys.stdin.read()
        else:
            with open(path, encoding="utf-8") as f:
                text = f.read()
    except OSError as e:
        raise PlotError(f"{path}: cannot read: {e.strerror}") from e
    except UnicodeDecodeError as e:
        raise PlotError(f"{path}: not UTF-8 text (byte offset {e.start})") from e
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as e:
        raise PlotError(f"{path}: not JSON: {e.msg} at line {e.lineno} column {e.colno}") from e
    return parse_document(doc)


def _matplotlib():
    """matplotlib's Figure and the Agg canvas (no display, no pyplot state)."""
    try:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
    except ImportError as e:
        raise MissingDependency(
            f"matplotlib is not installed for {sys.executable} ({INSTALL_HINT})") from e
    return Figure, FigureCanvasAgg


def check_output(out: str) -> None:
    """Raises OutputError unless a PNG can be written at ``out``.

    Writability is tried by creating (and removing) a file beside it:
    permission bits alone do not tell, e.g. for root or a read-only mount.
    """
    if not out.lower().endswith(".png"):
        raise OutputError(f"{out}: the plot is a PNG; give a file name ending in .png")
    if os.path.isdir(out):
        raise OutputError(f"{out}: is a directory")
    directory = os.path.dirname(out) or "."
    if not os.path.isdir(directory):
        problem = "is not a directory" if os.path.exists(directory) else "does not exist"
        raise OutputError(f"{out}: '{directory}' {problem}")
    try:
        fd, probe = tempfile.mkstemp(prefix=".numaware-plot-", dir=directory)
    except OSError as e:
        raise OutputError(f"{out}: cannot write in '{directory}': {e.strerror}") from e
    os.close(fd)
    os.unlink(probe)


def check(out: str) -> None:
    """What ``--check`` tests: matplotlib importable, ``out`` writable.

    Cheap (matplotlib is found, not imported), so the CLI runs it before a
    simulation instead of learning after it that the plot cannot be made.
    """
    if importlib.util.find_spec("matplotlib") is None:
        raise MissingDependency(f"matplotlib is not installed for {sys.executable} ({INSTALL_HINT})")
    check_output(out)


def _byte_unit(largest: float) -> tuple[float, str]:
    for scale, unit in ((1e9, "GB"), (1e6, "MB"), (1e3, "kB")):
        if largest >= scale:
            return scale, unit
    return 1.0, "bytes"


def make_figure(document: MemsimDocument):
    """The two-panel figure (a matplotlib Figure on the Agg canvas)."""
    Figure, FigureCanvasAgg = _matplotlib()
    runs = document.runs
    n = len(runs)
    fig = Figure(figsize=(max(10.0, 4.0 + 1.8 * n), 5.0), layout="constrained")
    FigureCanvasAgg(fig)
    where = f"preset {document.preset}, workload {document.workload}"
    if document.mapping:
        where += f", pages {document.mapping}"
    fig.suptitle(f"numaware sim memory: simulated (throughput model)\n{where}")
    x = list(range(n))
    ticks = [f"{r.prefetch}\n{r.prefetches_issued:,} prefetches" for r in runs]
    speed_ax, bytes_ax = fig.subplots(1, 2)

    bars = speed_ax.bar(x, [r.speedup for r in runs], color="tab:blue", width=0.6)
    speed_ax.bar_label(bars, labels=[f"{r.speedup:.3f}" for r in runs], padding=2, fontsize=8)
    speed_ax.axhline(1.0, color="0.3", linestyle="--", linewidth=1, label=f"baseline: {document.baseline}")
    speed_ax.set_xticks(x, ticks, fontsize=8)
    speed_ax.set_ylabel(f"speedup vs {document.baseline} (simulated)")
    speed_ax.set_title("Speedup per prefetcher")
    speed_ax.set_ylim(0, max(1.0, *(r.speedup for r in runs)) * 1.15)
    speed_ax.legend(loc="lower right", fontsize=8)

    largest = max(max(r.bytes.values()) for r in runs)
    scale, unit = _byte_unit(largest)
    width = 0.8 / len(BYTE_FIELDS)
    for i, (key, label) in enumerate(BYTE_FIELDS):
        offset = (i - (len(BYTE_FIELDS) - 1) / 2) * width
        bytes_ax.bar([p + offset for p in x], [r.bytes[key] / scale for r in runs], width, label=label)
    bytes_ax.set_xticks(x, ticks, fontsize=8)
    bytes_ax.set_ylabel(f"bytes moved ({unit}, simulated)")
    bytes_ax.set_title("Bytes moved per level")
    # Headroom above the tallest bar for the legend, which lies across the top.
    bytes_ax.set_ylim(0, max(largest / scale, 1.0) * 1.3)
    bytes_ax.legend(loc="upper center", ncol=3, fontsize=8)
    return fig


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def write_png(fig, out: str, *, dpi: int = 100) -> None:
    """Saves ``fig`` as a PNG at ``out``, whole or not at all.

    The image is written to a temporary file beside ``out`` and renamed over
    it, so a failure leaves neither a partial PNG nor the temporary file.
    """
    check_output(out)
    directory = os.path.dirname(out) or "."
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{os.path.basename(out)}.", suffix=".tmp", dir=directory)
    except OSError as e:
        raise OutputError(f"{out}: cannot write in '{directory}': {e.strerror}") from e
    try:
        with os.fdopen(fd, "wb") as f:
            fig.savefig(f, format="png", dpi=dpi)
        os.chmod(tmp, 0o666 & ~_umask())  # mkstemp made it 0600
        os.replace(tmp, out)
    except OSError as e:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise OutputError(f"{out}: cannot write: {e.strerror}") from e
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def plot(document: MemsimDocument, out: str) -> None:
    """Writes the plot of ``document`` as a PNG at ``out``."""
    write_png(make_figure(document), out)


def _fail(message: str, status: int) -> int:
    print(f"{PROGRAM}: {message}", file=sys.stderr)
    return status


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else list(argv)
    if args in (["-h"], ["--help"]):
        print(__doc__)
        return 0
    try:
        if len(args) == 2 and args[0] == "--check":
            check(args[1])
            return 0
        if len(args) != 2 or any(a.startswith("--") for a in args):
            return _fail(f"expected IN.json OUT.png or --check OUT.png, got {_show(args)} (--help)", 2)
        plot(load_document(args[0]), args[1])
        return 0
    except PlotError as e:
        return _fail(str(e), 1)


if __name__ == "__main__":
    sys.exit(main())
