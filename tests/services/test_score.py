"""ScoreService: a round is scored once; the match goes on, breaks a tie, or ends."""

from __future__ import annotations

from typing import Any

import pytest

from services.common.events import RoundEnded
from services.common.presence import PresenceStore
from services.common.store import GameStore
from services.common.unit_of_work import LostRace, Outcome, VersionConflict
from services.score.app import ScoreService
from shared_engine import MatchMode, RoundState, from_json, score_round, start_round
from shared_engine.autoplay import auto_play_turn
from tests.services.conftest import PLAYERS, build, put_table, seat_everyone, snapshot
from tests.services.fakes import RecordingPusher

pytestmark = pytest.mark.unit


@pytest.fixture
def score(deps: dict[str, Any]) -> ScoreService:
    return build(ScoreService, deps)


def finished_round(seed: str = "score-seed") -> RoundState:
    state = start_round(seed)
    while not state.round_over:
        state = auto_play_turn(state)
    return state


def tied_round() -> RoundState:
    """A round over with both teams at -5 (one 5 left in a hand each)."""
    return from_json(
        {
            "turn": 1,
            "phase": "round_over",
            "hands": {"1": ["5R"], "2": ["5Y"], "3": [], "4": []},
            "stock": [],
            "seed": "tie-seed",
            "commitment": "tie-commitment",
        }
    )


def _ended(table_id: str = "t1", round_number: int = 1) -> RoundEnded:
    return RoundEnded(table_id=table_id, round=round_number, version=60, went_out=None)


def test_a_last_round_is_scored_and_ends_the_match(
    score: ScoreService, store: GameStore, pusher: RecordingPusher
) -> None:
    state = finished_round()
    a, b = score_round(state)
    if a.total == b.total:
        pytest.skip("this seed ties")
    put_table(store, "t1", state, version=60, totals=(0, 0))

    score.round_ended(_ended())

    table = store.get_table("t1")
    assert table is not None
    assert (table.version, table.status, table.totals) == (61, "finished", (a.total, b.total))
    assert store.history.keys("t1", "SCORE#") == ["SCORE#0001"]
    scored = store.score("t1", 1)
    assert scored is not None
    result = scored.result
    assert result["scores"]["A"]["total"] == a.total
    assert result["next"] == "end"
    assert result["seed"] == state.seed
    kinds = [e.detail_type for e in scored.outbox]
    assert kinds == ["RoundScored", "MatchEnded"]
    ended = scored.outbox[1].detail
    winner = "A" if a.total > b.total else "B"
    assert ended["winner"] == winner
    assert ended["rounds_played"] == 1
    for seat in (1, 2, 3, 4):
        kinds_sent = [m["type"] for m in pusher.to(f"c{seat}")]
        assert kinds_sent == ["view", "round_result", "match_result"]
        (final,) = pusher.to(f"c{seat}", "match_result")
        rewards = final["rewards"]
        assert sum(rewards.values()) == 0
        assert rewards[str(seat)] == (1000 if (winner == "A") == (seat % 2 == 1) else -1000)


def test_a_duplicate_round_ended_scores_nothing_twice(
    score: ScoreService, store: GameStore, pusher: RecordingPusher
) -> None:
    put_table(store, "t1", finished_round(), mode=MatchMode.THREE_ROUNDS, version=60)
    score.round_ended(_ended())
    after_first = snapshot(store, "t1")
    first = list(pusher.sent)
    score.round_ended(_ended())
    score.round_ended(_ended())
    assert snapshot(store, "t1") == after_first
    assert store.history.keys("t1", "SCORE#") == ["SCORE#0001"]

    # A redelivery announces the same result again (its first announcement may have
    # been lost with the failure that caused it): the same messages, nothing new. Each
    # connection's in the same order; the four seats' sends run at once, in any order.
    def by_connection(sent: list[tuple[str, Any]]) -> dict[str, list[Any]]:
        return {c: [m for to, m in sent if to == c] for c in sorted({to for to, _ in sent})}

    assert by_connection(pusher.sent) == by_connection(first * 3)


