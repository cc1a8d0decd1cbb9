/**
 * The real server (startServer: HTTP listener, websocket gateway, job engine)
 * on the test database, and simulated devices from test-harness connected to
 * it over real sockets. Device rows are inserted here, the way the
 * registration route will create them: a machine id, a device token (stored
 * hashed like every secret token) and the simulator's two interfaces.
 *
 *   const g = useGatewayServer({ TERN_JOB_TIMEOUT_MS: "1000" });
 *   const { fleet, devices } = await g.fleet(3);
 *   const jobIds = await g.change(devices[0].id);
 *   await g.waitForJobs(jobIds, "complete");
 */
import { randomBytes, randomUUID } from "node:crypto";
import { DeviceInterface, type JobState, type JobType } from "@tern/protocol";
import { registerInterfaces, type SimKey, Simulator, type SimulatorInput } from "@tern/test-harness/src/simulator/index.ts";
import { pino } from "pino";
import { afterAll, beforeAll } from "vitest";
import { hashSecretToken, newSecretToken } from "../../src/auth/secret-tokens.ts";
import { loadConfig, type ServerConfig } from "../../src/config.ts";
import type { DatabaseHandle } from "../../src/db/database.ts";
import { toJson } from "../../src/db/json.ts";
import type { JobRow } from "../../src/db/schema.ts";
import { type RunningServer, startServer } from "../../src/server.ts";
import { inTransaction, systemCtx } from "../../src/services/context.ts";
import { queueConfigJobs } from "../../src/services/desired-config.ts";
import { type AdminClient, adminClient, TEST_ADMIN } from "./onboarding.ts";
import { openTestDatabase } from "./test-database.ts";

/** Short timers so tests see time-outs and duties in seconds, not minutes. */
export const FAST_GATEWAY_ENV: Record<string, string> = {
  TERN_JOB_TIMEOUT_MS: "20000",
  TERN_DUTY_INTERVAL_MS: "200",
  TERN_INGEST_FLUSH_MS: "50",
  TERN_INSTANCE_HEARTBEAT_MS: "500",
  TERN_STATUS_INTERVAL_MS: "60000",
};

export interface SimRow {
  id: string;
  token: string;
  /** The device's key (the simulator's), stored as its public key. */
  key: SimKey;
  machineId: string;
  /** Position in the fleet. */
  position: number;
  wanId: string;
}

export interface GatewayHarness {
  server: RunningServer;
  database: DatabaseHandle;
  config: ServerConfig;
  org: { id: string; accountId: string; name: string };
  /** Inserts `count` approved devices with their first config queued, and a simulator fleet for them. */
  fleet(
    count: number,
    options?: Partial<SimulatorInput> & {
      approved?: boolean;
      queueConfig?: boolean;
      connect?: boolean;
      /** Report the simulator's default public addresses (off: they would re-configure devices at their first status). */
      publicAddresses?: boolean;
    },
  ): Promise<{ fleet: Simulator; devices: SimRow[] }>;
  /** A tunnel between two devices' WAN interfaces, and (unless `queue: false`) the jobs that configure it. */
  tunnel(a: SimRow, b: SimRow, options?: { queue?: boolean }): Promise<{ id: string; jobIds: string[] }>;
  /** An admin change of the device (a static route numbered `n`): recompiles and queues a job. */
  change(deviceId: string, n?: number, type?: JobType): Promise<string[]>;
  jobs(ids: readonly string[]): Promise<JobRow[]>;
  waitForJobs(ids: readonly string[], state: JobState | ((jobs: JobRow[]) => boolean), timeoutMs?: number): Promise<JobRow[]>;
  /** An API client logged in as the first administrator (owner of `org`), against the current server. */
  api(): Promise<AdminClient>;
  /** Stops the server and starts a new one on the same database. */
  restart(): Promise<void>;
  /** Starts another server instance on the same database (its own pool), for several-instance tests. */
  startAnother(env?: Record<string, string>): Promise<RunningServer>;
  close(): Promise<void>;
}

let routeCounter = 0;
let tunnelCounter = 0;

