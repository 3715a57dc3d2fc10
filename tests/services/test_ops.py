"""The operators' function on the in-memory storage: plan, apply once, audit, refuse.

The use case is wired as the Lambda wires it (``services.ops.root.compose``) over
the in-memory storage and recording fakes; every assertion reads back through the
stores' records.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import pytest

from services.common import constants
from services.common.events import SeatPlayer, TableAborted
from services.common.ledger import Balance, Ledger, Posting, escrow, joker_debit
from services.common.memory_storage import MemoryStorage
from services.common.records import SEATS, AuditRecord, TableRecord, outbox_events
from services.common.store import GameStore
from services.common.telemetry import RecordingTelemetry
from services.common.unit_of_work import Item, Key, Outcome, Put, TableKind, Write
from services.ledger.app import LedgerService
from services.ops.app import Apply, Close, Credit, Kick, OperatorService, Void, answer
from services.ops.plans import ActionRefused, CreditLimit
from services.ops.root import compose
from shared_engine import MatchMode, pack, start_round
from tests.services.fakes import FakeClock, RecordingCloser, RecordingPublisher, RecordingPusher

pytestmark = pytest.mark.unit

OPERATOR = "arn:aws:sts::123456789012:assumed-role/support/ana"
STAKE = 100
FUNDS = 1_000
LIMIT = CreditLimit(points=500, jokers=2)
PLAYERS = {seat: SeatPlayer(player_id=f"p{seat}", name=f"P{seat}") for seat in SEATS}


class Interleaved:
    """The in-memory storage, with ``before_close`` committed just before the first commit
    that closes a table: another writer between the action's read and its write."""

    def __init__(self, storage: MemoryStorage) -> None:
        self._storage = storage
        self.before_close: list[Callable[[], object]] = []

    def get(self, table: TableKind, key: Key, *, consistent: bool = True) -> Item | None:
        return self._storage.get(table, key, consistent=consistent)

    def query(
        self, table: TableKind, pk: str, *, prefix: str | None = None, limit: int | None = None
    ) -> list[Item]:
        return self._storage.query(table, pk, prefix=prefix, limit=limit)

    def commit(self, writes: Sequence[Write]) -> Outcome:
        closes = any(isinstance(w, Put) and w.item.get("sk") == constants.CLOSED_SK for w in writes)
        while closes and self.before_close:
            self.before_close.pop()()
        return self._storage.commit(writes)


@pytest.fixture
def storage() -> MemoryStorage:
    return MemoryStorage()


@pytest.fixture
def interleaved(storage: MemoryStorage) -> Interleaved:
    return Interleaved(storage)


@pytest.fixture
def closer() -> RecordingCloser:
    return RecordingCloser("c-open")


@pytest.fixture
def pusher() -> RecordingPusher:
    return RecordingPusher()


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def service(
    interleaved: Interleaved, pusher: RecordingPusher, closer: RecordingCloser, clock: FakeClock
) -> OperatorService:
    return compose(
        storage=interleaved,
        pusher=pusher,
        closer=closer,
        clock=clock,
        telemetry=RecordingTelemetry(),
        limit=LIMIT,
    )


@pytest.fixture
def ledger(storage: MemoryStorage) -> Ledger:
    return Ledger(storage)


@pytest.fixture
def games(storage: MemoryStorage) -> GameStore:
    return GameStore(storage)


def arena_table(games: GameStore, ledger: Ledger, *, version: int = 3) -> TableRecord:
    """A funded arena table in play: the stakes in escrow (MATCH-4), a joker spent (JOKER-1)."""
    ledger.book(
        [
            Posting(p.player_id, "welcome", "welcome", points=FUNDS, jokers=1)
            for p in PLAYERS.values()
        ],
        1.0,
    )
    table = TableRecord(
        table_id="t1",
        mode=MatchMode.ARENA,
        variant="twos-meld",
        stake=STAKE,
        seats=dict(PLAYERS),
        version=version,
        round=1,
        state=pack(start_round("ops-seed", dealer=1)),
        connections={s: f"c{s}" for s in SEATS},
        turn_started=version,
        turn_deadline=1_800_000_060.0,
        updated_at=1_800_000_000.0,
    )
    assert games.create_table(table).ok
    assert ledger.book(escrow("t1", dict(PLAYERS), STAKE), 2.0).ok
    assert ledger.book([joker_debit("t1", 1, "p2")], 3.0).ok
    return table


