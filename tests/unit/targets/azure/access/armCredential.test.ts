/**
 * latlab's own Azure credential (src/targets/azure/access/armCredential.ts) against three fakes on
 * 127.0.0.1: GitHub's OIDC token endpoint (ACTIONS_ID_TOKEN_REQUEST_URL), Microsoft Entra's token
 * endpoint (https, with a certificate made here by `openssl req` and trusted through the
 * credential's `tlsOptions.ca`: MSAL refuses an http authority), and ARM, reached through
 * readComputeCapacity (its injectable `http` sends management.azure.com's requests to the fake).
 *
 * No wall-clock waits: only `Date` is faked (vi.useFakeTimers({ toFake: ["Date"] })), so timers
 * and sockets run as usual while MSAL, which judges expiry by `new Date()` (@azure/msal-common
 * 16.16.1 src/utils/TimeUtils.ts nowSeconds / isTokenExpired), and latlab's cache see the clock
 * jump. What decides renewal, MSAL's and latlab's alike: a cached token is given out again until 5
 * minutes before its expiry (DEFAULT_TOKEN_RENEWAL_OFFSET_SEC = 300, msal-common
 * src/utils/Constants.ts; RENEW_BEFORE_EXPIRY_MS); from then on the next request gets a new one.
 * So with expires_in 3600 a token is reused for 55 minutes; with expires_in below 300 s it is
 * already "due" when issued and every request renews it (a test below shows this).
 *
 * Each acquisition asks GitHub twice, and Entra gets the first of the two: ClientAssertionCredential
 * hands MSAL the callback both in the request and in the app's configuration (@azure/identity
 * 4.14.1 dist/esm/msal/nodeFlows/msalClient.js getTokenByClientAssertion), and msal-node 7.2.1
 * calls it for each (src/client/ConfidentialClientApplication.ts acquireTokenByClientCredential;
 * src/client/ClientApplication.ts buildOauthClientConfiguration → getClientAssertion), the
 * request's winning (src/client/ClientCredentialClient.ts createTokenRequestBody). Harmless
 * (one spare GitHub token per renewal); the tests assert what matters: Entra only ever gets an
 * assertion GitHub issued since the previous token request, and none twice.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer as createHttpServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { createServer as createHttpsServer } from "node:https";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ResourceManagementClient } from "@azure/arm-resources";
import { ClientAssertionCredential, type AccessToken, type TokenCredential } from "@azure/identity";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import {
  armCredentialSource,
  cachingCredential,
  githubOidcAssertion,
  githubOidcRequestUrl,
  latlabAzureCredential,
  RENEW_BEFORE_EXPIRY_MS,
  tokenIsFresh,
} from "../../../../../src/targets/azure/access/armCredential.ts";
import { ARM_ENDPOINT, ARM_SCOPE, readComputeCapacity, type HttpGet } from "../../../../../src/targets/azure/catalog/computeCapacity.ts";
import { readPlacementEvidence } from "../../../../../src/targets/azure/lifecycle/placementEvidence.ts";

const TENANT = "11111111-1111-1111-1111-111111111111";
const CLIENT = "22222222-2222-2222-2222-222222222222";
const SUB = "33333333-3333-3333-3333-333333333333";
const REQUEST_TOKEN = "github-request-token";
const MINUTE = 60_000;

/** Everything the three fakes saw, in order. */
type Event = { at: "github"; issued: string } | { at: "entra"; assertion: string; issued: string } | { at: "arm"; bearer: string };

const listen = (server: Server) => new Promise<number>((resolve) => server.listen(0, "127.0.0.1", () => resolve((server.address() as AddressInfo).port)));
const close = (server: Server) => new Promise<void>((resolve) => server.close(() => resolve()));
const body = (req: IncomingMessage) =>
  new Promise<string>((resolve) => {
    let text = "";
    req.setEncoding("utf8").on("data", (c: string) => (text += c)).on("end", () => resolve(text));
  });
const json = (res: ServerResponse, status: number, value: unknown) => res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(value));

