/**
 * Installation administrators: what is installation-wide (the branding) is
 * theirs. They are the owners of the installation's first account, the one
 * the server made at its first start with the first owner (TERN_ADMIN_EMAIL);
 * `tern-server admin create-user --account <that account> --role owner` makes
 * more. Access tokens never are (a key belongs to one organization), nor the
 * owners of other accounts (other tenants of a shared installation).
 */
import type { MiddlewareHandler } from "hono";
import type { Db } from "../db/schema.ts";
import type { AppEnv } from "../http/env.ts";
import { forbidden } from "../http/errors.ts";
import { requestPrincipal } from "./request-principal.ts";

/** True when the user owns the installation's first account. */
export async function isInstallationAdmin(db: Db, userId: string): Promise<boolean> {
  const row = await db
    .selectFrom("memberships as m")
    .select("m.id")
    .where("m.user_id", "=", userId)
    .where("m.role", "=", "owner")
    .where("m.account_id", "=", (eb) => eb.selectFrom("accounts").select("id").orderBy("created_at").orderBy("id").limit(1))
    .executeTakeFirst();
  return row !== undefined;
}

/** The middleware of `auth: "installation"` routes. */
export function authorizeInstallationAdmin(): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const { principal } = await requestPrincipal(c);
    if (principal.kind !== "user") throw forbidden("only an installation administrator can do this, not an access token");
    if (!(await isInstallationAdmin(c.get("deps").db, principal.userId)))
      throw forbidden("only an installation administrator (an owner of the installation's first account) can do this");
    c.set("user", principal);
    c.set("logger", c.get("logger").child({ actor: principal.email }));
    await next();
  };
}
