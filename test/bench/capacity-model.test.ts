import { describe, expect, it } from 'vitest';
import { capacityAt, describeCapacity } from './capacity-model.js';

describe('the capacity model', () => {
  it('turns CPU per create into cores and replicas of 1 vCPU kept at 70 %, never fewer than two', () => {
    const model = capacityAt(
      10_000,
      new Map([
        ['gateway', 0.12],
        ['actions', 0.2],
        ['policy', 0.01],
        ['nats-server', 0.05],
        ['postgres (its backends)', 0.1],
      ]),
    );
    expect(model).toEqual([
      { name: 'gateway', cores: 1.2, replicas: 2 },
      { name: 'actions', cores: 2, replicas: 3 },
      { name: 'policy', cores: 0.1, replicas: 2 },
      { name: 'nats-server', cores: 0.5 },
      { name: 'postgres (its backends)', cores: 1 },
    ]);
    expect(describeCapacity(10_000, model)).toContain('actions 2.0 cores → 3 replicas');
  });
});
