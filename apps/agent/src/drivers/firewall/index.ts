export * from "./driver.ts";
export * from "./input.ts";
export * from "./nft-table.ts";
export * from "./render.ts";
