import { describe, expect, it } from "vitest";
import type { Question, SessionEvent, ToolEntry, TraceEntry } from "./ipc";
import { TRACE_KEPT, applySessionEvent, callEnded, emptySession, filterTrace, fraction, issuesOf, riskLabel, toolMatches } from "./tryit";

const entry = (seq: number, method: string | null = "tools/call"): TraceEntry => ({
  seq, at_ms: seq, direction: "out", kind: "request", method, id: String(seq), bytes: 10, latency_ms: null, json: `{"id":${seq}}`, truncated: false,
});
const question: Question = { id: "q-1", call_id: "c1", message: "Name?", mode: { mode: "url", url: "https://example.com", host: "example.com" } };

describe("session events", () => {
  it("build the tab's state as they arrive", () => {
    const s = emptySession();
    const events: SessionEvent[] = [
      { event: "trace", entry: entry(1) },
      { event: "progress", call_id: "c1", progress: 2, total: 4, message: "half" },
      { event: "log", level: "info", logger: "srv", text: "hello" },
      { event: "notice", call_id: "c1", text: "sampling declined" },
      { event: "question", question },
      { event: "question", question },
      { event: "list_changed", list: "tools" },
    ];
    for (const e of events) applySessionEvent(s, e, 7);
    expect(s.trace).toHaveLength(1);
    expect(fraction(s.progress.c1)).toBe(0.5);
    expect(s.lines.map((l) => l.text)).toEqual(["srv: hello", "sampling declined"]);
    expect(s.questions).toHaveLength(1);
    expect(s.listsChanged).toBe(1);
    applySessionEvent(s, { event: "question_settled", id: "q-1", outcome: "accept" });
    expect(s.questions).toHaveLength(0);
    applySessionEvent(s, { event: "closed", reason: "the server process exited with code 1" });
    expect(s.closed).toContain("exited");
  });

  it("follow a task's status and forget it when the call ends", () => {
    const s = emptySession();
    applySessionEvent(s, { event: "task_status", call_id: "c1", status: "working", message: "Gathering sources..." }, 1);
    applySessionEvent(s, { event: "task_status", call_id: "c1", status: "input_required", message: null }, 2);
    expect(s.tasks.c1).toEqual({ status: "input_required", message: null });
    expect(s.lines.map((l) => l.text)).toEqual(["Task working: Gathering sources...", "Task input_required"]);
    callEnded(s, "c1");
    expect(s.tasks.c1).toBeUndefined();
  });

  it("keep the trace bounded and drop a finished call's progress and questions", () => {
    const s = emptySession();
    for (let i = 0; i < TRACE_KEPT + 10; i++) applySessionEvent(s, { event: "trace", entry: entry(i) });
    expect(s.trace).toHaveLength(TRACE_KEPT);
    expect(s.trace[0].seq).toBe(10);
    applySessionEvent(s, { event: "progress", call_id: "c1", progress: 1, total: null, message: null });
    applySessionEvent(s, { event: "question", question });
    callEnded(s, "c1");
    expect(s.progress.c1).toBeUndefined();
    expect(s.questions).toHaveLength(0);
    expect(fraction(undefined)).toBeNull();
  });
});

describe("the tab's helpers", () => {
  const tool = (name: string, description: string | null): ToolEntry => ({
    name, title: null, description, input_schema: {}, output_schema: null, annotations: null, risk: "writes", disabled: false, adapted_name: `mcp__x__${name}`,
  });
  it("search tools by name and description", () => {
    expect(toolMatches(tool("get-sum", "Returns the sum"), "SUM")).toBe(true);
    expect(toolMatches(tool("echo", "Echoes back"), "back")).toBe(true);
    expect(toolMatches(tool("echo", null), "sum")).toBe(false);
    expect(toolMatches(tool("echo", null), "")).toBe(true);
  });
  it("say the risk and carry the core's field errors to the form", () => {
    expect(riskLabel("destructive")).toBe("destructive");
    expect(issuesOf([{ field: "/items/1/sku", message: "bad" }])).toEqual([{ pointer: "/items/1/sku", path: "items.1.sku", message: "bad" }]);
  });
  it("filter the trace", () => {
    const entries = [entry(1, "tools/call"), entry(2, "notifications/progress"), entry(3, null)];
    expect(filterTrace(entries, "progress").map((e) => e.seq)).toEqual([2]);
    expect(filterTrace(entries, "3").map((e) => e.seq)).toEqual([3]);
    expect(filterTrace(entries, "")).toHaveLength(3);
  });
});
