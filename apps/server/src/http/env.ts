/** The Hono environment of every route: dependencies, request id, logger, and the caller once authorized. */
import type { Logger } from "pino";
import type { Access, UserPrincipal } from "../auth/access.ts";
import type { AppDeps } from "../deps.ts";

export interface AppEnv {
  Variables: {
    deps: AppDeps;
    requestId: string;
    logger: Logger;
    clientIp: string;
    /** Set by the authorization middleware of every organization route. */
    access: Access;
    /** Set by the middleware of `auth: "user"` routes: the signed-in user (never an access token). */
    user: UserPrincipal;
    /** The group of the jobs the request queues (request-ctx.ts), made when first asked for. */
    jobGroup: string;
  };
}

/** The API app every route registers on (mounted at /api). */
export type ApiApp = import("@hono/zod-openapi").OpenAPIHono<AppEnv>;
