/**
 * Tool-poisoning markers in an upstream tool's definition (docs/federation-scanning.md): text a model
 * reads and a human reviewing the tool list usually does not. Every string is scanned: title, description,
 * everything inside the input and output schemas (descriptions, titles, enum values, defaults, examples,
 * and the property names themselves), and every other field a client is given: the annotations,
 * `execution`, `icons`, `_meta` and any field a later revision adds (its name too).
 *
 * The pattern rules read each string **normalized**, as a model reads it and not as it is spelled:
 * NFKC, then every default-ignorable code point dropped (soft hyphen, zero-width characters, bidi
 * controls, fillers, U+180E, variation selectors, ...; the zero-width space and the fillers are also
 * read as a space, in a second pass), text smuggled in Unicode tag characters or in a run of variation
 * selectors decoded, combining marks dropped, and every other character folded to the ASCII character it
 * is confusable with by its UTS #39 skeleton (Unicode's confusables table, from the `unhomoglyph`
 * package): Cyrillic `rеad ~/.sѕh/id_rѕa` is read `read ~/.ssh/id_rsa`. Excerpts show the original text.
 *
 * The rules:
 * - `invisible_unicode`: a default-ignorable code point (\p{Default_Ignorable_Code_Point}) outside its
 *   legitimate uses (a leading byte-order mark; a soft hyphen inside a word; ZWJ/ZWNJ between letters of
 *   a script that joins, and ZWJ in an emoji sequence; Mongolian selectors after a Mongolian letter; the
 *   tags of an emoji flag). Variation selectors have their own rule.
 * - `variation_selector_smuggling`: a variation selector that is not one U+FE0E/U+FE0F right after an
 *   emoji, so also any run of two or more (each one can carry a byte).
 * - `mixed_script`: a word mixing Latin letters with Cyrillic or Greek letters that look Latin.
 * - `hidden_instructions`, `instruction_override`, `credential_access`, `exfiltration`,
 *   `tool_shadowing`: the pattern rules below, each a short list of case-insensitive patterns.
 * - `oversized_text`: a string over 4,000 characters or more than 16,000 in the whole definition (at the
 *   path of the longest string), or a definition too large or too deep to scan whole.
 *
 * The cost is bounded whatever the definition: a string is read up to its first 8,192 characters, a
 * definition up to 32,768 characters (each string also costs 32), 50,000 JSON nodes and 64 levels of
 * nesting; what is left out is flagged `oversized_text`. The patterns are written so that none backtracks
 * more than a bounded window at one position.
 *
 * At most one marker per (rule, path), sorted by path then rule, at most 50. A scanner of patterns is a
 * tripwire, not a proof: pinning, human approval and Rego on the arguments are the other layers.
 */
import confusablesTable from 'unhomoglyph/data.json';
import { type ToolDefinition, pathJoin } from './tool-definition';

export type PoisoningRule =
  | 'invisible_unicode'
  | 'variation_selector_smuggling'
  | 'mixed_script'
  | 'hidden_instructions'
  | 'instruction_override'
  | 'credential_access'
  | 'exfiltration'
  | 'tool_shadowing'
  | 'oversized_text';

/** Every rule, in the order of the documentation. */
export const POISONING_RULES: readonly PoisoningRule[] = [
  'invisible_unicode',
  'variation_selector_smuggling',
  'mixed_script',
  'hidden_instructions',
  'instruction_override',
  'credential_access',
  'exfiltration',
  'tool_shadowing',
  'oversized_text',
];

export interface PoisoningMarker {
  rule: PoisoningRule;
  /** where, in the notation of definitionDiff; a property name is reported at its property's path */
  path: string;
  /** at most 120 characters around the match, invisible characters written `<U+XXXX>` */
  excerpt: string;
}

const MAX_MARKERS = 50;
const MAX_STRING = 4000;
const MAX_TOTAL = 16_000;
const EXCERPT = 120;
const CONTEXT_BEFORE = 30;

/** The scan's bounds (docs/federation-scanning.md, "Bounds"). */
export const SCAN_LIMITS = {
  /** characters of one string read by the rules (a longer one is flagged oversized anyway) */
  perString: 8192,
  /** characters read in one definition, each string counting `stringCost` more */
  perDefinition: 32_768,
  /** the same for a definition already flagged oversized (or cut by the node or depth bound) */
  perOversizedDefinition: 8192,
  stringCost: 32,
  /** JSON nodes (objects, arrays, keys, values) walked in one definition */
  nodes: 50_000,
  /** levels of nesting walked */
  depth: 64,
} as const;

