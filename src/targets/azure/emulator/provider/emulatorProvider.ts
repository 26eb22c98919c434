import { isDeepStrictEqual } from "node:util";
import type { CheckResult, CreateResult, DiffResult, Provider, ReadResult, UpdateResult } from "@pulumi/pulumi/provider/index.js";
import { formatResourceId } from "../arm/resourceId.ts";
import { ArmRequestError, type ArmClient } from "./armClient.ts";
import { containsUnknown, unwrapSecrets } from "./wireValues.ts";

/**
 * The `azure-native` resource provider as latlab's emulator plays it: the Pulumi engine calls
 * check/diff/create/read/update/delete over gRPC (served by @pulumi/pulumi/provider's main()),
 * and each becomes what the real provider sends to ARM — the SDK's inputs turned into a request
 * body by the REST API specification (x-ms-client-flatten), a PUT or DELETE on the resource id,
 * the long-running operation polled — except that ARM is the emulator behind a Unix socket.
 */

/** How SDK inputs map to ARM requests for one Pulumi type token (from the REST API specs). */
export interface SdkShape {
  /** ARM type, api-version and the path parameters (in id order, resource group first) of a token; undefined when not emulated. */
  typeOf(token: string): { armType: string; apiVersion: string; pathParams: readonly string[] } | undefined;
  /** SDK inputs → path parameter values and the ARM request body. */
  toArm(token: string, inputs: Record<string, unknown>): { pathParams: Record<string, string>; body: Record<string, unknown> };
  /** ARM response body → the outputs the SDK declares. */
  toSdk(token: string, body: Record<string, unknown>): Record<string, unknown>;
}

/** Inputs kept in the outputs under this key: diff compares new inputs with them (ARM's answer normalises and omits write-only fields). */
export const INPUTS_KEY = "__latlabInputs";

/** `urn:pulumi:stack::project::parent$azure-native:network:Subnet::name` → `azure-native:network:Subnet`. */
export function tokenOfUrn(urn: string): string {
  const parts = urn.split("::");
  const qualified = parts[2] ?? "";
  return qualified.split("$").pop() ?? qualified;
}

/** Properties whose change Azure cannot apply in place: the names in the id, where it lives. */
const REPLACE_ON_CHANGE = ["location", "zones"];

export class EmulatorProvider implements Provider {
  private subscription: string | undefined;
  private readonly client: ArmClient;
  private readonly shape: SdkShape;
  readonly version: string;

  constructor(client: ArmClient, shape: SdkShape, version: string) {
    this.client = client;
    this.shape = shape;
    this.version = version;
  }

  private async sub(): Promise<string> {
    this.subscription ??= String((await this.client.info()).subscription);
    return this.subscription;
  }

  private type(urn: string) {
    const token = tokenOfUrn(urn);
    const t = this.shape.typeOf(token);
    if (!t) throw new Error(`${token} is not emulated by latlab's Azure emulator (it plays the resource types latlab's program uses)`);
    return { token, ...t };
  }

  private async idFor(urn: string, inputs: Record<string, unknown>) {
    const t = this.type(urn);
    const { pathParams, body } = this.shape.toArm(t.token, inputs);
    const missing = t.pathParams.filter((p) => !pathParams[p]);
    if (missing.length) throw new Error(`${t.token}: missing required input ${missing.map((m) => `'${m}'`).join(", ")}`);
    const [group, ...names] = t.pathParams.map((p) => pathParams[p]!);
    const id = formatResourceId(await this.sub(), group!, t.armType, t.armType.toLowerCase() === "microsoft.resources/resourcegroups" ? [] : names);
    return { ...t, id, body };
  }

  private outputs(token: string, armBody: Record<string, unknown>, inputs: Record<string, unknown>): Record<string, unknown> {
    return { ...this.shape.toSdk(token, armBody), [INPUTS_KEY]: inputs };
  }

  async check(urn: string, _olds: unknown, news: Record<string, unknown>): Promise<CheckResult> {
    const t = this.type(urn);
    const failures = t.pathParams.filter((p) => news[p] === undefined || news[p] === null || news[p] === "").map((p) => ({ property: p, reason: `missing required property '${p}'` }));
    return { inputs: news, failures };
  }

  async diff(_id: string, urn: string, olds: Record<string, unknown>, news: Record<string, unknown>): Promise<DiffResult> {
    const t = this.type(urn);
    const before = (unwrapSecrets(olds[INPUTS_KEY]) ?? {}) as Record<string, unknown>;
    const after = unwrapSecrets(news) as Record<string, unknown>;
    const keys = [...new Set([...Object.keys(before), ...Object.keys(after)])];
    const changed = keys.filter((k) => !isDeepStrictEqual(before[k], after[k]));
    if (changed.length === 0) return { changes: false };
    // An unknown value (a preview, waiting on another resource's output) may well be unchanged: a
    // possible update, not a replacement, as azure-native reports it.
    const replaces = changed.filter((k) => (t.pathParams.includes(k) || REPLACE_ON_CHANGE.includes(k)) && !containsUnknown(after[k]));
    return { changes: true, replaces, deleteBeforeReplace: replaces.length > 0 };
  }

  async create(urn: string, inputs: Record<string, unknown>): Promise<CreateResult> {
    const plain = unwrapSecrets(inputs) as Record<string, unknown>;
    const r = await this.idFor(urn, plain);
    try {
      const after = await this.client.put(r.id, r.apiVersion, r.body);
      return { id: r.id, outs: this.outputs(r.token, after, inputs) };
    } catch (e) {
      // Accepted, then failed (AllocationFailed): the resource exists in ARM in state Failed.
      // Pulumi must track it ("resource init failed" with the id) so that destroy deletes it.
      if (e instanceof ArmRequestError && e.accepted) {
        const body = await this.client.get(r.id, r.apiVersion).catch(() => undefined);
        throw Object.assign(new Error(e.message), { id: r.id, properties: body ? this.outputs(r.token, body, inputs) : { [INPUTS_KEY]: inputs }, reasons: [e.message] });
      }
      throw e;
    }
  }

  async read(id: string, urn: string, props?: Record<string, unknown>): Promise<ReadResult> {
    const t = this.type(urn);
    const body = await this.client.get(id, t.apiVersion);
    if (!body) return {};
    return { id, props: this.outputs(t.token, body, (props?.[INPUTS_KEY] as Record<string, unknown> | undefined) ?? {}) };
  }

  async update(id: string, urn: string, _olds: Record<string, unknown>, news: Record<string, unknown>): Promise<UpdateResult> {
    const plain = unwrapSecrets(news) as Record<string, unknown>;
    const r = await this.idFor(urn, plain);
    const after = await this.client.put(id, r.apiVersion, r.body);
    return { outs: this.outputs(r.token, after, news) };
  }

  async delete(id: string, urn: string): Promise<void> {
    const t = this.type(urn);
    await this.client.delete(id, t.apiVersion);
  }
}
