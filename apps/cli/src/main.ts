#!/usr/bin/env -S npx tsx
/**
 * `infersweep` CLI. Every file in ./commands exports `register(program)`; main only wires them up,
 * so adding a subcommand never touches this file.
 */
import { Command } from 'commander';
import { readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

export async function buildProgram(): Promise<Command> {
  const program = new Command('infersweep')
    .description('Durable multi-node LLM-inference benchmark sweeps on Slurm')
    .showHelpAfterError()
    .exitOverride((err) => process.exit(err.exitCode));
  const dir = join(dirname(fileURLToPath(import.meta.url)), 'commands');
  const files = readdirSync(dir).filter((f) => /\.ts$/.test(f) && !/\.(test|d)\.ts$/.test(f)).sort();
  for (const f of files) {
    const mod = (await import(pathToFileURL(join(dir, f)).href)) as { register?: (p: Command) => void };
    if (typeof mod.register !== 'function') throw new Error(`apps/cli/src/commands/${f} must export register(program)`);
    mod.register(program);
  }
  return program;
}

buildProgram()
  .then((program) => program.parseAsync(process.argv))
  .catch((e: unknown) => {
    process.stderr.write(`infersweep: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
    process.exit(1);
  });
