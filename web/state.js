// The client's state, without any DOM: the latest view, the hand as shown, the
// selection, the move waiting for its answer, the lobby's queue or table, and the
// results to show. Server messages and the player's intents go in through the
// functions below; the page draws from the state and never keeps its own copy.
// Every rule shown comes from the view (shared_engine/view.py): this module
// copies none of the engine's.

import { multiset, sortTiles, tileInfo, wildTest } from "./tiles.js";

/** Seconds past a queue's countdown before the client asks to leave (the server notices
 * expiry on its next poll, every 10 s). */
export const QUEUE_GRACE = 15;

/** The quick messages a client offers (services/common/protocol.py, QuickPhrase). */
export const PHRASES = ["good_game", "well_played", "good_luck", "thanks", "hurry_up", "oops"];

/** How long a quick message stays by its seat. */
export const SAID_SHOWN_MS = 5000;

/** Moves kept for the log: more than a round's worth is never shown. */
export const LOG_KEPT = 300;

export function initialState() {
  return {
    player: { id: null, name: null },
    signedIn: false,
    elsewhere: false, // another tab or device took this player's connection over
    quiet: { no_table: 0, unknown_action: 0, leave: 0 }, // answers expected and not worth showing
    balance: null,
    profile: null, // the latest ProfileMessage
    board: null, // the latest LeaderboardMessage
    replay: null, // {table_id, round, rounds, moves, at, frames: {ply: frame}}: the replay being watched
    queued: null,
    expired: null, // the queue whose countdown ended without a table: wait on, or leave
    lobby: null,
    view: null, // the latest ViewMessage
    hand: [], // the view's hand, sorted for display
    ids: [], // one id per tile of `hand`, kept while that tile stays in the hand
    nextId: 1,
    selected: new Set(), // ids of the selected tiles: two identical tiles are two tiles
    used: null, // ids of the tiles the move waiting for an answer takes from the hand
    staged: [], // melds laid out and not yet sent: [{melds, tiles: [{tile, id}]}], sent with the discard
    committing: false, // the turn's staged melds went out with its discard: the answer applies them
    target: null, // rank of one of the team's melds that selected wilds join
    newTiles: new Set(), // indices of tiles that just arrived in the hand
    log: [], // this round's public moves, oldest first, as the views brought them
    busy: false,
    showAllSuggestions: false,
    dismissed: new Set(), // tables whose ended match the player left
    dialogs: [], // waiting {kind, msg}
    dialog: null, // the open one
    continued: new Set(), // "table:round" of the round results this page said it had read
    sheet: { table: null, rounds: {} }, // round -> {A, B}: the round scores this page saw, for the score sheet
    started: null, // the last queue or create_table message sent, for "play again"
    rematch: null, // a lobby offering this player their seat again at the same four's table
    said: {}, // seat -> {phrase, until}: quick messages shown by the seat for a while
    presented: null, // {move, key, motion}: another seat's move being shown (MoveQueue)
    upcoming: new Set(), // keys of the log's moves still waiting to be shown
  };
}

export function screen(state) {
  if (!state.signedIn) return "signin";
  if (state.view) return "table";
  return "lobby";
}

// --- the connection ---------------------------------------------------------------

/** The socket (re)opened: the server has forgotten any queue place or forming table. */
export function opened(state) {
  state.elsewhere = false;
  state.quiet = { no_table: 1, unknown_action: 1, leave: 0 };
  if (state.queued || state.lobby) {
    state.queued = null;
    state.lobby = null;
    return [{ kind: "notice", key: "queueLeft.disconnected" }];
  }
  return [];
}

export function closed(state) {
  state.busy = false;
}

// --- server messages --------------------------------------------------------------

/**
 * Takes one server message into the state. Returns what the page should do besides
 * drawing: [{kind: "error", code, params} | {kind: "notice", key} | {kind: "stop"} |
 * {kind: "dialog"} | {kind: "moved", last}].
 */
export function receive(state, message) {
  switch (message.type) {
    case "view":
      if (state.quiet.no_table > 0) state.quiet.no_table -= 1;
      return adoptView(state, message);
    case "error":
      return refused(state, message);
    case "round_result":
      return roundResult(state, message);
    case "match_result":
      return queueDialog(state, "match", message);
    case "queued":
      state.queued = message;
      state.lobby = null;
      state.expired = null;
      return [];
    case "queue_left": {
      if (message.reason === "timeout" && state.queued) state.expired = state.queued;
      state.queued = null;
      state.lobby = null;
      return state.expired ? [] : [{ kind: "notice", key: `queueLeft.${message.reason}`, fallback: "queueLeft.left" }];
    }
    case "lobby":
      return adoptLobby(state, message);
    case "opened_elsewhere":
      // Reconnecting on our own would take the seat back from the other tab, which
      // would then do the same: stop, and let the person choose where to play.
      state.elsewhere = true;
      state.queued = null; // the queue place and the lobby went with the seat to the other tab
      state.lobby = null;
      return [{ kind: "stop" }];
    case "said":
      if (!state.view || message.table_id !== state.view.table_id) return [];
      state.said[message.seat] = { phrase: message.phrase, until: Date.now() + SAID_SHOWN_MS };
      return [{ kind: "said" }];
    case "balance":
      if (state.quiet.unknown_action > 0) state.quiet.unknown_action -= 1;
      state.balance = { points: message.points, jokers: message.jokers };
      return [];
    case "profile":
      state.profile = message;
      return [{ kind: "records", which: "profile" }];
    case "leaderboard":
      state.board = message;
      return [{ kind: "records", which: "board" }];
    case "replay":
      return replayPage(state, message);
    default:
      return [];
  }
}

