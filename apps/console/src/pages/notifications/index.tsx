/** Notifications: the inbox (live) and the configuration of who hears of what. */
import { Stack, Tabs, Title } from "@mantine/core";
import { useSearchParams } from "react-router";
import { Configuration } from "./Configuration.tsx";
import { Inbox } from "./Inbox.tsx";

export default function NotificationsPage() {
  const [params, setParams] = useSearchParams();
  const tab = params.get("tab") === "configuration" ? "configuration" : "inbox";
  return (
    <Stack>
      <Title order={1} size="h2">
        Notifications
      </Title>
      <Tabs
        value={tab}
        onChange={(v) => setParams(v === "configuration" ? { tab: v } : {}, { replace: true })}
        keepMounted={false}
      >
        <Tabs.List>
          <Tabs.Tab value="inbox">Inbox</Tabs.Tab>
          <Tabs.Tab value="configuration">Configuration</Tabs.Tab>
        </Tabs.List>
        <Tabs.Panel value="inbox" pt="md">
          <Inbox />
        </Tabs.Panel>
        <Tabs.Panel value="configuration" pt="md">
          <Configuration />
        </Tabs.Panel>
      </Tabs>
    </Stack>
  );
}
