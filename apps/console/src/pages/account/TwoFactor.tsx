/**
 * Two-factor sign-in (TOTP) on the account page. Enrolment: the password,
 * then the new secret as a QR code and as text (shown only during this
 * enrolment: the API never answers it again), then a code from the app
 * confirms it and the 10 recovery codes are shown once, to copy or download.
 * When on: new recovery codes, or turning it off, each with the password
 * and a current code (or a recovery code).
 */
import {
  Alert,
  Button,
  Card,
  CopyButton,
  Group,
  List,
  PasswordInput,
  SegmentedControl,
  SimpleGrid,
  Stack,
  Text,
  TextInput,
  Title,
} from "@mantine/core";
import { useQuery, useQueryClient } from "@tanstack/react-query";
import { ok } from "@tern/client";
import { useState } from "react";
import { tern } from "../../api/tern.ts";
import { useBranding } from "../../app/branding.ts";
import { ErrorAlert, QueryState } from "../../components/QueryState.tsx";
import { tone } from "../../components/tones.ts";
import { useAction } from "../../components/useAction.ts";
import { useSession } from "../../session/session-context.ts";
import { groupSecret, recoveryCodesText, totpCode } from "./mfa.ts";
import { QrCode } from "./QrCode.tsx";

const MFA_KEY = ["account", "mfa"];
const when = (iso: string | null) => (iso ? new Date(iso).toLocaleString() : "–");

interface Enrolment {
  secret: string;
  otpauthUrl: string;
}

export function TwoFactor() {
  const queryClient = useQueryClient();
  const status = useQuery({ queryKey: MFA_KEY, queryFn: () => ok(tern.api.GET("/api/users/me/mfa")) });
  const [enrolment, setEnrolment] = useState<Enrolment | null>(null);
  const [codes, setCodes] = useState<string[] | null>(null);
  const refresh = () => queryClient.invalidateQueries({ queryKey: MFA_KEY });

  return (
    <Card withBorder component="section" aria-labelledby="account-mfa">
      <Title order={2} size="h4" id="account-mfa" mb="sm">
        Two-factor sign-in
      </Title>
      {codes ? (
        <RecoveryCodes codes={codes} onDone={() => setCodes(null)} />
      ) : enrolment ? (
        <Confirm
          enrolment={enrolment}
          onCancel={() => setEnrolment(null)}
          onConfirmed={(recoveryCodes) => {
            setEnrolment(null);
            setCodes(recoveryCodes);
            void refresh();
          }}
        />
      ) : (
        <QueryState query={status} label="the two-factor state">
          {(s) =>
            s.enabled ? (
              <Enabled
                since={when(s.enabledAt)}
                left={s.recoveryCodesLeft}
                onCodes={(recoveryCodes) => {
                  setCodes(recoveryCodes);
                  void refresh();
                }}
                onDisabled={() => void refresh()}
              />
            ) : (
              <Start pending={s.pending} onStarted={setEnrolment} />
            )
          }
        </QueryState>
      )}
    </Card>
  );
}

function Start({ pending, onStarted }: { pending: boolean; onStarted: (e: Enrolment) => void }) {
  const action = useAction();
  const [password, setPassword] = useState("");
  const start = async () => {
    let answer: Enrolment | null = null;
    await action.run(async () => {
      answer = await ok(tern.api.POST("/api/users/me/mfa/enrol", { body: password ? { password } : {} }));
    });
    if (answer) onStarted(answer);
  };
  return (
    <form
      onSubmit={(e) => {
        e.preventDefault();
        void start();
      }}
    >
      <Stack gap="sm">
        <Text size="sm">
          Off. With it on, signing in asks for a code from an authenticator app (or one of 10 recovery codes) after the password.
          {pending && " A set-up was started and not finished: start again to get a new secret."}
        </Text>
        <PasswordInput
          label="Your password"
          description="Leave empty if your account signs in with single sign-on only"
          autoComplete="current-password"
          value={password}
          onChange={(e) => setPassword(e.currentTarget.value)}
        />
        {action.error !== null && <ErrorAlert title="Two-factor set-up refused" error={action.error} />}
        <Group justify="flex-end">
          <Button type="submit" loading={action.busy}>
            Set up two-factor sign-in
          </Button>
        </Group>
      </Stack>
    </form>
  );
}

