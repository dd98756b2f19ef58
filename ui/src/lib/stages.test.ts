import { describe, expect, it } from "vitest";
import { applyEvent, cacheHintText, downloader, formatMs, slowStartLine, stageLabel } from "./stages";

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

  it("shows the era probe, then initialize, for a legacy server", () => {
    let s = applyEvent([], { event: "started", stage: "discover" });
    s = applyEvent(s, { event: "finished", stage: "discover", ok: true, ms: 2 });
    s = applyEvent(s, { event: "started", stage: "initialize" });
    s = applyEvent(s, { event: "finished", stage: "initialize", ok: true, ms: 1 });
    expect(s.map((x) => [x.name, x.status])).toEqual([
      ["discover", "ok"],
      ["initialize", "ok"],
    ]);
  });

  it("formats durations and names stages", () => {
    expect(formatMs(12)).toBe("12 ms");
    expect(formatMs(1500)).toBe("1.5 s");
    expect(formatMs(42000)).toBe("42 s");
    expect(stageLabel("tools/list")).toBe("Listing its tools");
    expect(stageLabel("discover")).toBe("Reaching the server");
    expect(stageLabel("initialize")).toBe("Opening the session (older protocol)");
    expect(stageLabel("mystery")).toBe("mystery");
    // A stdio server's first answer is its start-up, with the download of a package runner.
    expect(stageLabel("connect", "")).toBe("Launching the command");
    expect(stageLabel("discover", "")).toBe("Starting the server");
    expect(stageLabel("discover", "npx -y @modelcontextprotocol/server-everything")).toBe("Starting the server (npx downloads the package on its first run)");
    expect(stageLabel("discover", "docker run -i --rm mcp/time")).toBe("Starting the server (Docker pulls the image on its first run)");
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

  it("puts caching hints in words", () => {
    expect(cacheHintText({ ttl_ms: 60000, cache_scope: "public" })).toBe("fresh for 60 s, public");
    expect(cacheHintText({ ttl_ms: 300000, cache_scope: "public" })).toBe("fresh for 5 min, public");
    expect(cacheHintText({ ttl_ms: 0, cache_scope: "private" })).toBe("not cached, private");
    expect(cacheHintText({ ttl_ms: null, cache_scope: null })).toBe("");
  });
});
