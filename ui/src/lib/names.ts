// Server names as the core accepts them (config::validate_name and the case rule of the config
// store), checked while the user types. Pure: tested in names.test.ts.

/** Why `name` cannot be a new server's name next to `existing` (`except`: the server being
 * renamed), or null when it can. */
export function nameProblem(name: string, existing: string[], except: string | null = null): string | null {
  if (!name) return "Enter a name.";
  if (name.length > 64) return "Use at most 64 characters.";
  const bad = [...name].find((c) => !/[A-Za-z0-9_-]/.test(c));
  if (bad !== undefined) return `“${bad === " " ? "space" : bad}” is not allowed: use letters, digits, _ and -.`;
  if (name.startsWith("-")) return "Start it with a letter or digit: a leading - reads as an option to commands.";
  for (const other of existing) {
    if (other === except) continue;
    if (other === name) return "This name is taken.";
    if (other.toLowerCase() === name.toLowerCase()) return `This name differs only in case from “${other}”, which exists already.`;
  }
  return null;
}
