/**
 * The signed-in frame: header (logo and product name from the branding, the
 * organization switcher, the live-updates state, light/dark, sign-out), the
 * side navigation from the page registry, and the page. Not signed in: the
 * sign-in page, coming back here afterwards.
 */
import {
  ActionIcon,
  Anchor,
  AppShell,
  Badge,
  Burger,
  Button,
  Center,
  Group,
  Image,
  Loader,
  NavLink,
  Select,
  Text,
  Tooltip,
  useComputedColorScheme,
  useMantineColorScheme,
} from "@mantine/core";
import { useDisclosure } from "@mantine/hooks";
import { Navigate, Outlet, NavLink as RouterNavLink, useLocation, useNavigate } from "react-router";
import { tone } from "../components/tones.ts";
import { useLiveEvents } from "../live/useLiveEvents.ts";
import { pages } from "../pages/registry.ts";
import { useSession } from "../session/session-context.ts";
import { useBranding } from "./branding.ts";
import { listOf } from "./list-of.ts";

export function Shell() {
  const { session, org } = useSession();
  const location = useLocation();
  const live = useLiveEvents(session ? (org?.id ?? null) : null);
  const [navOpen, { toggle }] = useDisclosure();

  if (session === undefined)
    return (
      <Center h="100vh">
        <Loader aria-label="Loading the session" />
      </Center>
    );
  if (session === null)
    return <Navigate to={`/signin?next=${encodeURIComponent(location.pathname + location.search)}`} replace />;

  return (
    <AppShell header={{ height: 56 }} navbar={{ width: 220, breakpoint: "sm", collapsed: { mobile: !navOpen } }} padding="md">
      <AppShell.Header>
        <a href="#main" className="skip-link">
          Skip to content
        </a>
        <Group h="100%" px="md" justify="space-between" wrap="nowrap">
          <Group gap="sm" wrap="nowrap">
            <Burger opened={navOpen} onClick={toggle} hiddenFrom="sm" size="sm" aria-label="Toggle navigation" />
            <ProductMark />
          </Group>
          <Group gap="sm" wrap="nowrap">
            <OrgSwitcher />
            <LiveBadge status={live} />
            <ThemeToggle />
            <UserMenu />
          </Group>
        </Group>
      </AppShell.Header>
      <AppShell.Navbar p="xs" aria-label="Main navigation">
        {pages
          .filter((p) => p.nav)
          .map((p) => (
            <NavLink key={p.path} component={RouterNavLink} to={p.path} end={p.path === "/"} label={p.nav} />
          ))}
      </AppShell.Navbar>
      <AppShell.Main id="main" tabIndex={-1}>
        <Outlet />
      </AppShell.Main>
    </AppShell>
  );
}

export function ProductMark() {
  const branding = useBranding();
  return (
    <Anchor component={RouterNavLink} to="/" underline="never" c="inherit">
      <Group gap="xs" wrap="nowrap">
        <Image src={branding.logoUrl ?? "/tern.svg"} alt="" h={28} w="auto" fit="contain" />
        <Text fw={700} size="lg">
          {branding.productName}
        </Text>
      </Group>
    </Anchor>
  );
}

function OrgSwitcher() {
  const { session, org, setOrg } = useSession();
  const location = useLocation();
  const navigate = useNavigate();
  const organizations = session?.organizations ?? [];
  if (organizations.length === 0) return null;
  return (
    <Select
      aria-label="Organization"
      size="xs"
      w={260}
      allowDeselect={false}
      data={organizations.map((o) => ({ value: o.id, label: `${o.name} (${o.role})` }))}
      value={org?.id ?? null}
      onChange={(id) => {
        if (!id || id === org?.id) return;
        setOrg(id);
        // A device's or a tunnel's page belongs to the organization left: show the list of the new one instead.
        const list = listOf(location.pathname);
        if (list) navigate(list);
      }}
    />
  );
}

const LIVE_LABEL = { live: "Live", connecting: "Connecting", reconnecting: "Reconnecting", off: "Offline" } as const;

function LiveBadge({ status }: { status: keyof typeof LIVE_LABEL }) {
  return (
    <Tooltip
      label={
        status === "live" ? "Changes appear without reload" : "Live updates are not connected; pages refresh when they are back"
      }
    >
      <Badge variant="outline" color={status === "live" ? tone.ok : tone.muted} aria-live="polite" data-testid="live-status">
        {LIVE_LABEL[status]}
      </Badge>
    </Tooltip>
  );
}

function ThemeToggle() {
  const { setColorScheme } = useMantineColorScheme();
  const scheme = useComputedColorScheme("light");
  const next = scheme === "dark" ? "light" : "dark";
  return (
    <ActionIcon variant="default" size="lg" onClick={() => setColorScheme(next)} aria-label={`Switch to ${next} theme`}>
      <span aria-hidden="true">{scheme === "dark" ? "☀" : "☾"}</span>
    </ActionIcon>
  );
}

function UserMenu() {
  const { session, signOut } = useSession();
  return (
    <Group gap="xs" wrap="nowrap">
      <Text size="sm" visibleFrom="md">
        {session?.user.name || session?.user.email}
      </Text>
      <Button variant="default" size="xs" onClick={() => void signOut()}>
        Sign out
      </Button>
    </Group>
  );
}
