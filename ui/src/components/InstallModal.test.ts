// @vitest-environment happy-dom
// The install modal with a form of every field kind (the review's blocker: a field without the
// keyring switch, bound to `undefined`, made Svelte throw and the form never left "Loading the
// form…"), and its option chooser: choosing another option loads that option's form.
import { flushSync, mount, tick, unmount } from "svelte";
import { afterEach, describe, expect, it, vi } from "vitest";

const installForm = vi.fn();
const install = vi.fn();
const testForm = vi.fn();
vi.mock("../lib/ipc", async () => {
  const actual = await vi.importActual<Record<string, unknown>>("../lib/text");
  void actual;
  class ApiFailure extends Error {
    code = "internal";
    fields = [];
    field() {
      return undefined;
    }
  }
  return {
    ApiFailure,
    api: {
      installForm: (...a: unknown[]) => installForm(...a),
      install: (...a: unknown[]) => install(...a),
      appInfo: vi.fn(),
      listServers: vi.fn(async () => []),
    },
    toFailure: (e: unknown) =>
      e && typeof e === "object" && "code" in e ? Object.assign(new ApiFailure(String(e)), e) : Object.assign(new ApiFailure(String(e)), { message: String(e) }),
    testForm: (...a: unknown[]) => testForm(...a),
    testServer: vi.fn(),
  };
});

const { default: InstallModal } = await import("./InstallModal.svelte");
const { app } = await import("../lib/state.svelte");

const field = (key: string, over: Record<string, unknown>) => ({
  key,
  label: key,
  target: "env",
  input: "text",
  required: false,
  secret: false,
  secret_toggle: false,
  placeholder: null,
  help: null,
  default: null,
  ...over,
});

function form(optionId: string) {
  const fields =
    optionId === "api"
      ? [
          field("TOKEN", { input: "password", target: "credential", secret: true, required: true }),
          field("TEAM", { secret_toggle: true }),
          field("API_KEY", { input: "password", secret: true, secret_toggle: true }),
          field("repo", { target: "arg" }),
          field("url", { input: "url", target: "url", default: "https://x.example/mcp" }),
        ]
      : [field("client_id", { target: "oauth_client_id", required: true })];
  return {
    entry: { id: "demo", name: "Demo", description: "d", docs_url: "https://example.com", logo: null, category_labels: [] },
    install_hint: null,
    suggested_name: "demo",
    spec: {
      entry_id: "demo",
      option_id: optionId,
      option_label: optionId,
      transport: "shttp",
      transport_label: "streamable HTTP",
      command: null,
      url: "https://x.example/mcp",
      oauth: optionId === "oauth" ? "pre_registered" : null,
      default_name: "demo",
      fields,
      options: [
        { id: "api", label: "Token", transport: "shttp", transport_label: "streamable HTTP" },
        { id: "oauth", label: "OAuth", transport: "shttp", transport_label: "streamable HTTP" },
      ],
      notes: [],
      warnings: [],
      env: [],
    },
  };
}

let mounted: ReturnType<typeof mount> | null = null;
afterEach(() => {
  if (mounted) unmount(mounted);
  mounted = null;
  document.body.innerHTML = "";
});

async function settle() {
  for (let i = 0; i < 5; i++) {
    await tick();
    await new Promise((r) => setTimeout(r, 0));
  }
  flushSync();
}

