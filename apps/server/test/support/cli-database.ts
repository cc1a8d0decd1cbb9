/** Opens a spawned server's database between commands (never while a command or server of the embedded one runs). */
import path from "node:path";
import { openDatabase } from "../../src/db/database.ts";
import type { Db } from "../../src/db/schema.ts";
import type { ServerPlace } from "./cli.ts";

export async function withPlaceDb<T>(
  place: Pick<ServerPlace, "dataDir" | "databaseUrl">,
  fn: (db: Db) => Promise<T>,
): Promise<T> {
  const handle = place.databaseUrl
    ? await openDatabase({ kind: "postgres", url: place.databaseUrl, poolSize: 1 })
    : await openDatabase({ kind: "pglite", dataDir: path.join(place.dataDir, "pgdata") });
  try {
    return await fn(handle.db);
  } finally {
    await handle.close();
  }
}
