export * from "./driver.ts";
export * from "./render.ts";
