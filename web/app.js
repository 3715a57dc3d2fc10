// The browser client: sign-in, lobby, table. It speaks the WebSocket protocol of
// services/common/protocol.py and always draws the table from the latest `view`.

import { LANGUAGES, applyI18n, errorText, fmtNum, initialLang, setLang, t } from "./i18n.js";

const TOKEN_KEY = "canasta.token";
const NAME_KEY = "canasta.name";
const DISMISSED_KEY = "canasta.dismissed";
const COLOURS = ["R", "Y", "K", "B"];
const MARKS = { R: "●", Y: "▲", K: "■", B: "◆" };
const BACKOFF_START = 500;
const BACKOFF_MAX = 8000;
const DEFAULT_STAKES = [100, 500, 1000];
const SUGGESTIONS_SHOWN = 6;
const BUSY_TIMEOUT = 10000;
const QUEUE_GRACE = 15; // seconds past a queue's countdown before the client asks to leave (the server notices expiry on its next poll, every 10 s)

const $ = (id) => document.getElementById(id);

// --- state ------------------------------------------------------------------------

const S = {
  config: {},
  wsUrl: null,
  signinUrl: null,
  token: null,
  tokenFromUrl: false,
  player: { id: null, name: null },
  ws: null,
  open: false,
  everOpened: false,
  attempts: 0,
  failedOpens: 0,
  backoff: BACKOFF_START,
  reconnectTimer: null,
  stopped: true,
  elsewhere: false, // another tab or device took this player's connection over
  quiet: { no_table: 0, unknown_action: 0, leave: 0 },
  balance: null,
  queued: null,
  expired: null, // the queue whose countdown ended without a table: wait on, or leave
  lobby: null,
  view: null, // the latest ViewMessage
  hand: [], // the view's hand, sorted for display
  ids: [], // one id per tile of S.hand, kept while that tile stays in the hand
  nextId: 1,
  selected: new Set(), // ids (S.ids) of the selected tiles: two identical tiles are two tiles
  used: null, // ids of the tiles the move waiting for an answer takes from the hand
  target: null, // rank of one of the team's melds that selected wilds join
  newTiles: new Set(), // indices of tiles that just arrived in the hand
  busy: false,
  busyTimer: null,
  showAllSuggestions: false,
  dismissed: new Set(),
  dialogs: [], // waiting {kind, msg}
  dialog: null, // the open one
  lastRound: null,
  signinError: null, // translation key of the sign-in form's message
};

// --- small DOM helpers ---------------------------------------------------------------

function h(tag, props = {}, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(props)) {
    if (value === null || value === undefined || value === false) continue;
    if (key === "class") el.className = value;
    else if (key === "text") el.textContent = value;
    else if (key.startsWith("on")) el.addEventListener(key.slice(2), value);
    else el.setAttribute(key, value === true ? "" : String(value));
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    el.append(child instanceof Node ? child : String(child));
  }
  return el;
}

function show(el, visible) {
  el.hidden = !visible;
}

function clock(seconds) {
  const s = Math.max(0, Math.ceil(seconds));
  const m = Math.floor(s / 60);
  return `${m}:${String(s % 60).padStart(2, "0")}`;
}

// --- tiles ----------------------------------------------------------------------------

function tileInfo(name) {
  if (name === "JK") return { joker: true, rank: 0, colour: null };
  return { joker: false, rank: parseInt(name, 10), colour: name.slice(-1) };
}

function isWild(name) {
  return name === "JK" || tileInfo(name).rank === 2;
}

function tileValue(name) {
  const { joker, rank } = tileInfo(name);
  if (joker) return 50;
  if (rank === 1) return 25;
  if (rank === 2) return 20;
  if (rank === 3) return 0;
  return rank <= 9 ? 5 : 10;
}

/** Hand order: rank, then colour R, Y, K, B; 2s and jokers last. */
function sortKey(name) {
  const { joker, rank, colour } = tileInfo(name);
  const group = joker ? 15 : rank === 2 ? 14 : rank;
  return group * 4 + (joker ? 0 : COLOURS.indexOf(colour));
}

function sortTiles(tiles) {
  return [...tiles].sort((a, b) => sortKey(a) - sortKey(b));
}

function tileName(name) {
  if (name === "JK") return t("tile.joker");
  const { rank, colour } = tileInfo(name);
  return t("tile.aria", { rank: String(rank), colour: t(`colour.${colour}`) });
}

/** One tile face; `tag` button for the hand, span elsewhere. */
function tileEl(name, { tag = "span", size = "", extra = {}, label = true } = {}) {
  const info = tileInfo(name);
  const cls = `tile ${info.joker ? "t-JK" : `t-${info.colour}`}${size ? ` tile-${size}` : ""}`;
  const props = { class: cls, "data-tile": name, ...extra };
  if (label) {
    if (tag === "span") {
      props.role = "img";
      props["aria-label"] = tileName(name);
    } else props["aria-label"] = tileName(name);
  }
  return h(
    tag,
    props,
    h("span", { class: "tn", "aria-hidden": "true" }, info.joker ? "★" : String(info.rank)),
    h("span", { class: "tm", "aria-hidden": "true" }, info.joker ? "JK" : MARKS[info.colour]),
  );
}

function multiset(tiles) {
  const counts = new Map();
  for (const tile of tiles) counts.set(tile, (counts.get(tile) || 0) + 1);
  return counts;
}

// --- messages shown to the player ---------------------------------------------------------

let errorTimer = null;
let noticeTimer = null;

