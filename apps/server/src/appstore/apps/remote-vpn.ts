/**
 * Remote worker VPN: IKEv2 remote access on the organization's routers with
 * strongSwan (virtual IP pool, DNS, split tunnel to chosen LANs, EAP-MSCHAPv2
 * users and users with certificates). The server keeps an organization CA
 * (key encrypted at rest) that issues the routers' server certificate and the
 * users' certificates. Actions that change what routers run name the devices,
 * and the app store queues their jobs (services/appstore.ts).
 */
import { ApiError, conflict } from "../../http/errors.ts";
import { certificateInfo, issueFromCa } from "../certificate.ts";
import { type AppDefinition, defineAction } from "../types.ts";
import { installedDevices, installOnDevice, uninstallFromDevice } from "./remote-vpn/install.ts";
import { AddUserParams, DeviceParams, InstallParams, RemoveUserParams, UpdateCertificateParams } from "./remote-vpn/params.ts";
import {
  asState,
  DEFAULT_SERVER_ID,
  eapPasswords,
  ensureCa,
  type RemoteVpnState,
  type RemoteVpnUser,
  sealEapPasswords,
  USER_CERT_VALIDITY_DAYS,
  withCrl,
  withServerCertificate,
} from "./remote-vpn/state.ts";

const publicCertificate = (s: RemoteVpnState) => ({ serverId: s.serverId, ...s.certificate, ca: s.ca?.pem });

