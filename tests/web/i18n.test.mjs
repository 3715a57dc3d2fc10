// The translation tables: one JSON file per language, every key in all six, the same
// placeholders, and no visible string of the page or the code left without a key.

import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { test } from "node:test";

import { LANGUAGES, STRINGS, errorText, loadLang, setLang, t } from "../../web/i18n.js";

const WEB = new URL("../../web/", import.meta.url);
const CODES = LANGUAGES.map((l) => l.code);
const tables = Object.fromEntries(CODES.map((code) => [code, JSON.parse(readFileSync(new URL(`i18n/${code}.json`, WEB), "utf8"))]));
const EN = tables.en;

function sources(dir = WEB, out = []) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const url = new URL(entry.name + (entry.isDirectory() ? "/" : ""), dir);
    if (entry.isDirectory() && entry.name !== "i18n") sources(url, out);
    else if (entry.name.endsWith(".js")) out.push({ name: url.pathname, text: readFileSync(url, "utf8") });
  }
  return out;
}

const placeholders = (value) => new Set([...JSON.stringify(value).matchAll(/\{(\w+)\}/g)].map((m) => m[1]));

test("six languages, one file each, with exactly English's keys", () => {
  assert.deepEqual(CODES, ["en", "fr", "it", "pl", "hu", "ro"]);
  const files = readdirSync(new URL("i18n/", WEB)).sort();
  assert.deepEqual(files, CODES.map((c) => `${c}.json`).sort());
  for (const code of CODES) {
    const keys = Object.keys(tables[code]);
    assert.deepEqual(keys.filter((k) => !(k in EN)), [], `${code}: keys English lacks`);
    assert.deepEqual(Object.keys(EN).filter((k) => !(k in tables[code])), [], `${code}: keys missing`);
  }
});

test("every translation is filled and has English's placeholders and plural forms", () => {
  for (const code of CODES) {
    for (const [key, value] of Object.entries(tables[code])) {
      if (typeof value === "object") {
        assert.ok(typeof value.other === "string" && value.other.trim(), `${code} ${key}: no 'other' form`);
        assert.equal(typeof EN[key], "object", `${code} ${key}: plural where English has none`);
      } else assert.ok(typeof value === "string" && value.trim(), `${code} ${key} is empty`);
      assert.deepEqual(placeholders(value), placeholders(EN[key]), `${code} ${key}: placeholders`);
    }
  }
});

test("every key the code names exists; every key prefix the code builds exists", () => {
  // Any string literal in a namespace of the tables ("hint.selectPair", "why.noPair") is a key.
  const namespaces = new Set(Object.keys(EN).map((k) => k.split(".")[0]));
  const named = new Set();
  const prefixes = new Set();
  for (const { text } of sources()) {
    for (const m of text.matchAll(/"([a-zA-Z0-9]+)\.([\w.-]+)"/g)) if (namespaces.has(m[1])) named.add(`${m[1]}.${m[2]}`);
    for (const m of text.matchAll(/\bt\(`([\w.-]+)\$\{/g)) prefixes.add(m[1]);
  }
  assert.ok(named.size > 80, `only ${named.size} keys found in the code`);
  assert.deepEqual([...named].filter((k) => !(k in EN)), []);
  for (const prefix of prefixes) assert.ok(Object.keys(EN).some((k) => k.startsWith(prefix)), `no key starts with ${prefix}`);
});

test("the page's markup shows no text without a key", () => {
  const html = readFileSync(new URL("index.html", WEB), "utf8");
  const keys = [...html.matchAll(/data-i18n(?:-aria|-placeholder)?="([\w.-]+)"/g)].map((m) => m[1]);
  assert.ok(keys.length > 50);
  assert.deepEqual(keys.filter((k) => !(k in EN)), []);
  const body = html.slice(html.indexOf("<body>"), html.indexOf("<noscript>")).replace(/<script>[\s\S]*?<\/script>/g, "");
  const bare = [];
  for (const m of body.matchAll(/<([a-z0-9]+)([^>]*)>([^<]*)</g)) {
    const text = m[3].trim();
    if (!/\p{L}/u.test(text)) continue; // figures and signs the code fills in
    if (!/data-i18n="/.test(m[2])) bare.push(text);
  }
  assert.deepEqual(bare, []);
});

test("the tables load as the client loads them, with English as the fallback", async () => {
  await loadLang("fr");
  await setLang("fr", { save: false });
  assert.ok(STRINGS.fr && STRINGS.en);
  assert.equal(t("lobby.findTable"), tables.fr["lobby.findTable"]);
  assert.equal(t("seat.tiles", { n: 1 }), tables.fr["seat.tiles"].one.replace("{n}", "1"));
  assert.match(errorText("no_such_code"), /no_such_code/);
  assert.equal(t("no.such.key"), "no.such.key");
});
