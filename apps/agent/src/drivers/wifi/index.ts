export * from "./driver.ts";
