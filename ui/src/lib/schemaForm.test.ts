import { describe, expect, it } from "vitest";
import type { Form, FormNode, NodeKind } from "./ipc";
import {
  childPointer,
  constraintText,
  filterOptions,
  fromLocalDateTime,
  initialValue,
  issuesAt,
  issuesUnder,
  moveItem,
  parseJsonText,
  parseNumber,
  prune,
  renameKey,
  resolve,
  setItem,
  setKey,
  toJsonText,
  toLocalDateTime,
  variantOf,
  variantValue,
  widgetOf,
} from "./schemaForm";

function node(kind: NodeKind, extra: Partial<FormNode> = {}): FormNode {
  return { title: null, description: null, default: null, examples: [], nullable: false, read_only: false, deprecated: false, kind, ...extra };
}
const str = (format: string | null = null, extra: Partial<FormNode> = {}) =>
  node({ type: "string", format, min_length: null, max_length: null, pattern: null }, extra);
const int = (extra: Partial<FormNode> = {}) =>
  node({ type: "number", integer: true, minimum: null, maximum: null, exclusive_minimum: null, exclusive_maximum: null, multiple_of: null }, extra);
const obj = (properties: { key: string; required: boolean; node: FormNode }[], additional: FormNode | null = null) =>
  node({ type: "object", properties, additional, min_properties: null, max_properties: null });
const arr = (items: FormNode, min: number | null = null, max: number | null = null, unique = false) =>
  node({ type: "array", items, prefix: [], min_items: min, max_items: max, unique_items: unique });
const form = (root: FormNode, defs: Record<string, FormNode> = {}): Form => ({ root, defs, notes: [] });

// The shape of the fixture's `schema_nested` as plugboard::schema compiles it.
const lineItem = obj([
  { key: "sku", required: true, node: str() },
  { key: "qty", required: true, node: int({ default: 1 }) },
]);
const delivery = node({
  type: "choice",
  discriminator: "kind",
  exclusive: true,
  variants: [
    { label: "Pick up", tag: "pickup", node: obj([{ key: "kind", required: true, node: node({ type: "const", value: "pickup" }) }, { key: "store", required: true, node: node({ type: "enum", options: [{ value: "north", label: "north" }, { value: "south", label: "south" }] }) }]) },
    { label: "Ship", tag: "ship", node: obj([{ key: "kind", required: true, node: node({ type: "const", value: "ship" }) }, { key: "address", required: true, node: str() }]) },
  ],
});
const order = form(
  obj([
    { key: "customer", required: true, node: obj([{ key: "name", required: true, node: str() }, { key: "email", required: false, node: str("email") }]) },
    { key: "items", required: true, node: arr(lineItem, 1, 5, true) },
    { key: "delivery", required: true, node: delivery },
    { key: "tags", required: false, node: obj([], str()) },
  ]),
);

describe("widgets", () => {
  it("maps every kind of node to its editor", () => {
    const f = form(str());
    expect(widgetOf(str(), f)).toBe("text");
    expect(widgetOf(str("email"), f)).toBe("email");
    expect(widgetOf(str("uri"), f)).toBe("url");
    expect(widgetOf(str("date"), f)).toBe("date");
    expect(widgetOf(str("date-time"), f)).toBe("datetime");
    expect(widgetOf(int(), f)).toBe("integer");
    expect(widgetOf(node({ type: "boolean" }), f)).toBe("checkbox");
    expect(widgetOf(node({ type: "const", value: 2 }), f)).toBe("const");
    expect(widgetOf(node({ type: "json" }), f)).toBe("json");
    expect(widgetOf(node({ type: "null" }), f)).toBe("null");
    expect(widgetOf(lineItem, f)).toBe("object");
    expect(widgetOf(obj([], str()), f)).toBe("keyvalue");
    expect(widgetOf(arr(lineItem), f)).toBe("list");
    expect(widgetOf(delivery, f)).toBe("choice");
    const few = node({ type: "enum", options: [{ value: "a", label: "A" }] });
    expect(widgetOf(few, f)).toBe("select");
    expect(widgetOf(arr(few, 1, 3, true), f)).toBe("checklist");
    const many = node({ type: "enum", options: Array.from({ length: 10_000 }, (_, i) => ({ value: `value-${i}`, label: `value-${i}` })) });
    expect(widgetOf(many, f)).toBe("combobox");
  });

  it("follows references into the definitions, keeping the referrer's words", () => {
    const tree = obj([{ key: "label", required: true, node: str() }]);
    const f = form(node({ type: "ref", target: "#/$defs/node" }, { title: "Tree" }), { "#/$defs/node": tree });
    expect(resolve(f.root, f).kind.type).toBe("object");
    expect(resolve(f.root, f).title).toBe("Tree");
    expect(widgetOf(f.root, f)).toBe("object");
    // A dangling reference is edited as JSON.
    expect(widgetOf(node({ type: "ref", target: "#/nope" }), f)).toBe("json");
  });
});

describe("initial values", () => {
  it("fill what is required: nested objects, minItems of a list, the first variant with its tag", () => {
    expect(initialValue(order.root, order)).toEqual({
      customer: {},
      items: [{ qty: 1 }],
      delivery: { kind: "pickup" },
    });
  });

  it("use defaults and consts, and stop in a recursive schema", () => {
    expect(initialValue(int({ default: 3 }), order)).toBe(3);
    expect(initialValue(node({ type: "const", value: "x" }), order)).toBe("x");
    expect(initialValue(str(), order)).toBeUndefined();
    const looping = form(node({ type: "ref", target: "#" }), {});
    looping.defs["#"] = obj([{ key: "again", required: true, node: node({ type: "ref", target: "#" }) }]);
    const value = initialValue(looping.root, looping);
    expect(JSON.stringify(value).split("again").length - 1).toBe(8);
  });
});

