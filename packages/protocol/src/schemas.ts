/** Every named schema, by name: used by fixtures, tests and documentation. */
import type * as z from "zod";
import { AppActionRequest, PurchasedApp } from "./appstore.ts";
import { RegisterRequest } from "./connect.ts";
import { Bgp, Device, DeviceUpdate, DhcpServer, Firewall, StaticRoute } from "./device.ts";
import { DeviceConfig } from "./device-config.ts";
import { BgpStatusResponse, InterfaceStatusResponse } from "./device-status.ts";
import { ErrorBody } from "./errors.ts";
import { Job } from "./job.ts";
import { ListQuery } from "./list-query.ts";
import { DeviceMessage, ServerMessage } from "./messages.ts";
import { EmailConf, Notification, NotificationsConf, WebhookConfUpdate } from "./notification.ts";
import { PeerCreate } from "./peer.ts";
import { MlPolicyCreate, PathLabelCreate } from "./policy.ts";
import { AccessTokenCreate, Account, LoginRequest, OrganizationCreate } from "./tenancy.ts";
import { Tunnel, TunnelCreate, TunnelNotificationsUpdate } from "./tunnel.ts";
import { VrrpGroupCreate, VrrpGroupStatus } from "./vrrp.ts";

export const SCHEMAS = {
  AccessTokenCreate,
  Account,
  AppActionRequest,
  Bgp,
  BgpStatusResponse,
  Device,
  DeviceConfig,
  DeviceMessage,
  DeviceUpdate,
  DhcpServer,
  EmailConf,
  ErrorBody,
  Firewall,
  InterfaceStatusResponse,
  Job,
  ListQuery,
  LoginRequest,
  MlPolicyCreate,
  Notification,
  NotificationsConf,
  OrganizationCreate,
  PathLabelCreate,
  PeerCreate,
  PurchasedApp,
  RegisterRequest,
  ServerMessage,
  StaticRoute,
  Tunnel,
  TunnelCreate,
  TunnelNotificationsUpdate,
  VrrpGroupCreate,
  VrrpGroupStatus,
  WebhookConfUpdate,
} satisfies Record<string, z.ZodType>;
export type SchemaName = keyof typeof SCHEMAS;
