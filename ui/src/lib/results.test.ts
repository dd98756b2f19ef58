import { describe, expect, it } from "vitest";
import type { CallOutcome, Media } from "./ipc";
import { formatBytes, prettyJson, showable, shownType, summary } from "./results";

const media = (extra: Partial<Media>): Media => ({ mime_type: "image/png", detected: "image/png", bytes: 70, data: "iVBORw0KGgo=", note: null, ...extra });

describe("results", () => {
  it("sizes read well", () => {
    expect(formatBytes(70)).toBe("70 bytes");
    expect(formatBytes(4033)).toBe("3.9 KiB");
    expect(formatBytes(9 * 1024 * 1024)).toBe("9.0 MiB");
  });

  it("media is shown as what its bytes are, only when there is data of a type the app shows", () => {
    expect(showable(media({}), "image")).toBe(true);
    expect(shownType(media({ mime_type: "image/jpeg" }))).toBe("image/png");
    expect(showable(media({ data: null, note: "too large" }), "image")).toBe(false);
    expect(showable(media({ mime_type: "application/x-thing", detected: null }), "image")).toBe(false);
    expect(showable(media({ mime_type: "audio/wav", detected: "audio/wav" }), "audio")).toBe(true);
    expect(showable(media({}), "audio")).toBe(false);
  });

  it("JSON text is made readable; other text is left alone", () => {
    expect(prettyJson('{"a":1}')).toBe('{\n  "a": 1\n}');
    expect(prettyJson("The sum is 5.")).toBeNull();
    expect(prettyJson("{not json")).toBeNull();
  });

  it("summaries for the history", () => {
    const outcome = (content: CallOutcome["content"]): CallOutcome => ({ call_id: "c", tool: "t", is_error: false, content, structured: null, ms: 1, rounds: 1, notes: [] });
    expect(summary(outcome([{ type: "text", text: "The sum\nof 2 and 3 is 5." }]))).toBe("The sum of 2 and 3 is 5.");
    expect(summary(outcome([{ type: "image", media: media({}) }, { type: "resource_link", uri: "x", name: null, title: null, description: null, mime_type: null, size: null }]))).toBe("image, resource link");
    expect(summary(outcome([]))).toBe("no content");
  });
});
