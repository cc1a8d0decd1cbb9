export * from "./damping.ts";
export * from "./healing-log.ts";
export * from "./stuck-sa.ts";
