export * from "./compose.ts";
export * from "./health.ts";
export * from "./tunnel-quality.ts";
