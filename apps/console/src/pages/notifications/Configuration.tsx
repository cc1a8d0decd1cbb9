/**
 * The notification configuration of the organization: the rules per event
 * (thresholds, severity, e-mail, webhook), the e-mail recipients, the webhook
 * with a test delivery, the account's defaults for new organizations, and the
 * tunnel thresholds applied to every existing tunnel. Read-only for members
 * who cannot change it.
 */
import {
  Button,
  Card,
  Checkbox,
  Group,
  NumberInput,
  PasswordInput,
  Select,
  SimpleGrid,
  Stack,
  Switch,
  Table,
  Text,
  Textarea,
  TextInput,
  Title,
} from "@mantine/core";
import { useQuery, useQueryClient } from "@tanstack/react-query";
import { ok, type Schemas } from "@tern/client";
import { type ReactNode, useEffect, useState } from "react";
import { queryKey } from "../../api/keys.ts";
import { tern } from "../../api/tern.ts";
import { ErrorAlert, QueryState } from "../../components/QueryState.tsx";
import { readableDescription } from "../../components/readable.ts";
import { useAction } from "../../components/useAction.ts";
import { useCan } from "../../session/permissions.ts";
import { useOrg } from "../../session/session-context.ts";
import { type EventType, parseRecipients, type Rule, type Rules, ruleRows, tunnelThresholds } from "./conf.ts";

// The protocol's NotificationEvent in display order (a value import of @tern/protocol would bundle zod); the
// type below fails to compile when the protocol gains an event this list lacks.
const EVENTS = [
  "device-connection",
  "tunnel-connection",
  "pending-tunnel",
  "link-rtt",
  "link-drop-rate",
  "tunnel-rtt",
  "tunnel-drop-rate",
  "failed-self-healing",
  "job-failed",
  "vrrp-state-change",
  "bgp-neighbor-down",
  "interface-down",
  "missing-interface-ip",
  "device-memory-usage",
  "hard-drive-usage",
  "device-identity-conflict",
] as const satisfies readonly EventType[];
const everyEvent: Exclude<EventType, (typeof EVENTS)[number]> extends never ? true : never = true;
void everyEvent;
const SEVERITIES = ["info", "warning", "critical"];

export function Configuration() {
  return (
    <Stack>
      <RulesCard />
      <SimpleGrid cols={{ base: 1, lg: 2 }}>
        <EmailCard />
        <WebhookCard />
      </SimpleGrid>
    </Stack>
  );
}

function Section({ title, id, children }: { title: string; id: string; children: ReactNode }) {
  return (
    <Card withBorder component="section" aria-labelledby={id}>
      <Title order={2} size="h4" id={id} mb="sm">
        {title}
      </Title>
      {children}
    </Card>
  );
}

function Saved({ show }: { show: boolean }) {
  return show ? (
    <Text size="sm" role="status">
      Saved
    </Text>
  ) : null;
}

