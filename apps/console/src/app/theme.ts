import { colorsTuple, createTheme, type MantineColorsTuple } from "@mantine/core";

/**
 * The theme: Mantine's, with the installation's accent colour as the primary
 * colour. The default accent is Mantine's blue at shade 8, whose contrast
 * with white text passes WCAG AA (the axe checks of the browser tests).
 */
export function themeFor(accentColor: string) {
  const custom = /^#[0-9a-f]{6}$/i.test(accentColor) && accentColor.toLowerCase() !== "#1971c2";
  return createTheme({
    primaryColor: custom ? "accent" : "blue",
    primaryShade: 8,
    colors: custom ? { accent: colorsTuple(accentColor) as MantineColorsTuple } : {},
    fontFamily: "system-ui, -apple-system, 'Segoe UI', Roboto, sans-serif",
    defaultRadius: "sm",
  });
}