describe("the install modal", () => {
  it("renders a form with every field kind, and the option chooser switches forms", async () => {
    installForm.mockImplementation(async (_entry: string, option: string | null) => form(option ?? "api"));
    const errors: unknown[] = [];
    const onError = (e: ErrorEvent) => errors.push(e.error);
    window.addEventListener("error", onError);
    mounted = mount(InstallModal, { target: document.body, props: { entryId: "demo", onclose: () => {}, oninstalled: () => {} } });
    await settle();
    const body = document.querySelector('[data-testid="install-body"]')!;
    expect(body.getAttribute("data-state")).toBe("ready");
    for (const key of ["TOKEN", "TEAM", "API_KEY", "repo", "url"]) {
      expect(document.querySelector(`[data-testid="field-${key}"]`), key).not.toBeNull();
    }
    expect(document.querySelectorAll('[role="switch"]').length).toBe(2);
    // Focus starts on the first field of the form.
    expect(document.activeElement?.getAttribute("data-testid")).toBe("field-TOKEN");
    // The chooser: the OAuth option loads its own form.
    const oauth = document.querySelector<HTMLInputElement>('[data-testid="option-oauth"]')!;
    oauth.checked = true;
    oauth.dispatchEvent(new Event("change", { bubbles: true }));
    await settle();
    expect(installForm).toHaveBeenLastCalledWith("demo", "oauth");
    expect(document.querySelector('[data-testid="field-client_id"]')).not.toBeNull();
    expect(document.querySelector('[data-testid="field-TOKEN"]')).toBeNull();
    window.removeEventListener("error", onError);
    expect(errors).toEqual([]);
  });

  it("says why when the form cannot be loaded", async () => {
    installForm.mockImplementation(async () => {
      throw new Error("The catalog has no entry “nope”.");
    });
    mounted = mount(InstallModal, { target: document.body, props: { entryId: "nope", onclose: () => {}, oninstalled: () => {} } });
    await settle();
    expect(document.querySelector('[data-testid="install-load-error"]')?.textContent).toContain("no entry");
    expect(document.querySelector('[data-testid="install-loading"]')).toBeNull();
  });

  it("tests before it saves: Cancel while it runs, Save with the passing test's id", async () => {
    installForm.mockImplementation(async (_entry: string, option: string | null) => form(option ?? "api"));
    app.info = { can_test: true } as never;
    let progress: (p: unknown) => void = () => {};
    let finish!: (r: unknown) => void;
    let stop!: (e: unknown) => void;
    const cancel = vi.fn(async () => stop({ code: "cancelled", message: "cancelled", fields: [] }));
    testForm.mockImplementation((_request: unknown, onProgress: (p: unknown) => void) => {
      progress = onProgress;
      return { id: "t-9", result: new Promise((res, rej) => ((finish = res), (stop = rej))), cancel };
    });
    install.mockImplementation(async () => ({ name: "demo" }));
    const oninstalled = vi.fn();
    mounted = mount(InstallModal, { target: document.body, props: { entryId: "demo", onclose: () => {}, oninstalled } });
    await settle();
    const q = (id: string) => document.querySelector<HTMLButtonElement>(`[data-testid="${id}"]`);
    expect(q("save-server")?.disabled).toBe(true);
    expect(q("save-untested")).not.toBeNull();

    // A test that is cancelled.
    q("test-connection")!.click();
    await settle();
    expect(testForm).toHaveBeenCalledTimes(1);
    progress({ event: "started", stage: "connect" });
    await settle();
    expect(q("test-connection")).toBeNull();
    q("cancel-test")!.click();
    await settle();
    expect(cancel).toHaveBeenCalledOnce();
    expect(q("test-cancelled")).not.toBeNull();
    expect(q("test-connection")).not.toBeNull();
    expect(q("save-server")?.disabled).toBe(true);

    // A test that passes, verified: Save is the next step, and saves with its id.
    q("test-connection")!.click();
    await settle();
    finish({ ok: true, verification: "verified", uses_credentials: true, stages: [], tools: [], resources: [], prompts: [], warnings: [], supported_versions: [], cache_hints: [] });
    await settle();
    const save = q("save-server")!;
    expect(save.disabled).toBe(false);
    expect(save.getAttribute("data-proven")).toBe("true");
    save.click();
    await settle();
    expect(install).toHaveBeenCalledOnce();
    expect(install.mock.calls[0][0]).toMatchObject({ entry_id: "demo", option_id: "api", name: "demo", test_id: "t-9" });
    expect(oninstalled).toHaveBeenCalledWith({ name: "demo" }, true);
    app.info = null;
  });
});