// ---------------------------------------------------------------------------------------------------
// Unicode: what is invisible, what it folds to
// ---------------------------------------------------------------------------------------------------

const IGNORABLE = /\p{Default_Ignorable_Code_Point}/u;
const NONSPACING_MARK = /\p{Mn}/u;
const UPPER = /\p{Lu}/u;
const LOWER = /\p{Ll}/u;
const LETTER = /\p{L}/u;
const LETTER_OR_MARK = /[\p{L}\p{M}]/u;
const NON_JOINING_SCRIPT = /[\p{sc=Latin}\p{sc=Greek}\p{sc=Cyrillic}\p{sc=Common}\p{sc=Inherited}]/u;
const EMOJI = /\p{Emoji}/u;
const PICTOGRAPHIC = /[\p{Extended_Pictographic}\p{Emoji_Modifier}]/u;
const MONGOLIAN = /\p{sc=Mongolian}/u;
const LATIN = /\p{sc=Latin}/u;
const CYRILLIC_OR_GREEK = /[\p{sc=Cyrillic}\p{sc=Greek}]/u;
const CYRILLIC_OR_GREEK_ALL = /[\p{sc=Cyrillic}\p{sc=Greek}]/gu;
/** A word as mixed_script reads it: letters and marks, with any invisible character inside it. */
const WORD = /[\p{L}\p{M}\p{Default_Ignorable_Code_Point}]+/gu;
/** The emoji flags of subdivisions: U+1F3F4, tag letters and digits, CANCEL TAG (e.g. 🏴 + "gbsct"). */
const EMOJI_TAG_SEQUENCE = /\u{1F3F4}[\u{E0030}-\u{E0039}\u{E0061}-\u{E007A}]{1,7}\u{E007F}/gu;
const VARIATION_SELECTOR = /[\uFE00-\uFE0F\u{E0100}-\u{E01EF}]/gu;
/** Zero-width or blank characters that writers use between words: read as a space in the second pass. */
const SPACE_LIKE = new Set([0x200b, 0x180e, 0x115f, 0x1160, 0x3164, 0xffa0]);

const isVariationSelector = (cp: number) => (cp >= 0xfe00 && cp <= 0xfe0f) || (cp >= 0xe0100 && cp <= 0xe01ef);
/** byte value of a variation selector used as a carrier: U+FE00..FE0F are 0..15, U+E0100..E01EF 16..255 */
const selectorByte = (cp: number) => (cp <= 0xfe0f ? cp - 0xfe00 : cp - 0xe0100 + 16);
const isTagAscii = (cp: number) => cp >= 0xe0020 && cp <= 0xe007e;
const charAt = (s: string, i: number) => String.fromCodePoint(s.codePointAt(i)!);
const width = (cp: number) => (cp > 0xffff ? 2 : 1);
/** The code point that ends just before index i (a low surrogate's pair counted whole), or undefined. */
function codePointBefore(s: string, i: number): number | undefined {
  if (i <= 0) return undefined;
  const low = s.charCodeAt(i - 1);
  if (low >= 0xdc00 && low <= 0xdfff && i >= 2) {
    const high = s.charCodeAt(i - 2);
    if (high >= 0xd800 && high <= 0xdbff) return s.codePointAt(i - 2);
  }
  return low;
}

const CONFUSABLES = confusablesTable as Record<string, string>;

/** The UTS #39 skeleton of a string: NFD, each code point replaced by its prototype, NFD again. */
function skeleton(s: string): string {
  let out = '';
  for (const c of s.normalize('NFD')) out += CONFUSABLES[c] ?? c;
  return out.normalize('NFD');
}

const withoutMarks = (s: string) => s.replace(/\p{Mn}/gu, '');

/**
 * The ASCII character of each ASCII skeleton: two characters are confusable when their skeletons are
 * equal, so a character whose skeleton is that of `m` ("rn") is read `m`, one whose skeleton is that of
 * `l`, `I`, `1` and `|` is read `l` (letters first, lower case first).
 */
const ASCII_OF_SKELETON = (() => {
  const order = [...'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789'];
  for (let c = 0x20; c < 0x7f; c++) if (!/[A-Za-z0-9]/.test(String.fromCharCode(c))) order.push(String.fromCharCode(c));
  const m = new Map<string, string>();
  for (const a of order) {
    const s = skeleton(a);
    if (!m.has(s)) m.set(s, a);
  }
  return m;
})();

