/**
 * An error as ARM answers it: an HTTP status and `{ "error": { "code", "message", "details" } }`.
 * The codes are ARM's own where latlab knows them (each use says where from); the emulator's
 * callers see exactly what they would see from Azure: a status, a code and a message.
 */
export interface ArmErrorBody {
  code: string;
  message: string;
  target?: string;
  details?: ArmErrorBody[];
}

export class ArmError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details: ArmErrorBody[] = [],
  ) {
    super(message);
    this.name = "ArmError";
  }

  toBody(): { error: ArmErrorBody } {
    return { error: { code: this.code, message: this.message, ...(this.details.length ? { details: this.details } : {}) } };
  }
}

export const notFound = (id: string, type: string) => new ArmError(404, "ResourceNotFound", `The Resource '${type}/${id.split("/").pop()}' under resource group was not found. (${id})`);
