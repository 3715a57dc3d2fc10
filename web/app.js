// The browser client: it wires the protocol (protocol.js), the state (state.js) and
// the renderers (ui/). Data flows one way: a server message or a player's intent
// changes the state, then the page is drawn from the state.

import { LANGUAGES, applyI18n, errorText, hasKey, initialLang, preloadLangs, setLang, t } from "./i18n.js";
import { Connection, wsAddress } from "./protocol.js";
import {
  completeSignin,
  configureSignin,
  dropToken,
  keepSigninFresh,
  loadConfig,
  renewSignin,
  savedName,
  savedToken,
  session,
  setToken,
  signin,
  signoutSession,
  tokenExpired,
} from "./session.js";
import * as S from "./state.js";
import { renderCountdown, renderDialog } from "./ui/dialogs.js";
import { $, flash, h, show, tileEl } from "./ui/dom.js";
import { renderBalance, renderConnection, renderHeader, renderLobby, renderQueueClock, renderSignin } from "./ui/lobby.js";
import { bindLook } from "./ui/look.js";
import { renderBoard, renderProfile, renderReplay } from "./ui/records.js";
import { renderActions, renderHandArea, renderMelds, renderPresented, renderTable, renderTimer, teamOf } from "./ui/table.js";

const DISMISSED_KEY = "canasta.dismissed";
const BUSY_TIMEOUT = 10000;

const state = S.initialState();
let config = {};
let wsUrl = null;
let signinError = null; // translation key of the sign-in form's message
let busyTimer = null;
let errorTimer = null;
let noticeTimer = null;

const reducedMotion = window.matchMedia("(prefers-reduced-motion: reduce)");
const shows = new S.MoveQueue({
  motion: () => !reducedMotion.matches,
  onShow: (item) => {
    state.presented = item;
    state.upcoming = new Set(shows.waiting.map((w) => w.key));
    if (state.view) renderPresented(state);
  },
});

const conn = new Connection({
  address: () => (session.token && wsUrl ? wsAddress(wsUrl, session.token, location.href) : null),
  mayOpen: () => {
    if (!tokenExpired(session.token)) return true;
    tokenTrouble();
    return false;
  },
  onOpen: () => run(S.opened(state)),
  onMessage: (message) => run(S.receive(state, message)),
  onStatus: (status) => {
    if (!status.open && state.busy) S.closed(state);
    render();
  },
  onRefused: () => tokenTrouble(),
});

// --- banners ----------------------------------------------------------------------

function showError(text) {
  $("error-text").textContent = text;
  show($("error-banner"), true);
  clearTimeout(errorTimer);
  errorTimer = setTimeout(hideError, 8000);
}

function hideError() {
  clearTimeout(errorTimer);
  show($("error-banner"), false);
}

function showNotice(text) {
  $("notice-text").textContent = text;
  show($("notice-banner"), true);
  clearTimeout(noticeTimer);
  noticeTimer = setTimeout(() => show($("notice-banner"), false), 6000);
}

// --- effects of the state's changes ------------------------------------------------

/** Does what the state asks besides drawing, then draws. */
function run(effects) {
  if (!state.busy) clearTimeout(busyTimer);
  for (const effect of effects) {
    if (effect.kind === "error") showError(errorText(effect.code, effect.params));
    else if (effect.kind === "clearError") hideError();
    else if (effect.kind === "notice") showNotice(t(hasKey(effect.key) || !effect.fallback ? effect.key : effect.fallback, effect.params));
    else if (effect.kind === "stop") conn.disconnect();
    else if (effect.kind === "dialog") openDialog();
    else if (effect.kind === "yourTurn") yourTurnNotice();
    else if (effect.kind === "said") setTimeout(render, S.SAID_SHOWN_MS + 50);
    else if (effect.kind === "newRound") shows.clear();
    else if (effect.kind === "closeDialog") closeDialog(effect.dialog);
    else if (effect.kind === "records") showRecords(effect.which);
  }
  const moved = effects.filter((effect) => effect.kind === "moved");
  // Another seat's moves wait their turn to be shown; the page below is already the newest.
  for (const effect of moved) shows.push(S.othersMoves(state, effect));
  render();
  if (state.dialog) renderDialog(state);
  for (const effect of moved) effect.moves.filter((move) => Number(move.seat) === state.view.seat).forEach(animateMove);
}

