/**
 * The JSON schemas of the auth and keys families' request bodies, plain data, which their route
 * declarations (shared/route-declarations/) name and the services take their input types from.
 * `npm run schemas` (bin/schemas.ts) compiles the auth bodies into ajv standalone validators
 * (validators.generated.ts), which is what the auth family's services run, and the keys bodies
 * into shared/http/bodies/keys.generated.ts, which the middleware stack runs; a unit test fails
 * while a file is out of date with these.
 */
/** The shortest password accepted (passwords.ts re-exports it): here, so that the route declarations read these schemas without loading node:crypto. */
export const MIN_PASSWORD_LENGTH = 8;

const email = { type: 'string', format: 'email', maxLength: 254 } as const;
const name = { type: 'string', minLength: 1, maxLength: 200, pattern: '\\S' } as const;
const password = { type: 'string', minLength: MIN_PASSWORD_LENGTH, maxLength: 1024 } as const;
const role = { type: 'string', enum: ['admin', 'user'] } as const;
const object = { type: 'object' } as const;

export const authBodySchemas = {
  login: {
    type: 'object',
    required: ['email', 'password'],
    properties: {
      email: { type: 'string', minLength: 1, maxLength: 254 },
      password: { type: 'string', minLength: 1, maxLength: 1024 },
    },
  },
  updateMe: {
    type: 'object',
    additionalProperties: false,
    minProperties: 1,
    properties: { name, password, currentPassword: { type: 'string', maxLength: 1024 }, preferences: object },
    dependencies: { password: ['currentPassword'], currentPassword: ['password'] },
  },
  createUser: {
    type: 'object',
    additionalProperties: false,
    required: ['email', 'name', 'password'],
    properties: { email, name, password, role },
  },
  updateUser: {
    type: 'object',
    additionalProperties: false,
    minProperties: 1,
    // `disabled`: every credential of the user is refused (password, sessions, keys, identity provider tokens).
    properties: { name, role, password, status: { type: 'string', enum: ['active', 'disabled'] } },
  },
  updateTenant: {
    type: 'object',
    additionalProperties: false,
    minProperties: 1,
    properties: { name, settings: object },
  },
  createTenant: {
    type: 'object',
    additionalProperties: false,
    required: ['name', 'admin'],
    properties: {
      name,
      settings: object,
      admin: {
        type: 'object',
        additionalProperties: false,
        required: ['email', 'name', 'password'],
        properties: { email, name, password },
      },
    },
  },
} as const satisfies Record<string, Record<string, unknown>>;

export type AuthBodyName = keyof typeof authBodySchemas;

const STRING = { type: 'string' } as const;
const keyName = { type: 'string', minLength: 1, maxLength: 100, pattern: '\\S' } as const;
const keyScopes = <D extends string>(description: D) => ({ type: 'array', minItems: 1, maxItems: 50, items: STRING, description }) as const;
/** A date (2030-01-31) or a date-time, checked against the calendar and the clock by the service. */
const keyExpiry = { type: ['string', 'null'], description: 'An ISO 8601 date-time (or date) in the future; null: never expires.', examples: ['2030-01-31T00:00:00Z'] } as const;
const keyBody = <D extends string>(scopes: D) =>
  ({
    type: 'object',
    required: ['name', 'scopes'],
    additionalProperties: false,
    properties: {
      name: keyName,
      scopes: keyScopes(scopes),
      expiresAt: keyExpiry,
      environment: { type: 'string', enum: ['live', 'test'], default: 'live', description: '`test` gives an sk_test_ key.' },
    },
  }) as const;
const ENTITY_SCOPES = '`<entity>:read|write|delete`, `<entity>:*`, or `*` (admins only).';

/**
 * The API keys' bodies: what a schema cannot say (a scope names an entity that exists, an expiry
 * lies ahead) the service checks (key-management.ts keyBodyProblems).
 */
export const keyBodySchemas = {
  /** POST /api/v1/keys: bare scopes. */
  createKey: /* @__PURE__ */ keyBody('read, write, delete (that action on every entity).'),
  /** POST /api/v1/api-keys: entity scopes. */
  createApiKey: /* @__PURE__ */ keyBody(ENTITY_SCOPES),
  // An empty change answers the key unchanged.
  updateApiKey: {
    type: 'object',
    additionalProperties: false,
    properties: {
      name: keyName,
      scopes: /* @__PURE__ */ keyScopes(ENTITY_SCOPES),
      status: { type: 'string', enum: ['active', 'inactive'] },
      expiresAt: keyExpiry,
    },
  },
} as const;