function RulesCard() {
  const org = useOrg();
  const queryClient = useQueryClient();
  const canEdit = useCan("notificationsConf", "put");
  const canTunnels = useCan("tunnels", "put");
  const conf = useQuery({
    queryKey: queryKey("notification", org.id, "conf"),
    queryFn: () => ok(tern.api.GET("/api/notificationsConf")),
  });
  const [rules, setRules] = useState<Rules | null>(null);
  const [saved, setSaved] = useState<string | null>(null);
  const action = useAction();
  useEffect(() => {
    if (conf.data) setRules(conf.data.rules);
  }, [conf.data]);

  const setRule = (event: EventType, part: Partial<Rule>) =>
    setRules((r) => (r ? { ...r, [event]: { ...(r[event] ?? {}), ...part } } : r));
  const save = async (what: "organization" | "defaults" | "tunnels") => {
    if (!rules) return;
    setSaved(null);
    const done = await action.run(async () => {
      if (what === "organization") await ok(tern.api.PUT("/api/notificationsConf", { body: { rules } }));
      else if (what === "defaults") {
        // The defaults carry the account's e-mail settings too: kept as they are.
        const current = await ok(tern.api.GET("/api/notificationsConf/default"));
        await ok(tern.api.PUT("/api/notificationsConf/default", { body: { ...current, rules } }));
      } else
        await ok(tern.api.PUT("/api/tunnels/notifications", { body: { filter: [], notifications: tunnelThresholds(rules) } }));
    });
    await queryClient.invalidateQueries({ queryKey: ["notification", org.id, "conf"] });
    if (done) setSaved(what);
  };

  return (
    <Section title="Rules" id="notification-rules">
      <QueryState query={conf} label="the notification configuration">
        {() =>
          rules && (
            <Stack gap="sm">
              <Table.ScrollContainer minWidth={900}>
                <Table aria-label="Notification rules">
                  <Table.Thead>
                    <Table.Tr>
                      <Table.Th>Event</Table.Th>
                      <Table.Th>Enabled</Table.Th>
                      <Table.Th>Warning at</Table.Th>
                      <Table.Th>Critical at</Table.Th>
                      <Table.Th>Severity</Table.Th>
                      <Table.Th>E-mail now</Table.Th>
                      <Table.Th>Webhook</Table.Th>
                      <Table.Th>When resolved</Table.Th>
                    </Table.Tr>
                  </Table.Thead>
                  <Table.Tbody>
                    {ruleRows(rules, EVENTS).map(({ event, rule }) => {
                      const unit = rule.thresholdUnit ?? "";
                      const threshold = (key: "warningThreshold" | "criticalThreshold", what: string) =>
                        unit ? (
                          <NumberInput
                            size="xs"
                            w={110}
                            min={0}
                            aria-label={`${event} ${what} threshold (${unit})`}
                            suffix={` ${unit}`}
                            value={rule[key] ?? ""}
                            readOnly={!canEdit}
                            onChange={(v) => setRule(event, { [key]: v === "" ? null : Number(v) })}
                          />
                        ) : (
                          <Text size="xs">–</Text>
                        );
                      const flag = (
                        key: "enabled" | "immediateEmail" | "sendWebHook" | "resolvedAlert",
                        what: string,
                        fallback: boolean,
                      ) => (
                        <Checkbox
                          aria-label={`${event}: ${what}`}
                          checked={rule[key] ?? fallback}
                          disabled={!canEdit}
                          onChange={(e) => setRule(event, { [key]: e.currentTarget.checked })}
                        />
                      );
                      return (
                        <Table.Tr key={event}>
                          <Table.Td>
                            <Text size="sm">{event}</Text>
                          </Table.Td>
                          <Table.Td>{flag("enabled", "enabled", true)}</Table.Td>
                          <Table.Td>{threshold("warningThreshold", "warning")}</Table.Td>
                          <Table.Td>{threshold("criticalThreshold", "critical")}</Table.Td>
                          <Table.Td>
                            {unit ? (
                              <Text size="xs">by threshold</Text>
                            ) : (
                              <Select
                                size="xs"
                                w={110}
                                aria-label={`${event} severity`}
                                data={SEVERITIES}
                                allowDeselect={false}
                                value={rule.severity ?? "warning"}
                                readOnly={!canEdit}
                                onChange={(v) => v && setRule(event, { severity: v as Rule["severity"] })}
                              />
                            )}
                          </Table.Td>
                          <Table.Td>{flag("immediateEmail", "e-mail at once", false)}</Table.Td>
                          <Table.Td>{flag("sendWebHook", "send to the webhook", false)}</Table.Td>
                          <Table.Td>{flag("resolvedAlert", "tell when resolved", true)}</Table.Td>
                        </Table.Tr>
                      );
                    })}
                  </Table.Tbody>
                </Table>
              </Table.ScrollContainer>
              {action.error !== null && <ErrorAlert title="Not saved" error={action.error} />}
              {canEdit && (
                <Group justify="flex-end">
                  <Saved show={saved !== null} />
                  <Button variant="default" loading={action.busy} onClick={() => void save("defaults")}>
                    Save as the account's defaults
                  </Button>
                  {canTunnels && (
                    <Button variant="default" loading={action.busy} onClick={() => void save("tunnels")}>
                      Apply tunnel thresholds to every tunnel
                    </Button>
                  )}
                  <Button loading={action.busy} onClick={() => void save("organization")}>
                    Save rules
                  </Button>
                </Group>
              )}
            </Stack>
          )
        }
      </QueryState>
    </Section>
  );
}

type EmailConf = Schemas["EmailConf"];

function EmailCard() {
  const org = useOrg();
  const canEdit = useCan("notificationsConf", "put");
  const email = useQuery({
    queryKey: queryKey("notification", org.id, "email"),
    queryFn: () => ok(tern.api.GET("/api/notificationsConf/email")),
  });
  const [form, setForm] = useState<{ enabled: boolean; recipients: string; minSeverity: NonNullable<EmailConf["minSeverity"]> }>({
    enabled: false,
    recipients: "",
    minSeverity: "warning",
  });
  const [saved, setSaved] = useState(false);
  const action = useAction();
  useEffect(() => {
    if (email.data)
      setForm({
        enabled: email.data.enabled ?? false,
        recipients: (email.data.recipients ?? []).join("\n"),
        minSeverity: email.data.minSeverity ?? "warning",
      });
  }, [email.data]);
  const save = async () => {
    setSaved(false);
    setSaved(
      await action.run(() =>
        ok(
          tern.api.PUT("/api/notificationsConf/email", {
            body: { enabled: form.enabled, recipients: parseRecipients(form.recipients), minSeverity: form.minSeverity },
          }),
        ),
      ),
    );
  };
  return (
    <Section title="E-mail" id="notification-email">
      <QueryState query={email} label="the e-mail settings">
        {() => (
          <Stack gap="sm">
            <Switch
              label="Send e-mails"
              checked={form.enabled}
              disabled={!canEdit}
              onChange={(e) => setForm({ ...form, enabled: e.currentTarget.checked })}
            />
            <Textarea
              label="Recipients"
              styles={readableDescription}
              description="One address per line"
              autosize
              minRows={2}
              readOnly={!canEdit}
              value={form.recipients}
              onChange={(e) => setForm({ ...form, recipients: e.currentTarget.value })}
            />
            <Select
              label="From severity"
              data={SEVERITIES}
              allowDeselect={false}
              readOnly={!canEdit}
              value={form.minSeverity}
              onChange={(v) => v && setForm({ ...form, minSeverity: v as typeof form.minSeverity })}
            />
            {action.error !== null && <ErrorAlert title="Not saved" error={action.error} />}
            {canEdit && (
              <Group justify="flex-end">
                <Saved show={saved} />
                <Button loading={action.busy} onClick={() => void save()}>
                  Save e-mail settings
                </Button>
              </Group>
            )}
          </Stack>
        )}
      </QueryState>
    </Section>
  );
}

