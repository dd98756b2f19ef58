// @vitest-environment happy-dom
// One test per kind of generated form field, mounted for real: text, password with and without
// the keyring switch, text with the switch, an argument, a URL. None may throw on mount (Svelte's
// `props_invalid_value` kept 17 install forms from loading when a field had no switch).
import { flushSync, mount, unmount } from "svelte";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { FormField } from "../lib/ipc";
import FormFieldInput from "./FormFieldInput.svelte";

function field(over: Partial<FormField>): FormField {
  return {
    key: "K",
    label: "Label",
    target: "env",
    input: "text",
    required: true,
    secret: false,
    secret_toggle: false,
    placeholder: null,
    help: null,
    default: null,
    choices: [],
    picker: null,
    access: null,
    min: null,
    max: null,
    ...over,
  };
}

let mounted: ReturnType<typeof mount> | null = null;
afterEach(() => {
  if (mounted) unmount(mounted);
  mounted = null;
  document.body.innerHTML = "";
});

function render(props: Record<string, unknown>) {
  const target = document.createElement("div");
  document.body.appendChild(target);
  mounted = mount(FormFieldInput, { target, props: props as never });
  flushSync();
  return target;
}

describe("form fields", () => {
  it("text: a plain input, no keyring switch", () => {
    const el = render({ field: field({ label: "Workspace", placeholder: "T0123" }), value: "" });
    const input = el.querySelector<HTMLInputElement>('[data-testid="field-K"]')!;
    expect(input.type).toBe("text");
    expect(input.placeholder).toBe("T0123");
    expect(el.querySelector('[role="switch"]')).toBeNull();
    expect(el.textContent).toContain("Workspace");
  });

  it("password without a switch (a bearer credential): hidden, revealable, always in the keyring", () => {
    const el = render({ field: field({ input: "password", target: "credential", secret: true }) });
    const input = el.querySelector<HTMLInputElement>("input")!;
    expect(input.type).toBe("password");
    expect(el.querySelector('[role="switch"]')).toBeNull();
    expect(el.querySelector(".chip")?.textContent).toContain("keyring");
    el.querySelector<HTMLButtonElement>("button.reveal")!.click();
    flushSync();
    expect(input.type).toBe("text");
  });

  it("password with the keyring switch: on by default, off warns, the change is reported", () => {
    const onsecret = vi.fn();
    const el = render({ field: field({ input: "password", secret: true, secret_toggle: true }), onsecret });
    const sw = el.querySelector<HTMLButtonElement>('[role="switch"]')!;
    expect(sw.getAttribute("aria-checked")).toBe("true");
    sw.click();
    expect(onsecret).toHaveBeenCalledWith(false);
    unmount(mounted!);
    const off = render({ field: field({ input: "password", secret: true, secret_toggle: true }), asSecret: false });
    expect(off.textContent).toContain("Stored as plain text");
  });

  it("text with the keyring switch: off by default", () => {
    const el = render({ field: field({ secret_toggle: true }) });
    expect(el.querySelector('[role="switch"]')!.getAttribute("aria-checked")).toBe("false");
    expect(el.textContent).not.toContain("Stored as plain text");
  });

  it("argument: a text input, marked optional when it is", () => {
    const el = render({ field: field({ target: "arg", required: false, label: "Repository" }) });
    expect(el.querySelector(".optional")?.textContent).toBe("optional");
    expect(el.querySelector<HTMLInputElement>("input")!.required).toBe(false);
  });

  it("URL: a URL input; Enter asks for the test", () => {
    const onenter = vi.fn();
    const el = render({ field: field({ input: "url", target: "url", default: "https://x.example/mcp" }), value: "https://x.example/mcp", onenter });
    const input = el.querySelector<HTMLInputElement>("input")!;
    expect(input.type).toBe("url");
    expect(input.value).toBe("https://x.example/mcp");
    input.dispatchEvent(new KeyboardEvent("keydown", { key: "Enter", bubbles: true }));
    expect(onenter).toHaveBeenCalledOnce();
  });

  it("shows the error at the field and the help with safe links", () => {
    const el = render({ field: field({ help: "See [docs](https://example.com/d) or [bad](javascript:alert(1))." }), error: "K is required." });
    expect(el.querySelector(".field-error")?.textContent).toBe("K is required.");
    const links = [...el.querySelectorAll("a")].map((a) => a.getAttribute("href"));
    expect(links).toEqual(["https://example.com/d"]);
  });

  it("a bundle's directory list and file field: native pickers add to the list or fill the field", async () => {
    const onpick = vi.fn(async (kind: string) => (kind === "directory" ? "/home/u/b c" : "/tmp/db.sqlite"));
    let value = "/home/u/a";
    const el = render({
      field: field({ key: "dirs", input: "list", picker: "directory", target: "value" }),
      get value() {
        return value;
      },
      set value(v: string) {
        value = v;
      },
      onpick,
    });
    const add = el.querySelector<HTMLButtonElement>('[data-testid="browse-dirs"]')!;
    expect(add.textContent).toContain("Add folder");
    add.click();
    await vi.waitFor(() => expect(value).toBe("/home/u/a\n/home/u/b c"));
    expect(onpick).toHaveBeenCalledWith("directory");
    unmount(mounted!);
    let file = "";
    const el2 = render({
      field: field({ key: "db", input: "file_path", picker: "file", target: "value" }),
      get value() {
        return file;
      },
      set value(v: string) {
        file = v;
      },
      onpick,
    });
    el2.querySelector<HTMLButtonElement>('[data-testid="browse-db"]')!.click();
    await vi.waitFor(() => expect(file).toBe("/tmp/db.sqlite"));
  });

  it("a path field says whether the server may change what is chosen", () => {
    const read = render({ field: field({ key: "docs", input: "list", picker: "directory", access: "read" }), value: "" });
    expect(read.querySelector('[data-testid="access-docs"]')?.textContent).toBe("read only");
    unmount(mounted!);
    const write = render({ field: field({ key: "repo", input: "file_path", picker: "directory", access: "write" }), value: "" });
    expect(write.querySelector('[data-testid="access-repo"]')?.textContent).toBe("read and write");
    unmount(mounted!);
    mounted = null;
    const none = render({ field: field({ key: "token" }), value: "" });
    expect(none.querySelector('[data-testid^="access-"]')).toBeNull();
  });

  it("no picker button without a picker", () => {
    const el = render({ field: field({ input: "file_path" }), value: "", onpick: async () => null });
    expect(el.querySelector('[data-testid^="browse-"]')).toBeNull();
  });
});
