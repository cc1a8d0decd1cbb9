/**
 * Statistics history queries on PostgreSQL (docs/bench.md "statistics-query"):
 * a scratch database with a seeded fleet (devices and tunnels as the other
 * server cases seed them) and its statistics history, generated in the
 * database (generate_series, no rows through the client): 7 days of 1-minute
 * roll-ups (interfaces and health) for the queried devices, and 24 hours of
 * 1-hour roll-ups of every device and tunnel (the tier the 24-hour
 * organization aggregates read). Measured through Tern's own service
 * functions (the same code the routes run, without HTTP): a device's 7-day
 * statistics at a 5-minute step and the 24-hour top talkers and worst
 * tunnels. Baseline `statistics-query-sql`: the bare SQL of the same answers
 * through pg, on the same database in the same run.
 */
import { randomBytes } from "node:crypto";
import { sql } from "kysely";
import pg from "pg";
import { loadConfig } from "../../../../apps/server/src/config.ts";
import { type DatabaseHandle, openDatabase } from "../../../../apps/server/src/db/database.ts";
import type { ServiceCtx } from "../../../../apps/server/src/services/context.ts";
import { getDeviceStatistics } from "../../../../apps/server/src/services/statistics/device-history.ts";
import { getTopTalkers, getWorstTunnels } from "../../../../apps/server/src/services/statistics/org-aggregates.ts";
import { ensurePartitions } from "../../../../apps/server/src/services/statistics/partitions.ts";
import { seedFleet } from "../server/seed.ts";
import { type Scratch, scratchDatabase } from "../server/tern.ts";
import { summarize } from "../stats.ts";
import type { BenchCase, BenchContext, Figure, Params } from "../types.ts";

export interface StatisticsParams extends Params {
  devices: number;
  /** Devices with 7 days of 1-minute roll-ups; the device query cycles through them. */
  queried: number;
  iterations: number;
}

interface Seeded {
  scratch: Scratch;
  database: DatabaseHandle;
  orgId: string;
  queriedIds: string[];
  now: Date;
  rows: Record<string, number>;
  seedMs: number;
}

const DAY_MS = 86_400_000;
/** One seeded database per size, shared by the case and its baseline in a run; the case drops it. */
const seeded = new Map<string, Promise<Seeded>>();