/** A short highlight where the player's own move landed (CSS only: it never holds up a tap). */
function animateMove(move) {
  if (move.type === "discard") flash($("pile-top"));
  for (const spec of move.melds || []) flash(document.querySelector(`[data-testid="meld-${teamOf(state, Number(move.seat))}-${spec.rank}"]`), "fresh");
}

function send(message) {
  if (conn.send(message)) return true;
  showError(t("hint.notConnected"));
  return false;
}

/** Sends a move; a discard takes the turn's staged melds with it, in the same message. */
function play(move, used = []) {
  if (!state.view || state.busy) return;
  const message = move.type === "discard" ? S.startDiscard(state, move, used) : S.startMove(state, move, used);
  if (!send(message)) {
    state.busy = false;
    state.used = null;
    state.committing = false;
    return;
  }
  clearTimeout(busyTimer);
  busyTimer = setTimeout(() => {
    state.busy = false;
    render();
  }, BUSY_TIMEOUT);
  renderActions(state, conn.status());
}

/** A move built from the selection, or the hint saying what is missing; a move the
 * player should agree to first (a wild discarded, going out) waits for the answer. */
function playBuilt(built) {
  if (built.hint) showError(t(built.hint));
  else if (built.error) showError(errorText(built.error));
  else if (built.confirm) {
    const dialog = $("confirm-dialog");
    $("confirm-text").textContent = t(built.confirm.key, built.confirm.params);
    dialog.returnValue = "";
    dialog.onclose = () => {
      if (dialog.returnValue === "yes") play(built.move, built.used);
    };
    dialog.showModal();
  } else play(built.move, built.used);
}

/** Melds are laid out on the table, not sent: the discard sends them (`play`). */
function stage(staged) {
  if (staged.hint) showError(t(staged.hint));
  else hideError();
  renderMelds(state, table);
  renderHandArea(state, conn.status(), table);
}

/** The rules in the player's language (the text comes from the translation tables). */
function showHowTo() {
  $("howto-thresholds").replaceChildren(...t("howto.thresholds").split("\n").map((line) => h("li", {}, line)));
  $("howto-dialog").showModal();
}

/** A records answer arrived: its dialog is drawn, and opened if it is not yet. */
function showRecords(which) {
  const dialogs = { profile: "profile-dialog", board: "board-dialog", replay: "replay-dialog" };
  if (which === "profile") renderProfile(state, watchReplay);
  else if (which === "board") renderBoard(state);
  else renderReplay(state);
  const dialog = $(dialogs[which]);
  if (!dialog.open) dialog.showModal();
}

function askBoard() {
  const period = document.querySelector('#board-form input[name="period"]:checked').value;
  send({ action: "leaderboard", mode: $("board-mode").value, period });
}

function watchReplay(tableId) {
  if ($("profile-dialog").open) $("profile-dialog").close();
  state.replay = null;
  send(S.replayMessage(tableId));
}

function stepReplay(step) {
  const ask = S.stepReplay(state, step);
  if (ask) send(ask);
  renderReplay(state);
}

function browsePile() {
  if (!state.view) return;
  $("pile-tiles").replaceChildren(...state.view.view.discard.map((tile) => tileEl(tile)));
  $("pile-dialog").showModal();
}

/** The player's turn began while the page is in the background: say so in the tab. */
function yourTurnNotice() {
  if (document.visibilityState !== "hidden") return;
  document.title = t("title.yourTurn");
  if (typeof navigator.vibrate === "function") navigator.vibrate(200);
}

