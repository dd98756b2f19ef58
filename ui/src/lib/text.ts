// Messages as sentences, app-wide: the core's texts start lowercase, quote names and commands in
// backticks and end without a full stop (the CLI prints them after "error: "). The app shows them
// capitalised and finished, with backticked spans either as code (rich text) or in quotes
// (plain text: toasts, titles, field errors). Pure: tested in text.test.ts.

/** A piece of a message: plain text, or a `code` span. */
export interface TextPart {
  text: string;
  code: boolean;
}

/** Split a message at its backquotes; an unpaired backquote is kept as text. */
export function textParts(message: string): TextPart[] {
  const parts: TextPart[] = [];
  const re = /`([^`]+)`/g;
  let at = 0;
  for (let m = re.exec(message); m; m = re.exec(message)) {
    if (m.index > at) parts.push({ text: message.slice(at, m.index), code: false });
    parts.push({ text: m[1], code: true });
    at = m.index + m[0].length;
  }
  if (at < message.length) parts.push({ text: message.slice(at), code: false });
  return parts;
}

function capitalise(text: string): string {
  const first = text.match(/^\s*\p{Ll}/u);
  if (!first) return text;
  const i = first[0].length - 1;
  return text.slice(0, i) + text[i].toUpperCase() + text.slice(i + 1);
}

function finish(text: string): string {
  const trimmed = text.trimEnd();
  if (!trimmed) return trimmed;
  return /[.!?:…)\]”"]$/.test(trimmed) || /\n/.test(trimmed.slice(-1)) ? trimmed : `${trimmed}.`;
}

/** A message as rich text: the first plain word capitalised (a message opening with a code
 * span keeps it as it is: `uvx` stays lowercase), a full stop at the end. */
export function sentenceParts(message: string): TextPart[] {
  const parts = textParts(message.trim());
  if (parts.length === 0) return parts;
  if (!parts[0].code) parts[0] = { ...parts[0], text: capitalise(parts[0].text) };
  const last = parts.length - 1;
  if (!parts[last].code) parts[last] = { ...parts[last], text: finish(parts[last].text) };
  else parts.push({ text: ".", code: false });
  return parts;
}

/** A message as plain text: a sentence, with code spans in quotes. */
export function sentence(message: string): string {
  return sentenceParts(message)
    .map((p) => (p.code ? `“${p.text}”` : p.text))
    .join("");
}
