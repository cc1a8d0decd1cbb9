/**
 * `npx tsx test-harness/src/bench/profile.ts FILE.cpuprofile [--top 30] [--filter text]`
 * Summarises a V8 CPU profile (from `npm run bench -- --profile DIR`, which
 * starts Tern's server with --cpu-prof): self time per function and per
 * file, and inclusive time of the functions whose name or file matches
 * `--filter`. `--last S` counts only the profile's last S seconds (a case's
 * final phase, such as server-fanout's fan-out, without the onboarding
 * before it). Enough to find the biggest cost without other tools.
 */
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { parseArgs } from "node:util";

interface Node {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

interface Profile {
  nodes: Node[];
  samples: number[];
  timeDeltas: number[];
  startTime: number;
  endTime: number;
}

export interface Row {
  name: string;
  ms: number;
  share: number;
}

function shortUrl(url: string): string {
  const i = url.lastIndexOf("/node_modules/");
  if (i >= 0) return url.slice(i + 14);
  const j = url.indexOf("/apps/");
  if (j >= 0) return url.slice(j + 1);
  const k = url.indexOf("/packages/");
  return k >= 0 ? url.slice(k + 1) : url.replace(/^file:\/\//, "") || "(native)";
}

export function summarizeProfile(p: Profile, filter?: string, lastSeconds?: number) {
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const self = new Map<number, number>();
  // Sample i was taken timeDeltas[0..i] after startTime (µs); with lastSeconds only those near endTime count.
  const from = lastSeconds === undefined ? Number.NEGATIVE_INFINITY : p.endTime - lastSeconds * 1e6;
  let at = p.startTime;
  p.samples.forEach((id, i) => {
    at += p.timeDeltas[i] ?? 0;
    if (at >= from) self.set(id, (self.get(id) ?? 0) + (p.timeDeltas[i] ?? 0));
  });
  const total = [...self.values()].reduce((a, b) => a + b, 0);
  const fn = new Map<string, number>();
  const file = new Map<string, number>();
  const incl = new Map<string, number>();
  for (const [id, us] of self) {
    const n = byId.get(id)!;
    const where = shortUrl(n.callFrame.url);
    const name = `${n.callFrame.functionName || "(anonymous)"} ${where}:${n.callFrame.lineNumber + 1}`;
    fn.set(name, (fn.get(name) ?? 0) + us);
    file.set(where, (file.get(where) ?? 0) + us);
    if (filter) {
      // Inclusive: each matching frame on the stack once.
      const seen = new Set<string>();
      for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) {
        const c = byId.get(cur)!.callFrame;
        const key = `${c.functionName || "(anonymous)"} ${shortUrl(c.url)}:${c.lineNumber + 1}`;
        if (!seen.has(key) && key.includes(filter)) {
          seen.add(key);
          incl.set(key, (incl.get(key) ?? 0) + us);
        }
      }
    }
  }
  const rows = (m: Map<string, number>): Row[] =>
    [...m.entries()]
      .map(([name, us]) => ({ name, ms: us / 1000, share: total > 0 ? us / total : 0 }))
      .sort((a, b) => b.ms - a.ms);
  return { totalMs: total / 1000, functions: rows(fn), files: rows(file), inclusive: rows(incl) };
}

function print(title: string, rows: Row[], top: number): void {
  console.log(`\n${title}`);
  for (const r of rows.slice(0, top))
    console.log(`${r.ms.toFixed(0).padStart(8)} ms ${(r.share * 100).toFixed(1).padStart(5)} %  ${r.name}`);
}

if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: { top: { type: "string", default: "30" }, filter: { type: "string" }, last: { type: "string" } },
  });
  const top = Number(values.top);
  for (const f of positionals) {
    const last = values.last === undefined ? undefined : Number(values.last);
    const s = summarizeProfile(JSON.parse(readFileSync(f, "utf8")) as Profile, values.filter, last);
    console.log(`${f}: ${s.totalMs.toFixed(0)} ms sampled`);
    print("self time by function", s.functions, top);
    print("self time by file", s.files, top);
    if (values.filter) print(`inclusive time of frames matching "${values.filter}"`, s.inclusive, top);
  }
}
