// The protocol module under node's own test runner: no DOM, a scripted WebSocket.

import assert from "node:assert/strict";
import { test } from "node:test";

import { BACKOFF_MAX, BACKOFF_START, Connection, PING_AFTER, parseMessage, wsAddress } from "../../web/protocol.js";

class FakeSocket {
  static CONNECTING = 0;
  static OPEN = 1;
  static made = [];
  constructor(url) {
    this.url = url;
    this.readyState = FakeSocket.CONNECTING;
    this.sent = [];
    this.listeners = {};
    FakeSocket.made.push(this);
  }
  addEventListener(type, fn) {
    (this.listeners[type] ||= []).push(fn);
  }
  emit(type, event = {}) {
    for (const fn of this.listeners[type] || []) fn(event);
  }
  send(data) {
    this.sent.push(JSON.parse(data));
  }
  opened() {
    this.readyState = FakeSocket.OPEN;
    this.emit("open");
  }
  close() {
    this.readyState = 3;
    this.emit("close");
  }
}

/** Timers fired by hand: `fire()` runs the oldest pending one, `fire(ms)` the oldest of that delay. */
function fakeTimers() {
  let ids = 0;
  const timers = {
    pending: [],
    setTimeout: (fn, ms) => {
      ids += 1;
      timers.pending.push({ fn, ms, id: ids });
      return ids;
    },
    clearTimeout: (id) => {
      timers.pending = timers.pending.filter((p) => p.id !== id);
    },
  };
  timers.fire = (ms) => {
    const i = ms === undefined ? 0 : timers.pending.findIndex((p) => p.ms === ms);
    assert.ok(i >= 0 && timers.pending.length, `no timer of ${ms} ms pending`);
    timers.pending.splice(i, 1)[0].fn();
  };
  timers.delays = () => timers.pending.map((p) => p.ms);
  return timers;
}

function connection(extra = {}) {
  FakeSocket.made = [];
  const timers = fakeTimers();
  const seen = { messages: [], refused: 0, opens: 0 };
  const conn = new Connection({
    address: () => "ws://game.test/ws?token=x",
    onMessage: (m) => seen.messages.push(m),
    onOpen: () => (seen.opens += 1),
    onRefused: () => (seen.refused += 1),
    WebSocketImpl: FakeSocket,
    timers,
    ...extra,
  });
  return { conn, timers, seen };
}

test("parseMessage keeps only objects with a type", () => {
  assert.deepEqual(parseMessage('{"type":"view","version":3}'), { type: "view", version: 3 });
  for (const bad of ["not json", "[1]", "null", '"view"', '{"version":3}', '{"type":7}']) assert.equal(parseMessage(bad), null, bad);
});

test("wsAddress follows the page's scheme and carries the token", () => {
  assert.equal(wsAddress("/ws", "tok", "http://127.0.0.1:8080/"), "ws://127.0.0.1:8080/ws?token=tok");
  assert.equal(wsAddress("https://api.example/prod", "a b", "https://site.example/"), "wss://api.example/prod?token=a+b");
  assert.equal(wsAddress("ws://api.example/ws", "t", "https://site.example/"), "wss://api.example/ws?token=t");
});

test("every (re)connect asks for the table and the balance", () => {
  const { conn, seen } = connection();
  conn.connect();
  const ws = FakeSocket.made[0];
  assert.equal(ws.url, "ws://game.test/ws?token=x");
  ws.opened();
  assert.deepEqual(ws.sent, [{ action: "sync" }, { action: "balance" }]);
  assert.equal(seen.opens, 1);
  assert.equal(conn.status().open, true);
  assert.equal(conn.send({ action: "ping" }), true);
  assert.deepEqual(ws.sent.at(-1), { action: "ping" });
});

test("server frames are parsed; those of a replaced socket are ignored", () => {
  const { conn, seen, timers } = connection();
  conn.connect();
  const first = FakeSocket.made[0];
  first.opened();
  first.emit("message", { data: '{"type":"balance","points":5,"jokers":1}' });
  first.emit("message", { data: "garbage" });
  first.close();
  timers.fire();
  first.emit("message", { data: '{"type":"balance","points":9,"jokers":1}' });
  assert.deepEqual(seen.messages, [{ type: "balance", points: 5, jokers: 1 }]);
  assert.equal(FakeSocket.made.length, 2);
});

