/**
 * `GET /devices/{id}/tunnels`: the tunnels a device is an end of. The same
 * read as `GET /tunnels` (tunnel-query.ts: one facts query, status derived
 * from both ends' connection, config jobs and live reports, the same list
 * keys, the page built as JSON by the database) scoped to the device, so the
 * two answers never disagree.
 */
import { notFound } from "../../http/errors.ts";
import type { ListQuery } from "../../http/list-query.ts";
import type { ServiceCtx } from "../context.ts";
import { listTunnelsJson } from "../tunnels/query.ts";

export async function listDeviceTunnels(
  ctx: ServiceCtx,
  deviceId: string,
  query: ListQuery,
  response: "detailed" | "summary",
): Promise<{ json: string; total: number }> {
  const device = await ctx.db
    .selectFrom("devices")
    .select("id")
    .where("organization_id", "=", ctx.org.id)
    .where("id", "=", deviceId)
    .executeTakeFirst();
  if (!device) throw notFound("device");
  return listTunnelsJson(ctx, query, response, { deviceId });
}
