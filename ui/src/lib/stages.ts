// The stages of a test connection, in order, with their human names; and the live progress
// model the install modal and the server cards show.

export const STAGES = [
  "resolve",
  "connect",
  "initialize",
  "tools/list",
  "resources/list",
  "prompts/list",
  "credential_probe",
  "close",
] as const;

const LABELS: Record<string, string> = {
  resolve: "Resolve configuration",
  connect: "Connect",
  initialize: "MCP handshake",
  "tools/list": "List tools",
  "resources/list": "List resources",
  "prompts/list": "List prompts",
  credential_probe: "Verify credentials",
  close: "Close",
};

export function stageLabel(stage: string): string {
  return LABELS[stage] ?? stage;
}

export type StageState = { name: string; status: "running" | "ok" | "failed"; ms?: number };

export type StageEvent =
  | { event: "started"; stage: string }
  | { event: "finished"; stage: string; ok: boolean; ms: number };

/** Apply one progress event to the list of stages seen so far (a new list is returned). */
export function applyEvent(stages: StageState[], ev: StageEvent): StageState[] {
  const out = stages.filter((s) => s.name !== ev.stage);
  const at = stages.findIndex((s) => s.name === ev.stage);
  const next: StageState =
    ev.event === "started"
      ? { name: ev.stage, status: "running" }
      : { name: ev.stage, status: ev.ok ? "ok" : "failed", ms: ev.ms };
  if (at >= 0) {
    out.splice(at, 0, next);
  } else {
    out.push(next);
  }
  return out;
}

/** "0.4 s", "850 ms", "12 s". */
export function formatMs(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 10000) return `${(ms / 1000).toFixed(1)} s`;
  return `${Math.round(ms / 1000)} s`;
}
