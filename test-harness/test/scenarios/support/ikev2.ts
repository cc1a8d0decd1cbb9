/**
 * Tunnels through the API, and a look at the IKE SAs the agents' strongSwan
 * (charon, one per router, VICI socket under the agent's run directory) holds.
 */
import { join } from "node:path";
import { Tunnel } from "@tern/protocol";
import { z } from "zod";
import { agentStateDir } from "../../../src/lab/control/index.ts";
import { getTunnel, jobsComplete, type ScenarioLab, waitFor } from "./scenario-lab.ts";

const TunnelsCreated = z.object({ jobIds: z.array(z.string()), tunnels: z.array(z.object({ id: z.string() })) });

/**
 * The tunnel between two edges' WAN interfaces (created through the API if
 * missing, and waited for until both ends applied it).
 */
export async function ensureTunnel(
  s: ScenarioLab,
  a: string,
  b: string,
  opts: { ifA?: string; ifB?: string; pathlabel?: string } = {},
): Promise<Tunnel> {
  const ifA = await s.iface(a, opts.ifA ?? "wan0");
  const ifB = await s.iface(b, opts.ifB ?? "wan0");
  const existing = (await s.api.get("/api/tunnels", z.array(Tunnel))).find(
    (t) => t.interfaceA.id === ifA.id && t.interfaceB?.id === ifB.id,
  );
  if (existing) return existing;
  const r = await s.api.call("POST", "/api/tunnels", TunnelsCreated, {
    body: {
      deviceA: s.deviceId(a),
      interfaceA: ifA.id,
      deviceB: s.deviceId(b),
      interfaceB: ifB.id,
      ...(opts.pathlabel ? { pathlabel: opts.pathlabel } : {}),
    },
  });
  if (r.status !== 202) throw new Error(`POST /api/tunnels answered ${r.status}, expected 202 with jobs`);
  await jobsComplete(s.api, r.data.jobIds);
  return getTunnel(s.api, r.data.tunnels[0]!.id);
}

/** The agent's charon VICI socket on `edge`. */
export function viciUri(s: ScenarioLab, edge: string): string {
  return `unix://${join(agentStateDir(s.lab.dir, edge), "run", "ikev2", "charon.vici")}`;
}

/** `swanctl --list-sas` on an edge (strongSwan's plugin warnings on stderr are left out). */
export async function ikeSas(s: ScenarioLab, edge: string): Promise<string> {
  return (await s.sh(edge, ["swanctl", "--list-sas", "--uri", viciUri(s, edge)])).stdout;
}

/** `swanctl --list-conns` on an edge. */
export async function ikeConns(s: ScenarioLab, edge: string): Promise<string> {
  return (await s.sh(edge, ["swanctl", "--list-conns", "--uri", viciUri(s, edge)])).stdout;
}

/**
 * Rekeys the first CHILD_SA of `edge` and returns `--list-sas` once the new
 * one is installed. In IKEv2 the first CHILD_SA is made without a DH
 * exchange; a rekeyed one shows its DH group exactly when PFS is on.
 */
export async function rekeyChild(s: ScenarioLab, edge: string): Promise<string> {
  const before = await ikeSas(s, edge);
  const child = /^ {2}(\S+): #(\d+),/m.exec(before);
  if (!child) throw new Error(`no CHILD_SA on ${edge}:\n${before}`);
  const r = await s.sh(edge, ["swanctl", "--rekey", "--child", child[1]!, "--uri", viciUri(s, edge)]);
  if (r.exitCode !== 0) throw new Error(`swanctl --rekey on ${edge}: ${r.stderr.slice(-500)}`);
  let after = "";
  await waitFor(20_000, async () => {
    after = await ikeSas(s, edge);
    const ids = [...after.matchAll(/^ {2}\S+: #(\d+),.*INSTALLED/gm)].map((m) => Number(m[1]));
    return ids.some((id) => id > Number(child[2])) ? true : `CHILD_SA #${child[2]} not rekeyed yet:\n${after}`;
  });
  return after;
}
