export * from "./metrics.ts";
export * from "./server.ts";
