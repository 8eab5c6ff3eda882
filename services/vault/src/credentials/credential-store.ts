/**
 * Tool credentials: the value is sealed by the tenant's credentials key inside the HSM before it
 * reaches Postgres (AAD `agw:cred:v1|<tenant>|<tool_id>|<name>`), is never returned and never logged,
 * and is opened only by the brokered executor. Transport-free.
 */
import { InputError, NotFoundError } from '@agw/shared';
import { type TargetGuard, TargetRejected } from '../broker/target-guard';
import { type Keyring, credentialsKeyId } from '../keys/keyring';
import type { CredentialMeta, CredentialRepository, CredentialRow } from './credential.repository';

export const CREDENTIAL_TYPES = ['bearer', 'api_key', 'basic'] as const;
export type CredentialType = (typeof CREDENTIAL_TYPES)[number];
export const UPSTREAM_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;
const HEADER_NAME = /^[A-Za-z0-9!#$%&'*+.^_`|~-]{1,128}$/;
const FORBIDDEN_HEADERS = new Set(['host', 'content-length', 'transfer-encoding', 'connection', 'cookie', 'content-type']);

export interface RegisterInput {
  tool_id: string;
  name: string;
  value: string;
  credential_type?: string;
  upstream_url?: string;
  upstream_method?: string;
  header_name?: string;
}

const credentialAad = (tenantId: string, toolId: string, name: string) => `agw:cred:v1|${tenantId}|${toolId}|${name}`;

export class CredentialStore {
  constructor(
    private readonly keyring: Keyring,
    private readonly credentials: CredentialRepository,
    private readonly guard: TargetGuard,
  ) {}

  async register(tenantId: string, input: RegisterInput): Promise<CredentialMeta> {
    const at = (f: string, msg: string, type = 'value_error') => InputError.field(f, msg, type);
    if (!input.tool_id || input.tool_id.length > 256) throw at('tool_id', 'tool_id must be 1-256 characters', 'string_too_long');
    if (!input.name || input.name.length > 256) throw at('name', 'name must be 1-256 characters', 'string_too_long');
    if (!input.value || input.value.length > 8192) throw at('value', 'value must be 1-8192 characters', 'string_too_long');
    const type = (input.credential_type || 'api_key') as CredentialType;
    if (!CREDENTIAL_TYPES.includes(type)) throw at('credential_type', `credential_type must be one of ${CREDENTIAL_TYPES.join(', ')}`, 'enum');
    if (type === 'basic' && !input.value.includes(':')) throw at('value', 'a basic credential value is "user:password"');
    if (/[\r\n]/.test(input.value)) throw at('value', 'value must not contain line breaks');
    const method = (input.upstream_method || 'POST').toUpperCase();
    if (!(UPSTREAM_METHODS as readonly string[]).includes(method)) throw at('upstream_method', `upstream_method must be one of ${UPSTREAM_METHODS.join(', ')}`, 'enum');
    let headerName: string | null = null;
    if (type === 'api_key') {
      headerName = input.header_name || 'X-API-Key';
      if (!HEADER_NAME.test(headerName) || FORBIDDEN_HEADERS.has(headerName.toLowerCase())) throw at('header_name', 'header_name must be an HTTP header name (not Host, Cookie, Content-*)');
    } else if (input.header_name) throw at('header_name', 'header_name only applies to credential_type api_key');
    let upstream: string | null = null;
    if (input.upstream_url) {
      try {
        upstream = this.guard.parse(tenantId, input.upstream_url).toString();
      } catch (e) {
        if (e instanceof TargetRejected) throw at('upstream_url', e.reason);
        throw e;
      }
    }
    const keyId = credentialsKeyId(tenantId);
    await this.keyring.ensure(tenantId, keyId, 'credentials');
    const sealed = await this.keyring.seal(keyId, Buffer.from(input.value, 'utf8'), credentialAad(tenantId, input.tool_id, input.name));
    return this.credentials.upsert(tenantId, {
      tool_id: input.tool_id,
      name: input.name,
      credential_type: type,
      upstream_url: upstream,
      upstream_method: method,
      header_name: headerName,
      key_id: keyId,
      sealed,
    });
  }

  list(tenantId: string): Promise<CredentialMeta[]> {
    return this.credentials.list(tenantId);
  }

  async status(tenantId: string, toolId: string): Promise<CredentialMeta | undefined> {
    const row = await this.credentials.forTool(tenantId, toolId);
    if (!row) return undefined;
    const { sealed: _sealed, ...meta } = row;
    return meta;
  }

  async delete(tenantId: string, toolId: string, name: string): Promise<CredentialMeta> {
    const row = await this.credentials.delete(tenantId, toolId, name);
    if (!row) throw new NotFoundError('Credential not found');
    return row;
  }

  forTool(tenantId: string, toolId: string): Promise<CredentialRow | undefined> {
    return this.credentials.forTool(tenantId, toolId);
  }

  /** The plaintext value, for the brokered executor only. */
  async open(tenantId: string, c: CredentialRow): Promise<string> {
    return (await this.keyring.open(c.key_id, c.sealed, credentialAad(tenantId, c.tool_id, c.name))).toString('utf8');
  }
}
