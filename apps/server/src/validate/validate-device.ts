/** Every check `PUT /devices/{id}` runs on the device as it would be stored (body merged over the current device). */
import { checkBgp } from "./device-bgp.ts";
import { checkDhcp } from "./device-dhcp.ts";
import { checkFirewall } from "./device-firewall.ts";
import type { DeviceValidationContext, DeviceValidationInput } from "./device-input.ts";
import { checkInterfaces } from "./device-interfaces.ts";
import { checkStaticRoutes } from "./device-routes.ts";
import type { Problem } from "./problem.ts";

/** Problems inside one device's configuration (LAN overlap with other devices is `checkLanOverlap`). */
export function validateDevice(device: DeviceValidationInput, context: DeviceValidationContext = {}): Problem[] {
  return [
    ...checkInterfaces(device, context),
    ...checkStaticRoutes(device, context),
    ...checkDhcp(device),
    ...checkBgp(device, context),
    ...checkFirewall(device),
  ];
}