/** The printable ASCII text a (non-ASCII) character is confusable with, or undefined. */
function asciiLookalike(c: string): string | undefined {
  const s = withoutMarks(skeleton(c));
  if (!s) return undefined;
  const known = ASCII_OF_SKELETON.get(s);
  if (known !== undefined) return known;
  return /^[\x20-\x7e]+$/.test(s) ? s : undefined;
}

const foldMemo = new Map<number, string>();
const MAX_MEMO = 20_000;

/**
 * What the rules read for one visible code point (not ASCII, not default-ignorable): NFKC, then each
 * character decomposed, its combining marks dropped, and folded to its ASCII lookalike when it has one
 * (the lower-case form's lookalike first, so Cyrillic `І` is `I` rather than `l`), in the original case.
 */
function foldCodePoint(cp: number): string {
  const memo = foldMemo.get(cp);
  if (memo !== undefined) return memo;
  let out = '';
  for (const d of String.fromCodePoint(cp).normalize('NFKC')) {
    for (const e of d.normalize('NFD')) {
      if (e < '\x80') out += e;
      else if (NONSPACING_MARK.test(e) || IGNORABLE.test(e)) continue;
      else {
        const lower = e.toLowerCase();
        const target = (lower !== e ? asciiLookalike(lower) : undefined) ?? asciiLookalike(e);
        out += target === undefined ? e : UPPER.test(e) ? target.toUpperCase() : LOWER.test(e) ? target.toLowerCase() : target;
      }
    }
  }
  if (foldMemo.size >= MAX_MEMO) foldMemo.clear();
  foldMemo.set(cp, out);
  return out;
}

/** Whether a Cyrillic or Greek letter looks like a Latin letter (its fold is one ASCII letter). */
const looksLatin = (c: string) => /^[A-Za-z]$/.test(foldCodePoint(c.codePointAt(0)!));

/** The text the rules read, with, for each of its UTF-16 units, where it came from in the original. */
interface Folded {
  text: string;
  /** index in the original string of each unit of `text` (null: the same index, the text is the original) */
  origin: number[] | null;
  /** units decoded from smuggled text (tag characters, a run of variation selectors); null: none */
  smuggled: Uint8Array | null;
  /** the original has a character that SPACE_LIKE reads as a space */
  spaceLike: boolean;
}

const utf8 = new TextDecoder('utf-8');

/** `text` normalized for the rules (module comment); `spaces`: the SPACE_LIKE characters read as a space. */
function fold(text: string, spaces: boolean): Folded {
  const parts: string[] = [];
  const origin: number[] = [];
  const smuggledAt: number[] = [];
  let spaceLike = false;
  const emit = (s: string, from: number, smuggled = false) => {
    parts.push(s);
    for (let k = 0; k < s.length; k++) {
      if (smuggled) smuggledAt.push(origin.length);
      origin.push(from);
    }
  };
  for (let i = 0; i < text.length; ) {
    const cp = text.codePointAt(i)!;
    if (cp < 0x80) {
      emit(text[i], i);
      i++;
      continue;
    }
    if (isTagAscii(cp)) {
      emit(String.fromCharCode(cp - 0xe0000), i, true);
      i += 2;
      continue;
    }
    if (isVariationSelector(cp)) {
      // a run of selectors is read as the bytes it carries (UTF-8); a lone one is dropped
      const bytes: number[] = [];
      let j = i;
      for (let c = cp; j < text.length && isVariationSelector(c); j += width(c), c = text.codePointAt(j) ?? 0) bytes.push(selectorByte(c));
      if (bytes.length >= 2) {
        for (const ch of utf8.decode(Uint8Array.from(bytes))) {
          const d = ch.codePointAt(0)!;
          if (d < 0x80) emit(ch, i, true);
          else if (!IGNORABLE.test(ch)) emit(foldCodePoint(d), i, true);
        }
      }
      i = j;
      continue;
    }
    if (SPACE_LIKE.has(cp)) {
      spaceLike = true;
      if (spaces) emit(' ', i);
    } else if (!IGNORABLE.test(String.fromCodePoint(cp))) emit(foldCodePoint(cp), i);
    i += width(cp);
  }
  let smuggled: Uint8Array | null = null;
  if (smuggledAt.length) {
    smuggled = new Uint8Array(origin.length);
    for (const k of smuggledAt) smuggled[k] = 1;
  }
  return { text: parts.join(''), origin, smuggled, spaceLike };
}

