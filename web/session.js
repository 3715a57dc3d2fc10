// Where the game server is and who the player is: the configuration, the token
// (kept in sessionStorage) and the local sign-in. Kept apart from the game so that
// another identity provider replaces only this module.

const TOKEN_KEY = "canasta.token";
const NAME_KEY = "canasta.name";
const NAME_SECRET_PREFIX = "canasta.name-secret.";

export const session = { token: null, fromUrl: false, signinUrl: null };

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

/** The claims of a token (id, name, expiry), read without checking: the server checks. */
export function tokenClaims(token) {
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

/* Local sign-in: the first sign-in under a name gets a secret that this browser keeps,
   and a later sign-in under the name must show it (the server refuses others). */
function secretKey(name) {
  return NAME_SECRET_PREFIX + name.trim().toLowerCase();
}

/** Signs in under `name`; returns the player, or throws an Error whose message is a translation key. */
export async function signin(name) {
  if (!session.signinUrl) throw new Error("signin.noServer");
  let response;
  try {
    response = await fetch(session.signinUrl, {
      method: "POST",
      headers: { "Content-Type": "application/json", Accept: "application/json" },
      body: JSON.stringify({ name, secret: stored(localStorage, secretKey(name)) || undefined }),
    });
  } catch {
    throw new Error("signin.unreachable");
  }
  if (response.status === 400) throw new Error("signin.badName");
  if (response.status === 409) throw new Error("signin.nameTaken");
  if (!response.ok) throw new Error("signin.failed");
  const body = await response.json();
  keep(sessionStorage, NAME_KEY, body.name || name);
  if (body.secret) keep(localStorage, secretKey(body.name || name), body.secret);
  const player = setToken(body.token);
  if (body.player_id) player.id = body.player_id;
  if (body.name) player.name = body.name;
  return player;
}