let dir: string;
let ca: string;
let github: Server;
let entra: Server;
let arm: Server;
/** ARM over https, for the ARM SDK client (its bearer-token policy refuses plain http). */
let armTls: Server;
let armTlsOrigin: string;
let githubUrl: string;
let authorityHost: string;
let armOrigin: string;
const events: Event[] = [];
/** Problems the fakes found with a request (wrong bearer, audience, assertion…): a test fails if any. */
const complaints: string[] = [];
let githubFails: number | undefined;
let expiresIn = 3600;
let issuedJwts = 0;
let issuedTokens = 0;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "latlab-armcred-"));
  // A certificate for 127.0.0.1 only, valid a day: Entra's fake must be https for MSAL.
  execFileSync("openssl", ["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", join(dir, "key.pem"), "-out", join(dir, "cert.pem"), "-days", "1", "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1"], { stdio: "pipe" });
  ca = readFileSync(join(dir, "cert.pem"), "utf8");

  github = createHttpServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://127.0.0.1");
    if (url.pathname !== "/idtoken" || url.searchParams.get("api-version") !== "2.0") complaints.push(`github: unexpected ${req.method} ${req.url}`);
    // GitHub's docs: `"$ACTIONS_ID_TOKEN_REQUEST_URL&audience=api://AzureADTokenExchange"`, bearer $ACTIONS_ID_TOKEN_REQUEST_TOKEN.
    if (url.searchParams.get("audience") !== "api://AzureADTokenExchange") complaints.push(`github: audience ${url.searchParams.get("audience")}`);
    if (req.headers.authorization !== `bearer ${REQUEST_TOKEN}`) complaints.push(`github: authorization ${req.headers.authorization}`);
    if (githubFails) return json(res, githubFails, { message: "the fake GitHub is failing" });
    const issued = `github-jwt-${++issuedJwts}`;
    events.push({ at: "github", issued });
    json(res, 200, { count: 1, value: issued });
  });
  githubUrl = `http://127.0.0.1:${await listen(github)}/idtoken?api-version=2.0`;

  entra = createHttpsServer({ key: readFileSync(join(dir, "key.pem")), cert: ca }, async (req, res) => {
    const path = new URL(req.url ?? "/", authorityHost).pathname;
    if (req.method === "GET" && path === `/${TENANT}/v2.0/.well-known/openid-configuration`) {
      // What MSAL reads of the tenant's metadata (with instance discovery off it asks for nothing else).
      const base = `${authorityHost}/${TENANT}`;
      return json(res, 200, { token_endpoint: `${base}/oauth2/v2.0/token`, authorization_endpoint: `${base}/oauth2/v2.0/authorize`, end_session_endpoint: `${base}/oauth2/v2.0/logout`, issuer: `${base}/v2.0`, jwks_uri: `${base}/discovery/v2.0/keys` });
    }
    if (req.method === "POST" && path === `/${TENANT}/oauth2/v2.0/token`) {
      const form = new URLSearchParams(await body(req));
      const previous = events.findLastIndex((e) => e.at === "entra");
      const fresh = events.slice(previous + 1).flatMap((e) => (e.at === "github" ? [e.issued] : []));
      if (form.get("grant_type") !== "client_credentials") complaints.push(`entra: grant_type ${form.get("grant_type")}`);
      if (form.get("client_id") !== CLIENT) complaints.push(`entra: client_id ${form.get("client_id")}`);
      if (!form.get("scope")?.split(" ").includes(ARM_SCOPE)) complaints.push(`entra: scope ${form.get("scope")}`);
      if (form.get("client_assertion_type") !== "urn:ietf:params:oauth:client-assertion-type:jwt-bearer") complaints.push(`entra: client_assertion_type ${form.get("client_assertion_type")}`);
      // Microsoft Entra takes the GitHub token as the client assertion: one GitHub issued since the last token request.
      const assertion = form.get("client_assertion") ?? "";
      if (!fresh.includes(assertion)) complaints.push(`entra: assertion ${assertion} is not one GitHub issued since the last token request (${fresh.join(", ") || "none"})`);
      const issued = `entra-token-${++issuedTokens}`;
      events.push({ at: "entra", assertion, issued });
      return json(res, 200, { token_type: "Bearer", expires_in: expiresIn, ext_expires_in: expiresIn, access_token: issued });
    }
    complaints.push(`entra: unexpected ${req.method} ${req.url}`);
    json(res, 404, { error: "not_found" });
  });
  authorityHost = `https://127.0.0.1:${await listen(entra)}`;

  arm = createHttpServer((req, res) => {
    events.push({ at: "arm", bearer: req.headers.authorization ?? "" });
    json(res, 200, { value: [] });
  });
  armOrigin = `http://127.0.0.1:${await listen(arm)}`;
  armTls = createHttpsServer({ key: readFileSync(join(dir, "key.pem")), cert: ca }, (req, res) => {
    events.push({ at: "arm", bearer: req.headers.authorization ?? "" });
    const name = /\/resourcegroups\/([^/?]+)/i.exec(req.url ?? "")?.[1] ?? "";
    json(res, 200, { id: `/subscriptions/${SUB}/resourceGroups/${name}`, name, location: "northeurope", tags: { owner: "latlab" } });
  });
  armTlsOrigin = `https://127.0.0.1:${await listen(armTls)}`;
});

