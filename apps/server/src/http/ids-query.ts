/** `?ids=a,b,c`: a comma-separated list of ids, for lists that fetch specific resources (the 202 Location uses it). */
import { Id } from "@tern/protocol";
import { z } from "zod";

export const IdsParam = z
  .string()
  .transform((text) =>
    text
      .split(",")
      .map((s) => s.trim())
      .filter(Boolean),
  )
  .pipe(z.array(Id, { message: "ids must be comma-separated ids (UUIDs)" }).min(1).max(1000))
  .meta({ description: "Comma-separated ids (at most 1000): only these items" });

/** A boolean query flag written `true` or `false`. */
export const BooleanFlag = z
  .enum(["true", "false"])
  .default("false")
  .transform((v) => v === "true");
