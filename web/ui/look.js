// What the player chose for this device's display (colour-blind marks, kept in
// localStorage), and the service worker that makes the page an installable app.

import { $ } from "./dom.js";

const MARKS_KEY = "canasta.colourMarks";

function kept() {
  try {
    return localStorage.getItem(MARKS_KEY) === "on";
  } catch {
    return false;
  }
}

function keep(on) {
  try {
    localStorage.setItem(MARKS_KEY, on ? "on" : "off");
  } catch {
    /* the choice lasts this page only */
  }
}

/** Colour-blind marks: every tile's colour also as a letter and a larger shape (style.css). */
function showMarks(on) {
  document.documentElement.classList.toggle("colour-marks", on);
  $("colour-marks").setAttribute("aria-pressed", on ? "true" : "false");
}

/** The service worker sits with the page's files; its scope is the page's folder (the
 * local gateway serves the page at "/" and allows that scope for /web/sw.js). */
function registerWorker() {
  if (!("serviceWorker" in navigator) || !/^https?:$/.test(location.protocol)) return;
  navigator.serviceWorker.register(new URL("../sw.js", import.meta.url), { scope: "./" }).catch(() => {
    /* the page works as well without it, only not offline */
  });
}

export function bindLook() {
  showMarks(kept());
  $("colour-marks").addEventListener("click", () => {
    const on = !document.documentElement.classList.contains("colour-marks");
    showMarks(on);
    keep(on);
  });
  registerWorker();
}