def accounts(ledger: Ledger) -> dict[str, Balance]:
    names = [*(p.player_id for p in PLAYERS.values()), "escrow:t1", "match:t1", "house:support"]
    return {name: ledger.balance(name) for name in names}


def confirm(
    service: OperatorService, request: Void | Close | Credit | Kick, action_id: str = "a" * 32
) -> tuple[dict[str, Any], Apply]:
    """The plan as the console shows it, and the apply the operator's yes sends."""
    plan = service.plan(request)
    return plan.changes, Apply(request=request, action_id=action_id, confirmed=plan.changes)


def audit(storage: MemoryStorage, clock: FakeClock) -> list[AuditRecord]:
    day = AuditRecord("x" * 16, clock.now(), "", "", "", "", "", {}).stamp[:10]
    return [AuditRecord.from_item(i) for i in storage.query("audit", AuditRecord.day_pk(day))]


# --- void ---------------------------------------------------------------------------------


def test_voiding_a_match_in_play_nets_every_account_to_zero_escrow_included(
    service: OperatorService,
    games: GameStore,
    ledger: Ledger,
    storage: MemoryStorage,
    clock: FakeClock,
) -> None:
    """MATCH-4: the stakes a match in play holds in ``escrow:<table>`` go back with the
    players' own entries, so after the void every account, the escrow's too, is what it
    was before the match; the abort's refund then books nothing (the match is closed)."""
    before = accounts(ledger)
    arena_table(games, ledger)
    assert ledger.balance("escrow:t1") == Balance(4 * STAKE, 0)
    changes, apply = confirm(service, Void(action="void", table_id="t1", reason="ticket 1"))
    assert changes["sum"] == 0 and changes["ends_the_match"] is True
    assert changes["points"]["escrow:t1"] == -4 * STAKE
    assert answer(service.apply(apply, OPERATOR))["outcome"] == "applied"

    funded = {p.player_id: Balance(FUNDS, 1) for p in PLAYERS.values()}
    assert accounts(ledger) == {**before, **funded}
    for name in accounts(ledger):
        stored, summed = ledger.reconcile(name)
        assert stored == summed
    ended = games.get_table("t1")
    assert ended is not None and ended.status == "aborted"
    (closed,) = [i for i in storage.query("games", "TABLE#t1") if i["sk"] == "CLOSED"]
    (event,) = outbox_events(closed)
    assert (event.detail_type, event.source) == ("TableAborted", "canasta.ops")
    assert closed["operator"] == OPERATOR

    refunds = LedgerService(ledger, games, RecordingPublisher(), clock, RecordingTelemetry())
    refunds.table_aborted(TableAborted.model_validate(event.detail))
    assert accounts(ledger) == {**before, **funded}, "the abort's refund books nothing"


def test_a_void_applies_once_and_a_repeat_of_its_id_answers_the_first(
    service: OperatorService,
    games: GameStore,
    ledger: Ledger,
    storage: MemoryStorage,
    clock: FakeClock,
) -> None:
    arena_table(games, ledger)
    _, apply = confirm(service, Void(action="void", table_id="t1", reason="ticket 2"))
    first = answer(service.apply(apply, OPERATOR))
    after = accounts(ledger)
    clock.advance(5)
    assert answer(service.apply(apply, OPERATOR)) == first, "a retried request"
    _, again = confirm(service, Void(action="void", table_id="t1", reason="twice"), "b" * 32)
    assert service.plan(again.request).done_before
    assert answer(service.apply(again, OPERATOR))["outcome"] == "done before"
    assert accounts(ledger) == after
    assert [(r.action_id, r.outcome) for r in audit(storage, clock)] == [
        ("a" * 32, "applied"),
        ("b" * 32, "done before"),
    ]


