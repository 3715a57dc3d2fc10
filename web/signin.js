// Sign-in from configuration, and a player token kept fresh.
//
// `auth` in config.json names whoever issues the player's token (a JWT):
//   {kind: "local", signin_url}                               the local stack's issuer
//   {kind: "cognito", region, user_pool_id, client_id, domain} the stack's Cognito user pool
//   {kind: "oidc", issuer, client_id, scope?}                  the platform's OpenID Connect issuer
// A config without `auth` but with `signin_url` is the local stack.
//
// Local: a name is the account; the first sign-in under a name gets a secret that this
// browser keeps, and a later sign-in under the name must show it (the server refuses others).
// Cognito and OIDC: the authorization code flow with PKCE (a public client, no secret).
// signIn() leaves the page for the provider's sign-in page; back on this page,
// completeRedirect() trades the code for tokens. The ID token is the player token.
// keepFresh() renews it REFRESH_MARGIN seconds before it expires (the refresh token, or
// locally a new sign-in under the same name), so every reconnect opens with a valid token.

export const REFRESH_MARGIN = 120; // seconds before exp
const NAME_SECRET_PREFIX = "canasta.name-secret.";
const REFRESH_KEY = "canasta.refresh-token";
const FLOW_KEY = "canasta.signin-flow";
const NAME_CLAIMS = ["preferred_username", "name", "cognito:username", "username"];

