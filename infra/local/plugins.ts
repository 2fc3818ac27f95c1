/** Start-up check of the plugins: a bad one stops `npm start` with one line naming its file. */
import { loadPluginOperations } from '../../shared/http/operations/plugins.js';

export async function checkPlugins(): Promise<void> {
  await loadPluginOperations();
}
