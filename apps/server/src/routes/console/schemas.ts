import { ConsoleSession, ConsoleSignIn } from "@tern/protocol";

export const ConsoleSessionSchema = ConsoleSession.meta({ id: "ConsoleSession" });
export const ConsoleSignInSchema = ConsoleSignIn.meta({ id: "ConsoleSignIn" });
