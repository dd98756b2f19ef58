// The installed list is reloaded (a config change outside the app, a fix in a dialog) while the
// user changes servers on screen: a list that was asked for before such a change must not undo
// it when it arrives (the E2E saw a switch flip back off after a click).
import { describe, expect, it, vi } from "vitest";

type View = { name: string; enabled: boolean };
const pending: ((v: View[]) => void)[] = [];
const listServers = vi.fn(() => new Promise<View[]>((resolve) => pending.push(resolve)));

vi.mock("./ipc", () => ({
  api: { listServers: () => listServers(), outdated: vi.fn(async () => []) },
  testServer: vi.fn(),
  toFailure: (e: unknown) => ({ message: String(e), code: "internal" }),
}));
vi.mock("./toasts.svelte", () => ({ toast: { ok: vi.fn(), error: vi.fn() } }));

const { app } = await import("./state.svelte");

const settle = () => new Promise((r) => setTimeout(r, 0));

describe("refresh", () => {
  it("asks again when a server changed on screen while the list was on its way", async () => {
    app.servers = [{ name: "fx", enabled: false }] as never;
    const done = app.refresh();
    await settle();
    expect(pending.length).toBe(1);
    // The user switches fx on; the list asked for before that still says off.
    app.upsert({ name: "fx", enabled: true } as never);
    pending.shift()!([{ name: "fx", enabled: false }]);
    await settle();
    expect(app.servers[0].enabled).toBe(true);
    // The list is asked for again, and that one is taken.
    expect(pending.length).toBe(1);
    pending.shift()!([{ name: "fx", enabled: true }, { name: "new", enabled: true }]);
    await done;
    expect(app.servers.map((s) => [s.name, s.enabled])).toEqual([
      ["fx", true],
      ["new", true],
    ]);
  });

  it("takes the list at once when nothing changed meanwhile", async () => {
    const done = app.refresh();
    await settle();
    pending.shift()!([{ name: "only", enabled: false }]);
    await done;
    expect(listServers).toHaveBeenCalledTimes(3);
    expect(app.servers.map((s) => s.name)).toEqual(["only"]);
  });
});

describe("a verdict overtaken by events", () => {
  it("is marked out of date when the server's Try it connection ended on its own", () => {
    app.servers = [{ name: "fx", enabled: true, health: { ok: true, verification: "verified", tools: 2, checked_at: 1 } }] as never;
    expect(app.healthOf(app.servers[0])).toMatchObject({ state: "verified" });
    app.suspect("fx");
    expect(app.healthOf(app.servers[0])).toMatchObject({ state: "verified", stale: true });
    app.suspect("gone");
  });
});
