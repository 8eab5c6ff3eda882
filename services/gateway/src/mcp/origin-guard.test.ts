import { originRefusal, parseOrigins } from './origin-guard';

const local = { publicBaseUrl: 'http://127.0.0.1:8080/api', allowedOrigins: [], local: true };
const prod = { publicBaseUrl: 'https://agw.example.com/api', allowedOrigins: parseOrigins('https://console.example.com, https://tools.example.org:8443'), local: false };

describe('MCP Origin and Host validation', () => {
  test('no Origin (a non-browser client) passes; the own origin passes', () => {
    expect(originRefusal(prod, undefined, 'agw.example.com')).toBeNull();
    expect(originRefusal(prod, 'https://agw.example.com', 'agw.example.com')).toBeNull();
  });

  test('MCP_ALLOWED_ORIGINS pass; any other origin is refused, also one that only matches the Host', () => {
    expect(originRefusal(prod, 'https://console.example.com', 'agw.example.com')).toBeNull();
    expect(originRefusal(prod, 'https://tools.example.org:8443', 'agw.example.com')).toBeNull();
    expect(originRefusal(prod, 'https://tools.example.org', 'agw.example.com')).toMatch(/may not use/);
    expect(originRefusal(prod, 'https://evil.example.com', 'evil.example.com')).toMatch(/may not use/);
    expect(originRefusal(prod, 'null', 'agw.example.com')).toMatch(/may not use/);
    expect(originRefusal(prod, 'http://localhost:3000', 'agw.example.com')).toMatch(/may not use/);
  });

  test('local profile: loopback origins and hosts pass; a rebound name is refused by Host even without Origin', () => {
    expect(originRefusal(local, 'http://localhost:5173', '127.0.0.1:8080')).toBeNull();
    expect(originRefusal(local, 'http://[::1]:9000', '[::1]:9000')).toBeNull();
    expect(originRefusal(local, undefined, 'localhost:8080')).toBeNull();
    expect(originRefusal(local, 'http://evil.example.com', 'evil.example.com')).toMatch(/Origin/);
    expect(originRefusal(local, undefined, 'evil.example.com')).toMatch(/DNS rebinding/);
    expect(originRefusal(local, undefined, 'evil.example.com:8080')).toMatch(/DNS rebinding/);
  });

  test('MCP_ALLOWED_ORIGINS takes origins only', () => {
    expect(() => parseOrigins('https://a.example.com/path')).toThrow(/not an origin/);
    expect(parseOrigins(' https://A.example.com:443 ,')).toEqual(['https://a.example.com']);
  });
});
