// Health of an installed server as the UI shows it: a dot, a label, and what went wrong.

export type ErrorKind =
  | "config"
  | "spawn"
  | "exited"
  | "timeout"
  | "connection"
  | "http"
  | "unauthorized"
  | "credentials"
  | "protocol"
  | "server";

/** `working`: it works and takes no credentials; `connectivity-only`: it works, but the
 * credentials it sends were not checked (no read-only call proves them). `stale`: the server
 * was changed after this result (it is being, or will be, tested again). */
export type Health =
  | { state: "unchecked" }
  | { state: "checking"; stage?: string }
  | { state: "verified"; tools: number; at: number; stale?: boolean }
  | { state: "working"; tools: number; at: number; stale?: boolean }
  | { state: "connectivity-only"; tools: number; at: number; stale?: boolean }
  | { state: "failed"; kind: string; error: string; hint: string; at: number; signIn?: boolean; stale?: boolean };

export type Tone = "neutral" | "busy" | "ok" | "warn" | "bad";

const KIND_LABEL: Record<ErrorKind, string> = {
  config: "configuration problem",
  spawn: "command not found",
  exited: "process exited",
  timeout: "timed out",
  connection: "cannot connect",
  http: "unexpected HTTP status",
  unauthorized: "access refused",
  credentials: "credentials rejected",
  protocol: "not speaking MCP",
  server: "server error",
};

const KIND_TITLE: Record<ErrorKind, string> = {
  config: "The configuration cannot be used as it is",
  spawn: "The command could not be started",
  exited: "The server process exited before it answered",
  timeout: "The server did not answer in time",
  connection: "Could not connect to the server",
  http: "The server answered with an unexpected HTTP status",
  unauthorized: "The server refused access",
  credentials: "The server rejected the credentials",
  protocol: "The server does not speak MCP correctly",
  server: "The server reported an error",
};

/** A short label for an error kind ("credentials rejected"). Unknown kinds are shown as-is. */
export function kindLabel(kind: string): string {
  return KIND_LABEL[kind as ErrorKind] ?? kind;
}

/** A one-line headline for a failed test of this kind. */
export function failureTitle(kind: string): string {
  return KIND_TITLE[kind as ErrorKind] ?? "The test failed";
}

function tools(n: number): string {
  return `${n} ${n === 1 ? "tool" : "tools"}`;
}

/** The dot colour and the label of a health state. */
export function healthLabel(health: Health): { tone: Tone; label: string } {
  const out = ((): { tone: Tone; label: string } => {
    switch (health.state) {
      case "unchecked":
        return { tone: "neutral", label: "Not checked yet" };
      case "checking":
        return { tone: "busy", label: health.stage ? `Checking… (${health.stage})` : "Checking…" };
      case "verified":
        return { tone: "ok", label: `Verified · ${tools(health.tools)}` };
      case "working":
        return { tone: "ok", label: `Working · ${tools(health.tools)}` };
      case "connectivity-only":
        return { tone: "warn", label: `Working · key not checked` };
      case "failed":
        return { tone: "bad", label: `Failed: ${kindLabel(health.kind)}` };
    }
  })();
  if ("stale" in health && health.stale) return { tone: "neutral", label: `${out.label} · out of date` };
  return out;
}

/** What a finished test (a result, or a server's stored last test) says about its health. */
interface Outcome {
  ok: boolean;
  verification: string;
  uses_credentials?: boolean;
  sign_in?: boolean;
  error_kind?: string | null;
  error?: string | null;
  hint?: string | null;
}

function outcomeHealth(r: Outcome, tools: number, at: number): Health {
  if (r.ok) {
    if (r.verification === "verified") return { state: "verified", tools, at };
    return r.uses_credentials === false ? { state: "working", tools, at } : { state: "connectivity-only", tools, at };
  }
  return {
    state: "failed",
    kind: r.error_kind ?? "server",
    error: r.error ?? "The test failed.",
    hint: r.hint ?? "",
    at,
    signIn: !!r.sign_in,
  };
}

/** The health a finished test result implies. */
export function healthFromResult(result: Outcome & { tools: unknown[] }, at: number): Health {
  return outcomeHealth(result, result.tools.length, at);
}

/** "just now", "3 min ago", "2 h ago", or a date. */
export function ago(at: number, now: number = Date.now()): string {
  const s = Math.max(0, Math.round((now - at) / 1000));
  if (s < 45) return "just now";
  const m = Math.round(s / 60);
  if (m < 60) return `${m} min ago`;
  const h = Math.round(m / 60);
  if (h < 24) return `${h} h ago`;
  return new Date(at).toLocaleDateString();
}

/** The health a stored last test (a server card's `health`) implies. */
export function healthFromView(view: (Outcome & { tools: number; checked_at: number | null }) | null): Health {
  if (!view) return { state: "unchecked" };
  return outcomeHealth(view, view.tools, view.checked_at ?? 0);
}

/** `health` marked out of date (the server changed after it was measured). */
export function markStale(health: Health): Health {
  return health.state === "unchecked" || health.state === "checking" ? health : { ...health, stale: true };
}

/** A stage name for the "Checking… (stage)" label. */
export function stageLabelShort(stage: string): string {
  const map: Record<string, string> = {
    resolve: "resolving",
    connect: "connecting",
    discover: "discovering",
    initialize: "handshake",
    "tools/list": "listing tools",
    "resources/list": "listing resources",
    "prompts/list": "listing prompts",
    credential_probe: "verifying credentials",
    close: "closing",
  };
  return map[stage] ?? stage;
}
