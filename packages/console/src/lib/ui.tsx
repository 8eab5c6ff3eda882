/** Small shared pieces: alerts, fields, tables, relative times, JSON blocks, the async-data hook. */
import type { ComponentChildren } from 'preact';
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { messageOf } from './api';

export function Alert({ kind = 'error', children }: { kind?: 'error' | 'ok' | 'info' | 'warn'; children: ComponentChildren }) {
  return (
    <div class={`alert alert-${kind}`} role={kind === 'error' ? 'alert' : 'status'}>
      {children}
    </div>
  );
}

export function ago(iso: string | null | undefined, now = Date.now()): string {
  if (!iso) return '—';
  const s = Math.max(0, Math.round((now - Date.parse(iso)) / 1000));
  if (s < 60) return `${s}s ago`;
  if (s < 3600) return `${Math.floor(s / 60)}m ago`;
  if (s < 86400) return `${Math.floor(s / 3600)}h ago`;
  return `${Math.floor(s / 86400)}d ago`;
}

export const Time = ({ iso }: { iso: string | null | undefined }) => (iso ? <time datetime={iso} title={iso}>{ago(iso)}</time> : <span>—</span>);

export const Json = ({ value, label }: { value: unknown; label?: string }) => (
  <pre class="json" aria-label={label} tabIndex={0}>
    {JSON.stringify(value, null, 2)}
  </pre>
);

export function Badge({ value }: { value: string | null | undefined }) {
  const v = value ?? '—';
  return <span class={`badge badge-${v.replace(/[^a-z_]/gi, '')}`}>{v}</span>;
}

/** Loads data, reloads on demand, optionally every `pollMs` (the inbox's short poll). */
export function useData<T>(load: () => Promise<T>, deps: unknown[] = [], pollMs?: number) {
  const [data, setData] = useState<T | undefined>();
  const [error, setError] = useState<string | null>(null);
  const [loading, setLoading] = useState(true);
  const loadRef = useRef(load);
  loadRef.current = load;
  const reload = useCallback(async () => {
    try {
      const d = await loadRef.current();
      setData(d);
      setError(null);
    } catch (e) {
      setError(messageOf(e));
    } finally {
      setLoading(false);
    }
  }, []);
  useEffect(() => {
    setLoading(true);
    void reload();
    if (!pollMs) return;
    const t = setInterval(() => {
      if (document.visibilityState === 'visible') void reload();
    }, pollMs);
    return () => clearInterval(t);
  }, deps);
  return { data, error, loading, reload, setData };
}

/** A narrow card of its own page (sign-in, sign-up, an invitation): the heading `title` labels the section. */
export function NarrowCard({ id, title, children }: { id: string; title: string; children: ComponentChildren }) {
  return (
    <section class="card narrow" aria-labelledby={id}>
      <h1 id={id}>{title}</h1>
      {children}
    </section>
  );
}

/** The way on once an account exists: to the sign-in page. */
export const ContinueToSignIn = () => (
  <a class="button" href="/signin">
    Continue to sign in
  </a>
);

/**
 * A table in its scrolling wrapper: a caption (for screen readers only when `captionHidden`), a heading per
 * column, an unnamed last column for row actions when `actions` is set, and the rows as children.
 */
export function DataTable(p: {
  caption: ComponentChildren;
  captionHidden?: boolean;
  columns: string[];
  actions?: boolean;
  /** rows turn into stacked cards on narrow screens */
  stacked?: boolean;
  wrapClass?: string;
  testId?: string;
  children: ComponentChildren;
}) {
  return (
    <div class={p.wrapClass ? `table-wrap ${p.wrapClass}` : 'table-wrap'}>
      <table class={p.stacked ? 'stacked' : undefined} data-testid={p.testId}>
        <caption class={p.captionHidden ? 'sr-only' : undefined}>{p.caption}</caption>
        <thead>
          <tr>
            {p.columns.map((c) => (
              <th key={c} scope="col">
                {c}
              </th>
            ))}
            {p.actions && (
              <th scope="col">
                <span class="sr-only">Actions</span>
              </th>
            )}
          </tr>
        </thead>
        <tbody>{p.children}</tbody>
      </table>
    </div>
  );
}

export function Field({ id, label, error, hint, children }: { id: string; label: string; error?: string; hint?: string; children: ComponentChildren }) {
  return (
    <div class={`field${error ? ' field-invalid' : ''}`}>
      <label for={id}>{label}</label>
      {children}
      {hint && !error && (
        <p class="hint" id={`${id}-hint`}>
          {hint}
        </p>
      )}
      {error && (
        <p class="field-error" id={`${id}-error`} role="alert">
          {error}
        </p>
      )}
    </div>
  );
}

/** A filter select: any (the empty value) or one of `options` (a value, or a value and its label). */
export function AnyOf({ id, label, value, options, onChange }: { id: string; label: string; value: string; options: (string | [string, string])[]; onChange: (value: string) => void }) {
  return (
    <Field id={id} label={label}>
      <select id={id} value={value} onChange={(e) => onChange(e.currentTarget.value)}>
        <option value="">any</option>
        {options.map((o) => {
          const [v, text] = typeof o === 'string' ? [o, o] : o;
          return (
            <option key={v} value={v}>
              {text}
            </option>
          );
        })}
      </select>
    </Field>
  );
}

export function Tabs({ tabs, value, onChange }: { tabs: { id: string; label: string }[]; value: string; onChange: (id: string) => void }) {
  return (
    <div role="tablist" class="tabs">
      {tabs.map((t) => (
        <button
          type="button"
          role="tab"
          id={`tab-${t.id}`}
          aria-selected={value === t.id}
          tabIndex={value === t.id ? 0 : -1}
          onClick={() => onChange(t.id)}
          onKeyDown={(e) => {
            const i = tabs.findIndex((x) => x.id === value);
            if (e.key === 'ArrowRight') onChange(tabs[(i + 1) % tabs.length].id);
            if (e.key === 'ArrowLeft') onChange(tabs[(i - 1 + tabs.length) % tabs.length].id);
          }}
        >
          {t.label}
        </button>
      ))}
    </div>
  );
}

/** A secret shown once (signup's API key, a rotated key, a webhook secret), with a copy button. */
export function ShownOnce({ label, value }: { label: string; value: string }) {
  const [copied, setCopied] = useState(false);
  return (
    <div class="shown-once" role="status">
      <p>
        <strong>{label}</strong> — shown once. Store it now: the gateway keeps only its hash.
      </p>
      <code data-testid="secret-value">{value}</code>
      <button
        type="button"
        onClick={() => {
          void navigator.clipboard?.writeText(value).then(() => setCopied(true));
        }}
      >
        {copied ? 'Copied' : 'Copy'}
      </button>
    </div>
  );
}

/**
 * A destructive action asked twice, in place: "<verb>…" opens "<verb> now" and Cancel (the caller holds
 * which row is open, so only one is at a time).
 */
export function ConfirmAction(p: { open: boolean; verb: string; openLabel: string; confirmLabel: string; onOpen: () => void; onCancel: () => void; onConfirm: () => void }) {
  return p.open ? (
    <span class="confirm" role="group" aria-label={p.confirmLabel}>
      <button type="button" class="danger" onClick={p.onConfirm}>
        {p.verb} now
      </button>
      <button type="button" class="secondary" onClick={p.onCancel}>
        Cancel
      </button>
    </span>
  ) : (
    <button type="button" class="secondary" aria-label={p.openLabel} onClick={p.onOpen}>
      {p.verb}…
    </button>
  );
}
