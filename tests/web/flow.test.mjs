// A match's flow in the state module, under node's own test runner: the round results and
// the intermission between rounds, the restored log, other seats' moves shown one by one.

import assert from "node:assert/strict";
import { test } from "node:test";

import { setLang, t } from "../../web/i18n.js";
import * as S from "../../web/state.js";

const MATCH = { mode: "three_rounds", variant: "twos-meld", stake: 0, round: 1, totals: { A: 0, B: 0 }, status: "playing" };
const SCORE = { melded: 300, canastas: 300, bonus_threes: 100, going_out: 100, hands: -20, total: 780 };

/** A view for seat 1 (team A); `view` overrides the table view, `extra` the message. */
function viewMessage(version, view = {}, extra = {}) {
  return {
    type: "view",
    table_id: "t1",
    version,
    seat: 1,
    seats: {},
    match: MATCH,
    turn_deadline: null,
    last_action: null,
    moves: [],
    view: {
      seat: 1,
      team: "A",
      teams: { 1: "A", 2: "B", 3: "A", 4: "B" },
      phase: "draw",
      turn: 1,
      hand: ["9K", "2Y", "7R", "7B"],
      hand_sizes: { 1: 4, 2: 11, 3: 9, 4: 12 },
      melds: { A: [{ rank: 8, tiles: ["8R", "8Y", "8K"], canasta: null, compact: false, stripe: null, wilds: 0 }], B: [] },
      discard: ["4K"],
      stock_size: 40,
      account_jokers: 1,
      joker_button_used: false,
      legal_actions: [{ type: "draw" }],
      round_scores: null,
      thresholds: { A: 50, B: 50 },
      tile_points: {},
      wild_ranks: [0, 2],
      wilds_meld_rank: 2,
      pile_blocked: false,
      pile_pair: false,
      ...view,
    },
    ...extra,
  };
}

/** Round `round`'s end as the server leaves it during the intermission. */
function roundOver(version, round, intermission) {
  return viewMessage(version, { phase: "round_over", legal_actions: [], revealed: { 1: [], 2: ["5R"], 3: ["JK"], 4: [] } }, { match: { ...MATCH, round }, intermission });
}

function roundResult(round, until = 2000) {
  const scores = { A: SCORE, B: { ...SCORE, total: 100 * round } };
  return { type: "round_result", table_id: "t1", round, scores, totals: { A: 780 * round, B: 0 }, next: until ? "round" : "end", seed: "s", commitment: "c", went_out: 1, hands: { 1: [], 2: ["5R"], 3: ["JK"], 4: [] }, intermission_until: until };
}

function atTable(message) {
  const state = S.initialState();
  state.signedIn = true;
  S.receive(state, message);
  return state;
}

test("a round's result stays through the intermission; Continue is sent once; the next round closes it", () => {
  const state = atTable(viewMessage(10));
  S.receive(state, roundOver(11, 1, { until: 2000, continued: [], awaited: [1, 3] }));
  assert.deepEqual(S.receive(state, roundResult(1)), [{ kind: "dialog" }]);
  assert.deepEqual(S.intermission(state), { until: 2000, awaited: [1, 3], sent: false });
  const message = S.continueMessage(state);
  assert.deepEqual(message, { action: "continue", table_id: "t1", round: 1 });
  S.continueSent(state, message);
  assert.equal(S.continueMessage(state), null, "sent once");
  assert.deepEqual(S.intermission(state).awaited, [3], "waiting for the others, not for this seat");
  // The answer to continue: the same round, the table still waiting.
  S.receive(state, roundOver(12, 1, { until: 2000, continued: [1], awaited: [3] }));
  assert.equal(state.dialog.kind, "round", "kept open until the next round is dealt");
  assert.deepEqual(S.intermission(state), { until: 2000, awaited: [3], sent: true });
  const effects = S.receive(state, viewMessage(13, {}, { match: { ...MATCH, round: 2 } }));
  assert.ok(effects.some((e) => e.kind === "closeDialog" && e.dialog === "round"));
  assert.equal(state.dialog, null);
  assert.equal(S.continueMessage(state), null, "closing it then says nothing: the table has left that round");
  assert.deepEqual(S.receive(state, roundResult(1)), [], "a late copy of an earlier round's result is not shown");
});

test("closing the result early is Continue; a result read elsewhere counts as said", () => {
  const state = atTable(roundOver(11, 1, { until: 2000, continued: [], awaited: [1] }));
  S.receive(state, roundResult(1));
  assert.ok(S.continueMessage(state), "what the page sends when the dialog is closed before Continue");
  // The view says this seat continued already (another tab, before a reload): nothing to send.
  S.receive(state, roundOver(12, 1, { until: 2000, continued: [1], awaited: [] }));
  assert.equal(S.continueMessage(state), null);
  assert.equal(S.intermission(state).sent, true);
});

