// The marketplace's virtual grid: which rows of cards to render for a scroll position, and which
// pages of the list to fetch for them. Thousands of entries cost only the cards in view (and a
// few rows around them). Pure: tested in virtual.test.ts.

/** Card columns that fit `width` (each at least `minCard` wide, `gap` apart); at least one. */
export function columns(width: number, minCard: number, gap: number): number {
  if (!(width > 0)) return 1;
  return Math.max(1, Math.floor((width + gap) / (minCard + gap)));
}

/** The rows to render, `[first, end)`, for a viewport `[top, top + height)` measured from the
 * grid's top edge, with `overscan` extra rows on each side. */
export function visibleRows(top: number, height: number, rowHeight: number, rows: number, overscan: number): [number, number] {
  if (rows <= 0 || rowHeight <= 0) return [0, 0];
  const first = Math.max(0, Math.floor(top / rowHeight) - overscan);
  const end = Math.min(rows, Math.ceil((top + Math.max(height, 0)) / rowHeight) + overscan);
  return [Math.min(first, rows), Math.max(end, Math.min(first, rows))];
}

/** The pages (of `pageSize` items) that hold items `[first, end)`. */
export function pagesFor(first: number, end: number, pageSize: number): number[] {
  if (end <= first) return [];
  const pages: number[] = [];
  for (let p = Math.floor(first / pageSize); p * pageSize < end; p++) pages.push(p);
  return pages;
}
