/** docs/lab.md's picture of the two-sites lab is what `npm run lab -- draw` makes of its topology file. */
import { readFileSync } from "node:fs";
import { fromMarkdown } from "mdast-util-from-markdown";
import { describe, expect, it } from "vitest";
import { planLab } from "../src/plan/address-plan.ts";
import { drawPlan } from "../src/plan/mermaid.ts";
import { parseTopology } from "../src/topology/index.ts";

const root = new URL("../../", import.meta.url);
const drawn = (file: string) => {
  const { plan } = planLab(parseTopology(readFileSync(new URL(file, root), "utf8"), file));
  if (!plan) throw new Error(`${file} does not plan`);
  return drawPlan(plan);
};

describe("lab drawings", () => {
  it("docs/lab.md shows the two-sites topology exactly as drawn from its file", () => {
    const tree = fromMarkdown(readFileSync(new URL("docs/lab.md", root), "utf8"));
    const mermaid = tree.children.filter((n) => n.type === "code" && n.lang === "mermaid");
    expect(mermaid.map((n) => `${(n as { value: string }).value}\n`)).toContain(drawn("test-harness/topologies/two-sites.yaml"));
  });

  it("draws every node, and every link with its interface and address", () => {
    const text = drawn("test-harness/topologies/two-sites.yaml");
    expect(text).toContain("n_inet((inet cloud<br/>10 ± 1 ms toward each node))");
    expect(text).toContain('n_site_a -- "wan0 100.64.1.2/24" --- n_inet');
    expect(text).toContain('n_site_b -- "lan0 192.168.20.1/24" --- n_lan_b');
    expect(text).toContain("n_lan_b_pc[lan-b-pc<br/>DHCP client]");
    expect(text.split("\n").filter((l) => l.includes(" --- ")).length).toBe(7);
  });
});
