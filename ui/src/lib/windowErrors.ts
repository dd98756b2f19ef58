// Uncaught errors and unhandled promise rejections of the window, kept (bounded) where the
// WebDriver tests read them: every E2E step fails when any happened. Also what a render error
// caught by a <svelte:boundary> reports, since such an error no longer reaches the window.

export interface WindowError {
  kind: "error" | "rejection" | "render";
  message: string;
}

declare global {
  interface Window {
    __plugboardErrors?: WindowError[];
  }
}

function describe(e: unknown): string {
  if (e instanceof Error) return `${e.name}: ${e.message}`;
  return typeof e === "string" ? e : JSON.stringify(e);
}

/** Record one error (at most 50 are kept). */
export function recordError(kind: WindowError["kind"], error: unknown) {
  const list = (window.__plugboardErrors ??= []);
  if (list.length < 50) list.push({ kind, message: describe(error) });
}

/** Start recording the window's uncaught errors and unhandled rejections. */
export function watchWindowErrors() {
  window.__plugboardErrors ??= [];
  window.addEventListener("error", (e) => recordError("error", e.error ?? e.message));
  window.addEventListener("unhandledrejection", (e) => recordError("rejection", e.reason));
}
