import { z } from "@hono/zod-openapi";
import { sql } from "kysely";
import type { ApiApp } from "../../http/env.ts";
import { defineRoute } from "../../http/route.ts";
import { jsonResponse } from "../../http/schemas.ts";

const Health = z
  .object({
    status: z.enum(["ok", "degraded"]),
    database: z.object({ kind: z.enum(["pglite", "postgres"]), reachable: z.boolean(), latencyMs: z.number().nullable() }),
  })
  .meta({ id: "Health" });

export const route = defineRoute({
  method: "get",
  path: "/health",
  operationId: "getHealth",
  tags: ["system"],
  summary: "Liveness and database reachability",
  auth: "public",
  responses: {
    200: jsonResponse(Health, "The server is up and reaches its database"),
    503: jsonResponse(Health, "The server is up but its database does not answer"),
  },
});

export function register(app: ApiApp) {
  app.openapi(route, async (c) => {
    const { db, dbKind } = c.get("deps");
    const started = performance.now();
    const reachable = await Promise.race([
      sql`select 1`.execute(db).then(
        () => true,
        () => false,
      ),
      new Promise<boolean>((resolve) => setTimeout(resolve, 2000, false).unref()),
    ]);
    const latencyMs = reachable ? Math.round((performance.now() - started) * 10) / 10 : null;
    const body = { status: reachable ? "ok" : "degraded", database: { kind: dbKind, reachable, latencyMs } } as const;
    return reachable ? c.json(body, 200) : c.json(body, 503);
  });
}
