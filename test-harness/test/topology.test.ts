import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { LabError, LabErrorCode } from "../src/errors.ts";
import { parseTopology } from "../src/topology/index.ts";

const TOPOLOGIES = join(import.meta.dirname, "..", "topologies");

const twoSites = `name: two-sites
clouds:
  - name: inet
    impairment: { lossPercent: 5, delayMs: 30 }
edges:
  - name: site-a
    wan: [{ cloud: inet }]
    lan: [{ lan: lan-a }]
  - name: site-b
    wan: [{ cloud: inet }]
lans:
  - name: lan-a
    subnet: 192.168.50.0/24
`;

/** The problems of an invalid topology, as `line:col: path: message` without the file name. */
function problems(text: string): string[] {
  try {
    parseTopology(text, "t.yaml");
  } catch (err) {
    expect(err).toBeInstanceOf(LabError);
    expect((err as LabError).code).toBe(LabErrorCode.TOPOLOGY_INVALID);
    return (err as LabError).details.map((d) => d.replace(/^t\.yaml:/, ""));
  }
  throw new Error("expected the topology to be rejected");
}

describe("parseTopology", () => {
  it("parses a two-site topology and fills in defaults", () => {
    const t = parseTopology(twoSites);
    expect(t.edges).toHaveLength(2);
    expect(t.clouds[0]?.impairment).toEqual({ lossPercent: 5, delayMs: 30, jitterMs: 0, rateMbit: null });
    expect(t.lans[0]?.hosts).toBe(1);
    expect(t.edges[0]?.wan[0]?.defaultRoute).toBe(true);
    expect(t.peers).toEqual([]);
    expect(t.control).toEqual({});
  });

  it.each(readdirSync(TOPOLOGIES).filter((f) => f.endsWith(".yaml")))("accepts the example %s", (file) => {
    const t = parseTopology(readFileSync(join(TOPOLOGIES, file), "utf8"), file);
    expect(t.name).toBe(file.replace(/\.yaml$/, ""));
  });

  it("points at the line of an unknown cloud", () => {
    const bad = twoSites.replace(
      "  - name: site-b\n    wan: [{ cloud: inet }]",
      "  - name: site-b\n    wan: [{ cloud: nowhere }]",
    );
    expect(problems(bad)).toEqual([expect.stringMatching(/^10:\d+: edges\.1\.wan\.0\.cloud: unknown cloud 'nowhere'$/)]);
  });

  it("points at the line of a schema error (bad CIDR, out-of-range loss)", () => {
    const bad = twoSites.replace("192.168.50.0/24", "192.168.50.0/33").replace("lossPercent: 5", "lossPercent: 150");
    const p = problems(bad);
    expect(p).toContainEqual(expect.stringMatching(/^4:\d+: clouds\.0\.impairment\.lossPercent: /));
    expect(p).toContainEqual(expect.stringMatching(/^13:\d+: lans\.0\.subnet: must be an IPv4 network/));
  });

  it("rejects unknown keys (typos) at their line", () => {
    const bad = twoSites.replace("impairment: { lossPercent: 5, delayMs: 30 }", "impairment: { los: 5 }");
    expect(problems(bad)).toEqual([expect.stringMatching(/^4:\d+: clouds\.0\.impairment: .*los/)]);
  });

  it("rejects jitter larger than the delay", () => {
    const bad = twoSites.replace("delayMs: 30", "delayMs: 3, jitterMs: 5");
    expect(problems(bad)).toEqual([
      expect.stringMatching(/^4:\d+: clouds\.0\.impairment\.jitterMs: jitterMs must not exceed delayMs/),
    ]);
  });

  it("reports names used twice, including a LAN host's generated name", () => {
    const bad = `${twoSites}  - name: site-a\n    subnet: 10.0.0.0/24\n    hosts: 0\n`.replace("name: site-b", "name: lan-a-h1");
    expect(problems(bad)).toEqual([
      expect.stringMatching(/^14:\d+: lans\.1\.name: name 'site-a' is already used by edges\.0\.name$/),
      expect.stringMatching(/^12:\d+: lans\.0\.hosts: name 'lan-a-h1' is already used by edges\.1\.name$/),
    ]);
  });

  it("reports address-plan problems with the line of the attachment", () => {
    const bad = twoSites
      .replace(
        "  - name: site-a\n    wan: [{ cloud: inet }]",
        "  - name: site-a\n    wan: [{ cloud: inet, address: 100.64.9.2/24 }]",
      )
      .replace(
        "  - name: site-b\n    wan: [{ cloud: inet }]",
        "  - name: site-b\n    wan: [{ cloud: inet, address: 100.64.9.7/25 }]",
      );
    expect(problems(bad)).toEqual([
      expect.stringMatching(/^10:\d+: edges\.1\.wan\.0\.address: subnet 100\.64\.9\.0\/25 overlaps 100\.64\.9\.0\/24/),
    ]);
  });

  it("reports YAML syntax errors and duplicate keys with their line", () => {
    expect(problems("name: [oops\n")).toEqual([expect.stringMatching(/^\d+:\d+: \(top\): /)]);
    expect(problems("name: a1\nname: a2\n")).toEqual([expect.stringMatching(/^2:1: \(top\): .*[Uu]nique/)]);
  });

  it("names a peer's unresolvable remote", () => {
    const bad = `${twoSites}peers:
  - name: gw
    kind: strongswan
    wan: [{ cloud: inet }]
    strongswan: { remote: site-z }
`;
    expect(problems(bad)).toEqual([expect.stringMatching(/^18:\d+: peers\.0\.strongswan\.remote: unknown node 'site-z'$/)]);
  });
});
