import { randomUUID } from "node:crypto";
import { ArmError, type ArmErrorBody } from "./armError.ts";
import { FaultBook, type Fault } from "./faults.ts";
import { idKey, parseResourceId, references, RESOURCE_GROUP_TYPE, ResourceIdError, sameType, type ResourceId } from "./resourceId.ts";

/**
 * ARM's control plane, as one machine can play it: resources keyed by id, each with a
 * provisioning state; PUT and DELETE accepted at once and finished later (long-running
 * operations a client polls), with a configurable time per type so that ordering bugs surface;
 * references resolved before a PUT is accepted (missing → error, not provisioned →
 * ReferencedResourceNotProvisioned); one operation at a time on a VNet and its children
 * (AnotherOperationInProgress); deletes refused while something uses the resource; faults on
 * request; an operations log that tests assert on.
 *
 * What a resource *does* (a VM becoming a host, a peering becoming routes) is not here: the
 * type's rules (platform checks, computed properties) come from `TypeRules`, side effects from
 * the hooks, so this file stays ARM's bookkeeping.
 */

export type ProvisioningState = "Creating" | "Updating" | "Succeeded" | "Failed" | "Deleting";

export interface StoredResource {
  id: string;
  key: string;
  type: string;
  name: string;
  resourceGroup: string;
  /** Key of the enclosing resource (a subnet's VNet); the group's key for a top-level one. */
  parentKey?: string;
  /** The body ARM returns on GET, without provisioningState (added when read). */
  body: Record<string, unknown>;
  state: ProvisioningState;
  /** Why the last operation failed, when state is Failed. */
  error?: ArmErrorBody;
  /** What the emulator derived and keeps beside the body (namespace names, addresses handed out…). */
  runtime: Record<string, unknown>;
  /** Order of creation (a VM's fault domain, stable listing). */
  seq: number;
  /** Write-only values kept in memory for the operation that needs them, never persisted nor returned (a VM's customData). */
  secrets?: Record<string, string>;
}

export interface OperationLogEntry {
  seq: number;
  /** Milliseconds since the cloud started. */
  at: number;
  /** "PUT" / "DELETE" as requested; "complete" when a long-running operation ends. */
  method: "PUT" | "DELETE" | "complete";
  type: string;
  name: string;
  id: string;
  /** HTTP status of the request; for "complete", 200 (Succeeded) or the failure's status. */
  status: number;
  /** "Succeeded", "Failed" or the error code. */
  outcome: string;
  message?: string;
}

export interface AsyncOperation {
  id: string;
  resourceKey: string;
  kind: "put" | "delete";
  status: "InProgress" | "Succeeded" | "Failed";
  error?: ArmErrorBody;
}

/** Read-only view of the cloud that rules and hooks look at. */
export interface CloudView {
  get(id: string): StoredResource | undefined;
  all(type?: string): StoredResource[];
  /** Resources whose body references `id` (a subnet's NICs, a NIC's VM…), not counting ones being deleted. */
  referrers(id: string): StoredResource[];
  subscription: string;
}

/** What one ARM type adds to the bookkeeping. Every function may throw an ArmError. */
export interface TypeRules {
  apiVersion: string;
  /** Checks the body (schema and platform rules) before anything is accepted. */
  validate?(body: Record<string, unknown>, id: ResourceId, view: CloudView, existing: StoredResource | undefined): void;
  /** Fills what ARM computes at acceptance (resourceGuid, a NIC's MAC, a public address…); may write runtime. */
  accept?(resource: StoredResource, view: CloudView): void;
  /** Runs while the resource is Creating/Updating (a VM boots here); a throw fails the operation. */
  provision?(resource: StoredResource, view: CloudView, faults: FaultBook): Promise<void>;
  /** Why the resource may not be deleted now, or undefined. */
  inUse?(resource: StoredResource, view: CloudView): ArmError | undefined;
  /** Runs while the resource is Deleting. Resources returned are deleted with it (deleteOption: Delete). */
  deprovision?(resource: StoredResource, view: CloudView): Promise<string[] | void>;
  /** Writes go through the parent (subnets, peerings: one operation at a time per VNet). */
  serializeOnParent?: boolean;
  /** Fields omitted from GET (write-only ones such as osProfile.customData). */
  redact?(body: Record<string, unknown>): Record<string, unknown>;
  /** Read-only properties ARM computes when asked on GET (a PPG's colocation status, `?includeColocationStatus=true`); writes into `body`. */
  onRead?(body: Record<string, unknown>, resource: StoredResource, view: CloudView, query: URLSearchParams, faults: FaultBook): void;
  /** `GET {id}/instanceView` of a type that has one (a VM). */
  instanceView?(resource: StoredResource, view: CloudView): Record<string, unknown>;
}

