/**
 * Tool-poisoning markers in an upstream tool's definition (docs/federation-scanning.md): text a model
 * reads and a human reviewing the tool list usually does not. Every string is scanned: title, description,
 * and everything inside the input and output schemas (descriptions, titles, enum values, defaults,
 * examples, and the property names themselves), plus the annotations' title.
 *
 * The rules aim at what real attacks used (Invariant Labs' `<IMPORTANT>` sidenote attack, ASCII smuggling
 * in Unicode tag characters, "rug pull" shadowing of another tool) while staying quiet on the descriptions
 * of real servers: the generic words (token, password, secret, API key) count only together with an
 * imperative to read, send or reveal them, and the file names that only an attacker needs (`~/.ssh`,
 * `id_rsa`, `.aws/credentials`, `mcp.json`, ...) count alone. A scanner of patterns is a tripwire, not a
 * proof: pinning, human approval and Rego on the arguments are the other layers.
 */
import { type ToolDefinition, pathJoin } from './tool-definition';

export type PoisoningRule = 'invisible_unicode' | 'hidden_instructions' | 'instruction_override' | 'credential_access' | 'exfiltration' | 'tool_shadowing' | 'oversized_text';

export interface PoisoningMarker {
  rule: PoisoningRule;
  path: string;
  excerpt: string;
}

const MAX_MARKERS = 50;
const MAX_STRING = 4000;
const MAX_TOTAL = 16_000;
const EXCERPT = 120;

/** tag characters (ASCII smuggling), zero-width characters, bidi controls; U+FEFF only inside a text */
const INVISIBLE = /[\u{E0000}-\u{E007F}\u200B-\u200F\u2060-\u2064\u202A-\u202E\u2066-\u2069]|(?<=.)\uFEFF/u;

