/**
 * Onboarding: a device presents a registration token with its machine id,
 * hostname, interfaces and versions, and gets a device token back. A new
 * device starts unapproved; an admin approves it with `PUT /devices/{id}`.
 * The same machine id registering again in the same organization is the same
 * device: its token is rotated, its discovered facts refreshed, its approval
 * and the admin's settings kept. No job is queued here: an unapproved device
 * gets none, and re-registration does not change an assigned interface.
 */
import { randomUUID } from "node:crypto";
import { Bgp, Firewall, type RegisterRequest, type RegisterResponse } from "@tern/protocol";
import { sql } from "kysely";
import type { Actor } from "../auth/access.ts";
import { hashSecretToken, newSecretToken, TOKEN_PREFIX } from "../auth/secret-tokens.ts";
import { toJson } from "../db/json.ts";
import type { AppDeps } from "../deps.ts";
import { ApiError } from "../http/errors.ts";
import { recordAudit } from "./audit.ts";
import { type ServiceCtx, systemCtx } from "./context.ts";
import { discoveredInterface, mergeDiscovered } from "./device-interfaces.ts";
import { useRegistrationToken } from "./registration-tokens.ts";

type RegisterDeps = Pick<AppDeps, "db" | "config" | "keyring" | "logger" | "registerLimit">;

export interface Registered {
  /** True for a new device, false for a re-registration. */
  created: boolean;
  response: RegisterResponse;
}

const rateLimited = (seconds: number) =>
  new ApiError("RATE_LIMITED", `too many registrations from this address; try again in ${seconds} s`, [], {
    "retry-after": String(seconds),
  });

/** A device name from its hostname (names are at most 100 characters). */
const nameFromHostname = (hostname: string) => hostname.trim().slice(0, 100) || "device";

export async function registerDevice(deps: RegisterDeps, input: RegisterRequest, client: { ip: string }): Promise<Registered> {
  const wait = deps.registerLimit.blockedFor(client.ip);
  if (wait !== null) throw rateLimited(wait);
  deps.registerLimit.hit(client.ip);

  const deviceToken = newSecretToken(TOKEN_PREFIX.device);
  return deps.db.transaction().execute(async (trx) => {
    const token = await useRegistrationToken(trx, input.token);
    if ("refused" in token) {
      if (token.refused === "exhausted")
        throw new ApiError("REGISTRATION_TOKEN_EXHAUSTED", "the registration token has been used as often as it allows");
      throw new ApiError(
        "UNAUTHENTICATED",
        token.refused === "expired" ? "the registration token has expired" : "unknown registration token",
      );
    }
    const org = await trx
      .selectFrom("organizations")
      .select(["id", "account_id", "name"])
      .where("id", "=", token.orgId)
      .executeTakeFirstOrThrow();
    const actor: Actor = { kind: "device", label: `registration:${token.name}`, userId: null, tokenId: null };
    const ctx: ServiceCtx = {
      ...systemCtx(deps as AppDeps, { id: org.id, accountId: org.account_id, name: org.name }, actor),
      db: trx,
    };

    // Lock the row of a known machine, or claim the (org, machine id) slot for a new one.
    const existing = await trx
      .selectFrom("devices")
      .select(["id", "interfaces", "is_approved", "hostname", "agent_version", "protocol_version"])
      .where("organization_id", "=", org.id)
      .where("machine_id", "=", input.machineId)
      .forUpdate()
      .executeTakeFirst();
    const versions = { agent_version: input.versions.agent, protocol_version: input.versions.protocol };

    if (!existing) {
      const id = randomUUID();
      const inserted = await trx
        .insertInto("devices")
        .values({
          id,
          organization_id: org.id,
          name: nameFromHostname(input.hostname),
          hostname: input.hostname,
          machine_id: input.machineId,
          is_approved: false,
          device_token_hash: hashSecretToken(deviceToken),
          ...versions,
          interfaces: toJson(dedupe(input.interfaces).map((i) => discoveredInterface(i, randomUUID()))),
          static_routes: toJson([]),
          dhcp: toJson([]),
          bgp: toJson(Bgp.parse({})),
          firewall: toJson(Firewall.parse({})),
        })
        // A concurrent registration of the same machine claimed the slot after our select: refuse this one
        // rather than answer with a device token that was never stored.
        .onConflict((oc) => oc.columns(["organization_id", "machine_id"]).doNothing())
        .returning("id")
        .executeTakeFirst();
      if (!inserted) throw new ApiError("CONFLICT", "this machine is registering concurrently; retry");
      await recordAudit(ctx, {
        action: "register",
        resource: "devices",
        resourceId: id,
        after: { hostname: input.hostname, machineId: input.machineId, versions: input.versions, registrationToken: token.id },
      });
      return { created: true, response: { deviceId: id, deviceToken, isApproved: false } };
    }

    const interfaces = mergeDiscovered(existing.interfaces, dedupe(input.interfaces), randomUUID);
    await trx
      .updateTable("devices")
      .set({
        hostname: input.hostname,
        device_token_hash: hashSecretToken(deviceToken),
        ...versions,
        interfaces: toJson(interfaces),
        updated_at: sql`now()`,
      })
      .where("id", "=", existing.id)
      .execute();
    await recordAudit(ctx, {
      action: "reregister",
      resource: "devices",
      resourceId: existing.id,
      before: {
        hostname: existing.hostname,
        versions: { agent: existing.agent_version, protocol: existing.protocol_version },
        interfaces: existing.interfaces.map((i) => i.devId),
      },
      after: {
        hostname: input.hostname,
        versions: input.versions,
        interfaces: interfaces.map((i) => i.devId),
        registrationToken: token.id,
      },
    });
    return { created: false, response: { deviceId: existing.id, deviceToken, isApproved: existing.is_approved } };
  });
}

/** The first report of each devId (an agent listing one twice is not worth refusing the device for). */
function dedupe<T extends { devId: string }>(list: readonly T[]): T[] {
  const seen = new Set<string>();
  return list.filter((i) => !seen.has(i.devId) && seen.add(i.devId));
}