// --- the player's intents at the table ----------------------------------------------

const table = {
  tile(i) {
    S.toggleTile(state, i);
    renderHandArea(state, conn.status(), table);
  },
  meld(rank) {
    if (state.selected.size && S.moveOptions(state).on.meld) {
      stage(S.stageMeld(state, rank));
      return;
    }
    S.toggleTarget(state, rank);
    renderMelds(state, table);
    renderHandArea(state, conn.status(), table);
  },
  suggestion(action) {
    if (action.type === "meld") stage(S.stageSuggestion(state, action));
    else play(action);
  },
  say(phrase) {
    send(S.sayMessage(state, phrase));
    $("quick").open = false;
  },
  moreSuggestions() {
    state.showAllSuggestions = true;
    renderHandArea(state, conn.status(), table);
  },
};

// --- sign-in and sign-out ------------------------------------------------------------

/** The token is expired or refused: renew it (the refresh token, or locally the saved
 * name), or ask the player to sign in again. */
async function tokenTrouble() {
  if (!session.fromUrl && session.auth.available) {
    try {
      const player = await renewSignin();
      if (player) {
        signedIn(player);
        conn.reset();
        if (!conn.stopped) conn.connect();
        return;
      }
    } catch {
      /* fall through: keep retrying with the old token */
    }
  }
  if (tokenExpired(session.token)) {
    conn.disconnect();
    dropToken();
    state.signedIn = false;
    signinError = session.auth.available ? "signin.expired" : "signin.noServer";
    render();
  }
}

function signedIn(player) {
  state.player = player;
  state.signedIn = true;
  // Renewed before it expires, so that every reconnect opens with a valid token.
  keepSigninFresh((fresh) => {
    state.player = fresh;
  });
}

function signout() {
  conn.disconnect();
  signoutSession();
  S.signedOut(state);
  render();
}

