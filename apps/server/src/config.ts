/** Server configuration, parsed once at start from the environment; only main.ts passes process.env here. */
import { DEFAULT_MONITORING } from "@tern/protocol";
import { z } from "zod";
import { parseNetworks } from "./notify/delivery/webhook-target.ts";

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
  /**
   * Statements each PostgreSQL connection keeps prepared, with generic plans (db/prepared-client.ts), and the
   * embedded database on its one connection (db/pglite-prepared.ts); 0 = none: every statement parsed and
   * planned at each execution (behind PgBouncer in transaction mode, docs/scale.md).
   */
  TERN_DB_PREPARED_STATEMENTS: z.coerce.number({ message: "must be a whole number" }).int().min(0).max(10_000).default(100),
  TERN_DATA_DIR: z.string().min(1).default("./.tern-data"),
  /**
   * The built web console served at `/` (its index.html and assets/). Unset: beside the server's files
   * (/usr/lib/tern-server/console when packaged, apps/console/dist in a checkout). Without a build the
   * server logs it and serves the API only.
   */
  TERN_CONSOLE_DIR: z.string().min(1).optional(),
  TERN_LOG_LEVEL: z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("info"),
  /** Server key; unset = generated once into TERN_DATA_DIR/secret.key. Every instance on one database needs the same. */
  TERN_SECRET_KEY: SecretKey.optional(),
  /**
   * Previous server keys while rotating (comma-separated, each like TERN_SECRET_KEY): they only decrypt what
   * they encrypted and verify JWTs they signed; at start every stored secret is re-encrypted with the current
   * key (docs/security.md). Remove them once the start-up log reports the re-encryption done.
   */
  TERN_SECRET_KEY_PREVIOUS: z
    .string()
    .transform((s) =>
      s
        .split(",")
        .map((k) => k.trim())
        .filter((k) => k !== ""),
    )
    .pipe(z.array(SecretKey))
    .optional(),
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
  /** Login attempts per client IP per window (every outcome counts): over it, that address gets 429. */
  TERN_LOGIN_RATE_IP: PositiveInt.default(30),
  /**
   * Failed passwords of one account from one address before that address backs off on that account
   * (then base·2^n seconds, up to TERN_LOGIN_BACKOFF_MAX); as many failures of the account from all
   * addresses make it throttle addresses it has never been signed in from. The owner is never locked out.
   */
  TERN_LOGIN_RATE_USER: PositiveInt.default(10),
  TERN_LOGIN_RATE_WINDOW: PositiveInt.default(300),
  /** First back-off step and longest back-off of login throttling, in seconds. */
  TERN_LOGIN_BACKOFF_BASE: PositiveInt.max(3600).default(1),
  TERN_LOGIN_BACKOFF_MAX: PositiveInt.max(86_400).default(900),
  /** Lifetime of a password-reset token, in seconds (30 minutes). */
  TERN_PASSWORD_RESET_TTL: PositiveInt.max(86_400).default(1800),
  /**
   * Self-service sign-up (POST /api/accounts/signup) for the shared SaaS option: anyone may create an account
   * with a trial after verifying their e-mail. Off by default (self-hosting): the routes answer 403 SIGNUP_DISABLED.
   * Needs TERN_SMTP_URL (and TERN_PUBLIC_URL for the links in the e-mail).
   */
  TERN_SIGNUP_ENABLED: Flag.default(false),
  /** Lifetime of a sign-up's e-mail verification token, in seconds (24 hours). */
  TERN_SIGNUP_VERIFY_TTL: PositiveInt.max(7 * 86_400).default(86_400),
  /** Length of the trial of a signed-up account (its trial_end), in days. */
  TERN_TRIAL_DAYS: PositiveInt.max(3650).default(30),
  /** Limits of the `trial` plan that signed-up accounts get: devices (approved or waiting) and organizations per account. */
  TERN_TRIAL_MAX_DEVICES: z.coerce.number().int().min(0).max(1_000_000).default(10),
  TERN_TRIAL_MAX_ORGANIZATIONS: z.coerce.number().int().min(1).max(10_000).default(3),
  /** Diagnostic dumps requested from devices (POST /api/devices/{id}/dump): largest accepted archive in bytes, how many are kept per device, how long the device may take. */
  TERN_DUMP_MAX_BYTES: PositiveInt.max(1024 * 1024 * 1024).default(64 * 1024 * 1024),
  TERN_DUMP_KEEP: PositiveInt.max(100).default(5),
  /** Largest agent package POST /api/agent-packages accepts, in bytes (docs/upgrades.md); kept in the database. */
  TERN_AGENT_PACKAGE_MAX_BYTES: PositiveInt.max(512 * 1024 * 1024).default(64 * 1024 * 1024),
  TERN_DUMP_TIMEOUT_MS: PositiveInt.max(3_600_000).default(300_000),
  /** Lifetime of a member invitation, in seconds (7 days). */
  TERN_INVITATION_TTL: PositiveInt.max(90 * 86_400).default(7 * 86_400),
  /** Default lifetime of a registration token created without `expiresAt`, in seconds (7 days). */
  TERN_REGISTRATION_TOKEN_TTL: PositiveInt.max(3650 * 86_400).default(7 * 86_400),
  /** Device registrations (POST /connect/register) per client IP per window, whatever their outcome. */
  TERN_REGISTER_RATE_IP: PositiveInt.default(300),
  TERN_REGISTER_RATE_WINDOW: PositiveInt.default(300),
  /** Trust X-Forwarded-For for the client IP (only behind a reverse proxy that sets it). */
  TERN_TRUST_PROXY: Flag.default(false),
  /**
   * API-wide rate limit: requests per TERN_API_RATE_WINDOW seconds per access token and per client
   * address (429 RATE_LIMITED with Retry-After and RateLimit-* headers). Login and registration have
   * their own, stricter limits on top.
   */
  TERN_API_RATE_TOKEN: PositiveInt.default(1200),
  TERN_API_RATE_ADDRESS: PositiveInt.default(2400),
  TERN_API_RATE_WINDOW: PositiveInt.max(3600).default(60),
  /** Origins allowed to call the API from a browser (comma-separated, e.g. https://noc.example.net); unset = CORS off. */
  TERN_CORS_ORIGINS: z
    .string()
    .transform((s) =>
      s
        .split(",")
        .map((o) => o.trim())
        .filter(Boolean),
    )
    .pipe(
      z.array(
        z.url({ protocol: /^https?$/, message: "each origin must be an http(s):// URL" }).transform((u) => new URL(u).origin),
      ),
    )
    .default([]),
  /** Largest accepted request body in bytes. */
  TERN_MAX_BODY_BYTES: PositiveInt.default(1024 * 1024),
  /**
   * Seconds to wait for in-flight requests on SIGTERM before closing connections. The default leaves the whole stop
   * (then the database) inside the 10 s that `npm start`'s test and the systemd unit allow.
   */
  TERN_SHUTDOWN_GRACE: PositiveInt.default(7),

  /**
   * The server's public base URL as people reach it (https://tern.example.com): links in account e-mails, and
   * single sign-on's redirect URI (<url>/api/sso/callback). Unset = SSO sign-in is unavailable.
   */
  TERN_PUBLIC_URL: z
    .url({ protocol: /^https?$/, message: "must be an http(s):// URL" })
    .transform((s) => s.replace(/\/+$/, ""))
    .optional(),
  /** Allow http:// OpenID issuers (labs and tests with a provider on loopback); production providers use https. */
  TERN_SSO_ALLOW_HTTP_ISSUER: Flag.default(false),

  // Device gateway and job engine (docs/gateway.md). Times are in milliseconds.
  /** Websocket ping period, and how many pings in a row may go unanswered before the link is dropped. */
  TERN_WS_PING_INTERVAL_MS: PositiveInt.default(20_000),
  TERN_WS_PING_MISSES: PositiveInt.max(100).default(4),
  /** A connection that sends no valid `hello` within this time is closed. */
  TERN_WS_HELLO_TIMEOUT_MS: PositiveInt.default(10_000),
  /**
   * Device links being admitted at once (token look-up, challenge, hello, its transaction). Upgrades
   * beyond it (a whole fleet reconnecting after a restart) are refused with 503 and a `Retry-After` of
   * 1–5 s (jittered), so the storm is spread out instead of timing out hellos in a queue.
   */
  TERN_WS_ADMISSION_MAX: PositiveInt.default(2000),
  /**
   * Hosts (`host` or `host:port`, comma-separated) a device's hello may be signed for besides the Host
   * its request arrived with: the server's public name behind a reverse proxy that rewrites Host.
   */
  TERN_DEVICE_HOSTS: z
    .string()
    .default("")
    .transform((v) =>
      v
        .split(",")
        .map((h) => h.trim().toLowerCase())
        .filter(Boolean),
    ),
  /** Messages per second a device may send (sustained), and the burst above it. */
  TERN_DEVICE_RATE: PositiveInt.default(20),
  TERN_DEVICE_RATE_BURST: PositiveInt.default(200),
  /** Every tunnel end probes its far end this often (`monitoring.probeIntervalMs` of every device's config). */
  TERN_PROBE_INTERVAL_MS: PositiveInt.min(100).max(60_000).default(DEFAULT_MONITORING.probeIntervalMs),
  /** Loss, RTT and jitter are reported over this many probes (`monitoring.windowSize`). */
  TERN_PROBE_WINDOW: PositiveInt.min(5).max(600).default(DEFAULT_MONITORING.windowSize),
  /** Status period told to devices in `welcome` when their config does not set one. */
  TERN_STATUS_INTERVAL_MS: PositiveInt.min(100).default(5_000),
  /** An `apply` without a result after this long fails its jobs with reason `timeout`. */
  TERN_JOB_TIMEOUT_MS: PositiveInt.default(180_000),
  /** Automatic re-syncs of a drifted device since the last change before auto-sync pauses. */
  TERN_AUTO_SYNC_ATTEMPTS: z.coerce.number().int().min(0).max(100).default(2),
  /** How often each periodic duty (time-outs, stale links, retention) runs, across all instances. */
  TERN_DUTY_INTERVAL_MS: PositiveInt.default(5_000),
  /** Instance heartbeat; an instance silent for 3 heartbeats is dead and its devices disconnected. */
  TERN_INSTANCE_HEARTBEAT_MS: PositiveInt.default(10_000),
  /** Days tunnel samples are kept. */
  TERN_SAMPLE_RETENTION_DAYS: z.coerce.number().positive().max(3650).default(7),
  /** Statistics history: hours raw interface and health samples are kept (the finest tier). */
  TERN_STATS_RAW_RETENTION_HOURS: PositiveInt.max(24 * 31).default(24),
  /** Statistics history: days 1-minute roll-ups are kept. */
  TERN_STATS_MINUTE_RETENTION_DAYS: PositiveInt.max(366).default(7),
  /** Statistics history: days 1-hour roll-ups (and BGP/VRRP state changes) are kept. */
  TERN_STATS_HOUR_RETENTION_DAYS: PositiveInt.max(3650).default(90),
  /** Statistics history: a raw interface/health row per device at most this often (statuses in between are summed into it). */
  TERN_STATS_RAW_INTERVAL_MS: PositiveInt.min(1000).default(30_000),
  /**
   * Status ingestion: flush when this many samples wait, or every TERN_INGEST_FLUSH_MS; at most
   * TERN_INGEST_MAX_BUFFERED wait (from half of it the reporting links are not read: back-pressure).
   */
  TERN_INGEST_BATCH_ROWS: PositiveInt.default(2_000),
  TERN_INGEST_FLUSH_MS: PositiveInt.default(1_000),
  TERN_INGEST_MAX_BUFFERED: PositiveInt.default(200_000),
  /** More than this many public IP/port changes of one interface within the window rate-limits it. */
  TERN_PUBLIC_ADDRESS_MAX_CHANGES: PositiveInt.default(5),
  TERN_PUBLIC_ADDRESS_WINDOW_MS: PositiveInt.default(600_000),
  /** Quiet time before a DHCP WAN's new address re-configures the far ends of its tunnels (one job each). */
  TERN_WAN_ADDRESS_DEBOUNCE_MS: PositiveInt.max(10_000).default(200),
  /** How long a live status read (`?live=true`) waits for the device's answer. */
  TERN_DEVICE_READ_TIMEOUT_MS: PositiveInt.max(120_000).default(10_000),
  /** Bearer token GET /metrics requires; unset = answered only to direct loopback clients (no proxy headers). */
  TERN_METRICS_TOKEN: z.string().min(16, "must be at least 16 characters").optional(),

  // Notifications (docs/notifications.md).
  /** SMTP server for e-mail notifications: smtp://[user:pass@]host[:port] (STARTTLS when offered) or smtps://… (TLS). */
  TERN_SMTP_URL: z
    .string()
    .refine((s) => parseSmtpUrl(s) !== null, {
      message: "must be smtp://[user:password@]host[:port] or smtps://…, options ?requireTLS=true&rejectUnauthorized=false",
    })
    .optional(),
  /** The From address of notification e-mails. */
  TERN_SMTP_FROM: z.string().min(3).default("Tern <tern@localhost>"),
  /** Consecutive status reports that confirm a down state (tunnel, BGP neighbor, interface) before it is raised, and any condition's all-clear before it is resolved. */
  TERN_NOTIFY_CONFIRM_REPORTS: PositiveInt.max(100).default(3),
  /** Seconds a tunnel or link loss/RTT judged on evidence (enough probes behind it) must stay over its threshold before it is raised, and clear before it is resolved. */
  TERN_NOTIFY_SUSTAIN_S: PositiveInt.max(3600).default(30),
  /** A tunnel pending longer than this raises "pending tunnel". */
  TERN_PENDING_TUNNEL_ALERT_S: PositiveInt.default(300),
  /** Attempts per delivery (the first included) and the first back-off, doubled after each failure (capped at 60 s). */
  TERN_NOTIFY_RETRY_ATTEMPTS: PositiveInt.max(20).default(5),
  TERN_NOTIFY_RETRY_BASE_MS: PositiveInt.default(1_000),
  /** Days delivery attempts stay in the delivery log. */
  TERN_DELIVERY_LOG_RETENTION_DAYS: PositiveInt.max(3650).default(30),
  /** Webhooks may target private addresses (RFC 1918, fc00::/7, 100.64.0.0/10); loopback, link-local and metadata stay refused. */
  TERN_WEBHOOK_ALLOW_PRIVATE: Flag.default(false),
  /** Comma-separated networks webhooks may target whatever their class, e.g. `127.0.0.0/8,::1` for a receiver on this host. */
  TERN_WEBHOOK_ALLOWED_NETWORKS: z
    .string()
    .refine(
      (s) => {
        try {
          parseNetworks(s);
          return true;
        } catch {
          return false;
        }
      },
      { message: "must be a comma-separated list of IP addresses or CIDR networks (127.0.0.0/8,::1/128)" },
    )
    .default(""),
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

/** TERN_SMTP_URL as nodemailer settings (without the From address), or null when it is not a valid SMTP URL. */
export function parseSmtpUrl(text: string): {
  host: string;
  port: number;
  secure: boolean;
  requireTLS: boolean;
  rejectUnauthorized: boolean;
  auth?: { user: string; pass: string };
} | null {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return null;
  }
  if (url.protocol !== "smtp:" && url.protocol !== "smtps:") return null;
  if (!url.hostname) return null;
  const secure = url.protocol === "smtps:";
  const flag = (name: string, fallback: boolean) => {
    const v = url.searchParams.get(name);
    return v === null ? fallback : v === "true" || v === "1";
  };
  const user = decodeURIComponent(url.username);
  return {
    host: url.hostname.replace(/^\[|\]$/g, ""),
    port: url.port ? Number(url.port) : secure ? 465 : 587,
    secure,
    requireTLS: flag("requireTLS", false),
    rejectUnauthorized: flag("rejectUnauthorized", true),
    ...(user ? { auth: { user, pass: decodeURIComponent(url.password) } } : {}),
  };
}
