// Starting and stopping tauri-driver (and the WebKitWebDriver it runs) on free loopback ports,
// for the end-to-end tests: the app's (app.e2e.mjs) and the installed package's (installed.e2e.mjs).

import { spawn } from "node:child_process";
import { createServer } from "node:net";
import { sleep } from "./webdriver.mjs";

async function freePort() {
  return new Promise((res, rej) => {
    const srv = createServer();
    srv.listen(0, "127.0.0.1", () => {
      const { port } = srv.address();
      srv.close(() => res(port));
    });
    srv.on("error", rej);
  });
}

export async function waitHttp(url, timeout = 20000) {
  const end = Date.now() + timeout;
  for (;;) {
    try {
      const r = await fetch(url);
      if (r.status < 500) return;
    } catch {
      // not up yet
    }
    if (Date.now() > end) throw new Error(`${url} did not come up`);
    await sleep(100);
  }
}

/**
 * tauri-driver at `driverPath`, with `env` for it and the app it starts. Resolves once both it
 * and WebKitWebDriver answer: `{ base, stop() }`, `base` being the WebDriver URL.
 */
export async function startDriver(driverPath, env) {
  const port = await freePort();
  const nativePort = await freePort();
  const child = spawn(driverPath, ["--port", String(port), "--native-port", String(nativePort), "--native-driver", "/usr/bin/WebKitWebDriver"], {
    env,
    stdio: ["ignore", "ignore", "pipe"],
  });
  child.stderr.on("data", (d) => process.env.E2E_VERBOSE && process.stderr.write(d));
  const base = `http://127.0.0.1:${port}`;
  const stop = () =>
    new Promise((r) => {
      if (child.exitCode !== null || child.signalCode !== null) return r();
      const t = setTimeout(() => {
        child.kill("SIGKILL");
        r();
      }, 3000);
      child.on("exit", () => {
        clearTimeout(t);
        r();
      });
      child.kill("SIGTERM");
    });
  try {
    await waitHttp(`${base}/status`);
    await waitHttp(`http://127.0.0.1:${nativePort}/status`);
  } catch (e) {
    await stop();
    throw e;
  }
  return { base, stop };
}
