import { Invitation, InvitationAccept, InvitationCreate } from "@tern/protocol";

export const InvitationSchema = Invitation.meta({ id: "Invitation" });
export const InvitationCreateSchema = InvitationCreate.meta({ id: "InvitationCreate" });
export const InvitationAcceptSchema = InvitationAccept.meta({ id: "InvitationAccept" });