function showError(text) {
  $("error-text").textContent = text;
  show($("error-banner"), true);
  clearTimeout(errorTimer);
  errorTimer = setTimeout(() => show($("error-banner"), false), 8000);
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

// --- configuration and sign-in ------------------------------------------------------------

function loadDismissed() {
  try {
    S.dismissed = new Set(JSON.parse(sessionStorage.getItem(DISMISSED_KEY) || "[]"));
  } catch {
    S.dismissed = new Set();
  }
}

function saveDismissed() {
  try {
    sessionStorage.setItem(DISMISSED_KEY, JSON.stringify([...S.dismissed].slice(-20)));
  } catch {
    /* nothing to do: the choice lasts this page only */
  }
}

async function loadConfig() {
  if (location.protocol === "file:") return { config: {}, base: location.href };
  const candidates = [new URL("config.json", location.href), new URL("/config.json", location.href)];
  const tried = new Set();
  for (const url of candidates) {
    if (tried.has(url.href)) continue;
    tried.add(url.href);
    try {
      const response = await fetch(url, { cache: "no-store", headers: { Accept: "application/json" } });
      if (response.ok) return { config: await response.json(), base: url.href };
    } catch {
      /* try the next place */
    }
  }
  return { config: {}, base: location.href };
}

/** The claims of a token (id, name, expiry), read without checking: the server checks. */
function tokenClaims(token) {
  try {
    const payload = token.split(".")[1];
    const text = atob(payload.replace(/-/g, "+").replace(/_/g, "/") + "=".repeat((4 - (payload.length % 4)) % 4));
    const json = new TextDecoder().decode(Uint8Array.from(text, (c) => c.charCodeAt(0)));
    const claims = JSON.parse(json);
    return { id: claims.sub ?? null, name: claims.name ?? null, exp: claims.exp ?? null };
  } catch {
    return { id: null, name: null, exp: null };
  }
}

function setToken(token, { fromUrl = false } = {}) {
  S.token = token;
  S.tokenFromUrl = fromUrl;
  const claims = tokenClaims(token);
  S.player = { id: claims.id, name: claims.name || sessionStorage.getItem(NAME_KEY) };
  try {
    sessionStorage.setItem(TOKEN_KEY, token);
  } catch {
    /* the token then lasts this page only */
  }
}

function tokenExpired(token) {
  const { exp } = tokenClaims(token);
  return typeof exp === "number" && exp * 1000 < Date.now();
}

/* Local sign-in: the first sign-in under a name gets a secret that this browser keeps,
   and a later sign-in under the name must show it (the server refuses others). */
const NAME_SECRET_PREFIX = "canasta.name-secret.";

function nameSecret(name) {
  try {
    return localStorage.getItem(NAME_SECRET_PREFIX + name.trim().toLowerCase());
  } catch {
    return null;
  }
}

function keepNameSecret(name, secret) {
  if (!secret) return;
  try {
    localStorage.setItem(NAME_SECRET_PREFIX + name.trim().toLowerCase(), secret);
  } catch {
    /* without storage, the name is this page's only */
  }
}

async function signin(name) {
  if (!S.signinUrl) throw new Error("signin.noServer");
  let response;
  try {
    response = await fetch(S.signinUrl, {
      method: "POST",
      headers: { "Content-Type": "application/json", Accept: "application/json" },
      body: JSON.stringify({ name, secret: nameSecret(name) || undefined }),
    });
  } catch {
    throw new Error("signin.unreachable");
  }
  if (response.status === 400) throw new Error("signin.badName");
  if (response.status === 409) throw new Error("signin.nameTaken");
  if (!response.ok) throw new Error("signin.failed");
  const body = await response.json();
  try {
    sessionStorage.setItem(NAME_KEY, body.name || name);
  } catch {
    /* kept in memory only */
  }
  keepNameSecret(body.name || name, body.secret);
  setToken(body.token);
  if (body.player_id) S.player.id = body.player_id;
  if (body.name) S.player.name = body.name;
}

function signout() {
  disconnect();
  try {
    sessionStorage.removeItem(TOKEN_KEY);
  } catch {
    /* nothing stored */
  }
  S.token = null;
  S.player = { id: null, name: null };
  S.view = null;
  S.queued = null;
  S.lobby = null;
  S.balance = null;
  render();
}

// --- the connection ------------------------------------------------------------------------

function wsAddress() {
  const url = new URL(S.wsUrl, location.href);
  if (url.protocol === "http:") url.protocol = "ws:";
  if (url.protocol === "https:") url.protocol = "wss:";
  if (location.protocol === "https:" && url.protocol === "ws:") url.protocol = "wss:";
  url.searchParams.set("token", S.token);
  return url.href;
}

function connect() {
  clearTimeout(S.reconnectTimer);
  S.stopped = false;
  S.elsewhere = false;
  if (!S.token || !S.wsUrl) return;
  if (S.ws && (S.ws.readyState === WebSocket.CONNECTING || S.ws.readyState === WebSocket.OPEN)) return;
  if (tokenExpired(S.token)) {
    tokenTrouble();
    return;
  }
  S.attempts += 1;
  let opened = false;
  let ws;
  try {
    ws = new WebSocket(wsAddress());
  } catch {
    scheduleReconnect(false);
    return;
  }
  S.ws = ws;
  renderConnection();
  ws.addEventListener("open", () => {
    if (S.ws !== ws) return;
    opened = true;
    S.open = true;
    S.everOpened = true;
    S.attempts = 0;
    S.failedOpens = 0;
    S.backoff = BACKOFF_START;
    S.quiet = { no_table: 1, unknown_action: 1, leave: 0 };
    if (S.queued || S.lobby) {
      // The server takes a player whose connection closed out of the queue or the
      // table being formed (it could not tell this connection): start again from the lobby.
      S.queued = null;
      S.lobby = null;
      showNotice(t("queueLeft.disconnected"));
    }
    ws.send(JSON.stringify({ action: "sync" }));
    ws.send(JSON.stringify({ action: "balance" }));
    renderConnection();
    render();
  });
  ws.addEventListener("message", (event) => {
    if (S.ws !== ws) return;
    let message;
    try {
      message = JSON.parse(event.data);
    } catch {
      return;
    }
    if (message && typeof message === "object") receive(message);
  });
  ws.addEventListener("close", () => {
    if (S.ws !== ws) return;
    S.ws = null;
    S.open = false;
    setBusy(false);
    scheduleReconnect(opened);
  });
}

function scheduleReconnect(wasOpen) {
  if (S.stopped) return;
  if (!wasOpen) S.failedOpens += 1;
  renderConnection();
  render();
  // A socket refused three times in a row while the server answers HTTP is most
  // likely a token the server no longer accepts (e.g. the local stack restarted).
  if (S.failedOpens >= 3 && S.failedOpens % 3 === 0) tokenTrouble();
  const delay = S.backoff;
  S.backoff = Math.min(S.backoff * 2, BACKOFF_MAX);
  S.reconnectTimer = setTimeout(connect, delay);
}

/** The token is expired or refused: sign in again by the saved name, or ask for it. */
async function tokenTrouble() {
  const name = sessionStorage.getItem(NAME_KEY);
  if (!S.tokenFromUrl && name && S.signinUrl) {
    try {
      await signin(name);
      S.failedOpens = 0;
      if (!S.stopped) connect();
      return;
    } catch {
      /* fall through: keep retrying with the old token */
    }
  }
  if (tokenExpired(S.token || "")) {
    disconnect();
    S.token = null;
    try {
      sessionStorage.removeItem(TOKEN_KEY);
    } catch {
      /* nothing stored */
    }
    S.signinError = S.signinUrl ? "signin.expired" : "signin.noServer";
    render();
  }
}

function disconnect() {
  S.stopped = true;
  clearTimeout(S.reconnectTimer);
  if (S.ws) {
    const ws = S.ws;
    S.ws = null;
    ws.close();
  }
  S.open = false;
  renderConnection();
}

function send(message) {
  if (!S.ws || !S.open || S.ws.readyState !== WebSocket.OPEN) {
    showError(t("hint.notConnected"));
    return false;
  }
  S.ws.send(JSON.stringify(message));
  return true;
}

function setBusy(busy) {
  S.busy = busy;
  clearTimeout(S.busyTimer);
  if (busy) S.busyTimer = setTimeout(() => setBusy(false), BUSY_TIMEOUT);
  if (S.view) renderActions();
}

function play(move, used = []) {
  if (!S.view || S.busy) return;
  if (send({ action: "play", table_id: S.view.table_id, version: S.view.version, move })) {
    S.used = new Set(used);
    setBusy(true);
  }
}

// --- server messages ------------------------------------------------------------------------------

function receive(message) {
  switch (message.type) {
    case "view":
      if (S.quiet.no_table > 0) S.quiet.no_table -= 1;
      adoptView(message);
      break;
    case "error":
      onError(message);
      break;
    case "round_result":
      S.lastRound = message;
      queueDialog("round", message);
      break;
    case "match_result":
      queueDialog("match", message);
      break;
    case "queued":
      S.queued = message;
      S.lobby = null;
      S.expired = null;
      render();
      break;
    case "queue_left":
      if (message.reason === "timeout" && S.queued) S.expired = S.queued;
      S.queued = null;
      S.lobby = null;
      if (!S.expired) showNotice(t(`queueLeft.${message.reason}`) || t("queueLeft.left"));
      render();
      break;
    case "lobby":
      S.lobby = message;
      S.queued = null;
      render();
      break;
    case "opened_elsewhere":
      // Reconnecting on our own would take the seat back from the other tab, which
      // would then do the same: stop, and let the person choose where to play.
      S.elsewhere = true;
      S.queued = null; // the queue place and the lobby went with the seat to the other tab
      S.lobby = null;
      disconnect();
      render();
      break;
    case "balance":
      if (S.quiet.unknown_action > 0) S.quiet.unknown_action -= 1;
      S.balance = { points: message.points, jokers: message.jokers };
      renderBalance();
      break;
    default:
      break;
  }
}

function onError(message) {
  setBusy(false);
  S.used = null;
  if (message.code === "stale_version") {
    if (message.view) adoptView(message.view);
    return;
  }
  if (message.code === "no_table" && S.quiet.no_table > 0) {
    S.quiet.no_table -= 1;
    return;
  }
  if (message.code === "not_queued" && S.quiet.leave > 0) {
    S.quiet.leave -= 1;
    return;
  }
  if (message.code === "not_queued" && (S.queued || S.lobby)) {
    // The server no longer holds a place for us (it timed out, or went with another
    // tab): show the lobby rather than a countdown that nothing will end.
    S.queued = null;
    S.lobby = null;
    render();
  }
  if (message.code === "unknown_action" && S.quiet.unknown_action > 0) {
    S.quiet.unknown_action -= 1;
    return;
  }
  if (message.view) adoptView(message.view);
  const params = {};
  if (message.code === "below_threshold" && S.view) params.n = S.view.view.thresholds[S.view.view.team];
  showError(errorText(message.code, params));
}

function adoptView(message) {
  if (S.dismissed.has(message.table_id) && message.match && message.match.status !== "playing") return;
  const previous = S.view;
  if (previous && previous.table_id === message.table_id && message.version < previous.version) return;
  const sameTable = previous && previous.table_id === message.table_id;
  const newHand = sortTiles(message.view.hand);
  const kept = keptIds(sameTable ? S.hand : [], sameTable ? S.ids : [], newHand);
  S.newTiles = new Set();
  S.ids = kept.map((id, i) => {
    if (id !== null) return id;
    if (sameTable && previous.view.round_scores === null) S.newTiles.add(i);
    return S.nextId++;
  });
  S.selected = new Set(S.ids.filter((id) => S.selected.has(id)));
  S.used = null;
  if (!sameTable || previous.match.round !== message.match.round) {
    S.selected = new Set();
    S.newTiles = new Set();
    S.target = null;
  }
  const team = message.view.team;
  if (S.target !== null && !message.view.melds[team].some((m) => m.rank === S.target)) S.target = null;
  S.view = message;
  S.hand = newHand;
  S.queued = null;
  S.lobby = null;
  S.showAllSuggestions = false;
  setBusy(false);
  render();
  if (message.last_action && message.last_action.type === "discard") flash($("pile-top"));
}

function flash(el) {
  el.classList.remove("flash");
  void el.offsetWidth; // restart the animation
  el.classList.add("flash");
}

// --- dialogs ------------------------------------------------------------------------------------------

function queueDialog(kind, msg) {
  S.dialogs.push({ kind, msg });
  if (!S.dialog) nextDialog();
}

function nextDialog() {
  S.dialog = S.dialogs.shift() || null;
  if (!S.dialog) return;
  const el = S.dialog.kind === "round" ? $("round-dialog") : $("match-dialog");
  renderDialog();
  if (typeof el.showModal === "function") {
    if (!el.open) el.showModal();
  } else el.setAttribute("open", "");
}

function renderDialog() {
  if (!S.dialog) return;
  if (S.dialog.kind === "round") renderRoundDialog(S.dialog.msg);
  else renderMatchDialog(S.dialog.msg);
}

function teamOrder() {
  const mine = S.view ? S.view.view.team : "A";
  return mine === "A" ? ["A", "B"] : ["B", "A"];
}

function teamTitle(team) {
  if (!S.view) return t(`team.${team}`);
  const key = team === S.view.view.team ? "team.yours" : "team.opponents";
  return t("team.label", { name: t(key), team: t(`team.${team}`) });
}

function renderRoundDialog(msg) {
  $("round-dialog-title").textContent = t("result.round", { n: msg.round });
  const order = teamOrder();
  const rows = ["melded", "canastas", "bonus_threes", "going_out", "hands", "total"];
  const table = h(
    "table",
    { class: "score-table", "data-testid": "round-scores" },
    h("thead", {}, h("tr", {}, h("td", {}), order.map((team) => h("th", { scope: "col" }, teamTitle(team))))),
    h(
      "tbody",
      {},
      rows.map((row) =>
        h(
          "tr",
          { class: row === "total" ? "total" : "" },
          h("th", { scope: "row" }, t(`result.${row}`)),
          order.map((team) => h("td", { "data-testid": `score-${team}-${row}` }, fmtNum(msg.scores[team][row], row !== "total" ? false : true))),
        ),
      ),
    ),
    h(
      "tfoot",
      {},
      h("tr", {}, h("th", { scope: "row" }, t("result.totals")), order.map((team) => h("td", { "data-testid": `total-${team}` }, fmtNum(msg.totals[team])))),
    ),
  );
  const proof = h(
    "details",
    { class: "proof", "data-testid": "shuffle-proof" },
    h("summary", {}, t("result.proof")),
    h("p", { class: "hint" }, t("result.proofHint")),
    h("dl", {}, h("dt", {}, t("result.commitment")), h("dd", {}, h("code", {}, msg.commitment)), h("dt", {}, t("result.seed")), h("dd", {}, h("code", {}, msg.seed))),
  );
  $("round-dialog-body").replaceChildren(table, h("p", { class: "next", "data-testid": "round-next" }, t(`result.next.${msg.next}`)), proof);
}

function renderMatchDialog(msg) {
  const body = [];
  if (S.view) {
    const won = msg.winner === S.view.view.team;
    body.push(h("p", { class: `verdict ${won ? "won" : "lost"}`, "data-testid": "match-verdict" }, t(won ? "match.won" : "match.lost")));
  }
  body.push(h("p", {}, t("match.winner", { team: teamTitle(msg.winner) })));
  const order = teamOrder();
  body.push(
    h(
      "table",
      { class: "score-table" },
      h("tbody", {}, order.map((team) => h("tr", { class: team === msg.winner ? "total" : "" }, h("th", { scope: "row" }, teamTitle(team)), h("td", { "data-testid": `match-total-${team}` }, fmtNum(msg.totals[team]))))),
    ),
  );
  body.push(h("p", {}, t("match.rounds", { n: msg.rounds_played })));
  if (S.view && msg.rewards) {
    const amount = msg.rewards[String(S.view.seat)];
    if (typeof amount === "number") {
      body.push(h("p", { class: `reward ${amount >= 0 ? "gain" : "loss"}`, "data-testid": "match-reward" }, t("match.reward", { points: fmtNum(amount, true) })));
    }
  }
  $("match-dialog-body").replaceChildren(...body);
}

function onDialogClose(event) {
  const el = event.currentTarget;
  if (S.dialog && S.dialog.kind === "match" && el.returnValue === "lobby") backToLobby();
  S.dialog = null;
  nextDialog();
}

function backToLobby() {
  if (S.view) {
    S.dismissed.add(S.view.table_id);
    saveDismissed();
  }
  S.view = null;
  S.hand = [];
  S.ids = [];
  S.selected = new Set();
  S.target = null;
  if (S.open) {
    S.quiet.unknown_action += 1;
    send({ action: "balance" });
  }
  render();
}

// --- rendering: screens --------------------------------------------------------------------------------

function currentScreen() {
  if (!S.token) return "signin";
  if (S.view) return "table";
  return "lobby";
}

function render() {
  const screen = currentScreen();
  show($("signin-screen"), screen === "signin");
  show($("lobby-screen"), screen === "lobby");
  show($("table-screen"), screen === "table");
  document.body.dataset.screen = screen;
  show($("signout"), Boolean(S.token));
  $("who").textContent = S.token && S.player.name ? t("header.player", { name: S.player.name }) : "";
  renderConnection();
  if (screen === "signin") renderSignin();
  if (screen === "lobby") renderLobby();
  if (screen === "table") renderTable();
}

function renderConnection() {
  const status = $("conn-status");
  let key = "conn.offline";
  if (S.open) key = "conn.online";
  else if (S.ws) key = "conn.connecting";
  status.textContent = S.token ? t(key) : "";
  status.dataset.state = S.open ? "online" : S.ws ? "connecting" : "offline";
  show($("elsewhere-banner"), Boolean(S.token) && S.elsewhere && !S.open);
  const banner = $("reconnect-banner");
  const reconnecting = Boolean(S.token) && !S.stopped && !S.open;
  show(banner, reconnecting);
  if (reconnecting) {
    const text = !S.everOpened && S.failedOpens === 0 ? t("banner.connecting") : S.failedOpens >= 3 ? t("banner.stillTrying", { n: S.failedOpens }) : t("banner.reconnecting");
    $("reconnect-text").textContent = text;
  }
}

function renderSignin() {
  const key = !S.wsUrl ? "signin.noServer" : S.signinError;
  const error = $("signin-error");
  error.textContent = key ? t(key) : "";
  show(error, Boolean(key));
}

// --- rendering: lobby ------------------------------------------------------------------------------

function renderBalance() {
  $("balance-points").textContent = S.balance ? fmtNum(S.balance.points) : t("common.none");
  $("balance-jokers").textContent = S.balance ? fmtNum(S.balance.jokers) : t("common.none");
}

function stakes() {
  const list = Array.isArray(S.config.stakes) ? S.config.stakes.filter((n) => Number.isInteger(n) && n > 0) : [];
  return list.length ? list : DEFAULT_STAKES;
}

function renderStakes() {
  const select = $("arena-stake");
  const chosen = select.value;
  select.replaceChildren(...stakes().map((n) => h("option", { value: String(n) }, t("lobby.stakeOption", { n }))));
  if (chosen && stakes().includes(Number(chosen))) select.value = chosen;
}

function modeText(mode) {
  return t(`mode.${mode}`);
}

function renderLobby() {
  renderBalance();
  renderStakes();
  const queued = S.queued;
  const lobby = S.lobby;
  show($("queued-card"), Boolean(queued));
  show($("friends-lobby-card"), Boolean(lobby));
  show($("queue-expired-card"), Boolean(S.expired) && !queued && !lobby);
  show($("lobby-options"), !queued && !lobby && !S.expired);
  if (queued) {
    const variant = t(`variant.${queued.variant}`);
    $("queued-detail").textContent =
      queued.mode === "arena" ? t("lobby.queuedArena", { stake: queued.stake, variant }) : t("lobby.queuedDetail", { mode: modeText(queued.mode), variant });
    tick();
  }
  if (lobby) renderFriendsLobby(lobby);
}

function renderFriendsLobby(lobby) {
  $("invite-code").textContent = lobby.code;
  $("friends-lobby-detail").textContent = t("lobby.queuedDetail", { mode: modeText(lobby.mode), variant: t(`variant.${lobby.variant}`) });
  const isHost = !S.player.id || lobby.host === S.player.id;
  const items = ["1", "2", "3", "4"].map((seat) => {
    const player = lobby.seats[seat];
    const team = Number(seat) % 2 === 1 ? "A" : "B";
    const tags = [];
    if (player && player.player_id === lobby.host) tags.push(h("span", { class: "tag" }, t("lobby.host")));
    if (player && player.bot) tags.push(h("span", { class: "tag" }, t("lobby.bot")));
    if (player && player.player_id === S.player.id) tags.push(h("span", { class: "tag tag-you" }, t("lobby.you")));
    return h(
      "li",
      { class: `lobby-seat team-${team}${player ? "" : " empty"}`, "data-testid": `lobby-seat-${seat}` },
      h("span", { class: "seat-no" }, t("lobby.seat", { n: Number(seat) })),
      h("span", { class: "seat-who" }, player ? player.name : t("lobby.emptySeat")),
      h("span", { class: "team-tag" }, t(`team.${team}`)),
      tags,
    );
  });
  $("lobby-seats").replaceChildren(...items);
  show($("fill-bots"), isHost);
  show($("bot-level-field"), isHost);
  $("lobby-wait").textContent = isHost ? t("lobby.hostHint") : t("lobby.waitingHost");
}

// --- rendering: the table ---------------------------------------------------------------------------------

function seatInfo(seat) {
  return S.view.seats[String(seat)] || null;
}

/**
 * Which tile of the old hand each tile of the new hand is (its id), or null for a
 * tile that just arrived. Of identical tiles, those the last move used leave the
 * hand first, then unselected ones: melding or discarding one of two identical
 * tiles never leaves the other one selected in its place.
 */
function keptIds(oldHand, oldIds, newHand) {
  const left = multiset(newHand);
  const byTile = new Map();
  oldHand.forEach((tile, i) => {
    if (!byTile.has(tile)) byTile.set(tile, []);
    byTile.get(tile).push(oldIds[i]);
  });
  const leaving = (id) => (S.used && S.used.has(id) ? 0 : S.selected.has(id) ? 2 : 1);
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

function seatName(seat) {
  const info = seatInfo(seat);
  return info && info.player ? info.player.name : t("lobby.seat", { n: seat });
}

function teamOf(seat) {
  return seat % 2 === 1 ? "A" : "B";
}

function legalTypes() {
  return new Set(S.view.view.legal_actions.map((a) => a.type));
}

function pileTop() {
  const pile = S.view.view.discard;
  return pile.length ? pile[pile.length - 1] : null;
}

/**
 * Which moves the buttons offer now, and why one is off (a translation key).
 *
 * A button follows the phase and what the page can see, never the list of
 * suggestions: any meld, any pickup with a pair, is sent, and the server answers
 * a wrong one with its refusal.
 */
function moveOptions() {
  const v = S.view.view;
  const on = { draw: false, take_pile: false, meld: false, discard: false, joker_button: false };
  const why = {};
  if (!playing() || v.turn !== S.view.seat) return { on, why };
  if (v.phase === "draw") {
    on.draw = v.stock_size > 0;
    const top = pileTop();
    const rank = top ? tileInfo(top).rank : null;
    if (!top) why.take_pile = "error.pile_empty";
    else if (isWild(top) || rank === 3) why.take_pile = "error.pile_blocked";
    else if (S.hand.filter((tile) => !isWild(tile) && tileInfo(tile).rank === rank).length < 2) why.take_pile = "why.noPair";
    else on.take_pile = true;
    if (v.joker_button_used) why.joker_button = "why.jokerUsed";
    else if (v.account_jokers < 1) why.joker_button = "why.noSpareJoker";
    else if (!legalTypes().has("joker_button")) why.joker_button = "why.noJokerInStock";
    else on.joker_button = true;
  } else {
    on.meld = v.phase === "play";
    on.discard = true;
  }
  return { on, why };
}

function playing() {
  return S.view && S.view.match.status === "playing" && S.view.view.phase !== "round_over";
}

function renderTable() {
  const screen = $("table-screen");
  screen.dataset.version = String(S.view.version);
  screen.dataset.phase = S.view.view.phase;
  screen.dataset.myTurn = S.view.view.turn === S.view.seat ? "true" : "false";
  renderMatchInfo();
  renderTurn();
  renderBoard();
  renderLastMove();
  renderMelds();
  renderHandArea();
}

function renderMatchInfo() {
  const { match } = S.view;
  const mine = S.view.view.team;
  const other = mine === "A" ? "B" : "A";
  const chips = [
    h("span", { class: "chip", "data-testid": "match-mode" }, modeText(match.mode)),
    h("span", { class: "chip" }, t(`variant.${match.variant}`)),
    match.mode === "arena" && match.stake ? h("span", { class: "chip" }, t("table.stake", { n: match.stake })) : null,
    h("span", { class: "chip", "data-testid": "match-round" }, t("table.round", { n: match.round })),
    h(
      "span",
      { class: "chip chip-score", "data-testid": "match-totals" },
      h("span", { class: `team-${mine}` }, t("table.score", { team: t("team.yours"), n: match.totals[mine] })),
      " · ",
      h("span", { class: `team-${other}` }, t("table.score", { team: t("team.opponents"), n: match.totals[other] })),
    ),
  ];
  $("match-info").replaceChildren(...chips.filter(Boolean));
  const over = match.status !== "playing";
  show($("match-over"), over);
  if (over) $("match-over-text").textContent = t(match.status === "aborted" ? "table.aborted" : "table.finished");
}

function renderTurn() {
  const v = S.view.view;
  const mine = v.turn === S.view.seat;
  let text;
  if (v.phase === "round_over" || S.view.match.status !== "playing") text = t("turn.over");
  else text = mine ? t("turn.yours") : t("turn.other", { name: seatName(v.turn) });
  $("turn-text").textContent = text;
  $("turn-bar").classList.toggle("mine", mine && playing());
  let hint = "";
  if (v.phase === "round_over") hint = "";
  else if (S.view.match.status === "playing") hint = mine ? t(`phase.${v.phase}`) : t("phase.wait", { name: seatName(v.turn) });
  $("phase-hint").textContent = hint;
  tick();
}

function seatEl(seat, position) {
  const v = S.view.view;
  const info = seatInfo(seat);
  const me = S.view.seat;
  const role = seat === me ? "you" : teamOf(seat) === teamOf(me) ? "partner" : "opponent";
  const connected = info ? info.connected : false;
  const bot = info && info.player && info.player.bot;
  const count = v.hand_sizes[String(seat)] ?? 0;
  const turn = v.turn === seat && playing();
  return h(
    "div",
    {
      class: `seat seat-${role} team-${teamOf(seat)}${turn ? " on-turn" : ""}${connected || bot ? "" : " away"}`,
      "data-testid": `seat-${seat}`,
      "data-seat": seat,
      "data-role": role,
      "data-position": position,
      "aria-current": turn ? "true" : null,
    },
    h("span", {
      class: `dot ${connected ? "on" : bot ? "bot" : "off"}`,
      "data-testid": `seat-connected-${seat}`,
      "data-connected": connected ? "true" : "false",
      role: "img",
      "aria-label": t(connected ? "seat.connected" : bot ? "seat.bot" : "seat.disconnected"),
      title: t(connected ? "seat.connected" : bot ? "seat.bot" : "seat.disconnected"),
    }),
    h("span", { class: "seat-name" }, seatName(seat)),
    h("span", { class: "seat-role", title: `${t(`seat.${role}`)} · ${t(`team.${teamOf(seat)}`)}${bot ? ` · ${t("seat.bot")}` : ""}` }, t(`seat.${role}`), h("span", { class: "seat-team" }, ` · ${t(`team.${teamOf(seat)}`)}`)),
    h("span", { class: "seat-count", "data-testid": `seat-count-${seat}`, "data-count": count }, t("seat.tiles", { n: count })),
    turn ? h("span", { class: "visually-hidden" }, t("seat.turn")) : null,
  );
}

function renderBoard() {
  const me = S.view.seat;
  const at = (k) => ((me - 1 + k) % 4) + 1;
  $("seat-bottom").replaceChildren(seatEl(me, "bottom"));
  $("seat-left").replaceChildren(seatEl(at(1), "left"));
  $("seat-top").replaceChildren(seatEl(at(2), "top"));
  $("seat-right").replaceChildren(seatEl(at(3), "right"));

  const v = S.view.view;
  const { on } = moveOptions();
  const canAct = playing() && S.open && !S.busy;
  $("stock-count").textContent = fmtNum(v.stock_size);
  $("stock").setAttribute("aria-label", t("stock.aria", { n: v.stock_size }));
  $("stock").disabled = !(canAct && on.draw);

  const pile = v.discard;
  const top = pile.length ? pile[pile.length - 1] : null;
  const topEl = $("pile-top");
  if (top) {
    const blocked = isWild(top) || tileInfo(top).rank === 3;
    topEl.replaceChildren(...[tileEl(top, { size: "large" }), blocked ? h("span", { class: "blocked", "data-testid": "pile-blocked" }, t("pile.blocked")) : null].filter(Boolean));
    $("pile").setAttribute("aria-label", t("pile.aria", { n: pile.length, top: tileName(top) }));
  } else {
    topEl.replaceChildren(h("span", { class: "pile-empty" }, t("pile.empty")));
    $("pile").setAttribute("aria-label", t("pile.ariaEmpty"));
  }
  $("pile-count").textContent = fmtNum(pile.length);
  $("pile").disabled = !(canAct && on.take_pile);
}

function specText(spec) {
  const wild = (tile) => (spec.rank === 2 ? tile === "JK" : isWild(tile));
  const wilds = spec.tiles.filter(wild).length;
  const naturals = spec.tiles.length - wilds;
  let text = naturals ? t("sugg.spec", { rank: String(spec.rank), n: naturals }) : t("sugg.rank", { rank: String(spec.rank) });
  if (wilds) text += ` ${t("sugg.wilds", { n: wilds })}`;
  return text;
}

function renderLastMove() {
  const last = S.view.last_action;
  const el = $("last-move");
  if (!last || !last.type || !last.seat) {
    el.textContent = "";
    return;
  }
  const name = Number(last.seat) === S.view.seat ? t("seat.you") : seatName(Number(last.seat));
  const params = { name };
  if (last.type === "discard") params.tile = tileName(last.tile);
  if (last.type === "meld") params.specs = (last.melds || []).map(specText).join(", ");
  let text = t(`last.${last.type}`, params);
  if (last.auto) text += ` ${t("last.auto")}`;
  el.textContent = text;
}

function meldEl(meld, team, mine) {
  const wildOf = (tile) => (meld.rank === 2 ? tile === "JK" : isWild(tile));
  const wilds = meld.tiles.filter(wildOf).length;
  const size = meld.tiles.length;
  const compact = meld.compact || size > 5;
  const stripe = meld.stripe || (size >= 7 ? "red" : size === 6 ? "yellow" : null);
  const kind = meld.canasta ? (meld.canasta === "clean" ? t("meld.canastaClean") : t("meld.canastaDirty")) : wilds ? t("meld.dirty") : t("meld.clean");
  const clean = meld.canasta ? meld.canasta === "clean" : wilds === 0;
  const targeted = mine && S.target === meld.rank;
  const faces = compact
    ? [tileEl(meld.tiles[0], { size: "small" }), h("span", { class: "meld-times", "data-testid": "meld-count" }, `×${size}`)]
    : meld.tiles.map((tile) => tileEl(tile, { size: "small" }));
  const props = {
    class: `meld${compact ? " compact" : ""}${stripe ? ` stripe-${stripe}` : ""}${meld.canasta ? " canasta" : ""}${targeted ? " target" : ""}`,
    "data-testid": `meld-${team}-${meld.rank}`,
    "data-rank": meld.rank,
    "data-size": size,
    "data-stripe": stripe || "none",
    "data-compact": compact ? "true" : "false",
    "aria-label": `${t("meld.aria", { rank: String(meld.rank), n: size })}, ${kind}`,
  };
  const inner = [
    h("span", { class: "meld-tiles" }, faces),
    h(
      "span",
      { class: "meld-meta" },
      h("span", { class: `meld-kind ${clean ? "clean" : "dirty"}`, "data-testid": "meld-kind" }, kind),
      compact && wilds ? h("span", { class: "meld-wilds" }, t("meld.wilds", { n: wilds })) : null,
    ),
  ];
  if (mine) {
    return h(
      "button",
      {
        ...props,
        type: "button",
        "aria-pressed": targeted ? "true" : "false",
        title: t("meld.targetHint"),
        onclick: () => {
          if (S.selected.size && moveOptions().on.meld) {
            meldSelection(meld.rank);
            return;
          }
          S.target = S.target === meld.rank ? null : meld.rank;
          renderMelds();
          renderHandArea();
        },
      },
      inner,
    );
  }
  return h("div", { ...props, role: "group" }, inner);
}

function renderMelds() {
  const v = S.view.view;
  const panels = teamOrder().map((team) => {
    const mine = team === v.team;
    const melds = v.melds[team] || [];
    const threes = v.bonus_threes[team] || [];
    const opened = v.opened[team];
    return h(
      "section",
      { class: `team-panel team-${team}${mine ? " mine" : ""}`, "data-testid": `team-${team}`, "aria-label": teamTitle(team) },
      h(
        "header",
        { class: "team-head" },
        h("h3", {}, teamTitle(team)),
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
      melds.length ? h("div", { class: "meld-list" }, melds.map((m) => meldEl(m, team, mine))) : h("p", { class: "empty-note" }, t("melds.none")),
    );
  });
  $("melds").replaceChildren(...panels);
}

function selectedIndices() {
  return S.hand.map((_, i) => i).filter((i) => S.selected.has(S.ids[i]));
}

function selectedTiles() {
  return selectedIndices().map((i) => S.hand[i]);
}

function selectedIds() {
  return selectedIndices().map((i) => S.ids[i]);
}

function renderHandArea() {
  renderHand();
  const tiles = selectedTiles();
  const info = $("selection-info");
  info.textContent = tiles.length ? t("hand.selected", { n: tiles.length, points: tiles.reduce((sum, tile) => sum + tileValue(tile), 0) }) : "";
  show($("clear-selection"), tiles.length > 0 || S.target !== null);
  renderSuggestions();
  renderActions();
}

function renderHand() {
  const hand = $("hand");
  const focused = document.activeElement && document.activeElement.closest && document.activeElement.closest("#hand") ? document.activeElement.dataset.index : null;
  if (!S.hand.length) {
    hand.replaceChildren(h("p", { class: "empty-note" }, t("hand.empty")));
    return;
  }
  const tiles = S.hand.map((tile, i) => {
    const selected = S.selected.has(S.ids[i]);
    const el = tileEl(tile, {
      tag: "button",
      extra: {
        type: "button",
        "data-testid": "hand-tile",
        "data-index": i,
        "aria-pressed": selected ? "true" : "false",
      },
    });
    if (selected) el.classList.add("selected");
    if (S.newTiles.has(i)) el.classList.add("new");
    el.addEventListener("click", () => toggleTile(i));
    return el;
  });
  hand.replaceChildren(...tiles);
  if (focused !== null && focused !== undefined) {
    const again = hand.querySelector(`[data-index="${focused}"]`);
    if (again) again.focus();
  }
}

function toggleTile(i) {
  const id = S.ids[i];
  if (S.selected.has(id)) S.selected.delete(id);
  else S.selected.add(id);
  S.newTiles.delete(i);
  renderHandArea();
}

function clearSelection() {
  S.selected = new Set();
  S.target = null;
  renderMelds();
  renderHandArea();
}

function renderActions() {
  if (!S.view) return;
  const types = legalTypes();
  const { on, why } = moveOptions();
  const canAct = playing() && S.open && !S.busy;
  const buttons = { "act-draw": "draw", "act-take": "take_pile", "act-meld": "meld", "act-discard": "discard", "act-joker": "joker_button" };
  for (const [id, type] of Object.entries(buttons)) {
    const button = $(id);
    button.disabled = !(canAct && on[type]);
    button.dataset.legal = types.has(type) ? "true" : "false";
    button.dataset.why = why[type] || "";
    if (why[type]) button.title = t(why[type]);
    else button.removeAttribute("title");
  }
  $("joker-count").textContent = fmtNum(S.view.view.account_jokers);
  $("stock").disabled = !(canAct && on.draw);
  $("pile").disabled = !(canAct && on.take_pile);
  $("actions").classList.toggle("busy", S.busy);
  let line = $("action-why");
  if (!line) {
    line = h("p", { id: "action-why", class: "hint action-why", "data-testid": "action-why", "aria-live": "polite" });
    $("actions").after(line);
  }
  line.textContent = Object.values(why).map((key) => t(key)).join(" ");
  show(line, Object.keys(why).length > 0);
}

function renderSuggestions() {
  const box = $("suggestions");
  const actions = S.view.view.legal_actions.filter((a) => a.type === "meld" || a.type === "take_pile");
  if (!actions.length || !playing()) {
    box.replaceChildren();
    show(box, false);
    return;
  }
  show(box, true);
  const shown = S.showAllSuggestions ? actions : actions.slice(0, SUGGESTIONS_SHOWN);
  const items = shown.map((action, i) => {
    const specs = action.melds.map(specText).join(" + ");
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
        disabled: !S.open || S.busy ? true : null,
        onclick: () => play(action),
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
    items.push(
      h(
        "button",
        {
          type: "button",
          class: "suggestion more",
          "data-testid": "suggestions-more",
          onclick: () => {
            S.showAllSuggestions = true;
            renderSuggestions();
          },
        },
        t("sugg.more", { n: more }),
      ),
    );
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

// --- building moves from the selection ------------------------------------------------------------------------

/**
 * Meld specs from the selected tiles, one per natural rank (a rank the team has
 * a meld of extends it). The wilds go where they can stand: the meld tapped as
 * target takes them all; otherwise each new meld of two naturals (the pile's top
 * counts for a pickup) gets one, and the rest go to the specs with room left
 * (naturals outnumber wilds, at most three, MELD-2), then to the first spec,
 * for the server to judge. Only wilds selected, and a 2 among them: the meld of
 * twos.
 */
function buildSpecs(tiles, { pileRank = null, target = null, twos = true, melds = [] } = {}) {
  const byRank = new Map();
  const wilds = [];
  for (const tile of tiles) {
    if (isWild(tile)) wilds.push(tile);
    else {
      const { rank } = tileInfo(tile);
      if (!byRank.has(rank)) byRank.set(rank, []);
      byRank.get(rank).push(tile);
    }
  }
  if (pileRank !== null && !byRank.has(pileRank)) return { hint: "hint.selectPair" };
  if (target !== null && wilds.length) {
    if (!byRank.has(target)) byRank.set(target, []);
    byRank.get(target).push(...wilds);
  } else if (wilds.length && !byRank.size) {
    if (!twos || !wilds.some((tile) => tile !== "JK")) return { hint: "hint.wildsNeedRank" };
    byRank.set(2, wilds);
  } else if (wilds.length) {
    placeWilds(byRank, wilds, pileRank, melds);
  }
  if (!byRank.size) return { hint: pileRank !== null ? "hint.selectPair" : "hint.selectMeld" };
  const specs = [...byRank.entries()].sort((a, b) => a[0] - b[0]).map(([rank, list]) => ({ rank, tiles: list }));
  return { specs };
}

function placeWilds(byRank, wilds, pileRank, melds) {
  const existing = new Map(melds.map((m) => [m.rank, m.tiles]));
  const count = (rank) => {
    const tiles = [...(existing.get(rank) || []), ...byRank.get(rank)];
    const wild = tiles.filter((tile) => isWild(tile)).length;
    return { naturals: tiles.length - wild + (rank === pileRank ? 1 : 0), wild };
  };
  const ranks = [...byRank.keys()].sort((a, b) => a - b);
  const rest = [...wilds];
  for (const rank of ranks) {
    const { naturals, wild } = count(rank);
    if (rest.length && !existing.has(rank) && naturals + wild === 2) byRank.get(rank).push(rest.shift());
  }
  while (rest.length) {
    const room = ranks.filter((rank) => {
      const { naturals, wild } = count(rank);
      return wild < Math.min(3, naturals - 1);
    });
    if (!room.length) break;
    room.sort((a, b) => count(b).naturals - count(a).naturals);
    byRank.get(room[0]).push(rest.shift());
  }
  byRank.get(ranks[0]).push(...rest);
}

function doDraw() {
  play({ type: "draw" });
}

function doJoker() {
  play({ type: "joker_button" });
}

function doDiscard() {
  const tiles = selectedTiles();
  if (tiles.length !== 1) {
    showError(t("hint.selectDiscard"));
    return;
  }
  play({ type: "discard", tile: tiles[0] }, selectedIds());
}

function doMeld() {
  meldSelection(S.target);
}

/** The selected tiles as one meld action; ``target`` is the rank of a team meld they join. */
function meldSelection(target) {
  const tiles = selectedTiles();
  if (!tiles.length) {
    showError(t("hint.selectMeld"));
    return;
  }
  const v = S.view.view;
  const built = buildSpecs(tiles, { target, twos: v.variant === "twos-meld", melds: v.melds[v.team] || [] });
  if (built.hint) {
    showError(t(built.hint));
    return;
  }
  play({ type: "meld", melds: built.specs }, selectedIds());
}

function doTakePile() {
  const v = S.view.view;
  const tiles = selectedTiles();
  if (!tiles.length) {
    const offered = v.legal_actions.find((a) => a.type === "take_pile");
    if (offered) play(offered);
    else showError(t("hint.selectPair"));
    return;
  }
  const top = v.discard.length ? v.discard[v.discard.length - 1] : null;
  if (!top) {
    showError(errorText("pile_empty"));
    return;
  }
  const built = buildSpecs(tiles, { pileRank: tileInfo(top).rank, twos: v.variant === "twos-meld", melds: v.melds[v.team] || [] });
  if (built.hint) {
    showError(t(built.hint));
    return;
  }
  play({ type: "take_pile", melds: built.specs }, selectedIds());
}

// --- the clock ----------------------------------------------------------------------------------------------

function tick() {
  const now = Date.now() / 1000;
  if (S.view) {
    const timer = $("turn-timer");
    const deadline = S.view.turn_deadline;
    const visible = typeof deadline === "number" && playing();
    show(timer, visible);
    if (visible) {
      const left = deadline - now;
      timer.textContent = clock(left);
      timer.setAttribute("aria-label", t("turn.timer", { time: clock(left) }));
      timer.classList.toggle("urgent", left <= 10);
    }
  }
  if (S.queued) $("queued-countdown").textContent = clock(S.queued.expires_at - now);
  if (S.queued && now > S.queued.expires_at + QUEUE_GRACE) {
    // The server's word on the ended countdown went missing: ask to leave, so both
    // sides agree, and offer to wait on.
    S.expired = S.queued;
    S.queued = null;
    S.quiet.leave = 1;
    send({ action: "leave" });
    render();
  }
}

// --- wiring -------------------------------------------------------------------------------------------------

function formValues(form) {
  const data = new FormData(form);
  return Object.fromEntries(data.entries());
}

function bind() {
  const select = $("lang");
  select.replaceChildren(...LANGUAGES.map((l) => h("option", { value: l.code, lang: l.code }, l.name)));
  select.addEventListener("change", () => {
    setLang(select.value);
    applyI18n();
    render();
    renderDialog();
  });

  $("error-close").addEventListener("click", hideError);
  $("notice-close").addEventListener("click", () => show($("notice-banner"), false));
  $("signout").addEventListener("click", signout);

  $("signin-form").addEventListener("submit", async (event) => {
    event.preventDefault();
    const name = $("signin-name").value.trim();
    S.signinError = null;
    if (!/^[\p{L}\p{N}_ .'-]{1,24}$/u.test(name)) S.signinError = "signin.badName";
    else {
      try {
        await signin(name);
      } catch (exc) {
        S.signinError = exc.message.startsWith("signin.") ? exc.message : "signin.failed";
      }
    }
    if (S.signinError) {
      renderSignin();
      return;
    }
    S.attempts = 0;
    S.failedOpens = 0;
    S.backoff = BACKOFF_START;
    render();
    connect();
  });

  $("quick-form").addEventListener("submit", (event) => {
    event.preventDefault();
    const { mode, variant } = formValues(event.currentTarget);
    send({ action: "queue", mode, variant });
  });
  $("arena-form").addEventListener("submit", (event) => {
    event.preventDefault();
    const { stake, variant } = formValues(event.currentTarget);
    send({ action: "queue", mode: "arena", variant, stake: Number(stake) });
  });
  $("create-form").addEventListener("submit", (event) => {
    event.preventDefault();
    const { mode, variant } = formValues(event.currentTarget);
    send({ action: "create_table", mode, variant });
  });
  $("join-form").addEventListener("submit", (event) => {
    event.preventDefault();
    const code = $("join-code").value.trim();
    if (code.length < 4 || code.length > 12) {
      showError(t("lobby.codeTooShort"));
      return;
    }
    send({ action: "join_table", code });
  });
  const leave = () => {
    if (send({ action: "leave" })) {
      S.queued = null;
      S.lobby = null;
      render();
    }
  };
  $("queued-leave").addEventListener("click", leave);
  $("play-here").addEventListener("click", connect);
  $("queue-wait-on").addEventListener("click", () => {
    const { mode, variant, stake } = S.expired;
    if (send(mode === "arena" ? { action: "queue", mode, variant, stake } : { action: "queue", mode, variant })) S.expired = null;
    render();
  });
  $("queue-expired-leave").addEventListener("click", () => {
    S.expired = null;
    render();
  });
  $("lobby-leave").addEventListener("click", leave);
  $("fill-bots").addEventListener("click", () => send({ action: "fill_bots", level: $("bot-level").value }));
  $("invite-copy").addEventListener("click", async () => {
    try {
      await navigator.clipboard.writeText($("invite-code").textContent);
      showNotice(t("lobby.copied"));
    } catch {
      /* the code stays visible to copy by hand */
    }
  });

  $("act-draw").addEventListener("click", doDraw);
  $("act-take").addEventListener("click", doTakePile);
  $("act-meld").addEventListener("click", doMeld);
  $("act-discard").addEventListener("click", doDiscard);
  $("act-joker").addEventListener("click", doJoker);
  $("stock").addEventListener("click", doDraw);
  $("pile").addEventListener("click", doTakePile);
  $("clear-selection").addEventListener("click", clearSelection);
  $("match-over-back").addEventListener("click", backToLobby);
  $("round-dialog").addEventListener("close", onDialogClose);
  $("match-dialog").addEventListener("close", onDialogClose);

  document.addEventListener("visibilitychange", () => {
    // Phones freeze sockets in the background: come back quickly when shown again.
    if (document.visibilityState === "visible" && S.token && !S.open && !S.stopped) {
      S.backoff = BACKOFF_START;
      if (!S.ws) connect();
    }
  });
  window.addEventListener("online", () => {
    if (S.token && !S.open && !S.stopped && !S.ws) connect();
  });
  setInterval(tick, 250);
}

async function main() {
  const params = new URLSearchParams(location.search);
  const lang = setLang(initialLang(params.get("lang")), { save: params.has("lang") });
  bind();
  $("lang").value = lang;
  applyI18n();
  loadDismissed();

  const { config, base } = await loadConfig();
  S.config = config || {};
  S.wsUrl = params.get("ws") || S.config.ws_url || null;
  const signinUrl = params.get("signin") || S.config.signin_url || null;
  S.signinUrl = signinUrl ? new URL(signinUrl, base).href : null;

  const urlToken = params.get("token");
  if (urlToken) {
    setToken(urlToken, { fromUrl: true });
    // Keep the token out of the address bar (and out of shared links).
    params.delete("token");
    const rest = params.toString();
    history.replaceState(null, "", `${location.pathname}${rest ? `?${rest}` : ""}${location.hash}`);
  } else {
    const saved = sessionStorage.getItem(TOKEN_KEY);
    if (saved) setToken(saved);
  }
  const savedName = sessionStorage.getItem(NAME_KEY);
  if (savedName) $("signin-name").value = savedName;
  render();
  if (S.token) connect();
}

main();
