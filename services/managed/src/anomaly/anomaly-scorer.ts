/**
 * Anomaly score of one built-in tool use seen on a session's event stream (pure; no I/O).
 *
 * Three families of signals, each a named pattern with a weight in 0..1:
 * - dangerous shell: destructive or privilege-escalating commands (rm -rf /, mkfs, dd to a device, fork
 *   bombs, chmod 777 /, piping a download into a shell, reverse shells, history wiping)
 * - credential access: private keys, cloud and tool credential files, /etc/shadow, the process
 *   environment, secret-named environment variables
 * - suspicious network: cloud metadata endpoints, raw-IP downloads, netcat/socat listeners, paste and
 *   tunnel services, DNS exfiltration tools
 * The score combines the signals as independent evidence: 1 - Π(1 - w). One critical signal (w = 0.95)
 * crosses the default auto-interrupt threshold (0.8); two medium ones (0.5 each → 0.75) do not, three do.
 */

export type AnomalyCategory = 'dangerous_shell' | 'credential_access' | 'suspicious_network';

export interface AnomalySignal {
  id: string;
  category: AnomalyCategory;
  weight: number;
}

export interface AnomalyAssessment {
  score: number;
  signals: AnomalySignal[];
}

interface Rule extends AnomalySignal {
  pattern: RegExp;
}

