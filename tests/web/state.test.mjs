// The state module under node's own test runner: server messages and intents in,
// state and effects out, no DOM.

import assert from "node:assert/strict";
import { test } from "node:test";

import { setLang, t } from "../../web/i18n.js";
import * as S from "../../web/state.js";


function meld(rank, tiles, wilds = 0) {
  return { rank, tiles, canasta: null, compact: tiles.length > 5, stripe: null, wilds };
}

/** A view for seat 1 (team A) in the play phase; `view` overrides the table view. */
function viewMessage(version = 3, view = {}, extra = {}) {
  return {
    type: "view",
    table_id: "t1",
    version,
    seat: 1,
    seats: {},
    match: { mode: "one_round", variant: "twos-meld", stake: 0, round: 1, totals: { A: 0, B: 0 }, status: "playing" },
    turn_deadline: null,
    last_action: null,
    view: {
      seat: 1,
      team: "A",
      teams: { 1: "A", 2: "B", 3: "A", 4: "B" },
      variant: "twos-meld",
      phase: "play",
      turn: 1,
      hand: ["9K", "2Y", "7R", "JK", "7B", "13Y", "7Y", "9R"],
      hand_sizes: { 1: 8, 2: 11, 3: 9, 4: 12 },
      melds: { A: [meld(8, ["8R", "8Y", "8K"])], B: [] },
      discard: ["4K"],
      stock_size: 40,
      account_jokers: 1,
      joker_button_used: false,
      legal_actions: [{ type: "discard", tile: "9K" }],
      round_scores: null,
      thresholds: { A: 50, B: 50 },
      tile_points: { "9K": 5, "2Y": 20, "7R": 5, JK: 50, "7B": 5, "13Y": 10, "7Y": 5, "9R": 5 },
      wild_ranks: [0, 2],
      wilds_meld_rank: 2,
      pile_blocked: false,
      pile_pair: false,
      ...view,
    },
    ...extra,
  };
}

function atTable(view) {
  const state = S.initialState();
  state.signedIn = true;
  S.receive(state, view || viewMessage());
  return state;
}

function select(state, ...tiles) {
  for (const tile of tiles) {
    const i = state.hand.findIndex((name, j) => name === tile && !state.selected.has(state.ids[j]));
    assert.ok(i >= 0, `no unselected ${tile}`);
    S.toggleTile(state, i);
  }
}

test("the hand is sorted by rank and colour, the view's wilds last", () => {
  const state = atTable();
  assert.deepEqual(state.hand, ["7R", "7Y", "7B", "9R", "9K", "13Y", "2Y", "JK"]);
  assert.equal(S.screen(state), "table");
});

test("an older version never replaces a newer one; a newer one clears a stale error", () => {
  const state = atTable(viewMessage(5));
  assert.deepEqual(S.receive(state, viewMessage(4, { stock_size: 1 })), []);
  assert.equal(state.view.view.stock_size, 40);
  const effects = S.receive(state, viewMessage(6, { stock_size: 39 }));
  assert.equal(state.view.view.stock_size, 39);
  assert.ok(effects.some((e) => e.kind === "clearError"));
});

test("stale_version adopts the view it carries, silently", () => {
  const state = atTable();
  const effects = S.receive(state, { type: "error", code: "stale_version", view: viewMessage(9, { stock_size: 30 }) });
  assert.equal(state.view.version, 9);
  assert.ok(!effects.some((e) => e.kind === "error"));
});

test("a refusal ends the wait and names its code; below_threshold gives the threshold", () => {
  const state = atTable();
  S.startMove(state, { type: "draw" });
  assert.equal(state.busy, true);
  const effects = S.receive(state, { type: "error", code: "below_threshold", message: "OPEN-1" });
  assert.equal(state.busy, false);
  assert.deepEqual(effects, [{ kind: "error", code: "below_threshold", params: { n: 50 } }]);
});

test("the selection's worth comes from the view's tile values", () => {
  const state = atTable(viewMessage(3, { tile_points: { "9K": 7, "2Y": 1, "7R": 5, JK: 50, "7B": 5, "13Y": 10, "7Y": 5, "9R": 5 } }));
  select(state, "9K", "2Y");
  assert.equal(S.selectionPoints(state), 8);
});

