import { describe, expect, it } from 'vitest';
import { bundleWorkflowCode } from '@temporalio/worker';
import { webpackConfigHook, workflowsPath } from '../src/bundle';

describe('workflow bundle', () => {
  it('builds with the production hook and contains both workflow types, no disallowed modules', async () => {
    const { code } = await bundleWorkflowCode({
      workflowsPath,
      webpackConfigHook,
      logger: { trace() {}, debug() {}, info() {}, warn() {}, error() {}, log() {} } as never,
    });
    expect(code).toContain('sweepWorkflow');
    expect(code).toContain('sweepAllWorkflow');
    expect(code.length).toBeGreaterThan(10_000);
  }, 60_000);
});
