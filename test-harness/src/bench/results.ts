/**
 * The results file `bench/results/<stamp>.json`: one zod schema, so tests
 * and later readers (comparisons between runs) check the same shape.
 */
import { mkdir, rename, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { z } from "zod";

export const RESULTS_SCHEMA = "tern-bench/1";

const ParamsSchema = z.record(z.string(), z.union([z.number(), z.string(), z.boolean()]));

export const FigureResult = z.object({
  key: z.string(),
  label: z.string(),
  value: z.number().nullable(),
  unit: z.string(),
  better: z.enum(["lower", "higher"]),
  /** The same-run figure this one is read against; null for baselines themselves. */
  baseline: z
    .object({
      case: z.string(),
      params: ParamsSchema,
      key: z.string(),
      label: z.string(),
      value: z.number().nullable(),
      unit: z.string(),
    })
    .nullable(),
  /** value / baseline value; null without both. */
  ratio: z.number().nullable(),
});
export type FigureResult = z.infer<typeof FigureResult>;

export const CaseResult = z.object({
  case: z.string(),
  kind: z.enum(["baseline", "server", "agent", "tool"]),
  title: z.string(),
  params: ParamsSchema,
  status: z.enum(["ok", "skipped", "error"]),
  /** Why it was skipped or failed. */
  reason: z.string().nullable(),
  durationMs: z.number(),
  figures: z.array(FigureResult),
  notes: z.array(z.string()),
  details: z.record(z.string(), z.unknown()),
});
export type CaseResult = z.infer<typeof CaseResult>;

export const Machine = z.object({
  hostname: z.string(),
  platform: z.string(),
  release: z.string(),
  arch: z.string(),
  cpuModel: z.string(),
  cpus: z.number().int(),
  totalMemoryBytes: z.number(),
  node: z.string(),
  /** 1-minute load average at start and end: how busy the machine was besides us. */
  loadAverage: z.object({ start: z.number(), end: z.number() }),
  fdLimit: z.string().nullable(),
});
export type Machine = z.infer<typeof Machine>;

export const RunResult = z.object({
  schema: z.literal(RESULTS_SCHEMA),
  mode: z.enum(["quick", "full"]),
  startedAt: z.iso.datetime(),
  finishedAt: z.iso.datetime(),
  durationMs: z.number(),
  git: z.object({ commit: z.string().nullable(), dirty: z.boolean().nullable() }),
  machine: Machine,
  /** `--server-env` settings of the run's Tern servers (absent: none). */
  serverEnv: z.record(z.string(), z.string()).optional(),
  /** The kernel settings of the server package's sysctl.conf as the run had them (host-settings.ts; absent in older files). */
  hostSettings: z.array(z.object({ key: z.string(), value: z.string(), raisedFrom: z.string().optional() })).optional(),
  cases: z.array(CaseResult),
});
export type RunResult = z.infer<typeof RunResult>;

/** `2026-05-02T10-11-12Z-quick`: sortable, unique per second, safe in file names. */
export function resultStamp(startedAt: string, mode: string): string {
  return `${startedAt.slice(0, 19).replaceAll(":", "-")}Z-${mode}`;
}

/** Writes `<stamp>.json` and `<stamp>.md` into `dir` (through temp files, so a reader never sees half a file). */
export async function writeResults(
  dir: string,
  result: RunResult,
  markdown: string,
): Promise<{ json: string; markdown: string }> {
  RunResult.parse(result);
  await mkdir(dir, { recursive: true });
  const stamp = resultStamp(result.startedAt, result.mode);
  const files = { json: join(dir, `${stamp}.json`), markdown: join(dir, `${stamp}.md`) };
  for (const [path, text] of [
    [files.json, `${JSON.stringify(result, null, 2)}\n`],
    [files.markdown, markdown],
  ] as const) {
    await writeFile(`${path}.tmp`, text);
    await rename(`${path}.tmp`, path);
  }
  return files;
}
