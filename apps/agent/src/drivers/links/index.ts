export * from "./desired.ts";
export * from "./dhcp-client.ts";
export * from "./diff.ts";
export * from "./forwarding.ts";
export * from "./iproute.ts";
export * from "./links-driver.ts";
export * from "./owned.ts";