test("the pickup button follows the view's pile facts", () => {
  const draw = { phase: "draw", legal_actions: [{ type: "draw" }] };
  let state = atTable(viewMessage(3, { ...draw, discard: ["9B"], pile_pair: true }));
  assert.equal(S.moveOptions(state).on.take_pile, true);
  state = atTable(viewMessage(3, { ...draw, discard: ["9B"], pile_pair: false }));
  assert.equal(S.moveOptions(state).why.take_pile, "why.noPair");
  state = atTable(viewMessage(3, { ...draw, discard: ["9B"], pile_blocked: true, pile_pair: true }));
  assert.equal(S.moveOptions(state).why.take_pile, "error.pile_blocked");
  state = atTable(viewMessage(3, { ...draw, discard: [] }));
  assert.equal(S.moveOptions(state).why.take_pile, "error.pile_empty");
  state = atTable(viewMessage(3, { ...draw, turn: 2 }));
  assert.deepEqual(S.moveOptions(state).why, {}, "nothing is explained on another seat's turn");
});

test("melds built from the selection: wilds spread, the meld of twos, a target", () => {
  const state = atTable();
  select(state, "7R", "7B", "JK");
  assert.deepEqual(S.meldMove(state).move, { type: "meld", melds: [{ rank: 7, tiles: ["7R", "7B", "JK"] }] });
  S.clearSelection(state);
  select(state, "9R", "9K", "7R", "7Y", "7B", "2Y", "JK");
  assert.deepEqual(S.meldMove(state).move.melds, [
    { rank: 7, tiles: ["7R", "7Y", "7B", "JK"] },
    { rank: 9, tiles: ["9R", "9K", "2Y"] },
  ]);
  S.clearSelection(state);
  select(state, "2Y", "JK");
  assert.deepEqual(S.meldMove(state).move.melds, [{ rank: 2, tiles: ["2Y", "JK"] }]);
  S.clearSelection(state);
  select(state, "2Y");
  assert.deepEqual(S.meldMove(state, 8).move.melds, [{ rank: 8, tiles: ["2Y"] }]);
  S.clearSelection(state);
  assert.equal(S.meldMove(state).hint, "hint.selectMeld");
});

test("wilds are what the view says they are", () => {
  const state = atTable(viewMessage(3, { wild_ranks: [0] }));
  select(state, "2Y", "JK");
  assert.deepEqual(S.meldMove(state).move.melds, [{ rank: 2, tiles: ["2Y", "JK"] }], "a 2 that is not wild is a natural of rank 2");
});

test("a pickup takes the pile's rank with the selected pair; nothing selected, the first offered", () => {
  const offered = { type: "take_pile", melds: [{ rank: 7, tiles: ["7R", "7Y"] }] };
  const state = atTable(viewMessage(3, { phase: "draw", discard: ["7K"], legal_actions: [{ type: "draw" }, offered] }));
  assert.deepEqual(S.takePileMove(state).move, offered);
  select(state, "7R", "7Y", "2Y");
  assert.deepEqual(S.takePileMove(state).move, { type: "take_pile", melds: [{ rank: 7, tiles: ["7R", "7Y", "2Y"] }] });
  S.clearSelection(state);
  select(state, "9R", "9K");
  assert.equal(S.takePileMove(state).hint, "hint.selectPair");
});

test("of two identical tiles, the one used leaves and the other is not left selected", () => {
  const state = atTable(viewMessage(3, { hand: ["7R", "7R", "7Y", "7B", "9K"] }));
  select(state, "7R");
  const { move, used } = S.discardMove(state);
  assert.deepEqual(move, { type: "discard", tile: "7R" });
  const message = S.startMove(state, move, used);
  assert.deepEqual(message, { action: "play", table_id: "t1", version: 3, move });
  S.receive(state, viewMessage(4, { hand: ["7R", "7Y", "7B", "9K"] }));
  assert.equal(state.selected.size, 0);
  assert.equal(state.busy, false);
});

test("tiles that arrive are marked new; a new round starts with nothing selected", () => {
  const state = atTable();
  select(state, "9K");
  S.receive(state, viewMessage(4, { hand: [...viewMessage().view.hand, "5R"] }));
  assert.deepEqual([...state.newTiles].map((i) => state.hand[i]), ["5R"]);
  assert.equal(S.selectedTiles(state).join(), "9K");
  S.receive(state, viewMessage(5, {}, { match: { ...viewMessage().match, round: 2 } }));
  assert.equal(state.selected.size, 0);
});

