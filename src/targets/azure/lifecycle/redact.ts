/**
 * What never leaves a run in clear: its secrets (keys, the stack's passphrase) in any log line or
 * error a person or results.json sees, and credentials in a backend URL. Used by the run's own
 * teardown and by `latlab destroy` alike.
 */

/** Strips credentials and query from a URL before it goes into results. */
export function displayUrl(url: string): string {
  try {
    const u = new URL(url);
    u.username = "";
    u.password = "";
    u.search = "";
    return u.toString();
  } catch {
    return url.replace(/\?.*$/, "");
  }
}

/** Replaces every known secret (and any PEM private key) in a log line. */
export function makeRedactor(secrets: readonly string[], options: { whole?: readonly string[] } = {}): (line: string) => string {
  const pieces = new Set<string>();
  // A short passphrase is still a secret: these are redacted whole, whatever their length.
  for (const w of options.whole ?? []) if (w.trim()) pieces.add(w.trim());
  for (const s of secrets) {
    const t = s.trim();
    if (t.length >= 16) pieces.add(t);
    for (const l of t.split("\n")) if (l.trim().length >= 16 && !/^-----/.test(l.trim())) pieces.add(l.trim());
  }
  const list = [...pieces].sort((a, b) => b.length - a.length);
  return (line) => {
    let out = line.replace(/-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----[\s\S]*?(-----END [A-Z0-9 ]*PRIVATE KEY-----|$)/g, "[redacted private key]");
    for (const p of list) if (out.includes(p)) out = out.split(p).join("[redacted]");
    return out;
  };
}
