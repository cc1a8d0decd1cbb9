/**
 * A small client of the public REST API, the way an admin's script drives it:
 * log in once, renew the access token with the refresh token before it runs
 * out (access JWTs live 300 s by default; scenarios run longer), and parse
 * every answer with the protocol's zod schema, so a response that breaks the
 * contract fails loudly instead of being half-read.
 */
import { ErrorBody, TokenPair } from "@tern/protocol";
import { z } from "zod";

/** An answer that was not 2xx: the API's machine code and details, with the request that caused it. */
export class ApiRequestError extends Error {
  constructor(
    readonly method: string,
    readonly path: string,
    readonly status: number,
    readonly code: string | null,
    readonly body: string,
  ) {
    super(`${method} ${path}: HTTP ${status}${code ? ` ${code}` : ""}: ${body.slice(0, 500)}`);
    this.name = "ApiRequestError";
  }
}

export interface ApiResponse<T> {
  status: number;
  headers: Headers;
  data: T;
}

export interface RequestOptions {
  body?: unknown;
  query?: Record<string, string | number | boolean | undefined>;
  /** Per-request time-out (default 15 s). */
  timeoutMs?: number;
}

/** Renew this long before the access token expires. */
const RENEW_MARGIN_MS = 60_000;

export class ApiClient {
  private access: string | null = null;
  private refresh: string | null = null;
  private expiresAt = 0;
  private credentials: { email: string; password: string } | null = null;

  /** @param baseUrl the server's origin, e.g. http://127.0.0.1:4100 (paths start with /api). */
  constructor(readonly baseUrl: string) {}

  /** Logs in with an e-mail and password (`POST /api/users/login`). */
  async login(email: string, password: string): Promise<void> {
    this.credentials = { email, password };
    const pair = await this.send("POST", "/api/users/login", TokenPair, { body: { username: email, password } }, false);
    this.keep(pair.data);
  }

  /** Sends a request and parses a 2xx answer with `schema`; anything else throws ApiRequestError. */
  async call<T>(method: string, path: string, schema: z.ZodType<T>, opts: RequestOptions = {}): Promise<ApiResponse<T>> {
    await this.renewIfDue();
    try {
      return await this.send(method, path, schema, opts, true);
    } catch (err) {
      // A server restarted on another key or a revoked session: log in again once.
      if (err instanceof ApiRequestError && err.status === 401 && this.credentials) {
        await this.login(this.credentials.email, this.credentials.password);
        return this.send(method, path, schema, opts, true);
      }
      throw err;
    }
  }

  get<T>(path: string, schema: z.ZodType<T>, query?: RequestOptions["query"]): Promise<T> {
    return this.call("GET", path, schema, { query }).then((r) => r.data);
  }

  post<T>(path: string, schema: z.ZodType<T>, body?: unknown): Promise<T> {
    return this.call("POST", path, schema, { body }).then((r) => r.data);
  }

  put<T>(path: string, schema: z.ZodType<T>, body?: unknown, query?: RequestOptions["query"]): Promise<T> {
    return this.call("PUT", path, schema, { body, query }).then((r) => r.data);
  }

  delete<T>(path: string, schema: z.ZodType<T> = z.unknown() as z.ZodType<T>, query?: RequestOptions["query"]): Promise<T> {
    return this.call("DELETE", path, schema, { query }).then((r) => r.data);
  }

  private keep(pair: TokenPair): void {
    this.access = pair.accessToken;
    this.refresh = pair.refreshToken;
    this.expiresAt = Date.now() + pair.expiresIn * 1000;
  }

  private async renewIfDue(): Promise<void> {
    if (!this.refresh || Date.now() < this.expiresAt - RENEW_MARGIN_MS) return;
    try {
      const pair = await this.send("POST", "/api/users/refresh", TokenPair, { body: { refreshToken: this.refresh } }, false);
      this.keep(pair.data);
    } catch (err) {
      if (!this.credentials) throw err;
      await this.login(this.credentials.email, this.credentials.password);
    }
  }

  private async send<T>(
    method: string,
    path: string,
    schema: z.ZodType<T>,
    opts: RequestOptions,
    auth: boolean,
  ): Promise<ApiResponse<T>> {
    const url = new URL(path, this.baseUrl);
    for (const [k, v] of Object.entries(opts.query ?? {})) if (v !== undefined) url.searchParams.set(k, String(v));
    const res = await fetch(url, {
      method,
      headers: {
        ...(opts.body === undefined ? {} : { "content-type": "application/json" }),
        ...(auth && this.access ? { authorization: `Bearer ${this.access}` } : {}),
      },
      body: opts.body === undefined ? undefined : JSON.stringify(opts.body),
      signal: AbortSignal.timeout(opts.timeoutMs ?? 15_000),
    });
    const text = await res.text();
    if (!res.ok) {
      const parsed = ErrorBody.safeParse(safeJson(text));
      throw new ApiRequestError(method, url.pathname + url.search, res.status, parsed.success ? parsed.data.code : null, text);
    }
    const data = schema.safeParse(text ? safeJson(text) : null);
    if (!data.success) {
      const issues = data.error.issues
        .slice(0, 5)
        .map((i) => `${i.path.join(".")}: ${i.message}`)
        .join("; ");
      throw new Error(`${method} ${url.pathname}: the answer does not match its schema: ${issues}\n${text.slice(0, 500)}`);
    }
    return { status: res.status, headers: res.headers, data: data.data };
  }
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}
