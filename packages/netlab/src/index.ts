export * from "./netns.ts";
export * from "./privileges.ts";
