/**
 * Checks real responses against the OpenAPI document the API serves: the document's component
 * schemas become one JSON Schema 2020-12 resource (ajv), each operation's response schema is
 * compiled against it, and a response whose status, media type or body the document does not
 * describe is reported.
 */
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';

type Json = Record<string, any>;

const COMPONENTS_ID = 'https://entity-record-api.local/components.json';

function rewriteRefs(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(rewriteRefs);
  if (value && typeof value === 'object') {
    return Object.fromEntries(
      Object.entries(value).map(([k, v]) => [
        k,
        k === '$ref' && typeof v === 'string' && v.startsWith('#/components/schemas/') ? `${COMPONENTS_ID}#/$defs/${v.slice('#/components/schemas/'.length)}` : rewriteRefs(v),
      ]),
    );
  }
  return value;
}

export interface Checked {
  method: string;
  template: string;
  status: number;
}

export class ResponseValidator {
  private readonly ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: true });
  private readonly compiled = new Map<string, ValidateFunction>();
  private readonly templates: { template: string; regex: RegExp; params: number }[];
  readonly checked: Checked[] = [];

  constructor(readonly doc: Json) {
    addFormats.default(this.ajv);
    this.ajv.addFormat('password', true);
    this.ajv.addSchema({ $id: COMPONENTS_ID, $defs: rewriteRefs(doc.components?.schemas ?? {}) as Json });
    this.templates = Object.keys(doc.paths)
      .map((template) => ({
        template,
        regex: new RegExp(`^${template.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\\?\{[^}]+\\?\}/g, '[^/]+')}$`),
        params: (template.match(/\{/g) ?? []).length,
      }))
      .sort((a, b) => a.params - b.params);
  }

  /** The validator of one component schema of the document. */
  component(name: string): ValidateFunction {
    return this.ajv.compile({ $ref: `${COMPONENTS_ID}#/$defs/${name}` });
  }

  /** The document's path template of a concrete path: the one with the fewest parameters. */
  templateOf(path: string): string | undefined {
    const pathname = path.split('?')[0];
    return this.templates.find((t) => t.regex.test(pathname))?.template;
  }

  private resolve(value: Json): Json {
    if (typeof value?.$ref === 'string' && value.$ref.startsWith('#/components/')) {
      const [, , kind, name] = value.$ref.split('/');
      return this.doc.components[kind][name];
    }
    return value;
  }

  /** Throws, naming the request, when the response does not match the document. */
  check(method: string, path: string, status: number, contentType: string | null, body: unknown): void {
    const template = this.templateOf(path);
    const where = `${method} ${path} → ${status}`;
    if (!template) throw new Error(`${where}: no path of the document matches`);
    const operation = this.doc.paths[template][method.toLowerCase()];
    if (!operation) throw new Error(`${where}: ${template} has no ${method} operation in the document`);
    const response = operation.responses[String(status)] ?? operation.responses.default;
    if (!response) throw new Error(`${where}: status ${status} is not documented (documented: ${Object.keys(operation.responses).join(', ')})`);
    const resolved = this.resolve(response);
    this.checked.push({ method, template, status });
    if (!resolved.content) {
      if (body !== undefined && body !== '') throw new Error(`${where}: the document describes no body, got one`);
      return;
    }
    const mediaType = (contentType ?? '').split(';')[0].trim();
    const media = resolved.content[mediaType];
    if (!media) throw new Error(`${where}: media type '${mediaType}' is not documented (documented: ${Object.keys(resolved.content).join(', ')})`);
    if (mediaType !== 'application/json') return;
    const key = `${template} ${method} ${status}`;
    let validate = this.compiled.get(key);
    if (!validate) {
      validate = this.ajv.compile(rewriteRefs(media.schema) as Json);
      this.compiled.set(key, validate);
    }
    if (!validate(body)) {
      throw new Error(`${where}: the body does not match the document: ${this.ajv.errorsText(validate.errors)}\n${JSON.stringify(body).slice(0, 800)}`);
    }
  }
}
