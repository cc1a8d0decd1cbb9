import { describe, expect, it } from "vitest";
import { parseTopology } from "../src/topology.ts";

const twoSites = `
name: two-sites
clouds:
  - name: inet
    impairment: { lossPercent: 5, delayMs: 30 }
edges:
  - name: site-a
    wan: [{ cloud: inet, address: 10.100.1.2/24, gateway: 10.100.1.1 }]
    lan: [{ address: 192.168.50.1/24 }]
  - name: site-b
    wan: [{ cloud: inet, address: 10.100.2.2/24, gateway: 10.100.2.1 }]
`;

describe("parseTopology", () => {
  it("parses a two-site topology with defaults", () => {
    const t = parseTopology(twoSites);
    expect(t.edges).toHaveLength(2);
    expect(t.clouds[0]?.impairment).toEqual({ lossPercent: 5, delayMs: 30, jitterMs: 0, rateMbit: null });
    expect(t.edges[0]?.lan[0]?.hosts).toBe(1);
  });
  it("points at the line of a bad value", () => {
    const bad = twoSites.replace("cloud: inet, address: 10.100.2.2/24", "cloud: nowhere, address: 10.100.2.2/24");
    expect(() => parseTopology(bad, "t.yaml")).toThrow(/^t\.yaml:11:\d+: edges\.1\.wan\.0\.cloud: unknown cloud 'nowhere'$/m);
  });
  it("reports YAML syntax errors with their line", () => {
    expect(() => parseTopology("name: [oops\n", "t.yaml")).toThrow(/^t\.yaml:\d+:\d+: /);
  });
});
