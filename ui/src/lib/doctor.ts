// The environment doctor as the UI shows it: findings most severe first, servers with problems
// first, a fix split into text and code (with the shell commands in it, for copying), and the
// headline counts. Pure: tested in doctor.test.ts.

import type { DoctorReport, FindingSeverity, FindingView, ServerDiagnosis } from "./ipc";

const RANK: Record<FindingSeverity, number> = { error: 0, warning: 1, info: 2 };

/** Findings most severe first; equal ones keep the core's order. */
export function sortFindings(findings: FindingView[]): FindingView[] {
  return findings
    .map((f, i) => [f, i] as const)
    .sort(([a, i], [b, j]) => RANK[a.severity] - RANK[b.severity] || i - j)
    .map(([f]) => f);
}

/** The worst severity among `findings`, or null when there are none. */
export function worstSeverity(findings: FindingView[]): FindingSeverity | null {
  let worst: FindingSeverity | null = null;
  for (const f of findings) if (worst === null || RANK[f.severity] < RANK[worst]) worst = f.severity;
  return worst;
}

/** Whether a server has nothing to fix or look at (only informative findings). */
export function isClear(server: ServerDiagnosis): boolean {
  return server.findings.every((f) => f.severity === "info");
}

/** Servers with errors first, then warnings, then clear ones (config order within each),
 * each with its findings sorted. */
export function orderReport(report: DoctorReport): ServerDiagnosis[] {
  const rank = (s: ServerDiagnosis) => RANK[worstSeverity(s.findings) ?? "info"];
  return report.servers
    .map((s, i) => [s, i] as const)
    .sort(([a, i], [b, j]) => rank(a) - rank(b) || i - j)
    .map(([s]) => ({ ...s, findings: sortFindings(s.findings) }));
}

export interface Counts {
  error: number;
  warning: number;
  info: number;
}

export function countFindings(report: DoctorReport): Counts {
  const counts: Counts = { error: 0, warning: 0, info: 0 };
  for (const s of report.servers) for (const f of s.findings) counts[f.severity]++;
  return counts;
}

/** "All clear" only when no server has an error or a warning (and there was a server at all). */
export function allClear(report: DoctorReport): boolean {
  return report.servers.length > 0 && report.servers.every(isClear);
}

/** "2 errors, 1 warning" / "all clear". */
export function summaryText(report: DoctorReport): string {
  if (!report.servers.length) return "no servers installed";
  const c = countFindings(report);
  const parts: string[] = [];
  if (c.error) parts.push(`${c.error} ${c.error === 1 ? "error" : "errors"}`);
  if (c.warning) parts.push(`${c.warning} ${c.warning === 1 ? "warning" : "warnings"}`);
  return parts.length ? parts.join(", ") : "all clear";
}

export const SEVERITY_LABEL: Record<FindingSeverity, string> = { error: "Error", warning: "Warning", info: "Info" };

/** A piece of a fix: plain text, or a `code` span (`command` when it is a shell command). */
export interface FixPart {
  text: string;
  code: boolean;
  command: boolean;
}

/** A code span that reads as a command to run: a program name, then at least one argument
 * (`plugboard edit x --secret-env K`, `chmod +x /p`), not a lone word, path, flag or JSON. */
export function isCommand(code: string): boolean {
  const words = code.trim().split(/\s+/);
  return words.length >= 2 && /^[a-z][a-z0-9._+-]*$/.test(words[0]);
}

/** Split a fix at its backquotes. An unpaired backquote is kept as text. */
export function fixParts(fix: string): FixPart[] {
  const parts: FixPart[] = [];
  const re = /`([^`]+)`/g;
  let at = 0;
  for (let m = re.exec(fix); m; m = re.exec(fix)) {
    if (m.index > at) parts.push({ text: fix.slice(at, m.index), code: false, command: false });
    parts.push({ text: m[1], code: true, command: isCommand(m[1]) });
    at = m.index + m[0].length;
  }
  if (at < fix.length) parts.push({ text: fix.slice(at), code: false, command: false });
  return parts;
}

/** The shell commands a fix names, each once, in order. */
export function fixCommands(fix: string): string[] {
  const out: string[] = [];
  for (const p of fixParts(fix)) if (p.command && !out.includes(p.text)) out.push(p.text);
  return out;
}
