// Use in other apps: the known clients, importing from Cursor (its token to the keyring), and
// chosen servers written into Claude Desktop and Cursor.

import { readFileSync } from "node:fs";
import { CURSOR_TOKEN, cursorFile, claudeFile, config, card, keyring } from "./fixtures.mjs";
import { s, step, shot, text } from "./harness.mjs";

/** The clients, import from Cursor, export to Claude Desktop and Cursor. */
export async function useInOtherApps() {
  await step("use in other apps lists the known clients", async () => {
    await (await s.find('[data-testid="nav-clients"]')).click();
    await s.waitFor('[data-testid="client-row"]');
    const rows = await s.findAll('[data-testid="client-row"]');
    if (rows.length !== 5) throw new Error(`expected 5 clients, got ${rows.length}`);
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
