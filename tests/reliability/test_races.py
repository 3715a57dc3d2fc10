"""Many clients at once on the same version: exactly one move applies, every other is refused.

Two live tables race side by side. At every step, 16 threads are released by one
barrier, each on a connection of its own (so every answer can be attributed):

- four from the seat to play, each with a different legal move (or the same
  one when fewer are legal), on the table's current version;
- two from other seats of the same table, with moves of their own;
- two from players of the other table, naming this table.

Per table and step, exactly one of the seat's moves commits; its sender hears
nothing on its own connection (the new views go to the seat's connection),
every other sender gets exactly one error frame: ``stale_version`` (with the
fresh view) or its own refusal (``not_your_turn``, ``not_seated``). No
handler raises or answers ``internal``. Repeated over consecutive versions,
the table's log holds exactly one move per applied version, and each is the
move that won.
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from shared_engine import MatchMode, unpack
from tests.integration.harness import Harness
from tests.reliability._support import fresh_stack, fund

pytestmark = pytest.mark.integration

TABLES = {"race-a": ["ra1", "ra2", "ra3", "ra4"], "race-b": ["rb1", "rb2", "rb3", "rb4"]}
STEPS = 10
MOVERS = 4
OTHER_SEATS = 2
STRANGERS = 2


@dataclass
class Racer:
    table_id: str
    player: str
    seat: int | None
    connection: str
    kind: str
    """``mover`` (the seat to play), ``seat`` (another seat), ``stranger`` (another table)."""
    message: dict[str, Any] | None = None
    replies: list[dict[str, Any]] | None = None
    raised: BaseException | None = None
    response: dict[str, Any] | None = None


@pytest.fixture
def two_tables(moto_endpoint: str) -> Iterator[tuple[Harness, dict[str, dict[int, str]]]]:
    with fresh_stack(moto_endpoint) as harness:
        seats: dict[str, dict[int, str]] = {}
        for table_id, players in TABLES.items():
            fund(harness, players)
            seats[table_id] = harness.start_table(table_id, players, MatchMode.ONE_ROUND)
        yield harness, seats
        harness.settle()
        assert harness.aws.dispatcher.errors == [], harness.aws.dispatcher.errors


def latest_view(harness: Harness, connection: str) -> dict[str, Any]:
    best: dict[str, Any] | None = None
    for message in harness.received(connection):
        view = message if message["type"] == "view" else message.get("view")
        if isinstance(view, dict) and (best is None or view["version"] > best["version"]):
            best = view
    assert best is not None, f"{connection} has no view"
    return best


def extra_connections(
    harness: Harness, seats: dict[str, dict[int, str]]
) -> dict[tuple[str, int], list[str]]:
    """The connections the racers send from (per player: one per move of the seat to
    play, the last for racing at the other table). A player's newest tab holds the seat
    and an older one is refused ``opened_elsewhere``, so every race is between presses
    from the seat's own connection, as double taps and retries of one client are."""
    extra = {
        (table_id, seat): [seats[table_id][seat]] * (MOVERS + 1)
        for table_id, players in TABLES.items()
        for seat in range(1, len(players) + 1)
    }
    for table_id, conns in seats.items():
        table = harness.table(table_id)
        assert table.connections == conns, "each seat is on its main connection"
    return extra


def moves_of(view: dict[str, Any], count: int) -> list[dict[str, Any]]:
    """``count`` legal moves of the view, as different as there are."""
    legal: list[dict[str, Any]] = view["view"]["legal_actions"]
    assert legal, "the seat to play has a legal move"
    return [legal[i % len(legal)] for i in range(count)]


def own_move(view: dict[str, Any]) -> dict[str, Any]:
    """What a seat that is not to play might send: a draw, or one of its tiles."""
    hand = view["view"]["hand"]
    return {"type": "discard", "tile": hand[0]} if view["version"] % 2 else {"type": "draw"}


def racers_for_step(
    harness: Harness,
    seats: dict[str, dict[int, str]],
    extra: dict[tuple[str, int], list[str]],
) -> list[Racer]:
    racers: list[Racer] = []
    for table_id, players in TABLES.items():
        table = harness.table(table_id)
        version, turn = table.version, unpack(table.state or b"").turn
        mover_view = latest_view(harness, seats[table_id][turn])
        assert mover_view["version"] == version
        for connection, move in zip(
            extra[(table_id, turn)][:MOVERS], moves_of(mover_view, MOVERS), strict=True
        ):
            racers.append(Racer(table_id, players[turn - 1], turn, connection, "mover"))
            racers[-1].message = _play(table_id, version, move)
        others = [s for s in (1, 2, 3, 4) if s != turn][:OTHER_SEATS]
        for seat in others:
            seat_view = latest_view(harness, seats[table_id][seat])
            racer = Racer(table_id, players[seat - 1], seat, extra[(table_id, seat)][0], "seat")
            racer.message = _play(table_id, version, own_move(seat_view))
            racers.append(racer)
        other_table = next(t for t in TABLES if t != table_id)
        for i in range(STRANGERS):
            racer = Racer(
                table_id,
                TABLES[other_table][i],
                None,
                extra[(other_table, i + 1)][MOVERS],
                "stranger",
            )
            racer.message = _play(table_id, version, {"type": "draw"})
            racers.append(racer)
    return racers