afterAll(async () => {
  await Promise.all([github, entra, arm, armTls].filter(Boolean).map(close));
  rmSync(dir, { recursive: true, force: true });
});

beforeEach(() => {
  vi.useFakeTimers({ toFake: ["Date"] });
  vi.setSystemTime(new Date("2026-11-21T10:00:00Z"));
  events.length = 0;
  complaints.length = 0;
  githubFails = undefined;
  expiresIn = 3600;
  issuedJwts = 0;
  issuedTokens = 0;
});
afterEach(() => {
  vi.useRealTimers();
  expect(complaints).toEqual([]);
});

/** The environment a step of the scheduled workflow has (ARM_* exported for Pulumi; ACTIONS_* from GitHub). */
const oidcEnv = (): NodeJS.ProcessEnv => ({ ARM_USE_OIDC: "true", ARM_CLIENT_ID: CLIENT, ARM_TENANT_ID: TENANT, ACTIONS_ID_TOKEN_REQUEST_URL: githubUrl, ACTIONS_ID_TOKEN_REQUEST_TOKEN: REQUEST_TOKEN });
/** Instance discovery off: MSAL would otherwise ask login.microsoftonline.com about the fake authority. */
const fakeEntra = () => ({ authorityHost, disableInstanceDiscovery: true, tlsOptions: { ca } });
const credential = () => latlabAzureCredential(oidcEnv(), { identityOptions: fakeEntra() });
/** latlab's ARM request path with management.azure.com sent to the fake ARM. */
const toFakeArm: HttpGet = (url, init) => fetch(url.replace(ARM_ENDPOINT, armOrigin), init);
const readCapacity = (c: TokenCredential) => readComputeCapacity(["northeurope"], { subscriptionId: SUB, http: toFakeArm, credential: c });
const seen = (at: Event["at"]) => events.filter((e) => e.at === at);
/**
 * The events from `from` on, one word each: "github" (GitHub issued assertions: one word for a run
 * of them, MSAL asking twice being its business), "entra:entra-token-1" (Entra issued that token,
 * for an assertion the fake checked was new), "arm:entra-token-1" (ARM got that bearer).
 */
const trace = (from = 0) =>
  events
    .slice(from)
    .map((e) => (e.at === "github" ? "github" : e.at === "entra" ? `entra:${e.issued}` : `arm:${e.bearer.replace(/^Bearer /, "")}`))
    .filter((word, i, all) => word !== "github" || all[i - 1] !== "github");