async function seed(params: StatisticsParams, ctx: BenchContext): Promise<Seeded> {
  const scratch = await scratchDatabase("pg", ctx);
  const database = await openDatabase({ kind: "postgres", url: scratch.url!, poolSize: 2 });
  const t0 = performance.now();
  const fleet = await seedFleet(database, {
    devices: params.devices,
    tokenSecret: randomBytes(6).toString("hex"),
    secretKey: randomBytes(32).toString("base64"),
    configure: false,
    finishedJobs: false,
  });
  const db = database.db;
  const now = new Date();
  await ensurePartitions(db, now.getTime(), now.getTime() - 8 * DAY_MS, [
    "stat_if_1m",
    "stat_health_1m",
    "stat_if_1h",
    "stat_health_1h",
    "stat_tunnel_1h",
  ]);
  await ensurePartitions(db, now.getTime(), now.getTime());
  const queried = await db.selectFrom("devices").select("id").orderBy("id").limit(params.queried).execute();
  const queriedIds = queried.map((d) => d.id);
  const minutes = sql`generate_series(date_bin('1 minute', now(), '2000-01-01Z') - interval '7 days', date_bin('1 minute', now(), '2000-01-01Z') - interval '1 minute', interval '1 minute')`;
  const hours = sql`generate_series(date_bin('1 hour', now(), '2000-01-01Z') - interval '24 hours', date_bin('1 hour', now(), '2000-01-01Z') - interval '1 hour', interval '1 hour')`;
  const ifaces = sql`unnest(array['wan0', 'wan1', 'lan0']) as i`;
  // Traffic with a daily shape and noise; the LAN carries most, the second WAN little.
  const bytes = (scale: number) =>
    sql`(${scale} * (1.2 + sin(extract(epoch from b) / 13751.0)) * (case i when 'lan0' then 3 when 'wan0' then 2 else 0.2 end) * (0.5 + random()))::bigint`;
  const counters = (seconds: number) => sql`${seconds}::float8, ${bytes(seconds * 40_000)}, ${bytes(seconds * 20_000)},
    ${bytes(seconds * 40)}, ${bytes(seconds * 25)}, (random() * 2)::bigint, 0::bigint, (random() * 3)::bigint, 0::bigint`;
  const ifCols = sql`(bucket, organization_id, device_id, interface, samples, seconds, rx_bytes, tx_bytes, rx_packets, tx_packets, rx_errors, tx_errors, rx_drops, tx_drops)`;
  const healthCols = sql`(bucket, organization_id, device_id, samples, cpu_sum, cpu_max, memory_sum, memory_max, disk_sum, disk_max, uptime_max, temperature_sum, temperature_samples, temperature_max)`;
  const health = (
    samples: number,
  ) => sql`${samples}, ${samples} * (20 + 30 * random()), 60 + 40 * random(), ${samples} * (40 + 5 * random()), 50,
    ${samples} * 33.0, 33, extract(epoch from b - now() + interval '30 days'), null, 0, null`;

  await sql`insert into stat_if_1m ${ifCols} select b, d.organization_id, d.id, i, 2, ${counters(60)}
    from devices d, ${minutes} as b, ${ifaces} where d.id = any(${queriedIds}::uuid[])`.execute(db);
  await sql`insert into stat_health_1m ${healthCols} select b, d.organization_id, d.id, ${health(12)}
    from devices d, ${minutes} as b where d.id = any(${queriedIds}::uuid[])`.execute(db);
  await sql`insert into stat_if_1h ${ifCols} select b, d.organization_id, d.id, i, 120, ${counters(3600)}
    from devices d, ${hours} as b, ${ifaces}`.execute(db);
  await sql`insert into stat_health_1h ${healthCols} select b, d.organization_id, d.id, ${health(720)} from devices d, ${hours} as b`.execute(
    db,
  );
  await sql`insert into stat_tunnel_1h (bucket, organization_id, tunnel_id, side, samples, up_samples, loss_sum, loss_max, rtt_sum, rtt_max, jitter_sum, jitter_max)
    select b, t.organization_id, t.id, s, 720, 720 - (random() * 3)::int, 720 * random() * random() * 2, 5 * random(), 720 * (10 + 60 * random()), 120,
      720 * 3 * random(), 20 from tunnels t, ${hours} as b, unnest(array['a', 'b']) as s`.execute(db);
  await sql`insert into stat_rollup_progress (name, done_until) values
    ('minute', date_bin('1 minute', now(), '2000-01-01Z')), ('hour', date_bin('1 hour', now(), '2000-01-01Z'))`.execute(db);
  for (const t of ["stat_if_1m", "stat_health_1m", "stat_if_1h", "stat_health_1h", "stat_tunnel_1h", "devices", "tunnels"])
    await sql`vacuum analyze ${sql.table(t)}`.execute(db);
  const rows: Record<string, number> = {};
  for (const t of ["stat_if_1m", "stat_health_1m", "stat_if_1h", "stat_health_1h", "stat_tunnel_1h"]) {
    const r = await sql<{ n: string }>`select count(*)::text as n from ${sql.table(t)}`.execute(db);
    rows[t] = Number(r.rows[0]!.n);
  }
  ctx.log(
    `  seeded ${fleet.devices} devices, ${fleet.tunnels} tunnels, ${JSON.stringify(rows)} in ${((performance.now() - t0) / 1000).toFixed(1)} s`,
  );
  return { scratch, database, orgId: fleet.orgId, queriedIds, now, rows, seedMs: performance.now() - t0 };
}

