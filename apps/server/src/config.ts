/** Server configuration, parsed once at start from the environment; only main.ts passes process.env here. */
import { z } from "zod";

const Port = z.coerce.number().int().min(0).max(65535);

export const ServerConfig = z.object({
  PORT: Port.default(3000),
  HOST: z.string().min(1).default("127.0.0.1"),
  /** postgres://… for a PostgreSQL server; unset = embedded PGlite in TERN_DATA_DIR. */
  DATABASE_URL: z
    .string()
    .regex(/^postgres(ql)?:\/\//, "must be a postgres:// URL")
    .optional(),
  TERN_DATA_DIR: z.string().min(1).default("./.tern-data"),
  TERN_LOG_LEVEL: z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("info"),
});
export type ServerConfig = z.infer<typeof ServerConfig>;

/** Parses the environment; throws an Error whose message names each bad variable. */
export function loadConfig(env: Record<string, string | undefined>): ServerConfig {
  const result = ServerConfig.safeParse(env);
  if (result.success) return result.data;
  const lines = result.error.issues.map((i) => `  ${i.path.join(".")}: ${i.message}`);
  throw new Error(`invalid configuration:\n${lines.join("\n")}`);
}
