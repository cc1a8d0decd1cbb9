/**
 * `POST /devices/{id}/dump`: records a pending dump and collects it in the
 * background over the device's link, whichever instance holds it: the agent
 * makes the archive of `tern-agent dump` (`dump-create`), the server reads it
 * in chunks (`dump-read`), checks its size (TERN_DUMP_MAX_BYTES) and SHA-256,
 * and stores it. The row ends `complete` or `failed` with the reason; both
 * ends are in the audit log, and the end is recorded as a job of type `dump`
 * with the dump's id (GET /api/jobs/{dumpId}). A dump already pending for the device is
 * answered instead of starting another, unless it is older than any
 * collection can take (its instance stopped): then it is marked failed.
 */
import { createHash, randomUUID } from "node:crypto";
import { type DeviceDump, DUMP_CHUNK_BYTES, type DumpCreated } from "@tern/protocol";
import { sql } from "kysely";
import type { AppDeps } from "../../../deps.ts";
import { ApiError } from "../../../http/errors.ts";
import { recordAudit } from "../../audit.ts";
import { inTransaction, type ServiceCtx } from "../../context.ts";
import { recordFinishedJob } from "../finished-job.ts";
import { DUMP_COLUMNS, deviceOfOrg, pruneDeviceDumps, toDeviceDump } from "./dumps.ts";

type Link = Pick<AppDeps, "deviceLink">;
/** Beyond the device's time to make the dump, the time reading it may take before a pending dump counts as abandoned. */
const ABANDON_MARGIN_MS = 10 * 60_000;

/** Creates the dump request (or returns the pending one) and starts collecting it; `done` settles when it is stored or failed. */
export async function requestDeviceDump(
  ctx: ServiceCtx,
  deps: Link,
  deviceId: string,
): Promise<{ dump: DeviceDump; created: boolean; done: Promise<void> }> {
  const { row, created } = await inTransaction(ctx, async (tx) => {
    await deviceOfOrg(tx, deviceId);
    // One pending dump per device at a time: lock the device row while looking.
    await tx.db.selectFrom("devices").select("id").where("id", "=", deviceId).forUpdate().execute();
    const pending = await tx.db
      .selectFrom("device_dumps")
      .select(DUMP_COLUMNS)
      .where("device_id", "=", deviceId)
      .where("status", "=", "pending")
      .executeTakeFirst();
    // Collecting lives in the memory of the instance that was asked: one that stopped meanwhile leaves its dump pending.
    const abandonedBefore = Date.now() - tx.config.TERN_DUMP_TIMEOUT_MS - ABANDON_MARGIN_MS;
    if (pending && pending.created_at.getTime() >= abandonedBefore) return { row: pending, created: false };
    if (pending) {
      const error = "abandoned: the server stopped while collecting it";
      await tx.db
        .updateTable("device_dumps")
        .set({ status: "failed", error, completed_at: sql`now()` })
        .where("id", "=", pending.id)
        .execute();
      await recordDumpJob(tx, deviceId, pending.id, pending.created_at, null, error);
    }
    const inserted = await tx.db
      .insertInto("device_dumps")
      .values({
        id: randomUUID(),
        organization_id: tx.org.id,
        device_id: deviceId,
        status: "pending",
        requested_by: tx.actor.label,
      })
      .returning(DUMP_COLUMNS)
      .executeTakeFirstOrThrow();
    await recordAudit(tx, { action: "dump_requested", resource: "devices", resourceId: deviceId, after: { dump: inserted.id } });
    return { row: inserted, created: true };
  });
  const done = created
    ? collect(ctx, deps, deviceId, row.id).catch((err) => ctx.logger.error({ err, deviceId }, "device dump not recorded"))
    : Promise.resolve();
  return { dump: toDeviceDump(row), created, done };
}

