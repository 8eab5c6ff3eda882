import { whyRefused } from './sso.service';

describe('why an answer of the identity provider was refused', () => {
  it("names openid-client's message, its cause's check and the provider's error", () => {
    const check = Object.assign(new Error('unexpected "iss" (issuer) response parameter value'), { code: 'OAUTH_JSON_ATTRIBUTE_COMPARISON_FAILED' });
    expect(whyRefused(new Error('invalid response encountered', { cause: check }))).toBe('invalid response encountered (unexpected "iss" (issuer) response parameter value)');
    const body = Object.assign(new Error('server responded with an error in the response body'), { error: 'invalid_grant', error_description: 'grant request is invalid' });
    expect(whyRefused(body)).toBe('server responded with an error in the response body (invalid_grant: grant request is invalid)');
    expect(whyRefused('boom')).toBe('boom');
  });
});
