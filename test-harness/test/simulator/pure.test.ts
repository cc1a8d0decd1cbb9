/** The simulator's pure parts: identities, metrics scripts, apply results, status shape, options. */
import { createPublicKey, verify } from "node:crypto";
import { configHash, DeviceMessage, emptyDeviceConfig, RegisterRequest } from "@tern/protocol";
import { describe, expect, it } from "vitest";
import { simulateApply } from "../../src/simulator/apply.ts";
import { signText, simDeviceKey } from "../../src/simulator/device-key.ts";
import { interfaceStates, machineId, registerInterfaces } from "../../src/simulator/identity.ts";
import { resolveMetrics } from "../../src/simulator/metrics.ts";
import { resolveOptions } from "../../src/simulator/options.ts";
import { registerRequest } from "../../src/simulator/register.ts";
import { buildStatus, tunnelReports } from "../../src/simulator/status.ts";
import { fullConfig } from "./helpers.ts";

describe("identity", () => {
  it("gives 10,000 devices distinct machine ids, MACs and public addresses that the protocol accepts", () => {
    const ids = new Set<string>();
    const macs = new Set<string>();
    const publics = new Set<string>();
    const key = simDeviceKey("seed", 0);
    for (let i = 0; i < 10_000; i++) {
      const req = registerRequest("t", "tern-sim", i, "0.1.0", key);
      if (i % 997 === 0) expect(() => RegisterRequest.parse(req)).not.toThrow();
      ids.add(req.machineId);
      macs.add(req.interfaces[0]!.mac);
      publics.add(interfaceStates(i, 0, undefined)[0]!.publicIp);
    }
    expect([ids.size, macs.size, publics.size]).toEqual([10_000, 10_000, 10_000]);
    expect(machineId("p", 7)).toBe("p-000007");
    expect(registerInterfaces(3).map((i) => i.name)).toEqual(["eth0", "eth1"]);
  });
});

describe("device keys", () => {
  it("derived again with the public key kept (the fast import), is the same key: same public key, same signature", () => {
    for (const index of [0, 1, 9_999]) {
      const first = simDeviceKey("seed", index);
      const again = simDeviceKey("seed", index, first.publicKey);
      expect(again.publicKey).toBe(first.publicKey);
      expect((createPublicKey(again.privateKey).export({ format: "jwk" }) as { x: string }).x).toBe(first.publicKey);
      // Ed25519 signs deterministically: the same key signs the same text alike.
      expect(signText(again.privateKey, `challenge ${index}`)).toBe(signText(first.privateKey, `challenge ${index}`));
      expect(
        verify(
          null,
          Buffer.from("t"),
          createPublicKey(first.privateKey),
          Buffer.from(signText(again.privateKey, "t"), "base64url"),
        ),
      ).toBe(true);
    }
    expect(simDeviceKey("seed", 0).publicKey).not.toBe(simDeviceKey("seed", 1).publicKey);
  });
});

describe("metrics", () => {
  const script = {
    steps: [
      { atMs: 0, metrics: { rtt: 10 } },
      { atMs: 100, metrics: { rtt: 50, loss: 2 } },
      { atMs: 200, metrics: { up: false } },
    ],
  };

  it("holds each script step until the next", () => {
    expect(resolveMetrics(script, "t", 0)).toEqual({ up: true, loss: 0, rtt: 10, jitter: 1 });
    expect(resolveMetrics(script, "t", 150)).toEqual({ up: true, loss: 2, rtt: 50, jitter: 1 });
    expect(resolveMetrics(script, "t", 5000)).toEqual({ up: false, loss: 100, rtt: 0, jitter: 0 });
  });

  it("loops a script after the last step held for loopMs", () => {
    const looped = { ...script, loopMs: 100 };
    expect(resolveMetrics(looped, "t", 300).rtt).toBe(10);
    expect(resolveMetrics(looped, "t", 450).rtt).toBe(50);
  });

  it("takes a function of tunnel and time", () => {
    const fn = (id: string, ms: number) => ({ rtt: id === "a" ? ms : 1 });
    expect(resolveMetrics(fn, "a", 42).rtt).toBe(42);
    expect(resolveMetrics(fn, "b", 42).rtt).toBe(1);
  });

  it("prefers a tunnel's own figures over the device's over the fleet's", () => {
    const reports = tunnelReports(
      ["a", "b", "c"],
      {
        fleet: { rtt: 1 },
        fleetSince: 0,
        device: { rtt: 2 },
        deviceSince: 0,
        perTunnel: new Map([["b", { input: { rtt: 3 }, since: 0 }]]),
      },
      10,
    );
    expect(reports.map((r) => r.rtt)).toEqual([2, 3, 2]);
  });
});

describe("apply", () => {
  it("reports the protocol's configHash and marks drivers changed only when the hash changes", () => {
    const config = fullConfig("00000000-0000-4000-8000-000000000001");
    const first = simulateApply("a1", config, null, null);
    expect(first).toMatchObject({ ok: true, appliedHash: configHash(config), rolledBack: false });
    expect(first.drivers.every((d) => d.changed)).toBe(true);
    const again = simulateApply("a2", config, configHash(config), null);
    expect(again.drivers.some((d) => d.changed)).toBe(false);
    expect(DeviceMessage.parse(first)).toEqual(first);
  });

  it("rolls back on the failing driver and reports the previous hash", () => {
    const result = simulateApply("a1", emptyDeviceConfig("d"), "prev", "qos");
    expect(result).toMatchObject({ ok: false, rolledBack: true, appliedHash: "prev", error: "qos failed" });
    expect(result.drivers.at(-1)).toMatchObject({ driver: "qos", ok: false });
    expect(result.drivers).toHaveLength(8);
  });
});

describe("status", () => {
  it("builds a status message the protocol accepts, with 4 tunnels", () => {
    const tunnels = tunnelReports(
      ["a", "b", "c", "d"],
      { fleet: { loss: 1.234 }, fleetSince: 0, device: undefined, deviceSince: 0, perTunnel: undefined },
      0,
    );
    const status = buildStatus({
      appliedHash: null,
      applying: false,
      tunnels,
      interfaces: interfaceStates(5, 12_345, undefined),
      bgp: null,
      vrrp: [],
      uptimeSeconds: 12,
    });
    expect(DeviceMessage.parse(status)).toMatchObject({ type: "status", tunnels: [{ id: "a", loss: 1.23 }, {}, {}, {}] });
  });
});

describe("options", () => {
  it("fills defaults and explains bad values with the option's name", () => {
    expect(resolveOptions({ server: "http://127.0.0.1:1", token: "t", count: 2 })).toMatchObject({
      concurrency: 100,
      reconnect: true,
      apply: { delayMs: 0 },
    });
    expect(() => resolveOptions({ server: "ftp://x", token: "t", count: 1 })).toThrow(/option server: must be an http/);
    expect(() => resolveOptions({ server: "http://x", token: "t", count: 0 })).toThrow(/option count/);
    expect(() => resolveOptions({ server: "http://x", token: "", count: 1 })).toThrow(/registration token is required/);
  });
});
