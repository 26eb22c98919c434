/**
 * The credential latlab's own ARM calls use (the quota check, placement evidence, teardown's ARM
 * fallback and final check, the sweep): not the deploy's, which Pulumi's azure-native provider
 * makes for itself from the same variables.
 *
 * In GitHub Actions with `ARM_USE_OIDC=true` (what the scheduled workflow exports for Pulumi) it
 * is a ClientAssertionCredential whose assertion is a GitHub OIDC token, asked of GitHub again
 * each time Microsoft Entra is asked for an access token. So a run of 11 hours keeps getting
 * tokens, where the Azure CLI login (`azure/login`) cannot renew its own after about an hour
 * (README "Runs longer than about an hour"). Anywhere else (a laptop's `az login`, environment
 * variables, managed or workload identity) it is DefaultAzureCredential, as before.
 */
import { ClientAssertionCredential, DefaultAzureCredential, type AccessToken, type ClientAssertionCredentialOptions, type GetTokenOptions, type TokenCredential } from "@azure/identity";
import { z } from "zod";

/**
 * The audience Microsoft Entra's federated identity credentials expect of an external token, and
 * the one GitHub's docs ask for: github/docs content/actions/reference/security/oidc.md @
 * 051718f297e11fadbf357da1e8e756991eb2ed89 ("Methods for requesting the OIDC token":
 * `curl -H "Authorization: bearer $ACTIONS_ID_TOKEN_REQUEST_TOKEN" "$ACTIONS_ID_TOKEN_REQUEST_URL&audience=api://AzureADTokenExchange"`).
 */
export const GITHUB_OIDC_AUDIENCE = "api://AzureADTokenExchange";

/** GitHub's answer: the JWT in `value` (actions/toolkit packages/core/src/oidc-utils.ts @ 0d78354e86661d41a5e8024bf46d110a72e1b6f6, `TokenResponse`). */
export const GithubOidcResponseSchema = z.object({ value: z.string().min(1) });

/** A hung GitHub endpoint must not hold an ARM call (and the run's Ctrl-C) for minutes. */
export const GITHUB_OIDC_TIMEOUT_MS = 30_000;

/**
 * How long before its expiry a token is renewed: MSAL's own margin (@azure/msal-common 16.16.1
 * src/utils/Constants.ts DEFAULT_TOKEN_RENEWAL_OFFSET_SEC = 300, used by msal-node 7.2.1
 * src/client/ClientCredentialClient.ts getCachedAuthenticationResult), so the cache below and
 * MSAL's agree on when a token is due. It is also wider than the 2 minutes before expiry at which
 * @azure/core-rest-pipeline 1.25.0's bearer-token policy (dist/esm/util/tokenCycler.js
 * refreshWindowInMs) asks again, so the ARM SDK clients never get an old token back.
 */
export const RENEW_BEFORE_EXPIRY_MS = 300_000;

/** The variables GitHub OIDC needs beside ARM_USE_OIDC=true, the names Pulumi's azure-native provider reads. */
export const GITHUB_OIDC_VARIABLES = ["ARM_CLIENT_ID", "ARM_TENANT_ID", "ACTIONS_ID_TOKEN_REQUEST_URL", "ACTIONS_ID_TOKEN_REQUEST_TOKEN"] as const;

const present = z.string().trim().min(1);
/**
 * ARM_USE_OIDC / ARM_CLIENT_ID / ARM_TENANT_ID as Pulumi's provider reads them, OIDC only when
 * ARM_USE_OIDC is exactly "true"; the request URL and token are GitHub's own
 * ACTIONS_ID_TOKEN_REQUEST_URL / _TOKEN (pulumi/pulumi-azure-native provider/pkg/provider/auth_azidentity.go
 * @ 34d8ff31867e55351b4f1c32bc8074fcb91f4fc3, readAuthConfig and getOidcTokenExchangeAssertion).
 */
const GithubOidcEnvSchema = z.object({
  ARM_CLIENT_ID: present,
  ARM_TENANT_ID: present,
  ACTIONS_ID_TOKEN_REQUEST_URL: present.pipe(z.url({ protocol: /^https?$/ })),
  ACTIONS_ID_TOKEN_REQUEST_TOKEN: present,
});

