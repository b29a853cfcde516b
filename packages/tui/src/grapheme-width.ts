/**
 * The cells one grapheme cluster takes, by the rules of `string-width` 8.3.0 (MIT, Sindre
 * Sorhus), whose per-cluster logic this follows: non-printing clusters take none, RGI emoji and
 * unqualified emoji sequences two, modern Hangul jamo syllables two, anything else the East
 * Asian Width of its first visible code point plus its trailing spacing marks and
 * halfwidth/fullwidth forms.
 *
 * Why not `string-width` itself: importing it builds its Unicode-property regexes (the
 * `\p{RGI_Emoji}` one with the `v` flag) and an `Intl.Segmenter` when the module loads, tens of
 * milliseconds before the terminal's first frame (issue 15, issue 22 item 4). Here each regex is
 * built on the first cluster that needs it; text-width.ts sends only complex clusters here.
 */
import { eastAsianWidth } from 'get-east-asian-width';

interface Patterns {
  /** A visible (printing) character: finds a cluster's base and whole-cluster zero width. */
  readonly visible: RegExp;
  readonly spacingMark: RegExp;
  readonly rgiEmoji: RegExp;
  readonly unqualifiedKeycap: RegExp;
  readonly extendedPictographic: RegExp;
}

let built: Patterns | undefined;

function patterns(): Patterns {
  built ??= {
    // biome-ignore lint/complexity/useRegexLiterals: the `v` flag as a literal needs an ES2024 target (tsconfig: ES2022)
    visible: new RegExp(
      '[^\\p{Default_Ignorable_Code_Point}\\p{Control}\\p{Format}\\p{Nonspacing_Mark}\\p{Enclosing_Mark}\\p{Surrogate}]',
      'v',
    ),
    // biome-ignore lint/complexity/useRegexLiterals: the `v` flag as a literal needs an ES2024 target (tsconfig: ES2022)
    spacingMark: new RegExp('\\p{Spacing_Mark}', 'v'),
    // biome-ignore lint/complexity/useRegexLiterals: the `v` flag as a literal needs an ES2024 target (tsconfig: ES2022)
    rgiEmoji: new RegExp('^\\p{RGI_Emoji}$', 'v'),
    unqualifiedKeycap: /^[\d#*]\u20E3$/,
    extendedPictographic: /\p{Extended_Pictographic}/gu,
  };
  return built;
}

const EAW = { ambiguousAsWide: false };

function isDoubleWidthNonRgiEmojiSequence(segment: string, p: Patterns): boolean {
  // Real emoji clusters are shorter than 30 units; pathological input is not one.
  if (segment.length > 50) return false;
  if (p.unqualifiedKeycap.test(segment)) return true;
  // ZWJ sequences with two or more Extended_Pictographic.
  if (segment.includes('\u200D')) {
    const pictographics = segment.match(p.extendedPictographic);
    return pictographics !== null && pictographics.length >= 2;
  }
  return false;
}

const isLeadingJamo = (c: number | undefined): boolean =>
  c !== undefined && ((c >= 0x1100 && c <= 0x115f) || (c >= 0xa960 && c <= 0xa97c));
const isVowelJamo = (c: number | undefined): boolean =>
  c !== undefined && ((c >= 0x1160 && c <= 0x11a7) || (c >= 0xd7b0 && c <= 0xd7c6));
const isTrailingJamo = (c: number | undefined): boolean =>
  c !== undefined && ((c >= 0x11a8 && c <= 0x11ff) || (c >= 0xd7cb && c <= 0xd7fb));
const isJamo = (c: number): boolean => isLeadingJamo(c) || isVowelJamo(c) || isTrailingJamo(c);

function hangulClusterWidth(visible: string, p: Patterns): number | undefined {
  const codes: number[] = [];
  for (const character of visible) if (p.visible.test(character)) codes.push(character.codePointAt(0) as number);
  if (codes.length === 0) return undefined;
  let width = 0;
  for (let i = 0; i < codes.length; i++) {
    const code = codes[i] as number;
    if (!isJamo(code)) {
      if (width === 0) return undefined;
      // A mixed cluster (jamo then a precomposed syllable): the rest by East Asian Width.
      for (let rest = i; rest < codes.length; rest++) width += eastAsianWidth(codes[rest] as number, EAW);
      return width;
    }
    // Modern Hangul L+V(+T) is one syllable block; unmatched jamo stay additive.
    if (isLeadingJamo(code) && isVowelJamo(codes[i + 1])) {
      width += 2;
      i += isTrailingJamo(codes[i + 2]) ? 2 : 1;
      continue;
    }
    width += eastAsianWidth(code, EAW);
  }
  return width;
}

function trailingWidth(visible: string, p: Patterns): number {
  let extra = 0;
  let first = true;
  for (const character of visible) {
    if (first) {
      first = false;
      continue;
    }
    if (p.spacingMark.test(character) || (character >= '\uFF00' && character <= '\uFFEF'))
      extra += eastAsianWidth(character.codePointAt(0) as number, EAW);
  }
  return extra;
}

/** Cells of one grapheme cluster (as `Intl.Segmenter` yields it; no escapes). */
export function clusterWidth(segment: string): number {
  if (segment.length === 0) return 0;
  const p = patterns();
  const index = segment.search(p.visible);
  if (index === -1) return 0;
  if (p.rgiEmoji.test(segment) || isDoubleWidthNonRgiEmojiSequence(segment, p)) return 2;
  const visible = segment.slice(index);
  const hangul = hangulClusterWidth(visible, p);
  if (hangul !== undefined) return hangul;
  return eastAsianWidth(visible.codePointAt(0) as number, EAW) + trailingWidth(visible, p);
}
