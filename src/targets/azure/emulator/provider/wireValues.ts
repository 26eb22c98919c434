/**
 * Values as the Pulumi engine sends them to a provider that accepts secrets: a secret is an
 * object carrying Pulumi's signature key, an unknown (preview) is a fixed sentinel string.
 * The plugin unwraps secrets only for the request it sends to ARM; what it hands back to the
 * engine keeps them wrapped, so a secret input (customData holds a host's private key) never
 * lands in the state in clear.
 */

export const SIG_KEY = "4dabf18193072939515e22adb298388d";
export const SECRET_SIG = "1b47061264138c4ac30d75fd1eb44270";
export const UNKNOWN = "04da6b54-80e4-46f7-96ec-b56ff0331ba9";

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

export const isSecret = (v: unknown): v is { value: unknown } => isRecord(v) && v[SIG_KEY] === SECRET_SIG;

/** The value with every secret wrapper removed. */
export function unwrapSecrets(v: unknown): unknown {
  if (isSecret(v)) return unwrapSecrets(v.value);
  if (Array.isArray(v)) return v.map(unwrapSecrets);
  if (isRecord(v)) return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, unwrapSecrets(x)]));
  return v;
}

/** True when any part of the value is still unknown (a preview). */
export function containsUnknown(v: unknown): boolean {
  if (v === UNKNOWN) return true;
  if (Array.isArray(v)) return v.some(containsUnknown);
  if (isRecord(v)) return Object.values(v).some(containsUnknown);
  return false;
}

export const wrapSecret = (value: unknown) => ({ [SIG_KEY]: SECRET_SIG, value });
