/**
 * Helpers for the tunnel and peer tests: devices with addresses outside the
 * default tunnel range, tunnel and peer creation through the API, and
 * device/job states set straight in the database (the device gateway that
 * sets them for real comes with issue 5).
 */
import type { Peer, PeerCreateInput, Tunnel, TunnelsCreated } from "@tern/protocol";
import { expect } from "vitest";
import { readDesiredConfig } from "../../src/services/desired-config-seal.ts";
import { insertTestDevice, type TestDevice, type TestDeviceOptions } from "./devices.ts";
import type { ApiResponse, TestServer } from "./test-server.ts";

let counter = 0;

/** A device whose WAN (172.16-31.x.2/24) and LAN (192.168.x.1/24 or 10.x.y.1/24) stay clear of 10.100.0.0/16. */
export function wanDevice(t: TestServer, options: TestDeviceOptions = {}): Promise<TestDevice> {
  counter += 1;
  const [hi, lo] = [Math.floor(counter / 250), counter % 250];
  return insertTestDevice(t, {
    wanIp: `172.${16 + hi}.${lo}.2`,
    lanIp: `10.${1 + hi}.${lo}.1`,
    ...options,
  });
}

export type ErrorBody = { error: string; code: string; details: { path: string; message: string }[] };

export function tunnelBody(a: TestDevice, b: TestDevice, extra: Record<string, unknown> = {}) {
  return { deviceA: a.id, interfaceA: a.wan.id, deviceB: b.id, interfaceB: b.wan.id, ...extra };
}

export function peerTunnelBody(a: TestDevice, peerId: string, extra: Record<string, unknown> = {}) {
  return { deviceA: a.id, interfaceA: a.wan.id, peer: peerId, ...extra };
}

/** POSTs tunnels and expects them created (202); returns the answer. */
export async function createTunnels(
  t: TestServer,
  body: unknown,
  options: { token?: string; org?: string } = {},
): Promise<TunnelsCreated> {
  const res = await t.api<TunnelsCreated>("POST", "/api/tunnels", {
    token: options.token ?? t.admin.token,
    body,
    query: { org: options.org },
  });
  expect(res.status, res.text).toBe(202);
  return res.body;
}

export async function getTunnel(t: TestServer, id: string): Promise<Tunnel> {
  const res = await t.api<Tunnel>("GET", `/api/tunnels/${id}`, { token: t.admin.token });
  expect(res.status, res.text).toBe(200);
  return res.body;
}

export const PEER: Omit<PeerCreateInput, "name"> = {
  idType: "ip",
  localId: "",
  remoteIdType: "ip",
  remoteId: "",
  remoteIP: "203.0.113.9",
  urls: [],
  ips: ["192.168.90.1"],
  ikeDhGroup: "modp2048",
  ikeCryptoAlg: "aes-cbc",
  ikeKeySize: 256,
  ikeIntegAlg: "sha256",
  espDhGroup: "modp2048",
  espCryptoAlg: "aes-cbc",
  espKeySize: 256,
  espIntegAlg: "sha256",
  pfs: true,
  sessionLifeTime: 3600,
  ikeLifeTime: 28800,
  localTrafficSelectors: [],
  remoteTrafficSelectors: ["192.168.90.0/24"],
  psk: "peer-secret-0123456789",
};

let peerCounter = 0;
export async function createPeer(t: TestServer, fields: Partial<PeerCreateInput> = {}, token = t.admin.token): Promise<Peer> {
  peerCounter += 1;
  const res: ApiResponse<Peer> = await t.api<Peer>("POST", "/api/peers", {
    token,
    body: { ...PEER, name: `peer-${peerCounter}`, ...fields },
  });
  expect(res.status, res.text).toBe(201);
  return res.body;
}

/** Marks devices connected (or another state) and completes their jobs, as the gateway would once they applied. */
export async function settleDevices(
  t: TestServer,
  deviceIds: readonly string[],
  connection: "never" | "connected" | "disconnected" = "connected",
  jobState: "complete" | "failed" | "running" = "complete",
): Promise<void> {
  for (const id of deviceIds) {
    await t.database.db.updateTable("devices").set({ connection }).where("id", "=", id).execute();
    await t.database.db
      .updateTable("jobs")
      .set({ state: jobState })
      .where("device_id", "=", id)
      .where("state", "in", ["queued", "running"])
      .execute();
  }
}

/** The compiled desired config of a device as stored. */
export async function desiredConfig(t: TestServer, deviceId: string) {
  return readDesiredConfig(t.database.db, t.deps.keyring, deviceId);
}
