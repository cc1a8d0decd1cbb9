/** Everything the app needs from outside, built once at start and passed in (tests build their own). */
import type { Logger } from "pino";
import type { RateLimiter } from "./auth/rate-limiter.ts";
import type { ServerConfig } from "./config.ts";
import type { DatabaseKind } from "./db/database.ts";
import type { Db } from "./db/schema.ts";
import type { Keyring } from "./secrets/keyring.ts";

export interface AppDeps {
  db: Db;
  dbKind: DatabaseKind;
  config: ServerConfig;
  logger: Logger;
  keyring: Keyring;
  /** Login attempts per client IP, and failed attempts per username. */
  loginLimits: { ip: RateLimiter; user: RateLimiter };
}
