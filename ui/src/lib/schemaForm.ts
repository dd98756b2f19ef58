// The form engine's UI mapping: how each node of the core's form (`Form`, compiled from a JSON
// Schema by plugboard::schema) is edited, what value a new field starts with, which variant of
// a choice a value is, and the small immutable edits the widgets make. The value being edited
// is the JSON itself (`undefined` = the field is absent), so the raw JSON editor and the form
// always show the same thing. Validation is the core's (`sessionValidate`, by JSON pointer).

import type { EnumOption, FieldIssue, Form, FormNode, Value } from "./ipc";

/** A value being edited: JSON, or `undefined` for an absent field. */
export type Editing = Value | undefined;

export type Widget =
  | "text"
  | "email"
  | "url"
  | "date"
  | "datetime"
  | "number"
  | "integer"
  | "checkbox"
  | "select"
  | "combobox"
  | "checklist"
  | "const"
  | "object"
  | "keyvalue"
  | "list"
  | "choice"
  | "json"
  | "null";

/** Enums with more options than this are typed with suggestions instead of a select. */
export const SELECT_LIMIT = 50;
/** How deep initial values are built (a recursive schema stops here). */
const INITIAL_DEPTH = 8;

type Kind<T extends FormNode["kind"]["type"]> = Extract<FormNode["kind"], { type: T }>;

/** The node a `ref` points at (followed at most a few times), or the node itself. */
export function resolve(node: FormNode, form: Form): FormNode {
  let current = node;
  for (let i = 0; i < 8 && current.kind.type === "ref"; i++) {
    const target = form.defs[(current.kind as Kind<"ref">).target];
    if (!target) break;
    // The referring node's own words (title, description, default) win.
    current = {
      ...target,
      title: current.title ?? target.title,
      description: current.description ?? target.description,
      default: current.default ?? target.default,
    };
  }
  return current;
}

/** How `node` is edited. */
export function widgetOf(node: FormNode, form: Form): Widget {
  const n = resolve(node, form);
  const k = n.kind;
  switch (k.type) {
    case "string":
      switch (k.format) {
        case "email":
        case "idn-email":
          return "email";
        case "uri":
        case "url":
        case "iri":
        case "uri-reference":
          return "url";
        case "date":
          return "date";
        case "date-time":
          return "datetime";
        default:
          return "text";
      }
    case "number":
      return k.integer ? "integer" : "number";
    case "boolean":
      return "checkbox";
    case "null":
      return "null";
    case "const":
      return "const";
    case "enum":
      return k.options.length > SELECT_LIMIT ? "combobox" : "select";
    case "object":
      return k.properties.length === 0 && k.additional ? "keyvalue" : "object";
    case "array": {
      const items = resolve(k.items, form);
      return items.kind.type === "enum" && items.kind.options.length <= SELECT_LIMIT && k.prefix.length === 0
        ? "checklist"
        : "list";
    }
    case "choice":
      return "choice";
    case "json":
    case "ref":
      return "json";
  }
}

function clone<T extends Value>(value: T): T {
  return JSON.parse(JSON.stringify(value)) as T;
}

/** The value a new field starts with: its default, else what its required parts need. */
export function initialValue(node: FormNode, form: Form, depth = 0): Editing {
  const n = resolve(node, form);
  if (n.default !== null && n.default !== undefined) return clone(n.default);
  const k = n.kind;
  switch (k.type) {
    case "const":
      return clone(k.value);
    case "boolean":
      return false;
    case "null":
      return null;
    case "object": {
      const out: { [key: string]: Value } = {};
      if (depth >= INITIAL_DEPTH) return out;
      for (const p of k.properties) {
        if (!p.required) continue;
        const v = initialValue(p.node, form, depth + 1);
        if (v !== undefined) out[p.key] = v;
      }
      return out;
    }
    case "array": {
      const out: Value[] = [];
      if (depth >= INITIAL_DEPTH) return out;
      k.prefix.forEach((p) => out.push(initialValue(p, form, depth + 1) ?? null));
      while (out.length < (k.min_items ?? 0)) out.push(initialValue(k.items, form, depth + 1) ?? null);
      return out;
    }
    case "choice": {
      if (k.variants.length === 0) return undefined;
      return variantValue(n, 0, undefined, form, depth);
    }
    default:
      return undefined;
  }
}

/** Whether two JSON values are the same. */
export function same(a: Editing, b: Editing): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

function typeName(value: Editing): string {
  if (value === undefined) return "absent";
  if (value === null) return "null";
  if (Array.isArray(value)) return "array";
  return typeof value;
}

