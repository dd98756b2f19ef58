import { describe, expect, it } from "vitest";
import { helpText, isSafeHref, parseHelp } from "./markdown";

describe("help text rendering", () => {
  it("keeps https links as links", () => {
    expect(parseHelp("Create one at [Slack API](https://api.slack.com/apps), then paste it.")).toEqual([
      { kind: "text", text: "Create one at " },
      { kind: "link", text: "Slack API", href: "https://api.slack.com/apps" },
      { kind: "text", text: ", then paste it." },
    ]);
  });

  it("turns every other scheme into plain text", () => {
    for (const href of [
      "javascript:alert(1)",
      "http://example.com",
      "file:///etc/passwd",
      "data:text/html,<b>x</b>",
      "//evil.example",
      "https://user:pw@example.com",
      "/relative",
    ]) {
      expect(parseHelp(`see [here](${href}) now`)).toEqual([{ kind: "text", text: "see here now" }]);
    }
  });

  it("renders code and bold, and never produces markup", () => {
    const segs = parseHelp("Use `npx` with **care** <script>alert(1)</script>");
    expect(segs).toEqual([
      { kind: "text", text: "Use " },
      { kind: "code", text: "npx" },
      { kind: "text", text: " with " },
      { kind: "strong", text: "care" },
      { kind: "text", text: " <script>alert(1)</script>" },
    ]);
  });

  it("flattens to plain text", () => {
    expect(helpText("a [b](https://x.y) `c`")).toBe("a b c");
    expect(parseHelp("")).toEqual([]);
  });

  it("only accepts absolute https URLs with a host", () => {
    expect(isSafeHref("https://docs.example.com/a?b=c#d")).toBe(true);
    expect(isSafeHref("HTTPS://EXAMPLE.COM")).toBe(true);
    expect(isSafeHref("https:")).toBe(false);
    expect(isSafeHref("not a url")).toBe(false);
  });
});
