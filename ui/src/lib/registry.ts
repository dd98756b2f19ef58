// How the marketplace speaks of the registries: the sync's progress, the listing's age, the
// offline notice. Pure: tested in registry.test.ts.

import type { RegistryStatus } from "./ipc";

/** 0–1 for a progress bar, or null when the size is not known (an indeterminate bar). */
export function syncFraction(status: RegistryStatus): number | null {
  const p = status.progress;
  if (!p || !p.expected) return null;
  return Math.min(1, p.rows / p.expected);
}

/** "Syncing the registry… 300 of about 1,108 servers" / "…300 servers so far". */
export function syncText(status: RegistryStatus): string {
  const p = status.progress;
  if (!p) return "Syncing the registry…";
  const rows = p.rows.toLocaleString("en-US");
  const what = p.full ? "Fetching the registry" : "Fetching what changed in the registry";
  if (p.expected && p.full) return `${what}… ${rows} of about ${p.expected.toLocaleString("en-US")} servers`;
  return `${what}… ${rows} servers so far`;
}

/** "1,108 registry servers · synced 3 hours ago", or what to do when nothing is cached. */
export function listingText(status: RegistryStatus): string {
  const cached = status.registries.filter((r) => r.cached);
  if (!cached.length) return "No registry servers yet: sync to list the MCP Registry.";
  const ages = cached.map((r) => r.age).filter((a): a is string => !!a);
  const age = ages.length ? ` · synced ${ages[ages.length - 1]} ago` : "";
  const n = status.servers.toLocaleString("en-US");
  return `${n} registry ${status.servers === 1 ? "server" : "servers"}${age}`;
}

/** The offline notice: which registry could not be reached (the first), in a few words for the
 * registry line, and in full (what is shown instead) for its details; `key` says which failure
 * it is, so that a notice the user dismissed stays dismissed until something else fails. */
export function offlineNotice(status: RegistryStatus): { short: string; full: string; key: string } | null {
  const failed = status.registries.filter((r) => r.error);
  if (!failed.length) return null;
  const r = failed[0];
  let host = r.url;
  try {
    host = new URL(r.url).host;
  } catch {
    // not a URL: shown as it is
  }
  const others = status.servers - (r.cached ? r.servers : 0);
  const shown = r.cached
    ? `Its ${r.servers.toLocaleString("en-US")} servers are shown as they were ${r.age ?? "earlier"} ago.`
    : others > 0
      ? `Nothing of it is cached yet; the ${others.toLocaleString("en-US")} servers of the other registries are shown.`
      : "Nothing of it is cached yet.";
  const more = failed.length > 1 ? ` (and ${failed.length - 1} more)` : "";
  return {
    short: `Couldn't reach ${host}${more}`,
    full: `${r.url} could not be reached. ${shown}`,
    key: `${r.url}\n${r.error}`,
  };
}

/** Where a registry of the list comes from, in words. */
export function originLabel(origin: string): string {
  return (
    {
      default: "the official MCP Registry",
      environment: "from PLUGBOARD_REGISTRY_URL",
      settings: "added by you",
      policy: "set by your organisation",
    } as Record<string, string>
  )[origin] ?? origin;
}
