// First-render marks for the app benchmark: `performance.mark(name)` once per session, and the
// shell is told (it prints a trace line only when PLUGBOARD_STARTUP_TRACE=1). Its answer may ask
// for the next page of a traced tour (the installed servers, to measure memory with them shown).

import { api, type StartupStep } from "./ipc";

/** Remembers which marks were set, so that each is set once per session. */
export class Marks {
  private seen = new Set<string>();
  /** True the first time `name` is seen. */
  first(name: string): boolean {
    if (this.seen.has(name)) return false;
    this.seen.add(name);
    return true;
  }
}

/** The page a tour step asks for, if it is one the app has. */
export function stepPage(step: StartupStep | null): "installed" | null {
  return step?.page === "installed" ? "installed" : null;
}

const marks = new Marks();

/** Set mark `name` (once) with `count` items rendered; resolves to the shell's next step. */
export async function markReady(name: string, count: number): Promise<StartupStep | null> {
  if (!marks.first(name)) return null;
  performance.mark(name, { detail: { count } });
  return api.uiReady(name, count);
}