function sharedSeed(params: StatisticsParams, ctx: BenchContext): Promise<Seeded> {
  const key = `${params.devices}/${params.queried}`;
  let s = seeded.get(key);
  if (!s) {
    s = seed(params, ctx);
    seeded.set(key, s);
    // A baseline run alone (--case statistics-query-sql) still drops its database.
    process.once("beforeExit", () => void release(key));
  }
  return s;
}

async function release(key: string): Promise<void> {
  const s = seeded.get(key);
  if (!s) return;
  seeded.delete(key);
  const { database, scratch } = await s;
  await database.close();
  await scratch.drop();
}

/** Latencies of `iterations` calls (after three warm-up calls), ms. */
async function time(iterations: number, call: (i: number) => Promise<unknown>) {
  for (let i = 0; i < 3; i++) await call(i);
  const ms: number[] = [];
  for (let i = 0; i < iterations; i++) {
    const t0 = performance.now();
    await call(i);
    ms.push(performance.now() - t0);
  }
  return summarize(ms);
}

const QUERIES = [
  { key: "device-7d", label: "device 7 days, 5-min step" },
  { key: "top-talkers-24h", label: "top talkers 24 h" },
  { key: "worst-tunnels-24h", label: "worst tunnels 24 h" },
] as const;

function sizes(mode: "quick" | "full"): StatisticsParams[] {
  return [{ devices: mode === "quick" ? 1000 : 10_000, queried: 20, iterations: mode === "quick" ? 20 : 100 }];
}

export const statisticsQuerySql: BenchCase<StatisticsParams> = {
  name: "statistics-query-sql",
  kind: "baseline",
  title: "Statistics history: the bare SQL of the same answers through pg",
  description:
    "Baseline of statistics-query, on its seeded database: the grouped SELECTs behind each answer (a device's interfaces and health over 7 days of 1-minute roll-ups at a 5-minute step; the organization's 24 hours of 1-hour roll-ups summed per device, and per tunnel) sent through one pg client, with no validation, tier choice or response shaping.",
  sizes,
  async run(params, ctx) {
    const s = await sharedSeed(params, ctx);
    const client = new pg.Client({ connectionString: s.scratch.url });
    await client.connect();
    try {
      const now = new Date();
      const from = new Date(now.getTime() - 7 * DAY_MS + 600_000).toISOString();
      const dayAgo = new Date(now.getTime() - DAY_MS).toISOString();
      const timings = {
        "device-7d": await time(params.iterations, async (i) => {
          const id = s.queriedIds[i % s.queriedIds.length];
          await client.query(
            `select date_bin('300 seconds', bucket, $2::timestamptz) b, interface, sum(seconds), sum(rx_bytes), sum(tx_bytes), sum(rx_packets), sum(tx_packets),
              sum(rx_errors), sum(tx_errors), sum(rx_drops), sum(tx_drops) from stat_if_1m where device_id = $1 and bucket >= $2 and bucket < $3 group by 1, 2 order by 2, 1`,
            [id, from, now.toISOString()],
          );
          await client.query(
            `select date_bin('300 seconds', bucket, $2::timestamptz) b, sum(samples), sum(cpu_sum) / sum(samples), max(cpu_max), sum(memory_sum) / sum(samples),
              sum(disk_sum) / sum(samples), max(uptime_max) from stat_health_1m where device_id = $1 and bucket >= $2 and bucket < $3 group by 1 order by 1`,
            [id, from, now.toISOString()],
          );
        }),
        "top-talkers-24h": await time(params.iterations, () =>
          client.query(
            `select device_id, sum(rx_bytes), sum(tx_bytes) from stat_if_1h where organization_id = $1 and bucket >= $2 and bucket < $3
              group by device_id order by sum(rx_bytes + tx_bytes) desc limit 10`,
            [s.orgId, dayAgo, now.toISOString()],
          ),
        ),
        "worst-tunnels-24h": await time(params.iterations, () =>
          client.query(
            `select tunnel_id, sum(loss_sum) / sum(samples) loss from stat_tunnel_1h where organization_id = $1 and bucket >= $2 and bucket < $3
              group by tunnel_id order by loss desc limit 10`,
            [s.orgId, dayAgo, now.toISOString()],
          ),
        ),
      };
      const figures: Figure[] = QUERIES.flatMap((q) => [
        { key: `${q.key}-p50`, label: `${q.label} p50`, value: timings[q.key].p50, unit: "ms", better: "lower" as const },
        { key: `${q.key}-p99`, label: `${q.label} p99`, value: timings[q.key].p99, unit: "ms", better: "lower" as const },
      ]);
      return { figures, details: { rows: s.rows, seedMs: Math.round(s.seedMs) } };
    } finally {
      await client.end();
    }
  },
};

