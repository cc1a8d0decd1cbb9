export * from "./parse.ts";
export * from "./schema.ts";