/** Whether `value` has the shape `node` edits (ignoring its constraints). */
function fits(node: FormNode, value: Editing, form: Form): boolean {
  const n = resolve(node, form);
  const t = typeName(value);
  if (t === "null") return n.nullable || n.kind.type === "null";
  switch (n.kind.type) {
    case "string":
      return t === "string";
    case "number":
      return t === "number";
    case "boolean":
      return t === "boolean";
    case "enum":
      return n.kind.options.some((o) => same(o.value, value));
    case "const":
      return same(n.kind.value, value);
    case "object":
      return t === "object";
    case "array":
      return t === "array";
    case "null":
      return false;
    default:
      return t !== "absent";
  }
}

/** Which variant of choice `node` the value is: by the discriminator's tag, else the first
 * whose shape it has; 0 when nothing tells. */
export function variantOf(node: FormNode, value: Editing, form: Form): number {
  const n = resolve(node, form);
  if (n.kind.type !== "choice") return 0;
  const { variants, discriminator } = n.kind;
  if (discriminator && value && typeof value === "object" && !Array.isArray(value)) {
    const tag = (value as { [key: string]: Value })[discriminator];
    const at = variants.findIndex((v) => same(v.tag ?? undefined, tag));
    if (at >= 0) return at;
  }
  const at = variants.findIndex((v) => fits(v.node, value, form));
  return at >= 0 ? at : 0;
}

/** The value of choice `node` switched to variant `index`: the variant's initial value, with
 * the fields the old value shares with it kept, and the discriminator set. */
export function variantValue(node: FormNode, index: number, current: Editing, form: Form, depth = 0): Editing {
  const n = resolve(node, form);
  if (n.kind.type !== "choice") return current;
  const variant = n.kind.variants[index];
  if (!variant) return current;
  let next = initialValue(variant.node, form, depth + 1);
  const target = resolve(variant.node, form);
  if (target.kind.type === "object" && (next === undefined || (typeof next === "object" && next !== null && !Array.isArray(next)))) {
    const obj: { [key: string]: Value } = { ...((next as object) ?? {}) };
    if (current && typeof current === "object" && !Array.isArray(current)) {
      for (const p of target.kind.properties) {
        const old = (current as { [key: string]: Value })[p.key];
        if (old !== undefined && p.key !== n.kind.discriminator && fits(p.node, old, form)) obj[p.key] = old;
      }
    }
    if (n.kind.discriminator && variant.tag !== null) obj[n.kind.discriminator] = variant.tag;
    next = obj;
  } else if (fits(variant.node, current, form)) {
    next = current;
  }
  return next;
}

/** `obj` with `key` set to `value` (removed when `value` is undefined). */
export function setKey(obj: Editing, key: string, value: Editing): { [key: string]: Value } {
  const base = obj && typeof obj === "object" && !Array.isArray(obj) ? { ...(obj as { [key: string]: Value }) } : {};
  if (value === undefined) delete base[key];
  else base[key] = value;
  return base;
}

/** `obj` with key `from` renamed to `to` (its place kept). */
export function renameKey(obj: Editing, from: string, to: string): { [key: string]: Value } {
  const base = obj && typeof obj === "object" && !Array.isArray(obj) ? (obj as { [key: string]: Value }) : {};
  const out: { [key: string]: Value } = {};
  for (const [k, v] of Object.entries(base)) out[k === from ? to : k] = v;
  return out;
}

/** `list` with item `index` set (removed when `value` is undefined). */
export function setItem(list: Editing, index: number, value: Editing): Value[] {
  const base = Array.isArray(list) ? [...list] : [];
  if (value === undefined) base.splice(index, 1);
  else base[index] = value;
  return base;
}

/** `list` with item `index` moved by `by` places (within bounds). */
export function moveItem(list: Editing, index: number, by: number): Value[] {
  const base = Array.isArray(list) ? [...list] : [];
  const to = index + by;
  if (to < 0 || to >= base.length) return base;
  const [item] = base.splice(index, 1);
  base.splice(to, 0, item);
  return base;
}

/** The JSON pointer of `key` (or index) inside `pointer`. */
export function childPointer(pointer: string, key: string | number): string {
  return `${pointer}/${String(key).replace(/~/g, "~0").replace(/\//g, "~1")}`;
}

/** The messages of the issues about exactly `pointer`. */
export function issuesAt(issues: FieldIssue[], pointer: string): string[] {
  return issues.filter((i) => i.pointer === pointer).map((i) => i.message);
}

/** How many issues are about `pointer` or anything inside it. */
export function issuesUnder(issues: FieldIssue[], pointer: string): number {
  return issues.filter((i) => i.pointer === pointer || i.pointer.startsWith(pointer + "/")).length;
}

