/**
 * Tool-poisoning markers in an upstream tool's definition (docs/federation-scanning.md): text a model
 * reads and a human reviewing the tool list usually does not. Every string is scanned: title, description,
 * everything inside the input and output schemas (descriptions, titles, enum values, defaults, examples,
 * and the property names themselves) and the annotations' title. Text smuggled in Unicode tag characters
 * is decoded to ASCII before the rules read it, as a model would read it.
 *
 * The rules, each a short list of case-insensitive patterns:
 * - `invisible_unicode`: tag characters U+E0000–E007F (ASCII smuggling), zero-width U+200B–U+200D and
 *   U+2060–U+2064, bidi controls U+200E/U+200F, U+202A–U+202E, U+2066–U+2069, a U+FEFF that is not the
 *   first character. Not the soft hyphen nor variation selectors (hyphenation and emoji use them).
 * - `hidden_instructions`: markup that addresses the model (`<IMPORTANT>`, `<SYSTEM>`, `<instructions>`,
 *   `<secret>`, `[INST]`, `<|im_start|>`, `{{SYSTEM`, an HTML comment) or keeps something from the user
 *   ("do not tell the user", "without telling the user", "hide this from the user", "the user must not
 *   know", "very important … before using this tool").
 * - `instruction_override`: "ignore/disregard previous instructions", "you are now a …", "new
 *   instructions:", "reveal/ignore … the system prompt", "override the system rules".
 * - `credential_access`: file names only an attacker needs (`~/.ssh`, `id_rsa`, `.aws/credentials`,
 *   `.env`, `.npmrc`, `.netrc`, `/etc/passwd`, `mcp.json`, `.cursor/`, …) alone; the generic words
 *   (private key, API key, access token, secret, password, credentials) only within 60 characters after
 *   an imperative (read, send, include, pass, print, reveal, extract, copy, cat, upload, leak, attach), so
 *   "Create a new API key" or "Rotate the password of a user" stay clean.
 * - `exfiltration`: sending something to a URL or an e-mail address, passing content in another argument
 *   (Invariant Labs' "pass its content as 'sidenote'"), `curl`/`wget` of a URL.
 * - `tool_shadowing`: a description that changes how other tools behave ("when this tool is available",
 *   "the send_email tool must …", "always bcc …", "instead of using the X tool", "this tool must be called
 *   before", "has a side effect on").
 * - `oversized_text`: a string over 4,000 characters or more than 16,000 in the whole definition (at the
 *   path of the longest string).
 *
 * At most one marker per (rule, path), sorted by path then rule, at most 50. A scanner of patterns is a
 * tripwire, not a proof: pinning, human approval and Rego on the arguments are the other layers.
 */
import { type ToolDefinition, clipText, isJsonObject, pathJoin } from './tool-definition';

export type PoisoningRule = 'invisible_unicode' | 'hidden_instructions' | 'instruction_override' | 'credential_access' | 'exfiltration' | 'tool_shadowing' | 'oversized_text';

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
/** Patterns read at most this much of one string: a longer one is flagged oversized anyway. */
const MAX_SCANNED = 64_000;

const INVISIBLE_CHARS = '\\u{E0000}-\\u{E007F}\\u200B-\\u200F\\u2060-\\u2064\\u202A-\\u202E\\u2066-\\u2069';
/** U+FEFF counts only after the first character (a leading byte-order mark is harmless). */
const INVISIBLE = new RegExp(`[${INVISIBLE_CHARS}]|(?<=[\\s\\S])\\uFEFF`, 'u');
const INVISIBLE_ANYWHERE = new RegExp(`^[${INVISIBLE_CHARS}\\uFEFF]$`, 'u');
const TAG_ASCII = /[\u{E0020}-\u{E007E}]/gu;

const SECRET_WORDS = String.raw`(private\s+keys?|ssh\s+keys?|api[\s_-]?keys?|(access|auth|bearer|refresh|session|oauth)[\s_-]?tokens?|secrets?|passwords?|credentials?|session\s+cookies?)`;
const NOT_EXAMPLE_HOST = String.raw`(?!(www\.)?example\.(com|org|net)\b)`;

const RULES: ReadonlyArray<readonly [PoisoningRule, readonly RegExp[]]> = [
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
      new RegExp(
        String.raw`\b(send|post|upload|forward|transmit|leak|exfiltrate)\b[^.\n]{0,80}\b(to|into)\b[^.\n]{0,40}?(https?:\/\/${NOT_EXAMPLE_HOST}|\b(my|our|this|that|the\s+following)\s+e-?mail\b|[\w.+-]{1,64}@${NOT_EXAMPLE_HOST}[\w-]{1,63}\.[a-z]{2,})`,
        'i',
      ),
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

/** One code point as a human can see it: itself, or `<U+XXXX>` when invisible. */
function shown(c: string): string {
  return INVISIBLE_ANYWHERE.test(c) ? `<U+${c.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}>` : c;
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

/** Every string of the definition that a model reads, with its path (a property name at its property's). */
function strings(def: ToolDefinition): Array<[path: string, text: string]> {
  const out: Array<[string, string]> = [];
  const walk = (v: unknown, path: string): void => {
    if (typeof v === 'string') out.push([path, v]);
    else if (Array.isArray(v)) v.forEach((x, i) => walk(x, pathJoin(path, i)));
    else if (isJsonObject(v)) {
      for (const [k, x] of Object.entries(v)) {
        const p = pathJoin(path, k);
        out.push([p, k]);
        walk(x, p);
      }
    }
  };
  if (def.title !== undefined) out.push(['title', def.title]);
  if (def.description !== undefined) out.push(['description', def.description]);
  walk(def.inputSchema, 'inputSchema');
  if (def.outputSchema) walk(def.outputSchema, 'outputSchema');
  const annotationTitle = def.annotations?.title;
  if (typeof annotationTitle === 'string') out.push(['annotations.title', annotationTitle]);
  return out;
}

export function scanToolDefinition(def: ToolDefinition): PoisoningMarker[] {
  const found = new Map<string, PoisoningMarker>();
  const add = (rule: PoisoningRule, path: string, excerpt: string): void => {
    const key = `${path}\u0000${rule}`;
    if (!found.has(key)) found.set(key, { rule, path, excerpt });
  };
  let total = 0;
  let longest: [path: string, length: number] | undefined;
  for (const [path, full] of strings(def)) {
    total += full.length;
    if (!longest || full.length > longest[1]) longest = [path, full.length];
    const text = clipText(full, MAX_SCANNED, '');
    const invisible = INVISIBLE.exec(text);
    if (invisible) add('invisible_unicode', path, excerptAt(text, invisible.index));
    // the rules read the text as a model would: with the smuggled tag characters decoded to ASCII
    const decoded = text.replace(TAG_ASCII, (c) => String.fromCharCode(c.codePointAt(0)! - 0xe0000));
    for (const [rule, patterns] of RULES) {
      for (const re of patterns) {
        const m = re.exec(decoded);
        if (!m) continue;
        const plain = decoded === text ? m : re.exec(text);
        add(rule, path, plain ? excerptAt(text, plain.index) : excerptAt(decoded, m.index, 'decoded: '));
        break;
      }
    }
  }
  if (longest && (longest[1] > MAX_STRING || total > MAX_TOTAL)) {
    add('oversized_text', longest[0], `${longest[1]} characters here, ${total} in the whole definition (limits ${MAX_STRING} and ${MAX_TOTAL})`);
  }
  return [...found.values()].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : a.rule < b.rule ? -1 : a.rule > b.rule ? 1 : 0)).slice(0, MAX_MARKERS);
}
