/**
 * The server's dump requests: `dump-create` makes the archive of
 * `tern-agent dump` in the agent's dumps directory (where it stays, as a
 * local dump would), `dump-read` hands it out in chunks. Only files of that
 * directory with a dump's name are ever read: the name is checked by the
 * protocol's pattern and resolved inside the directory.
 */
import { createHash } from "node:crypto";
import { open, readFile } from "node:fs/promises";
import { basename, join } from "node:path";
import type { DumpChunk, DumpCreated } from "@tern/protocol";
import { AgentError } from "../errors.ts";

export interface DumpSource {
  /** The directory dumps are written to (paths.dumps). */
  dir: string;
  /** Makes one archive there and returns its path. */
  create(): Promise<{ archive: string }>;
}

export async function createDump(source: DumpSource): Promise<DumpCreated> {
  const { archive } = await source.create();
  const bytes = await readFile(archive);
  return { name: basename(archive), size: bytes.length, sha256: createHash("sha256").update(bytes).digest("hex") };
}

export async function readDumpChunk(
  source: DumpSource,
  params: { name: string; offset: number; length: number },
): Promise<DumpChunk> {
  const file = await open(join(source.dir, basename(params.name)), "r").catch((err: NodeJS.ErrnoException) => {
    throw new AgentError("NOT_FOUND", `no dump ${params.name}: ${err.code ?? err.message}`);
  });
  try {
    const { size } = await file.stat();
    const buffer = Buffer.alloc(Math.max(0, Math.min(params.length, size - params.offset)));
    const { bytesRead } = buffer.length ? await file.read(buffer, 0, buffer.length, params.offset) : { bytesRead: 0 };
    return { data: buffer.subarray(0, bytesRead).toString("base64"), eof: params.offset + bytesRead >= size };
  } finally {
    await file.close();
  }
}
