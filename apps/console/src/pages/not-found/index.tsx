import { Anchor, Stack, Text, Title } from "@mantine/core";
import { Link } from "react-router";

export default function NotFoundPage() {
  return (
    <Stack>
      <Title order={1} size="h2">
        Page not found
      </Title>
      <Text>
        There is no page at this address.{" "}
        <Anchor component={Link} to="/">
          Go to the overview
        </Anchor>
        .
      </Text>
    </Stack>
  );
}
