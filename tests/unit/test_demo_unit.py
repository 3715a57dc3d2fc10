"""The demo command: a seeded bot round, its scores and the verified commitment."""

from __future__ import annotations

import pytest

from tools.demo import main

pytestmark = pytest.mark.unit


@pytest.mark.parametrize("variant", ["twos-meld", "classic"])
def test_demo_plays_a_seeded_round(variant: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--seed", "x", "--variant", variant]) == 0
    out = capsys.readouterr().out
    assert "seed x  commitment " in out
    assert "round over" in out
    assert "shuffle commitment verified from the revealed seed: True" in out
    assert "team A:" in out
    assert "team B:" in out


def test_demo_is_reproducible(capsys: pytest.CaptureFixture[str]) -> None:
    main(["--seed", "x"])
    first = capsys.readouterr().out
    main(["--seed", "x"])
    assert capsys.readouterr().out == first


def test_demo_default_seed_works(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([]) == 0
    assert "verified from the revealed seed: True" in capsys.readouterr().out
