/** tern tokens ls | create | delete: access tokens (API keys) with permission masks. */
import type { Command } from "@commander-js/extra-typings";
import { type AccessToken, ok, type PermissionResource } from "@tern/client";
import { usageError } from "../exit-codes.ts";
import { renderFields } from "../support/output.ts";
import { confirm, contextOf } from "./shared.ts";

const BITS = { get: 1, post: 2, put: 4, del: 8 } as const;
const ROLES = ["owner", "manager", "viewer"] as const;

/** "devices=get,put" or "devices=5" → ["devices", 5]. */
export function parsePermission(spec: string): [PermissionResource, number] {
  const match = /^([A-Za-z]+)=(.+)$/.exec(spec);
  if (!match) throw usageError(`--perm ${spec}: expected resource=mask, e.g. devices=get,put or devices=5`);
  const [, resource, mask] = match as unknown as [string, PermissionResource, string];
  if (/^\d+$/.test(mask)) {
    const n = Number(mask);
    if (n > 15) throw usageError(`--perm ${spec}: a mask is 0 to 15 (get=1 post=2 put=4 del=8)`);
    return [resource, n];
  }
  let n = 0;
  for (const word of mask.split(",")) {
    const bit = word === "all" ? 15 : word === "none" ? 0 : BITS[word.trim() as keyof typeof BITS];
    if (bit === undefined) throw usageError(`--perm ${spec}: "${word}" is not one of get, post, put, del, all, none`);
    n |= bit;
  }
  return [resource, n];
}

const maskText = (mask: number) =>
  mask === 0
    ? "none"
    : (Object.entries(BITS) as [string, number][])
        .filter(([, bit]) => mask & bit)
        .map(([name]) => name)
        .join(",");

const permissionsText = (p: AccessToken["permissions"]) =>
  Object.entries(p)
    .map(([resource, mask]) => `${resource}=${maskText(mask ?? 0)}`)
    .join(" ");

export function registerTokens(program: Command<[], { json?: boolean; org?: string }>): void {
  const tokens = program
    .command("tokens")
    .alias("token")
    .description("Access tokens (API keys) of the organization, with their permission masks");

  tokens
    .command("ls")
    .alias("list")
    .description("List access tokens (never their secrets)")
    .action(async (_opts, command) => {
      const ctx = contextOf(command);
      const tern = await ctx.connect();
      const rows = await ok(tern.api.GET("/api/accesstokens", { params: { query: { limit: 1000 } } }));
      ctx.printer.list(
        rows,
        [
          { header: "name", value: (t: AccessToken) => t.name },
          { header: "role", value: (t) => t.role },
          { header: "permissions", value: (t) => permissionsText(t.permissions) },
          { header: "last used", value: (t) => t.lastUsedAt },
          { header: "id", value: (t) => t.id },
        ],
        "no access tokens",
      );
    });

  tokens
    .command("create")
    .description(
      "Create an access token; the secret is shown once. Masks: get=1 post=2 put=4 del=8; resources not named get the role's",
    )
    .argument("<name>", "what the token is for")
    .option("--role <role>", `role the masks start from (${ROLES.join(", ")}; default viewer)`)
    .option(
      "--perm <resource=mask>",
      "a resource's mask, e.g. devices=get,put or jobs=1 (repeatable)",
      (value, previous: string[]) => [...previous, value],
      [] as string[],
    )
    .action(async (name, opts, command) => {
      const ctx = contextOf(command);
      if (opts.role && !(ROLES as readonly string[]).includes(opts.role)) throw usageError(`--role: one of ${ROLES.join(", ")}`);
      const permissions = Object.fromEntries(opts.perm.map(parsePermission));
      const tern = await ctx.connect();
      const created = await ok(
        tern.api.POST("/api/accesstokens", {
          body: { name, role: (opts.role ?? "viewer") as (typeof ROLES)[number], permissions },
        }),
      );
      ctx.printer.result(created, (t) =>
        [
          renderFields([
            ["Name", t.name],
            ["ID", t.id],
            ["Role", t.role],
            ["Permissions", permissionsText(t.permissions)],
          ]),
          "",
          "Token (shown only now; store it safely):",
          t.token,
        ].join("\n"),
      );
    });

  tokens
    .command("delete")
    .alias("rm")
    .description("Revoke an access token")
    .argument("<id>", "token id")
    .option("-y, --yes", "do not ask for confirmation")
    .action(async (id, opts, command) => {
      const ctx = contextOf(command);
      await confirm(`Revoke access token ${id}`, opts.yes);
      const tern = await ctx.connect();
      await ok(tern.api.DELETE("/api/accesstokens/{id}", { params: { path: { id } } }));
      ctx.printer.result({ deleted: id }, () => `revoked ${id}`);
    });
}
