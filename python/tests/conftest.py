"""Fixtures shared by the test modules."""

import pytest

from advisor_fakes import write_fake_cli


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