def test_an_action_id_used_for_another_action_is_refused(
    service: OperatorService, games: GameStore, ledger: Ledger, storage: MemoryStorage
) -> None:
    arena_table(games, ledger)
    _, apply = confirm(service, Void(action="void", table_id="t1", reason="ticket 3"))
    service.apply(apply, OPERATOR)
    with pytest.raises(ActionRefused) as refused:
        service.apply(apply, "arn:aws:sts::123456789012:assumed-role/support/eve")
    assert refused.value.code == "idempotency_conflict"


# --- close --------------------------------------------------------------------------------


def move(games: GameStore, table: TableRecord) -> TableRecord:
    """A move committed at the table's version, as the turn service commits one."""
    moved = table.evolve(version=table.version + 1, turn_started=table.version + 1)
    assert games.commit_actions(table, moved, []).ok
    return moved


def test_a_close_planned_before_a_move_refuses_and_aborts_nothing(
    service: OperatorService,
    games: GameStore,
    ledger: Ledger,
    storage: MemoryStorage,
    clock: FakeClock,
) -> None:
    table = arena_table(games, ledger)
    changes, apply = confirm(service, Close(action="close", table_id="t1", reason="stuck"))
    assert changes["version"] == table.version
    moved = move(games, table)
    with pytest.raises(ActionRefused) as refused:
        service.apply(apply, OPERATOR)
    assert refused.value.code == "plan_changed"
    assert games.get_table("t1") == moved
    assert games.history.keys("t1", constants.CLOSED_SK) == []
    (record,) = audit(storage, clock)
    assert (record.outcome, record.changes["error"]) == ("refused", "plan_changed")


def test_a_move_between_the_close_s_read_and_its_write_makes_it_refuse(
    service: OperatorService, games: GameStore, ledger: Ledger, interleaved: Interleaved
) -> None:
    """The close's version condition: the move commits after the apply read the table and
    before it wrote the close, so only the condition stands between them."""
    table = arena_table(games, ledger)
    _, apply = confirm(service, Close(action="close", table_id="t1", reason="stuck"))
    moved: list[TableRecord] = []
    interleaved.before_close.append(lambda: moved.append(move(games, table)))
    with pytest.raises(ActionRefused) as refused:
        service.apply(apply, OPERATOR)
    assert refused.value.code == "plan_changed"
    assert games.get_table("t1") == moved[0]
    assert games.history.keys("t1", constants.CLOSED_SK) == []


def test_a_close_ends_the_table_shows_the_seats_and_is_done_once(
    service: OperatorService, games: GameStore, ledger: Ledger, pusher: RecordingPusher
) -> None:
    arena_table(games, ledger)
    _, apply = confirm(service, Close(action="close", table_id="t1", reason="stuck"))
    assert answer(service.apply(apply, OPERATOR))["outcome"] == "applied"
    ended = games.get_table("t1")
    assert ended is not None and ended.status == "aborted"
    assert [m["match"]["status"] for m in pusher.to("c1", "view")] == ["aborted"]
    _, again = confirm(service, Close(action="close", table_id="t1", reason="again"), "c" * 32)
    assert answer(service.apply(again, OPERATOR))["outcome"] == "done before"
    assert games.get_table("t1") == ended


# --- credit -------------------------------------------------------------------------------


@pytest.fixture
def funded(storage: MemoryStorage, ledger: Ledger) -> str:
    storage.put("players", {"player_id": "quin", "name": "Quin"})
    ledger.book([Posting("quin", "welcome", "welcome", points=FUNDS, jokers=3)], 1.0)
    return "quin"


def credit(player: str, points: int = 0, jokers: int = 0, reason: str = "ticket") -> Credit:
    return Credit(action="credit", player_id=player, points=points, jokers=jokers, reason=reason)