test("the player's turn starting is an effect (for a background tab's title)", () => {
  const state = atTable(viewMessage(3, { turn: 2 }));
  const effects = S.receive(state, viewMessage(4, { turn: 1 }));
  assert.ok(effects.some((e) => e.kind === "yourTurn"));
  assert.ok(!S.receive(state, viewMessage(5, { turn: 1 })).some((e) => e.kind === "yourTurn"));
});

test("queue, timeout and wait on", () => {
  const state = S.initialState();
  state.signedIn = true;
  S.receive(state, { type: "queued", mode: "arena", variant: "classic", stake: 500, expires_at: 100 });
  assert.equal(state.queued.stake, 500);
  assert.deepEqual(S.receive(state, { type: "queue_left", reason: "timeout" }), []);
  assert.equal(state.queued, null);
  assert.deepEqual(S.waitOnMessage(state), { action: "queue", mode: "arena", variant: "classic", stake: 500 });
  S.receive(state, { type: "queued", mode: "one_round", variant: "classic", expires_at: 100 });
  assert.equal(S.queueOverdue(state, 100 + S.QUEUE_GRACE - 1), false);
  assert.equal(S.queueOverdue(state, 100 + S.QUEUE_GRACE + 1), true);
  assert.equal(state.quiet.leave, 1);
  assert.deepEqual(S.receive(state, { type: "error", code: "not_queued" }), [], "the answer to our own leave is quiet");
});

test("a reconnect forgets the queue; opened elsewhere stops", () => {
  const state = S.initialState();
  S.receive(state, { type: "lobby", code: "ABCD", seats: {} });
  assert.deepEqual(S.opened(state), [{ kind: "notice", key: "queueLeft.disconnected" }]);
  assert.equal(state.lobby, null);
  assert.deepEqual(S.receive(state, { type: "opened_elsewhere" }), [{ kind: "stop" }]);
  assert.equal(state.elsewhere, true);
});

test("results queue one after the other; leaving an ended match hides its table", () => {
  const state = atTable();
  assert.deepEqual(S.receive(state, { type: "round_result", round: 1 }), [{ kind: "dialog" }]);
  assert.deepEqual(S.receive(state, { type: "match_result", winner: "A" }), []);
  assert.equal(S.dialogClosed(state, "ok"), false);
  S.nextDialog(state);
  assert.equal(state.dialog.kind, "match");
  assert.equal(S.dialogClosed(state, "lobby"), true);
  S.backToLobby(state);
  assert.equal(S.screen(state), "lobby");
  S.receive(state, viewMessage(9, {}, { match: { ...viewMessage().match, status: "finished" } }));
  assert.equal(S.screen(state), "lobby", "the dismissed table's final view is not shown again");
});

test("the log gathers every move the views bring, once, and starts again each round", () => {
  const state = atTable(viewMessage(3, { turn: 2 }));
  const bobs = [
    { seat: 2, type: "draw", auto: true },
    { seat: 2, type: "discard", tile: "9B", auto: true },
  ];
  S.receive(state, viewMessage(4, { turn: 3 }, { moves: bobs, last_action: bobs[1] }));
  S.receive(state, viewMessage(4, { turn: 3 }, { moves: bobs, last_action: bobs[1] }));
  S.receive(state, viewMessage(2, { turn: 3 }, { moves: bobs, last_action: bobs[1] }));
  assert.deepEqual(state.log.map((m) => [m.seat, m.type, m.version]), [[2, "draw", 4], [2, "discard", 4]]);
  const last = { seat: 3, type: "take_pile", pile_size: 5, melds: [{ rank: 9, tiles: ["9R", "9Y", "9B"] }], auto: true };
  S.receive(state, viewMessage(5, { turn: 3 }, { last_action: last }));
  assert.equal(state.log.length, 3, "a view without its write's moves still logs its last action");
  S.receive(state, viewMessage(6, {}, { match: { ...viewMessage().match, round: 2 } }));
  assert.deepEqual(state.log, []);
});

