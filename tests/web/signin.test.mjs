// web/signin.js under node: the local sign-in, the code flow with PKCE, refresh before expiry.
// Run with the other client modules: node --test tests/web/ (make test).

import assert from "node:assert/strict";
import { createHash, webcrypto } from "node:crypto";
import { test } from "node:test";

import { REFRESH_MARGIN, SignIn, authConfig, tokenClaims } from "../../web/signin.js";

const NOW = 1_800_000_000_000;

function b64url(text) {
  return Buffer.from(text).toString("base64url");
}

function jwt(claims) {
  return `${b64url(JSON.stringify({ alg: "RS256", kid: "k1" }))}.${b64url(JSON.stringify(claims))}.c2ln`;
}

class Store {
  constructor() {
    this.items = new Map();
  }
  getItem(key) {
    return this.items.has(key) ? this.items.get(key) : null;
  }
  setItem(key, value) {
    this.items.set(key, String(value));
  }
  removeItem(key) {
    this.items.delete(key);
  }
}

/** A browser as signin.js sees it: every request answered by `answer`, timers kept. */
function browser(href, answer) {
  const env = {
    requests: [],
    timers: [],
    session: new Store(),
    keep: new Store(),
    crypto: webcrypto,
    now: () => NOW,
    location: { href, assigned: null, assign(url) { this.assigned = url; } },
    history: { replaceState(_state, _title, url) { env.location.href = new URL(url, env.location.href).href; } },
    setTimeout: (fn, ms) => env.timers.push({ fn, ms }) - 1,
    clearTimeout: (id) => {
      if (id !== null && id !== undefined && env.timers[id]) env.timers[id].cleared = true;
    },
    fetch: async (url, init = {}) => {
      env.requests.push({ url: String(url), ...init });
      const { status = 200, body } = await answer(String(url), init);
      return { status, ok: status >= 200 && status < 300, json: async () => body };
    },
  };
  return env;
}

const COGNITO = {
  ws_url: "wss://abc.execute-api.eu-west-1.amazonaws.com/prod",
  auth: {
    kind: "cognito",
    region: "eu-west-1",
    user_pool_id: "eu-west-1_Ab12Cd34E",
    client_id: "client-1",
    domain: "https://prod-canasta-123.auth.eu-west-1.amazoncognito.com",
  },
};

test("the name shown comes from the claims Cognito and the local issuer write", () => {
  assert.deepEqual(tokenClaims(jwt({ sub: "u1", "cognito:username": "ann", exp: 5 })), { id: "u1", name: "ann", exp: 5 });
  assert.equal(tokenClaims(jwt({ sub: "u1", preferred_username: "Ann", "cognito:username": "ann" })).name, "Ann");
  assert.equal(tokenClaims(jwt({ sub: "p-1", name: "Bea" })).name, "Bea");
  assert.deepEqual(tokenClaims("garbage"), { id: null, name: null, exp: null });
});

test("configuration picks the issuer: local, Cognito, OIDC, or nobody", () => {
  const base = "http://127.0.0.1:8080/config.json";
  assert.deepEqual(authConfig({ signin_url: "/api/signin" }, base), { kind: "local", signinUrl: "http://127.0.0.1:8080/api/signin" });
  assert.equal(authConfig(COGNITO, base).endpoints.token, "https://prod-canasta-123.auth.eu-west-1.amazoncognito.com/oauth2/token");
  assert.equal(authConfig({ auth: { kind: "oidc", issuer: "https://id.example/r/", client_id: "c" } }, base).issuer, "https://id.example/r");
  assert.equal(authConfig({}, base), null);
  assert.equal(new SignIn(null, browser(base, () => ({}))).available, false);
});

test("local sign-in sends the name's secret once this browser has one", async () => {
  const env = browser("http://127.0.0.1:8080/", (url, init) => ({
    body: { token: jwt({ sub: "p-ann", name: "Ann", exp: NOW / 1000 + 3600 }), player_id: "p-ann", name: "Ann", secret: "s3cret" },
  }));
  const signin = new SignIn(authConfig({ signin_url: "/api/signin" }, "http://127.0.0.1:8080/"), env);
  assert.equal(signin.needsName, true);
  const first = await signin.signIn("Ann");
  assert.equal(first.player_id, "p-ann");
  assert.equal(JSON.parse(env.requests[0].body).secret, undefined);
  await signin.signIn(" ann ");
  assert.equal(JSON.parse(env.requests[1].body).secret, "s3cret");
});

test("local sign-in errors keep their translation keys", async () => {
  for (const [status, key] of [[400, "signin.badName"], [409, "signin.nameTaken"], [500, "signin.failed"]]) {
    const signin = new SignIn(authConfig({ signin_url: "/s" }, "http://x/"), browser("http://x/", () => ({ status, body: {} })));
    await assert.rejects(signin.signIn("Ann"), new RegExp(key));
  }
});

