// The MCP Registry and MCPB bundles: the synced listing and its filters, installing a registry
// server, a bundle file installed from the app, and an update tested (with its tool diff)
// before it is applied.

import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { TMDB_TOKEN, BUNDLE_KEY, NOTES, work, home, userHome, registryUrl, trust, notesV1, notesV2, config, runCli, publishNotes, card, keyring } from "./fixtures.mjs";
import { s, step, shot, text, fill, select, descriptionsEndOnWholeLines } from "./harness.mjs";
import { sleep } from "./webdriver.mjs";

/** The registry's listing, a registry install, a bundle, and an update. */
export async function registry() {
  await step("registry: synced listing, filters, deprecated and can't-run badges", async () => {
    await s.waitUntil(async () => (await text('[data-testid="registry-listing"]')).includes("1,108 registry servers"), {
      timeout: 30000,
      what: "the registry listing after the first sync",
    });
    await select('[data-testid="market-source"]', "registry");
    await select('[data-testid="market-runtime"]', "docker");
    const sources = () => s.execute("return [...document.querySelectorAll('[data-testid=catalog-card]')].map((c) => c.dataset.source)");
    await s.waitUntil(async () => {
      const shown = await sources();
      return shown.length > 0 && shown.every((x) => x === "registry");
    }, { what: "registry servers that run with Docker" });
    const count = Number((await text('[data-testid="market-count"]')).replace(/[^0-9]/g, ""));
    if (count < 50) throw new Error(`only ${count} Docker servers`);
    await shot("06a-registry-docker-filter");
    await select('[data-testid="market-runtime"]', "");
    await select('[data-testid="market-source"]', "");
    await s.waitUntil(async () => Number((await text('[data-testid="market-count"]')).replace(/[^0-9]/g, "")) > 1000, {
      what: "the whole list back",
    });
    // Scrolling far down the virtual grid renders the cards there, few at a time.
    await s.execute("document.getElementById('main').scrollTop = 60000");
    await s.waitUntil(async () => {
      const shown = await sources();
      return shown.length > 0 && shown.every((x) => x === "registry");
    }, { what: "registry cards deep in the list" });
    await descriptionsEndOnWholeLines();
    const rendered = (await sources()).length;
    if (rendered > 60) throw new Error(`${rendered} cards in the DOM: the grid is not virtual`);
    await shot("06b-registry-scrolled");
    await s.execute("document.getElementById('main').scrollTop = 0");
  });

  await step("registries in the app: a bad URL refused at the field, a registry removed and added back", async () => {
    await (await s.find('[data-testid="registries-manage"]')).click();
    await s.waitFor('[data-testid="registries-dialog"]');
    const row = `[data-testid="registry-row"][data-url="${registryUrl}"]`;
    if (!(await text(row)).includes("from PLUGBOARD_REGISTRY_URL")) throw new Error(`the registry's origin: ${await text(row)}`);
    await fill('[data-testid="registry-url"]', "ftp://registry.example");
    await (await s.find('[data-testid="registry-add"]')).click();
    const refused = await (await s.waitFor('[data-testid="registry-error"]', { what: "the bad URL refused" })).text();
    if (!refused.includes("ftp://registry.example")) throw new Error(`the bad URL: ${refused}`);
    await shot("06c-registries-dialog");
    const marketCount = async () => Number((await text('[data-testid="market-count"]')).replace(/[^0-9]/g, ""));
    await (await s.find(`${row} [data-testid="registry-remove"]`)).click();
    await s.waitGone(row);
    await s.waitUntil(async () => (await marketCount()) < 200, { what: "the registry's servers gone from the marketplace" });
    await fill('[data-testid="registry-url"]', registryUrl);
    await (await s.find('[data-testid="registry-add"]')).click();
    await s.waitFor(row, { what: "the registry back in the list" });
    await (await s.find('[data-testid="registries-dialog"] .close')).click();
    await s.waitUntil(async () => (await marketCount()) > 1000, { timeout: 30000, what: "its servers back after the sync" });
  });

  await step("registry: install a server from the registry, its secret in the keyring only", async () => {
    await fill('[data-testid="market-search"]', "tmdb movie");
    const entry = '[data-entry="io.github.tcehjaava/tmdb-mcp-server"]';
    await (await s.waitFor(entry, { timeout: 10000 })).click();
    await s.waitFor('[data-testid="install-modal"] [data-testid="field-TMDB_ACCESS_TOKEN"]');
    const origin = await text('[data-testid="install-origin"]');
    if (!origin.includes("tcehjaava") || !origin.includes("0.1.1")) throw new Error(`origin: ${origin}`);
    await fill('[data-testid="field-TMDB_ACCESS_TOKEN"]', TMDB_TOKEN);
    await (await s.find('[data-testid="test-connection"]')).click();
    await s.waitFor('[data-testid="test-reachable"], [data-testid="test-verified"]', { timeout: 150000, what: "the test of the npx server" });
    await shot("06c-registry-install-tested");
    await (await s.find('[data-testid="save-server"]')).click();
    await s.waitGone('[data-testid="install-modal"]');
    await s.waitFor(`${entry} [data-testid="installed-badge"]`);
    const saved = JSON.parse(config()).servers["tmdb-mcp-server"];
    if (!saved || JSON.stringify(saved.env) !== JSON.stringify({ TMDB_ACCESS_TOKEN: { secret: "TMDB_ACCESS_TOKEN" } })) {
      throw new Error(`saved as ${JSON.stringify(saved)}`);
    }
    if (saved.source?.registry?.name !== "io.github.tcehjaava/tmdb-mcp-server") throw new Error("no registry source");
    const kr = keyring();
    if (kr !== null && !kr.includes("TMDB_ACCESS_TOKEN")) throw new Error(`the token is not in the keyring: ${kr}`);
    const files = spawnSync("grep", ["-rl", TMDB_TOKEN, home], { encoding: "utf8" }).stdout.trim();
    if (files) throw new Error(`the token was written to ${files}`);
    await fill('[data-testid="market-search"]', "");
    await s.waitFor('[data-entry="e2e-silent"]', { what: "the marketplace back at its start" });
  });

  await step("a bundle file with a sensitive field: installed from the app, tested, its secret in the keyring only, gone with Remove", async () => {
    await (await s.find('[data-testid="open-bundle"]')).click();
    await fill('[data-testid="bundle-path"]', notesV1.file);
    await (await s.find('[data-testid="bundle-open-button"]')).click();
    await s.waitFor('[data-testid="install-modal"] [data-testid="install-bundle"]', { timeout: 20000, what: "the bundle's install form" });
    const about = await text('[data-testid="install-bundle"]');
    if (!about.includes("plugboard-notes") || !about.includes("1.0.0")) throw new Error(`bundle line: ${about}`);
    const keyType = await s.execute("return document.querySelector('[data-testid=field-api_key]').type");
    if (keyType !== "password") throw new Error(`the sensitive field is a ${keyType} input`);
    await s.waitFor('[data-testid="browse-folders"]', { what: "the folder picker of a directory field" });
    await fill('[data-testid="field-folders"]', work);
    await fill('[data-testid="field-api_key"]', BUNDLE_KEY);
    await (await s.find('[data-testid="test-connection"]')).click();
    await s.waitFor('[data-testid="test-reachable"], [data-testid="test-verified"]', { timeout: 30000, what: "the bundle server's test" });
    await shot("06d-bundle-tested");
    await (await s.find('[data-testid="save-server"]')).click();
    await s.waitGone('[data-testid="install-modal"]');
    const saved = JSON.parse(config()).servers["plugboard-notes"];
    if (!saved || JSON.stringify(saved.env.NOTES_API_KEY) !== JSON.stringify({ secret: "NOTES_API_KEY" })) throw new Error(`saved as ${JSON.stringify(saved)}`);
    const dir = saved.source?.bundle?.dir;
    if (!dir || !existsSync(join(dir, "server", "index.js"))) throw new Error(`no unpacked bundle: ${dir}`);
    const kr = keyring();
    if (kr !== null && !kr.includes("NOTES_API_KEY")) throw new Error(`the key is not in the keyring: ${kr}`);
    const files = spawnSync("grep", ["-rl", BUNDLE_KEY, home], { encoding: "utf8" }).stdout.trim();
    if (files) throw new Error(`the key was written to ${files}`);
    await (await s.find('[data-testid="nav-installed"]')).click();
    await (await (await s.waitFor(card("plugboard-notes"))).find('[data-testid="server-remove"]')).click();
    await s.waitFor('[data-testid="confirm-dialog"]');
    await (await s.find('[data-testid="confirm"]')).click();
    await s.waitGone(card("plugboard-notes"));
    if (existsSync(dir)) throw new Error(`the bundle is still at ${dir}`);
  });

  await step("update a registry bundle server: the badge, the test and the tool diff before it is applied", async () => {
    await publishNotes("1.0.0", notesV1);
    await (await s.find('[data-testid="nav-marketplace"]')).click();
    await (await s.waitFor('[data-testid="registry-sync"]')).click();
    // Not spawnSync: the bundle's HTTPS host runs in this process and must answer meanwhile.
    const env = { ...process.env, PLUGBOARD_HOME: home, PLUGBOARD_REGISTRY_URL: registryUrl, SSL_CERT_FILE: trust, HOME: userHome };
    const sync = await runCli(["registry", "sync"], { env });
    if (sync.status !== 0) throw new Error(`CLI registry sync: ${sync.stdout}${sync.stderr}`);
    const r = await runCli(["install", NOTES, "--secret-stdin", "api_key"], { env, input: BUNDLE_KEY });
    if (r.status !== 0) throw new Error(`CLI install: ${r.stdout}${r.stderr}`);
    await publishNotes("1.1.0", notesV2);
    await (await s.find('[data-testid="registry-sync"]')).click();
    await (await s.find('[data-testid="nav-installed"]')).click();
    // The Installed page asks for updates when it opens: leave and come back until it is listed.
    await s.waitUntil(async () => {
      await (await s.find('[data-testid="nav-marketplace"]')).click();
      await (await s.find('[data-testid="nav-installed"]')).click();
      await sleep(500);
      return await s.execute("return !!document.querySelector('[data-name=notes] [data-testid=update-available]')");
    }, { timeout: 40000, what: "the update badge of notes" });
    await shot("06e-update-badge");
    await (await s.find('[data-name="notes"] [data-testid="update-available"]')).click();
    await s.waitFor('[data-testid="update-dialog"] [data-testid="update-diff-summary"]', { timeout: 60000, what: "the tested update and its diff" });
    const added = await text('[data-testid="update-dialog"] [data-testid="tools-added"]');
    if (!added.includes("write_note")) throw new Error(`added tools: ${added}`);
    await shot("06f-update-diff");
    if (!JSON.parse(config()).servers.notes.source.registry.version.startsWith("1.0.0")) throw new Error("changed before it was applied");
    await (await s.find('[data-testid="update-apply"]')).click();
    await s.waitGone('[data-testid="update-dialog"]');
    const after = JSON.parse(config()).servers.notes;
    if (after.source.registry.version !== "1.1.0") throw new Error(`after the update: ${JSON.stringify(after.source)}`);
    await s.waitGone('[data-name="notes"] [data-testid="update-available"]');
    const kr = keyring();
    if (kr !== null && !kr.includes("NOTES_API_KEY")) throw new Error("the key left the keyring");
    await (await s.find('[data-testid="nav-marketplace"]')).click();
    await s.waitFor('[data-entry="e2e-silent"]', { what: "the marketplace back at its start" });
  });
}