/**
 * A lobby the player sits in is theirs; one of a rematch that holds their seat but they
 * have not taken is an offer, shown beside what they are doing; a rematch that started
 * without them withdraws the offer.
 */
function adoptLobby(state, message) {
  const me = message.you;
  const seated = Object.values(message.seats).some((p) => p && p.player_id === me);
  if (message.rematch_of && !seated) {
    const held = Object.values(message.awaiting || {}).some((p) => p.player_id === me);
    const wasOffered = Boolean(state.rematch);
    state.rematch = held && message.status === "forming" ? message : null;
    if (!state.rematch && wasOffered) return [{ kind: "notice", key: "rematch.withdrawn" }];
    return state.rematch && !wasOffered ? [{ kind: "notice", key: "rematch.offered", params: { name: hostName(message) } }] : [];
  }
  state.lobby = message;
  state.queued = null;
  state.rematch = null;
  return [];
}

/** Whether the lobby's receiver hosts it. The server names the receiver (`you`): a
 * token's `sub` need not be the player id (a provider's `auth0|…` is kept under a hash). */
export function hosting(lobby) {
  return lobby.host === lobby.you;
}

/** The name of whoever opened a lobby (a rematch's first to ask). */
export function hostName(lobby) {
  const host = Object.values(lobby.seats).find((p) => p && p.player_id === lobby.host);
  return host ? host.name : "";
}

/** The `rematch` that takes the offered seat. */
export function rematchMessage(state) {
  return { action: "rematch", table_id: state.rematch.rematch_of };
}

function refused(state, message) {
  // Nothing of a refused message is applied: the melds it carried go back to the hand.
  if (state.staged.length) unstage(state);
  state.committing = false;
  state.busy = false;
  state.used = null;
  const { code } = message;
  if (code === "stale_version") return message.view ? adoptView(state, message.view) : [];
  if (code === "no_table" && state.quiet.no_table > 0) {
    state.quiet.no_table -= 1;
    return [];
  }
  if (code === "not_queued" && state.quiet.leave > 0) {
    state.quiet.leave -= 1;
    return [];
  }
  if (code === "not_queued" && (state.queued || state.lobby)) {
    // The server no longer holds a place for us (it timed out, or went with another
    // tab): show the lobby rather than a countdown that nothing will end.
    state.queued = null;
    state.lobby = null;
  }
  if (code === "unknown_action" && state.quiet.unknown_action > 0) {
    state.quiet.unknown_action -= 1;
    return [];
  }
  const effects = message.view ? adoptView(state, message.view) : [];
  const params = {};
  if (code === "below_threshold" && state.view) params.n = state.view.view.thresholds[state.view.view.team];
  return [...effects.filter((e) => e.kind !== "clearError"), { kind: "error", code, params }];
}

/**
 * Which tile of the old hand each tile of the new hand is (its id), or null for a
 * tile that just arrived. Of identical tiles, those the last move used leave the
 * hand first, then unselected ones: melding or discarding one of two identical
 * tiles never leaves the other one selected in its place.
 */
export function keptIds(oldHand, oldIds, newHand, used, selected) {
  const left = multiset(newHand);
  const byTile = new Map();
  oldHand.forEach((tile, i) => {
    if (!byTile.has(tile)) byTile.set(tile, []);
    byTile.get(tile).push(oldIds[i]);
  });
  const leaving = (id) => (used && used.has(id) ? 0 : selected.has(id) ? 2 : 1);
  for (const [tile, ids] of byTile) {
    const gone = ids.length - (left.get(tile) || 0);
    if (gone <= 0) continue;
    const out = new Set([...ids].sort((a, b) => leaving(a) - leaving(b)).slice(0, gone));
    byTile.set(tile, ids.filter((id) => !out.has(id)));
  }
  return newHand.map((tile) => {
    const ids = byTile.get(tile);
    return ids && ids.length ? ids.shift() : null;
  });
}

