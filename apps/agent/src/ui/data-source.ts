/**
 * What the troubleshooting page shows and does, as one small interface the
 * core implements from its own state (control link, status composition,
 * drivers, prober; see src/daemon/ui-data.ts). The page only reads through
 * it, and runs diagnostics only through `ping`/`traceroute`, which refuse
 * anything but an IPv4 literal (AgentError INVALID_REQUEST).
 */
import type { BgpState, InterfaceState, TunnelReport, VrrpRouterState } from "@tern/protocol";

export interface UiConnection {
  connected: boolean;
  /** The server URL the agent talks to. */
  server: string;
  /** ISO time of the last connect or disconnect. */
  since: string | null;
  appliedHash: string | null;
  lastError: string | null;
}

/** A tunnel row: the report plus optional extras from the prober. */
export type UiTunnel = TunnelReport & { name?: string; srttMs?: number; target?: string };

export interface UiPingResult {
  transmitted: number;
  received: number;
  lossPercent: number;
  rttAvgMs: number | null;
  output: string;
}

export interface UiDataSource {
  connection(): UiConnection;
  interfaces(): Promise<InterfaceState[]>;
  tunnels(): UiTunnel[];
  bgp(): Promise<BgpState | null>;
  vrrp(): { groupId: string; state: VrrpRouterState; since: string | null }[];
  recentErrors(): { at: string; message: string }[];
  ping(target: string): Promise<UiPingResult>;
  traceroute(target: string): Promise<{ output: string }>;
}
