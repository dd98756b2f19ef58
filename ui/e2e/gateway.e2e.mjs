// The Gateway page: a profile created from an installed server, its gateway written into
// Cursor's file (one entry in place of the per-server launchers), and a call a client makes
// through that gateway showing in the activity, without its values.

import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { createInterface } from "node:readline";
import { join } from "node:path";
import { CLI, appEnv, cursorFile, home } from "./fixtures.mjs";
import { s, step, shot, fill } from "./harness.mjs";

/** Start `plugboard serve --profile PROFILE` as a client would, make one call, and end it. */
async function callThroughGateway(profile, tool, args) {
  const child = spawn(CLI, ["serve", "--profile", profile], { env: { ...process.env, ...appEnv() }, stdio: ["pipe", "pipe", "inherit"] });
  const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
  let id = 0;
  const request = async (method, params) => {
    id += 1;
    child.stdin.write(JSON.stringify({ jsonrpc: "2.0", id, method, params }) + "\n");
    for (;;) {
      const { value, done } = await lines.next();
      if (done) throw new Error(`the gateway ended before answering ${method}`);
      const message = JSON.parse(value);
      if (message.id === id && !message.method) return message;
    }
  };
  try {
    await request("initialize", { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "e2e-client", version: "1" } });
    child.stdin.write(JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }) + "\n");
    const listed = await request("tools/list", {});
    const names = listed.result.tools.map((t) => t.name);
    if (!names.includes(tool)) throw new Error(`the gateway lists ${names.join(", ")}, not ${tool}`);
    return await request("tools/call", { name: tool, arguments: args });
  } finally {
    child.stdin.end();
    await new Promise((done) => child.on("close", done));
  }
}

/** Choose `value` in the `<select>` at `selector`, as a user would. */
async function chooseIn(selector, value) {
  await s.waitFor(selector);
  const chosen = await s.execute(
    `const el = document.querySelector(${JSON.stringify(selector)}); if (![...el.options].some((o) => o.value === ${JSON.stringify(value)})) return false; el.value = ${JSON.stringify(value)}; el.dispatchEvent(new Event('change', { bubbles: true })); return true;`,
  );
  if (!chosen) throw new Error(`no option ${value} in ${selector}`);
}

/** The permission rules of profile `work`, as kept in profiles.json. */
function workRules() {
  return JSON.parse(readFileSync(join(home, "profiles.json"), "utf8")).profiles?.work?.permissions ?? {};
}

