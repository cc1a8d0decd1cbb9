/** The Hono environment of every route: dependencies, request id, logger, and the caller once authorized. */
import type { Logger } from "pino";
import type { Access, Principal } from "../auth/access.ts";
import type { AppDeps } from "../deps.ts";

export interface AppEnv {
  Variables: {
    deps: AppDeps;
    requestId: string;
    logger: Logger;
    clientIp: string;
    /** Set by the authorization middleware of every non-public route. */
    access: Access;
    /** Set by the middleware of routes about the signed-in user themself (auth: "user"). */
    user: Extract<Principal, { kind: "user" }>;
  };
}

/** The API app every route registers on (mounted at /api). */
export type ApiApp = import("@hono/zod-openapi").OpenAPIHono<AppEnv>;
