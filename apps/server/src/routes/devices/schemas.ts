import { z } from "@hono/zod-openapi";
import {
  BgpStatusResponse,
  Device,
  DeviceResponseType,
  DeviceSummary,
  DeviceUpdate,
  DeviceUpdateQuery,
  Id,
  InterfaceStatusResponse,
  RemoveVrrpQuery,
} from "@tern/protocol";
import { BooleanFlag, IdsParam } from "../../http/ids-query.ts";
import { AfterParam, ListQuerySchema } from "../../http/list-query.ts";

export const DeviceSchema = Device.meta({ id: "Device" });
export const DeviceSummarySchema = DeviceSummary.meta({ id: "DeviceSummary" });
/**
 * The protocol's DeviceUpdate. Its refused pre-5.1.1 field is `z.never()`,
 * which has no OpenAPI form: it is documented as the deprecated boolean it
 * was, and any value still fails validation naming the new field.
 */
export const DeviceUpdateSchema = DeviceUpdate.extend({
  deviceSpecifficRulesEnabled: DeviceUpdate.shape.deviceSpecifficRulesEnabled.meta({
    type: "boolean",
    deprecated: true,
    description:
      "Removed: the pre-5.1.1 spelling. Any value is refused (VALIDATION_FAILED) with a message naming deviceSpecificRulesEnabled.",
  } as Record<string, unknown>),
}).meta({ id: "DeviceUpdate" });
export const InterfaceStatusResponseSchema = InterfaceStatusResponse.meta({ id: "InterfaceStatusResponse" });
export const BgpStatusResponseSchema = BgpStatusResponse.meta({ id: "BgpStatusResponse" });

export const DeviceListQuery = ListQuerySchema.extend({
  response: DeviceResponseType.default("detailed").meta({
    description: "detailed (default): whole devices; summary: name, state and interface addresses; ids: only the ids",
  }),
  ids: IdsParam.optional(),
  ...AfterParam,
});

export const DeviceUpdateQuerySchema = DeviceUpdateQuery.extend({
  allowOverlapping: DeviceUpdateQuery.shape.allowOverlapping.meta({
    description: "true: accept a LAN subnet that overlaps another device's LAN (LAN_OVERLAPPING otherwise)",
  }),
});

export const RemoveVrrpQuerySchema = RemoveVrrpQuery.extend({
  removeVrrp: RemoveVrrpQuery.shape.removeVrrp.meta({
    description: "true: remove the device from its VRRP groups; false (default): refuse with VRRP_INSTALLED_ON_DEVICE",
  }),
});

export const DeleteDevicesQuery = RemoveVrrpQuerySchema.extend({
  filter: ListQuerySchema.shape.filter,
  filters: ListQuerySchema.shape.filters,
  ids: IdsParam.optional(),
  all: BooleanFlag.meta({ description: "true: with no filter and no ids, delete every device of the organization" }),
});

export const DevicesDeletedSchema = z.object({ deviceIds: z.array(Id), jobIds: z.array(Id) }).meta({ id: "DevicesDeleted" });

export const StatusQuery = z.object({
  live: BooleanFlag.meta({
    description:
      "true: ask the connected device now (source live; 409 DEVICE_NOT_CONNECTED when it is not connected, 504 DEVICE_TIMEOUT when it does not answer); false (default): its last status message",
  }),
});

export const InterfaceParams = z.object({
  id: Id.meta({ param: { name: "id", in: "path" }, description: "Device id" }),
  interfaceId: Id.meta({ param: { name: "interfaceId", in: "path" }, description: "Interface id (not its devId)" }),
});