/** Where latlab's own ARM calls get their tokens. */
export type ArmCredentialSource =
  | { kind: "github-oidc"; tenantId: string; clientId: string; requestUrl: string; requestToken: string; authorityHost?: string }
  | { kind: "default"; authorityHost?: string };

/**
 * Which credential `env` asks for. ARM_USE_OIDC=true with a variable missing or empty throws,
 * naming each: falling back to the Azure CLI would work for an hour and then fail mid-run.
 */
export function armCredentialSource(env: NodeJS.ProcessEnv = process.env): ArmCredentialSource {
  // The identity library reads AZURE_AUTHORITY_HOST from process.env; passing it keeps `env` the one source.
  const authorityHost = env.AZURE_AUTHORITY_HOST?.trim() || undefined;
  const host = authorityHost ? { authorityHost } : {};
  if (env.ARM_USE_OIDC !== "true") return { kind: "default", ...host };
  const parsed = GithubOidcEnvSchema.safeParse(Object.fromEntries(GITHUB_OIDC_VARIABLES.map((name) => [name, env[name] ?? ""])));
  if (!parsed.success) {
    const missing = GITHUB_OIDC_VARIABLES.filter((name) => !env[name]?.trim());
    const invalid = parsed.error.issues.map((i) => String(i.path[0])).filter((name) => !missing.includes(name as (typeof GITHUB_OIDC_VARIABLES)[number]));
    const problems = [
      ...(missing.length ? [`${missing.join(", ")} ${missing.length === 1 ? "is" : "are"} not set`] : []),
      ...invalid.map((name) => `${name} is not an http(s) URL`),
    ];
    throw new Error(
      `ARM_USE_OIDC=true, but ${problems.join("; ")}. latlab's own Azure calls then sign in as Pulumi's provider does: ` +
        "ARM_CLIENT_ID and ARM_TENANT_ID name the app registration; GitHub sets ACTIONS_ID_TOKEN_REQUEST_URL and _TOKEN in every step of a job with `permissions: id-token: write`. " +
        "Outside GitHub Actions, unset ARM_USE_OIDC to use DefaultAzureCredential (az login).",
    );
  }
  const v = parsed.data;
  return { kind: "github-oidc", tenantId: v.ARM_TENANT_ID, clientId: v.ARM_CLIENT_ID, requestUrl: v.ACTIONS_ID_TOKEN_REQUEST_URL, requestToken: v.ACTIONS_ID_TOKEN_REQUEST_TOKEN, ...host };
}

/** `$ACTIONS_ID_TOKEN_REQUEST_URL&audience=…`, the audience encoded as @actions/core's getIDToken does (GitHub's URL already carries `?api-version=`). */
export function githubOidcRequestUrl(requestUrl: string, audience = GITHUB_OIDC_AUDIENCE): string {
  return `${requestUrl}${requestUrl.includes("?") ? "&" : "?"}audience=${encodeURIComponent(audience)}`;
}

/** The slice of `fetch` used for GitHub's endpoint. */
export type OidcFetch = (url: string, init: { method: "GET"; headers: Record<string, string>; signal?: AbortSignal }) => Promise<{ ok: boolean; status: number; text(): Promise<string> }>;

const message = (e: unknown) => (e instanceof Error ? (e.cause instanceof Error ? `${e.message}: ${e.cause.message}` : e.message) : String(e));

/**
 * The ClientAssertionCredential's getAssertion: a new GitHub OIDC token per call. Errors name
 * ACTIONS_ID_TOKEN_REQUEST_URL and GitHub's answer, never the request token or a token issued.
 */
