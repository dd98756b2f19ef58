// End-to-end test of the app as the Debian package installs it (run by scripts/test-package,
// inside Xvfb and a private keyring session): /usr/bin/plugboard-app under tauri-driver, with the
// user's own default config (a temporary HOME, no PLUGBOARD_HOME) where the installed CLI has put
// server SERVER. The marketplace renders the embedded catalog, and "Use in other apps" adds the
// servers to Cursor with launchers that name the CLI installed beside the app.
//
//   PLUGBOARD_E2E_SERVER=NAME node ui/e2e/installed.e2e.mjs

import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { startDriver } from "./driver.mjs";
import { Session } from "./webdriver.mjs";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const APP = process.env.PLUGBOARD_APP_BIN ?? "/usr/bin/plugboard-app";
const CLI = join(dirname(APP), "plugboard");
const DRIVER = process.env.TAURI_DRIVER ?? join(root, ".tools/bin/tauri-driver");
const SHOTS = join(root, "target/e2e-screenshots");
const SERVER = process.env.PLUGBOARD_E2E_SERVER;
const HOME = process.env.HOME;

for (const [what, path] of [["installed app", APP], ["installed CLI", CLI], ["tauri-driver", DRIVER]]) {
  if (!existsSync(path)) {
    console.error(`installed e2e: the ${what} is missing at ${path}; run scripts/test-package`);
    process.exit(2);
  }
}
if (!SERVER || process.env.PLUGBOARD_HOME) {
  console.error("installed e2e: set PLUGBOARD_E2E_SERVER (an installed server) and leave PLUGBOARD_HOME unset");
  process.exit(2);
}
mkdirSync(SHOTS, { recursive: true });

let passed = 0;
let failed = 0;
let s = null;
async function shot(name) {
  if (s) writeFileSync(join(SHOTS, `${name}.png`), await s.screenshot());
}
const text = async (css) => (await s.find(css)).text();
async function step(name, fn) {
  const t0 = Date.now();
  try {
    await fn();
    passed++;
    console.log(`  ok    ${name} (${Date.now() - t0} ms)`);
  } catch (e) {
    failed++;
    console.log(`  FAIL  ${name}: ${e.message}`);
    await shot(`installed-FAILED-${name.replace(/[^a-z0-9]+/gi, "-")}`).catch(() => {});
    throw e;
  }
}

// BROWSER=true: nothing opens a browser.
const driver = await startDriver(DRIVER, { ...process.env, BROWSER: "true" });
try {
  await step("the installed app renders the marketplace", async () => {
    s = await Session.create(driver.base, { "tauri:options": { application: APP } });
    await s.waitFor('[data-testid="catalog-card"]', { timeout: 30000, what: "the marketplace" });
    // The grid fills in over a few frames after its first card (its size is measured, pages
    // of cards arrive): wait for a full first screen rather than count the first frame's.
    let cards = 0;
    await s.waitUntil(async () => (cards = (await s.findAll('[data-testid="catalog-card"]')).length) >= 20, {
      timeout: 10000,
      what: "20 catalog cards on the first screen",
    }).catch((e) => {
      throw new Error(`only ${cards} catalog cards: ${e.message}`);
    });
    await shot("installed-01-marketplace");
  });

  await step(`Use in other apps writes launchers naming ${CLI}`, async () => {
    await (await s.find('[data-testid="nav-clients"]')).click();
    const row = '[data-testid="client-row"][data-client="cursor"]';
    await s.waitFor(row);
    if ((await s.findAll('[data-testid="cli-missing"]')).length) {
      throw new Error(`the app says: ${await (await s.find('[data-testid="cli-missing"]')).text()}`);
    }
    await (await s.find(`${row} [data-testid="client-export"]`)).click();
    const box = await (await s.waitFor(`[data-testid="export-dialog"] [data-testid="export-server"][data-name="${SERVER}"]`)).find("input");
    if (!(await box.prop("checked"))) await box.click();
    await s.waitUntil(async () => (await text('[data-testid="export-json"]')).includes(CLI), {
      what: `a preview of a launcher naming ${CLI}`,
    });
    await shot("installed-02-use-in-other-apps-preview");
    await (await s.find('[data-testid="export-confirm"]')).click();
    await s.waitFor('[data-testid="export-apply-hint"]', { timeout: 10000 });
    await (await s.find('[data-testid="export-close"]')).click();
    await s.waitUntil(async () => (await text(row)).includes(SERVER), { what: `Cursor's row to list ${SERVER}` });
    await shot("installed-03-use-in-other-apps");
    const file = join(HOME, ".cursor", "mcp.json");
    const entry = JSON.parse(readFileSync(file, "utf8")).mcpServers?.[SERVER];
    if (entry?.command !== CLI || JSON.stringify(entry.args) !== JSON.stringify(["run", SERVER])) {
      throw new Error(`${file} has ${JSON.stringify(entry)}, not a launcher of ${CLI} run ${SERVER}`);
    }
  });
} catch {
  // Reported by the step.
} finally {
  if (s) await s.quit();
  await driver.stop();
}
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed || passed < 2 ? 1 : 0);
