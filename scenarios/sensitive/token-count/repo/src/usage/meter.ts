import { getEncoding } from "js-tiktoken";

const encoder = getEncoding("cl100k_base");

/** Number of model tokens (sub-word units of the tokenizer) in `text`. */
export function countTokens(text: string): number {
  return encoder.encode(text).length;
}

export interface Usage {
  prompt: number;
  completion: number;
}

/**
 * What the workspace is billed for: the total number of tokens sent to and produced by
 * the model. A plain non-negative integer; it says nothing about the content.
 */
export function billedTokens(usage: Usage): number {
  return usage.prompt + usage.completion;
}

export const CONTEXT_LIMIT_TOKENS = 128_000;
