/**
 * The troubleshooting page's data source over the running agent: what the
 * page shows is the agent's own snapshot (the last status message, the
 * connection, recent errors), and its ping/traceroute buttons are the same
 * protocol requests the server can send, validated the same way.
 */
import type { PingResult } from "@tern/protocol";
import type * as z from "zod";
import type { UiDataSource } from "../ui/data-source.ts";
import type { AgentView } from "./snapshot.ts";

export function agentUiData(view: AgentView): UiDataSource {
  const status = () => view.snapshot().status;
  return {
    connection() {
      const s = view.snapshot();
      return {
        connected: s.connection.state === "connected",
        server: s.connection.url ?? "(not registered: running without a server)",
        since: s.connection.since,
        appliedHash: s.appliedHash,
        lastError: s.connection.lastError,
      };
    },
    interfaces: async () => status()?.interfaces ?? [],
    tunnels: () => {
      const details = new Map((view.snapshot().tunnelDetails ?? []).map((d) => [d.id, d]));
      return (status()?.tunnels ?? []).map((t) => ({ ...t, ...details.get(t.id) }));
    },
    bgp: async () => status()?.bgp ?? null,
    vrrp: () => (status()?.vrrp ?? []).map((v) => ({ groupId: v.groupId, state: v.state, since: v.since })),
    recentErrors: () =>
      view.snapshot().recentErrors.map((e) => ({
        at: e.at,
        message: `${e.source}: ${e.message}${e.count > 1 ? ` (×${e.count})` : ""}`,
      })),
    ping: async (target) => (await view.request("ping", { target, count: 4, intervalMs: 200 })) as z.infer<typeof PingResult>,
    traceroute: async (target) => (await view.request("traceroute", { target })) as { output: string },
  };
}
