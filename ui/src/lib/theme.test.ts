import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { contrast } from "./logos";

const css = readFileSync(fileURLToPath(new URL("../app.css", import.meta.url)), "utf8");

function tokens(block: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const m of block.matchAll(/--([a-z0-9-]+):\s*(#[0-9a-fA-F]{6})\s*;/g)) out[m[1]] = m[2];
  return out;
}

const light = tokens(css.slice(css.indexOf(":root {"), css.indexOf("@media (prefers-color-scheme: dark)")));
const dark = { ...light, ...tokens(css.slice(css.indexOf("@media (prefers-color-scheme: dark)"))) };

// [foreground, background] pairs the UI uses for text.
const PAIRS: [string, string][] = [
  ["text", "bg"],
  ["text", "surface"],
  ["text", "surface-2"],
  ["muted", "bg"],
  ["muted", "surface"],
  ["muted", "surface-2"],
  ["accent", "surface"],
  ["accent", "bg"],
  ["accent-text", "accent"],
  ["accent-soft-text", "accent-soft"],
  ["text", "accent-soft"],
  ["ok", "ok-soft"],
  ["ok", "surface"],
  ["warn", "warn-soft"],
  ["warn", "surface"],
  ["bad", "bad-soft"],
  ["bad", "surface"],
  ["text", "bad-soft"],
  ["text", "warn-soft"],
  ["text", "ok-soft"],
];

describe("theme contrast (WCAG AA, 4.5:1)", () => {
  for (const [name, theme] of [
    ["light", light],
    ["dark", dark],
  ] as const) {
    it(`${name} theme`, () => {
      for (const [fg, bg] of PAIRS) {
        expect(theme[fg], `--${fg}`).toBeDefined();
        expect(theme[bg], `--${bg}`).toBeDefined();
        expect(contrast(theme[fg], theme[bg]), `${name}: --${fg} on --${bg}`).toBeGreaterThanOrEqual(4.5);
      }
    });
  }
});