test("a discard asks first for a wild, or for going out while the partner holds tiles", () => {
  let state = atTable();
  select(state, "9K");
  assert.equal(S.discardMove(state).confirm, undefined);
  S.clearSelection(state);
  select(state, "JK");
  assert.equal(S.discardMove(state).confirm.key, "confirm.wild");
  state = atTable(viewMessage(3, { hand: ["7R"], hand_sizes: { 1: 1, 2: 5, 3: 4, 4: 6 } }));
  select(state, "7R");
  assert.deepEqual(S.discardMove(state).confirm, { key: "confirm.goOut", params: { n: 4 } });
  state = atTable(viewMessage(3, { hand: ["7R"], hand_sizes: { 1: 1, 2: 5, 3: 0, 4: 6 } }));
  select(state, "7R");
  assert.equal(S.discardMove(state).confirm, undefined, "the partner is out of tiles: nothing to warn of");
  // The partner is whoever the view puts on our team, not a seat number's parity.
  state = atTable(viewMessage(3, { hand: ["7R"], teams: { 1: "A", 2: "A", 3: "B", 4: "B" }, hand_sizes: { 1: 1, 2: 5, 3: 4, 4: 6 } }));
  select(state, "7R");
  assert.deepEqual(S.discardMove(state).confirm, { key: "confirm.goOut", params: { n: 5 } });
});

test("the meld of wilds is the view's: none in classic, whatever rank it names", () => {
  let state = atTable(viewMessage(3, { variant: "classic", wilds_meld_rank: null }));
  select(state, "2Y", "JK");
  assert.equal(S.meldMove(state).hint, "hint.wildsNeedRank");
  state = atTable(viewMessage(3, { wilds_meld_rank: 2 }));
  select(state, "2Y", "JK");
  assert.deepEqual(S.meldMove(state).move.melds, [{ rank: 2, tiles: ["2Y", "JK"] }]);
  state = atTable(viewMessage(3, { wilds_meld_rank: 0 }));
  select(state, "2Y", "JK");
  assert.deepEqual(S.meldMove(state).move.melds, [{ rank: 0, tiles: ["2Y", "JK"] }], "the rule is the server's");
});

test("hints come from the legal moves: tiles extending a team meld, the pair for the pile", () => {
  const extend = { type: "meld", melds: [{ rank: 8, tiles: ["2Y"] }] };
  const fresh = { type: "meld", melds: [{ rank: 7, tiles: ["7R", "7Y", "7B"] }] };
  let state = atTable(viewMessage(3, { legal_actions: [extend, fresh] }));
  const marked = (st) => [...S.handHints(st)].map(([i, kind]) => `${st.hand[i]}:${kind}`).sort();
  assert.deepEqual(marked(state), ["2Y:extend"], "a new meld is a suggestion, not an extension");
  const pickup = { type: "take_pile", melds: [{ rank: 9, tiles: ["9R", "9K"] }] };
  state = atTable(viewMessage(3, { phase: "draw", discard: ["9B"], legal_actions: [{ type: "draw" }, pickup] }));
  assert.deepEqual(marked(state), ["9K:pile", "9R:pile"]);
  state = atTable(viewMessage(3, { phase: "draw", turn: 2, discard: ["9B"], legal_actions: [pickup] }));
  assert.deepEqual(marked(state), [], "nothing is marked on another seat's turn");
});

test("a friends table plays again with the same four: the offer, taking it, its withdrawal", () => {
  const state = atTable(viewMessage(9, {}, { table_id: "f-KQ7M2X-1", match: { mode: "one_round", variant: "twos-meld", stake: 0, round: 1, totals: { A: 0, B: 0 }, status: "finished", rematch: true } }));
  assert.deepEqual(S.playAgainMessage(state, state.view.match), { action: "rematch", table_id: "f-KQ7M2X-1" });
  const seat = (id, bot = false) => ({ player_id: id, name: id.toUpperCase(), bot });
  const offer = {
    type: "lobby",
    code: "W4HN7P",
    host: "p3",
    you: "p1",
    mode: "one_round",
    variant: "twos-meld",
    seats: { 1: null, 2: seat("bot-x-2", true), 3: seat("p3"), 4: null },
    status: "forming",
    rematch_of: "f-KQ7M2X-1",
    awaiting: { 1: seat("p1"), 4: seat("p4") },
  };
  assert.deepEqual(S.receive(state, offer), [{ kind: "notice", key: "rematch.offered", params: { name: "P3" } }]);
  assert.equal(state.lobby, null, "an offer is not the player's lobby");
  assert.deepEqual(S.rematchMessage(state), { action: "rematch", table_id: "f-KQ7M2X-1" });
  assert.deepEqual(S.receive(state, { ...offer, awaiting: { 1: seat("p1") }, seats: { ...offer.seats, 4: seat("p4") } }), [], "a second offer is not news");
  assert.deepEqual(S.receive(state, { ...offer, status: "started", awaiting: {}, seats: { ...offer.seats, 1: seat("bot-x-1", true) } }), [{ kind: "notice", key: "rematch.withdrawn" }]);
  assert.equal(state.rematch, null);
  S.receive(state, offer);
  S.receive(state, { ...offer, seats: { ...offer.seats, 1: seat("p1") }, awaiting: { 4: seat("p4") } });
  assert.equal(state.rematch, null, "taken: the lobby is the player's now");
  assert.equal(state.lobby.code, "W4HN7P");
  state.started = { action: "rematch", table_id: "f-KQ7M2X-1" };
  assert.deepEqual(S.playAgainMessage(state, { mode: "one_round", variant: "twos-meld" }), { action: "queue", mode: "one_round", variant: "twos-meld" }, "a rematch is never replayed for another table");
});

