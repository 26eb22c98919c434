import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { rm } from "node:fs/promises";
import { ArmError } from "./armError.ts";
import type { Cloud } from "./cloud.ts";
import { capacityRoute, CapacitySchema, networkUsagesOf, skusOf, usagesOf, type Capacity } from "./subscriptionCapacity.ts";

/**
 * ARM's REST surface over a Unix socket (never a TCP port: nothing on any network can reach
 * it): PUT/GET/DELETE on resource ids with `?api-version=`, long-running operations answered
 * with an `Azure-AsyncOperation` header the client polls, errors as `{ "error": { code,
 * message } }`. `/_emulator/info` tells the provider plugin the subscription it plays in.
 */

export const OPERATIONS_PATH = "/operations/";
export const INFO_PATH = "/_emulator/info";

export interface ArmServer {
  socketPath: string;
  close(): Promise<void>;
}

function send(res: ServerResponse, status: number, body?: unknown, headers: Record<string, string> = {}): void {
  const text = body === undefined ? "" : JSON.stringify(body);
  res.writeHead(status, { ...(body === undefined ? {} : { "content-type": "application/json; charset=utf-8" }), ...headers });
  res.end(text);
}

async function readBody(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  const text = Buffer.concat(chunks).toString("utf8");
  if (text.trim() === "") return undefined;
  try {
    return JSON.parse(text);
  } catch (e) {
    throw new ArmError(400, "InvalidRequestContent", `The request content was invalid and could not be deserialized: ${(e as Error).message}`);
  }
}

export async function startArmServer(cloud: Cloud, socketPath: string, info: () => Record<string, unknown>, capacity: Capacity = CapacitySchema.parse({})): Promise<ArmServer> {
  await rm(socketPath, { force: true });
  const server: Server = createServer((req, res) => {
    void (async () => {
      try {
        const url = new URL(req.url ?? "/", "http://arm.emulator");
        const path = decodeURIComponent(url.pathname);
        const apiVersion = url.searchParams.get("api-version") ?? undefined;
        if (path === INFO_PATH) return send(res, 200, info());
        if (path.startsWith(OPERATIONS_PATH)) {
          const op = cloud.operation(path.slice(OPERATIONS_PATH.length));
          return send(res, 200, { id: op.id, status: op.status, ...(op.error ? { error: op.error } : {}) });
        }
        // The subscription's compute and network usages and its SKUs (read-only lists, not resources).
        const listing = req.method === "GET" ? capacityRoute(path, url.searchParams) : undefined;
        if (listing?.kind === "usages") return send(res, 200, usagesOf(cloud, listing.region, capacity));
        if (listing?.kind === "network-usages") return send(res, 200, networkUsagesOf(cloud, listing.subscription, listing.region, capacity));
        if (listing?.kind === "skus") {
          if (!listing.region) throw new ArmError(400, "InvalidFilter", "The emulator serves resource SKUs for one location: $filter=location eq '<region>'.");
          return send(res, 200, skusOf(listing.region, capacity));
        }
        switch (req.method) {
          case "GET": {
            // VirtualMachines_InstanceView: GET {vm id}/instanceView (not a resource of its own).
            const instanceView = /^(\/subscriptions\/[^/]+\/resourceGroups\/[^/]+\/providers\/Microsoft\.Compute\/virtualMachines\/[^/]+)\/instanceView\/?$/i.exec(path);
            if (instanceView) return send(res, 200, cloud.instanceView(instanceView[1]!));
            return send(res, 200, cloud.read(path, url.searchParams));
          }
          case "PUT": {
            const r = cloud.put(path, apiVersion, await readBody(req));
            return send(res, r.status, r.body, { "azure-asyncoperation": `${OPERATIONS_PATH}${r.operation}` });
          }
          case "DELETE": {
            const r = cloud.delete(path, apiVersion);
            return send(res, r.status, undefined, r.operation ? { "azure-asyncoperation": `${OPERATIONS_PATH}${r.operation}` } : {});
          }
          default:
            throw new ArmError(405, "MethodNotAllowed", `${req.method} is not supported`);
        }
      } catch (e) {
        const err = e instanceof ArmError ? e : new ArmError(500, "InternalServerError", (e as Error).message);
        send(res, err.status, err.toBody());
      }
    })();
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(socketPath, () => resolve());
  });
  return {
    socketPath,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await rm(socketPath, { force: true });
    },
  };
}
