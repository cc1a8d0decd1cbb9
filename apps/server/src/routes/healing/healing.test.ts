/** GET /api/healing/actions and GET/PUT /api/organizations/{id}/healing: happy paths, bad input, tenancy and rights. */
import type { AuditEntry, HealingAction, HealingSettings } from "@tern/protocol";
import { describe, expect, it } from "vitest";
import { useTestServer } from "../../../test/support/test-server.ts";
import { SYSTEM_ACTOR } from "../../auth/access.ts";
import { recordHealingAction } from "../../services/healing/actions.ts";

type ErrorBody = { code: string };
const T1 = "00000000-0000-4000-8000-0000000000a1";
const D1 = "00000000-0000-4000-8000-0000000000d1";
const D2 = "00000000-0000-4000-8000-0000000000d2";

describe("healing routes", () => {
  const t = useTestServer();
  const org = () => ({ id: t.admin.orgId, accountId: t.admin.accountId, name: "Default organization" });
  const record = (o: { id: string; accountId: string; name: string }, over: Partial<Parameters<typeof recordHealingAction>[3]>) =>
    recordHealingAction(t.deps.db, o, SYSTEM_ACTOR, {
      deviceId: D1,
      tunnelId: null,
      kind: "reroute",
      mode: "act",
      source: "server",
      link: "wan:wan0",
      reason: "rtt 80 (baseline 10 ± 1)",
      before: { rtt: 80, rttBaseline: 10 },
      after: null,
      ...over,
    });

  it("lists the organization's actions newest first, filtered by device, tunnel, kind and time, with their evidence", async () => {
    await record(org(), { at: new Date("2026-11-25T10:00:00Z") });
    await record(org(), {
      deviceId: D2,
      tunnelId: T1,
      kind: "sa-reinitiate",
      source: "agent",
      link: `tunnel:${T1}`,
      before: { silentMs: 3100 },
      after: { restoredAfterMs: 400 },
      agentRef: "r1",
      at: new Date("2026-11-25T11:00:00Z"),
    });
    const other = await t.createTenant("Elsewhere");
    await record({ id: other.orgId, accountId: other.accountId, name: "Elsewhere" }, { deviceId: D1 });

    const list = (query: Record<string, string> = {}) =>
      t.api<HealingAction[]>("GET", "/api/healing/actions", { token: t.admin.token, query });
    const all = await list();
    expect(all.status).toBe(200);
    expect(all.headers.get("records-total")).toBe("2");
    expect(all.body.map((a) => a.kind)).toEqual(["sa-reinitiate", "reroute"]);
    expect(all.body[0]).toMatchObject({
      source: "agent",
      mode: "act",
      deviceId: D2,
      tunnelId: T1,
      before: { silentMs: 3100 },
      after: { restoredAfterMs: 400 },
    });
    expect((await list({ deviceId: D1 })).body.map((a) => a.kind)).toEqual(["reroute"]);
    expect((await list({ tunnelId: T1 })).body.map((a) => a.kind)).toEqual(["sa-reinitiate"]);
    expect((await list({ kind: "reroute" })).body).toHaveLength(1);
    expect((await list({ since: "2026-11-25T10:30:00Z" })).body.map((a) => a.kind)).toEqual(["sa-reinitiate"]);
    expect((await list({ until: "2026-11-25T10:30:00Z" })).body.map((a) => a.kind)).toEqual(["reroute"]);
    // The other organization's action is its own.
    const theirs = await t.api<HealingAction[]>("GET", "/api/healing/actions", { token: other.token });
    expect(theirs.body).toHaveLength(1);
    expect(theirs.body[0]!.id).not.toBe(all.body[1]!.id);

    // Each action is in the audit log too.
    const audit = await t.api<AuditEntry[]>("GET", "/api/audit", {
      token: t.admin.token,
      query: { filter: JSON.stringify([{ key: "resource", op: "==", val: "healing" }]) },
    });
    expect(audit.body.map((e) => e.action).sort()).toEqual(["healing:reroute", "healing:sa-reinitiate"]);
  });

  it("bad filters are a 400 VALIDATION_FAILED", async () => {
    for (const query of [{ deviceId: "nope" }, { kind: "reboot" }, { since: "yesterday" }]) {
      const res = await t.api<ErrorBody>("GET", "/api/healing/actions", { token: t.admin.token, query });
      expect(res.status).toBe(400);
      expect(res.body.code).toBe("VALIDATION_FAILED");
    }
  });

  it("the mode: act by default, changed by owners (audited), refused for viewers, strict input", async () => {
    const path = `/api/organizations/${t.admin.orgId}/healing`;
    expect((await t.api<HealingSettings>("GET", path, { token: t.admin.token })).body).toEqual({ mode: "act" });
    const put = await t.api<HealingSettings>("PUT", path, { token: t.admin.token, body: { mode: "suggest" } });
    expect(put.status).toBe(200);
    expect(put.body).toEqual({ mode: "suggest" });
    expect((await t.api<HealingSettings>("GET", path, { token: t.admin.token })).body).toEqual({ mode: "suggest" });
    const audit = await t.api<AuditEntry[]>("GET", "/api/audit", { token: t.admin.token, query: { sort: "at", order: "desc" } });
    expect(audit.body[0]).toMatchObject({
      action: "update",
      resource: "organizations",
      before: { healingMode: "act" },
      after: { healingMode: "suggest" },
    });

    for (const body of [{ mode: "maybe" }, { mode: "act", extra: 1 }, {}]) {
      const bad = await t.api<ErrorBody>("PUT", path, { token: t.admin.token, body });
      expect(bad.status).toBe(400);
      expect(bad.body.code).toBe("VALIDATION_FAILED");
    }
    const viewer = await t.addMember("viewer");
    expect((await t.api("GET", path, { token: viewer.token })).status).toBe(200);
    expect((await t.api("GET", "/api/healing/actions", { token: viewer.token })).status).toBe(200);
    const refused = await t.api<ErrorBody>("PUT", path, { token: viewer.token, body: { mode: "off" } });
    expect(refused.status).toBe(403);
    expect((await t.api("PUT", path, { body: { mode: "off" } })).status).toBe(401);
    const other = await t.createTenant("Other tenant");
    // Another tenant does not even see the organization.
    expect((await t.api("PUT", path, { token: other.token, body: { mode: "off" } })).status).toBe(404);
    expect((await t.api<HealingSettings>("GET", path, { token: t.admin.token })).body).toEqual({ mode: "suggest" });
  });
});
