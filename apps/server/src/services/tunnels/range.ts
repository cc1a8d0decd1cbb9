/**
 * Checks of an organization's tunnel range change. The schema already
 * guarantees a network of /24 or larger; here are the checks that need data.
 *
 * `lanSubnetsOfOrganization` reads the LAN subnets of the organization's
 * devices; `assertTunnelRangeChangeAllowed` refuses a change that cannot
 * re-address the tunnels, and `readdressTunnels` recompiles them.
 */
import { type Cidr, cidrsOverlap, formatNetwork, parseCidr } from "@tern/protocol";
import { ApiError } from "../../http/errors.ts";
import { checkTunnelRangeChange, problem, problemsToErrorBody } from "../../validate/index.ts";
import { staticSubnet } from "../../validate/net.ts";
import type { ServiceCtx } from "../context.ts";
import { queueConfigJobs } from "../desired-config.ts";

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

/**
 * Throws when the organization cannot move its tunnels to `range`: a range too
 * small for the numbers in use (TUNNEL_RANGE_EXHAUSTED), overlapping a LAN or
 * LAN NAT prefix (LAN_OVERLAPPING) or a WAN subnet, or routes / BGP neighbours
 * pointing at loopbacks of the current range (VALIDATION_FAILED). Call it with
 * the organization row locked, so no tunnel is created meanwhile.
 */
export async function assertTunnelRangeChangeAllowed(
  ctx: ServiceCtx,
  orgId: string,
  range: string,
  currentRange?: string,
): Promise<void> {
  const devices = await ctx.db
    .selectFrom("devices")
    .select(["id", "name", "interfaces", "firewall", "static_routes", "bgp"])
    .where("organization_id", "=", orgId)
    .execute();
  const nums = await ctx.db.selectFrom("tunnels").select("num").where("organization_id", "=", orgId).execute();
  const problems = checkTunnelRangeChange({
    newRange: range,
    ...(currentRange ? { currentRange } : {}),
    devices: devices.map((d) => ({ ...d, staticRoutes: d.static_routes })),
    tunnelNums: nums.map((n) => n.num),
  });
  const reported = problems.filter((p) => p.code === "LAN_OVERLAPPING").map((p) => p.message);
  for (const s of overlappingSubnets(range, await lanSubnetsOfOrganization(ctx, orgId)))
    if (!reported.some((m) => m.includes(s)))
      problems.push(problem("LAN_OVERLAPPING", "tunnelRange", `overlaps LAN subnet ${s}`));
  const body = problemsToErrorBody(problems);
  if (body) throw new ApiError(body.code, body.error, body.details);
}

/** Recompiles every device with a tunnel after a range change: the new desired configs carry the new loopbacks. */
export async function readdressTunnels(ctx: ServiceCtx, from: string, to: string): Promise<{ jobIds: string[] }> {
  const ends = await ctx.db
    .selectFrom("tunnels")
    .select(["device_a", "device_b"])
    .where("organization_id", "=", ctx.org.id)
    .execute();
  const deviceIds = [...new Set(ends.flatMap((e) => (e.device_b ? [e.device_a, e.device_b] : [e.device_a])))];
  return queueConfigJobs(ctx, {
    deviceIds,
    type: "organization",
    tasks: [{ kind: "tunnel-range", summary: `tunnel loopbacks move from ${from} to ${to}` }],
  });
}
