/**
 * Fills a Tern database with the benchmark fleet in a few multi-row
 * statements through the server's own tables (not thousands of API calls):
 * the first admin, N approved devices with the simulator's interfaces (WAN
 * with the public address the simulator reports, so no status looks like an
 * address change), 2N device-to-device tunnels, and optionally the compiled
 * desired configs with one queued job per device (the server's own
 * queueConfigJobs) or N finished jobs.
 */
import { DeviceInterface } from "@tern/protocol";
import { sql } from "kysely";
import { pino } from "pino";
import { hashSecretToken } from "../../../../apps/server/src/auth/secret-tokens.ts";
import { loadConfig } from "../../../../apps/server/src/config.ts";
import type { DatabaseHandle } from "../../../../apps/server/src/db/database.ts";
import { toJson } from "../../../../apps/server/src/db/json.ts";
import { migrateToLatest } from "../../../../apps/server/src/db/migrate.ts";
import { createKeyring } from "../../../../apps/server/src/secrets/keyring.ts";
import { bootstrapFirstAdmin } from "../../../../apps/server/src/services/bootstrap.ts";
import { systemCtx } from "../../../../apps/server/src/services/context.ts";
import { queueConfigJobs } from "../../../../apps/server/src/services/desired-config.ts";
import { lanIndexRows } from "../../../../apps/server/src/services/lan-index/rows.ts";
import { defaultPublicAddress, hostname, registerInterfaces } from "../../simulator/identity.ts";
import {
  benchKey,
  benchMachineId,
  deviceId,
  deviceToken,
  FLEET_PREFIX,
  interfaceId,
  TUNNELS_PER_DEVICE,
  tunnelEnds,
  tunnelId,
} from "./fleet-plan.ts";

export const ADMIN_EMAIL = "bench@tern.invalid";
export const ADMIN_PASSWORD = "bench-password-not-secret";

export interface SeedOptions {
  devices: number;
  /** Per-run secret inside the device tokens. */
  tokenSecret: string;
  /** Base64 server key (the server started later must use the same, the PSKs are encrypted with it). */
  secretKey: string;
  /** Compile every device's desired config and queue its first job (server code: queueConfigJobs). */
  configure: boolean;
  /** Insert one finished job per device (for the jobs list), when not configuring. */
  finishedJobs: boolean;
  /** Insert one notification per device (for the notifications list). */
  notifications?: boolean;
  /** The first `pending` devices are registered but not approved (for approval measurements). */
  pending?: number;
}

export interface SeedResult {
  orgId: string;
  devices: number;
  tunnels: number;
  jobs: number;
  insertMs: number;
  compileMs: number;
}

const CHUNK = 1000;

function deviceInterfaces(index: number): DeviceInterface[] {
  const pub = defaultPublicAddress(index);
  return registerInterfaces(index).map((itf, port) =>
    DeviceInterface.parse({
      ...itf,
      id: interfaceId(index, port as 0 | 1),
      type: port === 0 ? "WAN" : "LAN",
      isAssigned: true,
      PublicIP: port === 0 ? pub.publicIp : "",
      PublicPort: port === 0 ? String(pub.publicPort) : "",
    }),
  );
}

