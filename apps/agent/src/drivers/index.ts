export * from "./driver.ts";
export * from "./registry.ts";