/**
 * Index of the first default-ignorable code point without a legitimate use there, or -1. Variation
 * selectors are left to variation_selector_smuggling. Legitimate: U+FEFF first; U+00AD between two
 * letters; U+200C/U+200D between letters of a script that joins (Arabic, Persian, the Indic scripts, ...);
 * U+200D between two emoji; U+180B-U+180F after a Mongolian letter; the tags of an emoji flag.
 */
function firstUnexplainedInvisible(text: string): number {
  let flagTags: Array<[number, number]> | undefined;
  for (let i = 0; i < text.length; ) {
    const cp = text.codePointAt(i)!;
    const w = width(cp);
    if (cp < 0xad || isVariationSelector(cp) || !IGNORABLE.test(String.fromCodePoint(cp))) {
      i += w;
      continue;
    }
    const before = codePointBefore(text, i);
    const after = text.codePointAt(i + w);
    const b = before === undefined ? '' : String.fromCodePoint(before);
    const a = after === undefined ? '' : String.fromCodePoint(after);
    let legit = false;
    if (cp === 0xfeff) legit = i === 0;
    else if (cp === 0xad) legit = LETTER.test(b) && LETTER.test(a);
    else if (cp === 0x200c || cp === 0x200d) {
      legit =
        (LETTER_OR_MARK.test(b) && !NON_JOINING_SCRIPT.test(b) && LETTER_OR_MARK.test(a) && !NON_JOINING_SCRIPT.test(a)) ||
        (cp === 0x200d && (PICTOGRAPHIC.test(b) || before === 0xfe0f) && PICTOGRAPHIC.test(a));
    } else if (cp >= 0x180b && cp <= 0x180f) legit = MONGOLIAN.test(b);
    else if (cp >= 0xe0000 && cp <= 0xe007f) {
      flagTags ??= [...text.matchAll(EMOJI_TAG_SEQUENCE)].map((m) => [m.index + 2, m.index + m[0].length]);
      legit = flagTags.some(([from, to]) => i >= from && i < to);
    }
    if (!legit) return i;
    i += w;
  }
  return -1;
}

/** Index of the first variation selector that is not one U+FE0E/U+FE0F right after an emoji, or -1. */
function firstSmuggledSelector(text: string): number {
  VARIATION_SELECTOR.lastIndex = 0;
  for (let m = VARIATION_SELECTOR.exec(text); m; m = VARIATION_SELECTOR.exec(text)) {
    const cp = m[0].codePointAt(0)!;
    const before = codePointBefore(text, m.index);
    const emojiBase = before !== undefined && !isVariationSelector(before) && EMOJI.test(String.fromCodePoint(before));
    if (!((cp === 0xfe0e || cp === 0xfe0f) && emojiBase)) return m.index;
  }
  return -1;
}

/** Index of the first word that mixes Latin letters with Cyrillic or Greek letters that look Latin, or -1. */
function firstMixedScriptWord(text: string): number {
  WORD.lastIndex = 0;
  for (let m = WORD.exec(text); m; m = WORD.exec(text)) {
    const w = m[0];
    if (!LATIN.test(w) || !CYRILLIC_OR_GREEK.test(w)) continue;
    for (const c of w.matchAll(CYRILLIC_OR_GREEK_ALL)) if (looksLatin(c[0])) return m.index;
  }
  return -1;
}

// ---------------------------------------------------------------------------------------------------
// The pattern rules (they read the folded text)
// ---------------------------------------------------------------------------------------------------

const SECRET_WORDS = String.raw`(private\s+keys?|ssh\s+keys?|api[\s_-]?keys?|(access|auth|bearer|refresh|session|oauth)[\s_-]?tokens?|secrets?|passwords?|credentials?|session\s+cookies?)`;
const NOT_EXAMPLE_HOST = String.raw`(?!(www\.)?example\.(com|org|net)\b)`;
/**
 * Where exfiltrated data goes: a URL, "my e-mail", an e-mail address. The address starts at the start of a
 * token (the look-behind), so a failed attempt costs the length of one token, not of the window before it.
 */
