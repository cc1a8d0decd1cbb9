/** Every benchmark case, registered in one place and run in this order. Issue 8's server and agent cases go here. */
import { CaseRegistry } from "../registry.ts";
import { pgIngest, pgliteIngest } from "./ingest.ts";
import { simulatorFootprint } from "./simulator-footprint.ts";
import { wsEchoConnections } from "./ws-echo-connections.ts";
import { wsEchoThroughput } from "./ws-echo-throughput.ts";

export function defaultRegistry(): CaseRegistry {
  return new CaseRegistry()
    .register(wsEchoConnections)
    .register(wsEchoThroughput)
    .register(pgIngest)
    .register(pgliteIngest)
    .register(simulatorFootprint);
}
