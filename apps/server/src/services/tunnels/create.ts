/**
 * Creating tunnels (one or a batch, all or nothing): check both ends, take
 * the lowest free numbers of the organization, store a random per-tunnel
 * secret for device-to-device tunnels, and recompile both ends in the same
 * transaction, which queues their `tunnels` jobs.
 *
 * Concurrency: the organization row is locked (FOR NO KEY UPDATE, which does
 * not block inserts that merely reference the organization) for the whole
 * transaction, so two creations in one organization take numbers one after
 * the other, and a tunnel-range change (which locks the same row) never sees
 * half of a creation. The unique constraints on (org, num) and
 * (org, endpoint_key) stay as the last line of defence.
 */
import { randomBytes, randomUUID } from "node:crypto";
import { type DeviceInterface, parseCidr, type TunnelCreate, tunnelCapacity, tunnelLoopbacks } from "@tern/protocol";
import { sql } from "kysely";
import { toJson } from "../../db/json.ts";
import type { Db } from "../../db/schema.ts";
import { ApiError } from "../../http/errors.ts";
import { invalid, type Problem, problem, problemsToErrorBody } from "../../validate/index.ts";
import { recordAuditMany } from "../audit.ts";
import { inTransaction, type ServiceCtx } from "../context.ts";
import { anyUuid, queueConfigJobs } from "../desired-config.ts";

export interface CreatedTunnel {
  id: string;
  num: number;
  loopbackA: string;
  loopbackB: string;
}

export interface TunnelsCreated {
  jobIds: string[];
  tunnels: CreatedTunnel[];
}

/** Throws the API error of a list of problems (no-op when empty). */
export function throwProblems(problems: readonly Problem[]): void {
  const body = problemsToErrorBody(problems);
  if (body) throw new ApiError(body.code, body.error, body.details);
}

/** Order-independent identity of a tunnel's two ends: the same ends in either order give the same key. */
export function endpointKey(t: Pick<TunnelCreate, "deviceA" | "interfaceA" | "deviceB" | "interfaceB" | "peer">): string {
  const a = `${t.deviceA}:${t.interfaceA}`;
  if (t.peer) return `${a}|peer:${t.peer}`;
  return [a, `${t.deviceB}:${t.interfaceB}`].sort().join("|");
}

/** 256 random bits, base64url: far beyond brute force, and safe in swanctl.conf without quoting issues. */
export function generateTunnelPsk(): string {
  return randomBytes(32).toString("base64url");
}

interface EndDevice {
  id: string;
  name: string;
  is_approved: boolean;
  interfaces: DeviceInterface[];
}

/** The WAN interface of one end, or the problems that stop it from carrying a tunnel. */
function checkEnd(
  devices: Map<string, EndDevice>,
  deviceId: string,
  interfaceId: string,
  path: { device: string; iface: string },
  problems: Problem[],
): { device: EndDevice; iface: DeviceInterface } | null {
  const device = devices.get(deviceId);
  if (!device) {
    problems.push(problem("NOT_FOUND", path.device, `device ${deviceId} not found in this organization`));
    return null;
  }
  if (!device.is_approved) problems.push(invalid(path.device, `device ${device.name} is not approved yet`));
  const iface = device.interfaces.find((i) => i.id === interfaceId);
  if (!iface) {
    problems.push(problem("NOT_FOUND", path.iface, `device ${device.name} has no interface ${interfaceId}`));
    return null;
  }
  const what = `interface ${iface.name} of ${device.name}`;
  if (iface.type !== "WAN") problems.push(invalid(path.iface, `${what} is a ${iface.type} interface; tunnels need a WAN`));
  else if (!iface.isAssigned) problems.push(invalid(path.iface, `${what} is not assigned`));
  else if (!iface.dhcp && !iface.IPv4)
    problems.push(invalid(path.iface, `${what} has no address (set a static address or DHCP first)`));
  return { device, iface };
}

/** The lowest `count` numbers below `capacity` that no tunnel of the organization uses. */
async function freeNumbers(db: Db, orgId: string, capacity: number, count: number): Promise<number[]> {
  const result = await sql<{ n: number }>`select n from generate_series(0, ${capacity - 1}::int) as n
    where not exists (select 1 from tunnels t where t.organization_id = ${orgId}::uuid and t.num = n)
    order by n limit ${count}::int`.execute(db);
  return result.rows.map((r) => Number(r.n));
}

