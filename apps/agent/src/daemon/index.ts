export * from "./agent.ts";
export * from "./snapshot.ts";
