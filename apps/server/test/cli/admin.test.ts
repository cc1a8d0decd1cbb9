/**
 * `tern-server migrate` and `admin` as spawned processes against a real
 * database (embedded in a temp dir, or a fresh PostgreSQL database): the
 * schema brought up, users created and passwords reset on the database itself,
 * sessions and API keys revoked, every change audited.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { verifyPassword } from "../../src/auth/password.ts";
import { MIGRATIONS } from "../../src/db/migrate.ts";
import { freshServerPlace, lines, randomKey, runTernServer, type ServerPlace, startServe } from "../support/cli.ts";
import { withPlaceDb } from "../support/cli-database.ts";
import { testDatabaseKind } from "../support/test-database.ts";

const OWNER = { email: "owner@example.com", password: "first owner password" };

async function post(url: string, body: unknown, token?: string) {
  const res = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json", ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as Record<string, string> };
}

describe("tern-server migrate and admin", { timeout: 600_000 }, () => {
  let place: ServerPlace;
  let env: Record<string, string>;
  const cli = (args: string[], input?: string) => runTernServer(args, { env, ...(input !== undefined ? { input } : {}) });
  beforeAll(async () => {
    place = await freshServerPlace();
    env = { ...place.env, TERN_SECRET_KEY: randomKey() };
  });
  const stopLater: (() => Promise<unknown>)[] = [];
  afterAll(async () => {
    for (const stop of stopLater) await stop();
    await place.cleanup();
  });

  it("migrate status before, migrate up, status after", async () => {
    const before = await cli(["migrate", "status", "--json"]);
    if (testDatabaseKind() === "pglite") {
      expect(before.code).toBe(1);
      expect(lines(before.stderr)).toEqual([expect.stringMatching(/^tern-server: there is no embedded database in .*pgdata; /)]);
    } else {
      expect(before.code).toBe(0);
      expect(JSON.parse(before.stdout)).toMatchObject({ applied: [], pending: Object.keys(MIGRATIONS).sort(), unknown: [] });
    }
    const up = await cli(["migrate", "up"]);
    expect(up.code).toBe(0);
    expect(up.stdout).toContain(`${Object.keys(MIGRATIONS).length} migration(s) applied`);
    const after = await cli(["migrate", "status", "--json"]);
    expect(after.code).toBe(0);
    const status = JSON.parse(after.stdout) as { applied: { name: string }[]; pending: string[] };
    expect(status.pending).toEqual([]);
    expect(status.applied.map((m) => m.name).sort()).toEqual(Object.keys(MIGRATIONS).sort());
    expect((await cli(["migrate", "up"])).stdout).toContain("the database is up to date");
  });

  it("admin create-user: the owner of a new account, password from stdin, audited", async () => {
    const run = await cli(
      [
        "admin",
        "create-user",
        "--email",
        OWNER.email,
        "--name",
        "Olga",
        "--new-account",
        "Acme",
        "--org-name",
        "HQ",
        "--password-stdin",
        "--json",
      ],
      `${OWNER.password}\n`,
    );
    expect(run.code).toBe(0);
    const created = JSON.parse(run.stdout) as { id: string; accountId: string; orgId: string; password?: string };
    expect(created.password).toBeUndefined();
    await withPlaceDb(place, async (db) => {
      const user = await db.selectFrom("users").selectAll().where("id", "=", created.id).executeTakeFirstOrThrow();
      expect(user).toMatchObject({ email: OWNER.email, name: "Olga", default_org_id: created.orgId });
      expect(await verifyPassword(OWNER.password, user.password_hash)).toBe(true);
      const memberships = await db.selectFrom("memberships").selectAll().where("user_id", "=", created.id).execute();
      expect(memberships).toEqual([
        expect.objectContaining({ account_id: created.accountId, organization_id: null, role: "owner" }),
      ]);
      const org = await db.selectFrom("organizations").selectAll().where("id", "=", created.orgId).executeTakeFirstOrThrow();
      expect(org).toMatchObject({ name: "HQ", account_id: created.accountId });
      const audit = await db.selectFrom("audit_log").selectAll().where("resource_id", "=", created.id).execute();
      expect(audit).toEqual([
        expect.objectContaining({
          action: "create",
          resource: "users",
          account_id: created.accountId,
          organization_id: created.orgId,
        }),
      ]);
      expect(audit[0]!.actor).toMatch(/^operator:/);
      expect(JSON.stringify(audit[0]!.after)).not.toContain(OWNER.password);
    });
  });

  it("admin create-user: a member of an organization with a generated password; refuses a taken e-mail and a missing password", async () => {
    const orgId = await withPlaceDb(
      place,
      async (db) => (await db.selectFrom("organizations").select("id").executeTakeFirstOrThrow()).id,
    );
    const run = await cli([
      "admin",
      "create-user",
      "--email",
      "viewer@example.com",
      "--org",
      orgId,
      "--role",
      "manager",
      "--generate-password",
      "--json",
    ]);
    expect(run.code).toBe(0);
    const created = JSON.parse(run.stdout) as { id: string; password: string };
    expect(created.password).toMatch(/^[A-Za-z0-9_-]{24}$/);
    await withPlaceDb(place, async (db) => {
      const user = await db.selectFrom("users").select("password_hash").where("id", "=", created.id).executeTakeFirstOrThrow();
      expect(await verifyPassword(created.password, user.password_hash)).toBe(true);
      const m = await db.selectFrom("memberships").selectAll().where("user_id", "=", created.id).executeTakeFirstOrThrow();
      expect(m).toMatchObject({ organization_id: orgId, account_id: null, role: "manager" });
    });

    const taken = await cli(["admin", "create-user", "--email", OWNER.email, "--generate-password"]);
    expect(taken.code).toBe(1);
    expect(lines(taken.stderr)).toEqual([
      expect.stringMatching(/a user with the e-mail owner@example.com exists; use `tern-server admin reset-password`/),
    ]);
    const noPassword = await cli(["admin", "create-user", "--email", "nobody@example.com"]);
    expect(noPassword.code).toBe(2);
    expect(lines(noPassword.stderr)).toEqual([
      expect.stringMatching(/no password given and no terminal to ask on; pipe it in with --password-stdin/),
    ]);
    const short = await cli(["admin", "create-user", "--email", "short@example.com", "--password-stdin"], "short\n");
    expect(short.code).toBe(2);
    const unknownOrg = await cli([
      "admin",
      "create-user",
      "--email",
      "x@example.com",
      "--org",
      "00000000-0000-4000-8000-000000000000",
      "--generate-password",
    ]);
    expect(unknownOrg.code).toBe(1);
    await withPlaceDb(place, async (db) => {
      const emails = (await db.selectFrom("users").select("email").execute()).map((u) => u.email).sort();
      expect(emails).toEqual([OWNER.email, "viewer@example.com"]);
    });
  });

  it("admin reset-password: a new password, the old sessions and API keys revoked, audited", async () => {
    const orgId = await withPlaceDb(place, async (db) => {
      const owner = await db
        .selectFrom("users")
        .select("default_org_id")
        .where("email", "=", OWNER.email)
        .executeTakeFirstOrThrow();
      return owner.default_org_id!;
    });
    const serve = startServe(["serve", "--port", "0"], { env });
    // A failed assertion must not leave a server behind.
    stopLater.push(() => serve.stop());
    const url = await serve.listening;
    const login = await post(`${url}/api/users/login`, { username: OWNER.email, password: OWNER.password });
    expect(login.status).toBe(200);
    const key = await post(`${url}/api/accesstokens?org=${orgId}`, { name: "automation" }, login.body.accessToken);
    expect(key.status).toBe(201);

    if (testDatabaseKind() === "pglite") {
      // The embedded database belongs to the running server.
      const refused = await cli(["admin", "reset-password", OWNER.email]);
      expect(refused.code).toBe(1);
      expect(lines(refused.stderr)).toEqual([
        expect.stringMatching(/a Tern server \(pid \d+\) is running on the embedded database.*stop it first/),
      ]);
      expect(await serve.stop()).toBe(0);
    }
    const reset = await cli(["admin", "reset-password", OWNER.email, "--json"]);
    expect(reset.code).toBe(0);
    const result = JSON.parse(reset.stdout) as { password: string; sessionsRevoked: number; apiKeysDeleted: { name: string }[] };
    expect(result.sessionsRevoked).toBe(1);
    expect(result.apiKeysDeleted.map((k) => k.name)).toEqual(["automation"]);

    const again = testDatabaseKind() === "pglite" ? startServe(["serve", "--port", "0"], { env }) : serve;
    stopLater.push(() => again.stop());
    try {
      const url2 = await again.listening;
      const oldAccess = await fetch(`${url2}/api/organizations`, {
        headers: { authorization: `Bearer ${login.body.accessToken}` },
      });
      expect(oldAccess.status).toBe(401);
      expect((await post(`${url2}/api/users/refresh`, { refreshToken: login.body.refreshToken })).status).toBe(401);
      const oldKey = await fetch(`${url2}/api/organizations`, { headers: { authorization: `Bearer ${key.body.token}` } });
      expect(oldKey.status).toBe(401);
      expect((await post(`${url2}/api/users/login`, { username: OWNER.email, password: OWNER.password })).status).toBe(401);
      expect((await post(`${url2}/api/users/login`, { username: OWNER.email, password: result.password })).status).toBe(200);
      const audit = await fetch(`${url2}/api/audit?org=${orgId}`, {
        headers: {
          authorization: `Bearer ${(await post(`${url2}/api/users/login`, { username: OWNER.email, password: result.password })).body.accessToken}`,
        },
      });
      const entries = (await audit.json()) as { action: string; resource: string; actor: string }[];
      expect(entries).toEqual(
        expect.arrayContaining([
          expect.objectContaining({ action: "reset-password", resource: "users", actor: expect.stringMatching(/^operator:/) }),
          expect.objectContaining({ action: "revoke", resource: "accesstokens", actor: expect.stringMatching(/^operator:/) }),
        ]),
      );
    } finally {
      expect(await again.stop()).toBe(0);
    }

    const stdinReset = await cli(["admin", "reset-password", OWNER.email, "--password-stdin"], "a chosen new password\n");
    expect(stdinReset.code).toBe(0);
    expect(stdinReset.stdout).not.toContain("password:");
    await withPlaceDb(place, async (db) => {
      const user = await db
        .selectFrom("users")
        .select("password_hash")
        .where("email", "=", OWNER.email)
        .executeTakeFirstOrThrow();
      expect(await verifyPassword("a chosen new password", user.password_hash)).toBe(true);
    });
    const unknown = await cli(["admin", "reset-password", "ghost@example.com"]);
    expect(unknown.code).toBe(1);
    expect(lines(unknown.stderr)).toEqual([expect.stringMatching(/no user with the e-mail ghost@example.com/)]);
  });
});
