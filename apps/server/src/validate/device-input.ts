/** What the device validators read: a stored device or a PUT body merged over it. */
import type { Bgp, DhcpServer, Firewall, StaticRoute } from "@tern/protocol";
import type { InterfaceLike } from "./net.ts";

export interface DeviceValidationInput {
  interfaces: readonly InterfaceLike[];
  staticRoutes: readonly StaticRoute[];
  dhcp: readonly DhcpServer[];
  bgp: Bgp;
  firewall: Firewall;
}

export interface DeviceValidationContext {
  /**
   * The organization's tunnel range. Its addresses count as connected (the
   * tunnel loopback /31s live there) for route gateways and BGP neighbours,
   * and no interface subnet may overlap it.
   */
  tunnelRange?: string;
  /** Path label ids of the organization; interface path labels are checked against them when given. */
  pathLabelIds?: readonly string[];
}