describe("latlab's Azure credential over GitHub OIDC (fake GitHub, Entra and ARM on 127.0.0.1)", () => {
  it("reuses a token that is not yet due; renews it 5 minutes before expiry and after, each time with a new GitHub assertion", async () => {
    const c = credential();
    await readCapacity(c); // 3 ARM requests: Compute usages, SKUs, Network usages
    expect(trace()).toEqual(["github", "entra:entra-token-1", "arm:entra-token-1", "arm:entra-token-1", "arm:entra-token-1"]);

    // Half an hour on: the token has 30 minutes left, so no request goes to GitHub or Entra.
    vi.setSystemTime(Date.now() + 30 * MINUTE);
    let from = events.length;
    await readCapacity(c);
    expect(trace(from)).toEqual(["arm:entra-token-1", "arm:entra-token-1", "arm:entra-token-1"]);

    // 56 minutes after it was issued: 4 minutes left, inside the renewal margin. The next ARM
    // request asks, GitHub issues a new assertion, Entra a new token, and ARM gets that.
    vi.setSystemTime(Date.now() + 26 * MINUTE);
    from = events.length;
    await readCapacity(c);
    expect(trace(from)).toEqual(["github", "entra:entra-token-2", "arm:entra-token-2", "arm:entra-token-2", "arm:entra-token-2"]);

    // Two hours on, past that token's expiry too: renewed again before ARM sees a request.
    vi.setSystemTime(Date.now() + 120 * MINUTE);
    from = events.length;
    await readCapacity(c);
    expect(trace(from)).toEqual(["github", "entra:entra-token-3", "arm:entra-token-3", "arm:entra-token-3", "arm:entra-token-3"]);
  });

  it("the ARM SDK client (runGroups, sweep) over the same credential: renewed in its policy's 2-minute window, and past expiry", async () => {
    // @azure/core-rest-pipeline 1.25.0 dist/esm/util/tokenCycler.js: the bearer-token policy keeps
    // its token until 2 minutes before expiry, then refreshes in the background (the request in
    // hand still goes with the valid old token), and blocks for a new one at expiry.
    const client = new ResourceManagementClient(credential(), SUB, { endpoint: armTlsOrigin, tlsOptions: { ca } });
    const get = () => client.resourceGroups.get("latlab-g1");
    await get();
    vi.setSystemTime(Date.now() + 56 * MINUTE); // 4 minutes left: the policy does not ask yet
    await get();
    expect(trace()).toEqual(["github", "entra:entra-token-1", "arm:entra-token-1", "arm:entra-token-1"]);

    vi.setSystemTime(Date.now() + 2.5 * MINUTE); // 1.5 minutes left: inside the policy's window
    let from = events.length;
    await get();
    await vi.waitFor(() => expect(seen("entra")).toHaveLength(2), { timeout: 30_000 });
    await get();
    // The first request and the background refresh race; the refresh is done before the second.
    const window = trace(from);
    expect(window.filter((t) => t.startsWith("arm:"))).toEqual(["arm:entra-token-1", "arm:entra-token-2"]);
    expect(window.filter((t) => !t.startsWith("arm:"))).toEqual(["github", "entra:entra-token-2"]);
    expect(window.at(-1)).toBe("arm:entra-token-2");

    vi.setSystemTime(Date.now() + 120 * MINUTE); // long past expiry: the policy waits for a new token
    from = events.length;
    await get();
    expect(trace(from)).toEqual(["github", "entra:entra-token-3", "arm:entra-token-3"]);
  });

  it("asks GitHub and Entra once for concurrent requests (placement evidence reads every host at once)", async () => {
    const c = credential();
    const tokens = await Promise.all(Array.from({ length: 5 }, () => c.getToken(ARM_SCOPE)));
    expect(tokens.map((t) => t?.token)).toEqual(Array(5).fill("entra-token-1"));
    expect(trace()).toEqual(["github", "entra:entra-token-1"]);
  });

  it("a failing GitHub endpoint: the capacity check's error names ACTIONS_ID_TOKEN_REQUEST_URL and GitHub's answer; ARM gets no request", async () => {
    githubFails = 500;
    const error = await readCapacity(credential()).catch((e: Error) => e);
    expect(error).toBeInstanceOf(Error);
    expect((error as Error).message).toMatch(/^capacity check: could not get an Azure token for https:\/\/management\.azure\.com: .*GitHub OIDC token request \(ACTIONS_ID_TOKEN_REQUEST_URL, http:\/\/127\.0\.0\.1:\d+\): HTTP 500 .*the fake GitHub is failing/);
    expect((error as Error).message).not.toContain(REQUEST_TOKEN);
    expect(seen("arm")).toEqual([]);
    expect(seen("entra")).toEqual([]);
    // A 403 (the job lacks id-token: write) says so.
    githubFails = 403;
    await expect(githubOidcAssertion({ requestUrl: githubUrl, requestToken: REQUEST_TOKEN })()).rejects.toThrow(/HTTP 403 .*permissions: id-token: write/);
    // Nothing listening: the cause is said.
    const gone = createHttpServer();
    const port = await listen(gone);
    await close(gone);
    await expect(githubOidcAssertion({ requestUrl: `http://127.0.0.1:${port}/idtoken?api-version=2.0`, requestToken: REQUEST_TOKEN })()).rejects.toThrow(
      /^GitHub OIDC token request \(ACTIONS_ID_TOKEN_REQUEST_URL, http:\/\/127\.0\.0\.1:\d+\) failed: fetch failed: .*ECONNREFUSED/,
    );
  });

  it("MSAL alone asks GitHub for an assertion on every getToken, even when it answers from its cache: why latlab caches in front", async () => {
    const raw = new ClientAssertionCredential(TENANT, CLIENT, githubOidcAssertion({ requestUrl: githubUrl, requestToken: REQUEST_TOKEN }), fakeEntra());
    const first = await raw.getToken(ARM_SCOPE);
    const asked = seen("github").length;
    const second = await raw.getToken(ARM_SCOPE);
    // The same token from MSAL's cache, and Entra was not asked; GitHub was, for nothing.
    expect(second?.token).toBe(first?.token);
    expect(seen("entra")).toHaveLength(1);
    expect(seen("github").length).toBeGreaterThan(asked);
  });

  it("a token living less than the 5-minute margin is due as soon as issued: every request renews it (MSAL's rule, kept)", async () => {
    expiresIn = 120;
    await readCapacity(credential());
    expect(trace().filter((t) => !t.startsWith("github"))).toEqual([
      "entra:entra-token-1",
      "arm:entra-token-1",
      "entra:entra-token-2",
      "arm:entra-token-2",
      "entra:entra-token-3",
      "arm:entra-token-3",
    ]);
  });
});

