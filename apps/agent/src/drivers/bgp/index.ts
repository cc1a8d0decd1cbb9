export * from "./driver.ts";
export * from "./paths.ts";
export * from "./render.ts";
export * from "./state.ts";
export * from "./validate.ts";
