/**
 * Devices for tests of resources that need them (tunnels, VRRP, policies…),
 * inserted straight into the database: an approved device with a WAN and a
 * LAN interface shaped like the protocol's Device fixture.
 */
import { randomBytes, randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { Device, DeviceInterface } from "@tern/protocol";
import { toJson } from "../../src/db/json.ts";
import { syncLanIndex } from "../../src/services/lan-index/store.ts";
import type { TestServer } from "./test-server.ts";

const sample = JSON.parse(
  readFileSync(join(import.meta.dirname, "../../../../packages/protocol/fixtures/v1/Device/valid-full.json"), "utf8"),
) as Device;

export interface TestDevice {
  id: string;
  name: string;
  wan: DeviceInterface;
  lan: DeviceInterface;
}

export interface TestDeviceOptions {
  name?: string;
  orgId?: string;
  /** WAN address (a /24 with gateway .1), default 10.100.<n>.2. */
  wanIp?: string;
  /** LAN interface address (/24), default 192.168.<n>.1. */
  lanIp?: string;
  approved?: boolean;
}

let counter = 0;

/** Inserts an approved device with interfaces wan0 (WAN) and lan0 (LAN). */
export async function insertTestDevice(t: TestServer, options: TestDeviceOptions = {}): Promise<TestDevice> {
  counter += 1;
  const n = counter % 250;
  const id = randomUUID();
  const name = options.name ?? `edge-${counter}`;
  const [wanSample, lanSample] = sample.interfaces;
  const wanIp = options.wanIp ?? `10.100.${n}.2`;
  const wan: DeviceInterface = {
    ...wanSample!,
    id: randomUUID(),
    devId: `mac:02:00:00:${n.toString(16).padStart(2, "0")}:0a:01`,
    IPv4: wanIp,
    gateway: wanIp.replace(/\.\d+$/, ".1"),
    pathlabels: [],
    PublicIP: "",
    PublicPort: "",
  };
  const lan: DeviceInterface = {
    ...lanSample!,
    id: randomUUID(),
    devId: `mac:02:00:00:${n.toString(16).padStart(2, "0")}:0a:02`,
    IPv4: options.lanIp ?? `192.168.${n}.1`,
    routing: "NONE",
  };
  await t.database.db
    .insertInto("devices")
    .values({
      id,
      organization_id: options.orgId ?? t.admin.orgId,
      name,
      hostname: name,
      machine_id: `machine-${id}`,
      is_approved: options.approved ?? true,
      device_token_hash: `test-hash-${id}`,
      // A registered device holds a key (any 32 bytes: these devices never connect).
      public_key: randomBytes(32).toString("base64url"),
      interfaces: toJson([wan, lan]),
      static_routes: toJson([]),
      dhcp: toJson([]),
      bgp: toJson({ ...sample.bgp, enable: false, neighbors: [] }),
      firewall: toJson({ rules: [] }),
    })
    .execute();
  // The LAN overlap index is written with every write of a device's interfaces (services/lan-index).
  await syncLanIndex(t.database.db, {
    id,
    organizationId: options.orgId ?? t.admin.orgId,
    interfaces: [wan, lan],
    firewall: { rules: [] },
  });
  return { id, name, wan, lan };
}
