/**
 * Spec row "ALL /mlpolicies" (actions accept link-quality): CRUD with the list
 * conventions, path labels of the organization, fleet-wide install/uninstall
 * (one mlpolicy job per device) and the compiled policy in devices' desired config.
 */
import { randomUUID } from "node:crypto";
import { DeviceConfig, type MlPolicy, type PathLabel } from "@tern/protocol";
import { beforeAll, describe, expect, it } from "vitest";
import { insertTestDevice, type TestDevice } from "../../../test/support/devices.ts";
import { useTestServer } from "../../../test/support/test-server.ts";
import { readDesiredConfig } from "../../services/desired-config-seal.ts";

type ErrorBody = { code: string; details: { path: string; message: string }[] };
type Jobs = { jobIds: string[] };
const f = (...filters: { key: string; op: string; val: unknown }[]) => JSON.stringify(filters);

describe("multi-link policies", () => {
  const t = useTestServer();
  let mpls: PathLabel;
  let lte: PathLabel;
  let devices: TestDevice[];

  const voice = (name = "voice") => ({
    name,
    description: "voice over the best path",
    rules: [
      {
        name: "voip",
        priority: 1,
        match: { protocol: "udp", ports: "5060-5080", dscp: 46 },
        action: {
          order: "link-quality",
          pathlabels: [mpls.id, lte.id],
          linkQuality: { maxLossPercent: 2, maxLatencyMs: 150, maxJitterMs: 30, holdDownSeconds: 5 },
        },
      },
      {
        name: "web",
        priority: 10,
        match: { protocol: "tcp", ports: "443" },
        action: { order: "priority", pathlabels: [lte.id] },
      },
    ],
  });
  const create = (body: unknown) => t.api<MlPolicy>("POST", "/api/mlpolicies", { token: t.admin.token, body });
  const desired = async (id: string) => DeviceConfig.parse(await readDesiredConfig(t.database.db, t.deps.keyring, id));

  beforeAll(async () => {
    mpls = (await t.api<PathLabel>("POST", "/api/pathlabels", { token: t.admin.token, body: { name: "MPLS", type: "Tunnel" } }))
      .body;
    lte = (await t.api<PathLabel>("POST", "/api/pathlabels", { token: t.admin.token, body: { name: "LTE" } })).body;
    devices = [];
    for (const name of ["branch-1", "branch-2", "branch-3", "hq"]) devices.push(await insertTestDevice(t, { name }));
  });

  it("POST creates a link-quality policy; thresholds default when omitted", async () => {
    const res = await create(voice());
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ name: "voice", installedOn: 0, org: t.admin.orgId });
    expect(res.body.rules[0]?.action).toEqual({
      order: "link-quality",
      pathlabels: [mpls.id, lte.id],
      fallback: "by-destination",
      linkQuality: { maxLossPercent: 2, maxLatencyMs: 150, maxJitterMs: 30, holdDownSeconds: 5 },
    });
    const defaults = await create({
      name: "defaults",
      rules: [{ name: "all", priority: 1, match: {}, action: { order: "link-quality", pathlabels: [lte.id] } }],
    });
    expect(defaults.body.rules[0]?.action.linkQuality).toEqual({
      maxLossPercent: 5,
      maxLatencyMs: 300,
      maxJitterMs: 50,
      holdDownSeconds: 10,
    });
    expect((await t.api("GET", `/api/mlpolicies/${res.body.id}`, { token: t.admin.token })).body).toEqual(res.body);
  });

  it("validates path labels (of this organization, once per rule), priorities, names and thresholds", async () => {
    const foreign = await t.createTenant("Foreign");
    const theirLabel = (await t.api<PathLabel>("POST", "/api/pathlabels", { token: foreign.token, body: { name: "theirs" } }))
      .body;
    const rule = (over: Record<string, unknown>) => ({
      name: "r",
      priority: 1,
      match: {},
      action: { pathlabels: [mpls.id] },
      ...over,
    });
    const cases: [unknown, string, string][] = [
      [
        { name: "p", rules: [rule({ action: { pathlabels: [mpls.id, theirLabel.id] } })] },
        "rules.0.action.pathlabels.1",
        "VALIDATION_FAILED",
      ],
      [
        { name: "p", rules: [rule({ action: { pathlabels: [randomUUID()] } })] },
        "rules.0.action.pathlabels.0",
        "VALIDATION_FAILED",
      ],
      [
        { name: "p", rules: [rule({ action: { pathlabels: [lte.id, lte.id] } })] },
        "rules.0.action.pathlabels.1",
        "VALIDATION_FAILED",
      ],
      [{ name: "p", rules: [rule({ action: { pathlabels: [] } })] }, "rules.0.action.pathlabels", "VALIDATION_FAILED"],
      [{ name: "p", rules: [rule({}), rule({ name: "s" })] }, "rules.1.priority", "VALIDATION_FAILED"],
      [{ name: "p", rules: [rule({}), rule({ priority: 2 })] }, "rules.1.name", "VALIDATION_FAILED"],
      [
        {
          name: "p",
          rules: [rule({ action: { order: "priority", pathlabels: [mpls.id], linkQuality: { maxLossPercent: 1 } } })],
        },
        "rules.0.action.linkQuality",
        "VALIDATION_FAILED",
      ],
      [
        { name: "p", rules: [rule({ action: { order: "fastest", pathlabels: [mpls.id] } })] },
        "rules.0.action.order",
        "VALIDATION_FAILED",
      ],
      [
        {
          name: "p",
          rules: [rule({ action: { order: "link-quality", pathlabels: [mpls.id], linkQuality: { maxLossPercent: 101 } } })],
        },
        "rules.0.action.linkQuality.maxLossPercent",
        "VALIDATION_FAILED",
      ],
      [{ name: "p", rules: [rule({ match: { source: "10.0.0.1/8" } })] }, "rules.0.match.source", "VALIDATION_FAILED"],
    ];
    for (const [body, path, code] of cases) {
      const res = await t.api<ErrorBody>("POST", "/api/mlpolicies", { token: t.admin.token, body });
      expect(res.status, path).toBe(400);
      expect(res.body.code).toBe(code);
      expect(
        res.body.details.map((d) => d.path),
        JSON.stringify(res.body),
      ).toContain(path);
    }
    const dup = await t.api<ErrorBody>("POST", "/api/mlpolicies", { token: t.admin.token, body: { name: "voice" } });
    expect(dup.status).toBe(409);
    expect(dup.body.code).toBe("CONFLICT");
  });

  it("install by device ids: 202 with one mlpolicy job per device; the policy is in their desired config", async () => {
    const policy = (await create(voice("install-me"))).body;
    const targets = devices.slice(0, 2).map((d) => d.id);
    const res = await t.api<Jobs>("POST", `/api/mlpolicies/${policy.id}/install`, {
      token: t.admin.token,
      body: { deviceIds: targets },
    });
    expect(res.status).toBe(202);
    expect(res.body.jobIds).toHaveLength(2);
    expect(res.headers.get("location")).toBe(`/api/jobs?ids=${res.body.jobIds.join(",")}`);
    const jobs = await t.database.db.selectFrom("jobs").selectAll().where("id", "in", res.body.jobIds).execute();
    expect(jobs.map((j) => [j.device_id, j.type, j.state]).sort()).toEqual(
      targets.map((id) => [id, "mlpolicy", "queued"]).sort(),
    );
    for (const id of targets) {
      const config = await desired(id);
      expect(config.policy?.rules).toEqual([
        {
          name: "voip",
          priority: 1,
          match: { source: "", destination: "", protocol: "udp", ports: "5060-5080", dscp: 46 },
          order: "link-quality",
          pathLabels: [mpls.id, lte.id],
          fallback: "by-destination",
          linkQuality: { maxLossPercent: 2, maxLatencyMs: 150, maxJitterMs: 30, holdDownSeconds: 5 },
        },
        expect.objectContaining({ name: "web", order: "priority", pathLabels: [lte.id], linkQuality: null }),
      ]);
      expect(jobs.find((j) => j.device_id === id)?.target_hash).toBeTruthy();
    }
    expect((await t.api<MlPolicy>("GET", `/api/mlpolicies/${policy.id}`, { token: t.admin.token })).body.installedOn).toBe(2);
    // Installing again changes nothing: no jobs.
    const again = await t.api<Jobs>("POST", `/api/mlpolicies/${policy.id}/install`, {
      token: t.admin.token,
      body: { deviceIds: targets },
    });
    expect(again.body.jobIds).toEqual([]);
  });

  it("install by filter; unknown devices are a 404 and change nothing; the body needs exactly one selector", async () => {
    // Other rules than install-me's: the devices' compiled config changes when they switch.
    const policy = (await create({ ...voice("by-filter"), rules: voice().rules.slice(1) })).body;
    const missing = await t.api<ErrorBody>("POST", `/api/mlpolicies/${policy.id}/install`, {
      token: t.admin.token,
      body: { deviceIds: [devices[3]!.id, randomUUID()] },
    });
    expect(missing.status).toBe(404);
    expect(missing.body.details[0]?.path).toBe("deviceIds");
    expect((await t.api<MlPolicy>("GET", `/api/mlpolicies/${policy.id}`, { token: t.admin.token })).body.installedOn).toBe(0);
    for (const body of [{}, { deviceIds: [devices[0]!.id], filter: [] }, { deviceIds: [] }]) {
      const res = await t.api<ErrorBody>("POST", `/api/mlpolicies/${policy.id}/install`, { token: t.admin.token, body });
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.code).toBe("VALIDATION_FAILED");
    }
    const badKey = await t.api<ErrorBody>("POST", `/api/mlpolicies/${policy.id}/install`, {
      token: t.admin.token,
      body: { filter: [{ key: "secret", op: "==", val: 1 }] },
    });
    expect(badKey.body.details[0]?.path).toBe("filter.0.key");

    const res = await t.api<Jobs>("POST", `/api/mlpolicies/${policy.id}/install`, {
      token: t.admin.token,
      body: {
        filter: [
          { key: "name", op: "contains", val: "branch" },
          { key: "name", op: "!=", val: "branch-3" },
        ],
      },
    });
    expect(res.status).toBe(202);
    // branch-1 and branch-2 switch from install-me to by-filter: a job each.
    expect(res.body.jobIds).toHaveLength(2);
    const rows = await t.database.db.selectFrom("devices").select(["name", "mlpolicy_id"]).orderBy("name").execute();
    expect(rows.filter((r) => r.mlpolicy_id === policy.id).map((r) => r.name)).toEqual(["branch-1", "branch-2"]);
  });

  it("PUT of an installed policy queues a job for every device running it and recompiles them", async () => {
    const policy = (await create(voice("change-me"))).body;
    await t.api("POST", `/api/mlpolicies/${policy.id}/install`, {
      token: t.admin.token,
      body: { deviceIds: [devices[2]!.id, devices[3]!.id] },
    });
    const changed = voice("change-me");
    changed.rules[0]!.action.pathlabels = [lte.id, mpls.id];
    const res = await t.api<MlPolicy & Jobs>("PUT", `/api/mlpolicies/${policy.id}`, { token: t.admin.token, body: changed });
    expect(res.status).toBe(200);
    expect(res.body.installedOn).toBe(2);
    expect(res.body.jobIds).toHaveLength(2);
    expect((await desired(devices[3]!.id)).policy?.rules[0]?.pathLabels).toEqual([lte.id, mpls.id]);
    const notInstalled = (await create(voice("idle"))).body;
    const idle = await t.api<MlPolicy & Jobs>("PUT", `/api/mlpolicies/${notInstalled.id}`, {
      token: t.admin.token,
      body: voice("idle 2"),
    });
    expect(idle.body).toMatchObject({ name: "idle 2", jobIds: [] });
    const clash = await t.api<ErrorBody>("PUT", `/api/mlpolicies/${notInstalled.id}`, {
      token: t.admin.token,
      body: voice("voice"),
    });
    expect(clash.status).toBe(409);
  });

  it("DELETE of an installed policy is refused naming its devices; after uninstall it goes", async () => {
    const policy = (await create(voice("remove-me"))).body;
    await t.api("POST", `/api/mlpolicies/${policy.id}/install`, { token: t.admin.token, body: { deviceIds: [devices[0]!.id] } });
    const refused = await t.api<ErrorBody>("DELETE", `/api/mlpolicies/${policy.id}`, { token: t.admin.token });
    expect(refused.status).toBe(409);
    expect(refused.body.code).toBe("CONFLICT");
    expect(refused.body.details).toEqual([{ path: "installedOn", message: "installed on device branch-1" }]);

    const un = await t.api<Jobs>("POST", `/api/mlpolicies/${policy.id}/uninstall`, {
      token: t.admin.token,
      body: { filter: [] },
    });
    expect(un.status).toBe(202);
    expect(un.body.jobIds).toHaveLength(1);
    expect((await desired(devices[0]!.id)).policy).toBeNull();
    // Devices running other policies were left alone.
    const others = await t.database.db.selectFrom("devices").select("mlpolicy_id").where("mlpolicy_id", "is not", null).execute();
    expect(others.length).toBeGreaterThan(0);
    expect((await t.api("DELETE", `/api/mlpolicies/${policy.id}`, { token: t.admin.token })).status).toBe(204);
    expect((await t.api("GET", `/api/mlpolicies/${policy.id}`, { token: t.admin.token })).status).toBe(404);
  });

  it("lists with installedOn, sort, order, filters and paging", async () => {
    const list = (query: Record<string, string | number>) =>
      t.api<MlPolicy[]>("GET", "/api/mlpolicies", { token: t.admin.token, query });
    const all = await list({});
    expect(all.status).toBe(200);
    const total = Number(all.headers.get("records-total"));
    expect(total).toBe(all.body.length);
    expect(all.body.map((p) => p.name)).toEqual([...all.body.map((p) => p.name)].sort());
    const installed = await list({ filter: f({ key: "installedOn", op: ">", val: 0 }), sort: "installedOn", order: "desc" });
    // branch-1 moved from by-filter to remove-me, then had it uninstalled.
    expect(installed.body.map((p) => [p.name, p.installedOn])).toEqual([
      ["change-me", 2],
      ["by-filter", 1],
    ]);
    const page = await list({ sort: "name", order: "desc", offset: 1, limit: 2 });
    expect(page.headers.get("records-total")).toBe(String(total));
    expect(page.body.map((p) => p.name)).toEqual(
      all.body
        .map((p) => p.name)
        .reverse()
        .slice(1, 3),
    );
    expect((await list({ filter: f({ key: "name", op: "contains", val: "CHANGE" }) })).body.map((p) => p.name)).toEqual([
      "change-me",
    ]);
    expect((await list({ filter: f({ key: "name", op: "in", val: ["voice", "idle 2"] }) })).body).toHaveLength(2);
    expect(
      (await list({ filter: f({ key: "updatedAt", op: ">=", val: new Date(Date.now() + 60_000).toISOString() }) })).body,
    ).toEqual([]);
  });
});

