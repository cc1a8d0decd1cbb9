export * from "./reconciler.ts";
export * from "./store.ts";