export async function waitUntil<T>(
  fn: () => Promise<T> | T,
  ok: (value: T) => boolean,
  timeoutMs = 10_000,
  what = "condition",
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await fn();
    if (ok(value)) return value;
    if (Date.now() > deadline)
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}: last value ${JSON.stringify(value)}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

export function gatewayConfig(env: Record<string, string>): ServerConfig {
  return loadConfig({
    PORT: "0",
    TERN_PASSWORD_HASH_COST: "10",
    TERN_SECRET_KEY: randomBytes(32).toString("base64"),
    TERN_DATA_DIR: "/nonexistent-tests-use-no-data-dir",
    TERN_LOG_LEVEL: "silent",
    TERN_ADMIN_EMAIL: TEST_ADMIN.email,
    TERN_ADMIN_PASSWORD: TEST_ADMIN.password,
    ...FAST_GATEWAY_ENV,
    // Tests drive the API hard from one address.
    TERN_API_RATE_TOKEN: "1000000",
    TERN_API_RATE_ADDRESS: "1000000",
    ...env,
  });
}

export async function createGatewayHarness(env: Record<string, string> = {}): Promise<GatewayHarness> {
  const database = await openTestDatabase();
  const config = gatewayConfig(env);
  const logger = pino({ level: process.env.TERN_TEST_LOG_LEVEL ?? "silent" });
  let server = await startServer(config, logger, { database });
  const others: RunningServer[] = [];
  const fleets: Simulator[] = [];
  const orgRow = await database.db.selectFrom("organizations").select(["id", "account_id", "name"]).executeTakeFirstOrThrow();
  const org = { id: orgRow.id, accountId: orgRow.account_id, name: orgRow.name };
  const ctx = () => systemCtx(server.deps, org);

  const harness: GatewayHarness = {
    get server() {
      return server;
    },
    database,
    config,
    org,
    async fleet(count, options = {}) {
      const { approved = true, queueConfig = true, connect = true, publicAddresses = false, ...simOptions } = options;
      const fleet = Simulator.create({
        server: server.url,
        token: "unused: devices are inserted by the test",
        count,
        machinePrefix: `gw-${randomBytes(4).toString("hex")}`,
        reconnectMinMs: 100,
        reconnectMaxMs: 1000,
        ...simOptions,
      });
      fleets.push(fleet);
      const devices: SimRow[] = [];
      for (const d of fleet.devices) {
        const id = randomUUID();
        const token = newSecretToken("tern_dt_");
        const key = d.key();
        const interfaces = registerInterfaces(d.index).map((itf, i) =>
          DeviceInterface.parse({
            ...itf,
            id: randomUUID(),
            type: i === 0 ? "WAN" : "LAN",
            isAssigned: true,
          }),
        );
        await database.db
          .insertInto("devices")
          .values({
            id,
            organization_id: org.id,
            name: d.hostname,
            hostname: d.hostname,
            machine_id: d.machineId,
            is_approved: approved,
            device_token_hash: hashSecretToken(token),
            public_key: key.publicKey,
            interfaces: toJson(interfaces),
            static_routes: toJson([]),
            dhcp: toJson([]),
            bgp: toJson({
              enable: false,
              routerId: "",
              localASN: null,
              keepaliveInterval: 30,
              holdInterval: 90,
              redistributeLan: true,
              neighbors: [],
            }),
            firewall: toJson({ rules: [] }),
          })
          .execute();
        d.useCredentials({ deviceId: id, deviceToken: token, isApproved: approved });
        if (!publicAddresses) d.setPublicAddress({ publicIp: "", publicPort: null });
        devices.push({ id, token, key, machineId: d.machineId, position: d.position, wanId: interfaces[0]!.id });
      }
      if (queueConfig) {
        await inTransaction(ctx(), (tx) =>
          queueConfigJobs(tx, {
            deviceIds: devices.map((d) => d.id),
            type: "modify",
            tasks: [{ kind: "onboard", summary: "first config" }],
          }),
        );
      }
      if (connect) await fleet.connectAll();
      return { fleet, devices };
    },
    async tunnel(a, b, options = {}) {
      const id = randomUUID();
      const num = ++tunnelCounter;
      await database.db
        .insertInto("tunnels")
        .values({
          id,
          organization_id: org.id,
          num,
          device_a: a.id,
          interface_a: a.wanId,
          device_b: b.id,
          interface_b: b.wanId,
          endpoint_key: [`${a.id}:${a.wanId}`, `${b.id}:${b.wanId}`].sort().join("|"),
          psk_enc: server.deps.keyring.encrypt(randomBytes(16).toString("hex"), id),
          notifications: toJson({ rtt: null, dropRate: null }),
        })
        .execute();
      if (options.queue === false) return { id, jobIds: [] };
      const queued = await inTransaction(ctx(), (tx) =>
        queueConfigJobs(tx, { deviceIds: [a.id, b.id], type: "tunnels", tasks: [{ kind: "tunnel", summary: `tunnel ${num}` }] }),
      );
      return { id, jobIds: queued.jobIds };
    },
    async change(deviceId, n = ++routeCounter, type = "modify") {
      const device = await database.db
        .selectFrom("devices")
        .select(["interfaces"])
        .where("id", "=", deviceId)
        .executeTakeFirstOrThrow();
      const gateway = device.interfaces[0]!.gateway;
      const routes = [{ destination: `172.${16 + ((n >> 8) & 15)}.${n & 255}.0/24`, gateway, ifname: "", metric: 0 }];
      const queued = await inTransaction(ctx(), async (tx) => {
        await tx.db
          .updateTable("devices")
          .set({ static_routes: toJson(routes) })
          .where("id", "=", deviceId)
          .execute();
        return queueConfigJobs(tx, { deviceIds: [deviceId], type, tasks: [{ kind: "static-routes", summary: `route ${n}` }] });
      });
      return queued.jobIds;
    },
    async jobs(ids) {
      if (ids.length === 0) return [];
      return database.db
        .selectFrom("jobs")
        .selectAll()
        .where("id", "in", [...ids])
        .orderBy("created_at")
        .execute();
    },
    async waitForJobs(ids, state, timeoutMs = 15_000) {
      const ok =
        typeof state === "function"
          ? state
          : (jobs: JobRow[]) => jobs.length === ids.length && jobs.every((j) => j.state === state);
      return waitUntil(() => harness.jobs(ids), ok, timeoutMs, `jobs ${typeof state === "string" ? state : "condition"}`);
    },
    async api() {
      return adminClient(server.url);
    },
    async restart() {
      // Same port, so the devices' reconnect attempts reach the new server.
      const port = server.port;
      await server.close();
      server = await startServer({ ...config, PORT: port }, logger, { database });
    },
    async startAnother(extra = {}) {
      if (database.kind !== "postgres" || !database.url) throw new Error("several instances need PostgreSQL");
      const { openDatabase } = await import("../../src/db/database.ts");
      const handle = await openDatabase({ kind: "postgres", url: database.url, poolSize: 5 });
      const other = await startServer({ ...config, ...gatewayConfigOverrides(extra) }, logger, { database: handle });
      const close = other.close.bind(other);
      other.close = async () => {
        await close();
        await handle.close();
      };
      others.push(other);
      return other;
    },
    async close() {
      for (const f of fleets) await f.stop();
      for (const o of others) await o.close();
      await server.close();
      await database.close();
    },
  };
  return harness;
}

function gatewayConfigOverrides(env: Record<string, string>): Partial<ServerConfig> {
  if (Object.keys(env).length === 0) return {};
  const full = loadConfig({ ...FAST_GATEWAY_ENV, ...env });
  return Object.fromEntries(Object.keys(env).map((k) => [k, full[k as keyof ServerConfig]]));
}

/** One harness per test file (beforeAll/afterAll); the returned object is filled before the tests run. */
export function useGatewayServer(env: Record<string, string> = {}): GatewayHarness {
  const holder = {} as { h: GatewayHarness };
  beforeAll(async () => {
    holder.h = await createGatewayHarness(env);
  });
  afterAll(async () => {
    await holder.h?.close();
  });
  return new Proxy({} as GatewayHarness, {
    get(_, key) {
      const value = Reflect.get(holder.h, key);
      return typeof value === "function" ? value.bind(holder.h) : value;
    },
  });
}
