/** The shapes of JSON Schemas and their compiled validators, shared by the precompiled validators and ajv (schema-compiler.ts). */
/** What ajv reports for one failed check (the subset of ajv's ErrorObject read here). */
export interface SchemaError {
  keyword: string;
  instancePath: string;
  params: Record<string, unknown>;
  message?: string;
}

/** A compiled validator, precompiled or compiled by ajv: `errors` are set after a failed call. */
export interface Validator {
  (data: unknown): boolean;
  errors?: SchemaError[] | null;
}

export type Schema = Record<string, unknown>;