describe("choices", () => {
  it("find a value's variant by its discriminator, else by its shape", () => {
    expect(variantOf(delivery, { kind: "ship", address: "x" }, order)).toBe(1);
    expect(variantOf(delivery, { kind: "pickup" }, order)).toBe(0);
    const either = node({ type: "choice", discriminator: null, exclusive: false, variants: [{ label: "text", tag: null, node: str() }, { label: "list", tag: null, node: arr(str()) }] });
    expect(variantOf(either, ["a"], order)).toBe(1);
    expect(variantOf(either, "a", order)).toBe(0);
  });

  it("switching a variant sets its tag and keeps the fields both have", () => {
    const shared = node({
      type: "choice",
      discriminator: "kind",
      exclusive: true,
      variants: [
        { label: "A", tag: "a", node: obj([{ key: "kind", required: true, node: node({ type: "const", value: "a" }) }, { key: "note", required: false, node: str() }]) },
        { label: "B", tag: "b", node: obj([{ key: "kind", required: true, node: node({ type: "const", value: "b" }) }, { key: "note", required: false, node: str() }]) },
      ],
    });
    expect(variantValue(shared, 1, { kind: "a", note: "keep me" }, order)).toEqual({ kind: "b", note: "keep me" });
    expect(variantValue(delivery, 1, { kind: "pickup", store: "north" }, order)).toEqual({ kind: "ship" });
  });
});

describe("edits", () => {
  it("are immutable and drop absent fields", () => {
    const before = { a: 1 };
    expect(setKey(before, "b", 2)).toEqual({ a: 1, b: 2 });
    expect(setKey(before, "a", undefined)).toEqual({});
    expect(before).toEqual({ a: 1 });
    expect(renameKey({ a: 1, b: 2 }, "a", "z")).toEqual({ z: 1, b: 2 });
    expect(setItem([1, 2, 3], 1, undefined)).toEqual([1, 3]);
    expect(setItem(undefined, 0, "x")).toEqual(["x"]);
    expect(moveItem([1, 2, 3], 0, 1)).toEqual([2, 1, 3]);
    expect(moveItem([1, 2, 3], 0, -1)).toEqual([1, 2, 3]);
    expect(prune(undefined)).toEqual({});
    expect(prune({ a: 1 })).toEqual({ a: 1 });
  });

  it("keep the raw JSON editor in step with the form", () => {
    const value = { customer: { name: "Ada" }, items: [{ sku: "A-1", qty: 2 }] };
    const parsed = parseJsonText(toJsonText(value));
    expect(parsed).toEqual({ ok: true, value });
    expect(parseJsonText("{nope").ok).toBe(false);
    expect(parseJsonText("  ")).toEqual({ ok: true, value: undefined });
  });
});

describe("field values", () => {
  it("numbers: empty is absent, text stays text so validation can say so", () => {
    expect(parseNumber("")).toBeUndefined();
    expect(parseNumber("4.5")).toBe(4.5);
    expect(parseNumber("abc")).toBe("abc");
  });

  it("date-time round-trips through the local input", () => {
    const local = toLocalDateTime("2024-05-01T10:30:00Z");
    expect(local).toMatch(/^2024-05-0[12]T\d\d:30$/);
    expect(fromLocalDateTime(local)).toBe("2024-05-01T10:30:00Z");
    expect(fromLocalDateTime("")).toBeUndefined();
    expect(toLocalDateTime("not a date")).toBe("");
  });

  it("a 10,000-value enum is searched, not listed", () => {
    const options = Array.from({ length: 10_000 }, (_, i) => ({ value: `value-${String(i).padStart(5, "0")}`, label: `value-${String(i).padStart(5, "0")}` }));
    expect(filterOptions(options, "0999").map((o) => o.value)).toEqual(["value-00999", "value-09990", "value-09991", "value-09992", "value-09993", "value-09994", "value-09995", "value-09996", "value-09997", "value-09998", "value-09999"]);
    expect(filterOptions(options, "").length).toBe(50);
  });

  it("constraints are said in words", () => {
    expect(constraintText(node({ type: "string", format: null, min_length: 3, max_length: 40, pattern: "^[A-Z]$" }))).toBe("3 to 40 characters · matching ^[A-Z]$");
    expect(constraintText(node({ type: "number", integer: true, minimum: 1, maximum: 10, exclusive_minimum: null, exclusive_maximum: null, multiple_of: null }))).toBe("1 to 10 · a whole number");
    expect(constraintText(arr(str(), 1, 5, true))).toBe("1 to 5 items · each different");
    expect(constraintText(node({ type: "string", format: null, min_length: 1, max_length: null, pattern: null }))).toBe("at least 1 character");
    expect(constraintText(str())).toBeNull();
  });
});

describe("issues from the core", () => {
  const issues = [
    { path: "items[1].sku", pointer: "/items/1/sku", message: "the value does not match" },
    { path: "items[1].qty", pointer: "/items/1/qty", message: "less than 1" },
    { path: "delivery.address", pointer: "/delivery/address", message: "is required" },
  ];
  it("land on their fields by JSON pointer", () => {
    expect(childPointer(childPointer("", "items"), 1)).toBe("/items/1");
    expect(childPointer("", "a/b~c")).toBe("/a~1b~0c");
    expect(issuesAt(issues, "/delivery/address")).toEqual(["is required"]);
    expect(issuesUnder(issues, "/items")).toBe(2);
    expect(issuesUnder(issues, "/item")).toBe(0);
  });
});
