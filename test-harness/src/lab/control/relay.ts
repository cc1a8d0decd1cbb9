/**
 * How an agent inside a namespace reaches the server on the root namespace's
 * loopback: 127.0.0.1 of the root namespace is not reachable from another
 * namespace, and the lab adds no interfaces or routes to the root namespace.
 * An ns-relay per edge (native/ns-relay.c) listens inside the edge namespace
 * (on its own 127.0.0.1, same port as the server) and forwards each connection
 * to the server. The control link therefore never crosses a WAN cloud and is
 * never impaired; stopping one relay disconnects exactly one device.
 * With `control: { cloud: X }` the relay listens in the management node on
 * cloud X instead, and agents reach it across that (impaired) cloud.
 */
import { join } from "node:path";
import type { ProcessSpec } from "../supervisor.ts";

export interface RelayOptions {
  bin: string;
  labDir: string;
  /** Who the relay serves: an edge name, or "mgmt" for the management node. */
  name: string;
  netns: string;
  listenAddress: string;
  port: number;
  serverPort: number;
}

export function relaySpec(o: RelayOptions): ProcessSpec {
  return {
    key: `control:relay:${o.name}`,
    role: "relay",
    argv: [o.bin, join("/run/netns", o.netns), o.listenAddress, String(o.port), "127.0.0.1", String(o.serverPort)],
    log: join(o.labDir, "nodes", o.name, "relay.log"),
  };
}