export function githubOidcAssertion(source: { requestUrl: string; requestToken: string }, http: OidcFetch = fetch): () => Promise<string> {
  const what = `GitHub OIDC token request (ACTIONS_ID_TOKEN_REQUEST_URL, ${new URL(source.requestUrl).origin})`;
  return async () => {
    let response: Awaited<ReturnType<OidcFetch>>;
    let body: string;
    try {
      response = await http(githubOidcRequestUrl(source.requestUrl), {
        method: "GET",
        headers: { authorization: `bearer ${source.requestToken}`, accept: "application/json" },
        signal: AbortSignal.timeout(GITHUB_OIDC_TIMEOUT_MS),
      });
      body = await response.text();
    } catch (e) {
      throw new Error(`${what} failed: ${message(e)}`);
    }
    if (!response.ok) {
      const hint = response.status === 401 || response.status === 403 ? " — does the job have `permissions: id-token: write`, and is this still the job that set ACTIONS_ID_TOKEN_REQUEST_TOKEN?" : "";
      throw new Error(`${what}: HTTP ${response.status} ${body.trim().slice(0, 200) || "(empty body)"}${hint}`);
    }
    let json: unknown;
    try {
      json = JSON.parse(body);
    } catch {
      throw new Error(`${what}: the answer is not JSON`);
    }
    const parsed = GithubOidcResponseSchema.safeParse(json);
    if (!parsed.success) throw new Error(`${what}: the answer has no token in "value"`);
    return parsed.data.value;
  };
}

/** Is a cached token still good to hand out at `now` (ms)? Not within RENEW_BEFORE_EXPIRY_MS of expiry, nor past the refresh time Entra suggested. */
export function tokenIsFresh(token: AccessToken, now: number): boolean {
  return now < Math.min(token.expiresOnTimestamp - RENEW_BEFORE_EXPIRY_MS, token.refreshAfterTimestamp ?? Infinity);
}

/**
 * `inner` behind a token cache: a fresh token is handed out again without asking `inner`;
 * concurrent callers share one request. Why: MSAL calls the client assertion callback on every
 * acquireTokenByClientCredential, before it looks in its own cache (@azure/msal-node 7.2.1
 * src/client/ConfidentialClientApplication.ts: `getClientAssertion(request.clientAssertion, …)`
 * ahead of `clientCredentialClient.acquireToken`), and ClientAssertionCredential.getToken
 * passes the callback each time (@azure/identity 4.14.1 dist/esm/msal/nodeFlows/msalClient.js
 * getTokenByClientAssertion): without this, every ARM request would ask GitHub for a token. For
 * the Azure CLI it saves an `az account get-access-token` per request. A request with `claims`
 * (a CAE challenge) always goes to `inner`.
 */
export function cachingCredential(inner: TokenCredential, now: () => number = () => Date.now()): TokenCredential {
  const cached = new Map<string, AccessToken>();
  const pending = new Map<string, Promise<AccessToken | null>>();
  return {
    async getToken(scopes, options?: GetTokenOptions) {
      if (options?.claims) return inner.getToken(scopes, options);
      const key = JSON.stringify([[scopes].flat().sort(), options?.tenantId ?? "", options?.enableCae ?? false]);
      const hit = cached.get(key);
      if (hit && tokenIsFresh(hit, now())) return hit;
      let request = pending.get(key);
      if (!request) {
        request = inner
          .getToken(scopes, options)
          .then((token) => {
            if (token) cached.set(key, token);
            return token;
          })
          .finally(() => pending.delete(key));
        pending.set(key, request);
      }
      return request;
    },
  };
}

/** Test seams: the identity library's options (authority host, TLS…) and GitHub's fetch. */
export interface LatlabCredentialOverrides {
  identityOptions?: ClientAssertionCredentialOptions;
  fetch?: OidcFetch;
  now?: () => number;
}

/**
 * The credential for latlab's own ARM calls: GitHub OIDC through ClientAssertionCredential
 * (tenantId, clientId, getAssertion; learn.microsoft.com/javascript/api/@azure/identity/clientassertioncredential),
 * or DefaultAzureCredential; either behind `cachingCredential`. Ask it for a token before each
 * request (the ARM SDK clients' bearer-token policy does): it renews as expiry nears.
 */
export function latlabAzureCredential(env: NodeJS.ProcessEnv = process.env, overrides: LatlabCredentialOverrides = {}): TokenCredential {
  const source = armCredentialSource(env);
  const options: ClientAssertionCredentialOptions = { ...(source.authorityHost ? { authorityHost: source.authorityHost } : {}), ...overrides.identityOptions };
  const inner =
    source.kind === "github-oidc"
      ? new ClientAssertionCredential(source.tenantId, source.clientId, githubOidcAssertion(source, overrides.fetch), options)
      : new DefaultAzureCredential(options);
  return cachingCredential(inner, overrides.now);
}
