/** The password form's own checks (the server applies its policy too and says why it refuses). */
export function passwordProblem(current: string, next: string, repeat: string): string | null {
  if (!current) return "Enter your current password";
  if (next.length < 8) return "The new password needs at least 8 characters";
  if (next === current) return "The new password must differ from the current one";
  if (next !== repeat) return "The two new passwords differ";
  return null;
}

/** A session's browser in a few words, from its user agent. */
export function describeAgent(userAgent: string): string {
  if (!userAgent) return "unknown client";
  const browser = /Edg\//.test(userAgent)
    ? "Edge"
    : /Chrom(e|ium)\//.test(userAgent)
      ? "Chromium"
      : /Firefox\//.test(userAgent)
        ? "Firefox"
        : /Safari\//.test(userAgent)
          ? "Safari"
          : null;
  const os = /Windows/.test(userAgent)
    ? "Windows"
    : /Mac OS X/.test(userAgent)
      ? "macOS"
      : /Android/.test(userAgent)
        ? "Android"
        : /Linux/.test(userAgent)
          ? "Linux"
          : null;
  if (!browser) return userAgent.length > 40 ? `${userAgent.slice(0, 40)}…` : userAgent;
  return os ? `${browser} on ${os}` : browser;
}