export async function createTunnels(ctx: ServiceCtx, inputs: readonly TunnelCreate[], batch: boolean): Promise<TunnelsCreated> {
  return inTransaction(ctx, async (tx) => {
    const org = await tx.db
      .selectFrom("organizations")
      .select(["id", "tunnel_range"])
      .where("id", "=", tx.org.id)
      .forNoKeyUpdate()
      .executeTakeFirstOrThrow();
    const at = (i: number, field: string) => (batch ? `${i}.${field}` : field);

    const deviceIds = [...new Set(inputs.flatMap((t) => (t.deviceB ? [t.deviceA, t.deviceB] : [t.deviceA])))];
    const devices = new Map(
      (
        await tx.db
          .selectFrom("devices")
          .select(["id", "name", "is_approved", "interfaces"])
          .where("organization_id", "=", org.id)
          .where("id", "=", anyUuid(deviceIds))
          .execute()
      ).map((d) => [d.id, d]),
    );
    const peerIds = [...new Set(inputs.flatMap((t) => (t.peer ? [t.peer] : [])))];
    const peers = new Map(
      peerIds.length
        ? (
            await tx.db
              .selectFrom("peers")
              .select(["id", "name"])
              .where("organization_id", "=", org.id)
              .where("id", "=", anyUuid(peerIds))
              .execute()
          ).map((p) => [p.id, p])
        : [],
    );
    const labelIds = [...new Set(inputs.flatMap((t) => (t.pathlabel ? [t.pathlabel] : [])))];
    const labels = new Set(
      labelIds.length
        ? (
            await tx.db
              .selectFrom("path_labels")
              .select("id")
              .where("organization_id", "=", org.id)
              .where("id", "=", anyUuid(labelIds))
              .execute()
          ).map((l) => l.id)
        : [],
    );

    const problems: Problem[] = [];
    const keys = new Map<string, number>();
    const summaries: string[] = [];
    inputs.forEach((t, i) => {
      const a = checkEnd(devices, t.deviceA, t.interfaceA, { device: at(i, "deviceA"), iface: at(i, "interfaceA") }, problems);
      let far = "";
      if (t.peer) {
        const peer = peers.get(t.peer);
        if (!peer) problems.push(problem("NOT_FOUND", at(i, "peer"), `peer ${t.peer} not found in this organization`));
        far = `peer ${peer?.name ?? t.peer}`;
      } else if (t.deviceB && t.interfaceB) {
        const b = checkEnd(devices, t.deviceB, t.interfaceB, { device: at(i, "deviceB"), iface: at(i, "interfaceB") }, problems);
        far = b ? `${b.device.name} ${b.iface.name}` : t.deviceB;
      }
      if (t.pathlabel && !labels.has(t.pathlabel))
        problems.push(problem("NOT_FOUND", at(i, "pathlabel"), `path label ${t.pathlabel} not found in this organization`));
      summaries.push(`${a ? `${a.device.name} ${a.iface.name}` : t.deviceA} ${t.peer ? "→" : "↔"} ${far}`);
      const key = endpointKey(t);
      const earlier = keys.get(key);
      if (earlier !== undefined)
        problems.push(
          problem("TUNNEL_OVERLAPPING", at(i, "deviceA"), `the same tunnel is also given at position ${earlier} of the request`),
        );
      else keys.set(key, i);
    });
    const existing = await tx.db
      .selectFrom("tunnels")
      .select(["endpoint_key", "num"])
      .where("organization_id", "=", org.id)
      .where("endpoint_key", "in", [...keys.keys()])
      .execute();
    for (const e of existing) {
      const i = keys.get(e.endpoint_key)!;
      problems.push(
        problem("TUNNEL_OVERLAPPING", at(i, "deviceA"), `tunnel ${e.num} already connects these ends (${summaries[i]})`),
      );
    }
    throwProblems(problems);

    const range = parseCidr(org.tunnel_range)!;
    const capacity = tunnelCapacity(range);
    const nums = await freeNumbers(tx.db, org.id, capacity, inputs.length);
    if (nums.length < inputs.length) {
      const message = `the tunnel range ${org.tunnel_range} holds ${capacity} tunnels and ${capacity - nums.length} are in use; delete tunnels or widen the range (tunnelRange of the organization)`;
      throw new ApiError("TUNNEL_RANGE_EXHAUSTED", message, [{ path: "tunnelRange", message }]);
    }

    const rows = inputs.map((t, i) => {
      const id = randomUUID();
      return {
        id,
        organization_id: org.id,
        num: nums[i]!,
        device_a: t.deviceA,
        interface_a: t.interfaceA,
        device_b: t.peer ? null : (t.deviceB ?? null),
        interface_b: t.peer ? null : (t.interfaceB ?? null),
        peer_id: t.peer ?? null,
        pathlabel_id: t.pathlabel ?? null,
        endpoint_key: endpointKey(t),
        description: t.description,
        psk_enc: t.peer ? null : tx.keyring.encrypt(generateTunnelPsk(), id),
        notifications: toJson({ rtt: null, dropRate: null }),
      };
    });
    for (let i = 0; i < rows.length; i += 500)
      await tx.db
        .insertInto("tunnels")
        .values(rows.slice(i, i + 500))
        .execute();

    const tunnels = rows.map((r) => {
      const [loopbackA, loopbackB] = tunnelLoopbacks(range, r.num)!;
      return { id: r.id, num: r.num, loopbackA, loopbackB };
    });
    await recordAuditMany(
      tx,
      rows.map((r, i) => ({
        action: "create",
        resource: "tunnels",
        resourceId: r.id,
        after: {
          num: r.num,
          deviceA: r.device_a,
          interfaceA: r.interface_a,
          deviceB: r.device_b,
          interfaceB: r.interface_b,
          peer: r.peer_id,
          pathlabel: r.pathlabel_id,
          description: r.description,
          summary: summaries[i],
        },
      })),
    );

    const tasksOf = new Map<string, { kind: string; summary: string }[]>();
    rows.forEach((r, i) => {
      for (const end of [r.device_a, r.device_b]) {
        if (!end) continue;
        const list = tasksOf.get(end) ?? [];
        list.push({ kind: "add-tunnel", summary: `tunnel ${r.num}: ${summaries[i]}` });
        tasksOf.set(end, list);
      }
    });
    const { jobIds } = await queueConfigJobs(tx, {
      deviceIds: [...tasksOf.keys()],
      type: "tunnels",
      tasks: (deviceId) => tasksOf.get(deviceId) ?? [],
    });
    return { jobIds, tunnels };
  });
}
