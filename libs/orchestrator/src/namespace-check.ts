/**
 * The worker's start-up check of its Temporal namespace: every search attribute the workflows
 * write (libs/sweep/src/messages.ts `searchAttributeKeys`, the one list) must be registered with
 * its type. A missing one does not fail a workflow: the server rejects the upsert and retries the
 * workflow task forever, so a completed sweep would never close. The worker refuses to start
 * instead, naming each missing attribute and the command that registers it.
 */
import type { NativeConnection } from '@temporalio/worker';
import type { SearchAttributeType } from '@temporalio/common';
import { InfersweepError } from '@infersweep/core';
import { searchAttributeKeys } from '@infersweep/sweep';

/** Every search attribute a sweep writes, with its type: the workflows' keys, in one place. */
export const requiredSearchAttributes = (): { name: string; type: SearchAttributeType }[] =>
  Object.values(searchAttributeKeys).map((k) => ({ name: k.name, type: k.type }));

/** The Temporal CLI's spelling of a type (`--type Keyword`, `KeywordList`). */
export function cliTypeName(type: SearchAttributeType): string {
  return type
    .toLowerCase()
    .split('_')
    .map((w) => w[0]!.toUpperCase() + w.slice(1))
    .join('');
}

/** The command that registers one attribute on `namespace`. */
export function registerCommand(namespace: string, a: { name: string; type: SearchAttributeType }): string {
  return `temporal operator search-attribute create --namespace ${namespace} --name ${a.name} --type ${cliTypeName(a.type)}`;
}

export interface SearchAttributeProblem {
  name: string;
  type: SearchAttributeType;
  /** absent: not registered; else the type it is registered with */
  registeredAs?: SearchAttributeType | 'unknown';
}

/** The server's numbers of the types (temporal.api.enums.v1.IndexedValueType). */
export const INDEXED_VALUE_TYPE: Record<SearchAttributeType, number> = {
  TEXT: 1,
  KEYWORD: 2,
  INT: 3,
  DOUBLE: 4,
  BOOL: 5,
  DATETIME: 6,
  KEYWORD_LIST: 7,
};

/** The SDK's name of the server's indexed value type (an enum number). */
function typeOf(indexed: number): SearchAttributeType | 'unknown' {
  const found = Object.entries(INDEXED_VALUE_TYPE).find(([, n]) => n === indexed);
  return found ? (found[0] as SearchAttributeType) : 'unknown';
}

/**
 * The required attributes missing from (or registered with another type in) `registered`, a map
 * of the namespace's custom attributes to their indexed value type (the server's enum number).
 */
export function searchAttributeProblems(registered: Record<string, number>): SearchAttributeProblem[] {
  const problems: SearchAttributeProblem[] = [];
  for (const a of requiredSearchAttributes()) {
    const have = registered[a.name];
    if (have === undefined) problems.push({ name: a.name, type: a.type });
    else if (have !== INDEXED_VALUE_TYPE[a.type])
      problems.push({ name: a.name, type: a.type, registeredAs: typeOf(have) });
  }
  return problems;
}

/** The namespace lacks search attributes the workflows write: the worker does not start. */
export class NamespaceSetupError extends InfersweepError {
  constructor(
    readonly namespace: string,
    readonly problems: SearchAttributeProblem[],
  ) {
    const lines = problems.map((p) =>
      p.registeredAs === undefined
        ? `  ${p.name} (${cliTypeName(p.type)}) is not registered`
        : `  ${p.name} is registered as ${p.registeredAs === 'unknown' ? 'another type' : cliTypeName(p.registeredAs)}, not ${cliTypeName(p.type)} (a type cannot be changed in place: remove it with \`temporal operator search-attribute remove --namespace ${namespace} --name ${p.name}\` and register it again)`,
    );

    super(
      [
        `namespace ${namespace} lacks search attributes infersweep's workflows write (a sweep would loop on a failing workflow task when it writes one):`,
        ...lines,
        'register them (docs/deploy.md), then start the worker again:',
        ...problems.map((p) => `  ${registerCommand(namespace, p)}`),
      ].join('\n'),
      { kind: 'fatal', context: { step: 'worker start', namespace } },
    );
  }
}

/**
 * Read the namespace's custom search attributes and throw {@link NamespaceSetupError} when one the
 * workflows write is missing or has another type.
 */
export async function checkNamespace(connection: NativeConnection, namespace: string): Promise<void> {
  const res = await connection.operatorService.listSearchAttributes({ namespace }).catch((e: unknown) => {
    throw new InfersweepError(
      `reading the search attributes of namespace ${namespace} failed (the worker's start-up check needs read access to them, docs/deploy.md "The namespace"): ${e instanceof Error ? e.message : String(e)}`,
      { kind: 'fatal', context: { step: 'worker start', namespace }, cause: e },
    );
  });
  const registered: Record<string, number> = {};
  for (const [name, type] of Object.entries(res.customAttributes ?? {})) registered[name] = type as number;
  const problems = searchAttributeProblems(registered);
  if (problems.length) throw new NamespaceSetupError(namespace, problems);
}