/** The latest view replaces the table; an older version of the same table is ignored. */
export function adoptView(state, message) {
  if (state.dismissed.has(message.table_id) && message.match && message.match.status !== "playing") return [];
  const previous = state.view;
  if (previous && previous.table_id === message.table_id && message.version < previous.version) return [];
  const sameTable = Boolean(previous) && previous.table_id === message.table_id;
  // Staged melds stand through a view of the same version (a seat's presence pushed mid-turn),
  // whose hand still holds them. Any other view ends them: the answer to the discard they went
  // with (their tiles left the hand first), or a turn that ended without it (the timer).
  const keepStaged = sameTable && !state.committing && message.version === previous.version;
  if (state.staged.length && !keepStaged) {
    const sent = state.committing ? stagedIds(state) : [];
    unstage(state);
    if (sent.length) state.used = new Set([...(state.used || []), ...sent]);
  }
  state.committing = false;
  const held = sortTiles(message.view.hand, wildTest(message.view.wild_ranks));
  const newHand = state.staged.length ? withoutTiles(held, stagedTiles(state)) : held;
  const kept = keptIds(sameTable ? state.hand : [], sameTable ? state.ids : [], newHand, state.used, state.selected);
  const wasMine = Boolean(previous) && sameTable && previous.view.turn === previous.seat;
  state.newTiles = new Set();
  state.ids = kept.map((id, i) => {
    if (id !== null) return id;
    if (sameTable && previous.view.round_scores === null) state.newTiles.add(i);
    return state.nextId++;
  });
  state.selected = new Set(state.ids.filter((id) => state.selected.has(id)));
  state.used = null;
  if (!sameTable || previous.match.round !== message.match.round) {
    state.selected = new Set();
    state.newTiles = new Set();
    state.target = null;
    state.staged = [];
  }
  const team = message.view.team;
  if (state.target !== null && !message.view.melds[team].some((m) => m.rank === state.target)) state.target = null;
  const advanced = !sameTable || message.version > previous.version;
  const newRound = !sameTable || previous.match.round !== message.match.round;
  if (newRound) state.log = [];
  let fresh = [];
  if (Array.isArray(message.log)) state.log = message.log.slice(-LOG_KEPT).map((move) => ({ ...move }));
  else if (advanced) fresh = logMoves(state, message);
  state.view = message;
  state.hand = newHand;
  state.queued = null;
  state.lobby = null;
  state.showAllSuggestions = false;
  state.busy = false;
  const effects = [];
  // A newer version means the last move (ours or another seat's) went through: an
  // error shown for an earlier attempt no longer applies.
  if (sameTable && advanced) effects.push({ kind: "clearError" });
  if (newRound) effects.push({ kind: "newRound" }, ...roundDealt(state, message));
  if (fresh.length) effects.push({ kind: "moved", moves: fresh, version: message.version });
  const mine = message.view.turn === message.seat && playing(state);
  if (mine && !wasMine) effects.push({ kind: "yourTurn" });
  return effects;
}

/** A log entry's key: its version, and its place among the moves of that version's write. */
export function moveKey(version, n) {
  return `${version}.${n}`;
}

/** The moves of another seat's, to show one after another as they happen (MoveQueue);
 * this seat's own moves need no showing: the player just made them. Each is keyed as its
 * log entry is: its version, and its place among that version's moves. */
export function othersMoves(state, effect) {
  let n = 0;
  return effect.moves
    .map((move, i) => {
      const version = move.version ?? effect.version;
      n = i > 0 && (effect.moves[i - 1].version ?? effect.version) === version ? n + 1 : 0;
      return { move, key: moveKey(version, n) };
    })
    .filter(({ move }) => Number(move.seat) !== state.view.seat);
}

/**
 * Appends the moves a view brings to the round's log and returns them: another seat's
 * whole turn comes at its end (a draw, melds, a discard, each at the version its write
 * made; a bots' stretch, several turns). A move the log holds already (a reload's log,
 * or a view pushed mid-turn, brought it before: its version is not newer) is not added
 * twice. A move without a version (an older server) is its view's.
 */
function logMoves(state, message) {
  const moves = message.moves && message.moves.length ? message.moves : message.last_action ? [message.last_action] : [];
  const newest = state.log.length ? state.log[state.log.length - 1].version : -Infinity;
  const fresh = moves.map((move) => ({ ...move, version: move.version ?? message.version })).filter((move) => move.version > newest);
  state.log.push(...fresh);
  if (state.log.length > LOG_KEPT) state.log.splice(0, state.log.length - LOG_KEPT);
  return fresh;
}

// --- dialogs ------------------------------------------------------------------------

function queueDialog(state, kind, msg) {
  state.dialogs.push({ kind, msg });
  if (!state.dialog) return nextDialog(state);
  return [];
}

/**
 * A round's result, at every round. The server sends it again after the `sync` of a page
 * that (re)connects during the intermission: the copy replaces the one shown or waiting,
 * and one no longer shown opens again.
 */
