/**
 * The benchmark fleet, derived from the device index alone, so the seeder,
 * the simulator and the raw device clients agree on ids, tokens and tunnels
 * without shipping lists between processes. Ids are valid v4 UUIDs with the
 * index in the last group; tokens carry a per-run secret.
 *
 * Tunnels: device i is side a of tunnel 2i (to i+1) and 2i+1 (to i+2), and
 * side b of 2(i-1) and 2(i-2)+1 (indices mod N): every device is an end of
 * 4 tunnels and the fleet has 2N tunnels (10,000 devices: 20,000 tunnels).
 */
import { type SimKey, simDeviceKey } from "../../simulator/device-key.ts";
import { machineId } from "../../simulator/identity.ts";

export const FLEET_PREFIX = "tern-bench";
export const TUNNELS_PER_DEVICE = 4;

function uuid(head: string, n: number): string {
  return `${head}-0000-4000-8000-${n.toString(16).padStart(12, "0")}`;
}

export const deviceId = (index: number) => uuid("d0000000", index);
export const interfaceId = (index: number, port: 0 | 1) => uuid("1f000000", index * 2 + port);
export const tunnelId = (num: number) => uuid("7e000000", num);
export const deviceToken = (secret: string, index: number) => `tern_dev_bench_${secret}_${index}`;
export const benchMachineId = (index: number) => machineId(FLEET_PREFIX, index);
/** The simulator's identity seed for the benchmark fleet: device keys carry the per-run secret too. */
export const benchIdentitySeed = (secret: string) => `bench:${secret}`;
/** Device `index`'s Ed25519 key (the seeder stores its public half, the devices sign with it). */
export const benchKey = (secret: string, index: number): SimKey => simDeviceKey(benchIdentitySeed(secret), index);

/** Tunnel `num` joins these device indices (a, b). */
export function tunnelEnds(num: number, devices: number): [number, number] {
  const a = Math.floor(num / 2);
  return [a, (a + 1 + (num % 2)) % devices];
}

/** The tunnel ids device `index` reports (its 4 ends). */
export function tunnelIdsOf(index: number, devices: number): string[] {
  const prev = (index - 1 + devices) % devices;
  const prev2 = (index - 2 + devices) % devices;
  return [2 * index, 2 * index + 1, 2 * prev, 2 * prev2 + 1].map(tunnelId);
}
