"""The profile service: each finished match added to its players' history, and to their
stats, rating and leaderboard standings in its mode.

Like the ledger, it takes from ``MatchEnded`` only the table's id: who sat, the mode,
the stake and every round's score are the games table's records, and a table whose
records do not end its match as the rules would (``winner_after``) adds nothing, so
a forged event on the bus can neither rate nor list a match. A practice match
(MATCH-3) is listed in its players' histories and changes no stats and no rating.
"""

from __future__ import annotations

from collections.abc import Sequence

from openskill.models import PlackettLuce, PlackettLuceRating

from services.common.events import is_practice
from services.common.frozen import replace
from services.common.leaderboards import ALL_TIME, Change, period_of
from services.common.profiles import MatchEntry, ModeStats, Profile, ProfileStore, Rating
from services.common.records import ScoreRecord, TableRecord
from services.common.replay import replay, rounds_of
from services.common.store import GameStore
from services.common.telemetry import Telemetry
from services.common.unit_of_work import AlreadyDone, Committed, VersionConflict
from shared_engine.match import settle_match, winner_after
from shared_engine.scoring import canasta_kinds

RACES = 3
"""Reads and writes a match is decided on before its delivery is left to the queue's
retry: another match of one of its players was added between the read and the write."""
MODEL = PlackettLuce()
"""The rating model: OpenSkill's Plackett-Luce, made for teams (a new player starts at its
default, uncertain rating)."""
TEAMS = ((1, 3), (2, 4))
Kinds = tuple[tuple[int, int, int], tuple[int, int, int]]
"""Each team's canastas over the match: clean, dirty, of twos (CAN-1..3)."""
"""The seats of team A and of team B (TEAM-1)."""


class ProfileService:
    def __init__(self, games: GameStore, profiles: ProfileStore, telemetry: Telemetry) -> None:
        self._games = games
        self._profiles = profiles
        self._telemetry = telemetry

    def match_ended(self, table_id: str) -> None:
        """Add the ended table's match to its players' profiles, once."""
        self._telemetry.annotate(table_id=table_id)
        table = self._games.get_table(table_id)
        scores = self._games.scores(table_id) if table else ()
        winner = _winner(table, scores) if table else None
        if table is None or winner is None:
            self._telemetry.warning("profile refused", reason="the table's records end no match")
            self._telemetry.count("profile_unbacked_events")
            return
        kinds = self._canastas(table)
        for _ in range(RACES):
            outcome = self._add(table, scores, winner, kinds)
            if isinstance(outcome, Committed):
                self._telemetry.count("profile_matches_added")
                return
            if isinstance(outcome, AlreadyDone):
                self._telemetry.count("profile_duplicates")
                return
        raise RuntimeError(f"profiles of {table_id} changed on every try")

    def _canastas(self, table: TableRecord) -> Kinds:
        """Each team's canastas by kind over the match, from each round's final melds as
        its log replays them (the score records keep only their points); a round the
        engine cannot replay to its end counts none, and is reported."""
        replayed = replay(
            rounds_of(self._games.history.records(table.table_id)), variant=table.variant
        )
        totals = [[0, 0, 0], [0, 0, 0]]
        for done in replayed:
            if done.refused is not None or not done.final.round_over:
                self._telemetry.warning("round not replayed", round=done.round.number)
                continue
            for team in (0, 1):
                for kind, count in enumerate(canasta_kinds(done.final.melds[team])):
                    totals[team][kind] += count
        return (
            (totals[0][0], totals[0][1], totals[0][2]),
            (totals[1][0], totals[1][1], totals[1][2]),
        )

    def _add(
        self, table: TableRecord, scores: Sequence[ScoreRecord], winner: int, kinds: Kinds
    ) -> Committed | AlreadyDone | VersionConflict:
        if self._profiles.profiled(table.table_id):
            return AlreadyDone()
        practice = is_practice(table.seats.values())
        people = {seat: player for seat, player in sorted(table.seats.items()) if not player.bot}
        read = {seat: self._profiles.profile(player.player_id) for seat, player in people.items()}
        before = {seat: read[seat] or Profile(player.player_id) for seat, player in people.items()}
        after = dict(before) if practice else _rated(table, scores, winner, before, kinds)
        settled = settle_match(table.mode, winner, table.round, table.stake)
        mode = table.mode.value
        entries = [
            replace(
                _entry(table, scores, seat, winner),
                points=0 if practice else settled[seat].net,
                rating_before=before[seat].ratings.get(mode),
                rating_after=None if practice else after[seat].ratings[mode],
            )
            for seat in people
        ]
        changed = [] if practice else [(read[seat], after[seat]) for seat in people]
        boards = {} if practice else _boards(table, before, after)
        outcome = self._profiles.add_match(table.table_id, entries, changed, boards)
        assert isinstance(outcome, Committed | AlreadyDone | VersionConflict), outcome
        return outcome