function roundResult(state, msg) {
  if (state.sheet.table !== msg.table_id) state.sheet = { table: msg.table_id, rounds: {} };
  if (msg.scores) state.sheet.rounds[msg.round] = { A: msg.scores.A.total, B: msg.scores.B.total };
  const same = (d) => d && d.kind === "round" && d.msg.table_id === msg.table_id && d.msg.round === msg.round;
  if (same(state.dialog)) {
    state.dialog.msg = msg;
    return [{ kind: "dialog" }];
  }
  const waiting = state.dialogs.find(same);
  if (waiting) {
    waiting.msg = msg;
    return [];
  }
  if (state.view && state.view.table_id === msg.table_id && state.view.match.round > msg.round) return [];
  return queueDialog(state, "round", msg);
}

/** A new round was dealt: the results of the rounds before it are read, shown or not. */
function roundDealt(state, message) {
  const older = (d) => d.kind === "round" && (d.msg.table_id !== message.table_id || d.msg.round < message.match.round);
  state.dialogs = state.dialogs.filter((d) => !older(d));
  if (!state.dialog || !older(state.dialog)) return [];
  state.dialog = null;
  // The page closes it, and its closing opens the next waiting result (nextDialog).
  return [{ kind: "closeDialog", dialog: "round" }];
}

/**
 * The open round result while its table waits between rounds (RoundResult's
 * `intermission_until`, the view's `intermission`): {until, awaited, sent}, else null.
 * `awaited` lists the seats the next round still waits for, this one left out once it
 * said it had read the result.
 */
export function intermission(state) {
  const d = state.dialog;
  if (!d || d.kind !== "round" || !state.view || state.view.table_id !== d.msg.table_id) return null;
  if (state.view.match.round !== d.msg.round || d.msg.intermission_until == null) return null;
  const pause = state.view.intermission || null;
  const me = state.view.seat;
  const sent = state.continued.has(`${d.msg.table_id}:${d.msg.round}`) || Boolean(pause && pause.continued.includes(me));
  const awaited = (pause ? pause.awaited : []).filter((seat) => !(sent && seat === me));
  return { until: pause ? pause.until : d.msg.intermission_until, awaited, sent };
}

/** The `continue` that says the open round result was read; null when there is nothing
 * to say (no intermission, or said already: `continueSent`). */
export function continueMessage(state) {
  const pause = intermission(state);
  if (!pause || pause.sent) return null;
  const { table_id, round } = state.dialog.msg;
  return { action: "continue", table_id, round };
}

export function continueSent(state, message) {
  state.continued.add(`${message.table_id}:${message.round}`);
}

/**
 * The match's round-by-round team scores: the server's list (`match_result.rounds`), else
 * the round results this page saw, in round order.
 */
export function scoreSheet(state, match) {
  if (Array.isArray(match.rounds) && match.rounds.length) return match.rounds.map((r, i) => ({ round: i + 1, A: r.A, B: r.B }));
  if (state.sheet.table !== match.table_id) return [];
  return Object.entries(state.sheet.rounds)
    .map(([round, r]) => ({ round: Number(round), ...r }))
    .sort((a, b) => a.round - b.round);
}

/** Whether the ended match was practice (MATCH-3): its result says so, else the table did. */
export function practiceMatch(state, match) {
  if (typeof match.practice === "boolean") return match.practice;
  return Boolean(state.view && state.view.match.practice);
}

/** The next waiting result, if any, becomes the open dialog. */
export function nextDialog(state) {
  state.dialog = state.dialogs.shift() || null;
  return state.dialog ? [{ kind: "dialog" }] : [];
}

/** The player closed a result; `choice` "lobby" leaves the ended match. */
export function dialogClosed(state, choice) {
  const leave = state.dialog && state.dialog.kind === "match" && (choice === "lobby" || choice === "again");
  state.dialog = null;
  return leave;
}

/**
 * The message that starts another match like the one that ended: at a friends table,
 * the same four again in the same seats (`rematch`); else the same start the player
 * chose (a queue), else the same length and variant from the quick start (an arena, at
 * the same stake).
 */
export function playAgainMessage(state, match) {
  if (match.rematch && state.view) return { action: "rematch", table_id: state.view.table_id };
  if (state.started && state.started.action !== "rematch") return { ...state.started };
  if (match.mode === "arena") return { action: "queue", mode: "arena", variant: match.variant, stake: match.stake };
  return { action: "queue", mode: match.mode, variant: match.variant };
}

/** Leaves the table's screen; the table is remembered so its last view is not shown again. */
export function backToLobby(state) {
  if (state.view) state.dismissed.add(state.view.table_id);
  state.view = null;
  state.hand = [];
  state.ids = [];
  state.selected = new Set();
  state.target = null;
  state.staged = [];
}

export function signedOut(state) {
  Object.assign(state, { signedIn: false, player: { id: null, name: null }, view: null, queued: null, lobby: null, balance: null });
}

// --- the lobby ----------------------------------------------------------------------

/** The queue's countdown ended long ago and the server said nothing: stop waiting. */
export function queueOverdue(state, now) {
  if (!state.queued || now <= state.queued.expires_at + QUEUE_GRACE) return false;
  state.expired = state.queued;
  state.queued = null;
  state.quiet.leave = 1;
  return true;
}

