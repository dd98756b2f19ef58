import { describe, expect, it } from "vitest";
import { diffSummary, flagLabel, lineMarker, needsReview, pathChangeText, pinBadge } from "./pins";
import type { ToolDiff } from "./ipc";

describe("tool pinning", () => {
  it("asks for a review only when tools changed or are unapproved", () => {
    expect(needsReview("tools_changed")).toBe(true);
    expect(needsReview("unapproved")).toBe(true);
    expect(needsReview("approved")).toBe(false);
    expect(needsReview(null)).toBe(false);
    expect(pinBadge("tools_changed")?.label).toBe("Tools changed");
    expect(pinBadge("approved")).toBeNull();
    expect(pinBadge(undefined)).toBeNull();
  });

  it("renders lines and schema paths readably", () => {
    expect(lineMarker({ op: "added", text: "x" })).toBe("+");
    expect(lineMarker({ op: "removed", text: "x" })).toBe("-");
    expect(lineMarker({ op: "context", text: "x" })).toBe(" ");
    expect(pathChangeText({ path: "$.properties.q", change: "added", before: null, after: '{"type":"string"}' })).toBe(
      '+ $.properties.q: {"type":"string"}',
    );
    expect(pathChangeText({ path: "$.required", change: "removed", before: '["q"]', after: null })).toBe('- $.required: ["q"]');
    expect(pathChangeText({ path: "$.type", change: "changed", before: '"object"', after: '"array"' })).toBe(
      '~ $.type: "object" → "array"',
    );
  });

  it("labels flags and summarises a diff", () => {
    expect(flagLabel({ tool: "t", code: "invisible_unicode", detail: "" })).toBe("Invisible Unicode characters");
    expect(flagLabel({ tool: "t", code: "new_code", detail: "" })).toBe("new_code");
    const diff: ToolDiff = {
      name: "fx",
      state: "tools_changed",
      approved_at: 1,
      observed_at: 2,
      added: ["a", "b"],
      removed: [],
      changed: [{ name: "echo", fields: ["description"], description_diff: [], schema_diff: [], annotations_diff: [] }],
      instructions_diff: [],
      flags: [],
    };
    expect(diffSummary(diff)).toBe("2 added, 1 changed");
    expect(diffSummary({ ...diff, added: [], changed: [] })).toBe("no changes");
  });
});
