/** Everything the app needs from outside, built once at start and passed in (tests build their own). */
import type { Logger } from "pino";
import type { AuthCache } from "./auth/auth-cache.ts";
import type { RateLimiter } from "./auth/rate-limiter.ts";
import type { ServerConfig } from "./config.ts";
import type { DatabaseKind } from "./db/database.ts";
import type { Db } from "./db/schema.ts";
import type { DeviceLink } from "./gateway/device-link.ts";
import type { ServerMetrics } from "./metrics/server-metrics.ts";
import type { Keyring } from "./secrets/keyring.ts";
import type { LoginLimits } from "./services/accounts/login-limits.ts";
import type { DeviceStatusReader } from "./services/devices/status.ts";
import type { LiveEventHub } from "./services/live-events/hub.ts";

export interface AppDeps {
  db: Db;
  dbKind: DatabaseKind;
  config: ServerConfig;
  logger: Logger;
  keyring: Keyring;
  /** Login attempts per client IP, and the back-off of failed passwords (services/accounts/login-limits.ts). */
  loginLimits: LoginLimits;
  /** Device registrations per client IP. */
  registerLimit: RateLimiter;
  /** Where device status reads come from; the device gateway installs its own (default: nothing reported yet). */
  deviceStatus?: DeviceStatusReader;
  /** Prometheus metrics of this instance (GET /metrics). */
  metrics: ServerMetrics;
  /** Devices' websockets: on-demand reads and the gateway's events (an offline stand-in without a gateway). */
  deviceLink: DeviceLink;
  /** The console's live events (GET /api/events); the server installs it with the gateway's bus. */
  liveEvents?: LiveEventHub;
  /** Authentication and access look-ups of this instance (auth/auth-cache.ts); none = every request asks the database. */
  authCache?: AuthCache;
  /** Compiles the devices a fan-out marked stale, after its answer (services/fanout); none = the request compiles. */
  recompiler?: { kick(): Promise<void> };
}