describe("fleet-wide install", () => {
  const t = useTestServer();

  it("one call installs on every matching device of the organization only: one job each, ids in the body", async () => {
    const label = (await t.api<PathLabel>("POST", "/api/pathlabels", { token: t.admin.token, body: { name: "ISP" } })).body;
    const policy = (
      await t.api<MlPolicy>("POST", "/api/mlpolicies", {
        token: t.admin.token,
        body: { name: "fleet", rules: [{ name: "all", priority: 1, match: {}, action: { pathlabels: [label.id] } }] },
      })
    ).body;
    const count = 120;
    for (let i = 0; i < count; i++) await insertTestDevice(t, { name: `fleet-${i}` });
    const tenant = await t.createTenant("Untouched");
    const theirs = await insertTestDevice(t, { name: "theirs", orgId: tenant.orgId });

    const res = await t.api<Jobs>("POST", `/api/mlpolicies/${policy.id}/install`, { token: t.admin.token, body: { filter: [] } });
    expect(res.status).toBe(202);
    expect(res.body.jobIds).toHaveLength(count);
    // Over 100 ids the Location header would be too long for HTTP clients: it names one job group to follow.
    const location = res.headers.get("location")!;
    expect(location).toMatch(/^\/api\/jobs\?group=[0-9a-f-]{36}$/);
    const followed = await t.api<{ id: string }[]>("GET", `${location}&limit=500`, { token: t.admin.token });
    expect(followed.status).toBe(200);
    expect(followed.body.map((j) => j.id).sort()).toEqual([...res.body.jobIds].sort());
    const jobs = await t.database.db.selectFrom("jobs").select(["device_id", "type"]).where("type", "=", "mlpolicy").execute();
    expect(new Set(jobs.map((j) => j.device_id)).size).toBe(count);
    const their = await t.database.db
      .selectFrom("devices")
      .select(["mlpolicy_id", "desired_config_enc"])
      .where("id", "=", theirs.id)
      .executeTakeFirstOrThrow();
    expect(their).toEqual({ mlpolicy_id: null, desired_config_enc: null });
    expect((await t.api<MlPolicy>("GET", `/api/mlpolicies/${policy.id}`, { token: t.admin.token })).body.installedOn).toBe(count);
  });
});
