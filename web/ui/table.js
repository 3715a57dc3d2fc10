// The table screen, drawn from the state. User intents go back through `on`:
// {tile(i), meld(rank), suggestion(action), moreSuggestions()}.

import { fmtNum, t } from "../i18n.js";
import { PHRASES, buttonTitle, handHints, legalTypes, moveKey, moveOptions, myTurn, pileTop, playing, saidBy, selectedTiles, selectionPoints, shownMelds, suggestions, wildsOf } from "../state.js";
import { multiset } from "../tiles.js";
import { $, clock, h, show, tileEl, tileName } from "./dom.js";

const SUGGESTIONS_SHOWN = 6;

/** The seat's team, as the table's view names it (TABLE-1). */
export function teamOf(state, seat) {
  return state.view.view.teams[String(seat)];
}

export function teamOrder(state) {
  const mine = state.view ? state.view.view.team : "A";
  return mine === "A" ? ["A", "B"] : ["B", "A"];
}

export function teamTitle(state, team) {
  if (!state.view) return t(`team.${team}`);
  const key = team === state.view.view.team ? "team.yours" : "team.opponents";
  return t("team.label", { name: t(key), team: t(`team.${team}`) });
}

export function seatName(state, seat) {
  const info = state.view.seats[String(seat)];
  return info && info.player ? info.player.name : t("lobby.seat", { n: seat });
}

/** A meld spec as text: "7 ×3 + 1 wild". */
export function specText(spec, isWild) {
  const wild = spec.tiles.filter((tile) => (spec.rank === 2 ? tile === "JK" : isWild(tile))).length;
  const naturals = spec.tiles.length - wild;
  let text = naturals ? t("sugg.spec", { rank: String(spec.rank), n: naturals }) : t("sugg.rank", { rank: String(spec.rank) });
  if (wild) text += ` ${t("sugg.wilds", { n: wild })}`;
  return text;
}

/** The quick messages' menu: one button per phrase, in the player's language. */
export function renderPhrases(on) {
  $("quick-list").replaceChildren(...PHRASES.map((phrase) => h("button", { type: "button", class: "btn btn-small", "data-testid": `say-${phrase}`, onclick: () => on.say(phrase) }, t(`say.${phrase}`))));
}

export function renderTable(state, conn, on) {
  const screen = $("table-screen");
  screen.dataset.version = String(state.view.version);
  screen.dataset.phase = state.view.view.phase;
  screen.dataset.round = String(state.view.match.round);
  screen.dataset.myTurn = state.view.view.turn === state.view.seat && !state.elsewhere ? "true" : "false";
  renderMatchInfo(state);
  renderPhrases(on);
  renderTurn(state);
  renderBoard(state, conn);
  renderLastMove(state);
  renderLog(state);
  renderMelds(state, on);
  renderHandArea(state, conn, on);
  renderPresented(state);
}

function renderMatchInfo(state) {
  const { match } = state.view;
  const mine = state.view.view.team;
  const other = mine === "A" ? "B" : "A";
  const chips = [
    h(
      "span",
      { class: "chip chip-score", "data-testid": "match-totals" },
      h("span", { class: `team-${mine}` }, t("table.score", { team: t("team.yours"), n: match.totals[mine] })),
      " · ",
      h("span", { class: `team-${other}` }, t("table.score", { team: t("team.opponents"), n: match.totals[other] })),
    ),
    h("span", { class: "chip", "data-testid": "match-round" }, t("table.round", { n: match.round })),
    h("span", { class: "chip chip-detail", "data-testid": "match-mode" }, t(`mode.${match.mode}`)),
    h("span", { class: "chip chip-detail" }, t(`variant.${match.variant}`)),
    match.mode === "arena" && match.stake ? h("span", { class: "chip" }, t("table.stake", { n: match.stake })) : null,
    match.practice ? h("span", { class: "chip chip-practice", "data-testid": "practice-badge", title: t("table.practiceHint") }, t("table.practice")) : null,
  ];
  $("match-info").replaceChildren(...chips.filter(Boolean));
  const over = match.status !== "playing";
  show($("match-over"), over);
  if (over) $("match-over-text").textContent = t(match.status === "aborted" ? "table.aborted" : "table.finished");
}

