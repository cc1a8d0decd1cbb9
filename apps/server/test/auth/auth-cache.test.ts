/**
 * The per-instance authentication cache (auth/auth-cache.ts): a request's
 * credential and access come from memory after the first request, and a
 * revoked session, a deleted key or a changed role is honoured at once, on
 * this instance and, through the `tern_auth` notification, on another
 * instance of the same database (a second app with a cache of its own).
 */
import { EventEmitter } from "node:events";
import type { OpenAPIHono } from "@hono/zod-openapi";
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApp } from "../../src/app.ts";
import { AuthCache } from "../../src/auth/auth-cache.ts";
import { signAccessToken } from "../../src/auth/jwt.ts";
import type { AppEnv } from "../../src/http/env.ts";
import { waitUntil } from "../support/gateway.ts";
import { useTestServer } from "../support/test-server.ts";

const t = useTestServer();
let cacheA: AuthCache;
let cacheB: AuthCache;
let appB: OpenAPIHono<AppEnv>;

beforeAll(async () => {
  const { db, url, pglite, ownNotifications } = t.database;
  const target = { db, url, pglite, ownNotifications };
  cacheA = new AuthCache();
  await cacheA.start(target, t.deps.logger);
  t.deps.authCache = cacheA;
  cacheB = new AuthCache();
  await cacheB.start(target, t.deps.logger);
  appB = createApp({ ...t.deps, authCache: cacheB });
});

afterAll(async () => {
  t.deps.authCache = undefined;
  await cacheA?.close();
  await cacheB?.close();
});

const onA = (token: string, path = "/api/devices") => t.api("GET", path, { token });
async function onB(token: string, path = "/api/devices"): Promise<number> {
  const res = await appB.request(path, { headers: { authorization: `Bearer ${token}` } });
  await res.text();
  return res.status;
}
/** B hears of a change through the notification; its delivery is asynchronous on PostgreSQL. */
const statusOnB = async (token: string, wanted: number, path?: string) =>
  waitUntil(
    () => onB(token, path),
    (status) => status === wanted,
    3_000,
    `status ${wanted} on B`,
  );

