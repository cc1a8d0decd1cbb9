export { type Bus, type BusChannel, createBus } from "./bus.ts";
export { DeviceConnection } from "./connection.ts";
export {
  DEFAULT_REQUEST_TIMEOUT_MS,
  type DeviceAnswer,
  type DeviceLink,
  offlineDeviceLink,
  type RequestParams,
  type RequestResult,
} from "./device-link.ts";
export { type DeviceRef, type GatewayEventMap, type GatewayEventName, GatewayEvents } from "./events.ts";
export { createGateway, type Gateway } from "./gateway.ts";
export * from "./live-state/readers.ts";
export { type GatewayOptions, gatewayOptions } from "./options.ts";
export { DEVICE_WS_PATH } from "./upgrade.ts";
