import { Membership, MembershipCreate, MembershipUpdate } from "@tern/protocol";

export const MembershipSchema = Membership.meta({ id: "Membership" });
export const MembershipCreateSchema = MembershipCreate.meta({ id: "MembershipCreate" });
export const MembershipUpdateSchema = MembershipUpdate.meta({ id: "MembershipUpdate" });
