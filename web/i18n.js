// Every visible string of the client lives in i18n/<lang>.json, one file per language.
// A value is a string with {placeholders}, or an object of plural forms
// (Intl.PluralRules categories) chosen by the parameter `n`. English is always
// loaded, as the fallback of a key another language lacks; the current language
// is fetched when chosen.

export const LANGUAGES = [
  { code: "en", name: "English" },
  { code: "fr", name: "Français" },
  { code: "it", name: "Italiano" },
  { code: "pl", name: "Polski" },
  { code: "hu", name: "Magyar" },
  { code: "ro", name: "Română" },
];

const CODES = LANGUAGES.map((l) => l.code);
const STORAGE_KEY = "canasta.lang";

/** The loaded tables, by language code. */
export const STRINGS = {};

let current = "en";
const numberFormats = new Map();
const pluralRules = new Map();

/** Where the tables are: next to this module (a browser), or given by a test. */
async function fetchTable(code, base) {
  const url = new URL(`i18n/${code}.json`, base);
  if (url.protocol === "file:") {
    const { readFile } = await import("node:fs/promises");
    return JSON.parse(await readFile(url, "utf8"));
  }
  const response = await fetch(url);
  if (!response.ok) throw new Error(`no strings for ${code}`);
  return response.json();
}

/** Loads a language's table (and English, the fallback) once. */
export async function loadLang(code, base = import.meta.url) {
  const wanted = code === "en" ? ["en"] : ["en", code];
  await Promise.all(
    wanted
      .filter((c) => CODES.includes(c) && !(c in STRINGS))
      .map(async (c) => {
        STRINGS[c] = await fetchTable(c, base);
      }),
  );
}

/** Loads every language's table in the background, so that a switch is instant. */
export function preloadLangs() {
  return Promise.all(CODES.map((c) => loadLang(c).catch(() => {})));
}

function numberFormat(lang, signed) {
  const key = `${lang}:${signed ? 1 : 0}`;
  if (!numberFormats.has(key)) {
    numberFormats.set(key, new Intl.NumberFormat(lang, signed ? { signDisplay: "exceptZero" } : {}));
  }
  return numberFormats.get(key);
}

/** A number in the current language ("3,000", "3 000", "3.000"); `signed` adds + to gains. */
export function fmtNum(n, signed = false) {
  return numberFormat(current, signed).format(n);
}

function plural(n) {
  if (!pluralRules.has(current)) pluralRules.set(current, new Intl.PluralRules(current));
  return pluralRules.get(current).select(n);
}

/** The string for `key`, its {placeholders} filled from `params` (numbers are formatted). */
export function t(key, params = {}) {
  let entry = (STRINGS[current] || {})[key];
  if (entry === undefined) entry = (STRINGS.en || {})[key];
  if (entry === undefined) return key;
  if (typeof entry === "object") {
    entry = entry[plural(Number(params.n))] ?? entry.other;
  }
  return entry.replace(/\{(\w+)\}/g, (whole, name) => {
    if (!(name in params)) return whole;
    const value = params[name];
    return typeof value === "number" ? fmtNum(value) : String(value);
  });
}

/** Whether the English table has `key` (a refusal's code may be newer than the client). */
export function hasKey(key) {
  return Boolean(STRINGS.en) && key in STRINGS.en;
}

export function getLang() {
  return current;
}

function pick(candidates) {
  for (const candidate of candidates) {
    if (!candidate) continue;
    const code = String(candidate).toLowerCase().split(/[-_]/)[0];
    if (CODES.includes(code)) return code;
  }
  return "en";
}

/** The language to start with: ?lang=, the saved choice, then the browser's languages. */
export function initialLang(param) {
  let saved = null;
  try {
    saved = localStorage.getItem(STORAGE_KEY);
  } catch {
    saved = null;
  }
  return pick([param, saved, ...(navigator.languages || []), navigator.language]);
}

/** Switches to `code` once its table is loaded; returns the language in use. */
export async function setLang(code, { save = true } = {}) {
  const lang = CODES.includes(code) ? code : "en";
  await loadLang(lang);
  current = lang;
  if (typeof document !== "undefined") document.documentElement.lang = current;
  if (save) {
    try {
      localStorage.setItem(STORAGE_KEY, current);
    } catch {
      /* storage may be unavailable (private mode): the choice then lasts this page only */
    }
  }
  return current;
}

/** Fill the static markup: data-i18n (text), data-i18n-aria (aria-label), data-i18n-placeholder. */
export function applyI18n(root = document) {
  for (const el of root.querySelectorAll("[data-i18n]")) el.textContent = t(el.dataset.i18n);
  for (const el of root.querySelectorAll("[data-i18n-aria]")) el.setAttribute("aria-label", t(el.dataset.i18nAria));
  for (const el of root.querySelectorAll("[data-i18n-placeholder]")) el.placeholder = t(el.dataset.i18nPlaceholder);
  document.title = t("app.title");
}

/** A refusal as a sentence in the current language, never a bare code. */
export function errorText(code, params = {}) {
  const key = `error.${code}`;
  if (hasKey(key)) return t(key, params);
  return t("error.unknown", { code: String(code) });
}
