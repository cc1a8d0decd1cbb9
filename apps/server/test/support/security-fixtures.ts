/**
 * Path parameters for the security matrix: for a route path, a function that
 * creates a resource in the admin's organization (tenant A) and returns the
 * values of the path's parameters, and optionally a valid body per method (so
 * another tenant's request gets past validation to the lookup that must fail).
 * The matrix then checks that another tenant cannot reach that real resource.
 * Paths without an entry get random ids (authorization still runs before the
 * lookup, so the other checks apply).
 *
 * Issue-4 helpers: add an entry for each new `{id}` path of your resources.
 */
import { createTestRollout, generateSigningKeys, uploadTestPackage } from "./agent-upgrades.ts";
import { insertTestJob, insertValidDevice } from "./device-fixtures.ts";
import { insertTestDevice } from "./devices.ts";
import { insertInvitation } from "./invitations.ts";
import type { TestServer } from "./test-server.ts";
import { createPeer, createTunnels, PEER, tunnelBody, wanDevice } from "./tunnels.ts";

export interface Fixture {
  params: Record<string, string>;
  /** A valid body by method ("put", "post" …) for routes that take one. */
  bodies?: Record<string, unknown>;
}
export type FixtureFactory = (t: TestServer) => Promise<Fixture>;

export const SECURITY_FIXTURES: Record<string, FixtureFactory> = {
  // Installation-wide branding: a valid body, so the administrator's request succeeds (the logo upload's raw body is
  // tested in routes/branding/branding.test.ts; here its JSON body is refused after authorization, with 415).
  "/api/branding": async () => ({ params: {}, bodies: { put: { productName: "Matrix" } } }),
  // PUT /organizations changes the request's organization (no path parameter); POST keeps its empty body.
  "/api/organizations": async () => ({ params: {}, bodies: { put: { description: "x" } } }),
  "/api/organizations/{id}": async (t) => ({ params: { id: t.admin.orgId }, bodies: { put: { description: "x" } } }),
  // Turning the requirement off needs no 2FA of the caller, so the owner's request succeeds.
  "/api/organizations/{id}/security": async (t) => ({ params: { id: t.admin.orgId }, bodies: { put: { requireMfa: false } } }),
  "/api/organizations/{id}/healing": async (t) => ({ params: { id: t.admin.orgId }, bodies: { put: { mode: "act" } } }),
  "/api/sso/providers/{id}": async (t) => {
    const res = await t.api<{ id: string }>("POST", "/api/sso/providers", {
      token: t.admin.token,
      body: {
        name: `fixture-${Date.now()}-${Math.random()}`,
        issuer: "https://idp.example.com",
        clientId: "c",
        clientSecret: "s",
      },
    });
    if (res.status !== 201) throw new Error(`SSO provider fixture: ${res.status} ${res.text}`);
    return { params: { id: res.body.id }, bodies: { put: { enabled: false } } };
  },
  // Agent upgrades: the account's keys and packages, the organization's rollouts (real ones, so another tenant's
  // request reaches the lookup that must fail).
  "/api/agent-signing-keys": async () => ({
    params: {},
    bodies: { post: { name: "matrix key", publicKey: generateSigningKeys().publicKey } },
  }),
  "/api/agent-signing-keys/{id}": async (t) => {
    const res = await t.api<{ id: string }>("POST", "/api/agent-signing-keys", {
      token: t.admin.token,
      body: { name: "matrix key", publicKey: generateSigningKeys().publicKey },
    });
    if (res.status !== 201) throw new Error(`signing key fixture: ${res.status} ${res.text}`);
    return { params: { id: res.body.id } };
  },
  "/api/agent-packages/{id}": async (t) => ({ params: { id: (await uploadTestPackage(t)).id } }),
  "/api/agent-upgrades": async (t) => ({
    params: {},
    bodies: { post: { package: (await uploadTestPackage(t)).id, target: { deviceIds: [(await insertValidDevice(t)).id] } } },
  }),
  "/api/agent-upgrades/{id}": async (t) => ({ params: { id: (await createTestRollout(t)).rollout.id } }),
  "/api/agent-upgrades/{id}/pause": async (t) => ({ params: { id: (await createTestRollout(t)).rollout.id } }),
  "/api/agent-upgrades/{id}/resume": async (t) => ({ params: { id: (await createTestRollout(t)).rollout.id } }),
  "/api/agent-upgrades/{id}/cancel": async (t) => ({ params: { id: (await createTestRollout(t)).rollout.id } }),
  "/api/accounts/{id}": async (t) => ({ params: { id: t.admin.accountId }, bodies: { put: { country: "NL" } } }),
  "/api/members/{id}": async (t) => {
    const member = await t.addMember("viewer");
    return { params: { id: member.membershipId }, bodies: { put: { role: "manager" } } };
  },
  "/api/members/{id}/sessions": async (t) => ({ params: { id: (await t.addMember("viewer")).membershipId } }),
  "/api/members/{id}/sessions/{sessionId}": async (t) => {
    const member = await t.addMember("viewer");
    const [, payload] = member.token.split(".");
    const { sid } = JSON.parse(Buffer.from(payload!, "base64url").toString()) as { sid: string };
    return { params: { id: member.membershipId, sessionId: sid } };
  },
  "/api/invitations/{id}": async (t) => ({
    params: {
      id: (
        await insertInvitation(t.database.db, {
          orgId: t.admin.orgId,
          scope: "organization",
          email: `fixture-${Date.now()}-${Math.random()}@example.com`,
          role: "viewer",
        })
      ).id,
    },
  }),
  "/api/accesstokens/{id}": async (t) => {
    const res = await t.api<{ id: string }>("POST", "/api/accesstokens", {
      token: t.admin.token,
      body: { name: `fixture-${Date.now()}`, role: "viewer" },
    });
    if (res.status !== 201) throw new Error(`access token fixture: ${res.status} ${res.text}`);
    return { params: { id: res.body.id } };
  },
  "/api/tunnels/{id}": async (t) => {
    const created = await createTunnels(t, tunnelBody(await wanDevice(t), await wanDevice(t)));
    return { params: { id: created.tunnels[0]!.id } };
  },
  "/api/peers/{id}": async (t) => {
    const peer = await createPeer(t);
    return { params: { id: peer.id }, bodies: { put: { ...PEER, name: peer.name } } };
  },
  "/api/tokens/{id}": async (t) => {
    const res = await t.api<{ id: string }>("POST", "/api/tokens", { token: t.admin.token, body: { name: "fixture" } });
    if (res.status !== 201) throw new Error(`registration token fixture: ${res.status} ${res.text}`);
    return { params: { id: res.body.id } };
  },
  "/api/tunnels/{id}/stats": async (t) => {
    const created = await createTunnels(t, tunnelBody(await wanDevice(t), await wanDevice(t)));
    return { params: { id: created.tunnels[0]!.id } };
  },
  "/api/devices/{id}": async (t) => ({
    params: { id: (await insertValidDevice(t)).id },
    bodies: { put: { description: "fixture" } },
  }),
  "/api/devices/{id}/tunnels": async (t) => ({ params: { id: (await insertValidDevice(t)).id } }),
  // Statistics history: a real device of tenant A; the organization aggregates take the organization's id.
  "/api/devices/{id}/statistics": async (t) => ({ params: { id: (await insertValidDevice(t)).id } }),
  "/api/organizations/{id}/statistics/top-talkers": async (t) => ({ params: { id: t.admin.orgId } }),
  "/api/organizations/{id}/statistics/worst-tunnels": async (t) => ({ params: { id: t.admin.orgId } }),
  // Diagnostic dumps: a device of tenant A with a stored dump, so other tenants aim at real ones.
  "/api/devices/{id}/dump": async (t) => ({ params: { id: (await insertValidDevice(t)).id } }),
  "/api/devices/{id}/dumps": async (t) => ({ params: (await insertDump(t)).params }),
  "/api/devices/{id}/dumps/{dumpId}": async (t) => insertDump(t),
  // Diagnostics (issue 19): valid bodies, so other tenants get past validation to the device lookup that must fail.
  "/api/devices/{id}/diagnostics/ping": async (t) => ({
    params: { id: (await insertValidDevice(t)).id },
    bodies: { post: { target: "192.0.2.1", count: 1 } },
  }),
  "/api/devices/{id}/diagnostics/traceroute": async (t) => ({
    params: { id: (await insertValidDevice(t)).id },
    bodies: { post: { target: "192.0.2.1" } },
  }),
  "/api/devices/{id}/diagnostics/dns": async (t) => ({
    params: { id: (await insertValidDevice(t)).id },
    bodies: { post: { name: "example.com" } },
  }),
  "/api/devices/{id}/logs": async (t) => ({ params: { id: (await insertValidDevice(t)).id } }),
  "/api/devices/{id}/bgp/status": async (t) => ({ params: { id: (await insertValidDevice(t)).id } }),
  // Remote actions and tags (issue 19): devices of tenant A, with bodies that need no more than the routes' `put`
  // (reset also needs `del`: routes/devices/devices-actions.test.ts), so another tenant's request reaches the lookup.
  "/api/devices/{id}/actions": async (t) => ({
    params: { id: (await insertValidDevice(t)).id },
    bodies: { post: { action: "restart-agent" } },
  }),
  "/api/devices/actions": async (t) => ({
    params: {},
    bodies: { post: { action: "restart-agent", deviceIds: [(await insertValidDevice(t)).id] } },
  }),
  "/api/devices/tags": async (t) => ({
    params: {},
    bodies: { post: { deviceIds: [(await insertValidDevice(t)).id], add: ["matrix"] } },
  }),
  "/api/devices/{id}/interfaces/{interfaceId}/status": async (t) => {
    const device = await insertValidDevice(t);
    return { params: { id: device.id, interfaceId: device.wan.id } };
  },
  "/api/jobs/{id}": async (t) => ({ params: { id: await insertTestJob(t, (await insertValidDevice(t)).id) } }),
  // ---- Resources of the resources helper (issue 4): notifications are bulk routes without {id}. ----
  "/api/pathlabels/{id}": async (t) => ({
    params: { id: (await created(t, "/api/pathlabels", { name: unique("fixture label") })).id },
    bodies: { put: { name: unique("fixture label") } },
  }),
  "/api/mlpolicies/{id}": async (t) => ({
    params: { id: (await created(t, "/api/mlpolicies", { name: unique("fixture policy") })).id },
    bodies: { put: { name: unique("fixture policy") } },
  }),
  // A pending device of tenant A: another tenant's request must not find (or approve) it.
  "/api/devices/approve": async (t) => ({
    params: {},
    bodies: { post: { deviceIds: [(await insertValidDevice(t, { approved: false })).id] } },
  }),
  "/api/mlpolicies/{id}/install": async (t) => ({
    params: { id: (await created(t, "/api/mlpolicies", { name: unique("fixture policy") })).id },
    bodies: { post: { filter: [] } },
  }),
  "/api/mlpolicies/{id}/uninstall": async (t) => ({
    params: { id: (await created(t, "/api/mlpolicies", { name: unique("fixture policy") })).id },
    bodies: { post: { filter: [] } },
  }),
  "/api/vrrp/{id}": async (t) => {
    const body = await vrrpBody(t);
    return { params: { id: (await created(t, "/api/vrrp", body)).id }, bodies: { put: body } };
  },
  "/api/appstore/purchased/{id}": async (t) => ({ params: { id: await purchased(t, "remote-vpn") } }),
  "/api/appstore/purchased/{id}/action": async (t) => ({
    params: { id: await purchased(t, "config-snapshot") },
    bodies: { post: { action: "take-snapshot", params: { label: "fixture" } } },
  }),
  // /api/appstore/purchase/{id} takes a catalog id, not a tenant's resource: every tenant may buy every app.
};