@pytest.mark.parametrize(
    ("points", "jokers"),
    [(LIMIT.points + 1, 0), (-LIMIT.points - 1, 0), (0, LIMIT.jokers + 1), (0, -LIMIT.jokers - 1)],
    ids=["credit points", "debit points", "credit jokers", "debit jokers"],
)
def test_a_credit_past_the_limit_is_refused_either_way(
    service: OperatorService, ledger: Ledger, funded: str, points: int, jokers: int
) -> None:
    before = accounts(ledger), ledger.balance(funded)
    with pytest.raises(ActionRefused) as refused:
        service.plan(credit(funded, points, jokers))
    assert refused.value.code == "credit_limit"
    confirmed = {"points": points, "jokers": jokers, "key": "k", "from": "house:support"}
    apply = Apply(request=credit(funded, points, jokers), action_id="d" * 32, confirmed=confirmed)
    with pytest.raises(ActionRefused) as applied:
        service.apply(apply, OPERATOR)
    assert applied.value.code == "credit_limit", "nor applied without its plan"
    assert (accounts(ledger), ledger.balance(funded)) == before


@pytest.mark.parametrize(("points", "jokers"), [(LIMIT.points, 0), (-LIMIT.points, -LIMIT.jokers)])
def test_a_credit_at_the_limit_is_booked_as_a_transfer_once(
    service: OperatorService, ledger: Ledger, funded: str, points: int, jokers: int
) -> None:
    _, apply = confirm(service, credit(funded, points, jokers))
    assert answer(service.apply(apply, OPERATOR))["balance"] == {
        "points": FUNDS + points,
        "jokers": 3 + jokers,
    }
    _, again = confirm(service, credit(funded, points, jokers), "e" * 32)
    assert answer(service.apply(again, OPERATOR))["outcome"] == "done before"
    assert ledger.balance(funded) == Balance(FUNDS + points, 3 + jokers)
    assert ledger.balance("house:support") == Balance(-points, -jokers)


@pytest.mark.parametrize(
    ("player", "points", "code"),
    [
        ("nobody", 10, "not_a_player_account"),
        ("bot-CODE-2", 10, "not_a_player_account"),
        ("escrow:t1", 10, "not_a_player_account"),
        ("quin", 0, "nothing_to_credit"),
    ],
)
def test_a_credit_to_no_player_or_of_nothing_is_refused(
    *, service: OperatorService, ledger: Ledger, funded: str, player: str, points: int, code: str
) -> None:
    with pytest.raises(ActionRefused) as refused:
        service.plan(credit(player, points))
    assert refused.value.code == code
    assert ledger.balance(funded) == Balance(FUNDS, 3)


def test_a_debit_the_balance_does_not_cover_is_refused_recorded_and_books_nothing(
    service: OperatorService, ledger: Ledger, funded: str, storage: MemoryStorage, clock: FakeClock
) -> None:
    ledger.book([Posting(funded, "spent", "external", points=-(FUNDS - 100))], 2.0)
    _, apply = confirm(service, credit(funded, -200))
    with pytest.raises(ActionRefused) as refused:
        service.apply(apply, OPERATOR)
    assert refused.value.code == "insufficient_balance"
    assert ledger.balance(funded) == Balance(100, 3)
    assert ledger.balance("house:support") == Balance(0, 0)
    (record,) = audit(storage, clock)
    assert (record.outcome, record.operator, record.changes["error"]) == (
        "refused",
        OPERATOR,
        "insufficient_balance",
    )


# --- kick ---------------------------------------------------------------------------------


def test_a_kick_closes_the_connection_once(
    service: OperatorService, storage: MemoryStorage, closer: RecordingCloser, clock: FakeClock
) -> None:
    storage.put("connections", {"connection_id": "c-open", "player_id": "quin"})
    changes, apply = confirm(service, Kick(action="kick", connection_id="c-open", reason="abuse"))
    assert changes == {"player_id": "quin"}
    assert answer(service.apply(apply, OPERATOR))["outcome"] == "applied"
    _, again = confirm(service, Kick(action="kick", connection_id="c-open", reason="x"), "f" * 32)
    assert answer(service.apply(again, OPERATOR))["outcome"] == "done before"
    assert closer.closed == ["c-open"]
    assert [r.outcome for r in audit(storage, clock)] == ["applied", "done before"]
