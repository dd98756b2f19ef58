// The install form tests before it saves: a failing test saves nothing, a verified one makes
// Save the next step, and a running test can be cancelled.

import { spawnSync } from "node:child_process";
import { TOKEN, WRONG, SILENT, config, keyring } from "./fixtures.mjs";
import { s, step, shot, text, fill, focusStaysIn } from "./harness.mjs";

/** A failing test saves nothing; a verified test, then Save, installs. */
export async function testThenSave() {
  await step("a failing test shows the right message and saves nothing", async () => {
    await (await s.find('[data-entry="e2e-fixture"]')).click();
    await s.waitFor('[data-testid="install-modal"] [data-testid="field-TOKEN"]');
    await focusStaysIn('[data-testid="install-modal"]');
    await fill('[data-testid="field-name"]', "fx");
    await fill('[data-testid="field-TOKEN"]', WRONG);
    const save = await s.find('[data-testid="save-server"]');
    if ((await save.prop("disabled")) !== true) throw new Error("Save is enabled before a test");
    await (await s.find('[data-testid="test-connection"]')).click();
    const failed = await s.waitFor('[data-testid="test-failed"]', { timeout: 20000 });
    const kind = await failed.attr("data-kind");
    const title = await text('[data-testid="failure-title"]');
    if (kind !== "credentials" || !title.includes("rejected the credentials")) throw new Error(`kind ${kind}: ${title}`);
    const body = await failed.text();
    if (body.includes(WRONG)) throw new Error("the token is shown in the failure");
    await shot("04-install-test-failed");
    await (await s.find('[data-testid="field-TOKEN"]')).click();
    await s.keys("\uE00C"); // Escape: a typed secret would be lost, so it asks first
    await s.waitFor('[data-testid="confirm-dialog"]', { what: "the question before discarding a typed token" });
    // The question over the form keeps the keyboard, not the form beneath it.
    await focusStaysIn('[data-testid="confirm-dialog"]', 4);
    await shot("04b-discard-typed-secret");
    await (await s.find('[data-testid="confirm"]')).click();
    await s.waitGone('[data-testid="install-modal"]');
    if (config().includes('"fx"')) throw new Error("a failed test saved the server");
    const kr = keyring();
    if (kr !== null && kr.includes("TOKEN")) throw new Error("a failed test stored a secret");
  });

  await step("install with a verified test", async () => {
    await (await s.find('[data-entry="e2e-fixture"]')).click();
    await s.waitFor('[data-testid="field-TOKEN"]');
    await fill('[data-testid="field-name"]', "fx");
    await fill('[data-testid="field-TOKEN"]', TOKEN);
    await s.keys("\uE007"); // Enter in the field runs the test
    await s.waitFor('[data-testid="test-verified"]', { timeout: 20000, what: "Enter to run the test, and its verdict" });
    const save = await s.find('[data-testid="save-server"]');
    if ((await save.attr("data-proven")) !== "true") throw new Error("a verified test does not make Save the next step");
    await shot("05-install-verified");
    await (await s.find('[data-testid="save-server"]')).click();
    await s.waitGone('[data-testid="install-modal"]');
    await s.waitFor('[data-entry="e2e-fixture"] [data-testid="installed-badge"]');
    if (!config().includes('"fx"')) throw new Error("not saved");
    const kr = keyring();
    if (kr !== null && !kr.includes("TOKEN")) throw new Error(`the token is not in the keyring: ${kr}`);
  });
}

/** A running test is cancelled, and its server process is gone. */
export async function cancelTest() {
  await step("a running test can be cancelled", async () => {
    await (await s.find('[data-entry="e2e-silent"]')).click();
    await s.waitFor('[data-testid="install-modal"] [data-testid="test-connection"]');
    await (await s.find('[data-testid="test-connection"]')).click();
    await s.waitFor('[data-stage="initialize"], [data-stage="discover"]', { timeout: 10000, what: "the handshake stage" });
    // Focus stays on the test's button (now Cancel), the running stage shows its time, and a
    // line explains a slow start.
    const focused = await s.execute("return document.activeElement?.dataset?.testid ?? null");
    if (focused !== "cancel-test") throw new Error(`focus left the test button (${focused})`);
    const first = await text('[data-testid="stage-elapsed"]');
    await s.waitFor('[data-testid="slow-start"]', { timeout: 10000, what: "the still-starting line" });
    const later = await text('[data-testid="stage-elapsed"]');
    if (first === later) throw new Error(`the elapsed time does not move (${first})`);
    await shot("05b-test-running");
    if (spawnSync("pgrep", ["-f", SILENT]).status !== 0) throw new Error("the silent server is not running during its test");
    await (await s.find('[data-testid="cancel-test"]')).click();
    await s.waitFor('[data-testid="test-connection"]', { timeout: 5000, what: "the test to stop" });
    await s.waitFor('[data-testid="test-cancelled"]', { what: "the cancelled state" });
    await shot("05c-test-cancelled");
    await s.waitUntil(() => spawnSync("pgrep", ["-f", SILENT]).status !== 0, {
      timeout: 5000,
      what: "the cancelled server process to be gone",
    });
    await (await s.find('[data-testid="field-name"]')).click();
    await s.keys("\uE00C");
    await s.waitGone('[data-testid="install-modal"]');
    if (config().includes("e2e-silent")) throw new Error("cancelling saved something");
  });
}