async function collect(ctx: ServiceCtx, deps: Link, deviceId: string, dumpId: string): Promise<void> {
  const { config } = ctx;
  let outcome: { content: Buffer; meta: DumpCreated } | { error: string };
  try {
    outcome = await fetchArchive(ctx, deps, deviceId);
  } catch (err) {
    outcome = { error: err instanceof ApiError ? `${err.code}: ${err.message}` : String(err) };
  }
  await inTransaction(ctx, async (tx) => {
    const started = await tx.db.selectFrom("device_dumps").select("created_at").where("id", "=", dumpId).executeTakeFirst();
    if (!started) return; // the device was deleted meanwhile, its dumps with it
    if ("error" in outcome) {
      await recordDumpJob(tx, deviceId, dumpId, started.created_at, null, outcome.error);
      await tx.db
        .updateTable("device_dumps")
        .set({ status: "failed", error: outcome.error.slice(0, 1000), completed_at: sql`now()` })
        .where("id", "=", dumpId)
        .execute();
      await recordAudit(tx, {
        action: "dump_failed",
        resource: "devices",
        resourceId: deviceId,
        after: { dump: dumpId, error: outcome.error },
      });
    } else {
      await tx.db
        .updateTable("device_dumps")
        .set({
          status: "complete",
          file_name: outcome.meta.name,
          size_bytes: outcome.content.length,
          sha256: outcome.meta.sha256,
          content: outcome.content,
          completed_at: sql`now()`,
        })
        .where("id", "=", dumpId)
        .execute();
      await recordAudit(tx, {
        action: "dump_uploaded",
        resource: "devices",
        resourceId: deviceId,
        after: { dump: dumpId, fileName: outcome.meta.name, size: outcome.content.length, sha256: outcome.meta.sha256 },
      });
      const { name, sha256 } = outcome.meta;
      await recordDumpJob(
        tx,
        deviceId,
        dumpId,
        started.created_at,
        { dump: dumpId, fileName: name, size: outcome.content.length, sha256 },
        null,
      );
    }
    await pruneDeviceDumps(tx.db, deviceId, config.TERN_DUMP_KEEP);
  });
}

/** The dump's end as a job with the dump's id: its result names the file, its error why there is none. */
function recordDumpJob(
  ctx: ServiceCtx,
  deviceId: string,
  dumpId: string,
  started: Date,
  result: { dump: string; fileName: string; size: number; sha256: string } | null,
  error: string | null,
): Promise<void> {
  return recordFinishedJob(ctx, {
    id: dumpId,
    deviceId,
    type: "dump",
    tasks: [{ kind: "dump", summary: "diagnostic dump (tern-agent dump), uploaded to the server" }],
    started,
    result,
    error: error === null ? null : { reason: "device", message: error.slice(0, 1000), drivers: [] },
  });
}

async function fetchArchive(
  ctx: ServiceCtx,
  deps: Link,
  deviceId: string,
): Promise<{ content: Buffer; meta: DumpCreated } | { error: string }> {
  const { config } = ctx;
  const link = deps.deviceLink;
  const made = await link.requestFromDevice(deviceId, "dump-create", {}, config.TERN_DUMP_TIMEOUT_MS);
  if (!made.ok) return { error: `the device could not make the dump: ${made.error}` };
  const meta = made.result;
  if (meta.size > config.TERN_DUMP_MAX_BYTES)
    return { error: `the dump is ${meta.size} bytes, more than TERN_DUMP_MAX_BYTES (${config.TERN_DUMP_MAX_BYTES})` };
  const chunks: Buffer[] = [];
  let offset = 0;
  for (;;) {
    const length = Math.max(1, Math.min(DUMP_CHUNK_BYTES, meta.size - offset));
    const read = await link.requestFromDevice(
      deviceId,
      "dump-read",
      { name: meta.name, offset, length },
      config.TERN_DEVICE_READ_TIMEOUT_MS,
    );
    if (!read.ok) return { error: `the device could not send the dump: ${read.error}` };
    const bytes = Buffer.from(read.result.data, "base64");
    chunks.push(bytes);
    offset += bytes.length;
    if (offset > meta.size || offset > config.TERN_DUMP_MAX_BYTES)
      return { error: `the device sent more than the ${meta.size} bytes it announced` };
    if (read.result.eof || bytes.length === 0) break;
  }
  const content = Buffer.concat(chunks);
  if (content.length !== meta.size) return { error: `the device sent ${content.length} bytes of the ${meta.size} it announced` };
  if (createHash("sha256").update(content).digest("hex") !== meta.sha256) return { error: "the dump's SHA-256 does not match" };
  return { content, meta };
}
