/** Plausible answers to the server's on-demand reads (`request` → `response`). */

import type { BgpState, InterfaceState } from "@tern/protocol";
import { REQUESTS, type Request, type Response, type TunnelReport } from "@tern/protocol";
import type { SimBgp } from "./status.ts";

/** What a device exposes to request handlers. */
export interface RequestSubject {
  interfaces(): InterfaceState[];
  tunnels(): TunnelReport[];
  bgp(): SimBgp | null;
}

export function bgpState(bgp: SimBgp | null, uptimeSeconds: number): BgpState {
  if (bgp === null) return { running: false, routerId: "", localASN: null, neighbors: [] };
  return {
    running: true,
    routerId: bgp.routerId,
    localASN: bgp.asn,
    neighbors: bgp.neighbors.map(([ip, remoteASN]) => ({
      ip,
      remoteASN,
      state: "Established",
      uptimeSeconds,
      prefixesReceived: 2,
      prefixesSent: 2,
    })),
  };
}

function fail(id: string, error: string): Response {
  return { type: "response", id, ok: false, error };
}

/** Answers one request; bad params get `ok: false` with the reason, like the agent. */
export function answerRequest(req: Request, subject: RequestSubject, uptimeSeconds: number): Response {
  const spec = REQUESTS[req.method];
  const parsed = spec.params.safeParse(req.params);
  if (!parsed.success) return fail(req.id, `bad params for ${req.method}: ${parsed.error.issues[0]?.message ?? "invalid"}`);
  switch (req.method) {
    case "interface-status": {
      const { devId } = parsed.data as { devId: string };
      const found = subject.interfaces().find((i) => i.devId === devId);
      return found ? { type: "response", id: req.id, ok: true, result: found } : fail(req.id, `no interface with devId ${devId}`);
    }
    case "bgp-status":
      return { type: "response", id: req.id, ok: true, result: bgpState(subject.bgp(), uptimeSeconds) };
    case "tunnel-quality":
      return { type: "response", id: req.id, ok: true, result: subject.tunnels() };
    case "ping": {
      const { target, count } = parsed.data as { target: string; count: number };
      const tunnels = subject.tunnels();
      // The figures of the first tunnel stand for the path; with no tunnel the target answers at 1 ms.
      const t = tunnels[0];
      const loss = t ? t.loss : 0;
      const received = t && !t.up ? 0 : Math.round(count * (1 - loss / 100));
      const rtt = received > 0 ? (t ? t.rtt : 1) : null;
      const output = `PING ${target}: ${count} packets transmitted, ${received} received, ${((1 - received / count) * 100).toFixed(0)}% packet loss`;
      return {
        type: "response",
        id: req.id,
        ok: true,
        result: { transmitted: count, received, lossPercent: ((count - received) / count) * 100, rttAvgMs: rtt, output },
      };
    }
    case "traceroute": {
      const { target } = parsed.data as { target: string };
      return { type: "response", id: req.id, ok: true, result: { output: `traceroute to ${target}\n 1  ${target}  1.000 ms` } };
    }
    default:
      return fail(req.id, `unsupported request ${String(req.method)}`);
  }
}