/** The message that queues again for the expired queue's match. */
export function waitOnMessage(state) {
  const { mode, variant, stake } = state.expired;
  return mode === "arena" ? { action: "queue", mode, variant, stake } : { action: "queue", mode, variant };
}

// --- the table ----------------------------------------------------------------------

/** The round runs and this tab holds the seat (not one whose seat went to another tab). */
export function playing(state) {
  return Boolean(state.view) && !state.elsewhere && state.view.match.status === "playing" && state.view.view.phase !== "round_over";
}

export function myTurn(state) {
  return playing(state) && state.view.view.turn === state.view.seat;
}

export function legalTypes(state) {
  return new Set(state.view.view.legal_actions.map((a) => a.type));
}

export function pileTop(state) {
  const pile = state.view.view.discard;
  return pile.length ? pile[pile.length - 1] : null;
}

/**
 * Which moves the buttons offer now, and why one is off (a translation key).
 *
 * A button follows the phase and what the view says, never the list of
 * suggestions: any meld, any pickup with a pair, is sent, and the server answers
 * a wrong one with its refusal.
 */
export function moveOptions(state) {
  const v = state.view.view;
  const on = { draw: false, take_pile: false, meld: false, discard: false, joker_button: false };
  const why = {};
  if (!myTurn(state)) return { on, why };
  if (v.phase === "draw") {
    on.draw = v.stock_size > 0;
    if (!pileTop(state)) why.take_pile = "error.pile_empty";
    else if (v.pile_blocked) why.take_pile = "error.pile_blocked";
    else if (!v.pile_pair) why.take_pile = "why.noPair";
    else on.take_pile = true;
    if (v.joker_button_used) why.joker_button = "why.jokerUsed";
    else if (v.account_jokers < 1) why.joker_button = "why.noSpareJoker";
    else if (!legalTypes(state).has("joker_button")) why.joker_button = "why.noJokerInStock";
    else on.joker_button = true;
    why.meld = "why.drawFirst";
    why.discard = "why.drawFirst";
  } else {
    on.meld = v.phase === "play";
    if (!on.meld) why.meld = "why.firstDiscard";
    on.discard = true;
  }
  return { on, why };
}

/**
 * A move button's tooltip as [translation key, parameters], or null: why it is off, else,
 * for the joker button, what pressing it spends (JOKER-1: the view's `joker_button_cost` of
 * the account's `account_jokers`, at a practice table as at any other), before it is pressed.
 */
export function buttonTitle(state, type, why) {
  if (why[type]) return [why[type], {}];
  if (type !== "joker_button") return null;
  const v = state.view.view;
  return ["action.jokerCost", { cost: v.joker_button_cost, n: v.account_jokers }];
}

// --- the selection --------------------------------------------------------------------

export function toggleTile(state, i) {
  const id = state.ids[i];
  if (state.selected.has(id)) state.selected.delete(id);
  else state.selected.add(id);
  state.newTiles.delete(i);
}

export function clearSelection(state) {
  state.selected = new Set();
  state.target = null;
}

/** A tap on one of the team's melds: it becomes (or stops being) the wilds' target. */
export function toggleTarget(state, rank) {
  state.target = state.target === rank ? null : rank;
}

export function selectedIndices(state) {
  return state.hand.map((_, i) => i).filter((i) => state.selected.has(state.ids[i]));
}

export function selectedTiles(state) {
  return selectedIndices(state).map((i) => state.hand[i]);
}

export function selectedIds(state) {
  return selectedIndices(state).map((i) => state.ids[i]);
}

/** The selection's worth, from the view's tile values. */
export function selectionPoints(state) {
  const points = state.view ? state.view.view.tile_points || {} : {};
  return selectedTiles(state).reduce((sum, tile) => sum + (points[tile] || 0), 0);
}

// --- building moves -------------------------------------------------------------------

/**
 * Meld specs from the selected tiles, one per natural rank (a rank the team has a
 * meld of extends it). The wilds go where they can stand: the meld tapped as target
 * takes them all; otherwise each goes in turn to the spec with the fewest wilds per
 * natural (the team's meld and the pile's top counted), the smaller spec first, for
 * the server to judge. Only wilds selected, one of them of the rank the view names for
 * a meld of wilds (`wilds_meld_rank`: the meld of twos): that meld.
 */
