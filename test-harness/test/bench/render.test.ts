import { describe, expect, it } from "vitest";
import { formatRatio, formatValue } from "../../src/bench/format.ts";
import { renderMarkdown, renderTable, tableRows } from "../../src/bench/render.ts";
import type { CaseResult, RunResult } from "../../src/bench/results.ts";

const base: CaseResult = {
  case: "echo",
  kind: "baseline",
  title: "bare echo",
  params: { connections: 10 },
  status: "ok",
  reason: null,
  durationMs: 5,
  figures: [
    { key: "rate", label: "messages per second", value: 40_000, unit: "msg/s", better: "higher", baseline: null, ratio: null },
  ],
  notes: [],
  details: {},
};
const tern: CaseResult = {
  ...base,
  case: "server-ingest",
  kind: "server",
  title: "server ingestion",
  figures: [
    {
      key: "rate",
      label: "status messages per second",
      value: 14_000,
      unit: "msg/s",
      better: "higher",
      baseline: {
        case: "echo",
        params: { connections: 10 },
        key: "rate",
        label: "messages per second",
        value: 40_000,
        unit: "msg/s",
      },
      ratio: 0.35,
    },
  ],
  notes: ["a note | with a pipe"],
};
const skipped: CaseResult = { ...base, case: "pg", status: "skipped", reason: "PostgreSQL is not reachable", figures: [] };

const run: RunResult = {
  schema: "tern-bench/1",
  mode: "quick",
  startedAt: "2026-01-02T03:04:05.000Z",
  finishedAt: "2026-01-02T03:05:05.000Z",
  durationMs: 60_000,
  git: { commit: "abc123", dirty: true },
  machine: {
    hostname: "h",
    platform: "linux",
    release: "6.1",
    arch: "x64",
    cpuModel: "Test CPU",
    cpus: 2,
    totalMemoryBytes: 8 * 2 ** 30,
    node: "v20.20.0",
    loadAverage: { start: 0.5, end: 1.25 },
    fdLimit: "1024 soft / 4096 hard",
  },
  cases: [base, tern, skipped],
};

describe("formatting", () => {
  it("scales bytes, groups thousands, keeps small figures precise", () => {
    expect(formatValue(512, "B")).toBe("512 B");
    expect(formatValue(20 * 1024, "B")).toBe("20.0 KiB");
    expect(formatValue(1.5 * 2 ** 30, "B")).toBe("1.50 GiB");
    expect(formatValue(0.254, "ms")).toBe("0.25 ms");
    expect(formatValue(43.44, "ms")).toBe("43.4 ms");
    expect(formatValue(37_758.2, "msg/s")).toBe("37,758 msg/s");
    expect(formatValue(42.6, "MiB/s")).toBe("42.60 MiB/s");
    expect(formatValue(null, "ms")).toBe("–");
    expect(formatValue(12_345, "count")).toBe("12,345");
    expect(formatRatio(0.35)).toBe("0.35×");
    expect(formatRatio(12.34)).toBe("12.3×");
    expect(formatRatio(null)).toBe("–");
  });
});

describe("table and markdown", () => {
  it("gives one row per figure with its baseline and ratio, and one row per skipped case with the reason", () => {
    expect(tableRows(run.cases)).toEqual([
      ["echo", "connections=10", "messages per second", "40,000 msg/s", "(is a baseline)", "", ""],
      [
        "server-ingest",
        "connections=10",
        "status messages per second",
        "14,000 msg/s",
        "echo · messages per second",
        "40,000 msg/s",
        "0.35×",
      ],
      ["pg", "connections=10", "skipped", "PostgreSQL is not reachable", "", "", ""],
    ]);
  });

  it("aligns the text table in columns", () => {
    const lines = renderTable(run.cases).split("\n");
    expect(lines).toHaveLength(5);
    expect(lines[0]).toMatch(/^case\s+size\s+figure\s+value\s+baseline \(same run\)\s+baseline value\s+ratio$/);
    expect(lines[1]).toMatch(/^-+( {2}-+){6}$/);
    const ratioCol = lines[0]!.indexOf("ratio") + "ratio".length;
    expect(lines[3]!.length).toBe(ratioCol);
    expect(lines[3]!.endsWith("0.35×")).toBe(true);
  });

  it("renders a markdown summary with the machine, the table and the case descriptions", () => {
    const md = renderMarkdown(run, new Map([["server-ingest", "what it does"]]));
    expect(md).toContain("# Tern benchmark, quick run, 2026-01-02T03:04:05.000Z");
    expect(md).toContain("2 × Test CPU, 8.00 GiB RAM");
    expect(md).toContain("load average 0.50 at start, 1.25 at end");
    expect(md).toContain("Commit: abc123 (with uncommitted changes)");
    expect(md).toContain(
      "| server-ingest | connections=10 | status messages per second | 14,000 msg/s | echo · messages per second | 40,000 msg/s | 0.35× |",
    );
    expect(md).toContain("| --- | --- | --- | ---: | --- | ---: | ---: |");
    expect(md).toContain("- **server-ingest** (server): what it does");
    expect(md).toContain("  - connections=10: a note | with a pipe");
    expect(md).not.toContain("--server-env");
  });

  it("names the kernel settings the run had, and which it raised", () => {
    const md = renderMarkdown({
      ...run,
      hostSettings: [
        { key: "net.core.somaxconn", value: "16384", raisedFrom: "4096" },
        { key: "net.ipv4.tcp_max_syn_backlog", value: "65536" },
      ],
    });
    expect(md).toContain(
      "Kernel settings of the server package: `net.core.somaxconn = 16384` (raised for the run from 4096), `net.ipv4.tcp_max_syn_backlog = 65536`.",
    );
    expect(renderMarkdown(run)).not.toContain("Kernel settings");
  });

  it("names the settings the servers ran with (--server-env)", () => {
    const md = renderMarkdown({ ...run, serverEnv: { TERN_DB_PREPARED_STATEMENTS: "0" } });
    expect(md).toContain("Tern's servers ran with `TERN_DB_PREPARED_STATEMENTS=0` (`--server-env`).");
  });
});
