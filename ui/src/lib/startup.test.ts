import { describe, expect, it } from "vitest";
import { Marks, stepPage } from "./startup";

describe("startup marks", () => {
  it("sets each mark once", () => {
    const m = new Marks();
    expect(m.first("marketplace-ready")).toBe(true);
    expect(m.first("marketplace-ready")).toBe(false);
    expect(m.first("installed-ready")).toBe(true);
  });

  it("follows only known tour steps", () => {
    expect(stepPage({ page: "installed", after_ms: 10 })).toBe("installed");
    expect(stepPage({ page: "somewhere", after_ms: 10 })).toBeNull();
    expect(stepPage(null)).toBeNull();
  });
});
