// Which servers the "Use in <app>" checklist starts with. Pure: tested in exportChoice.test.ts.

/** The enabled servers to tick at first: those the app launches already, plus `add` (the
 * server whose page opened the dialog); when the app launches none yet and nothing is added,
 * every server whose last test passed (a failing or unchecked one is left for the user to
 * choose: writing a broken server into another app helps nobody), but only one of servers that
 * launch the same command line or reach the same URL (`target`): the same server twice would
 * give the app every tool twice. */
export function initialChoice(
  enabled: { name: string; health: string; target: string }[],
  current: string[],
  add: string | null,
): string[] {
  const names = new Set(enabled.map((s) => s.name));
  const chosen = current.filter((n) => names.has(n));
  if (add && names.has(add) && !chosen.includes(add)) chosen.push(add);
  if (chosen.length === 0 && !add) {
    const targets = new Set<string>();
    return enabled
      .filter((s) => ["verified", "working", "connectivity-only"].includes(s.health))
      .filter((s) => !targets.has(s.target) && targets.add(s.target))
      .map((s) => s.name);
  }
  return chosen;
}
