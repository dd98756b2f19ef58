import { describe, expect, it } from "vitest";
import { budgetBar, bulkChange, costOf, filterTools, formatTokens, hintChips, switchChange, toolsLabel } from "./tools";
import type { BudgetView, HintsView, ToolStateView } from "./ipc";

const hints = (over: Partial<HintsView>): HintsView => ({
  annotated: true,
  read_only: false,
  destructive: false,
  idempotent: false,
  open_world: false,
  may_change: true,
  label: "",
  ...over,
});

const tool = (name: string, description: string): ToolStateView => ({
  name,
  description,
  enabled: true,
  reason: "default",
  annotations: null,
  hints: hints({}),
  tokens: 10,
});

describe("tool list", () => {
  it("filters by every word of the query over name and description", () => {
    const tools = [tool("get-env", "Returns the environment"), tool("echo", "Echoes the message")];
    expect(filterTools(tools, "").length).toBe(2);
    expect(filterTools(tools, "ENV").map((t) => t.name)).toEqual(["get-env"]);
    expect(filterTools(tools, "echoes message").map((t) => t.name)).toEqual(["echo"]);
    expect(filterTools(tools, "echo environment")).toEqual([]);
  });

  it("shows hints as untrusted, and no annotations as may change things", () => {
    expect(hintChips(hints({ annotated: false }))).toEqual([
      expect.objectContaining({ label: "may change things", tone: "warn" }),
    ]);
    expect(hintChips(hints({ read_only: true })).map((c) => c.label)).toEqual(["read-only"]);
    expect(hintChips(hints({ destructive: true, open_world: true })).map((c) => c.label)).toEqual(["destructive", "open world"]);
    expect(hintChips(hints({ read_only: true }))[0].title).toContain("cannot check");
  });

  it("builds the changes the switches and bulk actions send", () => {
    expect(bulkChange("disable-changing").disable_annotated).toBe("not-read-only");
    expect(bulkChange("enable-all").all).toBe(true);
    expect(bulkChange("disable-all").all).toBe(false);
    expect(switchChange("echo", false)).toMatchObject({ disable: ["echo"], enable: [], all: null });
    expect(switchChange("echo", true)).toMatchObject({ disable: [], enable: ["echo"] });
  });
});

describe("budget", () => {
  const budget = (tools: number): BudgetView => ({
    tokens: 1097,
    tools,
    servers: [
      { name: "everything", tokens: 1097, tools: 12 },
      { name: "fresh", tokens: null, tools: null },
    ],
    clients: [],
    caps: [
      { client: "cursor", label: "Cursor", tools, cap: 40, over: tools > 40 },
      { client: "vscode", label: "VS Code", tools, cap: 128, over: tools > 128 },
    ],
    estimate_note: "estimated",
  });

  it("marks every client cap on a scale that fits them all", () => {
    const bar = budgetBar(budget(12));
    expect(bar.marks.map((m) => m.label)).toEqual(["Cursor", "VS Code"]);
    expect(bar.marks[1].at).toBeLessThan(100);
    expect(bar.marks[0].at).toBeCloseTo((40 / 128) * bar.marks[1].at, 5);
    expect(bar.fill).toBeCloseTo((12 / 40) * bar.marks[0].at, 5);
    expect(bar.marks.some((m) => m.over)).toBe(false);
    const big = budgetBar(budget(200));
    expect(big.marks.every((m) => m.over)).toBe(true);
    expect(big.fill).toBeLessThanOrEqual(100);
  });

  it("finds a card's cost and formats numbers", () => {
    expect(costOf(budget(12), "everything")).toEqual({ tokens: 1097, tools: 12 });
    expect(costOf(budget(12), "fresh")).toEqual({ tokens: null, tools: null });
    expect(costOf(budget(12), "off")).toBeNull();
    expect(costOf(null, "x")).toBeNull();
    expect(formatTokens(98700)).toBe("98,700");
    expect(toolsLabel(1)).toBe("1 tool");
    expect(toolsLabel(12)).toBe("12 tools");
  });
});
