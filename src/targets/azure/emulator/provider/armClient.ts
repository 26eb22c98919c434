import { request } from "node:http";

/**
 * The provider plugin's side of ARM: requests over the emulator's Unix socket, and the
 * long-running-operation protocol azure-native follows (PUT/DELETE answered at once with an
 * `Azure-AsyncOperation` URL, polled until Succeeded or Failed).
 */

export class ArmRequestError extends Error {
  readonly status: number;
  readonly code: string;
  readonly armMessage: string;
  readonly method: string;
  /** Not `id`: @pulumi/pulumi's provider server takes an error with an `id` for a resource that exists but failed to initialise. */
  readonly resourceId: string;
  /** The request was accepted and its operation failed: the resource exists in ARM (provisioningState Failed). */
  readonly accepted: boolean;

  constructor(status: number, code: string, armMessage: string, method: string, resourceId: string, accepted = false) {
    // The shape azure-native's own errors have: what Pulumi prints under the resource.
    super(`${method === "PUT" ? "creating/updating" : method === "DELETE" ? "deleting" : "reading"} ${resourceId}: Status=${status} Code="${code}" Message="${armMessage}"`);
    this.status = status;
    this.code = code;
    this.armMessage = armMessage;
    this.method = method;
    this.resourceId = resourceId;
    this.accepted = accepted;
    this.name = "ArmRequestError";
  }
}

interface Response {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: unknown;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export class ArmClient {
  readonly socketPath: string;
  private readonly pollMs: number;

  constructor(socketPath: string, pollMs = 100) {
    this.socketPath = socketPath;
    this.pollMs = pollMs;
  }

  private send(method: string, path: string, body?: unknown): Promise<Response> {
    return new Promise((resolve, reject) => {
      const payload = body === undefined ? undefined : JSON.stringify(body);
      const req = request(
        { socketPath: this.socketPath, method, path, headers: payload ? { "content-type": "application/json", "content-length": Buffer.byteLength(payload) } : {} },
        (res) => {
          const chunks: Buffer[] = [];
          res.on("data", (c: Buffer) => chunks.push(c));
          res.on("end", () => {
            const text = Buffer.concat(chunks).toString("utf8");
            let parsed: unknown;
            try {
              parsed = text ? JSON.parse(text) : undefined;
            } catch {
              parsed = text;
            }
            resolve({ status: res.statusCode ?? 0, headers: res.headers, body: parsed });
          });
          res.on("error", reject);
        },
      );
      req.on("error", (e) => reject(new Error(`the Azure emulator at ${this.socketPath} does not answer (${e.message}); is the run that started it still going?`)));
      if (payload) req.write(payload);
      req.end();
    });
  }

  private fail(r: Response, method: string, id: string): never {
    const err = (r.body as { error?: { code?: string; message?: string } } | undefined)?.error;
    throw new ArmRequestError(r.status, err?.code ?? `HTTP${r.status}`, err?.message ?? String(r.body ?? ""), method, id);
  }

  async info(): Promise<Record<string, unknown>> {
    const r = await this.send("GET", "/_emulator/info");
    if (r.status !== 200) this.fail(r, "GET", "/_emulator/info");
    return r.body as Record<string, unknown>;
  }

  async get(id: string, apiVersion: string): Promise<Record<string, unknown> | undefined> {
    const r = await this.send("GET", `${encodeURI(id)}?api-version=${apiVersion}`);
    if (r.status === 404) return undefined;
    if (r.status !== 200) this.fail(r, "GET", id);
    return r.body as Record<string, unknown>;
  }

  /** PUT, then wait for the operation; resolves with the resource as GET returns it afterwards. */
  async put(id: string, apiVersion: string, body: unknown): Promise<Record<string, unknown>> {
    const r = await this.send("PUT", `${encodeURI(id)}?api-version=${apiVersion}`, body);
    if (r.status !== 200 && r.status !== 201) this.fail(r, "PUT", id);
    await this.wait(r, "PUT", id);
    const after = await this.get(id, apiVersion);
    if (!after) throw new ArmRequestError(404, "ResourceNotFound", "the resource vanished after its creation succeeded", "PUT", id);
    return after;
  }

  /** DELETE, then wait for the operation; a resource already gone counts as deleted. */
  async delete(id: string, apiVersion: string): Promise<void> {
    const r = await this.send("DELETE", `${encodeURI(id)}?api-version=${apiVersion}`);
    if (r.status === 204 || r.status === 404) return;
    if (r.status !== 200 && r.status !== 202) this.fail(r, "DELETE", id);
    await this.wait(r, "DELETE", id);
  }

  private async wait(r: Response, method: string, id: string): Promise<void> {
    const op = r.headers["azure-asyncoperation"];
    if (typeof op !== "string") return;
    for (;;) {
      const s = await this.send("GET", op);
      if (s.status !== 200) this.fail(s, method, id);
      const body = s.body as { status: string; error?: { code: string; message: string } };
      if (body.status === "Succeeded") return;
      if (body.status === "Failed" || body.status === "Canceled") throw new ArmRequestError(200, body.error?.code ?? "Failed", body.error?.message ?? "the operation failed", method, id, true);
      await sleep(this.pollMs);
    }
  }
}
