// Background health checks: the interval setting, and the scheduler that tests due servers once
// a minute between start and stop (fake timers).
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { CHECK_EVERY_MS, DEFAULT_INTERVAL_MINUTES, HealthChecks, isDue, loadInterval, saveInterval, type Checkable } from "./healthChecks.svelte";

function memory(): Storage {
  const map = new Map<string, string>();
  return {
    getItem: (k: string) => map.get(k) ?? null,
    setItem: (k: string, v: string) => void map.set(k, v),
    removeItem: (k: string) => void map.delete(k),
    clear: () => map.clear(),
    key: () => null,
    get length() {
      return map.size;
    },
  };
}

describe("health interval setting", () => {
  it("defaults, saves and ignores invalid values", () => {
    const s = memory();
    expect(loadInterval(s)).toBe(DEFAULT_INTERVAL_MINUTES);
    saveInterval(5, s);
    expect(loadInterval(s)).toBe(5);
    saveInterval(0, s);
    expect(loadInterval(s)).toBe(0);
    s.setItem("plugboard.healthIntervalMinutes", "7");
    expect(loadInterval(s)).toBe(DEFAULT_INTERVAL_MINUTES);
  });

  it("is due only when enabled and older than the interval", () => {
    const now = 10 * 60 * 60_000;
    expect(isDue(0, now, 15)).toBe(true);
    expect(isDue(now - 14 * 60_000, now, 15)).toBe(false);
    expect(isDue(now - 15 * 60_000, now, 15)).toBe(true);
    expect(isDue(0, now, 0)).toBe(false);
  });
});

describe("the scheduler", () => {
  const T0 = Date.UTC(2026, 0, 1, 12);
  const minutes = (n: number) => n * 60_000;
  let servers: Checkable[];
  let canTest: boolean;
  let test: ReturnType<typeof vi.fn<(name: string) => void>>;
  let storage: Storage;

  const server = (name: string, checkedAt: number | null, over: Partial<Checkable> = {}): Checkable => ({
    name,
    enabled: true,
    error: null,
    health: checkedAt === null ? null : { checked_at: checkedAt },
    ...over,
  });
  const scheduler = () => new HealthChecks({ canTest: () => canTest, servers: () => servers, test, storage });

  beforeEach(() => {
    vi.useFakeTimers();
    vi.setSystemTime(T0);
    canTest = true;
    test = vi.fn<(name: string) => void>();
    storage = memory();
    servers = [
      server("fresh", T0 - minutes(1)),
      server("old", T0 - minutes(20)),
      server("never", null),
      server("off", T0 - minutes(60), { enabled: false }),
      server("broken", null, { error: "cannot be read" }),
    ];
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it("tests the due servers once a minute, from start until stop", () => {
    const checks = scheduler();
    expect(checks.minutes).toBe(DEFAULT_INTERVAL_MINUTES);
    checks.start();
    expect(checks.running).toBe(true);
    // Nothing at once: the first look is a minute away.
    vi.advanceTimersByTime(CHECK_EVERY_MS - 1);
    expect(test).not.toHaveBeenCalled();
    vi.advanceTimersByTime(1);
    expect(test.mock.calls.map(([n]) => n)).toEqual(["old", "never"]);
    // The app's tests update the servers' health: nothing is due a minute later.
    servers = servers.map((s) => (s.name === "old" || s.name === "never" ? server(s.name, Date.now()) : s));
    test.mockClear();
    vi.advanceTimersByTime(CHECK_EVERY_MS);
    expect(test).not.toHaveBeenCalled();
    // 15 minutes after its last check, "fresh" is due.
    vi.advanceTimersByTime(minutes(11));
    expect(test).not.toHaveBeenCalled();
    vi.advanceTimersByTime(minutes(1));
    expect(test.mock.calls.map(([n]) => n)).toEqual(["fresh"]);
    checks.stop();
    expect(checks.running).toBe(false);
    test.mockClear();
    vi.advanceTimersByTime(minutes(60));
    expect(test).not.toHaveBeenCalled();
  });

  it("starts once, and stops cleanly when never started", () => {
    const checks = scheduler();
    checks.stop();
    checks.start();
    checks.start();
    vi.advanceTimersByTime(CHECK_EVERY_MS);
    expect(test).toHaveBeenCalledTimes(2);
    checks.stop();
    expect(vi.getTimerCount()).toBe(0);
  });

  it("tests nothing when the app cannot test, or the interval is off", () => {
    const checks = scheduler();
    checks.start();
    canTest = false;
    vi.advanceTimersByTime(CHECK_EVERY_MS);
    expect(test).not.toHaveBeenCalled();
    canTest = true;
    checks.setMinutes(0);
    vi.advanceTimersByTime(minutes(120));
    expect(test).not.toHaveBeenCalled();
    checks.stop();
  });

  it("keeps the chosen interval, and the next scheduler starts with it", () => {
    const checks = scheduler();
    checks.setMinutes(60);
    expect(checks.minutes).toBe(60);
    expect(loadInterval(storage)).toBe(60);
    expect(scheduler().minutes).toBe(60);
    // "old" (20 minutes) is not due an hour-interval; "never" is.
    expect(checks.checkDue()).toEqual(["never"]);
  });
});
