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

/** Whether a tour step asks the marketplace to scroll (the scrolling benchmark). */
export function stepScroll(step: StartupStep | null): boolean {
  return step?.page === "scroll";
}

/** The median and the largest of `ms` (0 for none). */
export function medianAndMax(ms: number[]): [number, number] {
  if (!ms.length) return [0, 0];
  const sorted = [...ms].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  const median = sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
  return [median, sorted[sorted.length - 1]];
}

const marks = new Marks();

/** Set mark `name` (once) with `count` items rendered; resolves to the shell's next step. */
export async function markReady(name: string, count: number): Promise<StartupStep | null> {
  if (!marks.first(name)) return null;
  performance.mark(name, { detail: { count } });
  return api.uiReady(name, count);
}
