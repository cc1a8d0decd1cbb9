/** Friendly names for the API's schemas, all derived from the generated OpenAPI types (never retyped by hand). */
import type { components, operations, paths } from "./api-schema.d.ts";

export type { components, operations, paths };
export type Schemas = components["schemas"];

export type ErrorBody = Schemas["ErrorBody"];
/** The machine codes of the API's error body. */
export type ApiErrorCode = ErrorBody["code"];
export type TokenPair = Schemas["TokenPair"];
export type Organization = Schemas["Organization"];
export type Device = Schemas["Device"];
export type DeviceSummary = Schemas["DeviceSummary"];
export type Tunnel = Schemas["Tunnel"];
export type TunnelSummary = Schemas["TunnelSummary"];
export type TunnelCreate = Schemas["TunnelCreate"];
export type Peer = Schemas["Peer"];
export type PeerPreset = Schemas["PeerPreset"];
export type Job = Schemas["Job"];
export type Notification = Schemas["Notification"];
export type AccessToken = Schemas["AccessToken"];
export type AccessTokenCreate = Schemas["AccessTokenCreate"];
export type AccessTokenCreated = Schemas["AccessTokenCreated"];
export type RegistrationToken = Schemas["RegistrationToken"];
export type RegistrationTokenCreated = Schemas["RegistrationTokenCreated"];
/** The resources of an access token's permission masks (get=1 post=2 put=4 del=8). */
export type PermissionResource = keyof NonNullable<AccessTokenCreate["permissions"]>;
