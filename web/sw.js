// The installable app's service worker: the app shell (the page, its styles, modules,
// translations and icons) from the network first, so that a new deploy shows at once,
// and from the cache when the network is gone. The configuration (config.json), the
// sign-in, the API and the WebSocket are never cached: only the shell below this file's
// folder and the page itself are handled here.

const CACHE = "canasta-shell";

// Relative to this file; the page is the registration's scope (see ui/look.js).
const SHELL = [
  "./style.css",
  "./app.js",
  "./i18n.js",
  "./protocol.js",
  "./session.js",
  "./signin.js",
  "./state.js",
  "./tiles.js",
  "./ui/dialogs.js",
  "./ui/dom.js",
  "./ui/lobby.js",
  "./ui/look.js",
  "./ui/records.js",
  "./ui/table.js",
  "./i18n/en.json",
  "./i18n/fr.json",
  "./i18n/it.json",
  "./i18n/pl.json",
  "./i18n/hu.json",
  "./i18n/ro.json",
  "./manifest.webmanifest",
  "./icons/icon-192.png",
  "./icons/icon-512.png",
  "./icons/maskable-512.png",
];

const FOLDER = new URL("./", self.location.href).pathname;

self.addEventListener("install", (event) => {
  const urls = [self.registration.scope, ...SHELL.map((path) => new URL(path, self.location.href).href)];
  event.waitUntil(
    caches
      .open(CACHE)
      .then((cache) => cache.addAll(urls))
      .then(() => self.skipWaiting()),
  );
});

self.addEventListener("activate", (event) => {
  event.waitUntil(self.clients.claim());
});

/** The page under one key whatever its query (?lang=, ?ws=…): offline, any of them opens. */
function cacheKey(request) {
  return request.mode === "navigate" ? self.registration.scope : request;
}

function handled(request) {
  if (request.method !== "GET") return false;
  const url = new URL(request.url);
  if (url.origin !== self.location.origin) return false;
  if (request.mode === "navigate") return true;
  return url.pathname.startsWith(FOLDER) && !url.pathname.endsWith("/config.json");
}

async function networkFirst(request) {
  const cache = await caches.open(CACHE);
  try {
    const response = await fetch(request);
    if (response.ok) await cache.put(cacheKey(request), response.clone());
    return response;
  } catch (offline) {
    const kept = await cache.match(cacheKey(request), { ignoreSearch: request.mode === "navigate" });
    if (kept) return kept;
    throw offline;
  }
}

self.addEventListener("fetch", (event) => {
  if (handled(event.request)) event.respondWith(networkFirst(event.request));
});
