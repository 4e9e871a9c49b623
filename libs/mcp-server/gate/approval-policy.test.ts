import { describe, expect, it } from 'vitest';
import { needsApproval } from './approval-policy.js';

const tool = (annotations?: Record<string, boolean>) => ({ annotations });

describe('needsApproval', () => {
  it('under writes, lets through only tools annotated readOnlyHint: true', () => {
    expect(needsApproval(tool({ readOnlyHint: true }), 'writes')).toBe(false);
    expect(needsApproval(tool({ readOnlyHint: true, destructiveHint: false }), 'writes')).toBe(false);
    expect(needsApproval(tool({ readOnlyHint: false }), 'writes')).toBe(true);
    expect(needsApproval(tool({ destructiveHint: false, idempotentHint: true }), 'writes')).toBe(true);
    expect(needsApproval(tool(), 'writes')).toBe(true);
  });

  it('holds a tool the server did not list', () => {
    expect(needsApproval(undefined, 'writes')).toBe(true);
  });

  it('under all, holds every tool, read-only ones too', () => {
    expect(needsApproval(tool({ readOnlyHint: true }), 'all')).toBe(true);
    expect(needsApproval(undefined, 'all')).toBe(true);
  });
});