export async function seedFleet(database: DatabaseHandle, options: SeedOptions): Promise<SeedResult> {
  const { db } = database;
  const n = options.devices;
  if (n < 5) throw new RangeError("the benchmark fleet needs at least 5 devices (ring of tunnels to i+1 and i+2)");
  await migrateToLatest(db as never);
  const boot = await bootstrapFirstAdmin(db, { email: ADMIN_EMAIL, password: ADMIN_PASSWORD, passwordHashCost: 10 });
  if (!boot.created) throw new Error("the scratch database already has an administrator: seed an empty database");
  const org = await db.selectFrom("organizations").select(["id", "account_id", "name"]).executeTakeFirstOrThrow();
  const keyring = createKeyring(Buffer.from(options.secretKey, "base64"));
  const t0 = performance.now();

  for (let start = 0; start < n; start += CHUNK) {
    const rows = [];
    for (let i = start; i < Math.min(n, start + CHUNK); i++) {
      rows.push({
        id: deviceId(i),
        organization_id: org.id,
        name: hostname(FLEET_PREFIX, i),
        hostname: hostname(FLEET_PREFIX, i),
        machine_id: benchMachineId(i),
        is_approved: i >= (options.pending ?? 0),
        device_token_hash: hashSecretToken(deviceToken(options.tokenSecret, i)),
        public_key: benchKey(options.tokenSecret, i).publicKey,
        agent_version: "0.1.0-sim",
        interfaces: toJson(deviceInterfaces(i)),
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
      });
    }
    await db.insertInto("devices").values(rows).execute();
    // The LAN overlap index the server writes with every write of a device's interfaces.
    const lanRows = rows.flatMap((r, k) =>
      lanIndexRows({ interfaces: deviceInterfaces(start + k), firewall: { rules: [] } }).map((x) => ({
        device_id: r.id,
        organization_id: org.id,
        kind: x.kind,
        subnet: x.subnet,
      })),
    );
    if (lanRows.length) await db.insertInto("device_lan_subnets").values(lanRows).execute();
  }

  const tunnels = n * (TUNNELS_PER_DEVICE / 2);
  for (let start = 0; start < tunnels; start += CHUNK) {
    const rows = [];
    for (let num = start; num < Math.min(tunnels, start + CHUNK); num++) {
      const [a, b] = tunnelEnds(num, n);
      const id = tunnelId(num);
      const ends = [`${deviceId(a)}:${interfaceId(a, 0)}`, `${deviceId(b)}:${interfaceId(b, 0)}`].sort();
      rows.push({
        id,
        organization_id: org.id,
        num,
        device_a: deviceId(a),
        interface_a: interfaceId(a, 0),
        device_b: deviceId(b),
        interface_b: interfaceId(b, 0),
        endpoint_key: ends.join("|"),
        psk_enc: keyring.encrypt(`bench-psk-${num}`, id),
        notifications: toJson({ rtt: null, dropRate: null }),
      });
    }
    await db.insertInto("tunnels").values(rows).execute();
  }
  const insertMs = performance.now() - t0;

  let jobs = 0;
  let compileMs = 0;
  const ids = Array.from({ length: n }, (_, i) => deviceId(i));
  if (options.configure) {
    const t1 = performance.now();
    const config = loadConfig({ TERN_SECRET_KEY: options.secretKey, TERN_LOG_LEVEL: "silent" });
    const deps = { db, config, keyring, logger: pino({ level: "silent" }) };
    const ctx = systemCtx(deps as never, { id: org.id, accountId: org.account_id, name: org.name });
    const queued = await db
      .transaction()
      .execute((trx) =>
        queueConfigJobs(
          { ...ctx, db: trx },
          { deviceIds: ids, type: "modify", tasks: [{ kind: "onboard", summary: "benchmark fleet: first config" }] },
        ),
      );
    jobs = queued.jobIds.length;
    compileMs = performance.now() - t1;
  } else if (options.finishedJobs) {
    for (let start = 0; start < n; start += CHUNK) {
      const rows = ids.slice(start, start + CHUNK).map((id, k) => ({
        id: uuidFor("70b00000", start + k),
        organization_id: org.id,
        device_id: id,
        type: "modify" as const,
        state: "complete" as const,
        tasks: toJson([{ kind: "onboard", summary: "benchmark fleet: first config" }]),
        target_hash: "ab".repeat(32),
        created_by: "system",
        started_at: new Date(),
        finished_at: new Date(),
      }));
      await db.insertInto("jobs").values(rows).execute();
      jobs += rows.length;
    }
  }
  if (options.notifications) {
    // A fleet's history: connection and tunnel events of every severity, two thirds read, a third resolved.
    const severities = ["info", "warning", "critical"] as const;
    for (let start = 0; start < n; start += CHUNK) {
      const rows = ids.slice(start, start + CHUNK).map((id, k) => {
        const i = start + k;
        const seen = new Date(Date.now() - i * 1000);
        return {
          id: uuidFor("70c00000", i),
          organization_id: org.id,
          device_id: id,
          event_type: i % 2 ? "tunnel-loss" : "device-connection",
          title: i % 2 ? "Tunnel loss above threshold" : "Device disconnected",
          details: `benchmark fleet: event ${i}`,
          severity: severities[i % 3]!,
          targets: toJson({ deviceId: id, tunnelId: null, interfaceId: null, vrrpGroupId: null }),
          dedup_key: `bench:${i}`,
          count: 1 + (i % 5),
          is_read: i % 3 !== 0,
          resolved: i % 3 === 1,
          resolved_at: i % 3 === 1 ? seen : null,
          created_at: seen,
          last_seen_at: seen,
        };
      });
      await db.insertInto("notifications").values(rows).execute();
    }
  }
  // Fresh statistics, as autovacuum would have them on a fleet that grew over time.
  await sql`analyze`.execute(db);
  return { orgId: org.id, devices: n, tunnels, jobs, insertMs, compileMs };
}

function uuidFor(head: string, n: number): string {
  return `${head}-0000-4000-8000-${n.toString(16).padStart(12, "0")}`;
}
