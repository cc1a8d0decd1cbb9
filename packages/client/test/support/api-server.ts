/**
 * A real Tern server listening on a loopback port, for tests of API clients
 * (this package, the CLI, later the console): the server's own startServer on
 * the server tests' database (PGlite from the template dump, or a fresh
 * database on TERN_TEST_DATABASE_URL), with the server test support's
 * administrator and short gateway timers.
 *
 *   const s = useApiServer();
 *   it("…", async () => { const tern = createTernClient({ baseUrl: s.url }); … });
 */
import type { RunningServer } from "@tern/server/src/server.ts";
import { startServer } from "@tern/server/src/server.ts";
import { gatewayConfig } from "@tern/server/test/support/gateway.ts";
import { TEST_ADMIN } from "@tern/server/test/support/onboarding.ts";
// The type of vitest's inject("pgliteTemplate"), declared by the server's global setup.
import type {} from "@tern/server/test/support/pglite-template.ts";
import { openTestDatabase } from "@tern/server/test/support/test-database.ts";
import { pino } from "pino";
import { afterAll, beforeAll } from "vitest";

export { TEST_ADMIN };

export interface ApiServer {
  /** e.g. http://127.0.0.1:41234 */
  url: string;
  admin: { email: string; password: string };
  server: RunningServer;
  close(): Promise<void>;
}

export async function startApiServer(env: Record<string, string> = {}): Promise<ApiServer> {
  const database = await openTestDatabase();
  const logger = pino({ level: process.env.TERN_TEST_LOG_LEVEL ?? "silent" });
  try {
    const server = await startServer(gatewayConfig({ HOST: "127.0.0.1", ...env }), logger, { database });
    return {
      url: server.url,
      admin: { ...TEST_ADMIN },
      server,
      async close() {
        await server.close();
        await database.close();
      },
    };
  } catch (err) {
    await database.close();
    throw err;
  }
}

/** One server for the test file (beforeAll/afterAll); the returned object is filled before the tests run. */
export function useApiServer(env: Record<string, string> = {}): ApiServer {
  const holder = {} as ApiServer;
  beforeAll(async () => {
    Object.assign(holder, await startApiServer(env));
  });
  afterAll(async () => {
    await holder.close?.();
  });
  return holder;
}
