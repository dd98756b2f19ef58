import { readFileSync, readdirSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import * as simpleIcons from "simple-icons";
import { BADGE_COLORS, BRAND_ICONS, contrast, glyphColor, initials, logoFor } from "./logos";

const catalogDir = fileURLToPath(new URL("../../../catalog/", import.meta.url));

describe("logos", () => {
  it("bundles an icon for every logo the catalog names", () => {
    const slugs = readdirSync(catalogDir)
      .filter((f) => f.endsWith(".json") && f !== "catalog.schema.json")
      .map((f) => JSON.parse(readFileSync(catalogDir + f, "utf8")).logo as string | undefined)
      .filter((s): s is string => !!s);
    expect(slugs.length).toBeGreaterThan(10);
    const missing = slugs.filter((s) => !BRAND_ICONS.has(s));
    expect(missing).toEqual([]);
  });

  it("uses simple-icons' logo for every entry that has one there", () => {
    const available = new Set(Object.values(simpleIcons).map((i) => (i as { slug?: string }).slug).filter(Boolean));
    const entries = readdirSync(catalogDir)
      .filter((f) => f.endsWith(".json") && f !== "catalog.schema.json")
      .map((f) => JSON.parse(readFileSync(catalogDir + f, "utf8")) as { id: string; name: string; logo?: string });
    const unused = entries
      .filter((e) => !e.logo)
      .filter((e) => [e.id, e.id.split("-")[0], e.name.toLowerCase().replace(/[^a-z0-9]/g, "")].some((s) => available.has(s)))
      .map((e) => e.id);
    expect(unused).toEqual([]);
  });

  it("makes initials badges", () => {
    expect(initials("GitHub")).toBe("GH");
    expect(initials("Brave Search")).toBe("BS");
    expect(initials("slack")).toBe("SL");
    expect(initials("Tavily")).toBe("TA");
    expect(initials("aws-documentation")).toBe("AD");
    expect(initials("  ")).toBe("?");
    expect(initials("Ünïcode Ölé")).toBe("ÜÖ");
    // Registry names: the words that tell servers apart, not "mcp" and "server".
    expect(initials("mcp-server-fear-greed")).toBe("FG");
    expect(initials("reddit-research-mcp")).toBe("RR");
    expect(initials("airtable-mcp-server")).toBe("AI");
    expect(initials("GitHub MCP Server")).toBe("GH");
    expect(initials("mcp")).toBe("MC");
    expect(initials("MCP Server")).toBe("MS");
    const spec = logoFor(null, "Slack");
    expect(spec).toMatchObject({ kind: "initials", text: "SL", color: "#ffffff" });
    expect(logoFor("no-such-icon", "Slack")).toEqual(spec);
    expect(logoFor("github", "GitHub").kind).toBe("brand");
  });

  it("keeps glyphs and badge text at 4.5:1 or better", () => {
    for (const icon of BRAND_ICONS.values()) {
      const bg = `#${icon.hex}`;
      expect(contrast(bg, glyphColor(bg)), icon.title).toBeGreaterThanOrEqual(4.5);
    }
    for (const bg of BADGE_COLORS) expect(contrast(bg, "#ffffff"), bg).toBeGreaterThanOrEqual(4.5);
  });
});
