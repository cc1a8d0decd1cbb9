import { z } from "@hono/zod-openapi";
import { PathLabel, PathLabelCreate } from "@tern/protocol";

export const PathLabelSchema = PathLabel.meta({ id: "PathLabel" });
export const PathLabelCreateSchema = PathLabelCreate.meta({ id: "PathLabelCreate" });

export const PathLabelDeleteQuery = z.object({
  force: z
    .enum(["true", "false"])
    .default("false")
    .transform((v) => v === "true")
    .meta({
      param: { name: "force", in: "query" },
      description: "true: remove the label from the interfaces, tunnels and policies that use it instead of refusing",
    }),
});
