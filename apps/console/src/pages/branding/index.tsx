/**
 * Branding (installation-wide, for installation administrators): the logo
 * (PNG or SVG, at most 256 KiB; the server sanitizes SVG), the product name
 * and the accent colour, shown in the header and on the sign-in page. The
 * session does not say who is an installation administrator (the owners of
 * the installation's first account), so the form is shown to owners and the
 * server's refusal, if any, is shown as it answers.
 */
import { Button, Card, ColorInput, ColorSwatch, FileButton, Group, Image, Stack, Text, TextInput, Title } from "@mantine/core";
import { useQueryClient } from "@tanstack/react-query";
import { apiErrorFrom, type Branding, ok } from "@tern/client";
import { useEffect, useState } from "react";
import { tern } from "../../api/tern.ts";
import { useBranding } from "../../app/branding.ts";
import { ErrorAlert } from "../../components/QueryState.tsx";
import { useAction } from "../../components/useAction.ts";
import { useSession } from "../../session/session-context.ts";
import { isAccentColor, LOGO_TYPES, logoProblem } from "./logo.ts";

async function uploadLogo(file: File): Promise<Branding> {
  const response = await tern.raw("/api/branding/logo", { method: "PUT", headers: { "content-type": file.type }, body: file });
  const body = await response.json().catch(() => null);
  if (!response.ok) throw apiErrorFrom(response.status, body);
  return body as Branding;
}

export default function BrandingPage() {
  const branding = useBranding();
  const { session } = useSession();
  const queryClient = useQueryClient();
  const mayEdit = session?.organizations.some((o) => o.role === "owner") ?? false;
  const action = useAction();
  const [name, setName] = useState(branding.productName);
  const [accent, setAccent] = useState(branding.accentColor);
  const [problem, setProblem] = useState<string | null>(null);
  const [saved, setSaved] = useState<string | null>(null);
  useEffect(() => {
    setName(branding.productName);
    setAccent(branding.accentColor);
  }, [branding.productName, branding.accentColor]);

  const apply = (next: Branding) => queryClient.setQueryData(["branding"], next);
  const run = async (what: string, write: () => Promise<Branding>) => {
    setSaved(null);
    if (await action.run(async () => apply(await write()))) setSaved(what);
  };
  const onFile = (file: File | null) => {
    if (!file) return;
    const why = logoProblem(file);
    setProblem(why);
    if (!why) void run("Logo uploaded", () => uploadLogo(file));
  };
  const saveText = () =>
    run("Saved", () =>
      ok(tern.api.PUT("/api/branding", { body: { productName: name.trim(), accentColor: accent.toLowerCase() } })),
    );

  return (
    <Stack maw={720}>
      <Title order={1} size="h2">
        Branding
      </Title>
      <Text size="sm">
        The logo, product name and accent colour of this installation, shown in the console's header and on the sign-in page for
        everyone.
      </Text>
      <Card withBorder component="section" aria-labelledby="branding-preview">
        <Title order={2} size="h4" id="branding-preview" mb="sm">
          Current
        </Title>
        <Group>
          <Image
            src={branding.logoUrl ?? "/tern.svg"}
            alt={branding.logoUrl ? "Current logo" : "Default logo"}
            h={48}
            w="auto"
            fit="contain"
          />
          <Text fw={700} size="xl">
            {branding.productName}
          </Text>
          <Group gap={6}>
            <ColorSwatch color={branding.accentColor} size={20} aria-hidden="true" />
            <Text size="sm">{branding.accentColor}</Text>
          </Group>
        </Group>
      </Card>
      {!mayEdit ? (
        <Text size="sm">
          Only an installation administrator (an owner of the installation's first account) can change the branding.
        </Text>
      ) : (
        <>
          <Card withBorder component="section" aria-labelledby="branding-logo">
            <Title order={2} size="h4" id="branding-logo" mb="sm">
              Logo
            </Title>
            <Text size="sm" mb="sm">
              PNG or SVG, at most 256 KiB. SVG files are cleaned of scripts and links by the server.
            </Text>
            <Group>
              <FileButton onChange={onFile} accept={LOGO_TYPES.join(",")}>
                {(props) => (
                  <Button {...props} loading={action.busy}>
                    Upload a logo
                  </Button>
                )}
              </FileButton>
              {branding.logoUrl && (
                <Button
                  variant="default"
                  loading={action.busy}
                  onClick={() => void run("Logo removed", () => ok(tern.api.DELETE("/api/branding/logo")))}
                >
                  Remove the logo
                </Button>
              )}
            </Group>
            {problem && (
              <Text size="sm" c="var(--mantine-color-error)" role="alert" mt="sm">
                {problem}
              </Text>
            )}
          </Card>
          <Card withBorder component="section" aria-labelledby="branding-text">
            <form
              onSubmit={(e) => {
                e.preventDefault();
                void saveText();
              }}
            >
              <Stack gap="sm">
                <Title order={2} size="h4" id="branding-text">
                  Name and colour
                </Title>
                <TextInput
                  label="Product name"
                  required
                  maxLength={64}
                  value={name}
                  onChange={(e) => setName(e.currentTarget.value)}
                />
                <ColorInput
                  label="Accent colour"
                  format="hex"
                  withEyeDropper={false}
                  value={accent}
                  onChange={setAccent}
                  error={isAccentColor(accent) ? undefined : "A colour as #rrggbb"}
                />
                <Group justify="flex-end">
                  <Button type="submit" loading={action.busy} disabled={!name.trim() || !isAccentColor(accent)}>
                    Save
                  </Button>
                </Group>
              </Stack>
            </form>
          </Card>
        </>
      )}
      {action.error !== null && <ErrorAlert title="Not changed" error={action.error} />}
      {saved && (
        <Text size="sm" role="status">
          {saved}
        </Text>
      )}
    </Stack>
  );
}
