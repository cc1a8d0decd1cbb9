/** Every benchmark case, registered in one place and run in this order. */
import { CaseRegistry } from "../registry.ts";
import { agentApiTunnel } from "./agent-api-tunnel.ts";
import { agentConvergence } from "./agent-convergence.ts";
import { agentFailover } from "./agent-failover.ts";
import { agentFootprint } from "./agent-footprint.ts";
import { agentKernelFailover } from "./agent-kernel-failover.ts";
import { agentMeasurement } from "./agent-measurement.ts";
import { agentPathFailover } from "./agent-path-failover.ts";
import { agentStart } from "./agent-start.ts";
import { consolePages } from "./console-pages.ts";
import { deviceApprove } from "./device-approve.ts";
import { fpingLink } from "./fping-link.ts";
import { httpStatic } from "./http-static.ts";
import { pgIngest, pgliteIngest } from "./ingest.ts";
import { nodeIdle } from "./node-idle.ts";
import { nodeStart } from "./node-start.ts";
import { policyBound } from "./policy-bound.ts";
import { rawApply } from "./raw-apply.ts";
import { serverApi } from "./server-api.ts";
import { serverDevices } from "./server-devices.ts";
import { serverFanout } from "./server-fanout.ts";
import { serverIngest } from "./server-ingest.ts";
import { serverRestart } from "./server-restart.ts";
import { serverScaleOut } from "./server-scale-out.ts";
import { simulatorFootprint } from "./simulator-footprint.ts";
import { statisticsQuery, statisticsQuerySql } from "./statistics-query.ts";
import { vrrpBound } from "./vrrp-bound.ts";
import { wsBroadcast } from "./ws-broadcast.ts";
import { wsEchoConnections } from "./ws-echo-connections.ts";
import { wsEchoThroughput } from "./ws-echo-throughput.ts";

export function defaultRegistry(): CaseRegistry {
  return new CaseRegistry()
    .register(wsEchoConnections)
    .register(wsEchoThroughput)
    .register(pgIngest)
    .register(pgliteIngest)
    .register(simulatorFootprint)
    .register(wsBroadcast)
    .register(httpStatic)
    .register(serverDevices)
    .register(serverIngest)
    .register(serverFanout)
    .register(serverRestart)
    .register(serverApi)
    .register(statisticsQuerySql)
    .register(statisticsQuery)
    .register(deviceApprove)
    .register(serverScaleOut)
    .register(rawApply)
    .register(agentConvergence)
    .register(agentApiTunnel)
    .register(vrrpBound)
    .register(agentFailover)
    .register(policyBound)
    .register(agentPathFailover)
    .register(agentKernelFailover)
    .register(nodeIdle)
    .register(agentFootprint)
    .register(nodeStart)
    .register(agentStart)
    .register(fpingLink)
    .register(agentMeasurement)
    .register(consolePages);
}