function renderTurn(state) {
  const v = state.view.view;
  const mine = v.turn === state.view.seat;
  let text;
  if (state.elsewhere) text = t("turn.elsewhere");
  else if (v.phase === "round_over" || state.view.match.status !== "playing") text = t("turn.over");
  else text = mine ? t("turn.yours") : t("turn.other", { name: seatName(state, v.turn) });
  $("turn-text").textContent = text;
  $("turn-bar").classList.toggle("mine", mine && playing(state));
  let hint = "";
  if (playing(state)) hint = mine ? t(`phase.${v.phase}`) : t("phase.wait", { name: seatName(state, v.turn) });
  $("phase-hint").textContent = hint;
  renderTimer(state, Date.now() / 1000);
}

export function renderTimer(state, now) {
  if (!state.view) return;
  const timer = $("turn-timer");
  const deadline = state.view.turn_deadline;
  const visible = typeof deadline === "number" && playing(state);
  show(timer, visible);
  if (visible) {
    const left = deadline - now;
    timer.textContent = clock(left);
    timer.setAttribute("aria-label", t("turn.timer", { time: clock(left) }));
    timer.classList.toggle("urgent", left <= 10);
  }
}

function seatEl(state, seat, position) {
  const v = state.view.view;
  const info = state.view.seats[String(seat)] || null;
  const me = state.view.seat;
  const role = seat === me ? "you" : teamOf(state, seat) === teamOf(state, me) ? "partner" : "opponent";
  const connected = info ? info.connected : false;
  const bot = info && info.player && info.player.bot;
  const count = v.hand_sizes[String(seat)] ?? 0;
  const turn = v.turn === seat && playing(state);
  const status = connected ? "seat.connected" : bot ? "seat.bot" : "seat.disconnected";
  const said = saidBy(state, seat);
  return h(
    "div",
    {
      class: `seat seat-${role} team-${teamOf(state, seat)}${turn ? " on-turn" : ""}${connected || bot ? "" : " away"}`,
      "data-testid": `seat-${seat}`,
      "data-seat": seat,
      "data-role": role,
      "data-position": position,
      "aria-current": turn ? "true" : null,
    },
    h("span", { class: `dot ${connected ? "on" : bot ? "bot" : "off"}`, "data-testid": `seat-connected-${seat}`, "data-connected": connected ? "true" : "false", role: "img", "aria-label": t(status), title: t(status) }),
    h("span", { class: "seat-name" }, seatName(state, seat)),
    h("span", { class: "seat-role", title: `${t(`seat.${role}`)} · ${t(`team.${teamOf(state, seat)}`)}${bot ? ` · ${t("seat.bot")}` : ""}` }, t(`seat.${role}`), h("span", { class: "seat-team" }, ` · ${t(`team.${teamOf(state, seat)}`)}`)),
    h("span", { class: "seat-count", "data-testid": `seat-count-${seat}`, "data-count": count }, t("seat.tiles", { n: count })),
    turn ? h("span", { class: "visually-hidden" }, t("seat.turn")) : null,
    said ? h("span", { class: "said", "data-testid": `said-${seat}`, role: "status" }, t(`say.${said}`)) : null,
  );
}

function renderBoard(state, conn) {
  const me = state.view.seat;
  const at = (k) => ((me - 1 + k) % 4) + 1;
  $("seat-bottom").replaceChildren(seatEl(state, me, "bottom"));
  $("seat-left").replaceChildren(seatEl(state, at(1), "left"));
  $("seat-top").replaceChildren(seatEl(state, at(2), "top"));
  $("seat-right").replaceChildren(seatEl(state, at(3), "right"));

  const v = state.view.view;
  const { on } = moveOptions(state);
  const canAct = playing(state) && conn.open && !state.busy;
  $("stock-count").textContent = fmtNum(v.stock_size);
  $("stock").setAttribute("aria-label", t("stock.aria", { n: v.stock_size }));
  $("stock").disabled = !(canAct && on.draw);

  const pile = v.discard;
  const top = pileTop(state);
  const topEl = $("pile-top");
  if (top) {
    topEl.replaceChildren(...[tileEl(top, { size: "large" }), v.pile_blocked ? h("span", { class: "blocked", "data-testid": "pile-blocked" }, t("pile.blocked")) : null].filter(Boolean));
    $("pile").setAttribute("aria-label", t("pile.aria", { n: pile.length, top: tileName(top) }));
  } else {
    topEl.replaceChildren(h("span", { class: "pile-empty" }, t("pile.empty")));
    $("pile").setAttribute("aria-label", t("pile.ariaEmpty"));
  }
  $("pile-count").textContent = fmtNum(pile.length);
  $("pile-browse").disabled = pile.length === 0;
  $("pile").disabled = !(canAct && on.take_pile);
}

