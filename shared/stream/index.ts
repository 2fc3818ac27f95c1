/**
 * The stream area's front door: positions in the change events, the open-stream leases, the SSE
 * headers and the stream session itself.
 */
export { beyondRetention, isPosition, positionAt, positionTime } from './events.js';
export { loadHandoff, saveHandoff, type HandoffOwner } from './handoff.js';
export { acquireLease } from './leases.js';
export { STREAM_HEADERS } from './messages.js';
export { EventStream } from './session.js';
