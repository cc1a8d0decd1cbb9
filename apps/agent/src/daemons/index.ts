export * from "./files.ts";
export * from "./interfaces.ts";
export * from "./supervisor.ts";
export * from "./systemd.ts";
export * from "./wait.ts";
