import { Account, AccountUpdate } from "@tern/protocol";

export const AccountSchema = Account.openapi("Account");
export const AccountUpdateSchema = AccountUpdate.openapi("AccountUpdate");
