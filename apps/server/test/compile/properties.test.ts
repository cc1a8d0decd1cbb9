/** Properties every compiled config must have, over the golden cases and a seeded random fleet. */
import { canonicalJson, configHash, type DeviceConfig, DeviceConfig as DeviceConfigSchema } from "@tern/protocol";
import { describe, expect, it } from "vitest";
import { type CompileInput, compileDeviceConfig } from "../../src/compile/index.ts";
import { CASES } from "./cases.ts";
import { sampleOrg } from "./fixtures.ts";
import { randomFleet } from "./random-fleet.ts";

/** Rebuilds every object with its keys in reverse order (arrays keep their order). */
function reverseKeys<T>(value: T): T {
  if (Array.isArray(value)) return value.map(reverseKeys) as T;
  if (value && typeof value === "object")
    return Object.fromEntries(
      Object.entries(value)
        .reverse()
        .map(([k, v]) => [k, reverseKeys(v)]),
    ) as T;
  return value;
}

function deepFreeze<T>(value: T): T {
  if (value && typeof value === "object") {
    for (const v of Object.values(value)) deepFreeze(v);
    Object.freeze(value);
  }
  return value;
}

const reversed = <T>(list: readonly T[]) => [...list].reverse();

/** Reverses every array whose order carries no meaning (firewall rules keep theirs: equal priorities are ordered). */
function reverseSets(input: CompileInput): CompileInput {
  const d = input.device;
  return {
    ...input,
    device: {
      ...d,
      interfaces: reversed(d.interfaces).map((i) => ({ ...i, pathlabels: reversed(i.pathlabels) })),
      staticRoutes: reversed(d.staticRoutes),
      dhcp: reversed(d.dhcp).map((s) => ({ ...s, macAssign: reversed(s.macAssign), options: reversed(s.options) })),
      bgp: { ...d.bgp, neighbors: reversed(d.bgp.neighbors) },
    },
    tunnels: reversed(input.tunnels).map((t) =>
      t.kind === "peer"
        ? {
            ...t,
            peer: {
              ...t.peer,
              ips: reversed(t.peer.ips),
              localTrafficSelectors: reversed(t.peer.localTrafficSelectors),
              remoteTrafficSelectors: reversed(t.peer.remoteTrafficSelectors),
            },
          }
        : t,
    ),
    vrrpGroups: reversed(input.vrrpGroups).map((g) => ({
      ...g,
      devices: reversed(g.devices).map((m) => ({
        ...m,
        trackInterfacesOptional: reversed(m.trackInterfacesOptional),
        trackInterfacesMandatory: reversed(m.trackInterfacesMandatory),
      })),
    })),
    pathLabels: reversed(input.pathLabels),
  };
}

describe("every golden case", () => {
  for (const [name, build] of Object.entries(CASES)) {
    describe(name, () => {
      it("parses with the protocol schema unchanged", () => {
        const { config } = compileDeviceConfig(build());
        expect(DeviceConfigSchema.parse(config)).toEqual(config);
      });
      it("hashes the same whatever the key order of the input", () => {
        const input = build();
        expect(compileDeviceConfig(reverseKeys(input)).hash).toBe(compileDeviceConfig(input).hash);
      });
      it("hashes the same whatever the order of unordered lists", () => {
        const input = build();
        const a = compileDeviceConfig(input);
        const b = compileDeviceConfig(reverseSets(input));
        expect(canonicalJson(b.config)).toBe(canonicalJson(a.config));
        expect(b.hash).toBe(a.hash);
      });
      it("does not modify its input and returns configHash(config)", () => {
        const input = deepFreeze(build());
        const before = canonicalJson(input);
        const { config, hash } = compileDeviceConfig(input);
        expect(canonicalJson(input)).toBe(before);
        expect(hash).toBe(configHash(config));
      });
    });
  }
});

