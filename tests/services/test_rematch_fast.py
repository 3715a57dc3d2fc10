"""Playing again at a friends table, on the in-memory storage: the rematch's lobby code,
its held seats, and the last two held seats answered at once.

The same rules run on the real stack in ``tests/integration/test_rematch.py``; here each
one fails fast when its line of ``services/matchmaking/rematch.py`` or ``lobbies.py``
stops holding it.
"""

from __future__ import annotations

import pytest

from services.common.events import SeatPlayer
from services.common.records import Lobby
from services.matchmaking.forming import ENTRY_TTL, FORM_ATTEMPTS
from services.matchmaking.lobbies import CODE_ALPHABET, CODE_LENGTH
from services.matchmaking.rematch import rematch_code
from tests.services import test_matchmaking_app as matchmaking
from tests.services.test_matchmaking_app import World, _ended_friends_table, _rematch

pytestmark = pytest.mark.unit

w = matchmaking.w
"""Matchmaking wired as ``test_matchmaking_app.py`` wires it, shared rather than rebuilt."""


def _person(player: str) -> SeatPlayer:
    return SeatPlayer(player_id=player, name=player.upper())


def _rematch_lobby(w: World, player: str) -> Lobby:
    """The lobby the player's item names, which the rematch put them in."""
    code = w.player(player).lobby
    assert code is not None, w.codes(player)
    lobby = w.lobbies.lobby(code)
    assert lobby is not None
    return lobby


# --- the rematch's code ----------------------------------------------------------------------


def test_every_table_and_attempt_has_its_own_code_and_each_asker_computes_it() -> None:
    """The four meet without a lock because each computes the same code; the codes of other
    tables, and of the next attempts, must not be that one or the tables meet each other."""
    tables = [f"f-{n:06d}-{n * 7919:08x}" for n in range(200)]
    codes = {(t, a): rematch_code(t, a) for t in tables for a in range(FORM_ATTEMPTS)}
    assert len(set(codes.values())) == len(codes)
    assert all(rematch_code(t, a) == code for (t, a), code in codes.items())
    assert all(len(c) == CODE_LENGTH and set(c) <= set(CODE_ALPHABET) for c in codes.values())


def test_two_ended_tables_are_played_again_in_two_lobbies(w: World) -> None:
    first = _ended_friends_table(w, ["a1", "a2", "a3"])
    second = _ended_friends_table(w, ["b1", "b2", "b3"])
    _rematch(w, "a2", first)
    _rematch(w, "b2", second)
    assert w.codes("a2") == w.codes("b2") == []
    lobbies = [_rematch_lobby(w, "a2"), _rematch_lobby(w, "b2")]
    assert [lobby.code for lobby in lobbies] == [rematch_code(first, 0), rematch_code(second, 0)]
    assert [lobby.rematch_of for lobby in lobbies] == [first, second]
    assert [lobby.seats[2].player_id for lobby in lobbies] == ["a2", "b2"]


def test_a_code_another_lobby_holds_moves_the_rematch_to_the_next_attempt(w: World) -> None:
    ended = _ended_friends_table(w, ["c1", "c2", "c3"])
    squatter = _person("x1")
    taken = Lobby(
        rematch_code(ended, 0), "x1", "one_round", "twos-meld", "forming", {1: squatter}, None
    )
    w.lobbies.open(taken, squatter, int(w.clock.now()) + ENTRY_TTL)

    _rematch(w, "c1", ended)
    assert w.codes("c1") == []
    lobby = _rematch_lobby(w, "c1")
    assert (lobby.code, lobby.rematch_of) == (rematch_code(ended, 1), ended)
    assert w.lobbies.lobby(rematch_code(ended, 0)) == taken
    # The next of the four finds the same lobby behind the same two attempts.
    _rematch(w, "c3", ended)
    assert (w.codes("c3"), w.player("c3").lobby) == ([], lobby.code)


# --- held seats ------------------------------------------------------------------------------


def test_a_held_seat_is_nobody_elses(w: World) -> None:
    """Only the ended match's players hold the rematch's seats: a stranger with its code,
    or asking for the rematch, takes none, and the lobby is as it was."""
    ended = _ended_friends_table(w, ["d1", "d2", "d3"])
    _rematch(w, "d1", ended)
    before = _rematch_lobby(w, "d1")
    assert set(before.awaiting()) == {2, 3}

    w.online("d9")
    w.service.lobbies.join_table("d9", "D9", "c-d9", before.code)
    _rematch(w, "d9", ended)
    assert w.codes("d9") == ["table_full", "not_seated"]
    assert w.player("d9").lobby is None
    assert w.lobbies.lobby(before.code) == before


def test_a_player_still_at_the_ended_table_takes_their_held_seat(w: World) -> None:
    """The release of the ended table (``match_over``) may arrive after the rematch: a
    player the player item still seats there takes their seat all the same, once."""
    ended = _ended_friends_table(w, ["e1", "e2", "e3"])
    _rematch(w, "e1", ended)
    assert w.player("e2").table_id == ended

    _rematch(w, "e2", ended)
    _rematch(w, "e2", ended)
    assert w.codes("e2") == []
    item = w.player("e2")
    assert (item.lobby, item.table_id, item.seat) == (rematch_code(ended, 0), None, None)
    lobby = _rematch_lobby(w, "e2")
    bot = w.store.get_table(ended).seats[4]  # type: ignore[union-attr]
    assert lobby.seats == {1: _person("e1"), 2: _person("e2"), 4: bot}
    assert set(lobby.awaiting()) == {3}
    offers = w.pusher.to("c-e2", "lobby")
    assert [offer["you"] for offer in offers[-2:]] == ["e2", "e2"], "each answer is shown"


# --- the last held seats, answered at once ------------------------------------------------


def test_the_last_two_held_seats_answered_at_once_start_the_table_once(
    w: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    """f2 and f3 both read the lobby with two seats still awaited; f2 takes its seat, then
    f3 takes the last. Each decides whether to start from the lobby read again after its
    own write: from its first read, neither would see four seats and no table would start
    (services/matchmaking/lobbies.py, ``seated``)."""
    ended = _ended_friends_table(w, ["f1", "f2", "f3"])
    _rematch(w, "f1", ended)
    code = rematch_code(ended, 0)
    before_f2 = w.lobbies.lobby(code)
    formed = w.telemetry.metrics["tables_formed"]

    _rematch(w, "f2", ended)
    reads = iter([before_f2])
    real = w.lobbies.lobby
    monkeypatch.setattr(w.lobbies, "lobby", lambda c: next(reads, None) or real(c))
    _rematch(w, "f3", ended)
    monkeypatch.undo()

    assert [w.codes(p) for p in ("f1", "f2", "f3")] == [[], [], []]
    assert w.telemetry.metrics["tables_formed"] == formed + 1
    started = w.lobbies.lobby(code)
    assert started is not None and started.status == "started" and started.table_id
    assert {w.player(p).table_id for p in ("f1", "f2", "f3")} == {started.table_id}
    for p in ("f1", "f2", "f3"):
        lobbies = w.pusher.to(f"c-{p}", "lobby")
        told = [m for m in lobbies if m["rematch_of"] == ended and m["status"] == "started"]
        assert [m["table_id"] for m in told] == [started.table_id], p
