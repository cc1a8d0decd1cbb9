/**
 * Sign-in (POST /api/console/session): e-mail and password, then, when the
 * answer is the second-factor challenge, a second step asking for the code of
 * the authenticator app or one recovery code. A challenge that died (expired,
 * used, too many wrong codes: 401) starts over at the password. The
 * branding's logo and product name are shown, as in the header.
 */
import { Alert, Anchor, Button, Center, Paper, PasswordInput, Stack, Text, TextInput, Title } from "@mantine/core";
import { type FormEvent, useState } from "react";
import { Navigate, useSearchParams } from "react-router";
import { errorCode, errorText } from "../../api/errors.ts";
import { useBranding } from "../../app/branding.ts";
import { ProductMark } from "../../app/Shell.tsx";
import { useSession } from "../../session/session-context.ts";

export default function SignInPage() {
  const { session, signIn } = useSession();
  const branding = useBranding();
  const [params] = useSearchParams();
  const [email, setEmail] = useState("");
  const [password, setPassword] = useState("");
  const [code, setCode] = useState("");
  const [challenge, setChallenge] = useState<string | null>(null);
  const [recoveryMode, setRecoveryMode] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);

  const next = params.get("next");
  if (session) return <Navigate to={next?.startsWith("/") && !next.startsWith("//") ? next : "/"} replace />;

  const restart = () => {
    setChallenge(null);
    setRecoveryMode(false);
    setCode("");
    setPassword("");
  };

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      if (challenge) {
        const proof = recoveryMode ? { recoveryCode: code.trim() } : { code: code.replace(/\s/g, "") };
        await signIn({ challenge, ...proof });
      } else {
        const answer = await signIn({ username: email.trim(), password });
        if (answer) {
          setChallenge(answer.challenge);
          setCode("");
        }
      }
    } catch (err) {
      // The challenge is no longer valid: sign in with the password again.
      if (challenge && errorCode(err) === "UNAUTHENTICATED") restart();
      setError(err);
    } finally {
      setBusy(false);
    }
  };

  return (
    <Center mih="100vh" p="md" component="main">
      <Paper withBorder shadow="sm" p="xl" radius="md" w={380}>
        <form onSubmit={submit}>
          <Stack>
            <ProductMark />
            <Title order={1} size="h3">
              Sign in to {branding.productName}
            </Title>
            {error !== null && (
              <Alert color="red" role="alert" title="Sign-in failed">
                {errorText(error)}
              </Alert>
            )}
            {challenge === null ? (
              <>
                <TextInput
                  label="E-mail"
                  type="email"
                  autoComplete="username"
                  required
                  value={email}
                  onChange={(e) => setEmail(e.currentTarget.value)}
                  autoFocus
                />
                <PasswordInput
                  label="Password"
                  autoComplete="current-password"
                  required
                  value={password}
                  onChange={(e) => setPassword(e.currentTarget.value)}
                />
              </>
            ) : (
              <>
                <Text size="sm">
                  Two-factor sign-in for {email.trim()}:{" "}
                  {recoveryMode ? "enter one of your recovery codes." : "enter the 6-digit code of your authenticator app."}
                </Text>
                <TextInput
                  key={recoveryMode ? "recovery" : "code"}
                  label={recoveryMode ? "Recovery code" : "Authentication code"}
                  autoComplete="one-time-code"
                  inputMode={recoveryMode ? "text" : "numeric"}
                  required
                  value={code}
                  onChange={(e) => setCode(e.currentTarget.value)}
                  autoFocus
                />
                <Anchor
                  component="button"
                  type="button"
                  size="sm"
                  onClick={() => {
                    setRecoveryMode(!recoveryMode);
                    setCode("");
                  }}
                >
                  {recoveryMode ? "Use the authenticator app instead" : "Use a recovery code instead"}
                </Anchor>
              </>
            )}
            <Button type="submit" loading={busy}>
              {challenge === null ? "Sign in" : "Verify"}
            </Button>
            {challenge !== null && (
              <Button variant="subtle" onClick={restart}>
                Start over
              </Button>
            )}
          </Stack>
        </form>
      </Paper>
    </Center>
  );
}
