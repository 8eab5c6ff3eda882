/**
 * Public pages for visitors who are not signed in, rendered from the public endpoints only:
 * /public/{slug} (GET /api/dashboard/public/{slug}) and /transparency[/{tenant_id}] (GET /api/transparency…).
 * What a tenant publishes is aggregate only: decision counts by kind and period, chain verification
 * status, the latest signed tree head and anchor, the policy template name. A 404 means "not published".
 * A section the gateway could not read just now (named in `unavailable`) says so instead of showing nothing.
 */
import { useState } from 'preact/hooks';
import { api, ApiError, ok } from '../lib/api';
import type { PublicDashboardBody, TransparencyList } from '../lib/wire';
import { Alert, DataTable, Time, useData } from '../lib/ui';

type Section = PublicDashboardBody['unavailable'][number];

function Unavailable({ what }: { what: string }) {
  return <p class="muted">{what} cannot be read just now; try again in a moment.</p>;
}

function Counts({ decisions }: { decisions: NonNullable<PublicDashboardBody['decisions']> }) {
  const periods: [string, Record<string, number>][] = [
    ['Today', decisions.totals.today],
    ['Last 7 days', decisions.totals.last_7_days],
    [`Last ${decisions.period_days} days`, decisions.totals.last_30_days],
  ];
  const kinds = [...new Set(periods.flatMap(([, c]) => Object.keys(c)))].sort();
  if (!kinds.length) return <p>No decisions in the last {decisions.period_days} days.</p>;
  return (
    <DataTable caption="Decisions by kind and period" columns={['Period', ...kinds]}>
      {periods.map(([period, c]) => (
        <tr key={period}>
          <th scope="row">{period}</th>
          {kinds.map((k) => (
            <td key={k}>{c[k] ?? 0}</td>
          ))}
        </tr>
      ))}
    </DataTable>
  );
}

function PublicReport({ body }: { body: PublicDashboardBody }) {
  const down = (s: Section) => body.unavailable.includes(s);
  const head = body.signed_tree_head;
  const anchor = body.anchor;
  return (
    <div class="stack">
      <div class="card">
        <h2>{body.tenant.name}</h2>
        <p>
          Policy template: <strong>{body.policy_template ?? '—'}</strong>
        </p>
        <p>
          Audit chain:{' '}
          {body.chain ? (
            <>
              {body.chain.valid ? <span class="badge badge-allow">verified</span> : <span class="badge badge-deny">broken</span>} ({body.chain.record_count} records)
            </>
          ) : (
            '—'
          )}
        </p>
        {down('chain') && <Unavailable what="The chain's status" />}
        {down('policy_template') && <Unavailable what="The policy template" />}
        <p class="muted small">
          Generated <Time iso={body.generated_at} />
        </p>
      </div>
      <div class="card">
        <h3>Decisions</h3>
        {body.decisions ? <Counts decisions={body.decisions} /> : down('decisions') ? <Unavailable what="Decision counts" /> : <p>—</p>}
      </div>
      <div class="card">
        <h3>Latest signed tree head</h3>
        {head ? (
          <>
            <p>
              {head.tree_size} records, root <code class="small">{head.merkle_root}</code>, signed <Time iso={head.signed_at} /> by <code class="small">{head.key_name}</code>
            </p>
            <pre class="small" aria-label="Signed checkpoint">{head.checkpoint}</pre>
            {body.verifier_key && (
              <p>
                Verifier key: <code class="small">{body.verifier_key}</code>
              </p>
            )}
          </>
        ) : down('signed_tree_head') ? (
          <Unavailable what="The signed tree head" />
        ) : (
          <p>None yet.</p>
        )}
        <h3>Latest anchor</h3>
        {anchor ? (
          <p>
            Root <code class="small">{anchor.merkle_root}</code> ({anchor.tree_size} records) in transaction <code class="small">{anchor.tx_hash}</code> on {anchor.network}, block{' '}
            {anchor.block_number}, <Time iso={anchor.anchored_at} />
            {anchor.explorer_tx_url ? (
              <>
                {' '}
                (<a href={anchor.explorer_tx_url} rel="noopener noreferrer" target="_blank">explorer</a>)
              </>
            ) : null}
          </p>
        ) : down('anchor') ? (
          <Unavailable what="The anchor" />
        ) : (
          <p>None yet.</p>
        )}
      </div>
    </div>
  );
}

