export * from "./config-error.ts";
export * from "./driver.ts";
export * from "./input.ts";
export * from "./nft-table.ts";
export * from "./render.ts";
