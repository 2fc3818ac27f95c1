/**
 * The JSON schemas of the auth family's request bodies. Plain data: `npm run schemas`
 * (bin/schemas.ts) compiles them into ajv standalone validators (validators.generated.ts), which
 * is what the auth family runs; a unit test fails while that file is out of date with these.
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
