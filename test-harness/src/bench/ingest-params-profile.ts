/**
 * Profiling aid for the batched live-state writer (issue 14), not a bench
 * case: the event-loop time to prepare one flush's statement parameters for
 * the pg client, for N device states (three interfaces each) and 2N latest
 * tunnel values. "json" is the statement the writer sends now
 * (`liveStateUpsert`: the rows as one JSON parameter per table); "arrays" is
 * the form before 2026-12-02, one array parameter per column, which the pg
 * client turns into array literals element by element. Nothing is sent to a
 * database.
 *
 *   npx tsx test-harness/src/bench/ingest-params-profile.ts 1000
 */
import { randomUUID } from "node:crypto";
import type { InterfaceState } from "@tern/protocol";
import { Kysely, PostgresDialect } from "kysely";
import pg from "pg";
// @ts-expect-error: pg's utils module has no type declarations; prepareValue is what client.query runs on each parameter.
import { prepareValue } from "pg/lib/utils.js";
import type { Database } from "../../../apps/server/src/db/schema.ts";
import { liveStateUpsert, type SampleRow, type StateRow } from "../../../apps/server/src/gateway/live-state/ingest-buffer.ts";

const n = Number(process.argv[2] ?? 1000);
const rounds = 30;

const iface = (i: number): InterfaceState => ({
  devId: `pci:0000:00:0${i}.0`,
  name: `eth${i}`,
  operState: "up",
  IPv4: "10.0.0.2",
  IPv4Mask: 24,
  gateway: "10.0.0.1",
  mac: "02:00:00:00:00:01",
  mtu: 1500,
  rxBytes: 123_456_789,
  txBytes: 987_654_321,
  rxPackets: 1234,
  txPackets: 4321,
  rxErrors: 0,
  txErrors: 0,
  rxDrops: 0,
  txDrops: 0,
  publicIp: "203.0.113.7",
  publicPort: null,
  lte: null,
});
const states: StateRow[] = Array.from({ length: n }, () => ({
  deviceId: randomUUID(),
  orgId: randomUUID(),
  reportedAt: new Date(),
  appliedHash: "0123456789abcdef",
  applying: false,
  interfaces: [iface(1), iface(2), iface(3)],
  bgp: null,
  vrrp: [],
  health: { uptimeSeconds: 1234, cpuPercent: 3.2, memoryPercent: 40, diskPercent: 10, temperatureC: null },
}));
const latest: SampleRow[] = Array.from({ length: 2 * n }, (_, i) => ({
  tunnelId: randomUUID(),
  deviceId: states[i % n]!.deviceId,
  side: i % 2 ? "b" : "a",
  at: new Date(),
  up: true,
  loss: 0.5,
  rtt: 12.3,
  jitter: 1.1,
  samples: 300,
  windowMs: 60_000,
  sent: 123_456,
  received: 123_400,
}));

// Compiling needs a dialect, not a connection: this pool is never used.
const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool: new pg.Pool({ max: 1 }) }) });

const prepared = (params: readonly unknown[]) => params.map((p) => prepareValue(p) as string | null);

function json(): unknown[] {
  // The same text as the server's liveStateJson, built in one go (this times the work, not the loop's turns).
  const json = { latest: JSON.stringify(latest), states: JSON.stringify(states), ids: states.map((s) => s.deviceId) };
  return prepared(liveStateUpsert(json).compile(db).parameters);
}

function arrays(): unknown[] {
  const col = <T, R>(rows: readonly R[], f: (r: R) => T) => rows.map(f);
  return prepared([
    col(latest, (r) => r.tunnelId),
    col(latest, (r) => r.deviceId),
    col(latest, (r) => r.side),
    col(latest, (r) => r.at.toISOString()),
    col(latest, (r) => r.up),
    col(latest, (r) => r.loss),
    col(latest, (r) => r.rtt),
    col(latest, (r) => r.jitter),
    col(latest, (r) => r.samples),
    col(latest, (r) => r.windowMs),
    col(latest, (r) => r.sent),
    col(latest, (r) => r.received),
    col(states, (r) => r.deviceId),
    col(states, (r) => r.orgId),
    col(states, (r) => r.reportedAt.toISOString()),
    col(states, (r) => r.appliedHash),
    col(states, (r) => r.applying),
    col(states, (r) => JSON.stringify(r.interfaces)),
    col(states, (r) => (r.bgp === null ? null : JSON.stringify(r.bgp))),
    col(states, (r) => JSON.stringify(r.vrrp)),
    col(states, (r) => (r.health === null ? null : JSON.stringify(r.health))),
    col(states, (r) => r.deviceId),
  ]);
}

const bytes = (params: unknown[]) => params.reduce<number>((a, p) => a + (typeof p === "string" ? p.length : 0), 0);
console.log(`one flush: ${n} device states (three interfaces each), ${2 * n} latest values; mean of ${rounds} rounds`);
for (const [name, f] of [
  ["arrays (before)", arrays],
  ["json (now)", json],
  ["arrays (before)", arrays],
  ["json (now)", json],
] as const) {
  const t0 = performance.now();
  let size = 0;
  for (let i = 0; i < rounds; i++) size = bytes(f());
  console.log(
    `  ${name.padEnd(16)} ${((performance.now() - t0) / rounds).toFixed(2).padStart(7)} ms   ${size.toLocaleString("en")} bytes of parameters`,
  );
}
await db.destroy();
