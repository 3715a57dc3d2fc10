// A player's records: their profile (rating and stats per mode, last matches), a mode's
// leaderboard and the replay of a finished match from their own seat. Drawn from the
// state only: the server's `profile`, `leaderboard` and `replay` answers.

import { fmtNum, t } from "../i18n.js";
import { $, h, show, tileEl } from "./dom.js";

const MODES = ["one_round", "three_rounds", "to_10000", "arena"];

function rating(value) {
  return value === null || value === undefined ? "—" : value.toFixed(1);
}

function when(epoch) {
  return new Date(epoch * 1000).toLocaleDateString(undefined, { month: "short", day: "numeric" });
}

/** The profile dialog: each rated mode's rating and counts, then the last matches. */
export function renderProfile(state, onReplay) {
  const profile = state.profile;
  if (!profile) return;
  const modes = MODES.filter((mode) => profile.stats[mode]);
  $("profile-stats").replaceChildren(
    ...(modes.length
      ? modes.map((mode) => {
          const s = profile.stats[mode];
          return h(
            "li",
            { class: "stat-row", "data-testid": "profile-mode", "data-mode": mode },
            h("strong", {}, t(`mode.${mode}`)),
            h("span", { "data-testid": "profile-rating" }, t("records.rating", { rating: rating(s.rating.shown) })),
            h("span", {}, t("records.record", { matches: s.matches, wins: s.wins, rate: Math.round(s.win_rate * 100) })),
            h("span", {}, t("records.average", { points: fmtNum(Math.round(s.average_round)) })),
            h("span", { "data-testid": "profile-canastas" }, t("records.canastas", s.canastas)),
          );
        })
      : [h("li", { class: "hint" }, t("records.unrated"))]),
  );
  $("profile-matches").replaceChildren(
    ...(profile.matches.length
      ? profile.matches.map((m) =>
          h(
            "li",
            { class: `match-row ${m.result}`, "data-testid": "profile-match", "data-table": m.table_id },
            h("span", { class: "match-when" }, when(m.ended_at)),
            h("strong", {}, t(`records.${m.result}`)),
            h("span", {}, t(`mode.${m.mode}`) + (m.practice ? ` · ${t("records.practice")}` : "")),
            h("span", {}, t("records.with", { partner: m.partner, opponents: m.opponents.join(", ") })),
            h("span", {}, m.rounds.map(([ours, theirs]) => `${fmtNum(ours)}–${fmtNum(theirs)}`).join(" · ")),
            h("span", { class: "match-points" }, m.practice ? "" : fmtNum(m.points, true)),
            h("button", {
              class: "btn btn-small",
              type: "button",
              "data-testid": "replay-button",
              text: t("records.replay"),
              onclick: () => onReplay(m.table_id),
            }),
          ),
        )
      : [h("li", { class: "hint" }, t("records.noMatches"))]),
  );
}

/** The leaderboard dialog: the top, best first, the player's own place marked. */
export function renderBoard(state) {
  const board = state.board;
  if (!board) return;
  $("board-title").textContent = t("records.boardOf", {
    mode: t(`mode.${board.mode}`),
    period: board.period === "all" ? t("records.allTime") : board.period,
  });
  const row = (s) =>
    h(
      "li",
      { class: s.you ? "board-row you" : "board-row", "data-testid": s.you ? "board-you" : "board-row" },
      h("span", { class: "board-rank" }, `${fmtNum(s.rank)}.`),
      h("span", { class: "board-name" }, s.you ? t("records.youName", { name: s.name }) : s.name),
      h("span", { class: "board-rating" }, rating(s.shown)),
    );
  $("board-top").replaceChildren(...(board.top.length ? board.top.map(row) : [h("li", { class: "hint" }, t("records.emptyBoard"))]));
  const own = board.own;
  const shown = own && !board.top.some((s) => s.you);
  $("board-own").replaceChildren(...(shown ? [row(own)] : own ? [] : [h("li", { class: "hint" }, t("records.notRanked"))]));
}

function meldRow(meld) {
  return h("li", { class: "replay-meld" }, ...meld.tiles.map((tile) => tileEl(tile, { size: "sm" })));
}

/** The replay viewer: the frame at the cursor, as the seat saw it then. */
export function renderReplay(state) {
  const replay = state.replay;
  if (!replay) return;
  const frame = replay.frames[replay.at];
  $("replay-where").textContent = t("records.frame", {
    round: replay.round,
    rounds: replay.rounds,
    move: replay.at,
    moves: replay.moves,
  });
  $("replay-prev").disabled = replay.at === 0 && replay.round === 1;
  $("replay-next").disabled = replay.at >= replay.moves && replay.round >= replay.rounds;
  if (!frame) {
    $("replay-move").textContent = t("records.loading");
    return;
  }
  const view = frame.view;
  const move = frame.move;
  $("replay-move").textContent = move
    ? t("records.moved", { seat: move.seat, move: t(`records.move.${move.type}`) }) + (move.tile ? ` ${move.tile}` : "")
    : t("records.dealt");
  $("replay-hand").replaceChildren(...view.hand.map((tile) => tileEl(tile)));
  $("replay-discard").replaceChildren(...view.discard.slice(-1).map((tile) => tileEl(tile)));
  $("replay-sizes").textContent = [1, 2, 3, 4]
    .filter((seat) => seat !== view.seat)
    .map((seat) => t("records.handSize", { seat, tiles: view.hand_sizes[String(seat)] }))
    .join(" · ");
  for (const team of ["A", "B"]) {
    $(`replay-melds-${team}`).replaceChildren(...view.melds[team].map(meldRow));
  }
  const revealed = view.revealed;
  show($("replay-revealed-box"), Boolean(revealed));
  $("replay-revealed").replaceChildren(
    ...(revealed
      ? Object.entries(revealed).map(([seat, tiles]) =>
          h(
            "li",
            { "data-testid": "replay-revealed-hand" },
            h("strong", {}, t("records.seat", { seat })),
            ...tiles.map((tile) => tileEl(tile, { size: "sm" })),
          ),
        )
      : []),
  );
}