/** The field's label: its title, else its key. */
export function fieldLabel(key: string, node: FormNode): string {
  return node.title ?? key;
}

/** The constraints people should know before they type, in words. */
export function constraintText(node: FormNode): string | null {
  const k = node.kind;
  const parts: string[] = [];
  const range = (lo: number | null, hi: number | null, one = "", many = one) => {
    // "1 character", "2 characters"; a bare number range has no unit.
    const of = (n: number) => (one === "" ? "" : ` ${n === 1 ? one : many}`);
    if (lo !== null && hi !== null) parts.push(`${lo} to ${hi}${of(hi)}`);
    else if (lo !== null) parts.push(`at least ${lo}${of(lo)}`);
    else if (hi !== null) parts.push(`at most ${hi}${of(hi)}`);
  };
  if (k.type === "string") {
    range(k.min_length, k.max_length, "character", "characters");
    if (k.pattern) parts.push(`matching ${k.pattern}`);
    if (k.format && !["email", "uri", "date", "date-time"].includes(k.format)) parts.push(`format ${k.format}`);
  } else if (k.type === "number") {
    range(k.minimum, k.maximum);
    if (k.exclusive_minimum !== null) parts.push(`more than ${k.exclusive_minimum}`);
    if (k.exclusive_maximum !== null) parts.push(`less than ${k.exclusive_maximum}`);
    if (k.multiple_of !== null && !(k.integer && k.multiple_of === 1)) parts.push(`a multiple of ${k.multiple_of}`);
    if (k.integer) parts.push("a whole number");
  } else if (k.type === "array") {
    range(k.min_items, k.max_items, "item", "items");
    if (k.unique_items) parts.push("each different");
  } else if (k.type === "object") {
    range(k.min_properties, k.max_properties, "entry", "entries");
  }
  return parts.length ? parts.join(" · ") : null;
}

/** RFC 3339 → the value of an `<input type="datetime-local">` (local time). */
export function toLocalDateTime(rfc3339: Editing): string {
  if (typeof rfc3339 !== "string" || rfc3339 === "") return "";
  const date = new Date(rfc3339);
  if (Number.isNaN(date.getTime())) return "";
  const pad = (n: number) => String(n).padStart(2, "0");
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}T${pad(date.getHours())}:${pad(date.getMinutes())}`;
}

/** An `<input type="datetime-local">` value → RFC 3339 in UTC ("" → absent). */
export function fromLocalDateTime(local: string): Editing {
  if (local === "") return undefined;
  const date = new Date(local);
  return Number.isNaN(date.getTime()) ? local : date.toISOString().replace(/\.000Z$/, "Z");
}

/** What a number input holds: absent when empty, the number when it is one, else the text
 * (so that validation says it is not a number). */
export function parseNumber(text: string): Editing {
  const trimmed = text.trim();
  if (trimmed === "") return undefined;
  const n = Number(trimmed);
  return Number.isFinite(n) ? n : trimmed;
}

/** The options whose label or value contains `query`, at most `limit`. */
export function filterOptions(options: EnumOption[], query: string, limit = SELECT_LIMIT): EnumOption[] {
  const q = query.trim().toLowerCase();
  const out: EnumOption[] = [];
  for (const o of options) {
    if (out.length >= limit) break;
    const text = `${o.label} ${typeof o.value === "string" ? o.value : JSON.stringify(o.value)}`.toLowerCase();
    if (q === "" || text.includes(q)) out.push(o);
  }
  return out;
}

/** The option a typed text stands for (its label or its value), if one. */
export function optionFor(options: EnumOption[], text: string): EnumOption | undefined {
  return options.find((o) => o.label === text || o.value === text || JSON.stringify(o.value) === text);
}

/** The value as the raw JSON editor shows it. */
export function toJsonText(value: Editing): string {
  return value === undefined ? "" : JSON.stringify(value, null, 2);
}

/** The raw JSON editor's text read back. */
export function parseJsonText(text: string): { ok: true; value: Editing } | { ok: false; error: string } {
  if (text.trim() === "") return { ok: true, value: undefined };
  try {
    return { ok: true, value: JSON.parse(text) as Value };
  } catch (e) {
    return { ok: false, error: e instanceof Error ? e.message : String(e) };
  }
}

/** The value to send: absent fields dropped. */
export function prune(value: Editing): Value {
  if (value === undefined) return {};
  return JSON.parse(JSON.stringify(value)) as Value;
}

/** Label of a JSON value in a select. */
export function valueLabel(value: Value): string {
  return typeof value === "string" ? value : JSON.stringify(value);
}
