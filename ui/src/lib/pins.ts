// Tool pinning as the UI shows it: the card badge for a pin state, readable lines for schema
// path changes, labels for flags, and a one-line summary of a diff. Pure: tested in pins.test.ts.

import type { DiffLineView, PathChangeView, PinStateView, ToolDiff, ToolFlagView } from "./ipc";

/** Whether a pin state calls for a review before the tools are trusted. */
export function needsReview(state: PinStateView | null | undefined): boolean {
  return state === "tools_changed" || state === "unapproved";
}

/** The card badge of a pin state, or null when there is nothing to say. */
export function pinBadge(state: PinStateView | null | undefined): { label: string; title: string } | null {
  switch (state) {
    case "tools_changed":
      return {
        label: "Tools changed",
        title:
          "Its tools changed since you approved them. Until you review them, apps that start it through Plugboard do not get its changed tools (or, when they would, do not get the server at all).",
      };
    case "unapproved":
      return { label: "Tools need review", title: "Some of its tools are flagged: review them before using it." };
    default:
      return null;
  }
}

/** The marker of a diff line (" ", "-", "+"). */
export function lineMarker(line: DiffLineView): string {
  return line.op === "added" ? "+" : line.op === "removed" ? "-" : " ";
}

/** `$.properties.q.type: "string" → "number"` and the like. */
export function pathChangeText(c: PathChangeView): string {
  switch (c.change) {
    case "added":
      return `+ ${c.path}: ${c.after ?? ""}`;
    case "removed":
      return `- ${c.path}: ${c.before ?? ""}`;
    default:
      return `~ ${c.path}: ${c.before ?? ""} → ${c.after ?? ""}`;
  }
}

const FLAG_LABEL: Record<string, string> = {
  hidden_instruction: "Instructions aimed at the model",
  sensitive_path: "Mentions a sensitive file",
  invisible_unicode: "Invisible Unicode characters",
  control_characters: "Terminal control characters",
  long_description: "Very long description",
};

/** A headline for a flag code. Unknown codes are shown as they are. */
export function flagLabel(flag: ToolFlagView): string {
  return FLAG_LABEL[flag.code] ?? flag.code;
}

/** "2 added, 1 removed, 1 changed" (or "no changes"). */
export function diffSummary(diff: ToolDiff): string {
  const parts: string[] = [];
  if (diff.added.length) parts.push(`${diff.added.length} added`);
  if (diff.removed.length) parts.push(`${diff.removed.length} removed`);
  if (diff.changed.length) parts.push(`${diff.changed.length} changed`);
  if (diff.instructions_diff.length) parts.push("instructions changed");
  return parts.length ? parts.join(", ") : "no changes";
}