def _winner(table: TableRecord, scores: Sequence[ScoreRecord]) -> int | None:
    """The team (0: A, 1: B) the rules give the table's scored rounds, if it ended."""
    if table.status != "finished" or [s.round for s in scores] != list(range(1, table.round + 1)):
        return None
    return winner_after(table.mode, [_totals(score) for score in scores])


def _totals(score: ScoreRecord) -> tuple[int, int]:
    totals = score.result["totals"]
    return (int(totals["A"]), int(totals["B"]))


def _added(one: tuple[int, int, int], other: tuple[int, int, int]) -> tuple[int, int, int]:
    return (one[0] + other[0], one[1] + other[1], one[2] + other[2])


def _team_of(seat: int) -> int:
    return (seat - 1) % 2


def _rated(
    table: TableRecord,
    scores: Sequence[ScoreRecord],
    winner: int,
    before: dict[int, Profile],
    kinds: Kinds,
) -> dict[int, Profile]:
    """Each seat's profile after the match: its mode's counters added to, and the rating
    updated from both teams' result (the winners ranked first)."""
    teams = [[_model_rating(before[seat], table.mode.value) for seat in seats] for seats in TEAMS]
    ranks = [1.0, 2.0] if winner == 0 else [2.0, 1.0]
    rated = MODEL.rate(teams, ranks=ranks)
    new = {
        seat: Rating(player.mu, player.sigma)
        for seats, team in zip(TEAMS, rated, strict=True)
        for seat, player in zip(seats, team, strict=True)
    }
    after: dict[int, Profile] = {}
    mode, month = table.mode.value, period_of(table.updated_at)
    for seat, profile in before.items():
        stats = profile.stats.get(mode, ModeStats()).plus(
            _match_stats(scores, _team_of(seat), kinds, won=_team_of(seat) == winner)
        )
        after[seat] = replace(
            profile,
            version=profile.version + 1,
            ratings={**profile.ratings, mode: new[seat]},
            stats={**profile.stats, mode: stats},
            months={**profile.months, mode: month},
        )
    return after


def _boards(
    table: TableRecord, before: dict[int, Profile], after: dict[int, Profile]
) -> dict[tuple[str, str], list[Change]]:
    """Each player's move on the mode's all-time board and on the month's: from where
    the rating they had put them (nowhere yet on a month's board they first play in)."""
    mode, month = table.mode.value, period_of(table.updated_at)
    boards: dict[tuple[str, str], list[Change]] = {(mode, ALL_TIME): [], (mode, month): []}
    for seat, profile in after.items():
        old, name = before[seat].ratings.get(mode), table.seats[seat].name
        shown = profile.ratings[mode].shown
        was = None if old is None else old.shown
        boards[(mode, ALL_TIME)].append(Change(profile.player_id, name, was, shown))
        this_month = before[seat].months.get(mode) == month
        boards[(mode, month)].append(
            Change(profile.player_id, name, was if this_month else None, shown)
        )
    return boards


def _model_rating(profile: Profile, mode: str) -> PlackettLuceRating:
    rating = profile.ratings.get(mode)
    if rating is None:
        return MODEL.rating(name=profile.player_id)
    return MODEL.rating(mu=rating.mu, sigma=rating.sigma, name=profile.player_id)


def _match_stats(scores: Sequence[ScoreRecord], team: int, kinds: Kinds, *, won: bool) -> ModeStats:
    own = [score.result["scores"]["AB"[team]] for score in scores]
    clean, dirty, twos = kinds[team]
    return ModeStats(
        matches=1,
        wins=int(won),
        rounds=len(own),
        round_points=sum(int(part["total"]) for part in own),
        canasta_points=sum(int(part["canastas"]) for part in own),
        out_first=sum(1 for part in own if int(part["going_out"]) > 0),
        clean=clean,
        dirty=dirty,
        twos=twos,
    )


def _entry(table: TableRecord, scores: Sequence[ScoreRecord], seat: int, winner: int) -> MatchEntry:
    """The match in the seat's player's history, before its points and ratings."""
    team = _team_of(seat)
    seats = table.seats
    partner = next(s for s in TEAMS[team] if s != seat)
    them = TEAMS[1 - team]
    return MatchEntry(
        player_id=seats[seat].player_id,
        table_id=table.table_id,
        ended_at=table.updated_at,
        mode=table.mode.value,
        stake=table.stake,
        practice=is_practice(seats.values()),
        seat=seat,
        partner=seats[partner].name,
        opponents=(seats[them[0]].name, seats[them[1]].name),
        rounds=tuple(
            (
                int(score.result["scores"]["AB"[team]]["total"]),
                int(score.result["scores"]["AB"[1 - team]]["total"]),
            )
            for score in scores
        ),
        result="won" if team == winner else "lost",
        points=0,
    )
