// The background health check setting: how often installed servers are re-tested while the app
// is open. Kept in localStorage (it is a preference of this app, not server config).

export const INTERVAL_OPTIONS = [
  { minutes: 0, label: "Off" },
  { minutes: 5, label: "Every 5 minutes" },
  { minutes: 15, label: "Every 15 minutes" },
  { minutes: 60, label: "Every hour" },
] as const;

export const DEFAULT_INTERVAL_MINUTES = 15;
const KEY = "plugboard.healthIntervalMinutes";

/** The saved interval in minutes (0 = off), or the default when nothing valid is saved. */
export function loadInterval(storage: Pick<Storage, "getItem"> | undefined = globalThis.localStorage): number {
  const raw = storage?.getItem(KEY);
  const value = raw === null || raw === undefined ? NaN : Number(raw);
  return INTERVAL_OPTIONS.some((o) => o.minutes === value) ? value : DEFAULT_INTERVAL_MINUTES;
}

export function saveInterval(minutes: number, storage: Pick<Storage, "setItem"> | undefined = globalThis.localStorage): void {
  storage?.setItem(KEY, String(minutes));
}

/** Whether a server last checked at `checkedAtMs` (0 = never) is due for a background check. */
export function isDue(checkedAtMs: number, nowMs: number, intervalMinutes: number): boolean {
  if (intervalMinutes <= 0) return false;
  return nowMs - checkedAtMs >= intervalMinutes * 60_000;
}