export const statisticsQuery: BenchCase<StatisticsParams> = {
  name: "statistics-query",
  kind: "server",
  title: "Statistics history: a device's 7 days and the organization's 24 hours, on PostgreSQL",
  description:
    "10,000 devices (quick: 1,000) with their tunnels, seeded as the other server cases seed them, and their statistics history generated in the database: 7 days of 1-minute roll-ups for 20 devices (interfaces and health) and 24 hours of 1-hour roll-ups for every device and tunnel. Measured through Tern's service functions (what the routes run, without HTTP): GET /devices/{id}/statistics over 7 days at a 5-minute step (2,016 points per series, cycling through the 20 devices), and the 24-hour top talkers and worst tunnels of the organization. Targets (issue 19): p99 ≤ 100 ms for the device, ≤ 500 ms for an organization aggregate. Baseline: statistics-query-sql, the bare SQL on the same database.",
  sizes,
  async run(params, ctx) {
    await ctx.measure("statistics-query-sql", params);
    const s = await sharedSeed(params, ctx);
    try {
      const config = loadConfig({ TERN_SECRET_KEY: randomBytes(32).toString("base64"), TERN_LOG_LEVEL: "silent" });
      const svc = { db: s.database.db, org: { id: s.orgId }, config } as unknown as ServiceCtx;
      const now = () => new Date();
      let points = 0;
      const timings = {
        "device-7d": await time(params.iterations, async (i) => {
          const n = now();
          const r = await getDeviceStatistics(svc, s.queriedIds[i % s.queriedIds.length]!, {
            from: new Date(n.getTime() - 7 * DAY_MS + 600_000).toISOString(),
            to: n.toISOString(),
            step: 300,
          });
          points = r.interfaces.reduce((sum, x) => sum + x.points.length, 0) + r.health.length;
        }),
        "top-talkers-24h": await time(params.iterations, () => getTopTalkers(svc, {})),
        "worst-tunnels-24h": await time(params.iterations, () => getWorstTunnels(svc, {})),
      };
      const figures: Figure[] = QUERIES.flatMap((q) => [
        {
          key: `${q.key}-p50`,
          label: `${q.label} p50`,
          value: timings[q.key].p50,
          unit: "ms",
          better: "lower" as const,
          baseline: { case: "statistics-query-sql", params, key: `${q.key}-p50` },
        },
        {
          key: `${q.key}-p99`,
          label: `${q.label} p99`,
          value: timings[q.key].p99,
          unit: "ms",
          better: "lower" as const,
          baseline: { case: "statistics-query-sql", params, key: `${q.key}-p99` },
        },
      ]);
      const notes = [
        `device answer: ${points} points (3 interfaces and health); targets p99 ≤ 100 ms (device) and ≤ 500 ms (aggregates): device ${timings["device-7d"].p99.toFixed(1)} ms, top talkers ${timings["top-talkers-24h"].p99.toFixed(1)} ms, worst tunnels ${timings["worst-tunnels-24h"].p99.toFixed(1)} ms`,
      ];
      return { figures, notes, details: { rows: s.rows, seedMs: Math.round(s.seedMs) } };
    } finally {
      await release(`${params.devices}/${params.queried}`);
    }
  },
};
