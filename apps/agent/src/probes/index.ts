export * from "./fping-session.ts";
export * from "./plan.ts";
export * from "./prober.ts";
export * from "./types.ts";
export * from "./udp-echo-codec.ts";
export * from "./udp-responder.ts";
export * from "./udp-session.ts";
export * from "./window.ts";
