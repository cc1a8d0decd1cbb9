/**
 * Reads a topology file: YAML syntax, then the zod schema, then the address
 * plan. Every problem is reported as `file:line:col: path: message`, pointing
 * at the deepest node of the path that exists in the file.
 */
import { readFile } from "node:fs/promises";
import { type Document, LineCounter, parseDocument } from "yaml";
import { LabError, LabErrorCode } from "../errors.ts";
import { planLab } from "../plan/address-plan.ts";
import { Topology } from "./schema.ts";

export interface TopologyProblem {
  line: number;
  col: number;
  path: string;
  message: string;
}

function locate(doc: Document, lineCounter: LineCounter, path: (string | number)[]): { line: number; col: number } {
  let p = path;
  let node = doc.getIn(p, true) as { range?: [number, number] } | undefined;
  while (!node?.range && p.length > 0) {
    p = p.slice(0, -1);
    node = doc.getIn(p, true) as { range?: [number, number] } | undefined;
  }
  // An empty path is the document itself.
  const offset = node?.range?.[0] ?? (doc.contents as { range?: [number, number] } | null)?.range?.[0] ?? 0;
  return lineCounter.linePos(offset);
}

function fail(file: string, problems: TopologyProblem[]): never {
  throw new LabError(
    LabErrorCode.TOPOLOGY_INVALID,
    `${file}: invalid topology (${problems.length} problem${problems.length === 1 ? "" : "s"})`,
    problems.map((p) => `${file}:${p.line}:${p.col}: ${p.path || "(top)"}: ${p.message}`),
  );
}

/** Parses and validates topology YAML; throws a LabError TOPOLOGY_INVALID listing each problem with its line. */
export function parseTopology(text: string, file = "topology.yaml"): Topology {
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { lineCounter, prettyErrors: true, uniqueKeys: true });
  if (doc.errors.length > 0) {
    fail(
      file,
      doc.errors.map((e) => ({
        line: e.linePos?.[0]?.line ?? 0,
        col: e.linePos?.[0]?.col ?? 0,
        path: "",
        message: e.message.split("\n")[0] ?? e.message,
      })),
    );
  }
  const result = Topology.safeParse(doc.toJS());
  if (!result.success) {
    fail(
      file,
      result.error.issues.map((issue) => ({
        ...locate(doc, lineCounter, issue.path as (string | number)[]),
        path: issue.path.join("."),
        message: issue.message,
      })),
    );
  }
  const planned = planLab(result.data);
  if (planned.issues.length > 0) {
    fail(
      file,
      planned.issues.map((issue) => ({
        ...locate(doc, lineCounter, issue.path),
        path: issue.path.join("."),
        message: issue.message,
      })),
    );
  }
  return result.data;
}

/** Reads and parses a topology file. */
export async function loadTopology(path: string): Promise<{ topology: Topology; text: string }> {
  const text = await readFile(path, "utf8").catch((err: NodeJS.ErrnoException) => {
    throw new LabError(LabErrorCode.TOPOLOGY_NOT_FOUND, `cannot read topology ${path}: ${err.code ?? err.message}`);
  });
  return { topology: parseTopology(text, path), text };
}
