/**
 * Runs cases, each size once, and the baselines they refer to (once per run,
 * memoised, so a baseline shared by several figures is measured once in the
 * same run). Numbers are recorded, never judged: a case fails only by
 * throwing, and is then reported as an error while the run goes on.
 */
import os from "node:os";
import { gitInfo, machineInfo } from "./machine.ts";
import type { CaseRegistry } from "./registry.ts";
import { type CaseResult, type FigureResult, RESULTS_SCHEMA, type RunResult } from "./results.ts";
import { type BenchContext, type BenchEnv, type BenchMode, type Measurement, type Params, SkipCase } from "./types.ts";

export interface RunOptions {
  mode: BenchMode;
  registry: CaseRegistry;
  /** Case names to run (their baselines run too); empty = all. */
  only?: string[];
  /** Only the sizes on this database (params.db); sizes without a database run either way. */
  db?: "pg" | "pglite";
  env: BenchEnv;
  repoDir: string;
  log?: (message: string) => void;
}

interface Done {
  result: CaseResult;
  measurement: Measurement | null;
  refs: Map<number, NonNullable<Measurement["figures"][number]["baseline"]>>;
}

export function paramsKey(name: string, params: Params): string {
  const sorted = Object.keys(params)
    .sort()
    .map((k) => [k, params[k]]);
  return `${name}:${JSON.stringify(sorted)}`;
}

export async function runBench(options: RunOptions): Promise<RunResult> {
  const { registry, mode } = options;
  const log = options.log ?? (() => {});
  const startedAt = new Date();
  const loadAtStart = os.loadavg()[0] ?? 0;
  const done = new Map<string, Promise<Done>>();
  const order: Done[] = [];

  const measure = (name: string, params: Params): Promise<Done> => {
    const key = paramsKey(name, params);
    let pending = done.get(key);
    if (!pending) {
      pending = runOne(name, params);
      done.set(key, pending);
    }
    return pending;
  };

  const ctx: BenchContext = {
    mode,
    env: options.env,
    log,
    measure: async (name, params) =>
      (await measure(name, params)).measurement ?? Promise.reject(new SkipCase(`baseline ${name} did not produce figures`)),
  };

  async function runOne(name: string, params: Params): Promise<Done> {
    const c = registry.get(name);
    const t0 = performance.now();
    log(`${name} ${JSON.stringify(params)} …`);
    let status: CaseResult["status"] = "ok";
    let reason: string | null = null;
    let measurement: Measurement | null = null;
    try {
      measurement = await c.run(params, ctx);
    } catch (err) {
      status = err instanceof SkipCase ? "skipped" : "error";
      reason = err instanceof Error ? err.message : String(err);
      log(`${name}: ${status}: ${reason}${status === "error" && err instanceof Error && err.stack ? `\n${err.stack}` : ""}`);
    }
    const durationMs = performance.now() - t0;
    log(`${name} ${status} in ${(durationMs / 1000).toFixed(1)} s`);
    const notes = [...(measurement?.notes ?? [])];
    const refs = new Map<number, NonNullable<Measurement["figures"][number]["baseline"]>>();
    const figures: FigureResult[] = (measurement?.figures ?? []).map((f, i) => {
      if (f.baseline) refs.set(i, f.baseline);
      else if (c.kind !== "baseline") notes.push(`${f.label}: no same-run baseline`);
      return { key: f.key, label: f.label, value: finite(f.value), unit: f.unit, better: f.better, baseline: null, ratio: null };
    });
    const d: Done = {
      result: {
        case: name,
        kind: c.kind,
        title: c.title,
        params,
        status,
        reason,
        durationMs,
        figures,
        notes,
        details: measurement?.details ?? {},
      },
      measurement,
      refs,
    };
    order.push(d);
    return d;
  }

  const selected = options.only && options.only.length > 0 ? options.only.map((n) => registry.get(n)) : registry.list();
  for (const c of selected) {
    for (const params of c.sizes(mode))
      if (!options.db || params.db === undefined || params.db === options.db) await measure(c.name, params);
  }
  // Baselines referred to but not run yet are measured now, still in this run.
  for (const d of [...order]) {
    for (const ref of d.refs.values()) if (registry.has(ref.case)) await measure(ref.case, ref.params);
  }
  for (const d of order) await resolveBaselines(d, measure, registry);

  const finishedAt = new Date();
  return {
    schema: RESULTS_SCHEMA,
    mode,
    startedAt: startedAt.toISOString(),
    finishedAt: finishedAt.toISOString(),
    durationMs: finishedAt.getTime() - startedAt.getTime(),
    git: gitInfo(options.repoDir),
    machine: machineInfo(loadAtStart),
    ...(options.env.serverEnv && Object.keys(options.env.serverEnv).length > 0 ? { serverEnv: options.env.serverEnv } : {}),
    cases: order.map((d) => d.result),
  };
}

async function resolveBaselines(
  d: Done,
  measure: (n: string, p: Params) => Promise<Done>,
  registry: CaseRegistry,
): Promise<void> {
  for (const [i, ref] of d.refs) {
    const fig = d.result.figures[i]!;
    if (!registry.has(ref.case)) {
      d.result.notes.push(`${fig.label}: baseline case ${ref.case} is not registered`);
      continue;
    }
    const base = await measure(ref.case, ref.params);
    const bf = base.result.figures.find((f) => f.key === ref.key);
    if (!bf) {
      d.result.notes.push(`${fig.label}: baseline ${ref.case} has no figure ${ref.key} (${base.result.status})`);
      fig.baseline = { case: ref.case, params: ref.params, key: ref.key, label: ref.key, value: null, unit: fig.unit };
      continue;
    }
    fig.baseline = { case: ref.case, params: ref.params, key: ref.key, label: bf.label, value: bf.value, unit: bf.unit };
    fig.ratio = fig.value !== null && bf.value !== null && bf.value !== 0 ? fig.value / bf.value : null;
  }
}

function finite(v: number | null): number | null {
  return v === null || !Number.isFinite(v) ? null : v;
}
