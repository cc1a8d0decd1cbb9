import { Account, AccountUpdate } from "@tern/protocol";

export const AccountSchema = Account.meta({ id: "Account" });
export const AccountUpdateSchema = AccountUpdate.meta({ id: "AccountUpdate" });
