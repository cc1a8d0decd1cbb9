/**
 * Seeds a scratch Tern database with the benchmark fleet (server/seed.ts), in
 * a process of its own so the server measured later starts from a clean heap.
 */
import { join } from "node:path";
import { openDatabase } from "../../../../apps/server/src/db/database.ts";
import { type SeedOptions, seedFleet } from "../server/seed.ts";
import { serve } from "./ipc.ts";

serve(
  {
    seed: async (args) => {
      const database =
        args.target === "pglite"
          ? await openDatabase({ kind: "pglite", dataDir: join(String(args.dataDir), "pgdata") })
          : await openDatabase({ kind: "postgres", url: String(args.url), poolSize: 2 });
      try {
        return await seedFleet(database, args.options as SeedOptions);
      } finally {
        await database.close();
      }
    },
  },
  { pid: process.pid },
);