/** The body, or null for "not published" (404; 401 from a gateway without the public endpoints). */
async function orNull<T>(load: () => Promise<T>): Promise<T | null> {
  try {
    return await load();
  } catch (e) {
    if (e instanceof ApiError && (e.status === 404 || e.status === 401)) return null;
    throw e;
  }
}

export function PublicDashboard({ slug }: { slug: string }) {
  const { data, error, loading } = useData(() => orNull(async () => ok(await api.GET('/dashboard/public/{slug}', { params: { path: { slug } } })) as PublicDashboardBody), [slug]);
  return (
    <section aria-labelledby="public-title">
      <h1 id="public-title">Public governance report: {slug}</h1>
      {loading && <p>Loading…</p>}
      {error && <Alert>{error}</Alert>}
      {!loading && !error && data === null && <Alert kind="info">Not published: this tenant has not opted in to a public page.</Alert>}
      {data && <PublicReport body={data} />}
    </section>
  );
}

function TransparencyListPage() {
  const [after, setAfter] = useState<string | undefined>(undefined);
  const [earlier, setEarlier] = useState<(string | undefined)[]>([]);
  const { data, error, loading } = useData(async () => ok(await api.GET('/transparency', { params: { query: { limit: 50, after } } })) as TransparencyList, [after]);
  return (
    <>
      {loading && <p>Loading…</p>}
      {error && <Alert>{error}</Alert>}
      {data && !data.tenants.length && <Alert kind="info">No tenant publishes a report yet.</Alert>}
      {data && data.tenants.length > 0 && (
        <DataTable caption="Tenants that publish their governance report" columns={['Tenant', 'Records in the latest signed head', 'Signed']}>
          {data.tenants.map((t) => (
            <tr key={t.tenant_id}>
              <th scope="row">
                <a href={`/public/${t.slug}`}>{t.name}</a>
              </th>
              <td>{t.signed_tree_head ? t.signed_tree_head.tree_size : '—'}</td>
              <td>{t.signed_tree_head ? <Time iso={t.signed_tree_head.signed_at} /> : '—'}</td>
            </tr>
          ))}
        </DataTable>
      )}
      <div class="row">
        {earlier.length > 0 && (
          <button type="button" class="secondary" onClick={() => (setAfter(earlier[earlier.length - 1]), setEarlier(earlier.slice(0, -1)))}>
            Previous page
          </button>
        )}
        {data?.next_after && (
          <button type="button" class="secondary" onClick={() => (setEarlier([...earlier, after]), setAfter(data.next_after ?? undefined))}>
            Next page
          </button>
        )}
      </div>
    </>
  );
}

function TransparencyTenant({ tenantId }: { tenantId: string }) {
  const { data, error, loading } = useData(
    () => orNull(async () => ok(await api.GET('/transparency/{tenant_id}', { params: { path: { tenant_id: tenantId } } })) as PublicDashboardBody),
    [tenantId],
  );
  return (
    <>
      {loading && <p>Loading…</p>}
      {error && <Alert>{error}</Alert>}
      {!loading && !error && data === null && <Alert kind="info">Not published.</Alert>}
      {data && <PublicReport body={data} />}
    </>
  );
}

export function Transparency({ tenantId }: { tenantId?: string }) {
  return (
    <section aria-labelledby="transparency-title">
      <h1 id="transparency-title">Transparency{tenantId ? `: ${tenantId}` : ''}</h1>
      {tenantId ? <TransparencyTenant tenantId={tenantId} /> : <TransparencyListPage />}
    </section>
  );
}
