import { describe, expect, it } from "vitest";
import { isFinal, shouldOpenBrowser, stateLabel, stepStatus } from "./oauth";

describe("OAuth sign-in states", () => {
  it("knows the end states", () => {
    expect(["succeeded", "failed", "expired", "cancelled"].every((s) => isFinal(s as never))).toBe(true);
    expect(isFinal("awaiting_user")).toBe(false);
    expect(stateLabel("awaiting_user")).toMatch(/browser/);
  });

  it("opens the browser once, when the job first awaits the user", () => {
    expect(shouldOpenBrowser(null, "discovering", false)).toBe(false);
    expect(shouldOpenBrowser("discovering", "awaiting_user", false)).toBe(true);
    expect(shouldOpenBrowser(null, "awaiting_user", false)).toBe(true);
    expect(shouldOpenBrowser("awaiting_user", "awaiting_user", true)).toBe(false);
    expect(shouldOpenBrowser("discovering", "awaiting_user", true)).toBe(false);
    expect(shouldOpenBrowser("awaiting_user", "failed", false)).toBe(false);
  });

  it("marks progress steps", () => {
    expect(stepStatus("discovering", "awaiting_user")).toBe("done");
    expect(stepStatus("awaiting_user", "awaiting_user")).toBe("current");
    expect(stepStatus("exchanging", "awaiting_user")).toBe("todo");
    expect(stepStatus("exchanging", "succeeded")).toBe("done");
    expect(stepStatus("exchanging", "failed")).toBe("todo");
  });
});
