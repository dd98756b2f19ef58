// Use in other apps: the known clients, importing from Cursor (its token to the keyring), and
// chosen servers written into Claude Desktop and Cursor.

import { spawnSync } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { CLI, CURSOR_TOKEN, FIXTURE, cursorFile, claudeFile, config, card, home, keyring, userHome } from "./fixtures.mjs";
import { s, step, shot, text } from "./harness.mjs";

/** The clients, import from Cursor, export to Claude Desktop and Cursor. */
export async function useInOtherApps() {
  await step("use in other apps lists the known clients", async () => {
    await (await s.find('[data-testid="nav-clients"]')).click();
    await s.waitFor('[data-testid="client-row"]');
    const rows = await s.findAll('[data-testid="client-row"]');
    if (rows.length !== 6) throw new Error(`expected 6 clients, got ${rows.length}`);
    await shot("18-use-in-other-apps");
    await (await s.find('[data-testid="nav-installed"]')).click();
    await s.waitFor(card("fx2"));
  });

  await step("import from Cursor (its token moves to the keyring), then use a chosen server in Claude Desktop", async () => {
    await (await s.find('[data-testid="nav-clients"]')).click();
    await (await s.waitFor('[data-testid="client-row"][data-client="cursor"] [data-testid="client-import"]', { what: "Import on Cursor's row" })).click();
    await s.waitFor('[data-testid="import-dialog"] [data-testid="import-server"][data-entry="cursor-gh"]');
    await shot("18b-import-from-cursor");
    await (await s.find('[data-testid="import-confirm"]')).click();
    await s.waitFor('[data-testid="import-done"]', { timeout: 15000 });
    await (await s.find('[data-testid="import-dialog"] footer .btn.primary')).click();
    await s.waitGone('[data-testid="import-dialog"]');
    if (config().includes(CURSOR_TOKEN)) throw new Error("the imported token is in Plugboard's config");
    if (readFileSync(cursorFile, "utf8").includes(CURSOR_TOKEN)) throw new Error("the token stayed in Cursor's file");
    const kr = keyring();
    if (kr !== null && !kr.includes(CURSOR_TOKEN)) throw new Error("the imported token is not in the keyring");

    // Claude Desktop: choose only fx2; the preview shows exactly that; then confirm.
    await (await s.waitFor('[data-testid="client-row"][data-client="claude-desktop"] [data-testid="client-export"]')).click();
    await s.waitFor('[data-testid="export-dialog"] [data-testid="export-server"]', { what: "the server checklist" });
    for (const row of await s.findAll('[data-testid="export-server"]')) {
      const name = await row.attr("data-name");
      const box = await row.find("input");
      if ((await box.prop("checked")) !== (name === "fx2")) await box.click();
    }
    await s.waitUntil(async () => {
      const changes = await Promise.all((await s.findAll('[data-testid="export-change"]')).map((c) => c.text()));
      return changes.length === 1 && changes[0].includes("fx2");
    }, { what: "a preview of exactly fx2" });
    if (!(await text('[data-testid="export-json"]')).includes('"run"')) throw new Error("the preview does not show the launcher");
    await shot("18c-use-in-preview");
    await (await s.find('[data-testid="export-confirm"]')).click();
    const hint = await s.waitFor('[data-testid="export-apply-hint"]', { timeout: 10000 });
    if (!(await hint.text()).includes("Restart Claude Desktop")) throw new Error(`apply hint: ${await hint.text()}`);
    const written = JSON.parse(readFileSync(claudeFile, "utf8"));
    if (Object.keys(written.mcpServers).join() !== "fx2") throw new Error(`Claude Desktop got ${Object.keys(written.mcpServers)}`);
    await (await s.find('[data-testid="export-close"]')).click();
    await s.waitGone('[data-testid="export-dialog"]');

    // "Add to Cursor" on one server's page adds that server only.
    await (await s.find('[data-testid="nav-installed"]')).click();
    await (await (await s.waitFor(card("ghost"))).find('[data-testid="server-name"]')).click();
    await (await s.waitFor('[data-testid="use-in"] [data-client="cursor"] [data-testid="use-in-add"]')).click();
    await s.waitUntil(async () => {
      const changes = await Promise.all((await s.findAll('[data-testid="export-change"]')).map((c) => c.attr("data-action")));
      return changes.includes("add");
    }, { what: "the preview of adding ghost to Cursor" });
    await (await s.find('[data-testid="export-confirm"]')).click();
    await s.waitFor('[data-testid="export-apply-hint"]', { timeout: 10000 });
    await (await s.find('[data-testid="export-close"]')).click();
    const cursor = JSON.parse(readFileSync(cursorFile, "utf8")).mcpServers;
    if (!cursor.ghost || cursor.fx2) throw new Error(`Cursor got ${Object.keys(cursor)}`);
    await s.waitFor('[data-testid="use-in"] [data-client="cursor"] .chip.ok', { what: "ghost in use in Cursor" });
    await (await s.find('[data-testid="nav-installed"]')).click();
    await s.waitFor(card("fx2"));
  });
}

/** A server that appears in Cursor's file behind Plugboard's back: marked new, imported in
 * quarantine (off, sandboxed, never started), taken out of the file, and the rest marked seen. */
export async function strangersInClientFiles() {
  await step("a server planted in Cursor's file is marked new, quarantined and removed", async () => {
    const planted = JSON.parse(readFileSync(cursorFile, "utf8"));
    planted.mcpServers.planted = { command: FIXTURE, args: ["--misbehave", "write-home"] };
    writeFileSync(cursorFile, JSON.stringify(planted));
    const marker = join(userHome, ".mcp-fixture-was-here");
    await (await s.find('[data-testid="nav-clients"]')).click();
    const row = '[data-testid="client-other"][data-entry="planted"]';
    await s.waitFor(`${row}[data-new="true"]`, { what: "the planted entry marked new" });
    await s.waitFor('[data-testid="clients-new"]');
    await shot("18d-planted-entry");
    // Looked at: no longer new (the file is not changed by that).
    await (await s.find('[data-testid="clients-mark-seen"]')).click();
    await s.waitFor(`${row}[data-new="false"]`, { what: "the planted entry seen" });
    await s.waitGone('[data-testid="clients-new"]', 8000);
    await (await s.find(`${row} [data-testid="other-quarantine"]`)).click();
    await s.waitUntil(() => {
      const servers = JSON.parse(config()).servers;
      return !!servers.planted;
    }, { what: "the quarantined server in the config" });
    const quarantined = JSON.parse(config()).servers.planted;
    if (quarantined.enabled !== false || quarantined.sandbox?.network !== "none") throw new Error(`quarantined: ${JSON.stringify(quarantined)}`);
    if (existsSync(marker)) throw new Error("the quarantine started the planted server");
    await (await s.find(`${row} [data-testid="other-remove"]`)).click();
    await (await s.waitFor('[data-testid="confirm-dialog"] [data-testid="confirm"]')).click();
    await s.waitGone(row, 8000);
    if (JSON.parse(readFileSync(cursorFile, "utf8")).mcpServers.planted) throw new Error("the entry is still in Cursor's file");
    const r = spawnSync(CLI, ["remove", "planted"], { env: { ...process.env, PLUGBOARD_HOME: home }, encoding: "utf8" });
    if (r.status !== 0) throw new Error(`plugboard remove: ${r.stderr}`);
    await (await s.find('[data-testid="nav-installed"]')).click();
  });
}
