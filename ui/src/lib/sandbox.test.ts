import { describe, expect, it } from "vitest";
import { sandboxLabel } from "./sandbox";

describe("sandboxLabel", () => {
  it("never shows a server as sandboxed unless the kernel enforces it", () => {
    expect(sandboxLabel("enforced")?.text).toBe("sandboxed");
    expect(sandboxLabel("not_enforced")?.text).not.toBe("sandboxed");
    expect(sandboxLabel("not_enforced")?.tone).toBe("warn");
    expect(sandboxLabel("off")?.text).toBe("not sandboxed");
    expect(sandboxLabel("not_applicable")).toBeNull();
  });
});
