import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { parseListConns, parseListSas, tunnelSaStates } from "../../src/drivers/ikev2/sas.ts";
import { parseViciPretty } from "../../src/drivers/ikev2/vici-pretty.ts";
import { fullConfig } from "../support/configs.ts";

const listSas = readFileSync(new URL("fixtures/list-sas.txt", import.meta.url), "utf8");

describe("swanctl --pretty parsing", () => {
  it("reads nested sections, lists and values with spaces", () => {
    const msgs = parseViciPretty(
      "list-conn event {\n  a {\n    class = pre-shared key\n    groups = [\n    ]\n    ts = [\n      1.2.3.4/32\n    ]\n  }\n}\n",
    );
    expect(msgs).toEqual([{ name: "list-conn event", body: { a: { class: "pre-shared key", groups: [], ts: ["1.2.3.4/32"] } } }]);
  });

  it("turns list-sas output into per-connection IKE and CHILD SA state", () => {
    const byConn = parseListSas(listSas);
    const device = byConn.get("tern-device-1")?.[0];
    expect(device).toMatchObject({
      state: "ESTABLISHED",
      localHost: "10.100.1.2",
      initiator: true,
      dhGroup: "MODP_2048",
      rekeyIn: 2,
    });
    expect(device?.children.map((c) => [c.state, c.dhGroup, c.rekeyIn, c.lifeIn])).toEqual([
      ["DELETED", "MODP_2048", -2, 1],
      ["INSTALLED", "MODP_2048", 4, 7],
    ]);
    expect(device?.children[1]).toMatchObject({ localTs: ["10.100.0.4/32", "10.50.0.0/24"], bytesIn: 840 });
    expect(byConn.get("tern-peer-2")?.[0]).toMatchObject({ state: "CONNECTING", children: [] });
  });

  it("maps SA state to the configured tunnels by connection name", () => {
    const tunnels = fullConfig().tunnels;
    const states = tunnelSaStates(tunnels, listSas);
    expect(states.map((s) => [s.id, s.conn, s.up])).toEqual([
      [tunnels[0]?.id, "tern-device-1", true],
      [tunnels[1]?.id, "tern-peer-2", false],
    ]);
    expect(tunnelSaStates(tunnels, "").every((s) => !s.up && s.ikeSas.length === 0)).toBe(true);
  });

  it("lists loaded connection names", () => {
    const text =
      "list-conn event {\n  tern-device-1 {\n    version = IKEv2\n  }\n}\nlist-conn event {\n  other {\n  }\n}\nlist-conns reply {\n}\n";
    expect(parseListConns(text)).toEqual(["tern-device-1", "other"]);
  });
});
