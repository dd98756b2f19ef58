import { describe, expect, it } from "vitest";
import { applyEvent, formatMs, stageLabel } from "./stages";

describe("test progress", () => {
  it("tracks started and finished stages in order", () => {
    let s = applyEvent([], { event: "started", stage: "resolve" });
    s = applyEvent(s, { event: "finished", stage: "resolve", ok: true, ms: 3 });
    s = applyEvent(s, { event: "started", stage: "connect" });
    expect(s).toEqual([
      { name: "resolve", status: "ok", ms: 3 },
      { name: "connect", status: "running" },
    ]);
    s = applyEvent(s, { event: "finished", stage: "connect", ok: false, ms: 1500 });
    expect(s[1]).toEqual({ name: "connect", status: "failed", ms: 1500 });
  });

  it("formats durations and names stages", () => {
    expect(formatMs(12)).toBe("12 ms");
    expect(formatMs(1500)).toBe("1.5 s");
    expect(formatMs(42000)).toBe("42 s");
    expect(stageLabel("tools/list")).toBe("List tools");
    expect(stageLabel("mystery")).toBe("mystery");
  });
});
