/** Server configuration, parsed once at start from the environment; only main.ts passes process.env here. */
import { z } from "zod";

const Port = z.coerce.number().int().min(0).max(65535);
const Flag = z.enum(["true", "false", "1", "0"]).transform((v) => v === "true" || v === "1");
const PositiveInt = z.coerce.number({ message: "must be a whole number" }).int().positive();

/** 32 bytes of key material, base64 encoded (e.g. `openssl rand -base64 32`). */
const SecretKey = z
  .string()
  .trim()
  .refine((s) => /^[A-Za-z0-9+/_-]+={0,2}$/.test(s) && Buffer.from(s, "base64").length === 32, {
    message: "must be 32 bytes encoded as base64 (openssl rand -base64 32)",
  });

export const ServerConfig = z.object({
  PORT: Port.default(3000),
  HOST: z.string().min(1).default("127.0.0.1"),
  /** postgres://… for a PostgreSQL server; unset = embedded PGlite in TERN_DATA_DIR. */
  DATABASE_URL: z
    .string()
    .regex(/^postgres(ql)?:\/\//, "must be a postgres:// URL")
    .optional(),
  /** Connections of the pg pool per instance (PostgreSQL only). */
  TERN_DB_POOL_SIZE: PositiveInt.max(1000).default(10),
  TERN_DATA_DIR: z.string().min(1).default("./.tern-data"),
  TERN_LOG_LEVEL: z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("info"),
  /** Server key; unset = generated once into TERN_DATA_DIR/secret.key. Every instance on one database needs the same. */
  TERN_SECRET_KEY: SecretKey.optional(),
  /** Credentials of the first admin, used only when the database is empty. */
  TERN_ADMIN_EMAIL: z
    .string()
    .trim()
    .regex(/^[^\s@]+@[^\s@]+$/, "must be an e-mail address")
    .optional(),
  TERN_ADMIN_PASSWORD: z.string().min(10, "must be at least 10 characters").optional(),
  /** Lifetime of access JWTs and refresh tokens, in seconds. */
  TERN_ACCESS_TOKEN_TTL: PositiveInt.max(86_400).default(300),
  TERN_REFRESH_TOKEN_TTL: PositiveInt.default(7 * 86_400),
  /** scrypt cost as log2(N); 17 is OWASP's minimum (128 MiB, about 0.5 s). Lower only for tests. */
  TERN_PASSWORD_HASH_COST: z.coerce.number().int().min(10).max(20).default(17),
  /** Login attempts per client IP per window, and failed attempts per user per window. */
  TERN_LOGIN_RATE_IP: PositiveInt.default(30),
  TERN_LOGIN_RATE_USER: PositiveInt.default(10),
  TERN_LOGIN_RATE_WINDOW: PositiveInt.default(300),
  /** Trust X-Forwarded-For for the client IP (only behind a reverse proxy that sets it). */
  TERN_TRUST_PROXY: Flag.default(false),
  /** Largest accepted request body in bytes. */
  TERN_MAX_BODY_BYTES: PositiveInt.default(1024 * 1024),
  /** Seconds to wait for in-flight requests on SIGTERM before closing connections. */
  TERN_SHUTDOWN_GRACE: PositiveInt.default(10),
});
export type ServerConfig = z.infer<typeof ServerConfig>;

/** Parses the environment; throws an Error whose message names each bad variable. */
export function loadConfig(env: Record<string, string | undefined>): ServerConfig {
  // An empty variable means "not set", as in most shells' `VAR= cmd`.
  const present = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ""));
  const result = ServerConfig.safeParse(present);
  if (result.success) return result.data;
  const lines = result.error.issues.map((i) => `  ${i.path.join(".")}: ${i.message}`);
  throw new Error(`invalid configuration:\n${lines.join("\n")}`);
}