describe("which credential the environment selects", () => {
  it("GitHub OIDC only with ARM_USE_OIDC exactly 'true' (as Pulumi's provider reads it); else DefaultAzureCredential", () => {
    const env = { ARM_CLIENT_ID: CLIENT, ARM_TENANT_ID: TENANT, ACTIONS_ID_TOKEN_REQUEST_URL: "https://gh.invalid/idtoken?api-version=2.0", ACTIONS_ID_TOKEN_REQUEST_TOKEN: "t" };
    expect(armCredentialSource({ ...env, ARM_USE_OIDC: "true" })).toEqual({ kind: "github-oidc", tenantId: TENANT, clientId: CLIENT, requestUrl: env.ACTIONS_ID_TOKEN_REQUEST_URL, requestToken: "t" });
    for (const v of [undefined, "", "false", "1", "TRUE"]) expect(armCredentialSource({ ...env, ARM_USE_OIDC: v }).kind).toBe("default");
    expect(armCredentialSource({})).toEqual({ kind: "default" });
    expect(armCredentialSource({ AZURE_AUTHORITY_HOST: "https://login.example.invalid" })).toEqual({ kind: "default", authorityHost: "https://login.example.invalid" });
  });

  it("ARM_USE_OIDC=true with variables missing, empty or not a URL: an error naming each, before any request", () => {
    expect(() => armCredentialSource({ ARM_USE_OIDC: "true", ARM_CLIENT_ID: CLIENT, ARM_TENANT_ID: " " })).toThrow(
      /^ARM_USE_OIDC=true, but ARM_TENANT_ID, ACTIONS_ID_TOKEN_REQUEST_URL, ACTIONS_ID_TOKEN_REQUEST_TOKEN are not set\. .*permissions: id-token: write/,
    );
    expect(() => latlabAzureCredential({ ARM_USE_OIDC: "true", ARM_CLIENT_ID: CLIENT, ARM_TENANT_ID: TENANT, ACTIONS_ID_TOKEN_REQUEST_TOKEN: "t" })).toThrow(/but ACTIONS_ID_TOKEN_REQUEST_URL is not set/);
    expect(() => armCredentialSource({ ARM_USE_OIDC: "true", ARM_CLIENT_ID: CLIENT, ARM_TENANT_ID: TENANT, ACTIONS_ID_TOKEN_REQUEST_URL: "not a url", ACTIONS_ID_TOKEN_REQUEST_TOKEN: "t" })).toThrow(
      /but ACTIONS_ID_TOKEN_REQUEST_URL is not an http\(s\) URL/,
    );
  });

  it("the capacity check reports a credential that cannot be made as a token error, without calling ARM", async () => {
    const calls: string[] = [];
    const http: HttpGet = async (url) => (calls.push(url), { ok: true, status: 200, text: async () => "{}" });
    vi.stubEnv("ARM_USE_OIDC", "true");
    vi.stubEnv("ARM_CLIENT_ID", "");
    try {
      await expect(readComputeCapacity(["northeurope"], { subscriptionId: SUB, http })).rejects.toThrow(/^capacity check: could not get an Azure token for https:\/\/management\.azure\.com: ARM_USE_OIDC=true, but ARM_CLIENT_ID/);
    } finally {
      vi.unstubAllEnvs();
    }
    expect(calls).toEqual([]);
  });

  it("GitHub's URL gets the audience appended, encoded as @actions/core does", () => {
    expect(githubOidcRequestUrl("https://gh.invalid/idtoken?api-version=2.0")).toBe("https://gh.invalid/idtoken?api-version=2.0&audience=api%3A%2F%2FAzureADTokenExchange");
    expect(githubOidcRequestUrl("https://gh.invalid/idtoken")).toBe("https://gh.invalid/idtoken?audience=api%3A%2F%2FAzureADTokenExchange");
  });
});

