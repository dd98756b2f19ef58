// End-to-end test of the desktop app: the real binary under tauri-driver + WebKitWebDriver
// (run inside Xvfb and a private keyring session by scripts/test-app), with a temporary
// PLUGBOARD_HOME and a test catalog whose entry runs our fixture MCP server.
//
//   node ui/e2e/app.e2e.mjs      (expects the app, the fixture and tauri-driver to be built)
//
// The steps live in one file per feature (marketplace, install, registry, servers, custom,
// clients, doctor, oauth, config, tryit, theme), over the shared harness (harness.mjs: driver,
// session, window errors, step runner) and the test's world (fixtures.mjs). They run in the
// order below, each feature on from where the one before it left the app; a failing step ends
// its feature, the app is restarted and the next feature runs. PLUGBOARD_APP_BIN overrides the
// app (default target/debug/plugboard-app), TAURI_DRIVER tauri-driver.

import { spawnSync } from "node:child_process";
import { APP, DRIVER, launch, problem, requireFiles, runFeatures, setDriverEnv, shutdown, startDriver, summary, timings } from "./harness.mjs";
import { BINARIES, appEnv, home, setupWorld, teardownWorld } from "./fixtures.mjs";
import { marketplace } from "./marketplace.e2e.mjs";
import { cancelTest, testThenSave } from "./install.e2e.mjs";
import { registry } from "./registry.e2e.mjs";
import { credentialsAndRemove, installedList, installedServers, toolReview } from "./servers.e2e.mjs";
import { customServers } from "./custom.e2e.mjs";
import { strangersInClientFiles, useInOtherApps } from "./clients.e2e.mjs";
import { doctor } from "./doctor.e2e.mjs";
import { gateway } from "./gateway.e2e.mjs";
import { oauth } from "./oauth.e2e.mjs";
import { configHoldsNoSecret } from "./config.e2e.mjs";
import { tryItTab } from "./tryit.e2e.mjs";
import { darkTheme } from "./theme.e2e.mjs";

/** In order: each feature goes on from the state the ones before it left (servers installed,
 * the page shown). */
const FEATURES = [
  ["marketplace", marketplace],
  ["install form: test, then save", testThenSave],
  ["registry and bundles", registry],
  ["install form: cancel a test", cancelTest],
  ["installed servers", installedServers],
  ["custom servers", customServers],
  ["tool review", toolReview],
  ["use in other apps", useInOtherApps],
  ["servers planted in other apps' files", strangersInClientFiles],
  ["gateway", gateway],
  ["doctor", doctor],
  ["credentials and remove", credentialsAndRemove],
  ["OAuth", oauth],
  ["installed list", installedList],
  ["config file", configHoldsNoSecret],
  ["try it", tryItTab],
  ["dark theme", darkTheme],
];

requireFiles([["app", APP], ...BINARIES, ["tauri-driver", DRIVER]]);

const started = Date.now();
try {
  let ready = false;
  try {
    await setupWorld();
    setDriverEnv(appEnv());
    await startDriver();
    console.log(`e2e: app ${APP}\n     PLUGBOARD_HOME ${home}`);
    timings.firstLaunch = await launch();
    // Memory of the app and its WebKit helper processes once the marketplace is up.
    const ps = spawnSync("ps", ["-eo", "rss=,comm="], { encoding: "utf8" }).stdout;
    timings.rssMb = Math.round(
      ps
        .split("\n")
        .map((l) => l.trim().split(/\s+/, 2))
        .filter(([, comm]) => comm && /^(plugboard-app|WebKitWebProces|WebKitNetworkPr|WebKitGPUProces)/.test(comm))
        .reduce((sum, [rss]) => sum + Number(rss), 0) / 1024,
    );
    ready = true;
  } catch (e) {
    problem("setup", e);
  }
  // E2E_ONLY="try it,dark theme": only those features (a developer's quicker round).
  const only = process.env.E2E_ONLY?.split(",").map((n) => n.trim());
  if (ready) await runFeatures(only ? FEATURES.filter(([name]) => only.includes(name)) : FEATURES);
} finally {
  await shutdown();
  teardownWorld();
}

console.log(
  `e2e: wall ${((Date.now() - started) / 1000).toFixed(1)} s; ${timings.forms ?? "?"} rendered; app start to interactive marketplace ${timings.firstLaunch ?? "?"} ms (restart ${timings.relaunch ?? "?"} ms); memory of the app's processes ${timings.rssMb ?? "?"} MB RSS; screenshots in target/e2e-screenshots/`,
);
process.exit(summary() ? 1 : 0);
