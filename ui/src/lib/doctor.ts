// The environment doctor as the UI shows it: findings most severe first, servers with problems
// first, a fix split into text and code (with the shell commands in it, for copying), the headline
// counts, and the app's own action for a fix (sign in, review tools, update credentials, edit the
// server). Pure: tested in doctor.test.ts.

import { textParts } from "./text";
import type { FindingSeverity, FindingView, ServerDiagnosis, ServerView } from "./ipc";

/** What the doctor found: each server examined so far (config order), and the machine. */
export interface DoctorReport {
  /** No server has an error-level finding. */
  ok: boolean;
  servers: ServerDiagnosis[];
  /** The machine itself, when every server was examined. */
  environment: FindingView[];
  /** When the last examination finished (Unix milliseconds). */
  checked_at: number | null;
}

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
  return textParts(fix).map((p) => ({ ...p, command: p.code && isCommand(p.text) }));
}

/** The shell commands a fix names, each once, in order. */
export function fixCommands(fix: string): string[] {
  const out: string[] = [];
  for (const p of fixParts(fix)) if (p.command && !out.includes(p.text)) out.push(p.text);
  return out;
}

// ---------------------------------------------------------------------------------------------
// Fixes the app can make itself. A finding whose fix names a CLI command (`plugboard auth x`,
// `plugboard diff x` + `approve`, `plugboard edit x --secret-env K`, `plugboard add x --transport
// sse`, `plugboard doctor`) gets the app's equivalent as its primary action; the command stays
// shown for scripting.

/** What a finding's action does: open the OAuth sign-in, the tool review, the credentials
 * dialog or the server editor, or examine the server again. */
export type FixActionKind = "sign_in" | "review_tools" | "credentials" | "edit" | "recheck";

export interface FixAction {
  kind: FixActionKind;
  /** The button's text. */
  label: string;
  /** What the action will do, for a tooltip. */
  title: string;
}

/** What the app knows about a server, as far as choosing an action needs. */
export interface ActionContext {
  /** Streamable HTTP, SSE or auto (OAuth sign-in is for these only). */
  remote: boolean;
  /** `none`, `oauth2`, `bearer`, `api_key`, `basic`, `header`. */
  auth: string;
  /** Env variables, headers and the auth credential kept in the keyring (what the credentials
   * dialog replaces), by name. */
  secrets: string[];
  /** The entry can be opened in the editor (a config entry that cannot be read cannot). */
  editable: boolean;
}

/** The action context of an installed server's view. */
export function actionContext(server: ServerView): ActionContext {
  const secrets = [...server.env, ...server.headers]
    .filter((e) => e.kind === "secret")
    .map((e) => e.key);
  if (server.auth.kind !== "oauth2" && server.auth.credential) secrets.push(server.auth.credential.key);
  return {
    remote: server.transport !== null && server.transport !== "stdio",
    auth: server.auth.kind,
    secrets,
    editable: !server.error,
  };
}

const ACTIONS: Record<FixActionKind, (server: string) => FixAction> = {
  sign_in: (s) => ({ kind: "sign_in", label: "Sign in", title: `Sign in to ${s} with OAuth` }),
  review_tools: (s) => ({ kind: "review_tools", label: "Review tools", title: `Review and approve the tools of ${s}` }),
  credentials: (s) => ({ kind: "credentials", label: "Update credentials", title: `Replace the credentials of ${s} in the keyring` }),
  edit: (s) => ({ kind: "edit", label: "Edit server", title: `Change the settings of ${s}` }),
  recheck: (s) => ({ kind: "recheck", label: "Check again", title: `Examine ${s} again, once it is fixed` }),
};

/** Codes fixed by changing the server's settings: its command, URL or transport. */
const EDIT_CODES = new Set([
  "config.no_command",
  "config.bad_url",
  "command.not_found",
  "command.not_executable",
  "command.login_shell_only",
  "probe.spawn",
  "remote.sse_only",
  "remote.dns",
  "remote.refused",
  "remote.tls",
  "stdio.logs_to_stdout",
]);

/** Codes fixed outside the app (installing or starting a runtime): then examine again. */
const RECHECK_CODES = new Set(["runtime.missing", "runtime.broken", "runtime.version", "runtime.docker_daemon"]);

/** The variable of a `--secret-env NAME` in a fix, if any. */
export function secretEnvOf(fix: string): string | null {
  return /--secret-env\s+([A-Za-z_][A-Za-z0-9_]*)/.exec(fix)?.[1] ?? null;
}

/** Sign in, or update the credentials, for an authorization problem. */
function authAction(fix: string, ctx: ActionContext): FixActionKind | null {
  const canSignIn = ctx.remote && (ctx.auth === "oauth2" || ctx.auth === "none");
  const saysSignIn = /plugboard auth /.test(fix);
  const saysCredential = /--credential\b/.test(fix);
  if (ctx.auth === "oauth2" && ctx.remote) return "sign_in";
  if (saysCredential && ctx.secrets.length > 0) return "credentials";
  if (saysSignIn && canSignIn) return "sign_in";
  if (saysCredential && ctx.editable) return "edit";
  return null;
}

/** A secret the config refers to (update it) or a variable it lacks or holds in plain (edit). */
function variableAction(fix: string, ctx: ActionContext): FixActionKind | null {
  const name = secretEnvOf(fix);
  if (name && ctx.secrets.includes(name)) return "credentials";
  return ctx.editable ? "edit" : null;
}