export function buildSpecs(tiles, { isWild, pileRank = null, target = null, wildsMeld = 2, melds = [] }) {
  const byRank = new Map();
  const wild = [];
  for (const tile of tiles) {
    if (isWild(tile)) wild.push(tile);
    else {
      const { rank } = tileInfo(tile);
      if (!byRank.has(rank)) byRank.set(rank, []);
      byRank.get(rank).push(tile);
    }
  }
  if (pileRank !== null && !byRank.has(pileRank)) return { hint: "hint.selectPair" };
  if (target !== null && wild.length) {
    if (!byRank.has(target)) byRank.set(target, []);
    byRank.get(target).push(...wild);
  } else if (wild.length && !byRank.size) {
    if (wildsMeld === null || !wild.some((tile) => tileInfo(tile).rank === wildsMeld)) return { hint: "hint.wildsNeedRank" };
    // A lone wild is no meld of its own and there is none of its kind to join: it can
    // only go to one of the team's other melds, or with naturals.
    if (pileRank === null && wild.length === 1 && melds.length && !melds.some((m) => m.rank === wildsMeld)) return { hint: "hint.wildsNeedRank" };
    byRank.set(wildsMeld, wild);
  } else if (wild.length) {
    spreadWilds(byRank, wild, isWild, pileRank, melds);
  }
  if (!byRank.size) return { hint: pileRank !== null ? "hint.selectPair" : "hint.selectMeld" };
  const specs = [...byRank.entries()].sort((a, b) => a[0] - b[0]).map(([rank, list]) => ({ rank, tiles: list }));
  return { specs };
}

function spreadWilds(byRank, wild, isWild, pileRank, melds) {
  const existing = new Map(melds.map((m) => [m.rank, m]));
  const count = (rank) => {
    const meld = existing.get(rank);
    const list = byRank.get(rank);
    const placed = list.filter(isWild).length;
    return {
      naturals: list.length - placed + (meld ? meld.tiles.length - meld.wilds : 0) + (rank === pileRank ? 1 : 0),
      wilds: placed + (meld ? meld.wilds : 0),
    };
  };
  const order = (a, b) => {
    const ca = count(a);
    const cb = count(b);
    return ca.wilds / ca.naturals - cb.wilds / cb.naturals || ca.naturals + ca.wilds - (cb.naturals + cb.wilds) || a - b;
  };
  for (const tile of wild) byRank.get([...byRank.keys()].sort(order)[0]).push(tile);
}

export function wildsOf(state) {
  return wildTest(state.view.view.wild_ranks);
}

/** The selection as one meld action; `target` is the rank of a team meld the wilds join. */
export function meldMove(state, target = state.target) {
  const tiles = selectedTiles(state);
  if (!tiles.length) return { hint: "hint.selectMeld" };
  const v = state.view.view;
  const melds = shownMelds(state).map((m) => ({ ...m, tiles: [...m.tiles, ...(m.added ? [] : m.staged)] }));
  const built = buildSpecs(tiles, { isWild: wildsOf(state), target, wildsMeld: v.wilds_meld_rank, melds });
  if (built.hint) return built;
  return { move: { type: "meld", melds: built.specs }, used: selectedIds(state) };
}

/** A pickup with the selected pair (and wilds); nothing selected: the first one offered. */
export function takePileMove(state) {
  const v = state.view.view;
  const tiles = selectedTiles(state);
  if (!tiles.length) {
    const offered = v.legal_actions.find((a) => a.type === "take_pile");
    return offered ? { move: offered, used: [] } : { hint: "hint.selectPair" };
  }
  const top = pileTop(state);
  if (!top) return { error: "pile_empty" };
  const built = buildSpecs(tiles, { isWild: wildsOf(state), pileRank: tileInfo(top).rank, wildsMeld: v.wilds_meld_rank, melds: v.melds[v.team] || [] });
  if (built.hint) return built;
  return { move: { type: "take_pile", melds: built.specs }, used: selectedIds(state) };
}

/**
 * A discard of the selected tile. `confirm` names what the player should agree to
 * first: a wild thrown away, or going out while the partner still holds tiles (they
 * count against the team, OUT-3).
 */
/** The `say` message for one of PHRASES. */
export function sayMessage(state, phrase) {
  return { action: "say", table_id: state.view.table_id, phrase };
}

/** The phrase a seat said, while it is shown. */
export function saidBy(state, seat, now = Date.now()) {
  const said = state.said[seat];
  return said && said.until > now ? said.phrase : null;
}

/** The seat across the table, whose tiles count with ours (TABLE-1), as the view says. */
export function partnerOf(state) {
  const { teams, seat } = state.view.view;
  return Number(Object.keys(teams).find((s) => Number(s) !== seat && teams[s] === teams[String(seat)]));
}

export function discardMove(state) {
  const tiles = selectedTiles(state);
  if (tiles.length !== 1) return { hint: "hint.selectDiscard" };
  const built = { move: { type: "discard", tile: tiles[0] }, used: selectedIds(state) };
  const v = state.view.view;
  const held = v.hand_sizes[String(partnerOf(state))] || 0;
  if (state.hand.length === 1 && held > 0) built.confirm = { key: "confirm.goOut", params: { n: held } };
  else if (wildsOf(state)(tiles[0])) built.confirm = { key: "confirm.wild", params: {} };
  return built;
}

/**
 * Hand tiles worth a look, from the legal moves only: in the play phase, those that
 * extend one of the team's melds; in the draw phase, those that take the pile with its
 * top. Returns index -> "extend" | "pile".
 */