/** One public move in words: "Bob took the pile of 7 with 9s ×2.", "Dee went out!". */
export function moveText(state, move) {
  const seat = Number(move.seat);
  const name = seat === state.view.seat ? t("seat.you") : seatName(state, seat);
  const isWild = wildsOf(state);
  const specs = (move.melds || []).map((m) => specText(m, isWild)).join(", ");
  const parts = [];
  if (move.type === "take_pile" && move.pile_size) parts.push(t("log.take_pile", { name, n: move.pile_size, specs }));
  else parts.push(t(`last.${move.type}`, { name, specs, tile: move.tile ? tileName(move.tile) : "" }));
  if (move.bonus_threes && move.bonus_threes.length) parts.push(t("log.exposed", { name, tiles: move.bonus_threes.map(tileName).join(", ") }));
  if (move.went_out) parts.push(t("log.wentOut", { name }));
  const info = state.view.seats[String(seat)];
  const bot = info && info.player && info.player.bot;
  if (move.auto && !bot) parts.push(t("log.auto"));
  return parts.join(" ");
}

function renderLastMove(state) {
  const last = state.view.last_action;
  $("last-move").textContent = last && last.type && last.seat ? moveText(state, last) : "";
}

/** The button that shows the whole log (a phone shows its last few lines). */
function logToggle(list) {
  let button = $("log-expand");
  if (!button) {
    button = h("button", { id: "log-expand", class: "btn btn-small", type: "button", "data-testid": "log-expand", "aria-controls": "move-log" });
    button.addEventListener("click", () => {
      list.classList.toggle("expanded");
      logToggle(list);
    });
    list.closest(".move-log").querySelector(".log-head h3").after(button);
  }
  const open = list.classList.contains("expanded");
  button.textContent = t(open ? "log.fewer" : "log.all");
  button.setAttribute("aria-expanded", open ? "true" : "false");
}

/**
 * Marks where another seat's move being shown went (MoveQueue): the seat, the stock or
 * the pile, the melds laid or extended, its log line. Only classes change: no element
 * is drawn again, so a tap in progress is never lost.
 */
export function renderPresented(state) {
  for (const el of document.querySelectorAll(".presented")) el.classList.remove("presented", "moving");
  for (const el of document.querySelectorAll("#move-log .upcoming")) if (!state.upcoming.has(el.dataset.key)) el.classList.remove("upcoming");
  const shown = state.presented;
  if (!shown || !state.view) return;
  const { move } = shown;
  const seat = Number(move.seat);
  const targets = [document.querySelector(`[data-testid="seat-${seat}"]`), document.querySelector(`#move-log [data-key="${shown.key}"]`)];
  if (move.type === "draw" || move.type === "joker_button") targets.push($("stock"));
  if (move.type === "discard" || move.type === "take_pile") targets.push($("pile"));
  for (const spec of move.melds || []) targets.push(document.querySelector(`[data-testid="meld-${teamOf(state, seat)}-${spec.rank}"]`));
  for (const el of targets) if (el) el.classList.add("presented", ...(shown.motion ? ["moving"] : []));
}

/** The round's moves, oldest first, scrolled to the newest. */
function renderLog(state) {
  const list = $("move-log");
  if (!state.log.length) {
    list.replaceChildren(h("li", { class: "empty-note" }, t("log.empty")));
    delete list.dataset.count;
    return;
  }
  const me = state.view.seat;
  const grew = list.dataset.count !== String(state.log.length);
  const near = list.scrollHeight - list.scrollTop - list.clientHeight < 24;
  let n = 0;
  list.replaceChildren(
    ...state.log.map((move, i) => {
      n = i > 0 && state.log[i - 1].version === move.version ? n + 1 : 0;
      const seat = Number(move.seat);
      const role = seat === me ? "you" : teamOf(state, seat) === teamOf(state, me) ? "partner" : "opponent";
      const key = moveKey(move.version, n);
      const upcoming = state.upcoming.has(key) ? " upcoming" : "";
      const props = { class: `log-entry team-${teamOf(state, seat)} role-${role}${upcoming}`, "data-testid": "log-entry", "data-seat": seat, "data-type": move.type, "data-version": move.version, "data-key": key };
      return h("li", props, moveText(state, move));
    }),
  );
  logToggle(list);
  // Follow the newest move, unless the player scrolled back to read and nothing new came.
  if (near || grew) list.scrollTop = list.scrollHeight;
  list.dataset.count = String(state.log.length);
}

