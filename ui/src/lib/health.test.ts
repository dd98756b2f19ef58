import { describe, expect, it } from "vitest";
import { ago, failureTitle, healthFromResult, healthFromView, healthLabel, kindLabel } from "./health";

describe("health labels", () => {
  it("maps every state to a tone and a label", () => {
    expect(healthLabel({ state: "unchecked" })).toEqual({ tone: "neutral", label: "Not checked yet" });
    expect(healthLabel({ state: "checking" })).toEqual({ tone: "busy", label: "Checking…" });
    expect(healthLabel({ state: "checking", stage: "handshake" }).label).toBe("Checking… (handshake)");
    expect(healthLabel({ state: "verified", tools: 3, at: 1 })).toEqual({ tone: "ok", label: "Verified · 3 tools" });
    expect(healthLabel({ state: "working", tools: 13, at: 1 })).toEqual({ tone: "ok", label: "Working · 13 tools" });
    expect(healthLabel({ state: "working", tools: 1, at: 1 }).label).toBe("Working · 1 tool");
    expect(healthLabel({ state: "connectivity-only", tools: 3, at: 1 })).toEqual({
      tone: "warn",
      label: "Working · key not checked",
    });
    expect(healthLabel({ state: "working", tools: 2, at: 1, stale: true })).toEqual({ tone: "neutral", label: "Working · 2 tools · out of date" });
    expect(healthLabel({ state: "failed", kind: "credentials", error: "", hint: "", at: 1 })).toEqual({
      tone: "bad",
      label: "Failed: credentials rejected",
    });
  });

  it("knows every error kind of the contract", () => {
    for (const kind of ["config", "spawn", "exited", "timeout", "connection", "http", "unauthorized", "credentials", "protocol", "server"]) {
      expect(kindLabel(kind)).not.toBe(kind);
      expect(failureTitle(kind)).not.toBe("The test failed");
    }
    expect(kindLabel("brand-new")).toBe("brand-new");
    expect(failureTitle("brand-new")).toBe("The test failed");
  });

  it("derives health from a result and from a stored view", () => {
    const base = { tools: [1, 2], error_kind: null, error: null, hint: null };
    expect(healthFromResult({ ...base, ok: true, verification: "verified" }, 5)).toEqual({ state: "verified", tools: 2, at: 5 });
    expect(healthFromResult({ ...base, ok: true, verification: "connectivity-only", uses_credentials: true }, 5).state).toBe("connectivity-only");
    // A working server without credentials is simply working (green), not "not verified".
    expect(healthFromResult({ ...base, ok: true, verification: "connectivity-only", uses_credentials: false }, 5).state).toBe("working");
    expect(healthFromResult({ ...base, ok: false, verification: "connectivity-only", error_kind: "spawn", error: "x", hint: "y" }, 5)).toEqual({
      state: "failed",
      kind: "spawn",
      error: "x",
      hint: "y",
      at: 5,
      signIn: false,
    });
    expect(healthFromView(null)).toEqual({ state: "unchecked" });
    expect(
      healthFromView({ ok: false, verification: "connectivity-only", tools: 0, error_kind: "timeout", error: "slow", hint: "wait", checked_at: 9 }),
    ).toEqual({ state: "failed", kind: "timeout", error: "slow", hint: "wait", at: 9, signIn: false });
    expect(
      healthFromView({ ok: false, verification: "connectivity-only", tools: 0, error_kind: "unauthorized", error: "401", hint: "sign in", checked_at: 9, sign_in: true }),
    ).toMatchObject({ state: "failed", signIn: true });
  });

  it("says how long ago", () => {
    const now = 10_000_000;
    expect(ago(now - 5_000, now)).toBe("just now");
    expect(ago(now - 5 * 60_000, now)).toBe("5 min ago");
    expect(ago(now - 3 * 3_600_000, now)).toBe("3 h ago");
  });
});
