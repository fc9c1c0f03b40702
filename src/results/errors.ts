/**
 * The one error model (after eemeli/yaml `errors.ts`): an error is data, `{code, message, field?, position?}`.
 * Modules that can collect problems return them as data (`ErrorData`, config `issues`); the ones that cannot
 * go on throw a `MeshInjectError`, and exactly one boundary turns it into output:
 * - per workload, `src/pipeline.ts` turns it into an error result for that workload (`INJECT`, `TEMPLATE`,
 *   `BAD_ANNOTATION`, `BAD_MERGE`, `BAD_CONFIG` from a driver reading the input's ConfigMaps), and a
 *   resource's `UNFAITHFUL_EDIT` into an error result for that resource;
 * - per input, `src/run.ts` turns `BAD_INPUT` into exit code 2 with nothing written (`badInput`); error
 *   results give exit code 1 (`exitCodeOf`, src/results/result.ts).
 * Anything else that is thrown is a bug and propagates.
 */

/**
 * Stable error codes (they name the class of problem, never the wording, so tools may key on them):
 * - `BAD_INPUT`: the input cannot be read (YAML syntax, framing, a resource that is not a mapping);
 * - `BAD_CONFIG`: the functionConfig, or input it points at (a driver's ConfigMap), cannot be used;
 * - `BAD_ANNOTATION`: a pod or namespace annotation has a value the mesh rejects;
 * - `BAD_SELECTOR`: a label selector string does not parse (Kubernetes `labels.Parse` syntax);
 * - `BAD_MERGE`: a strategic merge patch cannot be applied (a list entry without its merge key, an
 *   unknown `$patch` directive);
 * - `TEMPLATE`: an injection template failed to render or rendered something unusable;
 * - `INJECT`: any other reason a driver cannot inject or uninject a workload faithfully;
 * - `UNFAITHFUL_EDIT`: neither the text edit nor the `yaml` Document rewrite writes a resource's change
 *   faithfully (src/edit/rewrite.ts); the resource stays as it was.
 */
export type ErrorCode =
  | 'BAD_INPUT'
  | 'BAD_CONFIG'
  | 'BAD_ANNOTATION'
  | 'BAD_SELECTOR'
  | 'BAD_MERGE'
  | 'TEMPLATE'
  | 'INJECT'
  | 'UNFAITHFUL_EDIT';

/**
 * The rule id of each error code, as results carry it (tag `meshinject.dev/error`) and the CI reports use
 * it (JUnit failure type, SARIF ruleId, GitHub annotation title): kebab-case, like the decision reasons.
 */
export const ERROR_RULE: Readonly<Record<ErrorCode, string>> = {
  BAD_INPUT: 'bad-input',
  BAD_CONFIG: 'invalid-config',
  BAD_ANNOTATION: 'bad-annotation',
  BAD_SELECTOR: 'bad-selector',
  BAD_MERGE: 'merge-error',
  TEMPLATE: 'template-error',
  INJECT: 'inject-error',
  UNFAITHFUL_EDIT: 'unfaithful-edit',
};

/** Result tag holding an error result's rule id (`ERROR_RULE`). */
export const ERROR_TAG = 'meshinject.dev/error';

/** The tags of an error result raised with `code`: `{'meshinject.dev/error': <rule id>}`. */
export function errorTags(code: ErrorCode): Record<string, string> {
  return { [ERROR_TAG]: ERROR_RULE[code] };
}

/**
 * An error as data. `field` is a KRM field path such as
 * `spec.template.metadata.annotations[traffic.sidecar.istio.io/excludeInboundPorts]` (drivers give it
 * relative to the pod template: `metadata.annotations[...]`); `position` is a 0-based offset into the text
 * the error is about (a selector string, a template).
 */
export interface ErrorData {
  readonly code: ErrorCode;
  readonly message: string;
  readonly field?: string;
  readonly position?: number;
}

/** Where an error points: see `ErrorData` (a field left undefined is left out of the error). */
export interface ErrorPlace {
  field?: string | undefined;
  position?: number | undefined;
}

/**
 * An error meshinject expects and reports to the user: `message` names the place (file, resource, field).
 * Thrown only where a step cannot go on; see the module comment for who catches it.
 */
export class MeshInjectError extends Error implements ErrorData {
  readonly code: ErrorCode;
  readonly field?: string;
  readonly position?: number;
  constructor(code: ErrorCode, message: string, place: ErrorPlace = {}) {
    super(message);
    this.name = 'MeshInjectError';
    this.code = code;
    if (place.field !== undefined) this.field = place.field;
    if (place.position !== undefined) this.position = place.position;
  }

  /** The error as plain data. */
  toData(): ErrorData {
    return {
      code: this.code,
      message: this.message,
      ...(this.field !== undefined ? { field: this.field } : {}),
      ...(this.position !== undefined ? { position: this.position } : {}),
    };
  }
}

/**
 * Raised by drivers for one workload: becomes an error result for that workload. The code defaults to
 * `INJECT`: `new InjectError(message, { field: 'metadata.annotations[x]', code: 'BAD_ANNOTATION' })`.
 */
export class InjectError extends MeshInjectError {
  constructor(message: string, options: ErrorPlace & { code?: ErrorCode } = {}) {
    const { code = 'INJECT', ...place } = options;
    super(code, message, place);
    this.name = 'InjectError';
  }
}
