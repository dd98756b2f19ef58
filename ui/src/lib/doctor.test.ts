import { describe, expect, it } from "vitest";
import {
  addDiagnosis,
  elapsedSeconds,
  groupByProblem,
  transportLabel,
  actionContext,
  allClear,
  commandLabel,
  countFindings,
  findingAction,
  fixCommands,
  fixParts,
  isCommand,
  orderReport,
  replaceDiagnosis,
  secretEnvOf,
  sortFindings,
  summaryText,
  worstSeverity,
  type ActionContext,
  type DoctorReport,
} from "./doctor";
import type { FindingView, ServerDiagnosis, ServerView } from "./ipc";


const f = (code: string, severity: FindingView["severity"], fix = ""): FindingView => ({ code, severity, message: code, fix, stage: null });
const server = (name: string, findings: FindingView[]): ServerDiagnosis => ({
  name,
  transport: "stdio",
  ok: !findings.some((x) => x.severity === "error"),
  findings,
  tested: true,
  error_kind: null,
  failed_stage: null,
  tools: 1,
});
const report = (...servers: ServerDiagnosis[]): DoctorReport => ({ ok: servers.every((s) => s.ok), servers, checked_at: 0 });

describe("the doctor's findings", () => {
  it("sorts findings by severity, keeping the core's order within one", () => {
    const sorted = sortFindings([f("a", "info"), f("b", "warning"), f("c", "error"), f("d", "warning"), f("e", "error")]);
    expect(sorted.map((x) => x.code)).toEqual(["c", "e", "b", "d", "a"]);
    expect(worstSeverity([f("a", "info"), f("b", "warning")])).toBe("warning");
    expect(worstSeverity([])).toBeNull();
  });

  it("puts servers with problems first and sorts each one's findings", () => {
    const r = report(
      server("fine", [f("probe.ok", "info")]),
      server("warned", [f("probe.ok", "info"), f("command.login_shell_only", "warning")]),
      server("broken", [f("probe.ok", "info"), f("command.not_found", "error")]),
      server("broken-too", [f("runtime.missing", "error")]),
    );
    const ordered = orderReport(r);
    expect(ordered.map((s) => s.name)).toEqual(["broken", "broken-too", "warned", "fine"]);
    expect(ordered[0].findings.map((x) => x.code)).toEqual(["command.not_found", "probe.ok"]);
    expect(r.servers[1].findings[0].code).toBe("probe.ok"); // the input is not changed
  });

  it("counts, summarises and says all clear only without errors and warnings", () => {
    const broken = report(server("a", [f("x", "error"), f("y", "warning"), f("z", "warning")]), server("b", [f("ok", "info")]));
    expect(countFindings(broken)).toEqual({ error: 1, warning: 2, info: 1 });
    expect(summaryText(broken)).toBe("1 error, 2 warnings");
    expect(allClear(broken)).toBe(false);
    const fine = report(server("a", [f("probe.ok", "info")]), server("b", []));
    expect(allClear(fine)).toBe(true);
    expect(summaryText(fine)).toBe("all clear");
    expect(allClear(report())).toBe(false);
    expect(summaryText(report())).toBe("no servers installed");
  });
});