test("the host is who the server says the lobby's receiver is, whatever the token's sub", () => {
  const lobby = { type: "lobby", code: "W4HN7P", mode: "one_round", variant: "twos-meld", seats: {}, status: "forming" };
  const hashed = "sub=yxiju5ywgmzoq7gwp5h55qebmbyfvgttsqfzurmrws3pds2tuyoq";
  assert.equal(S.hosting({ ...lobby, host: hashed, you: hashed }), true, "signed in as auth0|abc");
  assert.equal(S.hosting({ ...lobby, host: "p3", you: hashed }), false);
});

test("play again starts what the player started, else the same length and variant", () => {
  const state = atTable();
  const match = { mode: "arena", variant: "classic", stake: 500 };
  assert.deepEqual(S.playAgainMessage(state, match), { action: "queue", mode: "arena", variant: "classic", stake: 500 });
  assert.deepEqual(S.playAgainMessage(state, { mode: "one_round", variant: "twos-meld" }), { action: "queue", mode: "one_round", variant: "twos-meld" });
  state.started = { action: "create_table", mode: "three_rounds", variant: "classic" };
  assert.deepEqual(S.playAgainMessage(state, match), state.started);
  state.dialog = { kind: "match" };
  assert.equal(S.dialogClosed(state, "again"), true, "playing again leaves the ended table");
});

test("the joker button says what it costs before it is pressed, at a practice table too (JOKER-1)", async () => {
  const legal = [{ type: "draw" }, { type: "joker_button" }];
  const practice = { match: { mode: "one_round", variant: "twos-meld", stake: 0, round: 1, totals: { A: 0, B: 0 }, status: "playing", practice: true } };
  const state = atTable(viewMessage(3, { phase: "draw", legal_actions: legal, account_jokers: 2, joker_button_cost: 1 }, practice));
  const { on, why } = S.moveOptions(state);
  assert.equal(on.joker_button, true);
  assert.deepEqual(S.buttonTitle(state, "joker_button", why), ["action.jokerCost", { cost: 1, n: 2 }]);
  await setLang("en", { save: false });
  assert.equal(t(...S.buttonTitle(state, "joker_button", why)), "Joker button — uses 1 of your 2 jokers");
  // The view's figures, not the client's: another cost or balance reads as the server says.
  S.receive(state, viewMessage(4, { phase: "draw", legal_actions: legal, account_jokers: 1, joker_button_cost: 1 }, practice));
  assert.equal(t(...S.buttonTitle(state, "joker_button", S.moveOptions(state).why)), "Joker button — uses 1 of your 1 joker");
  // Off for a reason: the reason, as before; the other buttons say nothing when they are on.
  S.receive(state, viewMessage(5, { phase: "draw", legal_actions: [{ type: "draw" }], account_jokers: 0, joker_button_cost: 1 }, practice));
  assert.deepEqual(S.buttonTitle(state, "joker_button", S.moveOptions(state).why), ["why.noSpareJoker", {}]);
  assert.equal(S.buttonTitle(state, "draw", S.moveOptions(state).why), null);
});

// --- melds laid out before the discard (TURN-1: one turn, one message after the draw) ------

