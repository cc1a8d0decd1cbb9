export * from "./app.ts";
export * from "./auth.ts";
export * from "./data-source.ts";
export * from "./server.ts";
