/**
 * The agent's own probe module (apps/agent/src/probes: the TunnelProber that
 * fills the `tunnels` of every status report) in a worker inside a lab
 * namespace, so agent-measurement reads exactly the figures an agent would
 * report, over a link the lab impairs.
 *
 *   respond {addresses}                    answer Tern UDP probes on these local addresses (the far end)
 *   measure {source, target, intervalMs, probes}
 *                                          a fresh prober probes `target` from `source` for `probes`
 *                                          intervals (window = probes), then returns its report
 */
import { type ConfigTunnel, type DeviceConfig, emptyDeviceConfig } from "@tern/protocol";
import { PROBE_PORT, TunnelProber, UdpEchoResponder } from "../../../../apps/agent/src/probes/index.ts";
import { serve } from "./ipc.ts";

const TUNNEL_ID = "00000000-0000-4000-8000-000000000901";
let responder: UdpEchoResponder | null = null;

function probeConfig(source: string, target: string, intervalMs: number, probes: number): DeviceConfig {
  const tunnel: ConfigTunnel = {
    id: TUNNEL_ID,
    num: 1,
    kind: "device",
    localInterface: "eth0",
    localAddress: source,
    remoteAddress: target,
    localLoopback: source,
    remoteLoopback: target,
    ike: { proposal: "aes256-sha256-modp2048", lifetimeSeconds: 28800 },
    esp: { proposal: "aes256-sha256-modp2048", lifetimeSeconds: 3600, pfs: true },
    auth: { psk: "bench-only-not-used", localId: "a", remoteId: "b" },
    initiator: true,
    dpdSeconds: 10,
    localSubnets: [],
    remoteSubnets: [],
    probeTargets: [target],
    pathLabel: null,
  };
  return {
    ...emptyDeviceConfig("00000000-0000-4000-8000-000000000900"),
    tunnels: [tunnel],
    monitoring: { probeIntervalMs: intervalMs, windowSize: probes, downAfterMs: 15_000, statusIntervalMs: 5000 },
  };
}

serve(
  {
    respond(args) {
      responder ??= new UdpEchoResponder(PROBE_PORT);
      responder.setAddresses(args.addresses as string[]);
      return {};
    },
    async measure(args) {
      const intervalMs = Number(args.intervalMs);
      const probes = Number(args.probes);
      const prober = new TunnelProber();
      const t0 = performance.now();
      prober.configure(probeConfig(String(args.source), String(args.target), intervalMs, probes));
      // Every probe of the window sent, and the last one answered or timed out (timeout: max(interval, 1 s)).
      await new Promise((r) => setTimeout(r, probes * intervalMs + Math.max(intervalMs, 1000) + 200));
      const report = prober.report()[0]!;
      const detail = prober.targetDetails()[0];
      prober.stop();
      return { report, detail, elapsedMs: performance.now() - t0 };
    },
  },
  {},
);