test("Meld lays the selection out unsent: the hand loses its tiles, the team's melds show them", () => {
  const state = atTable();
  select(state, "7R", "7B", "JK");
  assert.deepEqual(S.stageMeld(state), {});
  select(state, "2Y");
  assert.deepEqual(S.stageMeld(state, 8), {}, "extending the team's meld of 8 is staged likewise");
  assert.equal(state.busy, false, "nothing was sent");
  assert.deepEqual(state.hand, ["7Y", "9R", "9K", "13Y"]);
  assert.equal(state.selected.size, 0);
  const shown = S.shownMelds(state);
  assert.deepEqual(
    shown.map((m) => [m.rank, m.tiles, m.staged, Boolean(m.added)]),
    [
      [8, ["8R", "8Y", "8K"], ["2Y"], false],
      [7, ["7R", "7B", "JK"], ["7R", "7B", "JK"], true],
    ],
  );
  assert.equal(shown[1].wilds, 1);
});

test("Discard sends the staged melds, then the discard, in one play; the answer keeps the hand's ids", () => {
  const state = atTable();
  select(state, "7R", "7B");
  S.stageMeld(state);
  select(state, "7Y");
  S.stageMeld(state, 7);
  const kept = state.ids[state.hand.indexOf("13Y")];
  select(state, "9K");
  const built = S.discardMove(state);
  const message = S.startDiscard(state, built.move, built.used);
  assert.deepEqual(message.move, { type: "meld", melds: [{ rank: 7, tiles: ["7R", "7B", "7Y"] }] }, "a rank staged twice is one spec of one action");
  assert.deepEqual(message.then, [{ type: "discard", tile: "9K" }]);
  assert.equal(message.version, 3);
  S.receive(state, viewMessage(4, { turn: 2, hand: ["2Y", "JK", "13Y", "9R"], hand_sizes: { 1: 4, 2: 11, 3: 9, 4: 12 } }));
  assert.deepEqual(state.staged, []);
  assert.deepEqual(state.hand, ["9R", "13Y", "2Y", "JK"]);
  assert.equal(state.ids[state.hand.indexOf("13Y")], kept);
  assert.equal(state.newTiles.size, 0);
});

test("a discard with nothing staged is one move, as before", () => {
  const state = atTable();
  select(state, "9K");
  const built = S.discardMove(state);
  assert.deepEqual(S.startDiscard(state, built.move, built.used), { action: "play", table_id: "t1", version: 3, move: { type: "discard", tile: "9K" } });
});

test("Take back returns every staged tile to the hand, each with its id", () => {
  const state = atTable();
  const before = [...state.hand];
  const ids = [...state.ids];
  select(state, "9R", "9K", "2Y");
  S.stageMeld(state);
  S.unstage(state);
  assert.deepEqual(state.hand, before);
  assert.deepEqual(state.ids, ids);
  assert.deepEqual(S.shownMelds(state).map((m) => m.staged), [[]]);
});

test("a refusal of the turn returns the staged tiles to the hand and names the code (OPEN-1)", () => {
  const state = atTable(viewMessage(3, { melds: { A: [], B: [] } }));
  const before = [...state.hand];
  select(state, "7R", "7B", "7Y");
  S.stageMeld(state);
  select(state, "9K");
  const built = S.discardMove(state);
  S.startDiscard(state, built.move, built.used);
  const effects = S.receive(state, { type: "error", code: "below_threshold", message: "move: OPEN-1" });
  assert.deepEqual(effects, [{ kind: "error", code: "below_threshold", params: { n: 50 } }]);
  assert.deepEqual(state.hand, before);
  assert.deepEqual(state.staged, []);
  assert.equal(state.busy, false);
});

test("a view that is not the answer ends the staging: a turn ended by its timer (TABLE-2)", () => {
  const state = atTable();
  select(state, "7R", "7B", "JK");
  S.stageMeld(state);
  const ids = new Map(["7R", "7B", "JK"].map((tile) => [tile, state.staged[0].tiles.find((p) => p.tile === tile).id]));
  // The timer discarded the 13Y: the staged tiles are still the seat's.
  S.receive(state, viewMessage(4, { turn: 2, hand: ["9K", "2Y", "7R", "JK", "7B", "7Y", "9R"] }));
  assert.deepEqual(state.staged, []);
  assert.deepEqual(state.hand, ["7R", "7Y", "7B", "9R", "9K", "2Y", "JK"]);
  for (const [tile, id] of ids) assert.equal(state.ids[state.hand.indexOf(tile)], id, `${tile} is the same tile, not a new one`);
  assert.equal(state.newTiles.size, 0);
});