describe("fix text", () => {
  it("finds the shell commands in backquotes, not lone words, flags, paths or JSON", () => {
    expect(isCommand("plugboard edit keyless --secret-env MY_API_KEY")).toBe(true);
    expect(isCommand("chmod +x /opt/srv")).toBe(true);
    expect(isCommand("npx")).toBe(false);
    expect(isCommand("--env KEY=VALUE")).toBe(false);
    expect(isCommand("/usr/local/bin/srv --stdio")).toBe(false);
    expect(isCommand('"type": "sse"')).toBe(false);
    const fix =
      "set it: `plugboard edit k --secret-env API_KEY` (read from stdin), or `--env API_KEY=VALUE`; then `plugboard doctor` and `plugboard doctor`";
    expect(fixCommands(fix)).toEqual(["plugboard edit k --secret-env API_KEY", "plugboard doctor"]);
  });

  it("splits a fix into text and code, keeping an unpaired backquote as text", () => {
    expect(fixParts("`srv` does not exist. Install it.")).toEqual([
      { text: "srv", code: true, command: false },
      { text: " does not exist. Install it.", code: false, command: false },
    ]);
    expect(fixParts("make it executable (`chmod +x /p`)")).toEqual([
      { text: "make it executable (", code: false, command: false },
      { text: "chmod +x /p", code: true, command: true },
      { text: ")", code: false, command: false },
    ]);
    expect(fixParts("odd ` quote")).toEqual([{ text: "odd ` quote", code: false, command: false }]);
    expect(fixParts("")).toEqual([]);
  });
});

