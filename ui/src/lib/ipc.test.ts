// Only one UI module talks to Tauri: `ipc.ts` is the only importer of `@tauri-apps/api` and of
// the generated bindings (`bindings.ts`, tauri-specta), and it passes on the bindings' types
// only, never their `commands` (every call goes through ipc's wrappers, which throw an
// `ApiFailure`).
import { readFileSync, readdirSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const src = fileURLToPath(new URL("..", import.meta.url));
const sources = (readdirSync(src, { recursive: true }) as string[])
  .filter((f) => /\.(ts|svelte)$/.test(f))
  .map((f) => ({ file: relative(src, join(src, f)).split("\\").join("/"), text: readFileSync(join(src, f), "utf8") }));

/** The modules a source imports (static and dynamic imports, re-exports, vi.mock). */
function imports(text: string): string[] {
  const found: string[] = [];
  for (const m of text.matchAll(/\b(?:from|import)\s*\(?\s*["']([^"']+)["']/g)) found.push(m[1]);
  return found;
}

describe("the Tauri boundary", () => {
  it("finds the sources", () => {
    expect(sources.map((s) => s.file)).toEqual(expect.arrayContaining(["lib/ipc.ts", "lib/bindings.ts", "App.svelte"]));
  });

  it("is ipc.ts alone", () => {
    const crossing = sources
      .filter((s) => !["lib/ipc.ts", "lib/bindings.ts", "lib/ipc.test.ts"].includes(s.file))
      .flatMap((s) => imports(s.text).filter((m) => m.startsWith("@tauri-apps/") || /(^|\/)bindings(\.ts)?$/.test(m)).map((m) => `${s.file}: ${m}`));
    expect(crossing).toEqual([]);
  });

  it("passes on the bindings' types, not their commands", () => {
    const ipc = sources.find((s) => s.file === "lib/ipc.ts")!.text;
    expect(ipc).toMatch(/^export type \* from "\.\/bindings";$/m);
    expect(ipc).not.toMatch(/^export \* from/m);
    expect(ipc).not.toMatch(/export\s*\{[^}]*\bcommands\b/);
  });
});
