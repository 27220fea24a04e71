"""numaware.advisor.space: the configuration space of a preset."""

import dataclasses

import pytest

from numaware.advisor import space
from numaware.advisor.space import Configuration, ConfigurationError, Preset, ThreadLayout, configuration_space

MODEL_PAGE_MAPPINGS = {"local", "remote", "interleave", "locality", "balance"}


def test_thesis_4s_has_the_five_published_thread_mappings_scaled():
    s = configuration_space("thesis-4s")
    assert s.layouts == (
        ThreadLayout(4, 1, "contiguous"),
        ThreadLayout(8, 2, "contiguous"),
        ThreadLayout(8, 2, "scatter"),
        ThreadLayout(16, 4, "contiguous"),
        ThreadLayout(16, 4, "scatter"),
    )


def test_thesis_4s_counts():
    s = configuration_space("thesis-4s")
    model = s.configurations(model_outputs_only=True)
    # 1 single-node mapping x 5 page mappings + 4 multi-node x 3, each x 16 prefetch settings.
    assert len(model) == (1 * 5 + 4 * 3) * 16 == 272
    # First touch is swept and reported too, under every thread mapping.
    assert len(s) == len(s.configurations()) == 272 + 5 * 16
    assert len({c.key for c in s.configurations()}) == len(s)
    assert all(c.model_output for c in model)
    assert {c.page_mapping for c in model} == MODEL_PAGE_MAPPINGS


def test_local_and_remote_only_on_single_node_mappings():
    s = configuration_space("thesis-4s")
    for c in s.configurations():
        if c.page_mapping in ("local", "remote"):
            assert c.nodes == 1, c.key
    for layout in s.layouts:
        expected = {"first-touch", "interleave", "locality", "balance"}
        if layout.nodes == 1:
            expected |= {"local", "remote"}
        assert set(s.page_mappings(layout)) == expected, layout


def test_the_sixteen_prefetch_settings():
    s = configuration_space("thesis-4s")
    assert len(s.prefetches) == 16
    assert set(s.prefetches) == {f"intel:{m:04b}" for m in range(16)}
    assert s.prefetches[0] == "intel:1111" and s.prefetches[-1] == "intel:0000"
    per_numa = {}
    for c in s.configurations():
        per_numa.setdefault((c.layout, c.page_mapping), []).append(c.prefetch)
    assert all(p == list(s.prefetches) for p in per_numa.values())


@pytest.mark.parametrize("name, layouts", [
    ("skylake-sp-2s", [(28, 1, "contiguous"), (56, 2, "contiguous"), (56, 2, "scatter")]),
    ("thesis-4s:2", [(4, 1, "contiguous"), (8, 2, "contiguous"), (8, 2, "scatter")]),
    ("thesis-4s:3", [(4, 1, "contiguous"), (8, 2, "contiguous"), (8, 2, "scatter"), (12, 3, "contiguous"),
                     (12, 3, "scatter")]),
    ("thesis-4s:1", [(4, 1, "contiguous")]),
])
def test_mappings_scale_to_the_preset(name, layouts):
    s = configuration_space(name)
    assert s.preset.name == name
    assert [(l.threads, l.nodes, l.thread_mapping) for l in s.layouts] == layouts


def test_one_socket_has_nothing_remote_or_interleaved():
    s = configuration_space("thesis-4s:1")
    assert set(s.page_mappings(s.layouts[0])) == {"first-touch", "local", "locality", "balance"}


def test_key_round_trips_and_reads_as_fields():
    s = configuration_space("thesis-4s")
    for c in s.configurations():
        assert Configuration.from_key(c.key) == c
    c = Configuration(16, 4, "scatter", "interleave", "intel:1010")
    assert c.key == "threads=16,nodes=4,thread_mapping=scatter,page_mapping=interleave,prefetch=intel:1010"


def test_a_configuration_is_frozen_and_hashable():
    c = Configuration(4, 1, "contiguous", "local", "intel:1111")
    with pytest.raises(dataclasses.FrozenInstanceError):
        c.prefetch = "intel:0000"
    assert {c: 1}[Configuration(4, 1, "contiguous", "local", "intel:1111")] == 1
    assert c in configuration_space("thesis-4s")


def _one_line(error: ConfigurationError, field: str, *words: str) -> None:
    assert isinstance(error, ValueError)
    assert error.field == field
    assert "\n" not in str(error)
    for w in words:
        assert w in str(error), str(error)


GOOD = dict(threads=4, nodes=1, thread_mapping="contiguous", page_mapping="local", prefetch="intel:1111")


def test_an_unknown_field_is_named():
    with pytest.raises(ConfigurationError) as e:
        Configuration.from_fields({**GOOD, "smt": 2})
    _one_line(e.value, "smt", "unknown configuration field 'smt'", "fields: threads, nodes")
    with pytest.raises(ConfigurationError) as e:
        Configuration.from_key(Configuration(**GOOD).key + ",colour=red")
    _one_line(e.value, "colour", "unknown configuration field 'colour'")


def test_a_missing_field_is_named():
    fields = dict(GOOD)
    del fields["page_mapping"]
    with pytest.raises(ConfigurationError) as e:
        Configuration.from_fields(fields)
    _one_line(e.value, "page_mapping", "'page_mapping' is missing")