test("a reconnect during the intermission shows the result again, still waiting", () => {
  const state = atTable(roundOver(11, 1, { until: 2000, continued: [], awaited: [1, 3] }));
  S.receive(state, roundResult(1));
  S.continueSent(state, S.continueMessage(state));
  S.dialogClosed(state, "ok");
  S.nextDialog(state);
  assert.equal(state.dialog, null);
  // After the reconnect: the sync's view, then the server's copy of the result.
  S.opened(state);
  S.receive(state, roundOver(11, 1, { until: 2000, continued: [], awaited: [1, 3] }));
  assert.deepEqual(S.receive(state, roundResult(1)), [{ kind: "dialog" }]);
  assert.deepEqual(S.intermission(state), { until: 2000, awaited: [3], sent: true }, "Continue was said already: not offered again");
  // A copy while it is open replaces it rather than queueing a second one.
  assert.deepEqual(S.receive(state, roundResult(1, 2001)), [{ kind: "dialog" }]);
  assert.equal(state.dialogs.length, 0);
  assert.equal(state.dialog.msg.intermission_until, 2001);
});

test("a page opened during the intermission shows the result (reload)", () => {
  const state = atTable(roundOver(11, 2, { until: 2000, continued: [], awaited: [1] }));
  S.receive(state, roundResult(2));
  assert.equal(state.dialog.msg.round, 2);
  assert.deepEqual(S.intermission(state), { until: 2000, awaited: [1], sent: false });
});

test("the last round's result has no intermission; the score sheet lists every round", async () => {
  const state = atTable(roundOver(11, 1, { until: 2000, continued: [], awaited: [1] }));
  S.receive(state, roundResult(1));
  S.receive(state, viewMessage(12, {}, { match: { ...MATCH, round: 2 } }));
  S.receive(state, roundResult(2));
  S.receive(state, viewMessage(14, {}, { match: { ...MATCH, round: 3 } }));
  S.receive(state, roundResult(3, null));
  assert.equal(S.intermission(state), null);
  assert.equal(S.continueMessage(state), null);
  const match = { type: "match_result", table_id: "t1", winner: "A", totals: { A: 2340, B: 600 }, rounds_played: 3, rewards: { 1: 3000 }, practice: false };
  S.receive(state, match);
  const seen = [
    { round: 1, A: 780, B: 100 },
    { round: 2, A: 780, B: 200 },
    { round: 3, A: 780, B: 300 },
  ];
  assert.deepEqual(S.scoreSheet(state, match), seen, "from the round results this page saw");
  const rounds = [{ A: 1, B: 2 }, { A: 3, B: 4 }, { A: 5, B: 6 }];
  assert.deepEqual(S.scoreSheet(state, { ...match, rounds }), [
    { round: 1, A: 1, B: 2 },
    { round: 2, A: 3, B: 4 },
    { round: 3, A: 5, B: 6 },
  ], "the server's list when it sends one");
  assert.deepEqual(S.scoreSheet(state, { ...match, table_id: "other" }), []);
  assert.equal(S.practiceMatch(state, match), false);
  await setLang("en", { save: false });
  assert.equal(t("match.practice"), "Practice: account points unchanged.");
});

test("a practice match says so (MATCH-3): from its result, else from the table", () => {
  const state = atTable(viewMessage(3, {}, { match: { ...MATCH, practice: true } }));
  assert.equal(S.practiceMatch(state, { winner: "A", rewards: { 1: 0 } }), true, "an older server's result without `practice`");
  assert.equal(S.practiceMatch(state, { winner: "A", rewards: { 1: 0 }, practice: false }), false);
});

test("a view with `log` replaces the move log: the same entries as before the reload", () => {
  const bobs = [
    { seat: 2, type: "draw", auto: true },
    { seat: 2, type: "discard", tile: "9B", auto: true },
  ];
  const state = atTable(viewMessage(4, {}, { moves: bobs, last_action: bobs[1] }));
  const before = state.log.map((m) => ({ ...m }));
  const reloaded = atTable(viewMessage(4, {}, { log: before }));
  assert.deepEqual(reloaded.log, before);
  const log = [{ seat: 3, type: "draw", auto: false, version: 2 }, ...before];
  const effects = S.receive(state, viewMessage(4, {}, { log, last_action: bobs[1], moves: bobs }));
  assert.deepEqual(state.log, log, "the server's log wins over what this page gathered");
  assert.ok(!effects.some((e) => e.kind === "moved"), "a restored log is not shown again move by move");
});

