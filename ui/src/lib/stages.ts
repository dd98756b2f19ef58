// The stages of a test connection, in order, with their human names; and the live progress
// model the install modal and the server cards show.

export const STAGES = [
  "resolve",
  "connect",
  "discover",
  "initialize",
  "tools/list",
  "resources/list",
  "prompts/list",
  "credential_probe",
  "close",
] as const;

const LABELS: Record<string, string> = {
  resolve: "Reading the settings",
  connect: "Connecting",
  discover: "Reaching the server",
  initialize: "Opening the session (older protocol)",
  "tools/list": "Listing its tools",
  "resources/list": "Listing its resources",
  "prompts/list": "Listing its prompts",
  credential_probe: "Checking the credentials",
  close: "Closing",
};

/**
 * A stage in words a user knows. For a stdio server (`command`: the command line it runs, `""`
 * when not known) the wait for its first answer is its start-up, which includes the download
 * when a package runner fetches it; for a remote one (`command` null) it is reaching the URL.
 */
export function stageLabel(stage: string, command: string | null = null): string {
  if (command !== null && stage === "connect") return "Launching the command";
  if (command !== null && stage === "discover") {
    const runner = downloader(command);
    if (runner === "docker") return "Starting the server (Docker pulls the image on its first run)";
    return runner ? `Starting the server (${runner} downloads the package on its first run)` : "Starting the server";
  }
  return LABELS[stage] ?? stage;
}

/** `startedAt`: when a running stage started (ms since the epoch), for its elapsed timer. */
export type StageState = { name: string; status: "running" | "ok" | "failed"; ms?: number; startedAt?: number };

export type StageEvent =
  | { event: "started"; stage: string }
  | { event: "finished"; stage: string; ok: boolean; ms: number };

/** Apply one progress event to the list of stages seen so far (a new list is returned). */
export function applyEvent(stages: StageState[], ev: StageEvent, now: number = Date.now()): StageState[] {
  const out = stages.filter((s) => s.name !== ev.stage);
  const at = stages.findIndex((s) => s.name === ev.stage);
  const next: StageState =
    ev.event === "started"
      ? { name: ev.stage, status: "running", startedAt: now }
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

/** A result's caching hints in words: "fresh for 1 min, public", "not cached, private". */
export function cacheHintText(h: { ttl_ms: number | null; cache_scope: string | null }): string {
  const parts: string[] = [];
  if (h.ttl_ms !== null) parts.push(h.ttl_ms > 0 ? `fresh for ${formatTtl(h.ttl_ms)}` : "not cached");
  if (h.cache_scope) parts.push(h.cache_scope);
  return parts.join(", ");
}

function formatTtl(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  const s = ms / 1000;
  if (s < 120) return `${Math.round(s)} s`;
  const min = s / 60;
  if (min < 120) return `${Math.round(min)} min`;
  return `${Math.round(min / 60)} h`;
}

/** The program that downloads the server on its first run (`npx`, `uvx`, `docker`, …), if the
 * command is one of those. */
export function downloader(command: string | null | undefined): string | null {
  const program = (command ?? "").trim().split(/\s+/)[0]?.split("/").pop() ?? "";
  return ["npx", "uvx", "bunx", "pnpx", "docker", "pipx", "uv"].includes(program) ? program : null;
}

/** The line shown once a start-up stage has run for a while: why it may take long. */
export function slowStartLine(stage: string, command: string | null | undefined): string | null {
  if (!["connect", "discover", "initialize"].includes(stage)) return null;
  const runner = downloader(command);
  if (runner === "docker") return "Still starting: the first run pulls the Docker image, which can take a few minutes.";
  if (runner) return `Still starting: the first ${runner} run downloads the package, which can take a minute.`;
  return "Still waiting for the server to answer…";
}

/** How long a start-up stage runs before the slow-start line shows. */
export const SLOW_START_MS = 4000;
