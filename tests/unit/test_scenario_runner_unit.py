"""The scenario runner (SCENARIOS.md): PASS/FAIL lines, the summary, the exit code."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from shared_engine.scenarios import main, run_file

pytestmark = pytest.mark.unit

GOOD: dict[str, Any] = {
    "name": "pickup blocked by a wild on top",
    "rules": ["PILE-2"],
    "variant": "twos-meld",
    "state": {
        "turn": 2,
        "phase": "draw",
        "hands": {"1": ["5R"], "2": ["7R", "7K", "9B", "10Y"], "3": ["4B"], "4": ["6Y"]},
        "stock": ["11R", "12R", "13R"],
        "discard": ["7B", "2Y"],
        "melds": {"A": [], "B": []},
        "bonus_threes": {"A": [], "B": []},
        "match_scores": {"A": 0, "B": 0},
    },
    "steps": [
        {
            "seat": 2,
            "do": {"type": "take_pile", "melds": [{"rank": 7, "tiles": ["7R", "7K"]}]},
            "expect": {"error": "pile_blocked"},
        },
        {
            "seat": 2,
            "do": {"type": "draw"},
            "expect": {"hand_size": {"2": 5}, "stock_size": 2, "discard_top": "2Y"},
        },
    ],
    "expect": {"turn": 2, "phase": "play", "went_out": None, "round_over": False},
}


def scenario(**changes: Any) -> dict[str, Any]:
    data = copy.deepcopy(GOOD)
    data.update(changes)
    return data


def write(tmp_path: Path, name: str, content: object) -> Path:
    path = tmp_path / name
    text = content if isinstance(content, str) else json.dumps(content)
    path.write_text(text, encoding="utf-8")
    return path


def run(paths: list[Path], capsys: pytest.CaptureFixture[str]) -> tuple[int, list[str]]:
    code = main([str(p) for p in paths])
    return code, capsys.readouterr().out.splitlines()


def test_a_passing_scenario(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, lines = run([write(tmp_path, "good.json", GOOD)], capsys)
    assert lines == [f"PASS {GOOD['name']}", "1 passed, 0 failed"]
    assert code == 0


def test_a_failing_expectation_says_what_differed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = scenario(expect={"turn": 2, "phase": "draw"})
    code, lines = run([write(tmp_path, "bad.json", bad)], capsys)
    assert code == 1
    assert lines[-1] == "0 passed, 1 failed"
    assert lines[0].startswith(f"FAIL {GOOD['name']}: ")
    assert "phase" in lines[0]
    assert "'draw'" in lines[0]
    assert "'play'" in lines[0]


def test_a_wrong_error_code_fails(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = copy.deepcopy(GOOD)
    bad["steps"][0]["expect"] = {"error": "pile_empty"}
    code, lines = run([write(tmp_path, "bad.json", bad)], capsys)
    assert code == 1
    assert "step 1" in lines[0]
    assert "pile_blocked" in lines[0]


def test_an_applied_action_that_should_be_refused_fails(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = copy.deepcopy(GOOD)
    bad["steps"][1]["expect"] = {"error": "wrong_phase"}
    code, lines = run([write(tmp_path, "bad.json", bad)], capsys)
    assert code == 1
    assert lines[0].startswith("FAIL ")
    assert "step 2" in lines[0]


def test_several_files_and_folders_are_counted(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "nested" / "deeper"
    folder.mkdir(parents=True)
    write(folder, "a.json", scenario(name="a"))
    write(tmp_path / "nested", "b.json", scenario(name="b", expect={"turn": 4}))
    write(tmp_path / "nested", "notes.txt", "not a scenario")
    single = write(tmp_path, "c.json", scenario(name="c"))
    code, lines = run([tmp_path / "nested", single], capsys)
    assert code == 1
    assert sorted(lines[:-1])[0].startswith("FAIL b: ")
    assert "PASS a" in lines
    assert "PASS c" in lines
    assert lines[-1] == "2 passed, 1 failed"


BROKEN: list[tuple[str, object]] = [
    ("invalid json", "{not json"),
    ("empty file", ""),
    ("a json list", [GOOD]),
    ("a json number", 7),
    ("missing name", {k: v for k, v in GOOD.items() if k != "name"}),
    ("missing state", {k: v for k, v in GOOD.items() if k != "state"}),
    ("unknown top-level key", scenario(author="me")),
    ("unknown expectation key", scenario(expect={"turn": 2, "score": 5})),
    (
        "unknown step expectation key",
        scenario(steps=[{"seat": 2, "do": {"type": "draw"}, "expect": {"hand": []}}]),
    ),
    (
        "unknown error code",
        scenario(steps=[{"seat": 2, "do": {"type": "draw"}, "expect": {"error": "nope"}}]),
    ),
    ("seat out of range", scenario(steps=[{"seat": 5, "do": {"type": "draw"}}])),
    ("bad variant", scenario(variant="romanian")),
    ("state missing turn", scenario(state={"hands": {}, "stock": []})),
    ("state with a bad tile", scenario(state={"turn": 1, "hands": {"1": ["7Q"]}, "stock": []})),
    ("malformed action", scenario(steps=[{"seat": 2, "do": {"type": "fly"}}])),
]


@pytest.mark.parametrize("content", [c for _, c in BROKEN], ids=[n for n, _ in BROKEN])
def test_a_broken_file_is_a_failure_never_a_crash(
    content: object, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(tmp_path, "broken.json", content)
    code, lines = run([path], capsys)
    assert code == 1
    assert len(lines) == 2
    assert lines[0].startswith("FAIL ")
    assert len(lines[0]) > len("FAIL ") + 10  # a message, not just a name
    assert lines[1] == "0 passed, 1 failed"


@pytest.mark.parametrize(
    ("content", "named"),
    [
        (scenario(expect={"turn": 2, "score": 5}), "score"),
        ({k: v for k, v in GOOD.items() if k != "state"}, "state"),
        (scenario(steps=[{"seat": 5, "do": {"type": "draw"}}]), "seat"),
    ],
    ids=["unknown expectation key", "missing state", "seat out of range"],
)
def test_an_invalid_scenario_message_names_the_problem(
    content: object, named: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """SCENARIOS.md: an invalid file fails "with a clear message": say which key is wrong."""
    _, lines = run([write(tmp_path, "broken.json", content)], capsys)
    assert named in lines[0].split(": ", 1)[1]


def test_a_missing_path_is_a_failure(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    missing = tmp_path / "nowhere.json"
    code, lines = run([missing], capsys)
    assert code == 1
    assert lines[0].startswith(f"FAIL {missing}: ")
    assert lines[-1] == "0 passed, 1 failed"


def test_a_non_utf8_file_is_a_failure(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "latin.json"
    path.write_bytes(b'{"name": "caf\xe9"}')
    code, lines = run([path], capsys)
    assert code == 1
    assert lines[0].startswith("FAIL ")


def test_a_deeply_nested_file_is_a_failure_not_a_crash(tmp_path: Path) -> None:
    """SCENARIOS.md: a file that is not a valid scenario counts as a failure, never a crash.

    ``run_file`` documents that it never raises; JSON nested 100,000 deep makes
    ``json.loads`` raise ``RecursionError``.
    """
    path = write(tmp_path, "deep.json", "[" * 100_000 + "]" * 100_000)
    name, reason = run_file(path)
    assert reason is not None
    assert name == str(path)


def test_run_file_reports_pass_as_none(tmp_path: Path) -> None:
    assert run_file(write(tmp_path, "good.json", GOOD)) == (GOOD["name"], None)


def test_no_arguments_prints_usage(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([]) == 2
    assert "usage" in capsys.readouterr().err


def test_a_refused_step_with_the_expected_code_passes_and_keeps_checking(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """After an expected refusal the step's other expectations still apply."""
    data = copy.deepcopy(GOOD)
    data["steps"][0]["expect"] = {"error": "pile_blocked", "hand_size": {"2": 99}}
    code, lines = run([write(tmp_path, "x.json", data)], capsys)
    assert code == 1
    assert "hand_size" in lines[0]
