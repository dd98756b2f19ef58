import { describe, expect, it } from "vitest";
import { nameProblem } from "./names";

describe("server names", () => {
  it("accepts what the core accepts", () => {
    expect(nameProblem("github-2", ["github"])).toBeNull();
    expect(nameProblem("fx", ["fx"], "fx")).toBeNull();
  });
  it("refuses what the core refuses", () => {
    expect(nameProblem("", [])).toContain("Enter");
    expect(nameProblem("my server", [])).toContain("space");
    expect(nameProblem("-lead", [])).toContain("leading -");
    expect(nameProblem("x".repeat(65), [])).toContain("64");
    expect(nameProblem("fx", ["fx"])).toBe("This name is taken.");
    expect(nameProblem("Bad-Remote", ["bad-remote"])).toContain("only in case");
    // Renaming a server to another case of its own name is fine.
    expect(nameProblem("FX", ["fx"], "fx")).toBeNull();
  });
});