function meldEl(state, meld, team, mine, on) {
  const size = meld.tiles.length;
  const { compact, stripe, wilds } = meld;
  const kind = meld.canasta ? (meld.canasta === "clean" ? t("meld.canastaClean") : t("meld.canastaDirty")) : wilds ? t("meld.dirty") : t("meld.clean");
  const clean = meld.canasta ? meld.canasta === "clean" : wilds === 0;
  const targeted = mine && state.target === meld.rank;
  const faces = compact
    ? [tileEl(meld.tiles[0], { size: "small" }), h("span", { class: "meld-times", "data-testid": "meld-count" }, `×${size}`)]
    : meld.tiles.map((tile) => tileEl(tile, { size: "small" }));
  // Tiles laid out this turn and not yet sent (the discard sends them): shown apart, marked.
  const staged = meld.staged && meld.staged.length ? meld.staged : null;
  const unsent = staged
    ? h("span", { class: "meld-staged", "data-testid": "meld-staged", "data-count": staged.length }, meld.added ? null : staged.map((tile) => tileEl(tile, { size: "small" })), h("span", { class: "staged-label" }, t("meld.staged")))
    : null;
  const props = {
    class: `meld${compact ? " compact" : ""}${stripe ? ` stripe-${stripe}` : ""}${meld.canasta ? ` canasta canasta-${meld.canasta}` : ""}${targeted ? " target" : ""}${staged ? " staged" : ""}${meld.added ? " added" : ""}`,
    "data-staged": staged ? "true" : "false",
    "data-testid": `meld-${team}-${meld.rank}`,
    "data-rank": meld.rank,
    "data-size": size,
    "data-stripe": stripe || "none",
    "data-compact": compact ? "true" : "false",
    "aria-label": `${t("meld.aria", { rank: String(meld.rank), n: size })}, ${kind}`,
  };
  // The summary stands for the tiles where there is no room for them (style.css: phones):
  // a meld's rank, its size and its wilds are all the play needs; the stripe and a
  // canasta's fill say the rest.
  const summary = h(
    "span",
    { class: "meld-sum", "aria-hidden": "true" },
    h("span", { class: "ms-rank" }, String(meld.rank)),
    h("span", { class: "ms-n" }, `×${size}`),
    wilds ? h("span", { class: "ms-wild" }, `★${wilds}`) : null,
  );
  const inner = [
    summary,
    h("span", { class: "meld-tiles" }, faces),
    unsent,
    h(
      "span",
      { class: "meld-meta" },
      h("span", { class: `meld-kind ${clean ? "clean" : "dirty"}`, "data-testid": "meld-kind" }, kind),
      compact && wilds ? h("span", { class: "meld-wilds" }, t("meld.wilds", { n: wilds })) : null,
    ),
  ];
  if (mine) {
    return h("button", { ...props, type: "button", "aria-pressed": targeted ? "true" : "false", title: t("meld.targetHint"), onclick: () => on.meld(meld.rank) }, inner);
  }
  return h("div", { ...props, role: "group" }, inner);
}

export function renderMelds(state, on) {
  const v = state.view.view;
  const panels = teamOrder(state).map((team) => {
    const mine = team === v.team;
    const melds = mine ? shownMelds(state) : v.melds[team] || [];
    const threes = v.bonus_threes[team] || [];
    const opened = v.opened[team];
    return h(
      "section",
      { class: `team-panel team-${team}${mine ? " mine" : ""}`, "data-testid": `team-${team}`, "aria-label": teamTitle(state, team) },
      h(
        "header",
        { class: "team-head" },
        h("h3", {}, teamTitle(state, team)),
        h(
          "span",
          { class: `opening ${opened ? "opened" : "closed"}`, "data-testid": `opening-${team}`, "data-opened": opened ? "true" : "false" },
          opened ? t("melds.opened") : t("melds.threshold", { n: v.thresholds[team] }),
        ),
      ),
      h(
        "div",
        { class: "threes", "data-testid": `bonus-threes-${team}`, "data-count": threes.length, hidden: threes.length ? null : true },
        h("span", { class: "threes-label" }, t("melds.bonusThrees")),
        threes.map((tile) => tileEl(tile, { size: "small" })),
      ),
      melds.length ? h("div", { class: "meld-list" }, melds.map((m) => meldEl(state, m, team, mine, on))) : h("p", { class: "empty-note" }, t("melds.none")),
    );
  });
  $("melds").replaceChildren(...panels);
}

export function renderHandArea(state, conn, on) {
  renderHand(state, on);
  const tiles = selectedTiles(state);
  $("selection-info").textContent = tiles.length ? t("hand.selected", { n: tiles.length, points: selectionPoints(state) }) : "";
  show($("clear-selection"), tiles.length > 0 || state.target !== null);
  renderSuggestions(state, conn, on);
  renderActions(state, conn);
}

