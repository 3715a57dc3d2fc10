// The WebSocket protocol of services/common/protocol.py, without any DOM: connect,
// reconnect with back-off, send, and parse what the server sends. A mobile or other
// web client reuses this module as it is; the page only listens to its callbacks.

export const BACKOFF_START = 500;
export const BACKOFF_MAX = 8000;
/** Silence after which a `ping` goes out: well under the server's idle close
 * (`welcome.idle_seconds`, 600 s by default), so an idle lobby host keeps their lobby. */
export const PING_AFTER = 240000;

/** A server frame as an object with a `type`, or null for anything else. */
export function parseMessage(data) {
  let message;
  try {
    message = JSON.parse(data);
  } catch {
    return null;
  }
  if (!message || typeof message !== "object" || Array.isArray(message) || typeof message.type !== "string") return null;
  return message;
}

/** The socket address: the configured one, made ws(s) like the page, with the token. */
export function wsAddress(wsUrl, token, pageUrl) {
  const page = new URL(pageUrl);
  const url = new URL(wsUrl, page.href);
  if (url.protocol === "http:") url.protocol = "ws:";
  if (url.protocol === "https:") url.protocol = "wss:";
  if (page.protocol === "https:" && url.protocol === "ws:") url.protocol = "wss:";
  url.searchParams.set("token", token);
  return url.href;
}

/**
 * One player's connection. `address()` gives the URL to open (null: nothing to open);
 * `mayOpen()` false stops an attempt (e.g. the token expired: the owner signs in again).
 * Callbacks: onMessage(message), onOpen(), onStatus(status), onRefused() after three
 * refused opens in a row (most likely a token the server no longer accepts).
 */
export class Connection {
  constructor({ address, mayOpen = () => true, onMessage = () => {}, onOpen = () => {}, onStatus = () => {}, onRefused = () => {}, WebSocketImpl = globalThis.WebSocket, timers = globalThis }) {
    Object.assign(this, { address, mayOpen, onMessage, onOpen, onStatus, onRefused, WebSocketImpl, timers });
    this.ws = null;
    this.open = false;
    this.everOpened = false;
    this.failedOpens = 0;
    this.backoff = BACKOFF_START;
    this.stopped = true;
    this.reconnectTimer = null;
    this.pingTimer = null;
    this.pingAfter = PING_AFTER;
  }

  /** What the page shows of the connection. */
  status() {
    return {
      open: this.open,
      connecting: Boolean(this.ws) && !this.open,
      stopped: this.stopped,
      everOpened: this.everOpened,
      failedOpens: this.failedOpens,
    };
  }

  changed() {
    this.onStatus(this.status());
  }

  connect() {
    this.timers.clearTimeout(this.reconnectTimer);
    this.stopped = false;
    const Impl = this.WebSocketImpl;
    if (this.ws && (this.ws.readyState === Impl.CONNECTING || this.ws.readyState === Impl.OPEN)) return;
    const url = this.address();
    if (!url) return;
    if (!this.mayOpen()) return;
    let opened = false;
    let ws;
    try {
      ws = new Impl(url);
    } catch {
      this.scheduleReconnect(false);
      return;
    }
    this.ws = ws;
    this.changed();
    ws.addEventListener("open", () => {
      if (this.ws !== ws) return;
      opened = true;
      this.open = true;
      this.everOpened = true;
      this.failedOpens = 0;
      this.backoff = BACKOFF_START;
      ws.send(JSON.stringify({ action: "sync" }));
      ws.send(JSON.stringify({ action: "balance" }));
      this.keepAlive();
      this.onOpen();
      this.changed();
    });
    ws.addEventListener("message", (event) => {
      if (this.ws !== ws) return;
      const message = parseMessage(event.data);
      if (message && message.type === "welcome" && message.idle_seconds > 0) this.idleSeconds(message.idle_seconds);
      if (message) this.onMessage(message);
    });
    ws.addEventListener("close", () => {
      if (this.ws !== ws) return;
      this.ws = null;
      this.open = false;
      this.timers.clearTimeout(this.pingTimer);
      this.scheduleReconnect(opened);
    });
  }

  scheduleReconnect(wasOpen) {
    if (this.stopped) return;
    if (!wasOpen) this.failedOpens += 1;
    this.changed();
    if (this.failedOpens >= 3 && this.failedOpens % 3 === 0) this.onRefused();
    const delay = this.backoff;
    this.backoff = Math.min(this.backoff * 2, BACKOFF_MAX);
    this.reconnectTimer = this.timers.setTimeout(() => this.connect(), delay);
  }

  /** Come back quickly (the page is shown again, the network is back). */
  hurry() {
    this.backoff = BACKOFF_START;
    if (!this.open && !this.stopped && !this.ws) this.connect();
  }

  /** A fresh start after a sign-in: no failures remembered. */
  reset() {
    this.failedOpens = 0;
    this.backoff = BACKOFF_START;
  }

  disconnect() {
    this.stopped = true;
    this.timers.clearTimeout(this.reconnectTimer);
    this.timers.clearTimeout(this.pingTimer);
    if (this.ws) {
      const ws = this.ws;
      this.ws = null;
      ws.close();
    }
    this.open = false;
    this.changed();
  }

  /** Sends `message` if the socket is open; false otherwise (nothing is queued). */
  send(message) {
    if (!this.ws || !this.open || this.ws.readyState !== this.WebSocketImpl.OPEN) return false;
    this.ws.send(JSON.stringify(message));
    this.keepAlive();
    return true;
  }

  /** The server closes a connection that sends nothing for `seconds`: ping at under half that. */
  idleSeconds(seconds) {
    this.pingAfter = Math.min(PING_AFTER, seconds * 400);
    if (this.open) this.keepAlive();
  }

  /** Restarts the silence count: a `ping` goes out once nothing was sent for `pingAfter`. */
  keepAlive() {
    this.timers.clearTimeout(this.pingTimer);
    this.pingTimer = this.timers.setTimeout(() => this.send({ action: "ping" }), this.pingAfter);
  }
}
