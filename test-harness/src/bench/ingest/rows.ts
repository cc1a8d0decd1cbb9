/**
 * Tunnel-sample rows for the ingestion baselines, and the SQL that loads them
 * three ways: multi-row INSERT, INSERT … SELECT unnest(arrays), and COPY.
 * Pure: the targets (PostgreSQL, PGlite) only run what this builds.
 */

/** Column-wise, so batches slice cheaply and `unnest` gets its arrays directly. */
export interface SampleRows {
  length: number;
  tunnelId: string[];
  deviceId: string[];
  at: string[];
  up: boolean[];
  loss: number[];
  rtt: number[];
  jitter: number[];
  samples: number[];
}

export const COLUMNS = ["tunnel_id", "device_id", "at", "up", "loss", "rtt", "jitter", "samples"] as const;

function uuid(kind: number, n: number): string {
  return `00000000-0000-4000-${(0x8000 + kind).toString(16)}-${n.toString(16).padStart(12, "0")}`;
}

/**
 * `count` samples from `tunnels` tunnels (4 per device), each tunnel
 * reporting every 10 s: what a fleet's status messages turn into.
 */
export function sampleRows(count: number, tunnels = 4000, start = Date.UTC(2026, 0, 1)): SampleRows {
  const rows: SampleRows = {
    length: count,
    tunnelId: [],
    deviceId: [],
    at: [],
    up: [],
    loss: [],
    rtt: [],
    jitter: [],
    samples: [],
  };
  let seed = 12345;
  const rand = () => {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    return seed / 0x7fffffff;
  };
  for (let i = 0; i < count; i++) {
    const t = i % tunnels;
    rows.tunnelId.push(uuid(1, t));
    rows.deviceId.push(uuid(2, Math.floor(t / 4)));
    rows.at.push(new Date(start + Math.floor(i / tunnels) * 10_000).toISOString());
    const up = rand() > 0.01;
    rows.up.push(up);
    rows.loss.push(up ? Math.round(rand() * 300) / 100 : 100);
    rows.rtt.push(up ? Math.round((10 + rand() * 90) * 100) / 100 : 0);
    rows.jitter.push(up ? Math.round(rand() * 500) / 100 : 0);
    rows.samples.push(30);
  }
  return rows;
}

/** Table like the server's time-series table: one row per sample, indexed for per-tunnel time ranges. */
export function createTableSql(table: string): string {
  return (
    `CREATE TABLE ${table} (tunnel_id uuid NOT NULL, device_id uuid NOT NULL, at timestamptz NOT NULL, up boolean NOT NULL, ` +
    `loss real NOT NULL, rtt real NOT NULL, jitter real NOT NULL, samples integer NOT NULL);\n` +
    `CREATE INDEX ${table}_tunnel_at ON ${table} (tunnel_id, at);`
  );
}

/** `INSERT … VALUES ($1,…,$8),(…)` for `n` rows; 8 × n must stay under PostgreSQL's 65,535 parameters. */
export function insertSql(table: string, n: number): string {
  if (n * COLUMNS.length > 65_535) throw new RangeError(`${n} rows need more than 65,535 parameters; use a smaller batch`);
  const tuples: string[] = [];
  for (let r = 0; r < n; r++) {
    const base = r * COLUMNS.length;
    tuples.push(`(${COLUMNS.map((_, c) => `$${base + c + 1}`).join(",")})`);
  }
  return `INSERT INTO ${table} (${COLUMNS.join(",")}) VALUES ${tuples.join(",")}`;
}

export function insertParams(rows: SampleRows, start: number, end: number): unknown[] {
  const out: unknown[] = [];
  for (let i = start; i < end; i++) {
    out.push(
      rows.tunnelId[i],
      rows.deviceId[i],
      rows.at[i],
      rows.up[i],
      rows.loss[i],
      rows.rtt[i],
      rows.jitter[i],
      rows.samples[i],
    );
  }
  return out;
}

/** One statement, eight array parameters, any batch size. */
export function unnestSql(table: string): string {
  return (
    `INSERT INTO ${table} (${COLUMNS.join(",")}) SELECT * FROM unnest(` +
    "$1::uuid[], $2::uuid[], $3::timestamptz[], $4::boolean[], $5::real[], $6::real[], $7::real[], $8::integer[])"
  );
}

export function unnestParams(rows: SampleRows, start: number, end: number): unknown[] {
  return [rows.tunnelId, rows.deviceId, rows.at, rows.up, rows.loss, rows.rtt, rows.jitter, rows.samples].map((col) =>
    (col as unknown[]).slice(start, end),
  );
}

/** COPY's text format: tab-separated columns, one row per line (no value here needs escaping). */
export function copyText(rows: SampleRows, start: number, end: number): string {
  let out = "";
  for (let i = start; i < end; i++) {
    out += `${rows.tunnelId[i]}\t${rows.deviceId[i]}\t${rows.at[i]}\t${rows.up[i] ? "t" : "f"}\t${rows.loss[i]}\t${rows.rtt[i]}\t${rows.jitter[i]}\t${rows.samples[i]}\n`;
  }
  return out;
}

export type IngestMethod = "insert" | "unnest" | "copy";
export const INGEST_METHODS: readonly IngestMethod[] = ["insert", "unnest", "copy"];
