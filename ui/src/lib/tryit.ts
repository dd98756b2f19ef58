// What the Try-it tab keeps of a session, and how each event of the core changes it: the
// trace (bounded), the server's log lines and Plugboard's notices, the progress of running
// calls, the questions waiting for the user. Pure functions over plain data, so the tab's
// state (`tryit.svelte.ts`) and the tests share them.

import type { FieldError, FieldIssue, Question, SessionEvent, ToolEntry, ToolRisk, TraceEntry } from "./ipc";

/** Trace entries the tab keeps (the core keeps as many; the panel shows the newest). */
export const TRACE_KEPT = 2000;
/** Log lines and notices kept. */
export const LINES_KEPT = 500;

export interface Progress {
  progress: number;
  total: number | null;
  message: string | null;
}

export interface Line {
  at: number;
  kind: "log" | "notice";
  level: string;
  text: string;
  callId: string | null;
}

export interface SessionState {
  trace: TraceEntry[];
  lines: Line[];
  progress: Record<string, Progress>;
  /** Calls the server runs as tasks: the task's last status and what the server said. */
  tasks: Record<string, { status: string; message: string | null }>;
  questions: Question[];
  closed: string | null;
  /** Bumped when the server's lists changed (the tab fetches the offer again). */
  listsChanged: number;
}

export function emptySession(): SessionState {
  return { trace: [], lines: [], progress: {}, tasks: {}, questions: [], closed: null, listsChanged: 0 };
}

function keep<T>(list: T[], max: number) {
  if (list.length > max) list.splice(0, list.length - max);
}

/** Apply one event of the core to the tab's state. */
export function applySessionEvent(state: SessionState, event: SessionEvent, now = Date.now()): void {
  switch (event.event) {
    case "trace":
      state.trace.push(event.entry);
      keep(state.trace, TRACE_KEPT);
      break;
    case "progress":
      state.progress[event.call_id] = { progress: event.progress ?? 0, total: event.total, message: event.message };
      break;
    case "task_status":
      state.tasks[event.call_id] = { status: event.status, message: event.message };
      state.lines.push({ at: now, kind: "notice", level: "info", text: `Task ${event.status}${event.message ? `: ${event.message}` : ""}`, callId: event.call_id });
      keep(state.lines, LINES_KEPT);
      break;
    case "log":
      state.lines.push({ at: now, kind: "log", level: event.level, text: event.logger ? `${event.logger}: ${event.text}` : event.text, callId: null });
      keep(state.lines, LINES_KEPT);
      break;
    case "notice":
      state.lines.push({ at: now, kind: "notice", level: "info", text: event.text, callId: event.call_id });
      keep(state.lines, LINES_KEPT);
      break;
    case "question":
      if (!state.questions.some((q) => q.id === event.question.id)) state.questions.push(event.question);
      break;
    case "question_settled":
      state.questions = state.questions.filter((q) => q.id !== event.id);
      break;
    case "list_changed":
      state.listsChanged++;
      break;
    case "closed":
      state.closed = event.reason;
      break;
  }
}

/** A call ended: its progress and its questions are done with. */
export function callEnded(state: SessionState, callId: string): void {
  delete state.progress[callId];
  delete state.tasks[callId];
  state.questions = state.questions.filter((q) => q.call_id !== callId);
}

/** The share of a progress that is done, 0..1, when its total is known. */
export function fraction(p: Progress | undefined): number | null {
  if (!p || p.total === null || p.total <= 0) return null;
  return Math.max(0, Math.min(1, p.progress / p.total));
}

/** Whether a tool matches the search (name, title or description). */
export function toolMatches(tool: ToolEntry, query: string): boolean {
  const q = query.trim().toLowerCase();
  if (q === "") return true;
  return [tool.name, tool.title ?? "", tool.description ?? ""].some((t) => t.toLowerCase().includes(q));
}

/** What a tool's annotations claim, in words. */
export function riskLabel(risk: ToolRisk): string {
  switch (risk) {
    case "read_only":
      return "read-only";
    case "writes":
      return "may change things";
    case "destructive":
      return "destructive";
  }
}

/** The core's field errors (JSON pointers) as issues the form shows. */
export function issuesOf(fields: FieldError[]): FieldIssue[] {
  return fields.map((f) => ({ pointer: f.field, path: f.field.replace(/^\//, "").replace(/\//g, "."), message: f.message }));
}

/** Trace entries matching a filter (method, id or the JSON text). */
export function filterTrace(entries: TraceEntry[], query: string): TraceEntry[] {
  const q = query.trim().toLowerCase();
  if (q === "") return entries;
  return entries.filter((e) => (e.method ?? "").toLowerCase().includes(q) || e.id === q || e.json.toLowerCase().includes(q));
}

/** `12.3 ms`, `1.20 s`. */
export function formatMs(ms: number | null): string {
  if (ms === null) return "";
  return ms < 1000 ? `${ms.toFixed(1)} ms` : `${(ms / 1000).toFixed(2)} s`;
}
