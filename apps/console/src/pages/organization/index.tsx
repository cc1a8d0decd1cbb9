/**
 * Organization: members and invitations, access tokens, registration tokens,
 * the audit log and the organization's settings (tunnel range). Tabs a role
 * cannot read are not shown. Switching organizations is in the header.
 */
import { Stack, Tabs, Title } from "@mantine/core";
import { useSearchParams } from "react-router";
import { useCan } from "../../session/permissions.ts";
import { useOrg } from "../../session/session-context.ts";
import { AccessTokens } from "./AccessTokens.tsx";
import { Audit } from "./Audit.tsx";
import { Members } from "./Members.tsx";
import { RegistrationTokens } from "./RegistrationTokens.tsx";
import { Settings } from "./Settings.tsx";

export default function OrganizationPage() {
  const org = useOrg();
  const [params, setParams] = useSearchParams();
  const tabs = [
    { value: "members", label: "Members", show: useCan("members", "get"), panel: <Members /> },
    { value: "accesstokens", label: "Access tokens", show: useCan("accesstokens", "get"), panel: <AccessTokens /> },
    { value: "tokens", label: "Registration tokens", show: useCan("tokens", "get"), panel: <RegistrationTokens /> },
    { value: "audit", label: "Audit log", show: useCan("audit", "get"), panel: <Audit /> },
    { value: "settings", label: "Settings", show: useCan("organizations", "get"), panel: <Settings /> },
  ].filter((t) => t.show);
  const tab = tabs.find((t) => t.value === params.get("tab"))?.value ?? tabs[0]?.value ?? null;
  return (
    <Stack>
      <Title order={1} size="h2">
        Organization: {org.name}
      </Title>
      <Tabs value={tab} onChange={(v) => v && setParams({ tab: v }, { replace: true })} keepMounted={false}>
        <Tabs.List>
          {tabs.map((t) => (
            <Tabs.Tab key={t.value} value={t.value}>
              {t.label}
            </Tabs.Tab>
          ))}
        </Tabs.List>
        {tabs.map((t) => (
          <Tabs.Panel key={t.value} value={t.value} pt="md">
            {t.panel}
          </Tabs.Panel>
        ))}
      </Tabs>
    </Stack>
  );
}
