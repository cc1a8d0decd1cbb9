/**
 * `GET /devices/{id}/tunnels`: the tunnels a device is an end of, in the
 * protocol's Tunnel shape. A minimal read of the device API: the tunnel
 * resource (issue 4, tunnels part) owns the full mapping and the device
 * gateway (issue 5) the live status; until it reports, a tunnel with an end
 * that is not connected is `N/A` and pending with the reason, and one whose
 * ends are both connected is pending "waiting for tunnel status".
 */
import { type DeviceInterface, parseCidr, type Tunnel, tunnelLoopbacks } from "@tern/protocol";
import { sql } from "kysely";
import { notFound } from "../http/errors.ts";
import { type ListQuery, type ListSpec, runList } from "../http/list-query.ts";
import type { ServiceCtx } from "./context.ts";

export const DEVICE_TUNNEL_LIST: ListSpec = {
  fields: {
    id: { column: "t.id", type: "uuid" },
    num: { column: "t.num", type: "number" },
    description: { column: "t.description", type: "text" },
    pathlabel: { column: "t.pathlabel_id", type: "uuid" },
    "peer.id": { column: "t.peer_id", type: "uuid" },
    "peer.name": { column: "p.name", type: "text" },
    "deviceA.name": { column: "a.name", type: "text" },
    "deviceB.name": { column: "b.name", type: "text" },
    /** Either end. */
    "device.name": { column: ["a.name", "b.name"], type: "text" },
    createdAt: { column: "t.created_at", type: "timestamp" },
  },
  defaultSort: { key: "num", order: "asc" },
  tiebreaker: "t.id",
};

type Connection = "never" | "connected" | "disconnected";

interface EndRow {
  id: string;
  name: string;
  hostname: string;
  interfaces: DeviceInterface[];
  connection: Connection;
}

function interfaceRef(device: EndRow, interfaceId: string) {
  const iface = device.interfaces.find((i) => i.id === interfaceId);
  return { id: interfaceId, name: iface?.name ?? "", IPv4: iface?.IPv4 ?? "" };
}

const notConnectedReason = (end: EndRow) =>
  end.connection === "never" ? `device ${end.name} has never connected` : `device ${end.name} is not connected`;

export async function listDeviceTunnels(ctx: ServiceCtx, deviceId: string, query: ListQuery) {
  const device = await ctx.db
    .selectFrom("devices")
    .select("id")
    .where("organization_id", "=", ctx.org.id)
    .where("id", "=", deviceId)
    .executeTakeFirst();
  if (!device) throw notFound("device");
  const org = await ctx.db
    .selectFrom("organizations")
    .select("tunnel_range")
    .where("id", "=", ctx.org.id)
    .executeTakeFirstOrThrow();
  const range = parseCidr(org.tunnel_range);

  const base = ctx.db
    .selectFrom("tunnels as t")
    .innerJoin("devices as a", "a.id", "t.device_a")
    .leftJoin("devices as b", "b.id", "t.device_b")
    .leftJoin("peers as p", "p.id", "t.peer_id")
    .select([
      "t.id",
      "t.organization_id",
      "t.num",
      "t.description",
      "t.interface_a",
      "t.interface_b",
      "t.pathlabel_id",
      "t.notifications",
      "t.created_at",
      "t.peer_id",
      "p.name as peer_name",
      sql<string | null>`p.config->>'remoteIP'`.as("peer_remote_ip"),
      sql<EndRow>`json_build_object('id', a.id, 'name', a.name, 'hostname', a.hostname, 'interfaces', a.interfaces, 'connection', a.connection)`.as(
        "end_a",
      ),
      sql<EndRow | null>`case when b.id is null then null else json_build_object('id', b.id, 'name', b.name, 'hostname', b.hostname, 'interfaces', b.interfaces, 'connection', b.connection) end`.as(
        "end_b",
      ),
    ])
    .where("t.organization_id", "=", ctx.org.id)
    .where((eb) => eb.or([eb("t.device_a", "=", deviceId), eb("t.device_b", "=", deviceId)]));
  const { rows, total } = await runList(ctx.db, base, query, DEVICE_TUNNEL_LIST);

  const items = rows.map((r): Tunnel => {
    const ends = [r.end_a, r.end_b].filter((e): e is EndRow => e !== null);
    const offline = ends.filter((e) => e.connection !== "connected");
    const [loopbackA, loopbackB] = (range && tunnelLoopbacks(range, r.num)) ?? ["", ""];
    return {
      id: r.id,
      org: r.organization_id,
      num: r.num,
      description: r.description,
      deviceA: { id: r.end_a.id, name: r.end_a.name, hostname: r.end_a.hostname },
      interfaceA: interfaceRef(r.end_a, r.interface_a),
      deviceB: r.end_b ? { id: r.end_b.id, name: r.end_b.name, hostname: r.end_b.hostname } : null,
      interfaceB: r.end_b && r.interface_b ? interfaceRef(r.end_b, r.interface_b) : null,
      peer: r.peer_id ? { id: r.peer_id, name: r.peer_name ?? "", remoteIP: r.peer_remote_ip ?? "" } : null,
      pathlabel: r.pathlabel_id,
      loopbackA,
      loopbackB,
      tunnelStatus: "Pending",
      status: offline.length ? "N/A" : "Pending",
      tunnelStatusA: "unknown",
      tunnelStatusB: "unknown",
      isPending: true,
      pendingReason: offline.length ? offline.map(notConnectedReason).join("; ") : "waiting for tunnel status from the devices",
      notifications: r.notifications,
      quality: { a: null, b: null },
      createdAt: r.created_at.toISOString(),
    };
  });
  return { items, total };
}
