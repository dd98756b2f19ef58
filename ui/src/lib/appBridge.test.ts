import { describe, expect, it } from "vitest";
import { AppBridge, MAX_HEIGHT, describeContent, type BridgeHost, type DisplayMode, type Json } from "./appBridge";

function harness(agree = true) {
  const sent: Json[] = [];
  const calls: string[] = [];
  const opened: string[] = [];
  const messages: string[] = [];
  const contexts: string[] = [];
  const modes: DisplayMode[] = [];
  let closed = false;
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
    message: (content) => messages.push(describeContent(content)),
    modelContext: (content, structured) => contexts.push(describeContent(content) + JSON.stringify(structured ?? null)),
    displayMode: (mode) => {
      modes.push(mode);
      return mode;
    },
    close: () => (closed = true),
  };
  const bridge = new AppBridge(host, { tool: { name: "get-time" }, theme: "dark", arguments: { a: 1 }, result: undefined, hostVersion: "1" });
  return { bridge, sent, calls, opened, messages, contexts, modes, closed: () => closed, height: () => height };
}

const methods = (sent: Json[]) => sent.map((m) => (m as { method?: string }).method ?? "(answer)");

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
    await h.bridge.handle({ jsonrpc: "2.0", id: 6, method: "ui/download-file", params: {} });
    expect((h.sent.at(-1) as { error: { code: number } }).error.code).toBe(-32601);
    await h.bridge.handle("not json-rpc");
    await h.bridge.handle([1, 2]);
  });
});

describe("a call that ends without a result", () => {
  it("is told to the view as cancelled, once, after it is initialized", async () => {
    const sent: Json[] = [];
    const bridge = new AppBridge(
      { post: (m) => sent.push(m), consent: async () => true, call: async () => ({}), read: async () => ({}), openLink: async () => {}, log: () => {}, resize: () => {}, message: () => {}, modelContext: () => {}, displayMode: (m) => m },
      { tool: { name: "t" }, theme: "light", arguments: {}, result: undefined, hostVersion: "1" },
    );
    bridge.setCancelled("the call was cancelled");
    expect(sent).toHaveLength(0);
    await bridge.handle({ jsonrpc: "2.0", method: "ui/notifications/initialized" });
    bridge.setCancelled("again");
    expect(sent.map((m) => (m as { method: string }).method)).toEqual(["ui/notifications/tool-input", "ui/notifications/tool-cancelled"]);
  });
});

describe("what a view sends for a conversation, its display mode and the host's context", () => {
  it("shows messages and the latest model context, refuses a message that is not the user's", async () => {
    const h = harness();
    await h.bridge.handle({ jsonrpc: "2.0", id: 1, method: "ui/message", params: { role: "user", content: [{ type: "text", text: "Book it" }, { type: "image", mimeType: "image/png", data: "AA==" }] } });
    expect(h.sent.at(-1)).toEqual({ jsonrpc: "2.0", id: 1, result: {} });
    expect(h.messages).toEqual(["Book it\n[image image/png]"]);
    await h.bridge.handle({ jsonrpc: "2.0", id: 2, method: "ui/message", params: { role: "assistant", content: [] } });
    expect((h.sent.at(-1) as { error: { code: number } }).error.code).toBe(-32602);
    expect(h.messages).toHaveLength(1);
    await h.bridge.handle({ jsonrpc: "2.0", id: 3, method: "ui/update-model-context", params: { content: [{ type: "text", text: "3 seats left" }], structuredContent: { seats: 3 } } });
    expect(h.contexts).toEqual(['3 seats left{"seats":3}']);
  });

  it("goes full screen and back, telling the view; a mode it does not offer keeps the current one", async () => {
    const h = harness();
    await h.bridge.handle({ jsonrpc: "2.0", id: 1, method: "ui/initialize", params: {} });
    const init = h.sent[0] as { result: { hostContext: { availableDisplayModes: string[] }; hostCapabilities: { message: object; updateModelContext: object } } };
    expect(init.result.hostContext.availableDisplayModes).toEqual(["inline", "fullscreen"]);
    expect(init.result.hostCapabilities.message).toBeTruthy();
    expect(init.result.hostCapabilities.updateModelContext).toBeTruthy();
    await h.bridge.handle({ jsonrpc: "2.0", method: "ui/notifications/initialized" });
    await h.bridge.handle({ jsonrpc: "2.0", id: 2, method: "ui/request-display-mode", params: { mode: "fullscreen" } });
    expect(h.modes).toEqual(["fullscreen"]);
    expect(h.sent.at(-1)).toEqual({ jsonrpc: "2.0", id: 2, result: { mode: "fullscreen" } });
    expect(h.sent.at(-2)).toEqual({ jsonrpc: "2.0", method: "ui/notifications/host-context-changed", params: { displayMode: "fullscreen" } });
    await h.bridge.handle({ jsonrpc: "2.0", id: 3, method: "ui/request-display-mode", params: { mode: "pip" } });
    expect(h.sent.at(-1)).toEqual({ jsonrpc: "2.0", id: 3, result: { mode: "fullscreen" } });
    expect(h.modes).toEqual(["fullscreen"]);
  });

  it("tells an initialized view of a theme change once, and closes when the view asks", async () => {
    const h = harness();
    h.bridge.setHostContext({ theme: "light" }); // before the handshake: part of initialize
    expect(h.sent).toHaveLength(0);
    await h.bridge.handle({ jsonrpc: "2.0", id: 1, method: "ui/initialize", params: {} });
    expect((h.sent[0] as { result: { hostContext: { theme: string } } }).result.hostContext.theme).toBe("light");
    await h.bridge.handle({ jsonrpc: "2.0", method: "ui/notifications/initialized" });
    h.bridge.setHostContext({ theme: "dark" });
    h.bridge.setHostContext({ theme: "dark" });
    expect(methods(h.sent).filter((m) => m === "ui/notifications/host-context-changed")).toHaveLength(1);
    expect(h.sent.at(-1)).toEqual({ jsonrpc: "2.0", method: "ui/notifications/host-context-changed", params: { theme: "dark" } });
    await h.bridge.handle({ jsonrpc: "2.0", method: "ui/notifications/request-teardown" });
    expect(h.closed()).toBe(true);
  });
});
