/** Loads the Rego editor (CodeMirror, most of the console's bytes) only when the policy page shows it. */
import { useEffect, useState } from 'preact/hooks';
import type { RegoEditor as Editor } from './rego-editor';

type Props = Parameters<typeof Editor>[0];
let loaded: Promise<typeof Editor> | undefined;

export function LazyRegoEditor(props: Props) {
  const [C, setC] = useState<typeof Editor | null>(null);
  useEffect(() => {
    loaded ??= import('./rego-editor').then((m) => m.RegoEditor);
    void loaded.then((c) => setC(() => c));
  }, []);
  return C ? <C {...props} /> : <p class="muted">Loading the editor…</p>;
}
