import type { ApiApp } from "../../http/env.ts";
import { requestCtx } from "../../http/request-ctx.ts";
import { defineRoute } from "../../http/route.ts";
import { downloadDeviceDump } from "../../services/devices/dumps/dumps.ts";
import { DUMP_AUTH, DumpParams } from "./dump-schemas.ts";

export const route = defineRoute({
  method: "get",
  path: "/devices/{id}/dumps/{dumpId}",
  operationId: "downloadDeviceDump",
  tags: ["devices"],
  summary: "Download a dump's archive (.tar.gz, named for the device's host and the UTC time it was made)",
  description: "409 DUMP_NOT_READY while the dump is pending or when it failed.",
  auth: DUMP_AUTH,
  errors: ["DUMP_NOT_READY"],
  request: { params: DumpParams },
  responses: {
    200: { description: "The archive", content: { "application/gzip": { schema: { type: "string", format: "binary" } } } },
  },
});

export function register(app: ApiApp) {
  app.openapi(route, async (c) => {
    const { id, dumpId } = c.req.valid("param");
    const { fileName, content } = await downloadDeviceDump(requestCtx(c), id, dumpId);
    return c.body(new Uint8Array(content), 200, {
      "content-type": "application/gzip",
      "content-disposition": `attachment; filename="${fileName}"`,
      "x-content-type-options": "nosniff",
    }) as never;
  });
}