export interface CloudOptions {
  subscription: string;
  rules: Readonly<Record<string, TypeRules>>;
  faults?: readonly Fault[];
  /** How long an operation stays in progress, per ARM type (lower case) or "default", in ms. */
  delays?: Readonly<Record<string, number>>;
  /** Called after every change of state that the kernel may have to follow (peerings, NSGs, public IPs). */
  onChange?: (view: CloudView) => Promise<void>;
  /** Called with every log entry as it is written (the emulator appends them to a file). */
  onLog?: (entry: OperationLogEntry) => void;
  /** Told what could not be saved or logged (the run goes on). */
  onWarning?: (message: string) => void;
  /** Called after every change worth persisting. */
  onPersist?: (snapshot: CloudSnapshot) => void;
  /** State to resume (a previous emulator's, from its state file). */
  snapshot?: CloudSnapshot;
  /** What a kill-runner fault does once the state is saved (the emulator: SIGKILL its process group). */
  onKillRunner?: (reason: string) => void;
}

export interface CloudSnapshot {
  subscription: string;
  seq: number;
  resources: StoredResource[];
}

const DEFAULT_DELAY_MS = 200;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/** Properties ARM owns: a client's values for them are ignored, never stored. */
const SERVER_OWNED_TOP = ["id", "name", "type", "etag"];

export class Cloud implements CloudView {
  readonly subscription: string;
  private readonly resources = new Map<string, StoredResource>();
  private readonly operations = new Map<string, AsyncOperation>();
  private readonly pending = new Set<Promise<unknown>>();
  private readonly faultBook: FaultBook;
  private readonly started = Date.now();
  private readonly logEntries: OperationLogEntry[] = [];
  private seq = 0;
  private closed = false;
  private readonly options: CloudOptions;

  constructor(options: CloudOptions) {
    this.options = options;
    this.subscription = options.subscription;
    this.faultBook = new FaultBook(options.faults ?? []);
    if (options.snapshot) {
      this.seq = options.snapshot.seq;
      for (const r of options.snapshot.resources) {
        // An operation that was in flight when the last emulator stopped did not finish.
        const state: ProvisioningState = r.state === "Succeeded" || r.state === "Failed" ? r.state : "Failed";
        this.resources.set(r.key, { ...r, state, ...(state !== r.state ? { error: { code: "OperationInterrupted", message: "the emulator stopped while this resource's operation was in progress" } } : {}) });
      }
    }
  }

  // ---------------------------------------------------------------------------------------------
  // CloudView

  get(id: string): StoredResource | undefined {
    return this.resources.get(idKey(id));
  }

  all(type?: string): StoredResource[] {
    const list = [...this.resources.values()].sort((a, b) => a.seq - b.seq);
    return type ? list.filter((r) => sameType(r.type, type)) : list;
  }

  referrers(id: string): StoredResource[] {
    const key = idKey(id);
    return this.all().filter((r) => r.state !== "Deleting" && references(r.body).some((ref) => idKey(ref.id) === key));
  }

  // ---------------------------------------------------------------------------------------------
  // Introspection (tests, the rehearsal's report)

  get log(): readonly OperationLogEntry[] {
    return this.logEntries;
  }

  faultReport() {
    return this.faultBook.report();
  }

  snapshot(): CloudSnapshot {
    return { subscription: this.subscription, seq: this.seq, resources: this.all().map(({ secrets: _, ...r }) => structuredClone(r)) };
  }

  /** Resolves when no operation is in progress. */
  async idle(): Promise<void> {
    while (this.pending.size > 0) await Promise.allSettled([...this.pending]);
  }

  // ---------------------------------------------------------------------------------------------
  // Requests

  /** GET of a resource: its body with provisioningState (and what the query asks ARM to compute); 404 as ARM words it. */
  read(id: string, query?: URLSearchParams): Record<string, unknown> {
    return this.present(this.stored(id), query);
  }

  /** GET {id}/instanceView: what the type says of the running resource; 404 as for read, or for a type without one. */
  instanceView(id: string): Record<string, unknown> {
    const r = this.stored(id);
    const rules = this.rulesFor(r);
    if (!rules.instanceView) throw new ArmError(404, "NotFound", `${r.type} has no instanceView.`);
    return rules.instanceView(r, this);
  }

