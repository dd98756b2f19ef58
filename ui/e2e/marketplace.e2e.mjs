// The marketplace: the catalog, every catalog entry's install form, search and filters, and the
// keyboard (Tab to a card, Enter opens it, Escape closes it).

import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { catalogDir } from "./fixtures.mjs";
import { s, step, shot, descriptionsEndOnWholeLines, fill, select, timings, windowErrors, root } from "./harness.mjs";

/** The catalog and its install forms, search, filters and keyboard. */
export async function marketplace() {
  await step("marketplace shows the catalog", async () => {
    // The virtual grid fills in as it measures the page: wait for a screenful and the rows beyond.
    await s.waitUntil(async () => (await s.findAll('[data-testid="catalog-card"]')).length >= 20, {
      timeout: 10000,
      what: "at least 20 cards",
    });
    const cards = await s.findAll('[data-testid="catalog-card"]');
    const first = await cards[0].attr("data-entry");
    if (first !== "e2e-fixture") throw new Error(`most popular first: got ${first}`);
    const t = await cards[0].text();
    if (!t.includes("stdio")) throw new Error(`transport label missing: ${t}`);
    await descriptionsEndOnWholeLines();
    // At the default window size (1240 px wide) the search and its filters take one row, none cut.
    const toolbar = await s.execute(
      "const bar = document.querySelector('.toolbar[role=\"search\"]');" +
        "const tops = new Set([...bar.children].map((c) => Math.round(c.getBoundingClientRect().top)));" +
        "const cut = [...bar.querySelectorAll('select')].filter((e) => e.scrollWidth > e.clientWidth + 1).map((e) => e.dataset.testid);" +
        "return { width: innerWidth, rows: tops.size, cut };",
    );
    if (toolbar.width >= 1200 && toolbar.rows !== 1) throw new Error(`the toolbar takes ${toolbar.rows} rows at ${toolbar.width} px`);
    if (toolbar.cut.length) throw new Error(`cut selects: ${toolbar.cut}`);
    await shot("01-marketplace");
  });

  await step("every catalog entry's install form renders, with each of its options and fields", async () => {
    // The fields each option's form must show, worked out from the catalog files themselves
    // (independently of the core's form engine), in the engine's order.
    const expected = (option) => {
      const t = option.transport;
      const keys =
        t.type === "stdio"
          ? [...(t.env_fields ?? []), ...(t.arg_fields ?? [])].map((f) => f.key)
          : [...(t.url_editable ? ["url"] : []), ...(t.header_fields ?? []).map((f) => f.key)];
      const a = option.auth;
      if (a.type === "api_key" || a.type === "bearer") keys.push(a.credential.secret_name);
      if (a.type === "oauth2" && a.oauth.registration === "pre_registered") keys.push("client_id", "client_secret");
      return keys;
    };
    const files = [join(root, "catalog"), catalogDir].flatMap((dir) =>
      readdirSync(dir)
        .filter((f) => f.endsWith(".json") && f !== "catalog.schema.json")
        .map((f) => JSON.parse(readFileSync(join(dir, f), "utf8"))),
    );
    if (files.length < 60) throw new Error(`only ${files.length} catalog entries`);
    const fieldsShown = () =>
      s.execute("return [...document.querySelectorAll('[data-testid=\"install-modal\"] [data-field]')].map((e) => e.dataset.field)");
    let forms = 0;
    // The marketplace is a virtual grid (only the cards in view exist): each entry is found by
    // searching its id among the curated entries.
    await select('[data-testid="market-source"]', "curated");
    for (const entry of files) {
      await fill('[data-testid="market-search"]', entry.id);
      await (await s.waitFor(`[data-testid="catalog-card"][data-entry="${entry.id}"]`, { what: `the card of ${entry.id}` })).click();
      const body = await s.waitFor('[data-testid="install-body"]:not([data-state="loading"])', { timeout: 10000, what: `the form of ${entry.id} to load` });
      if ((await body.attr("data-state")) !== "ready") throw new Error(`${entry.id}: ${await body.text()}`);
      for (const option of entry.options) {
        if (entry.options.length > 1) await (await s.find(`[data-testid="option-${option.id}"]`)).click();
        const want = expected(option);
        await s.waitUntil(async () => JSON.stringify(await fieldsShown()) === JSON.stringify(want), {
          timeout: 5000,
          what: `${entry.id}/${option.id} to show the fields ${JSON.stringify(want)} (shows ${JSON.stringify(await fieldsShown())})`,
        });
        if (await s.execute("return !!document.querySelector('[data-testid=\"install-render-error\"]')")) throw new Error(`${entry.id}/${option.id} could not be shown`);
        forms++;
        if (entry.id === "github" && option.id === entry.options[0].id) await shot("00-github-install-form");
      }
      const errors = await windowErrors();
      if (errors.length) throw new Error(`${entry.id}: the window reported ${errors.map((e) => e.message).join(" | ")}`);
      await s.keys("\uE00C");
      await s.waitGone('[data-testid="install-modal"]');
    }
    await fill('[data-testid="market-search"]', "");
    timings.forms = `${files.length} entries, ${forms} forms`;
    await fill('[data-testid="market-search"]', "");
    await select('[data-testid="market-source"]', "");
  });

  await step("search and category filter", async () => {
    await fill('[data-testid="market-search"]', "accepts only the right token");
    await s.waitUntil(async () => (await s.findAll('[data-testid="catalog-card"]')).length === 1, { what: "one search hit" });
    await fill('[data-testid="market-search"]', "");
    await select('[data-testid="market-category"]', "communication");
    await s.waitUntil(async () => {
      const ids = await Promise.all((await s.findAll('[data-testid="catalog-card"]')).map((c) => c.attr("data-entry")));
      return ids.includes("slack") && !ids.includes("e2e-fixture");
    }, { what: "communication entries only" });
    await shot("02-category-filter");
    await select('[data-testid="market-category"]', "");
    await fill('[data-testid="market-search"]', "no-such-integration-xyz");
    await s.waitFor('[data-testid="market-empty"]');
    await shot("03-search-empty");
    await fill('[data-testid="market-search"]', "");
    await s.waitUntil(async () => (await s.findAll('[data-testid="catalog-card"]')).length > 20, { what: "all cards back" });
    // "/" (and Ctrl+K) focus the search from anywhere on the page.
    await (await s.find("#market-title")).click();
    await s.keys("/");
    await s.waitUntil(async () => (await s.execute("return document.activeElement?.dataset?.testid ?? null")) === "market-search", { what: "/ to focus the search" });
    if ((await (await s.find('[data-testid="market-search"]')).prop("value")) !== "") throw new Error("the / was typed into the search");
  });

  await step("keyboard: Tab to a card, Enter opens it, Escape closes and returns focus", async () => {
    await (await s.find('[data-testid="market-search"]')).click();
    const active = () => s.execute("const a = document.activeElement; return a ? (a.dataset.entry || a.dataset.testid || a.id || a.tagName) : null");
    for (let i = 0; i < 14 && (await active()) !== "e2e-fixture"; i++) await s.keys("\uE004");
    if ((await active()) !== "e2e-fixture") throw new Error(`Tab did not reach the first card (at ${await active()})`);
    await s.keys("\uE007");
    await s.waitFor('[data-testid="install-modal"]');
    // Focus starts on the first field of the form, not on the close button.
    await s.waitUntil(async () => (await active()) === "field-TOKEN", { what: "focus on the first field (at " + (await active()) + ")" });
    await s.keys("\uE00C");
    await s.waitGone('[data-testid="install-modal"]');
    await s.waitUntil(async () => (await active()) === "e2e-fixture", { what: "focus back on the card" });
  });
}