@pytest.mark.parametrize("change, field, words", [
    (dict(page_mapping="bind:2"), "page_mapping", ["'bind:2' is not one of first-touch, local"]),
    (dict(thread_mapping="round-robin"), "thread_mapping", ["'round-robin' is not one of contiguous, scatter"]),
    (dict(prefetch="intel:12"), "prefetch", ["intel:XXXX"]),
    (dict(prefetch="stride:8"), "prefetch", ["'stride:8'"]),
    (dict(threads=0), "threads", [">= 1, got 0"]),
    (dict(threads="4"), "threads", ["got '4'"]),
    (dict(nodes=True), "nodes", ["got True"]),
    (dict(threads=2, nodes=4), "nodes", ["4 nodes for 2 threads"]),
    (dict(threads=16, nodes=4, thread_mapping="scatter"), "page_mapping", ["'local' needs the threads on one node"]),
    (dict(thread_mapping="scatter"), "thread_mapping", ["on one node it is 'contiguous'"]),
])
def test_a_bad_value_is_named(change, field, words):
    with pytest.raises(ConfigurationError) as e:
        Configuration.from_fields({**GOOD, **change})
    _one_line(e.value, field, *words)


def test_a_bad_key_is_named():
    with pytest.raises(ConfigurationError) as e:
        Configuration.from_key("threads=four,nodes=1,thread_mapping=contiguous,page_mapping=local,prefetch=intel:1111")
    _one_line(e.value, "threads", "got 'four'")
    with pytest.raises(ConfigurationError) as e:
        Configuration.from_key("threads=4;nodes=1")
    _one_line(e.value, "threads", "got '4;nodes=1'")  # one field, threads, with a bad value
    with pytest.raises(ConfigurationError) as e:
        Configuration.from_key("threads")
    _one_line(e.value, "key", "expected NAME=VALUE")


def test_a_configuration_that_does_not_fit_the_preset_is_named():
    s = configuration_space("thesis-4s")
    with pytest.raises(ConfigurationError) as e:
        s.check(Configuration(8, 8, "scatter", "interleave", "intel:1111"))
    _one_line(e.value, "nodes", "thesis-4s has 4 nodes, got 8")
    with pytest.raises(ConfigurationError) as e:
        s.check(Configuration(6, 2, "scatter", "interleave", "intel:1111"))
    _one_line(e.value, "threads", "so 8 on 2 node(s), got 6")
    with pytest.raises(ConfigurationError) as e:
        configuration_space("thesis-4s:2").check(Configuration(12, 3, "scatter", "interleave", "intel:1111"))
    _one_line(e.value, "nodes", "has 2 nodes, got 3")
    assert Configuration(12, 3, "scatter", "interleave", "intel:1111") not in s


def test_a_preset_without_prefetcher_control_is_refused():
    live = Preset("live-2s", sockets=2, cores_per_socket=8, prefetcher_control=False)
    with pytest.raises(ConfigurationError) as e:
        configuration_space(live)
    assert str(e.value) == "preset live-2s has no prefetcher control"
    assert e.value.field == "preset"


@pytest.mark.parametrize("name, words", [
    ("thesis-8s", ["unknown preset 'thesis-8s'", "known: thesis-4s, thesis-4s-nonuma, skylake-sp-2s"]),
    ("thesis-4s:5", ["thesis-4s has 1 to 4 sockets, got '5'"]),
    ("thesis-4s:0", ["got '0'"]),
    ("skylake-sp-2s:x", ["got 'x'"]),
])
def test_a_bad_preset_is_named(name, words):
    with pytest.raises(ConfigurationError) as e:
        configuration_space(name)
    _one_line(e.value, "preset", *words)


def test_every_simulator_preset_with_prefetcher_control_has_a_space():
    known = space.presets()
    assert {"thesis-4s", "skylake-sp-2s"} <= set(known)
    assert known["skylake-sp-2s"] == space.Preset("skylake-sp-2s", 2, 28, True)
    for name, p in known.items():
        if p.prefetcher_control:
            assert len(configuration_space(name)) > 0
        else:   # the fake's no-knobs-1s: one line naming the preset
            with pytest.raises(ConfigurationError) as e:
                configuration_space(name)
            _one_line(e.value, "preset", f"preset {name} has no prefetcher control")


@pytest.mark.parametrize("printed, words", [
    ("not json", "not JSON"),
    ('{"presets": []}', "presets: expected a non-empty list"),
    ('{"presets": [{"name": "x", "sockets": 0, "cores_per_socket": 4, "prefetcher_control": true}]}',
     "presets[0].sockets: expected an integer >= 1, got 0"),
    ('{"presets": [{"name": "x", "sockets": 2, "cores_per_socket": 4}]}', "presets[0].prefetcher_control"),
])
def test_a_bad_preset_list_is_one_line(tmp_path, printed, words):
    from numaware.advisor.simulator import SimulatorError, list_presets
    cli = tmp_path / "numaware"
    cli.write_text(f"#!/bin/sh\necho '{printed}'\n")
    cli.chmod(0o755)
    with pytest.raises(SimulatorError) as e:
        list_presets(str(cli))
    assert words in str(e.value) and "\n" not in str(e.value)
    cli.write_text("#!/bin/sh\necho 'The following argument was not expected: --list-presets' >&2\nexit 109\n")
    with pytest.raises(SimulatorError, match="a numaware without it"):
        list_presets(str(cli))