describe("the app's action for a finding", () => {
  const stdio: ActionContext = { remote: false, auth: "none", secrets: [], editable: true };
  const withSecret: ActionContext = { remote: false, auth: "none", secrets: ["MY_API_KEY"], editable: true };
  const oauth: ActionContext = { remote: true, auth: "oauth2", secrets: [], editable: true };
  const bearer: ActionContext = { remote: true, auth: "bearer", secrets: ["token"], editable: true };
  const open: ActionContext = { remote: true, auth: "none", secrets: [], editable: true };
  const broken: ActionContext = { remote: false, auth: "none", secrets: [], editable: false };
  const err = (code: string, fix: string) => f(code, "error", fix);
  const kind = (finding: FindingView, ctx: ActionContext) => findingAction(finding, "x", ctx)?.kind ?? null;

  it("signs in for OAuth: not signed in, tokens unusable, a scope missing", () => {
    const signedOut = err("remote.unauthorized", "the server requires OAuth sign-in: run `plugboard auth x`");
    expect(findingAction(signedOut, "x", oauth)).toEqual({ kind: "sign_in", label: "Sign in", title: "Sign in to x with OAuth" });
    expect(kind(err("remote.unauthorized", "sign in again with `plugboard auth x`"), oauth)).toBe("sign_in");
    expect(kind(err("remote.forbidden", "the token lacks the scope `repo`; sign in again with that scope: run `plugboard auth x`"), oauth)).toBe("sign_in");
    expect(kind(err("probe.unauthorized", "sign in again with `plugboard auth x`"), oauth)).toBe("sign_in");
    expect(kind(err("probe.config", "the server requires OAuth sign-in: run `plugboard auth x`"), oauth)).toBe("sign_in");
    // A server without auth that advertises OAuth: the sign-in sets it up.
    expect(kind(err("remote.unauthorized", "it advertises OAuth: run `plugboard auth x`"), open)).toBe("sign_in");
    // Not for a stdio server.
    expect(kind(err("remote.unauthorized", "run `plugboard auth x`"), stdio)).toBeNull();
  });

  it("updates credentials that were rejected, or adds them in the editor", () => {
    const rejected = err("remote.unauthorized", "the server rejected the credentials (401): update it with `plugboard edit x --credential`");
    expect(kind(rejected, bearer)).toBe("credentials");
    expect(findingAction(rejected, "x", bearer)?.label).toBe("Update credentials");
    // Rejected, and OAuth advertised: the configured token is what to replace.
    expect(kind(err("remote.unauthorized", "run `plugboard auth x`, or update the token with `plugboard edit x --credential`"), bearer)).toBe("credentials");
    expect(kind(err("remote.forbidden", "access denied (403): update the credentials with `plugboard edit x --credential`"), bearer)).toBe("credentials");
    expect(kind(err("probe.credentials", "Update it with `plugboard edit x --credential`"), bearer)).toBe("credentials");
    // No credential configured yet: the editor adds one.
    expect(kind(err("probe.credentials", "update them with `plugboard edit x --credential`"), open)).toBe("edit");
    expect(kind(err("remote.unauthorized", "add credentials with `plugboard edit x --credential`"), { ...open, auth: "none" })).toBe("edit");
  });

  it("sets a missing variable: the credentials dialog for a stored secret, the editor otherwise", () => {
    const missing = err("env.missing_var", "set it: `plugboard edit x --secret-env MY_API_KEY` (…), or `--env MY_API_KEY=VALUE` if it is not secret");
    expect(kind(missing, stdio)).toBe("edit");
    expect(kind(missing, withSecret)).toBe("credentials");
    expect(kind(err("env.missing_var", "check its value and replace it: `plugboard edit x --secret-env MY_API_KEY`"), withSecret)).toBe("credentials");
    expect(kind(err("probe.config", "the secret `MY_API_KEY` of server `x` is not set; run `plugboard edit x --secret-env MY_API_KEY`"), withSecret)).toBe("credentials");
    expect(kind(err("probe.config", "fix the server with `plugboard edit x` or reinstall it"), stdio)).toBe("edit");
    // A keyring that does not answer is not fixed in the app.
    expect(kind(err("probe.config", "unlock the keyring (`secret-tool`)"), stdio)).toBeNull();
    expect(secretEnvOf("run `plugboard edit x --secret-env API_KEY`")).toBe("API_KEY");
    expect(secretEnvOf("nothing here")).toBeNull();
  });

  it("reviews changed or unapproved tools", () => {
    const fix = "review with `plugboard diff x`, then `plugboard approve x`";
    expect(findingAction(f("tools.changed", "warning", fix), "x", stdio)?.label).toBe("Review tools");
    expect(kind(f("tools.unapproved", "warning", fix), stdio)).toBe("review_tools");
    // A flag alone is read in the review of the unapproved tools.
    expect(kind(f("tools.flag.instructions", "warning", "read the tool's description before approving it"), stdio)).toBeNull();
  });

  it("edits the server for a wrong command, URL or transport", () => {
    for (const code of [
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
    ]) {
      expect(kind(err(code, "fix it"), stdio), code).toBe("edit");
      expect(kind(err(code, "fix it"), broken), code).toBeNull();
    }
    const sse = err("remote.sse_only", "re-add it with `plugboard add x --url http://h/sse --transport sse`");
    expect(findingAction(sse, "x", open)).toEqual({ kind: "edit", label: "Edit server", title: "Change the settings of x" });
  });

  it("checks again after a runtime is installed or started", () => {
    for (const code of ["runtime.missing", "runtime.broken", "runtime.version", "runtime.docker_daemon"]) {
      expect(kind(err(code, "install Node.js; then run `plugboard doctor` again"), stdio), code).toBe("recheck");
    }
    expect(findingAction(err("runtime.missing", "install it"), "x", stdio)?.label).toBe("Check again");
  });

  it("offers nothing for information, fixes outside the app and unknown codes", () => {
    expect(kind(f("probe.ok", "info"), stdio)).toBeNull();
    expect(kind(f("runtime.version", "info"), stdio)).toBeNull();
    expect(kind(f("command.path_differs", "info"), stdio)).toBeNull();
    expect(kind(err("config.invalid", "fix or remove this entry in the config file"), broken)).toBeNull();
    expect(kind(err("probe.timeout", "the server took too long"), stdio)).toBeNull();
    expect(kind(err("some.future_code", "run `plugboard edit x`"), stdio)).toBeNull();
    expect(kind(err("command.not_found", ""), stdio)).toBeNull();
  });

  it("reads the context from a server's view", () => {
    const view = {
      transport: "shttp",
      env: [
        { key: "PLAIN", kind: "plain", value: "1", set: null },
        { key: "KEY", kind: "secret", value: null, set: true },
      ],
      headers: [{ key: "X-Token", kind: "secret", value: null, set: false }],
      auth: { kind: "bearer", label: "Bearer token", header: null, username: null, credential: { key: "token", kind: "secret", value: null, set: true }, client_id: null, scopes: [] },
      error: null,
    } as unknown as ServerView;
    expect(actionContext(view)).toEqual({ remote: true, auth: "bearer", secrets: ["KEY", "X-Token", "token"], editable: true });
    const stdioView = { ...view, transport: "stdio", env: [], headers: [], auth: { ...view.auth, kind: "none", credential: null }, error: "bad entry" } as ServerView;
    expect(actionContext(stdioView)).toEqual({ remote: false, auth: "none", secrets: [], editable: false });
  });

  it("labels commands and replaces one server's diagnosis in a report", () => {
    expect(commandLabel("plugboard auth x")).toBe("CLI");
    expect(commandLabel("chmod +x /p")).toBe("Shell");
    const r = report(server("a", [f("x", "error")]), server("b", [f("ok", "info")]));
    const fixed = replaceDiagnosis(r, "a", server("a2", [f("probe.ok", "info")]));
    expect(fixed.servers.map((s) => s.name)).toEqual(["a2", "b"]);
    expect(fixed.ok).toBe(true);
    expect(r.ok).toBe(false);
    const dropped = replaceDiagnosis(r, "a", null);
    expect(dropped.servers.map((s) => s.name)).toEqual(["b"]);
    expect(dropped.ok).toBe(true);
  });
});

