/**
 * Peer connections: IKEv2 gateways Tern does not manage. The PSK is encrypted
 * at rest (AES-256-GCM with the server key, the row id as associated data)
 * and never returned: reads say `pskSet: true`. A change recompiles the
 * devices that have a tunnel to the peer, which queues their `peers` jobs.
 */
import { randomUUID } from "node:crypto";
import { PEER_PRESET_KEYS, type Peer, type PeerCreate, type PeerUpdate } from "@tern/protocol";
import { sql } from "kysely";
import { toJson } from "../db/json.ts";
import type { PeerRow } from "../db/schema.ts";
import { conflict, notFound } from "../http/errors.ts";
import { type ListQuery, type ListSpec, runList } from "../http/list-query.ts";
import { recordAudit } from "./audit.ts";
import { inTransaction, type ServiceCtx } from "./context.ts";
import { queueConfigJobs } from "./desired-config.ts";
import { type StoredPeerConfig, storedPeerConfig } from "./peers/stored-config.ts";

type PeerConfig = StoredPeerConfig;
type PeerRowWithCount = PeerRow & { tunnel_count: number };

const PEER_CONFIG_KEYS = [
  "idType",
  "localId",
  "remoteIdType",
  "remoteId",
  "remoteIP",
  "urls",
  "ips",
  ...PEER_PRESET_KEYS,
  "localTrafficSelectors",
  "remoteTrafficSelectors",
  "preset",
] as const satisfies readonly (keyof PeerConfig)[];

/** The stored config: the peer's fields without name and PSK (those have columns). */
function configOf(input: PeerCreate | PeerUpdate): PeerConfig {
  return Object.fromEntries(PEER_CONFIG_KEYS.map((k) => [k, input[k]])) as PeerConfig;
}