export function handHints(state) {
  const hints = new Map();
  if (!myTurn(state)) return hints;
  const v = state.view.view;
  const ranks = new Set((v.melds[v.team] || []).map((m) => m.rank));
  const mark = (tiles, kind) => {
    const wanted = multiset(tiles);
    state.hand.forEach((tile, i) => {
      const n = wanted.get(tile) || 0;
      if (n > 0 && !hints.has(i)) {
        hints.set(i, kind);
        wanted.set(tile, n - 1);
      }
    });
  };
  for (const action of v.legal_actions) {
    if (action.type === "meld" && v.phase === "play") {
      for (const spec of action.melds) if (ranks.has(spec.rank)) mark(spec.tiles, "extend");
    } else if (action.type === "take_pile" && v.phase === "draw") {
      const top = pileTop(state);
      for (const spec of action.melds) if (top && spec.rank === tileInfo(top).rank) mark(spec.tiles, "pile");
    }
  }
  return hints;
}

/** The `play` message for `move` (and the further moves of the turn, `then`), and the state
 * waiting for its answer. */
export function startMove(state, move, used = [], then = []) {
  state.used = new Set(used);
  state.busy = true;
  const message = { action: "play", table_id: state.view.table_id, version: state.view.version, move };
  return then.length ? { ...message, then } : message;
}

// --- melds laid out before the discard -----------------------------------------------------

/**
 * The selection laid out as a meld of the team's, not yet sent: its tiles leave the hand and
 * show on the team's melds (`shownMelds`) until the discard sends them with it. Nothing is
 * judged here: the server judges the whole turn when it comes. Returns the hint saying what
 * is missing, or {}.
 */
export function stageMeld(state, target = state.target) {
  const built = meldMove(state, target);
  return built.move ? stage(state, built.move.melds, built.used) : built;
}

/** A suggested meld (one of `legal_actions`) laid out as `stageMeld` lays the selection. */
export function stageSuggestion(state, action) {
  const used = handIdsOf(state, action.melds.flatMap((m) => m.tiles));
  return used ? stage(state, action.melds, used) : { hint: "hint.selectMeld" };
}

/** The ids of hand tiles that are `tiles`, unselected ones first; null if the hand lacks one. */
function handIdsOf(state, tiles) {
  const wanted = multiset(tiles);
  const order = state.hand.map((_, i) => i).sort((a, b) => state.selected.has(state.ids[a]) - state.selected.has(state.ids[b]));
  const ids = [];
  for (const i of order) {
    const n = wanted.get(state.hand[i]) || 0;
    if (n > 0) {
      ids.push(state.ids[i]);
      wanted.set(state.hand[i], n - 1);
    }
  }
  return ids.length === tiles.length ? ids : null;
}

/** The suggestions the page offers: the view's melds and pickups the hand, as staging left
 * it, still holds the tiles of. */
export function suggestions(state) {
  return state.view.view.legal_actions.filter((a) => (a.type === "meld" || a.type === "take_pile") && handIdsOf(state, a.melds.flatMap((m) => m.tiles)));
}

function stage(state, melds, usedIds) {
  const used = new Set(usedIds);
  const tiles = [];
  state.hand.forEach((tile, i) => {
    if (used.has(state.ids[i])) tiles.push({ tile, id: state.ids[i] });
  });
  state.staged.push({ melds, tiles });
  state.hand = state.hand.filter((_, i) => !used.has(state.ids[i]));
  state.ids = state.ids.filter((id) => !used.has(id));
  state.selected = new Set();
  state.target = null;
  state.newTiles = new Set();
  return {};
}

/** Every staged tile back to the hand (Take back, or a refusal), in the hand's order. */
export function unstage(state) {
  const pairs = [...state.hand.map((tile, i) => ({ tile, id: state.ids[i] })), ...state.staged.flatMap((s) => s.tiles)];
  const byTile = new Map();
  for (const { tile, id } of pairs) byTile.set(tile, [...(byTile.get(tile) || []), id]);
  state.hand = sortTiles(pairs.map((p) => p.tile), wildsOf(state));
  state.ids = state.hand.map((tile) => byTile.get(tile).shift());
  state.staged = [];
  state.newTiles = new Set();
}

function stagedTiles(state) {
  return state.staged.flatMap((s) => s.tiles.map((p) => p.tile));
}

function stagedIds(state) {
  return state.staged.flatMap((s) => s.tiles.map((p) => p.id));
}

/** `tiles` less one of each of `gone` (a multiset difference). */
function withoutTiles(tiles, gone) {
  const left = multiset(gone);
  return tiles.filter((tile) => {
    const n = left.get(tile) || 0;
    if (n > 0) left.set(tile, n - 1);
    return n === 0;
  });
}

/** The staged melds as one meld action: one spec per rank, in rank order (a rank staged
 * twice is one spec; one action is how the engine judges an opening, OPEN-1). */