const rules: Rule[] = [
  // dangerous shell
  { id: 'recursive_delete_root', category: 'dangerous_shell', weight: 0.95, pattern: /\brm\s+(-[a-z]*r[a-z]*f[a-z]*|-[a-z]*f[a-z]*r[a-z]*|-r\s+-f|-f\s+-r|--recursive\s+--force|--force\s+--recursive)\s+(--no-preserve-root\s+)?(\/|~|\$HOME|\/\*|\/(etc|usr|var|home|boot|bin|lib)\b)(\s|$|\/?\*?)/i },
  { id: 'filesystem_format', category: 'dangerous_shell', weight: 0.95, pattern: /\bmkfs(\.\w+)?\b|\bwipefs\b/i },
  { id: 'raw_device_write', category: 'dangerous_shell', weight: 0.95, pattern: /\bdd\b[^|;&]*\bof=\/dev\/(sd|nvme|hd|xvd|vd|disk)|>\s*\/dev\/(sd|nvme|hd|xvd|vd)[a-z0-9]*/i },
  { id: 'fork_bomb', category: 'dangerous_shell', weight: 0.95, pattern: /:\(\)\s*\{\s*:\s*\|\s*:\s*&\s*\}\s*;\s*:/ },
  { id: 'world_writable_root', category: 'dangerous_shell', weight: 0.8, pattern: /\bchmod\s+(-R\s+)?0?777\s+\/(\s|$)/i },
  { id: 'download_piped_to_shell', category: 'dangerous_shell', weight: 0.85, pattern: /\b(curl|wget)\b[^|;]*\|\s*(sudo\s+)?(ba|z|da)?sh\b/i },
  { id: 'reverse_shell', category: 'dangerous_shell', weight: 0.95, pattern: /\/dev\/tcp\/|\bbash\s+-i\s*>&|\bnc(at)?\b[^|;]*\s-e\s|\bsocat\b[^|;]*\bexec:/i },
  { id: 'history_tampering', category: 'dangerous_shell', weight: 0.6, pattern: /\bhistory\s+-c\b|\bunset\s+HISTFILE\b|>\s*~?\/?\S*\.bash_history/i },
  { id: 'privilege_escalation', category: 'dangerous_shell', weight: 0.5, pattern: /\bsudo\s+(su|-i|-s)\b|\bchmod\s+[ug]?\+s\b|\bsetcap\b/i },
  { id: 'system_shutdown', category: 'dangerous_shell', weight: 0.7, pattern: /\b(shutdown|reboot|halt|poweroff)\b(\s|$)|\bkill\s+-9\s+-1\b/i },
  // credential access
  { id: 'private_key_read', category: 'credential_access', weight: 0.9, pattern: /\.ssh\/(id_[a-z0-9]+|identity)(?!\.pub)\b|\.pem\b|\.key\b|BEGIN (RSA |OPENSSH |EC )?PRIVATE KEY/i },
  { id: 'cloud_credentials_read', category: 'credential_access', weight: 0.9, pattern: /\.aws\/credentials|\.config\/gcloud|\.azure\/|\.kube\/config|\.docker\/config\.json|\.netrc\b|\.git-credentials|\.npmrc\b|\.pypirc\b/i },
  { id: 'shadow_file_read', category: 'credential_access', weight: 0.9, pattern: /\/etc\/(shadow|gshadow|sudoers)\b/i },
  { id: 'process_environment_dump', category: 'credential_access', weight: 0.6, pattern: /\/proc\/(self|\d+)\/environ|^\s*(printenv|env)\s*$|\b(printenv|env)\s*\|/i },
  { id: 'secret_variable_read', category: 'credential_access', weight: 0.7, pattern: /\$\{?[A-Z0-9_]*(SECRET|TOKEN|PASSWORD|PASSWD|API_KEY|PRIVATE_KEY)[A-Z0-9_]*\}?/ },
  { id: 'dotenv_read', category: 'credential_access', weight: 0.5, pattern: /(^|[\s/'"])\.env(\.[a-z]+)?(?=$|[\s'";|&)])/i },
  // suspicious network
  { id: 'cloud_metadata_endpoint', category: 'suspicious_network', weight: 0.95, pattern: /169\.254\.169\.254|metadata\.google\.internal|100\.100\.100\.200|fd00:ec2::254/i },
  { id: 'raw_ip_download', category: 'suspicious_network', weight: 0.5, pattern: /\b(curl|wget|fetch)\b[^|;]*\bhttps?:\/\/\d{1,3}(\.\d{1,3}){3}/i },
  { id: 'netcat_listener', category: 'suspicious_network', weight: 0.7, pattern: /\b(nc|ncat|netcat)\b[^|;]*\s-l|\bsocat\b[^|;]*\blisten:/i },
  { id: 'paste_or_tunnel_service', category: 'suspicious_network', weight: 0.6, pattern: /pastebin\.com|transfer\.sh|ngrok(\.io|-free\.app)?|0x0\.st|termbin\.com|requestbin|webhook\.site|serveo\.net|localtunnel/i },
  { id: 'dns_exfiltration_tool', category: 'suspicious_network', weight: 0.7, pattern: /\b(iodine|dnscat2?|dns2tcp)\b/i },
  { id: 'data_upload', category: 'suspicious_network', weight: 0.4, pattern: /\bcurl\b[^|;]*(\s-T\s|--upload-file|\s-F\s+\S*=@|--data-binary\s+@)|\bscp\s+\S+\s+\S+@\S+:/i },
];

/** The text of an input to scan: every string in it (shell commands, file paths, URLs, queries). */
function textOf(input: unknown, out: string[] = [], depth = 0): string[] {
  if (depth > 16) return out;
  if (typeof input === 'string') out.push(input);
  else if (Array.isArray(input)) for (const v of input) textOf(v, out, depth + 1);
  else if (input && typeof input === 'object') for (const v of Object.values(input)) textOf(v, out, depth + 1);
  return out;
}

export function assessToolUse(name: string, input: unknown): AnomalyAssessment {
  const text = textOf(input).join('\n').slice(0, 64 * 1024);
  const signals: AnomalySignal[] = [];
  for (const r of rules) {
    if (r.pattern.test(text)) signals.push({ id: r.id, category: r.category, weight: r.weight });
  }
  // file tools reading a credential path are as suspicious as a shell reading it; nothing extra for the name itself
  void name;
  const score = 1 - signals.reduce((p, s) => p * (1 - s.weight), 1);
  return { score: Math.round(score * 1000) / 1000, signals };
}

/** The built-in tool family of a platform tool name (the `method` of an observed record). */
export function toolFamily(name: string): 'shell' | 'file' | 'web' | 'other' {
  const n = name.toLowerCase();
  if (['bash', 'shell', 'sh', 'terminal', 'run_command'].includes(n)) return 'shell';
  if (['read', 'write', 'edit', 'glob', 'grep', 'view', 'create', 'str_replace', 'multi_edit', 'ls'].includes(n)) return 'file';
  if (['web_fetch', 'web_search', 'fetch', 'browser'].includes(n)) return 'web';
  return 'other';
}
