import { existsSync } from "node:fs";

/** Where a Chromium may be: $LATLAB_CHROMIUM, Debian's chromium (.ci/run installs it), GitHub's Ubuntu runners' Google Chrome. */
export const BROWSERS = [process.env.LATLAB_CHROMIUM, "/usr/bin/chromium", "/usr/bin/google-chrome", "/usr/bin/chromium-browser"].filter((p): p is string => Boolean(p));

/** The first Chromium found; throws naming where it looked (a browser test is never skipped). */
export function chromiumPath(): string {
  const found = BROWSERS.find((p) => existsSync(p));
  if (!found) throw new Error(`no Chromium found (looked for ${BROWSERS.join(", ")}): .ci/run installs Debian's chromium`);
  return found;
}
