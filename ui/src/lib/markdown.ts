// A tiny, safe renderer for the catalog's help texts: `[text](url)` links (https only), `code`
// and **bold**. It returns segments that components render as text nodes: no HTML is ever
// injected, so catalog text cannot carry markup or script.

export type Segment =
  | { kind: "text"; text: string }
  | { kind: "link"; text: string; href: string }
  | { kind: "code"; text: string }
  | { kind: "strong"; text: string };

/** Whether `href` may become a clickable link: absolute https with a host, no credentials. */
export function isSafeHref(href: string): boolean {
  let url: URL;
  try {
    url = new URL(href);
  } catch {
    return false;
  }
  return url.protocol === "https:" && url.hostname !== "" && url.username === "" && url.password === "";
}

const TOKEN = /\[([^\]\n]+)\]\(((?:[^()\s]|\([^()\s]*\))+)\)|`([^`\n]+)`|\*\*([^*\n]+)\*\*/g;

/** Split Markdown-ish help text into segments. Non-https links become their plain text. */
export function parseHelp(source: string): Segment[] {
  const out: Segment[] = [];
  const push = (seg: Segment) => {
    const last = out[out.length - 1];
    if (seg.kind === "text" && last?.kind === "text") last.text += seg.text;
    else if (seg.kind !== "text" || seg.text !== "") out.push(seg);
  };
  let at = 0;
  for (const m of source.matchAll(TOKEN)) {
    push({ kind: "text", text: source.slice(at, m.index) });
    if (m[1] !== undefined) {
      const href = m[2];
      push(isSafeHref(href) ? { kind: "link", text: m[1], href } : { kind: "text", text: m[1] });
    } else if (m[3] !== undefined) {
      push({ kind: "code", text: m[3] });
    } else if (m[4] !== undefined) {
      push({ kind: "strong", text: m[4] });
    }
    at = (m.index ?? 0) + m[0].length;
  }
  push({ kind: "text", text: source.slice(at) });
  return out;
}

/** Plain text of help (for titles and search). */
export function helpText(source: string): string {
  return parseHelp(source)
    .map((s) => s.text)
    .join("");
}
