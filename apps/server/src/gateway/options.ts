/** The gateway's settings, taken once from the server config (docs/gateway.md lists them). */
import type { ServerConfig } from "../config.ts";

export interface GatewayOptions {
  pingIntervalMs: number;
  pingMisses: number;
  helloTimeoutMs: number;
  /** Links being admitted at once (TERN_WS_ADMISSION_MAX); more are refused with 503 and Retry-After. */
  admissionMax: number;
  rate: number;
  rateBurst: number;
  statusIntervalMs: number;
  jobTimeoutMs: number;
  autoSyncAttempts: number;
  dutyIntervalMs: number;
  heartbeatMs: number;
  ingestBatchRows: number;
  ingestFlushMs: number;
  ingestMaxBuffered: number;
  publicAddressMaxChanges: number;
  publicAddressWindowMs: number;
  wanAddressDebounceMs: number;
  trustProxy: boolean;
  /** Hosts a hello may be signed for besides the request's own Host (TERN_DEVICE_HOSTS). */
  deviceHosts: string[];
}

export function gatewayOptions(config: ServerConfig): GatewayOptions {
  return {
    pingIntervalMs: config.TERN_WS_PING_INTERVAL_MS,
    pingMisses: config.TERN_WS_PING_MISSES,
    helloTimeoutMs: config.TERN_WS_HELLO_TIMEOUT_MS,
    admissionMax: config.TERN_WS_ADMISSION_MAX,
    rate: config.TERN_DEVICE_RATE,
    rateBurst: config.TERN_DEVICE_RATE_BURST,
    statusIntervalMs: config.TERN_STATUS_INTERVAL_MS,
    jobTimeoutMs: config.TERN_JOB_TIMEOUT_MS,
    autoSyncAttempts: config.TERN_AUTO_SYNC_ATTEMPTS,
    dutyIntervalMs: config.TERN_DUTY_INTERVAL_MS,
    heartbeatMs: config.TERN_INSTANCE_HEARTBEAT_MS,
    ingestBatchRows: config.TERN_INGEST_BATCH_ROWS,
    ingestFlushMs: config.TERN_INGEST_FLUSH_MS,
    ingestMaxBuffered: config.TERN_INGEST_MAX_BUFFERED,
    publicAddressMaxChanges: config.TERN_PUBLIC_ADDRESS_MAX_CHANGES,
    publicAddressWindowMs: config.TERN_PUBLIC_ADDRESS_WINDOW_MS,
    wanAddressDebounceMs: config.TERN_WAN_ADDRESS_DEBOUNCE_MS,
    trustProxy: config.TERN_TRUST_PROXY,
    deviceHosts: config.TERN_DEVICE_HOSTS,
  };
}
