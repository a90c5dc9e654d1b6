import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { toolsDir } from '../../../test/stack-env';

/** PyPI aiperf 0.13.0 in its own venv (scripts/setup.sh). */
export const aiperfBinary = join(toolsDir, 'aiperf-venv', 'bin', 'aiperf');

/**
 * aiperf must load a tokenizer to build the dataset even with --use-server-token-count; offline there is
 * no Hub and `builtin` downloads tiktoken data. scripts/setup.sh puts a small local HF tokenizer (the
 * test tokenizer the llm-d-kv-cache Go module ships) in .tools/tokenizer; INFERSWEEP_AIPERF_TOKENIZER overrides it.
 */
export const aiperfTokenizer = process.env.INFERSWEEP_AIPERF_TOKENIZER ?? join(toolsDir, 'tokenizer');

export function assertAiperfAvailable(): void {
  if (!existsSync(aiperfBinary)) throw new Error(`aiperf not installed at ${aiperfBinary} (npm run setup)`);
  if (!existsSync(aiperfTokenizer))
    throw new Error(`no local tokenizer at ${aiperfTokenizer}: set INFERSWEEP_AIPERF_TOKENIZER`);
}
