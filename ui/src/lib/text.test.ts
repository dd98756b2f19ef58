import { describe, expect, it } from "vitest";
import { sentence, sentenceParts, textParts } from "./text";

describe("messages as sentences", () => {
  it("capitalises and finishes a core message", () => {
    expect(sentence("a server named `fx` already exists; choose another name")).toBe(
      "A server named “fx” already exists; choose another name.",
    );
    expect(sentence("this name is taken")).toBe("This name is taken.");
    expect(sentence("Already fine.")).toBe("Already fine.");
  });
  it("keeps a leading command as it is", () => {
    const parts = sentenceParts("`uvx` was not found on PATH");
    expect(parts[0]).toEqual({ text: "uvx", code: true });
    expect(parts.map((p) => p.text).join("")).toBe("uvx was not found on PATH.");
  });
  it("ends after a trailing code span", () => {
    expect(sentence("run `plugboard list`")).toBe("Run “plugboard list”.");
  });
  it("keeps an unpaired backquote as text", () => {
    expect(textParts("a ` b")).toEqual([{ text: "a ` b", code: false }]);
  });
  it("leaves an empty message empty", () => {
    expect(sentence("")).toBe("");
  });
});
