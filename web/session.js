// Where the game server is and who the player is: the configuration and the token
// (kept in sessionStorage). Whoever issues the token (the local issuer, Cognito or the
// platform's OpenID Connect issuer) is web/signin.js's business, from config.json.

import { SignIn, authConfig, tokenClaims } from "./signin.js";

const TOKEN_KEY = "canasta.token";
const NAME_KEY = "canasta.name";

export const session = { token: null, fromUrl: false, auth: new SignIn(null) };

function stored(storage, key) {
  try {
    return storage.getItem(key);
  } catch {
    return null;
  }
}

function keep(storage, key, value) {
  try {
    if (value === null) storage.removeItem(key);
    else storage.setItem(key, value);
  } catch {
    /* without storage the value lasts this page only */
  }
}

export async function loadConfig() {
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

export function tokenExpired(token) {
  const { exp } = tokenClaims(token || "");
  return typeof exp === "number" && exp * 1000 < Date.now();
}

/** Takes `token` as the player's; returns the player {id, name} it names. */
export function setToken(token, { fromUrl = false } = {}) {
  session.token = token;
  session.fromUrl = fromUrl;
  keep(sessionStorage, TOKEN_KEY, token);
  const claims = tokenClaims(token);
  return { id: claims.id, name: claims.name || stored(sessionStorage, NAME_KEY) };
}

export function savedToken() {
  return stored(sessionStorage, TOKEN_KEY);
}

export function savedName() {
  return stored(sessionStorage, NAME_KEY);
}

export function dropToken() {
  session.token = null;
  keep(sessionStorage, TOKEN_KEY, null);
}

/** Who issues tokens, from config.json (`auth`, or the local stack's `signin_url`). */
export function configureSignin(config, base, signinUrl) {
  session.auth = new SignIn(authConfig(config, base, signinUrl));
}

/** Takes a sign-in's answer {token, player_id, name}; returns the player it names. */
function adopt(body, name) {
  keep(sessionStorage, NAME_KEY, body.name || name);
  const player = setToken(body.token);
  if (body.player_id) player.id = body.player_id;
  if (body.name) player.name = body.name;
  return player;
}

/** Signs in under `name` (locally); with an identity provider the page leaves for its
 * sign-in page and this resolves null. Throws an Error whose message is a translation key. */
export async function signin(name) {
  const body = await session.auth.signIn(name);
  return body ? adopt(body, name) : null;
}

/** Back from the identity provider's page: the player signed in, else null. */
export async function completeSignin() {
  const body = await session.auth.completeRedirect();
  return body ? adopt(body, body.name) : null;
}

/** A fresh token without leaving the page (the refresh token, or locally the saved name), or null. */
export async function renewSignin() {
  const body = await session.auth.refresh(savedName());
  return body ? adopt(body, body.name) : null;
}

/** Renews the token before it expires, again and again; `onPlayer` hears each renewal. */
export function keepSigninFresh(onPlayer) {
  if (session.fromUrl || !session.token) return;
  session.auth.keepFresh(session.token, (body) => {
    onPlayer(adopt(body, body.name));
    keepSigninFresh(onPlayer);
  }, savedName());
}

export function signoutSession() {
  session.auth.signOut();
  dropToken();
}