  private stored(id: string): StoredResource {
    const parsed = this.parse(id);
    const r = this.resources.get(parsed.key);
    if (!r) {
      if (parsed.type !== RESOURCE_GROUP_TYPE && !this.resources.has(idKey(this.groupId(parsed)))) throw groupNotFound(parsed.resourceGroup);
      throw new ArmError(404, "ResourceNotFound", `The Resource '${parsed.type}/${parsed.name}' under resource group '${parsed.resourceGroup}' was not found.`);
    }
    return r;
  }

  operation(opId: string): AsyncOperation {
    const op = this.operations.get(opId);
    if (!op) throw new ArmError(404, "OperationNotFound", `operation ${opId} not found`);
    return { ...op };
  }

  /**
   * PUT: validated and accepted (status 201 new / 200 existing) with the operation to poll, or an
   * ArmError. The operation ends Succeeded or Failed after the type's delay and side effects.
   */
  put(id: string, apiVersion: string | undefined, rawBody: unknown): { status: number; body: Record<string, unknown>; operation: string } {
    this.assertOpen();
    const parsed = this.parse(id);
    const rules = this.rulesFor(parsed);
    this.checkApiVersion(parsed, rules, apiVersion);
    try {
      if (!isRecord(rawBody)) throw new ArmError(400, "InvalidRequestContent", "The request content was invalid and could not be deserialized: the body must be a JSON object.");
      const existing = this.resources.get(parsed.key);
      const group = parsed.type === RESOURCE_GROUP_TYPE ? undefined : this.resources.get(idKey(this.groupId(parsed)));
      if (parsed.type !== RESOURCE_GROUP_TYPE && (!group || group.state === "Deleting")) throw groupNotFound(parsed.resourceGroup);
      const parent = parsed.parent && parsed.parent !== this.groupId(parsed) ? this.resources.get(idKey(parsed.parent)) : undefined;
      if (parsed.parent && parsed.parent !== this.groupId(parsed) && (!parent || parent.state === "Deleting")) {
        throw new ArmError(404, "ParentResourceNotFound", `Can not perform requested operation on nested resource. Parent resource '${parsed.parent.split("/").pop()}' not found.`);
      }
      if (existing && existing.state !== "Succeeded" && existing.state !== "Failed") {
        throw new ArmError(409, existing.state === "Deleting" ? "Conflict" : "AnotherOperationInProgress", `${parsed.type} '${parsed.name}' is ${existing.state.toLowerCase()}: another operation on it is in progress.`);
      }
      if (rules.serializeOnParent && parent) this.assertParentQuiet(parent, parsed);

      if (this.faultBook.take("kill-runner", parsed.type, parsed.name)) {
        this.persist();
        this.options.onKillRunner?.(`injected fault: the runner is killed at the PUT of ${parsed.type} '${parsed.name}'`);
      }
      const body = structuredClone(rawBody);
      for (const k of SERVER_OWNED_TOP) delete body[k];
      if (isRecord(body.properties)) delete body.properties.provisioningState;
      rules.validate?.(body, parsed, this, existing);
      this.checkReferences(body, parsed);
      const fault = parsed.type !== RESOURCE_GROUP_TYPE && !existing ? this.faultBook.take("create-error", parsed.type, parsed.name) : undefined;
      // SkuNotAvailable and QuotaExceeded are refused synchronously; AllocationFailed is accepted and fails later.
      if (fault && fault.code !== "AllocationFailed") throw createFault(fault.code, parsed);

      const resource: StoredResource = {
        id: existing?.id ?? parsed.id,
        key: parsed.key,
        type: existing?.type ?? parsed.type,
        name: existing?.name ?? parsed.name,
        resourceGroup: parsed.resourceGroup,
        ...(parsed.parent ? { parentKey: idKey(parsed.parent) } : {}),
        body: { ...body, id: existing?.id ?? parsed.id, name: existing?.name ?? parsed.name, type: existing?.type ?? parsed.type },
        state: existing ? "Updating" : "Creating",
        runtime: existing?.runtime ?? {},
        seq: existing?.seq ?? ++this.seq,
      };
      rules.accept?.(resource, this);
      this.resources.set(resource.key, resource);
      const op = this.startOperation(resource, "put", async () => {
        if (fault) throw createFault(fault.code, parsed);
        await rules.provision?.(resource, this, this.faultBook);
      });
      const status = existing ? 200 : 201;
      this.record("PUT", resource, status, "Accepted");
      return { status, body: this.present(resource), operation: op.id };
    } catch (e) {
      if (e instanceof ArmError) this.record("PUT", { type: parsed.type, name: parsed.name, id: parsed.id }, e.status, e.code, e.message);
      throw e;
    }
  }

