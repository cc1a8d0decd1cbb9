/** GET /api/audit: every change is logged in its transaction, with before/after; owners and managers only. */
import type { AuditEntry } from "@tern/protocol";
import { describe, expect, it } from "vitest";
import { useTestServer } from "../../../test/support/test-server.ts";
import { systemCtx } from "../../services/context.ts";
import { updateOrganization } from "../../services/organizations.ts";

describe("audit log", () => {
  const t = useTestServer();
  const audit = (query: Record<string, string> = {}) => t.api<AuditEntry[]>("GET", "/api/audit", { token: t.admin.token, query });

  it("records a change with who, what, before and after", async () => {
    const put = await t.api("PUT", `/api/organizations/${t.admin.orgId}`, {
      token: t.admin.token,
      body: { tunnelRange: "10.50.0.0/16" },
    });
    expect(put.status).toBe(200);
    const res = await audit({ filter: JSON.stringify([{ key: "resource", op: "==", val: "organizations" }]) });
    expect(res.status).toBe(200);
    const entry = res.body.find((e) => e.action === "update")!;
    expect(entry).toMatchObject({
      actor: t.admin.email,
      org: t.admin.orgId,
      resource: "organizations",
      resourceId: t.admin.orgId,
    });
    expect(entry.before).toMatchObject({ tunnelRange: "10.100.0.0/16" });
    expect(entry.after).toMatchObject({ tunnelRange: "10.50.0.0/16" });
  });

  it("a refused change leaves no entry (same transaction)", async () => {
    const before = Number((await audit()).headers.get("records-total"));
    const created = await t.api("POST", "/api/organizations", { token: t.admin.token, body: { name: "Once" } });
    expect(created.status).toBe(201);
    const duplicate = await t.api("POST", "/api/organizations", { token: t.admin.token, body: { name: "Once" } });
    expect(duplicate.status).toBe(409);
    const orgs = await t.api<{ id: string }[]>("GET", "/api/organizations", { token: t.admin.token });
    // The creation is logged in the new organization's log, not this one; the refusal nowhere.
    const inNew = await t.api<AuditEntry[]>("GET", "/api/audit", {
      token: t.admin.token,
      query: { org: (created.body as { id: string }).id },
    });
    expect(inNew.body.filter((e) => e.action === "create" && e.resource === "organizations")).toHaveLength(1);
    expect(Number((await audit()).headers.get("records-total"))).toBe(before);
    expect(orgs.body).toHaveLength(2);
  });

  it("keys and members appear with their actor; secrets never", async () => {
    const key = await t.api<{ id: string; token: string }>("POST", "/api/accesstokens", {
      token: t.admin.token,
      body: { name: "audited", role: "owner" },
    });
    const member = await t.addMember("viewer");
    await t.api("PUT", `/api/members/${member.membershipId}`, { token: key.body.token, body: { role: "manager" } });
    const res = await audit({ sort: "at", order: "desc" });
    const memberEntry = res.body.find((e) => e.resource === "members" && e.action === "update")!;
    expect(memberEntry.actor).toBe("token:audited");
    // The member joined by accepting an invitation: that is audited as the member.
    expect(res.body.find((e) => e.resource === "members" && e.action === "create")?.actor).toBe(member.email);
    expect(res.text).not.toContain(key.body.token);
    expect(res.text).not.toContain(member.password);
    expect(res.body.find((e) => e.resource === "accesstokens" && e.resourceId === key.body.id)?.actor).toBe(t.admin.email);
  });

  it("is for owners and managers: viewers get 403", async () => {
    const viewer = await t.addMember("viewer");
    const manager = await t.addMember("manager");
    expect((await t.api("GET", "/api/audit", { token: viewer.token })).status).toBe(403);
    expect((await t.api("GET", "/api/audit", { token: manager.token })).status).toBe(200);
  });

  it("changes the server makes by itself (systemCtx) are audited as system", async () => {
    const org = { id: t.admin.orgId, accountId: t.admin.accountId, name: "Default organization" };
    await updateOrganization(systemCtx(t.deps, org), { description: "set by the server" });
    const res = await audit({ filter: JSON.stringify([{ key: "actor", op: "==", val: "system" }]), sort: "at", order: "desc" });
    expect(res.body[0]).toMatchObject({
      action: "update",
      resource: "organizations",
      after: { description: "set by the server" },
    });
  });

  it("starts with the bootstrap entry of the first start", async () => {
    const res = await audit({ filter: JSON.stringify([{ key: "action", op: "==", val: "bootstrap" }]) });
    expect(res.body).toHaveLength(1);
    expect(res.body[0]).toMatchObject({ actor: "system", resource: "accounts", resourceId: t.admin.accountId });
  });
});
