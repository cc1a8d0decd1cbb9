/** The results as a text table (terminal) and as a markdown summary. */
import { formatParams, formatRatio, formatValue } from "./format.ts";
import type { CaseResult, RunResult } from "./results.ts";

const HEADERS = ["case", "size", "figure", "value", "baseline (same run)", "baseline value", "ratio"] as const;

/** One row per figure; a skipped or failed case gets one row with its reason. */
export function tableRows(cases: readonly CaseResult[]): string[][] {
  const rows: string[][] = [];
  for (const c of cases) {
    const size = formatParams(c.params);
    if (c.status !== "ok") {
      const reason = c.reason ?? "";
      rows.push([c.case, size, c.status, reason.length > 100 ? `${reason.slice(0, 99)}…` : reason, "", "", ""]);
      continue;
    }
    for (const f of c.figures) {
      const base = f.baseline;
      rows.push([
        c.case,
        size,
        f.label,
        formatValue(f.value, f.unit),
        base ? `${base.case} · ${base.label}` : c.kind === "baseline" ? "(is a baseline)" : "(none)",
        base ? formatValue(base.value, base.unit) : "",
        base ? formatRatio(f.ratio) : "",
      ]);
    }
  }
  return rows;
}

/** Fixed-width text table. */
export function renderTable(cases: readonly CaseResult[]): string {
  const rows = [HEADERS.slice(), ...tableRows(cases)];
  const widths = HEADERS.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? "").length)));
  const line = (r: string[]) =>
    r
      .map((cell, i) => (i === 3 || i === 5 || i === 6 ? cell.padStart(widths[i]!) : cell.padEnd(widths[i]!)))
      .join("  ")
      .trimEnd();
  return [line(rows[0]!), widths.map((w) => "-".repeat(w)).join("  "), ...rows.slice(1).map(line)].join("\n");
}

function mdCell(s: string): string {
  return s.replaceAll("|", "\\|").replaceAll("\n", " ");
}

export function renderMarkdown(result: RunResult, descriptions: ReadonlyMap<string, string> = new Map()): string {
  const m = result.machine;
  const out: string[] = [
    `# Tern benchmark, ${result.mode} run, ${result.startedAt}`,
    "",
    `Machine: ${m.cpus} × ${m.cpuModel}, ${formatValue(m.totalMemoryBytes, "B")} RAM, ${m.platform} ${m.release}, Node ${m.node}; ` +
      `load average ${m.loadAverage.start.toFixed(2)} at start, ${m.loadAverage.end.toFixed(2)} at end; fd limit ${m.fdLimit ?? "unknown"}.`,
    `Commit: ${result.git.commit ?? "unknown"}${result.git.dirty ? " (with uncommitted changes)" : ""}. Took ${(result.durationMs / 1000).toFixed(0)} s.`,
    ...(result.hostSettings && result.hostSettings.length > 0
      ? [
          `Kernel settings of the server package: ${result.hostSettings
            .map(
              (s) => `\`${s.key} = ${s.value}\`${s.raisedFrom !== undefined ? ` (raised for the run from ${s.raisedFrom})` : ""}`,
            )
            .join(", ")}.`,
        ]
      : []),
    ...(result.serverEnv
      ? [
          `Tern's servers ran with ${Object.entries(result.serverEnv)
            .map(([k, v]) => `\`${k}=${v}\``)
            .join(", ")} (\`--server-env\`).`,
        ]
      : []),
    "",
    "Absolute figures depend on the machine and on what else ran; read each figure against its same-run baseline (ratio = value / baseline).",
    "",
    `| ${HEADERS.join(" | ")} |`,
    `| ${HEADERS.map((_, i) => (i === 3 || i === 5 || i === 6 ? "---:" : "---")).join(" | ")} |`,
    ...tableRows(result.cases).map((r) => `| ${r.map(mdCell).join(" | ")} |`),
    "",
  ];
  const seen = new Set<string>();
  const notes: string[] = [];
  for (const c of result.cases) {
    const desc = descriptions.get(c.case);
    if (desc && !seen.has(c.case)) {
      seen.add(c.case);
      notes.push(`- **${c.case}** (${c.kind}): ${desc}`);
    }
    for (const n of c.notes) notes.push(`  - ${formatParams(c.params)}: ${n}`);
  }
  if (notes.length > 0) out.push("## Cases", "", ...notes, "");
  return out.join("\n");
}