test("a dropped socket is retried with a doubling back-off, capped", () => {
  const { conn, timers } = connection();
  conn.connect();
  const delays = [];
  for (let i = 0; i < 7; i += 1) {
    FakeSocket.made.at(-1).close();
    assert.equal(timers.pending.length, 1, "one retry at a time");
    delays.push(timers.pending[0].ms);
    timers.fire();
  }
  assert.equal(delays[0], BACKOFF_START);
  assert.deepEqual(delays.slice(0, 5), [500, 1000, 2000, 4000, 8000]);
  assert.ok(delays.every((d) => d <= BACKOFF_MAX));
  FakeSocket.made.at(-1).opened();
  FakeSocket.made.at(-1).close();
  assert.deepEqual(timers.delays(), [BACKOFF_START], "an open resets the back-off (and the closed socket's ping is gone)");
});

test("hurry and reset start the back-off again", () => {
  const { conn, timers } = connection();
  conn.connect();
  for (let i = 0; i < 4; i += 1) {
    FakeSocket.made.at(-1).close();
    timers.fire();
  }
  FakeSocket.made.at(-1).close();
  assert.deepEqual(timers.delays(), [8000]);
  conn.hurry();
  assert.equal(FakeSocket.made.length, 6, "hurry opens at once, not after the pending wait");
  FakeSocket.made.at(-1).close();
  assert.equal(timers.pending.at(-1).ms, BACKOFF_START);
  timers.fire();
  FakeSocket.made.at(-1).close();
  timers.fire();
  FakeSocket.made.at(-1).close();
  assert.equal(timers.pending.at(-1).ms, 2000);
  conn.reset();
  timers.fire();
  FakeSocket.made.at(-1).close();
  assert.equal(timers.pending.at(-1).ms, BACKOFF_START);
});

test("a ping goes out after four minutes of silence, and every message restarts the count", () => {
  const { conn, timers } = connection();
  conn.connect();
  const ws = FakeSocket.made[0];
  ws.opened();
  assert.equal(PING_AFTER, 240000);
  assert.deepEqual(timers.delays(), [PING_AFTER]);
  conn.send({ action: "leave" });
  assert.deepEqual(timers.delays(), [PING_AFTER], "a message sent replaces the pending ping");
  timers.fire(PING_AFTER);
  assert.deepEqual(ws.sent.at(-1), { action: "ping" });
  assert.deepEqual(timers.delays(), [PING_AFTER], "the ping itself counts as a message: the next one follows");
  timers.fire(PING_AFTER);
  assert.deepEqual(ws.sent.slice(-2), [{ action: "ping" }, { action: "ping" }]);
  ws.emit("message", { data: '{"type":"welcome","player_id":"p","name":"A","protocol":1,"idle_seconds":300}' });
  assert.deepEqual(timers.delays(), [120000], "a shorter idle close pings sooner");
  conn.disconnect();
  assert.deepEqual(timers.delays(), [], "no ping after a disconnect");
});

test("three refused opens in a row tell the owner (the token is likely stale)", () => {
  const { conn, timers, seen } = connection();
  conn.connect();
  for (let i = 0; i < 3; i += 1) {
    FakeSocket.made.at(-1).close();
    timers.fire();
  }
  assert.equal(seen.refused, 1);
  assert.equal(conn.status().failedOpens, 3);
});

test("nothing is sent while closed; a disconnect stops the retries", () => {
  const { conn, timers } = connection();
  assert.equal(conn.send({ action: "sync" }), false);
  conn.connect();
  assert.equal(conn.send({ action: "sync" }), false, "still connecting");
  FakeSocket.made[0].opened();
  conn.disconnect();
  assert.equal(conn.status().stopped, true);
  assert.equal(timers.pending.length, 0);
  assert.equal(conn.send({ action: "sync" }), false);
});

test("mayOpen false stops an attempt before any socket", () => {
  const { conn } = connection({ mayOpen: () => false });
  conn.connect();
  assert.equal(FakeSocket.made.length, 0);
});
