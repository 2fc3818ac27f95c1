/** What a text-generation provider is given and returns; both providers count tokens alike. */
export interface GenerationRequest {
  prompt: string;
  maxTokens: number;
  temperature: number;
  modelId: string;
}

export interface GenerationResult {
  text: string;
  /** Tokens of the prompt (not charged). */
  inputTokens: number;
  /** Tokens generated, at most maxTokens: what the caller is charged. */
  outputTokens: number;
}

export interface TextProvider {
  generate(request: GenerationRequest): Promise<GenerationResult>;
}
