import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { toolsDir } from '../../../test/stack-env';

/** PyPI aiperf 0.13.0 in its own venv (scripts/setup.sh). */
export const aiperfBinary = join(toolsDir, 'aiperf-venv', 'bin', 'aiperf');

/**
 * aiperf must load a tokenizer to build the dataset even with --use-server-token-count; offline there is
 * no Hub and `builtin` downloads tiktoken data. A small local HF tokenizer is present on this machine in
 * the Go module cache (llm-d-kv-cache testdata); INFERSWEEP_AIPERF_TOKENIZER overrides it.
 */
export const aiperfTokenizer =
  process.env.INFERSWEEP_AIPERF_TOKENIZER ??
  '/root/go/pkg/mod/github.com/llm-d/llm-d-kv-cache@v0.9.0/pkg/tokenization/testdata/test-model';

export function assertAiperfAvailable(): void {
  if (!existsSync(aiperfBinary)) throw new Error(`aiperf not installed at ${aiperfBinary} (npm run setup)`);
  if (!existsSync(aiperfTokenizer)) throw new Error(`no local tokenizer at ${aiperfTokenizer}: set INFERSWEEP_AIPERF_TOKENIZER`);
}