export function stagedMove(state) {
  if (!state.staged.length) return null;
  const byRank = new Map();
  for (const spec of state.staged.flatMap((s) => s.melds)) byRank.set(spec.rank, [...(byRank.get(spec.rank) || []), ...spec.tiles]);
  const melds = [...byRank.entries()].sort((a, b) => a[0] - b[0]).map(([rank, tiles]) => ({ rank, tiles }));
  return { type: "meld", melds };
}

/**
 * The team's melds as the page shows them: the view's, each with the tiles staged for it
 * (`staged`), then the new ones staged (`added`), which only the discard will send.
 */
export function shownMelds(state) {
  const v = state.view.view;
  const isWild = wildsOf(state);
  const extra = new Map();
  for (const spec of state.staged.flatMap((s) => s.melds)) extra.set(spec.rank, [...(extra.get(spec.rank) || []), ...spec.tiles]);
  const melds = (v.melds[v.team] || []).map((m) => ({ ...m, staged: extra.get(m.rank) || [] }));
  const added = [...extra.entries()]
    .filter(([rank]) => !melds.some((m) => m.rank === rank))
    .sort((a, b) => a[0] - b[0])
    .map(([rank, tiles]) => {
      const wilds = tiles.filter((tile) => (rank === 2 ? tile === "JK" : isWild(tile))).length;
      return { rank, tiles, wilds, canasta: null, compact: tiles.length > 5, stripe: null, staged: tiles, added: true };
    });
  return [...melds, ...added];
}

/** The message a discard sends: the staged melds, then the discard that ends the turn. */
export function startDiscard(state, discard, used = []) {
  const melds = stagedMove(state);
  if (!melds) return startMove(state, discard, used);
  state.committing = true;
  return startMove(state, melds, used, [discard]);
}

// --- other seats' moves, one after another ---------------------------------------------

/** How long each of another seat's moves is shown; a little less while more wait. */
export const PRESENT_MS = 1000;
export const PRESENT_BUSY_MS = 800;
/** Moves waiting beyond this are dropped, oldest first: a page that was away catches up. */
export const PRESENT_KEPT = 12;

/**
 * Other seats' moves shown one at a time, for long enough to be seen (a bot's turn is
 * several moves in one view). Only the showing waits: the state, and so the buttons,
 * follow the newest view at once. `onShow(item)` is told each item in turn, then null;
 * `motion()` false (prefers-reduced-motion) marks the items to be highlighted without
 * moving.
 */
export class MoveQueue {
  constructor({ onShow = () => {}, motion = () => true, timers = globalThis } = {}) {
    Object.assign(this, { onShow, motion, timers });
    this.waiting = [];
    this.current = null;
    this.timer = null;
  }

  push(items) {
    const motion = this.motion();
    this.waiting.push(...items.map((item) => ({ ...item, motion })));
    if (this.waiting.length > PRESENT_KEPT) this.waiting.splice(0, this.waiting.length - PRESENT_KEPT);
    if (!this.current) this.next();
  }

  next() {
    this.current = this.waiting.shift() || null;
    this.onShow(this.current);
    if (!this.current) return;
    const ms = this.waiting.length > 2 ? PRESENT_BUSY_MS : PRESENT_MS;
    this.timer = this.timers.setTimeout(() => this.next(), ms);
  }

  /** A new round or table: what was left to show is over. */
  clear() {
    this.timers.clearTimeout(this.timer);
    this.waiting = [];
    if (this.current) {
      this.current = null;
      this.onShow(null);
    }
  }
}

// --- replays ---------------------------------------------------------------------------

/** The first page of a finished match's replay: round 1 from its deal. */
export function replayMessage(tableId, round = 1, start = 0) {
  return { action: "replay", table_id: tableId, round, start };
}

function replayPage(state, message) {
  const same = state.replay && state.replay.table_id === message.table_id && state.replay.round === message.round;
  const frames = same ? { ...state.replay.frames } : {};
  message.frames.forEach((frame, i) => {
    frames[message.start + i] = frame;
  });
  const at = same ? state.replay.at : message.start;
  state.replay = { table_id: message.table_id, round: message.round, rounds: message.rounds, moves: message.moves, at, frames };
  return [{ kind: "records", which: "replay" }];
}

/**
 * Moves the replay's cursor by `step` frames (across rounds at either end of one).
 * Returns the page to ask for when the frame is not held yet, else null.
 */
export function stepReplay(state, step) {
  const replay = state.replay;
  if (!replay) return null;
  const at = replay.at + step;
  if (at > replay.moves) {
    if (replay.round >= replay.rounds) return null;
    state.replay = { ...replay, round: replay.round + 1, at: 0, frames: {} };
    return replayMessage(replay.table_id, replay.round + 1, 0);
  }
  if (at < 0) {
    if (replay.round <= 1) return null;
    // The previous round's length is not known until its first page: start at its deal.
    state.replay = { ...replay, round: replay.round - 1, at: 0, frames: {} };
    return replayMessage(replay.table_id, replay.round - 1, 0);
  }
  replay.at = at;
  return replay.frames[at] ? null : replayMessage(replay.table_id, replay.round, at);
}
