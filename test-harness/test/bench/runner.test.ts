/** The runner with in-test cases: memoised same-run baselines, ratios, skips, errors, the results file. */
import { mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import os from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CaseRegistry } from "../../src/bench/registry.ts";
import { renderMarkdown } from "../../src/bench/render.ts";
import { RunResult, resultStamp, writeResults } from "../../src/bench/results.ts";
import { paramsKey, runBench } from "../../src/bench/runner.ts";
import { type BenchCase, SkipCase } from "../../src/bench/types.ts";

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(os.tmpdir(), "tern-bench-test-"));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

function registry(calls: string[]) {
  const echo: BenchCase<{ n: number }> = {
    name: "echo",
    kind: "baseline",
    title: "echo",
    description: "the baseline",
    sizes: () => [{ n: 10 }],
    run: async (p) => {
      calls.push(`echo:${p.n}`);
      return { figures: [{ key: "rate", label: "rate", value: 1000 * p.n, unit: "msg/s", better: "higher" }] };
    },
  };
  const server: BenchCase<{ n: number }> = {
    name: "server",
    kind: "server",
    title: "server",
    description: "Tern's figure",
    sizes: (mode) => (mode === "quick" ? [{ n: 10 }] : [{ n: 10 }, { n: 20 }]),
    run: async (p, ctx) => {
      calls.push(`server:${p.n}`);
      const base = await ctx.measure("echo", { n: p.n });
      return {
        figures: [
          {
            key: "rate",
            label: "rate",
            value: base.figures[0]!.value! * 0.25,
            unit: "msg/s",
            better: "higher",
            baseline: { case: "echo", params: { n: p.n }, key: "rate" },
          },
          { key: "unpaired", label: "unpaired", value: 1, unit: "count", better: "higher" },
          {
            key: "missing",
            label: "missing",
            value: 1,
            unit: "ms",
            better: "lower",
            baseline: { case: "echo", params: { n: p.n }, key: "nope" },
          },
        ],
      };
    },
  };
  const skip: BenchCase = {
    name: "needs-db",
    kind: "baseline",
    title: "db",
    description: "",
    sizes: () => [{}],
    run: async () => Promise.reject(new SkipCase("no database")),
  };
  const crash: BenchCase = {
    name: "crash",
    kind: "baseline",
    title: "crash",
    description: "",
    sizes: () => [{}],
    run: async () => Promise.reject(new Error("boom")),
  };
  return new CaseRegistry().register(server).register(echo).register(skip).register(crash);
}

describe("runBench", () => {
  it("measures each baseline once per run, pairs figures with it and computes the ratio", async () => {
    const calls: string[] = [];
    const result = await runBench({
      mode: "full",
      registry: registry(calls),
      env: { databaseUrl: "", tmpDir: dir },
      repoDir: process.cwd(),
    });
    expect(calls).toEqual(["server:10", "echo:10", "server:20", "echo:20"]);
    const server10 = result.cases.find((c) => c.case === "server" && c.params.n === 10)!;
    expect(server10.figures[0]).toMatchObject({
      value: 2500,
      ratio: 0.25,
      baseline: { case: "echo", key: "rate", value: 10_000, label: "rate" },
    });
    expect(server10.notes).toContain("unpaired: no same-run baseline");
    expect(server10.notes).toContain("missing: baseline echo has no figure nope (ok)");
    expect(server10.figures[2]!.ratio).toBeNull();
    expect(result.cases.map((c) => `${c.case}:${c.status}`)).toEqual([
      "echo:ok",
      "server:ok",
      "echo:ok",
      "server:ok",
      "needs-db:skipped",
      "crash:error",
    ]);
    expect(result.cases.find((c) => c.case === "crash")!.reason).toBe("boom");
    expect(result.cases.find((c) => c.case === "needs-db")!.reason).toBe("no database");
    expect(() => RunResult.parse(result)).not.toThrow();
    expect(result.machine.cpus).toBeGreaterThan(0);
  });

  it("runs only the chosen cases, plus the baselines they refer to", async () => {
    const calls: string[] = [];
    const result = await runBench({
      mode: "quick",
      registry: registry(calls),
      only: ["server"],
      env: { databaseUrl: "", tmpDir: dir },
      repoDir: process.cwd(),
    });
    expect(calls).toEqual(["server:10", "echo:10"]);
    expect(result.cases.map((c) => c.case)).toEqual(["echo", "server"]);
    expect(() => registry([]).get("nope")).toThrow(/no bench case "nope"; cases: server, echo/);
  });

  it("with a database chosen, runs only that database's sizes (and those without one)", async () => {
    const calls: string[] = [];
    const onDb: BenchCase<{ db?: string }> = {
      name: "on-db",
      kind: "server",
      title: "on a database",
      description: "",
      sizes: () => [{ db: "pg" }, { db: "pglite" }, {}],
      run: async (p) => {
        calls.push(p.db ?? "none");
        return { figures: [] };
      },
    };
    const result = await runBench({
      mode: "full",
      registry: new CaseRegistry().register(onDb),
      db: "pglite",
      env: { databaseUrl: "", tmpDir: dir },
      repoDir: process.cwd(),
    });
    expect(calls).toEqual(["pglite", "none"]);
    expect(result.cases.map((c) => c.params)).toEqual([{ db: "pglite" }, {}]);
  });

  it("keys parameters independently of their order", () => {
    expect(paramsKey("a", { x: 1, y: 2 })).toBe(paramsKey("a", { y: 2, x: 1 }));
    expect(paramsKey("a", { x: 1 })).not.toBe(paramsKey("a", { x: 2 }));
  });

  it("refuses a case registered twice or with a bad name", () => {
    const r = registry([]);
    expect(() => r.register(r.get("echo"))).toThrow(/registered twice/);
    expect(() => r.register({ ...r.get("echo"), name: "Bad Name" })).toThrow(/kebab-case/);
  });
});

describe("results files", () => {
  it("writes <stamp>.json (valid against the schema) and <stamp>.md, with no temp files left", async () => {
    const result = await runBench({
      mode: "quick",
      registry: registry([]),
      only: ["server"],
      env: { databaseUrl: "", tmpDir: dir, serverEnv: { TERN_DB_POOL_SIZE: "4" } },
      repoDir: process.cwd(),
    });
    const out = join(dir, "results");
    const files = await writeResults(out, result, renderMarkdown(result));
    const stamp = resultStamp(result.startedAt, "quick");
    expect(stamp).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}Z-quick$/);
    expect((await readdir(out)).sort()).toEqual([`${stamp}.json`, `${stamp}.md`]);
    const parsed = RunResult.parse(JSON.parse(await readFile(files.json, "utf8")));
    expect(parsed.cases[1]!.figures[0]!.ratio).toBe(0.25);
    expect(parsed.serverEnv).toEqual({ TERN_DB_POOL_SIZE: "4" });
    expect(await readFile(files.markdown, "utf8")).toContain("| server | n=10 | rate |");
  });

  it("refuses to write a result that does not match the schema", async () => {
    const bad = { schema: "tern-bench/1", mode: "quick" } as unknown as RunResult;
    await expect(writeResults(join(dir, "bad"), bad, "")).rejects.toThrow();
  });
});
