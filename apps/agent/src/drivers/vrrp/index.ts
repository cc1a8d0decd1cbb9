export * from "./driver.ts";
export * from "./paths.ts";
export * from "./render.ts";
export * from "./transitions.ts";
