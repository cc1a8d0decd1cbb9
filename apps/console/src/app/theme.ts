import { colorsTuple, createTheme, DEFAULT_THEME, type MantineColorShade, type MantineColorsTuple } from "@mantine/core";

/**
 * The theme: Mantine's, with the installation's accent colour as the primary
 * colour. An accent that is one of Mantine's palette shades (the default,
 * #0b7285, is cyan 9) uses that palette, so light variants and hovers keep
 * their tints; any other accent becomes a one-colour palette.
 */
export function themeFor(accentColor: string) {
  const hex = accentColor.toLowerCase();
  for (const [name, shades] of Object.entries(DEFAULT_THEME.colors)) {
    const shade = shades.indexOf(hex);
    if (shade >= 0) return base({ primaryColor: name, primaryShade: shade as MantineColorShade });
  }
  const custom = /^#[0-9a-f]{6}$/.test(hex);
  return base(
    custom
      ? { primaryColor: "accent", colors: { accent: colorsTuple(hex) as MantineColorsTuple } }
      : { primaryColor: "cyan", primaryShade: 9 },
  );
}

function base(overrides: Parameters<typeof createTheme>[0]) {
  return createTheme({
    fontFamily: "system-ui, -apple-system, 'Segoe UI', Roboto, sans-serif",
    defaultRadius: "sm",
    ...overrides,
  });
}
