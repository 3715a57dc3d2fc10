// Small DOM helpers shared by the renderers.

import { t } from "../i18n.js";
import { tileInfo } from "../tiles.js";

const MARKS = { R: "●", Y: "▲", K: "■", B: "◆" };

export const $ = (id) => document.getElementById(id);

export function h(tag, props = {}, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(props)) {
    if (value === null || value === undefined || value === false) continue;
    if (key === "class") el.className = value;
    else if (key === "text") el.textContent = value;
    else if (key.startsWith("on")) el.addEventListener(key.slice(2), value);
    else el.setAttribute(key, value === true ? "" : String(value));
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    el.append(child instanceof Node ? child : String(child));
  }
  return el;
}

export function show(el, visible) {
  el.hidden = !visible;
}

export function clock(seconds) {
  const s = Math.max(0, Math.ceil(seconds));
  const m = Math.floor(s / 60);
  return `${m}:${String(s % 60).padStart(2, "0")}`;
}

export function tileName(name) {
  if (name === "JK") return t("tile.joker");
  const { rank, colour } = tileInfo(name);
  return t("tile.aria", { rank: String(rank), colour: t(`colour.${colour}`) });
}

/** One tile face; `tag` button for the hand, span elsewhere. */
export function tileEl(name, { tag = "span", size = "", extra = {}, label = true } = {}) {
  const info = tileInfo(name);
  const cls = `tile ${info.joker ? "t-JK" : `t-${info.colour}`}${size ? ` tile-${size}` : ""}${!info.joker && info.rank >= 10 ? " two-digit" : ""}`;
  const props = { class: cls, "data-tile": name, ...extra };
  if (label) {
    if (tag === "span") props.role = "img";
    props["aria-label"] = tileName(name);
  }
  return h(
    tag,
    props,
    h("span", { class: "tn", "aria-hidden": "true" }, info.joker ? "★" : String(info.rank)),
    h("span", { class: "tm", "aria-hidden": "true" }, info.joker ? "JK" : MARKS[info.colour]),
  );
}

/** Restarts a short CSS animation (none under prefers-reduced-motion: see style.css). */
export function flash(el, cls = "flash") {
  if (!el) return;
  el.classList.remove(cls);
  void el.offsetWidth;
  el.classList.add(cls);
}
