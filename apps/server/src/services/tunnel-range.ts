/**
 * Checks of an organization's tunnel range change. The schema already
 * guarantees a network of /24 or larger; here are the checks that need data.
 *
 * `lanSubnetsOfOrganization` reads the LAN subnets of the organization's
 * devices. Hook for the tunnels part of issue 4: a range change that cannot
 * re-address the org's tunnels must be refused (or its tunnels re-addressed)
 * in `assertTunnelRangeChangeAllowed`.
 */
import { type Cidr, cidrsOverlap, formatNetwork, parseCidr } from "@tern/protocol";
import { ApiError } from "../http/errors.ts";
import { staticSubnet } from "../validate/net.ts";
import type { ServiceCtx } from "./context.ts";

/** The static subnets ("a.b.c.0/n") of the assigned LAN interfaces of the organization's devices, each once. */
export async function lanSubnetsOfOrganization(ctx: ServiceCtx, orgId: string): Promise<string[]> {
  const devices = await ctx.db.selectFrom("devices").select("interfaces").where("organization_id", "=", orgId).execute();
  const subnets = devices.flatMap((d) =>
    d.interfaces.flatMap((i) => {
      const subnet = i.isAssigned && i.type === "LAN" ? staticSubnet(i) : null;
      return subnet ? [formatNetwork(subnet)] : [];
    }),
  );
  return [...new Set(subnets)];
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
