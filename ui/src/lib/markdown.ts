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
      // Links inside bold text keep their words (the link itself is not followed).
      push({ kind: "strong", text: m[4].replace(/\[([^\]\n]+)\]\([^()\s]*\)/g, "$1") });
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

// Blocks of a Markdown document (a resource of type text/markdown): headings, paragraphs,
// lists, fenced code, quotes and rules, each holding the inline segments above. Like them,
// blocks are rendered as elements and text nodes: raw HTML in the source stays text.

export type Block =
  | { kind: "heading"; level: 1 | 2 | 3 | 4 | 5 | 6; segments: Segment[] }
  | { kind: "paragraph"; segments: Segment[] }
  | { kind: "list"; ordered: boolean; items: Segment[][] }
  | { kind: "code"; language: string; text: string }
  | { kind: "quote"; segments: Segment[] }
  | { kind: "rule" };

const HEADING = /^(#{1,6})\s+(.*?)\s*#*\s*$/;
const FENCE = /^(```|~~~)\s*([\w+-]*)\s*$/;
const BULLET = /^\s{0,3}[-*+]\s+(.*)$/;
const NUMBERED = /^\s{0,3}\d{1,9}[.)]\s+(.*)$/;
const RULE = /^\s{0,3}([-*_])(\s*\1){2,}\s*$/;
const QUOTE = /^\s{0,3}>\s?(.*)$/;

/** Whether a resource of `mimeType` at `uri` is Markdown. */
export function isMarkdown(mimeType: string | null | undefined, uri: string): boolean {
  const type = (mimeType ?? "").split(";")[0].trim().toLowerCase();
  if (type === "text/markdown" || type === "text/x-markdown") return true;
  return type === "" && /\.(md|markdown)$/i.test(uri.split(/[?#]/)[0]);
}

/** Split a Markdown document into blocks. */
export function parseMarkdown(source: string): Block[] {
  const lines = source.replace(/\r\n?/g, "\n").split("\n");
  const blocks: Block[] = [];
  let paragraph: string[] = [];
  const flush = () => {
    if (paragraph.length > 0) blocks.push({ kind: "paragraph", segments: parseHelp(paragraph.join(" ")) });
    paragraph = [];
  };
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    const fence = FENCE.exec(line);
    if (fence) {
      flush();
      const body: string[] = [];
      i++;
      while (i < lines.length && !lines[i].trimEnd().startsWith(fence[1])) body.push(lines[i++]);
      blocks.push({ kind: "code", language: fence[2], text: body.join("\n") });
      continue;
    }
    if (line.trim() === "") {
      flush();
      continue;
    }
    const heading = HEADING.exec(line);
    if (heading) {
      flush();
      const level = heading[1].length as 1 | 2 | 3 | 4 | 5 | 6;
      blocks.push({ kind: "heading", level, segments: parseHelp(heading[2]) });
      continue;
    }
    if (RULE.test(line)) {
      flush();
      blocks.push({ kind: "rule" });
      continue;
    }
    const item = BULLET.exec(line) ?? NUMBERED.exec(line);
    if (item) {
      flush();
      const ordered = !BULLET.test(line);
      const items: Segment[][] = [];
      while (i < lines.length) {
        const next = (ordered ? NUMBERED : BULLET).exec(lines[i]);
        if (!next) break;
        items.push(parseHelp(next[1]));
        i++;
      }
      i--;
      blocks.push({ kind: "list", ordered, items });
      continue;
    }
    const quote = QUOTE.exec(line);
    if (quote) {
      flush();
      const quoted: string[] = [];
      while (i < lines.length) {
        const next = QUOTE.exec(lines[i]);
        if (!next) break;
        quoted.push(next[1]);
        i++;
      }
      i--;
      blocks.push({ kind: "quote", segments: parseHelp(quoted.join(" ")) });
      continue;
    }
    paragraph.push(line.trim());
  }
  flush();
  return blocks;
}
