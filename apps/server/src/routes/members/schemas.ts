import { Membership, MembershipUpdate } from "@tern/protocol";

export const MembershipSchema = Membership.meta({ id: "Membership" });
export const MembershipUpdateSchema = MembershipUpdate.meta({ id: "MembershipUpdate" });
