import { describe, expect, it } from "vitest";
import { AppBridge, MAX_HEIGHT, type BridgeHost, type Json } from "./appBridge";

function harness(agree = true) {
  const sent: Json[] = [];
  const calls: string[] = [];
  const opened: string[] = [];
  let height = 0;
  const host: BridgeHost = {
    post: (m) => sent.push(m),
    consent: async () => agree,
    call: async (tool) => {
      calls.push(tool);
      return { content: [{ type: "text", text: "12:00" }] };
    },
    read: async (uri) => ({ contents: [{ uri, text: "x" }] }),
    openLink: async (url) => {
      opened.push(url);
    },
    log: () => {},
    resize: (h) => (height = h),
  };
  const bridge = new AppBridge(host, { tool: { name: "get-time" }, theme: "dark", arguments: { a: 1 }, result: undefined, hostVersion: "1" });
  return { bridge, sent, calls, opened, height: () => height };
}

describe("the MCP Apps host bridge", () => {
  it("initializes, then sends the arguments and the result in order", async () => {
    const h = harness();
    await h.bridge.handle({ jsonrpc: "2.0", id: 1, method: "ui/initialize", params: { protocolVersion: "2026-01-26", appInfo: { name: "v", version: "1" }, appCapabilities: {} } });
    const init = h.sent[0] as { result: { protocolVersion: string; hostContext: { theme: string; toolInfo: { tool: { name: string } } } } };
    expect(init.result.protocolVersion).toBe("2026-01-26");
    expect(init.result.hostContext.theme).toBe("dark");
    expect(init.result.hostContext.toolInfo.tool.name).toBe("get-time");
    h.bridge.setResult({ content: [] }); // before `initialized`: held back
    expect(h.sent).toHaveLength(1);
    await h.bridge.handle({ jsonrpc: "2.0", method: "ui/notifications/initialized" });
    expect(h.sent.slice(1).map((m) => (m as { method: string }).method)).toEqual(["ui/notifications/tool-input", "ui/notifications/tool-result"]);
  });

  it("calls a tool only with the user's consent, opens https links only, bounds its height", async () => {
    const h = harness();
    await h.bridge.handle({ jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "get-time", arguments: {} } });
    expect(h.calls).toEqual(["get-time"]);
    const refused = harness(false);
    await refused.bridge.handle({ jsonrpc: "2.0", id: 3, method: "tools/call", params: { name: "get-time" } });
    expect(refused.calls).toEqual([]);
    expect((refused.sent[0] as { error: { code: number } }).error.code).toBe(-32001);
    await h.bridge.handle({ jsonrpc: "2.0", id: 4, method: "ui/open-link", params: { url: "javascript:alert(1)" } });
    await h.bridge.handle({ jsonrpc: "2.0", id: 5, method: "ui/open-link", params: { url: "https://example.com/" } });
    expect(h.opened).toEqual(["https://example.com/"]);
    await h.bridge.handle({ jsonrpc: "2.0", method: "ui/notifications/size-changed", params: { height: 1e9 } });
    expect(h.height()).toBe(MAX_HEIGHT);
    await h.bridge.handle({ jsonrpc: "2.0", id: 6, method: "ui/message", params: {} });
    expect((h.sent.at(-1) as { error: { code: number } }).error.code).toBe(-32601);
    await h.bridge.handle("not json-rpc");
    await h.bridge.handle([1, 2]);
  });
});

describe("a call that ends without a result", () => {
  it("is told to the view as cancelled, once, after it is initialized", async () => {
    const sent: Json[] = [];
    const bridge = new AppBridge(
      { post: (m) => sent.push(m), consent: async () => true, call: async () => ({}), read: async () => ({}), openLink: async () => {}, log: () => {}, resize: () => {} },
      { tool: { name: "t" }, theme: "light", arguments: {}, result: undefined, hostVersion: "1" },
    );
    bridge.setCancelled("the call was cancelled");
    expect(sent).toHaveLength(0);
    await bridge.handle({ jsonrpc: "2.0", method: "ui/notifications/initialized" });
    bridge.setCancelled("again");
    expect(sent.map((m) => (m as { method: string }).method)).toEqual(["ui/notifications/tool-input", "ui/notifications/tool-cancelled"]);
  });
});
