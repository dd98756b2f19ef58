// The Installed page's list: filtered by text and by status, sorted by name, status or when last
// checked; and the one-line summary of "Test all". Pure: tested in installedView.test.ts.

import type { Health } from "./health";

export type SortKey = "order" | "name" | "status" | "checked";
export type StatusFilter = "all" | "failed" | "unchecked" | "disabled" | "working";

export interface Row {
  name: string;
  enabled: boolean;
  /** What the text filter searches (name, command or URL, catalog entry). */
  text: string[];
  health: Health;
}

/** Worst first: failed, then not checked, then key not checked, then working/verified. */
const RANK: Record<Health["state"], number> = {
  failed: 0,
  checking: 1,
  unchecked: 2,
  "connectivity-only": 3,
  working: 4,
  verified: 4,
};

function at(h: Health): number {
  return "at" in h ? h.at : 0;
}

export function matchesStatus(row: Row, filter: StatusFilter): boolean {
  switch (filter) {
    case "all":
      return true;
    case "disabled":
      return !row.enabled;
    case "failed":
      return row.health.state === "failed";
    case "unchecked":
      return row.health.state === "unchecked";
    case "working":
      return ["verified", "working", "connectivity-only"].includes(row.health.state);
  }
}

/** The rows to show, in order. */
export function arrange<T extends Row>(rows: T[], query: string, filter: StatusFilter, sort: SortKey): T[] {
  const q = query.trim().toLowerCase();
  const shown = rows.filter((r) => matchesStatus(r, filter) && (!q || r.text.some((t) => t.toLowerCase().includes(q))));
  const byName = (a: T, b: T) => a.name.localeCompare(b.name, undefined, { sensitivity: "base" });
  switch (sort) {
    case "order":
      return shown;
    case "name":
      return [...shown].sort(byName);
    case "status":
      return [...shown].sort((a, b) => RANK[a.health.state] - RANK[b.health.state] || byName(a, b));
    case "checked":
      // Least recently checked first: those are the ones to look at.
      return [...shown].sort((a, b) => at(a.health) - at(b.health) || byName(a, b));
  }
}

/** How many rows each filter would show (for the filter's labels). */
export function counts(rows: Row[]): Record<StatusFilter, number> {
  const out = { all: 0, failed: 0, unchecked: 0, disabled: 0, working: 0 } as Record<StatusFilter, number>;
  for (const r of rows) for (const f of Object.keys(out) as StatusFilter[]) if (matchesStatus(r, f)) out[f]++;
  return out;
}

/** "Tested 53 servers: 2 working, 51 failed." */
export function testAllSummary(results: Health[]): string {
  const ok = results.filter((h) => ["verified", "working", "connectivity-only"].includes(h.state)).length;
  const failed = results.filter((h) => h.state === "failed").length;
  const other = results.length - ok - failed;
  const parts = [`${ok} working`, `${failed} failed`];
  if (other) parts.push(`${other} not finished`);
  return `Tested ${results.length} ${results.length === 1 ? "server" : "servers"}: ${parts.join(", ")}.`;
}
