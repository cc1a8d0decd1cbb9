/**
 * The spec's Versioning table: each backward-incompatible change of the
 * device API, shown with the 6.3.1 behaviour (one `describe` per row), plus
 * the organization tunnel-range check that reads the devices' LAN subnets.
 */
import { randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { type Device, InterfaceStatusResponse } from "@tern/protocol";
import { beforeAll, describe, expect, it } from "vitest";
import { insertValidDevice } from "../../../test/support/device-fixtures.ts";
import { useTestServer } from "../../../test/support/test-server.ts";
import { toJson } from "../../db/json.ts";

type ErrorBody = { code: string; error: string; details: { path: string; message: string }[] };

const FIXTURES = join(import.meta.dirname, "../../../../../packages/protocol/fixtures/v1");
const fixture = (path: string) => JSON.parse(readFileSync(join(FIXTURES, path), "utf8"));
const sample = fixture("Device/valid-full.json") as Device;

describe("Versioning table (device API)", () => {
  const t = useTestServer();
  let orgId: string;
  let deviceId: string;

  const put = <T = unknown>(body: unknown) =>
    t.api<T>("PUT", `/api/devices/${deviceId}`, { token: t.admin.token, body, query: { org: orgId } });
  const get = async () =>
    (await t.api<Device>("GET", `/api/devices/${deviceId}`, { token: t.admin.token, query: { org: orgId } })).body;

  beforeAll(async () => {
    // The protocol's sample device (WAN 10.100.1.2/24) in an organization whose tunnel range does not cover it.
    const org = await t.api<{ id: string }>("POST", "/api/organizations", {
      token: t.admin.token,
      body: { name: "Versioning", tunnelRange: "10.250.0.0/16" },
    });
    orgId = org.body.id;
    deviceId = randomUUID();
    await t.database.db
      .insertInto("devices")
      .values({
        id: deviceId,
        organization_id: orgId,
        name: "edge-a",
        hostname: "edge-a",
        machine_id: sample.machineId,
        is_approved: true,
        device_token_hash: `versioning-${deviceId}`,
        interfaces: toJson(sample.interfaces.map((i) => ({ ...i, id: randomUUID(), pathlabels: [] }))),
        static_routes: toJson([]),
        dhcp: toJson([]),
        bgp: toJson({ ...sample.bgp, enable: false, neighbors: [] }),
        firewall: toJson({ rules: [] }),
      })
      .execute();
  });

  describe("5.1.1 — PUT /devices/{id}: deviceSpecifficRulesEnabled renamed to deviceSpecificRulesEnabled", () => {
    it("the misspelled field is refused with a message naming the new one; the new one works", async () => {
      const invalid = fixture("DeviceUpdate/invalid-misspelled-rules-flag.json");
      const res = await put<ErrorBody>(invalid.value);
      expect(res.status).toBe(400);
      expect(res.body.code).toBe("VALIDATION_FAILED");
      expect(res.body.details).toHaveLength(1);
      expect(res.body.details[0]!.path).toBe(invalid.expectPath);
      expect(res.body.details[0]!.message).toContain("deviceSpecificRulesEnabled");
      // Even together with the right spelling, and with false: the old name is never silently accepted.
      const both = await put<ErrorBody>({ deviceSpecificRulesEnabled: false, deviceSpecifficRulesEnabled: false });
      expect(both.status).toBe(400);
      expect((await get()).deviceSpecificRulesEnabled).toBe(true);

      const ok = await put({ deviceSpecificRulesEnabled: false });
      expect([200, 202]).toContain(ok.status);
      expect((await get()).deviceSpecificRulesEnabled).toBe(false);
    });
  });

  describe("6.3.1 — Devices: BGP multiHop is required when BGP is used", () => {
    it("a neighbor without multiHop is refused while BGP is enabled, accepted while disabled", async () => {
      const invalid = fixture("DeviceUpdate/invalid-bgp-without-multihop.json");
      const res = await put<ErrorBody>(invalid.value);
      expect(res.status).toBe(400);
      expect(res.body.code).toBe("VALIDATION_FAILED");
      expect(res.body.details.map((d) => d.path)).toEqual([invalid.expectPath]);
      expect(res.body.details[0]!.message).toMatch(/multiHop is required/);
      expect((await get()).bgp.enable).toBe(false);

      const disabled = await put({ bgp: { ...invalid.value.bgp, enable: false } });
      expect([200, 202]).toContain(disabled.status);
      const withHop = { ...invalid.value.bgp, neighbors: [{ ...invalid.value.bgp.neighbors[0], multiHop: 2 }] };
      expect(await put({ bgp: withHop })).toMatchObject({ status: 202 });
      expect((await get()).bgp.neighbors[0]).toMatchObject({ ip: "10.100.2.2", multiHop: 2 });
    });
  });

  describe("6.3.1 — Devices: firewall LAN NAT rules, DHCP lease times, useHostNameAsDhcpOption (new fields)", () => {
    it("the protocol's sample update is stored and read back", async () => {
      const body = fixture("DeviceUpdate/valid-dhcp-bgp-firewall.json");
      const res = await put(body);
      expect(res.status).toBe(202);
      const device = await get();
      expect(device.firewall.rules).toContainEqual({
        direction: "lanNat",
        description: "site A 1:1",
        enabled: true,
        interface: "mac:02:00:00:00:0a:02",
        source: "192.168.50.0/24",
        translated: "10.50.0.0/24",
      });
      expect(device.dhcp[0]).toMatchObject({ defaultLeaseTime: 3600, maxLeaseTime: 7200 });
      expect(device.dhcp[0]!.macAssign[0]!.useHostNameAsDhcpOption).toBe(true);
      const nat = await put<ErrorBody>(fixture("DeviceUpdate/invalid-nat-prefix-length-differs.json").value);
      expect(nat.body.details.map((d) => d.path)).toContain("firewall.rules.1.translated");
      const lease = fixture("DeviceUpdate/invalid-default-lease-above-max.json");
      expect((await put<ErrorBody>(lease.value)).body.details.map((d) => d.path)).toContain(lease.expectPath);
    });
  });

  describe("6.3.1 — Interface status: text field removed from LTE status", () => {
    it("the document's LteStatus is closed and has no text field; a status with one does not parse", async () => {
      const doc = await t.api<{ components: { schemas: Record<string, unknown> } }>("GET", "/api/openapi.json");
      const schemas = doc.body.components.schemas;
      const lte = Object.values(schemas)
        .flatMap((s) => findLte(s))
        .at(0);
      expect(lte).toBeDefined();
      expect(lte!.additionalProperties).toBe(false);
      expect(Object.keys(lte!.properties)).not.toContain("text");
      expect(Object.keys(lte!.properties)).toEqual(expect.arrayContaining(["connected", "simStatus", "operator", "signal"]));

      const invalid = fixture("InterfaceStatusResponse/invalid-lte-text-field-removed.json");
      const parsed = InterfaceStatusResponse.safeParse(invalid.value);
      expect(parsed.success).toBe(false);
      expect(parsed.error!.issues.map((i) => i.path.join("."))).toContain(invalid.expectPath);
      expect(InterfaceStatusResponse.safeParse(fixture("InterfaceStatusResponse/valid-lte.json")).success).toBe(true);
    });

    it("a state with the old text field never reaches the API", async () => {
      const valid = fixture("InterfaceStatusResponse/valid-lte.json");
      const device = await get();
      t.deps.deviceStatus = {
        interfaceState: async () => ({
          source: "reported",
          state: { ...valid.state, lte: { ...valid.state.lte, text: "Connected to Lab Mobile" } },
          reportedAt: new Date(),
        }),
        bgpState: async () => null,
      };
      try {
        const res = await t.api("GET", `/api/devices/${deviceId}/interfaces/${device.interfaces[0]!.id}/status`, {
          token: t.admin.token,
          query: { org: orgId },
        });
        expect(res.status).toBe(500);
        expect(res.text).not.toContain("Connected to Lab Mobile");
      } finally {
        t.deps.deviceStatus = undefined;
      }
    });
  });

  describe("6.3.1 — Organizations (GET, PUT): tunnel range parameter", () => {
    it("a tunnel range overlapping a device's LAN subnet is refused with LAN_OVERLAPPING naming the subnet", async () => {
      const device = await insertValidDevice(t, { lanIp: "10.60.4.1" });
      const refused = await t.api<ErrorBody>("PUT", `/api/organizations/${t.admin.orgId}`, {
        token: t.admin.token,
        body: { tunnelRange: "10.60.0.0/16" },
      });
      expect(refused.status).toBe(400);
      expect(refused.body.code).toBe("LAN_OVERLAPPING");
      expect(refused.body.details).toEqual([
        { path: "tunnelRange", message: `10.60.0.0/16 overlaps 10.60.4.0/24 on LAN interface lan0 of device ${device.name}` },
      ]);
      const org = await t.api<{ tunnelRange: string }>("GET", `/api/organizations/${t.admin.orgId}`, { token: t.admin.token });
      expect(org.body.tunnelRange).toBe("10.100.0.0/16");

      // An unassigned LAN does not count.
      await t.database.db
        .updateTable("devices")
        .set({ interfaces: toJson([device.wan, { ...device.lan, isAssigned: false }]) })
        .where("id", "=", device.id)
        .execute();
      const accepted = await t.api<{ tunnelRange: string }>("PUT", `/api/organizations/${t.admin.orgId}`, {
        token: t.admin.token,
        body: { tunnelRange: "10.60.0.0/16" },
      });
      expect(accepted.status).toBe(200);
      expect(accepted.body.tunnelRange).toBe("10.60.0.0/16");
    });
  });
});

type JsonSchema = { properties: Record<string, unknown>; additionalProperties?: unknown };

/** The schema object that describes LteStatus (it is inlined where InterfaceState uses it). */
function findLte(node: unknown): JsonSchema[] {
  if (!node || typeof node !== "object") return [];
  const obj = node as Record<string, unknown>;
  const props = obj.properties as Record<string, unknown> | undefined;
  const here = props && "simStatus" in props && "accessTechnology" in props ? [obj as JsonSchema] : [];
  return [...here, ...Object.values(obj).flatMap(findLte)];
}
