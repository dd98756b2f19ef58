// App-wide state: which page is shown, the installed servers, their health.
import { api, testServer, toFailure, type AppInfo, type OutdatedView, type RunningTest, type ServerView, type TestReport } from "./ipc";
import { healthFromView, markStale, stageLabelShort, type Health } from "./health";
import { applyEvent, type StageState } from "./stages";
import { toast } from "./toasts.svelte";

export type Page = "marketplace" | "installed" | "detail" | "clients" | "gateway" | "doctor";

class AppState {
  page = $state<Page>("marketplace");
  detail = $state<string | null>(null);
  servers = $state<ServerView[]>([]);
  loaded = $state(false);
  loadError = $state<string | null>(null);
  /** Live health (checks started in this session), by server name. */
  health = $state<Record<string, Health>>({});
  info = $state<AppInfo | null>(null);
  /** The server whose OAuth sign-in dialog is open. */
  signIn = $state<string | null>(null);
  /** The server whose tool review dialog is open. */
  review = $state<string | null>(null);
  /** The server whose update dialog is open. */
  updating = $state<string | null>(null);
  /** Installed registry servers with a newer version listed, by server name. */
  updates = $state<Record<string, OutdatedView>>({});
  /** Installed registry servers their registry deleted, by name. */
  removed = $state<Record<string, OutdatedView>>({});
  /** Fixes completed in the sign-in or tool review dialog, counted by server name: the doctor
   * examines a server again after a fix it sent the user to was made. */
  fixes = $state<Record<string, number>>({});
  /** Bumped whenever installs change, so the marketplace refreshes its badges. */
  revision = $state(0);

  /** Counts local changes to `servers` (upsert, drop): a list requested before one of them
   * arrives stale and is fetched again instead of undoing the change on screen. */
  #changes = 0;

  async refresh() {
    try {
      let servers: ServerView[];
      let changes: number;
      do {
        changes = this.#changes;
        servers = await api.listServers();
      } while (changes !== this.#changes);
      this.servers = servers;
      this.loadError = null;
    } catch (e) {
      this.loadError = toFailure(e).message;
    } finally {
      this.loaded = true;
      this.revision++;
    }
    await this.checkUpdates();
  }

  /** Which installed registry servers have a newer version (from the registry listings). */
  async checkUpdates() {
    try {
      const rows = await api.outdated();
      const next: Record<string, OutdatedView> = {};
      const removed: Record<string, OutdatedView> = {};
      for (const r of rows) {
        if (r.state === "update_available") next[r.name] = r;
        if (r.state === "removed") removed[r.name] = r;
      }
      this.updates = next;
      this.removed = removed;
    } catch {
      // No listing yet: no badges.
    }
  }

  async loadInfo() {
    try {
      this.info = await api.appInfo();
    } catch (e) {
      toast.error(toFailure(e).message);
    }
  }

  /** Replace one server's view after a change (or add it). */
  upsert(view: ServerView, previousName?: string) {
    const at = this.servers.findIndex((s) => s.name === (previousName ?? view.name));
    if (at >= 0) this.servers[at] = view;
    else this.servers.push(view);
    this.#changes++;
    if (previousName && previousName !== view.name && this.health[previousName]) {
      this.health[view.name] = this.health[previousName];
      delete this.health[previousName];
    }
    this.revision++;
  }

  /** A fix of server `name` was made (signed in, tools approved). */
  fixed(name: string) {
    this.fixes[name] = (this.fixes[name] ?? 0) + 1;
  }

  drop(name: string) {
    this.servers = this.servers.filter((s) => s.name !== name);
    this.#changes++;
    delete this.health[name];
    this.revision++;
  }

  /** Tests running now, by server name. */
  tests = $state<Record<string, RunningTest>>({});
  /** Live stages of the last test started in this session, by server name. */
  stages = $state<Record<string, StageState[]>>({});

  healthOf(server: ServerView): Health {
    return this.health[server.name] ?? healthFromView(server.health);
  }

  /** Test an installed server, showing progress on its card and in its detail view. */
  async test(name: string): Promise<TestReport | null> {
    if (this.tests[name]) return null;
    this.stages[name] = [];
    this.health[name] = { state: "checking" };
    const run = testServer(name, (p) => {
      this.stages[name] = applyEvent(this.stages[name] ?? [], p);
      if (p.event === "started") this.health[name] = { state: "checking", stage: stageLabelShort(p.stage) };
    });
    this.tests[name] = run;
    try {
      const report = await run.result;
      delete this.health[name];
      await this.reload(name);
      return report;
    } catch (e) {
      const f = toFailure(e);
      delete this.health[name];
      if (f.code !== "cancelled") toast.error(`Test of ${name} could not run: ${f.message}`);
      return null;
    } finally {
      delete this.tests[name];
    }
  }

  cancelTest(name: string) {
    this.tests[name]?.cancel();
  }

  /** Re-read one server's view (after a test, its health changed). */
  async reload(name: string) {
    try {
      const detail = await api.serverDetail(name);
      this.upsert(detail.server);
    } catch {
      await this.refresh();
    }
  }

  /** Server `name` was changed without a passing test: test it again now when it can be
   * tested, else mark its last result as out of date. */
  changed(name: string) {
    const server = this.servers.find((s) => s.name === name);
    if (!server) return;
    if (this.info?.can_test && server.enabled && !server.error) this.test(name);
    else this.suspect(name);
  }

  /** Something happened that its last verdict does not know about (its connection in Try it
   * ended on its own): mark that verdict out of date until the next test. */
  suspect(name: string) {
    const server = this.servers.find((s) => s.name === name);
    if (server) this.health[name] = markStale(this.healthOf(server));
  }

  #stamp: string | null = null;
  /** Notice changes to the config made outside the app (the CLI, another window): its stamp is
   * compared every two seconds and whenever the window gets the focus, and the servers are
   * reloaded when it moved. Open dialogs keep what the user is typing (they hold their own
   * state). Returns the function that stops watching. */
  watchConfig(): () => void {
    const check = async () => {
      const stamp = await api.configStamp();
      if (stamp === null) return;
      const before = this.#stamp;
      this.#stamp = stamp;
      if (before !== null && before !== stamp) await this.refresh();
    };
    void check();
    const timer = setInterval(check, 2000);
    const onFocus = () => void check();
    window.addEventListener("focus", onFocus);
    document.addEventListener("visibilitychange", onFocus);
    return () => {
      clearInterval(timer);
      window.removeEventListener("focus", onFocus);
      document.removeEventListener("visibilitychange", onFocus);
    };
  }

  /** Show `page`; `detail` is the server of the detail page, or the one the doctor examines
   * (`null`: every server). */
  go(page: Page, detail: string | null = null) {
    this.page = page;
    this.detail = detail;
  }
}

export const app = new AppState();
