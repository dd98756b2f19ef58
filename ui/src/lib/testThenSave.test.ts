// The test-before-save lifecycle shared by the install form and the custom editor: a test runs
// with live stages, passes only for what the form held when it ran, can be cancelled, and a
// save passes the test's id only after a pass; errors land where the form shows them.
import { describe, expect, it, vi } from "vitest";
import { ApiFailure, type RunningTest, type StageProgress, type TestReport } from "./ipc";
import { TestThenSave } from "./testThenSave.svelte";

const report = (ok: boolean) => ({ ok, verification: ok ? "verified" : "connectivity-only" }) as TestReport;

/** A test whose progress and end the test drives. */
function fakeTest(id = "t-1") {
  let progress: (p: StageProgress) => void = () => {};
  let resolve!: (r: TestReport) => void;
  let reject!: (e: unknown) => void;
  const result = new Promise<TestReport>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  const cancel = vi.fn(async () => reject({ code: "cancelled", message: "cancelled", fields: [] }));
  const running: RunningTest = { id, result, cancel };
  const start = vi.fn((onProgress: (p: StageProgress) => void) => {
    progress = onProgress;
    return running;
  });
  return { start, cancel, progress: (p: StageProgress) => progress(p), resolve, reject, running };
}

function form(initial = "a") {
  let value = initial;
  const flow = new TestThenSave(() => value);
  return { flow, set: (v: string) => (value = v) };
}

describe("test, then save", () => {
  it("runs a test with live stages and passes for what the form held", async () => {
    const { flow, set } = form();
    const t = fakeTest("t-42");
    const seen: string[] = [];
    const done = flow.test(t.start, {
      onstart: () => seen.push(`start running=${!!flow.running}`),
      onend: () => seen.push(`end running=${!!flow.running}`),
    });
    expect(flow.running).toBe(t.running);
    expect(flow.shown).toBe(false);
    t.progress({ event: "started", stage: "connect" });
    expect(flow.stages.map((s) => [s.name, s.status])).toEqual([["connect", "running"]]);
    expect(flow.shown).toBe(true);
    t.progress({ event: "finished", stage: "connect", ok: true, ms: 12 });
    t.resolve(report(true));
    await done;
    expect(seen).toEqual(["start running=true", "end running=false"]);
    expect(flow.running).toBeNull();
    expect(flow.stages).toEqual([{ name: "connect", status: "ok", ms: 12 }]);
    expect(flow.passed).toBe(true);
    expect(flow.stale).toBe(false);
    expect(flow.testId).toBe("t-42");
    // A change makes the pass stale; changing it back makes it count again.
    set("b");
    expect(flow.passed).toBe(false);
    expect(flow.stale).toBe(true);
    set("a");
    expect(flow.passed).toBe(true);
  });

  it("counts the form as it was when the test started", async () => {
    const { flow, set } = form();
    const t = fakeTest();
    const done = flow.test(t.start);
    set("changed while testing");
    t.resolve(report(true));
    await done;
    expect(flow.passed).toBe(false);
    expect(flow.stale).toBe(true);
  });

  it("a failed report does not pass, and is not stale", async () => {
    const { flow } = form();
    const t = fakeTest();
    const done = flow.test(t.start);
    t.resolve(report(false));
    await done;
    expect(flow.passed).toBe(false);
    expect(flow.stale).toBe(false);
    expect(flow.report?.ok).toBe(false);
  });

  it("cancels: the running stage goes, the test says cancelled", async () => {
    const { flow } = form();
    const t = fakeTest();
    const done = flow.test(t.start);
    t.progress({ event: "started", stage: "connect" });
    t.progress({ event: "finished", stage: "connect", ok: true, ms: 5 });
    t.progress({ event: "started", stage: "initialize" });
    flow.cancel();
    await done;
    expect(t.cancel).toHaveBeenCalledOnce();
    expect(flow.cancelled).toBe(true);
    expect(flow.stages.map((s) => s.name)).toEqual(["connect"]);
    expect(flow.error).toBeNull();
    expect(flow.failure).toBeNull();
    expect(flow.passed).toBe(false);
    expect(flow.shown).toBe(true);
    // Nothing runs: cancelling again does nothing.
    flow.cancel();
    expect(t.cancel).toHaveBeenCalledOnce();
  });

  it("a field error goes to `failure`, anything else to `error`", async () => {
    const { flow } = form();
    let t = fakeTest();
    let done = flow.test(t.start);
    t.reject({ code: "invalid", message: "Bad name", fields: [{ field: "name", message: "Bad name" }] });
    await done;
    expect(flow.failure).toBeInstanceOf(ApiFailure);
    expect(flow.failure?.field("name")).toBe("Bad name.");
    expect(flow.error).toBeNull();
    expect(flow.shown).toBe(false);

    t = fakeTest();
    done = flow.test(t.start);
    // A new test forgets the last one's failure.
    expect(flow.failure).toBeNull();
    t.reject(new Error("the shell went away"));
    await done;
    // As a sentence, like every message the UI shows.
    expect(flow.error).toBe("The shell went away.");
    expect(flow.failure).toBeNull();
    expect(flow.shown).toBe(true);

    flow.reset();
    expect(flow.error).toBeNull();
    expect(flow.shown).toBe(false);
  });

  it("saves with the test's id only after a pass, and keeps a save's failure", async () => {
    const { flow, set } = form();
    const call = vi.fn(async (_id: string | null) => {});
    await flow.save(call);
    expect(call).toHaveBeenLastCalledWith(null);

    const t = fakeTest("t-7");
    const done = flow.test(t.start);
    t.resolve(report(true));
    await done;
    await flow.save(call);
    expect(call).toHaveBeenLastCalledWith("t-7");
    set("changed");
    await flow.save(call);
    expect(call).toHaveBeenLastCalledWith(null);

    await flow.save(async () => {
      throw { code: "invalid", message: "taken", fields: [{ field: "name", message: "taken" }] };
    });
    expect(flow.failure?.field("name")).toBe("Taken.");
    expect(flow.saving).toBe(false);
  });

  it("saves once at a time", async () => {
    const { flow } = form();
    let finish!: () => void;
    const slow = vi.fn(() => new Promise<void>((r) => (finish = r)));
    const first = flow.save(slow);
    expect(flow.saving).toBe(true);
    await flow.save(slow);
    expect(slow).toHaveBeenCalledOnce();
    finish();
    await first;
    expect(flow.saving).toBe(false);
  });

  it("asks before closing over typed secrets, unless a save is under way", async () => {
    const { flow } = form();
    const discard = vi.fn();
    flow.close(false, discard);
    expect(discard).toHaveBeenCalledOnce();
    flow.close(true, discard);
    expect(flow.confirmingClose).toBe(true);
    expect(discard).toHaveBeenCalledOnce();
    flow.confirmingClose = false;
    let finish!: () => void;
    const saving = flow.save(() => new Promise<void>((r) => (finish = r)));
    flow.close(true, discard);
    expect(discard).toHaveBeenCalledTimes(2);
    expect(flow.confirmingClose).toBe(false);
    finish();
    await saving;
  });
});
