/**
 * Test definitions (useDefinitions, validateDefinition) have no precompiled validators: every test
 * file may compile their schemas synchronously, as `npm start` does after loading the registry.
 */
import { prepareSchemaCompiler } from '../../shared/registry/schemas.js';

await prepareSchemaCompiler();
