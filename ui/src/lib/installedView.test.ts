import { describe, expect, it } from "vitest";
import { arrange, counts, testAllSummary, type Row } from "./installedView";

const rows: Row[] = [
  { name: "zeta", enabled: true, text: ["zeta", "npx zeta"], health: { state: "verified", tools: 1, at: 30 } },
  { name: "Alpha", enabled: true, text: ["Alpha", "https://a.example/mcp"], health: { state: "failed", kind: "spawn", error: "", hint: "", at: 10 } },
  { name: "mid", enabled: false, text: ["mid"], health: { state: "unchecked" } },
  { name: "beta", enabled: true, text: ["beta"], health: { state: "working", tools: 2, at: 20 } },
];
const names = (r: Row[]) => r.map((x) => x.name);

describe("the Installed list", () => {
  it("sorts by name, status and last check", () => {
    expect(names(arrange(rows, "", "all", "order"))).toEqual(["zeta", "Alpha", "mid", "beta"]);
    expect(names(arrange(rows, "", "all", "name"))).toEqual(["Alpha", "beta", "mid", "zeta"]);
    expect(names(arrange(rows, "", "all", "status"))).toEqual(["Alpha", "mid", "beta", "zeta"]);
    expect(names(arrange(rows, "", "all", "checked"))).toEqual(["mid", "Alpha", "beta", "zeta"]);
  });
  it("filters by status and by text", () => {
    expect(names(arrange(rows, "", "failed", "name"))).toEqual(["Alpha"]);
    expect(names(arrange(rows, "", "disabled", "name"))).toEqual(["mid"]);
    expect(names(arrange(rows, "", "unchecked", "name"))).toEqual(["mid"]);
    expect(names(arrange(rows, "a.example", "all", "name"))).toEqual(["Alpha"]);
    expect(counts(rows)).toEqual({ all: 4, failed: 1, unchecked: 1, disabled: 1, working: 2 });
  });
  it("sums up a Test all", () => {
    expect(testAllSummary(rows.map((r) => r.health))).toBe("Tested 4 servers: 2 working, 1 failed, 1 not finished.");
  });
});
