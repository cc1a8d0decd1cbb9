/**
 * The credentials of one client and their refresh. A session's access JWT
 * lives 300 s: it is refreshed shortly before it expires, and once more when
 * the server answers 401 anyway (clock skew, revoked JWT). Refreshes are
 * single-flight: concurrent requests share one POST /api/users/refresh, which
 * matters because the server rotates the refresh token (the old one stops
 * working). Every change is reported through onChange so callers persist it;
 * a refused refresh ends the session (onChange(null)). Callers that share
 * stored credentials between processes pass `reload`, so a token another
 * process already rotated is adopted instead of refreshed a second time.
 */
import { type Credentials, sessionFromPair } from "./credentials.ts";
import type { TokenPair } from "./types.ts";

/** Refresh when less than this is left of the access JWT's life. */
export const REFRESH_MARGIN_MS = 30_000;

export type RefreshCall = (refreshToken: string) => Promise<{ status: number; pair: TokenPair | null }>;

export class Session {
  #credentials: Credentials | null;
  #refreshing: Promise<boolean> | null = null;

  constructor(
    credentials: Credentials | null,
    private readonly refresh: RefreshCall,
    private readonly onChange: (credentials: Credentials | null) => void | Promise<void> = () => {},
    private readonly now: () => number = Date.now,
    /** Reads the stored credentials again: another process (a second CLI run) may have refreshed them already. */
    private readonly reload?: () => Promise<Credentials | null>,
  ) {
    this.#credentials = credentials;
  }

  get credentials(): Credentials | null {
    return this.#credentials;
  }

  async set(credentials: Credentials | null): Promise<void> {
    this.#credentials = credentials;
    await this.onChange(credentials);
  }

  /** The bearer token to send now, refreshed first when it is about to expire; null without credentials. */
  async bearer(): Promise<string | null> {
    const c = this.#credentials;
    if (!c) return null;
    if (c.kind === "token") return c.token;
    if (c.expiresAt - this.now() < REFRESH_MARGIN_MS) await this.refreshAfter(c.accessToken);
    const after = this.#credentials;
    return after ? (after.kind === "session" ? after.accessToken : after.token) : null;
  }

  /**
   * Refreshes unless another caller already replaced `usedToken`. True when a
   * newer access token is now available; false when the session cannot be
   * refreshed (no refresh token, or the server refused it: the session ends).
   */
  async refreshAfter(usedToken: string): Promise<boolean> {
    const c = this.#credentials;
    if (c?.kind !== "session") return false;
    if (c.accessToken !== usedToken) return true;
    this.#refreshing ??= this.#refreshOnce(c.refreshToken).finally(() => {
      this.#refreshing = null;
    });
    return this.#refreshing;
  }

  async #refreshOnce(refreshToken: string): Promise<boolean> {
    const stored = await this.reload?.();
    if (
      stored?.kind === "session" &&
      stored.refreshToken !== refreshToken &&
      stored.expiresAt - this.now() >= REFRESH_MARGIN_MS
    ) {
      this.#credentials = stored;
      return true;
    }
    const answer = await this.refresh(refreshToken);
    if (answer.pair) {
      await this.set(sessionFromPair(answer.pair, this.now()));
      return true;
    }
    // 400/401: the refresh token is expired, revoked or already used; the session is over.
    if (answer.status === 400 || answer.status === 401) await this.set(null);
    return false;
  }
}
