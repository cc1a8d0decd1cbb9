/** Static routes section: passed through, an empty interface name becomes null, sorted. */
import type { ConfigRoute } from "@tern/protocol";
import type { CompileContext } from "./context.ts";
import { compareCidr, compareIPv4, compareText, sortedUnique } from "./order.ts";

export function compileRoutes(ctx: CompileContext): ConfigRoute[] {
  const routes = ctx.input.device.staticRoutes.map((r) => ({
    destination: r.destination,
    gateway: r.gateway,
    ifname: r.ifname === "" ? null : r.ifname,
    metric: r.metric,
  }));
  // Routes form a set: the kernel keys them by destination and metric, so the input order means nothing.
  return sortedUnique(
    routes,
    (a, b) =>
      compareCidr(a.destination, b.destination) ||
      a.metric - b.metric ||
      compareIPv4(a.gateway, b.gateway) ||
      compareText(a.ifname ?? "", b.ifname ?? ""),
  );
}
