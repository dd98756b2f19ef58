// @vitest-environment happy-dom
// The generated form mounted for real on forms shaped like the core's: every widget renders,
// a choice switches variant with its tag, the core's issues land on their fields, the raw JSON
// editor edits the same value, and a hostile form (10,000 enum values, a recursive part)
// renders without unfolding everything.
import { flushSync, mount, unmount } from "svelte";
import { afterEach, describe, expect, it } from "vitest";
import type { FieldIssue, Form, FormNode, NodeKind, Value } from "../../lib/ipc";
import { initialValue, type Editing } from "../../lib/schemaForm";
import SchemaForm from "./SchemaForm.svelte";

function node(kind: NodeKind, extra: Partial<FormNode> = {}): FormNode {
  return { title: null, description: null, default: null, examples: [], nullable: false, read_only: false, deprecated: false, kind, ...extra };
}
const str = (format: string | null = null) => node({ type: "string", format, min_length: null, max_length: null, pattern: null });
const int = (extra: Partial<FormNode> = {}) =>
  node({ type: "number", integer: true, minimum: 1, maximum: null, exclusive_minimum: null, exclusive_maximum: null, multiple_of: null }, extra);
const obj = (properties: { key: string; required: boolean; node: FormNode }[], additional: FormNode | null = null) =>
  node({ type: "object", properties, additional, min_properties: null, max_properties: null });
const tag = (value: string) => node({ type: "const", value });

const order: Form = {
  notes: [],
  defs: {},
  root: obj([
    { key: "customer", required: true, node: obj([{ key: "name", required: true, node: str() }, { key: "email", required: false, node: str("email") }]) },
    {
      key: "items",
      required: true,
      node: node({ type: "array", items: obj([{ key: "sku", required: true, node: str() }, { key: "qty", required: true, node: int({ default: 1 }) }]), prefix: [], min_items: 1, max_items: 5, unique_items: true }),
    },
    {
      key: "delivery",
      required: true,
      node: node({
        type: "choice",
        discriminator: "kind",
        exclusive: true,
        variants: [
          { label: "Pick up", tag: "pickup", node: obj([{ key: "kind", required: true, node: tag("pickup") }, { key: "store", required: true, node: node({ type: "enum", options: [{ value: "north", label: "North" }, { value: "south", label: "South" }] }) }]) },
          { label: "Ship", tag: "ship", node: obj([{ key: "kind", required: true, node: tag("ship") }, { key: "address", required: true, node: str() }]) },
        ],
      }),
    },
    { key: "instruments", required: false, node: node({ type: "array", items: node({ type: "enum", options: [{ value: "piano", label: "Piano" }, { value: "drums", label: "Drums" }] }), prefix: [], min_items: null, max_items: null, unique_items: true }) },
    { key: "tags", required: false, node: obj([], str()) },
    { key: "extra", required: false, node: node({ type: "json" }) },
    { key: "version", required: true, node: tag("2") },
  ]),
};

let mounted: ReturnType<typeof mount> | null = null;
afterEach(() => {
  if (mounted) unmount(mounted);
  mounted = null;
  document.body.innerHTML = "";
});

function render(form: Form, value: Editing, issues: FieldIssue[] = []) {
  const changes: Editing[] = [];
  const target = document.createElement("div");
  document.body.appendChild(target);
  mounted = mount(SchemaForm, { target, props: { form, value, issues, onchange: (v: Editing) => changes.push(v) } });
  flushSync();
  return { el: target, changes };
}

