import { describe, expect, it } from "vitest";
import { allClear, countFindings, fixCommands, fixParts, isCommand, orderReport, sortFindings, summaryText, worstSeverity } from "./doctor";
import type { DoctorReport, FindingView, ServerDiagnosis } from "./ipc";

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