def test_a_first_round_of_three_goes_on(score: ScoreService, store: GameStore) -> None:
    state = finished_round()
    put_table(store, "t1", state, mode=MatchMode.THREE_ROUNDS, version=60, totals=(100, 200))
    score.round_ended(_ended())
    table = store.get_table("t1")
    assert table is not None and table.status == "playing"
    a, b = score_round(state)
    assert table.totals == (100 + a.total, 200 + b.total)
    scored = store.score("t1", 1)
    assert scored is not None
    assert [e.detail_type for e in scored.outbox] == ["RoundScored"]
    assert scored.outbox[0].detail["next"] == "round"


def test_a_tie_when_a_winner_is_due_adds_a_round(score: ScoreService, store: GameStore) -> None:
    """MATCH-2."""
    put_table(store, "t1", tied_round(), version=9)
    score.round_ended(_ended())
    table = store.get_table("t1")
    assert table is not None
    assert table.status == "playing"
    assert table.totals == (-5, -5)
    scored = store.score("t1", 1)
    assert scored is not None
    events = scored.outbox
    assert [e.detail_type for e in events] == ["RoundScored"]
    assert events[0].detail["next"] == "tie_break"


def test_to_10000_tie_over_the_target_is_kept_as_a_tie_break(
    score: ScoreService, store: GameStore
) -> None:
    """MATCH-2: the next round is recorded as a tie-break round."""
    put_table(
        store, "t1", tied_round(), mode=MatchMode.TO_10000, version=9, totals=(10_005, 10_005)
    )
    score.round_ended(_ended())
    table = store.get_table("t1")
    assert table is not None and table.status == "playing" and table.tie_break


def test_to_10000_tie_break_ends_the_match_below_the_target(
    score: ScoreService, store: GameStore
) -> None:
    """MATCH-2 decision: a tie-break round that breaks the tie ends the match below 10,000."""
    state = finished_round()
    a, b = score_round(state)
    if a.total == b.total:
        pytest.skip("this seed ties")
    put_table(
        store,
        "t1",
        state,
        mode=MatchMode.TO_10000,
        version=60,
        totals=(5_000, 5_000),
        tie_break=True,
    )
    score.round_ended(_ended())
    table = store.get_table("t1")
    assert table is not None and table.status == "finished" and not table.tie_break
    assert max(table.totals) < 10_000
    scored = store.score("t1", 1)
    assert scored is not None
    assert [e.detail_type for e in scored.outbox] == ["RoundScored", "MatchEnded"]


@pytest.mark.parametrize("round_number", [2, 3])
def test_round_ended_of_another_round_is_ignored(
    score: ScoreService, store: GameStore, round_number: int
) -> None:
    put_table(store, "t1", finished_round(), mode=MatchMode.THREE_ROUNDS, version=60)
    before = snapshot(store, "t1")
    score.round_ended(_ended(round_number=round_number))
    score.round_ended(_ended("missing"))
    assert snapshot(store, "t1") == before


def test_a_round_still_running_is_not_scored(score: ScoreService, store: GameStore) -> None:
    put_table(store, "t1", start_round("running"), version=3)
    before = snapshot(store, "t1")
    score.round_ended(_ended())
    assert snapshot(store, "t1") == before


@pytest.mark.parametrize("lost", [VersionConflict(), LostRace(("p1",))], ids=type)
def test_a_lost_race_is_retried(
    score: ScoreService, store: GameStore, monkeypatch: pytest.MonkeyPatch, lost: Outcome
) -> None:
    """Presence and other writers may move the version on, and a player the match's end
    frees may have moved since the read; scoring reads again."""
    put_table(store, "t1", finished_round(), mode=MatchMode.THREE_ROUNDS, version=60)
    original = store.record_score
    calls: list[int] = []

    def flaky(*args: Any, **kwargs: Any) -> Outcome:
        calls.append(1)
        if len(calls) == 1:
            return lost
        return original(*args, **kwargs)

    monkeypatch.setattr(store, "record_score", flaky)
    score.round_ended(_ended())
    assert len(calls) == 2
    assert store.history.keys("t1", "SCORE#") == ["SCORE#0001"]
    table = store.get_table("t1")
    assert table is not None and table.version == 61


