// Types for the one Handlebars module ./hbs-runtime.ts takes as it is (the package types only its public API).
declare module 'handlebars/dist/cjs/handlebars/internal/proto-access.js' {
  /** Handlebars' prototype-access policy for runtime options (`allowProtoPropertiesByDefault`, ...). */
  export interface ProtoAccessControl {
    properties: { whitelist: Record<string, boolean>; defaultValue: boolean | undefined };
    methods: { whitelist: Record<string, boolean>; defaultValue: boolean | undefined };
  }
  export function createProtoAccessControl(runtimeOptions: object): ProtoAccessControl;
  /** Whether `result`, found on the prototype of an object as `propertyName`, may be returned (logs a denial once). */
  export function resultIsAllowed(result: unknown, control: ProtoAccessControl, propertyName: string): boolean;
  /** `parent[propertyName]` is the constructor whose `prototype` is `parent` (e.g. `Function.prototype.constructor`). */
  export function isPrototypeConstructor(parent: unknown, propertyName: string, result: unknown): boolean;
}