let fixtureCounter = 0;
const unique = (prefix: string) => `${prefix} ${++fixtureCounter}-${Math.random().toString(36).slice(2, 8)}`;

async function created(t: TestServer, path: string, body: unknown): Promise<{ id: string }> {
  const res = await t.api<{ id: string }>("POST", path, { token: t.admin.token, body });
  if (res.status !== 201) throw new Error(`fixture ${path}: ${res.status} ${res.text}`);
  return res.body;
}

/** A VRRP group body over two new devices on one LAN, with a virtual router id no group of the org uses. */
async function vrrpBody(t: TestServer) {
  const a = await insertTestDevice(t, { lanIp: "192.168.77.2" });
  const b = await insertTestDevice(t, { lanIp: "192.168.77.3" });
  const groups = await t.api<{ virtualRouterId: number }[]>("GET", "/api/vrrp", { token: t.admin.token, query: { limit: 1000 } });
  const used = new Set(groups.body.map((g) => g.virtualRouterId));
  const vrid = Array.from({ length: 255 }, (_, i) => i + 1).find((n) => !used.has(n));
  return {
    name: unique("fixture group"),
    virtualRouterId: vrid,
    virtualIp: "192.168.77.1",
    devices: [
      { device: a.id, interface: a.lan.devId },
      { device: b.id, interface: b.lan.devId },
    ],
  };
}

/** The admin organization's purchase of a catalog app, bought when missing. */
async function purchased(t: TestServer, appId: string): Promise<string> {
  const list = await t.api<{ id: string }[]>("GET", "/api/appstore/purchased", {
    token: t.admin.token,
    query: { filter: JSON.stringify([{ key: "app", op: "==", val: appId }]) },
  });
  const existing = list.body[0];
  if (existing) return existing.id;
  return (await created(t, `/api/appstore/purchase/${appId}`, undefined)).id;
}

/** A device of the admin's organization with one complete dump (bytes "tar.gz of tenant A"). */
async function insertDump(t: TestServer): Promise<Fixture> {
  const device = await insertValidDevice(t);
  const id = crypto.randomUUID();
  await t.database.db
    .insertInto("device_dumps")
    .values({
      id,
      organization_id: t.admin.orgId,
      device_id: device.id,
      status: "complete",
      file_name: "tern-agent-dump-a-20261125T000000Z.tar.gz",
      size_bytes: 18,
      sha256: "0".repeat(64),
      content: Buffer.from("tar.gz of tenant A"),
      requested_by: "fixture",
    })
    .execute();
  return { params: { id: device.id, dumpId: id } };
}
