/** Checks the BGP section before anything changes; throws INVALID_CONFIG with the offending path. */
import type { ConfigBgp } from "@tern/protocol";
import { invalidConfig } from "../../errors.ts";

/** TCP-MD5 keys: up to 80 printable characters; FRR's CLI takes one word. */
const PASSWORD = /^[\x21-\x7e]{1,80}$/;

export function validateBgp(bgp: ConfigBgp): void {
  if (bgp.keepalive > bgp.hold)
    throw invalidConfig("bgp.keepalive", `keepalive ${bgp.keepalive} s must not exceed hold time ${bgp.hold} s`);
  const seen = new Set<string>();
  bgp.neighbors.forEach((n, i) => {
    if (seen.has(n.ip)) throw invalidConfig(`bgp.neighbors.${i}.ip`, `neighbor ${n.ip} is listed twice`);
    seen.add(n.ip);
    if (n.password !== "" && !PASSWORD.test(n.password)) {
      throw invalidConfig(`bgp.neighbors.${i}.password`, "must be 1 to 80 printable characters without spaces");
    }
  });
  const nets = new Set<string>();
  bgp.networks.forEach((net, i) => {
    if (nets.has(net)) throw invalidConfig(`bgp.networks.${i}`, `${net} is listed twice`);
    nets.add(net);
  });
}
