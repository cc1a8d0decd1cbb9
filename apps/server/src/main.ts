/** Entry point: the only place that reads process.env. */
import { loadConfig } from "./config.ts";

try {
  const config = loadConfig(process.env);
  console.log(
    `tern-server: configuration ok (database: ${config.DATABASE_URL ? "PostgreSQL server" : `embedded PGlite in ${config.TERN_DATA_DIR}`}). ` +
      "The HTTP service is not implemented yet (see issue 3); nothing is listening.",
  );
} catch (err) {
  console.error(`tern-server: ${(err as Error).message}`);
  process.exit(1);
}
