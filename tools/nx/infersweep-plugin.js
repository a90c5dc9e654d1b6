/**
 * Nx inference plugin (nx.json "plugins"): every project under apps/ and libs/ gets the same
 * `typecheck`, `lint` and `test` targets from its folder, so no project.json repeats them; the CLI
 * gets one target per command file (`npx nx run cli:status -- ID`), the worker a `serve` target.
 */
const { existsSync, readdirSync } = require('node:fs');
const { basename, dirname, join } = require('node:path');

const run = (command, extra = {}) => ({ executor: 'nx:run-commands', options: { command, ...extra } });

function targetsFor(root, workspaceRoot) {
  const targets = {
    typecheck: { ...run(`tsc -p ${root}/tsconfig.json --noEmit`), cache: true, inputs: ['default', '^default'] },
    lint: { ...run(`eslint ${root}`), cache: true, inputs: ['default', '{workspaceRoot}/eslint.config.mjs'] },
  };
  if (existsSync(join(workspaceRoot, root, 'test'))) targets.test = run(`vitest run --dir ${root}`);
  if (root === 'apps/cli') {
    for (const f of readdirSync(join(workspaceRoot, root, 'src', 'commands'))
      .filter((n) => n.endsWith('.ts'))
      .sort()) {
      const name = basename(f, '.ts');
      targets[name] =
        name === 'stack'
          ? run('bash scripts/stack.sh', { forwardAllArgs: true })
          : run(`tsx apps/cli/src/main.ts ${name}`, { forwardAllArgs: true });
    }
  }
  if (root === 'apps/worker') targets.serve = run('tsx apps/worker/src/main.ts', { forwardAllArgs: true });
  return targets;
}

exports.createNodesV2 = [
  '{apps,libs}/*/project.json',
  async (files, _options, context) =>
    files.map((file) => {
      const root = dirname(file);
      return [file, { projects: { [root]: { targets: targetsFor(root, context.workspaceRoot) } } }];
    }),
];