function b64url(bytes) {
  let text = "";
  for (const byte of bytes) text += String.fromCharCode(byte);
  return btoa(text).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

/** The claims of a token (id, name, expiry), read without checking: the server checks. */
export function tokenClaims(token) {
  try {
    const payload = token.split(".")[1];
    const text = atob(payload.replace(/-/g, "+").replace(/_/g, "/") + "=".repeat((4 - (payload.length % 4)) % 4));
    const claims = JSON.parse(new TextDecoder().decode(Uint8Array.from(text, (c) => c.charCodeAt(0))));
    const name = NAME_CLAIMS.map((key) => claims[key]).find((value) => typeof value === "string" && value.trim());
    return { id: claims.sub ?? null, name: name ? name.trim().slice(0, 32) : null, exp: claims.exp ?? null };
  } catch {
    return { id: null, name: null, exp: null };
  }
}

/** `auth` from config.json (or the older `signin_url` alone), with URLs made absolute. */
export function authConfig(config, base, signinUrl = null) {
  const auth = config && typeof config.auth === "object" && config.auth ? config.auth : null;
  const local = signinUrl || (auth && auth.kind === "local" ? auth.signin_url : null) || (!auth && config ? config.signin_url : null);
  if (local && (!auth || auth.kind === "local")) return { kind: "local", signinUrl: new URL(local, base).href };
  if (auth && auth.kind === "cognito" && auth.domain && auth.client_id) {
    const domain = auth.domain.replace(/\/+$/, "");
    return {
      kind: "cognito",
      clientId: auth.client_id,
      scope: "openid profile",
      endpoints: { authorize: `${domain}/oauth2/authorize`, token: `${domain}/oauth2/token`, logout: `${domain}/logout` },
    };
  }
  if (auth && auth.kind === "oidc" && auth.issuer && auth.client_id) {
    return { kind: "oidc", clientId: auth.client_id, scope: auth.scope || "openid profile", issuer: auth.issuer.replace(/\/+$/, "") };
  }
  return null;
}

export class SignIn {
  /**
   * @param auth what authConfig() made of the configuration (null: nobody issues tokens)
   * @param env what the browser provides, replaceable in tests: fetch, session (sessionStorage),
   *   keep (localStorage), location, history, crypto, now (ms), setTimeout, clearTimeout
   */
  constructor(auth, env = {}) {
    this.auth = auth;
    this.env = {
      fetch: (...args) => globalThis.fetch(...args),
      session: globalThis.sessionStorage,
      keep: globalThis.localStorage,
      location: globalThis.location,
      history: globalThis.history,
      crypto: globalThis.crypto,
      now: () => Date.now(),
      setTimeout: (...args) => globalThis.setTimeout(...args),
      clearTimeout: (...args) => globalThis.clearTimeout(...args),
      ...env,
    };
    this.timer = null;
    this.endpoints = auth && auth.endpoints ? auth.endpoints : null;
  }

  /** Someone issues tokens here. */
  get available() {
    return Boolean(this.auth);
  }

  /** The local issuer asks for a name; an identity provider asks on its own page. */
  get needsName() {
    return !this.auth || this.auth.kind === "local";
  }

  /** Local: {token, player_id, name}. Otherwise the page goes to the provider (resolves null). */
  async signIn(name) {
    if (!this.auth) throw new Error("signin.noServer");
    if (this.auth.kind === "local") return this.signInLocally(name);
    await this.redirect();
    return null;
  }

  /** Back from the provider with ?code=…&state=…: the tokens, the address cleaned. Else null. */
  async completeRedirect() {
    if (!this.auth || this.auth.kind === "local") return null;
    const url = new URL(this.env.location.href);
    const code = url.searchParams.get("code");
    const state = url.searchParams.get("state");
    if (!code && !url.searchParams.has("error")) return null;
    for (const key of ["code", "state", "error", "error_description"]) url.searchParams.delete(key);
    this.env.history.replaceState(null, "", url.pathname + url.search + url.hash);
    const flow = this.read(FLOW_KEY);
    this.forget(FLOW_KEY);
    if (!code || !flow || flow.state !== state) throw new Error("signin.failed");
    return this.tokens({
      grant_type: "authorization_code",
      client_id: this.auth.clientId,
      code,
      redirect_uri: flow.redirectUri,
      code_verifier: flow.verifier,
    });
  }

  /** A fresh token without leaving the page, or null when only a new sign-in would give one. */
  async refresh(name) {
    if (!this.auth) return null;
    if (this.auth.kind === "local") return name ? this.signInLocally(name) : null;
    const refreshToken = this.read(REFRESH_KEY);
    if (!refreshToken) return null;
    return this.tokens({ grant_type: "refresh_token", client_id: this.auth.clientId, refresh_token: refreshToken });
  }

  /** Renew `token` before it expires and hand the new one to `onToken` (again and again). */
  keepFresh(token, onToken, name = null) {
    this.env.clearTimeout(this.timer);
    this.timer = null;
    const { exp, name: claimed } = tokenClaims(token || "");
    if (!this.auth || typeof exp !== "number") return;
    const delay = Math.max(0, (exp - REFRESH_MARGIN) * 1000 - this.env.now());
    this.timer = this.env.setTimeout(async () => {
      this.timer = null;
      let fresh = null;
      try {
        fresh = await this.refresh(name || claimed);
      } catch {
        /* the connection code signs in again when the token is refused */
      }
      if (fresh) onToken(fresh);
    }, Math.min(delay, 24 * 3600 * 1000));
  }

  signOut() {
    this.env.clearTimeout(this.timer);
    this.timer = null;
    this.forget(REFRESH_KEY);
  }

  // --- local ----------------------------------------------------------------------------

  async signInLocally(name) {
    let response;
    try {
      response = await this.env.fetch(this.auth.signinUrl, {
        method: "POST",
        headers: { "Content-Type": "application/json", Accept: "application/json" },
        body: JSON.stringify({ name, secret: this.nameSecret(name) || undefined }),
      });
    } catch {
      throw new Error("signin.unreachable");
    }
    if (response.status === 400) throw new Error("signin.badName");
    if (response.status === 409) throw new Error("signin.nameTaken");
    if (!response.ok) throw new Error("signin.failed");
    const body = await response.json();
    this.keepNameSecret(body.name || name, body.secret);
    return body;
  }

  nameSecret(name) {
    try {
      return this.env.keep.getItem(NAME_SECRET_PREFIX + name.trim().toLowerCase());
    } catch {
      return null;
    }
  }

  keepNameSecret(name, secret) {
    if (!secret) return;
    try {
      this.env.keep.setItem(NAME_SECRET_PREFIX + name.trim().toLowerCase(), secret);
    } catch {
      /* without storage, the name is this page's only */
    }
  }

  // --- authorization code with PKCE -------------------------------------------------------

  async discover() {
    if (this.endpoints) return this.endpoints;
    let document;
    try {
      const response = await this.env.fetch(`${this.auth.issuer}/.well-known/openid-configuration`, { headers: { Accept: "application/json" } });
      if (!response.ok) throw new Error(String(response.status));
      document = await response.json();
    } catch {
      throw new Error("signin.unreachable");
    }
    this.endpoints = { authorize: document.authorization_endpoint, token: document.token_endpoint, logout: document.end_session_endpoint || null };
    return this.endpoints;
  }

  async redirect() {
    const endpoints = await this.discover();
    const random = (size) => b64url(this.env.crypto.getRandomValues(new Uint8Array(size)));
    const verifier = random(32);
    const state = random(16);
    const digest = await this.env.crypto.subtle.digest("SHA-256", new TextEncoder().encode(verifier));
    const here = new URL(this.env.location.href);
    const redirectUri = here.origin + here.pathname;
    this.write(FLOW_KEY, { verifier, state, redirectUri });
    const url = new URL(endpoints.authorize);
    const params = {
      response_type: "code",
      client_id: this.auth.clientId,
      redirect_uri: redirectUri,
      scope: this.auth.scope,
      state,
      code_challenge: b64url(new Uint8Array(digest)),
      code_challenge_method: "S256",
    };
    for (const [key, value] of Object.entries(params)) url.searchParams.set(key, value);
    this.env.location.assign(url.href);
  }

  async tokens(form) {
    const endpoints = await this.discover();
    let response;
    try {
      response = await this.env.fetch(endpoints.token, {
        method: "POST",
        headers: { "Content-Type": "application/x-www-form-urlencoded", Accept: "application/json" },
        body: new URLSearchParams(form).toString(),
      });
    } catch {
      throw new Error("signin.unreachable");
    }
    if (!response.ok) {
      if (form.grant_type === "refresh_token") this.forget(REFRESH_KEY);
      throw new Error(form.grant_type === "refresh_token" ? "signin.expired" : "signin.failed");
    }
    const body = await response.json();
    if (typeof body.id_token !== "string") throw new Error("signin.failed");
    if (typeof body.refresh_token === "string") this.write(REFRESH_KEY, body.refresh_token);
    const claims = tokenClaims(body.id_token);
    return { token: body.id_token, player_id: claims.id, name: claims.name };
  }

  read(key) {
    try {
      const text = this.env.session.getItem(key);
      return text === null ? null : JSON.parse(text);
    } catch {
      return null;
    }
  }

  write(key, value) {
    try {
      this.env.session.setItem(key, JSON.stringify(value));
    } catch {
      /* kept for this page only: a reload signs in again */
    }
  }

  forget(key) {
    try {
      this.env.session.removeItem(key);
    } catch {
      /* nothing stored */
    }
  }
}
