// "Use in other apps": the words for a client's state and for what an export did. Pure: tested
// in clients.test.ts.

import type { ClientView, ExportResult } from "./ipc";

/** A short status line for a client in the overview. */
export function clientStatus(c: ClientView): string {
  if (c.error) return `Cannot read its file: ${c.error}`;
  if (!c.exists) return "Not set up on this machine (no config file yet)";
  const n = c.servers.length;
  const ours = n === 0 ? "no Plugboard servers" : `${n} Plugboard ${n === 1 ? "server" : "servers"}`;
  const others = c.other_entries ? `, ${c.other_entries} other ${c.other_entries === 1 ? "entry" : "entries"}` : "";
  return `${ours}${others}`;
}

/** What an export did, in one sentence. */
export function exportMessage(r: ExportResult): string {
  const written = r.changes.filter((c) => c.action === "add" || c.action === "update").length;
  const removed = r.changes.filter((c) => c.action === "remove").length;
  const conflicts = r.changes.filter((c) => c.action === "conflict" || c.action === "left_alone").length;
  if (!r.changed_file) return `${r.label} already has your enabled servers.`;
  const parts = [`Updated ${r.label}: ${written} written`];
  if (removed) parts.push(`${removed} removed`);
  if (conflicts) parts.push(`${conflicts} left alone (not written by Plugboard)`);
  let text = parts.join(", ") + ".";
  if (r.backup) text += ` Backup: ${r.backup}`;
  return text;
}