/** The app's equivalent of a finding's fix, or null when it has none (the fix is done outside the
 * app, the finding only informs, or the code is unknown). `server` names it in the tooltip. */
export function findingAction(finding: FindingView, server: string, ctx: ActionContext): FixAction | null {
  if (!finding.fix || finding.severity === "info") return null;
  const code = finding.code;
  let kind: FixActionKind | null = null;
  if (code === "tools.changed" || code === "tools.unapproved") kind = "review_tools";
  else if (code === "remote.unauthorized" || code === "remote.forbidden" || code === "probe.unauthorized") kind = authAction(finding.fix, ctx);
  else if (code === "probe.credentials") kind = ctx.secrets.length > 0 ? "credentials" : ctx.editable ? "edit" : null;
  else if (code === "env.missing_var") kind = variableAction(finding.fix, ctx);
  else if (code === "probe.config") {
    // A missing secret, an OAuth sign-in, an invalid entry or working directory; a keyring that
    // does not answer is fixed outside the app.
    if (secretEnvOf(finding.fix)) kind = variableAction(finding.fix, ctx);
    else if (/plugboard auth /.test(finding.fix)) kind = authAction(finding.fix, ctx);
    else if (/plugboard edit /.test(finding.fix) && ctx.editable) kind = "edit";
  } else if (EDIT_CODES.has(code)) kind = ctx.editable ? "edit" : null;
  else if (RECHECK_CODES.has(code)) kind = "recheck";
  return kind ? ACTIONS[kind](server) : null;
}

/** A shell command of a fix labelled for display: `CLI` for Plugboard's own, `Shell` otherwise. */
export function commandLabel(command: string): string {
  return /^plugboard\s/.test(command) ? "CLI" : "Shell";
}

/** `report` with server `name`'s diagnosis replaced by `fresh` (examined again, perhaps renamed),
 * or dropped when `fresh` is null (the server was removed). */
export function replaceDiagnosis(report: DoctorReport, name: string, fresh: ServerDiagnosis | null): DoctorReport {
  const servers = fresh
    ? report.servers.map((s) => (s.name === name ? fresh : s))
    : report.servers.filter((s) => s.name !== name);
  return { ...report, servers, ok: servers.every((s) => s.ok) };
}

/** `report` with `fresh` added, the servers kept in the order of `order` (the config's). */
export function addDiagnosis(report: DoctorReport, fresh: ServerDiagnosis, order: string[]): DoctorReport {
  const rank = (name: string) => {
    const at = order.indexOf(name);
    return at < 0 ? order.length : at;
  };
  const servers = [...report.servers.filter((s) => s.name !== fresh.name), fresh].sort((a, b) => rank(a.name) - rank(b.name));
  return { ...report, servers, ok: servers.every((s) => s.ok) };
}

/** Whole seconds since `since` (Unix milliseconds) at `now`, for "still examining, 12 s". */
export function elapsedSeconds(since: number, now: number): number {
  return Math.max(0, Math.floor((now - since) / 1000));
}

/** From this many servers on, servers whose worst finding is the same kind are shown as one
 * collapsed group ("51 servers: the command was not found"). */
export const GROUP_AT = 3;

const TITLES: Record<string, string> = {
  "command.not_found": "the command was not found",
  "runtime.missing": "a runtime is not installed",
  "probe.spawn": "the command could not be started",
  "remote.dns": "the host name does not resolve",
  "remote.refused": "the connection is refused",
  "remote.tls": "TLS fails",
  "remote.unauthorized": "the server wants authorization",
  "probe.timeout": "the server does not answer in time",
  "probe.exited": "the server process exits",
  "env.missing_var": "a setting is missing",
  "tools.changed": "their tools changed",
};

/** A group of servers with the same worst problem (one server alone when its problem is its own). */
export interface ProblemGroup {
  key: string;
  code: string;
  title: string;
  servers: ServerDiagnosis[];
}

/** Servers in report order, those sharing the code of their worst finding grouped together
 * (clear servers are never grouped). */
export function groupByProblem(servers: ServerDiagnosis[]): ProblemGroup[] {
  const groups: ProblemGroup[] = [];
  const byCode = new Map<string, ProblemGroup>();
  for (const s of servers) {
    const worst = sortFindings(s.findings)[0];
    if (!worst || worst.severity === "info") {
      groups.push({ key: `server:${s.name}`, code: "", title: s.name, servers: [s] });
      continue;
    }
    let group = byCode.get(worst.code);
    if (!group) {
      group = { key: `code:${worst.code}`, code: worst.code, title: TITLES[worst.code] ?? worst.message, servers: [] };
      byCode.set(worst.code, group);
      groups.push(group);
    }
    group.servers.push(s);
  }
  // A "group" of fewer than GROUP_AT is shown server by server, in its place.
  return groups.flatMap((g) =>
    g.servers.length >= GROUP_AT || g.servers.length === 1 ? [g] : g.servers.map((s) => ({ ...g, key: `server:${s.name}`, servers: [s] })),
  );
}

/** "stdio", "streamable HTTP", "SSE" (never the config's "shttp"). */
export function transportLabel(transport: string): string {
  return ({ stdio: "stdio", shttp: "streamable HTTP", sse: "SSE", auto: "auto-detect" } as Record<string, string>)[transport] ?? transport;
}
