/**
 * Lab topology files (YAML): edge routers with WAN and LAN interfaces, WAN
 * "clouds" between them with impairment, LAN hosts and non-managed peers.
 * Parsed with `yaml`, validated with zod; errors point at the line.
 */
import { LineCounter, parseDocument } from "yaml";
import { z } from "zod";

const Cidr = z.string().regex(/^\d{1,3}(\.\d{1,3}){3}\/\d{1,2}$/, "must be a.b.c.d/n");
const Name = z.string().regex(/^[a-z][a-z0-9-]{1,11}$/, "must be 2-12 characters [a-z0-9-], starting with a letter");

export const Impairment = z.object({
  lossPercent: z.number().min(0).max(100).default(0),
  delayMs: z.number().min(0).max(10_000).default(0),
  jitterMs: z.number().min(0).max(10_000).default(0),
  rateMbit: z.number().positive().nullable().default(null),
});
export type Impairment = z.infer<typeof Impairment>;

export const Topology = z
  .object({
    name: Name,
    /** WAN clouds: a router namespace with one /24 per attached edge. */
    clouds: z.array(z.object({ name: Name, impairment: Impairment.default(Impairment.parse({})) })).min(1),
    edges: z
      .array(
        z.object({
          name: Name,
          wan: z.array(z.object({ cloud: Name, address: Cidr, gateway: z.string() })).min(1),
          lan: z
            .array(z.object({ name: Name.optional(), address: Cidr, hosts: z.number().int().min(0).max(8).default(1) }))
            .default([]),
        }),
      )
      .min(1),
    /** Non-managed peers Tern does not configure (a stock strongSwan or FRR). */
    peers: z
      .array(z.object({ name: Name, kind: z.enum(["strongswan", "frr"]), cloud: Name, address: Cidr, gateway: z.string() }))
      .default([]),
  })
  .superRefine((t, ctx) => {
    const clouds = new Set(t.clouds.map((c) => c.name));
    const names = new Set<string>();
    for (const [i, n] of [...t.clouds, ...t.edges, ...t.peers].map((x, i) => [i, x.name] as const)) {
      if (names.has(n)) ctx.addIssue({ code: "custom", message: `name '${n}' is used twice`, path: [i] });
      names.add(n);
    }
    t.edges.forEach((e, i) => {
      e.wan.forEach((w, j) => {
        if (!clouds.has(w.cloud))
          ctx.addIssue({ code: "custom", message: `unknown cloud '${w.cloud}'`, path: ["edges", i, "wan", j, "cloud"] });
      });
    });
    t.peers.forEach((p, i) => {
      if (!clouds.has(p.cloud))
        ctx.addIssue({ code: "custom", message: `unknown cloud '${p.cloud}'`, path: ["peers", i, "cloud"] });
    });
  });
export type Topology = z.infer<typeof Topology>;

/** Parses topology YAML; throws an Error listing each problem as `file:line:col: path: message`. */
export function parseTopology(text: string, file = "topology.yaml"): Topology {
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { lineCounter, prettyErrors: true });
  if (doc.errors.length > 0) {
    throw new Error(
      doc.errors.map((e) => `${file}:${e.linePos?.[0]?.line ?? 0}:${e.linePos?.[0]?.col ?? 0}: ${e.message}`).join("\n"),
    );
  }
  const result = Topology.safeParse(doc.toJS());
  if (result.success) return result.data;
  const lines = result.error.issues.map((issue) => {
    // Point at the deepest node of the path that exists in the document.
    let path = issue.path as (string | number)[];
    let node = doc.getIn(path, true) as { range?: [number, number] } | undefined;
    while (!node?.range && path.length > 0) {
      path = path.slice(0, -1);
      node = doc.getIn(path, true) as { range?: [number, number] } | undefined;
    }
    const pos = lineCounter.linePos(node?.range?.[0] ?? 0);
    return `${file}:${pos.line}:${pos.col}: ${issue.path.join(".") || "(top)"}: ${issue.message}`;
  });
  throw new Error(lines.join("\n"));
}
