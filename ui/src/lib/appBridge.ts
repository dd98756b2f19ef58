// The host side of MCP Apps (`io.modelcontextprotocol/ui`, 2026-01-26) for Try it: a tool's
// view runs in a sandboxed frame and speaks JSON-RPC over postMessage. This module answers it:
// `ui/initialize` (who we are, what we offer, the tool and the theme), `ping`, `tools/call`
// (only after the user agrees, and only for tools the server lets its views call: the core
// checks that again), `resources/read`, `ui/open-link` (https only, through the app's opener),
// `ui/request-display-mode` (inline or fullscreen), `ui/message` and `ui/update-model-context`
// (Try it has no conversation: the panel shows what the view sent, and says so); it tells the
// view the call's arguments and result once the view says it is initialized, what changed in
// the host's context (theme, display mode), and resizes the frame as the view asks. Anything
// else is refused. Arguments come whole from the form, so `tool-input-partial` (for hosts that
// stream a model's arguments) is never sent. Pure: the frame, the session and the dialogs are
// given to it.

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

export interface BridgeHost {
  /** Send a message to the view. */
  post(message: Json): void;
  /** The user agreed to the view calling `tool` with `args`. */
  consent(tool: string, args: Json): Promise<boolean>;
  /** Call a tool of the session for the view: the result as the server sent it. */
  call(tool: string, args: Json): Promise<Json>;
  /** Read a resource of the session: `{contents: […]}`. */
  read(uri: string): Promise<Json>;
  openLink(url: string): Promise<void>;
  log(text: string): void;
  resize(height: number): void;
  /** The view finished its handshake. */
  connected?(): void;
  /** The view sent a message for the conversation (`ui/message`, role user). */
  message(content: Json[]): void;
  /** The view replaced what it wants in the model's context (`ui/update-model-context`). */
  modelContext(content: Json[], structured: Json | undefined): void;
  /** Show the view in `mode`; the mode actually shown. */
  displayMode(mode: DisplayMode): DisplayMode;
  /** The view asked to be closed (`ui/notifications/request-teardown`). */
  close?(): void;
}

export type DisplayMode = "inline" | "fullscreen";
/** The display modes Try it offers. */
export const DISPLAY_MODES: DisplayMode[] = ["inline", "fullscreen"];
/** Content blocks Try it shows from a view's message or context. */
const SHOWN_CONTENT = { text: {}, image: {}, resource: {}, resourceLink: {} };

export interface BridgeContext {
  tool: Json;
  theme: "light" | "dark";
  displayMode?: DisplayMode;
  arguments: Json;
  /** The call's result, when it has come. */
  result: Json | undefined;
  hostVersion: string;
}

export const PROTOCOL_VERSION = "2026-01-26";
/** The tallest a view may make itself, in CSS pixels. */
export const MAX_HEIGHT = 1200;
export const MIN_HEIGHT = 60;

type Message = { jsonrpc?: string; id?: string | number | null; method?: string; params?: Json; result?: Json; error?: Json };

export class AppBridge {
  private initialized = false;
  private sentInput = false;
  private sentResult = false;
  private cancelled: string | null = null;
  private nextId = 1;

  constructor(
    private host: BridgeHost,
    private context: BridgeContext,
  ) {}

  /** The call's result arrived (or arrives after the view is up). */
  setResult(result: Json) {
    this.context.result = result;
    this.flush();
  }

  /** The call ended without a result (it failed or was cancelled): tell the view once. */
  setCancelled(reason: string) {
    this.cancelled = reason;
    this.flush();
  }

  /** The host's context changed (`theme`, `displayMode`): tell an initialized view what did. */
  setHostContext(changes: { theme?: "light" | "dark"; displayMode?: DisplayMode }) {
    const changed: { [k: string]: Json } = {};
    if (changes.theme && changes.theme !== this.context.theme) changed.theme = this.context.theme = changes.theme;
    if (changes.displayMode && changes.displayMode !== (this.context.displayMode ?? "inline")) changed.displayMode = this.context.displayMode = changes.displayMode;
    if (this.initialized && Object.keys(changed).length) this.host.post({ jsonrpc: "2.0", method: "ui/notifications/host-context-changed", params: changed });
  }

  /** Before the frame goes: tell the view (it may save its state). */
  teardown() {
    if (this.initialized) this.host.post({ jsonrpc: "2.0", id: `host-${this.nextId++}`, method: "ui/resource-teardown", params: {} });
  }

  /** One message from the view (already checked to come from its frame). */
  async handle(data: unknown): Promise<void> {
    if (!data || typeof data !== "object" || Array.isArray(data)) return;
    const m = data as Message;
    if (m.jsonrpc !== "2.0" || typeof m.method !== "string") return; // answers to our requests, or noise
    const params = (m.params && typeof m.params === "object" && !Array.isArray(m.params) ? m.params : {}) as { [k: string]: Json };
    const isRequest = m.id !== undefined && m.id !== null;
    if (!isRequest) {
      this.notification(m.method, params);
      return;
    }
    try {
      this.reply(m.id!, await this.request(m.method, params));
    } catch (e) {
      const code = e instanceof RpcError ? e.code : -32603;
      this.host.post({ jsonrpc: "2.0", id: m.id!, error: { code, message: e instanceof Error ? e.message : String(e) } });
    }
  }

  private reply(id: string | number, result: Json) {
    this.host.post({ jsonrpc: "2.0", id, result });
  }

