// Helpers for showing results: sizes, blob: URLs for media the app can show, JSON text made
// readable, and a call outcome in one line for the history.

import type { CallOutcome, ContentItem, Media } from "./ipc";

/** Types the app shows as images (by what the bytes are, when the core could tell). */
const IMAGE_TYPES = ["image/png", "image/jpeg", "image/gif", "image/webp", "image/bmp", "image/svg+xml"];
const AUDIO_TYPES = ["audio/wav", "audio/ogg", "audio/flac", "audio/mpeg", "audio/mp4", "audio/webm"];

/** `1,234 bytes`, `12.3 KiB`, `4.1 MiB`. */
export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes.toLocaleString("en")} bytes`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KiB`;
  return `${(bytes / (1024 * 1024)).toFixed(1)} MiB`;
}

/** The type to show media as: what its bytes are, else what the server declared. */
export function shownType(media: Media): string {
  return (media.detected ?? media.mime_type).split(";")[0].trim().toLowerCase();
}

/** Whether the app shows this media (it has data of a type the web view can show). */
export function showable(media: Media, kind: "image" | "audio"): boolean {
  if (!media.data) return false;
  return (kind === "image" ? IMAGE_TYPES : AUDIO_TYPES).includes(shownType(media));
}

/** A blob: URL of the media's data, or null when it is not shown. The caller revokes it. */
export function mediaUrl(media: Media, kind: "image" | "audio"): string | null {
  if (!showable(media, kind) || !media.data) return null;
  const binary = atob(media.data);
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return URL.createObjectURL(new Blob([bytes], { type: shownType(media) }));
}

/** Text that is a JSON object or list, pretty-printed; null for any other text. */
export function prettyJson(text: string): string | null {
  const trimmed = text.trim();
  if (!(trimmed.startsWith("{") || trimmed.startsWith("["))) return null;
  try {
    return JSON.stringify(JSON.parse(trimmed), null, 2);
  } catch {
    return null;
  }
}

/** A result in a few words: its first text, or what kinds of content it has. */
export function summary(outcome: CallOutcome): string {
  const text = outcome.content.find((c): c is Extract<ContentItem, { type: "text" }> => c.type === "text");
  if (text) return text.text.replace(/\s+/g, " ").trim().slice(0, 100);
  const kinds = [...new Set(outcome.content.map((c) => c.type.replace("_", " ")))];
  return kinds.length ? kinds.join(", ") : outcome.structured ? "structured content" : "no content";
}