export function toPeer(row: PeerRowWithCount): Peer {
  return {
    ...storedPeerConfig(row.config),
    id: row.id,
    org: row.organization_id,
    name: row.name,
    pskSet: row.psk_enc.length > 0,
    tunnels: Number(row.tunnel_count),
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
}

const tunnelCount = sql<number>`(select count(*)::int from tunnels t where t.peer_id = p.id)`;

export const PEER_LIST: ListSpec = {
  fields: {
    id: { column: "p.id", type: "uuid" },
    name: { column: "p.name", type: "text" },
    remoteIP: { column: sql`p.config ->> 'remoteIP'`, type: "text" },
    remoteId: { column: sql`p.config ->> 'remoteId'`, type: "text" },
    localId: { column: sql`p.config ->> 'localId'`, type: "text" },
    pfs: { column: sql`(p.config ->> 'pfs')::boolean`, type: "boolean" },
    preset: { column: sql`p.config ->> 'preset'`, type: "text" },
    ikeLifeTime: { column: sql`(p.config ->> 'ikeLifeTime')::int`, type: "number" },
    sessionLifeTime: { column: sql`(p.config ->> 'sessionLifeTime')::int`, type: "number" },
    tunnels: { column: tunnelCount, type: "number" },
    createdAt: { column: "p.created_at", type: "timestamp" },
    updatedAt: { column: "p.updated_at", type: "timestamp" },
  },
  defaultSort: { key: "name", order: "asc" },
  tiebreaker: "p.id",
};
export const PEER_LIST_KEYS = Object.keys(PEER_LIST.fields).join(", ");

function peersQuery(ctx: ServiceCtx) {
  return ctx.db
    .selectFrom("peers as p")
    .selectAll("p")
    .select(tunnelCount.as("tunnel_count"))
    .where("p.organization_id", "=", ctx.org.id);
}

export async function listPeers(ctx: ServiceCtx, query: ListQuery): Promise<{ items: Peer[]; total: number }> {
  const { rows, total } = await runList(ctx.db, peersQuery(ctx), query, PEER_LIST);
  return { items: rows.map(toPeer), total };
}

async function loadPeer(ctx: ServiceCtx, id: string, lock = false): Promise<PeerRowWithCount> {
  let query = peersQuery(ctx).where("p.id", "=", id);
  if (lock) query = query.forUpdate("p");
  const row = await query.executeTakeFirst();
  if (!row) throw notFound("peer");
  return row;
}

export async function getPeer(ctx: ServiceCtx, id: string): Promise<Peer> {
  return toPeer(await loadPeer(ctx, id));
}

function uniqueName<T>(promise: Promise<T>, name: string): Promise<T> {
  return promise.catch((err: { code?: string }) => {
    if (err?.code === "23505")
      throw conflict(`a peer named "${name}" already exists in this organization`, [
        { path: "name", message: "already used by another peer" },
      ]);
    throw err;
  });
}

export async function createPeer(ctx: ServiceCtx, input: PeerCreate): Promise<Peer> {
  return inTransaction(ctx, async (tx) => {
    const id = randomUUID();
    await uniqueName(
      tx.db
        .insertInto("peers")
        .values({
          id,
          organization_id: tx.org.id,
          name: input.name,
          config: toJson(configOf(input)),
          psk_enc: tx.keyring.encrypt(input.psk, id),
        })
        .execute(),
      input.name,
    );
    const peer = await getPeer(tx, id);
    await recordAudit(tx, { action: "create", resource: "peers", resourceId: id, after: peer });
    return peer;
  });
}

/** The devices with a tunnel to the peer (the A end; a peer is never side B of a device). */
async function devicesUsing(ctx: ServiceCtx, peerId: string): Promise<string[]> {
  const rows = await ctx.db
    .selectFrom("tunnels")
    .select("device_a")
    .distinct()
    .where("organization_id", "=", ctx.org.id)
    .where("peer_id", "=", peerId)
    .execute();
  return rows.map((r) => r.device_a);
}

/** Replaces the peer; without `psk` the current one is kept. Returns the peer and the jobs queued. */
export async function updatePeer(ctx: ServiceCtx, id: string, input: PeerUpdate): Promise<{ peer: Peer; jobIds: string[] }> {
  return inTransaction(ctx, async (tx) => {
    const before = toPeer(await loadPeer(tx, id, true));
    await uniqueName(
      tx.db
        .updateTable("peers")
        .set({
          name: input.name,
          config: toJson(configOf(input)),
          ...(input.psk !== undefined ? { psk_enc: tx.keyring.encrypt(input.psk, id) } : {}),
          updated_at: sql`now()`,
        })
        .where("organization_id", "=", tx.org.id)
        .where("id", "=", id)
        .execute(),
      input.name,
    );
    const peer = await getPeer(tx, id);
    await recordAudit(tx, {
      action: "update",
      resource: "peers",
      resourceId: id,
      before,
      after: { ...peer, pskChanged: input.psk !== undefined },
    });
    const { jobIds } = await queueConfigJobs(tx, {
      deviceIds: await devicesUsing(tx, id),
      type: "peers",
      tasks: [{ kind: "update-peer", summary: `peer ${peer.name}${input.psk !== undefined ? " (new pre-shared key)" : ""}` }],
    });
    return { peer, jobIds };
  });
}

/** Deletes an unused peer; a peer with tunnels is refused with the tunnels named (delete them first). */
export async function deletePeer(ctx: ServiceCtx, id: string): Promise<void> {
  await inTransaction(ctx, async (tx) => {
    const before = toPeer(await loadPeer(tx, id, true));
    const using = await tx.db
      .selectFrom("tunnels as t")
      .innerJoin("devices as d", "d.id", "t.device_a")
      .select(["t.id", "t.num", "d.name"])
      .where("t.organization_id", "=", tx.org.id)
      .where("t.peer_id", "=", id)
      .orderBy("t.num")
      .execute();
    if (using.length) {
      throw conflict(
        `peer ${before.name} is used by ${using.length} tunnel${using.length > 1 ? "s" : ""} (${using
          .slice(0, 10)
          .map((t) => `tunnel ${t.num} from ${t.name}`)
          .join(", ")}${using.length > 10 ? ", …" : ""}); delete those tunnels first`,
        using.map((t) => ({ path: "tunnels", message: `tunnel ${t.num} (${t.id}) from device ${t.name}` })),
      );
    }
    // A multi-link policy whose peer action (cloud security) names the peer would lose its rule silently.
    const policies = await tx.db
      .selectFrom("mlpolicies")
      .select(["id", "name"])
      .where("organization_id", "=", tx.org.id)
      .where(sql<boolean>`rules @> ${toJson([{ action: { peer: id } }])}::jsonb`)
      .orderBy("name")
      .execute();
    if (policies.length) {
      throw conflict(
        `peer ${before.name} is the target of multi-link polic${policies.length > 1 ? "ies" : "y"} ${policies.map((p) => p.name).join(", ")}; change those rules first`,
        policies.map((p) => ({ path: "mlpolicies", message: `multi-link policy ${p.name} (${p.id})` })),
      );
    }
    await tx.db.deleteFrom("peers").where("organization_id", "=", tx.org.id).where("id", "=", id).execute();
    await recordAudit(tx, { action: "delete", resource: "peers", resourceId: id, before });
  });
}