  private notification(method: string, params: { [k: string]: Json }) {
    switch (method) {
      case "ui/notifications/initialized":
        this.initialized = true;
        this.host.connected?.();
        this.flush();
        break;
      case "ui/notifications/size-changed": {
        const h = params.height;
        if (typeof h === "number" && Number.isFinite(h)) this.host.resize(Math.max(MIN_HEIGHT, Math.min(MAX_HEIGHT, Math.ceil(h))));
        break;
      }
      case "notifications/message": {
        const level = typeof params.level === "string" ? params.level : "info";
        const text = typeof params.data === "string" ? params.data : JSON.stringify(params.data ?? null);
        this.host.log(`[view ${level}] ${text.slice(0, 2000)}`);
        break;
      }
      case "ui/notifications/request-teardown":
        this.host.close?.();
        break;
    }
  }

  private async request(method: string, params: { [k: string]: Json }): Promise<Json> {
    switch (method) {
      case "ui/initialize":
        return {
          protocolVersion: PROTOCOL_VERSION,
          hostInfo: { name: "Plugboard", version: this.context.hostVersion },
          hostCapabilities: {
            openLinks: {},
            serverTools: {},
            serverResources: {},
            logging: {},
            message: SHOWN_CONTENT,
            updateModelContext: { ...SHOWN_CONTENT, structuredContent: {} },
          },
          hostContext: {
            toolInfo: { tool: this.context.tool },
            theme: this.context.theme,
            displayMode: this.context.displayMode ?? "inline",
            availableDisplayModes: DISPLAY_MODES,
            locale: globalThis.navigator?.language ?? "en",
            timeZone: Intl.DateTimeFormat().resolvedOptions().timeZone,
            platform: "desktop",
          },
        };
      case "ping":
        return {};
      case "tools/call": {
        const name = params.name;
        if (typeof name !== "string" || !name) throw new RpcError(-32602, "tools/call needs a tool name");
        const args = params.arguments ?? {};
        if (!(await this.host.consent(name, args))) throw new RpcError(-32001, "the user did not allow this call");
        return await this.host.call(name, args);
      }
      case "resources/read": {
        if (typeof params.uri !== "string") throw new RpcError(-32602, "resources/read needs a uri");
        return await this.host.read(params.uri);
      }
      case "ui/open-link": {
        const url = params.url;
        if (typeof url !== "string" || !/^https:\/\//i.test(url)) throw new RpcError(-32602, "only https links can be opened");
        await this.host.openLink(url);
        return {};
      }
      case "ui/request-display-mode": {
        const wanted = params.mode;
        const current = this.context.displayMode ?? "inline";
        if (typeof wanted !== "string" || !DISPLAY_MODES.includes(wanted as DisplayMode)) return { mode: current };
        const shown = this.host.displayMode(wanted as DisplayMode);
        this.setHostContext({ displayMode: shown });
        return { mode: shown };
      }
      case "ui/message": {
        if (params.role !== "user" || !Array.isArray(params.content)) throw new RpcError(-32602, "ui/message needs role \"user\" and a content array");
        this.host.message(params.content.slice(0, 50));
        return {};
      }
      case "ui/update-model-context": {
        const content = Array.isArray(params.content) ? params.content.slice(0, 50) : [];
        this.host.modelContext(content, params.structuredContent);
        return {};
      }
      default:
        throw new RpcError(-32601, `${method} is not offered by Plugboard's Try it`);
    }
  }

  /** Once the view is initialized: the arguments, then the result when it is known. */
  private flush() {
    if (!this.initialized) return;
    if (!this.sentInput) {
      this.sentInput = true;
      this.host.post({ jsonrpc: "2.0", method: "ui/notifications/tool-input", params: { arguments: this.context.arguments } });
    }
    if (this.sentResult) return;
    if (this.context.result !== undefined) {
      this.sentResult = true;
      this.host.post({ jsonrpc: "2.0", method: "ui/notifications/tool-result", params: this.context.result });
    } else if (this.cancelled !== null) {
      this.sentResult = true;
      this.host.post({ jsonrpc: "2.0", method: "ui/notifications/tool-cancelled", params: { reason: this.cancelled } });
    }
  }
}

export class RpcError extends Error {
  constructor(
    public code: number,
    message: string,
  ) {
    super(message);
  }
}

/** A resource read (the app's shape) as MCP's `{contents: […]}`. */
export function readResult(contents: { uri: string; mime_type: string | null; text: string | null; blob: { data: string | null } | null }[]): Json {
  return {
    contents: contents.map((c) => {
      const item: { [k: string]: Json } = { uri: c.uri };
      if (c.mime_type) item.mimeType = c.mime_type;
      if (c.text !== null) item.text = c.text;
      else if (c.blob?.data) item.blob = c.blob.data;
      return item;
    }),
  };
}

/** Content blocks a view sent (`ui/message`, `ui/update-model-context`) as text to show. */
export function describeContent(blocks: Json[]): string {
  return blocks
    .map((b) => {
      if (!b || typeof b !== "object" || Array.isArray(b)) return "[not a content block]";
      const field = (k: string) => (typeof b[k] === "string" ? (b[k] as string) : "");
      switch (b.type) {
        case "text":
          return field("text");
        case "image":
        case "audio":
          return `[${b.type}${field("mimeType") ? ` ${field("mimeType")}` : ""}]`;
        case "resource_link":
          return `[link ${field("uri")}]`;
        case "resource": {
          const r = b.resource && typeof b.resource === "object" && !Array.isArray(b.resource) ? b.resource : {};
          return typeof r.text === "string" ? r.text : `[resource ${typeof r.uri === "string" ? r.uri : ""}]`;
        }
        default:
          return `[${typeof b.type === "string" ? b.type : "unknown"} content]`;
      }
    })
    .join("\n")
    .slice(0, 8000);
}
