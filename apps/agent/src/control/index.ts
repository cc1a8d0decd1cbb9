export * from "./backoff.ts";
export * from "./client.ts";
export * from "./diagnostics.ts";
export * from "./requests.ts";
export * from "./tls.ts";
export * from "./urls.ts";
