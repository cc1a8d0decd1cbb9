/**
 * Sign-in (POST /api/console/session): e-mail and password, then the
 * two-factor code when the account asks for one. The branding's logo and
 * product name are shown, as in the header.
 */
import { Alert, Button, Center, Paper, PasswordInput, Stack, TextInput, Title } from "@mantine/core";
import { type FormEvent, useState } from "react";
import { Navigate, useSearchParams } from "react-router";
import { errorText } from "../../api/errors.ts";
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
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);

  const next = params.get("next");
  if (session) return <Navigate to={next?.startsWith("/") && !next.startsWith("//") ? next : "/"} replace />;

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      if (challenge) {
        // Six digits are a TOTP code; anything else is one of the recovery codes.
        const proof = /^\d{6}$/.test(code.trim()) ? { code: code.trim() } : { recoveryCode: code.trim() };
        await signIn({ challenge, ...proof });
      } else {
        const answer = await signIn({ username: email.trim(), password });
        if (answer) setChallenge(answer.challenge);
      }
    } catch (err) {
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
            {challenge !== null && (
              <TextInput
                label="Two-factor code"
                description="The 6-digit code of your authenticator app, or a recovery code"
                autoComplete="one-time-code"
                required
                value={code}
                onChange={(e) => setCode(e.currentTarget.value)}
                autoFocus
              />
            )}
            <Button type="submit" loading={busy}>
              Sign in
            </Button>
          </Stack>
        </form>
      </Paper>
    </Center>
  );
}