function renderHand(state, on) {
  const hand = $("hand");
  const active = document.activeElement;
  const focused = active && active.closest && active.closest("#hand") ? active.dataset.index : null;
  if (!state.hand.length) {
    hand.replaceChildren(h("p", { class: "empty-note" }, t("hand.empty")));
    return;
  }
  const hints = handHints(state);
  const tiles = state.hand.map((tile, i) => {
    const selected = state.selected.has(state.ids[i]);
    const hint = hints.get(i) || null;
    const extra = { type: "button", "data-testid": "hand-tile", "data-index": i, "aria-pressed": selected ? "true" : "false", "data-hint": hint, title: hint ? t(`hint.tile.${hint}`) : null };
    const el = tileEl(tile, { tag: "button", extra });
    if (hint) el.classList.add(`hint-${hint}`);
    if (selected) el.classList.add("selected");
    if (state.newTiles.has(i)) el.classList.add("new");
    el.addEventListener("click", () => on.tile(i));
    return el;
  });
  hand.replaceChildren(...tiles);
  if (focused !== null && focused !== undefined) {
    const again = hand.querySelector(`[data-index="${focused}"]`);
    if (again) again.focus();
  }
}

export function renderActions(state, conn) {
  if (!state.view) return;
  const types = legalTypes(state);
  const { on, why } = moveOptions(state);
  const canAct = playing(state) && conn.open && !state.busy;
  const buttons = { "act-draw": "draw", "act-take": "take_pile", "act-meld": "meld", "act-discard": "discard", "act-joker": "joker_button" };
  for (const [id, type] of Object.entries(buttons)) {
    const button = $(id);
    button.disabled = !(canAct && on[type]);
    button.dataset.legal = types.has(type) ? "true" : "false";
    button.dataset.why = why[type] || "";
    const title = buttonTitle(state, type, why);
    if (title) button.title = t(...title);
    else button.removeAttribute("title");
  }
  $("joker-count").textContent = fmtNum(state.view.view.account_jokers);
  const back = $("act-take-back");
  show(back, state.staged.length > 0);
  back.disabled = !canAct || !state.staged.length;
  $("stock").disabled = !(canAct && on.draw);
  $("pile").disabled = !(canAct && on.take_pile);
  $("actions").classList.toggle("busy", state.busy);
  const line = $("action-why");
  line.textContent = [...new Set(Object.values(why))].map((key) => t(key)).join(" ");
  show(line, Object.keys(why).length > 0);
  $("table-screen").classList.toggle("my-turn", myTurn(state));
}

function renderSuggestions(state, conn, on) {
  const box = $("suggestions");
  const actions = suggestions(state);
  if (!actions.length || !playing(state)) {
    box.replaceChildren();
    show(box, false);
    return;
  }
  show(box, true);
  const isWild = wildsOf(state);
  const shown = state.showAllSuggestions ? actions : actions.slice(0, SUGGESTIONS_SHOWN);
  const items = shown.map((action, i) => {
    const specs = action.melds.map((m) => specText(m, isWild)).join(" + ");
    const label = action.type === "take_pile" ? t("sugg.take", { specs }) : specs;
    const tiles = action.melds.flatMap((m) => m.tiles);
    return h(
      "button",
      {
        type: "button",
        class: `suggestion ${action.type}`,
        "data-testid": "suggestion",
        "data-type": action.type,
        "data-index": i,
        disabled: !conn.open || state.busy ? true : null,
        onclick: () => on.suggestion(action),
        onmouseenter: () => hintTiles(tiles),
        onmouseleave: () => hintTiles([]),
        onfocus: () => hintTiles(tiles),
        onblur: () => hintTiles([]),
      },
      label,
    );
  });
  const more = actions.length - shown.length;
  if (more > 0) {
    items.push(h("button", { type: "button", class: "suggestion more", "data-testid": "suggestions-more", onclick: on.moreSuggestions }, t("sugg.more", { n: more })));
  }
  box.replaceChildren(h("span", { class: "sugg-title" }, t("sugg.title")), ...items);
}

/** Outline the hand tiles a suggestion would use. */
function hintTiles(tiles) {
  const wanted = multiset(tiles);
  for (const el of $("hand").querySelectorAll(".tile")) {
    const tile = el.dataset.tile;
    const n = wanted.get(tile) || 0;
    el.classList.toggle("tile-hint", n > 0);
    if (n > 0) wanted.set(tile, n - 1);
  }
}
