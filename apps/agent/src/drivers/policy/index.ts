export * from "./driver.ts";
export * from "./kernel.ts";
export * from "./kernel-gate.ts";
export * from "./layout.ts";
export * from "./links.ts";
export * from "./render.ts";
export * from "./select.ts";
