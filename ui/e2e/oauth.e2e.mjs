// OAuth: signing in by pasting the redirect, a custom server whose 401 advertises OAuth (Sign
// in on its card, or one click in the editor), a service account (client credentials, no
// browser), and OAuth chosen in the custom editor (Add and sign in).

import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { home, oauthPort, config, card, healthOf } from "./fixtures.mjs";
import { s, step, shot, fill, select, reveal } from "./harness.mjs";

/** OAuth sign-ins. */
export async function oauth() {
  await step("OAuth sign-in (paste the redirect)", async () => {
    await (await s.find('[data-testid="nav-installed"]')).click();
    await s.waitFor(card("oauth-demo"));
    await (await (await s.find(card("oauth-demo"))).find('[data-testid="server-signin"]')).click();
    const urlField = await s.waitFor('[data-testid="oauth-url"]', { timeout: 15000, what: "the job to await the user" });
    const authUrl = await urlField.prop("value");
    if (!authUrl.startsWith(`http://127.0.0.1:${oauthPort}/`)) throw new Error(`unexpected authorization URL ${authUrl}`);
    await shot("15-oauth-waiting");
    // The fixture consents at once: its answer is a redirect to the app's loopback callback.
    const consent = await fetch(authUrl, { redirect: "manual" });
    const redirect = consent.headers.get("location");
    if (!redirect || !redirect.includes("code=")) throw new Error(`no code in the redirect (${consent.status})`);
    await (await s.find('[data-testid="oauth-paste-section"] summary')).click();
    await fill('[data-testid="oauth-paste"]', redirect);
    await (await s.find('[data-testid="oauth-paste-submit"]')).click();
    await s.waitFor('[data-testid="oauth-succeeded"]', { timeout: 15000 });
    await s.waitUntil(async () => !["unchecked", "checking"].includes(await healthOf("oauth-demo")), {
      timeout: 20000,
      what: "the test after signing in",
    });
    const after = await healthOf("oauth-demo");
    if (!["verified", "working", "connectivity-only"].includes(after)) {
      const record = join(home, "health", "oauth-demo.json");
      const why = existsSync(record) ? JSON.stringify(JSON.parse(readFileSync(record, "utf8")).result).slice(0, 600) : after;
      throw new Error(`the test after signing in did not pass: ${why}`);
    }
    await shot("16-oauth-signed-in");
    await (await s.find('[data-testid="oauth-dialog"] footer .btn')).click();
    await s.waitGone('[data-testid="oauth-dialog"]');
  });

  await step("a custom server whose 401 advertises OAuth: Sign in on its card switches it to OAuth and tests it", async () => {
    await (await s.find('[data-testid="nav-add-custom"]')).click();
    await fill('[data-testid="custom-name"]', "oauth-custom");
    await (await s.find('[data-testid="transport-shttp"]')).click();
    await fill('[data-testid="custom-url"]', `http://127.0.0.1:${oauthPort}/mcp`);
    // The editor offers OAuth as an auth mode, with its optional fields.
    await select('[data-testid="custom-auth"]', "oauth2");
    await s.waitFor('[data-testid="custom-oauth"] [data-testid="custom-oauth-client"]');
    await select('[data-testid="custom-auth"]', "none");
    await (await s.find('[data-testid="custom-test"]')).click();
    const failed = await s.waitFor('[data-testid="custom-editor"] [data-testid="test-failed"]', { timeout: 20000 });
    if ((await failed.attr("data-kind")) !== "unauthorized") throw new Error(`kind ${await failed.attr("data-kind")}`);
    await s.waitFor('[data-testid="custom-oauth-offer"] [data-testid="custom-switch-oauth"]', { what: "the one-click switch to OAuth" });
    await (await s.find('[data-testid="custom-save-anyway"]')).click();
    await s.waitGone('[data-testid="custom-editor"]');
    await (await s.find('[data-testid="nav-installed"]')).click();
    await s.waitUntil(async () => (await healthOf("oauth-custom")) === "failed", { timeout: 20000, what: "the 401 on its card" });
    await (await (await s.find(card("oauth-custom"))).find('[data-testid="server-signin"]')).click();
    const urlField = await s.waitFor('[data-testid="oauth-url"]', { timeout: 15000, what: "the sign-in to await the user" });
    await s.waitFor('[data-testid="oauth-copy"]');
    const consent = await fetch(await urlField.prop("value"), { redirect: "manual" });
    await (await s.find('[data-testid="oauth-paste-section"] summary')).click();
    await fill('[data-testid="oauth-paste"]', consent.headers.get("location"));
    await (await s.find('[data-testid="oauth-paste-submit"]')).click();
    await s.waitFor('[data-testid="oauth-succeeded"]', { timeout: 20000, what: "Signed in, after the test passed" });
    await shot("16b-custom-oauth-signed-in-and-tested");
    const auth = JSON.parse(config()).servers["oauth-custom"].auth;
    if (auth?.type !== "oauth2") throw new Error(`auth is ${JSON.stringify(auth)}`);
    await (await s.find('[data-testid="oauth-dialog"] footer .btn')).click();
    await s.waitGone('[data-testid="oauth-dialog"]');
    if (!["verified", "working", "connectivity-only"].includes(await healthOf("oauth-custom"))) throw new Error("the card does not show the passing test");
  });

  await step("a custom server whose 401 advertises OAuth: one click switches the editor to OAuth, saves and signs in", async () => {
    await (await s.find('[data-testid="nav-add-custom"]')).click();
    await fill('[data-testid="custom-name"]', "oauth-oneclick");
    await (await s.find('[data-testid="transport-shttp"]')).click();
    await fill('[data-testid="custom-url"]', `http://127.0.0.1:${oauthPort}/mcp`);
    await (await s.find('[data-testid="custom-test"]')).click();
    await s.waitFor('[data-testid="custom-switch-oauth"]', { timeout: 20000, what: "the offer after the 401" });
    await shot("16c-custom-oauth-offer");
    await (await s.find('[data-testid="custom-switch-oauth"]')).click();
    const urlField = await s.waitFor('[data-testid="oauth-url"]', { timeout: 15000, what: "the sign-in after the one click" });
    const consent = await fetch(await urlField.prop("value"), { redirect: "manual" });
    await (await s.find('[data-testid="oauth-paste-section"] summary')).click();
    await fill('[data-testid="oauth-paste"]', consent.headers.get("location"));
    await (await s.find('[data-testid="oauth-paste-submit"]')).click();
    await s.waitFor('[data-testid="oauth-succeeded"]', { timeout: 20000 });
    const auth = JSON.parse(config()).servers["oauth-oneclick"].auth;
    if (auth?.type !== "oauth2") throw new Error(`auth is ${JSON.stringify(auth)}`);
    await (await s.find('[data-testid="oauth-dialog"] footer .btn')).click();
    await s.waitGone('[data-testid="oauth-dialog"]');
  });

  await step("a service account in the editor: client credentials, tested without a browser, the secret in the keyring", async () => {
    // The "developer console": a confidential client at the fixture.
    const registered = await (
      await fetch(`http://127.0.0.1:${oauthPort}/register`, {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify({ redirect_uris: ["http://127.0.0.1:9/callback"], token_endpoint_auth_method: "client_secret_basic" }),
      })
    ).json();
    await (await s.find('[data-testid="nav-add-custom"]')).click();
    await fill('[data-testid="custom-name"]', "oauth-service");
    await (await s.find('[data-testid="transport-shttp"]')).click();
    await fill('[data-testid="custom-url"]', `http://127.0.0.1:${oauthPort}/mcp`);
    await select('[data-testid="custom-auth"]', "oauth2");
    await select('[data-testid="custom-oauth-grant"]', "client_credentials");
    await reveal('[data-testid="custom-oauth-client"]');
    await fill('[data-testid="custom-oauth-client"]', registered.client_id);
    await reveal('[data-testid="custom-oauth-secret"]');
    await fill('[data-testid="custom-oauth-secret"]', registered.client_secret);
    await (await s.find('[data-testid="custom-test"]')).click();
    await s.waitFor('[data-testid="custom-editor"] [data-testid="test-verified"], [data-testid="custom-editor"] [data-testid="test-working"]', {
      timeout: 20000,
      what: "the test with a token got by client credentials",
    });
    await shot("16d-custom-client-credentials");
    await (await s.find('[data-testid="custom-save"]')).click();
    await s.waitGone('[data-testid="custom-editor"]');
    const text = config();
    if (text.includes(registered.client_secret)) throw new Error("the client secret is in the config");
    const auth = JSON.parse(text).servers["oauth-service"].auth;
    if (auth?.grant?.type !== "client_credentials") throw new Error(`auth is ${JSON.stringify(auth)}`);
  });

  await step("a custom server with OAuth chosen in the editor: Add and sign in", async () => {
    await (await s.find('[data-testid="nav-add-custom"]')).click();
    await fill('[data-testid="custom-name"]', "oauth-editor");
    await (await s.find('[data-testid="transport-shttp"]')).click();
    await fill('[data-testid="custom-url"]', `http://127.0.0.1:${oauthPort}/mcp`);
    await select('[data-testid="custom-auth"]', "oauth2");
    await fill('[data-testid="custom-oauth-scopes"]', "mcp:read");
    await (await s.find('[data-testid="custom-save-signin"]')).click();
    const urlField = await s.waitFor('[data-testid="oauth-url"]', { timeout: 15000, what: "the sign-in to start on its own" });
    const consent = await fetch(await urlField.prop("value"), { redirect: "manual" });
    await (await s.find('[data-testid="oauth-paste-section"] summary')).click();
    await fill('[data-testid="oauth-paste"]', consent.headers.get("location"));
    await (await s.find('[data-testid="oauth-paste-submit"]')).click();
    await s.waitFor('[data-testid="oauth-succeeded"]', { timeout: 20000 });
    await (await s.find('[data-testid="oauth-dialog"] footer .btn')).click();
    await s.waitGone('[data-testid="oauth-dialog"]');
  });
}
