/**
 * Devices and jobs for the device and job tests: devices whose WAN lies
 * outside the default tunnel range (10.100.0.0/16), so `PUT /devices/{id}`
 * validates them, and job rows as the job engine would write them.
 */
import { randomUUID } from "node:crypto";
import type { JobState, JobType } from "@tern/protocol";
import { toJson } from "../../src/db/json.ts";
import { insertTestDevice, type TestDevice, type TestDeviceOptions } from "./devices.ts";
import type { TestServer } from "./test-server.ts";

let counter = 0;

/**
 * An approved device with wan0 172.31.<n>.2/24 (gateway .1) and lan0 10.<n>.0.1/24 unless given; n runs
 * over 1-250 without 100, whose 10.100.0.0/24 lies in the default tunnel range (the counter is the worker's,
 * not the file's: test files share modules).
 */
export async function insertValidDevice(t: TestServer, options: TestDeviceOptions = {}): Promise<TestDevice> {
  const m = counter % 249;
  counter += 1;
  const n = m < 99 ? m + 1 : m + 2;
  return insertTestDevice(t, { wanIp: `172.31.${n}.2`, lanIp: `10.${n}.0.1`, ...options });
}

export interface TestJobOptions {
  state?: JobState;
  type?: JobType;
  orgId?: string;
  createdAt?: Date;
  finishedAt?: Date | null;
  createdBy?: string;
}

/** A job row for `deviceId` (in the admin's organization unless `orgId`; a gateway harness passes its own). */
export async function insertTestJob(
  t: { database: TestServer["database"]; admin: { orgId: string } },
  deviceId: string,
  options: TestJobOptions = {},
): Promise<string> {
  const id = randomUUID();
  await t.database.db
    .insertInto("jobs")
    .values({
      id,
      organization_id: options.orgId ?? t.admin.orgId,
      device_id: deviceId,
      type: options.type ?? "modify",
      state: options.state ?? "queued",
      tasks: toJson([{ kind: "test", summary: "a test job" }]),
      target_hash: "ab".repeat(32),
      created_by: options.createdBy ?? "test",
      ...(options.createdAt ? { created_at: options.createdAt } : {}),
      finished_at: options.finishedAt ?? null,
    })
    .execute();
  return id;
}

/** A device-to-device tunnel between the WAN interfaces of `a` and `b`, as the tunnels API would store it. */
export async function insertTestTunnel(
  t: TestServer,
  a: TestDevice,
  b: TestDevice,
  options: { num?: number; orgId?: string } = {},
): Promise<{ id: string; num: number }> {
  const id = randomUUID();
  const num = options.num ?? Math.floor(Math.random() * 30000);
  await t.database.db
    .insertInto("tunnels")
    .values({
      id,
      organization_id: options.orgId ?? t.admin.orgId,
      num,
      device_a: a.id,
      interface_a: a.wan.id,
      device_b: b.id,
      interface_b: b.wan.id,
      endpoint_key: `${a.id}:${a.wan.id}|${b.id}:${b.wan.id}`,
      psk_enc: t.deps.keyring.encrypt(`psk-${id}`, id),
      notifications: toJson({ rtt: null, dropRate: null }),
    })
    .execute();
  return { id, num };
}

/** A VRRP group over the LAN interfaces of `members`, as the VRRP API would store it. */
export async function insertTestVrrpGroup(
  t: TestServer,
  group: { name: string; virtualRouterId: number; virtualIp: string; members: TestDevice[]; orgId?: string },
): Promise<string> {
  const id = randomUUID();
  await t.database.db
    .insertInto("vrrp_groups")
    .values({
      id,
      organization_id: group.orgId ?? t.admin.orgId,
      name: group.name,
      virtual_router_id: group.virtualRouterId,
      virtual_ip: group.virtualIp,
      preemption: true,
      accept_mode: false,
      advert_interval_ms: 1000,
    })
    .execute();
  await t.database.db
    .insertInto("vrrp_members")
    .values(
      group.members.map((m, position) => ({
        group_id: id,
        device_id: m.id,
        position,
        interface: m.lan.devId,
        priority: 200 - position * 50,
        track_optional: toJson([]),
        track_mandatory: toJson([]),
      })),
    )
    .execute();
  return id;
}
