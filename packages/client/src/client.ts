/**
 * createTernClient: the typed API (openapi-fetch over the generated paths)
 * with the base URL, the current organization (`org` query parameter, added
 * to every operation that takes it unless the call names one) and the
 * credentials (bearer, refresh) handled once for every caller.
 *
 *   const tern = createTernClient({ baseUrl: "http://127.0.0.1:3000" });
 *   await tern.login("admin@example.com", password);
 *   const devices = await ok(tern.api.GET("/api/devices", { params: { query: { response: "summary" } } }));
 */
import createClient, { type Client } from "openapi-fetch";
import type { paths } from "./api-schema.d.ts";
import { authFetch, connectionGuard, type FetchLike } from "./auth-fetch.ts";
import { cookieFetch } from "./cookie-fetch.ts";
import { type Credentials, sessionFromPair } from "./credentials.ts";
import { apiErrorFrom, TernApiError } from "./errors.ts";
import { takesOrg } from "./org-scope.ts";
import { Session } from "./session.ts";
import type { TokenPair } from "./types.ts";
import { ok } from "./unwrap.ts";

export type TernApi = Client<paths>;

export interface TernClientOptions {
  /** Server URL, e.g. http://127.0.0.1:3000 (the API is under /api). */
  baseUrl: string;
  /** Organization to act in; null or absent: the caller's default organization. */
  org?: string | null;
  credentials?: Credentials | null;
  /** Called whenever the credentials change (login, refresh, logout, refused refresh) so the caller can persist them. */
  onCredentials?: (credentials: Credentials | null) => void | Promise<void>;
  /** Reads the persisted credentials again before a refresh (see Session). */
  reloadCredentials?: () => Promise<Credentials | null>;
  /** fetch to use (default: the global one). */
  fetch?: FetchLike;
  /**
   * Browser-cookie mode, for the console: the session is the page's HttpOnly
   * cookie (no bearer token, no refresh); requests go with
   * `credentials: "same-origin"` and writes carry `csrfToken` in X-CSRF-Token.
   */
  browserSession?: boolean;
}

export interface LoginOptions {
  /**
   * The second factor, for a user with two-factor sign-in: a TOTP code, or a
   * function asked for one only when the server answers a challenge. Without
   * it such a login fails with TernApiError code MFA_REQUIRED.
   */
  mfaCode?: string | (() => Promise<string>);
}

export interface TernClient {
  /** Typed calls: `api.GET("/api/devices/{id}", { params: { path: { id } } })`; wrap in ok() to get data or a TernApiError. */
  readonly api: TernApi;
  readonly baseUrl: string;
  org: string | null;
  readonly credentials: Credentials | null;
  /** Browser-cookie mode: the CSRF token of the cookie session, sent on every unsafe request. */
  csrfToken: string | null;
  /**
   * A request outside the typed document (e.g. routes newer than the committed
   * OpenAPI document), sent with the same base URL, credentials and CSRF token.
   */
  raw(path: string, init?: RequestInit): Promise<Response>;
  /** Logs in with e-mail and password; the new session replaces the credentials. */
  login(email: string, password: string, options?: LoginOptions): Promise<Credentials>;
  /** Revokes the session on the server (when it is one) and forgets the credentials. */
  logout(): Promise<void>;
  setCredentials(credentials: Credentials | null): Promise<void>;
}

const METHODS = ["GET", "PUT", "POST", "DELETE", "PATCH", "HEAD", "OPTIONS", "TRACE"] as const;

type Init = { params?: { query?: Record<string, unknown> } } & Record<string, unknown>;

export function createTernClient(options: TernClientOptions): TernClient {
  const baseUrl = options.baseUrl.replace(/\/+$/, "");
  const baseFetch = connectionGuard(options.fetch ?? ((request) => globalThis.fetch(request)));

  const refresh = async (refreshToken: string) => {
    const response = await baseFetch(
      new Request(`${baseUrl}/api/users/refresh`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ refreshToken }),
      }),
    );
    if (!response.ok) {
      await response.body?.cancel();
      return { status: response.status, pair: null };
    }
    return { status: response.status, pair: (await response.json()) as TokenPair };
  };
  const session = new Session(options.credentials ?? null, refresh, options.onCredentials, Date.now, options.reloadCredentials);
  const client = {
    org: options.org ?? null,
    baseUrl,
    csrfToken: null,
  } as TernClient & { org: string | null };
  const send = options.browserSession ? cookieFetch(baseFetch, () => client.csrfToken) : authFetch(session, baseFetch);
  const raw = createClient<paths>({ baseUrl, fetch: send });
  client.raw = (path, init) => send(new Request(`${baseUrl}${path}`, init));

  // Each method passes through openapi-fetch unchanged, with `org` added where the operation takes it.
  const api = { ...raw } as Record<string, unknown>;
  for (const method of METHODS) {
    const call = raw[method] as unknown as (path: string, init?: Init) => Promise<unknown>;
    api[method] = (path: string, init: Init = {}) => {
      if (!client.org || !takesOrg(path) || init.params?.query?.org !== undefined) return call(path, init);
      return call(path, { ...init, params: { ...init.params, query: { ...init.params?.query, org: client.org } } });
    };
  }

  Object.defineProperties(client, {
    api: { value: api as unknown as TernApi, enumerable: true },
    credentials: { get: () => session.credentials, enumerable: true },
  });
  client.setCredentials = (credentials) => session.set(credentials);
  const postJson = async (path: string, body: unknown): Promise<unknown> => {
    const response = await baseFetch(
      new Request(`${baseUrl}${path}`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(body),
      }),
    );
    const parsed = parseJson(await response.text());
    if (!response.ok) throw apiErrorFrom(response.status, parsed);
    return parsed;
  };
  client.login = async (email, password, loginOptions = {}) => {
    let answer = await postJson("/api/users/login", { username: email, password });
    // A user with two-factor sign-in gets a single-use challenge instead of tokens; the code completes it.
    const challenge = answer as { mfaRequired?: boolean; challenge?: string };
    if (challenge.mfaRequired === true && challenge.challenge) {
      const { mfaCode } = loginOptions;
      if (mfaCode === undefined) throw new TernApiError("this account needs a two-factor code", "MFA_REQUIRED", 401);
      const code = typeof mfaCode === "function" ? await mfaCode() : mfaCode;
      // Six digits are a TOTP code; anything else is one of the recovery codes.
      const proof = /^\d{6}$/.test(code.trim()) ? { code: code.trim() } : { recoveryCode: code.trim() };
      answer = await postJson("/api/users/login/mfa", { challenge: challenge.challenge, ...proof });
    }
    const credentials = sessionFromPair(answer as TokenPair);
    await session.set(credentials);
    return credentials;
  };
  client.logout = async () => {
    const c = session.credentials;
    if (c?.kind === "session") await ok(raw.POST("/api/users/logout", { body: { refreshToken: c.refreshToken } }));
    await session.set(null);
  };
  return client;
}

function parseJson(text: string): unknown {
  try {
    return text ? JSON.parse(text) : null;
  } catch {
    return text;
  }
}
