import { Membership, MembershipCreate, MembershipUpdate } from "@tern/protocol";

export const MembershipSchema = Membership.openapi("Membership");
export const MembershipCreateSchema = MembershipCreate.openapi("MembershipCreate");
export const MembershipUpdateSchema = MembershipUpdate.openapi("MembershipUpdate");