describe("the token cache", () => {
  const token = (name: string, expiresOnTimestamp: number, refreshAfterTimestamp?: number): AccessToken => ({ token: name, expiresOnTimestamp, tokenType: "Bearer", ...(refreshAfterTimestamp ? { refreshAfterTimestamp } : {}) });
  /** A credential that hands out t1, t2… each expiring `life` ms after the (fake) now. */
  const counting = (now: () => number, life = 60 * MINUTE, refreshAfter?: number) => {
    const asked: unknown[] = [];
    const inner: TokenCredential = { getToken: async (_scopes, options) => (asked.push(options), token(`t${asked.length}`, now() + life, refreshAfter === undefined ? undefined : now() + refreshAfter)) };
    return { inner, asked };
  };

  it("fresh until RENEW_BEFORE_EXPIRY_MS before expiry, or the refresh time Entra gave", () => {
    expect(tokenIsFresh(token("a", 1_000_000), 1_000_000 - RENEW_BEFORE_EXPIRY_MS - 1)).toBe(true);
    expect(tokenIsFresh(token("a", 1_000_000), 1_000_000 - RENEW_BEFORE_EXPIRY_MS)).toBe(false);
    expect(tokenIsFresh(token("a", 10_000_000, 500_000), 499_999)).toBe(true);
    expect(tokenIsFresh(token("a", 10_000_000, 500_000), 500_000)).toBe(false);
  });

  it("keys by scope and tenant; a CAE claims challenge always goes through", async () => {
    let now = 0;
    const { inner, asked } = counting(() => now);
    const c = cachingCredential(inner, () => now);
    expect((await c.getToken(ARM_SCOPE))?.token).toBe("t1");
    expect((await c.getToken([ARM_SCOPE]))?.token).toBe("t1");
    expect((await c.getToken(ARM_SCOPE, { tenantId: "other" }))?.token).toBe("t2");
    expect((await c.getToken(ARM_SCOPE, { claims: "e30=" }))?.token).toBe("t3");
    expect((await c.getToken(ARM_SCOPE))?.token).toBe("t1");
    now = 56 * MINUTE;
    expect((await c.getToken(ARM_SCOPE))?.token).toBe("t4");
    expect(asked).toHaveLength(4);
  });

  it("a failed request is not cached: the next call asks again", async () => {
    let fail = true;
    const c = cachingCredential({ getToken: async () => (fail ? Promise.reject(new Error("down")) : token("ok", Date.now() + 60 * MINUTE)) });
    await expect(c.getToken(ARM_SCOPE)).rejects.toThrow("down");
    fail = false;
    expect((await c.getToken(ARM_SCOPE))?.token).toBe("ok");
  });

  it("placement evidence asks the credential before each ARM request", async () => {
    let asked = 0;
    const c: TokenCredential = { getToken: async () => token(`p${++asked}`, Date.now() + 60 * MINUTE) };
    const bearers: string[] = [];
    const http: HttpGet = async (_url, init) => (bearers.push(init.headers.authorization!), { ok: true, status: 200, text: async () => "{}" });
    const vm = (role: string) => ({ deployment: "d", role, publicIp: "198.51.100.1", privateIp: "10.0.0.4", hostKey: "k", vmName: `vm-${role}`, vmId: `/subscriptions/${SUB}/resourceGroups/g/providers/Microsoft.Compute/virtualMachines/vm-${role}` });
    const plan = { deployments: [{ id: "d", index: 0, hosts: [{ role: "client", ppg: null }, { role: "server", ppg: null }] }] };
    await readPlacementEvidence(plan as never, { resourceGroup: "g", hosts: [vm("client"), vm("server")] } as never, { http, credential: c });
    expect(bearers.sort()).toEqual(["Bearer p1", "Bearer p2"]);
  });
});
