/**
 * The custom Rego editor: CodeMirror 6 (view, state, commands, language, lint) with a small stream mode
 * for Rego v1 (keywords, builtins-as-identifiers, strings, raw strings, numbers, comments, operators).
 * Compile errors from the server (`policy.rego:LINE:COL: message`) are shown as diagnostics at the line.
 */
import { defaultKeymap, history, historyKeymap, indentWithTab } from '@codemirror/commands';
import { HighlightStyle, StreamLanguage, syntaxHighlighting } from '@codemirror/language';
import { type Diagnostic, lintGutter, setDiagnostics } from '@codemirror/lint';
import { EditorState } from '@codemirror/state';
import { EditorView, keymap, lineNumbers } from '@codemirror/view';
import { tags as t } from '@lezer/highlight';
import { useEffect, useRef } from 'preact/hooks';

const KEYWORDS = new Set(['package', 'import', 'default', 'not', 'with', 'as', 'some', 'every', 'in', 'if', 'contains', 'else']);
const ATOMS = new Set(['true', 'false', 'null', 'input', 'data']);

export const rego = StreamLanguage.define<{ inRaw: boolean }>({
  name: 'rego',
  startState: () => ({ inRaw: false }),
  token(stream, state) {
    if (state.inRaw) {
      if (stream.skipTo('`')) {
        stream.next();
        state.inRaw = false;
      } else stream.skipToEnd();
      return 'string';
    }
    if (stream.eatSpace()) return null;
    if (stream.match('#')) {
      stream.skipToEnd();
      return 'comment';
    }
    if (stream.match('`')) {
      state.inRaw = true;
      return 'string';
    }
    if (stream.match(/^"(?:[^"\\]|\\.)*"?/)) return 'string';
    if (stream.match(/^-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?/)) return 'number';
    if (stream.match(/^:=|^==|^!=|^<=|^>=|^[=<>+\-*/%|&]/)) return 'operator';
    const word = stream.match(/^[A-Za-z_][A-Za-z0-9_]*/) as RegExpMatchArray | null;
    if (word) {
      const w = word[0];
      if (KEYWORDS.has(w)) return 'keyword';
      if (ATOMS.has(w)) return 'atom';
      if (stream.peek() === '(') return 'function';
      return 'variableName';
    }
    stream.next();
    return null;
  },
  languageData: { commentTokens: { line: '#' } },
});

// colours chosen for >= 4.5:1 contrast on white
const style = HighlightStyle.define([
  { tag: t.keyword, color: '#7a1fa2', fontWeight: '600' },
  { tag: t.atom, color: '#005cc5' },
  { tag: t.string, color: '#0b6b2e' },
  { tag: t.number, color: '#9a4a00' },
  { tag: t.comment, color: '#5c6670', fontStyle: 'italic' },
  { tag: t.operator, color: '#a3142c' },
  { tag: [t.function(t.variableName), t.function(t.name)], color: '#1f4fa8' },
]);

/** `policy.rego:5:1: rego_parse_error: ...` -> {line, col, message} */
export function parseCompileError(msg: string): { line: number; col: number; message: string } | null {
  const m = /policy\.rego:(\d+):(\d+):\s*(.*)$/s.exec(msg);
  return m ? { line: Number(m[1]), col: Number(m[2]), message: m[3] } : null;
}

export function RegoEditor({ value, onChange, errors, labelId }: { value: string; onChange: (v: string) => void; errors: string[]; labelId: string }) {
  const host = useRef<HTMLDivElement>(null);
  const view = useRef<EditorView | null>(null);
  const changeRef = useRef(onChange);
  changeRef.current = onChange;

  useEffect(() => {
    const v = new EditorView({
      parent: host.current!,
      state: EditorState.create({
        doc: value,
        extensions: [
          // the <style> element CodeMirror adds carries the page's CSP nonce (the gateway's console-static.ts)
          EditorView.cspNonce.of(document.querySelector<HTMLMetaElement>('meta[name="csp-nonce"]')?.content ?? ''),
          lineNumbers(),
          history(),
          lintGutter(),
          rego,
          syntaxHighlighting(style),
          keymap.of([...defaultKeymap, ...historyKeymap, indentWithTab]),
          EditorView.contentAttributes.of({ 'aria-labelledby': labelId, 'aria-multiline': 'true' }),
          EditorView.updateListener.of((u) => {
            if (u.docChanged) changeRef.current(u.state.doc.toString());
          }),
        ],
      }),
    });
    view.current = v;
    return () => v.destroy();
  }, []);

  // an outside change of the source (template switch, reload) replaces the document
  useEffect(() => {
    const v = view.current;
    if (v && v.state.doc.toString() !== value) v.dispatch({ changes: { from: 0, to: v.state.doc.length, insert: value } });
  }, [value]);

  useEffect(() => {
    const v = view.current;
    if (!v) return;
    const doc = v.state.doc;
    const diagnostics: Diagnostic[] = errors.flatMap((msg) => {
      const e = parseCompileError(msg);
      if (!e) return [];
      const line = doc.line(Math.min(Math.max(1, e.line), doc.lines));
      const from = Math.min(line.from + Math.max(0, e.col - 1), line.to);
      return [{ from, to: line.to > from ? line.to : from, severity: 'error' as const, message: e.message }];
    });
    v.dispatch(setDiagnostics(v.state, diagnostics));
  }, [errors]);

  return <div class="editor" ref={host} />;
}