  /** DELETE: 202 with an operation to poll, 204 when there is nothing to delete, or an ArmError. */
  delete(id: string, apiVersion: string | undefined): { status: number; operation?: string } {
    this.assertOpen();
    const parsed = this.parse(id);
    const rules = this.rulesFor(parsed);
    this.checkApiVersion(parsed, rules, apiVersion);
    const r = this.resources.get(parsed.key);
    try {
      if (!r) {
        this.record("DELETE", parsed, 204, "NoContent");
        return { status: 204 };
      }
      if (r.state === "Deleting") {
        const op = [...this.operations.values()].find((o) => o.resourceKey === r.key && o.kind === "delete" && o.status === "InProgress");
        this.record("DELETE", r, 202, "AlreadyDeleting");
        return { status: 202, ...(op ? { operation: op.id } : {}) };
      }
      if (r.state === "Creating" || r.state === "Updating") {
        throw new ArmError(409, "AnotherOperationInProgress", `${r.type} '${r.name}' is ${r.state.toLowerCase()}: another operation on it is in progress.`);
      }
      const parent = r.parentKey ? this.resources.get(r.parentKey) : undefined;
      if (rules.serializeOnParent && parent && parent.type !== RESOURCE_GROUP_TYPE) this.assertParentQuiet(parent, parsed);
      if (r.type === RESOURCE_GROUP_TYPE) {
        const inFlight = this.all().find((x) => x.resourceGroup.toLowerCase() === r.resourceGroup.toLowerCase() && x.key !== r.key && (x.state === "Creating" || x.state === "Updating" || x.state === "Deleting"));
        if (inFlight) throw new ArmError(409, "AnotherOperationInProgress", `Resource group '${r.name}' cannot be deleted now: ${inFlight.type} '${inFlight.name}' is ${inFlight.state.toLowerCase()}. Retry when its operation has finished.`);
      } else {
        const busy = rules.inUse?.(r, this);
        if (busy) throw busy;
        if (this.faultBook.take("delete-conflict", r.type, r.name)) {
          throw new ArmError(409, "Conflict", `The request to delete ${r.type} '${r.name}' conflicts with an operation in progress (injected fault). Retry later.`);
        }
      }
      const op = this.startDelete(r);
      this.record("DELETE", r, 202, "Accepted");
      return { status: 202, operation: op.id };
    } catch (e) {
      if (e instanceof ArmError) this.record("DELETE", r ?? parsed, e.status, e.code, e.message);
      throw e;
    }
  }

  /** Stops accepting requests and waits for operations in flight. */
  async close(): Promise<void> {
    this.closed = true;
    await this.idle();
  }

  // ---------------------------------------------------------------------------------------------

  private startDelete(r: StoredResource): AsyncOperation {
    const rules = this.rulesFor(r);
    r.state = "Deleting";
    return this.startOperation(r, "delete", async () => {
      if (r.type === RESOURCE_GROUP_TYPE) {
        // A group takes everything in it along, dependents first.
        await this.deleteContents(r.resourceGroup);
      }
      const cascade = (await rules.deprovision?.(r, this)) ?? [];
      for (const key of cascade) {
        const c = this.resources.get(key);
        if (!c || c.state === "Deleting") continue;
        c.state = "Deleting";
        await this.rulesFor(c).deprovision?.(c, this);
        this.resources.delete(c.key);
        this.record("complete", c, 200, "Deleted", `deleted with ${r.type} '${r.name}' (deleteOption: Delete)`);
      }
      // Children (subnets, peerings) go with their parent.
      for (const child of this.all().filter((c) => c.parentKey === r.key && c.type !== RESOURCE_GROUP_TYPE)) {
        child.state = "Deleting";
        await this.rulesFor(child).deprovision?.(child, this);
        this.resources.delete(child.key);
      }
      this.resources.delete(r.key);
    });
  }

