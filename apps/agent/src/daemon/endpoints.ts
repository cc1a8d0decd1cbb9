/**
 * The agent's local HTTP endpoints: Prometheus metrics and the
 * troubleshooting page. Neither may stop the router from being configured:
 * a taken port is reported (log and recent errors) and the agent runs on
 * without that endpoint.
 */
import { join } from "node:path";
import type { Registry } from "prom-client";
import { describeError } from "../errors.ts";
import type { AgentLogger } from "../log.ts";
import { isLoopbackHost, serveMetrics } from "../metrics/index.ts";
import { loadOrCreateUiSecret } from "../ui/auth.ts";
import { startUiServer } from "../ui/server.ts";
import type { AgentView } from "./snapshot.ts";
import { agentUiData } from "./ui-data.ts";

export interface Endpoint {
  host: string;
  port: number;
  close(): void | Promise<void>;
}

type Report = (source: string, message: string) => void;

/** Where the metrics token lives when metrics listen beyond loopback: `<stateDir>/metrics-token` (0600). */
export const metricsTokenFile = (stateDir: string) => join(stateDir, "metrics-token");

/**
 * Metrics on a loopback address are open to this host (like node_exporter);
 * on any other address they need the bearer token kept in metricsTokenFile.
 */
export async function startMetrics(
  registry: Registry,
  where: { host: string; port: number },
  log: AgentLogger,
  report: Report,
  stateDir: string,
): Promise<Endpoint | null> {
  try {
    const token = isLoopbackHost(where.host) ? undefined : await loadOrCreateUiSecret(stateDir, "metrics-token");
    const served = await serveMetrics(registry, where.host, where.port, token);
    log.info("metrics listening", {
      url: `http://${where.host}:${served.port}/metrics`,
      ...(token ? { tokenFile: metricsTokenFile(stateDir) } : {}),
    });
    return { host: where.host, port: served.port, close: () => void served.server.close() };
  } catch (err) {
    // Routing matters more than the agent's own metrics: say so loudly and carry on.
    log.error("metrics endpoint unavailable", { host: where.host, port: where.port, error: describeError(err) });
    report("metrics", `cannot listen on ${where.host}:${where.port}: ${describeError(err)}`);
    return null;
  }
}

/** Where the page's password lives: `<stateDir>/ui-secret` (0600), made on first start. */
export const uiSecretFile = (stateDir: string) => join(stateDir, "ui-secret");

export async function startUi(
  view: AgentView,
  stateDir: string,
  where: { host: string; port: number },
  log: AgentLogger,
  report: Report,
): Promise<Endpoint | null> {
  try {
    const secret = await loadOrCreateUiSecret(stateDir);
    const ui = await startUiServer({ data: agentUiData(view), secret, host: where.host, port: where.port });
    log.info("troubleshooting page listening", { url: ui.url, secretFile: uiSecretFile(stateDir) });
    return { host: where.host, port: ui.port, close: () => ui.close() };
  } catch (err) {
    log.error("troubleshooting page unavailable", { host: where.host, port: where.port, error: describeError(err) });
    report("ui", `cannot serve the troubleshooting page on ${where.host}:${where.port}: ${describeError(err)}`);
    return null;
  }
}
