/**
 * Where the e2e fleet runs and the extra environment it is started with. Features add the settings
 * their tests need (e.g. allowing loopback webhook targets) to E2E_ENV.
 */
export const E2E_OFFSET = 10000;
export const E2E_BASE_URL = `http://127.0.0.1:${8080 + E2E_OFFSET}/api`;
export const E2E_CONTROL_URL = `http://127.0.0.1:${8999 + E2E_OFFSET}`;
export const E2E_DATABASE_URL = 'postgres://postgres@127.0.0.1:5432/agw_e2e';
export const E2E_STREAM_PREFIX = 'E2E';

export const E2E_ENV: Record<string, string> = {
  LOG_LEVEL: 'info',
  AGW_PROFILE: 'local',
  ADMIN_EMAILS: 'admin@e2e.test',
};