def _play(table_id: str, version: int, move: dict[str, Any]) -> dict[str, Any]:
    return {"action": "play", "table_id": table_id, "version": version, "move": move}


def race(harness: Harness, racers: list[Racer]) -> None:
    barrier = threading.Barrier(len(racers))
    before = {r.connection: len(harness.received(r.connection)) for r in racers}

    def go(racer: Racer) -> None:
        barrier.wait()
        try:
            assert racer.message is not None
            racer.response = harness.send(racer.connection, racer.message)
        except BaseException as exc:
            racer.raised = exc

    for index, racer in enumerate(racers):  # replies on a shared connection name their press
        assert racer.message is not None
        racer.message = {**racer.message, "cid": f"racer-{index}"}
    threads = [threading.Thread(target=go, args=(r,)) for r in racers]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
        assert not thread.is_alive(), "a handler hung"
    for racer in racers:
        assert racer.message is not None
        racer.replies = [
            m
            for m in harness.received(racer.connection)[before[racer.connection] :]
            if m.get("cid") == racer.message["cid"]
        ]


EXPECTED = {
    "mover": {"stale_version"},
    "seat": {"stale_version", "not_your_turn"},
    "stranger": {"not_seated"},
}


def test_concurrent_moves_apply_exactly_once_per_version(
    two_tables: tuple[Harness, dict[str, dict[int, str]]],
) -> None:
    harness, seats = two_tables
    extra = extra_connections(harness, seats)
    start = {t: harness.table(t).version for t in TABLES}
    winners: dict[str, list[dict[str, Any]]] = {t: [] for t in TABLES}
    codes: dict[str, set[str]] = {"mover": set(), "seat": set(), "stranger": set()}
    tally: Counter[str] = Counter()

    for step in range(STEPS):
        racers = racers_for_step(harness, seats, extra)
        assert len(racers) == 16
        race(harness, racers)
        assert [r.raised for r in racers if r.raised] == [], f"step {step}: a handler raised"
        assert all(r.response == {"statusCode": 200} for r in racers)
        for table_id in TABLES:
            mine = [r for r in racers if r.table_id == table_id]
            version = mine[0].message["version"]  # type: ignore[index]
            table = harness.table(table_id)
            assert table.version == version + 1, f"step {step}: {table_id} moved by one"
            applied = [r for r in mine if r.replies and r.replies[0]["type"] == "view"]
            assert len(applied) == 1, f"step {step}: {len(applied)} moves applied"
            (winner,) = applied
            assert winner.kind == "mover"
            assert [m["version"] for m in winner.replies or []] == [version + 1]
            logged = harness.logs(table_id)[-1]
            assert logged.action == winner.message["move"]  # type: ignore[index]
            assert logged.seat == winner.seat
            winners[table_id].append(winner.message["move"])  # type: ignore[index]
            for racer in mine:
                if racer is winner:
                    continue
                assert racer.replies is not None and len(racer.replies) == 1, racer
                (reply,) = racer.replies
                assert reply["type"] == "error", reply
                assert reply["code"] in EXPECTED[racer.kind], (racer.kind, reply)
                codes[racer.kind].add(reply["code"])
                tally[f"{racer.kind}: {reply['code']}"] += 1
                if reply["code"] == "stale_version":
                    assert reply["view"]["version"] == version + 1
                    assert reply["view"]["seat"] == racer.seat
                else:
                    assert "view" not in reply
            # The mover's connection got the one new view; the others, when it ended the turn,
            # or a racer refused stale_version on that connection, with the view it carries.
            ended = unpack(table.state or b"").turn != winner.seat
            refused = {
                r.connection for r in mine if r is not winner and "view" in (r.replies or [{}])[0]
            }
            for seat, connection in seats[table_id].items():
                shown = latest_view(harness, connection)["version"]
                expected = ended or seat == winner.seat or connection in refused
                assert (shown == version + 1) is expected, seat

    for table_id in TABLES:
        table = harness.table(table_id)
        logs = harness.logs(table_id)
        # Nothing lost, nothing twice: one logged move per applied version (after the deal's).
        assert table.version == start[table_id] + STEPS
        assert len(logs) == table.version - 1
        assert [i.action for i in logs[-STEPS:]] == winners[table_id]
    print(f"{STEPS} steps × {len(TABLES)} tables × 16 senders: {dict(sorted(tally.items()))}")
    assert codes["mover"] == {"stale_version"}
    assert codes["stranger"] == {"not_seated"}
