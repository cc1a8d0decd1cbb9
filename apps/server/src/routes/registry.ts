/**
 * Every API route, registered explicitly in one place. Add a route: write
 * routes/<resource>/<operation>.ts exporting `route` (from defineRoute) and
 * `register(app)`, then add it to ROUTES. The security matrix test walks the
 * OpenAPI document, so a new route is covered without touching the test.
 */
import type { ApiApp } from "../http/env.ts";
import * as accessTokensCreate from "./accesstokens/create.ts";
import * as accessTokensDelete from "./accesstokens/delete.ts";
import * as accessTokensList from "./accesstokens/list.ts";
import * as accountsList from "./accounts/list.ts";
import * as accountsUpdate from "./accounts/update.ts";
import * as auditList from "./audit/list.ts";
import * as membersCreate from "./members/create.ts";
import * as membersDelete from "./members/delete.ts";
import * as membersList from "./members/list.ts";
import * as membersUpdate from "./members/update.ts";
import * as organizationsCreate from "./organizations/create.ts";
import * as organizationsDelete from "./organizations/delete.ts";
import * as organizationsGet from "./organizations/get.ts";
import * as organizationsList from "./organizations/list.ts";
import * as organizationsUpdate from "./organizations/update.ts";
import * as health from "./system/health.ts";
import * as version from "./system/version.ts";
import * as usersLogin from "./users/login.ts";
import * as usersLogout from "./users/logout.ts";
import * as usersRefresh from "./users/refresh.ts";

export interface RouteModule {
  register(app: ApiApp): void;
}

export const ROUTES: readonly RouteModule[] = [
  health,
  version,
  usersLogin,
  usersRefresh,
  usersLogout,
  accountsList,
  accountsUpdate,
  organizationsList,
  organizationsCreate,
  organizationsGet,
  organizationsUpdate,
  organizationsDelete,
  membersList,
  membersCreate,
  membersUpdate,
  membersDelete,
  accessTokensList,
  accessTokensCreate,
  accessTokensDelete,
  auditList,
];

export function registerRoutes(app: ApiApp): void {
  for (const route of ROUTES) route.register(app);
}
