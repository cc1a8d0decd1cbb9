/** The service context of an authorized request. */
import { randomUUID } from "node:crypto";
import type { Context } from "hono";
import { type ServiceCtx, serviceCtx } from "../services/context.ts";
import type { AppEnv } from "./env.ts";

export function requestCtx(c: Context<AppEnv>): ServiceCtx {
  return serviceCtx(c.get("deps"), c.get("access"), c.get("logger"), jobGroupOf(c));
}

/** The request's job group: made at its first use, the same for every context of the request. */
export function jobGroupOf(c: Context<AppEnv>): string {
  let group = c.get("jobGroup") as string | undefined;
  if (!group) {
    group = randomUUID();
    c.set("jobGroup", group);
  }
  return group;
}
