import { describe, expect, it } from "vitest";
import { DEFAULT_INTERVAL_MINUTES, isDue, loadInterval, saveInterval } from "./healthInterval";

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
