export * from "./credentials.ts";
export * from "./device-key.ts";
export * from "./discover.ts";
export * from "./machine-id.ts";
