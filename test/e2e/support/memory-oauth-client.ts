/** An MCP client's OAuth state kept in memory (as a desktop client keeps it on disk), for the SDK's client in tests. */
import type { OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import type { OAuthClientInformationMixed, OAuthClientMetadata, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';

export class MemoryAuthProvider implements OAuthClientProvider {
  clientMetadataUrl?: string;
  client?: OAuthClientInformationMixed;
  saved?: OAuthTokens;
  verifier = '';
  /** where the SDK sent the user to authorize (the test follows it) */
  authorizationUrl?: URL;

  constructor(
    private readonly redirect: () => string,
    private readonly clientName: string,
  ) {}

  get redirectUrl() {
    return this.redirect();
  }
  get clientMetadata(): OAuthClientMetadata {
    return { client_name: this.clientName, redirect_uris: [this.redirect()], grant_types: ['authorization_code', 'refresh_token'], response_types: ['code'], token_endpoint_auth_method: 'none' };
  }
  clientInformation() {
    return this.client;
  }
  saveClientInformation(c: OAuthClientInformationMixed) {
    this.client = c;
  }
  tokens() {
    return this.saved;
  }
  saveTokens(t: OAuthTokens) {
    this.saved = t;
  }
  redirectToAuthorization(url: URL) {
    this.authorizationUrl = url;
  }
  saveCodeVerifier(v: string) {
    this.verifier = v;
  }
  codeVerifier() {
    return this.verifier;
  }
}
