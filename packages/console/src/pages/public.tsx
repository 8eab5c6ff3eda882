/**
 * Public pages for visitors who are not signed in, rendered from the public endpoints only:
 * /public/{slug} (GET /api/dashboard/public/{slug}) and /transparency[/{tenant_id}] (GET /api/transparency…).
 * What a tenant publishes is aggregate only: decision counts by kind and period, chain verification
 * status, the latest signed tree head and anchor, the policy template name. A 404 means "not published".
 * The paths are not in the generated document until the public endpoints land, so they are called
 * through the same client without path typing.
 */
import { api, ApiError, ok } from '../lib/api';
import { Alert, Json, useData } from '../lib/ui';

type Untyped = { GET: (path: string, init?: unknown) => Promise<{ data?: unknown; error?: unknown; response: Response }> };
const publicApi = api as unknown as Untyped;

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => !!v && typeof v === 'object' && !Array.isArray(v);
const pick = (o: Obj, ...keys: string[]) => keys.map((k) => o[k]).find((v) => v !== undefined);

function Counts({ value }: { value: unknown }) {
  // {period: {kind: n}} or {kind: n} or [{period, kind, count}]
  if (Array.isArray(value)) return <Json value={value} label="Decision counts" />;
  if (!isObj(value)) return <p>—</p>;
  const nested = Object.values(value).every(isObj);
  const rows = nested ? Object.entries(value as Record<string, Obj>) : [['all', value] as [string, Obj]];
  const kinds = [...new Set(rows.flatMap(([, r]) => Object.keys(r)))];
  return (
    <div class="table-wrap">
      <table>
        <caption>Decisions by kind and period</caption>
        <thead>
          <tr>
            <th scope="col">Period</th>
            {kinds.map((k) => (
              <th scope="col" key={k}>{k}</th>
            ))}
          </tr>
        </thead>
        <tbody>
          {rows.map(([period, r]) => (
            <tr key={period}>
              <th scope="row">{period}</th>
              {kinds.map((k) => (
                <td key={k}>{String(r[k] ?? 0)}</td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

function PublicReport({ body }: { body: Obj }) {
  const chain = pick(body, 'chain', 'chain_verification', 'chain_status', 'chain_valid');
  const head = pick(body, 'tree_head', 'latest_tree_head', 'signed_tree_head', 'checkpoint');
  const anchor = pick(body, 'anchor', 'latest_anchor');
  const valid = isObj(chain) ? (chain.valid ?? chain.verified) : chain;
  return (
    <div class="stack">
      <div class="card">
        <h2>{String(pick(body, 'tenant_name', 'name', 'slug') ?? 'Tenant')}</h2>
        <p>
          Policy template: <strong>{String(pick(body, 'policy_template', 'template') ?? '—')}</strong>
        </p>
        <p>
          Audit chain:{' '}
          {valid === undefined ? '—' : valid ? <span class="badge badge-allow">verified</span> : <span class="badge badge-deny">broken</span>}
        </p>
      </div>
      <div class="card">
        <Counts value={pick(body, 'decision_counts', 'decisions', 'counts')} />
      </div>
      <div class="card">
        <h3>Latest signed tree head</h3>
        {head ? <Json value={head} /> : <p>None yet.</p>}
        <h3>Latest anchor</h3>
        {isObj(anchor) ? (
          <p>
            Root <code class="small">{String(anchor.merkle_root ?? '')}</code> in transaction <code class="small">{String(anchor.tx_hash ?? '')}</code>
            {typeof anchor.explorer_tx_url === 'string' && anchor.explorer_tx_url ? (
              <>
                {' '}
                (<a href={anchor.explorer_tx_url} rel="noopener noreferrer" target="_blank">explorer</a>)
              </>
            ) : null}
          </p>
        ) : (
          <p>None yet.</p>
        )}
      </div>
    </div>
  );
}

async function load(path: string): Promise<Obj | null> {
  try {
    return ok(await publicApi.GET(path)) as Obj;
  } catch (e) {
    // 404: not published (or no such tenant); 401: a gateway without the public endpoints asks for credentials
    if (e instanceof ApiError && (e.status === 404 || e.status === 401)) return null;
    throw e;
  }
}

export function PublicDashboard({ slug }: { slug: string }) {
  const { data, error, loading } = useData(() => load(`/dashboard/public/${encodeURIComponent(slug)}`), [slug]);
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

export function Transparency({ tenantId }: { tenantId?: string }) {
  const { data, error, loading } = useData(() => load(tenantId ? `/transparency/${encodeURIComponent(tenantId)}` : '/transparency'), [tenantId]);
  const tenants = data && Array.isArray(data.tenants) ? (data.tenants as Obj[]) : null;
  return (
    <section aria-labelledby="transparency-title">
      <h1 id="transparency-title">Transparency{tenantId ? `: ${tenantId}` : ''}</h1>
      {loading && <p>Loading…</p>}
      {error && <Alert>{error}</Alert>}
      {!loading && !error && data === null && <Alert kind="info">Not published.</Alert>}
      {tenants && (
        <ul>
          {tenants.map((t) => (
            <li key={String(t.tenant_id)}>
              <a href={`/transparency/${String(t.tenant_id)}`}>{String(t.tenant_name ?? t.slug ?? t.tenant_id)}</a>
            </li>
          ))}
        </ul>
      )}
      {data && !tenants && <PublicReport body={data} />}
    </section>
  );
}
