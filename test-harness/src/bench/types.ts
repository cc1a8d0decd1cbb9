/** Types of the benchmark framework: cases, figures, results. */

export type BenchMode = "quick" | "full";

/**
 * `baseline`: measures something without Tern (bare ws, raw PostgreSQL) that
 * Tern's figures are read against. `server`/`agent`: Tern's own figures, each
 * with a baseline. `tool`: the test tooling itself (the simulator's footprint).
 */
export type CaseKind = "baseline" | "server" | "agent" | "tool";

/** Sizes and settings of one measurement; part of its identity (and of the results file). */
export type Params = Record<string, number | string | boolean>;

/** A figure of another measurement in the same run that this one is read against. */
export interface BaselineRef {
  case: string;
  params: Params;
  key: string;
}

export interface Figure {
  /** Stable machine name, e.g. `rss-per-connection`. */
  key: string;
  label: string;
  /** null when it could not be measured (then `notes` says why). */
  value: number | null;
  /** `B`, `ms`, `%`, `msg/s`, `rows/s`, `count` … */
  unit: string;
  better: "lower" | "higher";
  baseline?: BaselineRef;
}

export interface Measurement {
  figures: Figure[];
  notes?: string[];
  /** Anything else worth keeping in the results file (raw counts, payload size …). */
  details?: Record<string, unknown>;
}

/** Where things are and what the run may use; resolved once in main. */
export interface BenchEnv {
  /** PostgreSQL for the ingestion baselines. */
  databaseUrl: string;
  /** Scratch space for the run (PGlite data directories …). */
  tmpDir: string;
  /** `--profile DIR`: Tern's server processes write V8 CPU profiles (--cpu-prof) here. */
  profileDir?: string;
  /** `--server-env KEY=VALUE`: settings every Tern server of the run starts with (for A/B runs of a setting). */
  serverEnv?: Record<string, string>;
}

export interface BenchContext {
  mode: BenchMode;
  env: BenchEnv;
  /** Runs another case at `params` once per run (memoised) and returns its measurement, for same-run baselines. */
  measure(caseName: string, params: Params): Promise<Measurement>;
  log(message: string): void;
}

export interface BenchCase<P extends Params = Params> {
  name: string;
  kind: CaseKind;
  title: string;
  /** What it measures and how, one paragraph (goes into the markdown summary). */
  description: string;
  /** The measurements a run makes: usually one size in quick mode, several in full mode. */
  sizes(mode: BenchMode): P[];
  run(params: P, ctx: BenchContext): Promise<Measurement>;
}

/** Thrown by a case whose precondition is missing (no PostgreSQL reachable …): reported as skipped, not as an error. */
export class SkipCase extends Error {
  constructor(reason: string) {
    super(reason);
    this.name = "SkipCase";
  }
}
