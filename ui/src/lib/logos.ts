// Logos, bundled at build time: brand icons from the `simple-icons` package (CC0), keyed by the
// catalog's `logo` slug. Nothing is fetched at run time. An entry without a known logo gets an
// initials badge in a colour derived from its name.

import {
  siAirtable,
  siAtlassian,
  siBrave,
  siClickhouse,
  siCloudflare,
  siDatadog,
  siElevenlabs,
  siFigma,
  siGit,
  siGithub,
  siGooglechrome,
  siGrafana,
  siHubspot,
  siHuggingface,
  siKagi,
  siLinear,
  siMiro,
  siModelcontextprotocol,
  siMongodb,
  siNeon,
  siNotion,
  siObsidian,
  siPaypal,
  siPerplexity,
  siPosthog,
  siQuickbooks,
  siRedis,
  siResend,
  siSentry,
  siSonar,
  siSqlite,
  siStripe,
  siSupabase,
  siTerraform,
  siWebflow,
} from "simple-icons";

export interface BrandIcon {
  title: string;
  hex: string;
  path: string;
}

const ICONS: BrandIcon[] = [
  siAirtable,
  siAtlassian,
  siBrave,
  siClickhouse,
  siCloudflare,
  siDatadog,
  siElevenlabs,
  siFigma,
  siGit,
  siGithub,
  siGooglechrome,
  siGrafana,
  siHubspot,
  siHuggingface,
  siKagi,
  siLinear,
  siMiro,
  siModelcontextprotocol,
  siMongodb,
  siNeon,
  siNotion,
  siObsidian,
  siPaypal,
  siPerplexity,
  siPosthog,
  siQuickbooks,
  siRedis,
  siResend,
  siSentry,
  siSonar,
  siSqlite,
  siStripe,
  siSupabase,
  siTerraform,
  siWebflow,
];

/** slug → icon. Slugs are simple-icons slugs (the catalog's `logo`). */
export const BRAND_ICONS: ReadonlyMap<string, BrandIcon> = new Map(
  ICONS.map((icon) => [(icon as unknown as { slug: string }).slug, icon]),
);

export function brandIcon(slug: string | null | undefined): BrandIcon | undefined {
  return slug ? BRAND_ICONS.get(slug) : undefined;
}

/** Words that say nothing about which server it is ("mcp-server-fear-greed" is "fear greed"). */
const FILLER_WORDS = new Set(["mcp", "server", "servers", "the"]);

/** Up to two letters for a badge: "GitHub" → "GH", "Brave Search" → "BS", "slack" → "SL",
 *  "reddit-research-mcp" → "RR". Filler words are skipped unless nothing else is left. */
export function initials(name: string): string {
  const all = name
    .replace(/[^\p{L}\p{N}]+/gu, " ")
    .trim()
    .split(/\s+/)
    .filter(Boolean);
  const meaningful = all.filter((w) => !FILLER_WORDS.has(w.toLowerCase()));
  const words = meaningful.length > 0 ? meaningful : all;
  if (words.length === 0) return "?";
  if (words.length >= 2) return (first(words[0]) + first(words[1])).toUpperCase();
  const word = words[0];
  const capitals = [...word.slice(1)].filter((c) => c >= "A" && c <= "Z");
  if (capitals.length > 0 && word[0] === word[0].toUpperCase()) {
    return (first(word) + capitals[0]).toUpperCase();
  }
  return [...word].slice(0, 2).join("").toUpperCase();
}

function first(word: string): string {
  return [...word][0] ?? "";
}

/** Relative luminance of `#rrggbb` (WCAG 2). */
export function luminance(hex: string): number {
  const h = hex.replace("#", "");
  const channel = (i: number) => {
    const c = parseInt(h.slice(i, i + 2), 16) / 255;
    return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
  };
  return 0.2126 * channel(0) + 0.7152 * channel(2) + 0.0722 * channel(4);
}

/** WCAG contrast ratio of two colours. */
export function contrast(a: string, b: string): number {
  const [la, lb] = [luminance(a), luminance(b)];
  return (Math.max(la, lb) + 0.05) / (Math.min(la, lb) + 0.05);
}

/** The glyph colour (white or near-black) that contrasts best with a background. */
export function glyphColor(background: string): string {
  return contrast(background, "#ffffff") >= contrast(background, "#111318") ? "#ffffff" : "#111318";
}

/** Badge backgrounds; white text reaches 4.5:1 on every one of them. */
export const BADGE_COLORS = [
  "#4338ca",
  "#0f766e",
  "#b91c1c",
  "#7e22ce",
  "#1d4ed8",
  "#a21caf",
  "#166534",
  "#9a3412",
  "#334155",
  "#be123c",
];

/** A stable badge colour for a name. */
export function badgeColor(name: string): string {
  let hash = 0;
  for (const ch of name) hash = (hash * 31 + ch.codePointAt(0)!) >>> 0;
  return BADGE_COLORS[hash % BADGE_COLORS.length];
}

/** What a logo tile shows. */
export type LogoSpec =
  | { kind: "brand"; path: string; background: string; color: string; title: string }
  | { kind: "initials"; text: string; background: string; color: string };

export function logoFor(slug: string | null | undefined, name: string): LogoSpec {
  const icon = brandIcon(slug);
  if (icon) {
    const background = `#${icon.hex}`;
    return { kind: "brand", path: icon.path, background, color: glyphColor(background), title: icon.title };
  }
  return { kind: "initials", text: initials(name), background: badgeColor(name), color: "#ffffff" };
}
