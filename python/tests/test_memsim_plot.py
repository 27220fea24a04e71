"""numaware.memsim_plot: the plot of a `numaware sim memory --json` document.

The documents here are written by hand in the shape the command prints
(tests/unit/test_tools_cli_sim_memory.cpp checks the command's side, and its
--plot end to end).
"""

import copy
import json
import os
import subprocess
import sys

import pytest

from numaware import memsim_plot
from numaware.memsim_plot import DocumentError, MissingDependency, OutputError

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(memsim_plot.__file__)))


def _run(prefetch, seconds, speedup, issued, dram_local, dram_remote):
    return {
        "prefetch": prefetch,
        "simulated": True,
        "simulated_s": seconds,
        "speedup": speedup,
        "accesses": 4096,
        "prefetches_issued": issued,
        "bytes": {"l1": 262144, "l2": 131072, "l3": 65536,
                  "dram_local": dram_local, "dram_remote": dram_remote, "writeback": 4096},
    }


DOCUMENT = {
    "label": "simulated (memory-hierarchy throughput model, not cycle-accurate)",
    "simulated": True,
    "preset": "thesis-4s",
    "workload": "cg:S",
    "mapping": "first-touch",
    "baseline": "none",
    "runs": [
        _run("none", 2.0e-5, 1.0, 0, 32768, 98304),
        _run("stride:8", 1.6e-5, 1.25, 8103, 32768, 100032),
        _run("nasp:8:64", 1.5e-5, 1.3333, 8268, 32768, 110592),
    ],
}


@pytest.fixture
def doc():
    return copy.deepcopy(DOCUMENT)


def _is_png(path):
    with open(path, "rb") as f:
        return f.read(8) == PNG_SIGNATURE


def test_reads_every_run(doc):
    d = memsim_plot.parse_document(doc)
    assert (d.preset, d.workload, d.baseline, d.mapping) == ("thesis-4s", "cg:S", "none", "first-touch")
    assert [r.prefetch for r in d.runs] == ["none", "stride:8", "nasp:8:64"]
    assert [r.speedup for r in d.runs] == [1.0, 1.25, 1.3333]
    assert d.runs[2].prefetches_issued == 8268
    assert d.runs[1].bytes["dram_remote"] == 100032
    assert set(d.runs[0].bytes) == {key for key, _ in memsim_plot.BYTE_FIELDS}


def test_plot_writes_a_png(doc, tmp_path):
    out = tmp_path / "memsim.png"
    memsim_plot.plot(memsim_plot.parse_document(doc), str(out))
    assert _is_png(out)
    assert out.stat().st_size > 1000
    assert os.listdir(tmp_path) == ["memsim.png"]  # no temporary or probe file left


def test_plot_replaces_an_existing_file(doc, tmp_path):
    out = tmp_path / "memsim.png"
    out.write_bytes(b"old")
    memsim_plot.plot(memsim_plot.parse_document(doc), str(out))
    assert _is_png(out)


def test_figure_says_simulated_and_names_preset_and_workload(doc):
    fig = memsim_plot.make_figure(memsim_plot.parse_document(doc))
    title = fig._suptitle.get_text()
    assert "simulated (throughput model)" in title
    assert "preset thesis-4s" in title and "workload cg:S" in title
    speed_ax, bytes_ax = fig.axes
    assert speed_ax.get_ylabel() == "speedup vs none (simulated)"
    assert "simulated" in bytes_ax.get_ylabel()
    labels = [t.get_text() for t in speed_ax.get_xticklabels()]
    assert labels[1] == "stride:8\n8,103 prefetches"
    heights = [p.get_height() for p in speed_ax.patches]
    assert heights == pytest.approx([1.0, 1.25, 1.3333])
    # one bar per byte counter and run
    assert len(bytes_ax.patches) == len(memsim_plot.BYTE_FIELDS) * 3


def test_a_single_run_plots(doc, tmp_path):
    doc["runs"] = doc["runs"][:1]
    out = tmp_path / "one.png"
    memsim_plot.plot(memsim_plot.parse_document(doc), str(out))
    assert _is_png(out)


