export * from "./agents.ts";
export * from "./api-client.ts";
export * from "./assignment.ts";
export * from "./onboarding.ts";
export * from "./plan.ts";
export * from "./relay.ts";
export * from "./server.ts";
export * from "./start.ts";
