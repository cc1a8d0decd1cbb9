/** Versions reported by GET /api/version and the OpenAPI document. */
import { PROTOCOL_VERSION } from "@tern/protocol";
import pkg from "../package.json" with { type: "json" };

export const SERVER_VERSION: string = pkg.version;
/** The REST API's version; raised on a backward-incompatible change of /api. */
export const API_VERSION = 1;
export { PROTOCOL_VERSION };
