// The harness of the app's end-to-end test (app.e2e.mjs and its feature files): tauri-driver and
// the WebDriver session of the app, the window's recorded errors, the helpers the steps share,
// and the runner. A step that fails (or leaves an error recorded by the window) ends its
// feature: the runner records it, restarts the app, and goes on with the next feature, so one
// failure does not hide the others. `summary()` prints `N passed, N failed`.

import { existsSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { startDriver as launchDriver } from "./driver.mjs";
import { Session } from "./webdriver.mjs";

export const root = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
export const APP = process.env.PLUGBOARD_APP_BIN ?? join(root, "target/debug/plugboard-app");
export const DRIVER = process.env.TAURI_DRIVER ?? join(root, ".tools/bin/tauri-driver");
export const SHOTS = join(root, "target/e2e-screenshots");

/** Exit (2) unless every `[what, path]` exists: the test needs them built. */
export function requireFiles(files) {
  for (const [what, path] of files) {
    if (!existsSync(path)) {
      console.error(`e2e: the ${what} is missing at ${path}; run scripts/test-app`);
      process.exit(2);
    }
  }
}

// tauri-driver, started with the test's environment (`setDriverEnv`) over this process's.
let driver = null;
let base = "";
let driverEnv = {};
export function setDriverEnv(env) {
  driverEnv = env;
}
export async function startDriver(extraEnv = {}) {
  driver = await launchDriver(DRIVER, { ...process.env, ...driverEnv, ...extraEnv });
  base = driver.base;
}
export async function stopDriver() {
  if (!driver) return;
  const d = driver;
  driver = null;
  await d.stop();
}

/** The WebDriver session of the running app (a live binding: `launch` replaces it). */
export let s = null;

/** Start the app; the time until its marketplace shows cards. */
export async function launch() {
  const t0 = Date.now();
  const capabilities = { "tauri:options": { application: APP } };
  try {
    s = await Session.create(base, capabilities);
  } catch (e) {
    // Once in a fresh-clone CI run (2026-12-06) WebKitWebDriver never answered a new session.
    // The driver is started afresh once; an app that really hangs fails again.
    console.log(`        no app session (${e.message}); tauri-driver restarted, starting the app again`);
    await stopDriver();
    await startDriver();
    s = await Session.create(base, capabilities);
  }
  await s.waitFor('[data-testid="catalog-card"]', { timeout: 20000, what: "the marketplace" });
  return Date.now() - t0;
}

/** Close the app (its session) if it runs. */
export async function quitApp() {
  const session = s;
  s = null;
  if (session) await session.quit();
}

/** Close the app and stop tauri-driver. */
export async function shutdown() {
  await quitApp();
  await stopDriver();
}

export async function shot(name) {
  if (!s) return;
  writeFileSync(join(SHOTS, `${name}.png`), await s.screenshot());
}

/** Uncaught errors and unhandled rejections the window recorded since the last call (see
 * ui/src/lib/windowErrors.ts); the list is emptied. */
export async function windowErrors() {
  if (!s) return [];
  return (await s.execute("const e = window.__plugboardErrors || []; window.__plugboardErrors = []; return e;")) ?? [];
}

/** Figures the steps measure, for the last line. */
export const timings = {};

const results = [];
/** Failures outside any step (setup, a feature's own code, restarting the app). */
let problems = 0;

/** Run one step: it fails on a throw or on an error the window recorded meanwhile (then a
 * screenshot is taken and the error is thrown on, ending the feature). */
export async function step(name, fn) {
  const t0 = Date.now();
  try {
    await fn();
    const errors = await windowErrors();
    if (errors.length) throw new Error(`the window reported ${errors.length} error(s): ${errors.map((e) => `${e.kind}: ${e.message}`).join(" | ")}`);
    results.push({ name, ok: true, ms: Date.now() - t0 });
    console.log(`  ok    ${name} (${Date.now() - t0} ms)`);
  } catch (e) {
    results.push({ name, ok: false, ms: Date.now() - t0 });
    console.log(`  FAIL  ${name}: ${e.message}`);
    try {
      const file = `FAILED-${name.replace(/[^a-z0-9]+/gi, "-")}`;
      await shot(file);
      console.log(`        screenshot: target/e2e-screenshots/${file}.png`);
    } catch (err) {
      console.log(`        (no screenshot: ${err.message})`);
    }
    throw e;
  }
}

/** A failure outside the steps (e.g. the setup): reported and counted. */
export function problem(what, e) {
  problems++;
  console.log(`  FAIL  ${what}: ${e.message}`);
}

/** Start the app afresh (tauri-driver too, if it is down), on its marketplace. */
export async function relaunch() {
  await quitApp();
  if (!driver) await startDriver();
  await launch();
}

/** Run `features` (`[name, fn]`, in order). A feature ends at its first failing step; the app is
 * then restarted (`recover`) and the next feature runs. */
export async function runFeatures(features, { recover = relaunch } = {}) {
  for (const [i, [name, run]] of features.entries()) {
    console.log(`e2e: ${name}`);
    const before = results.length;
    try {
      await run();
    } catch (e) {
      if (!results.slice(before).some((r) => !r.ok)) problem(name, e);
      const rest = features.slice(i + 1);
      if (!rest.length) return;
      console.log(`        the rest of "${name}" is skipped; the app restarts for "${rest[0][0]}"`);
      try {
        await recover();
      } catch (err) {
        problem("restarting the app", err);
        for (const [other] of rest) console.log(`  SKIP  ${other}`);
        return;
      }
    }
  }
}

/** Print `N passed, N failed`; the number failed. */
export function summary() {
  const passed = results.filter((r) => r.ok).length;
  const failed = results.length - passed + problems;
  console.log(`${passed} passed, ${failed} failed`);
  return failed;
}

// Helpers of the steps.
/** Fails when a marketplace card shows part of a line of its description: a description squeezed
 * below the height its (clamped, whole) lines take. */
export async function descriptionsEndOnWholeLines() {
  const cut = await s.execute(
    "return [...document.querySelectorAll('[data-testid=\"catalog-card\"] .desc')].filter((d) => { const shown = d.getBoundingClientRect().height; d.style.flexShrink = '0'; d.style.maxHeight = 'none'; const whole = d.getBoundingClientRect().height; d.style.flexShrink = ''; d.style.maxHeight = ''; return shown < whole - 0.5; }).map((d) => d.textContent.slice(0, 40));",
  );
  if (cut.length) throw new Error(`descriptions cut through a line: ${cut.join(" | ")}`);
}

export const text = async (css) => (await s.find(css)).text();
export async function fill(css, value) {
  const el = await s.waitFor(css);
  await el.clear();
  // WebDriver's clear fires no `input` event; the UI's bindings need one.
  await s.execute("arguments[0].dispatchEvent(new Event('input', { bubbles: true }))", [{ "element-6066-11e4-a52e-4f735466cecf": el.id }]);
  if (value) await el.type(value);
}
/** Focus starts inside the dialog `css` and stays there through `presses` Tabs, then as many
 * Shift+Tabs, reaching more than one of its controls. */
export async function focusStaysIn(css, presses = 12) {
  const where = () =>
    s.execute(
      "const d = document.querySelector(arguments[0]); const a = document.activeElement; return { inside: !!d && !!a && d.contains(a), what: a ? a.outerHTML.slice(0, 120) : 'nothing' };",
      [css],
    );
  let at = await where();
  if (!at.inside) throw new Error(`focus did not start inside ${css}: it is on ${at.what}`);
  const reached = new Set([at.what]);
  for (const shift of [false, true]) {
    for (let i = 1; i <= presses; i++) {
      await s.tab(shift);
      at = await where();
      if (!at.inside) throw new Error(`${shift ? "Shift+Tab" : "Tab"} ${i} left ${css} for ${at.what}`);
      reached.add(at.what);
    }
  }
  if (reached.size < 2) throw new Error(`Tab never moved inside ${css}`);
}
export async function select(css, value) {
  await s.execute(
    "const el = document.querySelector(arguments[0]); el.value = arguments[1]; el.dispatchEvent(new Event('change', { bubbles: true }));",
    [css, value],
  );
}
/** The buttons of dialog `css`'s footer stand on one row (none wrapped below the others). */
export async function footerOnOneRow(css) {
  const tops = await s.execute(
    "return [...document.querySelectorAll(arguments[0] + ' footer .btn')].map((b) => Math.round(b.getBoundingClientRect().top));",
    [css],
  );
  if (tops.length < 2 || new Set(tops).size !== 1) throw new Error(`the footer of ${css} wraps: button tops ${tops.join(", ")}`);
}
/** Scroll `css` to the middle of its scrolling box (a field low in a dialog's body, where the
 * footer would cover it). */
export async function reveal(css) {
  await s.waitFor(css);
  await s.execute("document.querySelector(arguments[0]).scrollIntoView({ block: 'center' });", [css]);
}