const DESTINATION = new RegExp(
  String.raw`https?:\/\/${NOT_EXAMPLE_HOST}|\b(my|our|this|that|the\s+following)\s+e-?mail\b|(?<![\w.+-])[\w.+-]+@${NOT_EXAMPLE_HOST}[\w-]{1,63}\.[a-z]{2,}`,
  'gi',
);
const SEND_VERB = /\b(send|post|upload|forward|transmit|leak|exfiltrate)\b/gi;
const TO = /\b(to|into)\b/gi;

/** A match of a rule: where it starts and how long it is, in the text the rules read. */
type Found = { index: number; length: number };
type Matcher = RegExp | ((text: string) => Found | null);

const allMatches = (re: RegExp, text: string): Array<[start: number, end: number]> => {
  const out: Array<[number, number]> = [];
  re.lastIndex = 0;
  for (let m = re.exec(text); m; m = re.exec(text)) {
    out.push([m.index, m.index + m[0].length]);
    if (m[0].length === 0) re.lastIndex++;
  }
  return out;
};

/**
 * "send/post/upload/forward/transmit/leak/exfiltrate … to/into … <destination>" in one sentence: at most 80
 * characters from the verb to "to", at most 40 from "to" to the destination, no full stop or newline in
 * either gap. The regular expression of this sentence backtracks over both windows at every verb (about
 * 100 ms on 64 K of "send to "); here each of the three parts is found once and the closest verb before each
 * "to", and the closest such "to" before each destination, are taken in one sweep: linear in the text.
 */
function sendToDestination(text: string): Found | null {
  const verbs = allMatches(SEND_VERB, text);
  if (!verbs.length) return null;
  const tos = allMatches(TO, text);
  if (!tos.length) return null;
  const destinations = allMatches(DESTINATION, text);
  if (!destinations.length) return null;
  // lastStop[i]: the index of the last "." or newline before i (-1 when none)
  const lastStop = new Int32Array(text.length + 1);
  let stop = -1;
  for (let i = 0; i < text.length; i++) {
    lastStop[i] = stop;
    const c = text.charCodeAt(i);
    if (c === 0x2e || c === 0x0a) stop = i;
  }
  lastStop[text.length] = stop;
  const sends: Array<[toEnd: number, verbStart: number]> = [];
  let v = -1;
  for (const [toStart, toEnd] of tos) {
    while (v + 1 < verbs.length && verbs[v + 1][1] <= toStart) v++;
    if (v >= 0 && toStart - verbs[v][1] <= 80 && lastStop[toStart] < verbs[v][1]) sends.push([toEnd, verbs[v][0]]);
  }
  let s = -1;
  for (const [destStart, destEnd] of destinations) {
    while (s + 1 < sends.length && sends[s + 1][0] <= destStart) s++;
    if (s >= 0 && destStart - sends[s][0] <= 40 && lastStop[destStart] < sends[s][0]) return { index: sends[s][1], length: destEnd - sends[s][1] };
  }
  return null;
}

