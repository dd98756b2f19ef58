// The doctor: a missing command named with its fix, for one server and for all of them; its
// actions (sign in, edit the server) and the server examined again after the fix.

import { spawnSync } from "node:child_process";
import { CLI, FIXTURE, GHOST_COMMAND, card, home } from "./fixtures.mjs";
import { s, step, shot, text, fill } from "./harness.mjs";

/** Run the command line on the app's config. */
function cli(args) {
  const r = spawnSync(CLI, args, { env: { ...process.env, PLUGBOARD_HOME: home }, encoding: "utf8" });
  if (r.status !== 0) throw new Error(`plugboard ${args.join(" ")}: ${r.stderr}`);
}

/** The doctor's findings and actions. */
export async function doctor() {
  await step("doctor: every server's report comes as it is ready, and a hanging one can be stopped", async () => {
    // A server that never answers, added from the command line (the app notices).
    cli(["add", "--stdio", "--no-test", "hang", "--", "sleep", "600"]);
    try {
      await s.waitFor(card("hang"), { timeout: 10000, what: "the server added from the command line" });
      await (await s.find('[data-testid="nav-doctor"]')).click();
      await (await s.waitFor('[data-testid="doctor-run"]')).click();
      const hanging = '[data-testid="doctor-pending"] li[data-name="hang"]';
      await s.waitFor(hanging, { what: "the hanging server listed as still being examined" });
      // The others report while it hangs.
      await s.waitFor('[data-testid="doctor-server"][data-name="fx2"]', { timeout: 30000, what: "fx2's report while hang still runs" });
      await s.waitUntil(async () => /still examining after \d+ s/.test(await text(hanging)), { timeout: 10000, what: "the hanging server's elapsed time" });
      await shot("19a-doctor-hanging-server");
      await (await s.find(`${hanging} [data-testid="doctor-stop"]`)).click();
      const stopped = await s.waitFor('[data-testid="doctor-unfinished"] li[data-name="hang"]', { timeout: 10000, what: "the stopped server" });
      if (!/stopped after \d+ s/.test(await stopped.text())) throw new Error(`stopped reads ${await stopped.text()}`);
      await s.waitGone('[data-testid="doctor-busy"]', 30000);
      // Its page is open when the command line removes it: the app says so and goes back.
      await (await s.find('[data-testid="nav-installed"]')).click();
      await (await (await s.waitFor(card("hang"))).find('[data-testid="server-name"]')).click();
      await s.waitFor('[data-testid="server-detail"]');
      cli(["remove", "hang"]);
      await s.waitUntil(async () => (await Promise.all((await s.findAll('[data-testid="toast"]')).map((t) => t.text()))).some((t) => t.includes("hang was removed outside the app")), {
        timeout: 10000,
        what: "the notice that hang was removed outside the app",
      });
      await s.waitGone('[data-testid="server-detail"]', 10000);
    } finally {
      spawnSync(CLI, ["remove", "hang"], { env: { ...process.env, PLUGBOARD_HOME: home } });
    }
    await s.waitGone(card("hang"), 10000);
    for (const t of await s.findAll('[data-testid="toast"] button')) await t.click();
  });

  await step("doctor: a missing command is named with its fix, from the card and for all servers", async () => {
    await (await (await s.find(card("ghost"))).find('[data-testid="server-diagnose"]')).click();
    await s.waitFor('[data-testid="doctor-panel"]');
    const finding = await s.waitFor('[data-testid="doctor-server"][data-name="ghost"] [data-testid="doctor-finding"][data-code="command.not_found"]', {
      timeout: 20000,
      what: "the command.not_found finding",
    });
    if ((await finding.attr("data-severity")) !== "error") throw new Error("command.not_found is not an error");
    const t = await finding.text();
    if (!t.includes(`${GHOST_COMMAND} was not found`)) throw new Error(`no message naming the command: ${t}`);
    const fix = await (await finding.find('[data-testid="doctor-fix"]')).text();
    if (!fix.includes("Install it, or give the full path of the program")) throw new Error(`wrong fix: ${fix}`);
    // The app's fix (edit the command) is the finding's primary action.
    const edit = await finding.find('[data-testid="doctor-action"]');
    if ((await edit.attr("data-action")) !== "edit" || !(await edit.text()).includes("Edit server")) throw new Error("no Edit server action");
    // The summary comes when the whole report is in, which can be after its first finding shows.
    await s.waitFor('[data-testid="doctor-summary"]', { what: "the report's summary" });
    if (!(await text('[data-testid="doctor-summary"]')).includes("1 error")) throw new Error("no summary");
    await shot("19-doctor-one-server");
    // Every server: the failing ones first; the OAuth server (signed out) and fx2 are there too.
    await (await s.find('[data-testid="nav-doctor"]')).click();
    await (await s.waitFor('[data-testid="doctor-run"]')).click();
    await s.waitFor('[data-testid="doctor-server"][data-name="fx2"]', { timeout: 30000, what: "the report of every server" });
    await s.waitFor('[data-testid="doctor-environment"] [data-testid="doctor-finding"][data-code="environment.keyring_ok"]', { what: "the machine's check (keyring)" });
    if (/\b(command|probe|remote|runtime)\.[a-z_]+\b/.test(await text('[data-testid="doctor-panel"]'))) throw new Error("the doctor shows internal codes");
    const names = await Promise.all((await s.findAll('[data-testid="doctor-server"]')).map((e) => e.attr("data-name")));
    for (const n of ["ghost", "fx2", "oauth-demo"]) if (!names.includes(n)) throw new Error(`${n} missing from ${names}`);
    // fx2 works (its tools mention ~/.ssh, so it may carry a warning about that).
    await s.waitFor('[data-testid="doctor-server"][data-name="fx2"] [data-testid="doctor-finding"][data-code="probe.ok"]');
    const first = await (await s.find('[data-testid="doctor-server"]')).attr("data-name");
    if (first === "fx2") throw new Error("a working server is listed before the failing ones");
    // The report is whole before its actions are used: a report that comes later is sorted in
    // (failing servers first) and moves the ones below it under the pointer.
    await s.waitFor('[data-testid="doctor-summary"]', { timeout: 60000, what: "the whole report's summary" });
    await s.waitGone('[data-testid="doctor-busy"]', 30000);
    await shot("20-doctor-all-servers");
    // The signed-out OAuth server: "Sign in" opens the sign-in dialog (then cancelled), and focus
    // comes back to the button.
    const signIn = await s.waitFor('[data-testid="doctor-server"][data-name="oauth-demo"] [data-testid="doctor-action"][data-action="sign_in"]', {
      what: "the Sign in action of oauth-demo",
    });
    if (!(await signIn.text()).includes("Sign in")) throw new Error(`the action reads ${await signIn.text()}`);
    await signIn.click();
    await s.waitFor('[data-testid="oauth-dialog"]');
    await s.waitFor('[data-testid="oauth-url"]', { timeout: 15000, what: "the sign-in job to await the user" });
    await shot("21-doctor-sign-in");
    await (await s.find('[data-testid="oauth-dialog"] footer .btn:last-child')).click();
    await s.waitGone('[data-testid="oauth-dialog"]');
    const focused = await s.execute("return document.activeElement?.getAttribute('data-action')");
    if (focused !== "sign_in") throw new Error(`focus is not back on Sign in (${focused})`);
    if (await s.execute("return !!document.querySelector('[data-testid=\"doctor-rechecking\"]')")) throw new Error("a cancelled sign-in re-examined the server");
    // "Edit server" on the missing command: give it a real one, and that server is examined again.
    await (await s.find('[data-testid="doctor-server"][data-name="ghost"] [data-testid="doctor-action"][data-action="edit"]')).click();
    await s.waitFor('[data-testid="custom-editor"]');
    await s.waitUntil(async () => (await (await s.find('[data-testid="custom-command"]')).prop("value")) === GHOST_COMMAND, { what: "the editor to load ghost" });
    await fill('[data-testid="custom-command"]', FIXTURE);
    // Earlier toasts sit over the dialog's footer: dismiss them first.
    for (const t of await s.findAll('[data-testid="toast"] button')) await t.click();
    await s.waitGone('[data-testid="toast"]');
    await (await s.find('[data-testid="custom-test"]')).click();
    await s.waitFor('[data-testid="custom-editor"] [data-testid="test-working"]', { timeout: 20000, what: "a working server without credentials (green)" });
    await (await s.find('[data-testid="custom-save"]')).click();
    await s.waitGone('[data-testid="custom-editor"]');
    await s.waitFor('[data-testid="doctor-server"][data-name="ghost"] [data-testid="doctor-finding"][data-code="probe.ok"]', {
      timeout: 30000,
      what: "ghost examined again after the edit",
    });
    await s.waitGone('[data-testid="doctor-rechecking"]');
    await shot("22-doctor-after-edit");
    await (await s.find('[data-testid="nav-installed"]')).click();
    await s.waitFor(card("fx2"));
  });
}
