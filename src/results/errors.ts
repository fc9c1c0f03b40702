/** Stable error codes; `exitCodeFor` maps them to the CLI exit code (1 error results, 2 bad input/usage). */
export type ErrorCode =
  | 'BAD_INPUT'
  | 'BAD_CONFIG'
  | 'BAD_ANNOTATION'
  | 'TEMPLATE'
  | 'INJECT'
  | 'UNFAITHFUL_EDIT'
  | 'USAGE';

/**
 * An error meshinject expects and reports to the user: `message` names the place (file, resource, field).
 * `field` is a KRM field path such as `spec.template.metadata.annotations[traffic.sidecar.istio.io/excludeInboundPorts]`.
 */
export class MeshInjectError extends Error {
  readonly code: ErrorCode;
  readonly field?: string;
  constructor(code: ErrorCode, message: string, field?: string) {
    super(message);
    this.name = 'MeshInjectError';
    this.code = code;
    if (field !== undefined) this.field = field;
  }
}

/** Raised by drivers for one workload: becomes an error result for that workload. */
export class InjectError extends MeshInjectError {
  constructor(message: string, field?: string, code: ErrorCode = 'INJECT') {
    super(code, message, field);
    this.name = 'InjectError';
  }
}