export const remoteVpn: AppDefinition = {
  id: "remote-vpn",
  name: "Remote worker VPN",
  description:
    "IKEv2 remote access for remote workers to the organization's LANs (strongSwan on the router): virtual IP pool, DNS, split tunnel, EAP-MSCHAPv2 or certificate users, server certificate from an organization CA the server keeps.",
  actions: {
    install: defineAction({
      description:
        "Run the VPN on a device (again: change its settings). Params: device (id), pool (e.g. 10.99.0.0/24), dns (comma list), subnets (comma list; default the device's LAN subnets). Creates the CA and server certificate on first use.",
      params: InstallParams,
      async run({ ctx, purchaseId, state: raw }, params) {
        let state = asState(raw);
        if (!state.certificate) {
          const opened = await ensureCa(ctx.keyring, purchaseId, ctx.org.name, state);
          state = await withServerCertificate(ctx.keyring, purchaseId, opened.state, opened.ca, DEFAULT_SERVER_ID, 365);
          state = await withCrl(state, opened.ca);
        }
        const { device, settings, replaced } = await installOnDevice(ctx, purchaseId, params);
        return {
          state,
          result: { device, ...settings, serverId: state.serverId, ca: state.ca?.pem },
          summary: `${replaced ? "settings changed on" : "installed on"} ${device.name}: pool ${settings.pool}, subnets ${settings.subnets.join(" ")}`,
          devices: [device.id],
        };
      },
    }),
    uninstall: defineAction({
      description: "Stop the VPN on a device (its configuration is removed from the router). Params: device (id).",
      params: DeviceParams,
      async run({ ctx, purchaseId, state }, { device }) {
        if (!(await uninstallFromDevice(ctx, purchaseId, device)))
          throw new ApiError("NOT_FOUND", "the application is not installed on that device", [
            { path: "params.device", message: "not installed on this device" },
          ]);
        return { state, result: { device }, summary: `uninstalled from ${device}`, devices: [device] };
      },
    }),
    updateCertificate: defineAction({
      description:
        "Issue a new server certificate from the organization CA and roll it out to every device running the VPN (one job each). Params: validityDays 1-825 (default 365), commonName (the server identity clients check; default the current one).",
      params: UpdateCertificateParams,
      async run({ ctx, purchaseId, state: raw }, params) {
        const opened = await ensureCa(ctx.keyring, purchaseId, ctx.org.name, asState(raw));
        const serverId = params.commonName ?? opened.state.serverId ?? DEFAULT_SERVER_ID;
        let state = await withServerCertificate(ctx.keyring, purchaseId, opened.state, opened.ca, serverId, params.validityDays);
        state = await withCrl(state, opened.ca);
        const devices = await installedDevices(ctx, purchaseId);
        return {
          state,
          result: { ...publicCertificate(state), devices: devices.length },
          summary: `certificate ${state.certificate?.fingerprintSha256.slice(0, 23)}… for ${serverId} valid until ${state.certificate?.notAfter}, ${devices.length} devices`,
          devices,
        };
      },
    }),
    addUser: defineAction({
      description:
        "Add a remote user. Params: name; password (8-128, EAP-MSCHAPv2; write-only) or auth=certificate (a certificate of the organization CA is issued and answered once with its private key, which the server does not keep).",
      params: AddUserParams,
      secretParams: ["password"],
      async run({ ctx, purchaseId, state: raw }, params) {
        const opened = await ensureCa(ctx.keyring, purchaseId, ctx.org.name, asState(raw));
        let state = opened.state;
        const users = state.users ?? [];
        if (users.some((u) => u.name === params.name))
          throw conflict(`user ${params.name} exists`, [{ path: "params.name", message: "remove the user first to replace it" }]);
        const user: RemoteVpnUser = { name: params.name, auth: params.auth, addedAt: new Date().toISOString() };
        let result: Record<string, unknown> = { name: params.name, auth: params.auth };
        if (params.auth === "eap") {
          const passwords = { ...eapPasswords(ctx.keyring, purchaseId, state), [params.name]: params.password as string };
          state = { ...state, eapPasswordsEnc: sealEapPasswords(ctx.keyring, purchaseId, passwords) };
        } else {
          const issued = await issueFromCa(opened.ca, {
            commonName: params.name,
            validityDays: USER_CERT_VALIDITY_DAYS,
            usage: "client",
          });
          const info = certificateInfo(issued);
          user.certificate = {
            serialNumber: info.serialNumber,
            fingerprintSha256: info.fingerprintSha256,
            notAfter: info.notAfter,
          };
          // Answered once: the user's client needs the key; the server keeps only the certificate's serial.
          result = {
            ...result,
            certificate: info.pem,
            privateKey: issued.privateKeyPem,
            ca: state.ca?.pem,
            serverId: state.serverId,
          };
        }
        state = await withCrl({ ...state, users: [...users, user] }, opened.ca);
        const devices = await installedDevices(ctx, purchaseId);
        return { state, result, summary: `user ${params.name} added (${params.auth})`, devices };
      },
    }),
    removeUser: defineAction({
      description:
        "Remove a remote user from every device (a certificate user's certificate goes on the CA's CRL, which the routers check). Params: name.",
      params: RemoveUserParams,
      async run({ ctx, purchaseId, state: raw }, { name }) {
        const opened = await ensureCa(ctx.keyring, purchaseId, ctx.org.name, asState(raw));
        let state = opened.state;
        const user = (state.users ?? []).find((u) => u.name === name);
        if (!user)
          throw new ApiError("NOT_FOUND", `no user ${name}`, [
            { path: "params.name", message: `users: ${(state.users ?? []).map((u) => u.name).join(", ") || "none"}` },
          ]);
        const passwords = eapPasswords(ctx.keyring, purchaseId, state);
        delete passwords[name];
        state = {
          ...state,
          users: (state.users ?? []).filter((u) => u.name !== name),
          eapPasswordsEnc: sealEapPasswords(ctx.keyring, purchaseId, passwords),
          revoked: user.certificate
            ? [...(state.revoked ?? []), { serialNumber: user.certificate.serialNumber, at: new Date().toISOString() }]
            : state.revoked,
        };
        state = await withCrl(state, opened.ca);
        const devices = await installedDevices(ctx, purchaseId);
        return {
          state,
          result: { name, revoked: user.certificate?.serialNumber ?? null },
          summary: `user ${name} removed`,
          devices,
        };
      },
    }),
  },
};
