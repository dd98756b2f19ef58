import { describe, expect, it } from "vitest";
import { helpText, isMarkdown, isSafeHref, parseHelp, parseMarkdown } from "./markdown";

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

describe("markdown documents", () => {
  it("knows markdown by type, or by name when the type is missing", () => {
    expect(isMarkdown("text/markdown", "file:///a.txt")).toBe(true);
    expect(isMarkdown("text/markdown; charset=utf-8", "x")).toBe(true);
    expect(isMarkdown(null, "file:///docs/README.md")).toBe(true);
    expect(isMarkdown(undefined, "https://h/notes.markdown?x=1")).toBe(true);
    expect(isMarkdown("text/plain", "file:///README.md")).toBe(false);
    expect(isMarkdown(null, "file:///a.json")).toBe(false);
  });

  it("splits headings, paragraphs, lists, code, quotes and rules", () => {
    const doc = [
      "# Title #",
      "",
      "Some **bold** and",
      "a [link](https://example.com).",
      "",
      "- one",
      "* two `x`",
      "",
      "1. first",
      "2) second",
      "",
      "```rust",
      "fn main() {}",
      "# not a heading",
      "```",
      "> quoted",
      "> on",
      "---",
      "end",
    ].join("\n");
    const blocks = parseMarkdown(doc);
    expect(blocks.map((b) => b.kind)).toEqual([
      "heading",
      "paragraph",
      "list",
      "list",
      "code",
      "quote",
      "rule",
      "paragraph",
    ]);
    expect(blocks[0]).toEqual({ kind: "heading", level: 1, segments: [{ kind: "text", text: "Title" }] });
    expect(blocks[1]).toEqual({
      kind: "paragraph",
      segments: [
        { kind: "text", text: "Some " },
        { kind: "strong", text: "bold" },
        { kind: "text", text: " and a " },
        { kind: "link", text: "link", href: "https://example.com" },
        { kind: "text", text: "." },
      ],
    });
    expect(blocks[2]).toMatchObject({ ordered: false, items: [[{ text: "one" }], [{ text: "two " }, { kind: "code", text: "x" }]] });
    expect(blocks[3]).toMatchObject({ ordered: true, items: [[{ text: "first" }], [{ text: "second" }]] });
    expect(blocks[4]).toEqual({ kind: "code", language: "rust", text: "fn main() {}\n# not a heading" });
    expect(blocks[5]).toEqual({ kind: "quote", segments: [{ kind: "text", text: "quoted on" }] });
  });

  it("keeps raw HTML and unsafe links as text", () => {
    const blocks = parseMarkdown("<script>alert(1)</script>\n\n[x](javascript:alert(1))");
    expect(blocks).toEqual([
      { kind: "paragraph", segments: [{ kind: "text", text: "<script>alert(1)</script>" }] },
      { kind: "paragraph", segments: [{ kind: "text", text: "x" }] },
    ]);
  });

  it("ends an unclosed fence at the end of the document", () => {
    expect(parseMarkdown("```\ncode")).toEqual([{ kind: "code", language: "", text: "code" }]);
  });
});

describe("bold text with links", () => {
  it("keeps the links' words, not their syntax", () => {
    expect(parseHelp("**See [Setup](setup.md) | [Use](https://x.example)**")).toEqual([{ kind: "strong", text: "See Setup | Use" }]);
  });
});
