import { describe, expect, it } from "vitest";
import { Marks, medianAndMax, stepPage, stepScroll } from "./startup";

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
    expect(stepScroll({ page: "scroll", after_ms: 10 })).toBe(true);
    expect(stepScroll({ page: "installed", after_ms: 10 })).toBe(false);
  });

  it("sums up scroll timings", () => {
    expect(medianAndMax([])).toEqual([0, 0]);
    expect(medianAndMax([5, 1, 3])).toEqual([3, 5]);
    expect(medianAndMax([4, 1, 3, 2])).toEqual([2.5, 4]);
  });
});
