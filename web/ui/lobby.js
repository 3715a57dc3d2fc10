// The header, the connection banners, the sign-in form and the lobby, drawn from the state.

import { fmtNum, t } from "../i18n.js";
import { hostName, hosting } from "../state.js";
import { $, clock, h, show } from "./dom.js";

const DEFAULT_STAKES = [100, 500, 1000];

export function renderConnection(state, conn) {
  const status = $("conn-status");
  let key = "conn.offline";
  if (conn.open) key = "conn.online";
  else if (conn.connecting) key = "conn.connecting";
  status.textContent = state.signedIn ? t(key) : "";
  status.dataset.state = conn.open ? "online" : conn.connecting ? "connecting" : "offline";
  show($("elsewhere-banner"), state.signedIn && state.elsewhere && !conn.open);
  const reconnecting = state.signedIn && !conn.stopped && !conn.open;
  show($("reconnect-banner"), reconnecting);
  if (reconnecting) {
    const text = !conn.everOpened && conn.failedOpens === 0 ? t("banner.connecting") : conn.failedOpens >= 3 ? t("banner.stillTrying", { n: conn.failedOpens }) : t("banner.reconnecting");
    $("reconnect-text").textContent = text;
  }
}

export function renderHeader(state) {
  show($("signout"), state.signedIn);
  $("who").textContent = state.signedIn && state.player.name ? t("header.player", { name: state.player.name }) : "";
}

/** `key`: the translation key of the form's message, if any. */
export function renderSignin(key) {
  const error = $("signin-error");
  error.textContent = key ? t(key) : "";
  show(error, Boolean(key));
}

export function renderBalance(state) {
  $("balance-points").textContent = state.balance ? fmtNum(state.balance.points) : t("common.none");
  $("balance-jokers").textContent = state.balance ? fmtNum(state.balance.jokers) : t("common.none");
}

export function stakes(config) {
  const list = Array.isArray(config.stakes) ? config.stakes.filter((n) => Number.isInteger(n) && n > 0) : [];
  return list.length ? list : DEFAULT_STAKES;
}

function renderStakes(config) {
  const select = $("arena-stake");
  const chosen = select.value;
  const offered = stakes(config);
  select.replaceChildren(...offered.map((n) => h("option", { value: String(n) }, t("lobby.stakeOption", { n }))));
  if (chosen && offered.includes(Number(chosen))) select.value = chosen;
}

export function renderQueueClock(state, now) {
  if (state.queued) $("queued-countdown").textContent = clock(state.queued.expires_at - now);
}

export function renderLobby(state, config) {
  renderBalance(state);
  renderStakes(config);
  const { queued, lobby } = state;
  show($("queued-card"), Boolean(queued));
  show($("friends-lobby-card"), Boolean(lobby));
  show($("queue-expired-card"), Boolean(state.expired) && !queued && !lobby);
  show($("lobby-options"), !queued && !lobby && !state.expired);
  show($("rematch-card"), Boolean(state.rematch) && !queued && !lobby);
  if (state.rematch) $("rematch-text").textContent = t("rematch.offered", { name: hostName(state.rematch) });
  if (queued) {
    const variant = t(`variant.${queued.variant}`);
    $("queued-detail").textContent =
      queued.mode === "arena" ? t("lobby.queuedArena", { stake: queued.stake, variant }) : t("lobby.queuedDetail", { mode: t(`mode.${queued.mode}`), variant });
    // MATCH-3: a queue seats players only (a local stack's fillers sign in as players too),
    // so its match is never practice.
    $("queued-hint").textContent = t(queued.mode === "arena" ? "lobby.queuedArenaHint" : "lobby.queuedHint");
    renderQueueClock(state, Date.now() / 1000);
  }
  if (lobby) renderFriendsLobby(lobby);
}

function renderFriendsLobby(lobby) {
  $("invite-code").textContent = lobby.code;
  $("friends-lobby-detail").textContent = t("lobby.queuedDetail", { mode: t(`mode.${lobby.mode}`), variant: t(`variant.${lobby.variant}`) });
  const me = lobby.you;
  const isHost = hosting(lobby);
  const items = ["1", "2", "3", "4"].map((seat) => {
    const awaited = (lobby.awaiting || {})[seat];
    const player = lobby.seats[seat];
    const team = lobby.teams[seat];
    const tags = [];
    if (awaited) tags.push(h("span", { class: "tag" }, t("lobby.awaited")));
    if (player && player.player_id === lobby.host) tags.push(h("span", { class: "tag" }, t("lobby.host")));
    if (player && player.bot) tags.push(h("span", { class: "tag" }, t("lobby.bot")));
    if (player && player.player_id === me) tags.push(h("span", { class: "tag tag-you" }, t("lobby.you")));
    return h(
      "li",
      { class: `lobby-seat team-${team}${player ? "" : " empty"}`, "data-testid": `lobby-seat-${seat}` },
      h("span", { class: "seat-no" }, t("lobby.seat", { n: Number(seat) })),
      h("span", { class: "seat-who" }, player ? player.name : awaited ? awaited.name : t("lobby.emptySeat")),
      h("span", { class: "team-tag" }, t(`team.${team}`)),
      tags,
    );
  });
  $("lobby-seats").replaceChildren(...items);
  show($("fill-bots"), isHost);
  show($("bot-level-field"), isHost);
  $("lobby-wait").textContent = `${isHost ? t("lobby.hostHint") : t("lobby.waitingHost")} ${t("lobby.practiceHint")}`;
}