/** Profiles, the gateway in Cursor's file, the activity. */
export async function gateway() {
  await step("gateway: a profile created, put into Cursor's file as one entry, a call shown in the activity", async () => {
    await (await s.find('[data-testid="nav-gateway"]')).click();
    await s.waitFor('[data-testid="profile"][data-name="default"]', { what: "the default profile" });
    await fill('[data-testid="profile-name"]', "work");
    await (await s.waitFor('[data-testid="profile-server"][data-name="fx2"]')).click();
    await (await s.find('[data-testid="profile-create-submit"]')).click();
    const card = await s.waitFor('[data-testid="profile"][data-name="work"]', { what: "the new profile" });
    const servers = await (await s.find('[data-testid="profile"][data-name="work"] [data-testid="profile-servers"]')).text();
    if (!servers.includes("fx2")) throw new Error(`the profile shows ${servers}`);
    if (!(await card.text()).includes("No app uses it yet")) throw new Error(await card.text());
    // Its servers start on first use: kept in the profile.
    await (await s.find('[data-testid="profile"][data-name="work"] [data-testid="profile-lazy"]')).click();
    await s.waitUntil(
      async () => JSON.parse(readFileSync(join(home, "profiles.json"), "utf8")).profiles?.work?.lazy === true,
      { what: "the profile to start its servers on first use" },
    );

    // Use in Cursor: the preview adds the gateway entry, then it is written.
    await s.execute(
      "const el = document.querySelector('[data-testid=\"profile\"][data-name=\"work\"] [data-testid=\"profile-use-in\"]'); el.value = 'cursor'; el.dispatchEvent(new Event('change', { bubbles: true }));",
    );
    await s.waitFor('[data-testid="export-dialog"] [data-testid="export-profile"]', { what: "the gateway export" });
    await s.waitUntil(
      async () => (await s.findAll('[data-testid="export-change"][data-action="add"]')).length > 0,
      { what: "the preview to add the gateway entry" },
    );
    await shot("30-gateway-use-in-cursor");
    await (await s.find('[data-testid="export-confirm"]')).click();
    await s.waitFor('[data-testid="export-done"]', { timeout: 15000 });
    await (await s.find('[data-testid="export-close"]')).click();
    await s.waitGone('[data-testid="export-dialog"]');
    const cursor = JSON.parse(readFileSync(cursorFile, "utf8"));
    const entry = cursor.mcpServers["plugboard-work"];
    if (!entry || entry.args.join(" ") !== "serve --profile work") throw new Error(`Cursor's file: ${JSON.stringify(cursor)}`);
    await s.waitUntil(
      async () => (await (await s.find('[data-testid="profile"][data-name="work"] [data-testid="profile-clients"]')).text()).includes("Cursor"),
      { what: "the profile to say Cursor uses it" },
    );

    // A call through the gateway shows in the activity (refreshed while the page is shown).
    const secretWord = "e2e-argument-value-9d21";
    const answer = await callThroughGateway("work", "fx2__echo", { message: secretWord });
    if (answer.result?.isError) throw new Error(`the call failed: ${JSON.stringify(answer)}`);
    const row = await s.waitFor('[data-testid="activity-row"]', { timeout: 10000, what: "the call in the activity" });
    const shown = await row.text();
    if (!shown.includes("fx2__echo") || !shown.includes("e2e-client")) throw new Error(`the activity shows ${shown}`);
    if (shown.includes(secretWord)) throw new Error("the activity shows an argument's value");
    await shot("31-gateway-activity");
    await (await s.find('[data-testid="nav-installed"]')).click();
  });

  await step("gateway: a client that cannot ask gets the user's answer through the app's dialog", async () => {
    const word = "e2e-asked-call-31b7";
    // The Gateway page lists the running gateway while the question waits.
    await (await s.find('[data-testid="nav-gateway"]')).click();
    // "Ask first" for every tool of fx2, set on the profile's card.
    await (await s.waitFor('[data-testid="profile"][data-name="work"] [data-testid="profile-rules"] summary')).click();
    await chooseIn('[data-testid="profile"][data-name="work"] [data-testid="profile-rule-target"]', "fx2");
    await chooseIn('[data-testid="profile"][data-name="work"] [data-testid="profile-rule-new-permission"]', "ask");
    await (await s.find('[data-testid="profile"][data-name="work"] [data-testid="profile-rule-add"]')).click();
    await s.waitFor('[data-testid="profile"][data-name="work"] [data-testid="profile-rule"][data-rule="fx2"]', { what: "the new rule" });
    if (workRules().fx2 !== "ask") throw new Error(`profiles.json: ${JSON.stringify(workRules())}`);
    for (const allow of [true, false]) {
      // The client declares no elicitation: the gateway asks the app and waits.
      const calling = callThroughGateway("work", "fx2__echo", { message: word });
      const dialog = await s.waitFor('[data-testid="gateway-question"]', { timeout: 20000, what: "the app's question" });
      const text = await dialog.text();
      if (!text.includes("e2e-client") || !text.includes("fx2")) throw new Error(`the question says ${text}`);
      const args = await (await s.find('[data-testid="gateway-question-arguments"]')).text();
      if (!args.includes(word)) throw new Error(`the question shows the arguments ${args}`);
      if (allow) {
        await shot("32-gateway-question");
        await s.waitUntil(
          async () => {
            const running = await s.findAll('[data-testid="running-gateway"][data-profile="work"]');
            if (running.length === 0) return false;
            const text = await running[0].text();
            return text.includes("e2e-client") && text.includes("fx2 · connected");
          },
          { timeout: 15000, what: "the running gateway with its client and its server connected" },
        );
      }
      await (await s.find(`[data-testid="gateway-question-${allow ? "allow" : "deny"}"]`)).click();
      const answer = await calling;
      await s.waitGone('[data-testid="gateway-question"]');
      const said = JSON.stringify(answer.result);
      if (allow && (answer.result?.isError || !said.includes(word))) throw new Error(`allowed, the call gave ${said}`);
      if (!allow && (!answer.result?.isError || !said.includes("declined"))) throw new Error(`denied, the call gave ${said}`);
    }
    // The rule becomes "hide" (fx2's tools leave the profile's list), then goes.
    const rule = '[data-testid="profile"][data-name="work"] [data-testid="profile-rule"][data-rule="fx2"]';
    await chooseIn(`${rule} [data-testid="profile-rule-permission"]`, "hide");
    await s.waitUntil(async () => workRules().fx2 === "hide", { what: "the rule to hide fx2's tools" });
    await shot("33-gateway-rules");
    await (await s.find(`${rule} [data-testid="profile-rule-remove"]`)).click();
    await s.waitGone(rule);
    if ("fx2" in workRules()) throw new Error(`profiles.json: ${JSON.stringify(workRules())}`);
    await (await s.find('[data-testid="nav-installed"]')).click();
  });

  await step("gateway: a hook added on the profile's card blocks a call, then is removed", async () => {
    const card = '[data-testid="profile"][data-name="work"]';
    const hooks = () => JSON.parse(readFileSync(join(home, "profiles.json"), "utf8")).profiles?.work?.hooks ?? [];
    await (await s.find('[data-testid="nav-gateway"]')).click();
    await (await s.waitFor(`${card} [data-testid="profile-hooks"] summary`)).click();
    // One without a command is refused, saying why; nothing is kept.
    await fill(`${card} [data-testid="profile-hook-matcher"]`, "fx2__*");
    await (await s.find(`${card} [data-testid="profile-hook-add"]`)).click();
    const refused = await (await s.waitFor(`${card} [data-testid="profile-hook-error"]`, { what: "the refusal" })).text();
    if (!refused.includes("command")) throw new Error(`the refusal says ${refused}`);
    if (hooks().length !== 0) throw new Error(`profiles.json: ${JSON.stringify(hooks())}`);
    await fill(`${card} [data-testid="profile-hook-command"]`, "echo 'the e2e hook says no' >&2; exit 2");
    await (await s.find(`${card} [data-testid="profile-hook-add"]`)).click();
    await s.waitFor(`${card} [data-testid="profile-hook"][data-matcher="fx2__*"]`, { what: "the new hook" });
    const kept = hooks();
    if (kept.length !== 1 || kept[0].event !== "pre_tool_use" || kept[0].matcher !== "fx2__*") {
      throw new Error(`profiles.json: ${JSON.stringify(kept)}`);
    }
    const answer = await callThroughGateway("work", "fx2__echo", { message: "hi" });
    const said = JSON.stringify(answer.result);
    if (!answer.result?.isError || !said.includes("the e2e hook says no")) throw new Error(`the hooked call gave ${said}`);
    await s.waitFor('[data-testid="activity-row"][data-decision="hook_blocked"]', { timeout: 10000, what: "the blocked call in the activity" });
    await shot("34-gateway-hooks");
    await (await s.find(`${card} [data-testid="profile-hook"] [data-testid="profile-hook-remove"]`)).click();
    await s.waitGone(`${card} [data-testid="profile-hook"]`);
    if (hooks().length !== 0) throw new Error(`profiles.json: ${JSON.stringify(hooks())}`);
    await (await s.find('[data-testid="nav-installed"]')).click();
  });
}
