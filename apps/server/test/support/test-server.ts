/**
 * The app on a fresh database for one test file, with a seeded admin (owner of
 * the default account) and helpers to call the API as anyone.
 *
 *   const t = useTestServer();                // registers beforeAll/afterAll
 *   it("…", async () => {
 *     const res = await t.api("GET", "/api/organizations", { token: t.admin.token });
 *     expect(res.status).toBe(200);
 *   });
 */
import { randomBytes } from "node:crypto";
import type { OpenAPIHono } from "@hono/zod-openapi";
import type { Role, TokenPair } from "@tern/protocol";
import { pino } from "pino";
import { afterAll, beforeAll } from "vitest";
import { createApp } from "../../src/app.ts";
import { createRateLimiter } from "../../src/auth/rate-limiter.ts";
import { loadConfig, type ServerConfig } from "../../src/config.ts";
import type { DatabaseHandle } from "../../src/db/database.ts";
import type { AppDeps } from "../../src/deps.ts";
import { createBus } from "../../src/gateway/bus.ts";
import { offlineDeviceLink } from "../../src/gateway/device-link.ts";
import { GatewayEvents } from "../../src/gateway/events.ts";
import type { AppEnv } from "../../src/http/env.ts";
import { createServerMetrics } from "../../src/metrics/server-metrics.ts";
import { createKeyring } from "../../src/secrets/keyring.ts";
import { createLoginLimits } from "../../src/services/accounts/login-limits.ts";
import { bootstrapFirstAdmin, createAccountWithOwner } from "../../src/services/bootstrap.ts";
import { LiveEventHub } from "../../src/services/live-events/hub.ts";
import { insertInvitation } from "./invitations.ts";
import { openTestDatabase } from "./test-database.ts";

export const ADMIN_EMAIL = "admin@example.com";
export const ADMIN_PASSWORD = "correct horse battery";
/** Low scrypt cost: tests hash many passwords; production uses the default (17). */
const TEST_HASH_COST = "10";

export interface ApiResponse<T = unknown> {
  status: number;
  headers: Headers;
  body: T;
  text: string;
}

export interface RequestOptions {
  token?: string;
  body?: unknown;
  /** Raw body text (sent as is, e.g. malformed JSON). */
  raw?: string;
  /** Raw body bytes (an uploaded file); give its content-type in `headers`. */
  bytes?: Uint8Array;
  query?: Record<string, string | number | boolean | undefined>;
  headers?: Record<string, string>;
}

export interface TestUser {
  id: string;
  email: string;
  password: string;
  /** An access JWT from a real login. */
  token: string;
  refreshToken: string;
}

export interface TestServer {
  app: OpenAPIHono<AppEnv>;
  deps: AppDeps;
  database: DatabaseHandle;
  admin: TestUser & { orgId: string; accountId: string };
  api<T = unknown>(method: string, path: string, options?: RequestOptions): Promise<ApiResponse<T>>;
  login(email: string, password: string): Promise<TokenPair>;
  /** Adds a user with a role to the admin's organization (or account) through the API and logs them in. */
  /** A new user who joined by accepting an invitation (`membershipId`: the new membership). */
  addMember(
    role: Role,
    options?: { scope?: "organization" | "account"; orgId?: string; email?: string },
  ): Promise<TestUser & { membershipId: string }>;
  /** A separate account with its own organization and owner, logged in. */
  createTenant(name: string): Promise<TestUser & { orgId: string; accountId: string }>;
  close(): Promise<void>;
}

let counter = 0;
const uniqueEmail = (prefix: string) => `${prefix}-${++counter}-${randomBytes(3).toString("hex")}@example.com`;

