// The round and match results.

import { fmtNum, t } from "../i18n.js";
import { $, h, tileEl } from "./dom.js";
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
  $("round-dialog-body").replaceChildren(...reveal(state), table, h("p", { class: "next", "data-testid": "round-next" }, t(`result.next.${msg.next}`)), proof);
}

/** Who went out, and every seat's tiles left in hand, once the view reveals them. */
function reveal(state) {
  const v = state.view && state.view.view;
  if (!v || !v.revealed) return [];
  const me = state.view.seat;
  const name = (seat) => (seat === me ? t("seat.you") : seatName(state, seat));
  const out = v.went_out ? t("result.wentOut", { name: name(v.went_out) }) : t("result.noneOut");
  const rows = [1, 2, 3, 4].map((seat) =>
    h(
      "li",
      { "data-testid": `revealed-${seat}`, "data-count": v.revealed[String(seat)].length },
      h("span", { class: "revealed-name" }, name(seat)),
      h("span", { class: "revealed-tiles" }, v.revealed[String(seat)].map((tile) => tileEl(tile, { size: "small" }))),
    ),
  );
  return [h("p", { class: "went-out", "data-testid": "went-out" }, out), h("h3", {}, t("result.leftover")), h("ul", { class: "revealed" }, rows)];
}

function renderMatch(state, msg) {
  const body = [];
  if (state.view) {
    const won = msg.winner === state.view.view.team;
    body.push(h("p", { class: `verdict ${won ? "won" : "lost"}`, "data-testid": "match-verdict" }, t(won ? "match.won" : "match.lost")));
  }
  body.push(h("p", {}, t("match.winner", { team: teamTitle(state, msg.winner) })));
  body.push(
    h(
      "table",
      { class: "score-table" },
      h(
        "tbody",
        {},
        teamOrder(state).map((team) => h("tr", { class: team === msg.winner ? "total" : "" }, h("th", { scope: "row" }, teamTitle(state, team)), h("td", { "data-testid": `match-total-${team}` }, fmtNum(msg.totals[team])))),
      ),
    ),
  );
  body.push(h("p", {}, t("match.rounds", { n: msg.rounds_played })));
  if (state.view && msg.rewards) {
    const amount = msg.rewards[String(state.view.seat)];
    if (typeof amount === "number") {
      body.push(h("p", { class: `reward ${amount >= 0 ? "gain" : "loss"}`, "data-testid": "match-reward" }, t("match.reward", { points: fmtNum(amount, true) })));
    }
  }
  $("match-dialog-body").replaceChildren(...body);
}
