// The round and match results.

import { fmtNum, t } from "../i18n.js";
import { intermission, practiceMatch, scoreSheet } from "../state.js";
import { $, clock, h, show, tileEl } from "./dom.js";
import { seatName, teamOrder, teamTitle } from "./table.js";

export function renderDialog(state) {
  if (!state.dialog) return null;
  if (state.dialog.kind === "round") renderRound(state, state.dialog.msg);
  else renderMatch(state, state.dialog.msg);
  return state.dialog.kind === "round" ? $("round-dialog") : $("match-dialog");
}

function renderRound(state, msg) {
  $("round-dialog-title").textContent = t("result.round", { n: msg.round });
  const order = teamOrder(state);
  const rows = ["melded", "canastas", "bonus_threes", "going_out", "hands", "total"];
  const table = h(
    "table",
    { class: "score-table", "data-testid": "round-scores" },
    h("thead", {}, h("tr", {}, h("td", {}), order.map((team) => h("th", { scope: "col" }, teamTitle(state, team))))),
    h(
      "tbody",
      {},
      rows.map((row) =>
        h(
          "tr",
          { class: row === "total" ? "total" : "" },
          h("th", { scope: "row" }, t(`result.${row}`)),
          order.map((team) => h("td", { "data-testid": `score-${team}-${row}` }, fmtNum(msg.scores[team][row], row === "total"))),
        ),
      ),
    ),
    h("tfoot", {}, h("tr", {}, h("th", { scope: "row" }, t("result.totals")), order.map((team) => h("td", { "data-testid": `total-${team}` }, fmtNum(msg.totals[team]))))),
  );
  const proof = h(
    "details",
    { class: "proof", "data-testid": "shuffle-proof" },
    h("summary", {}, t("result.proof")),
    h("p", { class: "hint" }, t("result.proofHint")),
    h("dl", {}, h("dt", {}, t("result.commitment")), h("dd", {}, h("code", {}, msg.commitment)), h("dt", {}, t("result.seed")), h("dd", {}, h("code", {}, msg.seed))),
  );
  const pause = intermission(state);
  $("round-dialog-body").replaceChildren(...reveal(state, msg), table, h("p", { class: "next", "data-testid": "round-next" }, t(`result.next.${msg.next}`)), ...pauseLines(state, pause), proof);
  const next = $("round-continue");
  show(next, Boolean(pause));
  next.disabled = Boolean(pause && pause.sent);
  const close = $("round-result-close");
  close.textContent = t(pause ? "common.close" : "result.continue");
  close.classList.toggle("btn-primary", !pause);
  renderCountdown(state, Date.now() / 1000);
}

/** The intermission: time left before the next deal, and, once this seat has said it
 * read the result, whom the table still waits for. */
function pauseLines(state, pause) {
  if (!pause) return [];
  const lines = [h("p", { class: "countdown" }, t("result.nextDeal"), " ", h("strong", { id: "round-countdown", "data-testid": "round-countdown" }))];
  if (pause.sent) {
    const names = pause.awaited.map((seat) => seatName(state, seat)).join(", ");
    const text = names ? t("result.waitingFor", { names }) : t("result.waitingDeal");
    lines.push(h("p", { class: "hint", "data-testid": "intermission-waiting", role: "status" }, text));
  }
  return lines;
}

/** Ticks the intermission's countdown (the server's epoch seconds: the page's clock may be
 * off by a second). */
export function renderCountdown(state, now) {
  const el = $("round-countdown");
  const pause = el && intermission(state);
  if (pause) el.textContent = clock(pause.until - now);
}

/** Who went out (or that the stock ran out), and every seat's tiles left in hand: the
 * result's, else (an older server) the view's. */
function reveal(state, msg) {
  const v = state.view && state.view.view;
  const hands = msg.hands || (v && v.revealed);
  if (!v || !hands) return [];
  const wentOut = "went_out" in msg ? msg.went_out : v.went_out;
  const me = state.view.seat;
  const name = (seat) => (seat === me ? t("seat.you") : seatName(state, seat));
  const out = wentOut ? t("result.wentOut", { name: name(wentOut) }) : t("result.noneOut");
  const rows = [1, 2, 3, 4].map((seat) => {
    const left = hands[String(seat)] || [];
    return h(
      "li",
      { "data-testid": `revealed-${seat}`, "data-count": left.length },
      h("span", { class: "revealed-name" }, name(seat)),
      h("span", { class: "revealed-tiles" }, left.length ? left.map((tile) => tileEl(tile, { size: "small" })) : t("result.noTiles")),
    );
  });
  return [
    h("p", { class: "went-out", "data-testid": "round-went-out", "data-seat": wentOut || "" }, out),
    h("h3", {}, t("result.leftover")),
    h("ul", { class: "revealed", "data-testid": "round-hands" }, rows),
  ];
}

function renderMatch(state, msg) {
  const body = [];
  if (state.view) {
    const won = msg.winner === state.view.view.team;
    body.push(h("p", { class: `verdict ${won ? "won" : "lost"}`, "data-testid": "match-verdict" }, t(won ? "match.won" : "match.lost")));
  }
  body.push(h("p", {}, t("match.winner", { team: teamTitle(state, msg.winner) })));
  body.push(sheet(state, msg));
  body.push(h("p", {}, t("match.rounds", { n: msg.rounds_played })));
  if (practiceMatch(state, msg)) {
    body.push(h("p", { class: "reward practice", "data-testid": "match-reward" }, t("match.practice")));
  } else if (state.view && msg.rewards) {
    const amount = msg.rewards[String(state.view.seat)];
    if (typeof amount === "number") {
      body.push(h("p", { class: `reward ${amount >= 0 ? "gain" : "loss"}`, "data-testid": "match-reward" }, t("match.reward", { points: fmtNum(amount, true) })));
    }
  }
  $("match-dialog-body").replaceChildren(...body);
}

/** The round-by-round score sheet, each team's round scores down to the match totals. */
function sheet(state, msg) {
  const order = teamOrder(state);
  const rounds = scoreSheet(state, msg);
  return h(
    "table",
    { class: "score-table", "data-testid": "score-sheet", "data-rounds": rounds.length },
    h("thead", {}, h("tr", {}, h("td", {}), order.map((team) => h("th", { scope: "col" }, teamTitle(state, team))))),
    h(
      "tbody",
      {},
      rounds.map((r) =>
        h(
          "tr",
          { "data-testid": `sheet-round-${r.round}` },
          h("th", { scope: "row" }, t("table.round", { n: r.round })),
          order.map((team) => h("td", { "data-testid": `sheet-${r.round}-${team}` }, fmtNum(r[team], true))),
        ),
      ),
    ),
    h(
      "tfoot",
      {},
      h(
        "tr",
        {},
        h("th", { scope: "row" }, t("result.totals")),
        order.map((team) => h("td", { class: team === msg.winner ? "winner" : "", "data-testid": `match-total-${team}` }, fmtNum(msg.totals[team]))),
      ),
    ),
  );
}