test("Cognito: PKCE to the hosted sign-in, the code traded back, the address cleaned", async () => {
  const idToken = jwt({ sub: "u-1", "cognito:username": "ann", exp: NOW / 1000 + 3600, token_use: "id" });
  const env = browser("https://play.example/canasta/?lang=fr", () => ({
    body: { id_token: idToken, access_token: "a", refresh_token: "r-1", expires_in: 3600, token_type: "Bearer" },
  }));
  const signin = new SignIn(authConfig(COGNITO, "https://play.example/canasta/config.json"), env);
  assert.equal(signin.needsName, false);
  assert.equal(await signin.signIn(""), null);
  const authorize = new URL(env.location.assigned);
  assert.equal(authorize.origin + authorize.pathname, "https://prod-canasta-123.auth.eu-west-1.amazoncognito.com/oauth2/authorize");
  const q = Object.fromEntries(authorize.searchParams);
  assert.equal(q.response_type, "code");
  assert.equal(q.client_id, "client-1");
  assert.equal(q.redirect_uri, "https://play.example/canasta/");
  assert.equal(q.scope, "openid profile");
  assert.equal(q.code_challenge_method, "S256");
  const flow = JSON.parse(env.session.getItem("canasta.signin-flow"));
  assert.equal(q.code_challenge, createHash("sha256").update(flow.verifier).digest("base64url"));

  env.location.href = `https://play.example/canasta/?lang=fr&code=the-code&state=${q.state}`;
  const back = await signin.completeRedirect();
  assert.deepEqual(back, { token: idToken, player_id: "u-1", name: "ann" });
  assert.equal(env.location.href, "https://play.example/canasta/?lang=fr");
  const exchange = env.requests.at(-1);
  assert.equal(exchange.url, "https://prod-canasta-123.auth.eu-west-1.amazoncognito.com/oauth2/token");
  const form = Object.fromEntries(new URLSearchParams(exchange.body));
  assert.deepEqual(form, {
    grant_type: "authorization_code",
    client_id: "client-1",
    code: "the-code",
    redirect_uri: "https://play.example/canasta/",
    code_verifier: flow.verifier,
  });
  assert.equal(await signin.completeRedirect(), null, "nothing to trade once the address is clean");
});

test("a code whose state does not match is refused", async () => {
  const env = browser("https://play.example/", () => ({ body: {} }));
  const signin = new SignIn(authConfig(COGNITO, "https://play.example/"), env);
  await signin.signIn("");
  env.location.href = "https://play.example/?code=c&state=forged";
  await assert.rejects(signin.completeRedirect(), /signin.failed/);
  assert.equal(env.requests.length, 0, "no code was traded");
});

test("the token is renewed before it expires, with the refresh token", async () => {
  const exp = NOW / 1000 + 3600;
  const fresh = jwt({ sub: "u-1", "cognito:username": "ann", exp: exp + 3600 });
  const env = browser("https://play.example/", () => ({ body: { id_token: fresh, access_token: "a" } }));
  env.session.setItem("canasta.refresh-token", JSON.stringify("r-1"));
  const signin = new SignIn(authConfig(COGNITO, "https://play.example/"), env);
  const got = [];
  signin.keepFresh(jwt({ sub: "u-1", exp }), (body) => got.push(body));
  const timer = env.timers.at(-1);
  assert.equal(timer.ms, (3600 - REFRESH_MARGIN) * 1000);
  await timer.fn();
  assert.deepEqual(got, [{ token: fresh, player_id: "u-1", name: "ann" }]);
  const form = Object.fromEntries(new URLSearchParams(env.requests.at(-1).body));
  assert.deepEqual(form, { grant_type: "refresh_token", client_id: "client-1", refresh_token: "r-1" });
  assert.equal(JSON.parse(env.session.getItem("canasta.refresh-token")), "r-1", "Cognito keeps the refresh token");
});

test("a refused refresh token is forgotten: the next sign-in is a full one", async () => {
  const env = browser("https://play.example/", () => ({ status: 400, body: { error: "invalid_grant" } }));
  env.session.setItem("canasta.refresh-token", JSON.stringify("r-old"));
  const signin = new SignIn(authConfig(COGNITO, "https://play.example/"), env);
  await assert.rejects(signin.refresh(), /signin.expired/);
  assert.equal(env.session.getItem("canasta.refresh-token"), null);
  assert.equal(await signin.refresh(), null);
});

test("locally the token is renewed by signing in again under the same name", async () => {
  const exp = NOW / 1000 + 3600;
  const env = browser("http://127.0.0.1:8080/", () => ({
    body: { token: jwt({ sub: "p-ann", name: "Ann", exp: exp + 3600 }), player_id: "p-ann", name: "Ann" },
  }));
  const signin = new SignIn(authConfig({ signin_url: "/api/signin" }, "http://127.0.0.1:8080/"), env);
  const got = [];
  signin.keepFresh(jwt({ sub: "p-ann", name: "Ann", exp }), (body) => got.push(body));
  await env.timers.at(-1).fn();
  assert.equal(got.length, 1);
  assert.equal(JSON.parse(env.requests[0].body).name, "Ann");
  signin.keepFresh(got[0].token, () => {});
  signin.signOut();
  assert.equal(env.timers.at(-1).cleared, true);
});

test("an OIDC issuer's endpoints come from its discovery document", async () => {
  const env = browser("https://play.example/", (url) => ({
    body: { authorization_endpoint: "https://id.example/auth", token_endpoint: "https://id.example/token" },
  }));
  const signin = new SignIn(authConfig({ auth: { kind: "oidc", issuer: "https://id.example", client_id: "canasta" } }, "https://play.example/"), env);
  await signin.signIn("");
  assert.equal(env.requests[0].url, "https://id.example/.well-known/openid-configuration");
  assert.ok(env.location.assigned.startsWith("https://id.example/auth?"));
});