/** Asserts that two compiled ends of one device tunnel mirror each other. */
function expectMirror(a: DeviceConfig["tunnels"][number], b: DeviceConfig["tunnels"][number]) {
  expect(a.id).toBe(b.id);
  expect(a.num).toBe(b.num);
  expect(a.localLoopback).toBe(b.remoteLoopback);
  expect(a.remoteLoopback).toBe(b.localLoopback);
  expect(a.localSubnets).toEqual(b.remoteSubnets);
  expect(a.remoteSubnets).toEqual(b.localSubnets);
  expect(a.auth.localId).toBe(b.auth.remoteId);
  expect(a.auth.remoteId).toBe(b.auth.localId);
  expect(a.auth.psk).toBe(b.auth.psk);
  expect(a.ike).toEqual(b.ike);
  expect(a.esp).toEqual(b.esp);
  expect(a.initiator).not.toBe(b.initiator);
  expect(a.probeTargets).toEqual([a.remoteLoopback]);
  expect(b.probeTargets).toEqual([b.remoteLoopback]);
}

describe("both ends of a device tunnel mirror each other", () => {
  it("in the sample organization, with and without NAT", () => {
    const org = sampleOrg();
    const [ca, cb, cc] = [org.a, org.b, org.c].map((d) => compileDeviceConfig(org.inputFor(d)).config) as [
      DeviceConfig,
      DeviceConfig,
      DeviceConfig,
    ];
    const t1a = ca.tunnels.find((t) => t.num === 1)!;
    const t1b = cb.tunnels.find((t) => t.num === 1)!;
    expectMirror(t1a, t1b);
    expect(t1a.initiator).toBe(true);
    // edge-a's wan0 is behind NAT (the server saw 203.0.113.10): edge-b dials the public address.
    expect(t1b.remoteAddress).toBe("203.0.113.10");
    expect(t1a.remoteAddress).toBe(t1b.localAddress);
    const t130b = cb.tunnels.find((t) => t.num === 130)!;
    const t130c = cc.tunnels.find((t) => t.num === 130)!;
    expectMirror(t130b, t130c);
    expect(t130b.localAddress).toBe(t130c.remoteAddress);
    expect(t130c.localAddress).toBe(t130b.remoteAddress);
  });

  it("over a seeded random fleet of 40 devices and 120 tunnels", () => {
    for (const seed of [1, 2, 3]) {
      const fleet = randomFleet(seed, 40, 120);
      const configs = new Map(fleet.devices.map((d) => [d.id, compileDeviceConfig(fleet.inputFor(d))]));
      let checked = 0;
      for (const t of fleet.tunnels) {
        const ea = configs.get(t.a.device.id)!.config.tunnels.find((x) => x.id === t.id);
        const eb = configs.get(t.b.device.id)!.config.tunnels.find((x) => x.id === t.id);
        const assigned = [t.a, t.b].every((end) => end.device.interfaces.find((i) => i.id === end.interfaceId)?.isAssigned);
        expect(ea !== undefined).toBe(assigned);
        expect(eb !== undefined).toBe(assigned);
        if (!ea || !eb) continue;
        expectMirror(ea, eb);
        // No NAT in the random fleet: each end dials the other's own address.
        expect(ea.localAddress).toBe(eb.remoteAddress);
        expect(eb.localAddress).toBe(ea.remoteAddress);
        checked++;
      }
      expect(checked).toBeGreaterThan(80);
      for (const { config } of configs.values()) {
        DeviceConfigSchema.parse(config);
        // Every loopback of the device is announced when BGP runs with redistribution.
        if (config.bgp) for (const t of config.tunnels) expect(config.bgp.networks).toContain(`${t.localLoopback}/32`);
      }
    }
  });
});

describe("the hash follows the desired state", () => {
  it("changes with a tunnel secret and not with an unassigned interface", () => {
    const org = sampleOrg();
    const base = compileDeviceConfig(org.inputFor(org.a)).hash;
    const input = org.inputFor(org.a);
    const secret = {
      ...input,
      tunnels: input.tunnels.map((t) => (t.kind === "device" ? { ...t, psk: "rotated-secret-0001" } : t)),
    };
    expect(compileDeviceConfig(secret).hash).not.toBe(base);
    const renamedSpare = {
      ...input,
      device: {
        ...input.device,
        interfaces: input.device.interfaces.map((i) => (i.isAssigned ? i : { ...i, name: "spare9", mtu: 9000 })),
      },
    };
    expect(compileDeviceConfig(renamedSpare).hash).toBe(base);
  });
});
