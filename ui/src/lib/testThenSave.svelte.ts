// The test-before-save lifecycle of a form that adds or changes a server (the install form and
// the custom editor): start a test of what the form holds, hear its stages, cancel it, know
// whether it passed for exactly what the form holds now (any change makes it stale), then save
// — passing the test's id along only when it passed — with the core's field errors kept for the
// form to show. Closing with typed secrets asks first.
import { toFailure, type ApiFailure, type RunningTest, type StageProgress, type TestReport } from "./ipc";
import { applyEvent, type StageState } from "./stages";

/** Hooks around a test, for the component's focus handling. */
export interface TestHooks {
  /** Called once the test runs (`running` is set), before its result. */
  onstart?: () => void;
  /** Called when it ended (passed, failed, cancelled), right after `running` is cleared. */
  onend?: () => void;
}

export class TestThenSave {
  /** What the form holds now: a test passed for another fingerprint does not count. */
  readonly #fingerprint: () => string;

  /** The test in progress. */
  running = $state<RunningTest | null>(null);
  /** Its stages so far (live), or the last test's. */
  stages = $state<StageState[]>([]);
  /** The last test's report. */
  report = $state<TestReport | null>(null);
  /** A test that could not run to a report (not a field error, not a cancel). */
  error = $state<string | null>(null);
  /** The code of the core's error behind `error`. */
  errorCode = $state<string | null>(null);
  /** The fingerprint the last report was made for. */
  testedWith = $state<string | null>(null);
  /** The last test's id (the core keeps its result to save with). */
  testId = $state<string | null>(null);
  /** The last test was cancelled. */
  cancelled = $state(false);
  /** The core's (or the form's own) error, with field errors, from a test or a save. */
  failure = $state<ApiFailure | null>(null);
  saving = $state(false);
  /** Closing would throw away a typed secret: the question is shown. */
  confirmingClose = $state(false);

  constructor(fingerprint: () => string) {
    this.#fingerprint = fingerprint;
  }

  /** The last test passed, for what the form holds now. */
  readonly passed = $derived.by(() => !!this.report?.ok && this.testedWith === this.#fingerprint());
  /** There is a report, but the form changed since. */
  readonly stale = $derived.by(() => !!this.report && this.testedWith !== this.#fingerprint());
  /** Something to show in the test panel. */
  readonly shown = $derived(!!(this.stages.length || this.report || this.error || this.cancelled));

  /** Forget the last test (the form changed under it, e.g. another option was chosen). */
  reset() {
    this.stages = [];
    this.report = null;
    this.error = null;
    this.errorCode = null;
    this.testedWith = null;
    this.testId = null;
    this.cancelled = false;
  }

  /** Run a test started by `start` (which is given the progress handler). A field error
   * (`invalid`) becomes `failure`, a cancel `cancelled`, anything else `error`. */
  async test(start: (onProgress: (p: StageProgress) => void) => RunningTest, hooks: TestHooks = {}): Promise<void> {
    this.reset();
    this.failure = null;
    const snapshot = this.#fingerprint();
    const test = start((p) => (this.stages = applyEvent(this.stages, p)));
    this.running = test;
    hooks.onstart?.();
    try {
      this.report = await test.result;
      this.testedWith = snapshot;
      this.testId = test.id;
    } catch (e) {
      const f = toFailure(e);
      if (f.code === "invalid") this.failure = f;
      else if (f.code === "cancelled") {
        this.stages = this.stages.filter((s) => s.status !== "running");
        this.cancelled = true;
      } else {
        this.error = f.message;
        this.errorCode = f.code;
      }
    } finally {
      this.running = null;
      hooks.onend?.();
    }
  }

  /** Cancel the running test, if any. */
  cancel() {
    this.running?.cancel();
  }

  /** Save with `call`, given the passing test's id (else `null`); a failure is kept for the
   * form. Does nothing while a save is under way. */
  async save(call: (testId: string | null) => Promise<void>): Promise<void> {
    if (this.saving) return;
    this.saving = true;
    this.failure = null;
    try {
      await call(this.passed ? this.testId : null);
    } catch (e) {
      this.failure = toFailure(e);
    } finally {
      this.saving = false;
    }
  }

  /** Close the form: when a typed secret would be lost (and no save is under way), ask first
   * (`confirmingClose`); otherwise `discard` at once. */
  close(typedSecrets: boolean, discard: () => void) {
    if (typedSecrets && !this.saving) this.confirmingClose = true;
    else discard();
  }
}
