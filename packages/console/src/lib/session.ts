/**
 * The session token is held in memory only (a module variable): never in localStorage, sessionStorage or
 * a script-readable cookie, so no other script of the origin can read it and no request carries it unless
 * the console adds it (no CSRF surface). A reload resumes the session from the HttpOnly refresh cookie
 * (lib/session-resume.ts); the token also ends at its `expires_in`, checked by a timer, and on any 401.
 * docs/console.md explains the choice.
 */
type Listener = () => void;

class Session {
  token: string | null = null;
  expiresAt = 0;
  reason: string | null = null;
  /** true until the start-up attempt to resume from the refresh cookie has answered */
  restoring = true;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private listeners = new Set<Listener>();

  start(token: string, expiresInSeconds: number): void {
    this.token = token;
    this.reason = null;
    this.expiresAt = Date.now() + expiresInSeconds * 1000;
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.expire(), Math.max(0, expiresInSeconds * 1000));
    this.emit();
  }

  end(reason: string | null = null): void {
    this.token = null;
    this.expiresAt = 0;
    this.reason = reason;
    clearTimeout(this.timer);
    this.emit();
  }

  restored(): void {
    this.restoring = false;
    this.emit();
  }

  expire(): void {
    this.end('Your session has expired. Please sign in again.');
  }

  subscribe(l: Listener): () => void {
    this.listeners.add(l);
    return () => this.listeners.delete(l);
  }

  private emit(): void {
    for (const l of this.listeners) l();
  }
}

export const session = new Session();
