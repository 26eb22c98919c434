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
  readonly status: number;
  readonly code: string;
  readonly details: ArmErrorBody[];

  constructor(status: number, code: string, message: string, details: ArmErrorBody[] = []) {
    super(message);
    this.status = status;
    this.code = code;
    this.details = details;
    this.name = "ArmError";
  }

  toBody(): { error: ArmErrorBody } {
    return { error: { code: this.code, message: this.message, ...(this.details.length ? { details: this.details } : {}) } };
  }
}

export const notFound = (id: string, type: string) => new ArmError(404, "ResourceNotFound", `The Resource '${type}/${id.split("/").pop()}' under resource group was not found. (${id})`);
