// Background health checks: while the app is open, enabled servers whose last test is older than
// the chosen interval are tested again. The interval is a setting of this app (not server
// config), kept in localStorage; 0 turns the checks off. Once a minute the scheduler looks for
// servers that are due.

export const INTERVAL_OPTIONS = [
  { minutes: 0, label: "Off" },
  { minutes: 5, label: "Every 5 minutes" },
  { minutes: 15, label: "Every 15 minutes" },
  { minutes: 60, label: "Every hour" },
] as const;

export const DEFAULT_INTERVAL_MINUTES = 15;
const KEY = "plugboard.healthIntervalMinutes";

/** How often the scheduler looks for servers that are due. */
export const CHECK_EVERY_MS = 60_000;

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

/** What the scheduler needs of an installed server. */
export interface Checkable {
  name: string;
  enabled: boolean;
  /** A config entry that cannot be read is never tested. */
  error: string | null;
  health: { checked_at: number | null } | null;
}

export interface HealthCheckOptions {
  /** Whether this app can test servers at all. */
  canTest: () => boolean;
  /** The installed servers now. */
  servers: () => readonly Checkable[];
  /** Start a test of server `name` (its result is the caller's business). */
  test: (name: string) => void;
  /** Where the interval setting is kept (localStorage by default). */
  storage?: Pick<Storage, "getItem" | "setItem">;
  now?: () => number;
}

export class HealthChecks {
  /** The interval in minutes (0 = off). */
  minutes = $state(DEFAULT_INTERVAL_MINUTES);
  readonly #options: HealthCheckOptions;
  #timer: ReturnType<typeof setInterval> | null = null;

  constructor(options: HealthCheckOptions) {
    this.#options = options;
    this.minutes = loadInterval(options.storage);
  }

  /** Choose (and save) the interval. */
  setMinutes(minutes: number) {
    this.minutes = minutes;
    saveInterval(minutes, this.#options.storage);
  }

  /** Test every enabled, readable server that is due now; the names tested. */
  checkDue(): string[] {
    const { canTest, servers, test, now = Date.now } = this.#options;
    if (!canTest()) return [];
    const at = now();
    const due = servers()
      .filter((s) => s.enabled && !s.error && isDue(s.health?.checked_at ?? 0, at, this.minutes))
      .map((s) => s.name);
    for (const name of due) test(name);
    return due;
  }

  /** Look for due servers every minute from now on (the first look is a minute away). */
  start() {
    if (this.#timer !== null) return;
    this.#timer = setInterval(() => this.checkDue(), CHECK_EVERY_MS);
  }

  stop() {
    if (this.#timer === null) return;
    clearInterval(this.#timer);
    this.#timer = null;
  }

  get running(): boolean {
    return this.#timer !== null;
  }
}
