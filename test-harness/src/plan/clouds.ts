/**
 * WAN address plan: every attachment of a router to a cloud is its own subnet,
 * with the cloud router at one end (the gateway) and the router at the other.
 * Cloud i defaults to 100.(64+i).0.0/16 (shared address space, never a real
 * public network) and attachment k of it to 100.(64+i).k.0/24: .1 cloud, .2 router.
 */
import { parseIPv4 } from "@tern/protocol";
import { NO_IMPAIRMENT, type Topology } from "../topology/schema.ts";
import { type Cidr, cidr, hostAt, isHostOf, networkText, subnetAt } from "./ipv4.ts";
import type { Router, RouterWan } from "./routers.ts";
import type { PlanAttachment, PlanIssue } from "./types.ts";

export interface CloudPlan {
  attachments: PlanAttachment[];
  /** Per cloud: every subnet in it (the prefix plus explicit subnets outside it). */
  cloudSubnets: Map<string, string[]>;
  issues: PlanIssue[];
}

/** Default prefix of the i-th cloud. */
export function defaultCloudPrefix(index: number): string {
  return `100.${64 + index}.0.0/16`;
}

interface Slot {
  router: Router;
  wan: RouterWan;
  subnet?: Cidr;
  address?: string;
  gateway?: string;
}

export function planClouds(t: Topology, routers: Router[]): CloudPlan {
  const issues: PlanIssue[] = [];
  const attachments: PlanAttachment[] = [];
  const cloudSubnets = new Map<string, string[]>();
  let queue = 1;

  t.clouds.forEach((cloud, ci) => {
    const prefix = cidr(cloud.prefix ?? defaultCloudPrefix(ci));
    // /24 chunks from the second one (100.64.1.0/24 is attachment 1); /30 chunks for small clouds.
    const chunk = prefix.prefix <= 23 ? 24 : 30;
    let nextChunk = prefix.prefix <= 23 ? 1 : 0;
    if (prefix.prefix > 29) {
      issues.push({ path: ["clouds", ci, "prefix"], message: "a cloud prefix must be /29 or larger" });
      return;
    }
    const slots: Slot[] = routers.flatMap((router) =>
      router.wan.filter((w) => w.spec.cloud === cloud.name).map((wan) => ({ router, wan })),
    );
    const used: Cidr[] = [];
    const subnets = [networkText(prefix)];

    for (const slot of slots.filter((s) => s.wan.spec.address)) {
      const c = cidr(slot.wan.spec.address!);
      const at = [...slot.wan.path, "address"];
      const addr = c.address;
      if (!isHostOf(c, addr)) {
        issues.push({ path: at, message: `${slot.wan.spec.address} is not a host address of its subnet` });
        continue;
      }
      const clash = used.find((u) => u.network <= c.broadcast && c.network <= u.broadcast);
      if (clash) {
        issues.push({ path: at, message: `subnet ${networkText(c)} overlaps ${networkText(clash)} in cloud '${cloud.name}'` });
        continue;
      }
      let gateway = slot.wan.spec.gateway;
      if (gateway) {
        const g = parseIPv4(gateway)!;
        if (!isHostOf(c, g) || g === addr) {
          issues.push({
            path: [...slot.wan.path, "gateway"],
            message: `gateway ${gateway} must be another host of ${networkText(c)}`,
          });
          continue;
        }
      } else {
        gateway = hostAt(c, 1) === hostAt(c, addr - c.network) ? hostAt(c, 2) : hostAt(c, 1);
      }
      used.push(c);
      slot.subnet = c;
      slot.address = hostAt(c, addr - c.network);
      slot.gateway = gateway;
      const outside = !(c.network >= prefix.network && c.broadcast <= prefix.broadcast);
      if (outside) subnets.push(networkText(c));
    }

    for (const slot of slots.filter((s) => !s.wan.spec.address)) {
      let c: Cidr | null = null;
      while (!c) {
        const candidate = subnetAt(prefix, chunk, nextChunk++);
        if (!candidate) break;
        if (!used.some((u) => u.network <= candidate.broadcast && candidate.network <= u.broadcast)) c = candidate;
      }
      if (!c) {
        issues.push({
          path: [...slot.wan.path, "cloud"],
          message: `cloud '${cloud.name}' (${networkText(prefix)}) has no free subnet left`,
        });
        continue;
      }
      used.push(c);
      slot.subnet = c;
      slot.gateway = hostAt(c, 1);
      slot.address = hostAt(c, 2);
    }

    for (const slot of slots) {
      if (!slot.subnet || !slot.address || !slot.gateway) continue;
      attachments.push({
        id: `${cloud.name}:${slot.router.name}`,
        cloud: cloud.name,
        node: slot.router.name,
        cloudIf: slot.router.name,
        nodeIf: slot.wan.ifname,
        subnet: networkText(slot.subnet),
        address: `${slot.address}/${slot.subnet.prefix}`,
        gateway: slot.gateway,
        queue: queue++,
        impairment: { ...(slot.wan.spec.impairment ?? cloud.impairment ?? NO_IMPAIRMENT) },
      });
    }
    cloudSubnets.set(cloud.name, subnets);
  });
  return { attachments, cloudSubnets, issues };
}