describe("the generated form", () => {
  it("renders every kind of field from the core's form", () => {
    const { el } = render(order, initialValue(order.root, order));
    const widget = (pointer: string) => el.querySelector(`[data-pointer="${pointer}"]`)?.getAttribute("data-widget");
    expect(widget("/customer/name")).toBe("text");
    expect(el.querySelector<HTMLInputElement>('[data-testid="field-/customer/email"]')!.type).toBe("email");
    expect(widget("/items")).toBe("list");
    expect(el.querySelectorAll('[data-testid^="item-/items/"]')).toHaveLength(1);
    expect(el.querySelector<HTMLInputElement>('[data-testid="field-/items/0/qty"]')!.value).toBe("1");
    expect(widget("/delivery")).toBe("choice");
    expect(el.querySelector('[data-testid="field-/delivery/store"]')!.tagName).toBe("SELECT");
    expect(widget("/instruments")).toBe("checklist");
    expect(el.textContent).toContain("Piano");
    // Optional parts: the key/value map is added on demand, the JSON field is there.
    expect(el.querySelector('[data-testid="add-/tags"]')).not.toBeNull();
    expect(el.querySelector('[data-testid="field-/extra"]')!.tagName).toBe("TEXTAREA");
    expect(el.querySelector('[data-pointer="/version"] code')!.textContent).toBe('"2"');
  });

  it("switches a choice's variant with its tag, and adds list items", () => {
    const start = initialValue(order.root, order) as { [key: string]: Value };
    const { el, changes } = render(order, start);
    el.querySelector<HTMLInputElement>('[data-testid="variant-/delivery-1"]')!.click();
    expect(changes.at(-1)).toMatchObject({ delivery: { kind: "ship" } });
    el.querySelector<HTMLButtonElement>('[data-testid="add-item-/items"]')!.click();
    expect((changes.at(-1) as { items: Value[] }).items).toEqual([{ qty: 1 }, { qty: 1 }]);
  });

  it("shows the core's problems at their fields", () => {
    const value = { customer: { name: "Ada" }, items: [{ sku: "a b", qty: 0 }], delivery: { kind: "ship" }, version: "2" };
    const issues = [
      { path: "items[0].sku", pointer: "/items/0/sku", message: 'the value does not match "^[A-Z0-9-]+$"' },
      { path: "delivery.address", pointer: "/delivery/address", message: "is required" },
    ];
    const { el } = render(order, value, issues);
    expect(el.querySelector('[data-pointer="/items/0/sku"] .field-error')!.textContent).toContain("does not match");
    expect(el.querySelector('[data-pointer="/delivery/address"] .field-error')!.textContent).toBe("is required");
    expect(el.querySelector('[data-pointer="/customer/name"] .field-error')).toBeNull();
  });

  it("edits the same value as raw JSON", () => {
    const value = { customer: { name: "Ada" }, items: [{ sku: "A-1", qty: 2 }], delivery: { kind: "pickup", store: "north" }, version: "2" };
    const { el, changes } = render(order, value);
    el.querySelector<HTMLButtonElement>('[data-testid="schema-form-json"]')!.click();
    flushSync();
    const raw = el.querySelector<HTMLTextAreaElement>('[data-testid="schema-form-raw"]')!;
    expect(JSON.parse(raw.value)).toEqual(value);
    raw.value = '{"customer": {"name": "Grace"}}';
    raw.dispatchEvent(new Event("input", { bubbles: true }));
    expect(changes.at(-1)).toEqual({ customer: { name: "Grace" } });
    raw.value = "{not json";
    raw.dispatchEvent(new Event("input", { bubbles: true }));
    flushSync();
    expect(el.textContent).toContain("Not valid JSON yet");
  });

  it("renders a hostile form without unfolding it", () => {
    const options = Array.from({ length: 10_000 }, (_, i) => ({ value: `value-${i}`, label: `value-${i}` }));
    const hostile: Form = {
      notes: ["parts nested deeper than 32 levels are edited as JSON"],
      defs: { "#/$defs/loop": obj([{ key: "again", required: false, node: node({ type: "ref", target: "#/$defs/loop" }) }]) },
      root: obj([
        { key: "choice", required: true, node: node({ type: "enum", options }) },
        { key: "loop", required: false, node: node({ type: "ref", target: "#/$defs/loop" }) },
      ]),
    };
    const { el } = render(hostile, { choice: "value-9999" });
    const input = el.querySelector<HTMLInputElement>('[data-testid="field-/choice"]')!;
    expect(input.tagName).toBe("INPUT");
    expect(el.querySelectorAll("datalist option").length).toBeLessThanOrEqual(50);
    expect(el.querySelector('[data-testid="add-/loop"]')).not.toBeNull();
    expect(el.textContent).toContain("parts nested deeper than 32 levels");
  });
});
