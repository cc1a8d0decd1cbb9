export * from "./debounce.ts";
export * from "./ip-monitor.ts";
export * from "./monitor-line.ts";
export * from "./types.ts";
export * from "./wan-state.ts";
export * from "./wan-watcher.ts";
