/**
 * Diagnostic dumps requested from a device (`POST /devices/{id}/dump`): the
 * agent makes the same archive as `tern-agent dump` and the server pulls it
 * over the device's websocket in chunks (`dump-create`, then `dump-read`).
 */
import * as z from "zod";
import { Id, Timestamp } from "./common.ts";
import { oneSelection, SELECTION_MESSAGE, selectionFields } from "./device-actions.ts";

/** Bytes of one `dump-read` chunk at most: base64 of it stays well inside MAX_MESSAGE_BYTES. */
export const DUMP_CHUNK_BYTES = 512 * 1024;

/** The archive's file name as the agent writes it: `tern-agent-dump-<host>-<YYYYMMDDTHHMMSSZ>[-n].tar.gz`. */
export const DumpFileName = z
  .string()
  .regex(/^tern-agent-dump-[\w.-]+\.tar\.gz$/, "must be a tern-agent dump file name")
  .max(200);

/** `dump-create`: the agent made an archive in its dumps directory. */
export const DumpCreated = z.object({
  name: DumpFileName,
  size: z.number().int().min(0),
  /** Hex SHA-256 of the archive, checked by the server after the last chunk. */
  sha256: z.string().regex(/^[0-9a-f]{64}$/),
});
export type DumpCreated = z.infer<typeof DumpCreated>;

/** `dump-read`: `length` bytes of the archive from `offset`. */
export const DumpReadParams = z.object({
  name: DumpFileName,
  offset: z.number().int().min(0),
  length: z.number().int().min(1).max(DUMP_CHUNK_BYTES),
});
export const DumpChunk = z.object({
  /** The bytes, base64. */
  data: z.string().max(Math.ceil(DUMP_CHUNK_BYTES / 3) * 4),
  eof: z.boolean(),
});
export type DumpChunk = z.infer<typeof DumpChunk>;

export const DeviceDumpStatus = z.enum(["pending", "complete", "failed"]);

/** A dump as the API lists it (the archive itself: GET /devices/{id}/dumps/{dumpId}). */
export const DeviceDump = z.object({
  id: Id,
  device: Id,
  status: DeviceDumpStatus,
  /** The agent's file name (host and UTC time), once uploaded. */
  fileName: z.string().nullable(),
  size: z.number().int().nullable(),
  sha256: z.string().nullable(),
  /** Why it failed (device not connected, too large, an agent error …). */
  error: z.string().nullable(),
  requestedBy: z.string(),
  createdAt: Timestamp,
  completedAt: Timestamp.nullable(),
});
export type DeviceDump = z.infer<typeof DeviceDump>;

/** Devices one `POST /devices/dumps` may ask at once (each dump is up to TERN_DUMP_MAX_BYTES in the database). */
export const MAX_DUMP_DEVICES = 100;

/** Body of `POST /devices/dumps`: a diagnostic dump from each of many devices, by ids, filter or tag. */
export const DevicesDumpRequest = z.strictObject({ ...selectionFields }).refine(oneSelection, SELECTION_MESSAGE);
export type DevicesDumpRequest = z.infer<typeof DevicesDumpRequest>;