export async function createTestServer(env: Record<string, string> = {}): Promise<TestServer> {
  const config: ServerConfig = loadConfig({
    TERN_PASSWORD_HASH_COST: TEST_HASH_COST,
    TERN_SECRET_KEY: randomBytes(32).toString("base64"),
    TERN_DATA_DIR: "/nonexistent-tests-use-no-data-dir",
    // Tests drive the API hard from one address; the rate limit's own tests set low limits.
    TERN_API_RATE_TOKEN: "1000000",
    TERN_API_RATE_ADDRESS: "1000000",
    ...env,
  });
  const database = await openTestDatabase();
  const logger = pino({ level: process.env.TERN_TEST_LOG_LEVEL ?? "silent" });
  const deps: AppDeps = {
    db: database.db,
    dbKind: database.kind,
    config,
    logger,
    keyring: createKeyring(Buffer.from(config.TERN_SECRET_KEY!, "base64")),
    loginLimits: createLoginLimits(config),
    registerLimit: createRateLimiter(config.TERN_REGISTER_RATE_IP, config.TERN_REGISTER_RATE_WINDOW),
    metrics: createServerMetrics(),
    deviceLink: offlineDeviceLink(new GatewayEvents(logger)),
  };
  // The live-event hub on the database's own LISTEN/NOTIFY, as the server runs it.
  const bus = createBus(database, logger);
  await bus.start();
  const liveEvents = new LiveEventHub(database.db, bus, logger);
  deps.liveEvents = liveEvents;
  const app = createApp(deps);

  const boot = await bootstrapFirstAdmin(database.db, {
    email: ADMIN_EMAIL,
    password: ADMIN_PASSWORD,
    passwordHashCost: config.TERN_PASSWORD_HASH_COST,
  });
  if (!boot.created) throw new Error("test database was not empty");

  async function api<T>(method: string, path: string, options: RequestOptions = {}): Promise<ApiResponse<T>> {
    const url = new URL(path, "http://tern.test");
    for (const [k, v] of Object.entries(options.query ?? {})) if (v !== undefined) url.searchParams.set(k, String(v));
    const headers: Record<string, string> = { ...options.headers };
    if (options.token) headers.authorization = `Bearer ${options.token}`;
    let body: string | Uint8Array | undefined;
    if (options.bytes !== undefined) body = options.bytes;
    else if (options.raw !== undefined) body = options.raw;
    else if (options.body !== undefined) body = JSON.stringify(options.body);
    if (body !== undefined && !Object.keys(headers).some((h) => h.toLowerCase() === "content-type")) {
      headers["content-type"] = "application/json";
    }
    const res = await app.request(url.pathname + url.search, { method, headers, body: body as string | undefined });
    // An event stream never ends: only its status and headers are read here (test it over HTTP).
    const streaming = res.headers.get("content-type")?.startsWith("text/event-stream") === true;
    if (streaming) await res.body?.cancel();
    const text = streaming ? "" : await res.text();
    let parsed: unknown = text;
    try {
      parsed = text ? JSON.parse(text) : null;
    } catch {
      // not JSON (e.g. the docs page)
    }
    return { status: res.status, headers: res.headers, body: parsed as T, text };
  }

  async function login(email: string, password: string): Promise<TokenPair> {
    const res = await api<TokenPair>("POST", "/api/users/login", { body: { username: email, password } });
    if (res.status !== 200) throw new Error(`login of ${email} failed: ${res.status} ${res.text}`);
    return res.body;
  }

  const adminPair = await login(ADMIN_EMAIL, ADMIN_PASSWORD);
  const admin = {
    id: boot.userId,
    email: ADMIN_EMAIL,
    password: ADMIN_PASSWORD,
    token: adminPair.accessToken,
    refreshToken: adminPair.refreshToken,
    orgId: boot.orgId,
    accountId: boot.accountId,
  };

  return {
    app,
    deps,
    database,
    admin,
    api,
    login,
    async addMember(role, options = {}) {
      const email = options.email ?? uniqueEmail(role);
      const password = `pw-${randomBytes(8).toString("hex")}`;
      // Members join by invitation: one written as POST /api/invitations would (without the e-mail), accepted for real.
      const { token } = await insertInvitation(database.db, {
        orgId: options.orgId ?? admin.orgId,
        scope: options.scope ?? "organization",
        email,
        role,
      });
      const res = await api<{ id: string; user: { id: string } }>("POST", "/api/invitations/accept", {
        body: { token, password },
      });
      if (res.status !== 201) throw new Error(`adding ${role} failed: ${res.status} ${res.text}`);
      const pair = await login(email, password);
      return {
        id: res.body.user.id,
        membershipId: res.body.id,
        email,
        password,
        token: pair.accessToken,
        refreshToken: pair.refreshToken,
      };
    },
    async createTenant(name) {
      const email = uniqueEmail(name.toLowerCase().replace(/[^a-z0-9]+/g, "-"));
      const password = `pw-${randomBytes(8).toString("hex")}`;
      const ids = await createAccountWithOwner(database.db, {
        accountName: `${name} account`,
        orgName: `${name} organization`,
        email,
        password,
        passwordHashCost: config.TERN_PASSWORD_HASH_COST,
      });
      const pair = await login(email, password);
      return { id: ids.userId, email, password, token: pair.accessToken, refreshToken: pair.refreshToken, ...ids };
    },
    close: async () => {
      liveEvents.close();
      await bus.close();
      await database.close();
    },
  };
}

/** Registers beforeAll/afterAll for one server per test file; the returned object is filled before the tests run. */
export function useTestServer(env: Record<string, string> = {}): TestServer {
  const holder = {} as TestServer;
  beforeAll(async () => {
    Object.assign(holder, await createTestServer(env));
  });
  afterAll(async () => {
    await holder.close?.();
  });
  return holder;
}
