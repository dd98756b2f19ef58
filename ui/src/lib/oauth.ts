// The OAuth sign-in state machine as the UI shows it (the core drives it; the UI polls).

export type JobState = "discovering" | "awaiting_user" | "exchanging" | "succeeded" | "failed" | "expired" | "cancelled";

/** How long the app polls a sign-in before giving up on it: five minutes, time enough for a
 * second factor (the core's job waits as long). */
export const POLL_LIMIT_MS = 300_000;
export const POLL_EVERY_MS = 1_000;

export const FINAL: ReadonlySet<JobState> = new Set(["succeeded", "failed", "expired", "cancelled"]);

export function isFinal(state: JobState): boolean {
  return FINAL.has(state);
}

const LABELS: Record<JobState, string> = {
  discovering: "Finding the server's sign-in settings…",
  awaiting_user: "Waiting for you to sign in with your browser",
  exchanging: "Finishing the sign-in…",
  succeeded: "Signed in",
  failed: "The sign-in failed",
  expired: "The sign-in timed out",
  cancelled: "The sign-in was cancelled",
};

export function stateLabel(state: JobState): string {
  return LABELS[state] ?? state;
}

/** The steps shown as a progress list, and where the job is among them. */
export const STEPS: JobState[] = ["discovering", "awaiting_user", "exchanging", "succeeded"];

export function stepStatus(step: JobState, current: JobState): "done" | "current" | "todo" | "failed" {
  const order = STEPS.indexOf(step);
  if (isFinal(current) && current !== "succeeded") {
    return order === 0 ? "done" : "todo";
  }
  const at = STEPS.indexOf(current);
  if (current === "succeeded") return "done";
  if (order < at) return "done";
  if (order === at) return "current";
  return "todo";
}

/** Open the browser exactly once: on the first poll that finds the job awaiting the user. */
export function shouldOpenBrowser(previous: JobState | null, next: JobState, opened: boolean): boolean {
  return !opened && next === "awaiting_user" && previous !== "awaiting_user";
}