def _drop(doc, *path):
    target = doc
    for key in path[:-1]:
        target = target[key]
    del target[path[-1]]


@pytest.mark.parametrize(
    "path, field",
    [
        (("runs",), "runs"),
        (("simulated",), "simulated"),
        (("preset",), "preset"),
        (("workload",), "workload"),
        (("baseline",), "baseline"),
        (("runs", 1, "speedup"), "runs[1].speedup"),
        (("runs", 0, "prefetch"), "runs[0].prefetch"),
        (("runs", 2, "simulated"), "runs[2].simulated"),
        (("runs", 2, "simulated_s"), "runs[2].simulated_s"),
        (("runs", 1, "prefetches_issued"), "runs[1].prefetches_issued"),
        (("runs", 1, "bytes"), "runs[1].bytes"),
        (("runs", 0, "bytes", "dram_remote"), "runs[0].bytes.dram_remote"),
    ],
)
def test_missing_field_is_named(doc, path, field):
    _drop(doc, *path)
    with pytest.raises(DocumentError) as e:
        memsim_plot.parse_document(doc)
    assert e.value.field == field
    assert str(e.value) == f"{field}: missing"


@pytest.mark.parametrize(
    "change, field, words",
    [
        (lambda d: d.update(simulated=False), "simulated", "must be true"),
        (lambda d: d["runs"][1].update(simulated=False), "runs[1].simulated", "must be true"),
        (lambda d: d["runs"][1].update(simulated="yes"), "runs[1].simulated", "must be true"),
        (lambda d: d.update(runs=[]), "runs", "non-empty list"),
        (lambda d: d.update(runs={"none": {}}), "runs", "non-empty list"),
        (lambda d: d["runs"].__setitem__(1, "stride:8"), "runs[1]", "expected an object"),
        (lambda d: d["runs"][0].update(speedup="1.0"), "runs[0].speedup", "expected a number, got a string"),
        (lambda d: d["runs"][0].update(speedup=True), "runs[0].speedup", "got a boolean"),
        (lambda d: d["runs"][0].update(speedup=-1), "runs[0].speedup", ">= 0"),
        (lambda d: d["runs"][0].update(prefetches_issued=1.5), "runs[0].prefetches_issued", "expected an integer"),
        (lambda d: d["runs"][2]["bytes"].update(l3=None), "runs[2].bytes.l3", "got null"),
        (lambda d: d["runs"][0].update(bytes=[1, 2]), "runs[0].bytes", "expected an object"),
        (lambda d: d["runs"][0].update(prefetch=""), "runs[0].prefetch", "non-empty string"),
        (lambda d: d.update(mapping=3), "mapping", "expected a string"),
    ],
)
def test_bad_field_is_named(doc, change, field, words):
    change(doc)
    with pytest.raises(DocumentError) as e:
        memsim_plot.parse_document(doc)
    assert e.value.field == field
    assert words in str(e.value)
    assert "\n" not in str(e.value)


def test_a_document_that_is_not_an_object(doc):
    with pytest.raises(DocumentError) as e:
        memsim_plot.parse_document([doc])
    assert e.value.field == "document"


def test_output_must_be_a_png_in_a_directory_that_exists(doc, tmp_path):
    d = memsim_plot.parse_document(doc)
    with pytest.raises(OutputError, match="ending in .png"):
        memsim_plot.plot(d, str(tmp_path / "plot.pdf"))
    with pytest.raises(OutputError, match="does not exist"):
        memsim_plot.plot(d, str(tmp_path / "missing" / "plot.png"))
    (tmp_path / "dir.png").mkdir()
    with pytest.raises(OutputError, match="is a directory"):
        memsim_plot.plot(d, str(tmp_path / "dir.png"))
    (tmp_path / "file").write_text("")
    with pytest.raises(OutputError, match="'.*file' is not a directory"):
        memsim_plot.plot(d, str(tmp_path / "file" / "plot.png"))
    assert sorted(os.listdir(tmp_path)) == ["dir.png", "file"]


