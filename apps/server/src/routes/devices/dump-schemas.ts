import { z } from "@hono/zod-openapi";
import { DeviceDump, Id } from "@tern/protocol";

export const DeviceDumpSchema = DeviceDump.meta({ id: "DeviceDump" });
export const DumpParams = z.object({
  id: Id.meta({ param: { name: "id", in: "path" }, description: "Device id" }),
  dumpId: Id.meta({ param: { name: "dumpId", in: "path" }, description: "Dump id" }),
});
/** Dumps hold the router's state and logs: managers and owners (devices `post`), like requesting one. */
export const DUMP_AUTH = { resource: "devices", permission: "post" } as const;