/** Timers run by hand; `now` is the fake clock. */
function fakeTimers() {
  const timers = { now: 0, pending: [], ids: 0 };
  timers.setTimeout = (fn, ms) => {
    timers.ids += 1;
    timers.pending.push({ fn, at: timers.now + ms, id: timers.ids });
    return timers.ids;
  };
  timers.clearTimeout = (id) => {
    timers.pending = timers.pending.filter((p) => p.id !== id);
  };
  timers.advance = (ms) => {
    const end = timers.now + ms;
    for (;;) {
      timers.pending.sort((a, b) => a.at - b.at);
      if (!timers.pending.length || timers.pending[0].at > end) break;
      const next = timers.pending.shift();
      timers.now = next.at;
      next.fn();
    }
    timers.now = end;
  };
  return timers;
}

test("other seats' moves are shown in order, each for about a second, without holding up the state", () => {
  const timers = fakeTimers();
  const shown = [];
  const queue = new S.MoveQueue({ timers, onShow: (item) => shown.push(item ? [timers.now, item.key, item.move.type] : [timers.now, null]) });
  const state = atTable(viewMessage(3, { turn: 2, legal_actions: [] }));
  const bot = [
    { seat: 2, type: "draw", auto: true },
    { seat: 2, type: "meld", melds: [{ rank: 9, tiles: ["9R", "9Y", "9B"] }], auto: true },
    { seat: 2, type: "discard", tile: "4K", auto: true },
  ];
  const effects = S.receive(state, viewMessage(4, { turn: 1 }, { moves: bot, last_action: bot[2] }));
  for (const effect of effects.filter((e) => e.kind === "moved")) queue.push(S.othersMoves(state, effect));
  // The player's turn is theirs at once, while the bot's turn is still being shown.
  assert.equal(S.myTurn(state), true);
  assert.equal(S.moveOptions(state).on.draw, true);
  assert.deepEqual(S.startMove(state, { type: "draw" }).version, 4);
  assert.deepEqual(shown, [[0, "4.0", "draw"]]);
  timers.advance(S.PRESENT_MS * 3);
  assert.deepEqual(shown, [
    [0, "4.0", "draw"],
    [S.PRESENT_MS, "4.1", "meld"],
    [2 * S.PRESENT_MS, "4.2", "discard"],
    [3 * S.PRESENT_MS, null],
  ]);
  assert.ok(S.PRESENT_MS >= 800 && S.PRESENT_MS <= 1200 && S.PRESENT_BUSY_MS >= 800);
});

test("another seat's whole turn comes in one view at its end, each move at its own version, shown in order", () => {
  const timers = fakeTimers();
  const shown = [];
  const queue = new S.MoveQueue({ timers, onShow: (item) => shown.push(item && [item.key, item.move.type]) });
  const state = atTable(viewMessage(4, { turn: 2, legal_actions: [] }));
  const turn = [
    { seat: 2, type: "draw", auto: false, version: 5 },
    { seat: 2, type: "meld", melds: [{ rank: 9, tiles: ["9R", "9Y", "9B"] }], auto: false, version: 6 },
    { seat: 2, type: "discard", tile: "4K", auto: false, version: 7 },
  ];
  const bots = [
    { seat: 3, type: "draw", auto: true, version: 8 },
    { seat: 3, type: "discard", tile: "5R", auto: true, version: 8 },
    { seat: 4, type: "draw", auto: true, version: 8 },
    { seat: 4, type: "discard", tile: "6Y", auto: true, version: 8 },
  ];
  const moves = [...turn, ...bots];
  const effects = S.receive(state, viewMessage(8, { turn: 1 }, { moves, last_action: bots[3] }));
  for (const effect of effects.filter((e) => e.kind === "moved")) queue.push(S.othersMoves(state, effect));
  assert.deepEqual(state.log.map((m) => [m.seat, m.type, m.version]), moves.map((m) => [m.seat, m.type, m.version]));
  timers.advance(10 * S.PRESENT_MS);
  assert.deepEqual(shown.filter(Boolean), [
    ["5.0", "draw"],
    ["6.0", "meld"],
    ["7.0", "discard"],
    ["8.0", "draw"],
    ["8.1", "discard"],
    ["8.2", "draw"],
    ["8.3", "discard"],
  ], "keyed as the log's entries are: their version, their place among its moves");
  assert.equal(S.myTurn(state), true);
});

