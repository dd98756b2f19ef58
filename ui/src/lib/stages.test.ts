import { describe, expect, it } from "vitest";
import { applyEvent, downloader, formatMs, slowStartLine, stageLabel } from "./stages";

describe("test progress", () => {
  it("tracks started and finished stages in order", () => {
    let s = applyEvent([], { event: "started", stage: "resolve" }, 100);
    s = applyEvent(s, { event: "finished", stage: "resolve", ok: true, ms: 3 });
    s = applyEvent(s, { event: "started", stage: "connect" }, 200);
    expect(s).toEqual([
      { name: "resolve", status: "ok", ms: 3 },
      { name: "connect", status: "running", startedAt: 200 },
    ]);
    s = applyEvent(s, { event: "finished", stage: "connect", ok: false, ms: 1500 });
    expect(s[1]).toEqual({ name: "connect", status: "failed", ms: 1500 });
  });

  it("formats durations and names stages, the modern era's discover too", () => {
    expect(formatMs(12)).toBe("12 ms");
    expect(formatMs(1500)).toBe("1.5 s");
    expect(formatMs(42000)).toBe("42 s");
    expect(stageLabel("tools/list")).toBe("List tools");
    expect(stageLabel("discover")).not.toBe("discover");
    expect(stageLabel("mystery")).toBe("mystery");
  });

  it("explains a slow start by the program that downloads the server", () => {
    expect(downloader("npx -y @modelcontextprotocol/server-everything")).toBe("npx");
    expect(downloader("/usr/bin/uvx mcp-server-time")).toBe("uvx");
    expect(downloader("node server.js")).toBeNull();
    expect(slowStartLine("initialize", "npx -y x")).toContain("first npx run downloads the package");
    expect(slowStartLine("discover", "docker run -i x")).toContain("Docker image");
    expect(slowStartLine("connect", "node x")).toContain("Still waiting");
    expect(slowStartLine("tools/list", "npx x")).toBeNull();
  });
});
