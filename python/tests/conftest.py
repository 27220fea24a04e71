"""Fixtures shared by the test modules."""

import os

import pytest

from advisor_fakes import write_fake_cli
from numaware.advisor import space


@pytest.fixture(scope="session", autouse=True)
def presets_from_a_fake(tmp_path_factory):
    """The configuration space reads the presets from the numaware command
    (space.presets): the tests' command is a fake, unless $NUMAWARE_CLI names one."""
    saved = os.environ.get("NUMAWARE_CLI")
    if saved is None:
        os.environ["NUMAWARE_CLI"] = write_fake_cli(tmp_path_factory.mktemp("presets") / "fake-numaware")
    space._presets = None
    yield
    space._presets = None
    if saved is None:
        os.environ.pop("NUMAWARE_CLI", None)


@pytest.fixture
def fake_cli(tmp_path):
    """A factory of fake ``numaware`` commands in ``tmp_path``: ``fake_cli(**options)`` -> path.

    The options are ``advisor_fakes.write_fake_cli``'s.
    """
    count = [0]

    def make(**options):
        count[0] += 1
        return write_fake_cli(tmp_path / f"fake-numaware-{count[0]}", **options)

    return make