const RULES: ReadonlyArray<readonly [PoisoningRule, readonly Matcher[]]> = [
  [
    'hidden_instructions',
    [
      /<\s*\/?\s*(important|system([-_ ](prompt|message|reminder))?|instructions?|secret|hidden|admin|assistant)\s*>/i,
      /\[\/?INST\]|<\|(im_start|im_end|system)\|>|\{\{\s*system/i,
      /<!--/,
      /\b(do\s+not|don'?t|never)\s+(tell|inform|mention|reveal|disclose|notify|alert)\b[^.\n]{0,40}\b(user|human)s?\b/i,
      /\b(do\s+not|don'?t|never)\s+(mention|reveal|disclose)\s+(this|that|it)\b/i,
      /\bwithout\s+(telling|informing|notifying|alerting)\s+(the\s+)?(user|human)s?\b/i,
      /\b(hide|conceal|keep)\s+(this|it|that)\s+(hidden\s+)?from\s+(the\s+)?(user|human)s?\b/i,
      /\b(user|human)\s+(must|should)\s+not\s+(know|see|notice|find\s+out)\b/i,
      /\bvery\s+important\b[^\n]{0,80}\bbefore\s+(using|calling|invoking)\b|\bbefore\s+(using|calling|invoking)\s+(this|the|any)\s+tool\b[^\n]{0,80}\bvery\s+important\b/i,
    ],
  ],
  [
    'instruction_override',
    [
      /\b(ignore|disregard|forget)\s+(all\s+|any\s+)?(the\s+|your\s+)?(previous|prior|above|earlier|preceding|other|system|original)\s+(instructions|prompts?|rules|directions|guidelines)\b/i,
      /\bdisregard\b[^.\n]{0,40}\binstructions\b/i,
      /\byou\s+are\s+now\s+(a|an|in|the|my)\b/i,
      /\bnew\s+(system\s+)?instructions\s*:/i,
      /\b(ignore|disregard|forget|override|reveal|print|repeat|output|leak|change|replace)\b[^.\n]{0,40}\bsystem\s+prompt\b|\byour\s+system\s+prompt\b/i,
      /\boverride\s+(the\s+|your\s+|all\s+)?(system|previous|safety)?\s*(instructions|rules|policy|policies|guidelines)\b/i,
    ],
  ],
  [
    'credential_access',
    [
      /~\/\.ssh\b|\.ssh\/|\bid_(rsa|dsa|ecdsa|ed25519)\b|\.aws\/credentials\b|\.npmrc\b|\.netrc\b|\/etc\/(passwd|shadow)\b|\bmcp\.json\b|\.cursor\/|\.docker\/config\.json\b|\.kube\/config\b|\.git-credentials\b/i,
      /(^|[\s'"`(~/])\.env\b(?![-_.]?(var|variable|example|sample|template))/i,
      new RegExp(String.raw`\b(read|send|include|pass|print|reveal|extract|copy|cat|upload|leak|attach)\b[^.\n]{0,60}\b${SECRET_WORDS}\b`, 'i'),
    ],
  ],
  [
    'exfiltration',
    [
      sendToDestination,
      /\b(pass|put|include|add|append|embed|insert)\s+(its|their|the)\s+contents?(\s+of\s+[^.\n]{1,40}?)?\s+(as|in|into)\s+(the\s+)?(['"`][\w-]+['"`]|(sidenote|side[_\s]?note|notes?|metadata|comment|parameter|argument|field)\b)/i,
      /\b(pass|put|include|add|append|embed|insert)\s+(it|them|this|that)\s+(as|in|into)\s+(the\s+)?(['"`][\w-]+['"`]|(sidenote|side[_\s]?note|notes?|metadata|comment)\b)/i,
      /\b(curl|wget)\s+(-{1,2}[\w-]+(\s+\S+)?\s+){0,6}['"]?https?:\/\//i,
    ],
  ],
  [
    'tool_shadowing',
    [
      /\bwhen\s+(using|calling|invoking)\s+((the|any|all)\s+)?(other|another|any|all)\s+tools?\b/i,
      /\bwhen\s+this\s+tool\s+is\s+(available|present|installed|loaded|enabled)\b/i,
      /\binstead\s+of\s+(using|calling)\s+(the\s+)?[\w-]+\s+tool\b/i,
      /\b[a-z0-9]+_[a-z0-9_]+\s+tool\s+(must|should|shall|will)\b/i,
      /\b(always|also)\s+(send|cc|bcc|copy|forward)\s+(all\s+)?(emails?|messages?|data|a\s+copy)\b/i,
      /\bthis\s+tool\s+(must|should)\s+be\s+(called|used|run)\s+before\b/i,
      /\bhas\s+(a\s+)?side\s+effects?\s+on\b/i,
    ],
  ],
];

// ---------------------------------------------------------------------------------------------------
// Excerpts, the walk, the scan
// ---------------------------------------------------------------------------------------------------

/** One code point as a human can see it: itself, or `<U+XXXX>` when it is default-ignorable. */
function shown(c: string): string {
  return IGNORABLE.test(c) ? `<U+${c.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}>` : c;
}

/** At most EXCERPT characters (prefix included) from a little before `index`, invisible characters shown. */
function excerptAt(text: string, index: number, prefix = ''): string {
  const from = Math.max(0, index - 2 * CONTEXT_BEFORE);
  const before = Array.from(text.slice(from, index)); // code points; 2x the units leaves no half pair in the last 30
  const cut = from > 0 || before.length > CONTEXT_BEFORE;
  const pieces = [...(cut ? ['…'] : []), ...before.slice(-CONTEXT_BEFORE), ...Array.from(text.slice(index, index + 4 * EXCERPT))].map(shown);
  let out = prefix;
  for (const p of pieces) {
    if (out.length + p.length > EXCERPT) break;
    out += p;
  }
  return out;
}

/** A path built only when it is reported: long keys deep down cost nothing until then. */
type PathNode = { base: PathNode | string; key: string | number };
const pathOf = (p: PathNode | string): string => {
  const keys: Array<string | number> = [];
  let n: PathNode | string = p;
  for (; typeof n !== 'string'; n = n.base) keys.push(n.key);
  let out = n;
  for (let k = keys.length - 1; k >= 0; k--) out = pathJoin(out, keys[k]);
  return out;
};

interface Walked {
  /** the strings the scan may read (as many as the definition's budget can take), in the order a model reads them */
  strings: Array<[path: PathNode | string, text: string]>;
  /** characters in all the strings, and the longest string */
  total: number;
  longest: [path: PathNode | string, length: number] | undefined;
  /** the first string past the budget */
  more: PathNode | string | undefined;
  /** why some of the definition was not walked, and where the walk stopped */
  cut: { why: string; at: PathNode | string } | null;
}

/**
 * Every string of the definition that a model reads, with its path (a property name at its property's),
 * within the node and depth bounds. Only the strings the scan's budget can take are kept; the others are
 * counted. A path node is made only for a container, a kept string and the longest.
 */
/** The fields read first, in the order a model reads them (the name is the upstream's identifier, not text). */
const SCANNED_FIRST = new Set(['name', 'title', 'description', 'inputSchema', 'outputSchema']);
/** The other fields the MCP revisions define: their names are not text an upstream chose. */
const SPEC_FIELDS = new Set(['annotations', 'execution', 'icons', '_meta']);

function strings(def: ToolDefinition): Walked {
  const w: Walked = { strings: [], total: 0, longest: undefined, more: undefined, cut: null };
  let cost = 0;
  let nodes = 0;
  const node = (base: PathNode | string, key: string | number | undefined): PathNode | string => (key === undefined ? base : { base, key });
  const text = (base: PathNode | string, key: string | number | undefined, s: string): void => {
    w.total += s.length;
    const longest = !w.longest || s.length > w.longest[1];
    const keep = cost < SCAN_LIMITS.perDefinition;
    if (!longest && !keep && w.more !== undefined) return;
    const p = node(base, key);
    if (longest) w.longest = [p, s.length];
    if (keep) {
      w.strings.push([p, s]);
      cost += Math.min(s.length, SCAN_LIMITS.perString) + SCAN_LIMITS.stringCost;
    } else w.more ??= p;
  };
  const walk = (v: unknown, base: PathNode | string, key: string | number | undefined, depth: number): void => {
    if (w.cut) return;
    if (++nodes > SCAN_LIMITS.nodes) {
      w.cut = { why: `more than ${SCAN_LIMITS.nodes} JSON nodes`, at: node(base, key) };
      return;
    }
    if (typeof v === 'string') return text(base, key, v);
    if (typeof v !== 'object' || v === null) return;
    const p = node(base, key);
    if (depth >= SCAN_LIMITS.depth) {
      w.cut = { why: `nested deeper than ${SCAN_LIMITS.depth} levels`, at: p };
      return;
    }
    if (Array.isArray(v)) {
      for (let i = 0; i < v.length && !w.cut; i++) walk(v[i], p, i, depth + 1);
      return;
    }
    for (const k in v) {
      if (!Object.hasOwn(v, k)) continue;
      text(p, k, k);
      walk((v as Record<string, unknown>)[k], p, k, depth + 1);
      if (w.cut) return;
    }
  };
  if (typeof def.title === 'string') text('title', undefined, def.title);
  if (typeof def.description === 'string') text('description', undefined, def.description);
  walk(def.inputSchema, 'inputSchema', undefined, 1);
  if (def.outputSchema) walk(def.outputSchema, 'outputSchema', undefined, 1);
  // every other field a client is given: the annotations, execution, icons, _meta, and any field a later
  // revision adds (the name of such a field too)
  for (const k in def) {
    if (w.cut) break;
    if (!Object.hasOwn(def, k) || SCANNED_FIRST.has(k)) continue;
    if (!SPEC_FIELDS.has(k)) text('', k, k);
    walk(def[k], '', k, 1);
  }
  return w;
}

/** The first `max` units of `text`, never ending inside a surrogate pair. */
function prefixOf(text: string, max: number): string {
  if (text.length <= max) return text;
  const last = text.charCodeAt(max - 1);
  return text.slice(0, last >= 0xd800 && last <= 0xdbff ? max - 1 : max);
}

const asFound = (m: RegExpExecArray | null): Found | null => (m ? { index: m.index, length: m[0].length } : null);

/** Runs the pattern rules on one folded text; `add` keeps the first marker of each (rule, path). */
function matchRules(original: string, folded: Folded, add: (rule: PoisoningRule, excerpt: string) => void): void {
  for (const [rule, patterns] of RULES) {
    for (const matcher of patterns) {
      const m = typeof matcher === 'function' ? matcher(folded.text) : asFound(matcher.exec(folded.text));
      if (!m) continue;
      const end = m.index + m.length;
      let smuggled = false;
      for (let k = m.index; folded.smuggled && k < end && !smuggled; k++) smuggled = folded.smuggled[k] === 1;
      add(rule, smuggled ? excerptAt(folded.text, m.index, 'decoded: ') : excerptAt(original, folded.origin ? folded.origin[m.index] : m.index));
      break;
    }
  }
}

export function scanToolDefinition(def: ToolDefinition): PoisoningMarker[] {
  const found = new Map<string, PoisoningMarker>();
  const add = (rule: PoisoningRule, path: string, excerpt: string): void => {
    const key = `${path}\u0000${rule}`;
    if (!found.has(key)) found.set(key, { rule, path, excerpt });
  };
  const walked = strings(def);
  const { total, longest } = walked;
  const oversized = longest !== undefined && (longest[1] > MAX_STRING || total > MAX_TOTAL);
  // a definition flagged oversized is quarantined whatever else it says: a short read is enough
  let budget: number = oversized || walked.cut ? SCAN_LIMITS.perOversizedDefinition : SCAN_LIMITS.perDefinition;
  let unscanned: PathNode | string | undefined;
  for (const [p, full] of walked.strings) {
    if (budget <= SCAN_LIMITS.stringCost) {
      unscanned ??= p;
      break;
    }
    budget -= SCAN_LIMITS.stringCost;
    const text = prefixOf(full, Math.min(SCAN_LIMITS.perString, budget));
    budget -= text.length;
    if (text.length < Math.min(full.length, SCAN_LIMITS.perString)) unscanned ??= p;
    if (!/[^\x20-\x7e\n\r\t]|[<[{~/.@]|\b\w{2}/.test(text)) continue; // nothing any rule reads (e.g. a number, a single letter)
    let path: string | undefined;
    const mark = (rule: PoisoningRule, excerpt: string) => add(rule, (path ??= pathOf(p)), excerpt);
    const ascii = !/[^\x00-\x7f]/.test(text);
    if (!ascii) {
      const invisible = firstUnexplainedInvisible(text);
      if (invisible >= 0) mark('invisible_unicode', excerptAt(text, invisible));
      const selector = firstSmuggledSelector(text);
      if (selector >= 0) mark('variation_selector_smuggling', excerptAt(text, selector));
      const mixed = firstMixedScriptWord(text);
      if (mixed >= 0) mark('mixed_script', excerptAt(text, mixed));
    }
    // ASCII is read as it is (nothing to decode, drop or fold)
    const folded: Folded = ascii ? { text, origin: null, smuggled: null, spaceLike: false } : fold(text, false);
    matchRules(text, folded, mark);
    if (folded.spaceLike) matchRules(text, fold(text, true), mark);
  }
  unscanned ??= walked.more;
  if (oversized || unscanned !== undefined || walked.cut) {
    const size = longest ? `${longest[1]} characters here, ${total} in the whole definition (limits ${MAX_STRING} and ${MAX_TOTAL})` : 'no text';
    const why = walked.cut?.why ?? (unscanned !== undefined && !oversized ? `over the scan budget (${SCAN_LIMITS.perDefinition} characters, ${SCAN_LIMITS.stringCost} more per string)` : null);
    // at the longest string when that is the reason, else where the scan stopped
    const at = oversized && longest ? longest[0] : (walked.cut?.at ?? unscanned ?? 'inputSchema');
    add('oversized_text', pathOf(at), clip(why ? `${size}; not scanned whole: ${why}` : size, EXCERPT));
  }
  return [...found.values()].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : a.rule < b.rule ? -1 : a.rule > b.rule ? 1 : 0)).slice(0, MAX_MARKERS);
}

const clip = (s: string, max: number) => (s.length > max ? `${prefixOf(s, max - 1)}…` : s);
