import { describe, expect, it } from "vitest";
import type { RegistryStatus, RegistryView } from "./ipc";
import { listingText, offlineNotice, syncFraction, syncText } from "./registry";

const view = (over: Partial<RegistryView> = {}): RegistryView => ({
  url: "https://registry.example",
  origin: "default",
  cached: true,
  servers: 1108,
  age: "3 hours",
  problem: null,
  error: null,
  hint: null,
  skipped: 0,
  ...over,
});

const status = (over: Partial<RegistryStatus> = {}): RegistryStatus => ({
  registries: [view()],
  syncing: false,
  progress: null,
  offline: false,
  stale: false,
  servers: 1108,
  pin_dependencies: true,
  ...over,
});

describe("registry status text", () => {
  it("shows progress of the first pull as a fraction when the size is known", () => {
    const s = status({ syncing: true, progress: { registry: "r", full: true, rows: 300, expected: 1108 } });
    expect(syncFraction(s)).toBeCloseTo(300 / 1108);
    expect(syncText(s)).toBe("Fetching the registry… 300 of about 1,108 servers");
    const first = status({ syncing: true, progress: { registry: "r", full: true, rows: 200, expected: null } });
    expect(syncFraction(first)).toBeNull();
    expect(syncText(first)).toBe("Fetching the registry… 200 servers so far");
  });

  it("says how old the listing is, and what to do when there is none", () => {
    expect(listingText(status())).toBe("1,108 registry servers · synced 3 hours ago");
    expect(listingText(status({ registries: [view({ cached: false, servers: 0, age: null })], servers: 0 }))).toMatch(/sync/);
  });

  it("tells the user when the list is the cache, in a few words and in full", () => {
    expect(offlineNotice(status())).toBeNull();
    const off = status({ offline: true, registries: [view({ error: "dns error", hint: "check" })] });
    expect(offlineNotice(off)).toEqual({
      short: "Couldn't reach registry.example",
      full: "https://registry.example could not be reached. Its 1,108 servers are shown as they were 3 hours ago.",
      key: "https://registry.example\ndns error",
    });
    // Another registry synced: its servers are what is shown.
    const other = status({
      registries: [view({ error: "dns error", cached: false, servers: 0, age: null }), view({ url: "https://company.example" })],
      servers: 1108,
    });
    expect(offlineNotice(other)?.full).toBe("https://registry.example could not be reached. Nothing of it is cached yet; the 1,108 servers of the other registries are shown.");
  });
});
