/** /api/tokens: registration tokens, secret shown once and stored hashed, optional expiry, use count, list conventions. */
import type { RegistrationToken } from "@tern/protocol";
import { describe, expect, it } from "vitest";
import { signedRegistration } from "../../../test/support/signed-registration.ts";
import { useTestServer } from "../../../test/support/test-server.ts";
import { hashSecretToken } from "../../auth/secret-tokens.ts";

type Created = RegistrationToken & { token: string };
type ErrorBody = { code: string; error: string; details: { path: string; message: string }[] };

const registration = (token: string, machineId: string) =>
  signedRegistration({
    token,
    machineId,
    hostname: `host-${machineId}`,
    interfaces: [],
    versions: { agent: "0.1.0", protocol: 2 },
  });

describe("registration tokens", () => {
  const t = useTestServer();

  const create = (body: unknown) => t.api<Created>("POST", "/api/tokens", { token: t.admin.token, body });

  it("POST returns the secret once; GET lists tokens without it; only a hash is stored", async () => {
    const res = await create({ name: "branch rollout" });
    expect(res.status).toBe(201);
    expect(res.body.token).toMatch(/^tern_reg_[A-Za-z0-9_-]{43}$/);
    expect(res.body).toMatchObject({ name: "branch rollout", org: t.admin.orgId, uses: 0, maxUses: null });

    const list = await t.api<RegistrationToken[]>("GET", "/api/tokens", { token: t.admin.token });
    expect(list.status).toBe(200);
    const { token: _secret, ...listed } = res.body;
    expect(list.body.find((x) => x.id === res.body.id)).toEqual(listed);
    expect(list.text).not.toContain(res.body.token);

    const row = await t.database.db
      .selectFrom("registration_tokens")
      .select(["token_hash", "created_by"])
      .where("id", "=", res.body.id)
      .executeTakeFirstOrThrow();
    expect(row.token_hash).toBe(hashSecretToken(res.body.token));
    expect(row.token_hash).not.toContain(res.body.token);
    expect(row.created_by).toBe(t.admin.email);
  });

  it("counts the registrations made with a token", async () => {
    const created = (await create({ name: "counted" })).body;
    for (const machine of ["machine-count-1", "machine-count-2"])
      expect((await t.api("POST", "/api/connect/register", { body: registration(created.token, machine) })).status).toBe(201);
    const list = await t.api<RegistrationToken[]>("GET", "/api/tokens", {
      token: t.admin.token,
      query: { filter: JSON.stringify([{ key: "id", op: "==", val: created.id }]) },
    });
    expect(list.body[0]?.uses).toBe(2);
  });

  it("an expiry must be a future date-time; an expired token no longer registers", async () => {
    const past = await create({ name: "past", expiresAt: "2001-01-01T00:00:00Z" });
    expect(past.status).toBe(400);
    expect((past.body as unknown as ErrorBody).details[0]).toMatchObject({ path: "expiresAt" });
    const malformed = await create({ name: "bad", expiresAt: "tomorrow" });
    expect(malformed.status).toBe(400);
    expect((malformed.body as unknown as ErrorBody).code).toBe("VALIDATION_FAILED");

    const soon = await create({ name: "soon", expiresAt: new Date(Date.now() + 60_000).toISOString() });
    expect(soon.status).toBe(201);
    expect(soon.body.expiresAt).not.toBeNull();
    await t.database.db
      .updateTable("registration_tokens")
      .set({ expires_at: new Date(Date.now() - 1000) })
      .where("id", "=", soon.body.id)
      .execute();
    const refused = await t.api<ErrorBody>("POST", "/api/connect/register", {
      body: registration(soon.body.token, "machine-exp-1"),
    });
    expect(refused.status).toBe(401);
    expect(refused.body.code).toBe("UNAUTHENTICATED");
    expect(refused.body.error).toMatch(/expired/);
  });

  it("expires after the default lifetime unless told otherwise; null keeps it until deleted", async () => {
    const before = Date.now();
    const byDefault = await create({ name: "default lifetime" });
    expect(byDefault.status).toBe(201);
    const ttl = t.deps.config.TERN_REGISTRATION_TOKEN_TTL * 1000;
    const expires = new Date(byDefault.body.expiresAt!).getTime();
    expect(expires).toBeGreaterThanOrEqual(before + ttl);
    expect(expires).toBeLessThanOrEqual(Date.now() + ttl);
    const forever = await create({ name: "until deleted", expiresAt: null });
    expect(forever.status).toBe(201);
    expect(forever.body.expiresAt).toBeNull();
  });

  it("a use count: registrations past it are refused with REGISTRATION_TOKEN_EXHAUSTED and not counted", async () => {
    const created = await create({ name: "two devices", maxUses: 2 });
    expect(created.status).toBe(201);
    expect(created.body.maxUses).toBe(2);
    for (const machine of ["machine-max-1", "machine-max-2"])
      expect((await t.api("POST", "/api/connect/register", { body: registration(created.body.token, machine) })).status).toBe(
        201,
      );
    const third = await t.api<ErrorBody>("POST", "/api/connect/register", {
      body: registration(created.body.token, "machine-max-3"),
    });
    expect(third.status).toBe(403);
    expect(third.body.code).toBe("REGISTRATION_TOKEN_EXHAUSTED");
    const devices = await t.database.db.selectFrom("devices").select("id").where("machine_id", "=", "machine-max-3").execute();
    expect(devices).toHaveLength(0);
    const row = await t.database.db
      .selectFrom("registration_tokens")
      .select("uses")
      .where("id", "=", created.body.id)
      .executeTakeFirstOrThrow();
    expect(row.uses).toBe(2);
  });

  it("maxUses must be a positive whole number", async () => {
    for (const maxUses of [0, -1, 1.5, "3"]) {
      const res = await create({ name: "bad uses", maxUses });
      expect(res.status, JSON.stringify(maxUses)).toBe(400);
      expect((res.body as unknown as ErrorBody).details[0]?.path).toBe("maxUses");
    }
    // A misspelled field is an error, not a token without a limit.
    const misspelled = await create({ name: "typo", maxUse: 1 });
    expect(misspelled.status).toBe(400);
    expect((misspelled.body as unknown as ErrorBody).code).toBe("VALIDATION_FAILED");
  });

  it("POST validates the name", async () => {
    for (const body of [{}, { name: "" }, { name: "x".repeat(101) }]) {
      const res = await t.api<ErrorBody>("POST", "/api/tokens", { token: t.admin.token, body });
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.code).toBe("VALIDATION_FAILED");
      expect(res.body.details[0]?.path).toBe("name");
    }
  });

  it("DELETE removes a token (it stops registering) and audits it; an unknown id is 404", async () => {
    const created = (await create({ name: "doomed" })).body;
    expect((await t.api("DELETE", `/api/tokens/${created.id}`, { token: t.admin.token })).status).toBe(204);
    const again = await t.api<ErrorBody>("DELETE", `/api/tokens/${created.id}`, { token: t.admin.token });
    expect(again.status).toBe(404);
    expect(again.body.code).toBe("NOT_FOUND");
    const res = await t.api<ErrorBody>("POST", "/api/connect/register", { body: registration(created.token, "machine-del-1") });
    expect(res.status).toBe(401);
    const audit = await t.database.db
      .selectFrom("audit_log")
      .select(["action", "actor"])
      .where("resource", "=", "tokens")
      .where("resource_id", "=", created.id)
      .orderBy("at")
      .execute();
    expect(audit.map((a) => a.action)).toEqual(["create", "delete"]);
    expect(audit[1]?.actor).toBe(t.admin.email);
  });

  it("a viewer may list but not create or delete tokens", async () => {
    const viewer = await t.addMember("viewer");
    expect((await t.api("GET", "/api/tokens", { token: viewer.token })).status).toBe(200);
    expect((await t.api("POST", "/api/tokens", { token: viewer.token, body: { name: "v" } })).status).toBe(403);
  });

  describe("list conventions", () => {
    it("sort, order, filter ops and paging with records-total", async () => {
      const tenant = await t.createTenant("Tokens");
      const names = ["alpha", "bravo", "charlie", "delta"];
      for (const name of names) await t.api("POST", "/api/tokens", { token: tenant.token, body: { name } });
      const list = (query: Record<string, string | number>) =>
        t.api<RegistrationToken[]>("GET", "/api/tokens", { token: tenant.token, query });
      const filter = (key: string, op: string, val: unknown) => ({ filter: JSON.stringify([{ key, op, val }]) });
      const namesOf = (res: { body: RegistrationToken[] }) => res.body.map((x) => x.name);

      expect(namesOf(await list({ sort: "name", order: "desc" }))).toEqual([...names].reverse());
      expect(namesOf(await list({ sortField: "name", sortOrder: "asc" }))).toEqual(names);
      const page = await list({ sort: "name", offset: 1, limit: 2 });
      expect(namesOf(page)).toEqual(["bravo", "charlie"]);
      expect(page.headers.get("records-total")).toBe("4");

      expect(namesOf(await list(filter("name", "==", "bravo")))).toEqual(["bravo"]);
      expect(namesOf(await list({ ...filter("name", "!=", "bravo"), sort: "name" }))).toEqual(["alpha", "charlie", "delta"]);
      expect(namesOf(await list(filter("name", "contains", "HAR")))).toEqual(["charlie"]);
      expect(namesOf(await list({ ...filter("name", "!contains", "a"), sort: "name" }))).toEqual([]);
      expect(namesOf(await list({ ...filter("name", "in", ["alpha", "delta"]), sort: "name" }))).toEqual(["alpha", "delta"]);
      expect(namesOf(await list({ ...filter("name", "<", "bravo") }))).toEqual(["alpha"]);
      expect(namesOf(await list({ ...filter("name", ">=", "charlie"), sort: "name" }))).toEqual(["charlie", "delta"]);
      expect((await list(filter("uses", ">", 0))).headers.get("records-total")).toBe("0");
      expect((await list(filter("createdAt", "<=", new Date(Date.now() + 60_000).toISOString()))).body).toHaveLength(4);
      expect((await list(filter("expiresAt", "==", null))).body).toHaveLength(0);

      const bad = await t.api<ErrorBody>("GET", "/api/tokens", { token: tenant.token, query: filter("token", "==", "x") });
      expect(bad.status).toBe(400);
      expect(bad.body.details[0]?.path).toBe("filter.0.key");
    });
  });
});