  /** Deletes a group's resources in an order Azure's group deletion would manage: users before what they use. */
  private async deleteContents(group: string): Promise<void> {
    const inGroup = () => this.all().filter((x) => x.resourceGroup.toLowerCase() === group.toLowerCase() && x.type !== RESOURCE_GROUP_TYPE);
    for (let round = 0; round < 20 && inGroup().length > 0; round++) {
      const list = inGroup();
      // Whatever nothing (else in the group) refers to can go now.
      const free = list.filter((x) => !list.some((y) => y !== x && y.parentKey !== x.key && references(y.body).some((ref) => idKey(ref.id) === x.key)));
      for (const x of free.length ? free : list) {
        x.state = "Deleting";
        await this.rulesFor(x).deprovision?.(x, this);
        this.resources.delete(x.key);
        this.record("complete", x, 200, "Deleted", `deleted with resource group '${group}'`);
      }
    }
  }

  private startOperation(r: StoredResource, kind: "put" | "delete", work: () => Promise<void>): AsyncOperation {
    const op: AsyncOperation = { id: randomUUID(), resourceKey: r.key, kind, status: "InProgress" };
    this.operations.set(op.id, op);
    const parent = r.parentKey ? this.resources.get(r.parentKey) : undefined;
    const parentWasSucceeded = parent && parent.type !== RESOURCE_GROUP_TYPE && parent.state === "Succeeded";
    // A child's operation puts its VNet in "Updating" (what makes a peering to it fail meanwhile).
    if (parentWasSucceeded && this.rulesFor(r).serializeOnParent) parent.state = "Updating";
    const delay = this.options.delays?.[r.type.toLowerCase()] ?? this.options.delays?.default ?? DEFAULT_DELAY_MS;
    const p = (async () => {
      await sleep(delay);
      let outcome: { status: "Succeeded" } | { status: "Failed"; err: ArmError };
      try {
        await work();
        if (kind === "put") {
          r.state = "Succeeded";
          delete r.error;
        }
        outcome = { status: "Succeeded" };
      } catch (e) {
        const err = e instanceof ArmError ? e : new ArmError(500, "InternalServerError", (e as Error).message);
        if (kind === "put") {
          r.state = "Failed";
          r.error = err.toBody().error;
        } else if (this.resources.has(r.key)) {
          // A delete that failed leaves the resource as it was.
          r.state = "Succeeded";
        }
        outcome = { status: "Failed", err };
      }
      if (parentWasSucceeded && parent.state === "Updating" && this.resources.has(parent.key)) parent.state = "Succeeded";
      this.persist();
      // The kernel follows before the operation is reported done: a client acting on "Succeeded"
      // (a peering, an NSG rule) must find it in effect, as on Azure. If it cannot, the operation failed.
      try {
        await this.options.onChange?.(this);
      } catch (e) {
        const err = new ArmError(500, "InternalServerError", `the emulator could not put ${r.type} '${r.name}' into effect: ${(e as Error).message}`);
        if (outcome.status === "Succeeded" && kind === "put" && this.resources.has(r.key)) {
          r.state = "Failed";
          r.error = err.toBody().error;
        }
        if (outcome.status === "Succeeded") outcome = { status: "Failed", err };
      }
      if (outcome.status === "Succeeded") {
        op.status = "Succeeded";
        this.record("complete", r, 200, "Succeeded");
      } else {
        op.status = "Failed";
        op.error = outcome.err.toBody().error;
        this.record("complete", r, outcome.err.status, outcome.err.code, outcome.err.message);
      }
    })();
    this.pending.add(p);
    void p.finally(() => this.pending.delete(p));
    this.persist();
    return op;
  }

  private checkReferences(body: Record<string, unknown>, self: ResourceId): void {
    for (const ref of references(body)) {
      let target: ResourceId;
      try {
        target = parseResourceId(ref.id);
      } catch (e) {
        throw new ArmError(400, "LinkedInvalidPropertyId", `Property id '${ref.id}' at path '${ref.path}.id' is invalid: ${(e as ResourceIdError).message}`);
      }
      const r = this.resources.get(target.key);
      if (!r || r.state === "Deleting") {
        throw new ArmError(400, "InvalidResourceReference", `Resource ${ref.id} referenced by resource ${self.id} was not found. Please make sure that the referenced resource exists, and that both resources are in the same region.`, [
          { code: "NotFound", message: `${ref.path}.id`, target: ref.id },
        ]);
      }
      if (r.state !== "Succeeded") {
        throw new ArmError(
          400,
          "ReferencedResourceNotProvisioned",
          `Cannot proceed with operation because resource ${r.id} used by resource ${self.id} is not in Succeeded state. Resource is in ${r.state} state and the last operation that updated/is updating the resource is ${r.state === "Failed" ? "a failed one" : "still in progress"}.`,
        );
      }
    }
  }