test("a turn's moves seen mid-turn (a reload's log, a view pushed on a presence change) are kept and shown once", () => {
  const state = atTable(viewMessage(4, { turn: 2, legal_actions: [] }));
  const draw = { seat: 2, type: "draw", auto: false, version: 5 };
  const discard = { seat: 2, type: "discard", tile: "4K", auto: false, version: 6 };
  S.receive(state, viewMessage(5, { turn: 2 }, { log: [{ seat: 1, type: "discard", tile: "7R", auto: false, version: 4 }, draw] }));
  const effects = S.receive(state, viewMessage(6, { turn: 3 }, { moves: [draw, discard], last_action: discard }));
  assert.deepEqual(state.log.map((m) => [m.type, m.version]), [["discard", 4], ["draw", 5], ["discard", 6]]);
  const moved = effects.filter((e) => e.kind === "moved");
  assert.deepEqual(moved.map((e) => e.moves.map((m) => m.version)), [[6]], "only the discard is new");
  assert.deepEqual(S.othersMoves(state, moved[0]).map((i) => i.key), ["6.0"]);
  S.receive(state, viewMessage(6, { turn: 3 }, { moves: [draw, discard], last_action: discard }));
  assert.equal(state.log.length, 3, "the same view again adds nothing");
});

test("own moves are not queued; a long backlog goes faster and drops its oldest; a new round clears it", () => {
  const state = atTable(viewMessage(3));
  const mine = { kind: "moved", version: 4, moves: [{ seat: 1, type: "draw" }, { seat: 3, type: "draw" }] };
  assert.deepEqual(S.othersMoves(state, mine).map((i) => i.key), ["4.1"]);
  const timers = fakeTimers();
  const keys = [];
  const queue = new S.MoveQueue({ timers, onShow: (item) => keys.push(item && item.key) });
  const many = Array.from({ length: 20 }, (_, n) => ({ key: `9.${n}`, move: { seat: 2, type: "draw" } }));
  queue.push(many);
  assert.equal(queue.current.key, `9.${20 - S.PRESENT_KEPT}`, "the oldest beyond the kept ones are dropped");
  assert.equal(queue.waiting.length, S.PRESENT_KEPT - 1);
  timers.advance(S.PRESENT_BUSY_MS);
  assert.equal(keys.length, 2, "a backlog steps at the shorter pace");
  queue.clear();
  assert.deepEqual(keys.slice(-1), [null]);
  timers.advance(10 * S.PRESENT_MS);
  assert.equal(keys.length, 3, "nothing more after a clear");
});

test("under prefers-reduced-motion the moves are still shown, marked to be highlighted without motion", () => {
  const timers = fakeTimers();
  let reduced = true;
  const seen = [];
  const queue = new S.MoveQueue({ timers, motion: () => !reduced, onShow: (item) => item && seen.push(item.motion) });
  queue.push([{ key: "5.0", move: { seat: 2, type: "discard", tile: "4K" } }]);
  reduced = false;
  queue.push([{ key: "6.0", move: { seat: 3, type: "draw" } }]);
  timers.advance(S.PRESENT_MS);
  assert.deepEqual(seen, [false, true]);
});

test("meld and discard say why they are off in the draw phase; a lone wild says where it can go", async () => {
  const state = atTable(viewMessage(3));
  const { on, why } = S.moveOptions(state);
  assert.equal(on.meld || on.discard, false);
  assert.deepEqual([why.meld, why.discard], ["why.drawFirst", "why.drawFirst"]);
  await setLang("en", { save: false });
  assert.equal(t(...S.buttonTitle(state, "meld", why)), "Draw first (or take the pile).");
  S.receive(state, viewMessage(4, { phase: "first_discard", legal_actions: [{ type: "discard", tile: "9K" }] }));
  assert.equal(S.moveOptions(state).why.meld, "why.firstDiscard");
  assert.equal(S.moveOptions(state).on.discard, true);
  S.receive(state, viewMessage(5, { phase: "play" }));
  const pick = (tile) => S.toggleTile(state, state.hand.indexOf(tile));
  pick("2Y");
  assert.equal(S.meldMove(state).hint, "hint.wildsNeedRank", "not a one-tile meld of twos for the server to refuse");
  assert.deepEqual(S.meldMove(state, 8).move.melds, [{ rank: 8, tiles: ["2Y"] }], "tapping the team's meld of 8 extends it");
  const twos = { rank: 2, tiles: ["2R", "2K", "2B"], canasta: null, compact: false, stripe: null, wilds: 0 };
  S.receive(state, viewMessage(6, { phase: "play", melds: { A: [twos], B: [] } }));
  assert.deepEqual(S.meldMove(state).move.melds, [{ rank: 2, tiles: ["2Y"] }], "a team meld of twos takes it");
});

test("the tab whose seat went to another one shows no turn and no timer", () => {
  const state = atTable(viewMessage(3, {}, { turn_deadline: 99 }));
  assert.equal(S.myTurn(state), true);
  S.receive(state, { type: "opened_elsewhere" });
  assert.equal(S.myTurn(state), false);
  assert.equal(S.playing(state), false, "the timer and the buttons follow playing()");
  S.opened(state);
  assert.equal(S.myTurn(state), true, "back once this tab holds the seat again");
});
