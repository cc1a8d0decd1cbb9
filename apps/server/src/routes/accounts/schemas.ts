import { Account, AccountUpdate, SignupRequest, SignupResult, SignupVerify } from "@tern/protocol";

export const AccountSchema = Account.meta({ id: "Account" });
export const AccountUpdateSchema = AccountUpdate.meta({ id: "AccountUpdate" });
export const SignupRequestSchema = SignupRequest.meta({ id: "SignupRequest" });
export const SignupVerifySchema = SignupVerify.meta({ id: "SignupVerify" });
export const SignupResultSchema = SignupResult.meta({ id: "SignupResult" });
