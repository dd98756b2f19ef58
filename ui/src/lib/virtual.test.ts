import { describe, expect, it } from "vitest";
import { columns, pagesFor, visibleRows } from "./virtual";

describe("virtual grid", () => {
  it("fits columns to the width", () => {
    expect(columns(0, 280, 14)).toBe(1);
    expect(columns(279, 280, 14)).toBe(1);
    expect(columns(574, 280, 14)).toBe(2);
    expect(columns(1116, 280, 14)).toBe(3);
  });

  it("renders the rows in view plus the overscan, within the list", () => {
    expect(visibleRows(0, 600, 200, 100, 2)).toEqual([0, 5]);
    expect(visibleRows(1000, 600, 200, 100, 2)).toEqual([3, 10]);
    expect(visibleRows(-300, 600, 200, 100, 2)).toEqual([0, 4]);
    expect(visibleRows(19_900, 600, 200, 100, 2)).toEqual([97, 100]);
    expect(visibleRows(0, 600, 200, 0, 2)).toEqual([0, 0]);
    // 50,000 entries in 3 columns: a few rows, wherever the scroll is.
    const rows = Math.ceil(50_000 / 3);
    const [a, b] = visibleRows(1_500_000, 800, 198, rows, 3);
    expect(b - a).toBeLessThanOrEqual(11);
  });

  it("names the pages that hold a range", () => {
    expect(pagesFor(0, 10, 48)).toEqual([0]);
    expect(pagesFor(40, 60, 48)).toEqual([0, 1]);
    expect(pagesFor(96, 97, 48)).toEqual([2]);
    expect(pagesFor(5, 5, 48)).toEqual([]);
  });
});
