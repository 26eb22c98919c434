/**
 * Canonical JSON (RFC 8785, JSON Canonicalization Scheme, for the values latlab hashes): object
 * keys sorted by UTF-16 code units, no whitespace, numbers and strings as ECMAScript's
 * JSON.stringify writes them (which is what RFC 8785 specifies for them). Two equal values give
 * the same text whatever order their keys were written in, so a hash of it is stable.
 *
 * Hand-written rather than a dependency: the values hashed are plain data (strings, finite
 * numbers, booleans, null, arrays, objects), for which the scheme is the few lines below.
 * Undefined object members are left out, as JSON.stringify does; anything that is no JSON value
 * (a function, NaN, Infinity, a bigint) is refused rather than silently written as null.
 */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value === "string" || typeof value === "boolean") return JSON.stringify(value);
  if (typeof value === "number") {
    if (!Number.isFinite(value)) throw new TypeError(`canonical JSON: ${value} is no JSON number`);
    return JSON.stringify(value);
  }
  if (Array.isArray(value)) return `[${value.map((v) => canonicalJson(v === undefined ? null : v)).join(",")}]`;
  if (typeof value === "object") {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      // Code-unit order, not localeCompare: the scheme's order, the same on every machine.
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(",")}}`;
  }
  throw new TypeError(`canonical JSON: a ${typeof value} is no JSON value`);
}
