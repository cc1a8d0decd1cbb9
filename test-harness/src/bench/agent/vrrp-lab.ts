/**
 * A VRRP pair for agent-failover: two routers and a LAN host on one bridge
 * (in a namespace of its own), each router configured by the real agent
 * (`tern-agent apply`, standalone mode: keepalived keeps running after the
 * one-shot apply, as daemons outlive the agent).
 *
 *   r1 ─ lan0 ┐
 *   r2 ─ lan0 ┼ br0 (lan) ── eth0 host
 */
import { chmod, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import { join } from "node:path";
import { type Netns, NetnsScope, run } from "@tern/netlab";
import { DeviceConfig, emptyDeviceConfig } from "@tern/protocol";
import { agentCommand } from "./agent.ts";
import type { LabRouter } from "./lab.ts";

export const VIP = "192.168.70.1";
export const HOST_ADDRESS = "192.168.70.10";

export interface VrrpLab {
  r1: LabRouter;
  r2: LabRouter;
  host: Netns;
  cleanup(): Promise<void>;
}

export async function buildVrrpLab(): Promise<VrrpLab> {
  const root = await mkdtemp(join(os.tmpdir(), "tern-bench-vrrp-"));
  await chmod(root, 0o755);
  const scope = new NetnsScope("bvrrp");
  try {
    const lan = await scope.netns("lan");
    await lan.exec(["ip", "link", "add", "br0", "type", "bridge"]);
    await lan.up("br0");
    const routers: LabRouter[] = [];
    for (const [i, name] of ["r1", "r2"].entries()) {
      const ns = await scope.netns(name);
      await scope.veth(ns, "lan0", lan, `p${i + 1}`);
      await lan.exec(["ip", "link", "set", `p${i + 1}`, "master", "br0"]);
      const mac = `02:00:00:07:00:0${i + 1}`;
      await ns.exec(["ip", "link", "set", "dev", "lan0", "address", mac]);
      routers.push({ label: i === 0 ? "a" : "b", ns, stateDir: join(root, name), macs: { lan0: mac } });
    }
    const host = await scope.netns("host");
    await scope.veth(host, "eth0", lan, "ph");
    await lan.exec(["ip", "link", "set", "ph", "master", "br0"]);
    await host.addAddress("eth0", `${HOST_ADDRESS}/24`);
    return {
      r1: routers[0]!,
      r2: routers[1]!,
      host,
      async cleanup() {
        await scope.cleanup();
        await rm(root, { recursive: true, force: true });
      },
    };
  } catch (err) {
    await scope.cleanup();
    await rm(root, { recursive: true, force: true });
    throw err;
  }
}

/** A router's config: its LAN address and one VRRP group on it (fast adverts, preemption). */
export function vrrpConfig(r: LabRouter, index: number, priority: number, advertIntervalMs: number): DeviceConfig {
  return DeviceConfig.parse({
    ...emptyDeviceConfig(`00000000-0000-4000-8000-00000000700${index}`),
    interfaces: [
      {
        devId: `mac:${r.macs.lan0}`,
        name: "lan0",
        type: "LAN",
        dhcp: false,
        address: `192.168.70.${index + 1}/24`,
        gateway: null,
        metric: 0,
        mtu: 1500,
        pathLabels: [],
      },
    ],
    vrrp: [
      {
        groupId: "00000000-0000-4000-8000-000000007801",
        virtualRouterId: 61,
        interface: "lan0",
        virtualIp: VIP,
        prefix: 24,
        priority,
        preemption: true,
        acceptMode: true,
        advertIntervalMs,
        trackOptional: [],
        trackMandatory: [],
      },
    ],
  });
}

export async function applyWithAgent(r: LabRouter, config: DeviceConfig): Promise<void> {
  const file = join(r.stateDir, "..", `${r.ns.name}-config.json`);
  await writeFile(file, JSON.stringify(config));
  await agentCommand(r, ["apply", file]);
}

export async function holdsVip(r: LabRouter): Promise<boolean> {
  return (await run(["ip", "-n", r.ns.name, "-4", "-o", "addr", "show", "dev", "lan0"])).stdout.includes(` ${VIP}/`);
}

/** Epoch seconds of keepalived's state changes to `state` (from the notify script the agent renders). */
export async function transitions(r: LabRouter, state: string): Promise<number[]> {
  const log = await readFile(join(r.stateDir, "run", "vrrp", "transitions.log"), "utf8").catch(() => "");
  return log
    .split("\n")
    .map((l) => l.trim().split(/\s+/))
    .filter((f) => f[2] === state)
    .map((f) => Number(f[0]));
}
