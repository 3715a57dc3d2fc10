"""The conformance scenario runner: ``python -m shared_engine.scenarios PATH...``.

Reads scenario files (SCENARIOS.md), plays their steps through the public
engine API and prints ``PASS name`` or ``FAIL name: what differed`` per file,
then ``N passed, N failed``. This module and ``demo`` are the package's only
I/O, kept at its edge; the rules modules never import them.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from shared_engine.actions import parse_action
from shared_engine.errors import ERROR_CODES, EngineError
from shared_engine.packing import pack, unpack
from shared_engine.rules import apply
from shared_engine.scoring import score_round
from shared_engine.state import TEAMS, RoundState, Variant, dumps, from_json, to_json


class Expectation(BaseModel):
    """SCENARIOS.md expectation keys; an unknown key is a broken scenario, not a pass."""

    model_config = ConfigDict(extra="forbid")

    error: str | None = None
    turn: int | None = None
    phase: str | None = None
    hands: dict[str, list[str]] | None = None
    hand_size: dict[str, int] | None = None
    melds: dict[str, list[list[str]]] | None = None
    bonus_threes: dict[str, list[str]] | None = None
    opened: dict[str, bool] | None = None
    discard: list[str] | None = None
    discard_top: str | None = Field(default=None)
    stock_size: int | None = None
    round_over: bool | None = None
    went_out: int | None = None
    round_scores: dict[str, int] | None = None
    score_breakdown: dict[str, dict[str, int]] | None = None


class Step(BaseModel):
    model_config = ConfigDict(extra="forbid")

    seat: int = Field(ge=1, le=4)
    do: Any
    expect: Expectation = Field(default_factory=Expectation)


class Scenario(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str
    rules: list[str] = Field(default_factory=list)
    variant: Variant = "twos-meld"
    state: dict[str, Any]
    steps: list[Step] = Field(default_factory=list)
    expect: Expectation = Field(default_factory=Expectation)


class ScenarioFailed(Exception):
    pass


_PER_SEAT_OR_TEAM = frozenset(
    {"hands", "hand_size", "melds", "bonus_threes", "opened", "round_scores", "score_breakdown"}
)


def _observed(state: RoundState) -> dict[str, Any]:
    """Everything an expectation can name, in a form where multisets compare equal."""
    data = to_json(state)
    scores = dict(zip(TEAMS, score_round(state), strict=True))
    return {
        "turn": state.turn,
        "phase": state.phase,
        "went_out": state.went_out,
        "round_over": state.round_over,
        "stock_size": len(state.stock),
        "discard": data["discard"],
        "discard_top": data["discard"][-1] if data["discard"] else None,
        "hands": {seat: sorted(tiles) for seat, tiles in data["hands"].items()},
        "hand_size": {seat: len(tiles) for seat, tiles in data["hands"].items()},
        "melds": {team: sorted(sorted(m) for m in melds) for team, melds in data["melds"].items()},
        "bonus_threes": {team: sorted(tiles) for team, tiles in data["bonus_threes"].items()},
        "opened": data["opened"],
        "round_scores": {team: score.total for team, score in scores.items()},
        "score_breakdown": {team: score.as_dict() for team, score in scores.items()},
    }


def _normal(key: str, value: Any) -> Any:
    if key in ("hands", "bonus_threes"):
        return sorted(value)
    if key == "melds":
        return sorted(sorted(m) for m in value)
    return value


def _check(expect: Expectation, state: RoundState, where: str) -> None:
    """Compare only the keys the scenario gives; ``None`` is a real value for some."""
    actual = _observed(state)
    problems: list[str] = []
    for key in sorted(expect.model_fields_set - {"error"}):
        want = getattr(expect, key)
        if key not in _PER_SEAT_OR_TEAM:
            if want != actual[key]:
                problems.append(f"{key}: expected {want!r}, got {actual[key]!r}")
            continue
        for sub, value in want.items():
            got = actual[key].get(sub)
            if key == "score_breakdown" and got is not None:
                got = {part: got.get(part) for part in value}
            if _normal(key, value) != got:
                problems.append(f"{key}[{sub}]: expected {value!r}, got {got!r}")
    if problems:
        raise ScenarioFailed(f"{where}: " + "; ".join(problems))


def _check_stored(state: RoundState, where: str) -> None:
    """The games table keeps a round packed: every position a scenario reaches must read
    back from that form as exactly itself."""
    if unpack(pack(state)) != state:
        raise ScenarioFailed(f"{where}: the packed state does not read back as the state")


def run_scenario(scenario: Scenario) -> None:
    """Play one scenario; raises ``ScenarioFailed`` saying what differed."""
    try:
        state = from_json({**scenario.state, "variant": scenario.variant})
    except EngineError as exc:
        raise ScenarioFailed(f"state: {exc}") from None
    _check_stored(state, "state")
    for number, step in enumerate(scenario.steps, start=1):
        where = f"step {number}"
        want_error = step.expect.error
        if want_error is not None and want_error not in ERROR_CODES:
            raise ScenarioFailed(f"{where}: unknown error code {want_error!r}")
        before = dumps(state)
        try:
            new, _ = apply(state, step.seat, parse_action(step.do))
        except EngineError as exc:
            if want_error != exc.code:
                raise ScenarioFailed(f"{where}: refused with {exc}") from None
            if dumps(state) != before:
                raise ScenarioFailed(f"{where}: refused action changed the state") from None
        else:
            if want_error is not None:
                raise ScenarioFailed(f"{where}: expected {want_error}, but it was applied")
            state = new
            _check_stored(state, where)
        _check(step.expect, state, where)
    _check(scenario.expect, state, "final")


def _files(paths: Sequence[str]) -> Iterator[Path]:
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            yield from sorted(path.rglob("*.json")) or [path]
        else:
            yield path


def run_file(path: Path) -> tuple[str, str | None]:
    """(name, None) on a pass, (name, reason) on a failure; never raises."""
    if path.is_dir():
        return str(path), "no scenario files in this folder"
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
        scenario = Scenario.model_validate(raw)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "file"
        return str(path), f"not a valid scenario file: {where}: {first['msg']}"
    except (OSError, UnicodeDecodeError, ValueError, RecursionError) as exc:
        return str(path), f"not a valid scenario file: {type(exc).__name__}: {exc}"
    try:
        run_scenario(scenario)
    except ScenarioFailed as exc:
        return scenario.name, str(exc)
    except Exception as exc:  # a crash is this scenario's failure, not the runner's
        return scenario.name, f"engine crashed: {exc!r}"
    return scenario.name, None


def main(argv: Sequence[str]) -> int:
    if not argv:
        print("usage: python -m shared_engine.scenarios PATH [PATH ...]", file=sys.stderr)
        return 2
    passed = failed = 0
    for path in _files(argv):
        name, reason = run_file(path)
        if reason is None:
            passed += 1
            print(f"PASS {name}")
        else:
            failed += 1
            print(f"FAIL {name}: {reason}")
    print(f"{passed} passed, {failed} failed")
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
