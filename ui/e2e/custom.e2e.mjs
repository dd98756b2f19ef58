// The custom server editor: a remote server with a bearer token (saved after a failing test),
// a pasted command line split, tested and added, then renamed and removed on its page.

import { FIXTURE, BEARER, config, card, healthOf } from "./fixtures.mjs";
import { s, step, shot, text, fill, select, focusStaysIn } from "./harness.mjs";

/** Custom servers: a bearer token, and a pasted command line. */
export async function customServers() {
  await step("custom server with a bearer token", async () => {
    await (await s.find('[data-testid="nav-add-custom"]')).click();
    await s.waitFor('[data-testid="custom-name"]');
    // The dialog keeps the keyboard: it starts on the name, and Tab never reaches the page.
    await s.waitUntil(async () => s.execute("return document.activeElement?.dataset?.testid === 'custom-name'"), { what: "focus on the name field" });
    await focusStaysIn('[data-testid="custom-editor"]');
    await fill('[data-testid="custom-name"]', "bad name");
    await s.waitFor('[data-testid="custom-name-error"]', { what: "the name error while typing" });
    await shot("09-custom-validation");
    // Names differing only in case from an existing one, or starting with "-", are refused.
    await fill('[data-testid="custom-name"]', "FX2");
    await s.waitUntil(async () => (await text('[data-testid="custom-name-error"]')).includes("only in case"), { what: "the case rule" });
    await fill('[data-testid="custom-name"]', "-lead");
    await s.waitUntil(async () => (await text('[data-testid="custom-name-error"]')).includes("leading -"), { what: "the leading - rule" });
    await fill('[data-testid="custom-name"]', "remote-api");
    await (await s.find('[data-testid="transport-shttp"]')).click();
    await fill('[data-testid="custom-url"]', "http://127.0.0.1:9/mcp");
    await select('[data-testid="custom-auth"]', "bearer");
    await fill('[data-testid="custom-secret"]', BEARER);
    await (await s.find('[data-testid="custom-test"]')).click();
    const refused = await s.waitFor('[data-testid="custom-editor"] [data-testid="test-failed"]', { timeout: 20000, what: "the unreachable URL to fail before saving" });
    if ((await refused.attr("data-kind")) !== "connection") throw new Error(`kind ${await refused.attr("data-kind")}`);
    await (await s.find('[data-testid="custom-save-anyway"]')).click();
    await s.waitGone('[data-testid="custom-editor"]');
    await (await s.find('[data-testid="nav-installed"]')).click();
    await s.waitFor(card("remote-api"));
    await s.waitUntil(async () => (await healthOf("remote-api")) === "failed", { timeout: 20000, what: "the unreachable server to fail" });
    await shot("10-installed-two");
  });

  await step("custom editor: a pasted command line is split, tested, added; Rename and Remove on its page", async () => {
    await (await s.find('[data-testid="nav-add-custom"]')).click();
    await s.waitFor('[data-testid="custom-paste-section"]');
    await (await s.find('[data-testid="custom-paste-section"] summary')).click();
    await fill('[data-testid="custom-paste"]', `${FIXTURE} --name "pasted server"`);
    await (await s.find('[data-testid="custom-paste-apply"]')).click();
    await s.waitUntil(async () => (await (await s.find('[data-testid="custom-command"]')).prop("value")) === FIXTURE, { what: "the command to be split off" });
    const args = await (await s.find('[data-testid="custom-args"]')).prop("value");
    if (args !== "--name\npasted server") throw new Error(`arguments: ${JSON.stringify(args)}`);
    await fill('[data-testid="custom-name"]', "pasted");
    await (await s.find('[data-testid="custom-test"]')).click();
    await s.waitFor('[data-testid="custom-editor"] [data-testid="test-working"]', { timeout: 20000, what: "the pasted server to work" });
    await shot("09b-custom-pasted");
    await (await s.find('[data-testid="custom-save"]')).click();
    await s.waitGone('[data-testid="custom-editor"]');
    // A new server opens on its own page, with the editor's test as its health.
    await s.waitUntil(async () => (await text("#detail-title")) === "pasted", { what: "the new server's page" });
    await s.waitUntil(async () => (await (await s.find('[data-testid="server-detail"] [data-testid="health"]')).attr("data-state")) === "working", { what: "Working (green)" });
    await (await s.find('[data-testid="detail-rename"]')).click();
    await fill('[data-testid="rename-input"]', "Pasted-Two");
    await (await s.find('[data-testid="rename-submit"]')).click();
    await s.waitUntil(async () => (await text("#detail-title")) === "Pasted-Two", { what: "the renamed page" });
    await (await s.find('[data-testid="detail-remove"]')).click();
    await (await s.waitFor('[data-testid="confirm"]')).click();
    await s.waitFor('[data-testid="installed-list"]', { what: "back on Installed" });
    if (config().includes("Pasted-Two")) throw new Error("not removed");
  });
}
