/** A seeded random organization for property checks: reproducible, no NAT, some unassigned WANs. */
import type { CompileDevice, CompileInput, DeviceTunnelInput } from "../../src/compile/index.ts";
import { device, id, ORG, PATH_LABELS, PL_INET, PL_MPLS } from "./fixtures.ts";

/** mulberry32: a tiny deterministic PRNG, so a failing seed can be replayed. */
function prng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export function randomFleet(seed: number, deviceCount: number, tunnelCount: number) {
  const rand = prng(seed);
  const pick = <T>(list: readonly T[]): T => list[Math.floor(rand() * list.length)] as T;
  const devices: CompileDevice[] = [];
  for (let n = 0; n < deviceCount; n++) {
    const base = 0x10000 + n * 16;
    const wans = rand() < 0.5 ? 1 : 2;
    const interfaces = [];
    for (let w = 0; w < wans; w++)
      interfaces.push({
        id: id(base + w),
        devId: `dev${n}-wan${w}`,
        name: `wan${w}`,
        type: "WAN" as const,
        isAssigned: rand() > 0.05,
        IPv4: `10.${100 + w}.${n}.2`,
        IPv4Mask: 24,
        gateway: `10.${100 + w}.${n}.1`,
        pathlabels: [pick([PL_MPLS, PL_INET])],
      });
    interfaces.push({
      id: id(base + 8),
      devId: `dev${n}-lan`,
      name: "lan0",
      type: "LAN" as const,
      isAssigned: true,
      IPv4: `172.16.${n}.1`,
      IPv4Mask: 24,
    });
    const nat = rand() < 0.3;
    devices.push(
      device({
        id: id(0x20000 + n),
        name: `edge-${n}`,
        interfaces,
        bgp:
          rand() < 0.5
            ? { enable: true, localASN: 64512 + n, neighbors: [{ ip: `10.100.${n}.1`, remoteASN: 65535, multiHop: 1 }] }
            : {},
        firewall: nat
          ? {
              rules: [
                { direction: "lanNat", interface: `dev${n}-lan`, source: `172.16.${n}.0/25`, translated: `10.60.${n}.0/25` },
              ],
            }
          : {},
      }),
    );
  }
  const tunnels: DeviceTunnelInput[] = [];
  const nums = new Set<number>();
  while (tunnels.length < tunnelCount) {
    const a = pick(devices);
    const b = pick(devices);
    if (a === b) continue;
    let num = Math.floor(rand() * 32512);
    while (nums.has(num)) num = (num + 1) % 32512;
    nums.add(num);
    tunnels.push({
      kind: "device",
      id: id(0x30000 + num),
      num,
      pathlabel: pick([null, PL_MPLS, PL_INET]),
      psk: `secret-${seed}-${num}`,
      a: { device: a, interfaceId: pick(a.interfaces.filter((i) => i.type === "WAN")).id },
      b: { device: b, interfaceId: pick(b.interfaces.filter((i) => i.type === "WAN")).id },
    });
  }
  const inputFor = (d: CompileDevice): CompileInput => ({
    device: d,
    organization: ORG,
    tunnels: tunnels.filter((t) => t.a.device.id === d.id || t.b.device.id === d.id),
    vrrpGroups: [],
    multiLinkPolicy: null,
    pathLabels: PATH_LABELS,
  });
  return { devices, tunnels, inputFor };
}
