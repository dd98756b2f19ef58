// After everything before it: the config file holds no secret.

import { spawnSync } from "node:child_process";
import { TOKEN, WRONG, BEARER, CURSOR_TOKEN, home, config } from "./fixtures.mjs";
import { step } from "./harness.mjs";

/** No secret in the config file (nor anywhere in PLUGBOARD_HOME). */
export async function configHoldsNoSecret() {
  await step("the config file holds no secret", async () => {
    // The fixture's own command line carries the expected token (`--expect-env TOKEN=…`), so
    // look everywhere but the args.
    const parsed = JSON.parse(config());
    for (const server of Object.values(parsed.servers)) delete server.args;
    const c = JSON.stringify(parsed);
    for (const secret of [TOKEN, WRONG, BEARER, CURSOR_TOKEN]) if (c.includes(secret)) throw new Error(`a secret is in the config file: ${c}`);
    if (!c.includes('"secret"')) throw new Error("expected secret references in the config");
    const files = spawnSync("grep", ["-rl", "-e", WRONG, "-e", BEARER, "-e", CURSOR_TOKEN, home], { encoding: "utf8" }).stdout.trim();
    if (files) throw new Error(`a secret was written to ${files}`);
  });
}
