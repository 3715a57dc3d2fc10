"""A table's stored history replayed through the engine: what matches and what does not,
and what a seat saw at every move (the operators' console, a player's replay).

A round is a function of its seed and its actions (DEAL-4). Replaying the log
from the round item's seed must meet every stored fact: the seed must produce
the commitment the players were shown, every logged action must be legal where
it stands, a scored round must score what the score item says, the round in
play must be the live state the table holds, and the scored rounds must add
up to the table's totals. Each disagreement is reported, never smoothed over:
a tampered log entry or commitment shows as a mismatch.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from services.common.records import LogEntry, TableHistory
from shared_engine import (
    EngineError,
    JokerButton,
    RoundState,
    Variant,
    apply,
    commitment,
    dumps,
    parse_action,
    player_view,
    score_round,
    shuffled,
    start_round,
    unpack,
)
from shared_engine.match import TEAM_NAMES
from shared_engine.state import with_account_jokers
from shared_engine.view import PlayerView


@dataclass(frozen=True)
class Round:
    """A round item with its log and, once scored, its score item."""

    number: int
    seed: str
    commitment: str
    dealer: int
    moves: tuple[LogEntry, ...]
    scored: dict[str, Any] | None


@dataclass
class Verdict:
    """What the replay found: ``mismatches`` empty means every stored fact was met."""

    rounds: int = 0
    moves: int = 0
    mismatches: list[str] = field(default_factory=list)

    @property
    def verified(self) -> bool:
        return not self.mismatches


def rounds_of(history: TableHistory) -> list[Round]:
    """The rounds of a table from its records (``TableArchive.records``), in order."""
    scores = {score.round: score.result for score in history.scores}
    return [
        Round(
            number=dealt.round,
            seed=dealt.seed,
            commitment=dealt.commitment,
            dealer=dealt.dealer,
            moves=tuple(e for e in history.logs if e.round == dealt.round),
            scored=scores.get(dealt.round),
        )
        for dealt in history.rounds
    ]


def _start(played: Round, *, variant: Variant, totals: tuple[int, int]) -> RoundState:
    return start_round(played.seed, variant=variant, dealer=played.dealer, match_scores=totals)


def _step(state: RoundState, move: LogEntry) -> RoundState:
    action = parse_action(move.action)
    if isinstance(action, JokerButton):
        # JOKER-1: the account paid for it, so a spare joker was there when it was played.
        state = with_account_jokers(state, move.seat, max(1, state.account_jokers[move.seat - 1]))
    return apply(state, move.seat, action)[0]


@dataclass(frozen=True)
class Replayed:
    """One round replayed from its seed and its log, as far as the engine allowed."""

    round: Round
    final: RoundState
    applied: int
    """How many of the logged moves the engine applied (all, unless one was refused)."""
    refused: str | None
    """The first logged move the engine refused, named by its place; None if none."""
    commitment_ok: bool

    @property
    def totals(self) -> tuple[int, int]:
        a, b = score_round(self.final)
        return a.total, b.total


def replay(played: list[Round], *, variant: Variant) -> list[Replayed]:
    """Every round from its seed through its log; each round starts from the totals the
    rounds replayed before it reached (OPEN-2's thresholds depend on them)."""
    replayed: list[Replayed] = []
    running = (0, 0)
    for rnd in played:
        state = _start(rnd, variant=variant, totals=running)
        applied, refused = 0, None
        for move in rnd.moves:
            try:
                state = _step(state, move)
            except (EngineError, ValueError, KeyError, TypeError) as exc:
                refused = (
                    f"move {applied + 1} (version {move.version}, seat {move.seat}): "
                    f"the engine refuses {move.action}: {exc}"
                )
                break
            applied += 1
        done = Replayed(
            rnd, state, applied, refused, commitment(rnd.seed, shuffled(rnd.seed)) == rnd.commitment
        )
        replayed.append(done)
        if refused is None and state.round_over:
            running = (running[0] + done.totals[0], running[1] + done.totals[1])
    return replayed


def verify(
    played: list[Round],
    *,
    variant: Variant,
    live_state: bytes | None,
    live_round: int,
    totals: tuple[int, int],
) -> Verdict:
    """Replay every round and compare it with what the table stored."""
    verdict = Verdict()
    running = (0, 0)
    for done in replay(played, variant=variant):
        rnd = done.round
        verdict.rounds += 1
        verdict.moves += done.applied
        if not done.commitment_ok:
            verdict.mismatches.append(
                f"round {rnd.number}: the seed does not produce the published commitment"
            )
        if done.refused is not None:
            verdict.mismatches.append(f"round {rnd.number}, {done.refused}")
            continue
        if rnd.scored is not None:
            scores = score_round(done.final)
            for team, score in zip(TEAM_NAMES, scores, strict=True):
                stored = rnd.scored["scores"][team]
                replayed = {**score.as_dict(), "total": score.total}
                if any(stored.get(k) != v for k, v in replayed.items()):
                    verdict.mismatches.append(
                        f"round {rnd.number}: team {team} scored {stored} but the replay "
                        f"scores {replayed}"
                    )
            running = (running[0] + scores[0].total, running[1] + scores[1].total)
            stored_totals = rnd.scored["totals"]
            if (stored_totals["A"], stored_totals["B"]) != running:
                verdict.mismatches.append(
                    f"round {rnd.number}: stored totals {stored_totals}, replayed {running}"
                )
        if rnd.number == live_round and live_state is not None:
            stored_state = unpack(live_state)
            same_jokers = with_jokers(done.final, stored_state.account_jokers)
            if dumps(same_jokers) != dumps(stored_state):
                verdict.mismatches.append(
                    f"round {rnd.number}: the live state is not what its log replays to"
                )
    if played and played[-1].scored is not None and running != totals:
        verdict.mismatches.append(
            f"the table's totals are {totals}, the rounds add up to {running}"
        )
    return verdict


def with_jokers(state: RoundState, jokers: tuple[int, ...]) -> RoundState:
    """The state with every seat's spare-joker balance as given: the ledger's, which the
    log does not record, so a comparison of states sets them alike."""
    for seat, count in enumerate(jokers, start=1):
        state = with_account_jokers(state, seat, count)
    return state


def _round_start(played: list[Round], *, variant: Variant, round_number: int) -> RoundState:
    index = next((i for i, r in enumerate(played) if r.number == round_number), None)
    if index is None:
        raise ValueError(f"the table has no round {round_number}")
    before = [r.totals for r in replay(played[:index], variant=variant) if r.final.round_over]
    return _start(
        played[index],
        variant=variant,
        totals=(sum(a for a, _ in before), sum(b for _, b in before)),
    )


def seat_view(
    played: list[Round], *, variant: Variant, round_number: int, moves: int, seat: int
) -> PlayerView:
    """What ``seat`` saw after the first ``moves`` actions of ``round_number``."""
    state = _round_start(played, variant=variant, round_number=round_number)
    rnd = next(r for r in played if r.number == round_number)
    if not 0 <= moves <= len(rnd.moves):
        raise ValueError(f"round {round_number} has {len(rnd.moves)} moves")
    for move in rnd.moves[:moves]:
        state = _step(state, move)
    return player_view(state, seat)


def seat_frames(
    played: list[Round], *, variant: Variant, round_number: int, seat: int, start: int, count: int
) -> list[tuple[LogEntry | None, PlayerView]]:
    """What ``seat`` saw at the deal (``None``: no move yet, at ``start`` 0) and after each
    move of ``round_number`` from ``start``, ``count`` of them at most: the engine's own
    view of the seat, as it was pushed live, the last one revealing the hands."""
    state = _round_start(played, variant=variant, round_number=round_number)
    moves = next(r for r in played if r.number == round_number).moves
    frames: list[tuple[LogEntry | None, PlayerView]] = []
    if start == 0:
        frames.append((None, player_view(state, seat)))
    for number, move in enumerate(moves, start=1):
        if len(frames) >= count:
            break
        state = _step(state, move)
        if number >= start:
            frames.append((move, player_view(state, seat)))
    return frames
