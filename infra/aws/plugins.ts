/**
 * What the plugins need on AWS besides their routes (which reach API Gateway through the route
 * table): every function learns the plugin declaration files (PLUGIN_FILES, as ENTITY_FILES for
 * entities), and the functions that run plugin handlers — the plugins family and the batch family,
 * which dispatches to it in-process — get text generation on Amazon Bedrock: AI_PROVIDER=bedrock,
 * the two model ids (CDK context aiFastModelId / aiQualityModelId) and bedrock:InvokeModel on
 * exactly those models (the Converse API is authorised by InvokeModel). A bad declaration fails
 * `cdk synth` here with the line that names its file.
 */
import { Arn, ArnFormat, Stack } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import { Construct } from 'constructs';
import { DEFAULT_MODEL_IDS, type ModelName } from '../../shared/ai/config.js';
import { PLUGIN_FILES_ENV, assertPluginDeclarations, pluginFileNames } from '../../shared/plugins/declarations.js';
import { routes } from '../../shared/routes.js';
import type { FamilyFunctions } from './functions.js';

/** Families whose code runs plugin handlers. */
export const PLUGIN_RUNNERS = ['plugins', 'batch'] as const;

/** Cross-region inference profiles (us.amazon.nova-pro-v1:0) route to the base model in several regions. */
const INFERENCE_PROFILE = /^(us|eu|apac|us-gov|global)\.(.+)$/;

export interface PluginResourcesProps {
  functions: FamilyFunctions;
  /** Bedrock model ids; default DEFAULT_MODEL_IDS (shared/ai/config.ts). */
  modelIds?: Partial<Record<ModelName, string>>;
}

/** The ARNs bedrock:InvokeModel needs for one model id, in the stack's partition and region. */
export function modelArns(scope: Construct, modelId: string): string[] {
  const stack = Stack.of(scope);
  const profile = INFERENCE_PROFILE.exec(modelId);
  if (!profile) {
    return [stack.formatArn({ service: 'bedrock', account: '', resource: 'foundation-model', resourceName: modelId, arnFormat: ArnFormat.SLASH_RESOURCE_NAME })];
  }
  return [
    stack.formatArn({ service: 'bedrock', resource: 'inference-profile', resourceName: modelId, arnFormat: ArnFormat.SLASH_RESOURCE_NAME }),
    // The profile may serve the request from another region of its geography.
    Arn.format({ partition: stack.partition, service: 'bedrock', region: '*', account: '', resource: 'foundation-model', resourceName: profile[2], arnFormat: ArnFormat.SLASH_RESOURCE_NAME }),
  ];
}

export class PluginResources extends Construct {
  readonly modelIds: Record<ModelName, string>;

  constructor(scope: Construct, id: string, props: PluginResourcesProps) {
    super(scope, id);
    assertPluginDeclarations(routes);
    const modelIds = (this.modelIds = {
      fast: props.modelIds?.fast || DEFAULT_MODEL_IDS.fast,
      quality: props.modelIds?.quality || DEFAULT_MODEL_IDS.quality,
    });
    const files = pluginFileNames().join(',');
    for (const fn of props.functions.byFamily.values()) fn.addEnvironment(PLUGIN_FILES_ENV, files);

    const resources = [...new Set([...modelArns(this, modelIds.fast), ...modelArns(this, modelIds.quality)])];
    for (const family of PLUGIN_RUNNERS) {
      const fn = props.functions.byFamily.get(family);
      if (!fn) continue;
      fn.addEnvironment('AI_PROVIDER', 'bedrock');
      fn.addEnvironment('AI_MODEL_FAST', modelIds.fast);
      fn.addEnvironment('AI_MODEL_QUALITY', modelIds.quality);
      fn.addToRolePolicy(new iam.PolicyStatement({ sid: 'TextGenerationModels', actions: ['bedrock:InvokeModel'], resources }));
    }
  }
}
