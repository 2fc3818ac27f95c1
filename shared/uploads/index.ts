/**
 * The uploads area's front door, for the other areas: the presigned flow's body schemas, which
 * the route declarations take (plain data). The area's services are its handler's alone
 * (functions/upload/handler.ts imports them on first use).
 */
export { uploadBodySchemas } from './body-schemas.js';