describe("grouping servers by their problem", () => {
  const server = (name: string, code: string, severity: "error" | "info" = "error") => ({
    name,
    transport: "stdio" as const,
    ok: severity !== "error",
    findings: [{ code, severity, message: `${name}: ${code}`, fix: "", stage: null }],
    tested: true,
    error_kind: null,
    failed_stage: null,
    tools: null,
  });
  it("collapses three or more servers with the same worst finding", () => {
    const groups = groupByProblem([
      server("a", "command.not_found"),
      server("b", "command.not_found"),
      server("c", "remote.dns"),
      server("d", "command.not_found"),
      server("ok", "probe.ok", "info"),
    ]);
    expect(groups.map((g) => [g.title, g.servers.map((s) => s.name)])).toEqual([
      ["the command was not found", ["a", "b", "d"]],
      ["the host name does not resolve", ["c"]],
      ["ok", ["ok"]],
    ]);
  });
  it("keeps two alike servers apart", () => {
    expect(groupByProblem([server("a", "x.y"), server("b", "x.y")]).map((g) => g.servers.length)).toEqual([1, 1]);
  });
  it("names transports as the rest of the app does", () => {
    expect(transportLabel("shttp")).toBe("streamable HTTP");
  });
});

describe("a report that fills in as servers are examined", () => {
  const diag = (name: string, ok = true): ServerDiagnosis => ({
    name,
    transport: "stdio",
    ok,
    findings: [],
    tested: true,
    error_kind: null,
    failed_stage: null,
    tools: 1,
    era: null,
    protocol_version: null,
  });
  it("keeps the config's order whatever order the answers come in, and says not ok once one fails", () => {
    const empty: DoctorReport = { ok: true, servers: [], environment: [], checked_at: null };
    const order = ["a", "b", "c"];
    let report = addDiagnosis(empty, diag("c"), order);
    report = addDiagnosis(report, diag("a", false), order);
    report = addDiagnosis(report, diag("b"), order);
    expect(report.servers.map((s) => s.name)).toEqual(["a", "b", "c"]);
    expect(report.ok).toBe(false);
    report = addDiagnosis(report, diag("a"), order);
    expect(report.servers.map((s) => s.name)).toEqual(["a", "b", "c"]);
    expect(report.ok).toBe(true);
  });
  it("counts whole seconds", () => {
    expect(elapsedSeconds(1_000, 13_999)).toBe(12);
    expect(elapsedSeconds(5_000, 1_000)).toBe(0);
  });
});