type WebhookTest = Schemas["WebhookTestResult"];

function WebhookCard() {
  const org = useOrg();
  const queryClient = useQueryClient();
  const canEdit = useCan("notificationsConf", "put");
  const canTest = useCan("notificationsConf", "post");
  const webhook = useQuery({
    queryKey: queryKey("notification", org.id, "webhook"),
    queryFn: () => ok(tern.api.GET("/api/notificationsConf/webhook")),
  });
  const [form, setForm] = useState({
    enabled: false,
    url: "",
    secret: "",
    minSeverity: "warning" as "info" | "warning" | "critical",
  });
  const [saved, setSaved] = useState(false);
  const [test, setTest] = useState<WebhookTest | null>(null);
  const action = useAction();
  useEffect(() => {
    if (webhook.data)
      setForm({
        enabled: webhook.data.enabled ?? false,
        url: webhook.data.url ?? "",
        secret: "",
        minSeverity: webhook.data.minSeverity ?? "warning",
      });
  }, [webhook.data]);
  const save = async () => {
    setSaved(false);
    const done = await action.run(() =>
      ok(
        tern.api.PUT("/api/notificationsConf/webhook", {
          body: {
            enabled: form.enabled,
            url: form.url,
            minSeverity: form.minSeverity,
            // A blank secret keeps the one set; the API never returns it.
            ...(form.secret ? { secret: form.secret } : {}),
          },
        }),
      ),
    );
    await queryClient.invalidateQueries({ queryKey: ["notification", org.id, "webhook"] });
    setSaved(done);
  };
  const runTest = async () => {
    setTest(null);
    await action.run(async () => setTest(await ok(tern.api.POST("/api/notificationsConf/webhook/test"))));
  };
  return (
    <Section title="Webhook" id="notification-webhook">
      <QueryState query={webhook} label="the webhook settings">
        {(data) => (
          <Stack gap="sm">
            <Switch
              label="Send to the webhook"
              checked={form.enabled}
              disabled={!canEdit}
              onChange={(e) => setForm({ ...form, enabled: e.currentTarget.checked })}
            />
            <TextInput
              label="URL"
              placeholder="https://hooks.example.com/tern"
              readOnly={!canEdit}
              value={form.url}
              onChange={(e) => setForm({ ...form, url: e.currentTarget.value })}
            />
            {canEdit && (
              <PasswordInput
                label="Signing secret"
                styles={readableDescription}
                description={data.secretSet ? "A secret is set; leave blank to keep it" : "No secret set"}
                value={form.secret}
                autoComplete="off"
                onChange={(e) => setForm({ ...form, secret: e.currentTarget.value })}
              />
            )}
            <Select
              label="From severity"
              data={SEVERITIES}
              allowDeselect={false}
              readOnly={!canEdit}
              value={form.minSeverity}
              onChange={(v) => v && setForm({ ...form, minSeverity: v as typeof form.minSeverity })}
            />
            {action.error !== null && <ErrorAlert title="Refused" error={action.error} />}
            {test && (
              <Text size="sm" role="status" c={test.status === "delivered" ? undefined : "var(--mantine-color-error)"}>
                Test to {test.target}: {test.status} after {test.attempts} attempt(s){test.error ? `: ${test.error}` : ""}
              </Text>
            )}
            <Group justify="flex-end">
              <Saved show={saved} />
              {canTest && (
                <Button variant="default" loading={action.busy} onClick={() => void runTest()}>
                  Send a test
                </Button>
              )}
              {canEdit && (
                <Button loading={action.busy} onClick={() => void save()}>
                  Save webhook
                </Button>
              )}
            </Group>
          </Stack>
        )}
      </QueryState>
    </Section>
  );
}