function Confirm({
  enrolment,
  onCancel,
  onConfirmed,
}: {
  enrolment: Enrolment;
  onCancel: () => void;
  onConfirmed: (codes: string[]) => void;
}) {
  const action = useAction();
  const [code, setCode] = useState("");
  const confirm = async () => {
    let codes: string[] | null = null;
    await action.run(async () => {
      codes = (await ok(tern.api.POST("/api/users/me/mfa/confirm", { body: { code: totpCode(code) } }))).recoveryCodes;
    });
    if (codes) onConfirmed(codes);
  };
  return (
    <form
      onSubmit={(e) => {
        e.preventDefault();
        void confirm();
      }}
    >
      <Stack gap="sm">
        <Text size="sm">
          Scan the code with an authenticator app (or type the key into it), then enter the 6-digit code it shows. The key is
          shown only now.
        </Text>
        <Group align="flex-start" gap="lg">
          <QrCode text={enrolment.otpauthUrl} label="QR code of the authenticator set-up link" />
          <Stack gap={4} align="flex-start">
            <Text size="sm" fw={600}>
              Key
            </Text>
            <Text ff="monospace" data-testid="mfa-secret" data-secret={enrolment.secret}>
              {groupSecret(enrolment.secret)}
            </Text>
            <CopyButton value={enrolment.secret}>
              {({ copied, copy }) => (
                <Button size="xs" variant="default" onClick={copy}>
                  {copied ? "Copied" : "Copy the key"}
                </Button>
              )}
            </CopyButton>
          </Stack>
        </Group>
        <TextInput
          label="Code from the app"
          inputMode="numeric"
          autoComplete="one-time-code"
          maxLength={7}
          maw={240}
          required
          value={code}
          onChange={(e) => setCode(e.currentTarget.value)}
          data-autofocus
        />
        {action.error !== null && <ErrorAlert title="Not confirmed" error={action.error} />}
        <Group justify="flex-end">
          <Button variant="default" onClick={onCancel}>
            Cancel
          </Button>
          <Button type="submit" loading={action.busy}>
            Turn on two-factor sign-in
          </Button>
        </Group>
      </Stack>
    </form>
  );
}

function RecoveryCodes({ codes, onDone }: { codes: string[]; onDone: () => void }) {
  const { session } = useSession();
  const branding = useBranding();
  const text = recoveryCodesText(codes, session?.user.email ?? "", branding.productName);
  const download = () => {
    const url = URL.createObjectURL(new Blob([text], { type: "text/plain" }));
    const a = document.createElement("a");
    a.href = url;
    a.download = `${branding.productName.toLowerCase().replace(/[^a-z0-9]+/g, "-")}-recovery-codes.txt`;
    a.click();
    setTimeout(() => URL.revokeObjectURL(url), 1000);
  };
  return (
    <Stack gap="sm">
      <Alert color={tone.warn} variant="outline" title="Save your recovery codes now">
        They are shown only once. Each signs in once without the authenticator app, if you lose it.
      </Alert>
      <SimpleGrid
        cols={{ base: 1, xs: 2 }}
        spacing="xs"
        maw={480}
        component="ul"
        aria-label="Recovery codes"
        data-testid="recovery-codes"
        p={0}
        m={0}
      >
        {codes.map((c) => (
          <Text component="li" key={c} ff="monospace" style={{ listStyle: "none" }}>
            {c}
          </Text>
        ))}
      </SimpleGrid>
      <Group justify="flex-end">
        <CopyButton value={codes.join("\n")}>
          {({ copied, copy }) => (
            <Button variant="default" onClick={copy}>
              {copied ? "Copied" : "Copy"}
            </Button>
          )}
        </CopyButton>
        <Button variant="default" onClick={download}>
          Download
        </Button>
        <Button onClick={onDone}>I have saved them</Button>
      </Group>
    </Stack>
  );
}

function Enabled({
  since,
  left,
  onCodes,
  onDisabled,
}: {
  since: string;
  left: number;
  onCodes: (codes: string[]) => void;
  onDisabled: () => void;
}) {
  const action = useAction();
  const [password, setPassword] = useState("");
  const [kind, setKind] = useState<"code" | "recoveryCode">("code");
  const [proof, setProof] = useState("");
  const body = () => ({
    ...(password ? { password } : {}),
    ...(kind === "code" ? { code: totpCode(proof) } : { recoveryCode: proof.trim() }),
  });
  const regenerate = async () => {
    let codes: string[] | null = null;
    await action.run(async () => {
      codes = (await ok(tern.api.POST("/api/users/me/mfa/recovery-codes", { body: body() }))).recoveryCodes;
    });
    if (codes) onCodes(codes);
  };
  const disable = async () => {
    if (await action.run(() => ok(tern.api.POST("/api/users/me/mfa/disable", { body: body() })))) onDisabled();
  };
  return (
    <Stack gap="sm">
      <Text size="sm" data-testid="mfa-state">
        On since {since}; {left} recovery codes left.
      </Text>
      <List size="sm">
        <List.Item>New recovery codes replace all the old ones.</List.Item>
        <List.Item>Turning it off removes the key and the recovery codes.</List.Item>
      </List>
      <PasswordInput
        label="Your password"
        autoComplete="current-password"
        value={password}
        onChange={(e) => setPassword(e.currentTarget.value)}
      />
      <SegmentedControl
        aria-label="Prove it with"
        value={kind}
        onChange={(v) => setKind(v as typeof kind)}
        data={[
          { value: "code", label: "App code" },
          { value: "recoveryCode", label: "Recovery code" },
        ]}
      />
      <TextInput
        label={kind === "code" ? "Code from the app" : "Recovery code"}
        autoComplete="one-time-code"
        value={proof}
        onChange={(e) => setProof(e.currentTarget.value)}
      />
      {action.error !== null && <ErrorAlert title="Refused" error={action.error} />}
      <Group justify="flex-end">
        <Button variant="default" loading={action.busy} onClick={() => void regenerate()}>
          New recovery codes
        </Button>
        <Button color="red.8" loading={action.busy} onClick={() => void disable()}>
          Turn off two-factor sign-in
        </Button>
      </Group>
    </Stack>
  );
}