def test_two_scorers_racing_score_once(
    score: ScoreService, deps: dict[str, Any], store: GameStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two deliveries of RoundEnded at once: the slower one finds the work done."""
    rival = build(ScoreService, deps)
    state = finished_round()
    put_table(store, "t1", state, mode=MatchMode.THREE_ROUNDS, version=60)
    original = store.record_score

    def racing(*args: Any, **kwargs: Any) -> Outcome:
        monkeypatch.setattr(store, "record_score", original)
        rival.round_ended(_ended())
        return original(*args, **kwargs)

    monkeypatch.setattr(store, "record_score", racing)
    score.round_ended(_ended())
    table = store.get_table("t1")
    a, b = score_round(state)
    assert table is not None
    assert (table.version, table.totals) == (61, (a.total, b.total))
    assert store.history.keys("t1", "SCORE#") == ["SCORE#0001"]


def _seats(presence: PresenceStore) -> dict[str, str | None]:
    """Each player's table, as their item names it."""
    return {
        p.player_id: (found.table_id if (found := presence.get_player(p.player_id)) else None)
        for p in PLAYERS.values()
    }


@pytest.mark.parametrize("left", [False, True], ids=["won", "abandoned"])
def test_the_write_that_ends_the_match_frees_its_players(
    score: ScoreService,
    store: GameStore,
    presence: PresenceStore,
    pusher: RecordingPusher,
    left: bool,
) -> None:
    """Once ``match_result`` is sent, a ``queue`` finds every player free: the score's write
    freed them (a match won, or abandoned when every player left), not a later event. A
    player the table no longer seats (seated elsewhere since) stays where they are."""
    state = finished_round()
    a, b = score_round(state)
    if a.total == b.total:
        pytest.skip("this seed ties")
    # Every player gone after a round that is not the last: the table is abandoned.
    mode = MatchMode.THREE_ROUNDS if left else MatchMode.ONE_ROUND
    gone: dict[int, str | None] = dict.fromkeys(PLAYERS)
    put_table(store, "t1", state, mode=mode, version=60, connections=gone if left else None)
    seat_everyone(presence, "t1")
    presence.seat_player("p4", "P4", "t-other", 2)

    score.round_ended(_ended())

    table = store.get_table("t1")
    assert table is not None and table.status == ("aborted" if left else "finished")
    assert _seats(presence) == {"p1": None, "p2": None, "p3": None, "p4": "t-other"}
    for player in ("p1", "p2", "p3"):
        assert presence.get_player(player).seat is None  # type: ignore[union-attr]
    if not left:
        assert [m["type"] for m in pusher.to("c1")][-1] == "match_result"


def test_a_round_that_does_not_end_the_match_frees_nobody(
    score: ScoreService, store: GameStore, presence: PresenceStore
) -> None:
    put_table(store, "t1", finished_round(), mode=MatchMode.THREE_ROUNDS, version=60)
    seat_everyone(presence, "t1")
    score.round_ended(_ended())
    assert set(_seats(presence).values()) == {"t1"}


def test_a_redelivered_end_frees_nobody_twice(
    score: ScoreService, store: GameStore, presence: PresenceStore
) -> None:
    """A player freed by the match's end and seated at a new table since keeps the new
    seat when the end is delivered again."""
    state = finished_round()
    put_table(store, "t1", state, version=60)
    seat_everyone(presence, "t1")
    score.round_ended(_ended())
    presence.seat_player("p1", "P1", "t-next", 1)
    before = snapshot(store, "t1")
    score.round_ended(_ended())
    assert snapshot(store, "t1") == before
    assert presence.get_player("p1").table_id == "t-next"  # type: ignore[union-attr]
