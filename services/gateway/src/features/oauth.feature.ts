/** OAuth 2.1 for the MCP endpoints (the authorization server, consents, grants): what its routes use. */
import type { McpOauthProvider } from '../oauth/mcp-oauth-provider';
import type { McpOauthUrls } from '../oauth/public-origins';

export interface OauthFeature {
  oauth: McpOauthProvider;
  oauthUrls: McpOauthUrls;
}
