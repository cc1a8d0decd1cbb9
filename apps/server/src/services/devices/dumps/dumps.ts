/**
 * Diagnostic dumps requested from devices: listing, download and retention.
 * The archive is stored in device_dumps.content (bytea) so every server
 * instance can serve it; only the newest TERN_DUMP_KEEP of a device are kept.
 */
import type { DeviceDump } from "@tern/protocol";
import type { Selectable } from "kysely";
import type { Db, DeviceDumpsTable } from "../../../db/schema.ts";
import { ApiError, notFound } from "../../../http/errors.ts";
import type { ServiceCtx } from "../../context.ts";

type Row = Omit<Selectable<DeviceDumpsTable>, "content">;

export const DUMP_COLUMNS = [
  "id",
  "organization_id",
  "device_id",
  "status",
  "file_name",
  "size_bytes",
  "sha256",
  "error",
  "requested_by",
  "created_at",
  "completed_at",
] as const;

export function toDeviceDump(row: Row): DeviceDump {
  return {
    id: row.id,
    device: row.device_id,
    status: row.status,
    fileName: row.file_name,
    size: row.size_bytes,
    sha256: row.sha256,
    error: row.error,
    requestedBy: row.requested_by,
    createdAt: row.created_at.toISOString(),
    completedAt: row.completed_at ? row.completed_at.toISOString() : null,
  };
}

/** The device of the request's organization, or NOT_FOUND (another organization's device included). */
export async function deviceOfOrg(ctx: Pick<ServiceCtx, "db" | "org">, deviceId: string) {
  const device = await ctx.db
    .selectFrom("devices")
    .select(["id", "name", "is_approved"])
    .where("id", "=", deviceId)
    .where("organization_id", "=", ctx.org.id)
    .executeTakeFirst();
  if (!device) throw notFound("device");
  return device;
}

/** The device's dumps, newest first. */
export async function listDeviceDumps(ctx: ServiceCtx, deviceId: string): Promise<DeviceDump[]> {
  await deviceOfOrg(ctx, deviceId);
  const rows = await ctx.db
    .selectFrom("device_dumps")
    .select(DUMP_COLUMNS)
    .where("organization_id", "=", ctx.org.id)
    .where("device_id", "=", deviceId)
    .orderBy("created_at", "desc")
    .orderBy("id", "desc")
    .execute();
  return rows.map(toDeviceDump);
}

/** One dump's archive; DUMP_NOT_READY while it is pending or when it failed. */
export async function downloadDeviceDump(
  ctx: ServiceCtx,
  deviceId: string,
  dumpId: string,
): Promise<{ fileName: string; content: Buffer }> {
  const row = await ctx.db
    .selectFrom("device_dumps")
    .select(["status", "file_name", "content", "error"])
    .where("organization_id", "=", ctx.org.id)
    .where("device_id", "=", deviceId)
    .where("id", "=", dumpId)
    .executeTakeFirst();
  if (!row) throw notFound("dump");
  if (row.status !== "complete" || !row.content || !row.file_name)
    throw new ApiError(
      "DUMP_NOT_READY",
      row.status === "failed" ? `the dump failed: ${row.error ?? "unknown reason"}` : "the dump is still being made",
    );
  return { fileName: row.file_name, content: Buffer.from(row.content) };
}

/** Deletes all but the newest `keep` dumps of the device. */
export async function pruneDeviceDumps(db: Db, deviceId: string, keep: number): Promise<number> {
  const newest = db
    .selectFrom("device_dumps")
    .select("id")
    .where("device_id", "=", deviceId)
    .orderBy("created_at", "desc")
    .orderBy("id", "desc")
    .limit(keep);
  const gone = await db
    .deleteFrom("device_dumps")
    .where("device_id", "=", deviceId)
    .where("id", "not in", newest)
    .executeTakeFirst();
  return Number(gone.numDeletedRows);
}
