/**
 * Checks of an organization's tunnel range change. The schema already
 * guarantees a network of /24 or larger; here are the checks that need data.
 *
 * Hook for the network API (issue 4): `lanSubnetsOfOrganization` returns the
 * LAN subnets of the organization's devices once devices exist, and a range
 * change that cannot re-address the org's tunnels must be refused (or its
 * tunnels re-addressed) in `assertTunnelRangeChangeAllowed`.
 */
import { type Cidr, cidrsOverlap, parseCidr } from "@tern/protocol";
import { ApiError } from "../http/errors.ts";
import type { ServiceCtx } from "./context.ts";

/** LAN subnets ("a.b.c.d/n") of the organization's devices. No devices exist yet: see the module comment. */
export async function lanSubnetsOfOrganization(_ctx: ServiceCtx, _orgId: string): Promise<string[]> {
  return [];
}

/** The LAN subnets that overlap the range (pure, so it is tested without devices). */
export function overlappingSubnets(range: string, subnets: readonly string[]): string[] {
  const r = parseCidr(range);
  if (!r) return [];
  return subnets.filter((s) => {
    const c: Cidr | null = parseCidr(s);
    return c !== null && cidrsOverlap(r, c);
  });
}

/** Throws LAN_OVERLAPPING when the new range overlaps a LAN subnet of the organization's devices. */
export async function assertTunnelRangeChangeAllowed(ctx: ServiceCtx, orgId: string, range: string): Promise<void> {
  const overlaps = overlappingSubnets(range, await lanSubnetsOfOrganization(ctx, orgId));
  if (overlaps.length) {
    throw new ApiError(
      "LAN_OVERLAPPING",
      `tunnel range ${range} overlaps LAN subnets of this organization's devices: ${overlaps.join(", ")}`,
      overlaps.map((s) => ({ path: "tunnelRange", message: `overlaps LAN subnet ${s}` })),
    );
  }
}