const RULES: Array<[PoisoningRule, RegExp[]]> = [
  [
    'hidden_instructions',
    [
      /<\s*\/?\s*(important|system|instructions?|secret|hidden|admin|assistant)\s*>/i,
      /\[\/?INST\]|<\|im_start\|>|<\|system\|>|\{\{\s*system/i,
      /<!--[\s\S]*?-->/,
      /\b(do not|don't|never)\s+(tell|inform|mention|reveal|show|disclose)\b[^.\n]{0,40}\b(user|human)\b/i,
      /\bwithout\s+(telling|informing|notifying|alerting)\s+(the\s+)?(user|human)\b/i,
      /\b(hide|conceal)\s+(this|it|that)\s+from\s+(the\s+)?(user|human)\b/i,
      /\b(user|human)\s+(must|should)\s+not\s+(know|see|notice)\b/i,
    ],
  ],
  [
    'instruction_override',
    [
      /\b(ignore|disregard|forget)\s+(all\s+|any\s+)?(the\s+)?(previous|prior|above|earlier|other|system)\s+(instructions|prompts?|rules|directions)\b/i,
      /\byou\s+are\s+now\s+(a|an|in)\b/i,
      /\bnew\s+(system\s+)?instructions\s*:/i,
      /\boverride\s+(the\s+|your\s+|all\s+)?(system|previous|safety)?\s*(instructions|rules|policy|policies|guidelines)\b/i,
    ],
  ],
  [
    'credential_access',
    [
      /~\/\.ssh\b|\bid_(rsa|dsa|ecdsa|ed25519)\b|\.aws\/credentials\b|\.npmrc\b|\.netrc\b|\/etc\/(passwd|shadow)\b|\bmcp\.json\b|\.cursor\/|\.docker\/config\.json\b|\.kube\/config\b|\.git-credentials\b/i,
      /(^|[\s'"`(])\.env\b(?!\s*(var|variable))/i,
      /\b(read|send|include|pass|print|reveal|extract|copy|cat|upload|leak|output|return|attach)\b[^.\n]{0,60}\b(private\s+keys?|api[\s_-]?keys?|access[\s_-]?tokens?|secrets?|passwords?|credentials?|ssh\s+keys?|session\s+cookies?)\b/i,
    ],
  ],
  [
    'exfiltration',
    [
      /\b(send|post|upload|forward|transmit|leak|exfiltrate)\b[^.\n]{0,80}\b(to|into)\b[^.\n]{0,40}(https?:\/\/|\bemail\b|[\w.+-]+@[\w-]+\.[\w.]+)/i,
      /\b(pass|put|include|add|append|embed)\s+(it|them|its\s+content|their\s+content|the\s+contents?)\b[^.\n]{0,40}\bas\s+['"`]?\w+['"`]?/i,
      /\b(pass|put|include|add|append|embed)\b[^.\n]{0,40}\b(in|into|as)\s+(the\s+)?['"`]?(sidenote|side_note|note|notes|metadata|comment)['"`]?/i,
      /\b(curl|wget)\s+(-\S+\s+)*https?:\/\//i,
    ],
  ],
  [
    'tool_shadowing',
    [
      /\bwhen\s+(using|calling|invoking)\s+(the\s+)?(other|another|any|all)\s+tools?\b/i,
      /\binstead\s+of\s+(using|calling)\s+(the\s+)?[\w-]+\s+tool\b/i,
      /\b(the\s+)?[a-z]+_[a-z_]+\s+tool\s+(must|should|will)\b/i,
      /\b(always|also)\s+(send|cc|bcc|copy|forward)\s+(all\s+)?(emails?|messages?|data|a\s+copy)\b/i,
      /\bthis\s+tool\s+(must|should)\s+be\s+(called|used|run)\s+before\b/i,
      /\bhas\s+(a\s+)?side\s+effects?\s+on\b/i,
    ],
  ],
];

/** Visible form of a text: invisible characters as <U+XXXX>. */
function visible(text: string): string {
  return text.replace(new RegExp(INVISIBLE.source.replace('(?<=.)', ''), 'gu'), (c) => `<U+${c.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}>`);
}

function excerptAt(text: string, index: number, length: number): string {
  const from = Math.max(0, index - 30);
  const piece = visible(text.slice(from, Math.min(text.length, index + Math.max(length, 1) + 60)));
  return `${from > 0 ? '…' : ''}${piece}`.slice(0, EXCERPT);
}

/** Every string of the definition that a model reads, with its path. */
function strings(def: ToolDefinition): Array<[string, string]> {
  const out: Array<[string, string]> = [];
  const walk = (v: unknown, path: string) => {
    if (typeof v === 'string') out.push([path, v]);
    else if (Array.isArray(v)) v.forEach((x, i) => walk(x, pathJoin(path, i)));
    else if (v && typeof v === 'object') {
      for (const [k, x] of Object.entries(v)) {
        const p = pathJoin(path, k);
        out.push([`${p}<key>`, k]);
        walk(x, p);
      }
    }
  };
  if (def.title) out.push(['title', def.title]);
  if (def.description) out.push(['description', def.description]);
  walk(def.inputSchema, 'inputSchema');
  if (def.outputSchema) walk(def.outputSchema, 'outputSchema');
  const annotationTitle = def.annotations?.title;
  if (typeof annotationTitle === 'string') out.push(['annotations.title', annotationTitle]);
  return out;
}

export function scanToolDefinition(def: ToolDefinition): PoisoningMarker[] {
  const found = new Map<string, PoisoningMarker>();
  const add = (rule: PoisoningRule, path: string, excerpt: string) => {
    const key = `${path}\u0000${rule}`;
    if (!found.has(key)) found.set(key, { rule, path, excerpt });
  };
  const texts = strings(def);
  let total = 0;
  let longest: [string, string] | undefined;
  for (const [path, text] of texts) {
    total += text.length;
    if (!longest || text.length > longest[1].length) longest = [path, text];
    const invisible = INVISIBLE.exec(text);
    if (invisible) add('invisible_unicode', path, excerptAt(text, invisible.index, 1));
    // the rules read the text as a model would: with the smuggled tag characters decoded to ASCII
    const decoded = text.replace(/[\u{E0020}-\u{E007E}]/gu, (c) => String.fromCharCode(c.codePointAt(0)! - 0xe0000));
    for (const [rule, patterns] of RULES) {
      for (const re of patterns) {
        const m = re.exec(decoded);
        if (m) {
          add(rule, path, decoded === text ? excerptAt(text, m.index, m[0].length) : `decoded: ${excerptAt(decoded, m.index, m[0].length)}`);
          break;
        }
      }
    }
  }
  if (longest && (longest[1].length > MAX_STRING || total > MAX_TOTAL)) {
    add('oversized_text', longest[0], `${longest[1].length} characters here, ${total} in the whole definition (limits ${MAX_STRING} and ${MAX_TOTAL})`);
  }
  return [...found.values()].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : a.rule < b.rule ? -1 : 1)).slice(0, MAX_MARKERS);
}
