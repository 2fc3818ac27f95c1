/** The plugins family: every route of plugins/<name>.plugin.ts, served by its handlers module. */
import { createApiHandler } from '../../shared/http/stack.js';
import { loadPluginOperations, pluginStackOptions } from '../../shared/http/operations/plugins.js';

// A bad plugin fails the cold start here, with a message naming its file.
export const handler = createApiHandler(await loadPluginOperations(), pluginStackOptions);
