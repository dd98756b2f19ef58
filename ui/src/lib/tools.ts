// Per-tool control and the context budget, for the detail view's tool list and the Installed
// page's budget bar: filtering, hint chips, bulk changes, number formats and the bar's scale.
// Figures come from the core (the same as `plugboard tools` / `plugboard budget`).

import type { BudgetView, HintsView, ToolStateView, ToolsChangeInput } from "./ipc";

/** Tools whose name or description contains every word of `query` (case-insensitive). */
export function filterTools(tools: ToolStateView[], query: string): ToolStateView[] {
  const words = query.trim().toLowerCase().split(/\s+/).filter(Boolean);
  if (!words.length) return tools;
  return tools.filter((t) => {
    const text = `${t.name} ${t.description ?? ""}`.toLowerCase();
    return words.every((w) => text.includes(w));
  });
}

export interface HintChip {
  label: string;
  tone: "ok" | "warn" | "bad" | "muted";
  title: string;
}

const UNTRUSTED = "A hint from the server itself: Plugboard cannot check it.";

/** The chips a tool's hints show. Absent annotations read as "may change things". */
export function hintChips(h: HintsView): HintChip[] {
  if (!h.annotated) {
    return [{ label: "may change things", tone: "warn", title: "The server sent no annotations, so nothing says this tool is safe." }];
  }
  const chips: HintChip[] = [];
  if (h.read_only) chips.push({ label: "read-only", tone: "ok", title: UNTRUSTED });
  else if (h.destructive) chips.push({ label: "destructive", tone: "bad", title: UNTRUSTED });
  else chips.push({ label: "may change things", tone: "warn", title: UNTRUSTED });
  if (h.open_world) chips.push({ label: "open world", tone: "muted", title: `Reaches outside systems. ${UNTRUSTED}` });
  return chips;
}

/** `1 tool`, `12 tools` */
export function toolsLabel(n: number): string {
  return `${n} tool${n === 1 ? "" : "s"}`;
}

/** `1,097` */
export function formatTokens(n: number): string {
  return n.toLocaleString("en-US");
}

export type Bulk = "disable-changing" | "enable-all" | "disable-all";

/** The change a bulk action makes. */
export function bulkChange(kind: Bulk): ToolsChangeInput {
  const base: ToolsChangeInput = { disable: [], enable: [], all: null, only: null, disable_annotated: null, new_tools: null };
  if (kind === "disable-changing") return { ...base, disable_annotated: "not-read-only" };
  return { ...base, all: kind === "enable-all" };
}

/** The change one switch makes. */
export function switchChange(tool: string, enabled: boolean): ToolsChangeInput {
  return { ...bulkChange("enable-all"), all: null, enable: enabled ? [tool] : [], disable: enabled ? [] : [tool] };
}

export interface BarMark {
  label: string;
  cap: number;
  /** Position on the bar, in percent. */
  at: number;
  over: boolean;
}

/** The bar: the enabled tools' share of a scale that shows every client cap. */
export function budgetBar(b: BudgetView): { fill: number; marks: BarMark[] } {
  const caps = b.caps.filter((c) => c.cap != null);
  const scale = Math.max(b.tools, ...caps.map((c) => c.cap ?? 0), 1) * 1.1;
  return {
    fill: Math.min(100, (b.tools / scale) * 100),
    marks: caps.map((c) => ({ label: c.label, cap: c.cap ?? 0, at: ((c.cap ?? 0) / scale) * 100, over: b.tools > (c.cap ?? 0) })),
  };
}

/** One server's figures from the budget (`null` when it is not in it: disabled). */
export function costOf(b: BudgetView | null, name: string): { tokens: number | null; tools: number | null } | null {
  const s = b?.servers.find((x) => x.name === name);
  return s ? { tokens: s.tokens, tools: s.tools } : null;
}