test("a view of the same version (a seat's presence) keeps the staging", () => {
  const state = atTable();
  select(state, "7R", "7B", "JK");
  S.stageMeld(state);
  S.receive(state, viewMessage(3, { hand_sizes: { 1: 8, 2: 11, 3: 9, 4: 12 } }));
  assert.equal(state.staged.length, 1);
  assert.deepEqual(state.hand, ["7Y", "9R", "9K", "13Y", "2Y"]);
  assert.equal(state.newTiles.size, 0);
});

test("going out is the staged melds and the last discard, confirmed on the hand after staging (OUT-3)", () => {
  const state = atTable(viewMessage(3, { hand: ["7R", "7B", "7Y", "9K"], hand_sizes: { 1: 4, 2: 11, 3: 3, 4: 12 } }));
  select(state, "7R", "7B", "7Y");
  S.stageMeld(state);
  select(state, "9K");
  assert.deepEqual(S.discardMove(state).confirm, { key: "confirm.goOut", params: { n: 3 } });
});

test("a suggested meld is staged; suggestions whose tiles are staged are no longer offered", () => {
  const sevens = { type: "meld", melds: [{ rank: 7, tiles: ["7R", "7Y", "7B"] }] };
  const nines = { type: "meld", melds: [{ rank: 9, tiles: ["9R", "9K", "2Y"] }] };
  const state = atTable(viewMessage(3, { legal_actions: [sevens, nines, { type: "discard", tile: "9K" }] }));
  assert.deepEqual(S.suggestions(state), [sevens, nines]);
  assert.deepEqual(S.stageSuggestion(state, sevens), {});
  assert.deepEqual(S.suggestions(state), [nines]);
  assert.equal(S.stageSuggestion(state, sevens).hint, "hint.selectMeld");
  assert.deepEqual(S.stagedMove(state).melds, sevens.melds);
});

test("the answer to the turn takes the staged tile of two identical ones, never the one kept", () => {
  const state = atTable(viewMessage(3, { hand: ["7R", "7R", "7B", "JK", "9K"] }));
  const [first, second] = state.ids.slice(0, 2);
  S.toggleTile(state, 1);
  select(state, "7B", "JK");
  S.stageMeld(state);
  assert.deepEqual(state.ids.slice(0, 1), [first]);
  select(state, "9K");
  const built = S.discardMove(state);
  S.startDiscard(state, built.move, built.used);
  S.receive(state, viewMessage(4, { turn: 2, hand: ["7R"] }));
  assert.deepEqual(state.ids, [first], `the kept 7R, not the staged one (${second})`);
});

test("a replay is stepped frame by frame, asks for pages it lacks, and crosses rounds", () => {
  const state = S.initialState();
  const frame = (n) => ({ move: n ? { seat: 1, auto: false, type: "draw", version: n } : null, view: { n } });
  const page = (round, start, count, moves) => ({
    type: "replay", table_id: "t9", seat: 2, round, rounds: 2, moves, start,
    frames: Array.from({ length: count }, (_, i) => frame(start + i)), more: start + count <= moves,
  });
  assert.deepEqual(S.receive(state, page(1, 0, 2, 3)), [{ kind: "records", which: "replay" }]);
  assert.equal(state.replay.at, 0);
  assert.equal(S.stepReplay(state, -1), null, "nothing before the first deal");
  assert.equal(S.stepReplay(state, 1), null, "frame 1 is held");
  assert.deepEqual(S.stepReplay(state, 1), S.replayMessage("t9", 1, 2), "frame 2 is asked for");
  S.receive(state, page(1, 2, 2, 3));
  assert.equal(state.replay.at, 2, "a later page keeps the cursor");
  assert.equal(S.stepReplay(state, 1), null);
  assert.deepEqual(S.stepReplay(state, 1), S.replayMessage("t9", 2, 0), "past the last move: the next round");
  assert.equal(state.replay.round, 2);
  S.receive(state, page(2, 0, 1, 5));
  assert.equal(state.replay.frames[0].move, null);
  assert.deepEqual(S.stepReplay(state, -1), S.replayMessage("t9", 1, 0), "before the deal: the round before");
});