  private assertParentQuiet(parent: StoredResource, self: ResourceId): void {
    const busy =
      parent.state === "Updating" ||
      parent.state === "Creating" ||
      this.all().some((c) => c.parentKey === parent.key && c.key !== self.key && (c.state === "Creating" || c.state === "Updating" || c.state === "Deleting"));
    if (busy) {
      throw new ArmError(
        409,
        "AnotherOperationInProgress",
        `Another operation on this or dependent resource is in progress. To retry later, please check the status of the operation on ${parent.id}. (${self.type} '${self.name}')`,
      );
    }
  }

  private present(r: StoredResource, query?: URLSearchParams): Record<string, unknown> {
    const rules = this.rulesFor(r);
    const body = structuredClone(r.body);
    const props = isRecord(body.properties) ? body.properties : r.type === RESOURCE_GROUP_TYPE ? (body.properties = {}) : undefined;
    if (props) props.provisioningState = r.state;
    if (query && rules.onRead) rules.onRead(body, r, this, query, this.faultBook);
    return rules.redact ? rules.redact(body) : body;
  }

  private parse(id: string): ResourceId {
    try {
      return parseResourceId(id);
    } catch (e) {
      throw new ArmError(400, "InvalidResourceId", (e as Error).message);
    }
  }

  private groupId(r: Pick<ResourceId, "subscription" | "resourceGroup">): string {
    return `/subscriptions/${r.subscription}/resourceGroups/${r.resourceGroup}`;
  }

  private rulesFor(r: Pick<ResourceId, "type">): TypeRules {
    const entry = Object.entries(this.options.rules).find(([t]) => sameType(t, r.type));
    if (!entry) throw new ArmError(400, "NoRegisteredProviderFound", `No registered resource provider found for resource type '${r.type}' (the emulator plays only the types latlab uses).`);
    return entry[1];
  }

  private checkApiVersion(r: ResourceId, rules: TypeRules, apiVersion: string | undefined): void {
    if (!apiVersion) throw new ArmError(400, "MissingApiVersionParameter", "The api-version query parameter (?api-version=) is required for all requests.");
    if (apiVersion !== rules.apiVersion) {
      throw new ArmError(400, "NoRegisteredProviderFound", `No registered resource provider found for location and API version '${apiVersion}' and type '${r.type}'. The emulator knows API version '${rules.apiVersion}'.`);
    }
  }

  private assertOpen(): void {
    if (this.closed) throw new ArmError(503, "ServiceUnavailable", "the emulator is shutting down");
  }

  private record(method: OperationLogEntry["method"], r: Pick<StoredResource, "type" | "name" | "id">, status: number, outcome: string, message?: string): void {
    const entry: OperationLogEntry = { seq: this.logEntries.length + 1, at: Date.now() - this.started, method, type: r.type, name: r.name, id: r.id, status, outcome, ...(message ? { message } : {}) };
    this.logEntries.push(entry);
    try {
      this.options.onLog?.(entry);
    } catch (e) {
      this.options.onWarning?.(`could not write the operations log: ${(e as Error).message}`);
    }
  }

  private persist(): void {
    try {
      this.options.onPersist?.(this.snapshot());
    } catch (e) {
      // A full disk must not take the run down with it; the state in memory is still right.
      this.options.onWarning?.(`could not save the emulator's state: ${(e as Error).message}`);
    }
  }
}

function groupNotFound(group: string): ArmError {
  return new ArmError(404, "ResourceGroupNotFound", `Resource group '${group}' could not be found.`);
}

/** The error Azure gives for each create fault (codes as ARM returns them). */
function createFault(code: string, r: ResourceId): ArmError {
  switch (code) {
    case "AllocationFailed":
      return new ArmError(409, "AllocationFailed", `Allocation failed. We do not have sufficient capacity for the requested VM size in this region. (injected fault: ${r.type} '${r.name}')`);
    case "SkuNotAvailable":
      return new ArmError(409, "SkuNotAvailable", `The requested VM size for resource '${r.name}' is currently not available in the location. (injected fault)`);
    default:
      return new ArmError(409, "QuotaExceeded", `Operation could not be completed as it results in exceeding approved cores quota for resource '${r.name}'. (injected fault)`);
  }
}