def test_without_matplotlib_the_error_says_how_to_get_it(doc, tmp_path, monkeypatch, capsys):
    # None in sys.modules makes `import matplotlib...` fail and find_spec
    # report it absent, as on a machine without python3-matplotlib.
    for name in [m for m in sys.modules if m == "matplotlib" or m.startswith("matplotlib.")]:
        monkeypatch.setitem(sys.modules, name, None)
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    with pytest.raises(MissingDependency, match="apt-get install python3-matplotlib"):
        memsim_plot.check(str(tmp_path / "out.png"))
    with pytest.raises(MissingDependency, match="scripts/bootstrap"):
        memsim_plot.plot(memsim_plot.parse_document(doc), str(tmp_path / "out.png"))
    source = tmp_path / "in.json"
    source.write_text(json.dumps(doc))
    assert memsim_plot.main([str(source), str(tmp_path / "out.png")]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("numaware.memsim_plot: matplotlib is not installed")
    assert not (tmp_path / "out.png").exists()


# ---- the command line: python3 -m numaware.memsim_plot ----

def _cli(*args, stdin=None):
    env = dict(os.environ, PYTHONPATH=PACKAGE_DIR)
    return subprocess.run([sys.executable, "-m", "numaware.memsim_plot", *args], input=stdin,
                          capture_output=True, text=True, env=env, timeout=120)


def _one_error_line(result, *words):
    assert result.returncode != 0
    assert result.stdout == ""
    assert result.stderr.count("\n") == 1, result.stderr
    assert result.stderr.startswith("numaware.memsim_plot: ")
    for w in words:
        assert w in result.stderr


def test_cli_writes_the_png(doc, tmp_path):
    source = tmp_path / "in.json"
    source.write_text(json.dumps(doc))
    r = _cli(str(source), str(tmp_path / "out.png"))
    assert r.returncode == 0, r.stderr
    assert (r.stdout, r.stderr) == ("", "")
    assert _is_png(tmp_path / "out.png")


def test_cli_reads_standard_input(doc, tmp_path):
    r = _cli("-", str(tmp_path / "out.png"), stdin=json.dumps(doc))
    assert r.returncode == 0, r.stderr
    assert _is_png(tmp_path / "out.png")


def test_cli_names_the_missing_field_in_one_line(doc, tmp_path):
    del doc["runs"][1]["bytes"]["dram_local"]
    source = tmp_path / "in.json"
    source.write_text(json.dumps(doc))
    r = _cli(str(source), str(tmp_path / "out.png"))
    _one_error_line(r, "runs[1].bytes.dram_local: missing")
    assert r.returncode == 1
    assert not (tmp_path / "out.png").exists()


def test_cli_rejects_what_is_not_a_simulated_document(doc, tmp_path):
    doc["simulated"] = False
    source = tmp_path / "in.json"
    source.write_text(json.dumps(doc))
    _one_error_line(_cli(str(source), str(tmp_path / "out.png")), "simulated: must be true")
    source.write_text("{\"runs\": [")
    _one_error_line(_cli(str(source), str(tmp_path / "out.png")), "not JSON")
    _one_error_line(_cli(str(tmp_path / "absent.json"), str(tmp_path / "out.png")), "absent.json: cannot read")


def test_cli_unwritable_output_is_one_line(doc, tmp_path):
    source = tmp_path / "in.json"
    source.write_text(json.dumps(doc))
    _one_error_line(_cli(str(source), str(tmp_path / "no" / "out.png")), "does not exist")
    _one_error_line(_cli("--check", str(tmp_path / "no" / "out.png")), "does not exist")


def test_cli_check_and_usage(tmp_path):
    r = _cli("--check", str(tmp_path / "out.png"))
    assert (r.returncode, r.stdout, r.stderr) == (0, "", "")
    assert os.listdir(tmp_path) == []
    r = _cli("only-one.json")
    _one_error_line(r, "expected IN.json OUT.png")
    assert r.returncode == 2
    r = _cli("--help")
    assert r.returncode == 0 and "python3 -m numaware.memsim_plot IN.json OUT.png" in r.stdout