describe("auth cache", () => {
  it("answers from memory after the first request (a change made without the triggers goes unseen until cleared)", async () => {
    const user = await t.addMember("viewer");
    expect((await onA(user.token)).status).toBe(200);
    expect(cacheA.size).toBeGreaterThan(0);
    // Revoke behind the cache's back: triggers off for this transaction, so no notification.
    await t.database.db.transaction().execute(async (trx) => {
      await sql`set local session_replication_role = replica`.execute(trx);
      await trx.updateTable("sessions").set({ revoked_at: new Date() }).where("user_id", "=", user.id).execute();
    });
    expect((await onA(user.token)).status).toBe(200);
    cacheA.clear();
    expect((await onA(user.token)).status).toBe(401);
  });

  it("a revoked session (logout) ends at once on this instance and on the other", async () => {
    const user = await t.addMember("manager");
    expect((await onA(user.token)).status).toBe(200);
    expect(await onB(user.token)).toBe(200);
    const out = await t.api("POST", "/api/users/logout", { body: { refreshToken: user.refreshToken } });
    expect(out.status).toBe(204);
    expect((await onA(user.token)).status).toBe(401);
    await statusOnB(user.token, 401);
  });

  it("a session revoked by a write outside any request reaches both instances through the notification", async () => {
    const user = await t.addMember("viewer");
    expect((await onA(user.token)).status).toBe(200);
    expect(await onB(user.token)).toBe(200);
    await t.database.db.updateTable("sessions").set({ revoked_at: new Date() }).where("user_id", "=", user.id).execute();
    await waitUntil(
      async () => (await onA(user.token)).status,
      (status) => status === 401,
      3_000,
      "401 on A",
    );
    await statusOnB(user.token, 401);
  });

  it("a role change is honoured at once (viewer → manager and back)", async () => {
    const user = await t.addMember("viewer");
    const post = { name: "cache-probe", role: "viewer" };
    const create = () => t.api("POST", "/api/accesstokens", { token: user.token, body: post });
    expect((await create()).status).toBe(403);
    expect(await onB(user.token, "/api/members")).toBe(200);
    const up = await t.api("PUT", `/api/members/${user.membershipId}`, { token: t.admin.token, body: { role: "manager" } });
    expect(up.status).toBe(200);
    expect((await create()).status).toBe(201);
    const down = await t.api("PUT", `/api/members/${user.membershipId}`, { token: t.admin.token, body: { role: "viewer" } });
    expect(down.status).toBe(200);
    expect((await create()).status).toBe(403);
    // Removed from the organization: B stops answering too.
    expect((await t.api("DELETE", `/api/members/${user.membershipId}`, { token: t.admin.token })).status).toBe(204);
    await statusOnB(user.token, 403, "/api/members");
  });

  it("a write that changes nobody's access keeps the cached entries", async () => {
    const user = await t.addMember("manager");
    expect((await onA(user.token)).status).toBe(200);
    expect((await onA(t.admin.token)).status).toBe(200);
    const cached = cacheA.size;
    expect(cached).toBeGreaterThanOrEqual(2);
    const label = await t.api("POST", "/api/pathlabels", { token: t.admin.token, body: { name: "cache-keep" } });
    expect(label.status).toBe(201);
    expect(cacheA.size).toBe(cached);
    // A change of access on the same instance still drops them before its answer (the role change above).
    const demoted = await t.api("PUT", `/api/members/${user.membershipId}`, { token: t.admin.token, body: { role: "viewer" } });
    expect(demoted.status).toBe(200);
    expect(cacheA.size).toBe(0);
  });

  it("a change heard on every listening connection drops the cache once", async () => {
    const { db, url, pglite } = t.database;
    // A cache that hears only the dedicated LISTEN connection: once it has heard the change, so have the others.
    const busOnly = new AuthCache();
    await busOnly.start({ db, url, pglite }, t.deps.logger);
    try {
      // Several pooled connections open (each LISTENs on PostgreSQL), so the change is heard on each.
      await Promise.all(Array.from({ length: 5 }, () => sql`select pg_sleep(0.05)`.execute(db)));
      const user = await t.addMember("viewer");
      const [a, heard] = [cacheA.generation(), busOnly.generation()];
      await db.updateTable("users").set({ name: "renamed by the cache test" }).where("id", "=", user.id).execute();
      await waitUntil(
        async () => busOnly.generation(),
        (g) => g > heard,
        3_000,
        "the change on the LISTEN connection",
      );
      await new Promise((r) => setTimeout(r, 200));
      expect(cacheA.generation() - a).toBe(1);
    } finally {
      await busOnly.close();
    }
  });

  it("a transaction's notification clears once however often it is heard; one without an id always clears", async () => {
    const own = new EventEmitter();
    const { db, url, pglite } = t.database;
    const cache = new AuthCache();
    await cache.start({ db, url, pglite, ownNotifications: own }, t.deps.logger);
    try {
      const fill = () =>
        cache.set("k", cache.generation(), { principal: {} as never, resolved: {} as never, validUntil: null, lastUsedAt: null });
      fill();
      own.emit("tern_auth", "4242");
      expect(cache.size).toBe(0);
      fill();
      own.emit("tern_auth", "4242");
      expect(cache.size).toBe(1);
      own.emit("tern_auth", "4243");
      expect(cache.size).toBe(0);
      fill();
      own.emit("tern_auth", "");
      expect(cache.size).toBe(0);
      fill();
      own.emit("tern_auth", "");
      expect(cache.size).toBe(0);
    } finally {
      await cache.close();
    }
  });

  it("a deleted access token stops working at once on both instances; its last use is still recorded", async () => {
    const created = await t.api<{ id: string; token: string }>("POST", "/api/accesstokens", {
      token: t.admin.token,
      body: { name: "cache-key", role: "viewer" },
    });
    expect(created.status).toBe(201);
    const key = created.body.token;
    expect((await onA(key)).status).toBe(200);
    expect(await onB(key)).toBe(200);
    const used = await t.database.db
      .selectFrom("access_tokens")
      .select("last_used_at")
      .where("id", "=", created.body.id)
      .executeTakeFirstOrThrow();
    expect(used.last_used_at).not.toBeNull();
    expect((await t.api("DELETE", `/api/accesstokens/${created.body.id}`, { token: t.admin.token })).status).toBe(204);
    expect((await onA(key)).status).toBe(401);
    await statusOnB(key, 401);
  });

  it("an entry ends with its JWT: an expired access token is refused though it was cached", async () => {
    const user = await t.addMember("viewer");
    const claims = JSON.parse(Buffer.from(user.token.split(".")[1]!, "base64url").toString()) as { sub: string; sid: string };
    // exp is in whole seconds from iat = floor(now): a 1 s token signed late in a second could expire between
    // the two requests below. A 2 s token lives at least 1 s, and is expired 2 s after signing at the latest.
    const short = await signAccessToken({ sub: claims.sub, sid: claims.sid }, t.deps.keyring.jwtKey, 2);
    expect((await onA(short)).status).toBe(200);
    expect((await onA(short)).status).toBe(200);
    await new Promise((r) => setTimeout(r, 2_100));
    expect((await onA(short)).status).toBe(401);
    expect((await onA(user.token)).status).toBe(200);
  });

  it("failures are not cached and a bad org parameter is still checked after the credential", async () => {
    expect((await onA("not-a-token")).status).toBe(401);
    expect((await t.api("GET", "/api/devices", { token: "not-a-token", query: { org: "x" } })).status).toBe(401);
    const bad = await t.api<{ code: string }>("GET", "/api/devices", { token: t.admin.token, query: { org: "x" } });
    expect(bad.status).toBe(400);
    expect(bad.body.code).toBe("VALIDATION_FAILED");
  });
});
