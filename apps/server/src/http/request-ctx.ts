/** The service context of an authorized request. */
import type { Context } from "hono";
import { type ServiceCtx, serviceCtx } from "../services/context.ts";
import type { AppEnv } from "./env.ts";

export function requestCtx(c: Context<AppEnv>): ServiceCtx {
  return serviceCtx(c.get("deps"), c.get("access"), c.get("logger"));
}
