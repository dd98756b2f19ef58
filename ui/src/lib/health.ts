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

export type Health =
  | { state: "unchecked" }
  | { state: "checking"; stage?: string }
  | { state: "verified"; tools: number; at: number }
  | { state: "connectivity-only"; tools: number; at: number }
  | { state: "failed"; kind: string; error: string; hint: string; at: number };

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

/** The dot colour and the label of a health state. */
export function healthLabel(health: Health): { tone: Tone; label: string } {
  switch (health.state) {
    case "unchecked":
      return { tone: "neutral", label: "Not checked yet" };
    case "checking":
      return { tone: "busy", label: health.stage ? `Checking… (${health.stage})` : "Checking…" };
    case "verified":
      return { tone: "ok", label: "Verified" };
    case "connectivity-only":
      return { tone: "warn", label: "Reachable, credentials not verified" };
    case "failed":
      return { tone: "bad", label: `Failed: ${kindLabel(health.kind)}` };
  }
}

/** The health a finished test result implies. */
export function healthFromResult(
  result: {
    ok: boolean;
    verification: string;
    tools: unknown[];
    error_kind?: string | null;
    error?: string | null;
    hint?: string | null;
  },
  at: number,
): Health {
  if (result.ok) {
    return result.verification === "verified"
      ? { state: "verified", tools: result.tools.length, at }
      : { state: "connectivity-only", tools: result.tools.length, at };
  }
  return {
    state: "failed",
    kind: result.error_kind ?? "server",
    error: result.error ?? "The test failed.",
    hint: result.hint ?? "",
    at,
  };
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
export function healthFromView(
  view: {
    ok: boolean;
    verification: string;
    tools: number;
    error_kind: string | null;
    error: string | null;
    hint: string | null;
    checked_at: number | null;
  } | null,
): Health {
  if (!view) return { state: "unchecked" };
  if (view.ok) {
    return view.verification === "verified"
      ? { state: "verified", tools: view.tools, at: view.checked_at ?? 0 }
      : { state: "connectivity-only", tools: view.tools, at: view.checked_at ?? 0 };
  }
  return {
    state: "failed",
    kind: view.error_kind ?? "server",
    error: view.error ?? "The test failed.",
    hint: view.hint ?? "",
    at: view.checked_at ?? 0,
  };
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