async function submitSignin(event) {
  event.preventDefault();
  const name = $("signin-name").value.trim();
  signinError = null;
  if (session.auth.needsName && !/^[\p{L}\p{N}_ .'-]{1,24}$/u.test(name)) signinError = "signin.badName";
  else {
    try {
      const player = await signin(name);
      if (!player) return; // the page is on its way to the identity provider's sign-in
      signedIn(player);
    } catch (exc) {
      signinError = exc.message.startsWith("signin.") ? exc.message : "signin.failed";
    }
  }
  if (signinError) {
    renderSignin(signinError);
    return;
  }
  conn.reset();
  render();
  conn.connect();
}

// --- dialogs ---------------------------------------------------------------------------

function openDialog() {
  const el = renderDialog(state);
  if (!el) return;
  if (typeof el.showModal === "function") {
    if (!el.open) {
      el.showModal();
      // Opening focuses its buttons, which scrolls a long result to its end: it is read
      // from the top (who went out), the buttons staying in reach below.
      el.scrollTop = 0;
    }
  } else el.setAttribute("open", "");
}

/** The state closed a dialog (a round's result once the next round is dealt). */
function closeDialog(kind) {
  const el = $(kind === "round" ? "round-dialog" : "match-dialog");
  if (el.open) el.close();
  else run(S.nextDialog(state));
}

/** Says the open round result was read, once (the next round is dealt once all have). */
function sendContinue() {
  const message = S.continueMessage(state);
  if (message && send(message)) S.continueSent(state, message);
}

function onDialogClose(event) {
  const choice = event.currentTarget.returnValue;
  // Closing a round's result early says it was read, as its Continue button does.
  sendContinue();
  const again = state.view && choice === "again" ? S.playAgainMessage(state, state.view.match) : null;
  if (S.dialogClosed(state, choice)) backToLobby();
  if (again) start(again);
  run(S.nextDialog(state));
}

/** Queues or creates a table, remembered for "play again". */
function start(message) {
  if (send(message)) state.started = message;
}

function backToLobby() {
  S.backToLobby(state);
  saveDismissed();
  if (conn.open) {
    state.quiet.unknown_action += 1;
    send({ action: "balance" });
  }
  render();
}

function loadDismissed() {
  try {
    state.dismissed = new Set(JSON.parse(sessionStorage.getItem(DISMISSED_KEY) || "[]"));
  } catch {
    state.dismissed = new Set();
  }
}

function saveDismissed() {
  try {
    sessionStorage.setItem(DISMISSED_KEY, JSON.stringify([...state.dismissed].slice(-20)));
  } catch {
    /* nothing to do: the choice lasts this page only */
  }
}

// --- drawing ---------------------------------------------------------------------------

function render() {
  const screen = S.screen(state);
  const status = conn.status();
  show($("signin-screen"), screen === "signin");
  show($("lobby-screen"), screen === "lobby");
  show($("table-screen"), screen === "table");
  document.body.dataset.screen = screen;
  renderHeader(state);
  renderConnection(state, status);
  if (screen === "signin") {
    renderSignin(!wsUrl ? "signin.noServer" : signinError);
    // An identity provider asks for the name on its own page.
    $("signin-name").required = session.auth.needsName;
    show($("signin-name").closest("label"), session.auth.needsName);
  }
  if (screen === "lobby") renderLobby(state, config);
  if (screen === "table") renderTable(state, status, table);
}

function tick() {
  const now = Date.now() / 1000;
  renderTimer(state, now);
  renderQueueClock(state, now);
  renderCountdown(state, now);
  if (S.queueOverdue(state, now)) {
    // The server's word on the ended countdown went missing: ask to leave, so both
    // sides agree, and offer to wait on.
    send({ action: "leave" });
    render();
  }
}

// --- wiring -----------------------------------------------------------------------------

function formValues(form) {
  return Object.fromEntries(new FormData(form).entries());
}

function onSubmit(id, handler) {
  $(id).addEventListener("submit", (event) => {
    event.preventDefault();
    handler(formValues(event.currentTarget));
  });
}

function bind() {
  bindLook();
  const select = $("lang");
  select.replaceChildren(...LANGUAGES.map((l) => h("option", { value: l.code, lang: l.code }, l.name)));
  select.addEventListener("change", async () => {
    await setLang(select.value);
    applyI18n();
    render();
    renderDialog(state);
  });

  $("error-close").addEventListener("click", hideError);
  $("notice-close").addEventListener("click", () => show($("notice-banner"), false));
  $("signout").addEventListener("click", signout);
  $("signin-form").addEventListener("submit", submitSignin);

  onSubmit("quick-form", ({ mode, variant }) => start({ action: "queue", mode, variant }));
  onSubmit("arena-form", ({ stake, variant }) => start({ action: "queue", mode: "arena", variant, stake: Number(stake) }));
  onSubmit("create-form", ({ mode, variant }) => start({ action: "create_table", mode, variant }));
  onSubmit("join-form", () => {
    const code = $("join-code").value.trim();
    if (code.length < 4 || code.length > 12) showError(t("lobby.codeTooShort"));
    else send({ action: "join_table", code });
  });
  const leave = () => {
    if (send({ action: "leave" })) {
      state.queued = null;
      state.lobby = null;
      render();
    }
  };
  $("queued-leave").addEventListener("click", leave);
  $("lobby-leave").addEventListener("click", leave);
  $("rematch-join").addEventListener("click", () => start(S.rematchMessage(state)));
  $("rematch-dismiss").addEventListener("click", () => {
    state.rematch = null;
    render();
  });
  $("play-here").addEventListener("click", () => conn.connect());
  $("queue-wait-on").addEventListener("click", () => {
    if (send(S.waitOnMessage(state))) state.expired = null;
    render();
  });
  $("queue-expired-leave").addEventListener("click", () => {
    state.expired = null;
    render();
  });
  $("fill-bots").addEventListener("click", () => send({ action: "fill_bots", level: $("bot-level").value }));
  $("invite-copy").addEventListener("click", async () => {
    try {
      await navigator.clipboard.writeText($("invite-code").textContent);
      showNotice(t("lobby.copied"));
    } catch {
      /* the code stays visible to copy by hand */
    }
  });

  const draw = () => play({ type: "draw" });
  const take = () => playBuilt(S.takePileMove(state));
  $("act-draw").addEventListener("click", draw);
  $("act-take").addEventListener("click", take);
  $("act-meld").addEventListener("click", () => stage(S.stageMeld(state)));
  $("act-take-back").addEventListener("click", () => {
    S.unstage(state);
    render();
  });
  $("act-discard").addEventListener("click", () => playBuilt(S.discardMove(state)));
  $("act-joker").addEventListener("click", () => play({ type: "joker_button" }));
  $("stock").addEventListener("click", draw);
  $("pile").addEventListener("click", take);
  $("pile-browse").addEventListener("click", browsePile);
  $("howto-open").addEventListener("click", showHowTo);
  $("profile-open").addEventListener("click", () => send({ action: "profile" }));
  $("board-open").addEventListener("click", askBoard);
  for (const input of document.querySelectorAll("#board-form input, #board-form select")) input.addEventListener("change", askBoard);
  $("replay-prev").addEventListener("click", () => stepReplay(-1));
  $("replay-next").addEventListener("click", () => stepReplay(1));
  $("clear-selection").addEventListener("click", () => {
    S.clearSelection(state);
    renderMelds(state, table);
    renderHandArea(state, conn.status(), table);
  });
  $("match-over-back").addEventListener("click", backToLobby);
  $("round-dialog").addEventListener("close", onDialogClose);
  $("round-continue").addEventListener("click", () => {
    sendContinue();
    renderDialog(state);
  });
  $("match-dialog").addEventListener("close", onDialogClose);

  document.addEventListener("visibilitychange", () => {
    // Phones freeze sockets in the background: come back quickly when shown again.
    if (document.visibilityState !== "visible") return;
    document.title = t("app.title");
    if (state.signedIn) conn.hurry();
  });
  window.addEventListener("online", () => {
    if (state.signedIn) conn.hurry();
  });
  setInterval(tick, 250);

  // The header's height, for the layout under it (style.css: --top-h).
  const sizes = new ResizeObserver(() => {
    document.documentElement.style.setProperty("--top-h", `${document.querySelector(".topbar").offsetHeight}px`);
  });
  sizes.observe(document.querySelector(".topbar"));
}

async function main() {
  const params = new URLSearchParams(location.search);
  const lang = await setLang(initialLang(params.get("lang")), { save: params.has("lang") });
  bind();
  $("lang").value = lang;
  applyI18n();
  loadDismissed();

  const loaded = await loadConfig();
  config = loaded.config || {};
  wsUrl = params.get("ws") || config.ws_url || null;
  const signinUrl = params.get("signin") || config.signin_url || null;
  configureSignin(config, loaded.base, signinUrl ? new URL(signinUrl, loaded.base).href : null);
  try {
    const back = await completeSignin();
    if (back) signedIn(back);
  } catch (exc) {
    signinError = exc.message.startsWith("signin.") ? exc.message : "signin.failed";
  }

  const urlToken = params.get("token");
  if (urlToken) {
    signedIn(setToken(urlToken, { fromUrl: true }));
    // Keep the token out of the address bar (and out of shared links).
    params.delete("token");
    const rest = params.toString();
    history.replaceState(null, "", `${location.pathname}${rest ? `?${rest}` : ""}${location.hash}`);
  } else if (!state.signedIn && savedToken()) signedIn(setToken(savedToken()));
  const name = savedName();
  if (name) $("signin-name").value = name;
  render();
  renderBalance(state);
  if (state.signedIn) conn.connect();
  preloadLangs();
}

main();
